// The thresholds page's trials: what `vigil tune --replay … --store` kept
// (GET /api/v1/tune-trials), each recording replayed with the configuration
// it was recorded with (current) and a candidate, side by side; the keys the
// candidate changed and what each moved; every ADPI's cycles and why.

import { el, table } from './dom.js';
import * as format from './format.js';

const share = (v) => (v === null || v === undefined ? null : format.percent(100 * v));

// Figures of a side: [label, value(side)] rows of the comparison table.
const figures = [
  ['Cycles flagged (capture triggers)', (s) => format.count(s.flagged_cycles)],
  ['… by a process reasoner', (s) => format.count(s.process_abnormal_cycles)],
  ['… by the node reasoner', (s) => format.count(s.node_abnormal_cycles)],
  ['Capture windows', (s) => format.count(s.windows)],
  ['Activities forwarded', (s) => `${format.count(s.forwarded)} of ${format.count(s.observed)}`],
  ['Share forwarded', (s) => share(s.forwarded_share)],
  ['Recall (anomalous cycles caught)', (s) => (s.recall === null ? '–'
    : `${format.count(s.caught)} of ${format.count(s.anomalous_cycles)} (${format.number(s.recall)})`)],
  ['False flags (of clean cycles)', (s) => (s.false_flags === null ? '–'
    : `${format.count(s.false_flags)} of ${format.count(s.clean_cycles)}`)],
  ['Replay time', (s) => format.seconds(s.replay_s)],
];

function moved(before, after) {
  if (after === null || after === undefined) return '–';
  if (after === before) return 'no change';
  return after < before ? `fewer (${format.count(before - after)} less)` : `more (${format.count(after - before)} more)`;
}

function why(side) {
  if (!side) return 'silent';
  const top = side.reasons.slice(0, 3).map((r) => `${r.reason}: ${format.count(r.issues)}`);
  return `${format.count(side.cycles)} cycles; ${top.join('; ')}${side.reasons.length > 3 ? '; …' : ''}`;
}

function trialSection(t) {
  const id = `trial-${t.trial_id}`;
  const sides = t.candidate ? [['Current (recorded)', t.recorded], ['Candidate', t.candidate]] : [['Current (recorded)', t.recorded]];
  return el('section', { id, 'aria-labelledby': `${id}-h`, class: 'trial', dataset: { trial: String(t.trial_id) } },
    el('h3', { id: `${id}-h` }, `Trial ${t.trial_id}: ${t.recording} on ${t.node}`),
    el('p', {}, `Recorded ${format.time(t.recorded_from)} to ${format.time(t.recorded_until)} (${format.seconds(t.span_s)}, `
      + `${format.count(t.cycles)} cycles, ${format.count(t.processes)} processes, ${format.count(t.activities)} activities) `
      + `by vigild ${t.vigil_version}; replayed by ${t.stored_by} on ${format.time(t.stored_at)}: `
      + `${format.count(t.decisions_matched)} of ${format.count(t.decisions_compared)} recorded decisions reproduced. `
      + (t.candidate_file ? `Candidate: ${t.candidate_file}. ` : 'No candidate. ')
      + (t.truth_file ? `Ground truth: ${t.truth_file}.` : 'No ground truth.')),
    table('Current against candidate', [
      { label: 'Figure', rowHeader: true, value: (f) => f[0] },
      ...sides.map(([label, side]) => ({ label, numeric: true, value: (f) => f[1](side) })),
    ], figures, { class: 'comparison' }),
    !t.candidate ? null : t.changes.length === 0
      ? el('p', {}, 'The candidate changes no key of the recorded configuration.')
      : table('What each changed key did', [
        { label: 'Key', rowHeader: true, value: (c) => `[${c.section}] ${c.key}` },
        { label: 'Current', value: (c) => c.recorded ?? '(none)' },
        { label: 'Candidate', value: (c) => el('strong', {}, c.candidate ?? '(none)') },
        { label: 'Moves', value: (c) => c.measure },
        { label: 'Current', numeric: true, value: (c) => format.count(c.measured_recorded) },
        { label: 'Candidate', numeric: true, value: (c) => format.count(c.measured_candidate) },
        { label: 'Change', value: (c) => moved(c.measured_recorded, c.measured_candidate) },
      ], t.changes, { class: 'changes' }),
    t.adpis.length === 0 ? el('p', {}, 'No ADPI reported an issue.') : table('Cycles each ADPI reported issues in, and why', [
      { label: 'ADPI', rowHeader: true, value: (a) => `${a.level} ${a.plugin}` },
      ...sides.map(([label], i) => ({ label, value: (a) => why(i === 0 ? a.recorded : a.candidate) })),
    ], t.adpis, { class: 'adpis' }));
}

// Trials side by side: one column per trial's candidate, beside its current.
function overview(trials) {
  const columns = [{ label: 'Trial', rowHeader: true, value: (t) => el('a', { href: `#trial-${t.trial_id}` }, String(t.trial_id)) },
    { label: 'Node', value: (t) => t.node },
    { label: 'Recorded until', value: (t) => format.time(t.recorded_until) },
    { label: 'Keys changed', numeric: true, value: (t) => (t.candidate ? format.count(t.changes.length) : '–') },
    { label: 'Flagged, current → candidate', numeric: true, value: (t) => `${format.count(t.recorded.flagged_cycles)} → ${t.candidate ? format.count(t.candidate.flagged_cycles) : '–'}` },
    { label: 'Forwarded, current → candidate', numeric: true, value: (t) => `${share(t.recorded.forwarded_share)} → ${t.candidate ? share(t.candidate.forwarded_share) : '–'}` },
    { label: 'Recall, current → candidate', numeric: true, value: (t) => (t.recorded.recall === null ? '–' : `${format.number(t.recorded.recall)} → ${t.candidate ? format.number(t.candidate.recall) : '–'}`) },
  ];
  return table('Trials of vigil tune, newest first', columns, trials, { id: 'trials' });
}

export function trialsSection(answer) {
  const trials = answer.trials;
  return el('section', { id: 'tune-trials', 'aria-labelledby': 'tune-trials-h' },
    el('h2', { id: 'tune-trials-h' }, 'Candidate thresholds tried on recordings (vigil tune --store)'),
    trials.length === 0
      ? el('p', {}, 'No trial stored yet: run vigil tune --replay RECORDING --config CANDIDATE --store.')
      : el('div', {}, overview(trials), ...trials.map(trialSection)),
    answer.next ? el('p', {}, `Older trials: GET /api/v1/tune-trials?after=${answer.next}`) : null);
}
