"""Fixtures: a real `crescent serve` (master + one 64 MiB store node) for the
session, a bare `crescent master` with a cluster secret for the segment tests,
a small `crescent serve` with a known secret for clients that contribute memory
(the engines' Mooncake default), and a connected Store per test.

The binaries come from $CRESCENT_BUILD (default: build/ at the repository root),
the same tree whose build/python is on PYTHONPATH under `make test-python`.
"""

import os
import re
import signal
import subprocess
import threading
from pathlib import Path

import sys

import pytest

# The pure-Python packages of the HiCache adapter tests and the E2E harness
# (crescent_e2e) live in python/; the crescent package itself, with
# crescent.hicache copied in, comes from build/python (PYTHONPATH).
_PY = str(Path(__file__).resolve().parents[2] / "python")
if _PY not in sys.path:
    sys.path.append(_PY)
# SGLang's storage interface, as a stand-in (sglang_standin/sglang/__init__.py):
# first on the path, so crescent.hicache meets it as it would meet SGLang.
_SGLANG = str(Path(__file__).resolve().parent / "sglang_standin")
if _SGLANG not in sys.path:
    sys.path.insert(0, _SGLANG)

import crescent  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CRESCENT_BUILD", REPO / "build"))
CRESCENT = BUILD / "bin" / "crescent"
ADDRESS_RE = re.compile(r"master \(gRPC\) listening on (\S+?)(?:,| and|$)")


class Server:
    """A crescent subprocess; `address` is the master's host:port it printed.
    `binary` is the command that runs crescent (default: the build tree's)."""

    def __init__(self, args, env=None, timeout=60, binary=CRESCENT, cwd=None):
        if not Path(binary).exists():
            pytest.fail("%s is missing: run `make build` first" % binary)
        self.proc = subprocess.Popen([str(binary), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd)
        self.address = None
        self.output = []
        ready = threading.Event()

        def pump():
            # Keep draining stdout for the process's life so it never blocks on a full pipe.
            for line in self.proc.stdout:
                self.output.append(line)
                m = ADDRESS_RE.search(line)
                if m:
                    self.address = m.group(1)
                if "ready" in line:
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(timeout) or self.address is None or self.proc.poll() is not None:
            self.stop()
            pytest.fail("crescent %s did not start:\n%s" % (" ".join(args), "".join(self.output)))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def serve():
    server = Server(["serve", "--port", "0", "--http-port", "0", "--segment-size", "64MiB"])
    yield server
    server.stop()


@pytest.fixture(scope="session")
def secret_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("secret") / "cluster.secret"
    path.write_text("python-binding-test-secret-0123456789abcdef\n")
    return path


@pytest.fixture(scope="session")
def bare_master(secret_file):
    """A master with no store nodes: only a contributing Store gives it space."""
    server = Server(["master", "--port", "0", "--http-port", "0", "--secret-file",
                     str(secret_file), "--heartbeat-ttl-ms", "3000"])
    yield server
    server.stop()


@pytest.fixture(scope="session")
def secret_serve(tmp_path_factory):
    """A small all-in-one store (8 MiB of its own) started with a known cluster
    secret (`serve --secret-file`); `secret_file` names it, for clients that
    contribute memory."""
    path = tmp_path_factory.mktemp("mc") / "secret"
    path.write_text("mooncake-compat-test-secret-0123456789abcdef\n")
    server = Server(["serve", "--port", "0", "--http-port", "0", "--segment-size", "8MiB",
                     "--secret-file", str(path)])
    server.secret_file = str(path)
    yield server
    server.stop()


def connect(address, **kwargs):
    store = crescent.Store()
    store.setup("localhost", "", 0, 0, "tcp", "", address, **kwargs)
    return store


@pytest.fixture
def store(serve):
    s = connect(serve.address)
    yield s
    if not s.closed:
        s.remove_all(force=True)
    s.close()


# ---------------------------------------------------------------------------
# crescent.hicache / crescent_e2e fixtures.


@pytest.fixture(scope="session")
def crescent_master(serve):
    """The session `crescent serve`'s master address."""
    return serve.address


@pytest.fixture(params=["memory", "crescent"])
def make_backend(request):
    """make(pool, tp_rank=0, is_mla=False, **extra) -> CrescentHiCacheStorage.

    "crescent": over the session `crescent serve` through crescent.Store;
    "memory": over the in-process stand-in store (crescent_e2e.memstore).
    Every backend made in one test shares one store and one key prefix,
    unique to the test.
    """
    import uuid
    from types import SimpleNamespace

    from crescent.hicache import CrescentHiCacheStorage

    prefix = "t" + uuid.uuid4().hex[:12]
    shared = None
    master = None
    if request.param == "memory":
        from crescent_e2e.memstore import MemoryStore

        shared = MemoryStore()
    else:
        master = request.getfixturevalue("crescent_master")
    made = []

    def make(pool=None, tp_rank=0, is_mla=False, tp_size=2, **extra):
        extra = dict(extra)
        extra.setdefault("key_prefix", prefix)
        if master:
            extra["master_server_address"] = master
        cfg = SimpleNamespace(tp_rank=tp_rank, tp_size=tp_size, pp_rank=0, pp_size=1,
                              is_mla_model=is_mla, is_page_first_layout=True,
                              model_name="test", extra_config=extra)
        b = CrescentHiCacheStorage(cfg, pool, store=shared)
        made.append(b)
        return b

    make.kind = request.param
    make.store = shared
    yield make
    for b in made:
        b.close()
