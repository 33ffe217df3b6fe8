"""Bad inputs and hostile timing, as a new user would stumble on them: each test
names what used to go wrong (a crash, a whole batch spoilt by one key, an
accepted setting that breaks every later call) and checks the clear answer.
"""

import subprocess
import sys
import textwrap

import pytest

# A put loop on a daemon thread, then the script ends while a put is in flight.
_EXIT_SCRIPT = textwrap.dedent("""
    import sys, threading
    import crescent
    store = crescent.Store()
    store.setup("localhost", "", 0, 0, "tcp", "", sys.argv[1])
    running = threading.Event()
    def loop():
        i = 0
        while True:
            store.put("exit-%d-%d" % (id(store), i), b"x" * 4096)
            i += 1
            running.set()
    threading.Thread(target=loop, daemon=True).start()
    running.wait()
""")


def test_exit_with_a_call_in_flight_ends_cleanly(serve):
    # Used to abort (rc 134, "terminate called without an active exception"):
    # finalisation ends the daemon thread as it takes the GIL back.
    for _ in range(5):
        r = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT, serve.address],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert "terminate called" not in r.stderr
