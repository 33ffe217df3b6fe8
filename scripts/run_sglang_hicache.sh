#!/usr/bin/env bash
# Launch a real SGLang server with Crescent as its HiCache L3 storage backend,
# loaded through SGLang's dynamic backend loader. See docs/sglang.md.
#
# NOT run in CI: it needs SGLang, a GPU and a model, none of which this
# repository's CI machines have. The CI checks the adapter with stand-in host
# pools instead (tests/python/test_hicache.py).
#
# Usage: scripts/run_sglang_hicache.sh MODEL_PATH [extra sglang.launch_server flags]
# Environment:
#   CRESCENT_MASTER  master address (default: start `crescent serve` here on 127.0.0.1:50051)
#   CRESCENT_SEGMENT DRAM segment size for the started store (default 16GiB)
#   SGLANG_PORT      HTTP port of the SGLang server (default 30000)
#   PYTHON           the Python that has sglang installed (default python3)
set -euo pipefail

MODEL=${1:?usage: $0 MODEL_PATH [sglang flags...]}
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}
PORT=${SGLANG_PORT:-30000}

"$PYTHON" -c "import sglang" 2>/dev/null || { echo "sglang is not importable by $PYTHON" >&2; exit 2; }
[ -d "$ROOT/build/python/crescent" ] || { echo "build the binding first: make build" >&2; exit 2; }

STORE_PID=""
if [ -z "${CRESCENT_MASTER:-}" ]; then
  "$ROOT/build/bin/crescent" serve --port 50051 --segment-size "${CRESCENT_SEGMENT:-16GiB}" &
  STORE_PID=$!
  trap '[ -n "$STORE_PID" ] && kill "$STORE_PID" 2>/dev/null || true' EXIT
  export CRESCENT_MASTER=127.0.0.1:50051
  sleep 1
fi

EXTRA_CONFIG=$(cat <<JSON
{"backend_name": "crescent",
 "module_path": "crescent.hicache",
 "class_name": "CrescentHiCacheStorage",
 "master_server_address": "$CRESCENT_MASTER"}
JSON
)

export PYTHONPATH="$ROOT/build/python:$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
"$PYTHON" -m sglang.launch_server \
  --model-path "$MODEL" \
  --port "$PORT" \
  --page-size 64 \
  --enable-hierarchical-cache \
  --hicache-mem-layout page_first \
  --hicache-storage-backend dynamic \
  --hicache-storage-backend-extra-config "$EXTRA_CONFIG" \
  "$@"
