"""A partition of the leader of a cluster of masters (docs/ha.md), step by step,
with real processes in network namespaces (ha.py's cluster: three etcd members
and three masters on hosts of their own, one store node, every command a real
`crescent` on the client host a).

The leader is cut off from etcd and the other masters (blackhole routes in its
namespace), while clients still reach it:
  - it stops acknowledging: a put sent straight to its address fails, and every
    one begun after its successor was published fails;
  - the majority elects a new leader, which serves puts (through etcd:// and at
    its own address);
  - healed, the old leader says it lost the leadership and follows the log as a
    standby (listed so by `crescent stat`) that listens on no port, having run
    itself again with nothing of the leader's left open, and its address refuses
    puts;
  - every acknowledged put, the old leader's included, reads back byte-identical;
  - with the other two masters killed, the old leader leads again and serves.
Deadlines are generous and only stop a hang; nothing is timed.
"""

import os
import re
import subprocess
import time

import pytest

import ha
import topology

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CRESCENT_BUILD", REPO / "build"))
CLIENT = "a"


@pytest.fixture
def cluster(tmp_path):
    os.environ.setdefault("CRESCENT_BIN", str(BUILD / "bin" / "crescent"))
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    try:
        topology.remove_stale()
        topo = topology.Netns(ha.HOSTS)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip("network namespaces unavailable: %s" % e)
    secret = tmp_path / "cluster.secret"
    secret.write_text("ha-partition-%s\n" % os.urandom(8).hex())
    cl = ha.HaCluster(topo, [(CLIENT, True)], str(tmp_path), str(secret), "64MiB")
    try:
        cl.start()
        yield cl
    finally:
        cl.stop()
        topo.teardown()


class Client:
    """`crescent put`/`get`/`stat` on the client host; values kept to read back."""

    def __init__(self, cl, tmp):
        self.cl = cl
        self.tmp = tmp
        self.acked = {}  # key -> bytes of every acknowledged put
        self.n = 0

    def _run(self, *args, timeout=60):
        argv = [os.environ["CRESCENT_BIN"], *args]
        return subprocess.run(self.cl.topology.hosts[CLIENT].command(argv), capture_output=True,
                              text=True, timeout=timeout)

    def put(self, key, master):
        self.n += 1
        value = os.urandom(4096 + 97 * (self.n % 50))
        path = self.tmp / ("v%d" % self.n)
        path.write_bytes(value)
        done = self._run("put", key, str(path), "--master", master, "--timeout-ms", "3000")
        if done.returncode == 0:
            self.acked[key] = value
        return done.returncode == 0

    def get(self, key, master):
        path = self.tmp / "got"
        done = self._run("get", key, str(path), "--master", master)
        return path.read_bytes() if done.returncode == 0 else None

    def stat(self):
        done = self._run("stat", "--master", self.cl.master_address)
        return done.stdout if done.returncode == 0 else ""


def _wait(what, predicate, timeout):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "not within %.0f s: %s" % (timeout, what)
        time.sleep(0.2)


def _listening(daemon):
    """The TCP sockets the daemon's process listens on (ss in its namespace)."""
    out = subprocess.run(daemon.host.command(["ss", "-Hltnp"]), capture_output=True, text=True,
                         check=True).stdout
    return [line for line in out.splitlines() if "pid=%d," % daemon.proc.pid in line]


def _listed_as(stat, grpc, role):
    return re.search(r"^\s+\S+\s+%s\s+%s\s" % (role, re.escape(grpc)), stat, re.M) is not None


def test_partitioned_leader_stops_acknowledging_and_rejoins_as_standby(cluster, tmp_path):
    cl = cluster
    c = Client(cl, tmp_path)
    old, rev = cl.await_leader(60)
    assert old is not None
    for i in range(10):
        assert c.put("before/%d" % i, cl.master_address), "put %d before the cut" % i
    assert c.put("direct/before", old.grpc), "a put straight to the leader"

    offset = os.path.getsize(old.log_path)
    cl.isolate(old, True)
    # Puts straight to the cut-off leader, until one fails and a successor is published.
    direct = []  # (began, acknowledged, key)
    deadline = time.monotonic() + ha.LEADER_TTL_MS / 1000 + 60
    while True:
        assert time.monotonic() < deadline, "the cut-off leader still acknowledges: %s" % direct
        key = "direct/cut/%d" % len(direct)
        began = time.monotonic()
        direct.append((began, c.put(key, old.grpc), key))
        if not direct[-1][1] and cl.await_leader(0, rev)[0] is not None:
            break
    new, new_rev = cl.await_leader(60, rev)
    assert new is not None and new is not old, "no new leader while the leader was cut off"
    seen = next(s["t"] for s in ha.read_watch(cl.watch_log) if s["rev"] == new_rev and s["grpc"])
    # Once it failed one it acknowledges none, nor any begun after its successor was seen.
    first_fail = next(i for i, d in enumerate(direct) if not d[1])
    assert not any(d[1] for d in direct[first_fail:]), direct
    assert not any(d[1] for d in direct if d[0] > seen), direct

    for i in range(10):
        assert c.put("after/%d" % i, cl.master_address), "put %d through the new leader" % i
    assert c.put("direct/new", new.grpc), "a put straight to the new leader"

    cl.isolate(old, False)
    _wait("the old leader rejoins as a standby", lambda: ha.rejoined(old, offset), 60)
    assert old.alive()
    # It ran itself again: nothing of the leader's is left open, not even a listening socket
    # (one would take connections that nobody accepts, so clients time out, not refused).
    assert _listening(old) == [], "the standby still listens"
    _wait("crescent stat lists the old leader as a standby",
          lambda: _listed_as(c.stat(), old.grpc, "standby"), 60)
    stat = c.stat()
    assert _listed_as(stat, new.grpc, "leader"), stat
    assert "3 masters" in stat, stat
    assert not c.put("direct/standby", old.grpc), "a standby acknowledged a put"

    for key, value in c.acked.items():
        assert c.get(key, cl.master_address) == value, key

    # The old leader, a standby again, can lead again.
    for m in cl.masters:
        if m is not old:
            m.kill()
    again, _ = cl.await_leader(60, new_rev)
    assert again is old, "the re-run old leader did not take over"
    assert c.put("direct/again", old.grpc), "a put straight to the old leader leading again"
    for key, value in c.acked.items():
        assert c.get(key, cl.master_address) == value, key
