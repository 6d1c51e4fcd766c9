// One node (node.html?node=ID[&from=&to=]): its statistics over an
// interval (default: the hour before it was last seen, so a node that went
// quiet still shows its last data), its last anomalies and its last runs.

import { apiGet, apiGetOrShow, showError, showMe } from './api.js';
import { el, facts, reloadsWithPeriod, runsTable, table, runHref } from './dom.js';
import * as format from './format.js';
import { TIMELINES, timeline, ZoomGroup } from './plot.js';

const params = new URLSearchParams(location.search);
const nodeId = params.get('node');

// A run's timelines but its energy, a running sum from the run's start.
const METRICS = TIMELINES.filter((m) => m.metric !== 'energy');

// The interval's form: datetime-local in UTC; submitting reloads the page
// with from/to in its URL (and so draws the plots for that interval).
function periodForm(from, to) {
  const input = (name, value) => el('label', {}, `${name === 'from' ? 'From' : 'To'} (UTC) `,
    el('input', { type: 'datetime-local', name, step: '1', value: format.isoToInput(value) }));
  const form = el('form', { class: 'filters', id: 'period', 'aria-label': 'Period' },
    input('from', from), input('to', to), el('button', { type: 'submit', class: 'primary' }, 'Show'));
  reloadsWithPeriod(form);
  return form;
}

async function load() {
  const me = showMe(); // the header's user: awaited before the page says it is done
  if (!nodeId) {
    await listNodes(me);
    return;
  }
  const answer = await apiGetOrShow(`nodes/${nodeId}`, {}, `node ${nodeId}`);
  if (answer === null) return;
  const { node } = answer;
  document.title = `Node ${node.hostname} – vigil`;
  document.getElementById('title').textContent = `Node ${node.hostname}`;
  // Default interval: the hour up to its last sight.
  let from = params.get('from');
  let to = params.get('to');
  if (!from && !to && node.last_seen) {
    to = node.last_seen;
    from = new Date(new Date(node.last_seen).getTime() - 3600e3).toISOString();
  }
  const plots = el('div', { id: 'timelines' });
  document.getElementById('node').replaceChildren(
    facts([
      ['Node id', node.node_id],
      ['First seen', format.time(node.first_seen)],
      ['Last seen', format.time(node.last_seen)],
      ['Runs', format.count(node.runs)],
      ['Anomalies', format.count(node.anomalies)],
    ]),
    el('h2', {}, 'Statistics'),
    periodForm(from, to),
    el('p', { class: 'note' }, 'Drag across a plot to zoom all of them; double-click to zoom out.'),
    plots,
    el('h2', {}, 'Last anomalies'),
    answer.anomalies.length === 0 ? el('p', { class: 'note' }, 'None.') : el('div', { class: 'scroll' }, table(null, [
      { label: 'Time', value: (a) => format.time(a.time) },
      { label: 'Level', value: (a) => a.level },
      { label: 'Detector', rowHeader: true, value: (a) => a.plugin },
      { label: 'Metric', value: (a) => a.metric ?? '–' },
      { label: 'Value', numeric: true, value: (a) => format.number(a.value) },
      { label: 'Run', value: (a) => (a.run_id ? el('a', { href: runHref(a.run_id) }, `run ${a.run_id}`) : '–') },
      { label: 'Message', value: (a) => a.message ?? '' },
    ], answer.anomalies, { id: 'anomalies' })),
    el('h2', {}, 'Last runs'),
    answer.runs.length === 0 ? el('p', { class: 'note' }, 'None you may see.') : runsTable(null, answer.runs),
  );
  // The node's plots zoom together, but the URL's from/to is the interval
  // fetched (the form's), not a zoom inside it.
  const group = new ZoomGroup({ urlParams: false });
  await Promise.all(METRICS.map(async (m) => {
    const box = el('div', { id: `plot-${m.metric}` });
    plots.append(box);
    try {
      const series = await apiGet(`nodes/${nodeId}/series`, { metric: m.metric, from, to });
      const note = m.metric === 'power' ? `source: ${series.source ?? 'unknown'}${series.estimated ? ' — estimated' : ''}` : null;
      timeline(box, series, { name: m.metric, title: `${m.title} (${series.unit})`, note, group });
    } catch (e) {
      showError(e, `node ${nodeId}`);
    }
  }));
  group.apply();
  await me;
  if (document.body.dataset.loaded !== 'error') document.body.dataset.loaded = 'yes';
}

// node.html without ?node=: every node, as links.
async function listNodes(me) {
  try {
    const { nodes } = await apiGet('nodes');
    document.getElementById('title').textContent = 'Nodes';
    document.getElementById('node').replaceChildren(table(null, [
      { label: 'Node', rowHeader: true, value: (n) => el('a', { href: `/node.html?node=${n.node_id}` }, n.hostname) },
      { label: 'First seen', value: (n) => format.time(n.first_seen) },
      { label: 'Last seen', value: (n) => format.time(n.last_seen) },
      { label: 'Runs', numeric: true, value: (n) => format.count(n.runs) },
      { label: 'Anomalies', numeric: true, value: (n) => format.count(n.anomalies) },
    ], nodes, { id: 'nodes' }));
    await me;
    document.body.dataset.loaded = 'yes';
  } catch (e) {
    showError(e);
  }
}

load();
