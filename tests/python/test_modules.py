"""The two extensions (docs/python.md, "Two extensions"): `import crescent`
loads the client alone (`_crescent`); the in-process store node (`_node`) is
loaded only by a setup that contributes a segment."""

import os
import subprocess
import sys

import pytest

import crescent

_SCRIPT = r"""
import sys
import crescent

def loaded():
    return "crescent._node" in sys.modules

client = crescent.Store()
client.setup("localhost", "", 0, 0, "tcp", "", sys.argv[1])
assert client.put("modules-client-key", b"v") == 0 and client.get("modules-client-key") == b"v"
print("client only:", loaded())
node = crescent.Store()
node.setup("localhost", "", 16 << 20, 0, "tcp", "", sys.argv[2])
assert node.get_stats()["local_segment"] is not None
print("contributing:", loaded())
node.close()
client.close()
"""


def test_node_module_loads_only_to_contribute(serve, bare_master, secret_file):
    env = dict(os.environ, CRESCENT_SECRET_FILE=str(secret_file))
    r = subprocess.run([sys.executable, "-c", _SCRIPT, serve.address, bare_master.address],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["client only: False", "contributing: True"]


def test_segment_without_node_module_is_unsupported(bare_master, secret_file, monkeypatch):
    # As on a host where _node cannot load (libpmem2 missing): the client still
    # works, and a setup that asks for a segment says why it cannot have one.
    monkeypatch.setenv("CRESCENT_SECRET_FILE", str(secret_file))
    monkeypatch.setitem(sys.modules, "crescent._node", None)  # import fails
    monkeypatch.delattr(crescent, "_node", raising=False)
    store = crescent.Store()
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 16 << 20, 0, "tcp", "", bare_master.address)
    assert e.value.code == crescent.UNSUPPORTED
    assert "crescent._node" in str(e.value)
    assert store.closed
    assert store.setup("localhost", "", 0, 0, "tcp", "", bare_master.address) == 0
    store.close()


def test_setup_refuses_a_foreign_node_factory(bare_master):
    store = crescent.Store()
    with pytest.raises(TypeError, match="node_factory"):
        store._core.setup("localhost", bare_master.address, 16 << 20, 5000, 4, 10000, 5000,
                          object())
    assert store.closed
