"""crescent.mooncake: Mooncake's `mooncake.store` Python API over a Crescent cluster.

    from crescent.mooncake import MooncakeDistributedStore, ReplicateConfig

is a drop-in for `from mooncake.store import MooncakeDistributedStore,
ReplicateConfig` in the code paths of vLLM's MooncakeStoreConnector, SGLang's
Mooncake HiCache backend and LMCache's Mooncake connector (docs/engines.md).
Where crescent.Store (docs/python.md) answers in Crescent's terms, this class
answers as Mooncake's does:

* return codes are Mooncake's ErrorCode numbers (NO_AVAILABLE_HANDLE -200 when
  the store is full, OBJECT_NOT_FOUND -704, ...; MOONCAKE_CODES), never
  Crescent's;
* a put of a key that is already stored returns 0 (Mooncake treats the
  rewrite of an existing object as done);
* setup returns a code instead of raising, and takes Mooncake's dict form too;
* is_exist / batch_is_exist give 1, 0 or -1;
* get_hostname, get_buffer / batch_get_buffer, get_into / put_from, put_parts
  and get_replica_desc / batch_get_replica_desc exist.
The data paths are crescent.Store's: zero copy from and into registered
buffers, the GIL released around every call.
"""

import ctypes
import os

from . import errors as _errors
from ._args import listed
from ._buffers import byte_view
from .config import DEFAULT_SOFT_PIN_TTL_MS, ReplicateConfig, put_options
from .errors import CrescentError
from .store import ADAPTER_LOCATION_CACHE, Store

# Mooncake's ErrorCode (mooncake-store/include/types.h) for the numbers used here.
OK = 0
INTERNAL_ERROR = -1
NOT_IMPLEMENTED = -2
BUFFER_OVERFLOW = -10
SEGMENT_NOT_FOUND = -101
SEGMENT_ALREADY_EXISTS = -102
CLIENT_NOT_FOUND = -103
NO_AVAILABLE_HANDLE = -200
INVALID_KEY = -400
INVALID_PARAMS = -600
ILLEGAL_CLIENT = -601
INVALID_WRITE = -700
REPLICA_IS_NOT_READY = -703
OBJECT_NOT_FOUND = -704
OBJECT_ALREADY_EXISTS = -705
OBJECT_HAS_LEASE = -706
LEASE_EXPIRED = -707
TRANSFER_FAIL = -800
RPC_FAIL = -900

# Crescent's code name -> Mooncake's number. A name missing here maps to
# INTERNAL_ERROR.
_MOONCAKE_CODE = {
    "INVALID_ARGUMENT": INVALID_PARAMS,
    "INVALID_KEY": INVALID_KEY,
    "INVALID_SIZE": INVALID_PARAMS,
    "OBJECT_NOT_FOUND": OBJECT_NOT_FOUND,
    "OBJECT_ALREADY_EXISTS": OBJECT_ALREADY_EXISTS,
    "OBJECT_NOT_READY": REPLICA_IS_NOT_READY,
    "OBJECT_LEASED": OBJECT_HAS_LEASE,
    "NO_SPACE": NO_AVAILABLE_HANDLE,
    "QUOTA_EXCEEDED": NO_AVAILABLE_HANDLE,
    "SEGMENT_NOT_FOUND": SEGMENT_NOT_FOUND,
    "SEGMENT_ALREADY_EXISTS": SEGMENT_ALREADY_EXISTS,
    "NOT_OWNER": ILLEGAL_CLIENT,
    "PUT_NOT_STARTED": INVALID_WRITE,
    "LEASE_EXPIRED": LEASE_EXPIRED,
    "CAPABILITY_INVALID": ILLEGAL_CLIENT,
    "UNAUTHENTICATED": ILLEGAL_CLIENT,
    "PERMISSION_DENIED": ILLEGAL_CLIENT,
    "UNAVAILABLE": RPC_FAIL,
    "TIMEOUT": RPC_FAIL,
    "PARSE_ERROR": RPC_FAIL,
    "BUFFER_TOO_SMALL": BUFFER_OVERFLOW,
    "BUFFER_NOT_REGISTERED": INVALID_PARAMS,
    "NODE_UNKNOWN": CLIENT_NOT_FOUND,
    "CORRUPT_DATA": TRANSFER_FAIL,
    "CHECKSUM_MISMATCH": TRANSFER_FAIL,
    "IO_ERROR": TRANSFER_FAIL,
    "INTERNAL": INTERNAL_ERROR,
    "UNSUPPORTED": NOT_IMPLEMENTED,
    "CLOSED": INTERNAL_ERROR,
}

