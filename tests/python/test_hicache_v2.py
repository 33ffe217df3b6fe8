"""crescent.hicache's HiCache v2 calls against a real `crescent serve`, loaded
and driven as SGLang loads and drives it: through the dynamic backend factory,
by the hybrid controller's exact calls (hicache_v2_support.Controller), with
SGLang's interface types (the stand-in in sglang_standin/), checking bytes."""

import inspect
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import torch

from hicache_pool import MHAHostPool, MLAHostPool
from hicache_v2_support import (Controller, IndexerPool, LayerFirstMHAPool, LayerFirstMLAPool,
                                MambaPool)
from sglang.srt.mem_cache import hicache_storage as sg
from sglang.srt.mem_cache.hicache_storage import (HiCacheStorageConfig, PoolHitPolicy, PoolName,
                                                  PoolTransfer, PoolTransferResult)
from sglang.srt.mem_cache.storage.backend_factory import StorageBackendFactory

from crescent.hicache import CrescentHiCacheStorage

PAGE = 4
ALL, TRAILING = PoolHitPolicy.ALL_PAGES, PoolHitPolicy.TRAILING_PAGES


def storage_config(master, tp_rank=0, is_mla=False, **extra):
    extra = {"backend_name": "crescent", "module_path": "crescent.hicache",
             "class_name": "CrescentHiCacheStorage", "master_server_address": master, **extra}
    return HiCacheStorageConfig(tp_rank=tp_rank, tp_size=2, pp_rank=0, pp_size=1,
                                attn_cp_rank=0, attn_cp_size=1, is_mla_model=is_mla,
                                enable_storage_metrics=False, is_page_first_layout=True,
                                model_name="m", extra_config=extra)


@pytest.fixture
def make(crescent_master):
    """make(tp_rank=0, is_mla=False) -> a backend built by SGLang's dynamic factory."""
    made = []

    def build(tp_rank=0, is_mla=False, **extra):
        cfg = storage_config(crescent_master, tp_rank, is_mla, **extra)
        b = StorageBackendFactory.create_backend("dynamic", cfg, None)
        made.append(b)
        return b

    yield build
    for b in made:
        b.close()


def hashes(n):
    return [uuid.uuid4().hex for _ in range(n)]


def hybrid(backend, pages):
    """A controller over an MHA KV pool with a Mamba pool (TRAILING_PAGES) and
    an indexer pool (ALL_PAGES), and each pool's host indices for `pages` pages."""
    kv = MHAHostPool(size=32 * PAGE, page_size=PAGE, layer_num=2, head_num=2, head_dim=8)
    mamba, indexer = MambaPool(size=16), IndexerPool(size=32 * PAGE, page_size=PAGE)
    ctl = Controller(backend, kv, {PoolName.MAMBA: (mamba, TRAILING),
                                   PoolName.INDEXER: (indexer, ALL)})
    host = {PoolName.MAMBA: mamba.alloc(1), PoolName.INDEXER: indexer.alloc(pages * PAGE)}
    return ctl, kv.alloc(pages * PAGE), host


# ------------------------------------------------------------------ interface
V2_SIGNATURES = {
    "register_mem_host_pool_v2": ["host_pool", "host_pool_name"],
    "batch_exists_v2": ["keys", "pool_transfers", "extra_info"],
    "batch_get_v2": ["transfers", "extra_info"],
    "batch_set_v2": ["transfers", "extra_info"],
}


@pytest.mark.parametrize("name", sorted(V2_SIGNATURES))
def test_v2_signatures_and_defaults_match_sglang(name):
    ours = inspect.signature(getattr(CrescentHiCacheStorage, name)).parameters
    theirs = inspect.signature(getattr(sg.HiCacheStorage, name)).parameters
    assert list(ours)[1:] == V2_SIGNATURES[name]
    assert [p.default for p in ours.values()] == [p.default for p in theirs.values()]


