"""Small mistakes with the Python binding, each answered in clear words: a str
where a list is meant, lists of different lengths, a bytes address, a replica
count beyond the cluster, and an interpreter the module was not built for.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import uuid

import numpy as np
import pytest

import crescent


def _key(tag):
    return "args-%s-%s" % (tag, uuid.uuid4().hex[:12])


# ---- a str or bytes where a list is meant ----
# batch_is_exist("abc") used to ask for "a", "b" and "c" and answer [0, 0, 0].

def _one_key_calls(store, arr):
    return {
        "batch_is_exist": lambda k: store.batch_is_exist(k),
        "get_batch": lambda k: store.get_batch(k),
        "put_batch": lambda k: store.put_batch(k, [b"v"] * len(k)),
        "batch_query_prefix": lambda k: store.batch_query_prefix(k),
        "end_session": lambda k: store.end_session(k),
        "batch_put_from": lambda k: store.batch_put_from(k, [arr] * len(k)),
        "batch_get_into": lambda k: store.batch_get_into(k, [arr] * len(k)),
        "batch_get_prefix_into": lambda k: store.batch_get_prefix_into(k, [arr] * len(k)),
        "batch_put_from_multi_buffers":
            lambda k: store.batch_put_from_multi_buffers(k, [[arr]] * len(k)),
        "batch_get_into_multi_buffers":
            lambda k: store.batch_get_into_multi_buffers(k, [[arr]] * len(k)),
    }


@pytest.mark.parametrize("keys", ["abc", b"abc", bytearray(b"abc")])
def test_a_str_or_bytes_where_a_list_of_keys_is_meant_is_refused(store, keys):
    arr = np.zeros(16, dtype=np.uint8)
    for name, call in _one_key_calls(store, arr).items():
        with pytest.raises(TypeError, match="keys must be a list, not %s" %
                           type(keys).__name__):
            call(keys)
        assert call(["abc"]) is not None, name  # the list form is taken


def test_a_bytes_where_a_list_of_values_or_buffers_is_meant_is_refused(store):
    with pytest.raises(TypeError, match="values must be a list, not bytes"):
        store.put_batch(["a", "b"], b"ab")
    arr = np.zeros(16, dtype=np.uint8)
    with pytest.raises(TypeError, match="buffer_ptrs must be a list, not bytes"):
        store.batch_get_into(["a"], b"\x01")
    with pytest.raises(TypeError, match="sizes must be a list, not bytes"):
        store.batch_get_into(["a"], [arr], b"\x10")


# ---- lists of different lengths ----
# The code was returned with last_error() still empty: nothing said why.

def test_lists_of_different_lengths_say_why_in_last_error(store):
    arr = np.zeros(4096, dtype=np.uint8)
    assert store.register_buffer(arr) == 0
    try:
        keys = [_key("a"), _key("b")]
        assert store.batch_put_from(keys, [arr]) == [crescent.INVALID_ARGUMENT] * 2
        assert crescent.last_error() == (crescent.INVALID_ARGUMENT,
                                         "keys and buffer_ptrs differ in length (2 and 1)")
        assert store.batch_get_into(keys, [arr, arr, arr]) == [crescent.INVALID_ARGUMENT] * 2
        assert crescent.last_error()[1] == "keys and buffer_ptrs differ in length (2 and 3)"
        assert store.put_batch(keys, [b"v"]) == crescent.INVALID_ARGUMENT
        assert crescent.last_error()[1] == "keys and values differ in length (2 and 1)"
        assert store.batch_get_prefix_into(keys, [arr]) == crescent.INVALID_ARGUMENT
        assert crescent.last_error()[1] == "keys and buffer_ptrs differ in length (2 and 1)"
        assert store.batch_put_from_multi_buffers(keys, [[arr]]) == \
            [crescent.INVALID_ARGUMENT] * 2
        assert crescent.last_error()[1] == "keys and all_buffer_ptrs differ in length (2 and 1)"
        assert store.batch_get_into_multi_buffers(keys, [[arr], [arr]], [[16]]) == \
            [crescent.INVALID_ARGUMENT] * 2
        assert crescent.last_error()[1] == "keys and all_sizes differ in length (2 and 1)"
        assert store.batch_is_exist(keys) == [0, 0]  # nothing was stored
    finally:
        store.unregister_buffer(arr)


# ---- setup's text arguments ----
# A bytes address used to reach the master as "b'127.0.0.1:51091'".

def test_setup_takes_a_bytes_address_and_refuses_other_types(serve):
    store = crescent.Store()
    try:
        assert store.setup(b"localhost", "", 0, 0, "tcp", "", serve.address.encode()) == 0
        key = _key("bytes-address")
        assert store.put(key, b"v") == 0
        assert store.get(key) == b"v"
    finally:
        store.close()
    with pytest.raises(TypeError, match="master_server_addr must be a str, not int"):
        crescent.Store().setup("localhost", "", 0, 0, "tcp", "", 50051)
    with pytest.raises(ValueError, match="master_server_addr is not UTF-8"):
        crescent.Store().setup("localhost", "", 0, 0, "tcp", "", b"\xff:1")


# ---- a replica count beyond the cluster ----
# ReplicateConfig(replica_num=1000) used to make every put return -1, where the
# docs promise best effort.

def test_a_replica_count_beyond_the_cluster_is_best_effort(store):
    key = _key("replicas")
    for n in (2, 16, 17, 1000, 2**40):
        assert store.put("%s-%d" % (key, n), b"x" * 1000, crescent.ReplicateConfig(
            replica_num=n)) == 0, crescent.last_error()
        assert store.get("%s-%d" % (key, n)) == b"x" * 1000
    with pytest.raises(ValueError, match="replica_num must be at least 1"):
        store.put(key, b"x", crescent.ReplicateConfig(replica_num=0))


# ---- the interpreter ----
# Another interpreter used to fail with "No module named 'crescent._crescent'".

def _import_with(python, package_parent):
    env = dict(os.environ, PYTHONPATH=package_parent)
    return subprocess.run([python, "-c", "import crescent"], capture_output=True, text=True,
                          env=env, timeout=120)


def test_another_interpreter_is_told_which_one_to_use(tmp_path):
    # The module as built, told it was built for another ABI: the check, with
    # this interpreter standing in for a foreign one.
    package = os.path.dirname(crescent.__file__)
    copy = tmp_path / "crescent"
    shutil.copytree(package, copy)
    built_for = (copy / "_built_for.py").read_text()
    assert 'PYTHON = "/usr/bin/python3"' in built_for
    (copy / "_built_for.py").write_text(
        built_for.replace(sysconfig.get_config_var("SOABI"), "cpython-399-x86_64-linux-gnu"))
    r = _import_with(sys.executable, str(tmp_path))
    assert r.returncode != 0
    assert "ImportError: crescent is built for /usr/bin/python3" in r.stderr, r.stderr
    assert "ABI cpython-399-x86_64-linux-gnu" in r.stderr
    assert "run it with /usr/bin/python3 (Debian's interpreter" in r.stderr
    # The module as built imports in the interpreter it was built for.
    assert _import_with(sys.executable, os.path.dirname(package)).returncode == 0


def _foreign_interpreter():
    """A python3 on this machine of another ABI than this one, or None."""
    here = sysconfig.get_config_var("SOABI")
    pyenv = os.path.expanduser("~/.pyenv/versions")
    candidates = [shutil.which("python3.%d" % minor) for minor in range(8, 15)]
    if os.path.isdir(pyenv):
        candidates += [os.path.join(pyenv, v, "bin", "python3") for v in sorted(os.listdir(pyenv))]
    for python in filter(None, candidates):
        try:
            r = subprocess.run([python, "-c", "import sysconfig; "
                                "print(sysconfig.get_config_var('SOABI'))"],
                               capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0 and r.stdout.strip() not in ("", "None", here):
            return python
    return None


def test_a_real_foreign_interpreter_is_refused_with_the_one_to_use():
    python = _foreign_interpreter()
    if python is None:
        pytest.skip("no python3 of another ABI on this machine")
    r = _import_with(python, os.path.dirname(os.path.dirname(crescent.__file__)))
    assert r.returncode != 0
    assert "crescent is built for /usr/bin/python3" in r.stderr, r.stderr
    assert "run it with /usr/bin/python3" in r.stderr
