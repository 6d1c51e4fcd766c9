// A run's code regions (the report's "regions": vigil_region_begin/end or
// likwid's markers), as `vigil report` prints them: each region's figures,
// inclusive of the regions nested in it; in an MPI job's report, the
// spread over the ranks that entered it.

import { el, table } from './dom.js';
import * as format from './format.js';

function energyText(g) {
  if (g.energy_joule === null || g.energy_joule === undefined) return 'n/a';
  return format.joules(g.energy_joule) + (g.energy_estimated ? ' (estimated)' : '')
    + (g.energy_uncertain ? ' (uncertain)' : '');
}

// "min – max" of a per-rank figure, for a job's report.
function spread(g, figure, show) {
  const st = g.per_rank?.[figure];
  return st ? `${show(st.min)} – ${show(st.max)}` : '–';
}

// What the report says its regions could not follow, in words.
function notes(report) {
  const n = report.region_notes ?? {};
  const said = [];
  if (n.names_dropped) said.push(`${format.count(n.names_dropped)} begins of names past the 64 a process follows`);
  if (n.unmatched_ends) said.push(`${format.count(n.unmatched_ends)} ends naming no open region`);
  if (n.closed_by_outer) said.push(`${format.count(n.closed_by_outer)} regions closed by an outer one's end`);
  if (n.too_deep) said.push(`${format.count(n.too_deep)} begins nested too deep to follow`);
  if (n.dropped_calls) said.push(`${format.count(n.dropped_calls)} calls not counted in any region`);
  const missing = report.regions.reduce((sum, g) => sum + (g.energy_missing ?? 0), 0);
  if (missing) said.push(`${format.count(missing)} entries without an energy figure (no vigild, or before its first tick)`);
  return said.length ? el('p', { class: 'note', id: 'region-notes' }, 'Not followed: ' + said.join('; ') + '.') : null;
}

export function regionsSection(report) {
  const regions = report?.regions;
  if (!regions || regions.length === 0) return document.createComment('no code regions in this run');
  const job = regions.some((g) => g.per_rank);
  const columns = [
    { label: 'Region', rowHeader: true, value: (g) => g.name },
    { label: 'Entered', numeric: true, value: (g) => format.count(g.entered) },
    { label: 'I/O calls', numeric: true, value: (g) => format.count(g.calls) },
    { label: 'Read', numeric: true, value: (g) => format.bytes(g.bytes_read) },
    { label: 'Written', numeric: true, value: (g) => format.bytes(g.bytes_written) },
    { label: 'Wall time', numeric: true, value: (g) => format.seconds(g.wall_seconds) },
    { label: 'CPU time', numeric: true, value: (g) => format.seconds(g.cpu_seconds) },
    { label: 'Energy', numeric: true, value: energyText },
  ];
  if (job) {
    columns.push(
      { label: 'Ranks', numeric: true, value: (g) => format.count(g.ranks) },
      { label: 'Wall per rank', numeric: true, value: (g) => spread(g, 'wall_seconds', format.seconds) },
      { label: 'Energy per rank', numeric: true, value: (g) => spread(g, 'energy_joule', format.joules) },
    );
  }
  return el('section', { id: 'regions', 'aria-labelledby': 'regions-h' },
    el('h2', { id: 'regions-h' }, 'Code regions'),
    el('p', { class: 'note' }, 'Marked in the program with vigil_region_begin/end or likwid’s markers; '
      + 'a region’s figures include the regions nested in it' + (job ? '; per rank: min – max over the ranks that entered it.' : '.')),
    el('div', { class: 'scroll' }, table('Code regions', columns, regions, { id: 'regions-table' })),
    notes(report));
}
