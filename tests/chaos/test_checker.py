"""The checker on hand-made operation records: it must flag each kind of
violation and accept what faults legitimately cause (misses, unknown put
outcomes, time spent frozen)."""

import checker
import values


def op(w, n, name, key, t0, t1, code=0, put_id=None, got=None, bad=None):
    record = {"w": w, "n": n, "op": name, "key": key, "put_id": put_id, "t": t0}
    if t1 is not None:
        record.update(t1=t1, code=code, got=got, bad=bad)
    return record


def verdict(ops, faults=(), run_end=100.0):
    return checker.check(ops, list(faults), run_end, {0: "w0", 1: "w1"})[0]


def test_read_of_a_completed_or_unknown_put_is_allowed():
    ops = [op(0, 1, "put", "k", 0, 1, put_id=7),
           op(0, 2, "get", "k", 2, 3, got=7),
           op(1, 1, "put", "j", 0, 1, code=-16, put_id=8),  # TIMEOUT: may have landed
           op(1, 2, "get_into", "j", 2, 3, got=8),
           op(1, 3, "get", "j", 4, 5, code=-4)]           # a miss is never a violation
    assert verdict(ops) == []


def test_read_of_a_failed_put_is_flagged():
    ops = [op(0, 1, "put", "k", 0, 1, code=-13, put_id=7), op(1, 1, "get", "k", 2, 3, got=7)]
    assert "failed put" in verdict(ops)[0]


def test_foreign_bytes_are_flagged():
    data = values.derive("other", 9, 4096)
    got, bad = values.identify("k", data)
    assert got == 9 and bad is not None
    ops = [op(0, 1, "get", "k", 2, 3, got=got, bad=bad)]
    assert "foreign" in verdict(ops)[0]


def test_bytes_of_no_put_or_a_later_put_are_flagged():
    assert "no put" in verdict([op(0, 1, "get", "k", 2, 3, got=5)])[0]
    ops = [op(0, 1, "get", "k", 2, 3, got=5), op(1, 1, "put", "k", 4, 5, put_id=5)]
    assert "began after" in verdict(ops)[0]


def test_stale_read_after_a_later_put_or_remove_is_flagged():
    put = op(0, 1, "put", "k", 0, 1, put_id=5)
    later_put = op(1, 1, "put", "k", 2, 3, put_id=6)
    remove = op(1, 2, "remove", "k", 2, 3)
    read = op(0, 2, "get", "k", 4, 5, got=5)
    assert "stale" in verdict([put, later_put, read])[0]
    assert "stale" in verdict([put, remove, read])[0]
    overlapping = op(1, 3, "remove", "k", 0.5, 3)  # began before the put returned
    assert verdict([put, overlapping, read]) == []


def test_hangs_count_only_unfrozen_time():
    slow = op(0, 1, "get", "k", 0, 95, code=-4)
    assert "hang" in verdict([slow])[0]
    frozen = [{"kind": "client_stop", "target": "w0", "begin": 10.0, "end": 40.0}]
    assert verdict([slow], frozen) == []
    assert "unfinished" in verdict([op(0, 1, "put", "k", 0, None, put_id=1)])[0]


def test_verify_read_must_succeed():
    assert "unreadable" in verdict([op(100, 1, "verify", "k", 0, 1, code=-15)])[0]
