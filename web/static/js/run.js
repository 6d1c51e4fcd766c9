// One run (run.html?run=ID[&from=&to=][&window=CAPTURE_ID]): the report
// card, the run's figures, its timelines on one zoomable time axis with the
// captured windows shaded, a window's anomalies and activities, the rank ×
// time heat map of an MPI run, the per-rank table, the files (run_files.js),
// neighbours and nodes.

import { apiGet, apiGetOrShow, showError, showMe } from './api.js';
import { el, table, facts, runsTable, nodeHref } from './dom.js';
import * as format from './format.js';
import { TIMELINES, timeline, ZoomGroup, replaceData, ENVELOPE_LINES_MAX, plotWidth } from './plot.js';
import { heatmap } from './heatmap.js';
import { jobEnergySection } from './run_energy.js';
import { regionsSection } from './run_regions.js';
import { findingsSection } from './run_findings.js';
import { filesSection, filesRequest } from './run_files.js';

const params = new URLSearchParams(location.search);
const runId = params.get('run');


const windowState = { windows: [], selected: null, marks: [] };
// node id → hostname, from the run's nodes: a window's anomalies may come
// without their hostname
const hostnames = new Map();
const group = new ZoomGroup({ onZoom: (range) => zoomed(range) });

function section(id, title, ...children) {
  return el('section', { id, 'aria-labelledby': `${id}-h` }, el('h2', { id: `${id}-h` }, title), ...children);
}

// ---- header, report card, figures -------------------------------------------

// An end known only as bounds: a process ended while no vigild watched it.
function endBounds(x) {
  return `between ${format.time(x.end_time_earliest)} and ${format.time(x.end_time)}`;
}
function endOf(x) {
  if (!x.end_time_earliest) return format.time(x.end_time);
  return `${endBounds(x)} (no vigild watched its end)`;
}

function runFacts(run) {
  return facts([
    ['Program', run.program ?? '–'],
    ['Command', (run.argv || []).join(' ') || '–'],
    ['User', run.user ?? String(run.uid ?? '–')],
    ['Job', run.job ?? '–'],
    ['Start', format.time(run.start_time)],
    ['End', endOf(run)],
    ['Duration', format.seconds(run.duration_s)],
    ['Exit status', run.exit_status ?? '–'],
    ['Processes', format.count(run.processes)],
    ['Ranks', run.ranks ? format.count(run.ranks) : 'not MPI'], // the server may say 0 (see the report)
    ['Nodes', format.count(run.nodes)],
    ['Calls', format.count(run.calls)],
    ['Read', format.bytes(run.bytes_read)],
    ['Written', format.bytes(run.bytes_written)],
    ['Energy', run.energy_j === null ? '–'
      : `${format.joules(run.energy_j)} (${run.energy_source}${run.energy_estimated ? ', estimated' : ''})`],
    ['Anomalies', format.count(run.anomalies)],
    ['Captured windows', format.count(run.captures)],
    ['Run key', run.run_key ?? '–'],
  ]);
}

function reportCard(lines, run) {
  const card = el('div', { class: 'report-card', id: 'report-card', role: 'status' });
  // nothing abnormal: the calm style, with the server's words if it has some
  if (run.anomalies === 0 && run.captures === 0) card.classList.add('clean');
  if (!lines || lines.length === 0) {
    card.classList.add('clean');
    card.append(el('p', {}, 'Nothing abnormal was found while this run ran.'));
    return card;
  }
  card.append(el('strong', {}, 'Report card'), el('ul', {}, lines.map((line) => el('li', {}, line))));
  return card;
}

