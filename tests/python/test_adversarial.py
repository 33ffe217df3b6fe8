"""Bad inputs and hostile timing, as a new user would stumble on them: each test
names what used to go wrong (a crash, a whole batch spoilt by one key, an
accepted setting that breaks every later call) and checks the clear answer.
"""

import subprocess
import sys
import textwrap
import threading
import uuid

import numpy as np
import pytest

import crescent

# A put loop on a daemon thread, then the script ends while a put is in flight.
_EXIT_SCRIPT = textwrap.dedent("""
    import sys, threading
    import crescent
    store = crescent.Store()
    store.setup("localhost", "", 0, 0, "tcp", "", sys.argv[1])
    running = threading.Event()
    def loop():
        i = 0
        while True:
            store.put("exit-%d-%d" % (id(store), i), b"x" * 4096)
            i += 1
            running.set()
    threading.Thread(target=loop, daemon=True).start()
    running.wait()
""")


def test_exit_with_a_call_in_flight_ends_cleanly(serve):
    # Used to abort (rc 134, "terminate called without an active exception"):
    # finalisation ends the daemon thread as it takes the GIL back.
    for _ in range(5):
        r = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT, serve.address],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert "terminate called" not in r.stderr


@pytest.mark.parametrize("name, value", [
    ("transfer_timeout_ms", 0), ("transfer_timeout_ms", -1), ("rpc_timeout_ms", 0),
    ("rpc_timeout_ms", -5), ("rpc_attempts", 0), ("transfer_timeout_ms", 2**40),
    ("put_retry_ms", -1),
])
def test_setup_refuses_numbers_that_would_fail_every_call(serve, name, value):
    # transfer_timeout_ms=0 used to be accepted, and then every put timed out.
    store = crescent.Store()
    with pytest.raises(ValueError, match=name):
        store.setup("localhost", "", 0, 0, "tcp", "", serve.address, **{name: value})
    assert store.closed


@pytest.mark.parametrize("position, value", [(2, -1), (3, -1)])
def test_setup_refuses_negative_sizes(serve, position, value):
    args = ["localhost", "", 0, 0, "tcp", "", serve.address]
    args[position] = value
    with pytest.raises(ValueError, match="global_segment_size|local_buffer_size"):
        crescent.Store().setup(*args)


def test_setup_refuses_non_integers(serve):
    with pytest.raises(TypeError, match="transfer_timeout_ms"):
        crescent.Store().setup("localhost", "", 0, 0, "tcp", "", serve.address,
                               transfer_timeout_ms="soon")


@pytest.mark.parametrize("host", ["0.0.0.0", "0.0.0.0:7000", "::"])
def test_setup_names_its_own_argument_not_a_cli_flag(bare_master, secret_file, monkeypatch,
                                                     host):
    # Used to say "give it as the advertise host (--advertise-host)", a flag
    # that does not exist in Python.
    monkeypatch.setenv("CRESCENT_SECRET_FILE", str(secret_file))
    store = crescent.Store()
    with pytest.raises(crescent.CrescentError) as e:
        store.setup(host, "", 16 << 20, 0, "tcp", "", bare_master.address)
    assert e.value.code == crescent.INVALID_ARGUMENT
    assert "local_hostname" in str(e.value) and "--" not in str(e.value)
    assert store.closed


def test_missing_secret_is_explained_without_cli_flags(bare_master, monkeypatch):
    monkeypatch.delenv("CRESCENT_SECRET_FILE", raising=False)
    monkeypatch.delenv("CRESCENT_SECRET", raising=False)
    with pytest.raises(crescent.CrescentError) as e:
        crescent.Store().setup("localhost", "", 16 << 20, 0, "tcp", "", bare_master.address)
    assert "CRESCENT_SECRET_FILE" in str(e.value) and "--" not in str(e.value)


# ---- read-only destinations ----
# A get used to write into memory it could not (a read-only memmap: SIGSEGV on
# the shared-memory path, UNAVAILABLE over TCP) or must not (an array over an
# immutable bytes object: silently changed).

def _key(tag):
    return "adv-%s-%s" % (tag, uuid.uuid4().hex[:12])


@pytest.fixture
def readonly_map(tmp_path):
    path = tmp_path / "pages.bin"
    path.write_bytes(b"\x07" * 8192)
    return np.memmap(path, dtype=np.uint8, mode="r")


def test_read_only_memmap_is_refused_as_a_destination(store, readonly_map):
    with pytest.raises(ValueError, match="read_only"):
        store.register_buffer(readonly_map)
    # By address the kernel's mapping tells: the same refusal.
    with pytest.raises(ValueError, match="read_only"):
        store.register_buffer(readonly_map.ctypes.data, readonly_map.nbytes)


def test_read_only_registration_is_a_put_source_only(store, readonly_map):
    k = _key("ro")
    assert store.register_buffer(readonly_map, read_only=True) == 0
    assert store.batch_put_from([k], [readonly_map[:4096]]) == [0]
    assert store.get(k) == b"\x07" * 4096
    for dest in (readonly_map[:4096], readonly_map.ctypes.data):
        with pytest.raises(ValueError, match="read"):
            store.batch_get_into([k], [dest], [4096])
        with pytest.raises(ValueError, match="read"):
            store.batch_get_prefix_into([k], [dest], [4096])
        with pytest.raises(ValueError, match="read"):
            store.batch_get_into_multi_buffers([k], [[dest]], [[4096]])
    assert bytes(readonly_map[:8]) == b"\x07" * 8
    assert store.unregister_buffer(readonly_map) == 0


