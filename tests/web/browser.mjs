// vigil-web's browser tests: Debian's chromium, headless, driven by
// playwright-core, against servers loaded with tests/web/fixture.sql
// (tests/web/run_browser starts them).
//
//   VIGIL_WEB_URL          an auth = none server (everybody is an admin)
//   VIGIL_WEB_USER_URL     an auth = remote-user server that trusts 127.0.0.1
//                          (we are the proxy and say X-Remote-User: nobody,
//                          or root, its admin) with per_node_lines_max = 1
//   VIGIL_WEB_SCREENSHOTS  a folder: a PNG of each page is saved there
//   CHROMIUM               the browser (default /usr/bin/chromium)
//   VIGIL_WEB_ONLY         a regular expression: run only the checks it matches
//
//   node tests/web/browser.mjs                  the tests below
//   node tests/web/browser.mjs --warehouse-down  only: the pages say the
//                          warehouse is unreachable (run after stopping it)
//
// Each check is named; a failed one is reported with its name and the
// others still run. Exit 0 when all passed, 1 otherwise, 2 on bad usage.
//
// Hooks the pages expose for this (web/static/js): body[data-loaded] is
// "yes" when a page has drawn everything, "error" when it showed an error
// in #message (whose data-status is the HTTP status); window.vigilPlots
// maps a plot's name (the metric; "compare-power"…) to its uPlot instance;
// window.vigilHeatmaps[name] = {rows, bins, max, cells}; table rows of runs
// have data-run-id.

import { fileURLToPath } from 'node:url';
import path from 'node:path';
import fs from 'node:fs';
import { createRequire } from 'node:module';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../../web/package.json'));
const { chromium } = require('playwright-core');

const baseUrl = process.env.VIGIL_WEB_URL;
const userUrl = process.env.VIGIL_WEB_USER_URL;
const shots = process.env.VIGIL_WEB_SCREENSHOTS || '';
const warehouseDown = process.argv.includes('--warehouse-down');
if (!baseUrl || (!warehouseDown && !userUrl)) {
  console.error('browser.mjs: VIGIL_WEB_URL and VIGIL_WEB_USER_URL must name the servers to test');
  process.exit(2);
}
if (shots) fs.mkdirSync(shots, { recursive: true });

const failures = [];
let passed = 0;

class CheckFailed extends Error {}
function expect(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

// VIGIL_WEB_ONLY: a regular expression; only the checks it matches run
// (for working on one of them).
const only = process.env.VIGIL_WEB_ONLY ? new RegExp(process.env.VIGIL_WEB_ONLY) : null;

async function check(name, fn) {
  if (only && !only.test(name)) return;
  try {
    await fn();
    passed++;
    console.log(`ok    ${name}`);
  } catch (e) {
    failures.push(name);
    console.log(`FAIL  ${name}: ${e instanceof CheckFailed ? e.message : e.stack || e}`);
  }
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update'],
});

// How long to wait for a page's state before calling it a failure: a guard
// against hangs, not a speed requirement (other tests may share the cores).
const LONG = Number(process.env.VIGIL_WEB_WAIT_MS || 60000);

// A laptop's screen: the pages must be usable at this size.
const viewport = { width: 1366, height: 768 };

async function newPage(context) {
  const page = await context.newPage();
  page.setDefaultTimeout(LONG);
  page.jsErrors = [];
  page.on('pageerror', (e) => page.jsErrors.push(e.message));
  return page;
}

// Opens a page of the site and waits until it says it is done.
async function open(page, url) {
  await page.goto(url);
  await page.waitForSelector('body[data-loaded]', { timeout: LONG });
  expect(page.jsErrors.length === 0, `${url}: script errors: ${page.jsErrors.join('; ')}`);
  return page.evaluate(() => document.body.dataset.loaded);
}

async function openOk(page, url) {
  const state = await open(page, url);
  if (state !== 'yes') {
    const message = await page.textContent('#message');
    throw new CheckFailed(`${url}: the page shows an error: ${message}`);
  }
}

// Clicks a link (or a form's button) that leads to URL and waits until
// that page is done: the click's own page, not a reload of the old one.
async function follow(page, selector, url) {
  const target = url ?? new URL(await page.getAttribute(selector, 'href'), page.url()).href;
  await Promise.all([page.waitForURL(target), page.click(selector)]);
  await page.waitForSelector('body[data-loaded]');
  expect(page.jsErrors.length === 0, `${target}: script errors: ${page.jsErrors.join('; ')}`);
  const state = await page.evaluate(() => document.body.dataset.loaded);
  if (state !== 'yes') throw new CheckFailed(`${target}: the page shows an error: ${await page.textContent('#message')}`);
}

