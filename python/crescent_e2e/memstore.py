"""An in-process stand-in for ``crescent.Store`` (the Mooncake-compatible API).

Only for tests and for running the harness where the binding is not built
(``--backend memory``). It keeps objects in a dict and, like the real store,
moves zero-copy bytes only to and from registered buffers.

Every call goes through three primitives over many keys at once (``_exists``,
``_fetch``, ``_store``), which redisstore.RedisStore replaces with Redis
commands: the two stores differ only in where the bytes live.
"""

from __future__ import annotations

import ctypes
from typing import Dict, List, Optional


class MemoryStore:
    def __init__(self) -> None:
        self._objects: Dict[str, bytes] = {}
        self._buffers: Dict[int, int] = {}
        self.calls: Dict[str, int] = {}

    def _note(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def setup(self, *args, **kwargs) -> int:
        return 0

    def close(self) -> None:
        pass

    def register_buffer(self, ptr: int, size: int) -> int:
        self._buffers[int(ptr)] = int(size)
        return 0

    def unregister_buffer(self, ptr: int) -> int:
        return 0 if self._buffers.pop(int(ptr), None) is not None else -1

    def _registered(self, ptr: int, size: int) -> bool:
        return any(b <= ptr and ptr + size <= b + s for b, s in self._buffers.items())

    # the primitives
    def _exists(self, keys: List[str]) -> List[bool]:
        return [k in self._objects for k in keys]

    def _fetch(self, keys: List[str]) -> List[Optional[bytes]]:
        return [self._objects.get(k) for k in keys]

    def _store(self, items: Dict[str, bytes]) -> None:
        self._objects.update(items)

    # copying
    def put(self, key: str, value: bytes, config=None) -> int:
        self._store({key: bytes(value)})
        return 0

    def get(self, key: str) -> bytes:
        return self._fetch([key])[0] or b""

    def is_exist(self, key: str) -> int:
        return 1 if self._exists([key])[0] else 0

    def batch_is_exist(self, keys: List[str]) -> List[int]:
        self._note("batch_is_exist")
        return [1 if e else 0 for e in self._exists(list(keys))]

    def remove(self, key: str, force: bool = False) -> int:
        return 0 if self._objects.pop(key, None) is not None else -1

    def remove_all(self) -> int:
        n = len(self._objects)
        self._objects.clear()
        return n

    def get_size(self, key: str) -> int:
        data = self._fetch([key])[0]
        return -1 if data is None else len(data)

    # zero copy
    def batch_put_from(self, keys, ptrs, sizes, config=None) -> List[int]:
        self._note("batch_put_from")
        out, items = [], {}
        for k, p, s in zip(keys, ptrs, sizes):
            if not self._registered(int(p), int(s)):
                out.append(-1)
                continue
            items[k] = ctypes.string_at(int(p), int(s))
            out.append(0)
        self._store(items)
        return out

    def batch_put_chain_from(self, keys, ptrs, sizes, config=None, parent_key=None) -> List[int]:
        self._note("batch_put_chain_from")
        return self.batch_put_from(keys, ptrs, sizes, config)

    def batch_get_into(self, keys, ptrs, sizes) -> List[int]:
        self._note("batch_get_into")
        out = []
        for data, p, s in zip(self._fetch(list(keys)), ptrs, sizes):
            if data is None:
                out.append(-1)
            elif len(data) > int(s) or not self._registered(int(p), int(s)):
                out.append(-2)
            else:
                ctypes.memmove(int(p), data, len(data))
                out.append(len(data))
        return out

    def batch_query_prefix(self, keys) -> int:
        self._note("batch_query_prefix")
        n = 0
        for e in self._exists(list(keys)):
            if not e:
                break
            n += 1
        return n

    def batch_get_prefix_into(self, keys, ptrs, sizes) -> int:
        self._note("batch_get_prefix_into")
        n = 0
        for r in self.batch_get_into(keys, ptrs, sizes):
            if r < 0:
                break
            n += 1
        return n

    def get_stats(self) -> dict:
        return {"objects": len(self._objects),
                "bytes": sum(len(v) for v in self._objects.values())}
