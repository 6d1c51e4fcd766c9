// Small DOM helpers the page modules share: element building, tables with
// real headers, and the runs table (runs list, node page, neighbours).

import * as format from './format.js';

// el('a', {href: '/x', class: 'y'}, 'text', child…). Attributes that are
// null or false are left out; `dataset` and `on` (event handlers) are objects.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name === 'on') for (const [event, fn] of Object.entries(value)) node.addEventListener(event, fn);
    else if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// A table with a caption, column headers (scope=col) and, when a column
// says `rowHeader`, row headers (scope=row). columns: [{label, value(row)
// → text or Node, numeric, rowHeader, headerNode}].
export function table(caption, columns, rows, attrs = {}) {
  const head = el('tr', {}, columns.map((c) => el('th', { scope: 'col', class: c.numeric ? 'num' : null },
    c.headerNode ?? c.label)));
  const body = rows.map((row) => el('tr', {}, columns.map((c) => {
    const cell = c.rowHeader ? el('th', { scope: 'row' }) : el('td');
    if (c.numeric) cell.className = 'num';
    const value = c.value(row);
    cell.append(value instanceof Node ? value : document.createTextNode(value ?? '–'));
    return cell;
  })));
  return el('table', attrs, caption ? el('caption', {}, caption) : null, el('thead', {}, head),
    el('tbody', {}, body));
}

export function runHref(runId) {
  return `/run.html?run=${encodeURIComponent(runId)}`;
}

export function nodeHref(nodeId) {
  return `/node.html?node=${encodeURIComponent(nodeId)}`;
}

export function badges(run) {
  const span = el('span', { class: 'badges' });
  if (run.anomalies > 0) {
    span.append(el('span', { class: 'badge anomaly', title: 'anomalies found while it ran' },
      `${run.anomalies} ${run.anomalies === 1 ? 'anomaly' : 'anomalies'}`));
  }
  if (run.captures > 0) {
    span.append(el('span', { class: 'badge capture', title: 'windows of activities captured' },
      `${run.captures} ${run.captures === 1 ? 'capture' : 'captures'}`));
  }
  if (run.energy_estimated) {
    span.append(el('span', { class: 'badge estimate', title: `energy from ${run.energy_source}` }, 'estimated'));
  }
  return span;
}

export function energyText(run) {
  if (run.energy_j === null || run.energy_j === undefined) return '–';
  return format.joules(run.energy_j) + (run.energy_estimated ? ' (est.)' : '');
}

// The columns of a runs table. `sortHeader(key, label)` (runs list only)
// makes a header a sort link.
export function runColumns(sortHeader = null) {
  const head = (key, label) => (sortHeader && key ? sortHeader(key, label) : null);
  return [
    { label: 'Run', rowHeader: true, value: (r) => el('a', { href: runHref(r.run_id) }, `run ${r.run_id}`),
      headerNode: head('run_id', 'Run') },
    { label: 'Program', value: (r) => r.program ?? '–', headerNode: head('program', 'Program') },
    { label: 'User', value: (r) => r.user ?? (r.uid ?? '–') },
    { label: 'Job', value: (r) => r.job ?? '–' },
    { label: 'Start (UTC)', value: (r) => format.time(r.start_time), headerNode: head('start_time', 'Start (UTC)') },
    { label: 'Duration', numeric: true, value: (r) => format.seconds(r.duration_s),
      headerNode: head('duration_s', 'Duration') },
    { label: 'Nodes', numeric: true, value: (r) => format.count(r.nodes) },
    { label: 'Ranks', numeric: true, value: (r) => (r.ranks ? format.count(r.ranks) : '–') },
    { label: 'Energy', numeric: true, value: energyText, headerNode: head('energy_j', 'Energy') },
    { label: 'I/O bytes', numeric: true, value: (r) => format.bytes(r.bytes), headerNode: head('bytes', 'I/O bytes') },
    { label: 'Flags', value: badges },
  ];
}

export function runsTable(caption, runs, sortHeader = null) {
  const t = table(caption, runColumns(sortHeader), runs, { class: 'runs' });
  runs.forEach((r, i) => {
    t.tBodies[0].rows[i].dataset.runId = r.run_id; // tests find a run's row by id
  });
  return t;
}

// Definition list from [label, value] pairs.
export function facts(pairs) {
  const dl = el('dl', { class: 'facts' });
  for (const [label, value] of pairs) {
    dl.append(el('dt', {}, label), el('dd', {}, value instanceof Node ? value : String(value ?? '–')));
  }
  return dl;
}

// A period form (its inputs `from` and `to`, datetime-local in UTC):
// submitting it reloads the page with from/to in its URL, or without the
// ones left empty.
export function reloadsWithPeriod(form) {
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const url = new URL(location.href);
    for (const name of ['from', 'to']) {
      const v = format.inputToIso(form.elements[name].value);
      if (v) url.searchParams.set(name, v);
      else url.searchParams.delete(name);
    }
    location.assign(url);
  });
}
