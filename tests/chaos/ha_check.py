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
     violation unless M led again in a later term (a create revision above every
     one seen by s whose record names M, or names nobody: a term never published).
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
     the breaches of check 1 that the timeline cannot.
  The watcher polls: a term shorter than its poll interval may go unseen, and a
  term seen only unpublished counts as possibly any master's (never flagged).
"""


def terms(seen):
    """{create revision: the address its record named (None: never seen published)}."""
    owner = {}
    for s in seen:
        if s["rev"] and (s["grpc"] or s["rev"] not in owner):
            owner[s["rev"]] = s["grpc"]
    return owner


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


MUTATIONS = ("put", "put_from", "remove", "remove_force")


def fenced(ops, seen, pinned):
    """[(op, master address, the watcher's record that fenced it)]: the pinned workers'
    changes that check 1 judges (begun after their master's terms were over, with no later
    term that may be its), whatever their outcome."""
    owner = terms(seen)
    judged = []
    for op in ops:
        grpc = pinned.get(op["w"])
        if grpc is None or op["op"] not in MUTATIONS or "code" not in op:
            continue
        before = [s for s in seen if s["t"] < op["t"]]
        if not before:
            continue
        last = before[-1]
        if last["rev"] and owner.get(last["rev"]) in (grpc, None):
            continue  # held by this master, or by a term whose master is unknown
        fence = max(s["rev"] for s in before)
        if any(rev > fence and who in (grpc, None) for rev, who in owner.items()):
            continue  # it may have led again
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
