"""A chaos client: puts, gets and removes random keys until the stop file
appears, logging every operation (oplog.py) and checking every value it reads
against the put its header names (values.py).

Both copying calls (put, get) and zero-copy ones through a registered buffer
(batch_put_from, batch_get_into) are used, so both client paths see faults.

--pinned: --master is one master of a cluster (ha.py), not the cluster: the
worker talks to it whether or not it leads, connecting (again) until the stop
file appears, and pauses after each UNAVAILABLE (a standby opens no port).
"""

import argparse
import math
import os
import random
import time

import numpy as np

import crescent

import oplog
import values

OPS = ["put", "put_from", "get", "get_into", "remove"]
WEIGHTS = [25, 10, 35, 15, 15]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--id", type=int, required=True)
    p.add_argument("--master", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--keys", type=int, required=True)
    p.add_argument("--max-size", type=int, required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--stop-file", required=True)
    p.add_argument("--pinned", action="store_true")
    a = p.parse_args()

    log = oplog.OpLog(a.log, a.id)
    rng = random.Random("%d-%d" % (a.seed, a.id))
    store = oplog.connect(a.master, time.monotonic() + 60,
                          a.stop_file if a.pinned else None)
    if store is None:
        return
    arena = np.zeros(a.max_size, dtype=np.uint8)
    assert store.register_buffer(arena) == 0
    put_seq = 0
    while not os.path.exists(a.stop_file):
        op = rng.choices(OPS, WEIGHTS)[0]
        key = "k%04d" % rng.randrange(a.keys)
        if op in ("put", "put_from"):
            put_seq += 1
            put_id = (a.id << 32) | put_seq
            size = int(math.exp(rng.uniform(math.log(4096), math.log(a.max_size))))
            value = values.derive(key, put_id, size)
            if op == "put_from":
                arena[:size] = np.frombuffer(value, dtype=np.uint8)
            n = log.begin(op, key, put_id)
            if op == "put":
                code = store.put(key, value)
            else:
                code = store.batch_put_from([key], [arena[:size]])[0]
            log.end(n, code)
        elif op in ("get", "get_into"):
            n = log.begin(op, key)
            if op == "get":
                code, data = store.get_with_code(key)
            else:
                got = store.batch_get_into([key], [arena])[0]
                code, data = (0, arena[:got].tobytes()) if got >= 0 else (got, b"")
            if code == 0:
                put_id, bad = values.identify(key, data)
                log.end(n, code, put_id, bad)
            else:
                log.end(n, code)
        else:
            force = rng.random() < 0.5
            n = log.begin("remove_force" if force else "remove", key)
            code = store.remove(key, force=force)
            log.end(n, code)
        if a.pinned and code == crescent.UNAVAILABLE:
            time.sleep(0.2)
    store.close()


if __name__ == "__main__":
    main()
