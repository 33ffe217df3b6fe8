"""Longest-prefix gets against a real `crescent serve`: Store.get_longest_prefix
and `crescent get --longest-prefix` return the longest stored key that is a
prefix of the key asked (the key itself counts) with its bytes, and a miss as
the module's and the command's other gets answer one (docs/python.md)."""

import subprocess
import uuid

import crescent
from conftest import CRESCENT


def space():
    return "lp-%s/" % uuid.uuid4().hex[:12]


def cli_get(address, key, *extra):
    return subprocess.run([str(CRESCENT), "get", "--longest-prefix", key, "-", "--master",
                           address, *extra], capture_output=True, timeout=60)


def test_longest_stored_prefix_round_trips_bytes(store, serve):
    p = space()
    values = {p + "a": b"A" * 100, p + "a/b": bytes(range(256)) * 40, p + "a/b/c/d": b"D"}
    for k, v in values.items():
        assert store.put(k, v) == 0
    assert store.get_longest_prefix(p + "a/b/c") == (p + "a/b", values[p + "a/b"])
    assert store.get_longest_prefix(p + "a/b/c/d/e") == (p + "a/b/c/d", b"D")
    assert store.get_longest_prefix(p + "a/b") == (p + "a/b", values[p + "a/b"])  # itself
    assert store.get_longest_prefix(p + "ax") == (p + "a", values[p + "a"])
    # The command line gives the same bytes on stdout and the key on stderr.
    r = cli_get(serve.address, p + "a/b/c")
    assert r.returncode == 0, r.stderr
    assert r.stdout == values[p + "a/b"]
    assert r.stderr.decode().strip() == p + "a/b"


def test_a_miss_answers_as_other_gets_do(store, serve):
    p = space()
    assert store.put(p + "x/y", b"xy") == 0
    # Only a key that prefixes the key asked matches, not one it prefixes.
    assert store.get_longest_prefix(p + "x") is None
    code, stored, value = store.get_longest_prefix_with_code(p + "x")
    assert crescent.error_name(code) == "OBJECT_NOT_FOUND"
    assert (stored, value) == ("", b"")
    assert store.get(p + "x") == b""
    # `crescent get` exits 1 for a missing key, and so does --longest-prefix.
    plain = subprocess.run([str(CRESCENT), "get", p + "x", "-", "--master", serve.address],
                           capture_output=True, timeout=60)
    r = cli_get(serve.address, p + "x")
    assert plain.returncode == 1
    assert r.returncode == 1
    assert r.stdout == b""
    assert b"OBJECT_NOT_FOUND" in r.stderr


def test_bad_keys_are_refused_as_by_get(store):
    for bad in ["", "k" * 5000]:
        assert store.get_longest_prefix(bad) is None
        code, _, _ = store.get_longest_prefix_with_code(bad)
        assert crescent.error_name(code) == "INVALID_KEY"
        assert store.get_with_code(bad)[0] == code


def test_removed_and_closed(serve):
    store = crescent.Store()
    store.setup("localhost", "", 0, 0, "tcp", "", serve.address)
    p = space()
    assert store.put(p + "r", b"r") == 0
    assert store.put(p + "r/s", b"rs") == 0
    assert store.remove(p + "r/s", force=True) == 0
    assert store.get_longest_prefix(p + "r/s/t") == (p + "r", b"r")
    store.close()
    assert store.get_longest_prefix(p + "r/s/t") is None
    assert crescent.error_name(store.get_longest_prefix_with_code(p + "r")[0]) == "CLOSED"
