// A run's files (GET /api/v1/runs/ID/files): what its processes' reports
// say of each file, to Darshan's depth. The run's access sizes (Darshan's
// 10 bins), how much of it was sequential or consecutive, the busiest
// files with their mount and file system, common sizes, MPI-IO counts and
// a shared file's fastest and slowest rank, read/write switches, accesses
// not aligned to the file system's block, the slowest call, and the bytes read and
// written over time from the reports' timelines, drawn with uPlot as the
// page's other timelines are.

import { apiGet, showError } from './api.js';
import { el, table, facts } from './dom.js';
import * as format from './format.js';
import { timeline } from './plot.js';

// Darshan's bins (K = 1024, as Darshan's).
export const SIZE_BINS = ['0–100', '100–1K', '1K–10K', '10K–100K', '100K–1M', '1M–4M', '4M–10M',
  '10M–100M', '100M–1G', '1G+'];

// At most this many points on the time axis, however long the run.
const MAX_CELLS = 2000;

// part of whole, as "97.4 %"; "–" when there is no whole (or no figure).
function share(part, whole) {
  if (part === null || part === undefined || !whole) return '–';
  return format.percent((100 * part) / whole);
}

function sequential(f, kind) {
  const ops = (f.posix_reads ?? 0) + (f.posix_writes ?? 0);
  if (f.posix_reads === null || f.posix_reads === undefined) return '–';
  return share((f[`${kind}_reads`] ?? 0) + (f[`${kind}_writes`] ?? 0), ops);
}

function commonSizes(f) {
  if (!f.common_sizes || f.common_sizes.length === 0) return '–';
  return f.common_sizes.map((c) => `${format.bytes(c.size)} ×${format.count(c.count)}`).join(', ');
}

const known = (v) => v !== null && v !== undefined;

// Accesses not starting on the file system's block (Darshan's
// FILE_NOT_ALIGNED): what makes small accesses slow on a parallel one.
function notAligned(f) {
  if (!known(f.posix_file_not_aligned)) return '–';
  const of = f.posix_file_alignment_bytes ? ` of ${format.bytes(f.posix_file_alignment_bytes)}` : '';
  return `${share(f.posix_file_not_aligned, (f.posix_reads ?? 0) + (f.posix_writes ?? 0))}${of}`;
}

// The slowest single read or write, its time and size.
function slowestCall(f) {
  const r = f.posix_max_read_time_s;
  const w = f.posix_max_write_time_s;
  if (!known(r) && !known(w)) return '–';
  const [kind, s, size] = (w ?? -1) >= (r ?? -1) ? ['write', w, f.posix_max_write_time_size]
    : ['read', r, f.posix_max_read_time_size];
  if (!s) return '–';
  return `${kind} ${format.seconds(s)} (${format.bytes(size ?? 0)})`;
}

function mpiioText(f) {
  const m = f.mpiio;
  if (!m) return '–';
  const parts = [['collective', m.coll_reads + m.coll_writes], ['independent', m.indep_reads + m.indep_writes],
    ['split', m.split_reads + m.split_writes], ['nonblocking', m.nb_reads + m.nb_writes],
    ['read/write switches', m.rw_switches ?? 0]];
  return parts.filter(([, n]) => n > 0).map(([name, n]) => `${format.count(n)} ${name}`).join(', ') || 'opened only';
}

function ranksText(f) {
  const r = f.ranks;
  if (!r) return '–';
  const posix = r.most_posix_rank === null || r.most_posix_rank === undefined ? ''
    : `; POSIX bytes moved: most rank ${r.most_posix_rank} ${format.bytes(r.most_posix_bytes)}, `
      + `fewest rank ${r.least_posix_rank} ${format.bytes(r.least_posix_bytes)}`;
  return `${r.shared ? 'shared by' : 'one of'} ${format.count(r.count)}; fastest rank ${r.fastest_rank} `
    + `${format.seconds(r.fastest_s)}, slowest rank ${r.slowest_rank} ${format.seconds(r.slowest_s)}${posix}`;
}

