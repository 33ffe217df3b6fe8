"""The checker on hand-made operation records: it must flag each kind of
violation and accept what faults legitimately cause (misses, unknown put
outcomes, time spent frozen)."""

import checker
import durability
import ha_check
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


def durable(ops, faults, sync_ms=0, evictions=()):
    model = durability.Model(list(faults), sync_ms, evictions)
    return checker.check(ops, list(faults), 100.0, {0: "w0", 1: "w1"}, model)[0]


KILL = {"kind": "master_kill", "target": "master", "begin": 10.0, "end": 11.0,
        "kills": [[10.0, 11.0]]}
MISS = -4  # OBJECT_NOT_FOUND


def test_a_put_acknowledged_before_a_master_kill_must_survive_it():
    put = op(0, 1, "put", "k", 1, 2, put_id=5)
    assert "lost by a master restart" in durable([put, op(1, 1, "get", "k", 20, 21, code=MISS)],
                                                  [KILL])[0]
    # Read too soon after the restart (its node may not have taken the segment back yet).
    assert durable([put, op(1, 1, "get", "k", 12, 13, code=MISS)], [KILL]) == []
    # A put still in flight at the kill, or a miss without a kill between, is not judged.
    assert durable([op(0, 1, "put", "k", 9, 10.5, put_id=5),
                    op(1, 1, "get", "k", 20, 21, code=MISS)], [KILL]) == []
    assert durable([put, op(1, 1, "get", "k", 5, 6, code=MISS)], [KILL]) == []


def test_legitimate_drops_excuse_a_miss():
    put = op(0, 1, "put", "k", 1, 2, put_id=5)
    miss = op(1, 1, "get", "k", 20, 21, code=MISS)
    remove = op(1, 2, "remove", "k", 3, 4, code=-15)  # unknown outcome: may have removed it
    assert durable([put, remove, miss], [KILL]) == []
    failed_remove = op(1, 2, "remove", "k", 3, 4, code=-7)  # OBJECT_LEASED: removed nothing
    assert "lost" in durable([put, failed_remove, miss], [KILL])[0]
    node = {"kind": "store_kill", "target": "store0", "begin": 5.0, "end": 6.0}
    assert durable([put, miss], [KILL, node]) == []
    short = {"kind": "store_stop", "target": "store0", "begin": 5.0, "end": 6.0}
    assert "lost" in durable([put, miss], [KILL, short])[0]  # heartbeats never timed out
    assert durable([put, miss], [KILL], evictions=[(3.0, 4.0)]) == []
    torn = dict(KILL, torn_keys=["k"])
    assert durable([put, miss], [torn]) == []


def test_under_a_sync_interval_only_older_changes_must_survive():
    late = op(0, 1, "put", "k", 9.5, 9.9, put_id=5)
    miss = op(1, 1, "get", "k", 20, 21, code=MISS)
    assert durable([late, miss], [KILL], sync_ms=10) == []
    assert "lost" in durable([late, miss], [KILL], sync_ms=0)[0]
    early = op(0, 1, "put", "k", 1, 2, put_id=5)
    assert "lost" in durable([early, miss], [KILL], sync_ms=10)[0]
    # A remove acknowledged inside the window may be undone: the old value reads back.
    put = op(0, 1, "put", "k", 1, 2, put_id=5)
    remove = op(1, 1, "remove", "k", 9.8, 9.9)
    read = op(0, 2, "get", "k", 20, 21, got=5)
    assert durable([put, remove, read], [KILL], sync_ms=10) == []
    assert "stale" in durable([put, remove, read], [KILL], sync_ms=0)[0]
    # Acknowledged just after the kill was recorded: the dying master may have sent it.
    remove = op(1, 1, "remove", "k", 9.99, 10.01)
    assert durable([put, remove, read], [KILL], sync_ms=10) == []


def test_a_tear_made_while_the_master_was_down_excuses_what_it_cut():
    # The master stopped by SIGTERM at 10; its log's last record (the remove of k)
    # was cut while it was down: the removed value may read back after the restart.
    put = op(0, 1, "put", "k", 1, 2, put_id=5)
    remove = op(1, 1, "remove", "k", 5, 6)
    read = op(0, 2, "get", "k", 20, 21, got=5)
    term = dict(KILL, kind="master_term")
    tear = {"kind": "torn_tail", "target": "master", "begin": 10.5, "end": 11.5,
            "torn_keys": ["k"]}
    assert durable([put, remove, read], [term, tear]) == []
    assert "stale" in durable([put, remove, read], [term])[0]
    other = dict(tear, torn_keys=["j"])
    assert "stale" in durable([put, remove, read], [term, other])[0]