// Waits until fn (run in the page) is true; a timeout fails the check with
// what the page shows then (URL, focus, zoom state), to tell why.
async function waitUntil(page, what, fn, arg = null) {
  try {
    await page.waitForFunction(fn, arg, { timeout: LONG });
  } catch (e) {
    const state = await page.evaluate(() => ({
      url: location.href,
      focus: document.activeElement?.id || document.activeElement?.tagName,
      zoomed: document.body.dataset.zoomed,
      x: window.vigilPlots?.cpu ? [window.vigilPlots.cpu.scales.x.min, window.vigilPlots.cpu.scales.x.max] : null,
    }));
    throw new CheckFailed(`${what} did not happen: ${JSON.stringify(state)}`);
  }
}

async function screenshot(page, name) {
  if (shots) await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
}

const runIds = (page) => page.$$eval('table.runs tbody tr', (rows) => rows.map((r) => Number(r.dataset.runId)));

// ---- the warehouse is gone ---------------------------------------------------

if (warehouseDown) {
  const context = await browser.newContext({ viewport });
  const page = await newPage(context);
  await check('warehouse down: the runs list says the warehouse is unreachable', async () => {
    const state = await open(page, `${baseUrl}/`);
    expect(state === 'error', `the page loaded as "${state}", not as an error`);
    const status = await page.getAttribute('#message', 'data-status');
    const text = await page.textContent('#message');
    expect(status === '503', `#message has status ${status}, not 503: ${text}`);
    expect(/warehouse is unreachable/i.test(text), `the message does not say so: "${text}"`);
    await screenshot(page, 'warehouse-down');
  });
  await check('warehouse down: a run page says so too', async () => {
    await open(page, `${baseUrl}/run.html?run=1`);
    const text = await page.textContent('#message');
    expect(/warehouse is unreachable/i.test(text), `the message is "${text}"`);
  });
  await browser.close();
  finish();
}

// ---- auth = none: everything ------------------------------------------------

const context = await browser.newContext({ viewport, acceptDownloads: true });
const page = await newPage(context);

await check('runs list: 12 runs over pages of 5, Next and Previous', async () => {
  await openOk(page, `${baseUrl}/?limit=5`);
  await screenshot(page, 'runs-list');
  const pages = [await runIds(page)];
  while (await page.$('#next')) {
    expect(pages.length < 10, 'more than 10 pages: the Next cursor does not end');
    await follow(page, '#next');
    pages.push(await runIds(page));
  }
  const sizes = pages.map((p) => p.length).join(',');
  expect(sizes === '5,5,2', `page sizes are ${sizes}, not 5,5,2`);
  const all = new Set(pages.flat());
  expect(all.size === 12, `${all.size} distinct runs over the pages, not 12: ${[...all].sort((a, b) => a - b)}`);
  for (let id = 1; id <= 12; id++) expect(all.has(id), `run ${id} is on no page`);
  // Previous from the last page gives the second page again
  await follow(page, '#previous');
  const again = await runIds(page);
  expect(again.join() === pages[1].join(), `Previous shows ${again}, page 2 was ${pages[1]}`);
});

await check('runs list: sorting by energy is in the URL and orders the rows', async () => {
  await openOk(page, `${baseUrl}/`);
  await follow(page, 'th a.sort:text("Energy")');
  expect(new URL(page.url()).searchParams.get('sort') === '-energy_j', `the URL is ${page.url()}`);
  const energies = await page.$$eval('table.runs tbody tr', (rows) => rows.map((r) => r.cells[8].textContent));
  expect(energies.length === 12, `${energies.length} rows, not 12`);
  const sorted = await page.evaluate(() => document.querySelector('th[aria-sort]')?.textContent);
  expect(sorted && sorted.includes('Energy'), `the sorted column's header is "${sorted}"`);
});

await check('runs list: program=dd shows run 3 only', async () => {
  await openOk(page, `${baseUrl}/`);
  await page.fill('input[name=program]', 'dd');
  await Promise.all([page.waitForURL(/program=dd/), page.press('input[name=program]', 'Enter')]);
  await page.waitForSelector('body[data-loaded]');
  const ids = await runIds(page);
  expect(ids.join() === '3', `the rows are runs [${ids}], not [3]`);
  await screenshot(page, 'runs-program-dd');
});

