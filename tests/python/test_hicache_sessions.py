"""crescent.hicache's session hints against a real `crescent serve`: the
adapter's end_session(page keys) and Crescent's extra_info key
``session_end`` on the v1 and v2 calls (crescent/_hicache_sessions.py,
docs/engines.md "Session hints"), through the stand-in of SGLang's
interface types."""

import uuid
from types import SimpleNamespace

import torch

from hicache_pool import MHAHostPool
from hicache_v2_support import Controller, IndexerPool, MambaPool
from sglang.srt.mem_cache.hicache_storage import (HiCacheStorageExtraInfo, PoolHitPolicy,
                                                  PoolName)

from crescent.hicache import CrescentHiCacheStorage

PAGE = 4
FINAL = HiCacheStorageExtraInfo(extra_info={"session_end": True})


def backend(master, pool):
    cfg = SimpleNamespace(tp_rank=0, tp_size=1, pp_rank=0, pp_size=1, is_mla_model=False,
                          is_page_first_layout=True, model_name="m",
                          extra_config={"master_server_address": master,
                                        "key_prefix": "s" + uuid.uuid4().hex[:12]})
    return CrescentHiCacheStorage(cfg, pool)


def mha_pool(pages=16):
    return MHAHostPool(size=pages * PAGE, page_size=PAGE, layer_num=2, head_num=2, head_dim=8)


def hashes(n):
    return [uuid.uuid4().hex for _ in range(n)]


def written(b, pool, n, extra_info=None):
    keys = hashes(n)
    idx = pool.alloc(n * PAGE)
    pool.kv_buffer[:, idx] = torch.randn(pool.kv_buffer[:, idx].shape)
    assert b.batch_set_v1(keys, idx, extra_info) == [True] * n
    return keys, idx


def test_end_session_hints_every_object_of_the_pages(crescent_master):
    pool = mha_pool()
    b = backend(crescent_master, pool)
    keys, _ = written(b, pool, 3)
    assert b.get_stats()["session_end_calls"] == 0
    assert b.end_session(keys) == 6  # K and V of each page
    assert b.end_session(hashes(2)) == 0  # pages never stored
    assert b.end_session([]) == 0
    stats = b.get_stats()
    assert (stats["session_end_calls"], stats["session_end_marked"]) == (2, 6)
    assert b.batch_exists(keys) == 3  # a hint removes nothing


def test_extra_info_session_end_hints_a_set_and_a_get(crescent_master):
    pool = mha_pool()
    b = backend(crescent_master, pool)
    written(b, pool, 2)
    written(b, pool, 2, HiCacheStorageExtraInfo(extra_info={"session_end": False}))
    written(b, pool, 2, HiCacheStorageExtraInfo(prefix_keys=["p"]))
    assert b.get_stats()["session_end_calls"] == 0  # none of those ends a session
    # The last turn: written with the hint, so its (new) objects are marked.
    final_keys, _ = written(b, pool, 2, FINAL)
    stats = b.get_stats()
    assert (stats["session_end_calls"], stats["session_end_marked"]) == (1, 4)
    # A read of a finished conversation's pages, marked final, hints them too.
    dst = pool.alloc(2 * PAGE)
    assert b.batch_get_v1(final_keys, dst, FINAL) == [True, True]
    stats = b.get_stats()
    assert (stats["session_end_calls"], stats["session_end_marked"]) == (2, 8)
    assert stats["session_end_failures"] == 0


def test_v2_calls_hint_every_pools_objects(crescent_master):
    b = backend(crescent_master, None)
    kv = mha_pool(32)
    mamba, indexer = MambaPool(size=16), IndexerPool(size=32 * PAGE, page_size=PAGE)
    ctl = Controller(b, kv, {PoolName.MAMBA: (mamba, PoolHitPolicy.TRAILING_PAGES),
                             PoolName.INDEXER: (indexer, PoolHitPolicy.ALL_PAGES)})
    n = 3
    host = {PoolName.MAMBA: mamba.alloc(1), PoolName.INDEXER: indexer.alloc(n * PAGE)}
    kv_idx = kv.alloc(n * PAGE)
    done, _ = ctl.backup(hashes(n), kv_idx, host, FINAL)
    assert done == n * PAGE
    stats = b.get_stats()
    # batch_set_v2 (the Mamba and indexer objects), then batch_set_v1 (K and V).
    assert stats["session_end_calls"] == 2
    assert stats["session_end_marked"] == stats["session_end_objects"] > 2 * n
