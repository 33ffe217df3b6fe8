#!/usr/bin/env bash
# What TLS on the control plane costs (docs/security.md, "TLS"): two `crescent
# serve` processes side by side, one plain and one with --tls-cert/--tls-key
# (certificates made here by the openssl CLI), and `crescent bench exists` and
# `crescent bench put-get` run against each in turn, ROUNDS times, alternating
# (plain, TLS, plain, TLS, ...) so that both see the same machine. Prints, per
# measured row, the median of the rounds for each and the ratio TLS / plain.
#
#   scripts/bench_tls.sh [BUILD_DIR] [ROUNDS]      (default: build 3)
#
# Each bench command runs $REPS repetitions (default 3) and reports their medians; its
# flags are $EXISTS_FLAGS and $PUTGET_FLAGS (defaults below).
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
reps=${REPS:-3}
crescent=$(realpath "$build/bin/crescent")
exists_flags=${EXISTS_FLAGS:---batch 1,16,128 --miss 0}
putget_flags=${PUTGET_FLAGS:---size 64KiB,1MiB --bytes-per-client 64MiB}
dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

cd "$dir"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key \
  -out ca.crt -days 2 -subj /CN=bench-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key \
  -out server.csr -subj /CN=server 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt \
  -days 2 -extfile server.ext 2>/dev/null

# serve NAME FLAGS...: starts it, and prints its master's address once ready.
serve() {
  local name=$1
  shift
  "$crescent" serve --port 0 --http-port 0 --segment-size 1GiB "$@" >"$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    grep -q '^ready' "$name.log" && break
    sleep 0.1
  done
  grep -q 'ready' "$name.log" || { cat "$name.log" >&2; exit 1; }
  grep -o 'listening on 127.0.0.1:[0-9]*' "$name.log" | head -1 | cut -d' ' -f3
}
plain=$(serve plain)
tls=$(serve tls --tls-cert server.crt --tls-key server.key)
echo "plain master $plain, TLS master $tls; $rounds rounds, alternating"

for r in $(seq "$rounds"); do
  for side in plain tls; do
    if [ "$side" = plain ]; then master=$plain tls_flags=(); else master=$tls tls_flags=(--tls-ca ca.crt); fi
    # shellcheck disable=SC2086
    "$crescent" bench exists --master "$master" "${tls_flags[@]}" --reps "$reps" $exists_flags \
      --json "exists-$side-$r.json" >"exists-$side-$r.txt" 2>&1 ||
      echo "round $r, $side: exists: $(tail -1 "exists-$side-$r.txt")"
    # shellcheck disable=SC2086
    "$crescent" bench put-get --master "$master" "${tls_flags[@]}" --reps "$reps" $putget_flags \
      --json "putget-$side-$r.json" >"putget-$side-$r.txt" 2>&1 ||
      echo "round $r, $side: put-get: $(tail -1 "putget-$side-$r.txt")"
  done
done

python3 - "$rounds" <<'EOF'
import json, statistics, sys
rounds = int(sys.argv[1])
def rows(kind, side):
    out = {}
    for r in range(1, rounds + 1):
        doc = json.load(open(f"{kind}-{side}-{r}.json"))
        for row in doc.get("exists", []) + doc.get("put_get", []):
            if row.get("system", "").startswith("crescent"):
                key = (row["op"], row["size"], row["batch"], row["miss"])
                out.setdefault(key, []).append(row)
    return out
for kind in ("exists", "putget"):
    for side in ("plain", "tls"):
        for r in range(1, rounds + 1):
            doc = json.load(open(f"{kind}-{side}-{r}.json"))
            for row in doc.get("exists", []) + doc.get("put_get", []):
                if row.get("errors"):
                    print(f"round {r}, {side}: {row['op']} {row['size']}: {row['errors']} "
                          f"failed: {row['first_error'][:300]}")
print(f"{'op':<10}{'size':>8}{'batch':>6}{'ops/s plain':>13}{'ops/s TLS':>11}{'TLS/plain':>10}"
      f"{'p50 us plain':>14}{'p50 us TLS':>12}")
for kind in ("exists", "putget"):
    a, b = rows(kind, "plain"), rows(kind, "tls")
    for key in sorted(a, key=lambda k: (k[0], k[1], k[2])):
        if key not in b:
            continue
        med = lambda rs, f: statistics.median(x[f] for x in rs)
        pa, pb = med(a[key], "items_per_s"), med(b[key], "items_per_s")
        la, lb = med(a[key], "p50_us"), med(b[key], "p50_us")
        op, size, batch, _ = key
        print(f"{op:<10}{size:>8}{batch:>6}{pa:>13.0f}{pb:>11.0f}{pb / pa if pa else 0:>10.3f}"
              f"{la:>14.1f}{lb:>12.1f}")
EOF