// The console report's figures (`vigil report RUN --format json`).
function reportFigures(report, reportOf) {
  if (!report) return el('p', { class: 'note' }, `No report yet: ${reportOf ?? 'no process has sent one'}.`);
  const vigild = report.vigild || {};
  const capture = vigild.capture || {};
  const acts = report.activities || {};
  const list = facts([
    ['Report of', reportOf ?? '–'],
    ['Runtime', format.seconds(report.runtime_ms / 1000)],
    ['CPU time', format.seconds(report.cpu_seconds)],
    ['Energy', report.energy_joule === null ? `– (${report.energy_note ?? 'unknown'})`
      : `${format.joules(report.energy_joule)} (${report.energy_source}${report.energy_estimated ? ', estimated' : ''}`
        + `${report.energy_uncertain ? ', uncertain' : ''})`],
    ['Read', format.bytes(report.io_bytes_read)],
    ['Written', format.bytes(report.io_bytes_written)],
    ['Network', format.bytes(report.network_bytes)],
    ['Activities observed', format.count(acts.observed)],
    ['recorded', format.count(acts.recorded)],
    ['dropped', format.count(acts.dropped)],
    ['excluded', format.count(acts.excluded)],
    ['vigild', `${vigild.state ?? '–'}${vigild.reason ? ': ' + vigild.reason : ''}`],
    ['Capture', capture.mode ? `${capture.mode}: ${format.count(capture.forwarded)} forwarded, `
      + `${format.count(capture.dropped)} dropped, ${format.count(capture.abnormal_cycles)} abnormal cycles` : '–'],
    // the warehouse's: forwarded, then dropped by vigild's uplink (the run's;
    // the report leaves it out when it is 0)
    ['Lost after forwarding', format.count(report.uplink_lost_activities ?? 0)],
  ]);
  const rows = [];
  for (const [layer, ops] of Object.entries(report.layers || {})) {
    for (const [op, c] of Object.entries(ops)) rows.push({ layer, op, ...c });
  }
  const layers = rows.length === 0 ? null : table('Calls by layer and operation', [
    { label: 'Layer', value: (r) => r.layer },
    { label: 'Operation', rowHeader: true, value: (r) => r.op },
    { label: 'Calls', numeric: true, value: (r) => format.count(r.calls) },
    { label: 'Bytes', numeric: true, value: (r) => format.bytes(r.bytes) },
    { label: 'Time', numeric: true, value: (r) => format.nanoseconds(r.time_ns) },
    { label: 'Errors', numeric: true, value: (r) => format.count(r.errors) },
  ], rows, { id: 'layers' });
  return el('div', {}, list, layers);
}

// ---- MPI ranks ---------------------------------------------------------------

// rank_stats is the joint MPI report's per_rank: for each figure (named as
// the report names it) min, mean, max, sum and the rank of the max. The
// unit is read from the name's ending.
function rankFigureFormat(name) {
  if (name.endsWith('_ms')) return (v) => format.seconds(v === null ? null : v / 1000);
  if (name.endsWith('_seconds') || name.endsWith('_s')) return format.seconds;
  if (name.includes('bytes')) return format.bytes;
  if (name.startsWith('energy') || name.endsWith('_j')) return format.joules;
  return format.count;
}

function rankStatsTable(stats) {
  const rows = Object.entries(stats || {}).map(([name, figures]) => ({ name, fmt: rankFigureFormat(name), ...figures }));
  if (rows.length === 0) return el('p', { class: 'note' }, 'The joint report has no per-rank figures.');
  return table('Per rank (the joint report): min, mean, max, sum, and the rank with the max', [
    { label: 'Figure', rowHeader: true, value: (r) => r.name.replaceAll('_', ' ') },
    { label: 'Min', numeric: true, value: (r) => r.fmt(r.min) },
    { label: 'Mean', numeric: true, value: (r) => r.fmt(r.mean) },
    { label: 'Max', numeric: true, value: (r) => r.fmt(r.max) },
    { label: 'Sum', numeric: true, value: (r) => r.fmt(r.sum) },
    { label: 'Rank of max', numeric: true, value: (r) => String(r.max_rank ?? r.argmax ?? '–') },
  ], rows, { id: 'rank-stats' });
}

function processReport(r) {
  if (r.job_report) return 'the job’s (joint)';
  if (r.unwatched_end) {
    return `lost: ended unwatched ${endBounds(r)}; vigild had drained ${format.count(r.unwatched_end.activities)} activities`;
  }
  return r.report_sent === false ? 'not sent' : 'own';
}

function ranksTable(ranks) {
  return table(`${ranks.length} process${ranks.length === 1 ? '' : 'es'} (figures from each one's own report)`, [
    { label: 'Rank', rowHeader: true, value: (r) => (r.rank === null ? '–' : String(r.rank)) },
    { label: 'PID', numeric: true, value: (r) => String(r.pid) },
    { label: 'Node', value: (r) => el('a', { href: nodeHref(r.node_id) }, r.hostname ?? String(r.node_id)) },
    { label: 'Runtime', numeric: true, value: (r) => format.seconds(r.runtime_s) },
    { label: 'Exit', numeric: true, value: (r) => (r.exit_status === null || r.exit_status === undefined ? '–' : String(r.exit_status)) },
    { label: 'Calls', numeric: true, value: (r) => format.count(r.calls) },
    { label: 'Read', numeric: true, value: (r) => format.bytes(r.bytes_read) },
    { label: 'Written', numeric: true, value: (r) => format.bytes(r.bytes_written) },
    { label: 'CPU', numeric: true, value: (r) => format.seconds(r.cpu_s) },
    { label: 'Energy', numeric: true, value: (r) => format.joules(r.energy_j) },
    { label: 'Lost after forwarding', numeric: true, value: (r) => format.count(r.uplink_dropped_activities) },
    { label: 'Report', value: processReport },
  ], ranks, { id: 'ranks' });
}

