#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets of tests/fuzz in their own tree
# (clang, ASan+UBSan, coverage on every object) and runs each, one at a time in
# one process, with its checked-in corpus as seeds. Prints the inputs run per
# target and fails if any target found a crash.
#
#   FUZZ_SECONDS  how long each target runs (default 60)
#   FUZZ_RUNS     run this many inputs per target instead of for a time
#   FUZZ_TARGETS  which targets (default: every tests/fuzz/*_fuzz.cc), e.g. "wire trace"
#   FUZZ_BUILD    the tree (default build-fuzz), JOBS the build's parallelism
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
rows=()
failed=0
for t in $FUZZ_TARGETS; do
  work="$BUILD/corpus/$t"
  log="$BUILD/fuzz-$t.log"
  mkdir -p "$work"
  flags=()
  if [ -f "tests/fuzz/${t}_fuzz.flags" ]; then
    read -r -a flags <<<"$(grep -v '^#' "tests/fuzz/${t}_fuzz.flags" | tr '\n' ' ')"
  fi
  echo "== $t: ${limit[*]} ${flags[*]}"
  start=$(date +%s.%N)
  status=ok
  "$BUILD/bin/${t}_fuzz" "$work" "tests/fuzz/corpus/$t" "${limit[@]}" "${flags[@]}" \
    -print_final_stats=1 -artifact_prefix="$BUILD/artifacts/$t-" >"$log" 2>&1 || status=CRASH
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  units=${units:-0}
  rate=$(awk -v u="$units" -v s="$secs" 'BEGIN { printf "%.0f", (s > 0 ? u / s : 0) }')
  if [ "$status" != ok ]; then
    failed=1
    grep -E 'ERROR|runtime error|invariant failed|Test unit written' "$log" | head -5 || true
  fi
  printf '   %s inputs in %.0f s\n' "$units" "$secs"
  rows+=("$(printf '%-16s %12s %8.0f %10s  %s' "$t" "$units" "$secs" "$rate" "$status")")
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
