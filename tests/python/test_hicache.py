"""crescent.hicache against SGLang's HiCacheStorage interface, with stand-in
host pools (SGLang itself is not installable here).

Each test runs twice: on the in-process stand-in store ("memory") and on a real
`crescent serve` through the crescent binding ("crescent", skipped when the
binding is not built).
"""

import ctypes
import inspect
import os
import uuid

import pytest
import torch

from hicache_pool import MHAHostPool, MLAHostPool

from crescent import hicache
from crescent.hicache import CrescentHiCacheStorage, HiCacheStorage

PAGE = 4


def mha_pool(pages=16, layers=2, heads=2, dim=8):
    return MHAHostPool(size=pages * PAGE, page_size=PAGE, layer_num=layers,
                       head_num=heads, head_dim=dim)


def mla_pool(pages=16, layers=2):
    return MLAHostPool(size=pages * PAGE, page_size=PAGE, layer_num=layers,
                       kv_lora_rank=16, qk_rope_head_dim=4)


def page_hashes(n):
    return [uuid.uuid4().hex for _ in range(n)]


def fill_random(pool, indices, seed):
    g = torch.Generator().manual_seed(seed)
    if isinstance(pool, MHAHostPool):
        pool.kv_buffer[:, indices] = torch.randn(pool.kv_buffer[:, indices].shape, generator=g)
        return pool.kv_buffer[:, indices].clone()
    pool.kv_buffer[indices] = torch.randn(pool.kv_buffer[indices].shape, generator=g)
    return pool.kv_buffer[indices].clone()


def read(pool, indices):
    if isinstance(pool, MHAHostPool):
        return pool.kv_buffer[:, indices].clone()
    return pool.kv_buffer[indices].clone()


# ------------------------------------------------------------------ interface
# The parameter lists of sglang.srt.mem_cache.hicache_storage.HiCacheStorage.
SGLANG_SIGNATURES = {
    "get": ["key", "target_location", "target_sizes"],
    "batch_get": ["keys", "target_locations", "target_sizes"],
    "set": ["key", "value", "target_location", "target_sizes"],
    "batch_set": ["keys", "values", "target_locations", "target_sizes"],
    "exists": ["key"],
    "batch_exists": ["keys", "extra_info"],
    "batch_get_v1": ["keys", "host_indices", "extra_info"],
    "batch_set_v1": ["keys", "host_indices", "extra_info"],
    "register_mem_pool_host": ["mem_pool_host"],
    "clear": [],
    "get_stats": [],
}


@pytest.mark.parametrize("name", sorted(SGLANG_SIGNATURES))
def test_method_signatures_match_sglang(name):
    for cls in (CrescentHiCacheStorage, HiCacheStorage):
        params = list(inspect.signature(getattr(cls, name)).parameters)
        assert params[0] == "self"
        assert params[1:] == SGLANG_SIGNATURES[name], (cls, name)


def test_is_a_hicache_storage_and_not_abstract():
    assert issubclass(CrescentHiCacheStorage, HiCacheStorage)
    assert not getattr(CrescentHiCacheStorage, "__abstractmethods__", set())
    if not hicache.SGLANG_AVAILABLE:
        # Stand-in ABC: the same abstract methods as SGLang's.
        assert HiCacheStorage.__abstractmethods__ == {
            "get", "batch_get", "set", "batch_set", "exists"}


# ----------------------------------------------------------------- page I/O
def test_mha_roundtrip_zero_copy(make_backend):
    src_pool, dst_pool = mha_pool(), mha_pool()
    writer = make_backend(src_pool)
    reader = make_backend(dst_pool)
    keys = page_hashes(4)
    idx = src_pool.alloc(4 * PAGE)
    want = fill_random(src_pool, idx, 1)
    assert writer.batch_set_v1(keys, idx) == [True] * 4

    assert reader.batch_exists(keys) == 4
    didx = dst_pool.alloc(4 * PAGE)
    dst_pool.alloc(0)
    assert reader.batch_get_v1(keys, didx) == [True] * 4
    assert torch.equal(read(dst_pool, didx), want)
    stats = reader.get_stats()
    assert stats["bytes_loaded"] == 4 * 2 * PAGE * src_pool.get_ksize_per_token()