await check('runs list: from/to 10:00 to 10:30 UTC shows runs 1 and 3', async () => {
  await openOk(page, `${baseUrl}/`);
  // no seconds, as a person types it: the page must still send a time the API takes
  await page.fill('input[name=from]', '2026-11-20T10:00');
  await page.fill('input[name=to]', '2026-11-20T10:30');
  await Promise.all([page.waitForURL(/from=/), page.click('#filters button[type=submit]')]);
  await page.waitForSelector('body[data-loaded]');
  const ids = (await runIds(page)).sort((a, b) => a - b);
  expect(ids.join() === '1,3', `the rows are runs [${ids}], not [1,3]`);
});

await check('run 1: report card, power with 2 node lines, the other timelines drawn', async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  await screenshot(page, 'run-1');
  const card = await page.$$eval('#report-card li', (items) => items.length);
  expect(card >= 1, 'the report card has no line (run 1 has anomalies and captures)');
  const shape = await page.evaluate(() => Object.fromEntries(Object.entries(window.vigilPlots).map(
    ([name, u]) => [name, { series: u.series.length, points: u.data[0].length }])));
  expect(shape.power, `no power plot; plots: ${Object.keys(shape)}`);
  expect(shape.power.series === 3, `the power plot has ${shape.power.series} series, not 3 (x, n1, n2)`);
  for (const metric of ['power', 'cpu', 'memory', 'io_bytes', 'io_ops', 'network']) {
    expect(shape[metric], `no ${metric} plot`);
    expect(shape[metric].points > 0, `the ${metric} plot has no points`);
    expect(shape[metric].series >= 3, `the ${metric} plot has ${shape[metric].series} series, expected ≥ 3`);
    // drawn: the first line's colour (#1f77b4) is on the canvas; the shaded
    // windows and the grid alone do not count
    const inked = await page.evaluate((name) => {
      const u = window.vigilPlots[name];
      const { left, top, width, height } = u.bbox;
      const pixels = u.ctx.getImageData(left, top, width, height).data;
      let n = 0;
      for (let i = 0; i < pixels.length; i += 4) {
        const near = Math.abs(pixels[i] - 31) + Math.abs(pixels[i + 1] - 119) + Math.abs(pixels[i + 2] - 180);
        if (pixels[i + 3] > 200 && near < 60) n++;
      }
      return n;
    }, metric);
    expect(inked > 100, `the ${metric} plot's first line is not drawn (${inked} pixels of its colour)`);
  }
  const source = await page.textContent('#plot-power .plot-note');
  expect(/source: /.test(source), `the power plot does not say its source: "${source}"`);
});

await check('run 1: its energy across its two nodes, per node min/mean/max and the source', async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  const text = await page.textContent('#job-energy');
  for (const want of ['36.3 kJ on 2 nodes', 'min 18 kJ, mean 18.1 kJ, max 18.3 kJ', 'powercap']) {
    expect(text.includes(want), `the energy section does not say "${want}": "${text}"`);
  }
  expect(!text.includes('estimated'), 'measured energy is labelled estimated');
  const rows = await page.$$eval('#job-energy-nodes tbody tr', (r) => r.map((x) => x.textContent));
  expect(rows.length === 2 && rows[0].startsWith('n1') && rows[0].includes('18.3 kJ'),
    `the energy by node table has rows ${JSON.stringify(rows)}`);
});

await check("run 3: its code regions from the report, with what was not followed", async () => {
  await openOk(page, `${baseUrl}/run.html?run=3`);
  const rows = await page.$$eval('#regions-table tbody tr', (r) => r.map((x) => x.textContent));
  expect(rows.length === 2, `the regions table has rows ${JSON.stringify(rows)}`);
  expect(rows[0].startsWith('copy') && rows[0].includes('8 MiB') && rows[0].includes('12.5 J'),
    `the copy region's row is "${rows[0]}"`);
  expect(rows[1].startsWith('setup') && rows[1].includes('n/a'), `the setup region's row is "${rows[1]}"`);
  const notes = await page.textContent('#region-notes');
  for (const want of ['1 ends naming no open region', '2 entries without an energy figure']) {
    expect(notes.includes(want), `the regions' notes do not say "${want}": "${notes}"`);
  }
});

await check('run 3: the findings stored with its report, each with its evidence and advice', async () => {
  await openOk(page, `${baseUrl}/run.html?run=3`);
  const items = await page.$$eval('#findings li', (r) => r.map((x) => x.textContent));
  expect(items.length === 1, `the findings card has items ${JSON.stringify(items)}`);
  for (const want of ['fsync per write (/tmp/x)', '8 fsync and fdatasync calls for 8 writes', 'Sync once']) {
    expect(items[0].includes(want), `the finding does not say "${want}": "${items[0]}"`);
  }
  const note = await page.textContent('#findings .note');
  expect(note.includes('[insight] thresholds'), `the findings' note is "${note}"`);
});

