#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets of tests/fuzz in their own tree
# (clang, ASan+UBSan, coverage on every object) and runs each in one process
# (JOBS of them side by side), with its checked-in corpus as seeds. Prints the
# inputs run per target and fails if any target found a crash.
#
#   FUZZ_SECONDS  how long each target runs (default 60)
#   FUZZ_RUNS     run this many inputs per target instead of for a time
#   FUZZ_TARGETS  which targets (default: every tests/fuzz/*_fuzz.cc), e.g. "wire trace"
#   FUZZ_BUILD    the tree (default build-fuzz); JOBS the build's parallelism and
#                 how many targets run at once (each is one thread)
#
# New inputs go to $FUZZ_BUILD/corpus/<target>, crashes to
# $FUZZ_BUILD/artifacts/; the checked-in corpus (tests/fuzz/corpus/<target>) is
# only read. tests/fuzz/<target>_fuzz.flags, when present, holds extra
# libFuzzer flags for that target (lines starting with # are comments).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${FUZZ_BUILD:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
RUNS=${FUZZ_RUNS:-}
JOBS=${JOBS:-$(nproc)}
if [ -z "${FUZZ_TARGETS:-}" ]; then
  FUZZ_TARGETS=$(ls tests/fuzz/*_fuzz.cc | sed 's|.*/||; s|_fuzz\.cc$||' | tr '\n' ' ')
fi

CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Sanitize -DCRESCENT_FUZZ=ON >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target fuzz_targets

if [ -n "$RUNS" ]; then limit=(-runs="$RUNS"); else limit=(-max_total_time="$SECONDS_EACH"); fi
mkdir -p "$BUILD/artifacts"

# One target, one libFuzzer process (one thread): its log, then its table row
# in $BUILD/fuzz-<target>.row.
fuzz_one() {
  local t=$1 work="$BUILD/corpus/$1" log="$BUILD/fuzz-$1.log" flags=() start secs units rate status=ok
  mkdir -p "$work"
  if [ -f "tests/fuzz/${t}_fuzz.flags" ]; then
    read -r -a flags <<<"$(grep -v '^#' "tests/fuzz/${t}_fuzz.flags" | tr '\n' ' ')"
  fi
  echo "== $t: ${limit[*]} ${flags[*]}"
  start=$(date +%s.%N)
  "$BUILD/bin/${t}_fuzz" "$work" "tests/fuzz/corpus/$t" "${limit[@]}" "${flags[@]}" \
    -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$t-" >"$log" 2>&1 || status=CRASH
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  units=${units:-0}
  rate=$(awk -v u="$units" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? u / s : 0) }')
  if [ "$status" != ok ]; then
    grep -E 'ERROR|runtime error|invariant failed|Test unit written' "$log" | head -5 || true
  fi
  printf '   %s: %s inputs in %.0f s\n' "$t" "$units" "$secs"
  printf '%-16s %12s %8.0f %10s  %s\n' "$t" "$units" "$secs" "$rate" "$status" >"$BUILD/fuzz-$t.row"
}

# JOBS targets at a time: each is one thread, so on N cores N run side by side.
running=0
for t in $FUZZ_TARGETS; do
  rm -f "$BUILD/fuzz-$t.row"
  if [ "$running" -ge "$JOBS" ]; then
    wait -n || true  # a target's failure shows in its row
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

rows=()
failed=0
for t in $FUZZ_TARGETS; do
  row=$(cat "$BUILD/fuzz-$t.row" 2>/dev/null || printf '%-16s %12s %8s %10s  %s' "$t" - - - CRASH)
  [[ "$row" == *CRASH ]] && failed=1
  rows+=("$row")
done

echo
printf '%-16s %12s %8s %10s  %s\n' target inputs seconds inputs/s result
for r in "${rows[@]}"; do echo "$r"; done
if [ "$failed" -ne 0 ]; then
  echo "A target crashed: its input is in $BUILD/artifacts/ and its log in $BUILD/fuzz-<target>.log."
  echo "Reproduce with $BUILD/bin/<target>_fuzz <input>; fix the bug, then add the input"
  echo "to tests/fuzz/corpus/<target>/ so that make test replays it."
  exit 1
fi