// `box`, whose content `make` makes (or promises) once it comes within a
// screen of the view: a 1,000-rank run's table is 12,000 cells below the
// plots, which the page would otherwise fetch, build (and the browser
// style) while it draws. Watched only once the page above is drawn: until
// the plots are there the page is short, and everything looks near.
let pageDrawn;
const drawnAbove = new Promise((resolve) => { pageDrawn = resolve; });
function whenNear(box, make) {
  const seen = new IntersectionObserver((entries) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    seen.disconnect();
    Promise.resolve(make()).then((content) => box.replaceChildren(content))
      .catch((e) => showError(e, `run ${runId}`));
  }, { rootMargin: '100% 0px' });
  drawnAbove.then(() => seen.observe(box));
  return box;
}

// The run's processes (runs/ID/ranks), asked for when their table is near.
async function ranksTableFetched() {
  const answer = await apiGet(`runs/${runId}/ranks`);
  return ranksTable(answer.ranks);
}

// The answer's cells (only those with activities) as one array per row,
// one value per bin, zero where no activity was stored.
function heatmapMatrix(answer, what) {
  const matrix = answer.rows.map(() => new Array(answer.t.length).fill(0));
  const { row, bin } = answer.cells;
  const values = answer.cells[what];
  for (let i = 0; i < row.length; i++) matrix[row[i]][bin[i]] = values[i];
  return matrix;
}

// The rank × time heat map of the stored activities; follows the zoom.
let heatmapWhat = 'calls';
let heatmapRange = null;
let heatmapGeneration = 0;
function heatmapRequest() {
  return apiGet(`runs/${runId}/heatmap`, {
    bins: 200,
    from: heatmapRange ? new Date(heatmapRange.min * 1000).toISOString() : params.get('from'),
    to: heatmapRange ? new Date(heatmapRange.max * 1000).toISOString() : params.get('to'),
  });
}
// `request`: the heat map's answer on its way (the page asks for it
// before the run's own answer is there).
async function drawHeatmap(request = heatmapRequest()) {
  const box = document.getElementById('heatmap-box');
  if (!box) return;
  const generation = ++heatmapGeneration; // a later request's answer wins
  try {
    const answer = await request;
    if (generation !== heatmapGeneration) return;
    const labels = answer.rows.map((r) => (r.rank !== null && r.rank !== undefined ? `rank ${r.rank}` : `pid ${r.pid}`));
    heatmap(box, {
      name: 'heatmap',
      title: `Stored activities per rank and ${format.number(answer.bin_s)} s bin: ${heatmapWhat}`,
      t: answer.t,
      rowLabels: labels,
      matrix: heatmapMatrix(answer, heatmapWhat),
      valueText: heatmapWhat === 'bytes' ? format.bytes : format.count,
      answer,
    });
  } catch (e) {
    showError(e, `run ${runId}`);
  }
}

function heatmapSection() {
  const pick = (what, label) => el('button', { type: 'button', 'aria-pressed': String(what === heatmapWhat),
    on: { click: (e) => {
      heatmapWhat = what;
      for (const b of e.target.parentElement.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b === e.target));
      drawHeatmap();
    } } }, label);
  return section('activity', 'I/O activity per rank over time',
    el('div', { class: 'timeline-tools' }, 'Show', pick('calls', 'calls'), pick('bytes', 'bytes'),
      el('span', { class: 'note' }, 'Only the activities of captured windows are stored: blank is "not captured" as much as idle.')),
    el('div', { id: 'heatmap-box' }));
}

// ---- timelines -----------------------------------------------------------------

function plotNote(answer) {
  if (answer.metric !== 'power' && answer.metric !== 'energy') return null;
  const source = answer.source ?? 'unknown source';
  return `source: ${source}${answer.estimated ? ' — estimated' : ''}`;
}

