"""The call sequences of the engines' Mooncake clients, replayed against a real
`crescent serve` through crescent.mooncake, checking bytes. Each is written from
the engine's published code (docs/engines.md names the calls):

* vLLM's MooncakeStoreConnector worker: setup with a config dict (sizes as
  strings, contributing memory), register_buffer over each KV cache tensor,
  save = batch_is_exist then batch_put_from_multi_buffers of the missing keys
  (one slice per layer and K/V), load = batch_get_into_multi_buffers, replica
  descriptors for tier logging, remove_all(force=True), close;
* LMCache's Mooncake connector: setup with 7 positional arguments,
  register_buffer over its pinned CPU buffer, put_from / batch_put_from with a
  ReplicateConfig, is_exist, batch_get_into, batch_get_buffer, put_parts of a
  metadata header and a payload, get_hostname, unregister_buffer, close;
* SGLang's Mooncake HiCache backend: setup with 8 positional arguments and
  keywords, the warm-up put / is_exist / get, register_buffer per host pool
  tensor, batch_is_exist then batch_put_from of the missing objects,
  batch_get_into, remove_all, close.
"""

import ctypes
import os
import struct
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from crescent.mooncake import NO_AVAILABLE_HANDLE, MooncakeDistributedStore, ReplicateConfig

LAYERS, BLOCKS, BLOCK_BYTES = 4, 16, 2048  # a block: block_size x heads x dim bytes


@pytest.fixture
def contributing(secret_serve, monkeypatch):
    """setup's environment for a client that contributes memory to secret_serve."""
    monkeypatch.setenv("CRESCENT_SECRET_FILE", secret_serve.secret_file)
    return secret_serve


def test_vllm_mooncake_store_connector(contributing):
    store = MooncakeDistributedStore()
    assert store.setup({"local_hostname": "127.0.0.1", "metadata_server": "P2PHANDSHAKE",
                        "global_segment_size": str(16 << 20), "local_buffer_size": str(0),
                        "protocol": "tcp", "rdma_devices": "",
                        "master_server_addr": contributing.address}) == 0
    # FlashAttention's per-layer cache: (2, num_blocks, ...), K and V outermost.
    rng = np.random.default_rng(1)
    caches = [rng.integers(0, 256, (2, BLOCKS, BLOCK_BYTES), dtype=np.uint8)
              for _ in range(LAYERS)]
    restored = [np.zeros_like(c) for c in caches]
    for c in caches + restored:
        assert store.register_buffer(c.ctypes.data, c.nbytes) == 0

    def slices(tensors, block):
        addrs = [t.ctypes.data + kv * t.strides[0] + block * t.strides[1]
                 for t in tensors for kv in (0, 1)]
        return addrs, [BLOCK_BYTES] * len(addrs)

    model, blocks = "m@tp_rank:0@pcp0@dcp0@pp_rank:0", [3, 7, 11]
    keys = [f"{model}@{uuid.uuid4().hex}" for _ in blocks]
    # Save: dedup with batch_is_exist, then one multi-buffer put of the missing keys.
    assert store.batch_is_exist(keys) == [0, 0, 0]
    first = slices(caches, blocks[0])
    assert store.batch_put_from_multi_buffers(keys[:1], [first[0]], [first[1]]) == [0]
    missing = [i for i, e in enumerate(store.batch_is_exist(keys)) if e != 1]
    assert missing == [1, 2]
    meta = [slices(caches, blocks[i]) for i in missing]
    res = store.batch_put_from_multi_buffers([keys[i] for i in missing], [a for a, _ in meta],
                                             [s for _, s in meta])
    assert res == [0, 0] and NO_AVAILABLE_HANDLE not in res
    # Load into other blocks of other tensors.
    dst = [1, 2, 5]
    meta = [slices(restored, b) for b in dst]
    assert store.batch_get_into_multi_buffers(keys, [a for a, _ in meta],
                                              [s for _, s in meta]) == \
        [2 * LAYERS * BLOCK_BYTES] * 3
    for src_block, dst_block in zip(blocks, dst):
        for c, r in zip(caches, restored):
            assert np.array_equal(c[:, src_block], r[:, dst_block])
    tiers = store.batch_get_replica_desc(keys)
    assert all(d.is_memory_replica() for k in keys for d in tiers[k])
    assert store.remove_all(force=True) >= 3
    assert store.close() == 0