def test_loads_through_the_dynamic_backend_factory(make):
    b = make()
    assert isinstance(b, CrescentHiCacheStorage) and isinstance(b, sg.HiCacheStorage)
    with pytest.raises(TypeError, match="must inherit from HiCacheStorage"):
        StorageBackendFactory._load_backend_class("crescent.mooncake",
                                                  "MooncakeDistributedStore", "x")


# ------------------------------------------------------------ the controller
def test_backup_then_prefetch_moves_every_pool_byte_exact(make):
    n = 5
    keys = hashes(n)
    writer, kv_idx, host = hybrid(make(), n)
    torch.manual_seed(1)
    writer.kv.kv_buffer[:, kv_idx] = torch.randn(writer.kv.kv_buffer[:, kv_idx].shape)
    want_kv = writer.kv.kv_buffer[:, kv_idx].clone()
    mamba, indexer = writer.extra[PoolName.MAMBA][0], writer.extra[PoolName.INDEXER][0]
    want_mamba = mamba.fill(host[PoolName.MAMBA], 2)
    want_indexer = indexer.fill(host[PoolName.INDEXER], 3)
    done, results = writer.backup(keys, kv_idx, host)
    assert done == n * PAGE
    assert results == {PoolName.MAMBA: [True], PoolName.INDEXER: [True] * n}

    reader, rkv_idx, rhost = hybrid(make(), n)
    rkv_idx = reader.kv.alloc(n * PAGE)  # other slots than the writer's
    hit, got, loaded = reader.prefetch(keys, rkv_idx, rhost)
    assert isinstance(hit, PoolTransferResult)
    assert hit.kv_hit_pages == n
    assert hit.extra_pool_hit_pages == {PoolName.MAMBA: n, PoolName.INDEXER: n}
    assert got == {PoolName.MAMBA: [True], PoolName.INDEXER: [True] * n}
    assert loaded == n * PAGE
    assert torch.equal(reader.kv.kv_buffer[:, rkv_idx], want_kv)
    rmamba, rindexer = reader.extra[PoolName.MAMBA][0], reader.extra[PoolName.INDEXER][0]
    for a, b in zip(rmamba.page(rhost[PoolName.MAMBA]), want_mamba):
        assert torch.equal(a, b)
    assert torch.equal(rindexer.page(rhost[PoolName.INDEXER]), want_indexer)


def test_all_pages_pool_cuts_the_prefix_at_its_first_missing_page(make):
    keys = hashes(4)
    ctl, kv_idx, host = hybrid(make(), 4)
    ctl.backup(keys, kv_idx, host)
    b = ctl.backend
    b.store.remove(f"{b.key_prefix}{keys[2]}__indexer", True)
    query = [PoolTransfer(name=PoolName.INDEXER, keys=keys, hit_policy=ALL)]
    hit = b.batch_exists_v2(keys, query)
    assert (hit.kv_hit_pages, hit.extra_pool_hit_pages) == (2, {PoolName.INDEXER: 2})
    # No extra pool: the KV prefix alone.
    assert b.batch_exists_v2(keys).kv_hit_pages == 4


def test_trailing_pages_pool_lets_the_prefix_end_only_where_its_state_is(make):
    keys = hashes(6)
    ctl, kv_idx, host = hybrid(make(), 6)
    b = ctl.backend
    # KV and indexer for 5 pages; Mamba states after page 3 and after page 5.
    ctl.backup(keys[:3], kv_idx[:3 * PAGE], {PoolName.MAMBA: host[PoolName.MAMBA],
                                             PoolName.INDEXER: host[PoolName.INDEXER][:3 * PAGE]})
    ctl.backup(keys[:5], kv_idx[:5 * PAGE], {PoolName.MAMBA: host[PoolName.MAMBA],
                                             PoolName.INDEXER: host[PoolName.INDEXER][:5 * PAGE]})
    mamba = [PoolTransfer(name=PoolName.MAMBA, keys=keys[-1:], hit_policy=TRAILING)]
    hit = b.batch_exists_v2(keys, mamba)
    assert (hit.kv_hit_pages, hit.extra_pool_hit_pages) == (5, {PoolName.MAMBA: 5})
    b.store.remove(f"{b.key_prefix}{keys[4]}_0_temporal", True)
    hit = b.batch_exists_v2(keys, mamba)
    assert (hit.kv_hit_pages, hit.extra_pool_hit_pages) == (3, {PoolName.MAMBA: 3})
    # A window of two pages needs states after pages 2 and 3: only page 3 has one.
    two = [PoolTransfer(name=PoolName.MAMBA, keys=keys[-2:], hit_policy=TRAILING)]
    assert b.batch_exists_v2(keys, two).kv_hit_pages == 0
    # With an ALL_PAGES pool as well, the prefix is what both allow.
    both = mamba + [PoolTransfer(name=PoolName.INDEXER, keys=keys, hit_policy=ALL)]
    assert b.batch_exists_v2(keys, both).kv_hit_pages == 3


