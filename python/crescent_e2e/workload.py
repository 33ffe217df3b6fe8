"""Workloads mapped to token ids, deterministically.

* ``conversations(...)``: generated multi-turn chats. Every conversation starts
  with one shared system prompt; turn t's prompt is the whole history (system
  prompt, earlier user messages and assistant answers) plus a new user
  message. Conversations are interleaved round-robin, so a turn's history was
  written to the store by the previous turn of the same conversation, a few
  requests earlier.
* ``mooncake_trace(path, ...)``: a Mooncake FAST'25 JSONL trace
  (``input_length``, ``hash_ids``; one hash id = one 512-token block). Each hash
  id expands to 512 tokens drawn from a generator seeded with the id, so equal
  hash ids give equal tokens and shared prefixes stay shared.
* ``chain_hashes(tokens)``: the page names a request's prompt gets in the
  store, a SHA-256 chain over its full pages.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import List, Optional

import numpy as np

from .model import PAGE_SIZE

TRACE_BLOCK_TOKENS = 512


@dataclass
class Request:
    rid: str
    tokens: List[int]


def _tokens(rng: np.random.Generator, n: int, vocab: int) -> List[int]:
    return rng.integers(0, vocab, size=n).tolist()


def conversations(n_conversations: int = 8, turns: int = 4, vocab: int = 4096,
                  system_tokens: int = 256, user_tokens=(96, 320),
                  answer_tokens=(64, 256), seed: int = 7) -> List[Request]:
    rng = np.random.default_rng(seed)
    system = _tokens(rng, system_tokens, vocab)
    histories = [list(system) for _ in range(n_conversations)]
    out: List[Request] = []
    for turn in range(turns):
        for c in range(n_conversations):
            user = _tokens(rng, int(rng.integers(user_tokens[0], user_tokens[1] + 1)), vocab)
            prompt = histories[c] + user
            out.append(Request(f"conv{c}-turn{turn}", prompt))
            answer = _tokens(rng, int(rng.integers(answer_tokens[0], answer_tokens[1] + 1)),
                             vocab)
            histories[c] = prompt + answer
    return out


def chain_hashes(tokens: List[int], page_size: int = PAGE_SIZE) -> List[str]:
    """SHA-256 chain over the full pages of `tokens` (hex strings)."""
    out: List[str] = []
    prev = b""
    arr = np.asarray(tokens, dtype="<u4")
    for i in range(len(tokens) // page_size):
        h = hashlib.sha256(prev)
        h.update(arr[i * page_size:(i + 1) * page_size].tobytes())
        prev = h.digest()
        out.append(h.hexdigest())
    return out


def block_tokens(hash_id: int, vocab: int) -> List[int]:
    """The 512 tokens of one trace block, a pure function of its hash id."""
    return np.random.default_rng(int(hash_id)).integers(
        0, vocab, size=TRACE_BLOCK_TOKENS).tolist()


def mooncake_trace(path: str, vocab: int = 4096, max_requests: Optional[int] = None,
                   max_input_tokens: Optional[int] = None) -> List[Request]:
    """Requests of a Mooncake JSONL trace; max_input_tokens truncates each prompt
    (keeping its prefix, so prefix sharing is preserved)."""
    out: List[Request] = []
    cache = {}
    with open(path) as f:
        for lineno, line in enumerate(f):
            line = line.strip()
            if not line:
                continue
            rec = json.loads(line)
            hash_ids = rec["hash_ids"]
            length = int(rec.get("input_length", len(hash_ids) * TRACE_BLOCK_TOKENS))
            length = min(length, len(hash_ids) * TRACE_BLOCK_TOKENS)
            if max_input_tokens:
                length = min(length, max_input_tokens)
            toks: List[int] = []
            for h in hash_ids:
                if len(toks) >= length:
                    break
                if h not in cache:
                    cache[h] = block_tokens(h, vocab)
                toks.extend(cache[h])
            out.append(Request(f"trace{lineno}", toks[:length]))
            if max_requests and len(out) >= max_requests:
                break
    return out


def prefix_reuse_upper_bound(requests: List[Request], page_size: int = 64) -> float:
    """Fraction of full prompt pages whose chained prefix appeared earlier (an
    infinite cache's hit ratio, in pages)."""
    seen = set()
    hit = total = 0
    for r in requests:
        hashes = chain_hashes(r.tokens, page_size)
        total += len(hashes)
        for h in hashes:
            if h not in seen:
                break
            hit += 1
        seen.update(hashes)
    return hit / total if total else 0.0
