"""SGLang HiCache's v2 storage calls (several host pools per page) for
crescent.hicache.CrescentHiCacheStorage.

SGLang's hybrid models keep more than KV per page: Mamba states, sliding-window
(SWA) KV, a DSA indexer, a draft model's KV. Each lives in its own host pool,
registered with ``register_mem_host_pool_v2(pool, name)``, and moves as a
``PoolTransfer`` (pool name, host indices, page keys, hit policy). Every pool
page is one or more objects, keyed like SGLang's Mooncake backend keys them, so
a store written by one is read by the other:

=================  ===================================================
pool               objects per page hash H (R: TP rank, PP rank added
                   as ``R_P`` / ``P`` with pipeline parallelism)
=================  ===================================================
kv, MHA            ``H_R_k``, ``H_R_v``
kv, MLA            ``H__k`` (shared by the TP ranks)
mamba              ``H_R_temporal`` (when the pool has SSM state),
                   ``H_R_conv_0`` ... ``H_R_conv_{n-1}``
draft              ``H_R_draft_k``, ``H_R_draft_v`` (MHA draft pool),
                   ``H__draft_k`` (MLA draft pool)
swa, draft_swa     ``H_R_{pool}_k``, ``H_R_{pool}_v`` (a K/V pool),
                   ``H__{pool}`` otherwise
any other pool     ``H__{pool}`` (indexer, DeepSeek V4's compressed pools)
=================  ===================================================

A pool's ``get_page_buffer_meta(host_indices)`` gives the memory: one pointer
per object and page (``page_first``), or, in ``layer_first``, several per
object, consecutive (one per layer), which move as one object through the
multi-buffer calls. Either way the bytes go straight between the registered
host pool and the store.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Dict, List, Optional, Sequence, Tuple


def pool_key(name: Any) -> str:
    """A pool's name as plain text: PoolName.MAMBA and "mamba" are one pool."""
    return str(name.value) if isinstance(name, Enum) else str(name)


def _as_list(seq: Any) -> list:
    return seq.tolist() if hasattr(seq, "tolist") else list(seq)


def pack_meta(n_objects: int, ptrs: Sequence[int], sizes: Sequence[int]) -> Tuple[list, list]:
    """(ptrs, sizes), one entry per object: an int each when the pool gave one
    pointer per object, else a list of that object's consecutive pointers."""
    ptrs, sizes = [int(p) for p in ptrs], [int(s) for s in sizes]
    if len(ptrs) != len(sizes):
        raise RuntimeError("host pool gave %d pointers but %d sizes" % (len(ptrs), len(sizes)))
    if len(ptrs) == n_objects:
        return ptrs, sizes
    if n_objects == 0 or len(ptrs) % n_objects:
        raise RuntimeError("host pool gave %d buffers for %d objects; expected a multiple "
                           "(page_first: one per object, layer_first: one per layer)" %
                           (len(ptrs), n_objects))
    n = len(ptrs) // n_objects
    return ([ptrs[i:i + n] for i in range(0, len(ptrs), n)],
            [sizes[i:i + n] for i in range(0, len(sizes), n)])