# ------------------------------------------------------------------ key forms
def test_object_keys_are_sglangs(make):
    h = hashes(1)
    mha = make(tp_rank=1)
    ctl, kv_idx, host = hybrid(mha, 1)
    ctl.backup(h, kv_idx, host)
    p = mha.key_prefix
    for suffix in ("_1_k", "_1_v", "_1_temporal", "_1_conv_0", "_1_conv_1", "__indexer"):
        assert mha.store.is_exist(f"{p}{h[0]}{suffix}") == 1, suffix
    mla = make(is_mla=True)
    pool = MLAHostPool(size=8 * PAGE, page_size=PAGE, layer_num=2, kv_lora_rank=8,
                       qk_rope_head_dim=4)
    mla.register_mem_pool_host(pool)
    assert mla.batch_set_v1(h, pool.alloc(PAGE)) == [True]
    assert mla.store.is_exist(f"{mla.key_prefix}{h[0]}__k") == 1
    draft = MHAHostPool(size=8 * PAGE, page_size=PAGE, layer_num=1, head_num=1, head_dim=4)
    mha.register_mem_host_pool_v2(draft, PoolName.DRAFT)
    t = PoolTransfer(name=PoolName.DRAFT, host_indices=draft.alloc(PAGE), keys=h)
    assert mha.batch_set_v2([t]) == {PoolName.DRAFT: [True]}
    assert mha.store.is_exist(f"{p}{h[0]}_1_draft_k") == 1
    assert mha.store.is_exist(f"{p}{h[0]}_1_draft_v") == 1


# -------------------------------------------------------------------- layouts
@pytest.mark.parametrize("pool_cls,is_mla", [(LayerFirstMLAPool, True),
                                             (LayerFirstMHAPool, False)])
def test_layer_first_pages_move_through_v1_and_v2(make, pool_cls, is_mla):
    keys = hashes(3)
    src, dst = pool_cls(16 * PAGE, PAGE, 3, 8), pool_cls(16 * PAGE, PAGE, 3, 8)
    w, r = make(is_mla=is_mla), make(is_mla=is_mla)
    w.register_mem_pool_host(src)
    r.register_mem_pool_host(dst)
    idx = src.alloc(3 * PAGE)
    want = src.fill(idx, 9)
    assert w.batch_set_v1(keys[:2], idx[:2 * PAGE]) == [True, True]
    t = PoolTransfer(name=PoolName.KV, host_indices=idx[2 * PAGE:], keys=keys[2:])
    assert w.batch_set_v2([t]) == {PoolName.KV: [True]}
    didx = dst.alloc(3 * PAGE)
    assert r.batch_exists(keys) == 3
    assert r.batch_get_v1(keys[:1], didx[:PAGE]) == [True]
    t = PoolTransfer(name=PoolName.KV, host_indices=didx[PAGE:], keys=keys[1:])
    assert r.batch_get_v2([t]) == {PoolName.KV: [True, True]}
    assert torch.equal(dst.page(didx), want)


