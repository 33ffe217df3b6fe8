"""crescent.Store against a real `crescent serve`: every method, success and error paths.

Return conventions under test are Mooncake's (docs/python.md): ints are 0 / a
count / a length on success and a negative code on failure; get gives b"" on a
miss; setup and get_stats raise CrescentError.
"""

import socket
import threading
import time
import uuid

import numpy as np
import pytest
import torch

import crescent
from conftest import connect


def key(name="k"):
    return "%s-%s" % (name, uuid.uuid4().hex[:12])


@pytest.fixture
def buf(store):
    """A registered 1 MiB numpy arena, and a helper to slice it into pages."""
    arena = np.zeros(1 << 20, dtype=np.uint8)
    assert store.register_buffer(arena) == 0
    yield arena
    store.unregister_buffer(arena)


# ---- copying API ----

@pytest.mark.parametrize("make", [
    lambda b: b, bytearray, memoryview,
    lambda b: np.frombuffer(b, dtype=np.uint8).reshape(2, -1),
    lambda b: torch.frombuffer(bytearray(b), dtype=torch.uint8),
])
def test_put_get_round_trip(store, make):
    k, value = key(), bytes(range(256)) * 8
    assert store.put(k, make(value)) == 0
    assert store.get(k) == value
    assert store.get_size(k) == len(value)


def test_put_tensor_bfloat16(store):
    k = key()
    t = torch.arange(64, dtype=torch.float32).to(torch.bfloat16)
    assert store.put(k, t) == 0
    back = torch.frombuffer(bytearray(store.get(k)), dtype=torch.bfloat16)
    assert torch.equal(back, t)


def test_put_rejects_unusable_values(store):
    with pytest.raises(TypeError):
        store.put(key(), "a str is not bytes")
    with pytest.raises(ValueError):
        store.put(key(), np.zeros((4, 4), dtype=np.uint8)[:, ::2])  # not contiguous


def test_put_existing_key_is_an_error(store):
    k = key()
    assert store.put(k, b"one") == 0
    assert store.put(k, b"two") == crescent.OBJECT_ALREADY_EXISTS
    assert store.get(k) == b"one"


def test_put_empty_value_is_an_error(store):
    assert store.put(key(), b"") < 0


def test_get_missing_gives_empty_bytes(store):
    k = key()
    assert store.get(k) == b""
    assert store.get_with_code(k) == (crescent.OBJECT_NOT_FOUND, b"")
    assert store.get_size(k) == crescent.OBJECT_NOT_FOUND


def test_is_exist(store):
    k = key()
    assert store.is_exist(k) == 0
    store.put(k, b"x")
    assert store.is_exist(k) == 1
    assert store.is_exist("") == crescent.INVALID_KEY
    assert store.is_exist("x" * 100000) < 0


def test_batch_is_exist(store):
    a, b = key("a"), key("b")
    store.put(a, b"x")
    assert store.batch_is_exist([a, b, a]) == [1, 0, 1]
    assert store.batch_is_exist([]) == []


def test_remove_and_force(store):
    k = key()
    assert store.put(k, b"value") == 0
    assert store.remove(k) == 0
    assert store.is_exist(k) == 0
    assert store.remove(k) == crescent.OBJECT_NOT_FOUND
    # A get leaves a read lease; force removes regardless.
    store.put(k, b"value")
    assert store.get(k) == b"value"
    rc = store.remove(k)
    assert rc in (0, -7)  # 0, or OBJECT_LEASED while the lease runs
    assert store.remove(k, force=True) in (0, crescent.OBJECT_NOT_FOUND)
    assert store.is_exist(k) == 0


def test_remove_all(store):
    keys = [key() for _ in range(3)]
    for k in keys:
        store.put(k, b"v")
    assert store.remove_all(force=True) >= 3
    assert store.batch_is_exist(keys) == [0, 0, 0]


