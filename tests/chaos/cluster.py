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
    def __init__(self, name, host, argv, log_dir, ready_timeout=30.0, ready_text="ready"):
        self.name = name
        self.ready_text = ready_text  # the line a started process prints once it serves
        self.host = host
        self.argv = argv
        self.log_path = os.path.join(log_dir, name + ".log")
        self.ready_timeout = ready_timeout
        self.retry_s = 0.5  # between starts that exited early
        self.proc = None
        self.stopped = False  # SIGSTOPped by us and not yet continued
        self.offset = 0  # where the current process's output begins in the log
        self.starts = []  # monotonic time of each start that printed its ready line

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def start(self):
        """Starts the role and waits for its ready line; retries while it exits early
        (a store node cannot mount while the master is down). Returns whether it is ready.
        A role whose process still runs (another fault restarted it) is left as it is: a
        second process would find the first holding the node's files."""
        if self.alive():
            return True
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            with open(self.log_path, "a") as log:
                log.write("---- %s start %.3f\n" % (self.name, time.monotonic()))
            offset = self.offset = os.path.getsize(self.log_path)
            log = open(self.log_path, "a")
            self.proc = subprocess.Popen(self.host.command(self.argv), stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            log.close()
            self.stopped = False
            while time.monotonic() < deadline and self.proc.poll() is None:
                with open(self.log_path) as f:
                    f.seek(offset)
                    if self.ready_text in f.read():
                        self.starts.append(time.monotonic())
                        return True
                time.sleep(0.05)
            if self.proc.poll() is None:
                break
            time.sleep(self.retry_s)
        return False

    def output(self):
        """What the current (or last) process has printed so far."""
        with open(self.log_path, errors="replace") as f:
            f.seek(self.offset)
            return f.read()

    def wait_output(self, text, timeout):
        """Whether the current process prints `text` within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.output():
                return True
            time.sleep(0.02)
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
    whether it offers shared memory.

    `durability` is "off" (no data dir, DRAM only), or the master's --log-sync ("always" or
    N ms): then the master keeps its log and snapshots in DIR/master-data and each store
    has a persistent segment (a file of `pmem_size` in DIR/pmem) beside its DRAM one."""

    PORT = 50051

    def __init__(self, topology, master_host, stores, log_dir, secret_file, segment_size,
                 durability="off", pmem_size="128MiB"):
        self.topology = topology
        mhost = topology.hosts[master_host]
        port = self.PORT if topology.kind == "netns" else free_port()
        self.master_address = "%s:%d" % (mhost.address, port)
        crescent = os.environ["CRESCENT_BIN"]
        self.master = Daemon("master", mhost, [
            # --insecure: the network namespaces' veth addresses are not
            # loopback, and this cluster runs without an auth file.
            crescent, "master", "--host", mhost.address, "--insecure", "--port", str(port),
            "--http-port", "0", "--secret-file", secret_file, "--put-timeout-ms", "2000",
            "--heartbeat-ttl-ms", "3000", "--lease-ms", "2000"], log_dir)
        self.durability = durability
        self.data_dir = None
        self.pmem_size = pmem_size
        if durability != "off":
            self.data_dir = os.path.join(log_dir, "master-data")
            os.makedirs(self.data_dir, exist_ok=True)
            os.makedirs(os.path.join(log_dir, "pmem"), exist_ok=True)
            self.master.argv += ["--data-dir", self.data_dir, "--log-sync", durability]
        self.stores = make_stores(topology, stores, self.master_address, log_dir, secret_file,
                                  segment_size, pmem_size if durability != "off" else None)

    @property
    def stat_host(self):
        """Where `crescent stat --master master_address` runs."""
        return self.master.host

    def daemons(self):
        return [self.master, *self.stores]

    def segment_count(self):
        """Segments mounted once every store node is up: DRAM, and a persistent one each."""
        return len(self.stores) * (2 if self.durability != "off" else 1)

    def start(self):
        if not self.master.start():
            raise RuntimeError("master did not start; see %s" % self.master.log_path)
        for s in self.stores:
            if not s.start():
                raise RuntimeError("%s did not start; see %s" % (s.name, s.log_path))

    def pmem_path(self, store):
        """The persistent file a store daemon starts with (None without one)."""
        for arg in store.argv:
            if arg.endswith(":" + self.pmem_size) and os.sep in arg:
                return arg[:-len(self.pmem_size) - 1]
        return None

    def set_pmem_path(self, store, path):
        old = self.pmem_path(store)
        store.argv = [path + ":" + self.pmem_size if a == old + ":" + self.pmem_size else a
                      for a in store.argv]

    def heal(self):
        """Every process running and continued (the end of every fault)."""
        for d in [self.master, *self.stores]:
            d.signal(signal.SIGCONT)
            if not d.alive():
                d.start()

    def stop(self):
        for d in [*self.stores, self.master]:
            d.terminate()


def make_stores(topology, stores, master_address, log_dir, secret_file, segment_size, pmem_size):
    """A Daemon per store node: store i on topology host stores[i][0], offering shared memory
    when stores[i][1]; with `pmem_size`, a persistent segment (a file in LOG_DIR/pmem) too."""
    crescent = os.environ["CRESCENT_BIN"]
    daemons = []
    for i, (host_name, shm) in enumerate(stores):
        host = topology.hosts[host_name]
        argv = [crescent, "store", "--master", master_address, "--host", host.address,
                "--secret-file", secret_file, "--segment-size", segment_size,
                "--node-id", "store%d" % i, "--heartbeat-interval-ms", "500", "--no-warm-pages"]
        if not shm:
            argv.append("--no-shm")
        d = Daemon("store%d" % i, host, argv, log_dir)
        if pmem_size:
            os.makedirs(os.path.join(log_dir, "pmem"), exist_ok=True)
            path = os.path.join(log_dir, "pmem", "store%d.seg" % i)
            d.argv += ["--pmem", "%s:%s" % (path, pmem_size)]
            # A node with a persistent segment that starts again while its dead DRAM
            # segment is still mounted is refused, and such refused starts, made
            # faster than the heartbeat TTL, keep that segment mounted (docs/testing.md).
            d.retry_s = 4.0
        daemons.append(d)
    return daemons


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
