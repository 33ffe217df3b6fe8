"""scripts/bench_multihost.py on real namespaces (root only): a tiny run
measures both sides and leaves no namespace behind, and neither does a run
stopped by SIGTERM in the middle."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CRESCENT_BUILD", REPO / "build"))
SCRIPT = REPO / "scripts" / "bench_multihost.py"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")


def namespaces_of(pid):
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in listing.splitlines()
            if line.startswith("crchaos-%d-" % pid)]


def start(*extra):
    return subprocess.Popen([sys.executable, str(SCRIPT), "--crescent",
                             str(BUILD / "bin" / "crescent"), "--segment-size", "64MiB",
                             "--size", "64KiB", "--batch", "4", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_tiny_run_measures_both_sides_and_removes_its_namespaces(tmp_path):
    out = tmp_path / "run.json"
    p = start("--reps", "1", "--seconds", "0.3", "--delays", "0", "--json", str(out))
    stdout, stderr = p.communicate(timeout=300)
    assert p.returncode == 0, stdout + stderr
    assert namespaces_of(p.pid) == []
    doc = json.loads(out.read_text())
    [row] = doc["rows"]
    assert row["delay"] == "0" and len(row["reps"]) == 1
    for k in ("raw_put", "raw_get", "crescent_put", "crescent_get", "put_ratio", "get_ratio"):
        assert row[k] > 0, row
    assert "raw put" in stdout


def test_sigterm_midway_removes_its_namespaces():
    p = start("--reps", "50", "--seconds", "1", "--delays", "0")
    try:
        deadline = time.monotonic() + 60
        while not namespaces_of(p.pid):
            assert p.poll() is None and time.monotonic() < deadline, p.communicate()
            time.sleep(0.05)
        time.sleep(2)  # into the cluster's start or the first measurement
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert namespaces_of(p.pid) == []
