"""The checks of a chaos run against a cluster of masters (ha.py), from the leader
watcher's records (leader_watch.py: when each state of the leader key was seen,
its create revision, the fence, and the address of the master it names) and the
operations of the pinned workers, each of which talks straight to one master's
address rather than to whichever leads.

What the history can prove, and so what is checked:

  1. No acknowledgement from a deposed leader (split brain). A master acknowledges
     a change only once etcd committed its log batch in a transaction guarded by
     the leader key's create revision (docs/ha.md, the fencing rule). If the key
     was seen absent, or held by another master, at time s, every term of master M
     that began before s was over by then: its guarded writes fail from s on. So a
     change that a worker pinned to M began after s, and that M acknowledged, is a
     violation unless M may have led again in a later term by the time it
     acknowledged: a create revision above every one seen by s, whose record names
     M or nobody (a term never published), and that the poll before the first
     one to see it was sent before the acknowledgement (leader_watch.py).
     What this cannot prove: a change that began before s and was acknowledged
     after it. Its batch may have committed before s (legitimately) or after (a
     breach); no client sees when. Such a breach shows up as a loss instead: the
     new leader never learns of the change, so a later read misses (check 2).
  2. No acknowledged put lost across a change of leader. Every change the watcher
     saw (a new create revision, published) is fed to the durability model
     (durability.Model) as a "kill" at the moment the old term was seen to end and
     a restart at the moment the new leader was seen published: a read that
     missed, of a key whose last acknowledged put ended before the old term was
     seen to end, and that began SETTLE_S after the new leader was seen, is a loss
     unless a remove, a node fault or an eviction excuses it. A leader that
     acknowledged by committing to etcd cannot lose that way; the check sees
     the breaches of check 1 that the timeline cannot. Evictions are read from
     the log itself (its records of objects evicted, by key), each placed in
     time by the revision etcd committed it at (evicted_keys): a leader that
     evicts and is killed before the stats poller asks it leaves no other trace.
  The watcher polls: a term shorter than its poll interval may go unseen, and a
  term seen only unpublished counts as possibly any master's (never flagged).
"""

import bisect
import itertools
import struct


def terms(seen):
    """{create revision: the address its record named (None: never seen published)}."""
    owner = {}
    for s in seen:
        if s["rev"] and (s["grpc"] or s["rev"] not in owner):
            owner[s["rev"]] = s["grpc"]
    return owner


def _created_after(seen):
    """{create revision: a moment before which it did not exist} (its first record's)."""
    after = {}
    for s in seen:
        if s["rev"]:
            after.setdefault(s["rev"], s["after"])
    return after


def leader_changes(seen):
    """[{"kind": "leader_change", "kills": [[t_old_term_seen_over, t_new_seen_published]]}]:
    one per published term after the first, in the durability model's form."""
    changes, current, ended = [], None, None
    for s in seen:
        if current is not None and s["rev"] != current and ended is None:
            ended = s["t"]
        if s["grpc"] and s["rev"] != current:
            if current is not None:
                changes.append({"kind": "leader_change", "rev": s["rev"],
                                "kills": [[ended if ended is not None else s["t"], s["t"]]]})
            current, ended = s["rev"], None
    return changes


# An eviction is logged before etcd commits its batch: at most the leader's TTL (its
# retries end then) and the wait for the batch before it; this much is ample.
COMMIT_SLACK_S = 5.0
REMOVED, EVICTED = 4, 1  # master/log_record.h: kObjectRemoved, RemovalReason::kEvicted


def _varint(data, at):
    value, shift = 0, 0
    while True:
        b = data[at]
        value |= (b & 0x7F) << shift
        at += 1
        if b < 0x80:
            return value, at
        shift += 7


def evictions(batches):
    """[(key, create revision of its batch)] of each eviction the log's batches record
    (durability/log_frame.h: a 4-byte length, a 4-byte check, the record)."""
    found = []
    for revision, value in batches:
        at = 0
        while at + 8 <= len(value):
            length = struct.unpack_from("<I", value, at)[0]
            record = value[at + 8:at + 8 + length]
            at += 8 + length
            if record[:1] == bytes([REMOVED]):
                n, k = _varint(record, 1)
                if record[k + n:k + n + 1] == bytes([EVICTED]):
                    found.append((record[k:k + n].decode(errors="replace"), revision))
    return found


def commit_times(path):
    """revision -> (after, by): etcd committed it after `after` and by `by`, from the
    watcher's --revisions lines ("SENT SEEN REVISION", revisions rising)."""
    with open(path) as f:
        polls = [(float(a), float(b), int(r)) for a, b, r in
                 (line.split() for line in f if line.endswith("\n"))]
    revs = [p[2] for p in polls]

    def at(revision):
        i = bisect.bisect_left(revs, revision)  # the first poll that found it
        after = polls[i - 1][0] if i > 0 else float("-inf")
        return after, polls[i][1] if i < len(polls) else float("inf")
    return at


def evicted_keys(batches, revisions_path):
    """{key: [(t0, t1)]}: each eviction of the key the log records, in monotonic time."""
    at = commit_times(revisions_path)
    keys = {}
    for key, revision in evictions(batches):
        after, by = at(revision)
        keys.setdefault(key, []).append((after - COMMIT_SLACK_S, by))
    return keys


MUTATIONS = ("put", "put_from", "remove", "remove_force")


def fenced(ops, seen, pinned):
    """[(op, master address, the watcher's record that fenced it)]: the pinned workers'
    changes that check 1 judges (begun after their master's terms were over, with no later
    term that may be its by the time the change ended), whatever their outcome."""
    owner = terms(seen)
    after = _created_after(seen)
    times = [s["t"] for s in seen]
    fences = list(itertools.accumulate((s["rev"] for s in seen), max))  # newest rev by then
    # Per master, the terms that may be its (its own, or of no known master), oldest first.
    maybe = {g: sorted(rev for rev, who in owner.items() if who in (g, None))
             for g in set(pinned.values())}
    judged = []
    for op in ops:
        grpc = pinned.get(op["w"])
        if grpc is None or op["op"] not in MUTATIONS or "code" not in op:
            continue
        i = bisect.bisect_left(times, op["t"])
        if i == 0:
            continue
        last = seen[i - 1]
        if last["rev"] and owner.get(last["rev"]) in (grpc, None):
            continue  # held by this master, or by a term whose master is unknown
        # The oldest later term that may be its began before any other later one did.
        j = bisect.bisect_right(maybe[grpc], fences[i - 1])
        if j < len(maybe[grpc]) and after[maybe[grpc][j]] < op["t1"]:
            continue  # it may have led again by the time the change ended
        judged.append((op, grpc, last))
    return judged


def split_brain(ops, seen, pinned):
    """Violations of check 1. `pinned`: {worker id: the master address it talks to}."""
    owner = terms(seen)
    violations = []
    for op, grpc, last in fenced(ops, seen, pinned):
        if op["code"] != 0:
            continue
        held = "held by %s (revision %d)" % (owner[last["rev"]], last["rev"]) \
            if last["rev"] else "absent"
        violations.append(
            "acknowledged by a deposed leader: %s %s w%d #%d began %.3f, acknowledged %.3f by "
            "%s, but the leader key was %s at %.3f and %s never led after" % (
                op["op"], op["key"], op["w"], op["n"], op["t"], op["t1"], grpc, held,
                last["t"], grpc))
    return violations