def test_put_batch_get_batch(store):
    keys = [key() for _ in range(4)]
    values = [bytes([i]) * (100 + i) for i in range(4)]
    assert store.put_batch(keys, values) == 0
    assert store.get_batch(keys) == values
    assert store.get_batch([keys[0], key("missing")]) == [values[0], b""]
    assert store.put_batch(keys[:2], values[:1]) == crescent.INVALID_ARGUMENT
    assert store.put_batch(keys[:1], values[:1]) == crescent.OBJECT_ALREADY_EXISTS


def test_replicate_config(store):
    seg = store.get_stats()["segments"][0]["name"]
    cfg = crescent.ReplicateConfig(replica_num=1, with_soft_pin=True, preferred_segment=seg)
    assert store.put(key(), b"soft", cfg) == 0
    cfg = crescent.ReplicateConfig()
    cfg.with_hard_pin = True
    cfg.preferred_segments = [seg]
    assert store.put_batch([key()], [b"hard"], cfg) == 0
    with pytest.raises(ValueError):
        store.put(key(), b"x", crescent.ReplicateConfig(replica_num=0))
    with pytest.raises(TypeError):
        store.put(key(), b"x", {"replica_num": 1})


# ---- registered buffers ----

def test_register_unregister(store):
    arr = np.zeros(4096, dtype=np.uint8)
    assert store.register_buffer(arr) == 0
    assert store.register_buffer(arr) == crescent.INVALID_ARGUMENT  # overlaps itself
    assert store.unregister_buffer(arr) == 0
    assert store.unregister_buffer(arr) == crescent.BUFFER_NOT_REGISTERED
    # An int address needs a size; then it registers like an array.
    assert store.register_buffer(arr.ctypes.data, arr.nbytes) == 0
    assert store.unregister_buffer(arr.ctypes.data) == 0
    with pytest.raises(ValueError):
        store.register_buffer(arr.ctypes.data)
    with pytest.raises(ValueError):
        store.register_buffer(arr, arr.nbytes + 1)
    with pytest.raises(TypeError):
        store.register_buffer("not a buffer", 10)


def test_register_bad_pointers_fail_cleanly(store):
    assert store.register_buffer(0, 4096) == crescent.INVALID_ARGUMENT
    assert store.register_buffer(8, 4096) == crescent.INVALID_ARGUMENT  # unmapped page
    arr = np.zeros(16, dtype=np.uint8)
    assert store.register_buffer(arr.ctypes.data, 1 << 46) == crescent.INVALID_ARGUMENT
    assert store.register_buffer(arr, 0) == crescent.INVALID_ARGUMENT
    with pytest.raises(ValueError):
        store.register_buffer(-1, 10)


def test_batch_put_from_get_into_numpy(store, buf):
    keys = [key() for _ in range(3)]
    pages = [buf[i * 4096:(i + 1) * 4096] for i in range(6)]
    for i, p in enumerate(pages[:3]):
        p[:] = i + 1
    assert store.batch_put_from(keys, pages[:3], [4096] * 3) == [0, 0, 0]
    assert store.batch_get_into(keys, pages[3:], [4096] * 3) == [4096] * 3
    for i in range(3):
        assert (pages[3 + i] == i + 1).all()
    # sizes default to each array's nbytes; int addresses work too.
    k = key()
    assert store.batch_put_from([k], [pages[0]]) == [0]
    assert store.batch_get_into([k], [pages[5].ctypes.data], [4096]) == [4096]


def test_batch_put_from_get_into_torch(store):
    arena = torch.zeros(8192, dtype=torch.float16)
    assert store.register_buffer(arena) == 0
    try:
        src, dst = arena[:4096], arena[4096:]
        src.copy_(torch.linspace(-1, 1, 4096, dtype=torch.float16))
        k = key()
        assert store.batch_put_from([k], [src]) == [0]
        assert store.batch_get_into([k], [dst]) == [8192]
        assert torch.equal(src, dst)
        with pytest.raises(ValueError):
            store.batch_get_into([k], [arena.view(2, 4096)[:, :10]])  # not contiguous
    finally:
        assert store.unregister_buffer(arena) == 0


