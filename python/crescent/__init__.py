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

from ._interpreter import check as _check_interpreter

_check_interpreter()  # before anything loads the extension

from .config import DEFAULT_SOFT_PIN_TTL_MS, ReplicateConfig
from . import errors as _errors
from .errors import ERROR_NAMES, CrescentError, error_name, last_error
from .store import Store, _close_all_at_exit

# Alias for code written against Mooncake.
MooncakeDistributedStore = Store

atexit.register(_close_all_at_exit)

# The error codes as constants: crescent.OBJECT_NOT_FOUND == -4, crescent.CLOSED == -25, ...
globals().update({name: getattr(_errors, name) for name in _errors.CODE_NAMES})

__all__ = [
    "Store", "MooncakeDistributedStore", "ReplicateConfig", "CrescentError", "error_name",
    "last_error",
    "ERROR_NAMES", "DEFAULT_SOFT_PIN_TTL_MS", *_errors.CODE_NAMES,
]
