"""Judges a chaos run from its operation logs and fault records.

Properties (each breach is one violation, with the records that show it):
  1. Every get that succeeded returned exactly the bytes of a put of that key
     that began before the get ended and did not fail. A put that returned an
     error fails unless the error leaves its outcome unknown (TIMEOUT,
     UNAVAILABLE, INTERNAL: the PutEnd may have landed) or it never ended.
     Nor a stale one: the read must not begin after a later put of the key
     succeeded or a remove of it succeeded, where that put or remove began
     after the read's put had returned (values are immutable, so the key then
     no longer held that put, and never would again).
  2. No operation took longer than oplog.HANG_S, not counting the time its
     process was frozen by the injector; none was left unfinished.
  3. After the faults stopped and the cluster settled, every key the master
     listed read back (verify operations) with the bytes of an allowed put.
"""

import collections
import json

import crescent

import oplog

UNKNOWN_CODES = {-int(c) for c in (15, 16, 21)}  # UNAVAILABLE, TIMEOUT, INTERNAL
READS = {"get", "get_into", "verify", "probe"}
PUTS = {"put", "put_from"}


def load(paths):
    """Operations as dicts: the begin record, plus t1/code/got/bad from its end (absent if none)."""
    ops = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if not line.endswith("\n"):
                    continue  # torn last line of a killed process
                r = json.loads(line)
                key = (r["w"], r["n"])
                if r["ev"] == "b":
                    ops[key] = dict(r)
                else:
                    ops[key].update(t1=r["t"], code=r["code"], got=r["got"], bad=r["bad"])
    return list(ops.values())


def outcome(op):
    if "code" not in op:
        return "unfinished"
    return "ok" if op["code"] >= 0 else crescent.error_name(op["code"])


def _frozen(intervals, t0, t1):
    return sum(max(0.0, min(t1, b) - max(t0, a)) for a, b in intervals)


def check(ops, faults, run_end, worker_names, model=None):
    """(violations: [str], counts: {(op, outcome): n}). `model` (durability.Model) adds the
    durability checks of a master with a data dir, and the changes a restart may undo."""
    violations = []
    counts = collections.Counter((op["op"], outcome(op)) for op in ops)
    freezes = collections.defaultdict(list)
    for f in faults:
        if f["kind"] == "client_stop":
            freezes[f["target"]].append((f["begin"], f["end"]))

    puts = {}
    barriers = collections.defaultdict(list)  # key -> successful puts and removes
    for op in ops:
        if op["op"] in PUTS:
            code = op.get("code")
            ok = code is None or code == 0 or code in UNKNOWN_CODES
            puts[(op["key"], op["put_id"])] = (op, ok)
        if op.get("code") == 0 and op["op"] not in READS:
            barriers[op["key"]].append(op)

    for op in ops:
        t1 = op.get("t1", run_end)
        held = t1 - op["t"] - _frozen(freezes[worker_names.get(op["w"], "")], op["t"], t1)
        if "code" not in op:
            violations.append("unfinished %s after %.1f s: %s" % (op["op"], held, _show(op)))
        elif held > oplog.HANG_S:
            violations.append("hang: %s took %.1f s unfrozen: %s" % (op["op"], held, _show(op)))
        if op["op"] not in READS or op.get("code") is None:
            continue
        if op["code"] < 0:
            if op["op"] == "verify":
                violations.append("listed key unreadable after settle: %s" % _show(op))
            continue
        if op["bad"] is not None:
            violations.append("foreign or corrupt bytes: %s" % _show(op))
            continue
        source = puts.get((op["key"], op["got"]))
        if source is None:
            violations.append("bytes of no put of this key: %s" % _show(op))
        elif not source[1]:
            violations.append("bytes of a failed put (%s): read %s; put %s" % (
                outcome(source[0]), _show(op), _show(source[0])))
        elif source[0]["t"] > t1:
            violations.append("bytes of a put that began after the read ended: read %s; put %s"
                              % (_show(op), _show(source[0])))
        elif "t1" in source[0]:
            for b in barriers[op["key"]]:
                if b["t"] > source[0]["t1"] and b["t1"] < op["t"]:
                    if model is not None and model.may_be_undone(b, op["key"], op["t"]):
                        continue
                    violations.append("stale read: %s; its put %s; then %s" % (
                        _show(op), _show(source[0]), _show(b)))
                    break
    if model is not None:
        violations += model.losses(ops)
    return violations, counts


def _show(op):
    fields = {k: op[k] for k in ("w", "n", "op", "key", "put_id", "got", "bad") if op.get(k)}
    if "code" in op:
        fields["code"] = crescent.error_name(op["code"]) if op["code"] < 0 else op["code"]
    fields["t"] = "%.3f-%s" % (op["t"], "%.3f" % op["t1"] if "t1" in op else "?")
    return json.dumps(fields)