def test_kv_pages_through_v2_alone(make):
    keys = hashes(3)
    src = MHAHostPool(size=16 * PAGE, page_size=PAGE, layer_num=2, head_num=2, head_dim=8)
    dst = MHAHostPool(size=16 * PAGE, page_size=PAGE, layer_num=2, head_num=2, head_dim=8)
    w, r = make(), make()
    w.register_mem_host_pool_v2(src, PoolName.KV)
    r.register_mem_host_pool_v2(dst, PoolName.KV)
    idx = src.alloc(3 * PAGE)
    src.kv_buffer[:, idx] = torch.randn(src.kv_buffer[:, idx].shape)
    assert w.batch_set_v2([PoolTransfer(name=PoolName.KV, host_indices=idx, keys=keys)]) == \
        {PoolName.KV: [True] * 3}
    didx = dst.alloc(3 * PAGE)
    missing = hashes(1)
    res = r.batch_get_v2([PoolTransfer(name=PoolName.KV, host_indices=didx,
                                       keys=keys[:2] + missing)])
    assert res == {PoolName.KV: [True, True, False]}
    assert torch.equal(dst.kv_buffer[:, didx[:2 * PAGE]], src.kv_buffer[:, idx[:2 * PAGE]])


def test_a_logical_kv_anchor_leaves_the_prefix_to_the_pools(make):
    """A KV pool without memory (kv_buffer None, as DeepSeek V4's anchor): v1
    has nothing to move, and batch_exists_v2's prefix is what the pools allow."""
    class Anchor:
        page_size, kv_buffer = PAGE, None

    b = make(is_mla=True)
    b.register_mem_pool_host(Anchor())
    indexer = IndexerPool(size=16 * PAGE, page_size=PAGE)
    b.register_mem_host_pool_v2(indexer, PoolName.INDEXER)
    keys = hashes(3)
    assert b.batch_set_v1(keys, torch.arange(3 * PAGE)) == [True] * 3
    idx = indexer.alloc(2 * PAGE)
    assert b.batch_set_v2([PoolTransfer(name=PoolName.INDEXER, host_indices=idx,
                                        keys=keys[:2])]) == {PoolName.INDEXER: [True, True]}
    query = [PoolTransfer(name=PoolName.INDEXER, keys=keys, hit_policy=ALL)]
    assert b.batch_exists_v2(keys, query).kv_hit_pages == 2


# -------------------------------------------------------------------- refusals
def test_unregistered_pool_and_wrong_index_count_are_refused(make):
    b = make()
    kv = MHAHostPool(size=8 * PAGE, page_size=PAGE, layer_num=1, head_num=1, head_dim=4)
    b.register_mem_pool_host(kv)
    with pytest.raises(ValueError, match="not registered"):
        b.batch_set_v2([PoolTransfer(name=PoolName.SWA, host_indices=kv.alloc(PAGE),
                                     keys=hashes(1))])
    with pytest.raises(ValueError, match="host indices"):
        b.batch_get_v2([PoolTransfer(name=PoolName.KV, host_indices=kv.alloc(PAGE),
                                     keys=hashes(2))])
    assert b.batch_get_v2([]) == {}
    assert b.batch_exists_v2([]).kv_hit_pages == 0


def test_without_sglang_the_v2_calls_answer_with_a_local_result_type():
    """Where SGLang is not importable, crescent.hicache has its own
    PoolTransferResult with SGLang's two fields."""
    code = ("import crescent.hicache as h\n"
            "from crescent_e2e.memstore import MemoryStore\n"
            "assert not h.SGLANG_AVAILABLE\n"
            "b = h.CrescentHiCacheStorage(None, None, store=MemoryStore())\n"
            "r = b.batch_exists_v2(['a', 'b'])\n"
            "assert (type(r).__module__, r.kv_hit_pages, r.extra_pool_hit_pages) == "
            "('crescent.hicache', 0, {}), r\n")
    repo = Path(__file__).resolve().parents[2]
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path + [str(repo / "python")])}
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
