#!/usr/bin/env python3
"""bench-daemon: vigild's CPU time per tick at 100 ms with the default
providers, beside a floor program that only preads the same files at the
same interval (bench/daemon_floor.c) and Debian's collectd at `Interval
0.1` with its equivalent plugins, the three running at the same time.

    daemon_compare.py VIGILD VIGIL PLUGIN_DIR FLOOR [SECONDS [ROUNDS]]

vigild starts first, on the default configuration but for its socket and
capture sink (in a temporary directory); the floor is then given every
/proc and /sys file vigild holds open (read from /proc/PID/fd), each once
even when vigild reads one twice: what the node's statistics cost the
kernel to write, and nothing else. After a warm-up, ROUNDS (default 3)
periods of SECONDS (default 10) are measured: each one's CPU time (every
thread, ended ones included) at the start and the end of the period,
divided by the reads it made (vigild's ticks as `vigil status` counts
them; the floor's and collectd's intervals as the period over 0.1 s). Each
round prints the three figures and the ratios, then the median and the
spread. Where vigild's time goes, over all rounds, comes next: per
provider, per part of the tick (sharing energy, publishing the samples to
each subscriber, draining rings, the reasoners, capture, the outbox), per
ADPI, and what the process spends outside the tick (the main loop), with
the floor's own reads (wall) beside it. Two baselines run beside them in the same
rounds split both programs' CPU: the floor reading only /dev/null (being
woken by a timer at all) and vigild with no provider (its main loop and
an empty tick). Then the figures the machine's
load does not change, taken after the rounds: per thread of each program
its CPU, waiting and wake-ups per tick (schedstat); the pages vigild and
the floor touch in one tick's window (clear_refs and smaps' Referenced);
and, where strace is installed, each program's system calls per tick by
name.

Neither daemon writes its values anywhere: vigild keeps them in memory and
serves them on its socket; collectd loads no write plugin and its
post-cache chain stops every value once it is in collectd's cache.

It exits non-zero only when something failed to run; the goal (at most
100 µs per tick, and at most 1.3 times the floor) is reported, not
enforced. Without collectd it says how to install it and measures vigild
and the floor alone."""
import collections
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench_support import FAILURES, Failed, ensure_running, log_tail, stop, write_config

TICK_S = 0.1
WARM_UP_S = 3.0
GOAL_US = 100.0
GOAL_FLOOR_RATIO = 1.3
COLLECTD_PLUGINS = ["cpu", "memory", "disk", "interface", "load"]
# vigild's default [daemon] providers (core/daemon_keys.c), for
# bench/metrics_compare.py, which names them in its configuration.
PROVIDERS = ["procstat", "meminfo", "loadavg", "diskstats", "netdev", "process", "energy",
             "cpufreq"]
SYSCALL_S = 3.0
BASELINES = ("wake", "vigild-bare")
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
PAGE_WINDOWS = 9


def process_cpu_clock(pid):
    # What clock_getcpuclockid(3) returns for pid (the kernel's
    # MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)): the scheduler's own
    # nanosecond count for the whole process, threads that ended included.
    # /proc/PID/stat has only clock-tick (10 ms) resolution.
    return ((~pid) << 3) | 2


def cpu_ns(pid):
    try:
        return time.clock_gettime_ns(process_cpu_clock(pid))
    except OSError:
        # The same total in clock ticks, where the kernel refuses the clock.
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def cpu_source(pid):
    try:
        time.clock_gettime_ns(process_cpu_clock(pid))
        return "each process's CPU clock (ns, every thread, ended ones included)"
    except OSError:
        return ("utime+stime of /proc/PID/stat (10 ms resolution: "
                "use a longer period for a precise figure)")


