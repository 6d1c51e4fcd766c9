// Two runs side by side (compare.html?a=ID&b=ID): their figures with the
// difference B − A (absolute and %), and their timelines overlaid on one
// axis of seconds since each run's start, so runs at different times line up.

import { apiGet, showError, showMe } from './api.js';
import { el, table, runHref } from './dom.js';
import * as format from './format.js';
import { timeline, ZoomGroup, uPlot } from './plot.js';

const params = new URLSearchParams(location.search);
const ids = { a: params.get('a'), b: params.get('b') };

// [label, value(run answer), formatter]
const FIGURES = [
  ['Program', (x) => x.run.program, null],
  ['User', (x) => x.run.user ?? x.run.uid, null],
  ['Start', (x) => format.time(x.run.start_time), null],
  ['Duration', (x) => x.run.duration_s, format.seconds],
  ['Processes', (x) => x.run.processes, format.count],
  ['Ranks', (x) => x.run.ranks, format.count],
  ['Nodes', (x) => x.run.nodes, format.count],
  ['Calls', (x) => x.run.calls, format.count],
  ['Bytes read', (x) => x.run.bytes_read, format.bytes],
  ['Bytes written', (x) => x.run.bytes_written, format.bytes],
  ['I/O bytes', (x) => x.run.bytes, format.bytes],
  ['Energy', (x) => x.run.energy_j, format.joules],
  ['CPU time', (x) => x.report?.cpu_seconds ?? null, format.seconds],
  ['Network bytes', (x) => x.report?.network_bytes ?? null, format.bytes],
  ['Activities recorded', (x) => x.report?.activities?.recorded ?? null, format.count],
  ['Anomalies', (x) => x.run.anomalies, format.count],
  ['Captured windows', (x) => x.run.captures, format.count],
];

function difference(a, b, fmt) {
  if (!fmt || typeof a !== 'number' || typeof b !== 'number') return { abs: '–', pct: '–', sign: 0 };
  const d = b - a;
  const sign = Math.sign(d);
  const abs = (d > 0 ? '+' : d < 0 ? '−' : '') + fmt(Math.abs(d));
  const pct = a === 0 ? (d === 0 ? '0 %' : '–') : `${d > 0 ? '+' : ''}${format.number((100 * d) / a, 3)} %`;
  return { abs, pct, sign };
}

function figuresTable(A, B) {
  const rows = FIGURES.map(([label, get, fmt]) => {
    const a = get(A);
    const b = get(B);
    return { label, a: fmt ? fmt(a) : String(a ?? '–'), b: fmt ? fmt(b) : String(b ?? '–'), ...difference(a, b, fmt) };
  });
  const signed = (r, text) => el('span', { class: r.sign > 0 ? 'diff-up' : r.sign < 0 ? 'diff-down' : null }, text);
  return table('Figures (difference: B − A)', [
    { label: 'Figure', rowHeader: true, value: (r) => r.label },
    { label: `A: run ${A.run.run_id}`, numeric: true, value: (r) => r.a },
    { label: `B: run ${B.run.run_id}`, numeric: true, value: (r) => r.b },
    { label: 'B − A', numeric: true, value: (r) => signed(r, r.abs) },
    { label: '%', numeric: true, value: (r) => signed(r, r.pct) },
  ], rows, { id: 'figures' });
}

const METRICS = [
  { metric: 'power', title: 'Power', combine: 'sum' },
  { metric: 'cpu', title: 'CPU busy', combine: 'mean' },
  { metric: 'memory', title: 'Memory used', combine: 'sum' },
  { metric: 'io_bytes', title: 'I/O bytes', combine: 'sum' },
  { metric: 'network', title: 'Network', combine: 'sum' },
];

// One run's answer reduced to one line per label (sum or mean over its
// nodes), against seconds since the run's start.
function perLabel(answer, start, combine) {
  const x = answer.t.map((t) => t - start);
  const labels = new Map();
  const lines = answer.band && answer.band.length > 0
    ? answer.band.map((b) => ({ label: b.label, mean: b.median, nodes: b.nodes }))
    : answer.series;
  for (const s of lines) {
    if (!labels.has(s.label)) labels.set(s.label, []);
    labels.get(s.label).push(s);
  }
  const out = [];
  for (const [label, group] of labels) {
    // a band's median stands for its `nodes` nodes: weight it so
    const values = x.map((_, j) => {
      let total = 0;
      let weight = 0;
      for (const s of group) {
        const v = s.mean[j];
        if (v === null || v === undefined) continue;
        total += v * (s.nodes || 1);
        weight += s.nodes || 1;
      }
      if (weight === 0) return null;
      return combine === 'mean' ? total / weight : total;
    });
    out.push({ label, x, values });
  }
  return out;
}

