"""The serving loop: prefix reuse through crescent.hicache, checked and timed.

For every request:

1. split the prompt into 64-token pages and name each full page by a chained
   SHA-256 (page i's hash covers page i's tokens and page i-1's hash);
2. ask the store for the longest cached prefix (``batch_exists``: leading pages
   present) and load those pages into the host KV pool (``batch_get_v1``:
   zero copy into the pool's registered buffer);
3. prefill only the rest of the prompt on top of that KV prefix;
4. write the request's new full pages back (``batch_set_v1``, which skips pages
   already stored).

TTFT with the store is steps 1-3 (query, load, copy into the model, partial
prefill); the write-back happens after the first token and is timed apart.
TTFT without the store is a full prefill of the same prompt. The logits of the
last prompt token must match the full recompute within ``tolerance`` (max
absolute difference; float32 throughout); otherwise the run fails loudly.

At least one prompt token is always recomputed: a prompt that is a whole
number of cached pages reuses all but its last page.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Dict, List, Optional

import torch

from .host_pool import MHAHostPool
from .model import PAGE_SIZE, TinyGQAModel
from .workload import Request, chain_hashes

DEFAULT_TOLERANCE = 1e-4


class CorrectnessError(AssertionError):
    pass


# --------------------------------------------------------------------- server
class CrescentServer:
    """`crescent serve --port 0 --http-port 0` as a child process."""

    LISTEN_RE = re.compile(r"listening on ([0-9A-Za-z.\-\[\]:]+?):(\d+)")

    def __init__(self, binary: str = "build/bin/crescent", segment_size: str = "1GiB",
                 timeout_s: float = 30.0):
        if not os.path.exists(binary):
            raise FileNotFoundError(f"{binary} not found: run `make build` first")
        self.proc = subprocess.Popen(
            [binary, "serve", "--port", "0", "--http-port", "0",
             "--segment-size", segment_size],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.lines: List[str] = []
        self.address: Optional[str] = None
        found = threading.Event()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.append(line.rstrip("\n"))
                if self.address is None:
                    m = self.LISTEN_RE.search(line)
                    if m:
                        self.address = f"{m.group(1)}:{m.group(2)}"
                        found.set()
            found.set()

        self._reader = threading.Thread(target=pump, daemon=True)
        self._reader.start()
        if not found.wait(timeout_s) or self.address is None:
            self.stop()
            raise RuntimeError("crescent serve did not report its address:\n"
                               + "\n".join(self.lines[-20:]))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "CrescentServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def make_storage(backend: str, pool, master: Optional[str] = None,
                 key_prefix: Optional[str] = None):
    """A CrescentHiCacheStorage over the real store ("crescent", master at
    `master`), the in-process stand-in ("memory") or a redis-server ("redis",
    at `master` as host:port; redisstore.RedisStore)."""
    from crescent.hicache import CrescentHiCacheStorage

    extra: Dict[str, object] = {}
    if master:
        extra["master_server_address"] = master
    if key_prefix:
        extra["key_prefix"] = key_prefix
    config = SimpleNamespace(tp_rank=0, tp_size=1, pp_rank=0, pp_size=1,
                             is_mla_model=False, is_page_first_layout=True,
                             model_name="crescent-e2e-tiny-gqa", extra_config=extra)
    store = None
    if backend == "memory":
        from .memstore import MemoryStore

        store = MemoryStore()
    elif backend == "redis":
        from .redisstore import RedisStore

        host, _, port = (master or "").rpartition(":")
        store = RedisStore(host, int(port))
        master = None
    elif backend != "crescent":
        raise ValueError(f"unknown backend {backend!r}")
    return CrescentHiCacheStorage(config, pool, store=store)


# -------------------------------------------------------------------- running
@dataclass
class RequestResult:
    rid: str
    prompt_tokens: int
    full_pages: int
    hit_pages: int
    ttft_base_s: float
    ttft_store_s: float
    load_s: float
    writeback_s: float
    bytes_loaded: int
    bytes_stored: int
    max_abs_diff: float


@dataclass
class RunResult:
    results: List[RequestResult] = field(default_factory=list)
    tolerance: float = DEFAULT_TOLERANCE

    @property
    def max_abs_diff(self) -> float:
        return max((r.max_abs_diff for r in self.results), default=0.0)

    @property
    def passed(self) -> bool:
        return all(r.max_abs_diff <= self.tolerance for r in self.results)

    @property
    def token_hit_ratio(self) -> float:
        total = sum(r.prompt_tokens for r in self.results)
        hit = sum(r.hit_pages * PAGE_SIZE for r in self.results)
        return hit / total if total else 0.0

    @property
    def page_hit_ratio(self) -> float:
        total = sum(r.full_pages for r in self.results)
        return sum(r.hit_pages for r in self.results) / total if total else 0.0

    def summary(self) -> Dict[str, float]:
        base = [r.ttft_base_s for r in self.results]
        store = [r.ttft_store_s for r in self.results]
        return {
            "requests": len(self.results),
            "prompt_tokens": sum(r.prompt_tokens for r in self.results),
            "token_hit_ratio": self.token_hit_ratio,
            "page_hit_ratio": self.page_hit_ratio,
            "hit_pages": sum(r.hit_pages for r in self.results),
            "full_pages": sum(r.full_pages for r in self.results),
            "bytes_loaded": sum(r.bytes_loaded for r in self.results),
            "bytes_stored": sum(r.bytes_stored for r in self.results),
            "ttft_mean_base_ms": 1e3 * statistics.mean(base) if base else 0.0,
            "ttft_mean_store_ms": 1e3 * statistics.mean(store) if store else 0.0,
            "ttft_p50_base_ms": 1e3 * statistics.median(base) if base else 0.0,
            "ttft_p50_store_ms": 1e3 * statistics.median(store) if store else 0.0,
            "speedup_mean": (statistics.mean(base) / statistics.mean(store)) if store else 0.0,
            "load_ms_total": 1e3 * sum(r.load_s for r in self.results),
            "writeback_ms_total": 1e3 * sum(r.writeback_s for r in self.results),
            "max_abs_diff": self.max_abs_diff,
            "tolerance": self.tolerance,
            "passed": self.passed,
        }


def make_pool(model: TinyGQAModel, requests: List[Request]) -> MHAHostPool:
    longest = max(len(r.tokens) for r in requests)
    pages = 2 * (longest // PAGE_SIZE + 1) + 2
    cfg = model.cfg
    return MHAHostPool(size=pages * PAGE_SIZE, page_size=PAGE_SIZE, layer_num=cfg.n_layers,
                       head_num=cfg.n_kv_heads, head_dim=cfg.head_dim)


@dataclass
class StoreRun:
    """One request served through an L3 store (see the module docstring)."""
    logits: torch.Tensor
    hit_pages: int
    ttft_s: float
    load_s: float
    writeback_s: float
    bytes_loaded: int
    bytes_stored: int


def with_store(tokens: List[int], hashes: List[str], model: TinyGQAModel, storage,
               pool: MHAHostPool) -> StoreRun:
    """Steps 2-4 for one prompt: query and load the cached prefix, prefill the
    rest (TTFT ends here), write the new full pages back."""
    n_full = len(hashes)
    reusable = min(n_full, (len(tokens) - 1) // PAGE_SIZE)
    before = storage.get_stats()
    t0 = time.perf_counter()
    hit = storage.batch_exists(hashes[:reusable]) if reusable else 0
    past_k = past_v = None
    idx = None
    if hit:
        idx = pool.alloc(hit * PAGE_SIZE)
        if idx is None:
            raise RuntimeError("host pool too small")
        ok = storage.batch_get_v1(hashes[:hit], idx)
        loaded = 0
        for o in ok:
            if not o:
                break
            loaded += 1
        hit = loaded
        if hit:
            past_k, past_v = pool.read_tokens(idx[: hit * PAGE_SIZE])
    t_load = time.perf_counter() - t0
    logits, ks, vs = model.prefill(tokens[hit * PAGE_SIZE:], past_k, past_v)
    ttft = time.perf_counter() - t0
    if idx is not None:
        pool.free(idx)

    # Write back the pages this request computed (after the first token).
    t0 = time.perf_counter()
    if n_full > hit:
        widx = pool.alloc((n_full - hit) * PAGE_SIZE)
        if widx is None:
            raise RuntimeError("host pool too small")
        lo, hi = hit * PAGE_SIZE, n_full * PAGE_SIZE
        pool.write_tokens(widx, [k[:, lo:hi] for k in ks], [v[:, lo:hi] for v in vs])
        storage.batch_set_v1(hashes[hit:n_full], widx)
        pool.free(widx)
    t_wb = time.perf_counter() - t0
    after = storage.get_stats()
    return StoreRun(logits=logits, hit_pages=hit, ttft_s=ttft, load_s=t_load, writeback_s=t_wb,
                    bytes_loaded=int(after["bytes_loaded"] - before["bytes_loaded"]),
                    bytes_stored=int(after["bytes_stored"] - before["bytes_stored"]))


def serve(requests: List[Request], model: TinyGQAModel, storage, pool: MHAHostPool,
          tolerance: float = DEFAULT_TOLERANCE, log=None) -> RunResult:
    """Runs every request twice (full recompute; with the store) and compares."""
    out = RunResult(tolerance=tolerance)
    # Warm-up (allocator, BLAS threads) outside the measurements.
    model.prefill(requests[0].tokens[: min(len(requests[0].tokens), 2 * PAGE_SIZE)])
    for req in requests:
        tokens = req.tokens
        hashes = chain_hashes(tokens)

        t0 = time.perf_counter()
        ref_logits, _, _ = model.prefill(tokens)
        ttft_base = time.perf_counter() - t0

        st = with_store(tokens, hashes, model, storage, pool)
        r = RequestResult(
            rid=req.rid, prompt_tokens=len(tokens), full_pages=len(hashes),
            hit_pages=st.hit_pages, ttft_base_s=ttft_base, ttft_store_s=st.ttft_s,
            load_s=st.load_s, writeback_s=st.writeback_s, bytes_loaded=st.bytes_loaded,
            bytes_stored=st.bytes_stored,
            max_abs_diff=float((st.logits - ref_logits).abs().max()))
        out.results.append(r)
        if log:
            log(f"  {r.rid:<16} tokens {r.prompt_tokens:>6}  hit {r.hit_pages:>3}/{r.full_pages:<3}"
                f"  ttft {1e3 * r.ttft_base_s:8.1f} -> {1e3 * r.ttft_store_s:8.1f} ms"
                f"  diff {r.max_abs_diff:.2e}")
    return out


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return str(n)


def format_table(res: RunResult, title: str = "") -> str:
    s = res.summary()
    rows = [
        ("requests", f"{s['requests']}"),
        ("prompt tokens", f"{s['prompt_tokens']}"),
        ("prefix hit ratio (tokens)", f"{s['token_hit_ratio']:.3f}"),
        ("prefix hit ratio (pages)", f"{s['page_hit_ratio']:.3f}  ({s['hit_pages']}/{s['full_pages']})"),
        ("bytes loaded", _human(s["bytes_loaded"])),
        ("bytes stored", _human(s["bytes_stored"])),
    ]
    lines = []
    if title:
        lines.append(title)
    w = max(len(k) for k, _ in rows) + 2
    for k, v in rows:
        lines.append(f"{k:<{w}}{v}")
    lines.append("")
    lines.append(f"{'TTFT (ms)':<{w}}{'without store':>14}{'with store':>14}")
    lines.append(f"{'  mean':<{w}}{s['ttft_mean_base_ms']:>14.1f}{s['ttft_mean_store_ms']:>14.1f}")
    lines.append(f"{'  p50':<{w}}{s['ttft_p50_base_ms']:>14.1f}{s['ttft_p50_store_ms']:>14.1f}")
    lines.append(f"{'speedup (mean TTFT)':<{w}}{s['speedup_mean']:.2f}x")
    lines.append(f"{'write-back (total)':<{w}}{s['writeback_ms_total']:.1f} ms (after the first token)")
    verdict = "PASS" if s["passed"] else "FAIL"
    lines.append(f"{'max |logit diff|':<{w}}{s['max_abs_diff']:.3e}  (tolerance {s['tolerance']:.0e},"
                 f" float32)  {verdict}")
    return "\n".join(lines)


def check(res: RunResult) -> None:
    if not res.passed:
        bad = [r for r in res.results if r.max_abs_diff > res.tolerance]
        msg = ", ".join(f"{r.rid} ({r.max_abs_diff:.3e})" for r in bad[:10])
        raise CorrectnessError(
            f"CORRECTNESS FAILURE: {len(bad)} request(s) with reuse differ from the full "
            f"recompute by more than {res.tolerance:g}: {msg}")


def log_stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def set_threads(n: Optional[int]) -> None:
    if n:
        torch.set_num_threads(n)