def test_keys_are_hash_rank_k_and_v(make_backend):
    pool = mha_pool()
    b = make_backend(pool, tp_rank=1, key_prefix=None)
    keys = page_hashes(2)
    idx = pool.alloc(2 * PAGE)
    fill_random(pool, idx, 2)
    assert all(b.batch_set_v1(keys, idx))
    for k in keys:
        assert b.store.is_exist(f"{k}_1_k") == 1
        assert b.store.is_exist(f"{k}_1_v") == 1
        assert b.store.is_exist(f"{k}_0_k") != 1
    # Another TP rank has its own keys: nothing cached for rank 0.
    other = make_backend(mha_pool(), tp_rank=0, key_prefix=None)
    assert other.batch_exists(keys) == 0
    assert b.batch_exists(keys) == 2
    for k in keys:
        b.store.remove(f"{k}_1_k", True)
        b.store.remove(f"{k}_1_v", True)


def test_batch_exists_counts_leading_pages(make_backend):
    pool = mha_pool()
    b = make_backend(pool)
    keys = page_hashes(5)
    idx = pool.alloc(5 * PAGE)
    fill_random(pool, idx, 3)
    # Store pages 0, 1, 3, 4 but not 2.
    sel = [0, 1, 3, 4]
    sel_idx = torch.cat([idx[i * PAGE:(i + 1) * PAGE] for i in sel])
    assert all(b.batch_set_v1([keys[i] for i in sel], sel_idx))
    assert b.batch_exists(keys) == 2
    assert b.batch_exists(keys[:2]) == 2
    assert b.batch_exists(keys[2:]) == 0
    assert b.batch_exists(keys[3:]) == 2
    assert b.batch_exists([]) == 0
    # A page needs both K and V: drop page 1's V.
    b.store.remove(f"{b.key_prefix}{keys[1]}_0_v", True)
    assert b.batch_exists(keys) == 1
    assert b.exists(keys[0]) and not b.exists(keys[1])


def test_writes_skip_existing_pages(make_backend):
    pool = mha_pool()
    b = make_backend(pool)
    keys = page_hashes(4)
    idx = pool.alloc(4 * PAGE)
    first = fill_random(pool, idx, 4)
    assert all(b.batch_set_v1(keys[:2], idx[: 2 * PAGE]))
    # Overwrite the pool: pages 0-1 must not be rewritten (they exist).
    fill_random(pool, idx, 5)
    before = b.get_stats()
    assert all(b.batch_set_v1(keys, idx))
    after = b.get_stats()
    assert after["set_pages_skipped"] - before["set_pages_skipped"] == 2
    assert after["set_pages_written"] - before["set_pages_written"] == 2
    page_bytes = 2 * PAGE * pool.get_ksize_per_token()
    assert after["bytes_stored"] - before["bytes_stored"] == 2 * page_bytes

    out_pool = mha_pool()
    r = make_backend(out_pool)
    oidx = out_pool.alloc(4 * PAGE)
    assert r.batch_get_v1(keys, oidx) == [True] * 4
    got = read(out_pool, oidx)
    assert torch.equal(got[:, : 2 * PAGE], first[:, : 2 * PAGE])  # the original bytes
    assert torch.equal(got[:, 2 * PAGE:], read(pool, idx)[:, 2 * PAGE:])


def test_get_of_missing_pages_reports_prefix(make_backend):
    pool = mha_pool()
    b = make_backend(pool)
    keys = page_hashes(3)
    idx = pool.alloc(3 * PAGE)
    fill_random(pool, idx, 6)
    assert all(b.batch_set_v1(keys[:1], idx[:PAGE]))
    res = b.batch_get_v1(keys, pool.alloc(3 * PAGE))
    assert res[0] is True and res[1:] == [False, False]


