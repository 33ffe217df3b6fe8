"""The fault injector: a schedule drawn from the seed before the run starts,
then played against the cluster in real time.

Each fault has a kind, a target, a start offset and a duration; a target never
has two faults at once in the schedule. Playing a fault is one thread: it
begins the fault at its offset, waits out the duration (or the end of the run),
then undoes it. Every fault played is recorded with the monotonic times at
which it began and ended; the checker uses the client freezes to discount the
time a frozen worker could not make progress.
"""

import random
import signal
import threading
import time

import ha
import master_faults

DURATIONS = {  # seconds, drawn uniformly
    "store_kill": (0.3, 3.0),    # kill -9, restart after the duration
    "store_stop": (0.5, 4.0),    # SIGSTOP ... SIGCONT
    "client_stop": (0.5, 5.0),   # a worker frozen mid-transfer, past the put timeout at times
    "master_kill": (0.2, 2.0),   # kill -9, restart on the same port
    "master_term": (0.2, 2.0),   # SIGTERM, restart on the same port
    "partition": (0.5, 4.0),     # a host's link down ... up
}
# With a durable cluster only (master_faults.py): the master (or a node) down this long.
DURATIONS.update({k: (0.2, 2.0) for k in master_faults.KINDS})
DURABLE_KINDS = list(master_faults.KINDS)
# Against a cluster of masters on etcd only (ha.py); naming any of them runs that cluster.
DURATIONS.update(ha.DURATIONS)
HA_KINDS = list(ha.KINDS)
KINDS = list(DURATIONS)
DEFAULT_KINDS = [k for k in KINDS if k not in HA_KINDS]
MASTER_KILLS = {"master_kill", "master_term", *DURABLE_KINDS} - {"store_copy"}
# The kinds that act on the one master of a single-master cluster (or on its files).
SINGLE_MASTER_KINDS = MASTER_KILLS | {"store_copy"}


def mixed_with_ha(kinds):
    """The kinds of a single master named beside a kind of a cluster of masters: such a mix
    has no cluster to run on."""
    kinds = set(kinds)
    return sorted(kinds & SINGLE_MASTER_KINDS) if kinds & set(HA_KINDS) else []
# Relative frequency: a master restart stops the whole control plane, so it comes rarer.
WEIGHTS = {"store_kill": 3, "store_stop": 3, "client_stop": 3, "master_kill": 1,
           "master_term": 1, "partition": 3, **{k: 1 for k in DURABLE_KINDS}, **ha.WEIGHTS}
EXTRA_S = {**master_faults.EXTRA_S, **ha.EXTRA_S}
TRANSFERS = ("put", "put_from", "get", "get_into")


def schedule(seed, seconds, kinds, targets, mean_gap):
    """[(offset, kind, target, duration)] for the run; `targets` maps kind -> names."""
    rng = random.Random(seed)
    busy_until = {}
    faults = []
    t = rng.expovariate(1.0 / mean_gap)
    while t < seconds:
        kind = rng.choices(kinds, [WEIGHTS[k] for k in kinds])[0]
        free = [x for x in targets[kind] if busy_until.get(x, 0.0) <= t]
        if free:
            target = rng.choice(free)
            duration = rng.uniform(*DURATIONS[kind])
            # A master fault occupies the whole cluster's control plane, one at a time.
            busy_until[target] = t + duration + 1.0 + EXTRA_S.get(kind, 0.0)
            faults.append((t, kind, target, duration))
        t += rng.expovariate(1.0 / mean_gap)
    return faults