def threads(pid):
    """Each thread's scheduler figures: {tid: (name, cpu_ns, wait_ns, runs)}.

    /proc/PID/task/TID/schedstat holds the nanoseconds on a CPU, the
    nanoseconds waiting for one, and the times it was put on a CPU: a
    thread that sleeps between ticks runs once per wake-up, so runs per
    tick counts its wake-ups. A thread that ends between two readings is
    missing from one (the process's CPU clock still counts it)."""
    found = {}
    task_dir = f"/proc/{pid}/task"
    for tid in os.listdir(task_dir):
        try:
            with open(f"{task_dir}/{tid}/schedstat") as stat:
                cpu, wait, runs = (int(v) for v in stat.read().split()[:3])
            with open(f"{task_dir}/{tid}/comm") as comm:
                name = comm.read().strip()
        except (OSError, ValueError):
            continue
        found[int(tid)] = (name, cpu, wait, runs)
    return found


SHARED_LIBRARY = re.compile(r"^lib(?!vigil)[^/]*\.so(\.|$)|^ld-linux")


def pages_touched(pid):
    """Pages the process referenced since its clear_refs, by mapping.

    /proc/PID/clear_refs ("1") clears the accessed bits of its pages; smaps'
    Referenced then counts those touched since. A system library's pages
    are shared with every other process, whose use marks them too: those
    are summed apart and are an upper bound."""
    own, shared = collections.Counter(), collections.Counter()
    name = None
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if not fields[0].endswith(":"):
                name = os.path.basename(fields[5]) if len(fields) > 5 else "[anon]"
                into = shared if SHARED_LIBRARY.match(name) else own
                name = re.sub(r"\.so[.0-9]*$", "", name)
            elif fields[0] == "Referenced:":
                kib = int(fields[1])
                if kib:
                    into[name] += kib * 1024 // PAGE_BYTES
    return own, shared


