"""crescent.hicache: an SGLang HiCache L3 storage backend over Crescent.

SGLang loads it with its dynamic backend loader::

    python -m sglang.launch_server ... --enable-hierarchical-cache \\
        --hicache-mem-layout page_first \\
        --hicache-storage-backend dynamic \\
        --hicache-storage-backend-extra-config \\
        '{"backend_name": "crescent", "module_path": "crescent.hicache",
          "class_name": "CrescentHiCacheStorage",
          "master_server_address": "127.0.0.1:50051"}'

What it implements (the interface of SGLang's
``sglang.srt.mem_cache.hicache_storage.HiCacheStorage``):

* ``batch_exists(keys, extra_info=None) -> int``: the number of *leading* pages
  present, answered by one ``batch_query_prefix`` call over the page's object
  keys;
* ``batch_get_v1 / batch_set_v1(keys, host_indices, extra_info=None) ->
  List[bool]``: zero-copy page I/O between Crescent and the registered host KV
  pool, using the pool's ``get_page_buffer_meta(host_indices)`` pointers;
* ``get / batch_get / set / batch_set``: the older per-object calls, either
  zero-copy (``target_location`` = pointer(s), ``target_sizes`` = byte
  count(s)) or copying (``value`` / ``target_location`` = a tensor);
* ``exists``, ``register_mem_pool_host``, ``clear`` and ``get_stats``;
* session hints (crescent/_hicache_sessions.py): ``end_session(keys)`` for a
  closed session's pages, and Crescent's ``extra_info={"session_end": True}``
  on a get or set of a conversation's last pages;
* HiCache v2 (hybrid models: KV plus Mamba, SWA, indexer, draft pools):
  ``register_mem_host_pool_v2``, ``batch_exists_v2 -> PoolTransferResult``
  honouring each pool's ``PoolHitPolicy``, ``batch_get_v2`` /
  ``batch_set_v2 -> {pool: [bool per page]}`` (crescent/_hicache_pools.py).

Host pools in ``page_first`` layout move one buffer per object; in
``layer_first`` (one slice per layer) an object's slices move together through
the multi-buffer calls.

Object keys (one page of KV for one rank):

* MHA: ``{page_hash}_{tp_rank}_k`` and ``{page_hash}_{tp_rank}_v`` (with pipeline
  parallelism: ``{page_hash}_{tp_rank}_{pp_rank}_k``/``_v``);
* MLA: one object per page, ``{page_hash}__k`` (``{page_hash}_{pp_rank}_k``
  with pipeline parallelism), shared by every TP rank since MLA ranks hold
  the same latent KV.

These are the keys SGLang's Mooncake backend uses, so either backend reads
what the other wrote.

An optional ``key_prefix`` in the extra config is prepended as
``{key_prefix}_`` to every object key (to keep models apart in one store).

Writes skip pages already stored: ``batch_set_v1`` asks the store which
objects exist and writes only the missing ones, as a parent-linked chain when
they are consecutive pages.

No hard dependency on SGLang: when ``sglang`` is importable the class derives
from its ``HiCacheStorage`` (the dynamic loader checks ``issubclass``);
otherwise it derives from a local stand-in ABC with the same method names and
signatures, and ``HiCacheStorageConfig`` / ``HiCacheStorageExtraInfo`` are
local dataclasses with the fields this module reads.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from ._hicache_pools import HiCacheV2, pack_meta
from ._hicache_sessions import SessionHints

logger = logging.getLogger(__name__)

try:  # Real SGLang: derive from its ABC so the dynamic loader accepts us.
    from sglang.srt.mem_cache.hicache_storage import (  # type: ignore
        HiCacheStorage,
        HiCacheStorageConfig,
        HiCacheStorageExtraInfo,
    )

    try:  # the v2 result type, in SGLang releases with HiCache v2
        from sglang.srt.mem_cache.hicache_storage import PoolTransferResult  # type: ignore
    except ImportError:
        PoolTransferResult = None

    SGLANG_AVAILABLE = True
except Exception:  # noqa: BLE001 - any import failure means "no SGLang here"
    SGLANG_AVAILABLE = False

    @dataclass
    class HiCacheStorageConfig:  # type: ignore[no-redef]
        """Stand-in for SGLang's dataclass: the fields this backend reads."""

        tp_rank: int = 0
        tp_size: int = 1
        is_mla_model: bool = False
        is_page_first_layout: bool = True
        model_name: Optional[str] = None
        pp_rank: int = 0
        pp_size: int = 1
        enable_storage_metrics: bool = False
        extra_config: Optional[dict] = None

    @dataclass
    class HiCacheStorageExtraInfo:  # type: ignore[no-redef]
        prefix_keys: Optional[List[str]] = None
        extra_info: Optional[dict] = None

    PoolTransferResult = None

    class HiCacheStorage(ABC):  # type: ignore[no-redef]
        """Stand-in for sglang.srt.mem_cache.hicache_storage.HiCacheStorage.

        Same method names, parameters and defaults as SGLang's class.
        """

        def register_mem_pool_host(self, mem_pool_host):
            self.mem_pool_host = mem_pool_host

        def register_mem_host_pool_v2(self, host_pool, host_pool_name):
            if not hasattr(self, "registered_pools"):
                self.registered_pools = {}
            self.registered_pools[host_pool_name] = host_pool

        def batch_exists_v2(self, keys: List[str], pool_transfers: Optional[List[Any]] = None,
                            extra_info: Optional[HiCacheStorageExtraInfo] = None):
            raise NotImplementedError()

        def batch_get_v2(self, transfers: List[Any],
                         extra_info: Optional[HiCacheStorageExtraInfo] = None) -> dict:
            raise NotImplementedError()

        def batch_set_v2(self, transfers: List[Any],
                         extra_info: Optional[HiCacheStorageExtraInfo] = None) -> dict:
            raise NotImplementedError()

        def batch_get_v1(self, keys: List[str], host_indices,
                         extra_info: Optional[HiCacheStorageExtraInfo] = None) -> List[bool]:
            raise NotImplementedError()

        def batch_set_v1(self, keys: List[str], host_indices,
                         extra_info: Optional[HiCacheStorageExtraInfo] = None) -> List[bool]:
            raise NotImplementedError()

        @abstractmethod
        def get(self, key: str, target_location: Optional[Any] = None,
                target_sizes: Optional[Any] = None):
            pass

        @abstractmethod
        def batch_get(self, keys: List[str], target_locations: Optional[Any] = None,
                      target_sizes: Optional[Any] = None):
            pass

        @abstractmethod
        def set(self, key: str, value: Optional[Any] = None,
                target_location: Optional[Any] = None,
                target_sizes: Optional[Any] = None) -> bool:
            pass

        @abstractmethod
        def batch_set(self, keys: List[str], values: Optional[Any] = None,
                      target_locations: Optional[Any] = None,
                      target_sizes: Optional[Any] = None) -> bool:
            pass

        @abstractmethod
        def exists(self, key: str) -> bool:
            pass

        def batch_exists(self, keys: List[str],
                         extra_info: Optional[HiCacheStorageExtraInfo] = None) -> int:
            for i, key in enumerate(keys):
                if not self.exists(key):
                    return i
            return len(keys)

        def clear(self) -> None:
            pass

        def get_stats(self):
            return None