await check("run 1: a report without findings shows no findings card", async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  expect(await page.$('#findings') === null, 'run 1 shows a findings card');
});

await check('run 3: its files, access sizes, sequential share and I/O timeline from the reports', async () => {
  await openOk(page, `${baseUrl}/run.html?run=3`);
  await screenshot(page, 'run-3-files');
  const text = await page.textContent('#files-io');
  for (const want of ['Files2', 'Sequential accesses58.3 % (reads –, writes 58.3 %)']) {
    expect(text.includes(want), `the files section does not say "${want}": "${text}"`);
  }
  const rows = await page.$$eval('#files-table tbody tr', (r) => r.map((x) => [...x.cells].map((c) => c.textContent)));
  expect(rows.length === 2, `the files table has rows ${JSON.stringify(rows)}`);
  const [path, fs, read, written, calls, seq, consec, sizes] = rows[0];
  expect(path === '/tmp/x' && fs === '/tmp (tmpfs)' && written === '8 MiB' && calls === '12',
    `the busiest file's row is ${JSON.stringify(rows[0])}`);
  expect(seq === '87.5 %' && consec === '87.5 %' && sizes === '1 MiB ×8',
    `the busiest file's sequential, consecutive and common sizes are ${JSON.stringify(rows[0])}`);
  const bins = await page.$$eval('#files-sizes tbody tr', (r) => r.map((x) => [...x.cells].map((c) => c.textContent)));
  expect(bins.length === 10 && bins[0][0] === '0–100' && bins[0][2] === '4' && bins[5][0] === '1M–4M'
    && bins[5][2] === '8', `the access sizes are ${JSON.stringify(bins)}`);
  // The timeline keeps every byte: its rates × the cell (the one report's
  // 2.5 ms bins) add up to the bytes.
  const plot = await page.evaluate(() => {
    const u = window.vigilPlots['files-io'];
    if (!u) return null;
    return { series: u.series.length, points: u.data[0].length,
      written: u.data[2].reduce((a, b) => a + b, 0), read: u.data[1].reduce((a, b) => a + b, 0) };
  });
  expect(plot && plot.series === 3 && plot.points === 4, `the files timeline is ${JSON.stringify(plot)}`);
  expect(Math.abs(plot.written * 0.0025 - 8388701) < 1 && plot.read === 0,
    `the files timeline does not add up to the 8388701 bytes written: ${JSON.stringify(plot)}`);
});

await check('run 1: its shared file, once, with the fastest and slowest rank and MPI-IO counts', async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  const rows = await page.$$eval('#files-table tbody tr', (r) => r.map((x) => x.textContent));
  expect(rows.length === 1, `the files table has rows ${JSON.stringify(rows)}`);
  for (const want of ['/scratch/ior.dat', 'lustre', '512 collective', 'shared by 4; fastest rank 3', 'slowest rank 0']) {
    expect(rows[0].includes(want), `the shared file's row does not say "${want}": "${rows[0]}"`);
  }
  expect(await page.evaluate(() => !!window.vigilPlots['files-io']), 'no files timeline for run 1');
});

await check('run 4: a run whose reports list no characterized files says so', async () => {
  await openOk(page, `${baseUrl}/run.html?run=4`);
  const text = await page.textContent('#files-none');
  expect(text.includes('No process of this run has reported its files yet'), `run 4's files section: "${text}"`);
});

