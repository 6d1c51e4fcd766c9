// The findings of a run's reports (GET /api/v1/runs/ID, "findings"): what
// the I/O did that a user can change, each with its evidence and advice,
// as the reports stored them (the findings engine is vigil's, at exit;
// the page shows what is stored and judges nothing itself).

import { el } from './dom.js';

function where(f) {
  const parts = [];
  if (f.file !== null && f.file !== undefined) parts.push(f.file);
  if (f.rank !== null && f.rank !== undefined) parts.push(`rank ${f.rank}`);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}

function finding(f) {
  return el('li', { class: `finding ${f.severity ?? 'info'}`, 'data-finding': f.id },
    el('strong', {}, f.id), where(f), ': ', f.evidence, ' ',
    el('span', { class: 'advice' }, f.advice));
}

// Nothing shown when the reports found nothing (or none has sent one yet).
export function findingsCard(findings) {
  if (!findings || findings.length === 0) return document.createComment('no findings in the reports');
  const warnings = findings.some((f) => f.severity === 'warning');
  const card = el('div', { class: `report-card${warnings ? '' : ' clean'}`, id: 'findings' },
    el('strong', {}, 'Findings'), el('ul', {}, findings.map(finding)));
  return card;
}
