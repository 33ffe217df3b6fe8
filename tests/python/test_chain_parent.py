"""A chained batch that extends a stored page, against a real `crescent serve`
with `prefix-lru` (leaf first): Store.batch_put_chain_from(..., parent_key=K)
links the batch's first page to K, so K has a cached child and is no leaf, and
the HiCache adapter links a run of missing pages to the stored page before it
(docs/python.md, docs/master.md "Chains")."""

import time
import uuid
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import crescent
from conftest import Server, connect
from hicache_pool import MHAHostPool

from crescent.hicache import CrescentHiCacheStorage

PAGE = 4096
# Long enough that every write capability of the puts before it has expired
# (--put-timeout-ms 300, no grace), so eviction follows the policy alone.
SETTLE_S = 0.5


def small_serve(pages, page_bytes):
    """A serve whose segment holds exactly `pages` objects of `page_bytes`; a put
    into a full segment evicts one object, the policy's first victim."""
    return Server(["serve", "--port", "0", "--http-port", "0", "--segment-size",
                   "%dB" % (pages * page_bytes), "--eviction-policy", "prefix-lru",
                   "--high-watermark", "1.0", "--evict-ratio", "0.001", "--lease-ms", "50",
                   "--put-timeout-ms", "300", "--capability-grace-ms", "0"])


@pytest.fixture
def four_pages():
    server = small_serve(4, PAGE)
    store = connect(server.address)
    yield store
    store.close()
    server.stop()


def put_pages(store, keys, buf, parent_key=None, chain=True):
    views = [buf[i * PAGE:(i + 1) * PAGE] for i in range(len(keys))]
    if chain:
        return store.batch_put_chain_from(keys, views, parent_key=parent_key)
    return store.batch_put_from(keys, views)


@pytest.mark.parametrize("linked", [True, False])
def test_a_chain_that_names_its_stored_parent_keeps_that_parent(four_pages, linked):
    store = four_pages
    buf = np.arange(4 * PAGE, dtype=np.uint8) % 251
    assert store.register_buffer(buf) == 0
    assert put_pages(store, ["c0"], buf, chain=False) == [0]
    parent = "c0" if linked else None
    assert put_pages(store, ["c1", "c2"], buf, parent_key=parent) == [0, 0]
    assert put_pages(store, ["other"], buf, chain=False) == [0]
    time.sleep(SETTLE_S)
    assert put_pages(store, ["new"], buf, chain=False) == [0]  # evicts one page
    present = {k: store.is_exist(k) == 1 for k in ["c0", "c1", "c2", "other", "new"]}
    if linked:
        # c0 has a cached child: the least recent leaf goes, the chain's tail.
        assert present == {"c0": True, "c1": True, "c2": False, "other": True, "new": True}
    else:
        # Unlinked, c0 is a leaf of its own and the oldest.
        assert present == {"c0": False, "c1": True, "c2": True, "other": True, "new": True}


def test_parent_key_must_be_a_string(four_pages):
    buf = np.zeros(PAGE, dtype=np.uint8)
    assert four_pages.register_buffer(buf) == 0
    with pytest.raises(TypeError):
        four_pages.batch_put_chain_from(["k"], [buf], parent_key=7)


def test_hicache_links_a_run_of_missing_pages_to_the_stored_page_before_it():
    # Page-first MHA pages are two objects each (K, V), chained K then V: 4
    # tokens × 1 layer × 1 head × 16 dims × 4 bytes = 256 bytes; the segment
    # holds 8 of them (four pages).
    pool = MHAHostPool(size=16 * 4, page_size=4, layer_num=1, head_num=1, head_dim=16)
    server = small_serve(8, 256)
    try:
        cfg = SimpleNamespace(tp_rank=0, tp_size=1, pp_rank=0, pp_size=1, is_mla_model=False,
                              is_page_first_layout=True, model_name="m",
                              extra_config={"master_server_address": server.address,
                                            "key_prefix": "h" + uuid.uuid4().hex[:8]})
        b = CrescentHiCacheStorage(cfg, pool)
        pages = [uuid.uuid4().hex for _ in range(3)]
        idx = pool.alloc(3 * 4)
        pool.kv_buffer[:, idx] = torch.randn(pool.kv_buffer[:, idx].shape)
        assert b.batch_set_v1(pages[:1], idx[:4]) == [True]
        # Pages 1 and 2 are missing: written as a chain hanging off page 0's objects.
        assert b.batch_set_v1(pages, idx) == [True] * 3
        other = [uuid.uuid4().hex]
        idx2 = pool.alloc(4)
        assert b.batch_set_v1(other, idx2) == [True]
        time.sleep(SETTLE_S)
        more = [uuid.uuid4().hex]
        assert b.batch_set_v1(more, pool.alloc(4)) == [True]  # evicts two objects
        # Page 0's objects have cached children, so the chain loses its tail
        # (page 2's V, then its K), not its head. Unlinked, page 0's V was the
        # oldest leaf, then its K: the stored prefix would be gone.
        assert b.batch_exists(pages) == 2
        assert b.batch_exists(other) == 1
    finally:
        server.stop()
