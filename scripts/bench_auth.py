#!/usr/bin/env python3
"""What authentication costs on the hot calls: `crescent bench exists` and
`crescent bench put-get` against two `crescent serve` processes side by side,
one without credentials and one with --auth-file (the bench presenting a client
token), in alternating rounds. Prints each row's median over the rounds, per
leg, and the ratio to the plain leg (docs/security.md, "What it costs").

    scripts/bench_auth.py [--crescent build/bin/crescent] [--rounds 3] [--quick]
"""

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading

ADDRESS = re.compile(r"master \(gRPC\) listening on (\S+?)(?:,| and|$)")


class Serve:
    """A `crescent serve` on free ports; `address` is its master's host:port."""

    def __init__(self, crescent, extra):
        self.proc = subprocess.Popen(
            [crescent, "serve", "--port", "0", "--http-port", "0", "--segment-size", "2GiB",
             *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.address = None
        ready = threading.Event()
        self.output = []

        def pump():
            for line in self.proc.stdout:
                self.output.append(line)
                m = ADDRESS.search(line)
                if m:
                    self.address = m.group(1)
                if "ready" in line:
                    ready.set()
            ready.set()

        threading.Thread(target=pump, daemon=True).start()
        if not ready.wait(60) or self.address is None:
            self.stop()
            sys.exit("crescent serve did not start:\n" + "".join(self.output))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)


def row_key(r):
    return (r["op"], r["system"], r["size"], r["batch"], r["miss"])


def run_bench(crescent, mode, serve, token_file, quick, out):
    cmd = [crescent, "bench", mode, "--master", serve.address, "--json", out, "--reps", "1"]
    if token_file:
        cmd += ["--token-file", token_file]
    if quick:
        cmd.append("--quick")
    if mode == "put-get":
        cmd += ["--size", "4KiB,64KiB,1MiB"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    doc = json.load(open(out))
    rows = []
    for section, value in doc.items():
        if isinstance(value, list):
            rows += [r for r in value if isinstance(r, dict) and "items_per_s" in r
                     and r.get("system", "").startswith("crescent")]
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--crescent", default="build/bin/crescent")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    crescent = os.path.abspath(a.crescent)
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        auth_file = os.path.join(tmp, "auth")
        token = subprocess.run([crescent, "token", "add", "--auth-file", auth_file, "--name",
                                "bench", "--role", "client"], check=True, capture_output=True,
                               text=True).stdout.strip()
        token_file = os.path.join(tmp, "bench.token")
        fd = os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, (token + "\n").encode())
        os.close(fd)
        legs = {"plain": (Serve(crescent, []), None),
                "auth": (Serve(crescent, ["--auth-file", auth_file]), token_file)}
        figures = {}  # (mode, row key) -> leg -> [items/s], [p50]
        try:
            for rnd in range(a.rounds):
                order = list(legs) if rnd % 2 == 0 else list(reversed(legs))
                for mode in ("exists", "put-get"):
                    for leg in order:
                        serve, tf = legs[leg]
                        out = os.path.join(tmp, "%s-%s.json" % (leg, mode))
                        for r in run_bench(crescent, mode, serve, tf, a.quick, out):
                            f = figures.setdefault((mode,) + row_key(r), {})
                            f.setdefault(leg, ([], []))
                            f[leg][0].append(r["items_per_s"])
                            f[leg][1].append(r["p50_us"])
        finally:
            for serve, _ in legs.values():
                serve.stop()
    print("medians of %d alternating rounds; ratio = auth / plain" % a.rounds)
    print("%-8s %-10s %8s %6s %5s %12s %12s %7s %9s %9s %7s" %
          ("bench", "op", "size", "batch", "miss", "plain/s", "auth/s", "ratio",
           "p50 plain", "p50 auth", "ratio"))
    ratios = []
    for key, f in sorted(figures.items(), key=lambda kv: str(kv[0])):
        if "plain" not in f or "auth" not in f:
            continue
        mode, op, _, size, batch, miss = key
        pt, at = statistics.median(f["plain"][0]), statistics.median(f["auth"][0])
        pl, al = statistics.median(f["plain"][1]), statistics.median(f["auth"][1])
        ratio = at / pt if pt else float("nan")
        ratios.append(ratio)
        print("%-8s %-10s %8d %6d %5.2f %12.0f %12.0f %7.3f %9.1f %9.1f %7.3f" %
              (mode, op, size, batch, miss, pt, at, ratio, pl, al, al / pl if pl else 0))
    if ratios:
        print("median ratio over %d rows: %.3f" % (len(ratios), statistics.median(ratios)))


if __name__ == "__main__":
    main()
