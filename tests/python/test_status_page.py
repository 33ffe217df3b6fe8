"""The status page in a real browser, and `crescent top --once`, against a live
`crescent serve` with its admin port on.

Headless Chromium (Debian's `chromium`, from scripts/install-deps.sh) loads GET /
and runs its script, which fetches /api/status and renders it; the test reads the
rendered DOM and checks it against /api/status fetched directly: segment names,
object count and hit ratio, and that no script error happened (the page counts
`error` and `unhandledrejection` events on <body data-script-errors>).
"""

import json
import re
import shutil
import socket
import subprocess
import urllib.request
import uuid
from html.parser import HTMLParser

import pytest

from conftest import CRESCENT, Server, connect


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def loaded_serve():
    """A serve with its admin port on, after a small load with hits and misses."""
    port = free_port()
    server = Server(["serve", "--port", "0", "--http-port", str(port), "--segment-size", "64MiB"])
    store = connect(server.address)
    keys = ["page/%s" % uuid.uuid4().hex for _ in range(12)]
    for k in keys:
        assert store.put(k, b"v" * 4096) == 0
    for k in keys[:8]:
        assert store.get(k) == b"v" * 4096
    for _ in range(3):
        assert store.get("absent/%s" % uuid.uuid4().hex) == b""
    assert store.batch_query_prefix(keys[:4] + ["absent/x"] + keys[4:6]) == 4
    store.close()
    server.http = "127.0.0.1:%d" % port
    yield server
    server.stop()


def api_status(server):
    with urllib.request.urlopen("http://%s/api/status" % server.http, timeout=10) as r:
        assert r.headers["Content-Type"].startswith("application/json")
        return json.load(r)


class Dom(HTMLParser):
    """Collects what the test reads from the rendered page."""

    def __init__(self):
        super().__init__()
        self.by_id = {}          # id -> (attrs, text)
        self.body = {}
        self.segment_names = []
        self.tenant_names = []
        self._open = None        # id, "segment-name" or "tenant-name" whose text is being read

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        if "id" in a:
            self.by_id[a["id"]] = [a, ""]
            self._open = ("id", a["id"])
        if tag == "td" and a.get("class") == "segment-name":
            self.segment_names.append("")
            self._open = ("segment", len(self.segment_names) - 1)
        if tag == "td" and a.get("class") == "tenant-name":
            self.tenant_names.append("")
            self._open = ("tenant", len(self.tenant_names) - 1)

    def handle_endtag(self, tag):
        self._open = None

    def handle_data(self, data):
        if not self._open:
            return
        kind, key = self._open
        if kind == "id":
            self.by_id[key][1] += data
        elif kind == "tenant":
            self.tenant_names[key] += data
        else:
            self.segment_names[key] += data


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("chromium is not installed: run scripts/install-deps.sh")


def rendered_dom(url):
    # --virtual-time-budget lets the page's fetch and render finish before the
    # DOM is dumped, without the test waiting on a wall-clock time itself.
    out = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--virtual-time-budget=10000", "--dump-dom", url],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    dom = Dom()
    dom.feed(out.stdout)
    return dom, out.stderr


def test_status_page_renders_what_api_status_says(loaded_serve):
    api = api_status(loaded_serve)
    assert api["summary"]["objects"] == 12
    assert 0 < api["summary"]["hit_ratio"] < 1
    dom, log = rendered_dom("http://%s/" % loaded_serve.http)
    assert dom.body.get("data-loaded") == "1", "the page never rendered /api/status:\n" + log[-2000:]
    assert dom.body.get("data-script-errors", "0") == "0", dom.body.get("data-last-error")
    objects = dom.by_id["objects"]
    assert objects[0]["data-value"] == str(api["summary"]["objects"])
    assert objects[1].strip() == str(api["summary"]["objects"])
    ratio = dom.by_id["hit-ratio"]
    assert float(ratio[0]["data-value"]) == pytest.approx(api["summary"]["hit_ratio"], abs=1e-12)
    assert ratio[1].strip() == "%.1f%%" % (100 * api["summary"]["hit_ratio"])
    assert sorted(dom.segment_names) == sorted(s["name"] for s in api["segments"])
    assert dom.segment_names, "no segment rows"
    # Both charts were drawn as inline SVG, and the page loads nothing else.
    page = urllib.request.urlopen("http://%s/" % loaded_serve.http, timeout=10).read().decode()
    assert not re.search(r"""(src|href)\s*=\s*["'](https?:)?//""", page)


def test_api_status_reports_rpc_latency_and_errors(loaded_serve):
    api = api_status(loaded_serve)
    methods = {m["method"]: m for m in api["rpc"]}
    assert "BatchQueryPrefix" in methods
    assert methods["BatchQueryPrefix"]["count"] >= 1
    for m in methods.values():
        assert 0 <= m["p50_us"] <= m["p99_us"]
    codes = {e["code"] for e in api["errors"]}
    assert "OBJECT_NOT_FOUND" in codes
    assert len(api["history"]) >= 1
    assert len(api["history"][0]) == len(api["history_fields"])


def test_top_once_prints_the_expected_fields(loaded_serve):
    api = api_status(loaded_serve)
    out = subprocess.run([str(CRESCENT), "top", "--once", "--http", loaded_serve.http],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "master %s" % loaded_serve.address in text
    assert "objects %d " % api["summary"]["objects"] in text
    assert "hit ratio %.1f%%" % (100 * api["summary"]["hit_ratio"]) in text
    for seg in api["segments"]:
        assert seg["name"] in text
    for header in ("SEGMENT", "FILL", "METHOD", "CALLS", "P50", "P99", "ERRORS"):
        assert header in text
    assert "BatchQueryPrefix" in text and "OBJECT_NOT_FOUND" in text


def test_top_says_why_it_cannot_connect():
    out = subprocess.run([str(CRESCENT), "top", "--once", "--http", "127.0.0.1:%d" % free_port()],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert "cannot reach" in out.stderr


def test_status_page_shows_the_tenants(tmp_path):
    """A serve with an auth file that declares tenants: the page lists each, as /api/status."""
    auth = str(tmp_path / "auth")
    for args in (["tenant", "set", "--auth-file", auth, "t1", "--quota", "1MiB"],
                 ["tenant", "set", "--auth-file", auth, "t2", "--quota", "2MiB"]):
        subprocess.run([str(CRESCENT), *args], check=True, capture_output=True)
    out = subprocess.run([str(CRESCENT), "token", "add", "--auth-file", auth, "--name", "app",
                          "--role", "client", "--tenant", "t1"],
                         check=True, capture_output=True, text=True)
    token = out.stdout.splitlines()[0]
    port = free_port()
    server = Server(["serve", "--port", "0", "--http-port", str(port), "--segment-size", "64MiB",
                     "--auth-file", auth])
    try:
        store = connect(server.address, token=token)
        assert store.put("k", b"v" * 4096) == 0
        store.close()
        server.http = "127.0.0.1:%d" % port
        api = api_status(server)
        assert [(t["tenant"], t["objects"], t["bytes"]) for t in api["tenants"]] == [
            ("t1", 1, 4096), ("t2", 0, 0)]
        dom, log = rendered_dom("http://%s/" % server.http)
        assert dom.body.get("data-loaded") == "1", log[-2000:]
        assert dom.body.get("data-script-errors", "0") == "0", dom.body.get("data-last-error")
        assert dom.tenant_names == ["t1", "t2"]
    finally:
        server.stop()