# Crescent's code number -> Mooncake's, for every code Crescent has.
MOONCAKE_CODES = {code: _MOONCAKE_CODE.get(name, INTERNAL_ERROR)
                  for code, name in _errors.ERROR_NAMES.items() if code < 0}

# Setup's keyword arguments that Mooncake's setup takes and that have no
# meaning here (a metrics HTTP port, SSD offload): accepted and ignored.
_IGNORED_SETUP_KWARGS = ("enable_client_http_server", "client_http_port",
                         "enable_ssd_offload", "ssd_offload_path")
# Those passed on to crescent.Store.setup (tokens, TLS, timeouts).
_STORE_SETUP_KWARGS = ("rpc_timeout_ms", "rpc_attempts", "transfer_timeout_ms", "put_retry_ms",
                       "token", "node_token", "tls_ca", "tls_cert", "tls_key",
                       "tls_server_name", "location_cache")


def mooncake_code(code):
    """Mooncake's number for a Crescent return value (counts and 0 pass through)."""
    code = int(code)
    return code if code >= 0 else MOONCAKE_CODES.get(code, INTERNAL_ERROR)


def _put_code(code):
    """A put's code as Mooncake reports it: an existing object is a success."""
    code = int(code)
    return 0 if code == _errors.OBJECT_ALREADY_EXISTS else mooncake_code(code)


class BufferHandle(bytearray):
    """Mooncake's BufferHandle: the bytes of one object, with ptr() and size().

    A bytearray, so it has the buffer protocol (memoryview, numpy.frombuffer,
    torch.frombuffer) and len(); ptr() is the address of its first byte. Unlike
    Mooncake's (which points into the client's local buffer), it holds a copy.
    """

    def ptr(self):
        if not self:
            return 0
        return ctypes.addressof((ctypes.c_char * len(self)).from_buffer(self))

    def size(self):
        return len(self)


class BufferDescriptor:
    """Mooncake's BufferDescriptor. Crescent does not hand out replica
    addresses: buffer_address is 0, and transport_endpoint names the segment
    when known, else is empty."""

    def __init__(self, size, transport_endpoint=""):
        self.size = size
        self.buffer_address = 0
        self.protocol = "tcp"
        self.transport_endpoint = transport_endpoint

    def __repr__(self):
        return "BufferDescriptor(size=%d)" % self.size


class MemoryDescriptor:
    def __init__(self, buffer_descriptor):
        self.buffer_descriptor = buffer_descriptor


class ReplicaStatus:
    """Mooncake's ReplicaStatus values."""
    UNDEFINED, INITIALIZED, PROCESSING, COMPLETE, REMOVED, FAILED = range(6)


class ReplicaDescriptor:
    """One replica of a stored object, as Mooncake's ReplicaDescriptor: a
    memory replica, COMPLETE (Crescent lists only readable objects)."""

    def __init__(self, size):
        self.status = ReplicaStatus.COMPLETE
        self._memory = MemoryDescriptor(BufferDescriptor(size))

    def is_memory_replica(self):
        return True

    def is_disk_replica(self):
        return False

    def get_memory_descriptor(self):
        return self._memory

    def get_disk_descriptor(self):
        raise RuntimeError("not a disk replica")

    def __repr__(self):
        return "ReplicaDescriptor(memory, size=%d)" % self._memory.buffer_descriptor.size


# setup's arguments in Mooncake's order, and the defaults of its binding.
_SETUP_DEFAULTS = {"local_hostname": "localhost", "metadata_server": "",
                   "global_segment_size": 16 << 20, "local_buffer_size": 16 << 20,
                   "protocol": "tcp", "rdma_devices": "", "master_server_addr": "127.0.0.1:50051"}


