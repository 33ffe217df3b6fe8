"""One workload served three ways: no L3 store, and each of several stores.

Every request is first prefilled in full (the no-store leg: its TTFT and the
reference logits), then served through each store in turn (harness.with_store:
query and load the cached prefix, prefill the rest, write the new pages back).
The stores take turns going first, request by request, so that a slow moment of
the machine lands on each of them alike. Each store starts empty and receives
the same pages, so all of them reach the same hit ratio; what differs is the
time the store takes to answer.

Per leg: the token hit ratio (prompt tokens loaded from the store over all
prompt tokens), TTFT mean and p90, the mean load time (query and load, inside
TTFT) and write-back time (after the first token), the throughput of a server
doing one request at a time (prompt tokens over the sum of TTFT and write-back),
and whether every request's last-token logits equal the no-store run's: bitwise
("identical"), and within the tolerance (otherwise the run fails).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Dict, List

import torch

from .harness import DEFAULT_TOLERANCE, CorrectnessError, _human, with_store
from .host_pool import MHAHostPool
from .model import PAGE_SIZE, TinyGQAModel
from .workload import Request, chain_hashes

NO_STORE = "no store"


@dataclass
class Leg:
    name: str
    ttft_s: List[float] = field(default_factory=list)
    load_s: List[float] = field(default_factory=list)
    writeback_s: List[float] = field(default_factory=list)
    hit_tokens: int = 0
    prompt_tokens: int = 0
    bytes_loaded: int = 0
    bytes_stored: int = 0
    max_abs_diff: float = 0.0
    identical: bool = True
    logits: List[torch.Tensor] = field(default_factory=list)

    def summary(self) -> Dict[str, float]:
        busy = sum(self.ttft_s) + sum(self.writeback_s)
        return {
            "token_hit_ratio": self.hit_tokens / self.prompt_tokens if self.prompt_tokens else 0.0,
            "ttft_mean_ms": 1e3 * statistics.mean(self.ttft_s) if self.ttft_s else 0.0,
            "ttft_p90_ms": 1e3 * percentile(self.ttft_s, 90),
            "load_mean_ms": 1e3 * statistics.mean(self.load_s) if self.load_s else 0.0,
            "writeback_mean_ms": 1e3 * statistics.mean(self.writeback_s)
            if self.writeback_s else 0.0,
            "throughput_tokens_per_s": self.prompt_tokens / busy if busy else 0.0,
            "bytes_loaded": self.bytes_loaded,
            "bytes_stored": self.bytes_stored,
            "max_abs_diff": self.max_abs_diff,
            "identical": self.identical,
        }


@dataclass
class Comparison:
    legs: Dict[str, Leg]
    requests: int
    tolerance: float = DEFAULT_TOLERANCE

    @property
    def passed(self) -> bool:
        return all(leg.max_abs_diff <= self.tolerance for leg in self.legs.values())

    def summary(self) -> Dict[str, Dict[str, float]]:
        return {name: leg.summary() for name, leg in self.legs.items()}


def percentile(xs: List[float], p: float) -> float:
    """Nearest rank: the smallest value with at least p% of the values at or below it."""
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)]


def compare(requests: List[Request], model: TinyGQAModel, storages: Dict[str, object],
            pool: MHAHostPool, tolerance: float = DEFAULT_TOLERANCE, log=None) -> Comparison:
    """Serves `requests` without a store and through each of `storages`
    (name -> a HiCache storage over an empty store, registered with `pool`)."""
    names = list(storages)
    legs = {NO_STORE: Leg(NO_STORE), **{n: Leg(n) for n in names}}
    model.prefill(requests[0].tokens[: min(len(requests[0].tokens), 2 * PAGE_SIZE)])  # warm-up
    for i, req in enumerate(requests):
        tokens = req.tokens
        hashes = chain_hashes(tokens)
        t0 = time.perf_counter()
        ref, _, _ = model.prefill(tokens)
        base = legs[NO_STORE]
        base.ttft_s.append(time.perf_counter() - t0)
        base.prompt_tokens += len(tokens)
        base.logits.append(ref)
        for name in names[i % len(names):] + names[: i % len(names)]:
            st = with_store(tokens, hashes, model, storages[name], pool)
            leg = legs[name]
            leg.ttft_s.append(st.ttft_s)
            leg.load_s.append(st.load_s)
            leg.writeback_s.append(st.writeback_s)
            leg.prompt_tokens += len(tokens)
            leg.hit_tokens += st.hit_pages * PAGE_SIZE
            leg.bytes_loaded += st.bytes_loaded
            leg.bytes_stored += st.bytes_stored
            leg.max_abs_diff = max(leg.max_abs_diff, float((st.logits - ref).abs().max()))
            leg.identical = leg.identical and torch.equal(st.logits, ref)
            leg.logits.append(st.logits)
            if log:
                log(f"  {req.rid:<16} {name:<9} tokens {len(tokens):>6}  hit "
                    f"{st.hit_pages:>3}/{len(hashes):<3} ttft {1e3 * base.ttft_s[-1]:8.1f} -> "
                    f"{1e3 * st.ttft_s:8.1f} ms")
    return Comparison(legs=legs, requests=len(requests), tolerance=tolerance)


def _ratio(a: Dict[str, float], b: Dict[str, float], key: str) -> str:
    return f"{a[key] / b[key]:.2f}x" if b[key] else "-"


def format_comparison(cmp: Comparison, title: str = "") -> str:
    s = cmp.summary()
    names = list(s)
    none = "-"
    rows = [
        ("token hit ratio", lambda n, x: f"{x['token_hit_ratio']:.3f}"),
        ("TTFT mean (ms)", lambda n, x: f"{x['ttft_mean_ms']:.1f}"),
        ("TTFT p90 (ms)", lambda n, x: f"{x['ttft_p90_ms']:.1f}"),
        ("  load mean (ms)", lambda n, x: none if n == NO_STORE else f"{x['load_mean_ms']:.2f}"),
        ("write-back mean (ms)",
         lambda n, x: none if n == NO_STORE else f"{x['writeback_mean_ms']:.2f}"),
        ("throughput (tokens/s)", lambda n, x: f"{x['throughput_tokens_per_s']:.0f}"),
        ("bytes loaded", lambda n, x: none if n == NO_STORE else _human(x["bytes_loaded"])),
        ("bytes stored", lambda n, x: none if n == NO_STORE else _human(x["bytes_stored"])),
        ("max |logit diff|", lambda n, x: none if n == NO_STORE else f"{x['max_abs_diff']:.1e}"),
        ("logits identical", lambda n, x: none if n == NO_STORE
         else ("yes" if x["identical"] else "no")),
    ]
    w = max(len(r[0]) for r in rows) + 2
    cw = max(12, max(len(n) for n in names) + 2)
    lines = [title] if title else []
    lines.append(f"{'requests ' + str(cmp.requests):<{w}}" + "".join(f"{n:>{cw}}" for n in names))
    for label, cell in rows:
        lines.append(f"{label:<{w}}" + "".join(f"{cell(n, s[n]):>{cw}}" for n in names))
    if "crescent" in s and "redis" in s:
        c, r = s["crescent"], s["redis"]
        lines.append("")
        lines.append(
            f"crescent vs redis at token hit ratio {c['token_hit_ratio']:.3f} / "
            f"{r['token_hit_ratio']:.3f}: TTFT mean {_ratio(c, r, 'ttft_mean_ms')}, "
            f"p90 {_ratio(c, r, 'ttft_p90_ms')}, load mean {_ratio(c, r, 'load_mean_ms')}, "
            f"write-back mean {_ratio(c, r, 'writeback_mean_ms')} (below 1: crescent faster)")
    verdict = "PASS" if cmp.passed else "FAIL"
    lines.append(f"logits vs the no-store run: tolerance {cmp.tolerance:.0e} (float32)  {verdict}")
    return "\n".join(lines)


def check(cmp: Comparison) -> None:
    bad = [f"{n} ({leg.max_abs_diff:.3e})" for n, leg in cmp.legs.items()
           if leg.max_abs_diff > cmp.tolerance]
    if bad:
        raise CorrectnessError(
            "CORRECTNESS FAILURE: logits with reuse differ from the no-store run by more "
            f"than {cmp.tolerance:g}: {', '.join(bad)}")
