// The runs list (index.html): filters and sort in the query string, keyset
// pagination with the API's `next` cursor. The page's URL keeps the cursor
// of the page shown (`after`) and those of the pages before it (`back`,
// repeated, oldest first; '' for the first page), so Previous is a plain
// link and any page can be shared.

import { apiGetOrShow, showMe } from './api.js';
import { el, runsTable } from './dom.js';
import * as format from './format.js';

const FILTERS = ['user', 'program', 'job', 'node', 'from', 'to', 'anomalies'];
// Columns sorted big-first on their first click; names sort A→Z.
const DESCENDING_FIRST = new Set(['start_time', 'energy_j', 'bytes', 'duration_s']);

const params = new URLSearchParams(location.search);

function pageUrl(changes) {
  const next = new URLSearchParams(params);
  for (const [name, value] of Object.entries(changes)) {
    next.delete(name);
    if (Array.isArray(value)) value.forEach((v) => next.append(name, v));
    else if (value !== null && value !== undefined && value !== '') next.set(name, value);
  }
  const text = next.toString();
  return '/' + (text ? '?' + text : '');
}

// The current sort as {key, descending}; the API's default is newest first.
function currentSort() {
  const sort = params.get('sort') || '-start_time';
  return sort.startsWith('-') ? { key: sort.slice(1), descending: true } : { key: sort, descending: false };
}

// A column header that sorts by its column; a new sort starts at page one.
function sortHeader(key, label) {
  const now = currentSort();
  let next;
  if (now.key === key) next = now.descending ? key : '-' + key;
  else next = DESCENDING_FIRST.has(key) ? '-' + key : key;
  const a = el('a', { class: 'sort', href: pageUrl({ sort: next, after: null, back: [] }) }, label);
  a.setAttribute('aria-label', `${label}: sort ${next.startsWith('-') ? 'descending' : 'ascending'}`);
  return a;
}

function fillForm() {
  const form = document.getElementById('filters');
  for (const name of FILTERS) {
    const input = form.elements[name];
    const value = params.get(name) || '';
    input.value = name === 'from' || name === 'to' ? format.isoToInput(value) : value;
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const changes = { after: null, back: [] };
    for (const name of FILTERS) {
      const value = form.elements[name].value.trim();
      changes[name] = name === 'from' || name === 'to' ? format.inputToIso(value) : value;
    }
    location.assign(pageUrl(changes));
  });
}

async function load() {
  fillForm();
  const me = showMe(); // the header's user: awaited before the page says it is done
  const query = {};
  for (const name of [...FILTERS, 'sort', 'limit', 'after']) query[name] = params.get(name);
  const box = document.getElementById('runs');
  const answer = await apiGetOrShow('runs', query);
  if (answer === null) return;
  // aria-sort on the sorted column's header, for screen readers and CSS
  const table = runsTable(null, answer.runs, sortHeader);
  const sort = currentSort();
  for (const a of table.querySelectorAll('a.sort')) {
    if (new URL(a.href).searchParams.get('sort')?.replace(/^-/, '') === sort.key) {
      a.parentElement.setAttribute('aria-sort', sort.descending ? 'descending' : 'ascending');
    }
  }
  const back = params.getAll('back');
  const shownFrom = answer.runs.length;
  const pageNumber = back.length + 1;
  box.replaceChildren(answer.runs.length > 0 ? table : el('p', { class: 'empty' }, 'No run matches these filters.'));

  const pager = document.getElementById('pager');
  pager.replaceChildren();
  if (back.length > 0) {
    const previous = back[back.length - 1];
    pager.append(el('a', { class: 'button', rel: 'prev', id: 'previous',
      href: pageUrl({ after: previous, back: back.slice(0, -1) }) }, '← Previous'));
  }
  pager.append(el('span', { id: 'page-number' }, `Page ${pageNumber}, ${shownFrom} run${shownFrom === 1 ? '' : 's'}`));
  if (answer.next) {
    pager.append(el('a', { class: 'button', rel: 'next', id: 'next',
      href: pageUrl({ after: answer.next, back: [...back, params.get('after') || ''] }) }, 'Next →'));
  }
  await me;
  document.body.dataset.loaded = 'yes'; // tests wait for this
}

load();