def test_mla_one_object_per_page(make_backend):
    src, dst = mla_pool(), mla_pool()
    w = make_backend(src, is_mla=True, key_prefix=None)
    r = make_backend(dst, is_mla=True, tp_rank=1, key_prefix=None)  # ranks share MLA pages
    keys = page_hashes(3)
    idx = src.alloc(3 * PAGE)
    want = fill_random(src, idx, 7)
    assert w.batch_set_v1(keys, idx) == [True] * 3
    for k in keys:
        assert w.store.is_exist(f"{k}__k") == 1
        assert w.store.is_exist(f"{k}__v") != 1
    assert r.batch_exists(keys) == 3
    didx = dst.alloc(3 * PAGE)
    assert r.batch_get_v1(keys, didx) == [True] * 3
    assert torch.equal(read(dst, didx), want)
    stats = r.get_stats()
    assert stats["bytes_loaded"] == 3 * PAGE * src.get_size_per_token()
    for k in keys:
        w.store.remove(f"{k}_k", True)


def test_register_mem_pool_host_registers_buffers(make_backend):
    pool = mha_pool()
    b = make_backend()
    assert b.mem_pool_host is None
    with pytest.raises(RuntimeError):
        b.batch_set_v1(page_hashes(1), pool.alloc(PAGE))
    b.register_mem_pool_host(pool)
    assert b.mem_pool_host is pool
    assert len(b._registered) == 2  # the K and the V halves of kv_buffer
    if make_backend.kind == "memory":
        assert set(make_backend.store._buffers) == {pool.k_buffer.data_ptr(),
                                                    pool.v_buffer.data_ptr()}
    keys = page_hashes(1)
    idx = pool.alloc(PAGE)
    fill_random(pool, idx, 8)
    assert b.batch_set_v1(keys, idx) == [True]


def test_wrong_number_of_indices_is_an_error(make_backend):
    pool = mha_pool()
    b = make_backend(pool)
    with pytest.raises(ValueError):
        b.batch_get_v1(page_hashes(2), pool.alloc(PAGE))


# ------------------------------------------------------- object-level calls
def test_set_get_zero_copy_and_copying(make_backend):
    pool = mha_pool()
    b = make_backend(pool)
    idx = pool.alloc(2 * PAGE)
    fill_random(pool, idx, 9)
    ptrs, sizes = pool.get_page_buffer_meta(idx)
    key = uuid.uuid4().hex
    assert b.set(key, target_location=ptrs[0], target_sizes=sizes[0])
    assert b.exists(key)
    assert b.set(key, target_location=ptrs[0], target_sizes=sizes[0])  # skipped: exists
    assert b.get(key, target_location=ptrs[2], target_sizes=sizes[2])
    assert ctypes.string_at(ptrs[0], sizes[0]) == ctypes.string_at(ptrs[2], sizes[2])

    # Copying form: tensors in and out.
    t = torch.arange(32, dtype=torch.float32)
    k2 = uuid.uuid4().hex
    assert b.set(k2, value=t)
    out = torch.zeros(32, dtype=torch.float32)
    assert b.get(k2, target_location=out) is out
    assert torch.equal(out, t)
    assert b.get(uuid.uuid4().hex) is None
    assert not b.exists(uuid.uuid4().hex)


