// A heat map on a canvas: rows (ranks, nodes) × time bins, a colour per
// cell from a logarithmic scale (a few busy cells would otherwise wash out
// every other). Used for the run page's rank × time I/O activity and the
// time × node map beside banded per-node series.
//
// Test hook: window.vigilHeatmaps[name] = {rows, bins, max, cells} once drawn
// (cells: how many cells were painted with a non-zero value); the canvas has
// data-drawn="yes".

import * as format from './format.js';
import { downloadButtons, plotHead } from './plot.js';

window.vigilHeatmaps = window.vigilHeatmaps || {};

// A light-to-dark blue-violet ramp; zero stays the background so that idle
// stretches read as empty.
function cellColour(fraction) {
  const hue = 200 + 80 * fraction;
  const light = 88 - 60 * fraction;
  return `hsl(${hue}, 70%, ${light}%)`;
}

// opts: name, title, t (bin starts, epoch s), rowLabels, matrix (one array
// per row, one value per bin, null allowed), valueText (formats a value for
// the tooltip), scale ('log' for counts, the default; 'linear' from the
// smallest to the largest value, for gauges such as a node's power),
// answer (for the JSON download).
export function heatmap(box, opts) {
  const { name, title, t, rowLabels, matrix, valueText = format.number } = opts;
  box.classList.add('heatmap');
  box.replaceChildren();

  const { head, h } = plotHead(title, `heatmap-${name}-title`);
  const columns = [t, ...matrix];
  const series = rowLabels.map((label) => ({ label }));
  head.append(downloadButtons(name, { answer: opts.answer ?? { t, rows: rowLabels, values: matrix },
    shaped: { columns, series } }));
  box.append(head);

  if (t.length === 0 || matrix.length === 0) {
    const empty = document.createElement('p');
    empty.className = 'empty';
    empty.textContent = 'Nothing to draw for this interval.';
    box.append(empty);
    return null;
  }

  const labelWidth = 70;
  const axisHeight = 22;
  const width = Math.max(320, (box.clientWidth || 600) - 8);
  // up to 18 px a row; many rows (1000 ranks) share about 400 px, a row
  // then being a fraction of a pixel (the canvas blends them)
  const rowHeight = Math.min(18, Math.max(0.25, 400 / matrix.length));
  const height = Math.ceil(rowHeight * matrix.length) + axisHeight;

  const canvas = document.createElement('canvas');
  canvas.width = width * devicePixelRatio;
  canvas.height = height * devicePixelRatio;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-labelledby', h.id);
  canvas.tabIndex = 0; // the summary below is read by focus too
  box.append(canvas);

  const ctx = canvas.getContext('2d');
  ctx.scale(devicePixelRatio, devicePixelRatio);
  let max = 0;
  let min = Infinity;
  for (const row of matrix) {
    for (const v of row) {
      if (v === null) continue;
      if (v > max) max = v;
      if (v < min) min = v;
    }
  }
  const linear = opts.scale === 'linear';
  const fraction = linear
    ? (v) => (max > min ? 0.1 + (0.9 * (v - min)) / (max - min) : 1)
    : (v) => Math.log1p(v) / Math.log1p(max);
  const plotWidth = width - labelWidth;
  const cellWidth = plotWidth / t.length;
  let cells = 0;
  matrix.forEach((row, r) => {
    row.forEach((v, b) => {
      if (v === null || (!linear && (v <= 0 || max <= 0))) return;
      ctx.fillStyle = cellColour(fraction(v));
      // overlap by a pixel: no hairline gaps between cells when scaled
      ctx.fillRect(labelWidth + b * cellWidth, r * rowHeight, cellWidth + 0.5, Math.max(rowHeight, 0.5));
      cells++;
    });
  });

  // Row labels, as many as fit without overlapping.
  ctx.fillStyle = '#222';
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  const every = Math.ceil(12 / rowHeight);
  rowLabels.forEach((label, r) => {
    if (r % every === 0) ctx.fillText(String(label), 2, r * rowHeight + rowHeight / 2, labelWidth - 6);
  });
  // Time labels: first, middle and last bin (UTC).
  ctx.textBaseline = 'top';
  const y = matrix.length * rowHeight + 4;
  const stamp = (s) => new Date(s * 1000).toISOString().slice(11, 19);
  ctx.fillText(stamp(t[0]), labelWidth, y);
  const mid = Math.floor(t.length / 2);
  ctx.fillText(stamp(t[mid]), labelWidth + mid * cellWidth - 20, y);
  ctx.fillText(stamp(t[t.length - 1]), width - 52, y);

  // The value under the pointer, in the canvas's title (tooltip).
  canvas.addEventListener('mousemove', (e) => {
    const b = Math.floor((e.offsetX - labelWidth) / cellWidth);
    const r = Math.floor(e.offsetY / rowHeight);
    if (b < 0 || b >= t.length || r < 0 || r >= matrix.length) {
      canvas.title = '';
      return;
    }
    canvas.title = `${rowLabels[r]} at ${stamp(t[b])}: ${valueText(matrix[r][b])}`;
  });

  const legend = document.createElement('p');
  legend.className = 'heatmap-legend';
  legend.textContent = linear
    ? `${matrix.length} rows × ${t.length} bins; lightest = ${valueText(min)}, darkest = ${valueText(max)}, blank = no data.`
    : `${matrix.length} rows × ${t.length} bins; darkest = ${valueText(max)} (log scale), blank = none.`;
  box.append(legend);

  canvas.dataset.drawn = 'yes';
  window.vigilHeatmaps[name] = { rows: matrix.length, bins: t.length, max, cells };
  return canvas;
}
