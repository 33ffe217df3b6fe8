"""crescent.Store against a `crescent serve` with mutual TLS (docs/security.md,
"TLS"): setup(tls_ca=..., tls_cert=..., tls_key=...) puts and gets; without
tls_ca, or without a client certificate, setup raises CrescentError saying
why; a file that is no certificate is refused before any network work."""

import os
import subprocess
from pathlib import Path

import pytest

import crescent
from conftest import Server

_MAKE_CERTS = Path(__file__).resolve().parents[2] / "scripts" / "make_test_certs.sh"


@pytest.fixture(scope="module")
def tls_serve(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    subprocess.run([str(_MAKE_CERTS), str(d)], check=True, capture_output=True)
    server = Server(["serve", "--port", "0", "--http-port", "0", "--segment-size", "64MiB",
                     "--tls-cert", str(d / "server.crt"), "--tls-key", str(d / "server.key"),
                     "--tls-ca", str(d / "ca.crt")])
    yield server, d
    server.stop()


def test_setup_with_a_client_certificate_puts_and_gets(tls_serve):
    server, d = tls_serve
    store = crescent.Store()
    assert store.setup("localhost", "", 0, 0, "tcp", "", server.address,
                       tls_ca=str(d / "ca.crt"), tls_cert=str(d / "client.crt"),
                       tls_key=str(d / "client.key")) == 0
    try:
        value = os.urandom(100 * 1024)
        assert store.put("tls/py", value) == 0
        assert store.get("tls/py") == value
        assert store.is_exist("tls/py") == 1
    finally:
        store.remove_all(force=True)
        store.close()


def test_setup_without_tls_or_a_certificate_fails_clearly(tls_serve):
    server, d = tls_serve
    store = crescent.Store()
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 0, 0, "tcp", "", server.address, rpc_attempts=1)
    assert e.value.code == crescent.UNAVAILABLE
    assert "give this client --tls-ca" in str(e.value)
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 0, 0, "tcp", "", server.address, rpc_attempts=1,
                    tls_ca=str(d / "ca.crt"))
    assert e.value.code == crescent.UNAVAILABLE
    assert "no client certificate" in str(e.value)
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 0, 0, "tcp", "", server.address,
                    tls_ca=str(d / "client.key"))
    assert e.value.code == crescent.INVALID_ARGUMENT
    assert "holds no PEM certificate" in str(e.value)
