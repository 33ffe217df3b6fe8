"""The chaos checker: a real cluster (master, three store nodes, four client
workers, on network-namespace hosts when it can), a seeded fault schedule for
`--seconds`, then a settle-and-verify pass and the checker's verdict.

    PYTHONPATH=build/python CRESCENT_BIN=build/bin/crescent \
        /usr/bin/python3 tests/chaos/run_chaos.py --seconds 300 --seed 1

Prints faults injected by kind, operations by kind and outcome, and every
violation; exits 1 when there is one. `run()` is the same for the pytest test.

--durability always (the default) or N runs the master with a data dir and
--log-sync always or N ms, and every store node with a persistent segment
beside DRAM; the durable faults (master_faults.py) and checks (durability.py)
join in. --durability off is the cluster without either.

Hosts:  m: master    a: store0 (shared memory) + workers w0, w1
        b: store1    c: store2 (--no-shm) + workers w2, w3

Fault kinds of a cluster of masters (faults.HA_KINDS: leader_kill,
leader_partition, etcd_kill) run that cluster instead (ha.py): three etcd
members and three masters on hosts of their own, the same store nodes (with
persistent segments) and workers following the leader through etcd://, and one
pinned worker per master (p0-p2 on host c) talking to that master's address.
Its checks (ha_check.py) join in: no acknowledgement of a deposed leader, no
acknowledged put lost across a change of leader.
"""

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import burst as burst_mod
import checker
import cluster as cluster_mod
import durability
import evictions as evictions_mod
import faults as faults_mod
import ha
import ha_check
import oplog
import topology as topology_mod

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTS = ["m", "a", "b", "c"]
STORES = [("a", True), ("b", True), ("c", False)]
WORKERS = {"w0": "a", "w1": "a", "w2": "c", "w3": "c"}
PINNED_HOST = "c"  # of the pinned workers p0-p2 of a cluster of masters
MIXED = "fault kinds of a single master (%s) do not apply to a cluster of masters"


class Result:
    def __init__(self, note, faults, counts, violations, out_dir, kinds=(), judged=None,
                 leaders=None, fenced=()):
        self.note = note
        self.leaders = leaders  # the leader watcher's records of a cluster of masters
        self.fenced = list(fenced)  # ha_check.fenced(): pinned changes judged by the fence
        self.judged = judged
        self.kinds = list(kinds)
        self.faults = faults
        self.counts = counts
        self.violations = violations
        self.out_dir = out_dir

    def table(self):
        lines = ["cluster: " + self.note, "run files: " + self.out_dir, "",
                 "%-20s %6s %6s" % ("fault", "count", "failed")]
        by_kind = collections.Counter(f["kind"] for f in self.faults)
        failed = collections.Counter(f["kind"] for f in self.faults if not f["ok"])
        for kind in faults_mod.KINDS:
            if by_kind[kind] or kind in self.kinds:
                lines.append("%-20s %6d %6d" % (kind, by_kind[kind], failed[kind]))
        lines += ["", "%-14s %-24s %7s" % ("operation", "outcome", "count")]
        for (op, result), n in sorted(self.counts.items()):
            lines.append("%-14s %-24s %7d" % (op, result, n))
        if self.leaders is not None:
            published = [s for s in self.leaders if s["grpc"]]
            lines += ["", "leader terms seen published: %d (%d changes of leader)" % (
                len(ha_check.terms(published)), len(ha_check.leader_changes(self.leaders))),
                "pinned changes begun after their master's term was seen over: %d "
                "(%d acknowledged)" % (len(self.fenced),
                                       sum(1 for f in self.fenced if f[0]["code"] == 0))]
        if self.judged:
            lines += ["", self.judged]
        lines += ["", "violations: %d" % len(self.violations)]
        lines += ["  " + v for v in self.violations]
        return "\n".join(lines)