await check('run 1: dragging on a plot zooms all plots and puts from/to in the URL', async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  const before = await page.evaluate(() => ({ ...window.vigilPlots.cpu.scales.x }));
  const over = await page.$('#plot-power .u-over');
  await over.scrollIntoViewIfNeeded();
  const box = await over.boundingBox();
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width * 0.3, y);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.5, y, { steps: 5 });
  await page.mouse.up();
  await waitUntil(page, 'from/to in the URL', () => new URL(location.href).searchParams.has('from'));
  const url = new URL(page.url());
  const from = Date.parse(url.searchParams.get('from')) / 1000;
  const to = Date.parse(url.searchParams.get('to')) / 1000;
  expect(from > before.min && to < before.max, `from/to ${from}…${to} are not inside ${before.min}…${before.max}`);
  const scales = await page.evaluate(() => Object.fromEntries(Object.entries(window.vigilPlots).map(
    ([name, u]) => [name, [u.scales.x.min, u.scales.x.max]])));
  for (const [name, [min, max]] of Object.entries(scales)) {
    expect(Math.abs(min - from) < 0.01 && Math.abs(max - to) < 0.01,
      `the ${name} plot shows ${min}…${max}, not the zoom ${from}…${to}`);
  }
  // the zoomed interval is fetched again, in finer buckets
  await page.waitForSelector('body[data-zoomed=yes]', { timeout: LONG });
  const first = await page.evaluate(() => window.vigilPlots.power.data[0][0]);
  expect(Math.abs(first - from) < 0.01, `after the zoom the power data start at ${first}, not at the zoom's ${from}`);
  await screenshot(page, 'run-1-zoomed');
  // a double click zooms out: the whole run again, and no from/to
  await page.dblclick('#plot-cpu .u-over');
  await page.waitForSelector('body[data-zoomed=no]', { timeout: LONG });
  const out = await page.evaluate(() => [window.vigilPlots.io_bytes.scales.x.min, window.vigilPlots.io_bytes.scales.x.max]);
  expect(Math.abs(out[0] - before.min) < 0.01 && Math.abs(out[1] - before.max) < 0.01,
    `after the double click the plots show ${out}, not the whole run ${before.min}…${before.max}`);
  expect(!new URL(page.url()).searchParams.has('from'), 'the URL keeps from after zooming out');
  // the URL opens zoomed
  const page2 = await newPage(context);
  await openOk(page2, url.href);
  const opened = await page2.evaluate(() => [window.vigilPlots.network.scales.x.min, window.vigilPlots.network.scales.x.max]);
  expect(Math.abs(opened[0] - from) < 0.01 && Math.abs(opened[1] - to) < 0.01,
    `the zoomed URL opens at ${opened}, not ${from}…${to}`);
  await page2.close();
});

await check('run 1: captured window 1 shows its activities, with a Next page', async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  const buttons = await page.$$eval('#windows button', (b) => b.map((x) => Number(x.dataset.captureId)));
  expect(buttons.length === 2, `${buttons.length} captured windows listed, not 2`);
  await page.click('#windows button[data-capture-id="1"]');
  await page.waitForSelector('#activities-table tbody tr', { timeout: LONG });
  const rows = await page.$$eval('#activities-table tbody tr', (r) => r.length);
  expect(rows > 0, 'the activities table is empty');
  expect(await page.$('#activities-next'), 'no Next button under 300 activities');
  const firstSeq = await page.textContent('#activities-table tbody tr th');
  await page.click('#activities-next');
  await page.waitForFunction((seq) => document.querySelector('#activities-table tbody tr th')?.textContent !== seq,
    firstSeq, { timeout: LONG });
  expect(await page.$('#activities-previous'), 'no Previous button on the second page');
  expect(new URL(page.url()).searchParams.get('window') === '1', 'the chosen window is not in the URL');
  await screenshot(page, 'run-1-window-1');
});

await check('run 1: clicking a shaded window in a plot picks it', async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  const where = await page.evaluate(() => {
    const u = window.vigilPlots.cpu;
    u.root.scrollIntoView({ block: 'center' });
    const mid = (Date.parse('2026-11-20T10:01:10Z') + Date.parse('2026-11-20T10:01:12Z')) / 2000;
    const r = u.over.getBoundingClientRect();
    return { x: r.left + u.valToPos(mid, 'x'), y: r.top + r.height / 2 };
  });
  await page.mouse.click(where.x, where.y);
  await page.waitForSelector('#window-detail:not([hidden]) h3', { timeout: LONG });
  const heading = await page.textContent('#window-detail h3');
  expect(/Window 2\b/.test(heading), `the click on window 2's band opened "${heading}"`);
  const pressed = await page.getAttribute('#windows button[data-capture-id="2"]', 'aria-pressed');
  expect(pressed === 'true', 'window 2 is not marked as chosen in the list');
});

await check('run 1: the plots follow the window\'s width', async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  // the seven timelines (the files' plot shares a row with a table)
  const widths = () => page.evaluate(() => Object.values(window.vigilPlots)
    .filter((u) => u.root.closest('#timelines')).map((u) => u.width));
  const wide = await widths();
  expect(wide.length === 7, `${wide.length} timelines, not 7`);
  const all = (test, before) => page.waitForFunction(([t, b]) => Object.values(window.vigilPlots)
    .filter((u) => u.root.closest('#timelines'))
    .every((u, i) => (t === 'narrower' ? u.width < b[i] : u.width === b[i])), [test, before], { timeout: LONG });
  try {
    await page.setViewportSize({ width: 900, height: viewport.height });
    await all('narrower', wide);
  } finally {
    await page.setViewportSize(viewport);
  }
  await all('as wide', wide);
});

