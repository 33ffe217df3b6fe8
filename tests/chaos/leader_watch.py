"""Watches the leader key of a cluster of masters in etcd (docs/ha.md) and logs
every change, one JSON line each, flushed at once:

    {"t": monotonic time seen, "rev": the key's create revision (0: absent),
     "id": master_id, "grpc": its address (both null while absent or not yet published)}

The create revision is the leader's fence: every log write of a leader compares
it. It polls (a linearizable range through etcd's JSON gateway) every POLL_S,
trying the next endpoint when one does not answer, until the stop file appears.
A change is logged at most POLL_S (plus one range) after etcd made it; one that
lasted less than that may be missed.
"""

import argparse
import base64
import json
import os
import time
import urllib.request

POLL_S = 0.05


def read_leader(endpoint, cluster, timeout=1.0):
    """(create revision, master_id, grpc) of the leader key, (0, None, None) when absent."""
    key = base64.b64encode(("/crescent/%s/leader" % cluster).encode()).decode()
    req = urllib.request.Request("http://%s/v3/kv/range" % endpoint,
                                 data=json.dumps({"key": key}).encode())
    with urllib.request.urlopen(req, timeout=timeout) as r:
        kvs = json.loads(r.read()).get("kvs") or []
    if not kvs:
        return 0, None, None
    fields = dict(line.split("=", 1) for line in
                  base64.b64decode(kvs[0].get("value", "")).decode().splitlines() if "=" in line)
    return int(kvs[0]["create_revision"]), fields.get("master_id"), fields.get("grpc") or None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--endpoints", required=True, help="H:P,H:P,...")
    p.add_argument("--cluster", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--stop-file", required=True)
    a = p.parse_args()
    endpoints = a.endpoints.split(",")
    i, last = 0, None
    with open(a.log, "a", buffering=1) as log:
        while not os.path.exists(a.stop_file):
            try:
                now = read_leader(endpoints[i], a.cluster)
            except (OSError, ValueError):
                i = (i + 1) % len(endpoints)
                continue
            if now != last:
                log.write(json.dumps({"t": time.monotonic(), "rev": now[0], "id": now[1],
                                      "grpc": now[2]}) + "\n")
                last = now
            time.sleep(POLL_S)


if __name__ == "__main__":
    main()
