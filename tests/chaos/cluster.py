"""The chaos cluster's server processes: one `crescent master` and the store
nodes, each on its host, each restartable after a kill.

A Daemon owns one role (its command line never changes between restarts) and
the current process in that role. Output goes to a log file per role, appended
across restarts, so a failure can be traced afterwards.
"""

import os
import signal
import subprocess
import time


class Daemon:
    def __init__(self, name, host, argv, log_dir, ready_timeout=30.0):
        self.name = name
        self.host = host
        self.argv = argv
        self.log_path = os.path.join(log_dir, name + ".log")
        self.ready_timeout = ready_timeout
        self.proc = None
        self.stopped = False  # SIGSTOPped by us and not yet continued

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self):
        """Starts the role and waits for its "ready" line; retries while it exits early
        (a store node cannot mount while the master is down). Returns whether it is ready."""
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            with open(self.log_path, "a") as log:
                log.write("---- %s start %.3f\n" % (self.name, time.monotonic()))
            offset = os.path.getsize(self.log_path)
            log = open(self.log_path, "a")
            self.proc = subprocess.Popen(self.host.command(self.argv), stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            log.close()
            self.stopped = False
            while time.monotonic() < deadline and self.proc.poll() is None:
                with open(self.log_path) as f:
                    f.seek(offset)
                    if "ready" in f.read():
                        return True
                time.sleep(0.05)
            if self.proc.poll() is None:
                break
            time.sleep(0.5)
        return False

    def signal(self, sig):
        if self.alive():
            os.kill(self.proc.pid, sig)
            if sig == signal.SIGSTOP:
                self.stopped = True
            elif sig == signal.SIGCONT:
                self.stopped = False

    def kill(self):
        """kill -9, and reap."""
        if self.alive():
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
        self.stopped = False

    def terminate(self, timeout=15.0):
        """SIGTERM (after SIGCONT, so a frozen process can act on it); kill -9 if it lingers."""
        if not self.alive():
            return
        self.signal(signal.SIGCONT)
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()


class Cluster:
    """master + stores. Store i runs on topology host stores[i][0]; stores[i][1] is
    whether it offers shared memory."""

    PORT = 50051

    def __init__(self, topology, master_host, stores, log_dir, secret_file, segment_size):
        self.topology = topology
        mhost = topology.hosts[master_host]
        port = self.PORT if topology.kind == "netns" else _free_port()
        self.master_address = "%s:%d" % (mhost.address, port)
        crescent = os.environ["CRESCENT_BIN"]
        self.master = Daemon("master", mhost, [
            crescent, "master", "--host", mhost.address, "--port", str(port),
            "--http-port", "0", "--secret-file", secret_file, "--put-timeout-ms", "2000",
            "--heartbeat-ttl-ms", "3000", "--lease-ms", "2000"], log_dir)
        self.stores = []
        for i, (host_name, shm) in enumerate(stores):
            host = topology.hosts[host_name]
            argv = [crescent, "store", "--master", self.master_address, "--host", host.address,
                    "--secret-file", secret_file, "--segment-size", segment_size,
                    "--node-id", "store%d" % i, "--heartbeat-interval-ms", "500",
                    "--no-warm-pages"]
            if not shm:
                argv.append("--no-shm")
            self.stores.append(Daemon("store%d" % i, host, argv, log_dir))

    def start(self):
        if not self.master.start():
            raise RuntimeError("master did not start; see %s" % self.master.log_path)
        for s in self.stores:
            if not s.start():
                raise RuntimeError("%s did not start; see %s" % (s.name, s.log_path))

    def heal(self):
        """Every process running and continued (the end of every fault)."""
        for d in [self.master, *self.stores]:
            d.signal(signal.SIGCONT)
            if not d.alive():
                d.start()

    def stop(self):
        for d in [*self.stores, self.master]:
            d.terminate()


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