// One metric's box: the plot, and beside it a time × node heat map when
// the answer is banded (too many nodes for one line each).
// `width`: the timelines' width, measured once for the seven plots.
async function drawMetric(box, { metric, title }, request, width) {
  const answer = await request;
  const plotBox = el('div', { id: `plot-${metric}` });
  box.replaceChildren(plotBox);
  const note = plotNote(answer);
  plots[metric] = timeline(plotBox, answer, {
    name: metric,
    width,
    fetchFull: (a) => apiGet(`runs/${runId}/series`, { metric, from: a.from, to: a.to, points: a.points }),
    title: `${title} (${answer.unit})`,
    note,
    group,
    windows: windowState,
    onPick: (w) => selectWindow(w.capture_id, true),
  });
  if (note && answer.estimated) plotBox.querySelector('.plot-note').classList.add('estimated');
  if (answer.band && answer.band.length > 0) {
    box.classList.add('pernode');
    box.append(el('div', { id: `nodes-${metric}` }));
    await drawNodeHeat(metric, answer);
  }
}

// The time × node heat map beside a banded plot, from the answer's `heat`
// (the first label's means per node); a server without it is asked for
// the lines themselves.
async function drawNodeHeat(metric, answer) {
  const mapBox = document.getElementById(`nodes-${metric}`);
  if (!mapBox) return;
  let heat = answer.heat;
  if (!heat) {
    const lines = await apiGet(`runs/${runId}/series`, { metric, per_node: 'yes', from: answer.from, to: answer.to });
    const first = lines.series.filter((s) => s.label === lines.series[0]?.label);
    heat = { label: first[0]?.label, nodes: first.map((s) => s.hostname), values: first.map((s) => s.mean) };
  }
  const title = TIMELINES.find((m) => m.metric === metric).title;
  heatmap(mapBox, {
    name: `nodes-${metric}`,
    title: `${title}${heat.label && heat.label !== metric ? ' ' + heat.label : ''} per node (mean per bucket)`,
    t: answer.t,
    rowLabels: heat.nodes,
    matrix: heat.values,
    valueText: format.byUnit(answer.unit),
    scale: 'linear',
    answer: heat,
  });
}

// A zoom fetches the zoomed interval again, so that its buckets are as
// fine as the plot is wide (a long run's 600 buckets are seconds each);
// zooming out fetches the whole run again. Only the latest zoom's answers
// are drawn.
const plots = {};
let zoomGeneration = 0;
let zoomTimer = null;
function zoomed(range) {
  heatmapRange = range;
  // the answers of an earlier zoom still on their way are not drawn
  const generation = ++zoomGeneration;
  clearTimeout(zoomTimer);
  // a drag gives one zoom; keys and repeated clicks may give several
  zoomTimer = setTimeout(() => {
    drawHeatmap();
    refetch(range, generation);
  }, 150);
}

async function refetch(range, generation) {
  const interval = range || group.fullRange();
  const iso = (s) => new Date(s * 1000).toISOString();
  document.body.dataset.zoomed = 'loading';
  await Promise.all(Object.entries(plots).map(async ([metric, u]) => {
    if (!u) return;
    try {
      const answer = await apiGet(`runs/${runId}/series`, range
        ? { metric, from: iso(range.min), to: iso(range.max), min_max_lines: ENVELOPE_LINES_MAX }
        : { metric, min_max_lines: ENVELOPE_LINES_MAX });
      if (generation !== zoomGeneration) return;
      replaceData(u, answer, interval, group);
      if (answer.band && answer.band.length > 0) await drawNodeHeat(metric, answer);
    } catch (e) {
      showError(e, `run ${runId}`);
    }
  }));
  // tests wait for this: the plots show the data of the latest zoom
  if (generation === zoomGeneration) document.body.dataset.zoomed = range ? 'yes' : 'no';
}

// ---- captured windows ------------------------------------------------------

function windowLabel(w) {
  const start = format.time(w.start_time);
  const end = new Date(w.end_time).toISOString().slice(11, 19);
  return `Window ${w.capture_id} on ${w.hostname}: ${start} → ${end}, ${w.anomalies.length} anomal${w.anomalies.length === 1 ? 'y' : 'ies'}`;
}