await check('run 1: the rank × time heat map is drawn', async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  const map = await page.evaluate(() => window.vigilHeatmaps && window.vigilHeatmaps.heatmap);
  expect(map, 'no heat map was drawn');
  expect(map.rows === 4, `the heat map has ${map.rows} rows, not 4 ranks`);
  expect(map.cells > 0, 'the heat map has no cell with activities');
  expect(await page.$('#heatmap-box canvas[data-drawn=yes]'), 'no drawn canvas in #heatmap-box');
});

await check('run 1: the per-rank table is made when scrolled to', async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  // below the seven plots: more than a screen under the top of the page
  const before = await page.$$eval('#ranks-box tr', (r) => r.length);
  expect(before === 0, `the per-rank table has ${before} rows before it was scrolled near`);
  await page.evaluate(() => document.getElementById('per-rank').scrollIntoView());
  await page.waitForSelector('#ranks tbody tr', { timeout: LONG });
  const rows = await page.$$eval('#ranks tbody tr', (r) => r.length);
  expect(rows === 4, `the per-rank table has ${rows} rows, not 4 ranks`);
});

await check('run 1: a plot downloads as CSV and JSON', async () => {
  await openOk(page, `${baseUrl}/run.html?run=1`);
  const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#plot-power button:text("CSV")')]);
  const csvText = fs.readFileSync(await csv.path(), 'utf8');
  const lines = csvText.trim().split('\n');
  expect(lines[0].startsWith('t,'), `the CSV header is "${lines[0]}"`);
  expect(lines.length > 2, `the CSV has ${lines.length} lines`);
  const [json] = await Promise.all([page.waitForEvent('download'), page.click('#plot-power button:text("JSON")')]);
  const answer = JSON.parse(fs.readFileSync(await json.path(), 'utf8'));
  expect(answer.metric === 'power' && answer.series.length === 2, 'the JSON is not the power answer with 2 series');
});

// A run of more nodes than the plots draw envelopes for gets its lines
// without min and max (min_max_lines): its downloads ask for them again.
await check('run 1: a plot drawn without min and max downloads them all the same', async () => {
  const stripped = [];
  await page.route(/\/series\?.*min_max_lines=/, async (route) => {
    const answer = await (await route.fetch()).json();
    for (const s of answer.series) s.min = s.max = null;
    stripped.push(answer.metric);
    await route.fulfill({ json: answer });
  });
  try {
    await openOk(page, `${baseUrl}/run.html?run=1`);
    expect(stripped.includes('power'), 'the page asked for power without min_max_lines');
    const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#plot-power button:text("CSV")')]);
    const lines = fs.readFileSync(await csv.path(), 'utf8').trim().split('\n');
    const header = lines[0].split(',');
    const min = header.findIndex((h) => h.endsWith('_min'));
    expect(min > 0, `the CSV header has no min column: "${lines[0]}"`);
    const mins = lines.slice(1).map((l) => l.split(',')[min]).filter((v) => v !== '');
    expect(mins.length > 0, 'the CSV\'s min column is empty: the download did not ask for the whole answer');
    const [json] = await Promise.all([page.waitForEvent('download'), page.click('#plot-power button:text("JSON")')]);
    const answer = JSON.parse(fs.readFileSync(await json.path(), 'utf8'));
    expect(answer.series.every((s) => Array.isArray(s.min) && Array.isArray(s.max)),
      'the JSON download has lines without min and max');
  } finally {
    await page.unroute(/\/series\?.*min_max_lines=/);
  }
});

await check('compare runs 1 and 2: both runs, figures and overlaid timelines', async () => {
  await openOk(page, `${baseUrl}/compare.html?a=1&b=2`);
  await screenshot(page, 'compare-1-2');
  const headers = await page.$$eval('#figures thead th', (th) => th.map((x) => x.textContent));
  expect(headers.some((h) => /run 1\b/.test(h)) && headers.some((h) => /run 2\b/.test(h)),
    `the figures' headers are ${JSON.stringify(headers)}`);
  const power = await page.evaluate(() => window.vigilPlots['compare-power']?.series.map((s) => s.label));
  expect(power && power.length === 3, `the overlaid power plot has series ${JSON.stringify(power)}, not x, A, B`);
  expect(power[1].includes('run 1') && power[2].includes('run 2'), `the series are ${JSON.stringify(power)}`);
});