def count_pages(pids, windows):
    """Per program, the median over WINDOWS windows of one tick each: pages
    touched in its own mappings (total and by mapping) and in the system
    libraries'."""
    found = {name: [] for name in pids}
    for _ in range(windows):
        for pid in pids.values():
            with open(f"/proc/{pid}/clear_refs", "w") as clear:
                clear.write("1")
        time.sleep(TICK_S)
        for name, pid in pids.items():
            found[name].append(pages_touched(pid))
    medians = {}
    for name, windows_found in found.items():
        windows_found.sort(key=lambda w: sum(w[0].values()))
        own, shared = windows_found[len(windows_found) // 2]
        medians[name] = (own, shared)
    return medians


def find_strace():
    return shutil.which("strace")


def count_syscalls(strace, pids, seconds, directory):
    """strace -c -f on each program at once for SECONDS: {name: {syscall: calls}}.

    Run after the measured rounds, since tracing makes every system call
    cost more: the counts, not the time, are what it is for."""
    tracing = []
    for name, pid in pids.items():
        out = os.path.join(directory, f"strace-{name}.txt")
        tracing.append((name, out, subprocess.Popen(
            [strace, "-c", "-f", "-q", "-o", out, "-p", str(pid)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)))
    time.sleep(seconds)
    counts = {}
    for name, out, tracer in tracing:
        tracer.send_signal(signal.SIGINT)
        try:
            _, err = tracer.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            tracer.kill()
            tracer.communicate()
            raise Failed(f"strace on {name} did not stop within 10 s of SIGINT") from None
        calls = {}
        try:
            with open(out) as table:
                for line in table:
                    fields = line.split()
                    # "% time seconds usecs/call calls [errors] syscall"
                    if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
                        calls[fields[-1]] = int(fields[3])
        except OSError:
            pass
        if not calls:
            raise Failed(f"strace -c on {name} counted nothing: {err.decode(errors='replace')}")
        counts[name] = calls
    return counts


def status(vigil, socket):
    answer = subprocess.run([vigil, "status", "--json", "--socket", socket],
                            capture_output=True, text=True, timeout=10)
    if answer.returncode != 0:
        raise Failed(f"vigil status failed ({answer.returncode}): {answer.stderr.strip()}")
    return json.loads(answer.stdout)


def find_collectd():
    # Debian puts it in /usr/sbin, which a user's PATH often lacks.
    return shutil.which("collectd") or shutil.which("collectd", path="/usr/sbin:/sbin")


def collectd_version(collectd):
    text = subprocess.run([collectd, "-h"], capture_output=True, text=True).stdout
    found = re.search(r"^collectd ([^\s,]+)", text, re.MULTILINE)
    return found.group(1) if found else "?"


def collectd_plugins():
    # collectd's cpufreq reads scaling_cur_freq, which a VM without a
    # cpufreq driver lacks (vigild's cpufreq falls back to /proc/cpuinfo).
    if os.path.exists("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq"):
        return COLLECTD_PLUGINS + ["cpufreq"]
    return COLLECTD_PLUGINS


def collectd_conf_head(directory, tick_s):
    """The start of a collectd.conf for a run in `directory`: FQDNLookup
    false and a Hostname (no name lookup at start), its files there, its
    interval. (metrics_compare.py writes one too.)"""
    return (f'Hostname "vigil-bench"\nFQDNLookup false\n'
            f'BaseDir "{os.path.join(directory, "collectd")}"\n'
            f'PIDFile "{os.path.join(directory, "collectd.pid")}"\n'
            f"Interval {tick_s}\n")


def check_collectd_config(collectd, conf):
    """collectd -t: Failed when it rejects `conf`. (metrics_compare.py's
    too.)"""
    test = subprocess.run([collectd, "-t", "-C", conf], capture_output=True, text=True)
    if test.returncode != 0:
        raise Failed(f"collectd -t rejects the configuration:\n{test.stdout}{test.stderr}")


def write_configs(directory):
    socket = os.path.join(directory, "vigild.sock")
    # The default providers, reasoners and capture: only where its files go
    # is changed, so that the run leaves nothing behind.
    vigild_conf = write_config(
        directory, "vigild.conf",
        f"[daemon]\nsocket = {socket}\ntick_ms = {int(TICK_S * 1000)}\n"
        f"[capture]\nsink = {os.path.join(directory, 'capture.jsonl')}\n")
    # The same daemon with no provider: its main loop and the tick's parts
    # (reasoners, capture) with nothing to read or publish.
    write_config(directory, "vigild-bare.conf",
                 f"[daemon]\nsocket = {os.path.join(directory, 'bare.sock')}\n"
                 f"tick_ms = {int(TICK_S * 1000)}\nproviders =\n"
                 f"[capture]\nsink = {os.path.join(directory, 'bare.jsonl')}\n")
    # The post-cache chain's default target stops every value, so that
    # collectd, which has no write plugin, does not log a complaint for each
    # one (which would count against it).
    collectd_conf = write_config(
        directory, "collectd.conf",
        collectd_conf_head(directory, TICK_S)
        + "".join(f"LoadPlugin {p}\n" for p in collectd_plugins())
        + 'PostCacheChain "ReadOnly"\n<Chain "ReadOnly">\n  Target "stop"\n</Chain>\n')
    return socket, vigild_conf, collectd_conf


def not_running_providers(answer):
    """What vigild's status says of each provider that does not run."""
    return [f"  {p['name']}: {p['unavailable']}" for p in answer["providers"] if not p["running"]]


def statistics_files(pid):
    """The /proc and /sys files vigild holds open, each once, in fd order."""
    fd_dir = f"/proc/{pid}/fd"
    found = []
    for fd in sorted(os.listdir(fd_dir), key=int):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target.startswith(("/proc/", "/sys/")) and target not in found:
            found.append(target)
    return found


def start(name, argv, env, log_path, stdout=None):
    with open(log_path, "w") as log:
        return (name, subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                                       stdout=stdout or log, stderr=log), log_path)


def measure(vigild, vigil, plugin_dir, floor, seconds, rounds, collectd, directory):
    socket, vigild_conf, collectd_conf = write_configs(directory)
    logs = {name: os.path.join(directory, name + ".log")
            for name in ("vigild", "floor", "collectd", "wake", "vigild-bare")}
    if collectd:
        check_collectd_config(collectd, collectd_conf)

    env = dict(os.environ, VIGIL_PLUGIN_DIR=plugin_dir)
    env.pop("VIGIL_SOCKET", None)
    env.pop("VIGIL_CONFIG", None)
    env.pop("LD_PRELOAD", None)
    running = []
    floor_out = os.path.join(directory, "floor.out")
    try:
        running.append(start("vigild", [vigild, "--config", vigild_conf, "--foreground"], env,
                             logs["vigild"]))
        started = time.monotonic()
        while True:
            ensure_running(*running[0])
            try:
                first = status(vigil, socket)
                break
            except Failed:
                if time.monotonic() - started > 10:
                    raise Failed(f"vigild did not serve {socket} within 10 s:\n"
                                 + log_tail(logs["vigild"])) from None
                time.sleep(0.05)
        not_running = not_running_providers(first)
        if not_running:
            raise Failed("not every default provider runs in vigild:\n" + "\n".join(not_running))
        files = statistics_files(running[0][1].pid)
        if not files:
            raise Failed("vigild holds no /proc or /sys file open: nothing for the floor to read")
        with open(floor_out, "w") as out:
            running.append(start("floor", [floor, str(int(TICK_S * 1000))] + files, env,
                                 logs["floor"], stdout=out))
        if collectd:
            running.append(start("collectd", [collectd, "-f", "-C", collectd_conf], env,
                                 logs["collectd"]))
        # The baselines that split vigild's time: being woken by a timer
        # at all (the floor reading only /dev/null), and vigild with no
        # provider.
        running.append(start("wake", [floor, str(int(TICK_S * 1000)), "/dev/null"], env,
                             logs["wake"], stdout=subprocess.DEVNULL))
        running.append(start("vigild-bare", [vigild, "--config",
                                             os.path.join(directory, "vigild-bare.conf"),
                                             "--foreground"], env, logs["vigild-bare"]))
        time.sleep(WARM_UP_S)

        # vigild's status is asked before the first CPU reading and after
        # the last of each round, so that answering it falls outside the
        # measured period; its tick count may be off by one at each end.
        samples = []
        for _ in range(rounds):
            for name, process, log in running:
                ensure_running(name, process, log)
            before = status(vigil, socket)
            threads_before = {name: threads(process.pid) for name, process, _ in running}
            cpu_before = {name: cpu_ns(process.pid) for name, process, _ in running}
            begin = time.monotonic()
            time.sleep(seconds)
            cpu_after = {name: cpu_ns(process.pid) for name, process, _ in running}
            end = time.monotonic()
            threads_after = {name: threads(process.pid) for name, process, _ in running}
            after = status(vigil, socket)
            samples.append((before, after, cpu_before, cpu_after, end - begin,
                            threads_before, threads_after))
        for name, process, log in running:
            ensure_running(name, process, log)
        source = cpu_source(running[0][1].pid)
        pages = count_pages({name: process.pid for name, process, _ in running if
                             name in ("vigild", "floor")}, PAGE_WINDOWS)
        strace = find_strace()
        syscalls = None
        if strace:
            ticks_before = status(vigil, socket)["daemon"]["ticks"]
            syscalls = count_syscalls(strace, {name: process.pid for name, process, _ in running
                                               if name not in BASELINES},
                                      SYSCALL_S, directory)
            ticks = status(vigil, socket)["daemon"]["ticks"] - ticks_before
            syscalls = (syscalls, ticks)
    except BaseException:
        # What went wrong first is what is reported; how the programs
        # stopped after it goes to stderr.
        for name, process, log in running:
            try:
                stop(name, process, log)
            except Failed as failure:
                print(f"bench-daemon: {failure}", file=sys.stderr)
        raise
    errors = []
    for name, process, log in running:
        try:
            stop(name, process, log)
        except Failed as failure:
            errors.append(str(failure))
    if errors:
        raise Failed("\n".join(errors))
    with open(floor_out) as out:
        floor_said = out.read().strip()
    return samples, source, files, floor_said, syscalls, pages


def per_tick(cost0, cost1, ticks):
    """µs per tick over the period, from two of vigild's cost objects."""
    if ticks <= 0 or cost0.get("total") is None or cost1.get("total") is None:
        return float("nan")
    return (cost1["total"] - cost0["total"]) / ticks


def legacy_total(cost, count):
    # Provider and tick costs carry mean and count: their total is both.
    return {"total": cost["mean"] * count if cost["mean"] is not None else None}


def by_name(items):
    return {item["name"] if "level" not in item else item["level"] + " " + item["name"]: item
            for item in items}


def spread(values):
    return f"median {statistics.median(values):7.1f}  (min {min(values):.1f}, max {max(values):.1f})"


def thread_figures(samples, name, reads):
    """Per thread over all rounds: (name, tid, cpu µs, wait µs, runs) per read."""
    totals = {}
    for sample in samples:
        before, after = sample[5][name], sample[6][name]
        for tid, (comm, cpu, wait, runs) in after.items():
            if tid not in before:
                continue
            _, cpu0, wait0, runs0 = before[tid]
            t = totals.setdefault(tid, [comm, 0, 0, 0])
            t[1] += cpu - cpu0
            t[2] += wait - wait0
            t[3] += runs - runs0
    return [(comm, tid, cpu / 1e3 / reads, wait / 1e3 / reads, runs / reads)
            for tid, (comm, cpu, wait, runs) in sorted(totals.items())]


def print_threads(samples, collectd):
    ticks = sum(s[1]["daemon"]["ticks"] - s[0]["daemon"]["ticks"] for s in samples)
    intervals = sum(s[4] for s in samples) / TICK_S
    print("per thread, per tick over all rounds (/proc/PID/task/*/schedstat; runs = times put "
          "on a CPU, a sleeping thread's wake-ups):")
    print(f"  {'program':<9} {'thread':<22} {'CPU µs':>8} {'waiting µs':>11} {'runs':>6}")
    for name, reads in (("vigild", ticks), ("floor", intervals)) + (
            (("collectd", intervals),) if collectd else ()):
        for comm, tid, cpu, wait, runs in thread_figures(samples, name, reads):
            print(f"  {name:<9} {comm + ' (' + str(tid) + ')':<22} {cpu:8.1f} {wait:11.1f} "
                  f"{runs:6.2f}")


def print_syscalls(counts, ticks):
    """System calls per tick of each program, by name (strace -c -f)."""
    if ticks <= 0:
        raise Failed("vigild made no tick while its system calls were counted")
    intervals = SYSCALL_S / TICK_S
    print(f"system calls per tick (strace -c -f, {SYSCALL_S:.0f} s after the rounds; vigild's "
          f"{ticks} ticks, the others' {intervals:.0f} intervals):")
    for name, calls in counts.items():
        reads = ticks if name == "vigild" else intervals
        total = sum(calls.values()) / reads
        named = ", ".join(f"{call} {n / reads:.2f}"
                          for call, n in sorted(calls.items(), key=lambda c: -c[1]))
        print(f"  {name:<9} {total:6.2f}   {named}")


def print_pages(pages):
    print(f"pages touched in one tick's window (clear_refs, then smaps' Referenced; median of "
          f"{PAGE_WINDOWS})")
    for name, (own, shared) in pages.items():
        mappings = ", ".join(f"{m} {n}" for m, n in own.most_common())
        libraries = ", ".join(f"{m} {n}" for m, n in shared.most_common(6))
        print(f"  {name:<9} own {sum(own.values()):4d} ({mappings})")
        print(f"  {'':<9} system libraries {sum(shared.values()):4d} ({libraries}, …: an upper "
              "bound, other processes mark them too)")


def print_split(samples):
    """vigild's and the floor's CPU per tick split with the baselines run
    beside them: what being woken costs any program, what the floor's
    reads add, what vigild's main loop and empty tick add, and what its
    providers and all they feed add. Medians of the rounds' differences."""
    rows = []
    for _, _, cpu0, cpu1, period, _, _ in samples:
        intervals = period / TICK_S
        rows.append({name: (cpu1[name] - cpu0[name]) / 1e3 / intervals
                     for name in ("vigild", "floor") + BASELINES})
    parts = (
        ("being woken (the floor reading /dev/null)", lambda r: r["wake"]),
        ("the floor's reads", lambda r: r["floor"] - r["wake"]),
        ("vigild's main loop and empty tick", lambda r: r["vigild-bare"] - r["wake"]),
        ("vigild's providers and what they feed", lambda r: r["vigild"] - r["vigild-bare"]),
        ("vigild above the floor", lambda r: r["vigild"] - r["floor"]),
    )
    print("vigild and the floor split by the baselines run beside them, CPU µs per 100 ms "
          "(vigild-bare: no provider; medians of the rounds):")
    for label, figure in parts:
        print(f"  {label:<42} {spread([figure(r) for r in rows])}")


def report(samples, source, files, floor_said, syscalls, pages, collectd, version, seconds):
    print(f"CPU time from {source}; {len(samples)} rounds of {seconds:.0f} s after "
          f"{WARM_UP_S:.0f} s of warm-up")
    print(f"the floor reads {len(files)} files: {' '.join(files)}")
    header = f"{'round':>5} {'vigild µs':>10} {'floor µs':>9} {'vigild/floor':>13}"
    if collectd:
        header += f" {'collectd µs':>12} {'vigild/collectd':>16}"
    print(header + "   (CPU per tick)")
    rows = []
    for i, (before, after, cpu0, cpu1, period, _, _) in enumerate(samples, 1):
        ticks = after["daemon"]["ticks"] - before["daemon"]["ticks"]
        if ticks <= 0:
            raise Failed(f"vigild made no tick in {period:.1f} s")
        intervals = period / TICK_S
        row = {"vigild": (cpu1["vigild"] - cpu0["vigild"]) / 1e3 / ticks,
               "floor": (cpu1["floor"] - cpu0["floor"]) / 1e3 / intervals}
        line = (f"{i:5d} {row['vigild']:10.1f} {row['floor']:9.1f} "
                f"{row['vigild'] / row['floor']:13.2f}")
        if collectd:
            row["collectd"] = (cpu1["collectd"] - cpu0["collectd"]) / 1e3 / intervals
            line += f" {row['collectd']:12.1f} {row['vigild'] / row['collectd']:16.3f}"
        rows.append(row)
        print(line)
    vigild_us = [r["vigild"] for r in rows]
    floor_ratio = [r["vigild"] / r["floor"] for r in rows]
    print(f"vigild   µs per tick      {spread(vigild_us)}")
    print(f"floor    µs per tick      {spread([r['floor'] for r in rows])}   ({floor_said})")
    print(f"vigild / floor            {spread(floor_ratio)}")
    if collectd:
        print(f"collectd µs per interval  {spread([r['collectd'] for r in rows])}   "
              f"(collectd {version}: {', '.join(collectd_plugins())}; no equivalent of the "
              "energy estimate or the per-process provider)")
        print(f"vigild / collectd         {spread([r['vigild'] / r['collectd'] for r in rows])}")

    before, after = samples[0][0], samples[-1][1]
    ticks = after["daemon"]["ticks"] - before["daemon"]["ticks"]
    cpu_us = sum((s[3]["vigild"] - s[2]["vigild"]) / 1e3 for s in samples)
    measured_ticks = sum(s[1]["daemon"]["ticks"] - s[0]["daemon"]["ticks"] for s in samples)
    print(f"where vigild's time goes, µs per tick over all rounds' {ticks} ticks "
          "(wall time as vigild measures it):")
    d0, d1 = before["daemon"], after["daemon"]
    tick_us = per_tick(legacy_total(d0["tick_cost_us"], d0["ticks"]),
                       legacy_total(d1["tick_cost_us"], d1["ticks"]), ticks)
    print(f"  {'tick':<28} {tick_us:7.1f}")
    p0, p1 = by_name(before["providers"]), by_name(after["providers"])
    for name, p in p1.items():
        if not p["running"]:
            continue
        reads = p["reads"] - p0[name]["reads"]
        errors = p["read_errors"] - p0[name]["read_errors"]
        us = per_tick(legacy_total(p0[name]["cost_us"], p0[name]["reads"]),
                      legacy_total(p["cost_us"], p["reads"]), ticks)
        note = f"   {errors} failed: {p['last_error']}" if errors else ""
        print(f"    provider {name:<19} {us:7.1f}   {reads} reads{note}")
    if "tick_costs" in after:
        c0, c1 = before["tick_costs"], after["tick_costs"]
        for key, label in (("parts", "part"), ("subscribers", "publish to"),
                           ("adpis", "adpi")):
            items0 = by_name(c0[key])
            for name, item in by_name(c1[key]).items():
                old = items0.get(name)
                if key == "adpis":
                    figures = ", ".join(
                        f"{what} {per_tick(old[what] if old else {'total': 0}, item[what], ticks):.1f}"
                        for what in ("samples", "activities", "cycle"))
                    print(f"    {label} {name:<23} {figures}")
                else:
                    us = per_tick(old["cost_us"] if old else {"total": 0}, item["cost_us"], ticks)
                    print(f"  {label} {name:<{27 - len(label)}} {us:7.1f}")
    outside_us = cpu_us / measured_ticks - tick_us
    print(f"  {'outside the tick':<28} {outside_us:7.1f}   "
          "(vigild's CPU per tick less the tick: waking up, the main loop, status answers)")
    floor_reads = re.search(r"ticks (\d+) .* read_ns (\d+)", floor_said)
    if floor_reads and int(floor_reads.group(1)) > 0:
        floor_read_us = int(floor_reads.group(2)) / 1e3 / int(floor_reads.group(1))
        print(f"  {'the floor: its reads':<28} {floor_read_us:7.1f}   (wall, from its timer's read "
              "to its last file's, over its whole run: beside vigild's tick on a quiet machine "
              "only, since preemption lands in both)")
    print_split(samples)
    print_threads(samples, collectd)
    print_pages(pages)
    if syscalls is not None:
        print_syscalls(*syscalls)
    not_running = not_running_providers(after)
    if not_running:
        raise Failed("a provider stopped running during the period:\n" + "\n".join(not_running))

    median_us = statistics.median(vigild_us)
    median_ratio = statistics.median(floor_ratio)
    under = median_us <= GOAL_US
    near_floor = median_ratio <= GOAL_FLOOR_RATIO
    print(f"goal: <= {GOAL_US:.0f} µs per tick: {'met' if under else 'NOT met'} "
          f"({median_us:.1f} µs); <= {GOAL_FLOOR_RATIO}x the floor: "
          f"{'met' if near_floor else 'NOT met'} ({median_ratio:.2f}x); both: "
          f"{'met' if under and near_floor else 'NOT met'} (medians of {len(rows)} rounds)")


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    vigild, vigil, plugin_dir, floor = sys.argv[1:5]
    seconds = float(sys.argv[5]) if len(sys.argv) > 5 else 10.0
    rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    if seconds <= 0 or rounds < 1:
        sys.exit(f"bench-daemon: SECONDS must be above 0 and ROUNDS at least 1, "
                 f"not {seconds} and {rounds}")
    # A meson timeout or a kill ends the run as an exception, on whose way
    # out every program is stopped and the temporary directory removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench-daemon: terminated"))

    collectd = find_collectd()
    version = collectd_version(collectd) if collectd else None
    print(f"bench-daemon: a read every {TICK_S * 1000:.0f} ms; vigild with its default "
          "providers; the floor (only preads of the files vigild reads)"
          + (f"; collectd {version} with {', '.join(collectd_plugins())}" if collectd else ""))
    if collectd:
        print("neither daemon writes: vigild keeps its values in memory, collectd in its cache "
              "(no write plugin; its post-cache chain stops each value)")
    else:
        print("collectd is not installed: measuring vigild and the floor alone. To compare, "
              "install it (`sudo apt-get install --no-install-recommends collectd-core`, or "
              "tools/bootstrap)")
    try:
        with tempfile.TemporaryDirectory(prefix="vigil-bench-daemon-") as directory:
            samples, source, files, floor_said, syscalls, pages = measure(
                vigild, vigil, plugin_dir, floor, seconds, rounds, collectd, directory)
            report(samples, source, files, floor_said, syscalls, pages, collectd, version,
                   seconds)
    except FAILURES as failure:
        print(f"bench-daemon: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
