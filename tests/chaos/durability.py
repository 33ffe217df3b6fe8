"""The durability checks of a chaos run whose master keeps a data dir.

A master restart must keep every acknowledged change:
  - under --log-sync always, every put acknowledged before the kill;
  - under --log-sync N, every put acknowledged more than N ms + MARGIN_S before it
    (a change acknowledged later may be lost, and a remove acknowledged later
    may be undone: the object reads back).

The check is made at reads that missed (OBJECT_NOT_FOUND): the key's last
successful put P ended before a master kill that came before the read, and
nothing else may have dropped the object meanwhile. Legitimate drops, which
excuse the miss:
  - a remove of the key that began before the read ended and ended after P began
    (or never ended), and succeeded or has an unknown outcome;
  - a store node that lost its memory (killed), or its heartbeats for long enough
    (stopped or cut off for SHORT_S or more), between P and the read: its DRAM
    objects go, and the client cannot see which node held P, so any such window,
    plus NODE_MARGIN_S, excuses every key;
  - an eviction, seen by the stats poller between P and the read, or one of the
    key that the log records then (a cluster of masters);
  - a torn log tail that cut the record naming the key.
A read that began less than SETTLE_S after the master was ready again is not
judged (nor one in flight when it was killed): a restored object is hidden until
its node takes its segment back.
"""

import bisect

import crescent

import checker

MARGIN_S = 0.3
KILL_SLACK_S = 0.1
# A node's DRAM segment is dropped once its heartbeats (every 0.5 s) stop for the TTL
# (3 s): a stop or a partition shorter than SHORT_S never drops it, and a drop comes
# at most NODE_MARGIN_S after the fault ends.
SHORT_S = 2.0
NODE_MARGIN_S = 4.0
SETTLE_S = 3.0
NODE_KINDS = ("store_kill", "store_stop", "partition")
REMOVES = ("remove", "remove_force")
READS = ("get", "get_into", "verify", "probe")


class Model:
    def __init__(self, faults, sync_ms, evictions=(), key_evictions=None):
        """`sync_ms`: 0 for --log-sync always, else N. `evictions`: [(t0, t1)], the stats
        poller's intervals in which the master evicted; each excuses misses across it.
        `key_evictions`: {key: [(t0, t1)]}, evictions known by key (a cluster of masters'
        log, ha_check.evicted_keys); each excuses misses of its key across it."""
        self.window_s = 0.0 if sync_ms == 0 else sync_ms / 1000.0 + MARGIN_S
        self.kills = sorted((k[0], k[1], tuple(f.get("torn_keys", ())))
                            for f in faults for k in f.get("kills", ()))
        self.kill_times = [k[0] for k in self.kills]
        # Tears made while the master was already down (another fault's kill or SIGTERM):
        # (when, keys the cut record names), not tied to a kill of their own.
        self.tears = [(f["begin"], tuple(f.get("torn_keys", ()))) for f in faults
                      if f["kind"] == "torn_tail" and not f.get("kills")]
        self.node_windows = [(f["begin"], f["end"] + NODE_MARGIN_S) for f in faults
                             if f["kind"] == "store_kill" or (f["kind"] in NODE_KINDS and
                                                              f["end"] - f["begin"] >= SHORT_S)]
        self.node_windows += [(w[0], w[1] + NODE_MARGIN_S)
                              for w in (f.get("node_window") for f in faults) if w]
        self.evictions = list(evictions)
        self.key_evictions = key_evictions or {}
        self.tally = {}  # how each miss after a restart was judged -> count

    def _kills_between(self, t0, t1):
        i = bisect.bisect_right(self.kill_times, t0)
        j = bisect.bisect_left(self.kill_times, t1)
        return self.kills[i:j]

    def _evicted_between(self, t0, t1):
        return any(a < t1 and b > t0 for a, b in self.evictions)

    def may_be_undone(self, change, key, read_t):
        """Whether a master kill between `change`'s acknowledgement and `read_t` may have
        undone it: under N, a kill within the sync window after it; in any mode, a torn tail
        that cut the record naming the key. A kill is recorded just before the signal, so
        an acknowledgement up to KILL_SLACK_S later may still have come from the killed
        process."""
        t1 = change["t1"]
        kills = [k for k in self._kills_between(t1 - KILL_SLACK_S, read_t)
                 if k[1] is not None and k[1] < read_t]
        if self.window_s > 0 and any(k[0] < t1 + self.window_s for k in kills):
            return True
        if any(key in k[2] for k in kills):
            return True
        return any(t1 - KILL_SLACK_S < at < read_t and key in keys for at, keys in self.tears)

    def losses(self, ops):
        """Violations: acknowledged puts a master restart lost."""
        by_key = {}
        for op in ops:
            by_key.setdefault(op["key"], []).append(op)
        violations = []
        for key, kops in by_key.items():
            puts = sorted((op for op in kops if op["op"] in ("put", "put_from")
                           and op.get("code") == 0), key=lambda op: op["t1"])
            # Only a remove that succeeded or whose outcome is unknown may have removed it.
            removes = [op for op in kops if op["op"] in REMOVES
                       and op.get("code", 0) in (0, *checker.UNKNOWN_CODES)]
            for r in kops:
                if r["op"] not in READS or r.get("code") != crescent.OBJECT_NOT_FOUND:
                    continue
                p = next((p for p in reversed(puts) if p["t1"] < r["t"]), None)
                # Every kill before the read ended: one during the read leaves it unjudged.
                kills = self._kills_between(p["t1"], r["t1"]) if p else []
                if not kills or kills[-1][1] is None or r["t"] < kills[-1][1] + SETTLE_S:
                    continue
                why = self._excuse(key, p, r, removes)
                self.tally[why or "lost"] = self.tally.get(why or "lost", 0) + 1
                if why is None:
                    violations.append("acknowledged put lost by a master restart (kill at %.3f): "
                                      "read %s; put %s" % (kills[0][0], _brief(r), _brief(p)))
        return violations


    def _excuse(self, key, p, r, removes):
        if any(x["t"] < r["t1"] and x.get("t1", float("inf")) > p["t"] for x in removes):
            return "removed"
        if any(a < r["t1"] and b > p["t"] for a, b in self.node_windows):
            return "node fault"
        if self._evicted_between(p["t"], r["t1"]):
            return "eviction"
        if any(a < r["t1"] and b > p["t"] for a, b in self.key_evictions.get(key, ())):
            return "eviction of the key"
        if self.may_be_undone(p, key, r["t"]):
            return "sync window or torn tail"
        return None

    def summary(self):
        """One line: the misses after a master restart, judged."""
        return "misses of acknowledged puts after a master restart: %d (%s)" % (
            sum(self.tally.values()),
            ", ".join("%s %d" % kv for kv in sorted(self.tally.items())) or "none")


def _brief(op):
    return "%s w%d #%d %s %.3f-%s code %s" % (op["op"], op["w"], op["n"], op["key"], op["t"],
                                             "%.3f" % op["t1"] if "t1" in op else "?",
                                             op.get("code"))
