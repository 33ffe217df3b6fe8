"""scripts/trace_shapes.py: every shape is reproducible, in the Mooncake format,
and has the structure its docstring promises."""

import collections
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

import trace_shapes  # noqa: E402

SHAPES = sorted(trace_shapes.SHAPES)


@pytest.mark.parametrize("shape", SHAPES)
def test_shape_is_reproducible_and_well_formed(shape):
    first = trace_shapes.generate(shape, 600, seed=7)
    assert first == trace_shapes.generate(shape, 600, seed=7)
    assert first != trace_shapes.generate(shape, 600, seed=8)
    assert len(first) == 600
    times = [r["timestamp"] for r in first]
    assert times == sorted(times)
    for r in first:
        assert r["hash_ids"] and all(isinstance(i, int) and i >= 0 for i in r["hash_ids"])
        assert 0 < r["input_length"] <= len(r["hash_ids"]) * trace_shapes.BLOCK_TOKENS


@pytest.mark.parametrize("shape", SHAPES)
def test_a_requests_last_page_is_never_shared(shape):
    # The last page is partial: no later request has it, except a whole
    # repeat of a one-page request (a prompt-only request does not occur).
    seen_last = set()
    for r in trace_shapes.generate(shape, 600, seed=3):
        assert not seen_last.intersection(r["hash_ids"])
        seen_last.add(r["hash_ids"][-1])


def roots(requests):
    return collections.Counter(tuple(r["hash_ids"][:2]) for r in requests)


def test_chat_abandons_most_conversations_after_one_request():
    requests = trace_shapes.generate("chat", 3000, seed=1)
    # A conversation's requests share their first pages past the system prompt.
    firsts = collections.Counter()
    for r in requests:
        firsts[tuple(r["hash_ids"][:8])] += 1
    single = sum(1 for n in firsts.values() if n == 1)
    assert single > 0.6 * len(firsts)
    assert max(firsts.values()) >= 5  # and some go on for many turns


def test_prompts_share_a_few_huge_prefixes():
    requests = trace_shapes.generate("prompts", 2000, seed=1)
    prefixes = collections.Counter(r["hash_ids"][0] for r in requests)
    assert len(prefixes) <= 6
    assert all(len(r["hash_ids"]) >= 41 for r in requests)


def test_agent_sessions_reread_long_shared_contexts():
    requests = trace_shapes.generate("agent", 2000, seed=1)
    assert len({r["hash_ids"][0] for r in requests}) <= 4
    assert min(len(r["hash_ids"]) for r in requests) >= 33


def test_scan_mixes_one_off_documents_with_chat():
    requests = trace_shapes.generate("scan", 2000, seed=1)
    counts = collections.Counter(i for r in requests for i in r["hash_ids"])
    documents = [r for r in requests if len(r["hash_ids"]) >= 30
                 and all(counts[i] == 1 for i in r["hash_ids"])]
    assert 0.1 * len(requests) < len(documents) < 0.5 * len(requests)


def test_phase_changes_shape_halfway():
    requests = trace_shapes.generate("phase", 2000, seed=1)
    first, second = requests[:1000], requests[1000:]
    first_ids = {i for r in first for i in r["hash_ids"]}
    assert not first_ids.intersection(i for r in second for i in r["hash_ids"])
    # Chat requests are short; agent requests re-read 30+ page contexts.
    assert sum(len(r["hash_ids"]) for r in first) < sum(len(r["hash_ids"]) for r in second)