# A cluster of masters (ha_check.py): the leader watcher's records, and ops of
# worker 1 pinned to master "m1:1"; m0 and m2 are the other masters.
SEEN = [{"t": 1.0, "rev": 3, "id": "a", "grpc": None, "after": 0.9},
        {"t": 1.1, "rev": 3, "id": "a", "grpc": "m1:1", "after": 1.0},
        {"t": 5.0, "rev": 0, "id": None, "grpc": None, "after": 4.9},    # its lease ended
        {"t": 6.0, "rev": 40, "id": "b", "grpc": "m0:1", "after": 5.9}]  # m0 leads
PINNED = {1: "m1:1"}


def test_an_acknowledgement_of_a_deposed_leader_is_flagged():
    acked = op(1, 1, "put", "k", 5.5, 7.0, put_id=9)  # began once the key was gone
    assert "deposed leader" in ha_check.split_brain([acked], SEEN, PINNED)[0]
    late = op(1, 2, "remove", "k", 6.5, 7.0)          # began after m0 was published
    assert "deposed leader" in ha_check.split_brain([late], SEEN, PINNED)[0]


def test_what_the_history_cannot_prove_or_allows_is_not_flagged():
    ops = [op(1, 1, "put", "k", 2.0, 3.0, put_id=9),     # while m1 led
           op(1, 2, "put", "k", 4.5, 6.5, put_id=10),    # began before the end was seen
           op(1, 3, "put", "k", 5.5, 7.0, code=-15, put_id=11),  # not acknowledged
           op(0, 1, "put", "k", 6.5, 7.0, put_id=12)]    # not pinned
    assert ha_check.split_brain(ops, SEEN, PINNED) == []
    # m1 led again, from after 8.9: an acknowledgement after that may be its own ...
    again = SEEN + [{"t": 9.0, "rev": 77, "id": "c", "grpc": "m1:1", "after": 8.9}]
    assert ha_check.split_brain([op(1, 4, "put", "k", 6.5, 9.5, put_id=13)], again,
                                PINNED) == []
    # ... but not one made before its new term could have begun.
    early = op(1, 5, "put", "k", 6.5, 8.0, put_id=14)
    assert "deposed leader" in ha_check.split_brain([early], again, PINNED)[0]


def test_leader_changes_become_the_durability_models_kills():
    changes = ha_check.leader_changes(SEEN)
    assert [c["kills"] for c in changes] == [[[5.0, 6.0]]]
    # A put acknowledged by m1, missed by a read after m0 took over: lost.
    ops = [op(0, 1, "put", "k", 2.0, 3.0, put_id=9), op(0, 2, "get", "k", 10.0, 10.5, code=-4)]
    found = checker.check(ops, changes, 20.0, {0: "w0"}, durability.Model(changes, 0))[0]
    assert len(found) == 1 and "lost" in found[0]


def test_evictions_the_log_records_excuse_misses_of_their_key(tmp_path):
    def frame(record):
        return len(record).to_bytes(4, "little") + b"\0" * 4 + record
    # A put of k (type 3, abridged), then k evicted (4, reason 1), j removed (4, reason 0).
    batches = [(10, frame(b"\x03\x01k...")), (20, frame(b"\x04\x01k\x01") +
                                              frame(b"\x04\x01j\x00"))]
    assert ha_check.evictions(batches) == [("k", 20)]
    revisions = tmp_path / "revisions"
    revisions.write_text("9.0 9.1 15\n9.9 10.1 25\n")  # revision 20 committed in 9.0-10.1
    keys = ha_check.evicted_keys(batches, str(revisions))
    assert keys == {"k": [(9.0 - ha_check.COMMIT_SLACK_S, 10.1)]}
    changes = [{"kind": "leader_change", "kills": [[5.0, 6.0]]}]
    ops = [op(0, 1, "put", "k", 2.0, 3.0, put_id=9), op(0, 2, "get", "k", 12.0, 12.5, code=-4),
           op(0, 3, "put", "j", 2.0, 3.0, put_id=9), op(0, 4, "get", "j", 12.0, 12.5, code=-4)]
    found = checker.check(ops, changes, 20.0, {0: "w0"},
                          durability.Model(changes, 0, key_evictions=keys))[0]
    assert len(found) == 1 and "j" in found[0]


def test_a_read_in_flight_across_a_change_of_leader_is_not_judged():
    # A change seen at 5.0 (published 6.0), another during the read (seen 14.2, published
    # 14.4): the read that began at 14.1 may have reached the new leader before its nodes
    # took their segments back, so its miss proves nothing.
    changes = [{"kind": "leader_change", "kills": [[5.0, 6.0]]},
               {"kind": "leader_change", "kills": [[14.2, 14.4]]}]
    ops = [op(0, 1, "put", "k", 2.0, 3.0, put_id=9), op(0, 2, "get", "k", 14.1, 14.3, code=-4)]
    assert checker.check(ops, changes, 20.0, {0: "w0"}, durability.Model(changes, 0))[0] == []
