"""Where the chaos cluster's processes run: one "host" per network namespace,
or every process on loopback when namespaces cannot be made.

Netns layout (every address lives inside namespaces made here, 10.77.0.0/24):

    hub namespace: bridge br0, one veth end per host (named v-HOST)
    HOST namespace: eth0 (the other end) with 10.77.0.N/24, and lo

A partition takes a host's hub-side link down, cutting it off from every other
host while its own processes (and their shared memory) keep running; `isolate`
cuts it off from some hosts only (blackhole routes in its namespace). Abstract
Unix sockets are per network namespace, so shared memory works only inside
one host, as on real machines. `teardown` deletes every namespace made (their
links go with them); stale namespaces of a run whose orchestrator died are
removed at the next start.
"""

import os
import re
import subprocess

SUBNET = "10.77.0"
PREFIX = "crchaos-"


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True)


class Host:
    def __init__(self, name, address, netns=None):
        self.name = name
        self.address = address
        self.netns = netns

    def command(self, argv):
        """argv run inside this host (`ip netns exec` execs it: the pid is the program's)."""
        return ["ip", "netns", "exec", self.netns, *argv] if self.netns else list(argv)


class Loopback:
    """Every host is 127.0.0.1; partitions are unavailable."""

    kind = "loopback"
    can_partition = False

    def __init__(self, names):
        self.hosts = {n: Host(n, "127.0.0.1") for n in names}

    def partition(self, name, cut):
        raise RuntimeError("loopback topology cannot partition")

    def isolate(self, name, peers, cut):
        raise RuntimeError("loopback topology cannot partition")

    def teardown(self):
        pass


class Netns:
    kind = "netns"
    can_partition = True

    def __init__(self, names):
        self.tag = "%s%d-" % (PREFIX, os.getpid())
        self.hub = self.tag + "hub"
        self.made = []
        self.hosts = {}
        try:
            self._add_ns(self.hub)
            _ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.hub, "link", "set", "br0", "up")
            for i, name in enumerate(names):
                ns = self.tag + name
                self._add_ns(ns)
                address = "%s.%d" % (SUBNET, i + 1)
                _ip("-n", self.hub, "link", "add", "v-" + name, "type", "veth",
                    "peer", "name", "eth0", "netns", ns)
                _ip("-n", self.hub, "link", "set", "v-" + name, "master", "br0", "up")
                _ip("-n", ns, "addr", "add", address + "/24", "dev", "eth0")
                _ip("-n", ns, "link", "set", "eth0", "up")
                self.hosts[name] = Host(name, address, ns)
        except BaseException:
            self.teardown()
            raise

    def _add_ns(self, ns):
        _ip("netns", "add", ns)
        self.made.append(ns)
        _ip("-n", ns, "link", "set", "lo", "up")

    def partition(self, name, cut):
        _ip("-n", self.hub, "link", "set", "v-" + name, "down" if cut else "up")

    def isolate(self, name, peers, cut):
        """Cuts host `name` off from the hosts `peers` only (or heals that): a blackhole route
        in its namespace drops every packet it sends to each, so no TCP exchange with them
        completes while every other host still reaches it."""
        for peer in peers:
            _ip("-n", self.hosts[name].netns, "route", "add" if cut else "del", "blackhole",
                self.hosts[peer].address + "/32", check=cut)

    def teardown(self):
        while self.made:
            _ip("netns", "del", self.made.pop(), check=False)


def remove_stale():
    """Deletes namespaces left by chaos runs whose process is gone."""
    listing = _ip("netns", "list", check=False).stdout
    for ns in re.findall(r"^(%s(\d+)-\S+)" % PREFIX, listing, re.M):
        if not os.path.exists("/proc/%s" % ns[1]):
            _ip("netns", "del", ns[0], check=False)


def make(names, mode):
    """(topology, note): mode is "netns", "loopback" or "auto" (netns when possible)."""
    if mode == "loopback":
        return Loopback(names), "loopback processes (asked for)"
    try:
        if os.geteuid() != 0:
            raise PermissionError("not root")
        remove_stale()
        return Netns(names), "network namespaces, one per host (%s.0/24)" % SUBNET
    except (OSError, subprocess.CalledProcessError) as e:
        if mode == "netns":
            raise
        detail = e.stderr.strip() if isinstance(e, subprocess.CalledProcessError) else str(e)
        return Loopback(names), "loopback processes: network namespaces unavailable (%s)" % detail
