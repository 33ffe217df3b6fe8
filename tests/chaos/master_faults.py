"""The faults that need a durable cluster (a master --data-dir and persistent
segments): master kills at chosen moments, a torn log tail, two restarts in a
row, and a node started on a copy of a persistent file.

Each fault's begin and end run under the injector's lock of their target, as
every fault does. Besides the injector's fields, a record may carry:
    kills:       [[t_kill, t_ready]], each master kill and the start that followed
                 (t_ready None while down, or when the start failed)
    torn_keys:   keys named by the log record a torn tail cut
    node_window: [begin, end] during which a store node lost its memory or its
                 heartbeats (the checker excuses DRAM losses then)
    violation:   what the fault saw go wrong
    note:        what it saw otherwise
"""

import glob
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import threading
import time

# How long a node stays stopped so that the master (heartbeat TTL 3 s) times it out.
TIMEOUT_STOP_S = 4.5
# A burst runs this long at most; the kill comes once it has ended a few operations.
BURST_S = 8.0
# Seconds a fault of these kinds occupies its target beyond its drawn duration (the schedule
# keeps the next fault on that target off until then).
EXTRA_S = {"master_timeout_kill": TIMEOUT_STOP_S + 1, "master_remount_kill": 2.0,
           "master_double": 2.0, "master_demote_kill": 2.0, "master_promote_kill": 2.0,
           "store_copy": 7.0}
LOG_HEADER = 16

KINDS = ["master_snapshot_kill", "master_timeout_kill", "master_remount_kill",
         "master_demote_kill", "master_promote_kill", "torn_tail", "master_double",
         "store_copy"]