def test_lmcache_mooncake_connector(serve):
    store = MooncakeDistributedStore()
    assert store.setup("localhost", "P2PHANDSHAKE", 0, 64 << 20, "tcp", "",
                       serve.address) == 0
    pool = np.zeros(8 << 20, dtype=np.uint8)  # LMCache's pinned CPU memory
    assert store.register_buffer(pool.ctypes.data, pool.nbytes) == 0
    chunk = 256 << 10
    rng = np.random.default_rng(2)
    pool[:4 * chunk] = rng.integers(0, 256, 4 * chunk, dtype=np.uint8)
    config = ReplicateConfig()
    config.replica_num = 1
    config.preferred_segment = store.get_hostname()  # no segment of its own: placed anywhere
    keys = [f"lmcache@m@1@0@{uuid.uuid4().hex}" for _ in range(4)]
    base = pool.ctypes.data
    assert store.put_from(keys[0], base, chunk, config) == 0
    assert store.batch_put_from(keys[1:], [base + i * chunk for i in (1, 2, 3)],
                                [chunk] * 3, config) == [0, 0, 0]
    assert store.put_from(keys[0], base, chunk, config) == 0  # already stored: done
    assert [store.is_exist(k) for k in keys] == [1, 1, 1, 1]
    out = 4 * chunk
    assert store.batch_get_into(keys, [base + out + i * chunk for i in range(4)],
                                [chunk] * 4) == [chunk] * 4
    assert np.array_equal(pool[:4 * chunk], pool[out:out + 4 * chunk])
    # The metadata-header form: put_parts(key, header, payload), read back whole.
    payload = (ctypes.c_ubyte * 4096).from_buffer(pool, 0)
    header = struct.pack("iiiiii", 4096, 1, 2, 16, 8, 16)
    meta_key = keys[0] + "-meta"
    assert store.put_parts(meta_key, header, memoryview(payload)) == 0
    [got, absent] = store.batch_get_buffer([meta_key, "lmcache-absent-" + uuid.uuid4().hex])
    assert absent is None
    view = memoryview(got)
    assert struct.unpack("iiiiii", view[:24]) == (4096, 1, 2, 16, 8, 16)
    assert view[24:].tobytes() == pool[:4096].tobytes()
    del payload, view
    assert store.unregister_buffer(base) == 0
    store.remove_all(True)
    assert store.close() == 0


def test_sglang_mooncake_backend(serve):
    store = MooncakeDistributedStore()
    assert store.setup("localhost", "P2PHANDSHAKE", 0, 16 << 20, "tcp", "", serve.address,
                       None, enable_client_http_server=False) == 0
    warm = "sglang_mooncake_store_warmup_key" + uuid.uuid4().hex
    assert store.put(warm, bytes(4096)) == 0
    assert store.is_exist(warm) == 1 and store.get(warm) == bytes(4096)
    # page_first host pool: (2, tokens, layers, heads, dim); K and V registered.
    page, tokens = 4, 64
    host = np.random.default_rng(3).standard_normal((2, tokens, 2, 2, 8)).astype(np.float32)
    for half in host:
        assert store.register_buffer(half.ctypes.data, half.nbytes) == 0
    page_bytes = page * host[0, 0].nbytes
    hashes = [uuid.uuid4().hex for _ in range(3)]
    keys = [f"{h}_0_{kv}" for h in hashes for kv in ("k", "v")]
    ptrs = [host[kv, p * page].ctypes.data for p in range(3) for kv in (0, 1)]
    assert store.batch_put_from(keys[:2], ptrs[:2], [page_bytes] * 2) == [0, 0]
    exist = store.batch_is_exist(keys)
    todo = [i for i, e in enumerate(exist) if e != 1]
    assert todo == [2, 3, 4, 5]
    assert store.batch_put_from([keys[i] for i in todo], [ptrs[i] for i in todo],
                                [page_bytes] * 4) == [0] * 4
    out = [host[kv, (8 + p) * page].ctypes.data for p in range(3) for kv in (0, 1)]
    assert store.batch_get_into(keys, out, [page_bytes] * 6) == [page_bytes] * 6
    assert np.array_equal(host[:, 32:32 + 3 * page], host[:, :3 * page])
    assert store.remove_all() >= 0
    assert store.close() == 0



def test_the_mooncake_shim_imports_crescent():
    """python/engines/mooncake: `from mooncake.store import ...` as the engines write it."""
    engines = Path(__file__).resolve().parents[2] / "python" / "engines"
    code = ("from mooncake.store import MooncakeDistributedStore, ReplicateConfig\n"
            "import crescent.mooncake as m\n"
            "assert MooncakeDistributedStore is m.MooncakeDistributedStore\n"
            "assert ReplicateConfig is m.ReplicateConfig\n")
    path = [str(engines)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(path)})
    assert r.returncode == 0, r.stderr
