"""The chaos cluster of masters on etcd (docs/ha.md) and its faults.

Hosts:  e0 e1 e2: one etcd member each (one etcd cluster of three)
        m0 m1 m2: `crescent master --etcd ... --cluster chaos` each; one leads
        a b c:    the store nodes and the clients, as in the single-master cluster

Store nodes and clients name the cluster (`etcd://E0,E1,E2/chaos`) and follow its
leader. A watcher on host a (leader_watch.py) logs every change of the leader key
with its create revision (the fence), so the checker can line up the leaders with
the operations (ha_check.py), and the faults can find the leader.

Faults (each needs a leader to act on, one that no other fault holds; without one
published within 10 s it is recorded with a note and does nothing):
  leader_kill       kill -9 the leader master; restart it (it joins as a standby)
  leader_partition  blackhole routes in the leader's namespace to the etcd members and
                    the other masters (clients and nodes still reach it), for longer
                    than its TTL; then heal. It must stop acknowledging, a new leader
                    must be published, and the old one must print that it lost the
                    leadership and follow again as a standby (else a violation).
                    Namespaces only.
  etcd_kill         kill -9 one etcd member (of three, one at a time: with another
                    one down, it is recorded with a note and does nothing); restart it
"""

import base64
import json
import os
import random
import subprocess
import sys
import threading
import time

import cluster as cluster_mod

NAME = "chaos"
ETCD_HOSTS = ["e0", "e1", "e2"]
MASTER_HOSTS = ["m0", "m1", "m2"]
HOSTS = ETCD_HOSTS + MASTER_HOSTS + ["a", "b", "c"]
WATCH_HOST = "a"
LEADER_TTL_MS = 2000
KINDS = ["leader_kill", "leader_partition", "etcd_kill"]
DURATIONS = {"leader_kill": (0.5, 3.0),        # down, then restarted
             "leader_partition": (3.0, 6.0),   # cut off, past the 2 s lease
             "etcd_kill": (0.5, 4.0)}          # member down, then restarted
# Seconds a fault keeps its target busy beyond its duration: a new leader takes over
# (the TTL, its restore) and the old one follows again before the next leader fault.
EXTRA_S = {"leader_kill": 3.0, "leader_partition": 5.0, "etcd_kill": 1.0}
WEIGHTS = {k: 2 for k in KINDS}
REJOIN_S = 30.0  # how long a healed leader has to print that it follows as a standby
HERE = os.path.dirname(os.path.abspath(__file__))


def read_watch(path):
    """The leader watcher's records, in order."""
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.endswith("\n")]
    except FileNotFoundError:
        return []


