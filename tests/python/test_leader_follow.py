"""Store.setup with an etcd:// master address (docs/python.md): the store finds
the master that the cluster's leader key in etcd names (docs/ha.md, "Clients
follow the leader"). A real one-member etcd; the test writes the leader key
itself through etcd's JSON gateway, naming the session's masters."""

import base64
import json
import shutil
import socket
import subprocess
import time
import urllib.request
import uuid

import pytest

import crescent

ETCD = shutil.which("etcd") or "/usr/bin/etcd"
CLUSTER = "pytest"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Etcd:
    def __init__(self, data_dir):
        self.client = "127.0.0.1:%d" % free_port()
        peer = "http://127.0.0.1:%d" % free_port()
        url = "http://" + self.client
        self.proc = subprocess.Popen(
            [ETCD, "--name", "one", "--data-dir", str(data_dir), "--listen-client-urls", url,
             "--advertise-client-urls", url, "--listen-peer-urls", peer,
             "--initial-advertise-peer-urls", peer, "--initial-cluster", "one=" + peer],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                self.call("/v3/kv/range", {"key": self.b64("/")})
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail("etcd did not start")
                time.sleep(0.1)

    @staticmethod
    def b64(text):
        return base64.b64encode(text.encode()).decode()

    def call(self, path, body):
        req = urllib.request.Request("http://" + self.client + path, json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.load(r)

    def publish(self, grpc_address):
        value = "master_id=py\ngrpc=%s\nhttp=\n" % grpc_address
        self.call("/v3/kv/put", {"key": self.b64("/crescent/%s/leader" % CLUSTER),
                                 "value": self.b64(value)})

    def address(self):
        return "etcd://%s/%s" % (self.client, CLUSTER)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def etcd(tmp_path):
    e = Etcd(tmp_path / "etcd")
    yield e
    e.stop()


def test_setup_follows_the_leader_in_etcd(etcd, serve):
    etcd.publish(serve.address)
    store = crescent.Store()
    assert store.setup("localhost", "", 0, 0, "tcp", "", etcd.address()) == 0
    k = "follow-" + uuid.uuid4().hex
    assert store.put(k, b"z" * 1000) == 0
    assert store.get(k) == b"z" * 1000
    assert store.get_stats()["master_address"] == etcd.address()
    assert store.remove(k, force=True) == 0
    store.close()


def test_contributing_store_mounts_on_the_leader(etcd, bare_master, secret_file, monkeypatch):
    monkeypatch.setenv("CRESCENT_SECRET_FILE", str(secret_file))
    etcd.publish(bare_master.address)
    store = crescent.Store()
    assert store.setup("localhost", "", 16 << 20, 0, "tcp", "", etcd.address()) == 0
    stats = store.get_stats()
    assert [s["name"] for s in stats["segments"]] == [stats["local_segment"]]
    k = "follow-" + uuid.uuid4().hex
    assert store.put(k, b"y" * 4096) == 0
    assert store.get(k) == b"y" * 4096
    store.close()


def test_hicache_config_takes_an_etcd_master(etcd, serve):
    from types import SimpleNamespace

    from crescent.hicache import CrescentHiCacheStorage

    etcd.publish(serve.address)
    cfg = SimpleNamespace(tp_rank=0, tp_size=1, pp_rank=0, pp_size=1, is_mla_model=False,
                          is_page_first_layout=True, model_name="test",
                          extra_config={"master_server_address": etcd.address(),
                                        "key_prefix": "t" + uuid.uuid4().hex[:12]})
    backend = CrescentHiCacheStorage(cfg, None)
    assert backend.store.get_stats()["master_address"] == etcd.address()
    backend.close()


def test_malformed_and_unreachable_etcd_addresses():
    store = crescent.Store()
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 0, 0, "tcp", "", "etcd://127.0.0.1:2379")
    assert e.value.code == crescent.INVALID_ARGUMENT
    port = free_port()
    store = crescent.Store()
    with pytest.raises(crescent.CrescentError) as e:
        store.setup("localhost", "", 0, 0, "tcp", "", "etcd://127.0.0.1:%d/%s" % (port, CLUSTER),
                    rpc_timeout_ms=1000, rpc_attempts=2)
    assert e.value.code == crescent.UNAVAILABLE
    assert "127.0.0.1:%d" % port in str(e.value)
