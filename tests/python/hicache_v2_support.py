"""Stand-ins for the HiCache v2 tests: SGLang's extra host pools (layer_first
KV, a Mamba state pool, a DSA-indexer-like pool) and the storage paths of
SGLang's hybrid cache controller, which drive a backend with exactly its calls:

* backup:   batch_set_v2(extra pool transfers, extra_info), then the KV pages
            through batch_set_v1 in batches of STORAGE_BATCH_SIZE, stopping at
            the first batch that fails;
* prefetch: batch_exists_v2(page hashes, extra pool transfers, extra_info) for
            the hit, then batch_get_v2(the transfers cut to the hit) and the
            KV pages through batch_get_v1.
"""

from typing import Dict, List, Tuple

import torch

from sglang.srt.mem_cache.hicache_storage import (HiCacheStorageExtraInfo, PoolHitPolicy,
                                                  PoolName, PoolTransfer)

STORAGE_BATCH_SIZE = 128


class _Slots:
    def __init__(self, size: int, page_size: int):
        self.size, self.page_size = size, page_size
        self._next = 0

    def alloc(self, n: int) -> torch.Tensor:
        if self._next + n > self.size:
            raise RuntimeError("stand-in pool is full")
        idx = torch.arange(self._next, self._next + n, dtype=torch.int64)
        self._next += n
        return idx


