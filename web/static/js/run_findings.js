// A run's findings (the report's "findings", report/insight.c): what its
// I/O figures say to change, each with the numbers that say so, as the
// report printed them at the end of the run. A report from a vigil that
// made none has no "findings": nothing is shown.

import { el } from './dom.js';

function where(f) {
  const parts = [];
  if (f.file !== null && f.file !== undefined) parts.push(f.file);
  if (f.rank !== null && f.rank !== undefined) parts.push(`rank ${f.rank}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

export function findingsSection(report) {
  const findings = report?.findings;
  if (!Array.isArray(findings)) return document.createComment('no findings in this report');
  const box = el('section', { id: 'findings', 'aria-labelledby': 'findings-h', class: 'findings-card' },
    el('h2', { id: 'findings-h' }, 'Findings'));
  const thresholds = report.findings_thresholds === 'vigild'
    ? 'with the node’s [insight] thresholds' : 'with the default thresholds';
  if (findings.length === 0) {
    box.append(el('p', { class: 'note' }, `Nothing to change was found (${thresholds}).`));
    return box;
  }
  box.append(el('ul', {}, findings.map((f) => el('li', { class: `finding ${f.severity}` },
    el('strong', {}, f.id.replaceAll('_', ' ')), where(f), ': ', f.evidence, '.',
    el('br'), el('span', { class: 'advice' }, f.advice)))));
  box.append(el('p', { class: 'note' }, `Made at the end of the run, ${thresholds}.`));
  return box;
}
