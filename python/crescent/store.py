"""crescent.Store: the Mooncake MooncakeDistributedStore API over a Crescent cluster.

Return conventions (docs/python.md has the full table):
  * int-returning methods give 0 (or a count / byte length) on success and a
    negative error code on failure, as Mooncake's do; a closed or never set-up
    store gives CLOSED (-25) from each of them (per key for the batch forms);
  * get / get_batch give b"" for a key that cannot be read (Mooncake's "empty
    bytes on miss"); get_with_code says why;
  * setup and get_stats raise CrescentError, since they have no code to return;
  * arguments that no call could accept (wrong types, non-contiguous arrays,
    CUDA tensors, negative sizes) raise TypeError / ValueError before any I/O.
The GIL is released inside every call that talks to the cluster.
"""

import operator
import os
import threading
import warnings
import weakref

from . import _crescent
from ._args import lengths_differ, listed, text
from ._buffers import (address_and_size, address_of, addresses_and_sizes, byte_view,
                       is_read_only, refuse_read_only)
from .config import put_options
from .errors import CLOSED, UNSUPPORTED, CrescentError

_live_stores = weakref.WeakSet()

# Bounds of setup's numeric arguments. A timeout of 0 or less, or no attempt at
# all, would be accepted and then fail every call; a timeout past about 24 days
# (2**31 - 1 ms) is no bound at all and risks overflow in deadline arithmetic.
_U64_MAX = 2**64 - 1
_MAX_TIMEOUT_MS = 2**31 - 1
_MAX_ATTEMPTS = 2**31 - 1


def _int_in(name, value, low, high):
    """`value` as an int in [low, high]; TypeError / ValueError naming `name` otherwise."""
    if isinstance(value, bool):
        raise TypeError("%s must be an int, not a bool" % name)
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError("%s must be an int, not %s" % (name, type(value).__name__)) from None
    if not low <= value <= high:
        raise ValueError("%s must be in [%d, %d], got %d" % (name, low, high, value))
    return value


def _node_factory():
    """The in-process store node's entry point, from the extension `_node`.

    Imported only by a setup that contributes a segment: `_crescent` is the
    client alone, and `_node` brings the data-plane servers, segment memory
    and libpmem2 (docs/python.md, "Two extensions").
    """
    try:
        from . import _node
    except ImportError as e:
        raise CrescentError(UNSUPPORTED, "global_segment_size > 0 starts a store node in this "
                            "process, and its module crescent._node cannot be loaded: %s" % e) \
            from e
    return _node.FACTORY


def _close_all_at_exit():
    # Stop store nodes and client threads while the interpreter is still whole.
    for store in list(_live_stores):
        store.close()