// The access-size histogram as a table, each count with a bar.
function sizesTable(totals) {
  const reads = totals.read_size_hist ?? [];
  const writes = totals.write_size_hist ?? [];
  const most = Math.max(1, ...reads, ...writes);
  const bar = (n, kind) => el('span', { class: `size-bar ${kind}`, style: `width: ${(100 * (n ?? 0)) / most}%` });
  const cell = (n, kind) => el('span', { class: 'size-cell' }, bar(n, kind), el('span', {}, format.count(n ?? 0)));
  return table('Access sizes (bytes, Darshan’s bins)', [
    { label: 'Size', rowHeader: true, value: (i) => SIZE_BINS[i] },
    { label: 'Reads', numeric: true, value: (i) => cell(reads[i], 'read') },
    { label: 'Writes', numeric: true, value: (i) => cell(writes[i], 'write') },
  ], SIZE_BINS.map((_, i) => i), { id: 'files-sizes' });
}

function filesTable(files) {
  return table('Busiest files', [
    { label: 'Path', rowHeader: true, value: (f) => f.path },
    { label: 'File system', value: (f) => `${f.mount}${f.fs_type ? ` (${f.fs_type})` : ''}` },
    { label: 'Read', numeric: true, value: (f) => format.bytes(f.read_bytes) },
    { label: 'Written', numeric: true, value: (f) => format.bytes(f.written_bytes) },
    { label: 'Calls', numeric: true, value: (f) => format.count(f.calls) },
    { label: 'Sequential', numeric: true, value: (f) => sequential(f, 'seq') },
    { label: 'Consecutive', numeric: true, value: (f) => sequential(f, 'consec') },
    { label: 'Common sizes', value: commonSizes },
    { label: 'R/W switches', numeric: true, value: (f) => (known(f.posix_rw_switches) ? format.count(f.posix_rw_switches) : '–') },
    { label: 'Not aligned', numeric: true, value: notAligned },
    { label: 'Slowest call', value: slowestCall },
    { label: 'MPI-IO', value: mpiioText },
    { label: 'Ranks', value: ranksText },
  ], files, { id: 'files-table' });
}

// The reports' timelines on one time axis: each bin's bytes spread over
// the cells it covers, as bytes per second. Bins are a process's own
// (from its start, their width doubling as it ran on), so the cell is the
// narrowest bin, widened to keep at most MAX_CELLS cells.
export function timelineColumns(lines) {
  if (!lines || lines.length === 0) return null;
  // Seconds after the earliest start: epoch seconds (1.8e9) keep only
  // about 0.5 µs, too coarse to cut bins of a few ms into cells exactly.
  const epochs = lines.map((l) => format.epochSeconds(l.start_time));
  const t0 = Math.min(...epochs);
  const starts = epochs.map((e) => e - t0);
  const end = Math.max(...lines.map((l, i) => starts[i] + l.bin_s * l.read_bytes.length));
  let step = Math.min(...lines.map((l) => l.bin_s));
  if (end / step > MAX_CELLS) step = end / MAX_CELLS;
  const cells = Math.max(1, Math.ceil(end / step - 1e-9));
  const read = new Array(cells).fill(0);
  const written = new Array(cells).fill(0);
  const spread = (into, bytes, from, width) => {
    if (!bytes) return;
    const first = Math.max(0, Math.floor(from / step + 1e-9));
    for (let c = first; c < cells; c++) {
      const lo = Math.max(from, c * step);
      // the last cell takes what rounding leaves past its end
      const hi = c === cells - 1 ? from + width : Math.min(from + width, (c + 1) * step);
      if (hi <= lo) break;
      into[c] += (bytes * (hi - lo)) / width;
    }
  };
  lines.forEach((l, i) => {
    l.read_bytes.forEach((b, k) => spread(read, b, starts[i] + k * l.bin_s, l.bin_s));
    l.written_bytes.forEach((b, k) => spread(written, b, starts[i] + k * l.bin_s, l.bin_s));
  });
  const t = read.map((_, c) => t0 + c * step);
  return { step, columns: [t, read.map((b) => b / step), written.map((b) => b / step)] };
}