class HaCluster:
    """Three etcd members, three masters of cluster NAME, the store nodes (as Cluster's,
    with persistent segments beside DRAM when `pmem_size`), and the leader watcher."""

    ETCD_CLIENT, ETCD_PEER, PORT = 2379, 2380, 50051

    def __init__(self, topology, stores, log_dir, secret_file, segment_size, pmem_size=None):
        self.topology = topology
        self.log_dir = log_dir
        self.pmem_size = pmem_size
        self.durability = "etcd"
        netns = topology.kind == "netns"

        def port(default):
            return default if netns else cluster_mod.free_port()

        clients, peers = [], []
        for h in ETCD_HOSTS:
            address = topology.hosts[h].address
            clients.append("%s:%d" % (address, port(self.ETCD_CLIENT)))
            peers.append("http://%s:%d" % (address, port(self.ETCD_PEER)))
        self.endpoints = ",".join(clients)
        initial = ",".join("%s=%s" % kv for kv in zip(ETCD_HOSTS, peers))
        self.etcd = [cluster_mod.Daemon(h, topology.hosts[h], [
            "/usr/bin/etcd", "--name", h, "--data-dir", os.path.join(log_dir, "etcd", h),
            "--listen-client-urls", "http://" + c, "--advertise-client-urls", "http://" + c,
            "--listen-peer-urls", p, "--initial-advertise-peer-urls", p,
            "--initial-cluster", initial, "--initial-cluster-state", "new",
            "--initial-cluster-token", "crchaos"], log_dir,
            ready_text="ready to serve client requests") for h, c, p in zip(ETCD_HOSTS, clients,
                                                                             peers)]
        crescent = os.environ["CRESCENT_BIN"]
        self.masters = []
        self.by_grpc = {}  # the address a master publishes -> its Daemon
        for h in MASTER_HOSTS:
            host = topology.hosts[h]
            grpc = "%s:%d" % (host.address, port(self.PORT))
            d = cluster_mod.Daemon(h, host, [
                crescent, "master", "--host", host.address, "--insecure",
                "--port", grpc.rsplit(":", 1)[1], "--http-port", "0",
                "--secret-file", secret_file, "--put-timeout-ms", "2000",
                "--heartbeat-ttl-ms", "3000", "--lease-ms", "2000", "--etcd", self.endpoints,
                "--cluster", NAME, "--leader-ttl-ms", str(LEADER_TTL_MS)], log_dir,
                ready_text="standby of cluster")
            d.grpc = grpc
            self.masters.append(d)
            self.by_grpc[grpc] = d
        self.master_address = "etcd://%s/%s" % (self.endpoints, NAME)
        self.stores = cluster_mod.make_stores(topology, stores, self.master_address, log_dir,
                                              secret_file, segment_size, pmem_size)
        self.watch_log = os.path.join(log_dir, "leader.watch")
        self.revisions_log = os.path.join(log_dir, "etcd.revisions")
        self._watch_stop = os.path.join(log_dir, "leader.watch.stop")
        self._watcher = None
        self.isolated = {}  # master name -> the hosts it is cut off from

    @property
    def stat_host(self):
        return self.topology.hosts[WATCH_HOST]

    def daemons(self):
        return [*self.etcd, *self.masters, *self.stores]

    def segment_count(self):
        return len(self.stores) * (2 if self.pmem_size else 1)

    def start(self):
        # Every member at once: a member is ready only once a quorum has formed.
        started = {}
        threads = [threading.Thread(target=lambda d=d: started.setdefault(d.name, d.start()))
                   for d in self.etcd]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for d in self.etcd:
            if not started.get(d.name):
                raise RuntimeError("%s did not start; see %s" % (d.name, d.log_path))
        open(self.watch_log, "w").close()
        with open(os.path.join(self.log_dir, "leader_watch.log"), "w") as log:
            self._watcher = subprocess.Popen(self.stat_host.command([
                sys.executable, os.path.join(HERE, "leader_watch.py"), "--endpoints",
                self.endpoints, "--cluster", NAME, "--log", self.watch_log, "--stop-file",
                self._watch_stop, "--revisions", self.revisions_log]), stdout=log,
                stderr=subprocess.STDOUT)
        for d in self.masters:
            if not d.start():
                raise RuntimeError("%s did not start; see %s" % (d.name, d.log_path))
        if self.await_leader(60)[0] is None:
            raise RuntimeError("no master of cluster %s leads after 60 s; see %s" % (
                NAME, self.watch_log))
        for s in self.stores:
            if not s.start():
                raise RuntimeError("%s did not start; see %s" % (s.name, s.log_path))

    def leader(self):
        """(the leader's Daemon or None, the leader key's create revision) as last seen."""
        seen = read_watch(self.watch_log)
        if not seen:
            return None, 0
        return self.by_grpc.get(seen[-1]["grpc"]), seen[-1]["rev"]

    def await_leader(self, timeout, newer_than=0, untouched=False):
        """The leader published with a create revision above `newer_than`, waited for. With
        `untouched`, one that no fault holds (not cut off) and that still says it leads: a
        fault may still hold the leader last seen, since a fault's duration can outlast its
        slot in the schedule, and a leader that stepped down (and runs again as a standby)
        is named by the key until its lease ends there."""
        deadline = time.monotonic() + timeout
        while True:
            d, rev = self.leader()
            if d is not None and rev > newer_than and not (
                    untouched and (d.name in self.isolated or not _leads(d))):
                return d, rev
            if time.monotonic() > deadline:
                return None, rev
            time.sleep(0.05)

    def log_batches(self, attempts=5):
        """[(create revision, value bytes)] of every batch of the cluster's log in etcd
        (`etcdctl get` on the watcher's host), or None when etcd does not answer in
        `attempts` tries 3 s apart (a member killed by the last fault may still be
        rejoining, and the cluster electing); then log_error says why."""
        self.log_error = ""
        for attempt in range(attempts):
            if attempt:
                time.sleep(3)
            done = subprocess.run(self.stat_host.command([
                "etcdctl", "--endpoints", self.endpoints, "--command-timeout", "60s", "get",
                "--prefix", "/crescent/%s/log/" % NAME, "-w", "json"]), capture_output=True,
                env={**os.environ, "ETCDCTL_API": "3"}, timeout=120)
            if done.returncode == 0:
                return [(int(kv["create_revision"]), base64.b64decode(kv.get("value", "")))
                        for kv in json.loads(done.stdout).get("kvs") or []]
            self.log_error = done.stderr.decode(errors="replace").strip()[-300:]
        return None

    def isolate(self, master, cut):
        """Cuts a master's host off from the etcd members and the other masters, or heals."""
        if cut:
            peers = [h for h in ETCD_HOSTS + MASTER_HOSTS if h != master.name]
            self.isolated[master.name] = peers  # first: a heal removes what was added
            self.topology.isolate(master.name, peers, True)
        elif master.name in self.isolated:
            self.topology.isolate(master.name, self.isolated.pop(master.name), False)

    def heal(self):
        for m in self.masters:
            self.isolate(m, False)
        for d in self.daemons():
            d.signal(cluster_mod.signal.SIGCONT)
            if not d.alive():
                d.start()

    def stop(self):
        open(self._watch_stop, "w").close()
        for d in [*self.stores, *self.masters, *self.etcd]:
            d.terminate()
        if self._watcher is not None:
            try:
                self._watcher.wait(10)
            except subprocess.TimeoutExpired:
                self._watcher.kill()
                self._watcher.wait()


