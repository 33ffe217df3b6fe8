#!/usr/bin/env python3
"""Crescent's data plane between hosts: a master, four store nodes and four
client hosts, each in a network namespace of its own, joined by veth pairs to
one bridge (the chaos checker's topology, tests/chaos/topology.py; needs root).

Per delay (tc netem on every host's link, so a round trip crosses it twice)
and repetition, side by side (raw put, Crescent put, raw get, Crescent get):
  raw TCP: every client host streams to every store host, all sixteen
           connections at once (as many as the Crescent clients hold with
           --lanes 1), each moving 1 MiB writes for --seconds: put direction
           (client to store), then get direction (store to client);
  crescent: `crescent bench clients` with --clients-per-host clients on each
           client host (--worker-wrap "ip netns exec ..."), batch put and
           batch get of --batch objects of --size, over TCP.
Prints per delay the medians of the aggregate GB/s and of the per-repetition
ratio crescent / raw. Every namespace made is removed on the way out (and
stale ones of a dead run at the start).

    sudo scripts/bench_multihost.py [--crescent build/bin/crescent] [--reps 3]
        [--seconds 3] [--delays 0,0.2ms,1ms] [--size 1MiB] [--batch 16]
        [--clients-per-host 1] [--segment-size 1GiB] [--json FILE]
"""

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "chaos"))
import topology  # noqa: E402

STORES = ["s1", "s2", "s3", "s4"]
CLIENTS = ["c1", "c2", "c3", "c4"]
MASTER_PORT = 50051
STREAM_PORT = 5201
CHUNK = 1 << 20


# ---- the raw stream ends (run inside a namespace by this same script) ----

def serve_one(conn):
    """One connection; its first byte says the direction: 'p' (we read until
    the end) or 'g' (we write until the peer closes)."""
    with conn:
        direction = conn.recv(1)
        view = memoryview(bytearray(CHUNK))
        try:
            if direction == b"p":
                while conn.recv_into(view):
                    pass
            else:
                while True:
                    conn.sendall(view)
        except OSError:
            pass


def stream_server(port, count):
    """Serves `count` connections at once, a thread each (the copies release the GIL)."""
    with socket.create_server(("0.0.0.0", port)) as srv:
        print("ready", flush=True)
        threads = []
        for _ in range(count):
            conn, _ = srv.accept()
            threads.append(threading.Thread(target=serve_one, args=(conn,)))
            threads[-1].start()
        for t in threads:
            t.join()


def stream_client(hosts, port, direction, seconds):
    """One connection to each host, a thread each, moving bytes for `seconds`;
    prints the bytes moved and the seconds taken."""
    conns = [socket.create_connection((h, port)) for h in hosts]
    moved = [0] * len(conns)
    start = time.monotonic()
    until = start + seconds

    def run(i):
        view = memoryview(bytearray(CHUNK))
        conns[i].sendall(direction.encode())
        while time.monotonic() < until:
            if direction == "p":
                conns[i].sendall(view)
                moved[i] += CHUNK
            else:
                got = conns[i].recv_into(view)
                if not got:
                    break
                moved[i] += got
        conns[i].close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(conns))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"bytes": sum(moved), "seconds": time.monotonic() - start}), flush=True)


# ---- the orchestration ----

