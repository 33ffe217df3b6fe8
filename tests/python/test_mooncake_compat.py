"""crescent.mooncake against a real `crescent serve`: Mooncake's method names,
argument orders, defaults and return codes, as code written for Mooncake
checks them."""

import inspect
import os
import uuid

import numpy as np
import pytest

from crescent import mooncake
from crescent.mooncake import MooncakeDistributedStore, ReplicateConfig


def key():
    return "mc-" + uuid.uuid4().hex


@pytest.fixture
def mc(serve):
    s = MooncakeDistributedStore()
    assert s.setup("localhost", "P2PHANDSHAKE", 0, 16 << 20, "tcp", "", serve.address) == 0
    yield s
    s.remove_all(True)
    s.close()


def test_setup_positional_dict_and_failure_codes(serve):
    s = MooncakeDistributedStore()
    assert s.setup({"local_hostname": "localhost", "metadata_server": "P2PHANDSHAKE",
                    "global_segment_size": 0, "master_server_address": serve.address}) == 0
    s.close()
    # An engine-style call with Mooncake's extra keywords (ignored here).
    s = MooncakeDistributedStore()
    assert s.setup("localhost", "P2PHANDSHAKE", 0, 0, "tcp", "", serve.address, None,
                   enable_client_http_server=False) == 0
    s.close()
    with pytest.raises(TypeError, match="tenant_id"):  # SGLang retries without it
        MooncakeDistributedStore().setup("localhost", "", 0, 0, "tcp", "", serve.address,
                                         tenant_id="t1")
    assert MooncakeDistributedStore().setup("localhost", "", 0, 0, "tcp", "",
                                            "127.0.0.1:1") == mooncake.RPC_FAIL


def test_replicate_config_fields_and_defaults():
    c = ReplicateConfig()
    assert (c.replica_num, c.with_soft_pin, c.with_hard_pin, c.preferred_segment,
            c.preferred_segments, c.prefer_alloc_in_same_node, c.soft_pin_ttl_ms) == \
        (1, False, False, "", [], False, None)
    c.with_soft_pin = True
    assert c.to_put_options().soft_pin_ttl_ms == mooncake.DEFAULT_SOFT_PIN_TTL_MS
    c.soft_pin_ttl_ms = 1000
    assert c.to_put_options().soft_pin_ttl_ms == 1000


def test_codes_are_mooncakes(mc):
    k = key()
    assert mc.put(k, b"v1") == 0
    assert mc.put(k, b"v2") == 0  # an existing key: done, as in Mooncake
    assert mc.get(k) == b"v1"
    assert mc.is_exist(k) == 1 and mc.is_exist(key()) == 0
    assert mc.batch_is_exist([k, key()]) == [1, 0]
    assert mc.is_exist("x" * 5000) == -1
    assert mc.get_size(k) == 2
    assert mc.get_size(key()) == mooncake.OBJECT_NOT_FOUND == -704
    assert mc.remove(key()) == -704
    assert mc.put("x" * 5000, b"v") == mooncake.INVALID_KEY == -400
    assert mc.put_batch([key(), k], [b"a", b"b"]) == 0
    # Just read: under a read lease, as in Mooncake; force removes it anyway.
    assert mc.remove(k) == mooncake.OBJECT_HAS_LEASE == -706
    assert mc.remove(k, True) == 0
    assert mc.get(k) == b""
    assert set(mooncake.MOONCAKE_CODES.values()) <= {
        v for n, v in vars(mooncake).items() if n.isupper() and isinstance(v, int)}