def test_unregistered_buffer_is_a_negative_code(store, buf):
    loose = np.ones(4096, dtype=np.uint8)
    k = key()
    assert store.batch_put_from([k], [loose]) == [crescent.BUFFER_NOT_REGISTERED]
    assert store.is_exist(k) == 0
    assert store.batch_put_from([k], [buf[:4096]]) == [0]
    assert store.batch_get_into([k], [loose]) == [crescent.BUFFER_NOT_REGISTERED]


def test_bad_batch_arguments(store, buf):
    k = key()
    assert store.batch_put_from([k], [buf[:100]]) == [0]
    assert store.batch_get_into([k], [buf[:50]]) == [crescent.BUFFER_TOO_SMALL]
    assert store.batch_get_into([key()], [buf[:100]]) == [crescent.OBJECT_NOT_FOUND]
    assert store.batch_put_from([key()], [0], [100]) == [crescent.INVALID_ARGUMENT]
    assert store.batch_get_into([k], [0], [100]) == [crescent.INVALID_ARGUMENT]
    assert store.batch_put_from([key(), key()], [buf[:10]]) == [crescent.INVALID_ARGUMENT] * 2
    assert store.batch_get_into([k], [buf[:10], buf[10:20]]) == [crescent.INVALID_ARGUMENT]
    with pytest.raises(ValueError):
        store.batch_put_from([key()], [buf[:10]], [10, 20])
    with pytest.raises(ValueError):
        store.batch_put_from([key()], [buf[:10]], [11])  # beyond the array
    with pytest.raises(ValueError):
        store.batch_put_from([key()], [buf.ctypes.data], [-1])


def test_multi_buffers(store, buf):
    k1, k2 = key(), key()
    buf[:300] = np.arange(300) % 251
    parts = [[buf[0:100], buf[100:300]], [buf[0:50]]]
    assert store.batch_put_from_multi_buffers([k1, k2], parts, [[100, 200], [50]]) == [0, 0]
    assert store.get(k1) == bytes(buf[:300])
    out = buf[4096:8192]
    dst = [[out[0:150], out[150:400]], [out[1000:1050]]]
    assert store.batch_get_into_multi_buffers([k1, k2], dst, [[150, 250], [50]]) == [300, 50]
    assert bytes(out[:300]) == bytes(buf[:300])
    assert bytes(out[1000:1050]) == bytes(buf[:50])
    # sizes may be omitted for arrays; errors are per key.
    loose = np.zeros(64, dtype=np.uint8)
    assert store.batch_get_into_multi_buffers([k1, k2], [[out[:100]], [loose]]) == [
        crescent.BUFFER_TOO_SMALL, crescent.BUFFER_NOT_REGISTERED]
    assert store.batch_put_from_multi_buffers([key()], [[loose]]) == [
        crescent.BUFFER_NOT_REGISTERED]
    assert store.batch_put_from_multi_buffers([key()], [[]], [[]]) == [crescent.INVALID_ARGUMENT]
    assert store.batch_get_into_multi_buffers([k1, k2], [[out]]) == [crescent.INVALID_ARGUMENT] * 2
    assert store.batch_get_into_multi_buffers([key()], [[out]]) == [crescent.OBJECT_NOT_FOUND]


# ---- prefix extras ----

def test_prefix_chain(store, buf):
    pages = [key("page") for _ in range(5)]
    src = [buf[i * 1024:(i + 1) * 1024] for i in range(5)]
    for i, s in enumerate(src):
        s[:] = 10 + i
    assert store.batch_put_chain_from(pages[:4], src[:4]) == [0] * 4
    assert store.batch_query_prefix(pages) == 4
    assert store.batch_query_prefix([key("none")] + pages) == 0
    assert store.batch_query_prefix([]) == 0
    assert store.batch_get_prefix_into([], []) == 0
    dst = [buf[65536 + i * 1024:65536 + (i + 1) * 1024] for i in range(5)]
    assert store.batch_get_prefix_into(pages, dst) == 4
    for i in range(4):
        assert (dst[i] == 10 + i).all()
    # A hole ends the prefix.
    assert store.remove(pages[2], force=True) == 0
    assert store.batch_query_prefix(pages) == 2
    assert store.batch_get_prefix_into(pages, dst) == 2