export function filesRequest(runId) {
  return apiGet(`runs/${runId}/files`, { limit: 20 });
}

// `group`: the page's ZoomGroup, so that this plot zooms with the others;
// `request`: the files' answer on its way (the run page asks for it with
// its other requests, before the run's own answer is there).
export function filesSection(runId, group = null, request = filesRequest(runId)) {
  const box = el('section', { id: 'files-io', 'aria-labelledby': 'files-io-h' },
    el('h2', { id: 'files-io-h' }, 'Files'),
    el('p', { class: 'note' }, 'Loading the run’s files…'));
  const loaded = request.then((answer) => {
    fill(box, answer, group);
  }).catch((e) => {
    box.lastChild.textContent = 'The run’s files could not be read.';
    showError(e, `run ${runId}`);
  });
  return { box, loaded };
}

function fill(box, answer, group) {
  const t = answer.totals;
  const h = box.firstChild;
  if (answer.files_total === 0) {
    box.replaceChildren(h, el('p', { class: 'note', id: 'files-none' },
      'No process of this run has reported its files yet.'));
    return;
  }
  const ops = (t.posix_reads ?? 0) + (t.posix_writes ?? 0);
  const shown = answer.files.length;
  const plotBox = el('div', { id: 'plot-files-io' });
  box.replaceChildren(h,
    el('p', { class: 'note' }, 'From the processes’ reports (an MPI job’s report covers its ranks); '
      + 'sequential: at a higher offset than the previous access, consecutive: right after it.'),
    facts([
      ['Files', `${format.count(answer.files_total)}`
        + (shown < answer.files_total ? ` (the ${format.count(shown)} busiest shown)` : '')
        + (t.files_unlisted > 0 ? `; ${format.count(t.files_unlisted)} more the reports did not list `
          + '(a report keeps its busiest files within its size bound)' : '')],
      ['Read', format.bytes(t.read_bytes)],
      ['Written', format.bytes(t.written_bytes)],
      ['Sequential accesses', `${share((t.seq_reads ?? 0) + (t.seq_writes ?? 0), ops)} `
        + `(reads ${share(t.seq_reads, t.posix_reads)}, writes ${share(t.seq_writes, t.posix_writes)})`],
      ['Consecutive accesses', `${share((t.consec_reads ?? 0) + (t.consec_writes ?? 0), ops)} `
        + `(reads ${share(t.consec_reads, t.posix_reads)}, writes ${share(t.consec_writes, t.posix_writes)})`],
      known(t.posix_file_not_aligned) ? ['Not aligned to the file system’s block',
        share(t.posix_file_not_aligned, ops)] : null,
      known(t.posix_rw_switches) ? ['Read/write switches', format.count(t.posix_rw_switches)] : null,
    ].filter((pair) => pair !== null)),
    t.size_bins_upper_inclusive === false ? el('p', { class: 'note', id: 'files-old-bins' },
      'Some of these reports are from a vigil before Darshan’s conventions: there an access of '
      + 'exactly a bin’s upper edge (100 B, 1 KiB, 10 KiB, 100 KiB, 1 MiB, …) is counted in the bin '
      + 'above, and common sizes may count more than there were.')
      : document.createComment('every report bins as Darshan does'),
    el('div', { class: 'columns' }, sizesTable(t), plotBox),
    el('div', { class: 'scroll' }, filesTable(answer.files)));
  const shaped = timelineColumns(answer.timelines);
  if (!shaped) {
    plotBox.append(el('p', { class: 'note' }, 'No timeline in the reports.'));
    return;
  }
  const more = answer.timelines_total > answer.timelines.length
    ? `, the first ${answer.timelines.length} of ${answer.timelines_total} processes` : '';
  timeline(plotBox, { unit: 'B/s', timelines: answer.timelines }, {
    name: 'files-io',
    group,
    title: 'File I/O from the reports (read, write)',
    note: `bins of ${format.seconds(shaped.step)}${more}`,
    columns: shaped.columns,
    series: [{ label: 'read' }, { label: 'write' }],
  });
}
