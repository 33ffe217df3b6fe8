"""The location cache through Python (docs/network.md, "Location cache"): off in
crescent.Store unless setup asks for it, on in the Mooncake-compatible store, and
a get it serves asks no master."""

import uuid

import pytest

from conftest import connect
from crescent.mooncake import MooncakeDistributedStore


def key():
    return "lc-" + uuid.uuid4().hex


def client_stats(store):
    return store.get_stats()["client"]


def test_off_by_default(store):
    k = key()
    assert store.put(k, b"v" * 4096) == 0
    for _ in range(3):
        assert store.get(k) == b"v" * 4096
    c = client_stats(store)
    assert c["location_hits"] == 0 and c["location_misses"] == 0
    store.remove(k)


def test_gets_are_served_from_the_cache(serve):
    s = connect(serve.address, location_cache=16)
    try:
        k = key()
        assert s.put(k, b"w" * 4096) == 0
        for _ in range(3):
            assert s.get(k) == b"w" * 4096
        c = client_stats(s)
        assert c["location_hits"] == 3
        assert sum(c["location_fallbacks"].values()) == 0
        s.remove(k)
        assert s.get(k) == b""
    finally:
        s.close()


def test_the_mooncake_store_turns_it_on(serve):
    mc = MooncakeDistributedStore()
    assert mc.setup("localhost", "P2PHANDSHAKE", 0, 16 << 20, "tcp", "", serve.address) == 0
    try:
        k = key()
        assert mc.put(k, b"x" * 4096) == 0
        assert mc.get(k) == b"x" * 4096
        assert client_stats(mc._store)["location_hits"] == 1
        mc.remove(k)
    finally:
        mc.close()
    off = MooncakeDistributedStore()
    assert off.setup("localhost", "P2PHANDSHAKE", 0, 16 << 20, "tcp", "", serve.address,
                     location_cache=0) == 0
    off.close()


def test_an_out_of_range_size_is_refused(serve):
    with pytest.raises(ValueError, match="location_cache"):
        connect(serve.address, location_cache=-1)