def test_batch_set_and_batch_get(make_backend):
    pool = mha_pool()
    b = make_backend(pool)
    idx = pool.alloc(4 * PAGE)
    fill_random(pool, idx, 10)
    ptrs, sizes = pool.get_page_buffer_meta(idx)  # 8 objects
    keys = [uuid.uuid4().hex for _ in range(4)]
    assert b.batch_set(keys, target_locations=ptrs[:4], target_sizes=sizes[:4])
    # Zero copy: returns how many leading objects were read.
    assert b.batch_get(keys + [uuid.uuid4().hex], target_locations=ptrs[4:] + [ptrs[0]],
                       target_sizes=sizes[4:] + [sizes[0]]) == 4
    for i in range(4):
        assert ctypes.string_at(ptrs[i], sizes[i]) == ctypes.string_at(ptrs[4 + i], sizes[4 + i])
    # Copying: a list of tensors, None for a miss.
    vals = [torch.full((8,), float(i)) for i in range(2)]
    ck = [uuid.uuid4().hex for _ in range(2)]
    assert b.batch_set(ck, values=vals)
    got = b.batch_get(ck + [uuid.uuid4().hex])
    assert torch.equal(got[0].view(torch.float32), vals[0])
    assert got[2] is None


def test_get_stats_is_a_dict(make_backend):
    pool = mha_pool()
    b = make_backend(pool)
    keys = page_hashes(2)
    idx = pool.alloc(2 * PAGE)
    fill_random(pool, idx, 11)
    b.batch_set_v1(keys, idx)
    assert b.batch_exists(keys + page_hashes(2)) == 2
    s = b.get_stats()
    assert isinstance(s, dict)
    for k in ("exists_pages_queried", "exists_pages_hit", "prefix_hit_ratio",
              "bytes_loaded", "bytes_stored", "set_pages_skipped", "set_pages_written"):
        assert k in s
    assert s["exists_pages_queried"] == 4 and s["exists_pages_hit"] == 2
    assert "store" in s


def test_clear_removes_everything(make_backend):
    pool = mha_pool()
    b = make_backend(pool)
    keys = page_hashes(2)
    idx = pool.alloc(2 * PAGE)
    fill_random(pool, idx, 12)
    b.batch_set_v1(keys, idx)
    assert b.batch_exists(keys) == 2
    b.clear()
    assert b.batch_exists(keys) == 0


# ------------------------------------------------------ SGLang's dynamic loader
def test_dynamic_loader_construction(crescent_master):
    """What SGLang's StorageBackendFactory does for backend "dynamic":
    import module_path, check issubclass(cls, HiCacheStorage), then call
    cls(storage_config, kwargs) with extra_config carrying the three fields."""
    import importlib
    from types import SimpleNamespace

    extra = {"backend_name": "crescent", "module_path": "crescent.hicache",
             "class_name": "CrescentHiCacheStorage",
             "master_server_address": crescent_master}
    cls = getattr(importlib.import_module(extra["module_path"]), extra["class_name"])
    assert issubclass(cls, HiCacheStorage)
    cfg = SimpleNamespace(tp_rank=0, tp_size=1, pp_rank=0, pp_size=1, is_mla_model=False,
                          is_page_first_layout=True, model_name="m", extra_config=extra)
    backend = cls(cfg, {})
    pool = mha_pool()
    backend.register_mem_pool_host(pool)  # SGLang registers the host pool afterwards
    keys = page_hashes(2)
    idx = pool.alloc(2 * PAGE)
    fill_random(pool, idx, 13)
    assert backend.batch_set_v1(keys, idx) == [True, True]
    assert backend.batch_exists(keys) == 2
    backend.close()


def test_master_from_env(crescent_master, monkeypatch):
    monkeypatch.setenv("CRESCENT_MASTER", crescent_master)
    b = CrescentHiCacheStorage(None, mha_pool())
    assert b.master_address == crescent_master
    assert b.batch_exists(page_hashes(1)) == 0
    b.close()


def test_replica_count_from_extra_config(make_backend):
    pool = mha_pool()
    b = make_backend(pool, replica_count=2)  # best effort: one store node here
    keys = page_hashes(2)
    idx = pool.alloc(2 * PAGE)
    fill_random(pool, idx, 14)
    assert b.batch_set_v1(keys, idx) == [True, True]
    assert b.batch_exists(keys) == 2
