// bench/web/run's browser half: loads a run page in Debian's chromium,
// headless, through playwright-core, LOADS times, and prints one JSON line
// per load:
//   {"page": NAME, "first_paint_ms": …, "first_contentful_paint_ms": …,
//    "loaded_ms": …, "drawn_ms": …, "plots": N, "errors": [...]}
// Times are from the navigation's start (performance.timeOrigin).
// first paint: the Paint Timing API's "first-paint" entry.
// loaded: when the page sets body[data-loaded] to "yes" (run.js does it
//   once every timeline, the windows list and the heat map are drawn; the
//   naive page once its seven timelines are) — seen by a MutationObserver
//   installed before the page's scripts run.
// drawn: the end of the second animation frame after "loaded", i.e. once
//   the frame holding the drawn canvases has been produced.
//
//   node browser.mjs NAME=URL [NAME=URL…]   (env LOADS, default 5; CHROMIUM)
//
// With env REQUESTS=1 each line has "requests" too: the page's requests to
// /api/, each [path, sent_ms, answered_ms] from the same origin, in the
// order sent: which of them the page waits for last.
//
// The pages are loaded in turn (a, b, a, b…) so that both see the same
// machine; each load in a fresh browser context (no cache).
//
// With env PROFILE_DIR, one more load of each page, profiled (not among
// the measured ones: profiling slows it), writes DIR/NAME.trace.json and
// DIR/NAME.cpuprofile (page_profile.mjs) and prints
//   {"page": NAME, "profile": {"threads": …, "main_self": …, "js_self": …}}.

import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { createRequire } from 'node:module';
import { startProfile } from './page_profile.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, '../../web/package.json'));
const { chromium } = require('playwright-core');

const loads = Number(process.env.LOADS || 5);
const timeoutMs = Number(process.env.PAGE_TIMEOUT_MS || 300000);
const pages = process.argv.slice(2).map((a) => {
  const eq = a.indexOf('=');
  return { name: a.slice(0, eq), url: a.slice(eq + 1) };
});
if (pages.length === 0 || pages.some((p) => !p.name || !p.url)) {
  console.error('usage: node browser.mjs NAME=URL [NAME=URL…]');
  process.exit(2);
}

// Each load's fresh context is a new window of chromium's own, and
// chromium builds a window's omnibox popup (WebUI pages in a renderer of
// their own) as it opens: 0.6 s of CPU per load beside the page's 0.5 s
// (--profile-page), where a user's browser built it once. Left out, for
// every page alike: the figures are the page's.
const NO_BROWSER_UI = '--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,'
  + 'WebUIOmniboxAimPopup,PreloadTopChromeWebUI';

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
    '--disable-component-update', NO_BROWSER_UI],
});

function watchLoaded() {
  window.__benchLoaded = new Promise((resolve) => {
    const check = () => {
      const state = document.body && document.body.dataset.loaded;
      if (state === 'yes' || state === 'error') {
        const at = performance.now();
        // two frames: the one in which the canvases' pixels are presented
        requestAnimationFrame(() => requestAnimationFrame(() => {
          window.__benchDone = { state, at, drawn: performance.now() };
          resolve(window.__benchDone);
        }));
        return true;
      }
      return false;
    };
    const observe = () => {
      if (check()) return;
      const mo = new MutationObserver(() => {
        if (check()) mo.disconnect();
      });
      mo.observe(document.body, { attributes: true, attributeFilter: ['data-loaded'] });
    };
    if (document.body) observe();
    else document.addEventListener('DOMContentLoaded', observe);
  });
}

async function measure({ name, url }, profileDir = null) {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page = await context.newPage();
  const errors = [];
  const requests = [];
  page.on('pageerror', (e) => errors.push(e.message));
  if (process.env.REQUESTS === '1') {
    page.on('requestfinished', (r) => {
      const u = new URL(r.url());
      const t = r.timing();
      if (u.pathname.startsWith('/api/')) {
        requests.push([u.pathname + u.search, t.startTime, t.startTime + t.responseEnd]);
      }
    });
  }
  page.on('response', (r) => {
    if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`);
  });
  await page.addInitScript(watchLoaded);
  try {
    const profile = profileDir ? await startProfile(browser, context, page) : null;
    await page.goto(url, { waitUntil: 'commit', timeout: timeoutMs });
    await page.waitForFunction(() => window.__benchDone, null, { timeout: timeoutMs });
    if (profile) return { page: name, errors, profile: await profile.stop(profileDir, name) };
    const done = await page.evaluate(() => window.__benchDone);
    const navigationStart = await page.evaluate(() => performance.timeOrigin);
    const paints = await page.evaluate(() => Object.fromEntries(
      performance.getEntriesByType('paint').map((e) => [e.name, e.startTime])));
    const plots = await page.evaluate(() => (window.vigilPlots ? Object.keys(window.vigilPlots).length
      : window.naivePlots ? window.naivePlots.length : 0));
    if (done.state !== 'yes') errors.push(`the page says ${done.state}`);
    return {
      page: name,
      first_paint_ms: paints['first-paint'] ?? null,
      first_contentful_paint_ms: paints['first-contentful-paint'] ?? null,
      loaded_ms: done.at,
      drawn_ms: done.drawn,
      plots,
      errors,
      ...(process.env.REQUESTS === '1' ? { requests: requests.sort((a, b) => a[1] - b[1]).map(([path, start, end]) =>
        [path, Math.round(start - navigationStart), Math.round(end - navigationStart)]) } : {}),
    };
  } catch (e) {
    return { page: name, errors: [...errors, String(e.message || e)] };
  } finally {
    await context.close();
  }
}

for (let i = 0; i < loads; i++) {
  for (const p of pages) console.log(JSON.stringify(await measure(p)));
}
if (process.env.PROFILE_DIR) {
  for (const p of pages) console.log(JSON.stringify(await measure(p, process.env.PROFILE_DIR)));
}
await browser.close();