def run(seconds, seed, mode="auto", kinds=None, out_dir=None, keys=300,
        max_size=4 << 20, segment_size=None, mean_gap=2.0, calm_s=5.0, durability_mode="always",
        pmem_size="128MiB"):
    """`durability_mode`: "always", N (ms, as a string) or "off". Without a segment size,
    each node's DRAM is 64 MiB, or 32 MiB beside a persistent segment of `pmem_size`
    (DRAM then fills and demotes, while both tiers hold every key without evicting)."""
    out_dir = out_dir or tempfile.mkdtemp(prefix="crescent-chaos-")
    os.makedirs(out_dir, exist_ok=True)
    kinds = list(kinds or faults_mod.DEFAULT_KINDS)
    with_ha = any(k in faults_mod.HA_KINDS for k in kinds)
    if faults_mod.mixed_with_ha(kinds):
        raise ValueError(MIXED % ", ".join(faults_mod.mixed_with_ha(kinds)))
    if with_ha:
        durability_mode = "always"  # the log is in etcd; nodes keep persistent segments
    durable = durability_mode != "off"
    segment_size = segment_size or ("32MiB" if durable else "64MiB")
    topo, note = topology_mod.make(ha.HOSTS if with_ha else HOSTS, mode)
    kinds = [k for k in kinds if k not in ("partition", "leader_partition") or topo.can_partition]
    if not durable:
        kinds = [k for k in kinds if k not in faults_mod.DURABLE_KINDS]
    if not topo.can_partition:
        note += "; no partitions"
    if with_ha:
        note += "; 3 masters of cluster %s on 3 etcd members (leader TTL %d ms), " \
            "persistent segments of %s" % (ha.NAME, ha.LEADER_TTL_MS, pmem_size)
    else:
        note += "; log sync %s, persistent segments of %s" % (durability_mode, pmem_size) \
            if durable else "; no data dir, DRAM only"
    secret = os.path.join(out_dir, "cluster.secret")
    with open(secret, "w") as f:
        f.write("chaos-%d-%s\n" % (seed, os.urandom(16).hex()))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([HERE, env.get("PYTHONPATH", "")])
    cl = None
    workers = {}
    violations = []
    roles = {}  # worker name -> (host, its --master, whether pinned)
    pinned = {}  # worker id -> the master address a pinned worker talks to
    try:
        if with_ha:
            cl = ha.HaCluster(topo, STORES, out_dir, secret, segment_size, pmem_size)
        else:
            cl = cluster_mod.Cluster(topo, "m", STORES, out_dir, secret, segment_size,
                                     durability_mode, pmem_size)
        roles = {name: (host, cl.master_address, False) for name, host in WORKERS.items()}
        for i, m in enumerate(cl.masters if with_ha else []):
            roles["p%d" % i] = (PINNED_HOST, m.grpc, True)
        cl.start()
        stop_file = os.path.join(out_dir, "stop")
        for i, (name, (host, master, is_pinned)) in enumerate(roles.items()):
            argv = [sys.executable, os.path.join(HERE, "worker.py"), "--id", str(i),
                    "--master", master, "--seed", str(seed), "--keys", str(keys),
                    "--max-size", str(max_size), "--log", os.path.join(out_dir, name + ".ops"),
                    "--stop-file", stop_file] + (["--pinned"] if is_pinned else [])
            if is_pinned:
                pinned[i] = master
            open(os.path.join(out_dir, name + ".ops"), "w").close()
            with open(os.path.join(out_dir, name + ".log"), "w") as log:
                workers[name] = subprocess.Popen(topo.hosts[host].command(argv), env=env,
                                                 stdout=log, stderr=subprocess.STDOUT)
        bursts = iter(range(200, 1 << 20))

        def burst(burst_mode):
            bid = next(bursts)
            ops = os.path.join(out_dir, "burst%d.ops" % bid)
            argv = [sys.executable, os.path.join(HERE, "burst.py"), "--id", str(bid),
                    "--master", cl.master_address, "--mode", burst_mode, "--keys", str(keys),
                    "--seconds", str(faults_mod.master_faults.BURST_S), "--log", ops]
            open(ops, "w").close()
            with open(os.path.join(out_dir, "burst%d.log" % bid), "w") as log:
                return subprocess.Popen(topo.hosts["a"].command(argv), env=env, stdout=log,
                                        stderr=subprocess.STDOUT), ops

        injector = faults_mod.Injector(
            cl, topo, workers, {n: os.path.join(out_dir, n + ".ops") for n in roles}, burst)
        plan = faults_mod.schedule(seed, seconds, kinds, injector.targets(), mean_gap)
        poller = evictions_mod.Poller(cl) if durable else None
        t0 = time.monotonic()
        injector.play(plan, t0)
        injector.stop.wait(max(0.0, t0 + seconds - time.monotonic()))
        injector.finish()
        if poller:
            poller.stop()
        for name in topo.hosts if topo.can_partition else []:
            topo.partition(name, False)
        cl.heal()
        for proc in workers.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
        # A calm spell, so the verify pass finds objects put after the last master restart.
        time.sleep(calm_s)
        open(stop_file, "w").close()
        for name, proc in workers.items():
            try:
                rc = proc.wait(oplog.HANG_S + 30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                violations.append("worker %s did not stop within %.0f s; killed" % (
                    name, oplog.HANG_S + 30))
                continue
            if rc != 0:
                violations.append("worker %s exited with %d; see %s.log" % (name, rc, name))
        run_end = time.monotonic()
        violations += ["fault %s on %s: restart failed" % (f["kind"], f["target"])
                       for f in injector.records if not f["ok"] and "violation" not in f]
        violations += ["fault %s on %s: %s" % (f["kind"], f["target"], f["violation"])
                       for f in injector.records if "violation" in f]
        probe = ["k%04d" % i for i in range(keys)] + \
            ["d%04d" % i for i in range(burst_mod.DEMOTE_KEYS)] if durable else []
        leaders = ha.read_watch(cl.watch_log) if with_ha else None
        for i, host in enumerate(sorted(set(WORKERS.values()))):
            violations += _verify(topo.hosts[host], cl, out_dir, 100 + i, env, probe)
        batches = cl.log_batches() if with_ha else None
        if with_ha and batches is None:
            violations.append("the log in etcd could not be read after the run: " + cl.log_error)
    finally:
        for proc in workers.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if cl is not None:
            cl.stop()
        topo.teardown()
    with open(os.path.join(out_dir, "faults.json"), "w") as f:
        json.dump(sorted(injector.records, key=lambda r: r["begin"]), f, indent=1)
    names = {i: name for i, name in enumerate(roles)}
    ops = checker.load(sorted(os.path.join(out_dir, f) for f in os.listdir(out_dir)
                              if f.endswith(".ops")))
    model = None
    if poller:
        with open(os.path.join(out_dir, "evictions.json"), "w") as f:
            json.dump(poller.rises, f)
    if durable:
        changes = ha_check.leader_changes(leaders) if with_ha else []
        model = durability.Model(injector.records + changes,
                                 0 if durability_mode == "always" else int(durability_mode),
                                 poller.rises if poller else (),
                                 ha_check.evicted_keys(batches or [], cl.revisions_log)
                                 if with_ha else None)
    found, counts = checker.check(ops, injector.records, run_end, names, model)
    if with_ha:
        found += ha_check.split_brain(ops, leaders, pinned)
    return Result(note, injector.records, counts, violations + found, out_dir, kinds,
                  model.summary() if model else None, leaders,
                  ha_check.fenced(ops, leaders, pinned) if with_ha else ())


def _verify(host, cl, out_dir, vid, env, probe):
    segments = cl.segment_count()
    argv = [sys.executable, os.path.join(HERE, "verify.py"), "--id", str(vid),
            "--master", cl.master_address, "--segments", str(segments),
            "--log", os.path.join(out_dir, "verify-%s.ops" % host.name), "--probe", *probe]
    try:
        done = subprocess.run(host.command(argv), env=env, capture_output=True, text=True,
                              timeout=300)
    except subprocess.TimeoutExpired:
        return ["verify on host %s did not finish in 300 s" % host.name]
    if done.returncode != 0:
        return ["verify on host %s failed (%d): %s" % (host.name, done.returncode,
                                                       (done.stdout + done.stderr).strip())]
    return []


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--mode", choices=["auto", "netns", "loopback"], default="auto")
    p.add_argument("--faults", default=",".join(faults_mod.DEFAULT_KINDS),
                   help="comma-separated fault kinds (default: all of a single master's; "
                   "naming any of %s runs a cluster of masters)" % ", ".join(faults_mod.HA_KINDS))
    p.add_argument("--out", help="directory for logs and op records (default: a new temp dir)")
    p.add_argument("--max-size", type=int, default=4 << 20, help="largest value in bytes")
    p.add_argument("--segment-size", help="each store node's DRAM segment (default 64MiB, "
                   "32MiB beside a persistent one)")
    p.add_argument("--durability", default="always",
                   help="'always' or N: the master's --log-sync, with a data dir and a "
                   "persistent segment per node; 'off': neither (default: always)")
    p.add_argument("--pmem-size", default="128MiB", help="each node's persistent segment")
    p.add_argument("--mean-gap", type=float, default=2.0, help="mean seconds between faults")
    a = p.parse_args()
    kinds = [k for k in a.faults.split(",") if k]
    unknown = set(kinds) - set(faults_mod.KINDS)
    if unknown:
        p.error("unknown fault kinds: %s" % ", ".join(sorted(unknown)))
    if faults_mod.mixed_with_ha(kinds):
        p.error(MIXED % ", ".join(faults_mod.mixed_with_ha(kinds)))
    if a.durability != "always" and a.durability != "off" and not a.durability.isdigit():
        p.error("--durability takes always, off or a number of ms")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds through run()'s finally
    result = run(a.seconds, a.seed, a.mode, kinds, a.out, max_size=a.max_size,
                 segment_size=a.segment_size, mean_gap=a.mean_gap, durability_mode=a.durability,
                 pmem_size=a.pmem_size)
    print(result.table())
    return 1 if result.violations else 0


if __name__ == "__main__":
    sys.exit(main())
