// uPlot wrappers for the pages' timelines: one plot per metric from the
// API's series answer (docs/web-api.md, "Time series"), a ZoomGroup that
// locks the x axis of a page's plots together and keeps the zoom in the
// URL, shaded captured windows, and the CSV/JSON download buttons.
//
// Test hook: window.vigilPlots maps a plot's name (the metric, or
// "compare-power"…) to its uPlot instance, so a test can read
// u.series.length and u.scales.x without knowing the DOM.

import uPlot from '/vendor/uplot/uPlot.esm.js';
import * as format from './format.js';

window.vigilPlots = window.vigilPlots || {};

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
  '#17becf', '#7f7f7f', '#bcbd22'];

// The timelines of a run's page, top to bottom: power and energy first
// (what the site pays for), then what the run did with the node; the node's
// page draws them too.
export const TIMELINES = [
  { metric: 'power', title: 'Power' },
  { metric: 'energy', title: 'Energy (running sum from the left edge)' },
  { metric: 'cpu', title: 'CPU busy' },
  { metric: 'memory', title: 'Memory used' },
  { metric: 'io_bytes', title: 'I/O bytes (read, write)' },
  { metric: 'io_ops', title: 'I/O operations (read, write)' },
  { metric: 'network', title: 'Network (rx, tx)' },
];

export function colour(i) {
  if (i < PALETTE.length) return PALETTE[i];
  // beyond ten lines, spread hues evenly: the legend tells them apart anyway
  return `hsl(${(i * 137.5) % 360}, 65%, 42%)`;
}