class HaFaults:
    """begin/end of the HA kinds, run under the injector's lock of their target."""

    def __init__(self, cluster):
        self.cluster = cluster

    @staticmethod
    def targets():
        # One name for both leader kinds: one leader fault at a time. One etcd member
        # down at a time: two of three would stop the cluster, which is not this fault.
        return {"leader_kill": ["leader"], "leader_partition": ["leader"], "etcd_kill": ["etcd"]}

    def begin(self, kind, target, record):
        if kind == "etcd_kill":
            if not all(m.alive() for m in self.cluster.etcd):  # a fault outlasting its slot
                record["note"] = "another etcd member is down"
                return None
            member = random.Random(record["planned_s"]).choice(self.cluster.etcd)
            record["member"] = member.name
            pid = member.proc.pid if member.alive() else None
            member.kill()
            return pid
        master, rev = self.cluster.await_leader(10, untouched=True)
        if master is None:
            record["note"] = "no leader free of other faults published within 10 s"
            return None
        record.update(master=master.name, leader_rev=rev,
                      log_offset=os.path.getsize(master.log_path))
        pid = master.proc.pid if master.alive() else None
        if kind == "leader_kill":
            master.kill()
        else:
            self.cluster.isolate(master, True)
        return pid

    def end(self, kind, target, record):
        if kind == "etcd_kill":
            return "member" not in record or self._by_name(self.cluster.etcd,
                                                            record["member"]).start()
        if "master" not in record:
            return True
        master = self._by_name(self.cluster.masters, record["master"])
        if kind == "leader_kill":
            return master.start()
        self.cluster.isolate(master, False)
        successor, rev = self.cluster.await_leader(REJOIN_S, record["leader_rev"])
        if successor is None:
            record["violation"] = "no new leader published within %.0f s of the heal" % REJOIN_S
        deadline = time.monotonic() + REJOIN_S
        while time.monotonic() < deadline and not rejoined(master, record["log_offset"]):
            time.sleep(0.1)
        if not rejoined(master, record["log_offset"]):
            with open(master.log_path, errors="replace") as f:
                f.seek(record["log_offset"])
                tail = f.read()[-600:].replace("\n", " | ")
            record["violation"] = "the cut-off leader %s did not rejoin as a standby: %s" % (
                master.name, tail)
        record["successor"] = successor.name if successor else None
        return master.alive()

    @staticmethod
    def _by_name(daemons, name):
        return next(d for d in daemons if d.name == name)


def _leads(master):
    """Whether the master runs and its last word was that it leads ("ready" comes once a
    standby took over; it prints "standby of cluster" on each start, and again once it
    stepped down)."""
    if not master.alive():
        return False
    out = master.output()
    return out.rfind("\nready") > out.rfind("standby of cluster")


def rejoined(master, offset):
    """Whether the master printed, after `offset` in its log, that it lost the leadership
    and then that it follows the log again as a standby."""
    with open(master.log_path, errors="replace") as f:
        f.seek(offset)
        out = f.read()
    lost = out.find("lost the leadership")
    return lost >= 0 and out.find("standby of cluster", lost) >= 0
