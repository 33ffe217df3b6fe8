"""The short chaos run of `make test`: one minute of seeded faults against a
real cluster (network namespaces when run as root, loopback otherwise), then
the checker's verdict. $CHAOS_FAULTS (comma-separated kinds, see faults.py)
narrows the fault mix; $CHAOS_SEED changes the schedule; $CHAOS_DURABILITY
(always, N or off; default always) is the master's --log-sync (see run_chaos.py).

`test_cluster_of_masters` is the same for a cluster of three masters on three etcd
members (ha.py) under leader kills, leader partitions and etcd member kills: each
kind must have happened, the leader must have changed, and no check may fail.
"""

import os
from pathlib import Path

import faults
import ha_check
import run_chaos

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CRESCENT_BUILD", REPO / "build"))


def test_short_seeded_run(tmp_path):
    os.environ.setdefault("CRESCENT_BIN", str(BUILD / "bin" / "crescent"))
    kinds = [k for k in os.environ.get("CHAOS_FAULTS", "").split(",") if k] or \
        faults.DEFAULT_KINDS
    result = run_chaos.run(seconds=60, seed=int(os.environ.get("CHAOS_SEED", "18")),
                           kinds=kinds, out_dir=str(tmp_path / "run"),
                           durability_mode=os.environ.get("CHAOS_DURABILITY") or "always")
    print(result.table())
    assert sum(1 for f in result.faults if f["kind"] in kinds) > 10, result.table()
    assert result.counts[("verify", "ok")] > 0, result.table()
    assert result.violations == [], result.table()


def test_cluster_of_masters(tmp_path):
    os.environ.setdefault("CRESCENT_BIN", str(BUILD / "bin" / "crescent"))
    result = run_chaos.run(seconds=60, seed=int(os.environ.get("CHAOS_SEED", "18")),
                           kinds=faults.HA_KINDS, out_dir=str(tmp_path / "run"))
    print(result.table())
    for kind in result.kinds:
        played = [f for f in result.faults if f["kind"] == kind]
        assert played and all(f["ok"] for f in played), (kind, result.table())
    acted_on = [f for f in result.faults if f["kind"] != "etcd_kill" and "master" in f]
    assert acted_on, result.table()
    assert len(ha_check.leader_changes(result.leaders)) >= len(acted_on), result.table()
    assert result.fenced, "no pinned change was judged against the fence: " + result.table()
    assert result.counts[("verify", "ok")] > 0, result.table()
    assert result.violations == [], result.table()
