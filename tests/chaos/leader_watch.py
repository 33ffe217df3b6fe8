"""Watches the leader key of a cluster of masters in etcd (docs/ha.md) and logs
every change, one JSON line each, flushed at once:

    {"t": monotonic time seen, "rev": the key's create revision (0: absent),
     "id": master_id, "grpc": its address (both null while absent or not yet published),
     "after": when the poll before it was sent}

A state seen at "t" held at some moment before "t"; one whose revision is new did
not exist when the previous poll was sent ("after"): the key then had an older
revision or none, and a deleted key's revision never comes back.

With --revisions FILE it also logs, a line per poll whose answer moved on,
"SENT SEEN REVISION": etcd's revision (its header's) as one poll sent at SENT
found it by SEEN. So whatever etcd committed at revision R was committed after
the last poll that found less than R was sent, and by the time the first that
found R or more returned (ha_check.commit_times).

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
    """((create revision, master_id, grpc) of the leader key, (0, None, None) when absent;
    etcd's revision)."""
    key = base64.b64encode(("/crescent/%s/leader" % cluster).encode()).decode()
    req = urllib.request.Request("http://%s/v3/kv/range" % endpoint,
                                 data=json.dumps({"key": key}).encode())
    with urllib.request.urlopen(req, timeout=timeout) as r:
        answer = json.loads(r.read())
    kvs = answer.get("kvs") or []
    revision = int(answer["header"]["revision"])
    if not kvs:
        return (0, None, None), revision
    fields = dict(line.split("=", 1) for line in
                  base64.b64decode(kvs[0].get("value", "")).decode().splitlines() if "=" in line)
    return (int(kvs[0]["create_revision"]), fields.get("master_id"),
            fields.get("grpc") or None), revision


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--endpoints", required=True, help="H:P,H:P,...")
    p.add_argument("--cluster", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--stop-file", required=True)
    p.add_argument("--revisions", help="file for etcd's revision per poll")
    a = p.parse_args()
    endpoints = a.endpoints.split(",")
    i, last, sent_before, newest = 0, None, time.monotonic(), 0
    revisions = open(a.revisions, "a", buffering=1) if a.revisions else None
    with open(a.log, "a", buffering=1) as log:
        while not os.path.exists(a.stop_file):
            sent = time.monotonic()
            try:
                now, revision = read_leader(endpoints[i], a.cluster)
            except (OSError, ValueError, KeyError):
                i = (i + 1) % len(endpoints)
                continue
            if revisions and revision > newest:
                revisions.write("%.4f %.4f %d\n" % (sent, time.monotonic(), revision))
                newest = revision
            if now != last:
                log.write(json.dumps({"t": time.monotonic(), "rev": now[0], "id": now[1],
                                      "grpc": now[2], "after": sent_before}) + "\n")
                last = now
            sent_before = sent
            time.sleep(POLL_S)


if __name__ == "__main__":
    main()