function windowsList() {
  if (windowState.windows.length === 0) return el('p', { class: 'note' }, 'vigild captured no window of this run.');
  return el('ul', { class: 'windows', id: 'windows' }, windowState.windows.map((w) => el('li', {},
    el('button', { type: 'button', 'aria-pressed': 'false', dataset: { captureId: w.capture_id },
      'aria-controls': 'window-detail', on: { click: () => selectWindow(w.capture_id, true) } }, windowLabel(w)))));
}

function anomaliesTable(caption, anomalies) {
  return table(caption, [
    { label: 'Time', value: (a) => format.time(a.time) },
    { label: 'Level', value: (a) => a.level },
    { label: 'Node', value: (a) => el('a', { href: nodeHref(a.node_id) },
      a.hostname ?? hostnames.get(a.node_id) ?? `node ${a.node_id}`) },
    { label: 'Detector', rowHeader: true, value: (a) => a.plugin },
    { label: 'Metric', value: (a) => a.metric ?? '–' },
    { label: 'Value', numeric: true, value: (a) => format.number(a.value) },
    { label: 'Expected', value: (a) => (a.expected_min === null && a.expected_max === null ? '–'
      : `${format.number(a.expected_min)} … ${format.number(a.expected_max)}`) },
    { label: 'State', value: (a) => a.state ?? '–' },
    { label: 'Message', value: (a) => a.message ?? '' },
  ], anomalies, { class: 'anomalies' });
}

function selectWindow(captureId, byUser) {
  const w = windowState.windows.find((x) => x.capture_id === captureId);
  if (!w) return;
  windowState.selected = captureId;
  for (const u of group.plots) u.redraw(false, false); // re-shade the chosen window
  for (const b of document.querySelectorAll('#windows button')) {
    b.setAttribute('aria-pressed', String(Number(b.dataset.captureId) === captureId));
  }
  if (byUser) {
    const url = new URL(location.href);
    url.searchParams.set('window', captureId);
    history.replaceState(history.state, '', url);
  }
  const detail = document.getElementById('window-detail');
  detail.hidden = false;
  detail.replaceChildren(
    el('h3', { id: 'window-detail-h', tabindex: '-1' }, windowLabel(w)),
    facts([
      ['Reasons', w.reasons ?? '–'],
      ['Process', w.pid === null ? 'whole node' : `pid ${w.pid}${w.rank !== null ? ', rank ' + w.rank : ''}`],
      ['Cycles', `${w.first_cycle} … ${w.last_cycle}`],
      ['Activities forwarded', format.count(w.activities_forwarded)],
    ]),
    el('p', {}, el('button', { type: 'button', id: 'zoom-window', on: { click: () => {
      // a little around the window, so its edges show
      const start = format.epochSeconds(w.start_time);
      const end = format.epochSeconds(w.end_time);
      const margin = Math.max(1, (end - start) * 0.5);
      group.zoomTo({ min: start - margin, max: end + margin });
    } } }, 'Zoom the plots to this window')),
    w.anomalies.length > 0 ? anomaliesTable('Anomalies that opened it', w.anomalies) : el('p', { class: 'note' }, 'No anomaly recorded for it.'),
    (w.reasoner_states || []).length === 0 ? null : table('Reasoner states', [
      { label: 'Time', value: (s) => format.time(s.time) },
      { label: 'Level', rowHeader: true, value: (s) => s.level },
      { label: 'State', value: (s) => s.state },
      { label: 'Bad issues', numeric: true, value: (s) => format.count(s.bad_issues) },
      { label: 'Good issues', numeric: true, value: (s) => format.count(s.good_issues) },
      { label: 'Other issues', numeric: true, value: (s) => format.count(s.other_issues) },
    ], w.reasoner_states),
    el('div', { id: 'activities' }),
  );
  if (byUser) detail.querySelector('h3').focus();
  loadActivities(w, null, []);
}

