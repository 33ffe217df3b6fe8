"""The Redis leg of the E2E comparison: a real ``redis-server`` and a store
object over it that crescent.hicache drives exactly as it drives crescent.Store.

``RedisStore`` is memstore.MemoryStore with its three primitives in Redis: one
pipelined ``EXISTS`` per key for existence, one ``MGET`` to load, one pipelined
``SET`` to store. CrescentHiCacheStorage above it names, splits and checks the
pages, so both legs store the same objects under the same keys and answer the
same prefix queries; what differs is the store. Like any client of Redis, a
load copies each value out of the reply into the host pool (``memmove``) and a
write copies each page out of the pool into the request: Redis has no zero-copy
path into registered memory.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Dict, List, Optional

from .memstore import MemoryStore


class RedisStore(MemoryStore):
    def __init__(self, host: str, port: int) -> None:
        import redis  # Debian's python3-redis

        super().__init__()
        self.redis = redis.Redis(host=host, port=port, socket_timeout=60)

    def _exists(self, keys: List[str]) -> List[bool]:
        if not keys:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for k in keys:
            pipe.exists(k)
        return [bool(n) for n in pipe.execute()]

    def _fetch(self, keys: List[str]) -> List[Optional[bytes]]:
        return list(self.redis.mget(keys)) if keys else []

    def _store(self, items: Dict[str, bytes]) -> None:
        if not items:
            return
        pipe = self.redis.pipeline(transaction=False)
        for k, v in items.items():
            pipe.set(k, v)
        pipe.execute()

    def remove(self, key: str, force: bool = False) -> int:
        return 0 if self.redis.delete(key) else -1

    def remove_all(self) -> int:
        n = int(self.redis.dbsize())
        self.redis.flushdb()
        return n

    def get_stats(self) -> dict:
        mem = self.redis.info("memory")
        return {"objects": int(self.redis.dbsize()), "bytes": int(mem["used_memory"])}

    def close(self) -> None:
        self.redis.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """``redis-server`` on 127.0.0.1 (TCP, like Crescent's data plane), no
    persistence, no memory limit, in a temporary directory of its own."""

    def __init__(self, binary: str = "redis-server", timeout_s: float = 30.0):
        path = shutil.which(binary)
        if path is None:
            raise FileNotFoundError(f"{binary} not found: scripts/install-deps.sh installs "
                                    "redis-server")
        self.dir = tempfile.mkdtemp(prefix="crescent-e2e-redis-")
        self.proc = None
        # A port that was free a moment ago; another process may take it first,
        # so a server that exits at once is retried on a fresh one.
        for _ in range(5):
            self.port = _free_port()
            self.proc = subprocess.Popen(
                [path, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                 "--appendonly", "no", "--dir", self.dir, "--protected-mode", "no",
                 "--logfile", os.path.join(self.dir, "redis.log")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._wait_ready(timeout_s):
                return
            self.stop()
        raise RuntimeError(f"redis-server did not start; see {self.dir}/redis.log")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _wait_ready(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return True
            except OSError:
                time.sleep(0.05)
        return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "RedisServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
