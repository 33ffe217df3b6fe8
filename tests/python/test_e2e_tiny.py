"""A tiny run of the E2E harness: the smallest model, a few requests.

Asserts that the last-token logits with prefix reuse equal the full recompute
(within the harness tolerance) and that some prefix was reused. Runs on the
in-process stand-in store, on `crescent serve` and on a real `redis-server`
(crescent_e2e.redisstore), and the three-way comparison of `make e2e` (no
store, Redis, Crescent) on the same tiny workload.
"""

import os

import pytest

import torch

from crescent_e2e import compare, harness, workload
from crescent_e2e.model import PAGE_SIZE, ModelConfig, TinyGQAModel
from crescent_e2e.redisstore import RedisServer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def tiny_requests(cfg):
    return workload.conversations(n_conversations=2, turns=2, vocab=cfg.vocab_size,
                                  system_tokens=128, user_tokens=(40, 90),
                                  answer_tokens=(30, 70), seed=3)


@pytest.fixture(scope="module")
def redis_address():
    with RedisServer() as server:
        yield server.address


@pytest.mark.parametrize("backend", ["memory", "crescent", "redis"])
def test_tiny_e2e_logits_equal_and_prefix_hits(backend, request):
    master = {"crescent": "crescent_master", "redis": "redis_address"}.get(backend)
    master = request.getfixturevalue(master) if master else None
    cfg = ModelConfig.tiny()
    model = TinyGQAModel(cfg)
    reqs = tiny_requests(cfg)
    pool = harness.make_pool(model, reqs)
    storage = harness.make_storage(backend, pool, master, key_prefix=f"tiny-{os.getpid()}")
    try:
        res = harness.serve(reqs, model, storage, pool)
    finally:
        storage.close()
    s = res.summary()
    assert s["requests"] == 4
    assert res.passed and s["max_abs_diff"] <= harness.DEFAULT_TOLERANCE
    harness.check(res)
    assert s["token_hit_ratio"] > 0
    assert s["bytes_loaded"] > 0 and s["bytes_stored"] > 0
    # Turn 1 of each conversation reuses at least the shared system prompt.
    assert all(r.hit_pages >= 128 // PAGE_SIZE for r in res.results[2:])
    table = harness.format_table(res)
    assert "speedup" in table and "PASS" in table


def test_tiny_three_way_comparison(crescent_master, redis_address):
    cfg = ModelConfig.tiny()
    model = TinyGQAModel(cfg)
    reqs = tiny_requests(cfg)
    pool = harness.make_pool(model, reqs)
    prefix = f"tiny3-{os.getpid()}"
    storages = {"redis": harness.make_storage("redis", pool, redis_address, key_prefix=prefix),
                "crescent": harness.make_storage("crescent", pool, crescent_master,
                                                 key_prefix=prefix)}
    try:
        cmp = compare.compare(reqs, model, storages, pool)
    finally:
        for s in storages.values():
            s.close()
    s = cmp.summary()
    assert set(s) == {compare.NO_STORE, "redis", "crescent"}
    assert s[compare.NO_STORE]["token_hit_ratio"] == 0
    # The same pages reach both stores: the same nonzero hit ratio and bytes.
    assert s["redis"]["token_hit_ratio"] > 0
    assert s["redis"]["token_hit_ratio"] == s["crescent"]["token_hit_ratio"]
    for key in ("bytes_loaded", "bytes_stored"):
        assert s["redis"][key] == s["crescent"][key] > 0
    # Logits: the reused K/V are the same bytes through either store, so the
    # two legs agree bit for bit, and each agrees with the no-store run.
    assert cmp.passed
    compare.check(cmp)
    for a, b in zip(cmp.legs["redis"].logits, cmp.legs["crescent"].logits):
        assert torch.equal(a, b)
    table = compare.format_comparison(cmp)
    assert "crescent vs redis at token hit ratio" in table and "PASS" in table


def test_comparison_mismatch_fails_loudly():
    cfg = ModelConfig.tiny()
    model = TinyGQAModel(cfg)
    reqs = tiny_requests(cfg)[:3]
    pool = harness.make_pool(model, reqs)
    storages = {"memory": harness.make_storage("memory", pool)}
    compare.compare(reqs[:2], model, storages, pool)
    objects = storages["memory"].store._objects
    for key, val in list(objects.items()):
        objects[key] = bytes(len(val))
    cmp = compare.compare(reqs[2:], model, storages, pool)
    assert not cmp.passed and not cmp.legs["memory"].identical
    with pytest.raises(harness.CorrectnessError, match="CORRECTNESS FAILURE"):
        compare.check(cmp)
    assert "FAIL" in compare.format_comparison(cmp)


def test_percentile_nearest_rank():
    assert compare.percentile([], 90) == 0.0
    assert compare.percentile([5.0], 90) == 5.0
    assert compare.percentile([float(i) for i in range(1, 11)], 90) == 9.0
    assert compare.percentile([float(i) for i in range(1, 12)], 90) == 10.0


def test_mismatch_fails_loudly():
    cfg = ModelConfig.tiny()
    model = TinyGQAModel(cfg)
    reqs = tiny_requests(cfg)[:3]
    pool = harness.make_pool(model, reqs)
    storage = harness.make_storage("memory", pool)
    # Corrupt every stored object: reuse must now disagree with the recompute.
    res = harness.serve(reqs[:2], model, storage, pool)
    for key, val in list(storage.store._objects.items()):
        storage.store._objects[key] = bytes(len(val))
    res = harness.serve(reqs[2:], model, storage, pool)
    assert not res.passed
    with pytest.raises(harness.CorrectnessError, match="CORRECTNESS FAILURE"):
        harness.check(res)


def test_chain_hashes_are_prefix_chained():
    a = list(range(200))
    b = list(range(128)) + [7] * 72
    ha, hb = workload.chain_hashes(a), workload.chain_hashes(b)
    assert len(ha) == 3 and len(hb) == 3
    assert ha[:2] == hb[:2] and ha[2] != hb[2]
    # Same page content after a different prefix: a different hash.
    assert workload.chain_hashes([1] * 64 + a[:64])[1] != ha[0]


def test_mooncake_trace_expands_hash_ids_deterministically():
    path = os.path.join(ROOT, "tests", "data", "small_trace.jsonl")
    reqs = workload.mooncake_trace(path, vocab=512, max_requests=5, max_input_tokens=1024)
    assert len(reqs) == 5
    # Requests 1 and 4 share hash ids 60-63 (4 blocks of 512 tokens).
    assert reqs[1].tokens[:1024] == reqs[4].tokens[:1024]
    assert reqs[1].tokens[:512] == workload.block_tokens(60, 512)
    assert all(len(r.tokens) <= 1024 for r in reqs)
    again = workload.mooncake_trace(path, vocab=512, max_requests=5, max_input_tokens=1024)
    assert [r.tokens for r in again] == [r.tokens for r in reqs]


def test_generated_workload_reuses_at_least_half():
    reqs = workload.conversations(n_conversations=4, turns=4, vocab=512)
    assert workload.prefix_reuse_upper_bound(reqs) >= 0.5