await check('node n1: statistics and last runs', async () => {
  await openOk(page, `${baseUrl}/node.html?node=1`);
  await screenshot(page, 'node-1');
  const cpu = await page.evaluate(() => window.vigilPlots.cpu?.data[0].length ?? 0);
  expect(cpu > 0, 'the node page has no CPU points');
  const ids = await runIds(page);
  expect(ids.includes(1) && ids.includes(3), `the node's last runs are [${ids}], without runs 1 and 3`);
});

await check("thresholds on the fixture's day: sections listed, and they fired", async () => {
  await openOk(page, `${baseUrl}/thresholds.html?from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z`);
  await screenshot(page, 'thresholds');
  const fired = await page.$$eval('#summary tbody tr', (rows) => rows.map((r) => Number(r.cells[2].textContent.replaceAll(',', ''))));
  expect(fired.length > 0, 'the summary lists no [adpi.*] or [reasoner.*] section');
  const total = fired.reduce((a, b) => a + b, 0);
  expect(total > 0, `no plugin fired on 2026-11-20 (the fixture's anomalies): ${fired}`);
  const from = await page.inputValue('input[name=from]');
  expect(from.startsWith('2026-11-20T00:00'), `the From field shows "${from}", not the URL's`);
});

await check("thresholds: vigil tune's trials side by side, and what each changed key did", async () => {
  // Still the page opened by the check before: the fixture's two trials.
  const trials = await page.$$eval('#trials tbody tr', (rows) => rows.map((r) => r.cells[0].textContent.trim()));
  expect(trials.join(',') === '2,1', `the trials table lists [${trials}], not 2,1 (newest first)`);
  const flagged = await page.textContent('#trials tbody tr:first-child td:nth-child(5)');
  expect(flagged.replace(/\s+/g, ' ').trim() === '12 → 4', `trial 2 flagged "${flagged}", not 12 → 4`);
  const sides = await page.$$eval('#trial-2 table.comparison thead th', (th) => th.map((h) => h.textContent));
  expect(sides.includes('Current (recorded)') && sides.includes('Candidate'), `trial 2's comparison heads: ${sides}`);
  const changes = await page.$$eval('#trial-2 table.changes tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  expect(changes.length === 2, `trial 2 lists ${changes.length} changed keys, not 2`);
  const [key, , candidate, , before, after] = changes[0];
  expect(key === '[adpi.latency-histogram] min_calls' && candidate === '50' && before === '9' && after === '2',
    `the first changed key reads ${JSON.stringify(changes[0])}`);
  const silenced = await page.textContent('#trial-2 table.adpis');
  expect(/node sensor-sanity/.test(silenced) && /silent/.test(silenced), 'trial 2 does not show sensor-sanity silenced by the candidate');
  expect(await page.$('#trial-1 table.changes') === null, 'trial 1 (no candidate) shows a changed-keys table');
});

await check('a run that does not exist: the not-found message', async () => {
  const state = await open(page, `${baseUrl}/run.html?run=999999`);
  expect(state === 'error', `the page loaded as "${state}"`);
  const text = await page.textContent('#message');
  expect(/run 999999 does not exist or is not yours/i.test(text), `the message is "${text}"`);
});

await check('a bad parameter in the URL: the message names it', async () => {
  const state = await open(page, `${baseUrl}/?limit=abc`);
  expect(state === 'error', `the page loaded as "${state}"`);
  const status = await page.getAttribute('#message', 'data-status');
  const text = await page.textContent('#message');
  expect(status === '400' && /\blimit\b/.test(text), `#message (status ${status}) says "${text}"`);
});

await check('keyboard: Tab reaches the filters and a run link, focus is visible', async () => {
  await openOk(page, `${baseUrl}/`);
  const seen = [];
  for (let i = 0; i < 40 && !seen.some((s) => s.startsWith('A /run.html')); i++) {
    await page.keyboard.press('Tab');
    seen.push(await page.evaluate(() => {
      const e = document.activeElement;
      return `${e.tagName} ${e.getAttribute('href') || e.name || ''}`;
    }));
  }
  expect(seen.some((s) => s === 'INPUT program'), `Tab never reached the program filter: ${seen.join(', ')}`);
  expect(seen.some((s) => s.startsWith('A /run.html')), 'Tab never reached a run link');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  expect(outline !== 'none', 'the focused link has no outline');
});
await context.close();

// ---- auth = remote-user, as 'nobody' -------------------------------------------

const userContext = await browser.newContext({ viewport, extraHTTPHeaders: { 'X-Remote-User': 'nobody' } });
const userPage = await newPage(userContext);

await check("as nobody: run 3 is listed, run 1 (daemon's) is not", async () => {
  await openOk(userPage, `${userUrl}/?limit=50`);
  await screenshot(userPage, 'nobody-runs');
  const ids = await runIds(userPage);
  expect(ids.includes(3), `run 3 is not in nobody's list [${ids}]`);
  expect(!ids.includes(1), `run 1 is in nobody's list [${ids}]`);
  const me = await userPage.textContent('#me');
  expect(me.includes('nobody'), `the header says "${me}", not nobody`);
});

await check('as nobody: /run.html?run=1 says run 1 does not exist or is not yours', async () => {
  const state = await open(userPage, `${userUrl}/run.html?run=1`);
  expect(state === 'error', `the page loaded as "${state}"`);
  const status = await userPage.getAttribute('#message', 'data-status');
  const text = await userPage.textContent('#message');
  expect(status === '404', `#message has status ${status}: ${text}`);
  expect(/run 1 does not exist or is not yours/i.test(text), `the message is "${text}"`);
  await screenshot(userPage, 'nobody-run-1');
});

await check('as nobody: run 3 opens, with its one anomaly', async () => {
  await openOk(userPage, `${userUrl}/run.html?run=3`);
  const title = await userPage.textContent('#title');
  expect(/dd/.test(title), `the title is "${title}"`);
  // the fixture gives run 3 one anomaly (n1's, while it ran)
  const anomalies = await userPage.$$eval('#anomalies tbody tr', (rows) => rows.length);
  expect(anomalies === 1, `run 3's page lists ${anomalies} anomalies, not 1`);
});
await userContext.close();

// ---- as root (an admin) on the server that bands more than one node --------

const rootContext = await browser.newContext({ viewport, extraHTTPHeaders: { 'X-Remote-User': 'root' } });
const rootPage = await newPage(rootContext);

await check('as root, per_node_lines_max = 1: run 1 is drawn as median and band, with a node heat map', async () => {
  await openOk(rootPage, `${userUrl}/run.html?run=1`);
  await screenshot(rootPage, 'root-run-1-banded');
  const labels = await rootPage.evaluate(() => window.vigilPlots.power.series.map((s) => s.label));
  expect(labels.length === 4, `the banded power plot has series ${JSON.stringify(labels)}, not x, median, min, max`);
  expect(/median of 2 nodes/.test(labels[1]), `the first line is "${labels[1]}", not the median of 2 nodes`);
  const map = await rootPage.evaluate(() => window.vigilHeatmaps['nodes-power']);
  expect(map && map.rows === 2, `the time × node heat map has ${map?.rows} rows, not 2`);
  expect(map.cells > 0, 'the time × node heat map is empty');
});

await check('keyboard: "Zoom the plots to this window" zooms every plot around window 1', async () => {
  await openOk(rootPage, `${userUrl}/run.html?run=1`);
  await rootPage.focus('#windows button[data-capture-id="1"]');
  await rootPage.keyboard.press('Enter');
  await rootPage.waitForSelector('#zoom-window');
  await rootPage.focus('#zoom-window');
  await rootPage.keyboard.press('Enter');
  await waitUntil(rootPage, 'from/to in the URL', () => new URL(location.href).searchParams.has('from'));
  const x = await rootPage.evaluate(() => [window.vigilPlots.io_ops.scales.x.min, window.vigilPlots.io_ops.scales.x.max]);
  const start = Date.parse('2026-11-20T10:00:28Z') / 1000;
  const end = Date.parse('2026-11-20T10:00:34Z') / 1000;
  expect(x[0] < start && x[0] > start - 10 && x[1] > end && x[1] < end + 10, `the plots show ${x}, not around ${start}…${end}`);
  await rootPage.focus('#zoom-out');
  await rootPage.keyboard.press('Enter');
  await waitUntil(rootPage, 'no from/to in the URL', () => !new URL(location.href).searchParams.has('from'));
});
await browser.close();
finish();

function finish() {
  console.log(`${passed} passed, ${failures.length} failed`);
  if (shots) console.log(`screenshots in ${shots}`);
  if (failures.length > 0) {
    console.error(`browser tests failed: ${failures.join('; ')}`);
    process.exit(1);
  }
  process.exit(0);
}