def test_full_store_answers_no_available_handle(secret_serve):
    s = MooncakeDistributedStore()
    assert s.setup("localhost", "", 0, 0, "tcp", "", secret_serve.address) == 0
    pinned = ReplicateConfig()
    pinned.with_hard_pin = True
    codes = [s.put(key(), bytes(1 << 20), pinned) for _ in range(12)]
    assert mooncake.NO_AVAILABLE_HANDLE == -200
    assert codes[0] == 0 and codes[-1] == -200, codes
    buf = np.zeros(1 << 20, dtype=np.uint8)
    assert s.register_buffer(buf.ctypes.data, buf.nbytes) == 0
    assert s.batch_put_from_multi_buffers([key()], [[buf.ctypes.data]], [[buf.nbytes]],
                                          ReplicateConfig()) == [-200]
    assert s.remove_all(True) >= 1
    assert s.unregister_buffer(buf.ctypes.data) == 0
    assert s.close() == 0


def test_buffers_hostname_parts_and_replica_descriptors(mc):
    k, parts = key(), [b"head:", bytearray(b"body"), memoryview(b"-tail")]
    assert mc.put_parts(k, *parts) == 0
    assert mc.get(k) == b"head:body-tail"
    h = mc.get_buffer(k)
    assert (h.size(), len(h), bytes(memoryview(h))) == (14, 14, b"head:body-tail")
    assert np.ctypeslib.as_array((np.ctypeslib.ctypes.c_ubyte * 4).from_address(h.ptr())) \
        .tobytes() == b"head"
    assert [None if b is None else bytes(b) for b in mc.batch_get_buffer([k, key()])] == \
        [b"head:body-tail", None]
    assert mc.get_hostname() == "localhost"
    [r] = mc.get_replica_desc(k)
    assert r.is_memory_replica() and not r.is_disk_replica()
    assert r.status == mooncake.ReplicaStatus.COMPLETE
    assert r.get_memory_descriptor().buffer_descriptor.size == 14
    assert list(mc.batch_get_replica_desc([k, key()])) == [k]
    assert mc.get_replica_desc(key()) == []


def test_put_from_and_get_into_one_key(mc):
    buf = np.arange(4096, dtype=np.uint8)
    out = np.zeros(4096, dtype=np.uint8)
    assert mc.register_buffer(buf.ctypes.data, buf.nbytes) == 0
    assert mc.register_buffer(out.ctypes.data, out.nbytes) == 0
    k = key()
    assert mc.put_from(k, buf.ctypes.data, 1000) == 0
    assert mc.get_into(k, out.ctypes.data, out.nbytes) == 1000
    assert np.array_equal(out[:1000], buf[:1000])
    assert mc.get_into(k, out.ctypes.data, 10) == mooncake.BUFFER_OVERFLOW == -10
    assert mc.get_into(key(), out.ctypes.data, out.nbytes) == -704
    assert mc.unregister_buffer(out.ctypes.data) == 0
    assert mc.unregister_buffer(buf.ctypes.data) == 0


def test_signatures_follow_mooncake():
    sig = {n: list(inspect.signature(getattr(MooncakeDistributedStore, n)).parameters)[1:]
           for n in ("put", "put_from", "batch_put_from", "get_into", "batch_get_into",
                     "batch_put_from_multi_buffers", "batch_get_into_multi_buffers",
                     "remove", "remove_all", "register_buffer", "unregister_buffer")}
    assert sig == {
        "put": ["key", "value", "config"],
        "put_from": ["key", "buffer_ptr", "size", "config"],
        "batch_put_from": ["keys", "buffer_ptrs", "sizes", "config"],
        "get_into": ["key", "buffer_ptr", "size"],
        "batch_get_into": ["keys", "buffer_ptrs", "sizes"],
        "batch_put_from_multi_buffers": ["keys", "all_buffer_ptrs", "all_sizes", "config"],
        "batch_get_into_multi_buffers": ["keys", "all_buffer_ptrs", "all_sizes",
                                         "prefer_alloc_in_same_node"],
        "remove": ["key", "force"],
        "remove_all": ["force"],
        "register_buffer": ["buffer_ptr", "size"],
        "unregister_buffer": ["buffer_ptr"],
    }


