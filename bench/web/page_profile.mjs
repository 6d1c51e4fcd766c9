// Where a page load's CPU goes in chromium, through the DevTools protocol:
// a trace (the devtools.timeline categories: script, style, layout, paint,
// raster, parsing, GC, per thread) and a JavaScript CPU profile (V8's
// sampling profiler), written where DevTools opens them, and their top
// items as one JSON object. Used by browser.mjs (env PROFILE_DIR).
//
//   const p = await startProfile(browser, context, page);
//   … load the page …
//   const summary = await p.stop(dir, name);
//     → { threads: [[process/thread, busy_ms, cpu_ms]…],
//         main_self: [[event, self_cpu_ms]…],  the page's renderer's main thread
//         js_self: [[function url:line, self_ms]…] }
// (busy: wall time, which on shared cores includes waiting for one; CPU:
// the thread's own time, as the trace gives it)

import fs from 'node:fs';
import path from 'node:path';

const CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame', 'v8', 'v8.execute', 'toplevel', 'blink',
  'loading', 'cc'];
const TOP = 15;

export async function startProfile(browser, context, page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 }); // µs
  await cdp.send('Profiler.start');
  const tracePath = `/tmp/vigil-page-trace-${process.pid}.json`;
  await browser.startTracing(page, { path: tracePath, categories: CATEGORIES });
  return {
    async stop(dir, name) {
      const { profile } = await cdp.send('Profiler.stop');
      await browser.stopTracing();
      fs.mkdirSync(dir, { recursive: true });
      const traceOut = path.join(dir, `${name}.trace.json`);
      fs.renameSync(tracePath, traceOut);
      fs.writeFileSync(path.join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
      const trace = JSON.parse(fs.readFileSync(traceOut, 'utf8'));
      return { ...traceSummary(trace.traceEvents || trace), js_self: jsSelf(profile) };
    },
  };
}

const ms = (us) => Math.round(us / 100) / 10;
const top = (map) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP)
  .map(([k, v]) => [k, ms(v)]);

// Per thread: busy (its outermost events' wall time) and CPU (their thread
// time); on the renderer's main thread, each event name's self time (its
// duration less its children's).
function traceSummary(events) {
  const threadName = new Map();
  const processName = new Map();
  for (const e of events) {
    if (e.ph === 'M' && e.name === 'thread_name') threadName.set(`${e.pid}:${e.tid}`, e.args.name);
    if (e.ph === 'M' && e.name === 'process_name') processName.set(e.pid, e.args.name);
  }
  const byThread = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || typeof e.dur !== 'number') continue;
    const key = `${e.pid}:${e.tid}`;
    if (!byThread.has(key)) byThread.set(key, []);
    byThread.get(key).push(e);
  }
  const busy = new Map();
  const cpu = new Map();
  const mainSelf = new Map();
  for (const [key, list] of byThread) {
    const thread = (threadName.get(key) || 'thread').replace(/\d+$/, '');
    const name = `${processName.get(Number(key.split(':')[0])) || 'process'}/${thread}`;
    list.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
    const stack = [];
    for (const e of list) {
      while (stack.length > 0 && e.ts >= stack[stack.length - 1].ts + stack[stack.length - 1].dur) stack.pop();
      const parent = stack[stack.length - 1];
      if (parent) parent.childCpuUs = (parent.childCpuUs || 0) + (e.tdur ?? e.dur);
      else {
        busy.set(name, (busy.get(name) || 0) + e.dur);
        cpu.set(name, (cpu.get(name) || 0) + (e.tdur ?? e.dur));
      }
      stack.push(e);
    }
    if (name === 'Renderer/CrRendererMain') {
      for (const e of list) {
        mainSelf.set(e.name, (mainSelf.get(e.name) || 0) + (e.tdur ?? e.dur) - (e.childCpuUs || 0));
      }
    }
  }
  return {
    threads: top(busy).map(([thread, busyMs]) => [thread, busyMs, ms(cpu.get(thread))]),
    main_self: top(mainSelf),
  };
}

// Each function's self time from the sampling profile.
function jsSelf(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, i) => {
    const f = nodes.get(id).callFrame;
    const where = f.url ? ` ${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1}` : '';
    const key = `${f.functionName || '(anonymous)'}${where}`;
    self.set(key, (self.get(key) || 0) + (profile.timeDeltas[i] || 0));
  });
  self.delete('(idle)');
  return top(self);
}