def _setup_args(args, kwargs):
    """setup's arguments as a dict, from Mooncake's positional form or its dict form."""
    if len(args) == 1 and isinstance(args[0], dict) and not kwargs:
        config = dict(args[0])
        # The dict form's other spellings, as engines' configs write them.
        config.setdefault("rdma_devices", config.get("device_name", ""))
        if "master_server_address" in config:
            config.setdefault("master_server_addr", config["master_server_address"])
        out = {k: config.get(k, v) for k, v in _SETUP_DEFAULTS.items()}
        for size in ("global_segment_size", "local_buffer_size"):  # strings in vLLM's dict
            out[size] = int(out[size])
        out["extra"] = {k: config[k] for k in _STORE_SETUP_KWARGS if k in config}
        return out
    names = tuple(_SETUP_DEFAULTS) + ("engine",)
    if len(args) > len(names):
        raise TypeError("setup() takes at most %d positional arguments (%d given)" %
                        (len(names), len(args)))
    given = dict(zip(names, args))
    kwargs = dict(kwargs)
    if "device_name" in kwargs:  # the name Mooncake's configs use for rdma_devices
        kwargs.setdefault("rdma_devices", kwargs.pop("device_name"))
    for name in names:
        if name in kwargs:
            if name in given:
                raise TypeError("setup() got multiple values for argument %r" % name)
            given[name] = kwargs.pop(name)
    for name in _IGNORED_SETUP_KWARGS:
        kwargs.pop(name, None)
    unknown = [k for k in kwargs if k not in _STORE_SETUP_KWARGS]
    if unknown:
        raise TypeError("setup() got unexpected keyword arguments: %s" % ", ".join(unknown))
    out = dict(_SETUP_DEFAULTS)
    out.update({k: v for k, v in given.items() if k != "engine"})
    out["extra"] = kwargs
    return out


