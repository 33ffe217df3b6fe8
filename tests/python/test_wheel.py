"""The wheel: scripts/build_wheel.sh (what `make wheel` runs once the tree is
built) packages $CRESCENT_BUILD, pip installs it offline into a fresh venv,
and the venv alone serves a store and round-trips a put and a get.

Slow (a venv with pip, a 13 MB wheel: tens of seconds on a loaded machine).
Every command in the venv runs without PYTHONPATH and outside the repository,
so nothing can come from build/python.
"""

import os
import subprocess
import sys
import zipfile

from conftest import BUILD, REPO, Server

ROUND_TRIP = r"""
import os, sys
import crescent
here = os.path.dirname(crescent.__file__)
assert here.startswith(sys.prefix), (here, sys.prefix)
s = crescent.Store()
s.setup("localhost", "", 0, 0, "tcp", "", sys.argv[1])
value = os.urandom(100000)
assert s.put("wheel-key", value) == 0
assert s.get("wheel-key") == value
import crescent.hicache
s.close()
print("ROUND TRIP OK", here)
"""


def clean_env():
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONHOME", None)
    return env


def run(cmd, **kwargs):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600,
                       env=clean_env(), **kwargs)
    assert p.returncode == 0, "%s failed (%d):\n%s\n%s" % (cmd, p.returncode, p.stdout, p.stderr)
    return p.stdout


def test_wheel_installs_offline_and_serves(tmp_path):
    dist = tmp_path / "dist"
    out = run(["bash", REPO / "scripts" / "build_wheel.sh", BUILD, dist, sys.executable])
    wheels = list(dist.glob("crescent-*.whl"))
    assert len(wheels) == 1 and out.strip() == str(wheels[0])
    name = wheels[0].name
    # crescent-<version>-<python tag>-<abi tag>-<platform>.whl, for this interpreter.
    tag = "cp%d%d" % sys.version_info[:2]
    assert name.startswith("crescent-") and "-%s-%s-linux_" % (tag, tag) in name, name
    with zipfile.ZipFile(wheels[0]) as z:
        names = set(z.namelist())
        binary = z.getinfo("crescent/bin/crescent")
        assert (binary.external_attr >> 16) & 0o111, "the binary is not executable in the wheel"
        entry_points = z.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    # Every module of the package directory, the extensions and the binary.
    for f in os.listdir(BUILD / "python" / "crescent"):
        if f.endswith((".py", ".so")):
            assert "crescent/" + f in names, f
    assert "crescent = crescent._cli:main" in entry_points

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv])
    run([venv / "bin" / "pip", "install", "--no-index", "--no-cache-dir", wheels[0]])
    run([venv / "bin" / "python", "-c", "import crescent"], cwd=tmp_path)
    assert "serve" in run([venv / "bin" / "crescent", "--help"], cwd=tmp_path)

    server = Server(["serve", "--port", "0", "--http-port", "0", "--segment-size", "64MiB"],
                    env=clean_env(), binary=venv / "bin" / "crescent", cwd=tmp_path)
    try:
        # The entry point exec'd the binary the wheel installed.
        installed = os.path.realpath(os.readlink("/proc/%d/exe" % server.proc.pid))
        assert installed.startswith(str(venv)) and installed.endswith("crescent/bin/crescent")
        out = run([venv / "bin" / "python", "-c", ROUND_TRIP, server.address], cwd=tmp_path)
        assert "ROUND TRIP OK %s" % venv in out
    finally:
        server.stop()
