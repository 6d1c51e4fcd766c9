// The naive run page (bench/web/naive.html?run=ID): what a viewer without
// server-side downsampling does. It fetches every roll-up row of the run
// (/naive/series?run=ID: run_statistics as one JSON array, made per request
// by the benchmark's server), reshapes the rows into one line per node and
// metric at full resolution, and draws the seven timelines of run.html
// (power, energy, CPU busy, memory, I/O bytes, I/O operations, network) with
// uPlot. body[data-loaded=yes] says it is drawn, as on vigil-web's pages.

import uPlot from '/vendor/uplot/uPlot.esm.js';

const runId = new URLSearchParams(location.search).get('run');

// metric name → node → {t: [], row: []}
function byMetricAndNode(rows) {
  const metrics = new Map();
  for (const r of rows) {
    let nodes = metrics.get(r.metric);
    if (!nodes) metrics.set(r.metric, (nodes = new Map()));
    let line = nodes.get(r.node_id);
    if (!line) nodes.set(r.node_id, (line = []));
    line.push(r);
  }
  return metrics;
}

// The value of one roll-up row as the API computes it.
function rate(r) {
  const s = (Date.parse(r.end_time) - Date.parse(r.start_time)) / 1000;
  return s > 0 && r.delta !== null ? r.delta / s : null;
}

// Lines of one plot: for each node, `value(rows of the parts at one second)`.
function lines(metrics, times, index, parts, value) {
  const out = [];
  const nodeIds = new Set();
  for (const p of parts) for (const [name, nodes] of metrics) if (p.test(name)) for (const n of nodes.keys()) nodeIds.add(n);
  for (const node of [...nodeIds].sort((a, b) => a - b)) {
    for (const p of parts) {
      const column = new Array(times.length).fill(null);
      const at = new Map(); // second index → rows of matching metrics
      for (const [name, nodes] of metrics) {
        if (!p.test(name)) continue;
        for (const r of nodes.get(node) || []) {
          const i = index.get(Date.parse(r.start_time) / 1000);
          if (!at.has(i)) at.set(i, []);
          at.get(i).push(r);
        }
      }
      for (const [i, rs] of at) column[i] = value(rs, i);
      out.push({ label: `node ${node} ${p.source}`, column });
    }
  }
  return out;
}

const sum = (xs) => xs.reduce((a, b) => a + (b ?? 0), 0);

function draw(box, title, t, ls) {
  const h = document.createElement('h3');
  h.textContent = title;
  const area = document.createElement('div');
  box.append(h, area);
  return new uPlot({
    width: Math.max(320, document.body.clientWidth - 40),
    height: 170,
    series: [{ label: 'time' }, ...ls.map((l, i) => ({ label: l.label, stroke: `hsl(${(i * 137.5) % 360}, 65%, 42%)`, width: 1 }))],
    scales: { x: { time: true } },
    legend: { show: ls.length <= 16 },
  }, [t, ...ls.map((l) => l.column)], area);
}

async function load() {
  const answer = await fetch(`/naive/series?run=${runId}`);
  if (!answer.ok) throw new Error(`naive series: HTTP ${answer.status}`);
  const rows = (await answer.json()) || [];
  const metrics = byMetricAndNode(rows);
  const times = [...new Set(rows.map((r) => Date.parse(r.start_time) / 1000))].sort((a, b) => a - b);
  const index = new Map(times.map((s, i) => [s, i]));
  const re = (source) => ({ source, test: (name) => new RegExp(source).test(name) });
  const running = new Map();
  const plots = [
    ['Power (W)', [re('^energy\\.node_j$')], (rs) => rate(rs[0])],
    ['Energy (J, running sum)', [re('^energy\\.node_j$')], (rs, i) => rs[0].delta],
    ['CPU busy (%)', [re('^cpu\\..*_s$')], (rs) => {
      const all = sum(rs.map((r) => r.delta));
      const idle = sum(rs.filter((r) => /\.(idle|iowait)_s$/.test(r.metric)).map((r) => r.delta));
      return all > 0 ? 100 * (1 - idle / all) : null;
    }],
    ['Memory used (bytes)', [re('^mem\\.used_bytes$')], (rs) => sum(rs.map((r) => r.mean))],
    ['I/O bytes (B/s)', [re('^disk\\..*\\.read_bytes$'), re('^disk\\..*\\.write_bytes$')], (rs) => sum(rs.map(rate))],
    ['I/O operations (ops/s)', [re('^disk\\..*\\.reads$'), re('^disk\\..*\\.writes$')], (rs) => sum(rs.map(rate))],
    ['Network (B/s)', [re('^net\\..*\\.rx_bytes$'), re('^net\\..*\\.tx_bytes$')], (rs) => sum(rs.map(rate))],
  ];
  const box = document.getElementById('timelines');
  window.naivePlots = [];
  for (const [title, parts, value] of plots) {
    const ls = lines(metrics, times, index, parts, value);
    if (title.startsWith('Energy')) {
      for (const l of ls) { // the running sum over the interval
        let acc = 0;
        l.column = l.column.map((d) => (d === null ? null : (acc += d)));
      }
    }
    running.set(title, ls.length);
    const div = document.createElement('div');
    box.append(div);
    window.naivePlots.push(draw(div, title, times, ls));
  }
  window.naiveRows = rows.length;
  document.body.dataset.loaded = 'yes';
}

load().catch((e) => {
  document.body.dataset.loaded = 'error';
  document.body.append(String(e));
});
