#!/usr/bin/env python3
"""What a client pays to move to a new leader (docs/ha.md, "Clients follow the leader").

    PYTHONPATH=build/python scripts/leader_switch_latency.py [--build build] [--switches 10]

Starts a one-member etcd and a `crescent serve`, publishes it as the leader of
cluster "sw", and connects a Store to etcd://.../sw. Then, each switch: starts
the next serve, kill -9's the leading one, publishes the new one, and times
the Store's next put (its failed try on the dead master, the re-read of the
leader key, the try on the new one). Election time is not in it: the script
publishes the new leader itself. Prints the median and worst of the put's
latency after the publish, and of the time from the kill.
"""
import argparse
import base64
import json
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--switches", type=int, default=10)
    args = ap.parse_args()
    import crescent

    crescent_bin = args.build + "/bin/crescent"
    tmp = tempfile.mkdtemp(prefix="leader-switch-")
    client, peer = "127.0.0.1:%d" % free_port(), "http://127.0.0.1:%d" % free_port()
    etcd = subprocess.Popen(
        ["etcd", "--name", "m", "--data-dir", tmp + "/etcd", "--listen-client-urls",
         "http://" + client, "--advertise-client-urls", "http://" + client,
         "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
         "--initial-cluster", "m=" + peer], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def b64(text):
        return base64.b64encode(text.encode()).decode()

    def publish(addr):
        body = {"key": b64("/crescent/sw/leader"),
                "value": b64("master_id=%s\ngrpc=%s\nhttp=\n" % (addr, addr))}
        for _ in range(100):
            try:
                req = urllib.request.Request("http://%s/v3/kv/put" % client,
                                             json.dumps(body).encode())
                urllib.request.urlopen(req, timeout=5).read()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("etcd does not answer")

    def serve(i):
        path = "%s/serve%d.log" % (tmp, i)
        proc = subprocess.Popen([crescent_bin, "serve", "--port", "0", "--http-port", "0",
                                 "--segment-size", "64MiB"], stdout=open(path, "w"),
                                stderr=subprocess.STDOUT)
        for _ in range(400):
            time.sleep(0.05)
            text = open(path).read()
            if "ready" in text:
                return proc, re.search(r"listening on ([0-9.]+:[0-9]+)", text).group(1)
        raise SystemExit("serve did not start: " + path)

    current, addr = serve(0)
    publish(addr)
    store = crescent.Store()
    store.setup("localhost", "", 0, 0, "tcp", "", "etcd://%s/sw" % client)
    assert store.put("k0", b"x" * 4096) == 0
    from_kill, from_publish = [], []
    for i in range(1, args.switches + 1):
        following, addr = serve(i)
        killed = time.monotonic()
        current.send_signal(signal.SIGKILL)
        current.wait()
        publish(addr)
        published = time.monotonic()
        rc = store.put("k%d" % i, b"x" * 4096)
        done = time.monotonic()
        assert rc == 0, rc
        from_kill.append((done - killed) * 1000)
        from_publish.append((done - published) * 1000)
        current = following
    store.close()
    current.send_signal(signal.SIGTERM)
    current.wait()
    etcd.kill()
    etcd.wait()
    for name, ms in (("put after the publish", from_publish), ("kill -9 to put done", from_kill)):
        ms.sort()
        print("%-22s median %6.1f ms  worst %6.1f ms  (%d switches)" %
              (name, ms[len(ms) // 2], ms[-1], len(ms)))


if __name__ == "__main__":
    main()
