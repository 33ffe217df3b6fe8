"""After the faults: waits until every store node is mounted again and no put
can still be pending, then reads back every key the master lists, logging each
read as a "verify" operation. The checker requires each to succeed with the
bytes of an allowed put. With --probe, each named key the master does not list
is read too, as a "probe" (a miss there is judged by the durability checks).
"""

import argparse
import os
import subprocess
import time

import oplog
import values


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--id", type=int, required=True)
    p.add_argument("--master", required=True)
    p.add_argument("--segments", type=int, required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--settle-s", type=float, default=60.0)
    p.add_argument("--probe", nargs="*", default=[], help="keys to read when not listed")
    a = p.parse_args()

    deadline = time.monotonic() + a.settle_s
    store = oplog.connect(a.master, deadline)
    while len(store.get_stats()["segments"]) < a.segments:
        if time.monotonic() > deadline:
            raise SystemExit("verify: only %d of %d segments mounted after %.0f s" % (
                len(store.get_stats()["segments"]), a.segments, a.settle_s))
        time.sleep(0.5)
    # The master discards an unfinished put after its put timeout (2 s).
    while store.get_stats()["pending_puts"] > 0 and time.monotonic() < deadline:
        time.sleep(0.5)

    listing = subprocess.run([os.environ["CRESCENT_BIN"], "ls", "--limit", "0", "--master",
                              a.master], capture_output=True, text=True, timeout=60)
    if listing.returncode != 0 or listing.stderr.strip():
        raise SystemExit("verify: crescent ls failed (%d): %s" % (listing.returncode,
                                                                  listing.stderr))
    log = oplog.OpLog(a.log, a.id)
    listed = listing.stdout.split()
    unlisted = sorted(set(a.probe) - set(listed))
    reads = [("verify", k) for k in listed] + [("probe", k) for k in unlisted]
    for op, key in reads:
        n = log.begin(op, key)
        code, data = store.get_with_code(key)
        if code == 0:
            put_id, bad = values.identify(key, data)
            log.end(n, code, put_id, bad)
        else:
            log.end(n, code)
    store.close()


if __name__ == "__main__":
    main()
