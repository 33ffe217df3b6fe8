"""The harness's own pieces, on real processes and files: a role never gets a second
process, and a torn tail cuts into the last log record only."""

import random
import struct

import cluster
import master_faults
import topology


def test_a_running_role_is_not_started_again(tmp_path):
    host = topology.Loopback(["h"]).hosts["h"]
    d = cluster.Daemon("r", host, ["sh", "-c", "echo ready; exec sleep 30"], str(tmp_path))
    try:
        assert d.start()
        pid = d.proc.pid
        assert d.start() and d.proc.pid == pid
        d.kill()
        assert d.start() and d.proc.pid != pid
    finally:
        d.kill()


def test_a_torn_tail_cuts_into_the_last_record_and_names_its_keys(tmp_path):
    frames = [b"\x01put k0007 and more", b"\x02remove k0042 \xff\x00"]
    data = b"H" * master_faults.LOG_HEADER
    for payload in frames:
        data += struct.pack("<II", len(payload), 0) + payload
    path = tmp_path / "log-0000000000000000.crlog"
    for seed in range(20):
        path.write_bytes(data + b"\x05\x00")  # and a partial frame header after it
        cut, keys = master_faults.tear(str(path), random.Random(seed))
        assert keys == ["k0042"]
        size = len(path.read_bytes())
        last = len(data) - (8 + len(frames[1]))
        assert last < size < len(data) and cut == len(data) + 2 - size
