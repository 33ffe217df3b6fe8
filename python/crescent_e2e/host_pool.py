"""Stand-ins for SGLang's host KV pools (``HostKVCache``), CPU torch tensors.

They mirror the members of SGLang's ``MHATokenToKVPoolHost`` and
``MLATokenToKVPoolHost`` that a HiCache storage backend uses, in the
``page_first`` layout:

* ``kv_buffer``: MHA ``(2, size, layer_num, head_num, head_dim)`` (K then V),
  MLA ``(size, layer_num, 1, kv_lora_rank + qk_rope_head_dim)``;
* ``k_buffer`` / ``v_buffer`` (MHA), ``get_hybrid_pool_buffer()``;
* ``page_size``, ``size``, ``layout``, ``dtype``, ``layer_num``;
* ``get_size_per_token()``, ``get_ksize_per_token()``;
* ``get_page_buffer_meta(indices) -> (ptr_list, element_size_list)``: for every
  page (``page_size`` consecutive token indices) the address and byte size of
  its K object then its V object (MHA), or of its single latent object (MLA);
* ``alloc(n) / free(indices) / available_size()`` in whole pages.

Plus helpers SGLang's pools do not have, for the harness and tests:
``write_tokens`` / ``read_tokens`` move per-layer KV in and out of the pool.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import torch


def _itemsize(dtype: torch.dtype) -> int:
    return torch.tensor([], dtype=dtype).element_size()


class _PagedSlots:
    def _init_slots(self, size: int, page_size: int) -> None:
        if size % page_size:
            raise ValueError("pool size must be a multiple of page_size")
        self.size = size
        self.page_size = page_size
        self._free_pages = list(range(size // page_size))

    def available_size(self) -> int:
        return len(self._free_pages) * self.page_size

    def alloc(self, need_size: int) -> Optional[torch.Tensor]:
        pages = -(-need_size // self.page_size)
        if pages > len(self._free_pages):
            return None
        chosen, self._free_pages = self._free_pages[:pages], self._free_pages[pages:]
        idx = [p * self.page_size + t for p in chosen for t in range(self.page_size)]
        return torch.tensor(idx, dtype=torch.int64)

    def free(self, indices: torch.Tensor) -> int:
        starts = indices.view(-1, self.page_size)[:, 0].tolist()
        self._free_pages.extend(int(s) // self.page_size for s in starts)
        return len(indices)

    def clear(self) -> None:
        self._free_pages = list(range(self.size // self.page_size))


class MHAHostPool(_PagedSlots):
    """MHA (GQA) host pool, page_first: a page's K (and V) is contiguous."""

    def __init__(self, size: int, page_size: int, layer_num: int, head_num: int,
                 head_dim: int, dtype: torch.dtype = torch.float32):
        self._init_slots(size, page_size)
        self.layout = "page_first"
        self.layer_num, self.head_num, self.head_dim = layer_num, head_num, head_dim
        self.dtype = dtype
        self.kv_buffer = torch.zeros((2, size, layer_num, head_num, head_dim), dtype=dtype)

    @property
    def k_buffer(self) -> torch.Tensor:
        return self.kv_buffer[0]

    @property
    def v_buffer(self) -> torch.Tensor:
        return self.kv_buffer[1]

    def get_hybrid_pool_buffer(self) -> List[torch.Tensor]:
        return [self.k_buffer, self.v_buffer]

    def get_size_per_token(self) -> int:
        return self.head_dim * self.head_num * self.layer_num * _itemsize(self.dtype) * 2

    def get_ksize_per_token(self) -> int:
        return self.get_size_per_token() // 2

    def get_page_buffer_meta(self, indices) -> Tuple[List[int], List[int]]:
        assert len(indices) % self.page_size == 0
        token_bytes = self.get_ksize_per_token()
        k_base = self.kv_buffer.data_ptr()
        v_offset = self.size * token_bytes
        ptrs: List[int] = []
        idx = indices.tolist() if hasattr(indices, "tolist") else list(indices)
        for i in range(0, len(idx), self.page_size):
            k_ptr = k_base + int(idx[i]) * token_bytes
            ptrs.append(k_ptr)
            ptrs.append(k_ptr + v_offset)
        element = self.page_size * token_bytes
        return ptrs, [element] * len(ptrs)

    # -- harness helpers: (tokens, layer, head, dim) <-> per-layer KV lists --
    def write_tokens(self, indices: torch.Tensor, k: List[torch.Tensor],
                     v: List[torch.Tensor]) -> None:
        """k[l], v[l]: (head_num, T, head_dim) for layer l, T == len(indices)."""
        self.k_buffer[indices] = torch.stack(k, 0).permute(2, 0, 1, 3).to(self.dtype)
        self.v_buffer[indices] = torch.stack(v, 0).permute(2, 0, 1, 3).to(self.dtype)

    def read_tokens(self, indices: torch.Tensor):
        k = self.k_buffer[indices].permute(1, 2, 0, 3)  # (layer, head, T, dim)
        v = self.v_buffer[indices].permute(1, 2, 0, 3)
        return ([k[l].contiguous() for l in range(self.layer_num)],
                [v[l].contiguous() for l in range(self.layer_num)])


class MLAHostPool(_PagedSlots):
    """MLA host pool, page_first: one latent object per page."""

    def __init__(self, size: int, page_size: int, layer_num: int, kv_lora_rank: int,
                 qk_rope_head_dim: int, dtype: torch.dtype = torch.float32):
        self._init_slots(size, page_size)
        self.layout = "page_first"
        self.layer_num = layer_num
        self.kv_lora_rank, self.qk_rope_head_dim = kv_lora_rank, qk_rope_head_dim
        self.dtype = dtype
        self.kv_buffer = torch.zeros(
            (size, layer_num, 1, kv_lora_rank + qk_rope_head_dim), dtype=dtype)

    def get_hybrid_pool_buffer(self) -> List[torch.Tensor]:
        return [self.kv_buffer]

    def get_size_per_token(self) -> int:
        return (self.kv_lora_rank + self.qk_rope_head_dim) * self.layer_num * _itemsize(self.dtype)

    def get_ksize_per_token(self) -> int:
        return self.get_size_per_token()

    def get_page_buffer_meta(self, indices) -> Tuple[List[int], List[int]]:
        assert len(indices) % self.page_size == 0
        token_bytes = self.get_size_per_token()
        base = self.kv_buffer.data_ptr()
        idx = indices.tolist() if hasattr(indices, "tolist") else list(indices)
        ptrs = [base + int(idx[i]) * token_bytes for i in range(0, len(idx), self.page_size)]
        return ptrs, [self.page_size * token_bytes] * len(ptrs)
