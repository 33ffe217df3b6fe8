"""Session hints against a real `crescent serve`: Store.end_session,
MooncakeDistributedStore.end_session and `crescent end-session` mark the
stored objects they name, skip the keys not stored, refuse a bad key whole,
and are counted by the master and the client (docs/engines.md, "Session
hints")."""

import subprocess
import uuid

import crescent
from crescent import mooncake
from crescent.mooncake import MooncakeDistributedStore

from conftest import CRESCENT


def keys(n, tag="sh"):
    return ["%s-%s-%d" % (tag, uuid.uuid4().hex, i) for i in range(n)]


def master_count(store, name):
    return store.get_stats()["counters"].get(name, 0)


def test_end_session_marks_the_stored_objects_and_skips_the_rest(store):
    stored = keys(3)
    assert store.put_batch(stored, [b"page"] * 3) == 0
    calls = 'crescent_requests_total{op="end_session"}'
    items = 'crescent_request_items_total{op="end_session"}'
    before = (master_count(store, calls), master_count(store, items))
    absent = keys(2, "absent")
    assert store.end_session(stored + absent) == 3
    assert store.end_session(stored[:1] * 2) == 2  # a repeat counts again
    assert store.end_session(absent) == 0
    assert store.end_session([]) == 0  # nothing to send
    after = (master_count(store, calls), master_count(store, items))
    assert after[0] - before[0] == 3
    assert after[1] - before[1] == 5 + 2 + 2
    assert store.batch_is_exist(stored) == [1, 1, 1]  # a hint removes nothing
    assert store.get_batch(stored) == [b"page"] * 3
    ops = store.get_stats()["client"]["ops"]["end_session"]
    assert ops["calls"] >= 3 and ops["failed_keys"] == 0


def test_a_bad_key_refuses_the_whole_call(store):
    stored = keys(2)
    assert store.put_batch(stored, [b"x", b"y"]) == 0
    assert store.end_session(stored + [""]) == crescent.INVALID_KEY
    assert store.end_session(stored + ["k" * 5000]) == crescent.INVALID_KEY
    ops = store.get_stats()["client"]["ops"]["end_session"]
    assert ops["failed_keys"] >= 6


def test_many_keys_go_in_batches(store):
    stored = keys(300)
    assert store.put_batch(stored, [b"v"] * len(stored)) == 0
    assert store.end_session(stored * 20) == 6000  # more than one batch of the client's


def test_a_closed_store_answers_closed(serve):
    s = crescent.Store()
    s.setup("localhost", "", 0, 0, "tcp", "", serve.address)
    s.close()
    assert s.end_session(keys(1)) == crescent.CLOSED


def test_mooncake_module_answers_zero_or_its_code(serve):
    s = MooncakeDistributedStore()
    assert s.setup("localhost", "P2PHANDSHAKE", 0, 0, "tcp", "", serve.address) == 0
    try:
        stored = keys(2, "mc")
        assert s.put_batch(stored, [b"a", b"b"]) == 0
        assert s.end_session(stored + keys(1, "absent")) == 0
        assert s.end_session([""]) == mooncake.mooncake_code(crescent.INVALID_KEY) < 0
    finally:
        s.remove_all(True)
        s.close()


def test_cli_end_session(store, serve):
    stored = keys(2, "cli")
    assert store.put_batch(stored, [b"a", b"b"]) == 0

    def cli(*args):
        return subprocess.run([str(CRESCENT), "end-session", "--master", serve.address, *args],
                              capture_output=True, text=True, timeout=60)

    r = cli(*stored, "absent-" + uuid.uuid4().hex)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "marked 2\n"
    r = cli("")
    assert r.returncode == 2 and "INVALID_KEY" in r.stderr, r.stderr
    r = cli()
    assert r.returncode != 0  # KEY is required
    r = subprocess.run([str(CRESCENT), "end-session", "--help"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "session hint" in r.stdout
