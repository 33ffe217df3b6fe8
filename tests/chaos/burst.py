"""A short client burst that the injector starts right before it kills the master,
logging every operation as a worker does (the checker judges them alike):

  demote:  puts of large values (2-4 MiB) to the burst's own keys (d0000..),
           each removed first, so DRAM, full from the workers, demotes to PMEM;
  promote: a get of every worker key (k0000..) in a random order, so the
           objects read on PMEM are promoted back to DRAM.
"""

import argparse
import os
import random
import time

import oplog
import values

DEMOTE_KEYS = 12


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--id", type=int, required=True)
    p.add_argument("--master", required=True)
    p.add_argument("--mode", choices=["demote", "promote"], required=True)
    p.add_argument("--keys", type=int, required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--log", required=True)
    a = p.parse_args()

    deadline = time.monotonic() + a.seconds
    log = oplog.OpLog(a.log, a.id)
    rng = random.Random(os.getpid())
    store = oplog.connect(a.master, deadline)
    if a.mode == "demote":
        for i in range(DEMOTE_KEYS):
            if time.monotonic() > deadline:
                break
            key = "d%04d" % i
            n = log.begin("remove", key)
            log.end(n, store.remove(key))
            put_id = (a.id << 32) | (i + 1)  # every burst has its own id
            n = log.begin("put", key, put_id)
            log.end(n, store.put(key, values.derive(key, put_id, rng.randint(2 << 20, 4 << 20))))
    else:
        keys = ["k%04d" % i for i in range(a.keys)]
        rng.shuffle(keys)
        for key in keys:
            if time.monotonic() > deadline:
                break
            n = log.begin("get", key)
            code, data = store.get_with_code(key)
            if code == 0:
                log.end(n, code, *values.identify(key, data))
            else:
                log.end(n, code)
    store.close()


if __name__ == "__main__":
    main()