class MasterFaults:
    def __init__(self, injector, burst):
        self.inj = injector
        self.cluster = injector.cluster
        self.burst = burst  # burst(mode) -> (Popen, ops path): a client burst on host a
        self.bursts = []

    # --- helpers ---------------------------------------------------------------------

    def kill_master(self, record):
        """kill -9, recorded when there was a master to kill."""
        if self.cluster.master.alive():
            record.setdefault("kills", []).append([time.monotonic(), None])
        self.cluster.master.kill()

    def start_master(self, record):
        m = self.cluster.master
        ok = m.start()  # at once when another fault restarted it meanwhile
        if record.get("kills") and record["kills"][-1][1] is None and ok:
            record["kills"][-1][1] = m.starts[-1]
        if not ok:
            record["violation"] = "master did not restart without --allow-empty-restore: " + \
                m.output()[-600:].replace("\n", " | ")
        return ok

    def finish(self):
        for proc, _ in self.bursts:
            try:
                proc.wait(BURST_S + 60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    # --- begin / end per kind ---------------------------------------------------------

    def begin(self, kind, target, record):
        return getattr(self, "_begin_" + kind)(target, record)

    def end(self, kind, target, record):
        if kind == "store_copy":
            return self.cluster.stores[int(target[5:])].start()
        return self.start_master(record)

    def _begin_master_snapshot_kill(self, target, record):
        done = subprocess.run(self.cluster.master.host.command(
            [os.environ["CRESCENT_BIN"], "snapshot", "--master", self.cluster.master_address]),
            capture_output=True, text=True, timeout=60)
        record["note"] = "snapshot rc %d" % done.returncode
        self.kill_master(record)

    def _begin_master_timeout_kill(self, target, record):
        # A node free of other faults, taken without waiting: this fault holds the master,
        # and a node's fault may be waiting for the master (a restart that must mount), so
        # waiting for the node here would keep the master down until that restart gave up.
        stores = list(self.cluster.stores)
        random.Random("%s-%s" % (record["planned_s"], target)).shuffle(stores)
        for store in stores:
            lock = self.inj.locks.setdefault(store.name, threading.Lock())
            if lock.acquire(blocking=False):
                break
        else:
            record["note"] = "every node busy: no node timed out"
            self.kill_master(record)
            return
        try:
            begin = time.monotonic()
            store.signal(signal.SIGSTOP)
            time.sleep(TIMEOUT_STOP_S)
            self.kill_master(record)
            store.signal(signal.SIGCONT)
        finally:
            lock.release()
        record["note"] = "%s stopped %.1f s" % (store.name, TIMEOUT_STOP_S)
        record["node_window"] = [begin, time.monotonic() + record["planned_s"]]

    def _begin_master_remount_kill(self, target, record):
        self.kill_master(record)
        if not self.start_master(record):
            return
        offsets = {s.name: os.path.getsize(s.log_path) for s in self.cluster.stores}
        deadline = time.monotonic() + 10
        seen = None
        while seen is None and time.monotonic() < deadline:
            for s in self.cluster.stores:
                with open(s.log_path, errors="replace") as f:
                    f.seek(offsets[s.name])
                    if "remounted" in f.read():
                        seen = s.name
                        break
            time.sleep(0.005)
        record["note"] = "killed after %s remounted" % seen if seen else "no remount in 10 s"
        self.kill_master(record)

    def _begin_master_double(self, target, record):
        self.kill_master(record)
        if self.start_master(record):
            self.kill_master(record)

    def _burst_kill(self, mode, record):
        proc, ops = self.burst(mode)
        self.bursts.append((proc, ops))
        deadline = time.monotonic() + BURST_S / 2
        while time.monotonic() < deadline and proc.poll() is None:
            with open(ops) as f:
                if f.read().count('"ev": "e"') >= 4:
                    break
            time.sleep(0.01)
        self.kill_master(record)

    def _begin_master_demote_kill(self, target, record):
        self._burst_kill("demote", record)

    def _begin_master_promote_kill(self, target, record):
        self._burst_kill("promote", record)

    def _begin_torn_tail(self, target, record):
        self.kill_master(record)
        logs = sorted(glob.glob(os.path.join(self.cluster.data_dir, "**", "log-*.crlog"),
                                recursive=True))
        if not logs:
            record["note"] = "no log file"
            return
        cut, keys = tear(logs[-1], random.Random(record["planned_s"]))
        record["torn_keys"] = keys
        record["note"] = "cut %d bytes of %s" % (cut, os.path.basename(logs[-1]))

    def _begin_store_copy(self, target, record):
        """A node started on a copy of a live node's file must not take its segment over; then
        the node itself is killed and restarted on a (consistent) copy, at a new path."""
        store = self.cluster.stores[int(target[5:])]
        path = self.cluster.pmem_path(store)
        copy = path + ".copy"
        shutil.copyfile(path, copy)
        argv = [copy + ":" + self.cluster.pmem_size if a.startswith(path + ":") else a
                for a in store.argv]
        argv[argv.index("--node-id") + 1] = store.name + "-copy"
        log_path = os.path.join(os.path.dirname(store.log_path), store.name + "-copy.log")
        # From here objects may be lost: those put into the copy node's DRAM segment, and
        # then the node's own DRAM ones.
        begin = time.monotonic()
        with open(log_path, "a") as log:
            impostor = subprocess.Popen(store.host.command(argv), stdout=log,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and impostor.poll() is None:
            time.sleep(0.05)
        impostor.kill()
        impostor.wait()
        with open(log_path, errors="replace") as f:
            out = f.read()
        if "ready" in out and store.alive():
            record["violation"] = "a node on a copy of %s's live file mounted: %s" % (
                store.name, out[-400:].replace("\n", " | "))
        record["note"] = "copy node: " + (out.strip().splitlines() or ["(no output)"])[-1][:200]
        os.rename(log_path, log_path + ".%d" % int(record["begin"] * 1000))
        store.kill()
        new = path + ".n" if not path.endswith(".n") else path[:-2]
        shutil.copyfile(path, new)
        os.remove(path)
        os.remove(copy)
        self.cluster.set_pmem_path(store, new)
        record["node_window"] = [begin, time.monotonic() + record["planned_s"]]


def tear(path, rng):
    """Cuts a few bytes off the last record of a log file; (bytes cut, keys the record names)."""
    with open(path, "rb") as f:
        data = f.read()
    pos, last = LOG_HEADER, None
    while pos + 8 <= len(data):
        length = struct.unpack_from("<I", data, pos)[0]
        if pos + 8 + length > len(data):
            break
        last = (pos, length)
        pos += 8 + length
    if last is None:
        return 0, []
    start, length = last
    cut = rng.randint(1, min(12, 8 + length - 1)) + (len(data) - pos)
    payload = data[start + 8:start + 8 + length]
    with open(path, "r+b") as f:
        f.truncate(len(data) - cut)
    return cut, sorted({k.decode() for k in re.findall(rb"[kd]\d{4}", payload)})
