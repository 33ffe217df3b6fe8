"""The operation log: one JSON line when an operation begins and one when it
ends, flushed at once, so an operation that never ends (its process hung or
was killed) still shows its beginning.

    {"ev": "b", "w": worker, "n": seq, "op": ..., "key": ..., "put_id": ..., "t": t0}
    {"ev": "e", "w": worker, "n": seq, "t": t1, "code": c, "got": put id read, "bad": reason}

Times are time.monotonic(), one clock for every process on the machine (network
namespaces share it), so the checker can line them up with the fault log.
"""

import json
import os
import time

import crescent

# Client settings of every chaos client (workers and verifiers). An operation is
# a hang if it takes longer than HANG_S of the time its process was not frozen:
# far above the worst case these allow (three control-plane calls of
# RPC_ATTEMPTS tries each, two transfers, backoff), so load cannot trip it.
RPC_TIMEOUT_MS = 2000
RPC_ATTEMPTS = 3
TRANSFER_TIMEOUT_MS = 5000
HANG_S = 90.0


class OpLog:
    def __init__(self, path, worker):
        self.file = open(path, "a", buffering=1)
        self.worker = worker
        self.seq = 0

    def begin(self, op, key, put_id=None):
        self.seq += 1
        self._write({"ev": "b", "w": self.worker, "n": self.seq, "op": op, "key": key,
                     "put_id": put_id, "t": time.monotonic()})
        return self.seq

    def end(self, seq, code, got=None, bad=None):
        self._write({"ev": "e", "w": self.worker, "n": seq, "t": time.monotonic(),
                     "code": code, "got": got, "bad": bad})

    def _write(self, record):
        self.file.write(json.dumps(record) + "\n")


def connect(master, deadline, stop_file=None):
    """A set-up crescent.Store, retrying while the master is unreachable; with `stop_file`,
    retrying until it appears (then None) rather than until `deadline`."""
    while stop_file is None or not os.path.exists(stop_file):
        store = crescent.Store()
        try:
            store.setup("localhost", "", 0, 0, "tcp", "", master, rpc_timeout_ms=RPC_TIMEOUT_MS,
                        rpc_attempts=RPC_ATTEMPTS, transfer_timeout_ms=TRANSFER_TIMEOUT_MS)
            return store
        except crescent.CrescentError:
            if stop_file is None and time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    return None