class Injector:
    def __init__(self, cluster, topology, workers, op_logs, burst=None):
        self.cluster = cluster
        self.durable = master_faults.MasterFaults(self, burst)
        self.ha = ha.HaFaults(cluster) if isinstance(cluster, ha.HaCluster) else None
        self.topology = topology
        self.workers = workers  # name -> subprocess.Popen
        self.op_logs = op_logs  # name -> path of the worker's operation log
        self.daemons = {d.name: d for d in cluster.daemons()}
        self.locks = {}
        self.records = []
        self.stop = threading.Event()
        self.threads = []

    def targets(self):
        return {
            "store_kill": [d.name for d in self.cluster.stores],
            "store_stop": [d.name for d in self.cluster.stores],
            "client_stop": list(self.workers),
            "master_kill": ["master"],
            "master_term": ["master"],
            "partition": list(self.topology.hosts),
            "store_copy": [d.name for d in self.cluster.stores],
            **{k: ["master"] for k in MASTER_KILLS if k not in ("master_kill", "master_term")},
            **(self.ha.targets() if self.ha else {}),
        }

    def play(self, faults, t0):
        """Plays the schedule from monotonic time t0; returns when the last fault has begun
        or the run was stopped (then `finish` undoes what is still active)."""
        for offset, kind, target, duration in faults:
            if self.stop.wait(max(0.0, t0 + offset - time.monotonic())):
                return
            th = threading.Thread(target=self._one, args=(kind, target, duration), daemon=True)
            th.start()
            self.threads.append(th)

    def finish(self):
        self.stop.set()
        for th in self.threads:
            th.join()
        self.durable.finish()

    def _one(self, kind, target, duration):
        lock = self.locks.setdefault(target, threading.Lock())
        record = {"kind": kind, "target": target, "planned_s": round(duration, 3)}
        try:
            with lock:
                record["begin"] = time.monotonic()
                record["pid"] = self._begin(kind, target, record)
            self.stop.wait(duration)
            with lock:
                record["end"] = time.monotonic()
                record["ok"] = self._end(kind, target, record)
        except Exception as e:  # the harness failed, not the cluster: shown as a violation
            record.setdefault("end", time.monotonic())
            record.update(ok=False, violation="the fault itself failed: %r" % e)
        self.records.append(record)

    def _begin(self, kind, target, record):
        if kind in HA_KINDS:
            return self.ha.begin(kind, target, record)
        if kind in DURABLE_KINDS:
            pid = self.cluster.master.proc.pid if self.cluster.master.alive() else None
            self.durable.begin(kind, target, record)
            return pid
        if kind == "client_stop":
            proc = self.workers[target]
            self._await_transfer(target)
            if proc.poll() is None:
                proc.send_signal(signal.SIGSTOP)
            return proc.pid
        if kind == "partition":
            self.topology.partition(target, True)
            return None
        d = self.daemons[target]
        pid = d.proc.pid if d.alive() else None
        if kind == "master_kill":
            self.durable.kill_master(record)
        elif kind == "store_kill":
            d.kill()
        elif kind == "master_term":
            if d.alive():
                record.setdefault("kills", []).append([time.monotonic(), None])
            d.terminate()
        else:
            d.signal(signal.SIGSTOP)
        return pid

    def _end(self, kind, target, record):
        if kind in HA_KINDS:
            return self.ha.end(kind, target, record)
        if kind in MASTER_KILLS or kind == "store_copy":
            return self.durable.end(kind, target, record)
        if kind == "client_stop":
            proc = self.workers[target]
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
            return True
        if kind == "partition":
            self.topology.partition(target, False)
            return True
        d = self.daemons[target]
        if kind == "store_stop":
            d.signal(signal.SIGCONT)
            return True
        return d.start()

    def _await_transfer(self, worker, limit=1.0):
        """Waits (up to `limit` s) until the worker's last logged record begins a
        transfer, so that the freeze lands mid-transfer more often than by chance."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            with open(self.op_logs[worker], "rb") as f:
                f.seek(max(0, f.seek(0, 2) - 300))
                tail = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
            if b'"ev": "b"' in tail and any(b'"op": "%s"' % op.encode() in tail
                                            for op in TRANSFERS):
                return
            time.sleep(0.002)