class HiCacheV2:
    """The v2 calls; mixed into CrescentHiCacheStorage, whose store, key
    suffixes, buffer registration and counters it uses."""

    # ------------------------------------------------------------ pools
    def register_mem_host_pool_v2(self, host_pool, host_pool_name):
        """Keeps `host_pool` under its name and registers its buffers for zero copy."""
        self.registered_pools[pool_key(host_pool_name)] = host_pool
        if pool_key(host_pool_name) == "kv" and self.mem_pool_host is None:
            self.mem_pool_host = host_pool
        self._register_pool_buffers(host_pool)

    def _pool(self, name: Any):
        pool = self.registered_pools.get(pool_key(name))
        if pool is None and pool_key(name) == "kv":
            pool = self.mem_pool_host
        if pool is None:
            raise ValueError("pool %r is not registered (register_mem_host_pool_v2 first)" %
                             pool_key(name))
        return pool

    def _pool_suffixes(self, name: Any, pool: Any) -> List[str]:
        """The object-key suffixes of one page of pool `name` (module docstring)."""
        mha, mla, key = self.mha_suffix, self.mla_suffix, pool_key(name)
        kv_pair = hasattr(pool, "v_buffer")
        if key == "kv":
            return [f"_{mla}_k"] if self.is_mla else [f"_{mha}_k", f"_{mha}_v"]
        if key == "mamba":
            conv = [f"_{mha}_conv_{i}" for i in range(len(getattr(pool, "conv_buffer", None)
                                                          or []))]
            temporal = getattr(pool, "temporal_state_elem_size", 1) > 0
            return ([f"_{mha}_temporal"] if temporal else []) + conv
        if key == "draft":
            return [f"_{mha}_draft_k", f"_{mha}_draft_v"] if kv_pair else [f"_{mla}_draft_k"]
        if kv_pair and not (key == "swa" and self.is_mla):
            return [f"_{mha}_{key}_k", f"_{mha}_{key}_v"]
        return [f"_{mla}_{key}"]

    def _pool_objects(self, transfer, keys: Optional[Sequence[str]] = None):
        """(object keys, objects per page) of a transfer's pages (or of `keys`)."""
        pool = self._pool(transfer.name)
        suffixes = self._pool_suffixes(transfer.name, pool)
        pages = transfer.keys if keys is None else keys
        p = self.key_prefix
        return [f"{p}{h}{s}" for h in pages for s in suffixes], len(suffixes)

    def _transfer_meta(self, transfer):
        """(object keys, objects per page, ptrs, sizes) of one transfer."""
        pool = self._pool(transfer.name)
        keys = list(transfer.keys or [])
        obj_keys, per = self._pool_objects(transfer, keys)
        if not keys:
            return obj_keys, per, [], []
        indices = transfer.host_indices
        page_size = int(getattr(pool, "page_size", 1) or 1)
        if indices is None or len(indices) != len(keys) * page_size:
            raise ValueError("pool %r: %d pages need %d host indices, got %s" %
                             (pool_key(transfer.name), len(keys), len(keys) * page_size,
                              None if indices is None else len(indices)))
        ptrs, sizes = pool.get_page_buffer_meta(indices)
        sizes = [sizes] * len(_as_list(ptrs)) if isinstance(sizes, int) else _as_list(sizes)
        ptrs, sizes = pack_meta(len(obj_keys), _as_list(ptrs), sizes)
        return obj_keys, per, ptrs, sizes

    # ----------------------------------------------------------- exists
    def batch_exists_v2(self, keys: List[str], pool_transfers: Optional[List[Any]] = None,
                        extra_info: Optional[Any] = None):
        """How many leading pages can be restored with every pool's data.

        KV gives the longest stored prefix; then each pool limits it. An
        ALL_PAGES pool needs its objects for every page of the prefix; a
        TRAILING_PAGES pool only for the last len(transfer.keys) pages (at
        least 1) before the prefix's end, so a prefix may end only where that
        window is whole. kv_hit_pages is the longest prefix every pool allows;
        extra_pool_hit_pages gives, per pool, the longest prefix it allows.
        """
        keys = list(keys)
        if self._logical_kv_anchor():
            kv_pages = len(keys)  # no KV objects of its own: the pools decide
        else:
            kv_pages = self.batch_exists(keys, extra_info) if keys else 0
        transfers = list(pool_transfers or [])
        if not transfers or kv_pages == 0:
            return self._transfer_result(kv_pages, {}, list(range(1, kv_pages + 1)))
        layout = []
        all_keys: List[str] = []
        for t in transfers:
            obj_keys, per = self._pool_objects(t, keys[:kv_pages])
            layout.append((t, len(all_keys), per))
            all_keys.extend(obj_keys)
        exist = [int(e) == 1 for e in self.store.batch_is_exist(all_keys)] if all_keys else []
        allowed = set(range(1, kv_pages + 1))
        hits: Dict[Any, int] = {}
        for t, start, per in layout:
            have = [per > 0 and all(exist[start + i * per:start + (i + 1) * per])
                    for i in range(kv_pages)]
            ends = self._prefix_ends(t, have)
            hits[t.name] = max(ends, default=0)
            allowed &= ends
        return self._transfer_result(max(allowed, default=0), hits, sorted(allowed))

    @staticmethod
    def _prefix_ends(transfer, have: List[bool]) -> set:
        """The prefix lengths (1..len(have)) this pool's pages allow."""
        policy = pool_key(getattr(transfer, "hit_policy", "all_pages"))
        if policy == "trailing_pages":
            window = max(1, len(transfer.keys or []))
            return {n for n in range(1, len(have) + 1) if all(have[max(0, n - window):n])}
        if policy != "all_pages":
            raise ValueError("unknown pool hit policy %r" % policy)
        first_missing = have.index(False) if False in have else len(have)
        return set(range(1, first_missing + 1))

    def _transfer_result(self, kv_pages: int, hits: Dict[Any, int], restorable: List[int]):
        cls = self._result_type
        try:
            return cls(kv_hit_pages=kv_pages, extra_pool_hit_pages=hits)
        except TypeError:  # an SGLang whose result also lists the restorable prefixes
            return cls(kv_pages, hits, restorable)

    # ------------------------------------------------------------ get / set
    def batch_get_v2(self, transfers: List[Any],
                     extra_info: Optional[Any] = None) -> Dict[Any, List[bool]]:
        """Reads every transfer's pages into its host pool; per pool, per page success."""
        return self._io_v2(transfers, write=False, extra_info=extra_info)

    def batch_set_v2(self, transfers: List[Any],
                     extra_info: Optional[Any] = None) -> Dict[Any, List[bool]]:
        """Writes every transfer's pages from its host pool (objects already
        stored are skipped) in one batch; per pool, per page success."""
        return self._io_v2(transfers, write=True, extra_info=extra_info)

    def _io_v2(self, transfers: List[Any], write: bool,
               extra_info: Optional[Any] = None) -> Dict[Any, List[bool]]:
        obj_keys: List[str] = []
        ptrs: List[Any] = []
        sizes: List[Any] = []
        ranges = []
        for t in transfers:
            k, per, p, s = self._transfer_meta(t)
            ranges.append((t.name, len(obj_keys), len(k), per))
            obj_keys += k
            ptrs += p
            sizes += s
        ok = self._move_objects(obj_keys, ptrs, sizes, write) if obj_keys else []
        results: Dict[Any, List[bool]] = {}
        for name, start, count, per in ranges:
            objs = ok[start:start + count]
            results[name] = [all(objs[i:i + per]) for i in range(0, count, per)]
        self._end_if_final(obj_keys, extra_info)  # a session's last pages (_hicache_sessions.py)
        return results

    def _move_objects(self, keys: List[str], ptrs: List[Any], sizes: List[Any],
                      write: bool) -> List[bool]:
        """Per object success of one batch; multi-buffer calls when any object
        has several buffers (layer_first)."""
        multi = any(isinstance(p, list) for p in ptrs)
        if multi:
            ptrs = [p if isinstance(p, list) else [p] for p in ptrs]
            sizes = [s if isinstance(s, list) else [s] for s in sizes]
        nbytes = [sum(s) if isinstance(s, list) else s for s in sizes]
        if not write:
            call = self.store.batch_get_into_multi_buffers if multi else \
                self.store.batch_get_into
            res = [int(r) > 0 for r in call(keys, ptrs, sizes)]
            self._count(get_calls=1, bytes_loaded=sum(n for n, r in zip(nbytes, res) if r))
            return res
        exist = [int(e) == 1 for e in self.store.batch_is_exist(keys)]
        missing = [i for i, e in enumerate(exist) if not e]
        if missing:
            config = self._replicate_config()
            args = ([keys[i] for i in missing], [ptrs[i] for i in missing],
                    [sizes[i] for i in missing]) + ((config,) if config is not None else ())
            call = self.store.batch_put_from_multi_buffers if multi else \
                self.store.batch_put_from
            for i, r in zip(missing, call(*args)):
                exist[i] = int(r) == 0
            self._count(bytes_stored=sum(nbytes[i] for i in missing if exist[i]))
        self._count(set_calls=1)
        return exist