class MooncakeDistributedStore:
    """Mooncake's MooncakeDistributedStore, over crescent.Store."""

    def __init__(self):
        self._store = Store()
        self._hostname = ""

    # ---- lifecycle ----

    def setup(self, *args, **kwargs):
        """Mooncake's setup: (local_hostname, metadata_server, global_segment_size,
        local_buffer_size, protocol, rdma_devices, master_server_addr, engine=None)
        or one dict with those keys (master_server_address and device_name are
        taken too). Returns 0, or Mooncake's code for the failure.

        global_segment_size > 0 contributes that much memory from this process
        (the master must share its cluster secret: $CRESCENT_SECRET_FILE or
        $CRESCENT_SECRET, and `crescent serve --secret-file`). metadata_server,
        local_buffer_size, protocol, rdma_devices and engine have no meaning
        here; the transfer is TCP or same-host shared memory.

        The client remembers where the values it read live (location_cache=,
        ADAPTER_LOCATION_CACHE keys by default; 0 turns it off), so that a
        get of one goes straight to its store node (docs/network.md,
        "Location cache").

        Against a master with an auth file, the client's token comes from
        token= or $CRESCENT_TOKEN, and a contributed segment's node token
        (the node role) from node_token= or $CRESCENT_NODE_TOKEN, since an
        engine passes neither (docs/security.md).
        """
        a = _setup_args(args, kwargs)
        if "node_token" not in a["extra"] and os.environ.get("CRESCENT_NODE_TOKEN"):
            a["extra"]["node_token"] = os.environ["CRESCENT_NODE_TOKEN"]
        protocol = a["protocol"] if a["protocol"] in ("tcp", "") else "tcp"
        # Mooncake's keys name immutable content (engines hash the token prefix).
        a["extra"].setdefault("location_cache", ADAPTER_LOCATION_CACHE)
        try:
            self._store.setup(a["local_hostname"], a["metadata_server"],
                              a["global_segment_size"], a["local_buffer_size"], protocol,
                              a["rdma_devices"], a["master_server_addr"], **a["extra"])
        except CrescentError as e:
            return mooncake_code(e.code)
        self._hostname = a["local_hostname"]
        return 0

    def close(self):
        """Disconnects (unmounting a contributed segment); returns 0. Idempotent."""
        return self._store.close()

    def get_hostname(self):
        """The name this client's contributed segment has in the cluster (what
        ReplicateConfig.preferred_segment takes), or local_hostname when it
        contributes none, as Mooncake's does."""
        segment = self._store._core.local_segment() if not self._store.closed else ""
        return segment or self._hostname

    # ---- copying calls ----

    def put(self, key, value, config=None):
        return _put_code(self._store.put(key, value, config))

    def put_batch(self, keys, values, config=None):
        """Stores values[i] under keys[i]; 0 when all are stored, else the first code."""
        keys, values = listed("keys", keys), listed("values", values)
        if len(keys) != len(values):
            return INVALID_PARAMS
        codes = self._store._core.put_batch(keys, [byte_view(v) for v in values],
                                            put_options(config))
        return next((c for c in map(_put_code, codes) if c != 0), 0)

    def put_parts(self, key, *parts, config=None):
        """Stores the concatenation of the bytes-like parts under key."""
        return self.put(key, b"".join(byte_view(p) for p in parts), config)

    def get(self, key):
        """The value as bytes; b"" when it cannot be read."""
        return self._store.get(key)

    def get_batch(self, keys):
        return self._store.get_batch(keys)

    def get_buffer(self, key):
        """A BufferHandle of the value, or None when it cannot be read."""
        code, value = self._store.get_with_code(key)
        return BufferHandle(value) if code == 0 else None

    def batch_get_buffer(self, keys):
        return [BufferHandle(v) if c == 0 else None
                for c, v in self._store._core.get_batch(listed("keys", keys))]

    # ---- queries and removal ----

    def is_exist(self, key):
        """1 if stored, 0 if not, -1 on an error."""
        return _exist_code(self._store.is_exist(key))

    def batch_is_exist(self, keys):
        return [_exist_code(c) for c in self._store.batch_is_exist(keys)]

    def get_size(self, key):
        return mooncake_code(self._store.get_size(key))

    def remove(self, key, force=False):
        return mooncake_code(self._store.remove(key, force))

    def remove_all(self, force=False):
        """How many objects were removed, or Mooncake's code."""
        return mooncake_code(self._store.remove_all(force))

    def get_replica_desc(self, key):
        """The object's replicas (one memory descriptor with its size), [] when absent."""
        size = self._store.get_size(key)
        return [ReplicaDescriptor(size)] if size >= 0 else []

    def batch_get_replica_desc(self, keys):
        """{key: replicas} for the stored keys; absent keys are left out, as in Mooncake."""
        out = {}
        for key in keys:
            replicas = self.get_replica_desc(key)
            if replicas:
                out[key] = replicas
        return out

    # ---- registered buffers and zero copy ----

    def register_buffer(self, buffer_ptr, size):
        return mooncake_code(self._store.register_buffer(buffer_ptr, size))

    def unregister_buffer(self, buffer_ptr):
        return mooncake_code(self._store.unregister_buffer(buffer_ptr))

    def put_from(self, key, buffer_ptr, size, config=None):
        return self.batch_put_from([key], [buffer_ptr], [size], config)[0]

    def batch_put_from(self, keys, buffer_ptrs, sizes, config=None):
        return [_put_code(c) for c in self._store.batch_put_from(keys, buffer_ptrs, sizes,
                                                                 config)]

    def get_into(self, key, buffer_ptr, size):
        """Bytes read into registered memory, or Mooncake's code."""
        return self.batch_get_into([key], [buffer_ptr], [size])[0]

    def batch_get_into(self, keys, buffer_ptrs, sizes):
        return [mooncake_code(c) for c in self._store.batch_get_into(keys, buffer_ptrs, sizes)]

    def batch_put_from_multi_buffers(self, keys, all_buffer_ptrs, all_sizes, config=None):
        return [_put_code(c) for c in self._store.batch_put_from_multi_buffers(
            keys, all_buffer_ptrs, all_sizes, config)]

    def batch_get_into_multi_buffers(self, keys, all_buffer_ptrs, all_sizes,
                                     prefer_alloc_in_same_node=False):
        return [mooncake_code(c) for c in self._store.batch_get_into_multi_buffers(
            keys, all_buffer_ptrs, all_sizes, prefer_alloc_in_same_node)]

    # ---- Crescent's own extras, under their crescent.Store names ----

    def batch_query_prefix(self, keys):
        return mooncake_code(self._store.batch_query_prefix(keys))

    def end_session(self, keys):
        """A session hint (crescent.Store.end_session): 0, or Mooncake's code."""
        code = self._store.end_session(keys)
        return 0 if code >= 0 else mooncake_code(code)

    def get_stats(self):
        return self._store.get_stats()

    @property
    def closed(self):
        return self._store.closed


def _exist_code(code):
    code = int(code)
    return code if code in (0, 1) else -1


__all__ = ["MooncakeDistributedStore", "ReplicateConfig", "BufferHandle", "ReplicaDescriptor",
           "ReplicaStatus", "MOONCAKE_CODES", "mooncake_code", "DEFAULT_SOFT_PIN_TTL_MS"]
