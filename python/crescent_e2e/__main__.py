"""python3 -m crescent_e2e: run the serving loop and print the TTFT table.

Starts its own `build/bin/crescent serve --port 0 --http-port 0` unless
--master is given (or --backend memory, the in-process stand-in store), and
its own `redis-server` for --backend redis. With several backends
(--backend redis,crescent) every request is served without a store and through
each of them, and one table compares them (crescent_e2e/compare.py).
Exits non-zero when any request's last-token logits differ from the full
recompute by more than --tolerance.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time

from . import compare, harness, workload
from .model import PAGE_SIZE, ModelConfig, TinyGQAModel
from .redisstore import RedisServer

MODELS = {"tiny": ModelConfig.tiny, "small": ModelConfig.small, "default": ModelConfig}
BACKENDS = {"crescent", "redis", "memory"}
WHERE = {"crescent": lambda a: f"crescent serve at {a}",
         "redis": lambda a: f"redis-server at {a}",
         "memory": lambda a: "in-process stand-in"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m crescent_e2e", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=32, help="number of requests")
    ap.add_argument("--turns", type=int, default=4, help="turns per generated conversation")
    ap.add_argument("--system-tokens", type=int, default=256)
    ap.add_argument("--trace", help="Mooncake-format JSONL trace instead of generated chats")
    ap.add_argument("--max-input-tokens", type=int, default=4096,
                    help="truncate trace prompts to this many tokens (0: no limit)")
    ap.add_argument("--model", choices=sorted(MODELS), default="small",
                    help="tiny: 1 layer, d=64; small: 2 layers, d=256; default: 4 layers, d=512")
    ap.add_argument("--backend", default="crescent",
                    help="crescent, redis or memory (the in-process stand-in), or several "
                         "separated by commas (redis,crescent): a table comparing them with "
                         "the no-store run")
    ap.add_argument("--master", help="use this Crescent master instead of starting one")
    ap.add_argument("--crescent-bin", default="build/bin/crescent")
    ap.add_argument("--redis-bin", default="redis-server")
    ap.add_argument("--segment-size", default="1GiB")
    ap.add_argument("--tolerance", type=float, default=harness.DEFAULT_TOLERANCE)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--min-speedup", type=float, default=0.0,
                    help="fail when the mean TTFT speedup is below this")
    ap.add_argument("--json", help="also write the summary as JSON here")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per request")
    args = ap.parse_args(argv)

    harness.set_threads(args.threads)
    cfg = MODELS[args.model]()
    model = TinyGQAModel(cfg)
    if args.trace:
        reqs = workload.mooncake_trace(args.trace, vocab=cfg.vocab_size,
                                       max_requests=args.requests,
                                       max_input_tokens=args.max_input_tokens or None)
        source = f"Mooncake trace {args.trace}"
    else:
        n_conv = max(1, math.ceil(args.requests / args.turns))
        reqs = workload.conversations(n_conv, args.turns, vocab=cfg.vocab_size,
                                      system_tokens=args.system_tokens,
                                      seed=args.seed)[: args.requests]
        source = f"{n_conv} generated conversations x {args.turns} turns"
    pool = harness.make_pool(model, reqs)

    backends = [b.strip() for b in args.backend.split(",") if b.strip()]
    unknown = sorted(set(backends) - BACKENDS)
    if unknown or not backends or len(set(backends)) != len(backends):
        ap.error(f"--backend: {args.backend!r}: name each of {', '.join(sorted(BACKENDS))} "
                 "at most once")
    with contextlib.ExitStack() as stack:
        storages = {}
        key_prefix = f"e2e-{int(time.time() * 1e3)}"
        for name in backends:
            address = None
            if name == "crescent":
                address = args.master
                if not address:
                    server = harness.CrescentServer(args.crescent_bin, args.segment_size)
                    stack.callback(server.stop)
                    address = server.address
                    harness.log_stderr(f"started crescent serve at {address}")
            elif name == "redis":
                server = RedisServer(args.redis_bin)
                stack.callback(server.close)
                address = server.address
                harness.log_stderr(f"started redis-server at {address}")
            storage = harness.make_storage(name, pool, address, key_prefix=key_prefix)
            stack.callback(storage.close)
            storages[name] = (storage, address)
        log = harness.log_stderr if args.verbose else None
        t0 = time.perf_counter()
        if len(backends) == 1:
            res = harness.serve(reqs, model, storages[backends[0]][0], pool, args.tolerance,
                                log=log)
        else:
            res = compare.compare(reqs, model, {n: s for n, (s, _) in storages.items()}, pool,
                                  args.tolerance, log=log)
        wall = time.perf_counter() - t0

    where = "; ".join(f"{n}: {WHERE[n](a)}" for n, (_, a) in storages.items())
    title = (f"Crescent E2E: {source}; model {args.model} ({cfg.n_layers} layers, d={cfg.d_model}, "
             f"{cfg.n_heads} q / {cfg.n_kv_heads} kv heads), page {PAGE_SIZE}; "
             f"{where}; via crescent.hicache; {wall:.1f}s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res.summary(), f, indent=2)
    if len(backends) > 1:
        print(compare.format_comparison(res, title))
        compare.check(res)  # raises CorrectnessError (exit 1) on a mismatch
        return 0
    print(harness.format_table(res, title))
    harness.check(res)  # raises CorrectnessError (exit 1) on a mismatch
    if args.min_speedup and res.summary()["speedup_mean"] < args.min_speedup:
        print(f"FAIL: mean TTFT speedup {res.summary()['speedup_mean']:.2f}x is below "
              f"{args.min_speedup}x", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except harness.CorrectnessError as e:
        print(str(e), file=sys.stderr)
        sys.exit(1)
