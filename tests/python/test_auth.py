"""crescent.Store against a `crescent serve --auth-file` (docs/security.md):
setup(token=...) and $CRESCENT_TOKEN authenticate, the store then puts and
gets; without a token, or with one the master does not hold, setup raises
CrescentError UNAUTHENTICATED, saying why. A contributed segment's store node
mounts with node_token= (a token of the node role); with a client token it is
refused PERMISSION_DENIED, saying a node token is needed."""

import os
import subprocess

import pytest

import crescent
from conftest import CRESCENT, Server


def _add_token(auth_file, name, role="client"):
    out = subprocess.run([str(CRESCENT), "token", "add", "--auth-file", str(auth_file),
                          "--name", name, "--role", role],
                         check=True, capture_output=True, text=True).stdout
    return out.strip()


@pytest.fixture(scope="module")
def auth_serve(tmp_path_factory):
    auth_file = tmp_path_factory.mktemp("auth") / "auth"
    token = _add_token(auth_file, "py")
    server = Server(["serve", "--port", "0", "--http-port", "0", "--segment-size", "64MiB",
                     "--auth-file", str(auth_file)])
    yield server, token
    server.stop()


def test_setup_with_a_token_puts_and_gets(auth_serve):
    server, token = auth_serve
    store = crescent.Store()
    assert store.setup("localhost", "", 0, 0, "tcp", "", server.address, token=token) == 0
    try:
        value = os.urandom(200 * 1024)
        assert store.put("auth/py", value) == 0
        assert store.get("auth/py") == value
        assert store.is_exist("auth/py") == 1
    finally:
        store.remove_all(force=True)
        store.close()


def test_setup_takes_the_token_from_the_environment(auth_serve, monkeypatch):
    server, token = auth_serve
    monkeypatch.setenv("CRESCENT_TOKEN", token)
    store = crescent.Store()
    assert store.setup("localhost", "", 0, 0, "tcp", "", server.address) == 0
    store.close()


def test_setup_without_a_token_fails_clearly(auth_serve, monkeypatch):
    server, _ = auth_serve
    monkeypatch.delenv("CRESCENT_TOKEN", raising=False)
    store = crescent.Store()
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 0, 0, "tcp", "", server.address, rpc_attempts=1)
    assert e.value.code == crescent.UNAUTHENTICATED
    assert "refused this client" in str(e.value)
    assert "needs a token" in str(e.value)

    unknown = "py:" + "7" * 64
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 0, 0, "tcp", "", server.address, token=unknown)
    assert e.value.code == crescent.UNAUTHENTICATED
    assert "unknown token" in str(e.value)

    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 0, 0, "tcp", "", server.address, token="not a token")
    assert e.value.code == crescent.UNAUTHENTICATED
    assert "not a token" in str(e.value)
    assert store.closed


@pytest.fixture(scope="module")
def auth_master(tmp_path_factory, secret_file):
    """A master with an auth file and no store node: a client token and a node
    token for a contributed segment."""
    auth_file = tmp_path_factory.mktemp("auth-master") / "auth"
    client, node = _add_token(auth_file, "py-client"), _add_token(auth_file, "py-node", "node")
    server = Server(["master", "--port", "0", "--http-port", "0", "--secret-file",
                     str(secret_file), "--auth-file", str(auth_file)])
    yield server, client, node
    server.stop()


def test_a_contributed_segment_needs_a_node_token(auth_master, secret_file, monkeypatch):
    server, client, node = auth_master
    monkeypatch.setenv("CRESCENT_SECRET_FILE", str(secret_file))
    monkeypatch.delenv("CRESCENT_TOKEN", raising=False)
    store = crescent.Store()
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 16 << 20, 0, "tcp", "", server.address, token=client,
                    rpc_attempts=1)
    assert e.value.code == crescent.PERMISSION_DENIED
    assert "needs a token of the node role" in str(e.value)
    assert "node_token=" in str(e.value)

    assert store.setup("localhost", "", 16 << 20, 0, "tcp", "", server.address, token=client,
                       node_token=node) == 0
    try:
        value = os.urandom(100 * 1024)
        assert store.put("auth/own-segment", value) == 0
        assert store.get("auth/own-segment") == value
    finally:
        store.remove_all(force=True)
        store.close()