def test_array_over_immutable_bytes_is_never_written(store):
    k = _key("bytes")
    assert store.put(k, b"new!" * 1024) == 0
    frozen = np.frombuffer(b"\x00" * 4096, dtype=np.uint8)
    with pytest.raises(ValueError, match="read_only"):
        store.register_buffer(frozen)
    # A read-only view of a writable, registered arena is no destination either.
    arena = np.zeros(8192, dtype=np.uint8)
    assert store.register_buffer(arena) == 0
    view = arena[:4096]
    view.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        store.batch_get_into([k], [view])
    assert not arena.any()
    assert store.batch_get_into([k], [arena[:4096]]) == [4096]
    assert bytes(arena[:8]) == b"new!new!"
    assert store.unregister_buffer(arena) == 0


# ---- one bad key in a batch ----
# An empty or over-long key used to spoil a whole batch, but not always:
# batch_is_exist(["", k]) gave [-2, -2], get_batch([k, "x" * 1025]) gave
# [b"", b""]. Every batch answers per key.

_BAD_KEYS = ["", "x" * 1025]


@pytest.mark.parametrize("bad", _BAD_KEYS, ids=["empty", "too-long"])
def test_one_bad_key_gets_its_own_error_in_every_batch(store, bad):
    good, fresh = _key("good"), _key("fresh")
    assert store.put(good, b"hello") == 0
    assert store.batch_is_exist([bad, good]) == [crescent.INVALID_KEY, 1]
    assert store.batch_is_exist([good, bad]) == [1, crescent.INVALID_KEY]
    assert store.get_batch([good, bad]) == [b"hello", b""]
    assert store.get_batch([bad, good]) == [b"", b"hello"]

    arena = np.zeros(4096, dtype=np.uint8)
    assert store.register_buffer(arena) == 0
    assert store.batch_put_from([bad, fresh], [arena[:64], arena[64:128]]) == \
        [crescent.INVALID_KEY, 0]
    assert store.batch_get_into([good, bad], [arena[:1024], arena[1024:2048]]) == \
        [5, crescent.INVALID_KEY]
    assert store.batch_get_into_multi_buffers([bad, good], [[arena[:64]], [arena[64:128]]]) == \
        [crescent.INVALID_KEY, 5]
    assert store.unregister_buffer(arena) == 0


@pytest.mark.parametrize("bad", _BAD_KEYS, ids=["empty", "too-long"])
def test_a_bad_key_ends_a_prefix_and_fails_it_only_when_first(store, bad):
    a, b = _key("pa"), _key("pb")
    assert store.put(a, b"aa") == 0 and store.put(b, b"bb") == 0
    assert store.batch_query_prefix([a, bad, b]) == 1
    assert store.batch_query_prefix([bad, a]) == crescent.INVALID_KEY
    arena = np.zeros(4096, dtype=np.uint8)
    assert store.register_buffer(arena) == 0
    pages = [arena[:1024], arena[1024:2048], arena[2048:3072]]
    assert store.batch_get_prefix_into([a, bad, b], pages) == 1
    assert store.batch_get_prefix_into([bad, a], pages[:2]) == crescent.INVALID_KEY
    assert store.unregister_buffer(arena) == 0


# ---- batches larger than one request ----

def test_batches_over_the_masters_limit_are_split(store):
    # Batches over 65,536 keys used to fail with -1 for every key, and
    # batch_get_prefix_into returned 0, which reads as "nothing cached".
    n = (1 << 16) + 500
    tag = uuid.uuid4().hex[:8]
    keys = ["big-%s-%d" % (tag, i) for i in range(n)]
    absent = ["big-%s-absent-%d" % (tag, i) for i in range(1000)]
    assert store.put_batch(keys, [b"x"] * n) == 0
    assert store.batch_is_exist(keys + absent) == [1] * n + [0] * len(absent)
    assert store.batch_query_prefix(keys + absent) == n
    arena = np.zeros(n + len(absent), dtype=np.uint8)
    assert store.register_buffer(arena) == 0
    pages = [arena[i:i + 1] for i in range(n + len(absent))]
    assert store.batch_get_prefix_into(keys + absent, pages) == n
    assert arena[:n].all() and not arena[n:].any()
    assert store.get_batch(keys) == [b"x"] * n
    assert store.unregister_buffer(arena) == 0


# ---- the words behind a code ----

def test_last_error_says_why_a_code_was_returned(store):
    # Int-returning methods keep Mooncake's codes; last_error() adds the message.
    assert store.put("", b"x") == crescent.INVALID_KEY
    code, message = crescent.last_error()
    assert code == crescent.INVALID_KEY and "empty" in message
    assert store.batch_is_exist(["x" * 1025]) == [crescent.INVALID_KEY]
    assert "1024" in crescent.last_error()[1]
    missing = _key("missing")
    assert store.get_size(missing) == crescent.OBJECT_NOT_FOUND
    code, message = crescent.last_error()
    assert code == crescent.OBJECT_NOT_FOUND and missing in message
    assert store.register_buffer(8, 4096) == crescent.INVALID_ARGUMENT
    assert "not mapped" in crescent.last_error()[1]
    # Per thread: another thread has seen no failure.
    seen = []
    worker = threading.Thread(target=lambda: seen.append(crescent.last_error()))
    worker.start()
    worker.join()
    assert seen == [(0, "")]