if PoolTransferResult is None:
    @dataclass
    class PoolTransferResult:  # type: ignore[no-redef]
        """What batch_exists_v2 returns, as SGLang's dataclass of that name:
        the usable KV prefix in pages, and per extra pool the pages it allows."""

        kv_hit_pages: int
        extra_pool_hit_pages: Dict[str, int]


DEFAULT_MASTER = "127.0.0.1:50051"


def _cfg(config: Any, name: str, default: Any) -> Any:
    value = getattr(config, name, default) if config is not None else default
    return default if value is None else value


def _as_int_list(seq: Any) -> List[int]:
    if hasattr(seq, "tolist"):
        seq = seq.tolist()
    return [int(x) for x in seq]


def _total(size: Any) -> int:
    """An object's bytes: its size, or the sum of its buffers' sizes."""
    return sum(size) if isinstance(size, list) else int(size)


def _tensor_nbytes(t: Any) -> int:
    return int(t.numel() * t.element_size())


class CrescentHiCacheStorage(SessionHints, HiCacheV2, HiCacheStorage):
    """SGLang HiCache storage backend backed by a Crescent cluster.

    Args:
      storage_config: SGLang's ``HiCacheStorageConfig`` (or any object with
        ``tp_rank``, ``tp_size``, ``is_mla_model``, ``extra_config`` ...); may be
        None for a single-rank MHA setup.
      mem_pool: the host KV pool (SGLang ``HostKVCache``); registered for zero
        copy at once when given. SGLang's dynamic loader passes a dict of extra
        keyword arguments in this position; a dict is accepted and its
        ``mem_pool_host`` entry, if any, used.
      store: an already set-up ``crescent.Store`` (or a Mooncake-compatible
        object); when None one is created and connected.

    Extra config keys (``storage_config.extra_config``):
      ``master_server_address`` (or ``crescent_master``): the master (or
      ``etcd://H1:2379,H2:2379/NAME``, a cluster's leader), default
      ``$CRESCENT_MASTER`` else 127.0.0.1:50051; ``local_hostname``,
      ``global_segment_size``, ``local_buffer_size``, ``protocol``,
      ``device_name``, ``token``: passed to ``Store.setup`` (``token``: this
      client's token for a master with an auth file, default
      ``$CRESCENT_TOKEN``), ``node_token`` (the contributed segment's store
      node's token, of the node role; default ``token``), ``tls_ca``,
      ``tls_cert``, ``tls_key``, ``tls_server_name``: passed to
      ``Store.setup`` (TLS to the master, docs/security.md); ``key_prefix``: namespace for
      every object key; ``replica_count``: replicas per page (default 1).
    """

    def __init__(self, storage_config: Any = None, mem_pool: Any = None,
                 store: Any = None, **kwargs: Any):
        self.storage_config = storage_config
        extra = dict(_cfg(storage_config, "extra_config", {}) or {})
        self.extra_config = extra
        self.tp_rank = int(_cfg(storage_config, "tp_rank", 0))
        self.tp_size = int(_cfg(storage_config, "tp_size", 1))
        self.pp_rank = int(_cfg(storage_config, "pp_rank", 0))
        self.pp_size = int(_cfg(storage_config, "pp_size", 1))
        self.is_mla = bool(_cfg(storage_config, "is_mla_model", False))
        if self.pp_size > 1:
            self.mha_suffix = f"{self.tp_rank}_{self.pp_rank}"
            self.mla_suffix = f"{self.pp_rank}"
        else:
            self.mha_suffix = f"{self.tp_rank}"
            self.mla_suffix = ""
        prefix = extra.get("key_prefix")
        self.key_prefix = f"{prefix}_" if prefix else ""
        self.replica_count = int(extra.get("replica_count", 1))
        self.master_address = (extra.get("master_server_address")
                               or extra.get("crescent_master")
                               or os.environ.get("CRESCENT_MASTER")
                               or DEFAULT_MASTER)

        self.mem_pool_host = None
        self.registered_pools: Dict[str, Any] = {}
        self._result_type = PoolTransferResult
        self._registered: List[int] = []
        self._spans: List[tuple] = []
        self._lock = threading.Lock()
        self._stats: Dict[str, float] = {
            "exists_calls": 0, "exists_pages_queried": 0, "exists_pages_hit": 0,
            "get_calls": 0, "get_pages": 0, "get_pages_ok": 0, "bytes_loaded": 0,
            "set_calls": 0, "set_pages": 0, "set_pages_skipped": 0, "set_pages_written": 0,
            "set_pages_failed": 0, "bytes_stored": 0,
            "get_seconds": 0.0, "set_seconds": 0.0,
            "session_end_calls": 0, "session_end_objects": 0, "session_end_marked": 0,
            "session_end_failures": 0,
        }

        self._owns_store = store is None
        self.store = store if store is not None else self._connect(extra)
        self._decide_hints()

        if isinstance(mem_pool, dict):
            mem_pool = mem_pool.get("mem_pool_host") or mem_pool.get("mem_pool")
        if mem_pool is None:
            mem_pool = kwargs.get("mem_pool_host")
        if mem_pool is not None and hasattr(mem_pool, "get_page_buffer_meta"):
            self.register_mem_pool_host(mem_pool)

    # ------------------------------------------------------------------ setup
    def _connect(self, extra: dict):
        try:
            from crescent import Store  # the pybind module (crescent.Store)
        except ImportError as e:  # pragma: no cover - depends on the build
            raise ImportError(
                "crescent.hicache needs the crescent Python binding "
                "(build it with `make build`; PYTHONPATH=build/python)") from e
        store = Store()
        rc = store.setup(
            extra.get("local_hostname", "localhost"),
            extra.get("metadata_server", "P2PHANDSHAKE"),
            int(extra.get("global_segment_size", 0)),
            int(extra.get("local_buffer_size", 0)),
            extra.get("protocol", "tcp"),
            extra.get("device_name", ""),
            self.master_address,
            token=extra.get("token"),
            node_token=extra.get("node_token"),
            tls_ca=extra.get("tls_ca"),
            tls_cert=extra.get("tls_cert"),
            tls_key=extra.get("tls_key"),
            tls_server_name=extra.get("tls_server_name"),
        )
        if rc not in (0, None):
            raise RuntimeError(
                f"crescent.Store.setup({self.master_address!r}) failed with code {rc}")
        return store

    def register_mem_pool_host(self, mem_pool_host) -> None:
        """Registers the host pool's buffers with the store for zero copy."""
        self.mem_pool_host = mem_pool_host
        self._register_pool_buffers(mem_pool_host)

    def _register_pool_buffers(self, pool) -> None:
        """Registers `pool`'s tensors (get_hybrid_pool_buffer(), else kv_buffer),
        each memory span once."""
        buffers = []
        get_bufs = getattr(pool, "get_hybrid_pool_buffer", None)
        if get_bufs is not None:
            buffers = [b for b in get_bufs() if b is not None]
        if not buffers:
            kv = getattr(pool, "kv_buffer", None)
            if isinstance(kv, (list, tuple)):
                buffers = list(kv)
            elif kv is not None:
                buffers = [kv]
        seen = set()
        for buf in buffers:
            ptr, size = int(buf.data_ptr()), _tensor_nbytes(buf)
            if size == 0 or ptr in seen:
                continue
            # k_buffer/v_buffer are views into one kv_buffer: register the span once.
            if any(p <= ptr < p + s for p, s in self._spans):
                continue
            seen.add(ptr)
            rc = self.store.register_buffer(ptr, size)
            if rc not in (0, None):
                raise RuntimeError(f"crescent register_buffer({size} bytes) failed: {rc}")
            self._registered.append(ptr)
            self._spans.append((ptr, size))

    def close(self) -> None:
        for ptr in self._registered:
            try:
                self.store.unregister_buffer(ptr)
            except Exception:  # noqa: BLE001
                pass
        self._registered.clear()
        self._spans = []
        if self._owns_store and hasattr(self.store, "close"):
            self.store.close()

    # ------------------------------------------------------------ key mapping
    def _page_object_keys(self, keys: Sequence[str]) -> List[str]:
        p = self.key_prefix
        if self.is_mla:
            return [f"{p}{k}_{self.mla_suffix}_k" for k in keys]
        out = []
        for k in keys:
            out.append(f"{p}{k}_{self.mha_suffix}_k")
            out.append(f"{p}{k}_{self.mha_suffix}_v")
        return out

    @property
    def _objs_per_page(self) -> int:
        return 1 if self.is_mla else 2

    def _page_meta(self, keys: Sequence[str], host_indices):
        if self.mem_pool_host is None:
            raise RuntimeError("register_mem_pool_host() must be called before page I/O")
        page_size = int(self.mem_pool_host.page_size)
        if len(host_indices) != len(keys) * page_size:
            raise ValueError(
                f"{len(keys)} pages need {len(keys) * page_size} host indices, "
                f"got {len(host_indices)}")
        ptrs, sizes = self.mem_pool_host.get_page_buffer_meta(host_indices)
        ptrs = _as_int_list(ptrs)
        sizes = [sizes] * len(ptrs) if isinstance(sizes, int) else _as_int_list(sizes)
        obj_keys = self._page_object_keys(keys)
        # page_first: one buffer per object; layer_first: one per layer, packed.
        ptrs, sizes = pack_meta(len(obj_keys), ptrs, sizes)
        return obj_keys, ptrs, sizes

    def _logical_kv_anchor(self) -> bool:
        """True for a KV pool that only allocates indices (kv_buffer None, as
        DeepSeek V4's anchor): its pages hold no KV, and the v2 pools carry
        the data, so there is nothing to move for it."""
        pool = self.mem_pool_host
        return pool is not None and hasattr(pool, "kv_buffer") and pool.kv_buffer is None

    def _count(self, **deltas) -> None:
        with self._lock:
            for k, v in deltas.items():
                self._stats[k] = self._stats.get(k, 0) + v

    # --------------------------------------------------------- page-level API
    def batch_exists(self, keys: List[str],
                     extra_info: Optional[HiCacheStorageExtraInfo] = None) -> int:
        """How many leading pages have every object (K and V) stored."""
        if not keys:
            return 0
        obj_keys = self._page_object_keys(keys)
        if hasattr(self.store, "batch_query_prefix"):
            n = int(self.store.batch_query_prefix(obj_keys))
            if n < 0:
                n = 0
        else:
            n = 0
            for r in self.store.batch_is_exist(obj_keys):
                if r != 1:
                    break
                n += 1
        pages = n // self._objs_per_page
        self._count(exists_calls=1, exists_pages_queried=len(keys), exists_pages_hit=pages)
        return pages

    def batch_get_v1(self, keys: List[str], host_indices,
                     extra_info: Optional[HiCacheStorageExtraInfo] = None) -> List[bool]:
        """Loads pages straight into the host pool; per-page success."""
        if not keys:
            return []
        if self._logical_kv_anchor():
            return [True] * len(keys)
        obj_keys, ptrs, sizes = self._page_meta(keys, host_indices)
        per = self._objs_per_page
        t0 = time.perf_counter()
        multi = isinstance(ptrs[0], list)
        if multi:
            res = self.store.batch_get_into_multi_buffers(obj_keys, ptrs, sizes)
            ok_objs = [int(r) > 0 for r in res]
        elif hasattr(self.store, "batch_get_prefix_into"):
            # One call: the longest stored prefix of the objects, in order.
            n = int(self.store.batch_get_prefix_into(obj_keys, ptrs, sizes))
            n = max(n, 0)
            ok_objs = [i < n for i in range(len(obj_keys))]
        else:
            res = self.store.batch_get_into(obj_keys, ptrs, sizes)
            ok_objs = [int(r) > 0 for r in res]
        elapsed = time.perf_counter() - t0
        result = [all(ok_objs[i * per:(i + 1) * per]) for i in range(len(keys))]
        loaded = sum(_total(s) for s, ok in zip(sizes, ok_objs) if ok)
        self._count(get_calls=1, get_pages=len(keys), get_pages_ok=sum(result),
                    bytes_loaded=loaded, get_seconds=elapsed)
        self._end_if_final(obj_keys, extra_info)
        return result

    def batch_set_v1(self, keys: List[str], host_indices,
                     extra_info: Optional[HiCacheStorageExtraInfo] = None) -> List[bool]:
        """Writes pages from the host pool, skipping objects already stored."""
        if not keys:
            return []
        if self._logical_kv_anchor():
            return [True] * len(keys)
        obj_keys, ptrs, sizes = self._page_meta(keys, host_indices)
        per = self._objs_per_page
        t0 = time.perf_counter()
        exist = list(self.store.batch_is_exist(obj_keys))
        missing = [i for i, e in enumerate(exist) if int(e) != 1]
        obj_ok = [int(e) == 1 for e in exist]
        if missing:
            put_keys = [obj_keys[i] for i in missing]
            put_ptrs = [ptrs[i] for i in missing]
            put_sizes = [sizes[i] for i in missing]
            consecutive = missing == list(range(missing[0], missing[0] + len(missing)))
            config = self._replicate_config()
            args = (put_keys, put_ptrs, put_sizes) + ((config,) if config is not None else ())
            if isinstance(put_ptrs[0], list):  # layer_first: an object's layers
                res = self.store.batch_put_from_multi_buffers(*args)
            elif consecutive and hasattr(self.store, "batch_put_chain_from"):
                # The pages of one sequence: object i's parent is object i-1,
                # and the first missing one hangs off the stored page before it.
                parent = {"parent_key": obj_keys[missing[0] - 1]} if missing[0] > 0 else {}
                res = self.store.batch_put_chain_from(*args, **parent)
            else:
                res = self.store.batch_put_from(*args)
            for i, r in zip(missing, res):
                obj_ok[i] = int(r) == 0
        elapsed = time.perf_counter() - t0
        result = [all(obj_ok[i * per:(i + 1) * per]) for i in range(len(keys))]
        missing_set = set(missing)
        skipped_pages = sum(
            1 for i in range(len(keys))
            if not any(j in missing_set for j in range(i * per, (i + 1) * per)))
        stored = sum(_total(sizes[i]) for i in missing if obj_ok[i])
        self._count(set_calls=1, set_pages=len(keys), set_pages_skipped=skipped_pages,
                    set_pages_written=sum(result) - skipped_pages,
                    set_pages_failed=len(keys) - sum(result), bytes_stored=stored,
                    set_seconds=elapsed)
        self._end_if_final(obj_keys, extra_info)
        return result

    def _replicate_config(self):
        if self.replica_count <= 1:
            return None
        try:
            from crescent import ReplicateConfig
        except ImportError:
            return None
        cfg = ReplicateConfig()
        cfg.replica_num = self.replica_count
        return cfg

    # ------------------------------------------------------- object-level API
    def exists(self, key: str) -> bool:
        """True when `key` is stored as an object, or as a page (all its objects)."""
        if int(self.store.is_exist(key)) == 1:
            return True
        return self.batch_exists([key]) == 1

    def get(self, key: str, target_location: Optional[Any] = None,
            target_sizes: Optional[Any] = None):
        """Zero copy when target_location is a pointer (int) and target_sizes its
        capacity: returns True/False. With a tensor (or nothing) as the target,
        copies: returns the tensor filled (or a new uint8 tensor), None if absent.
        """
        if isinstance(target_location, int):
            res = self.store.batch_get_into([key], [target_location], [int(target_sizes)])
            ok = int(res[0]) >= 0
            if ok:
                self._count(bytes_loaded=int(res[0]))
            return ok
        data = self.store.get(key)
        if not data:
            return None
        self._count(bytes_loaded=len(data))
        import torch

        src = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        if target_location is None:
            return src
        dst = target_location.view(-1).view(torch.uint8) if target_location.is_contiguous() \
            else None
        if dst is None or dst.numel() < src.numel():
            return None
        dst[: src.numel()].copy_(src)
        return target_location

    def batch_get(self, keys: List[str], target_locations: Optional[Any] = None,
                  target_sizes: Optional[Any] = None):
        """Zero copy (pointers + sizes): returns how many leading objects were
        read. Otherwise a list of tensors (None for a missing key)."""
        if target_locations is not None and target_sizes is not None and \
                all(isinstance(t, int) for t in target_locations):
            if not keys:
                return 0
            res = self.store.batch_get_into(list(keys), _as_int_list(target_locations),
                                            _as_int_list(target_sizes))
            n = 0
            for r in res:
                if int(r) < 0:
                    break
                n += 1
            self._count(bytes_loaded=sum(int(r) for r in res if int(r) > 0))
            return n
        locs = target_locations if target_locations is not None else [None] * len(keys)
        return [self.get(k, t) for k, t in zip(keys, locs)]

    def set(self, key: str, value: Optional[Any] = None,
            target_location: Optional[Any] = None,
            target_sizes: Optional[Any] = None) -> bool:
        """Stores one object (skipped when already stored). Zero copy from a
        registered pointer (target_location + target_sizes), or copies `value`
        (a tensor or bytes)."""
        if int(self.store.is_exist(key)) == 1:
            self._count(set_pages_skipped=1)
            return True
        if target_location is not None and target_sizes is not None:
            res = self.store.batch_put_from([key], [int(target_location)], [int(target_sizes)])
            ok = int(res[0]) == 0
            if ok:
                self._count(bytes_stored=int(target_sizes))
            return ok
        if value is None:
            return False
        data = value if isinstance(value, (bytes, bytearray, memoryview)) else \
            value.contiguous().view(-1).view(__import__("torch").uint8).numpy().tobytes()
        ok = int(self.store.put(key, bytes(data))) == 0
        if ok:
            self._count(bytes_stored=len(data))
        return ok

    def batch_set(self, keys: List[str], values: Optional[Any] = None,
                  target_locations: Optional[Any] = None,
                  target_sizes: Optional[Any] = None) -> bool:
        """Stores every object, skipping stored ones; True when all are stored."""
        if not keys:
            return False
        if target_locations is not None and target_sizes is not None:
            locs, szs = _as_int_list(target_locations), _as_int_list(target_sizes)
            exist = list(self.store.batch_is_exist(list(keys)))
            missing = [i for i, e in enumerate(exist) if int(e) != 1]
            ok = [int(e) == 1 for e in exist]
            if missing:
                res = self.store.batch_put_from([keys[i] for i in missing],
                                                [locs[i] for i in missing],
                                                [szs[i] for i in missing])
                for i, r in zip(missing, res):
                    ok[i] = int(r) == 0
                self._count(bytes_stored=sum(szs[i] for i in missing if ok[i]))
            self._count(set_pages_skipped=len(keys) - len(missing))
            return all(ok)
        if values is None:
            return False
        return all([self.set(k, v) for k, v in zip(keys, values)])

    # ----------------------------------------------------------------- admin
    def clear(self) -> None:
        self.store.remove_all()

    def get_stats(self) -> Dict[str, Any]:
        with self._lock:
            stats: Dict[str, Any] = dict(self._stats)
        q = stats["exists_pages_queried"]
        stats["prefix_hit_ratio"] = stats["exists_pages_hit"] / q if q else 0.0
        if hasattr(self.store, "get_stats"):
            try:
                stats["store"] = self.store.get_stats()
            except Exception as e:  # noqa: BLE001
                stats["store"] = {"error": str(e)}
        return stats


__all__ = [
    "CrescentHiCacheStorage",
    "HiCacheStorage",
    "HiCacheStorageConfig",
    "HiCacheStorageExtraInfo",
    "PoolTransferResult",
    "SGLANG_AVAILABLE",
]
