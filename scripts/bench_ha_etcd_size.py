#!/usr/bin/env python3
"""How big etcd grows under a cluster's log (docs/ha.md, "Trimming the log"): two
clusters side by side on one etcd member each, a leader and a standby with one store
node, under the same waves of `crescent bench put-get` puts. In the "trimmed" cluster
both masters keep snapshots (--data-dir, a snapshot every --snapshot-interval s), so
the leader trims the log before what both hold and compacts etcd; in the "untrimmed"
one they keep none, so the log is never trimmed. After each wave it prints the puts so
far and each etcd's log keys, their bytes, and its database size in use (etcd's
dbSizeInUse; the file, dbSize, only grows, its freed pages reused), and at the end the
bytes of log per million puts and the trimmed cluster's steady state.

    python3 scripts/bench_ha_etcd_size.py [--waves 8] [--clients 4] [--size 1KiB]
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_ha_puts import free_port, start, start_etcd, write_secret  # noqa: E402


def etcd_post(port, path, body):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                 data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def b64(s):
    return base64.b64encode(s.encode()).decode()


def log_keys(port, cluster):
    """(keys, value bytes) of the cluster's log in etcd."""
    prefix = "/crescent/%s/log/" % cluster
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    got = etcd_post(port, "/v3/kv/range", {"key": b64(prefix), "range_end": b64(end)})
    kvs = got.get("kvs", [])
    return len(kvs), sum(len(base64.b64decode(kv.get("value", ""))) for kv in kvs)


def db_in_use(port):
    st = etcd_post(port, "/v3/maintenance/status", {})
    return int(st.get("dbSizeInUse", st.get("dbSize", 0)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--crescent", default="build/bin/crescent")
    p.add_argument("--waves", type=int, default=8)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--size", default="1KiB")
    p.add_argument("--bytes-per-client", default="4MiB")
    p.add_argument("--snapshot-interval", type=int, default=2)
    a = p.parse_args()
    crescent = os.path.abspath(a.crescent)
    procs = []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        secret = write_secret(tmp, "bench-ha-etcd-size-secret-0123456789ab")
        try:
            legs = {}
            for leg in ("trimmed", "untrimmed"):
                etcd, client_port = start_etcd(tmp, leg + "-etcd")
                procs.append(etcd)
                for member in ("a", "b"):
                    flags = ["--etcd", "127.0.0.1:%d" % client_port, "--cluster", "size"]
                    if leg == "trimmed":
                        flags += ["--data-dir", os.path.join(tmp, leg + "-" + member),
                                  "--snapshot-interval", str(a.snapshot_interval)]
                    procs.append(start([crescent, "master", "--port", str(free_port()),
                                        "--http-port", "0", "--secret-file", secret, *flags],
                                       os.path.join(tmp, leg + "-" + member + ".log"),
                                       "ready" if member == "a" else "standby of cluster"))
                address = "etcd://127.0.0.1:%d/size" % client_port
                procs.append(start([crescent, "store", "--master", address,
                                    "--secret-file", secret, "--segment-size", "1GiB",
                                    "--http-port", "0"],
                                   os.path.join(tmp, leg + "-store.log"), "ready"))
                legs[leg] = (address, client_port)
            puts = {leg: 0 for leg in legs}
            for wave in range(a.waves):
                row = {"wave": wave + 1}
                for leg, (address, port) in legs.items():
                    out = os.path.join(tmp, leg + ".json")
                    subprocess.run([crescent, "bench", "put-get", "--master", address,
                                    "--json", out, "--reps", "1", "--size", a.size,
                                    "--clients", str(a.clients), "--bytes-per-client",
                                    a.bytes_per_client],
                                   check=True, stdout=subprocess.DEVNULL)
                    for r in json.load(open(out)).get("put_get", []):
                        if r.get("system", "").startswith("crescent") and "put" in r["op"]:
                            puts[leg] += int(r["items"])
                    # The trimmed cluster's members report twice a second and snapshot
                    # every interval: give a trim the time to happen.
                    time.sleep(a.snapshot_interval + 1.5)
                    keys, value_bytes = log_keys(port, "size")
                    row[leg] = (puts[leg], keys, value_bytes, db_in_use(port))
                rows.append(row)
                print("wave %2d  " % row["wave"] + "  ".join(
                    "%s: %8d puts, %5d log keys, %10d log bytes, %10d db bytes in use" %
                    ((leg,) + row[leg]) for leg in legs), flush=True)
        finally:
            for proc in reversed(procs):
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
    last = rows[-1]
    n, _, untrimmed_bytes, untrimmed_db = last["untrimmed"]
    print("untrimmed: %.1f MB of log per million puts (%d puts, %d log bytes); "
          "etcd db in use %.1f MB" % (untrimmed_bytes / n * 1e6 / 1e6, n, untrimmed_bytes,
                                      untrimmed_db / 1e6))
    half = rows[len(rows) // 2:]
    print("trimmed, over the last %d waves: log bytes %d..%d, etcd db in use %.1f..%.1f MB "
          "(steady state), after %d puts" %
          (len(half), min(r["trimmed"][2] for r in half), max(r["trimmed"][2] for r in half),
           min(r["trimmed"][3] for r in half) / 1e6, max(r["trimmed"][3] for r in half) / 1e6,
           last["trimmed"][0]))


if __name__ == "__main__":
    main()