// One page of a window's activities; `stack` holds the cursors of the pages
// before it ('' for the first) so Previous needs no request of its own.
async function loadActivities(w, after, stack) {
  const box = document.getElementById('activities');
  const answer = await apiGetOrShow(`windows/${w.capture_id}/activities`, { limit: 50, after },
    `window ${w.capture_id}`);
  if (answer === null) return;
  if (windowState.selected !== w.capture_id) return; // another window was picked meanwhile
  const rows = answer.activities;
  const pager = el('div', { class: 'pager', role: 'navigation', 'aria-label': 'Pages of activities' });
  if (stack.length > 0) {
    pager.append(el('button', { type: 'button', id: 'activities-previous',
      on: { click: () => loadActivities(w, stack[stack.length - 1] || null, stack.slice(0, -1)) } }, '← Previous'));
  }
  pager.append(el('span', {}, `Page ${stack.length + 1}`));
  if (answer.next) {
    pager.append(el('button', { type: 'button', id: 'activities-next',
      on: { click: () => loadActivities(w, answer.next, [...stack, after || '']) } }, 'Next →'));
  }
  box.replaceChildren(
    table(`Activities of window ${w.capture_id}, in time order`, [
      { label: 'Time (UTC)', value: (a) => format.preciseTime(a.start_time) },
      { label: 'Rank', numeric: true, value: (a) => (a.rank === null ? '–' : String(a.rank)) },
      { label: 'PID', numeric: true, value: (a) => String(a.pid) },
      { label: 'Seq', numeric: true, rowHeader: true, value: (a) => String(a.seq) },
      { label: 'Layer', value: (a) => a.layer },
      { label: 'Operation', value: (a) => a.operation },
      { label: 'Path', value: (a) => a.path ?? '–' },
      { label: 'Offset', numeric: true, value: (a) => (a.file_offset === null ? '–' : format.count(a.file_offset)) },
      { label: 'Bytes', numeric: true, value: (a) => format.count(a.bytes) },
      { label: 'Result', numeric: true, value: (a) => String(a.result) },
      { label: 'errno', numeric: true, value: (a) => String(a.errno) },
      { label: 'Duration', numeric: true, value: (a) => format.nanoseconds(a.duration_ns) },
    ], rows, { id: 'activities-table' }),
    pager,
  );
}

// The run's anomalies (its processes' and its nodes' while it ran), a page
// at a time; `stack` holds the cursors of the pages before ('' the first);
// `request`, the first page's answer on its way (null once shown failed).
function anomaliesRequest(after) {
  return apiGetOrShow('anomalies', { run: runId, limit: 20, after }, `run ${runId}`);
}
async function loadAnomalies(after, stack, request = anomaliesRequest(after)) {
  const box = document.getElementById('anomalies-box');
  const answer = await request;
  if (answer === null) return;
  if (answer.anomalies.length === 0 && stack.length === 0) {
    box.replaceChildren(el('p', { class: 'note' }, 'None.'));
    return;
  }
  const pager = el('div', { class: 'pager', role: 'navigation', 'aria-label': 'Pages of anomalies' });
  if (stack.length > 0) {
    pager.append(el('button', { type: 'button',
      on: { click: () => loadAnomalies(stack[stack.length - 1] || null, stack.slice(0, -1)) } }, '← Previous'));
  }
  if (answer.next) {
    pager.append(el('button', { type: 'button',
      on: { click: () => loadAnomalies(answer.next, [...stack, after || '']) } }, 'Next →'));
  }
  box.replaceChildren(el('div', { class: 'scroll' }, anomaliesTable(null, answer.anomalies)));
  if (pager.childElementCount > 0) box.append(pager);
}

// ---- the page ----------------------------------------------------------------