def test_closed_store_returns_codes(serve):
    s = MooncakeDistributedStore()
    assert s.setup("localhost", "", 0, 0, "tcp", "", serve.address) == 0
    assert s.close() == 0 and s.close() == 0
    assert s.put(key(), b"v") == mooncake.INTERNAL_ERROR
    assert s.is_exist(key()) == -1
    assert s.get(key()) == b"" and s.get_buffer(key()) is None


def test_a_contributing_client_joins_serve_with_its_secret(secret_serve, monkeypatch):
    """global_segment_size > 0, the engines' default: the client mounts its own
    memory on the all-in-one store, which needs serve's cluster secret."""
    monkeypatch.setenv("CRESCENT_SECRET_FILE", secret_serve.secret_file)
    s = MooncakeDistributedStore()
    assert s.setup("localhost", "P2PHANDSHAKE", 16 << 20, 16 << 20, "tcp", "",
                   secret_serve.address) == 0
    segment = s.get_hostname()
    assert segment and segment != "localhost"
    assert segment in [g["name"] for g in s.get_stats()["segments"]]
    here = ReplicateConfig()
    here.preferred_segment = segment
    k, value = key(), os.urandom(3 << 20)
    assert s.put(k, value, here) == 0
    assert s.get(k) == value
    used = {g["name"]: g["used"] for g in s.get_stats()["segments"]}
    assert used[segment] >= len(value)
    s.remove_all(True)
    assert s.close() == 0
    # Without the secret, the same setup is refused with a code, not an exception.
    monkeypatch.delenv("CRESCENT_SECRET_FILE")
    monkeypatch.setenv("CRESCENT_SECRET", "another-secret-of-enough-length-0123456789")
    assert MooncakeDistributedStore().setup("localhost", "", 16 << 20, 0, "tcp", "",
                                            secret_serve.address) < 0


def test_serve_refuses_a_secret_it_cannot_use(tmp_path):
    import subprocess
    from conftest import CRESCENT
    short = tmp_path / "short"
    short.write_text("tiny\n")
    for path in (tmp_path / "missing", short):
        r = subprocess.run([str(CRESCENT), "serve", "--port", "0", "--http-port", "0",
                            "--secret-file", str(path)], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode != 0
        assert "secret" in (r.stdout + r.stderr)


def test_an_engine_under_an_auth_file_takes_its_tokens_from_the_environment(tmp_path,
                                                                            monkeypatch):
    """Engines pass no token: $CRESCENT_TOKEN authenticates the client, and
    $CRESCENT_NODE_TOKEN (a node-role token) mounts its contributed segment."""
    import subprocess
    from conftest import CRESCENT, Server

    def token(name, role):
        return subprocess.run([str(CRESCENT), "token", "add", "--auth-file", str(auth), "--name",
                               name, "--role", role], check=True, capture_output=True,
                              text=True).stdout.strip()

    auth = tmp_path / "auth"
    client, node = token("engine", "client"), token("engine-node", "node")
    secret = tmp_path / "secret"
    secret.write_text("auth-engine-test-secret-0123456789abcdef\n")
    server = Server(["serve", "--port", "0", "--http-port", "0", "--segment-size", "8MiB",
                     "--auth-file", str(auth), "--secret-file", str(secret)])
    try:
        monkeypatch.setenv("CRESCENT_SECRET_FILE", str(secret))
        monkeypatch.setenv("CRESCENT_TOKEN", client)
        monkeypatch.delenv("CRESCENT_NODE_TOKEN", raising=False)
        assert MooncakeDistributedStore().setup("localhost", "", 8 << 20, 0, "tcp", "",
                                                server.address) == mooncake.ILLEGAL_CLIENT
        monkeypatch.setenv("CRESCENT_NODE_TOKEN", node)
        s = MooncakeDistributedStore()
        assert s.setup("localhost", "", 8 << 20, 0, "tcp", "", server.address) == 0
        k = key()
        assert s.put(k, b"under auth") == 0 and s.get(k) == b"under auth"
        assert s.close() == 0
    finally:
        server.stop()
