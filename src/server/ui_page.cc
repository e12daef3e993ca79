#include "server/ui_page.h"

namespace sluice::server {
namespace {

// The page. Its script draws the charts itself (SVG strings), so nothing is loaded from outside.
constexpr std::string_view kIndexHtml = R"SLUICEUI(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sluice: streaming queries</title>
<style>
body{font:14px system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#f4f6f9;color:#1d2330}
header{background:#16324f;color:#fff;padding:10px 20px;display:flex;gap:20px;align-items:baseline}
header h1{font-size:18px;margin:0;font-weight:600}
#conn{font-size:12px;opacity:.85}
main{padding:12px 20px}
section.query{background:#fff;border:1px solid #d8dde6;border-radius:6px;margin-bottom:16px;padding:12px 16px}
.qhead{display:flex;gap:10px;align-items:center;flex-wrap:wrap}
.qhead h2{font-size:17px;margin:0}
.badge{padding:2px 9px;border-radius:10px;font-size:12px;font-weight:600;color:#fff}
.active{background:#2e7d32}.idle{background:#607d8b}.terminated{background:#455a64}.failed{background:#c62828}.restarting{background:#8e24aa}
.behind{background:#e65100}.keeping{background:#2e7d32}
.meta{color:#5a6270;font-size:12px}
.reason{color:#b34700;font-size:13px;margin-top:4px}
table.last{border-collapse:collapse;margin:8px 0;font-size:13px}
table.last td{padding:2px 14px 2px 0}
table.last td.k{color:#6a7280}
.error{background:#fdecea;border:1px solid #f5c2c0;padding:8px 10px;border-radius:4px;margin:8px 0;font-size:12px}
.error pre{white-space:pre-wrap;margin:4px 0;font-size:12px}
.error ol{margin:4px 0;padding-left:22px;font-family:monospace}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:12px;margin-top:6px}
figure.chart{margin:0;border:1px solid #e3e7ee;border-radius:4px;padding:6px 8px}
figure.chart figcaption{font-size:12px;font-weight:600;margin-bottom:2px}
svg{display:block;width:100%;height:auto}
svg text{font-size:10px;fill:#6a7280}
.legend{font-size:11px;color:#3a4150}
.legend span{margin-right:10px;white-space:nowrap;display:inline-block}
.legend i{display:inline-block;width:10px;height:10px;margin-right:3px;vertical-align:-1px}
.nodata{font-size:12px;color:#8a92a0;padding:40px 0;text-align:center}
</style>
</head>
<body data-polls="0">
<header><h1>Sluice streaming queries</h1><span id="conn">connecting&hellip;</span></header>
<main id="queries"><p class="meta">Waiting for the first poll&hellip;</p></main>
<script>
"use strict";
const COLORS = ["#1f77b4","#ff7f0e","#2ca02c","#d62728","#9467bd","#8c564b","#e377c2","#17becf","#7f7f7f","#bcbd22"];
const LIMIT = 120, POLL_MS = 1000;
const PHASES = ["latestOffset","getBatch","queryPlanning","addBatch","walCommit","commitOffsets"];
let polls = 0;

function esc(s) {
  return String(s).replace(/[&<>"']/g, c => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;","'":"&#39;"}[c]));
}
function num(v) {
  if (typeof v === "string" && v.trim() !== "") v = Number(v);
  return typeof v === "number" && isFinite(v) ? v : null;
}
function fmt(v) {
  if (v === null || v === undefined) return "\u2013";
  const a = Math.abs(v);
  if (a >= 1e9) return (v / 1e9).toFixed(1) + "G";
  if (a >= 1e6) return (v / 1e6).toFixed(1) + "M";
  if (a >= 1e4) return (v / 1e3).toFixed(1) + "k";
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}
function fmtBytes(v) {
  if (v === null || v === undefined) return "\u2013";
  const u = ["B","KiB","MiB","GiB","TiB"];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return (i === 0 ? String(Math.round(v)) : v.toFixed(1)) + " " + u[i];
}
function fmtTime(ms) { return new Date(ms).toISOString().substring(11, 19); }
function fmtSeconds(s) {
  if (s === null) return "\u2013";
  if (Math.abs(s) >= 3600) return (s / 3600).toFixed(1) + " h";
  if (Math.abs(s) >= 60) return (s / 60).toFixed(1) + " min";
  return s.toFixed(1) + " s";
}
function niceMax(m) {
  if (!(m > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(m)));
  for (const k of [1, 2, 2.5, 5, 10]) if (k * p >= m) return k * p;
  return 10 * p;
}
function timeOf(text) {
  if (!text) return null;
  const ms = Date.parse(text);
  return isFinite(ms) && ms > 0 ? ms : null;
}

// One chart: xs are batch ids; each series has one value (or null) per batch. Options:
// stacked (bars), time (values are epoch ms), bytes, line {value, label} (a dashed level),
// empty (the text when there is no data).
function chart(key, title, xs, series, opt) {
  opt = opt || {};
  const n = xs.length;
  let points = 0, hi = 0, lo = Infinity;
  for (let i = 0; i < n; i++) {
    let any = false, sum = 0;
    for (const s of series) {
      const v = s.values[i];
      if (v === null || v === undefined) continue;
      any = true; sum += v;
      hi = Math.max(hi, v); lo = Math.min(lo, v);
    }
    if (opt.stacked) hi = Math.max(hi, sum);
    if (any) points++;
  }
  const head = `<figure class="chart" data-chart="${key}" data-points="${points}"><figcaption>${esc(title)}</figcaption>`;
  if (points === 0) return head + `<div class="nodata">${esc(opt.empty || "no data yet")}</div></figure>`;
  if (opt.line) hi = Math.max(hi, opt.line.value);
  if (opt.time) { if (hi - lo < 1000) { lo -= 500; hi += 500; } }
  else { lo = 0; hi = niceMax(hi); }
  const W = 420, H = 170, L = 52, R = 10, T = 8, B = 18, PW = W - L - R, PH = H - T - B;
  const y = v => T + PH * (1 - (v - lo) / (hi - lo));
  const xl = i => L + (n === 1 ? PW / 2 : i * PW / (n - 1));
  const label = v => opt.time ? fmtTime(v) : opt.bytes ? fmtBytes(v) : fmt(v);
  let g = "";
  for (let t = 0; t <= 4; t++) {
    const v = lo + (hi - lo) * t / 4, yy = y(v).toFixed(1);
    g += `<line x1="${L}" x2="${W - R}" y1="${yy}" y2="${yy}" stroke="#eceff4"/>`;
    g += `<text x="${L - 4}" y="${(+yy + 3).toFixed(1)}" text-anchor="end">${esc(label(v))}</text>`;
  }
  g += `<text x="${L}" y="${H - 4}">batch ${xs[0]}</text>`;
  if (n > 1) g += `<text x="${W - R}" y="${H - 4}" text-anchor="end">batch ${xs[n - 1]}</text>`;
  if (opt.stacked) {
    const slot = PW / n, bw = Math.max(1, slot * 0.8);
    for (let i = 0; i < n; i++) {
      let acc = 0;
      series.forEach((s, k) => {
        const v = s.values[i];
        if (!v) return;
        const y0 = y(acc), y1 = y(acc + v);
        g += `<rect x="${(L + i * slot + (slot - bw) / 2).toFixed(1)}" y="${y1.toFixed(1)}" width="${bw.toFixed(1)}" height="${Math.max(0.5, y0 - y1).toFixed(1)}" fill="${COLORS[k % COLORS.length]}"><title>batch ${xs[i]} ${esc(s.name)}: ${v}</title></rect>`;
        acc += v;
      });
    }
  } else {
    series.forEach((s, k) => {
      const c = COLORS[k % COLORS.length];
      // A batch without a value (e.g. no max event time in a no-data batch) is skipped: the
      // line joins the batches that have one.
      let d = "", pen = "M", count = 0, last = null;
      for (let i = 0; i < n; i++) {
        const v = s.values[i];
        if (v === null || v === undefined) continue;
        d += `${pen}${xl(i).toFixed(1)} ${y(v).toFixed(1)} `;
        pen = "L"; count++; last = i;
      }
      if (count > 1) g += `<path d="${d}" fill="none" stroke="${c}" stroke-width="1.8"/>`;
      if (count >= 1 && last !== null) g += `<circle cx="${xl(last).toFixed(1)}" cy="${y(s.values[last]).toFixed(1)}" r="2.5" fill="${c}"/>`;
    });
  }
  if (opt.line) {
    const yy = y(opt.line.value).toFixed(1);
    g += `<line x1="${L}" x2="${W - R}" y1="${yy}" y2="${yy}" stroke="#111" stroke-dasharray="4 3"/>`;
  }
  let legend = series.map((s, k) => {
    const v = [...s.values].reverse().find(x => x !== null && x !== undefined);
    return `<span><i style="background:${COLORS[k % COLORS.length]}"></i>${esc(s.name)}: ${esc(v === undefined ? "\u2013" : label(v))}</span>`;
  }).join("");
  if (opt.line) legend += `<span><i style="background:#111"></i>${esc(opt.line.label)}: ${esc(label(opt.line.value))}</span>`;
  return head + `<svg viewBox="0 0 ${W} ${H}" role="img">${g}</svg><div class="legend">${legend}</div></figure>`;
}

function sum(values) {
  let s = null;
  for (const v of values) if (v !== null) s = (s || 0) + v;
  return s;
}

function charts(q, prog) {
  const xs = prog.map(p => p.batchId);
  const out = [];
  out.push(chart("rates", "Input vs processed rows/s", xs, [
    {name: "input rows/s", values: prog.map(p => num(p.inputRowsPerSecond))},
    {name: "processed rows/s", values: prog.map(p => num(p.processedRowsPerSecond))}]));
  const phases = PHASES.slice();
  for (const p of prog) for (const k of Object.keys(p.durationMs || {}))
    if (k !== "triggerExecution" && !phases.includes(k)) phases.push(k);
  const used = phases.filter(k => prog.some(p => p.durationMs && num(p.durationMs[k]) !== null));
  out.push(chart("duration", "Batch duration by phase (ms)", xs,
    used.map(k => ({name: k, values: prog.map(p => p.durationMs ? num(p.durationMs[k]) : null)})),
    {stacked: true, line: q.triggerIntervalMs > 0 ? {value: q.triggerIntervalMs, label: "trigger interval"} : null}));
  const nops = Math.max(0, ...prog.map(p => (p.stateOperators || []).length));
  const opName = i => { for (let j = prog.length - 1; j >= 0; j--) { const o = (prog[j].stateOperators || [])[i]; if (o) return i + ": " + o.operatorName; } return String(i); };
  const opSeries = field => Array.from({length: nops}, (_, i) => ({name: opName(i),
    values: prog.map(p => { const o = (p.stateOperators || [])[i]; return o ? num(o[field]) : null; })}));
  out.push(chart("state-rows", "State rows per operator", xs, opSeries("numRowsTotal"), {empty: "no stateful operator"}));
  out.push(chart("state-memory", "State memory per operator", xs, opSeries("memoryUsedBytes"), {bytes: true, empty: "no stateful operator"}));
  const maxT = prog.map(p => timeOf((p.eventTime || {}).max));
  const wmT = prog.map(p => timeOf((p.eventTime || {}).watermark));
  let lagTitle = "";
  for (let i = prog.length - 1; i >= 0; i--) if (maxT[i] !== null && wmT[i] !== null) { lagTitle = " \u2013 lag " + fmtSeconds((maxT[i] - wmT[i]) / 1000); break; }
  out.push(chart("event-time", "Watermark vs max event time (UTC)" + lagTitle, xs, [
    {name: "max event time", values: maxT}, {name: "watermark", values: wmT}],
    {time: true, empty: "no event time (no watermark or no timestamps)"}));
  const backlog = [];
  const nsrc = Math.max(0, ...prog.map(p => (p.sources || []).length));
  for (let i = 0; i < nsrc; i++) {
    const metric = (p, k) => { const s = (p.sources || [])[i]; return s && s.metrics ? num(s.metrics[k]) : null; };
    for (const [k, what] of [["maxOffsetsBehindLatest", "Kafka offsets behind (max)"], ["numFilesOutstanding", "files outstanding"]]) {
      const values = prog.map(p => metric(p, k));
      if (values.some(v => v !== null)) backlog.push({name: "source " + i + " " + what, values});
    }
  }
  out.push(chart("backlog", "Source backlog", xs, backlog, {empty: "the sources report no backlog"}));
  const dropped = [];
  if (nops > 0) dropped.push({name: "rows dropped by watermark", values: prog.map(p => sum((p.stateOperators || []).map(o => num(o.numRowsDroppedByWatermark))))});
  const rescued = prog.map(p => sum((p.sources || []).map(s => s.metrics ? num(s.metrics.numRescuedRows) : null)));
  if (rescued.some(v => v !== null)) dropped.push({name: "rescued rows", values: rescued});
  out.push(chart("dropped", "Late rows dropped / rescued rows per batch", xs, dropped, {empty: "no watermark or rescued-data figures"}));
  return out.join("");
}

function render(q, prog) {
  const lp = q.lastProgress;
  const row = (k, v) => `<tr><td class="k">${esc(k)}</td><td>${esc(v)}</td></tr>`;
  let h = `<section class="query" data-query-id="${esc(q.id)}" data-status="${esc(q.status)}" data-falling-behind="${q.fallingBehind}">`;
  h += `<div class="qhead"><h2>${esc(q.name || "(unnamed)")}</h2><span class="badge ${esc(q.status)}">${esc(q.status)}</span>`;
  if (q.fallingBehind) h += `<span class="badge behind">falling behind</span>`;
  else if (q.status === "active" || q.status === "idle") h += `<span class="badge keeping">keeping up</span>`;
  h += `<span class="meta">trigger ${esc(q.trigger || "?")} &middot; id ${esc(q.id)} &middot; run ${esc(q.runId)}</span></div>`;
  if (q.fallingBehind) h += `<div class="reason">${esc(q.fallingBehindReason)}</div>`;
  h += `<table class="last">`;
  if (lp) {
    h += row("last batch", lp.batchId + " at " + lp.timestamp);
    h += row("input rows", fmt(lp.numInputRows) + "  (" + fmt(num(lp.inputRowsPerSecond)) + " rows/s in, " + fmt(num(lp.processedRowsPerSecond)) + " rows/s processed)");
    h += row("duration", lp.batchDurationMs + " ms");
    h += row("state", fmt(lp.stateRows) + " rows, " + fmtBytes(lp.stateMemoryBytes));
  } else {
    h += row("last batch", "none yet");
  }
  h += row("since start", fmt(q.numInputRowsTotal) + " rows in " + fmt(q.numBatchesTotal) + " batches, " + q.failures + " failures");
  h += `</table>`;
  if (q.error) {
    h += `<div class="error"><b>Last error</b><pre>${esc(q.error.message)}</pre>`;
    if (q.error.contexts && q.error.contexts.length > 1) h += `context chain (outermost first):<ol>${q.error.contexts.map(c => `<li>${esc(c)}</li>`).join("")}</ol>`;
    h += `</div>`;
  }
  h += `<div class="charts">${charts(q, prog)}</div></section>`;
  return h;
}

async function poll() {
  const conn = document.getElementById("conn");
  try {
    const r = await fetch("/api/v1/queries", {cache: "no-store"});
    if (!r.ok) throw new Error("HTTP " + r.status);
    const qs = await r.json();
    const progs = await Promise.all(qs.map(q =>
      fetch("/api/v1/queries/" + encodeURIComponent(q.id) + "/progress?limit=" + LIMIT, {cache: "no-store"})
        .then(x => x.ok ? x.json() : [])));
    document.getElementById("queries").innerHTML = qs.length
      ? qs.map((q, i) => render(q, progs[i])).join("")
      : `<p class="meta">No query has started yet.</p>`;
    polls++;
    document.body.dataset.polls = String(polls);
    conn.textContent = "updated " + new Date().toISOString().substring(11, 19) + " UTC \u00b7 " + qs.length + (qs.length === 1 ? " query" : " queries");
  } catch (e) {
    conn.textContent = "cannot reach the server (" + e.message + "); retrying";
  }
  setTimeout(poll, POLL_MS);
}
poll();
</script>
</body>
</html>
)SLUICEUI";

}  // namespace

std::string_view IndexHtml() { return kIndexHtml; }

}  // namespace sluice::server