class LayerFirstMLAPool(_Slots):
    """MLA KV, layer_first: a page's latent KV is one slice per layer, and
    get_page_buffer_meta lists the layer slices of each page in order."""

    layout = "layer_first"

    def __init__(self, size: int, page_size: int, layer_num: int, dim: int):
        super().__init__(size, page_size)
        self.layer_num, self.dim = layer_num, dim
        self.kv_buffer = torch.zeros((layer_num, size, 1, dim), dtype=torch.float32)

    def get_hybrid_pool_buffer(self):
        return [self.kv_buffer]

    def _token_bytes(self) -> int:
        return self.dim * 4

    def get_page_buffer_meta(self, indices) -> Tuple[List[int], List[int]]:
        tb, base = self._token_bytes(), self.kv_buffer.data_ptr()
        idx = indices.tolist()
        ptrs = [base + (layer * self.size + idx[i]) * tb
                for i in range(0, len(idx), self.page_size) for layer in range(self.layer_num)]
        return ptrs, [self.page_size * tb] * len(ptrs)

    def page(self, indices) -> torch.Tensor:
        return self.kv_buffer[:, indices].clone()

    def fill(self, indices, seed: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(seed)
        self.kv_buffer[:, indices] = torch.randn(self.kv_buffer[:, indices].shape, generator=g)
        return self.page(indices)


class LayerFirstMHAPool(LayerFirstMLAPool):
    """MHA KV, layer_first: per page, K's layer slices then V's."""

    def __init__(self, size: int, page_size: int, layer_num: int, dim: int):
        super().__init__(size, page_size, layer_num, dim)
        self.kv_buffer = torch.zeros((2, layer_num, size, 1, dim), dtype=torch.float32)

    @property
    def v_buffer(self):
        return self.kv_buffer[1]

    def get_page_buffer_meta(self, indices) -> Tuple[List[int], List[int]]:
        tb, base = self._token_bytes(), self.kv_buffer.data_ptr()
        idx = indices.tolist()
        half = self.layer_num * self.size
        ptrs = [base + (kv * half + layer * self.size + idx[i]) * tb
                for i in range(0, len(idx), self.page_size)
                for kv in (0, 1) for layer in range(self.layer_num)]
        return ptrs, [self.page_size * tb] * len(ptrs)

    def page(self, indices) -> torch.Tensor:
        return self.kv_buffer[:, :, indices].clone()

    def fill(self, indices, seed: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(seed)
        shape = self.kv_buffer[:, :, indices].shape
        self.kv_buffer[:, :, indices] = torch.randn(shape, generator=g)
        return self.page(indices)


class MambaPool(_Slots):
    """Mamba states, one slot per page (page_size 1): a temporal (SSM) state
    and conv states; get_page_buffer_meta gives, per slot, temporal then each
    conv state, as SGLang's Mamba host pool does."""

    layout = "page_first"

    def __init__(self, size: int, layer_num: int = 2, conv_num: int = 2):
        super().__init__(size, 1)
        self.temporal = torch.zeros((size, layer_num, 12), dtype=torch.float32)
        self.conv_buffer = [torch.zeros((size, layer_num, 5), dtype=torch.float32)
                            for _ in range(conv_num)]
        self.temporal_state_elem_size = 4

    def get_hybrid_pool_buffer(self):
        return [self.temporal, *self.conv_buffer]

    def get_page_buffer_meta(self, indices) -> Tuple[List[int], List[int]]:
        ptrs, sizes = [], []
        for i in indices.tolist():
            for t in (self.temporal, *self.conv_buffer):
                row = t.stride(0) * t.element_size()
                ptrs.append(t.data_ptr() + i * row)
                sizes.append(row)
        return ptrs, sizes

    def page(self, indices) -> List[torch.Tensor]:
        return [t[indices].clone() for t in (self.temporal, *self.conv_buffer)]

    def fill(self, indices, seed: int) -> List[torch.Tensor]:
        g = torch.Generator().manual_seed(seed)
        for t in (self.temporal, *self.conv_buffer):
            t[indices] = torch.randn(t[indices].shape, generator=g)
        return self.page(indices)


class IndexerPool(_Slots):
    """A page-packed single-object pool (DSA's indexer keys): one object per page."""

    layout = "page_first"

    def __init__(self, size: int, page_size: int, dim: int = 6):
        super().__init__(size, page_size)
        self.buffer = torch.zeros((size, dim), dtype=torch.float32)

    def get_hybrid_pool_buffer(self):
        return [self.buffer]

    def get_page_buffer_meta(self, indices) -> Tuple[List[int], List[int]]:
        row = self.buffer.stride(0) * 4
        idx = indices.tolist()
        ptrs = [self.buffer.data_ptr() + idx[i] * row for i in range(0, len(idx), self.page_size)]
        return ptrs, [self.page_size * row] * len(ptrs)

    def page(self, indices) -> torch.Tensor:
        return self.buffer[indices].clone()

    def fill(self, indices, seed: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(seed)
        self.buffer[indices] = torch.randn(self.buffer[indices].shape, generator=g)
        return self.page(indices)


class Controller:
    """The storage side of SGLang's hybrid HiCache controller, for one rank.

    kv: the KV host pool (the anchor); extra: {PoolName: (pool, hit policy)}.
    Registration is the controller's: the anchor with register_mem_pool_host,
    then every pool (the anchor too) with register_mem_host_pool_v2.
    """

    def __init__(self, backend, kv, extra: Dict[PoolName, tuple]):
        self.backend, self.kv, self.extra = backend, kv, extra
        self.page_size = kv.page_size
        backend.register_mem_pool_host(kv)
        backend.register_mem_host_pool_v2(kv, PoolName.KV)
        for name, (pool, _) in extra.items():
            backend.register_mem_host_pool_v2(pool, name)

    def _transfers(self, hashes: List[str], host: Dict[PoolName, torch.Tensor]):
        """One PoolTransfer per extra pool: ALL_PAGES pools cover every page,
        TRAILING_PAGES pools the last page only."""
        out = []
        for name, (pool, policy) in self.extra.items():
            keys = hashes if policy == PoolHitPolicy.ALL_PAGES else hashes[-1:]
            out.append(PoolTransfer(name=name, host_indices=host[name], keys=list(keys),
                                    hit_policy=policy))
        return out

    def backup(self, hashes: List[str], kv_indices, host: Dict[PoolName, torch.Tensor],
               extra_info=None) -> int:
        """Writes the pages; returns the tokens backed up (the controller's
        completed_tokens), and the extra pools' per-page results. `extra_info`:
        what every storage call gets (default: SGLang's, no prefix keys)."""
        extra_info = extra_info or HiCacheStorageExtraInfo(prefix_keys=None)
        results = self.backend.batch_set_v2(self._transfers(hashes, host), extra_info)
        done = 0
        for i in range(0, len(hashes), STORAGE_BATCH_SIZE):
            batch = hashes[i:i + STORAGE_BATCH_SIZE]
            idx = kv_indices[i * self.page_size:(i + len(batch)) * self.page_size]
            if not all(self.backend.batch_set_v1(batch, idx, extra_info)):
                break
            done += len(batch) * self.page_size
        return done, results

    def prefetch(self, hashes: List[str], kv_indices, host: Dict[PoolName, torch.Tensor]):
        """(hit result, extra pools' get results, KV tokens loaded)."""
        extra_info = HiCacheStorageExtraInfo(prefix_keys=None)
        query = self._transfers(hashes, host)
        hit = self.backend.batch_exists_v2(hashes, query, extra_info)
        n = hit.kv_hit_pages
        if n == 0:
            return hit, {}, 0
        cut = []
        for t, (name, (pool, policy)) in zip(query, self.extra.items()):
            keys = hashes[:n] if policy == PoolHitPolicy.ALL_PAGES else hashes[n - 1:n]
            cut.append(PoolTransfer(name=name, host_indices=host[name][:len(keys) *
                                                                       pool.page_size],
                                    keys=keys, hit_policy=policy))
        results = self.backend.batch_get_v2(cut, extra_info)
        loaded = 0
        for i in range(0, n, STORAGE_BATCH_SIZE):
            batch = hashes[i:min(n, i + STORAGE_BATCH_SIZE)]
            idx = kv_indices[i * self.page_size:(i + len(batch)) * self.page_size]
            ok = self.backend.batch_get_v1(batch, idx, extra_info)
            loaded += sum(ok) * self.page_size
            if not all(ok):
                break
        return hit, results, loaded