class Store:
    def __init__(self):
        self._core = _crescent.StoreCore()
        # Objects behind registered buffers, by address: a numpy array or tensor
        # must outlive its registration, or a later transfer would touch freed memory.
        self._registered = {}
        self._lock = threading.Lock()
        _live_stores.add(self)

    # ---- lifecycle ----

    def setup(self, local_hostname="localhost", metadata_server="", global_segment_size=0,
              local_buffer_size=0, protocol="tcp", device_name="",
              master_server_addr="127.0.0.1:50051", *, rpc_timeout_ms=5000, rpc_attempts=4,
              transfer_timeout_ms=10000, put_retry_ms=5000, token=None, node_token=None,
              tls_ca=None, tls_cert=None, tls_key=None, tls_server_name=None):
        """Connects to the master at master_server_addr; returns 0 or raises CrescentError.

        master_server_addr is host:port, unix:/path, or etcd://H1:2379,H2:2379/NAME
        for a cluster of masters, whose leader the store then follows (docs/ha.md).

        global_segment_size > 0 makes this process contribute a DRAM segment of
        that size (an in-process store node mounted on the master; needs the
        cluster secret in $CRESCENT_SECRET_FILE or $CRESCENT_SECRET), served on
        local_hostname. metadata_server, local_buffer_size and device_name are
        accepted for Mooncake compatibility and unused: the master holds all
        metadata, and transfers go straight to and from registered memory.
        put_retry_ms bounds how long a put keeps retrying a failure a moment
        may cure (no segment mounted yet, the master restarting, a store node
        that died under it; docs/failures.md); 0 turns retries off.
        token is this client's token ("NAME:SECRET", as `crescent token add`
        printed it) for a master started with --auth-file; None takes
        $CRESCENT_TOKEN, if set (docs/security.md). A master that refuses it
        (or its absence) raises CrescentError with UNAUTHENTICATED.
        node_token is the token of the contributed segment's store node, which
        mounts it and so needs the node role; None uses token. A segment
        mounted with a token of another role raises CrescentError with
        PERMISSION_DENIED, saying a node token is needed.
        tls_ca (a PEM file) makes the control plane TLS, for a master started with
        --tls-cert: its certificate must be signed by a CA of that file and name
        the master's host (or tls_server_name); tls_cert and tls_key (PEM files)
        are a client certificate for a master with mutual TLS (docs/security.md,
        "TLS"). Files that cannot be read or do not fit raise CrescentError with
        INVALID_ARGUMENT.
        The numbers are checked first: one out of range (a timeout or attempt
        count below 1, a negative size or retry time) raises ValueError naming it.
        """
        if protocol not in ("tcp", ""):
            warnings.warn("crescent transfers over TCP and same-host shared memory; "
                          "protocol %r is treated as tcp" % (protocol,), stacklevel=2)
        global_segment_size = _int_in("global_segment_size", global_segment_size, 0, _U64_MAX)
        _int_in("local_buffer_size", local_buffer_size, 0, _U64_MAX)
        rpc_timeout_ms = _int_in("rpc_timeout_ms", rpc_timeout_ms, 1, _MAX_TIMEOUT_MS)
        rpc_attempts = _int_in("rpc_attempts", rpc_attempts, 1, _MAX_ATTEMPTS)
        transfer_timeout_ms = _int_in("transfer_timeout_ms", transfer_timeout_ms, 1,
                                      _MAX_TIMEOUT_MS)
        put_retry_ms = _int_in("put_retry_ms", put_retry_ms, 0, _MAX_TIMEOUT_MS)
        local_hostname = text("local_hostname", local_hostname)
        master_server_addr = text("master_server_addr", master_server_addr or "")
        if token is None:
            token = os.environ.get("CRESCENT_TOKEN", "")
        token = text("token", token)
        node_token = "" if node_token is None else text("node_token", node_token)
        tls = {name: text(name, value or "") for name, value in
               (("tls_ca", tls_ca), ("tls_cert", tls_cert), ("tls_key", tls_key),
                ("tls_server_name", tls_server_name))}
        node_factory = _node_factory() if global_segment_size > 0 else None
        code, message = self._core.setup(local_hostname, master_server_addr,
                                         global_segment_size, rpc_timeout_ms, rpc_attempts,
                                         transfer_timeout_ms, put_retry_ms, node_factory,
                                         token, node_token, **tls)
        if code != 0:
            raise CrescentError(code, message)
        return 0

    def close(self):
        """Unmounts the local segment (if any) and disconnects; returns 0. Idempotent."""
        self._core.close()
        with self._lock:
            self._registered.clear()
        return 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- copying API ----

    def put(self, key, value, config=None):
        """Stores bytes-like `value` (or a numpy array / CPU tensor); 0 or a negative code."""
        return self._core.put(key, byte_view(value), put_options(config))

    def get(self, key):
        """The value as bytes; b"" when it cannot be read (missing, closed, ...)."""
        return self._core.get(key)[1]

    def get_with_code(self, key):
        """(code, value): code 0 with the bytes, or a negative code with b""."""
        return tuple(self._core.get(key))

    def get_longest_prefix(self, key):
        """(stored_key, value) for the longest stored key that is a prefix of key
        (key itself counts); None when none can be read (no such key, a bad
        key, closed, ...), as get answers b"" then. For keys whose prefixes
        are keys themselves (token strings, paths); hashed page chains take
        batch_query_prefix instead (docs/python.md)."""
        code, stored, value = self.get_longest_prefix_with_code(key)
        return None if code != 0 else (stored, value)

    def get_longest_prefix_with_code(self, key):
        """(code, stored_key, value): code 0 with the match, or a negative code
        (OBJECT_NOT_FOUND when no stored key prefixes key) with "" and b""."""
        code, stored, value = self._core.get_longest_prefix(key)
        return code, stored.decode("utf-8", "surrogateescape"), value

    def put_batch(self, keys, values, config=None):
        """Stores values[i] under keys[i]; 0 when all succeed, else the first negative code."""
        keys, values = listed("keys", keys), listed("values", values)
        if len(keys) != len(values):
            return lengths_differ("keys", len(keys), "values", len(values))
        results = self._core.put_batch(keys, [byte_view(v) for v in values],
                                       put_options(config))
        return next((r for r in results if r != 0), 0)

    def get_batch(self, keys):
        """One bytes per key, b"" for a key that cannot be read."""
        return [value for _, value in self._core.get_batch(listed("keys", keys))]

    def is_exist(self, key):
        """1 if stored, 0 if not, or a negative code (e.g. INVALID_KEY)."""
        return self._core.is_exist(key)

    def batch_is_exist(self, keys):
        """is_exist per key, as a list."""
        return self._core.batch_is_exist(listed("keys", keys))

    def remove(self, key, force=False):
        """0 or a negative code; force also removes an object under a read lease."""
        return self._core.remove(key, bool(force))

    def remove_all(self, force=False):
        """How many objects were removed, or a negative code."""
        return self._core.remove_all(bool(force))

    def end_session(self, keys):
        """Says the conversation whose pages `keys` are has ended (a session hint).

        Its pages become the cache's preferred victims until another request
        reads them; nothing is removed, and pins and read leases hold
        (docs/engines.md, "Session hints"). Returns how many stored objects
        were marked (keys not stored are skipped), or a negative code:
        INVALID_KEY, marking nothing, when any key is empty or too long.
        """
        return self._core.end_session(listed("keys", keys))

    def get_size(self, key):
        """The object's size in bytes, or a negative code."""
        return self._core.get_size(key)

    # ---- registered buffers ----

    def register_buffer(self, buffer_ptr, size=None, read_only=False):
        """Registers memory for the zero-copy calls; 0 or a negative code.

        buffer_ptr is an int address (size required) or a numpy array / CPU
        tensor (size defaults to its nbytes); the object is kept alive until
        unregister_buffer or close. Memory that cannot be written (a read-only
        memmap, an array over bytes) raises ValueError unless read_only=True,
        which registers it as a put source only: a get into it raises ValueError.
        """
        addr, size = address_and_size(buffer_ptr, size)
        if is_read_only(buffer_ptr) and not read_only:
            raise ValueError("the array is read-only (writeable=False), and a get cannot write "
                             "into it; pass read_only=True to register it as a put source only")
        rc = self._core.register_buffer(addr, size, bool(read_only))
        if rc == 0 and not isinstance(buffer_ptr, int):
            with self._lock:
                self._registered[addr] = buffer_ptr
        return rc

    def unregister_buffer(self, buffer_ptr):
        """0 or a negative code (BUFFER_NOT_REGISTERED for an unknown address)."""
        addr, _ = address_of(buffer_ptr)
        rc = self._core.unregister_buffer(addr)
        if rc == 0:
            with self._lock:
                self._registered.pop(addr, None)
        return rc

    # ---- zero-copy batches ----

    def batch_put_from(self, keys, buffer_ptrs, sizes=None, config=None):
        """Puts keys[i] from registered memory; per key 0 or a negative code."""
        return self._put_from(keys, buffer_ptrs, sizes, config, chain=False)

    def batch_put_chain_from(self, keys, buffer_ptrs, sizes=None, config=None, parent_key=None):
        """batch_put_from that records keys[i-1] as the parent of keys[i] (a prefix chain).

        parent_key, if given, is keys[0]'s parent: the stored page the chain
        extends (a run of missing pages after a cached prefix).
        A page refused before transfer (e.g. unregistered) refuses the whole
        chain, so no link skips over a hole.
        """
        return self._put_from(keys, buffer_ptrs, sizes, config, chain=True, parent_key=parent_key)

    def _put_from(self, keys, buffer_ptrs, sizes, config, chain, parent_key=None):
        keys = listed("keys", keys)
        ptrs, sizes = addresses_and_sizes(listed("buffer_ptrs", buffer_ptrs), sizes)
        if len(ptrs) != len(keys):
            return [lengths_differ("keys", len(keys), "buffer_ptrs", len(ptrs))] * len(keys)
        opts = put_options(config)
        if parent_key is not None:
            if not isinstance(parent_key, str):
                raise TypeError("parent_key must be a str or None")
            opts.parent_key = parent_key
        return self._core.batch_put_from(keys, ptrs, sizes, opts, chain)

    def batch_get_into(self, keys, buffer_ptrs, sizes=None):
        """Reads keys[i] into registered memory; per key the bytes read or a negative code."""
        keys, buffer_ptrs = listed("keys", keys), listed("buffer_ptrs", buffer_ptrs)
        refuse_read_only(buffer_ptrs)
        ptrs, sizes = addresses_and_sizes(buffer_ptrs, sizes)
        if len(ptrs) != len(keys):
            return [lengths_differ("keys", len(keys), "buffer_ptrs", len(ptrs))] * len(keys)
        return self._core.batch_get_into(keys, ptrs, sizes)

    def batch_put_from_multi_buffers(self, keys, all_buffer_ptrs, all_sizes=None, config=None):
        """Each key's value is the concatenation of its buffers (all registered).

        all_buffer_ptrs[i] and all_sizes[i] are lists for keys[i]; per key 0 or
        a negative code.
        """
        keys, ptrs, sizes = self._multi(keys, all_buffer_ptrs, all_sizes)
        if ptrs is None:  # the lists differ in length; sizes holds the code
            return [sizes] * len(keys)
        return self._core.batch_put_from_multi_buffers(keys, ptrs, sizes, put_options(config))

    def batch_get_into_multi_buffers(self, keys, all_buffer_ptrs, all_sizes=None,
                                     prefer_alloc_in_same_node=False):
        """Each value is spread over its key's buffers in order; per key bytes read or a code."""
        all_buffer_ptrs = [listed("all_buffer_ptrs[i]", bufs)
                           for bufs in listed("all_buffer_ptrs", all_buffer_ptrs)]
        for bufs in all_buffer_ptrs:
            refuse_read_only(bufs)
        keys, ptrs, sizes = self._multi(keys, all_buffer_ptrs, all_sizes)
        if ptrs is None:  # the lists differ in length; sizes holds the code
            return [sizes] * len(keys)
        return self._core.batch_get_into_multi_buffers(keys, ptrs, sizes)

    @staticmethod
    def _multi(keys, all_buffer_ptrs, all_sizes):
        """keys, ptrs, sizes; or keys, None, a code when the lists differ in length."""
        keys, all_buffer_ptrs = listed("keys", keys), listed("all_buffer_ptrs", all_buffer_ptrs)
        all_sizes = [None] * len(all_buffer_ptrs) if all_sizes is None else \
            listed("all_sizes", all_sizes)
        if len(all_buffer_ptrs) != len(keys):
            return keys, None, lengths_differ("keys", len(keys), "all_buffer_ptrs",
                                              len(all_buffer_ptrs))
        if len(all_sizes) != len(keys):
            return keys, None, lengths_differ("keys", len(keys), "all_sizes", len(all_sizes))
        ptrs, sizes = [], []
        for bufs, szs in zip(all_buffer_ptrs, all_sizes):
            p, s = addresses_and_sizes(listed("all_buffer_ptrs[i]", bufs), szs)
            ptrs.append(p)
            sizes.append(s)
        return keys, ptrs, sizes

    # ---- prefix extras ----

    def batch_query_prefix(self, keys):
        """How many leading keys are stored (stops at the first miss), or a negative code."""
        keys = listed("keys", keys)
        if not keys and not self.closed:
            return 0  # the master refuses an empty batch; nothing is a prefix of length 0
        return self._core.batch_query_prefix(keys)

    def batch_get_prefix_into(self, keys, buffer_ptrs, sizes=None):
        """Reads the longest stored prefix, page i into buffer i; its length or a negative code."""
        keys, buffer_ptrs = listed("keys", keys), listed("buffer_ptrs", buffer_ptrs)
        refuse_read_only(buffer_ptrs)
        ptrs, sizes = addresses_and_sizes(buffer_ptrs, sizes)
        if len(ptrs) != len(keys):
            return lengths_differ("keys", len(keys), "buffer_ptrs", len(ptrs))
        if not keys and not self.closed:
            return 0
        return self._core.batch_get_prefix_into(keys, ptrs, sizes)

    # ---- cluster ----

    def get_stats(self):
        """Cluster usage as a dict; raises CrescentError when closed or unreachable.

        Keys: objects, pending_puts, capacity_bytes, used_bytes, segments (list of
        dicts: name, owner_node, endpoint, capacity, used, tier "dram" or "pmem"),
        counters (Prometheus sample -> value), master_address, local_segment (None unless contributing),
        and client: this process's own calls, a dict with ops (per operation
        family: calls, ok_keys, failed_keys, bytes, seconds, p50_seconds,
        p99_seconds), put_retries, shm_fallbacks, replica_fallbacks,
        lease_retries, checksum_mismatches, copy_ahead_kept, copy_ahead_discarded, and
        shm_mapped_bytes and shm_warmed_bytes (same-host segments mapped, and how much of them
        was read once in the background).
        """
        code, stats = self._core.get_stats()
        if code != 0:
            raise CrescentError(code, stats)
        return stats

    def client_metrics(self):
        """This client's metrics in the Prometheus text format (docs/metrics.md),
        for an inference engine to serve on its own /metrics; raises CrescentError
        when closed."""
        code, text = self._core.client_metrics()
        if code != 0:
            raise CrescentError(code, text)
        return text

    @property
    def closed(self):
        return not self._core.is_open()


__all__ = ["Store", "CLOSED"]