async function overlay(box, m, A, B, group) {
  const [sa, sb] = await Promise.all([
    apiGet(`runs/${A.run.run_id}/series`, { metric: m.metric }),
    apiGet(`runs/${B.run.run_id}/series`, { metric: m.metric }),
  ]);
  const la = perLabel(sa, format.epochSeconds(A.run.start_time), m.combine);
  const lb = perLabel(sb, format.epochSeconds(B.run.start_time), m.combine);
  // uPlot wants one x column: join both runs' (nulls where one has no bucket)
  const tables = [...la, ...lb].map((l) => [l.x, l.values]);
  const columns = tables.length > 0 ? uPlot.join(tables) : [[]];
  const single = (l) => (l.label === m.metric ? '' : ` ${l.label}`);
  const series = [
    ...la.map((l, i) => ({ label: `A (run ${A.run.run_id})${single(l)}`, stroke: ['#1f77b4', '#6baed6'][i % 2], spanGaps: true })),
    ...lb.map((l, i) => ({ label: `B (run ${B.run.run_id})${single(l)}`, stroke: ['#d62728', '#fc9272'][i % 2], spanGaps: true })),
  ];
  const how = m.combine === 'sum' ? 'summed over nodes' : 'mean over nodes';
  const answer = { metric: m.metric, unit: sa.unit, a: sa, b: sb };
  timeline(box, answer, {
    name: `compare-${m.metric}`,
    title: `${m.title} (${sa.unit}, ${how})`,
    group,
    columns,
    series,
    xIsTime: false,
  });
}

async function load() {
  showMe();
  const form = document.getElementById('pick');
  form.elements.a.value = ids.a || '';
  form.elements.b.value = ids.b || '';
  if (!ids.a || !ids.b) {
    document.body.dataset.loaded = 'yes';
    return;
  }
  let A;
  let B;
  try {
    [A, B] = await Promise.all([
      apiGet(`runs/${ids.a}`).catch((e) => Promise.reject(Object.assign(e, { which: ids.a }))),
      apiGet(`runs/${ids.b}`).catch((e) => Promise.reject(Object.assign(e, { which: ids.b }))),
    ]);
  } catch (e) {
    showError(e, `run ${e.which}`);
    return;
  }
  document.getElementById('title').textContent = `Run ${A.run.run_id} (A) and run ${B.run.run_id} (B)`;
  const root = document.getElementById('compare');
  const plots = el('div', { id: 'overlays' });
  root.replaceChildren(
    el('p', {}, el('a', { href: runHref(A.run.run_id) }, `Run ${A.run.run_id}`), ' and ',
      el('a', { href: runHref(B.run.run_id) }, `run ${B.run.run_id}`),
      ' ', el('a', { href: `/compare.html?a=${B.run.run_id}&b=${A.run.run_id}` }, '(swap)')),
    el('div', { class: 'columns' },
      el('section', { 'aria-label': `Report card of run ${A.run.run_id}` }, el('h2', {}, `A: report card`),
        el('ul', {}, (A.report_card.length ? A.report_card : ['nothing abnormal']).map((l) => el('li', {}, l)))),
      el('section', { 'aria-label': `Report card of run ${B.run.run_id}` }, el('h2', {}, `B: report card`),
        el('ul', {}, (B.report_card.length ? B.report_card : ['nothing abnormal']).map((l) => el('li', {}, l))))),
    figuresTable(A, B),
    el('h2', {}, 'Over time, from each run’s start'),
    el('p', { class: 'note' }, 'Drag to zoom all plots, double-click to zoom out.'),
    plots,
  );
  const group = new ZoomGroup({ urlParams: false });
  await Promise.all(METRICS.map((m) => {
    const box = el('div', { id: `compare-${m.metric}` });
    plots.append(box);
    return overlay(box, m, A, B, group).catch((e) => showError(e));
  }));
  group.apply();
  if (document.body.dataset.loaded !== 'error') document.body.dataset.loaded = 'yes';
}

load();
