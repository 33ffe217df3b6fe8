#!/usr/bin/env python3
"""What authentication and TLS cost on the control plane (docs/security.md):
`crescent bench exists` and `crescent bench put-get` against `crescent serve`
processes side by side -- one plain, one with --auth-file (the bench presenting
a client token), one with --tls-cert/--tls-key (certificates made here by the
openssl CLI; the bench given --tls-ca) -- in alternating rounds, so that all
see the same machine. Prints each row's median over the rounds, per leg, and
each leg's ratio to the plain one.

    scripts/bench_control.py [--crescent build/bin/crescent] [--rounds 3]
                             [--legs plain,auth,tls] [--quick]
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
EXISTS_FLAGS = ["--batch", "1,16,128", "--miss", "0"]
PUTGET_FLAGS = ["--size", "4KiB,64KiB,1MiB"]


class Serve:
    """A `crescent serve` on free ports; `address` is its master's host:port."""

    def __init__(self, crescent, extra):
        self.proc = subprocess.Popen(
            [crescent, "serve", "--port", "0", "--http-port", "0", "--segment-size", "2GiB",
             *extra], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.address = None
        self.output = []
        ready = threading.Event()

        def pump():
            for line in self.proc.stdout:
                self.output.append(line)
                m = ADDRESS.search(line)
                if m and self.address is None:
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


def make_token(crescent, tmp):
    auth_file = os.path.join(tmp, "auth")
    token = subprocess.run([crescent, "token", "add", "--auth-file", auth_file, "--name",
                            "bench", "--role", "client"], check=True, capture_output=True,
                           text=True).stdout.strip()
    token_file = os.path.join(tmp, "bench.token")
    fd = os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, (token + "\n").encode())
    os.close(fd)
    return auth_file, token_file


def make_certificates(tmp):
    subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "make_test_certs.sh"), tmp], check=True, capture_output=True)
    return [os.path.join(tmp, n) for n in ("server.crt", "server.key", "ca.crt")]


def start_legs(crescent, tmp, names):
    """leg name -> (Serve, the bench's extra flags)."""
    legs = {}
    for name in names:
        if name == "plain":
            legs[name] = (Serve(crescent, []), [])
        elif name == "auth":
            auth_file, token_file = make_token(crescent, tmp)
            legs[name] = (Serve(crescent, ["--auth-file", auth_file]),
                          ["--token-file", token_file])
        elif name == "tls":
            cert, key, ca = make_certificates(tmp)
            legs[name] = (Serve(crescent, ["--tls-cert", cert, "--tls-key", key]),
                          ["--tls-ca", ca])
        else:
            sys.exit("unknown leg %r (plain, auth, tls)" % name)
    return legs


def run_bench(crescent, mode, serve, flags, quick, out):
    cmd = [crescent, "bench", mode, "--master", serve.address, "--json", out, "--reps", "1",
           *flags, *(EXISTS_FLAGS if mode == "exists" else PUTGET_FLAGS)]
    if quick:
        cmd.append("--quick")
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print("%s against %s: exit %d: %s" % (mode, serve.address, r.returncode,
                                               r.stdout.strip().splitlines()[-1:]))
    doc = json.load(open(out))
    return [row for row in doc.get("exists", []) + doc.get("put_get", [])
            if row.get("system", "").startswith("crescent")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--crescent", default="build/bin/crescent")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--legs", default="plain,auth,tls")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    crescent = os.path.abspath(a.crescent)
    names = a.legs.split(",")
    if names[0] != "plain":
        sys.exit("--legs must start with plain, the baseline")
    figures = {}  # row key -> leg -> ([items/s], [p50 us])
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        legs = start_legs(crescent, tmp, names)
        try:
            for rnd in range(a.rounds):
                order = names if rnd % 2 == 0 else list(reversed(names))
                for mode in ("exists", "put-get"):
                    for leg in order:
                        serve, flags = legs[leg]
                        out = os.path.join(tmp, "%s-%s.json" % (leg, mode))
                        for r in run_bench(crescent, mode, serve, flags, a.quick, out):
                            key = (mode, r["op"], r["size"], r["batch"], r["miss"])
                            rates, p50s = figures.setdefault(key, {}).setdefault(leg, ([], []))
                            rates.append(r["items_per_s"])
                            p50s.append(r["p50_us"])
        finally:
            for serve, _ in legs.values():
                serve.stop()
    print("medians of %d alternating rounds; ratios against plain (ops/s: higher is better, "
          "p50: lower is better)" % a.rounds)
    head = "%-8s %-10s %8s %6s" % ("bench", "op", "size", "batch")
    for leg in names:
        head += " %11s" % (leg + "/s")
    for leg in names:
        head += " %9s" % (leg + " us")
    for leg in names[1:]:
        head += " %9s %9s" % (leg + " x", "p50 x")
    print(head)
    ratios = {leg: ([], []) for leg in names[1:]}  # per leg: every row's two ratios
    for key, f in sorted(figures.items(), key=lambda kv: str(kv[0])):
        if any(leg not in f for leg in names):
            continue
        mode, op, size, batch, _ = key
        med = {leg: (statistics.median(f[leg][0]), statistics.median(f[leg][1])) for leg in names}
        line = "%-8s %-10s %8d %6d" % (mode, op, size, batch)
        for leg in names:
            line += " %11.0f" % med[leg][0]
        for leg in names:
            line += " %9.1f" % med[leg][1]
        base_rate, base_p50 = med["plain"]
        for leg in names[1:]:
            rate_x = med[leg][0] / base_rate if base_rate else 0
            p50_x = med[leg][1] / base_p50 if base_p50 else 0
            ratios[leg][0].append(rate_x)
            ratios[leg][1].append(p50_x)
            line += " %9.3f %9.3f" % (rate_x, p50_x)
        print(line)
    for leg, (rate_xs, p50_xs) in ratios.items():
        if rate_xs:
            print("%s over every row: ops/s ratio median %.3f (%.3f-%.3f), p50 ratio median %.3f "
                  "(%.3f-%.3f)" % (leg, statistics.median(rate_xs), min(rate_xs), max(rate_xs),
                                   statistics.median(p50_xs), min(p50_xs), max(p50_xs)))


if __name__ == "__main__":
    main()
