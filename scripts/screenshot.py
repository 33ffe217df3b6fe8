"""`make screenshot`: a PNG of the status page of a live `crescent serve` under a
small prefix-reuse load, taken with headless Chromium.

Starts build/bin/crescent serve with its admin port on a free port, runs chained
puts, prefix lookups and gets (some of them misses) through the Python module
for a few seconds, so the charts have a history to draw, then saves the page as
OUT (default build/status-page.png) while the load still runs.

    PYTHONPATH=build/python /usr/bin/python3 scripts/screenshot.py [--out FILE] [--seconds S]
"""

import argparse
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import crescent

REPO = Path(__file__).resolve().parents[1]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--seconds", type=float, default=6.0)
    args = ap.parse_args()
    out = Path(args.out or Path(args.build) / "status-page.png").resolve()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        sys.exit("screenshot: chromium is not installed (scripts/install-deps.sh installs it)")

    port = free_port()
    serve = subprocess.Popen([str(Path(args.build) / "bin" / "crescent"), "serve", "--port", "0",
                              "--http-port", str(port), "--segment-size", "256MiB"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    address, lines = None, []
    for line in serve.stdout:
        lines.append(line)
        m = re.search(r"listening on (\S+?)(?:,| and|$)", line)
        if m and address is None:
            address = m.group(1)
        if "ready" in line:
            break
    if address is None:
        serve.kill()
        sys.exit("screenshot: crescent serve did not start:\n" + "".join(lines))
    threading.Thread(target=lambda: [None for _ in serve.stdout], daemon=True).start()
    try:
        store = crescent.Store()
        store.setup("localhost", "", 0, 0, "tcp", "", address)
        stop = threading.Event()

        def load():
            # Prompts share prefixes: each looks up its cached run of pages,
            # reads it, and puts the rest as a chain; some gets miss.
            rng = random.Random(7)
            page = b"k" * 16384
            prompts = [["p%d/%d" % (p, i) for i in range(16)] for p in range(40)]
            while not stop.is_set():
                chain = rng.choice(prompts)
                have = store.batch_query_prefix(chain)
                for k in chain[:have]:
                    store.get(k)
                if have < len(chain):
                    store.put_batch(chain[have:], [page] * (len(chain) - have))
                store.get("absent/%d" % rng.randrange(1000))

        worker = threading.Thread(target=load)
        worker.start()
        try:
            time.sleep(args.seconds)  # history for the charts: one point a second
            # Taken while the load runs, so the rates on the page are live ones.
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-dev-shm-usage", "--no-first-run", "--hide-scrollbars",
                            "--window-size=1280,1100", "--virtual-time-budget=5000",
                            "--screenshot=%s" % out, "http://127.0.0.1:%d/" % port],
                           check=True, capture_output=True, timeout=120)
        finally:
            stop.set()
            worker.join()
        store.close()
        print("screenshot: %s" % out)
    finally:
        serve.terminate()
        serve.wait(timeout=15)


if __name__ == "__main__":
    main()
