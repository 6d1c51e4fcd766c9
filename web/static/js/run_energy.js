// A run's energy across its nodes (GET /api/v1/runs/ID's job_energy): the
// sum over its nodes, the per-node min/mean/max, the source and whether it
// is an estimate, and each node's figure.

import { el, table, facts, nodeHref } from './dom.js';
import * as format from './format.js';

function sourceLabel(e) {
  const sources = (e.sources ?? '').split('+').filter((s) => s !== '');
  const text = sources.length > 1 ? `energy from ${sources.length} sources: ${sources.join(', ')}`
    : sources[0] ?? 'unknown source';
  return text + (e.estimated ? ', estimated' : '') + (e.uncertain ? ', uncertain' : '');
}

export function jobEnergySection(e) {
  if (!e) return document.createComment('no energy figure for this run');
  const box = el('section', { id: 'job-energy', 'aria-labelledby': 'job-energy-h' },
    el('h2', { id: 'job-energy-h' }, 'Energy across its nodes'));
  if (e.estimated) {
    box.append(el('p', { class: 'note' },
      el('span', { class: 'badge estimate' }, 'estimated'),
      ' Some of these figures are estimated from CPU use, not measured.'));
  }
  box.append(facts([
    ['Energy', `${format.joules(e.energy_j)} on ${format.count(e.nodes)} node${e.nodes === 1 ? '' : 's'}`
      + (e.complete ? '' : ' (at least: a process has no figure yet)')],
    ['Per node', `min ${format.joules(e.node_min_j)}, mean ${format.joules(e.node_mean_j)}, `
      + `max ${format.joules(e.node_max_j)}`],
    ['Source', sourceLabel(e)],
  ]));
  box.append(el('div', { class: 'scroll' }, table('Energy by node', [
    { label: 'Node', rowHeader: true, value: (n) => el('a', { href: nodeHref(n.node_id) }, n.hostname) },
    { label: 'Energy', numeric: true, value: (n) => format.joules(n.energy_j) },
    { label: 'Processes', numeric: true, value: (n) => `${format.count(n.processes_with_energy)} of ${format.count(n.processes)}` },
    { label: 'Source', value: (n) => sourceLabel(n) },
  ], e.by_node || [], { id: 'job-energy-nodes' })));
  return box;
}