class Proc:
    """A process in a host's namespace; `wait_for` reads its output for a word."""

    def __init__(self, host, argv):
        self.proc = subprocess.Popen(host.command(argv), stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.seen = threading.Event()
        self.word = None

        def pump():
            for line in self.proc.stdout:
                self.lines.append(line)
                if self.word and self.word in line:
                    self.seen.set()
            self.seen.set()

        self.thread = threading.Thread(target=pump, daemon=True)

    def wait_for(self, word, timeout=60):
        self.word = word
        self.thread.start()
        if not self.seen.wait(timeout) or self.proc.poll() is not None:
            raise RuntimeError("%s did not print %r:\n%s" % (self.proc.args, word,
                                                            "".join(self.lines)))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def raw_streams(topo, direction, seconds):
    """Aggregate GB/s of one TCP stream from each client host to each store host
    (as many connections as the Crescent clients hold with --lanes 1), all at once."""
    servers = []
    try:
        for s in STORES:
            p = Proc(topo.hosts[s], [sys.executable, __file__, "--stream-server",
                                     str(STREAM_PORT), str(len(CLIENTS))])
            p.wait_for("ready", 20)
            servers.append(p)
        targets = ",".join(topo.hosts[s].address for s in STORES)
        clients = [subprocess.Popen(
            topo.hosts[c].command([sys.executable, __file__, "--stream-client", targets,
                                   str(STREAM_PORT), direction, str(seconds)]),
            stdout=subprocess.PIPE, text=True) for c in CLIENTS]
        total = 0.0
        for c in clients:
            out, _ = c.communicate(timeout=seconds + 60)
            r = json.loads(out.strip().splitlines()[-1])
            total += r["bytes"] / r["seconds"] / 1e9
        return total
    finally:
        for p in servers:
            p.stop()


def crescent_gbps(args, topo, workload):
    """GB/s of one `crescent bench clients` run of `workload` (put or get), batched."""
    wrap = ",".join("ip netns exec " + topo.hosts[c].netns for c in CLIENTS)
    out = tempfile.NamedTemporaryFile(suffix=".json", delete=False)
    out.close()
    try:
        argv = [args.crescent, "bench", "clients",
                "--master", "%s:%d" % (topo.hosts["m"].address, MASTER_PORT),
                "--clients", str(len(CLIENTS) * args.clients_per_host),
                "--workload", workload, "--batch", str(args.batch), "--size", args.size,
                "--get-keys", str(args.batch), "--lanes", str(args.lanes),
                "--seconds", str(args.seconds), "--reps", "1",
                "--worker-wrap", wrap, "--json", out.name]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        if run.returncode != 0:
            raise RuntimeError("crescent bench clients failed:\n" + run.stdout + run.stderr)
        with open(out.name) as f:
            rows = json.load(f)["rows"]
        return rows[0]["gb_per_s"]
    finally:
        os.unlink(out.name)


def set_delay(topo, delay):
    for h in topo.hosts.values():
        subprocess.run(["tc", "-n", h.netns, "qdisc", "del", "dev", "eth0", "root"],
                       capture_output=True)
        if delay != "0":
            subprocess.run(["tc", "-n", h.netns, "qdisc", "add", "dev", "eth0", "root",
                            "netem", "delay", delay], check=True)


def netem_available(topo):
    """Whether this kernel has tc's netem (CONFIG_NET_SCH_NETEM)."""
    tc = ["tc", "-n", topo.hub, "qdisc"]
    ok = subprocess.run([*tc, "add", "dev", "br0", "root", "netem", "delay", "1ms"],
                        capture_output=True).returncode == 0
    if ok:
        subprocess.run([*tc, "del", "dev", "br0", "root"], capture_output=True)
    return ok


def start_cluster(args, topo, secret):
    procs = []
    m = topo.hosts["m"]
    master = Proc(m, [args.crescent, "master", "--host", m.address, "--port", str(MASTER_PORT),
                      "--http-port", "0", "--insecure", "--secret-file", secret])
    procs.append(master)
    master.wait_for("ready")
    for s in STORES:
        h = topo.hosts[s]
        p = Proc(h, [args.crescent, "store", "--master", "%s:%d" % (m.address, MASTER_PORT),
                     "--host", h.address, "--segment-size", args.segment_size,
                     "--node-id", s, "--secret-file", secret])
        procs.append(p)
        p.wait_for("ready")
    return procs


def measure(args, topo):
    results = []
    delays = args.delays.split(",")
    if any(d != "0" for d in delays) and not netem_available(topo):
        skipped = [d for d in delays if d != "0"]
        print("bench_multihost.py: this kernel has no tc netem (CONFIG_NET_SCH_NETEM): "
              "delays %s not measured" % ",".join(skipped), file=sys.stderr, flush=True)
        results += [{"delay": d, "skipped": "no tc netem in this kernel"} for d in skipped]
        delays = [d for d in delays if d == "0"]
    for delay in delays:
        set_delay(topo, delay)
        reps = []
        for _ in range(args.reps):
            # Each Crescent phase right after its reference, so drift hits both.
            rep = {"raw_put": raw_streams(topo, "p", args.seconds),
                   "crescent_put": crescent_gbps(args, topo, "put"),
                   "raw_get": raw_streams(topo, "g", args.seconds),
                   "crescent_get": crescent_gbps(args, topo, "get")}
            reps.append(rep)
            print("delay %s: %s" % (delay, json.dumps(rep)), file=sys.stderr, flush=True)
        row = {"delay": delay, "reps": reps}
        for k in ("raw_put", "raw_get", "crescent_put", "crescent_get"):
            row[k] = statistics.median(r[k] for r in reps)
        for d in ("put", "get"):
            row[d + "_ratio"] = statistics.median(r["crescent_" + d] / r["raw_" + d]
                                                  for r in reps)
        results.append(row)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--crescent", default=os.path.join(HERE, "..", "build", "bin", "crescent"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--delays", default="0,0.2ms,1ms")
    ap.add_argument("--size", default="1MiB")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lanes", type=int, default=1)
    ap.add_argument("--clients-per-host", type=int, default=1)
    ap.add_argument("--segment-size", default="1GiB")
    ap.add_argument("--json")
    ap.add_argument("--stream-server", nargs=2, type=int, help=argparse.SUPPRESS)
    ap.add_argument("--stream-client", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stream_server:
        return stream_server(*args.stream_server)
    if args.stream_client:
        hosts, port, direction, seconds = args.stream_client
        return stream_client(hosts.split(","), int(port), direction, float(seconds))
    if os.geteuid() != 0:
        sys.exit("bench_multihost.py: needs root (network namespaces)")
    args.crescent = os.path.abspath(args.crescent)
    # SIGTERM unwinds like ^C, so the namespaces are removed either way.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    topology.remove_stale()
    load_before = open("/proc/loadavg").read().split()[:3]
    topo = topology.Netns(["m", *STORES, *CLIENTS])
    procs = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            secret = os.path.join(tmp, "secret")
            with open(secret, "w") as f:
                f.write("bench-multihost-secret-0123456789abcdef\n")
            os.chmod(secret, 0o600)
            procs = start_cluster(args, topo, secret)
            results = measure(args, topo)
    finally:
        for p in reversed(procs):
            p.stop()
        topo.teardown()
    load_after = open("/proc/loadavg").read().split()[:3]
    print("load %s -> %s; %d reps of %g s; %s objects, batch %d, %d client(s) per host"
          % (" ".join(load_before), " ".join(load_after), args.reps, args.seconds, args.size,
             args.batch, args.clients_per_host))
    print("%-7s %10s %10s %6s %10s %10s %6s" % ("delay", "raw put", "crescent", "ratio",
                                                "raw get", "crescent", "ratio"))
    for r in results:
        if "skipped" in r:
            print("%-7s %s" % (r["delay"], r["skipped"]))
            continue
        print("%-7s %10.2f %10.2f %6.2f %10.2f %10.2f %6.2f" % (
            r["delay"], r["raw_put"], r["crescent_put"], r["put_ratio"], r["raw_get"],
            r["crescent_get"], r["get_ratio"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load_before": load_before, "load_after": load_after,
                       "args": {k: v for k, v in vars(args).items()
                                if not k.startswith("stream")},
                       "rows": results}, f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
