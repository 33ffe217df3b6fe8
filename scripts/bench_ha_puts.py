#!/usr/bin/env python3
"""What the log in etcd costs puts (docs/ha.md): `crescent bench put-get` against a
cluster's leader (`crescent master --etcd`, a one-member etcd started here) and against
a single master that syncs its file log before every acknowledgement (`--data-dir
--log-sync always`), each with one store node, side by side, in alternating rounds, so
that both see the same machine. Prints each row's median over the rounds and the
ratio etcd / file (ops/s: higher is better).

    python3 scripts/bench_ha_puts.py [--rounds 5] [--clients 8] [--size 4KiB] [--in-flight 1,4]

--in-flight K[,K2...]: one leader per K (`--log-in-flight K`: its log batches under
way at once; each a cluster of its own in the same etcd), all in the same rounds,
each with its own columns; without it, one leader with the master's default.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv, log, line, timeout=30):
    """Starts argv with its output in `log`; waits for `line` in it."""
    proc = subprocess.Popen(argv, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if line in open(log).read():
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    sys.exit("%s did not start:\n%s" % (argv[0], open(log).read()))


def write_secret(tmp, text):
    """A cluster secret file in `tmp` (mode 0600); its path."""
    secret = os.path.join(tmp, "secret")
    with open(secret, "w") as f:
        f.write(text + "\n")
    os.chmod(secret, 0o600)
    return secret


def start_etcd(tmp, name):
    """A one-member etcd with its data and log under `tmp` (prefixed `name`);
    (process, client port)."""
    client_port, peer_port = free_port(), free_port()
    proc = start(
        ["etcd", "--name", "e0", "--data-dir", os.path.join(tmp, name),
         "--listen-client-urls", "http://127.0.0.1:%d" % client_port,
         "--advertise-client-urls", "http://127.0.0.1:%d" % client_port,
         "--listen-peer-urls", "http://127.0.0.1:%d" % peer_port,
         "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer_port,
         "--initial-cluster", "e0=http://127.0.0.1:%d" % peer_port],
        os.path.join(tmp, name + ".log"), "ready to serve client requests")
    return proc, client_port


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--crescent", default="build/bin/crescent")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--size", default="4KiB")
    p.add_argument("--bytes-per-client", default="4MiB")
    p.add_argument("--in-flight", help="comma-separated: a leader for each")
    a = p.parse_args()
    crescent = os.path.abspath(a.crescent)
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        secret = write_secret(tmp, "bench-ha-puts-secret-0123456789abcdef")
        try:
            etcd, client_port = start_etcd(tmp, "etcd")
            procs.append(etcd)
            legs = {}
            etcd_legs = [("etcd", [])] if not a.in_flight else [
                ("etcd-%s" % k, ["--log-in-flight", k]) for k in a.in_flight.split(",")]
            for leg, flags in [(leg, ["--etcd", "127.0.0.1:%d" % client_port,
                                      "--cluster", "bench-" + leg, *extra])
                               for leg, extra in etcd_legs] + [
                               ("file", ["--data-dir", os.path.join(tmp, "data"),
                                         "--allow-empty-restore", "--log-sync", "always"])]:
                port = free_port()
                procs.append(start([crescent, "master", "--port", str(port), "--http-port", "0",
                                    "--secret-file", secret, *flags],
                                   os.path.join(tmp, leg + "-master.log"), "ready"))
                procs.append(start([crescent, "store", "--master", "127.0.0.1:%d" % port,
                                    "--secret-file", secret, "--segment-size", "1GiB",
                                    "--http-port", "0"],
                                   os.path.join(tmp, leg + "-store.log"), "ready"))
                legs[leg] = "127.0.0.1:%d" % port
            figures = {}  # (op, batch) -> leg -> [ops/s]
            for rnd in range(a.rounds):
                order = list(legs)
                for leg in (order if rnd % 2 == 0 else order[::-1]):
                    out = os.path.join(tmp, "%s.json" % leg)
                    subprocess.run([crescent, "bench", "put-get", "--master", legs[leg],
                                    "--json", out, "--reps", "1", "--size", a.size,
                                    "--clients", str(a.clients), "--bytes-per-client",
                                    a.bytes_per_client],
                                   check=True, stdout=subprocess.DEVNULL)
                    for row in json.load(open(out)).get("put_get", []):
                        if row.get("system", "").startswith("crescent"):
                            figures.setdefault((row["op"], row["batch"]), {}).setdefault(
                                leg, []).append(row["items_per_s"])
        finally:
            for proc in reversed(procs):
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
    print("medians of %d alternating rounds, %d clients, %s values (ops/s)" %
          (a.rounds, a.clients, a.size))
    names = [leg for leg, _ in etcd_legs]
    print("%-10s %6s" % ("op", "batch") + "".join("%12s" % (n + "/s") for n in names) +
          "%12s" % "file/s" + "".join("%12s" % ("ratio" if len(names) == 1 else n[5:] + ":ratio")
                                      for n in names))
    for (op, batch), f in sorted(figures.items()):
        fl = statistics.median(f["file"])
        e = [statistics.median(f[n]) for n in names]
        print("%-10s %6d" % (op, batch) + "".join("%12.0f" % x for x in e) + "%12.0f" % fl +
              "".join("%12.3f" % (x / fl if fl else 0) for x in e))


if __name__ == "__main__":
    main()