async function load() {
  const me = showMe(); // the header's user: awaited before the page says it is done
  const root = document.getElementById('run');
  if (!runId || !/^\d+$/.test(runId)) {
    showError(new Error('give a run number: /run.html?run=ID'));
    return;
  }
  // Every request the page needs, at once: each part is drawn when both
  // its answer and the run's are there. A browser sends six at a time to
  // one server, so the quick ones go first and the series last. A request
  // left waiting when the run cannot be shown is not an error of its own.
  const early = (request) => {
    request.catch(() => {});
    return request;
  };
  // The run without its processes: their table asks for them when near.
  const runAnswer = apiGetOrShow(`runs/${runId}`, { ranks: 'no' }, `run ${runId}`);
  const marks = early(Promise.all([apiGet(`runs/${runId}/windows`),
    apiGet('anomalies', { run: runId, limit: 200 })]));
  const heatmapAnswer = early(heatmapRequest());
  const anomaliesPage = early(apiGet('anomalies', { run: runId, limit: 20 }));
  const filesAnswer = early(filesRequest(runId));
  // Each line's min and max only where the plot draws them (its envelopes).
  const series = TIMELINES.map((m) => early(apiGet(`runs/${runId}/series`,
    { metric: m.metric, min_max_lines: ENVELOPE_LINES_MAX })));
  const answer = await runAnswer;
  if (answer === null) return;
  const { run } = answer;
  for (const n of answer.nodes) hostnames.set(n.node_id, n.hostname);
  document.title = `Run ${run.run_id}: ${run.program} – vigil`;
  document.getElementById('title').textContent = `Run ${run.run_id}: ${run.program ?? 'unknown program'}`;

  const timelines = el('div', { id: 'timelines' });
  for (const m of TIMELINES) timelines.append(el('div', { id: `metric-${m.metric}`, class: 'metric' }));
  const compareLink = el('a', { href: `/compare.html?a=${run.run_id}` }, 'Compare with another run…');
  const files = filesSection(run.run_id, group, filesAnswer);
  root.replaceChildren(
    reportCard(answer.report_card, run),
    findingsSection(answer.report),
    runFacts(run),
    el('p', {}, compareLink),
    jobEnergySection(answer.job_energy),
    regionsSection(answer.report),
    section('time', 'Over time',
      el('p', { class: 'timeline-tools note' },
        'Drag across a plot to zoom all of them; double-click to zoom out. Shaded: captured windows (click one); red ticks: anomalies.',
        el('button', { type: 'button', id: 'zoom-out', on: { click: () => group.zoomTo(null) } }, 'Zoom out')),
      el('div', { id: 'windows-box' }),
      timelines,
      el('div', { id: 'window-detail', hidden: true, 'aria-live': 'polite' })),
    section('anomalies', 'Anomalies while it ran', el('div', { id: 'anomalies-box' })),
    run.ranks ? heatmapSection() : null,
    run.ranks ? section('per-rank', 'Per rank', rankStatsTable(answer.rank_stats),
      whenNear(el('div', { class: 'scroll', id: 'ranks-box' }), ranksTableFetched)) : null,
    section('figures', 'The report’s figures', reportFigures(answer.report, answer.report_of)),
    files.box,
    section('neighbours', 'Other runs on its nodes at the same time',
      answer.neighbours.length > 0 ? runsTable(null, answer.neighbours) : el('p', { class: 'note' }, 'None.')),
    section('placement', 'Nodes and files', el('div', { class: 'columns' },
      table('Nodes', [
        { label: 'Node', rowHeader: true, value: (n) => el('a', { href: nodeHref(n.node_id) }, n.hostname) },
        { label: 'From', value: (n) => format.time(n.start_time) },
        { label: 'To', value: (n) => format.time(n.end_time) },
      ], answer.nodes, { id: 'nodes' }),
      el('div', { class: 'scroll' }, table('Files', [
        { label: 'Path', rowHeader: true, value: (f) => f.path },
        { label: 'Calls', numeric: true, value: (f) => format.count(f.calls) },
        { label: 'Read', numeric: true, value: (f) => format.bytes(f.bytes_read) },
        { label: 'Written', numeric: true, value: (f) => format.bytes(f.bytes_written) },
      ], answer.files || [], { id: 'files' })))),
  );
  if (!run.ranks && run.processes > 1) {
    document.getElementById('placement').append(whenNear(el('div', { class: 'scroll' }), ranksTableFetched));
  }

  // Windows and anomalies first: the plots mark them as soon as they draw
  // (the first 200 anomalies: a tick each; the table below pages them all).
  try {
    const [windows, anomalies] = await marks;
    windowState.windows = windows.windows;
    windowState.marks = anomalies.anomalies.map((a) => format.epochSeconds(a.time));
  } catch (e) {
    showError(e, `run ${runId}`);
  }
  document.getElementById('windows-box').replaceChildren(windowsList());

  const width = plotWidth(timelines);
  const drawn = TIMELINES.map((m, i) => drawMetric(document.getElementById(`metric-${m.metric}`), m, series[i], width)
    .catch((e) => showError(e, `run ${runId}`)));
  if (run.ranks) drawn.push(drawHeatmap(heatmapAnswer));
  drawn.push(loadAnomalies(null, [], anomaliesPage.catch((e) => {
    showError(e, `run ${runId}`);
    return null;
  })));
  drawn.push(files.loaded);
  await Promise.all(drawn);
  group.apply(); // the URL's from/to, now that every plot is there
  pageDrawn();

  const chosen = Number(params.get('window'));
  if (chosen) selectWindow(chosen, false);
  await me;
  if (document.body.dataset.loaded !== 'error') document.body.dataset.loaded = 'yes';
}

load();
