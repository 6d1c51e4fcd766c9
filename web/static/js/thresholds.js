// The detectors' effective settings (thresholds.html[?from=&to=]): every
// [adpi.*] and [reasoner.*] section of vigil-web's configuration file, each
// key's value, default and where it was set, and how often the plugin fired
// in the period (default: the API's, the last 7 days), per metric; then
// the trials `vigil tune --store` kept (thresholds_trials.js).

import { apiGet, showError, showMe } from './api.js';
import { el, reloadsWithPeriod, table } from './dom.js';
import * as format from './format.js';
import { trialsSection } from './thresholds_trials.js';

const params = new URLSearchParams(location.search);

function periodForm() {
  const form = document.getElementById('period');
  for (const name of ['from', 'to']) form.elements[name].value = format.isoToInput(params.get(name));
  reloadsWithPeriod(form);
}

function pluginSection(p) {
  const id = `section-${p.section.replace(/[^a-z0-9]+/gi, '-')}`;
  const changed = p.keys.filter((k) => k.source !== null).length;
  return el('section', { id, 'aria-labelledby': `${id}-h`, class: 'plugin', dataset: { section: p.section } },
    el('h2', { id: `${id}-h` }, `[${p.section}] — ${p.enabled ? 'enabled' : 'disabled'}, fired ${format.count(p.fired)} time${p.fired === 1 ? '' : 's'}`),
    p.fired_by_metric.length === 0 ? null : table('Fired, by metric', [
      { label: 'Metric', rowHeader: true, value: (m) => m.metric ?? '(none)' },
      { label: 'Times', numeric: true, value: (m) => format.count(m.count) },
    ], p.fired_by_metric),
    table(`Settings (${changed} set in a file, the others at their default)`, [
      { label: 'Key', rowHeader: true, value: (k) => k.name },
      { label: 'Value', value: (k) => el(k.source ? 'strong' : 'span', {}, k.value ?? '–') },
      { label: 'Default', value: (k) => k.default ?? '–' },
      { label: 'Set in', value: (k) => k.source ?? 'default' },
      { label: 'Meaning', value: (k) => k.description ?? '' },
    ], p.keys));
}

async function load() {
  const me = showMe(); // the header's user: awaited before the page says it is done
  periodForm();
  let answer;
  let trials;
  try {
    [answer, trials] = await Promise.all([
      apiGet('thresholds', { from: params.get('from'), to: params.get('to') }),
      apiGet('tune-trials', {}),
    ]);
  } catch (e) {
    showError(e);
    return;
  }
  const fired = answer.plugins.reduce((n, p) => n + p.fired, 0);
  document.getElementById('thresholds').replaceChildren(
    el('p', {}, `From ${format.time(answer.from)} to ${format.time(answer.to)}: ${format.count(fired)} anomalies in all. `
      + `Settings read from ${answer.config_files.length ? answer.config_files.join(', ') : 'no file (all defaults)'}.`),
    table('Summary', [
      { label: 'Section', rowHeader: true, value: (p) => el('a', { href: `#section-${p.section.replace(/[^a-z0-9]+/gi, '-')}` }, `[${p.section}]`) },
      { label: 'Enabled', value: (p) => (p.enabled ? 'yes' : 'no') },
      { label: 'Fired', numeric: true, value: (p) => format.count(p.fired) },
    ], answer.plugins, { id: 'summary' }),
    trialsSection(trials),
    ...answer.plugins.map(pluginSection),
  );
  await me;
  document.body.dataset.loaded = 'yes';
}

load();
