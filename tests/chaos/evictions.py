"""Watches the master's eviction count during a durable run (`crescent stat` on the
master's host, every POLL_S), so the durability checks can tell a key that was
evicted from one that a restart lost. Each interval in which the count rose, or
in which it may have (a restart reset it, or the master could not be asked),
is one of `rises`: [(t0, t1)] in monotonic time.
"""

import os
import re
import subprocess
import threading
import time

POLL_S = 1.0


class Poller:
    def __init__(self, cluster):
        self.cluster = cluster
        self.rises = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()

    def _count(self):
        try:
            done = subprocess.run(self.cluster.stat_host.command(
                [os.environ["CRESCENT_BIN"], "stat", "--master", self.cluster.master_address,
                 "--timeout-ms", "2000"]), capture_output=True, text=True, timeout=10)
        except subprocess.TimeoutExpired:
            return None
        m = re.search(r"^evictions\s+(\d+)", done.stdout, re.M)
        return int(m.group(1)) if done.returncode == 0 and m else None

    def _run(self):
        last_t, last_n, missed = time.monotonic(), 0, False
        while not self._stop.wait(POLL_S):
            n = self._count()
            now = time.monotonic()
            if n is None:
                missed = True
                continue
            if n > last_n or (n > 0 and (missed or n < last_n)):
                self.rises.append((last_t, now))
            last_t, last_n, missed = now, n, False