def test_prefix_errors(store, buf):
    pages = [key("page") for _ in range(3)]
    loose = np.zeros(1024, dtype=np.uint8)
    # One unregistered page refuses the whole chain.
    rc = store.batch_put_chain_from(pages, [buf[:1024], loose, buf[1024:2048]])
    assert rc[1] == crescent.BUFFER_NOT_REGISTERED
    assert all(r < 0 for r in rc)
    assert store.batch_query_prefix(pages) == 0
    assert store.batch_put_chain_from(pages, [buf[:1024]] * 3) == [0] * 3
    assert store.batch_get_prefix_into(pages, [loose] * 3) == crescent.BUFFER_NOT_REGISTERED
    assert store.batch_get_prefix_into(pages, [buf[:10]] * 3) == crescent.BUFFER_TOO_SMALL
    assert store.batch_get_prefix_into(pages, [buf[:1024]]) == crescent.INVALID_ARGUMENT


# ---- stats and lifecycle ----

def corrupt_in_node(pid, value):
    """Flips a byte of every copy of `value` in the segment memory of store process
    `pid`: a stray write the data plane never sees. The node's memfd is sealed against
    writable mappings, so this writes through /proc/PID/mem at the node's own (writable)
    mapping. Returns how many copies it changed."""
    changed = 0
    with open("/proc/%d/maps" % pid) as maps:
        regions = [line.split() for line in maps if "/memfd:" in line]
    with open("/proc/%d/mem" % pid, "r+b", buffering=0) as mem:
        for fields in regions:
            if fields[1] != "rw-s":
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            mem.seek(start)
            data = mem.read(end - start)
            at = data.find(value)
            while at >= 0:
                mem.seek(start + at + len(value) // 2)
                mem.write(bytes([data[at + len(value) // 2] ^ 0xFF]))
                changed += 1
                at = data.find(value, at + 1)
    return changed


def test_corrupt_value_is_checksum_mismatch_never_wrong_bytes(store, serve):
    k = key("corrupt")
    value = np.random.default_rng(7).integers(0, 256, 200_000, dtype=np.uint8).tobytes()
    assert store.put(k, value) == 0
    assert store.get(k) == value
    assert corrupt_in_node(serve.proc.pid, value) == 1
    code, got = store.get_with_code(k)
    assert code == crescent.CHECKSUM_MISMATCH
    assert crescent.error_name(code) == "CHECKSUM_MISMATCH"
    assert got == b""
    # Its only replica was bad: its node confirms the reader's report and the
    # master drops the object, in its next maintenance pass.
    deadline = time.monotonic() + 10
    while store.is_exist(k) != 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert store.is_exist(k) == 0
    assert store.get_with_code(k)[0] == crescent.OBJECT_NOT_FOUND


def test_get_stats(store, serve):
    k = key()
    store.put(k, b"x" * 1000)
    s = store.get_stats()
    assert s["objects"] >= 1
    assert s["capacity_bytes"] == 64 << 20
    assert s["used_bytes"] >= 1000
    assert len(s["segments"]) == 1
    assert set(s["segments"][0]) == {"name", "owner_node", "endpoint", "capacity", "used", "tier"}
    assert s["segments"][0]["tier"] == "dram"
    assert isinstance(s["counters"], dict)
    assert s["master_address"] == serve.address
    assert s["local_segment"] is None


def test_client_stats_count_this_clients_calls(store):
    before = store.get_stats()["client"]
    keys = [key() for _ in range(3)]
    for k in keys:
        assert store.put(k, b"y" * 100) == 0
    assert store.get(keys[0]) == b"y" * 100
    assert store.get("absent-" + key()) == b""
    after = store.get_stats()["client"]
    put, get = after["ops"]["put"], after["ops"]["get"]
    assert put["calls"] - before["ops"]["put"]["calls"] == 3
    assert put["bytes"] - before["ops"]["put"]["bytes"] == 300
    assert get["calls"] - before["ops"]["get"]["calls"] == 2
    assert get["failed_keys"] - before["ops"]["get"]["failed_keys"] == 1
    assert 0 < get["p50_seconds"] <= get["p99_seconds"]
    for name in ("put_retries", "shm_fallbacks", "replica_fallbacks", "checksum_mismatches",
                 "copy_ahead_kept", "copy_ahead_discarded", "shm_mapped_bytes",
                 "shm_warmed_bytes"):
        assert after[name] >= 0
    assert after["shm_warmed_bytes"] <= after["shm_mapped_bytes"]
    text = store.client_metrics()
    assert "# TYPE crescent_client_op_duration_seconds histogram" in text
    assert 'crescent_client_op_duration_seconds_count{op="put"}' in text


def test_closed_store(serve):
    store = connect(serve.address)
    arr = np.zeros(4096, dtype=np.uint8)
    assert store.register_buffer(arr) == 0
    k = key()
    assert store.put(k, b"x") == 0
    assert store.close() == 0
    assert store.closed
    assert store.close() == 0  # idempotent
    C = crescent.CLOSED
    assert store.put(key(), b"x") == C
    assert store.get(k) == b""
    assert store.get_with_code(k) == (C, b"")
    assert store.get_batch([k, k]) == [b"", b""]
    assert store.put_batch([k], [b"x"]) == C
    assert store.is_exist(k) == C
    assert store.batch_is_exist([k, k]) == [C, C]
    assert store.remove(k) == C
    assert store.remove_all() == C
    assert store.get_size(k) == C
    assert store.register_buffer(arr) == C
    assert store.unregister_buffer(arr) == C
    assert store.batch_put_from([k], [arr]) == [C]
    assert store.batch_get_into([k], [arr]) == [C]
    assert store.batch_put_chain_from([k], [arr]) == [C]
    assert store.batch_put_from_multi_buffers([k], [[arr]]) == [C]
    assert store.batch_get_into_multi_buffers([k], [[arr]]) == [C]
    assert store.batch_query_prefix([k]) == C
    assert store.batch_get_prefix_into([k], [arr]) == C
    with pytest.raises(crescent.CrescentError) as e:
        store.get_stats()
    assert e.value.code == C
    # A never set-up store behaves the same way.
    assert crescent.Store().put(key(), b"x") == C
    # ...and the key written before close is still there for others.
    other = connect(serve.address)
    assert other.get(k) == b"x"
    other.remove(k, force=True)
    other.close()


def test_setup_twice_and_context_manager(serve):
    with connect(serve.address) as store:
        with pytest.raises(crescent.CrescentError):
            store.setup("localhost", "", 0, 0, "tcp", "", serve.address)
        assert store.put(key(), b"x") == 0
    assert store.closed


def test_setup_unreachable_master_fails_fast():
    store = crescent.Store()
    start = time.monotonic()
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 0, 0, "tcp", "", "127.0.0.1:1", rpc_timeout_ms=500,
                    rpc_attempts=2)
    assert e.value.code in (crescent.UNAVAILABLE, crescent.TIMEOUT)
    assert "127.0.0.1:1" in str(e.value)
    assert time.monotonic() - start < 10
    assert store.closed


def test_setup_silent_master_times_out_without_holding_the_gil():
    # A socket that accepts but never speaks gRPC: setup must give up at its
    # deadline, and other Python threads must run meanwhile.
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    address = "127.0.0.1:%d" % listener.getsockname()[1]
    errors = []

    def attempt():
        try:
            crescent.Store().setup("localhost", "", 0, 0, "tcp", "", address,
                                   rpc_timeout_ms=1500, rpc_attempts=1)
        except crescent.CrescentError as e:
            errors.append(e)

    t = threading.Thread(target=attempt)
    start = time.monotonic()
    t.start()
    spins = 0
    while t.is_alive() and time.monotonic() - start < 20:
        spins += 1
    t.join()
    listener.close()
    assert len(errors) == 1 and errors[0].code in (crescent.TIMEOUT, crescent.UNAVAILABLE)
    assert time.monotonic() - start < 15
    assert spins > 10000  # this thread kept running while setup blocked


def test_setup_with_segment_needs_secret(bare_master, monkeypatch):
    monkeypatch.delenv("CRESCENT_SECRET_FILE", raising=False)
    monkeypatch.delenv("CRESCENT_SECRET", raising=False)
    store = crescent.Store()
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 16 << 20, 0, "tcp", "", bare_master.address)
    assert "CRESCENT_SECRET" in str(e.value)
    assert store.closed


def test_setup_contributes_segment(bare_master, secret_file, monkeypatch):
    monkeypatch.setenv("CRESCENT_SECRET_FILE", str(secret_file))
    # Its put retries for 0.2 s, not the default 5 s, before it gives up.
    observer = connect(bare_master.address, put_retry_ms=200)
    assert observer.get_stats()["segments"] == []
    assert observer.put(key(), b"x") < 0  # no space anywhere yet

    store = crescent.Store()
    assert store.setup("localhost", "", 16 << 20, 0, "tcp", "", bare_master.address) == 0
    stats = store.get_stats()
    assert stats["local_segment"] is not None
    assert [s["name"] for s in stats["segments"]] == [stats["local_segment"]]
    assert stats["capacity_bytes"] == 16 << 20
    k = key()
    assert store.put(k, b"y" * 4096) == 0
    assert observer.get(k) == b"y" * 4096  # another client reads our segment

    store.close()
    assert observer.get_stats()["segments"] == []  # unmounted on close
    assert observer.is_exist(k) == 0
    observer.close()


def test_error_names():
    assert crescent.error_name(0) == "OK"
    assert crescent.error_name(crescent.OBJECT_NOT_FOUND) == "OBJECT_NOT_FOUND"
    assert crescent.error_name(crescent.CLOSED) == "CLOSED"
    assert crescent.CHECKSUM_MISMATCH == -26
    assert crescent.error_name(crescent.CHECKSUM_MISMATCH) == "CHECKSUM_MISMATCH"
    assert crescent.error_name(-999).startswith("UNKNOWN")
    assert crescent.MooncakeDistributedStore is crescent.Store


def test_get_stats_shows_the_persistent_tier(tmp_path):
    """A serve with a file-backed tier: get_stats lists it, and the tier counters."""
    from conftest import Server
    server = Server(["serve", "--port", "0", "--http-port", "0", "--segment-size", "4MiB",
                     "--pmem", "%s:16MiB" % (tmp_path / "tier.pmem")])
    try:
        store = connect(server.address)
        values = {key("tier"): bytes([i]) * (256 << 10) for i in range(24)}  # 6 MiB: past DRAM
        for k, v in values.items():
            assert store.put(k, v) == 0
        for k, v in values.items():
            assert store.get(k) == v
        s = store.get_stats()
        tiers = sorted(seg["tier"] for seg in s["segments"])
        assert tiers == ["dram", "pmem"]
        pmem = [seg for seg in s["segments"] if seg["tier"] == "pmem"][0]
        assert pmem["capacity"] == (16 << 20) - 4096
        assert pmem["used"] > 0
        c = s["counters"]
        assert c['crescent_tier_moves_total{direction="demote"}'] > 0
        assert c['crescent_tier_reads_total{tier="pmem"}'] > 0
        store.close()
    finally:
        server.stop()
