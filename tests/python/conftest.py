"""Shared fixtures for the Python tests (run: make test-python).

The tests import `crescent.hicache` and `crescent_e2e` from python/ and, when
it is built, the `crescent` binding from build/python. The "crescent" store
fixtures start `build/bin/crescent serve --port 0` and are skipped when the
binding or the binary is missing; the "memory" ones use the in-process
stand-in store and always run.
"""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
for p in (os.path.join(ROOT, "python"), os.path.join(ROOT, "build", "python")):
    if os.path.isdir(p) and p not in sys.path:
        sys.path.append(p)

# A built binding package (build/python/crescent) shadows python/crescent; let
# the package also find the pure-Python modules that live in python/crescent.
try:
    import crescent  # noqa: E402

    _src = os.path.join(ROOT, "python", "crescent")
    if hasattr(crescent, "__path__") and _src not in list(crescent.__path__):
        crescent.__path__.append(_src)
except ImportError:
    pass

import pytest  # noqa: E402

CRESCENT_BIN = os.path.join(ROOT, "build", "bin", "crescent")


def have_binding() -> bool:
    try:
        from crescent import Store  # noqa: F401
    except ImportError:
        return False
    return os.path.exists(CRESCENT_BIN)


@pytest.fixture(scope="session")
def crescent_master():
    if not have_binding():
        pytest.skip("crescent binding (build/python) or build/bin/crescent not built")
    from crescent_e2e.harness import CrescentServer

    server = CrescentServer(CRESCENT_BIN, segment_size="256MiB")
    yield server.address
    server.stop()


@pytest.fixture(params=["memory", "crescent"])
def make_backend(request):
    """make(pool, tp_rank=0, is_mla=False, **extra) -> CrescentHiCacheStorage.

    Every backend made in one test shares one store (the in-process stand-in,
    or one `crescent serve`) and one key prefix, unique to the test.
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