function withAlpha(css, alpha) {
  if (css.startsWith('#')) {
    const n = parseInt(css.slice(1), 16);
    return `rgba(${n >> 16}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
  }
  return css.replace('hsl(', 'hsla(').replace(')', `, ${alpha})`);
}

// Times are drawn in UTC, like every time the pages write, 24-hour, with
// as much of the date as the zoomed span needs.
const utc = (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');

function timeTicks(u, splits) {
  const span = u.scales.x.max - u.scales.x.min;
  const [from, to] = span > 2 * 86400 ? [5, 16] : span > 300 ? [11, 16] : span > 10 ? [11, 19] : [11, 23];
  return splits.map((s) => new Date(s * 1000).toISOString().slice(from, to).replace('T', ' '));
}

function timeValue(u, ts) {
  return ts === null || ts === undefined ? '–' : new Date(ts * 1000).toISOString().slice(0, 23).replace('T', ' ');
}

// ---- data ------------------------------------------------------------------

// A series line's name: "n1" for a run's one-metric series, "n1 read" when
// the metric has several (io_bytes: read, write).
function seriesName(s, metric) {
  const host = s.hostname ?? (s.node_id !== undefined ? `node ${s.node_id}` : '');
  if (!s.label || s.label === metric) return host || s.label || metric;
  return host ? `${host} ${s.label}` : s.label;
}

// The API answer as uPlot columns. Per-node answers give one line per series
// (its bucket means; min and max are kept to draw the envelope). Banded
// answers (too many nodes) give median, min and max per label.
export function toColumns(answer) {
  const t = answer.t;
  if (answer.band && answer.band.length > 0) {
    const columns = [t];
    const series = [];
    const bands = [];
    for (const b of answer.band) {
      const base = columns.length;
      columns.push(b.median, b.min, b.max);
      const label = b.label === answer.metric ? '' : `${b.label} `;
      series.push({ label: `${label}median of ${b.nodes} nodes`, role: 'median' },
        { label: `${label}min`, role: 'min' }, { label: `${label}max`, role: 'max' });
      bands.push([base + 2, base + 1]); // fill between max (upper) and min
    }
    return { columns, series, bands, envelopes: [] };
  }
  const columns = [t];
  const series = [];
  const envelopes = [];
  for (const s of answer.series) {
    columns.push(s.mean);
    series.push({ label: seriesName(s, answer.metric), role: 'line' });
    envelopes.push([s.min, s.max]);
  }
  return { columns, series, bands: [], envelopes };
}

// The usual time between a column's known values: the median step between
// consecutive non-null ones. Buckets finer than the roll-ups leave nulls
// between every known value; those are not gaps in the data, only a longer
// run of nulls (over 2.5 steps) is.
export function typicalStep(t, column) {
  const steps = [];
  let last = -1;
  for (let j = 0; j < column.length; j++) {
    if (column[j] === null || column[j] === undefined) continue;
    if (last >= 0) steps.push(t[j] - t[last]);
    last = j;
  }
  if (steps.length === 0) return t.length > 1 ? t[1] - t[0] : 1;
  steps.sort((a, b) => a - b);
  return steps[Math.floor(steps.length / 2)];
}

const GAP_STEPS = 2.5;

// uPlot's `gaps` hook for a series: keep only the gaps wider than
// GAP_STEPS of its usual step (in seconds of the x scale). The step is
// worked out once per data column (the data change when a zoom refetches).
const steps = new WeakMap();
function realGaps(u, seriesIdx, idx0, idx1, gaps) {
  const column = u.data[seriesIdx];
  if (!steps.has(column)) steps.set(column, typicalStep(u.data[0], column));
  const step = steps.get(column);
  const secondsPerPx = (u.scales.x.max - u.scales.x.min) / u.bbox.width;
  return gaps.filter(([from, to]) => (to - from) * secondsPerPx > GAP_STEPS * step);
}

// Dots on a line's values when it has few in view: a run shorter than a
// roll-up has one value, which a line alone would not show.
function fewValues(u, seriesIdx, idx0, idx1) {
  const column = u.data[seriesIdx];
  let known = 0;
  for (let j = idx0; j <= idx1 && known <= 60; j++) if (column[j] !== null && column[j] !== undefined) known++;
  return known <= 60;
}

// ---- plugins ---------------------------------------------------------------

// Shaded captured windows on the time axis, and a tick for each anomaly.
// `state.windows` are the API's windows, `state.marks` the anomalies' times
// (epoch s), `state.selected` the capture_id shown below the plots; a click
// on a band (not a drag: that zooms) calls onPick(window).
export function windowsPlugin(state, onPick) {
  function bandsInPixels(u) {
    return state.windows.map((w) => {
      const x0 = u.valToPos(format.epochSeconds(w.start_time), 'x', true);
      const x1 = u.valToPos(format.epochSeconds(w.end_time), 'x', true);
      return { w, x0, x1: Math.max(x1, x0 + 3 * devicePixelRatio) }; // never invisible
    });
  }
  return {
    hooks: {
      drawClear: (u) => {
        const ctx = u.ctx;
        const { top, height, left, width } = u.bbox;
        ctx.save();
        ctx.beginPath();
        ctx.rect(left, top, width, height);
        ctx.clip();
        for (const { w, x0, x1 } of bandsInPixels(u)) {
          const chosen = w.capture_id === state.selected;
          ctx.fillStyle = chosen ? 'rgba(230, 120, 0, 0.35)' : 'rgba(230, 120, 0, 0.16)';
          ctx.fillRect(x0, top, x1 - x0, height);
        }
        // anomalies: a red tick at the top of the plot at each one's time
        ctx.fillStyle = 'rgba(200, 20, 20, 0.85)';
        for (const time of state.marks || []) {
          const x = u.valToPos(time, 'x', true);
          ctx.fillRect(x - devicePixelRatio, top, 2 * devicePixelRatio, 8 * devicePixelRatio);
        }
        ctx.restore();
      },
      ready: (u) => {
        let down = null;
        u.over.addEventListener('mousedown', (e) => {
          down = { x: e.clientX, y: e.clientY };
        });
        u.over.addEventListener('click', (e) => {
          // a drag ends in a click too: only a still click picks a window
          if (!down || Math.abs(e.clientX - down.x) > 3 || Math.abs(e.clientY - down.y) > 3) return;
          const x = e.offsetX * devicePixelRatio + u.bbox.left;
          const hit = bandsInPixels(u).find((b) => x >= b.x0 - 2 && x <= b.x1 + 2);
          if (hit) onPick(hit.w);
        });
      },
    },
  };
}

// Each line's min…max over its buckets as a faint area under it, so that a
// spike shorter than a bucket still shows when the line is of means. Only
// for a few lines: with many, the areas would hide each other (and the
// pages ask the API for the lines' min and max only up to this many:
// min_max_lines).
export const ENVELOPE_LINES_MAX = 8;
function envelopePlugin(held) {
  return {
    hooks: {
      drawClear: (u) => {
        const envelopes = held.envelopes;
        if (envelopes.length === 0 || envelopes.length > ENVELOPE_LINES_MAX) return;
        const ctx = u.ctx;
        const t = u.data[0];
        ctx.save();
        ctx.beginPath();
        ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
        ctx.clip();
        envelopes.forEach(([min, max], i) => {
          if (!u.series[i + 1].show || !min || !max) return;
          ctx.fillStyle = withAlpha(colour(i), 0.14);
          // one polygon per run of known values; only a real gap (see
          // typicalStep) breaks it, the nulls of fine buckets are skipped
          const step = typicalStep(t, max);
          let known = [];
          const flush = () => {
            if (known.length > 0) {
              ctx.beginPath();
              known.forEach((j, k) => {
                const x = u.valToPos(t[j], 'x', true);
                const y = u.valToPos(max[j], 'y', true);
                if (k === 0) ctx.moveTo(x, y);
                else ctx.lineTo(x, y);
              });
              for (let k = known.length - 1; k >= 0; k--) {
                ctx.lineTo(u.valToPos(t[known[k]], 'x', true), u.valToPos(min[known[k]], 'y', true));
              }
              ctx.closePath();
              ctx.fill();
            }
            known = [];
          };
          for (let j = 0; j < t.length; j++) {
            if (min[j] === null || max[j] === null) continue;
            if (known.length > 0 && t[j] - t[known[known.length - 1]] > GAP_STEPS * step) flush();
            known.push(j);
          }
          flush();
        });
        ctx.restore();
      },
    },
  };
}

// ---- zoom lock -------------------------------------------------------------

// Locks the x scale of the plots added to it: zooming one (drag) zooms all;
// a double click (uPlot's reset) unzooms all. The range goes into the URL's
// from/to (ISO), and a URL with from/to opens zoomed (apply()).
export class ZoomGroup {
  constructor({ urlParams = true, onZoom = null } = {}) {
    this.plots = [];
    this.extent = null; // the whole interval, once the first data are drawn
    this.current = null; // the x range the plots show
    this.syncing = false;
    this.armed = false; // set by apply(): ignores the scale settings of plot creation
    this.urlParams = urlParams;
    this.onZoom = onZoom;
    this.cursorKey = 'vigil-' + Math.random().toString(36).slice(2);
  }

  // Options every plot of the group takes: cursor sync (the crosshair moves
  // on every plot) and the setScale hook that spreads a zoom.
  options() {
    return {
      cursor: {
        sync: { key: this.cursorKey, setSeries: false },
        drag: { x: true, y: false, setScale: true },
        // a double click zooms out to the whole interval, not to the data a
        // zoom fetched
        bind: { dblclick: () => () => { this.zoomTo(null); return null; } },
      },
      hooks: { setScale: [(u, key) => key === 'x' && this.scaleChanged(u)] },
    };
  }

  add(u) {
    this.plots.push(u);
  }

  remove(u) {
    this.plots = this.plots.filter((p) => p !== u);
  }

  fullRange() {
    return this.extent || this.dataRange();
  }

  dataRange() {
    let min = Infinity;
    let max = -Infinity;
    for (const u of this.plots) {
      const t = u.data[0];
      if (t && t.length > 0) {
        min = Math.min(min, t[0]);
        max = Math.max(max, t[t.length - 1]);
      }
    }
    return Number.isFinite(min) ? { min, max } : null;
  }

  scaleChanged(source) {
    if (this.syncing || !this.armed) return;
    const { min, max } = source.scales.x;
    // uPlot runs setScale hooks when it next draws, after our own
    // setScale calls have returned: the range the group already shows is
    // no zoom of the user's, and spreading it again would undo a newer one
    if (this.current && Math.abs(min - this.current.min) < 1e-9 && Math.abs(max - this.current.max) < 1e-9) return;
    this.current = { min, max };
    this.syncing = true;
    try {
      for (const u of this.plots) {
        if (u !== source) u.setScale('x', { min, max });
      }
    } finally {
      this.syncing = false;
    }
    const full = this.fullRange();
    // uPlot's reset after a double click is the data's extent: no zoom
    const zoomed = full && (min > full.min + 1e-6 || max < full.max - 1e-6);
    if (this.urlParams) {
      const url = new URL(location.href);
      if (zoomed) {
        url.searchParams.set('from', new Date(min * 1000).toISOString());
        url.searchParams.set('to', new Date(max * 1000).toISOString());
      } else {
        url.searchParams.delete('from');
        url.searchParams.delete('to');
      }
      history.replaceState(history.state, '', url);
    }
    if (this.onZoom) this.onZoom(zoomed ? { min, max } : null);
  }

  // Zooms every plot to {min, max} (epoch s), or back out with null, as a
  // drag would: the keyboard's way to zoom (buttons call it).
  zoomTo(range) {
    const target = range || this.fullRange();
    if (!target || this.plots.length === 0) return;
    this.plots[0].setScale('x', { min: target.min, max: target.max });
  }

  // Opens zoomed on the URL's from/to (if any) and arms the group.
  apply() {
    const params = new URLSearchParams(location.search);
    const from = params.get('from');
    const to = params.get('to');
    this.armed = false;
    this.extent = this.dataRange();
    let zoom = null;
    if (this.urlParams && from && to) {
      const min = parseTime(from);
      const max = parseTime(to);
      if (Number.isFinite(min) && Number.isFinite(max) && max > min) {
        for (const u of this.plots) u.setScale('x', { min, max });
        zoom = { min, max };
      }
    }
    this.current = zoom || this.extent;
    this.armed = true;
    if (zoom && this.onZoom) this.onZoom(zoom);
  }
}

// A URL's from/to: ISO 8601 or epoch seconds, like the API takes them.
export function parseTime(text) {
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  return new Date(text).getTime() / 1000;
}

// ---- one plot --------------------------------------------------------------

// Draws one timeline in `box` (an element of the page) from an API series
// answer and returns its uPlot instance.
//   name        the key in window.vigilPlots
//   title       shown above the plot, with the unit
//   group       a ZoomGroup, or null
//   windows     {windows, selected} for windowsPlugin, or null
//   onPick      called with a window clicked in the plot
//   columns     uPlot columns to draw instead of the answer's (compare page)
//   series      their series options (with columns)
//   xIsTime     false for "seconds since the run's start" axes
//   fetchFull   (answer) => the same answer with every line's min and max,
//               for the downloads of an answer asked without them
//   width       its width in pixels (plotWidth(box)), when already measured
export function timeline(box, answer, opts) {
  const { name, title, group = null, windows = null, onPick = null, height = 170 } = opts;
  const xIsTime = opts.xIsTime !== false;
  const shaped = opts.columns
    ? { columns: opts.columns, series: opts.series, bands: [], envelopes: [] }
    : toColumns(answer);
  const fmt = format.byUnit(answer.unit);

  box.classList.add('plot');
  box.replaceChildren();
  const { head, h } = plotHead(title, `plot-${name}-title`);
  if (opts.note) {
    const note = document.createElement('span');
    note.className = 'plot-note';
    note.textContent = opts.note;
    head.append(note);
  }
  // what the plot shows now (replaceData changes it after a zoom): the
  // download buttons and the envelopes follow it
  const held = { answer, shaped, envelopes: shaped.envelopes, fetchFull: opts.fetchFull };
  head.append(downloadButtons(name, held));
  box.append(head);

  const area = document.createElement('div');
  area.className = 'plot-area';
  area.setAttribute('role', 'img');
  area.setAttribute('aria-labelledby', h.id);
  box.append(area);

  if (shaped.columns[0].length === 0 || shaped.series.length === 0) {
    const empty = document.createElement('p');
    empty.className = 'empty';
    empty.textContent = 'The warehouse has no statistics for this interval.';
    area.append(empty);
    delete window.vigilPlots[name];
    return null;
  }

  // Many lines (a 32-node run's 32 or 64) are drawn a pixel wide: they
  // hide each other less, and a canvas draws a line no wider than a device
  // pixel as a hairline, where a wider one is outlined and filled: drawn
  // by the CPU, the run page's seven plots of a 32-node run took 0.55 s of
  // the browser's main thread at 1.5 px, 0.05 s at 1 (bench/web
  // --profile-page).
  const lineWidth = shaped.series.length > ENVELOPE_LINES_MAX ? 1 : 1.5;
  const series = [xIsTime ? { label: 'time (UTC)', value: timeValue }
    : { label: 'seconds from start', value: (u, v) => format.number(v) }];
  shaped.series.forEach((s, i) => {
    const base = { label: s.label, value: (u, v) => fmt(v), spanGaps: !!s.spanGaps, gaps: realGaps,
      points: { show: fewValues } };
    if (s.role === 'min' || s.role === 'max') {
      series.push({ ...base, stroke: 'rgba(31, 119, 180, 0.5)', width: 1, dash: [4, 4] });
    } else if (s.role === 'median') {
      series.push({ ...base, stroke: colour(0), width: 2 });
    } else {
      series.push({ ...base, stroke: s.stroke ?? colour(i), width: lineWidth });
    }
  });

  const plugins = [envelopePlugin(held)];
  if (windows) plugins.push(windowsPlugin(windows, onPick || (() => {})));
  const groupOpts = group ? group.options() : { cursor: { drag: { x: true, y: false } }, hooks: {} };

  const u = new uPlot({
    width: opts.width ?? plotWidth(box),
    height,
    series,
    bands: shaped.bands.map(([upper, lower]) => ({ series: [upper, lower], fill: 'rgba(31, 119, 180, 0.15)' })),
    scales: { x: { time: xIsTime } },
    tzDate: utc,
    axes: [
      xIsTime ? { values: timeTicks, space: 70 } : { label: 'seconds from the run’s start' },
      { values: (u, splits) => splits.map(fmt), size: 80 },
    ],
    legend: { show: shaped.series.length <= 16, live: true },
    cursor: groupOpts.cursor,
    hooks: groupOpts.hooks,
    plugins,
  }, shaped.columns, area);

  plotState.set(u, held);
  window.vigilPlots[name] = u;
  if (group) group.add(u);
  resizeWith(box, u);
  return u;
}

const plotState = new WeakMap();

// Draws a new answer for the same metric in a plot (a zoom's finer
// buckets, or the whole interval again), keeping its series and its x
// range: the y axis fits the new data.
export function replaceData(u, answer, range, group = null) {
  const held = plotState.get(u);
  const shaped = toColumns(answer);
  if (!held || shaped.series.length !== u.series.length - 1) return false;
  held.answer = answer;
  held.shaped = shaped;
  held.envelopes = shaped.envelopes;
  if (group) group.syncing = true; // not a zoom of the user's: spread nothing
  try {
    u.setData(shaped.columns, false);
    u.setScale('x', { min: range.min, max: range.max });
  } finally {
    if (group) group.syncing = false;
  }
  return true;
}

// The width a plot takes in `box`. Reading it lays the page out: a page
// that draws several plots in one go measures their box once and gives
// each its `width` (the observer below corrects it if the box changes).
export function plotWidth(box) {
  return Math.max(320, Math.floor(box.clientWidth || box.parentElement.clientWidth || 600) - 8);
}

// Plots follow their box's width (the window's, a side-by-side column's).
// Only a change of width redraws: the observer also reports each box once
// when it starts watching it, and uPlot's setSize draws the whole plot
// again even at the same size.
const resizing = new Map();
const observer = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const u = resizing.get(entry.target);
    if (!u || !u.root.isConnected) continue;
    const width = plotWidth(entry.target);
    if (width !== u.width) u.setSize({ width, height: u.height });
  }
});
function resizeWith(box, u) {
  resizing.set(box, u);
  observer.observe(box);
}

// A plot's or a heat map's head: its title (an h3 with this id, which the
// drawing names as its label), then what the caller appends.
export function plotHead(title, id) {
  const head = document.createElement('div');
  head.className = 'plot-head';
  const h = document.createElement('h3');
  h.textContent = title;
  h.id = id;
  head.append(h);
  return { head, h };
}

// ---- downloads -------------------------------------------------------------

// The data of a plot, built in the browser from what was fetched: JSON is
// the API's answer as it came, CSV one row per time with every line's
// figures (mean, min, max per node; median, min, max when banded).
export function downloadButtons(name, held) {
  const span = document.createElement('span');
  span.className = 'downloads';
  const csv = document.createElement('button');
  csv.type = 'button';
  csv.textContent = 'CSV';
  csv.title = `Download the ${name} data as CSV`;
  csv.addEventListener('click', async () => {
    const answer = await fullAnswer(held);
    save(`${name}.csv`, 'text/csv', seriesCsv(answer, held.shaped));
  });
  const json = document.createElement('button');
  json.type = 'button';
  json.textContent = 'JSON';
  json.title = `Download the ${name} data as JSON`;
  json.addEventListener('click', async () => {
    const answer = await fullAnswer(held);
    save(`${name}.json`, 'application/json', JSON.stringify(answer, null, 1));
  });
  span.append(csv, json);
  return span;
}

// What a download holds: the answer drawn, or, when it came without the
// lines' min and max (min_max_lines), the same asked again with them.
async function fullAnswer(held) {
  const a = held.answer;
  const partial = a && a.series && a.series.some((s) => s.min === null || s.max === null);
  return partial && held.fetchFull ? held.fetchFull(a) : a;
}

export function save(filename, type, text) {
  const blob = new Blob([text], { type });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 0);
}

function csvField(value) {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function csvText(header, rows) {
  return [header, ...rows].map((row) => row.map(csvField).join(',')).join('\n') + '\n';
}

function seriesCsv(answer, shaped) {
  const header = ['t'];
  const columns = [];
  if (answer.band && answer.band.length > 0) {
    for (const b of answer.band) {
      for (const part of ['median', 'min', 'max']) {
        header.push(`${b.label}_${part}`);
        columns.push(b[part]);
      }
    }
  } else if (answer.series) {
    for (const s of answer.series) {
      for (const part of ['mean', 'min', 'max']) {
        header.push(`${seriesName(s, answer.metric)} ${part}`.replaceAll(' ', '_'));
        columns.push(s[part]);
      }
    }
  } else {
    shaped.series.forEach((s, i) => {
      header.push(s.label);
      columns.push(shaped.columns[i + 1]);
    });
  }
  const t = answer.t || shaped.columns[0];
  const rows = t.map((time, j) => [time, ...columns.map((c) => c[j])]);
  return csvText(header, rows);
}

export { uPlot };
