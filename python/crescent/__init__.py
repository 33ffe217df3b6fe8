"""Crescent: a prefix-aware distributed KV-cache store, from Python.

    import crescent
    store = crescent.Store()
    store.setup("localhost", "", 0, 0, "tcp", "", "127.0.0.1:50051")
    store.put("key", b"value")
    assert store.get("key") == b"value"

Store mirrors Mooncake's MooncakeDistributedStore (same methods, same return
conventions); see docs/python.md.
"""

import atexit

from .config import DEFAULT_SOFT_PIN_TTL_MS, ReplicateConfig
from .errors import (BUFFER_NOT_REGISTERED, BUFFER_TOO_SMALL, CLOSED, ERROR_NAMES,
                     INVALID_ARGUMENT, INVALID_KEY, INVALID_SIZE, NO_SPACE, OBJECT_NOT_FOUND,
                     OK, TIMEOUT, UNAVAILABLE, CrescentError, error_name)
from .store import Store, _close_all_at_exit

# Alias for code written against Mooncake.
MooncakeDistributedStore = Store

atexit.register(_close_all_at_exit)

__all__ = [
    "Store", "MooncakeDistributedStore", "ReplicateConfig", "CrescentError", "error_name",
    "ERROR_NAMES", "DEFAULT_SOFT_PIN_TTL_MS", "OK", "INVALID_ARGUMENT", "INVALID_KEY",
    "INVALID_SIZE", "OBJECT_NOT_FOUND", "NO_SPACE", "UNAVAILABLE", "TIMEOUT",
    "BUFFER_TOO_SMALL", "BUFFER_NOT_REGISTERED", "CLOSED",
]
