#include "server/status_page.h"

namespace crescent::server {

const std::string_view kStatusPageHtml = R"HTML(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Crescent status</title>
<style>
  :root { --fg:#1d2330; --muted:#6b7385; --line:#e3e6ee; --bg:#f6f7fb; --card:#fff;
          --accent:#3b6fd8; --accent2:#e08a2e; --bad:#c8413b; --ok:#2f9e5b; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
         color:var(--fg); background:var(--bg); }
  header { display:flex; align-items:baseline; gap:16px; padding:14px 24px;
           background:var(--card); border-bottom:1px solid var(--line); }
  header h1 { font-size:18px; margin:0; }
  header .meta { color:var(--muted); font-size:13px; }
  #state { margin-left:auto; font-size:13px; color:var(--muted); }
  #state.down { color:var(--bad); }
  main { padding:18px 24px; max-width:1280px; margin:0 auto; display:grid; gap:16px; }
  .cards { display:grid; grid-template-columns:repeat(auto-fit,minmax(170px,1fr)); gap:12px; }
  .card, section { background:var(--card); border:1px solid var(--line); border-radius:8px; }
  .card { padding:12px 14px; }
  .card .label { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.04em; }
  .card .value { font-size:22px; font-weight:600; margin-top:2px; font-variant-numeric:tabular-nums; }
  section { padding:12px 16px; }
  section h2 { font-size:14px; margin:0 0 8px; }
  .charts { display:grid; grid-template-columns:repeat(auto-fit,minmax(380px,1fr)); gap:16px; }
  svg { width:100%; height:auto; display:block; }
  .span { color:var(--muted); font-size:12px; font-weight:400; margin-left:6px; }
  table { width:100%; border-collapse:collapse; font-variant-numeric:tabular-nums; }
  th, td { text-align:left; padding:5px 8px; border-bottom:1px solid var(--line); }
  th { color:var(--muted); font-weight:500; font-size:12px; }
  td.num, th.num { text-align:right; }
  .bar { position:relative; height:10px; background:#eef0f5; border-radius:5px; min-width:120px; }
  .bar > span { position:absolute; left:0; top:0; bottom:0; border-radius:5px; background:var(--accent); }
  .bar.hot > span { background:var(--accent2); }
  .empty { color:var(--muted); }
</style>
</head>
<body>
<header>
  <h1>Crescent</h1>
  <span class="meta" id="master">master</span>
  <span class="meta" id="policy"></span>
  <span id="state">connecting…</span>
</header>
<main>
  <div class="cards">
    <div class="card"><div class="label">Objects</div><div class="value" id="objects" data-value="">–</div></div>
    <div class="card"><div class="label">Used / capacity</div><div class="value" id="used">–</div></div>
    <div class="card"><div class="label">Hit ratio</div><div class="value" id="hit-ratio" data-value="">–</div></div>
    <div class="card"><div class="label">Requests / s</div><div class="value" id="rate">–</div></div>
    <div class="card"><div class="label">Pending puts</div><div class="value" id="pending">–</div></div>
    <div class="card"><div class="label">Errors</div><div class="value" id="error-count">–</div></div>
  </div>
  <div class="charts">
    <section><h2>Requests per second<span class="span" id="span-rate"></span></h2><svg id="chart-rate" viewBox="0 0 400 140"></svg></section>
    <section><h2>Hit ratio<span class="span" id="span-hits"></span></h2><svg id="chart-hits" viewBox="0 0 400 140"></svg></section>
  </div>
  <section>
    <h2>Segments</h2>
    <table><thead><tr><th>Segment</th><th>Node</th><th>Tier</th><th>Fill</th>
      <th class="num">Used</th><th class="num">Capacity</th></tr></thead>
      <tbody id="segments"></tbody></table>
  </section>
  <section>
    <h2>Tenants</h2>
    <table><thead><tr><th>Tenant</th><th>Quota fill</th><th class="num">Used</th>
      <th class="num">Quota</th><th class="num">Objects</th><th class="num">Hits</th>
      <th class="num">Misses</th><th class="num">Evictions</th></tr></thead>
      <tbody id="tenants"></tbody></table>
  </section>
  <section id="cluster-section" hidden>
    <h2>Masters <span class="span" id="cluster-name"></span></h2>
    <table><thead><tr><th>Master</th><th>Role</th><th>Address</th>
      <th class="num">Applied records</th><th class="num">Behind</th><th class="num">For</th></tr></thead>
      <tbody id="masters"></tbody></table>
  </section>
  <section>
    <h2>Master RPC latency</h2>
    <table><thead><tr><th>Method</th><th class="num">Calls</th><th class="num">p50</th>
      <th class="num">p99</th><th class="num">Mean</th><th class="num">Errors</th></tr></thead>
      <tbody id="rpc"></tbody></table>
  </section>
  <section>
    <h2>Errors by code</h2>
    <table><thead><tr><th>Method</th><th>Code</th><th class="num">Count</th></tr></thead>
      <tbody id="errors"></tbody></table>
  </section>
</main>
<script>
"use strict";
// Script errors are counted on <body>, where a test (and a curious operator) can see them.
function noteError(message) {
  const b = document.body;
  b.dataset.scriptErrors = String(Number(b.dataset.scriptErrors || 0) + 1);
  b.dataset.lastError = String(message);
}
window.addEventListener("error", (e) => noteError(e.message));
window.addEventListener("unhandledrejection", (e) => noteError(e.reason));
const $ = (id) => document.getElementById(id);
// The rule of FormatBytes (common/format_bytes.h): the largest unit in which
// n is whole or a half, else the count itself, never a rounded size.
function bytes(n) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  for (let i = u.length - 1; i > 0; i--) {
    const half = 2 ** (10 * i - 1);
    if (n >= 2 * half && n % half === 0) return (n / (2 * half)).toFixed(1) + " " + u[i];
  }
  return String(n) + " B";
}
function micros(us) {
  if (us >= 1e6) return (us / 1e6).toFixed(2) + " s";
  if (us >= 1e3) return (us / 1e3).toFixed(2) + " ms";
  return us.toFixed(1) + " µs";
}
function percent(r) { return (100 * r).toFixed(1) + "%"; }
function cell(tr, text, cls) {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}
function fillBar(ratio) {
  const bar = document.createElement("div");
  bar.className = "bar" + (ratio > 0.9 ? " hot" : "");
  const span = document.createElement("span");
  span.style.width = Math.min(100, 100 * ratio).toFixed(1) + "%";
  bar.appendChild(span);
  return bar;
}
function emptyRow(body, cols, text) {
  const tr = document.createElement("tr");
  const td = cell(tr, text, "empty");
  td.colSpan = cols;
  body.appendChild(tr);
}
// A line chart of points [t, v] into an <svg> (viewBox 400 x 140).
function chart(svg, points, maxHint, color, format) {
  const NS = "http://www.w3.org/2000/svg";
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const w = 400, h = 140, pad = 18;
  const max = Math.max(maxHint || 0, ...points.map((p) => p[1]), 1e-9);
  const t0 = points.length ? points[0][0] : 0;
  const t1 = points.length ? points[points.length - 1][0] : 1;
  const x = (t) => (t1 > t0 ? (w * (t - t0)) / (t1 - t0) : 0);
  const y = (v) => h - pad - ((h - 2 * pad) * v) / max;
  for (const f of [0, 0.5, 1]) {
    const g = document.createElementNS(NS, "line");
    g.setAttribute("x1", 0); g.setAttribute("x2", w);
    g.setAttribute("y1", y(max * f)); g.setAttribute("y2", y(max * f));
    g.setAttribute("stroke", "#e3e6ee"); g.setAttribute("stroke-width", 1);
    svg.appendChild(g);
    const label = document.createElementNS(NS, "text");
    label.setAttribute("x", 4); label.setAttribute("y", y(max * f) - 3);
    label.setAttribute("font-size", 10); label.setAttribute("fill", "#6b7385");
    label.textContent = format(max * f);
    svg.appendChild(label);
  }
  if (points.length < 2) return;
  const line = document.createElementNS(NS, "polyline");
  line.setAttribute("points", points.map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" "));
  line.setAttribute("fill", "none");
  line.setAttribute("stroke", color);
  line.setAttribute("stroke-width", 2);
  line.setAttribute("vector-effect", "non-scaling-stroke");
  svg.appendChild(line);
}
function render(s) {
  const sum = s.summary;
  $("master").textContent = "master " + s.master.address;
  $("policy").textContent = "eviction " + s.master.eviction_policy;
  $("objects").textContent = String(sum.objects);
  $("objects").dataset.value = String(sum.objects);
  $("used").textContent = bytes(sum.used_bytes) + " / " + bytes(sum.capacity_bytes);
  $("hit-ratio").textContent = percent(sum.hit_ratio);
  $("hit-ratio").dataset.value = String(sum.hit_ratio);
  $("pending").textContent = String(sum.pending_puts);
  $("error-count").textContent = String(s.errors.reduce((a, e) => a + e.count, 0));

  const f = s.history_fields, hist = s.history;
  const at = (p, name) => p[f.indexOf(name)];
  const rates = [], ratios = [];
  for (let i = 1; i < hist.length; i++) {
    const dt = (at(hist[i], "unix_ms") - at(hist[i - 1], "unix_ms")) / 1000;
    if (dt <= 0) continue;
    const t = at(hist[i], "unix_ms") / 1000;
    rates.push([t, (at(hist[i], "rpcs") - at(hist[i - 1], "rpcs")) / dt]);
    const dl = at(hist[i], "lookups") - at(hist[i - 1], "lookups");
    const dh = at(hist[i], "hits") - at(hist[i - 1], "hits");
    ratios.push([t, dl > 0 ? dh / dl : (ratios.length ? ratios[ratios.length - 1][1] : 0)]);
  }
  $("rate").textContent = rates.length ? rates[rates.length - 1][1].toFixed(0) : "0";
  const span = rates.length > 1 ? rates[rates.length - 1][0] - rates[0][0] : 0;
  const spanText = span >= 90 ? "last " + Math.round(span / 60) + " min" : "last " + Math.round(span) + " s";
  $("span-rate").textContent = spanText;
  $("span-hits").textContent = "per interval, " + spanText;
  chart($("chart-rate"), rates, 1, "#3b6fd8", (v) => v.toFixed(0));
  chart($("chart-hits"), ratios, 1, "#2f9e5b", (v) => percent(v));

  const segs = $("segments");
  segs.replaceChildren();
  for (const g of s.segments) {
    const tr = document.createElement("tr");
    tr.className = "segment";
    cell(tr, g.name, "segment-name");
    cell(tr, g.node);
    cell(tr, g.tier);
    const td = document.createElement("td");
    td.appendChild(fillBar(g.capacity_bytes ? g.used_bytes / g.capacity_bytes : 0));
    tr.appendChild(td);
    cell(tr, bytes(g.used_bytes), "num");
    cell(tr, bytes(g.capacity_bytes), "num");
    segs.appendChild(tr);
  }
  if (!s.segments.length) emptyRow(segs, 6, "no segment is mounted");

  const tenants = $("tenants");
  tenants.replaceChildren();
  for (const t of s.tenants || []) {
    const tr = document.createElement("tr");
    tr.className = "tenant";
    cell(tr, t.tenant, "tenant-name");
    const td = document.createElement("td");
    td.appendChild(fillBar(t.quota_bytes ? Math.min(1, t.bytes / t.quota_bytes) : 0));
    tr.appendChild(td);
    cell(tr, bytes(t.bytes), "num");
    cell(tr, t.quota_bytes ? bytes(t.quota_bytes) : "none", "num");
    cell(tr, String(t.objects), "num");
    cell(tr, String(t.hits), "num");
    cell(tr, String(t.misses), "num");
    cell(tr, String(t.evictions), "num");
    tenants.appendChild(tr);
  }
  if (!(s.tenants || []).length) emptyRow(tenants, 8, "no tenants (the auth file declares none)");

  $("cluster-section").hidden = !s.cluster;
  if (s.cluster) {
    $("cluster-name").textContent = s.cluster.name + " on etcd " + s.cluster.etcd;
    const masters = $("masters");
    masters.replaceChildren();
    for (const m of s.cluster.masters) {
      const tr = document.createElement("tr");
      tr.className = "master";
      cell(tr, m.master_id, "master-id");
      cell(tr, m.leader ? "leader" : "standby");
      cell(tr, m.grpc);
      cell(tr, String(m.applied_records), "num");
      cell(tr, m.leader ? "" : String(m.lag_records), "num");
      cell(tr, m.lag_records ? m.lag_seconds.toFixed(1) + " s" : "", "num");
      masters.appendChild(tr);
    }
  }

  const rpc = $("rpc");
  rpc.replaceChildren();
  for (const m of s.rpc) {
    const tr = document.createElement("tr");
    cell(tr, m.method);
    cell(tr, String(m.count), "num");
    cell(tr, micros(m.p50_us), "num");
    cell(tr, micros(m.p99_us), "num");
    cell(tr, micros(m.mean_us), "num");
    cell(tr, String(m.errors), "num");
    rpc.appendChild(tr);
  }
  if (!s.rpc.length) emptyRow(rpc, 6, "no calls yet");

  const errs = $("errors");
  errs.replaceChildren();
  for (const e of s.errors) {
    const tr = document.createElement("tr");
    cell(tr, e.method);
    cell(tr, e.code);
    cell(tr, String(e.count), "num");
    errs.appendChild(tr);
  }
  if (!s.errors.length) emptyRow(errs, 3, "none");
}
async function poll() {
  let status;
  try {
    const r = await fetch("/api/status", { cache: "no-store" });
    if (!r.ok) throw new Error("HTTP " + r.status);
    status = await r.json();
  } catch (e) {
    $("state").textContent = "unreachable: " + e.message;
    $("state").className = "down";
    return;
  }
  // A bug in render() is an unhandled rejection of poll(): counted by noteError.
  render(status);
  $("state").textContent = "updated " + new Date().toLocaleTimeString();
  $("state").className = "";
  document.body.dataset.loaded = "1";
}
poll();
setInterval(poll, 1000);
</script>
</body>
</html>
)HTML";

}  // namespace crescent::server
