#!/usr/bin/env python3
"""bench-daemon: vigild's CPU time per tick at 100 ms with every provider
on, beside Debian's collectd at `Interval 0.1` with its cpu, memory, disk,
interface and load plugins, both running at the same time.

    daemon_compare.py VIGILD VIGIL PLUGIN_DIR [SECONDS]

It starts both in the foreground, lets them warm up, then takes each one's
CPU time (every thread, ended ones included) at the start and the end of
SECONDS (default 30) and divides it by the reads each made in between:
vigild's ticks as `vigil status` counts them, collectd's intervals as the
period over 0.1 s. It prints both, their ratio and vigild's own cost per
provider, then stops both with SIGTERM and checks they exited.

Neither writes its values anywhere: vigild keeps them in memory and serves
them on its socket; collectd loads no write plugin and its post-cache chain
stops every value once it is in collectd's cache.

It exits non-zero only when something failed to run; the goal (at most
100 µs per tick, and at most half of collectd's) is reported, not enforced.
Without collectd it says how to install it and measures vigild alone."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PROVIDERS = ["procstat", "meminfo", "loadavg", "diskstats", "netdev", "process", "energy"]
TICK_S = 0.1
WARM_UP_S = 2.0
GOAL_US = 100.0
GOAL_RATIO = 0.5


class Failed(Exception):
    """Something the benchmark needs did not run: the message says what."""


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


def status(vigil, socket):
    answer = subprocess.run([vigil, "status", "--json", "--socket", socket],
                            capture_output=True, text=True, timeout=10)
    if answer.returncode != 0:
        raise Failed(f"vigil status failed ({answer.returncode}): {answer.stderr.strip()}")
    return json.loads(answer.stdout)


def log_tail(path, lines=20):
    try:
        with open(path, errors="replace") as log:
            return "".join(log.readlines()[-lines:])
    except OSError:
        return ""


def ensure_running(name, process, log):
    if process.poll() is not None:
        raise Failed(f"{name} exited with status {process.returncode} during the run:\n"
                     + log_tail(log))


def stop(name, process, log):
    """SIGTERM, then a wait; an exit status other than 0 is a failure."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise Failed(f"{name} did not stop within 10 s of SIGTERM (killed):\n" + log_tail(log))
    if process.returncode != 0:
        raise Failed(f"{name} exited with status {process.returncode} after SIGTERM:\n"
                     + log_tail(log))


def find_collectd():
    # Debian puts it in /usr/sbin, which a user's PATH often lacks.
    return shutil.which("collectd") or shutil.which("collectd", path="/usr/sbin:/sbin")


def collectd_version(collectd):
    text = subprocess.run([collectd, "-h"], capture_output=True, text=True).stdout
    found = re.search(r"^collectd ([^\s,]+)", text, re.MULTILINE)
    return found.group(1) if found else "?"


def write_configs(directory):
    socket = os.path.join(directory, "vigild.sock")
    vigild_conf = os.path.join(directory, "vigild.conf")
    with open(vigild_conf, "w") as conf:
        conf.write(f"[daemon]\nsocket = {socket}\ntick_ms = {int(TICK_S * 1000)}\n"
                   f"providers = {';'.join(PROVIDERS)}\n")
    collectd_conf = os.path.join(directory, "collectd.conf")
    with open(collectd_conf, "w") as conf:
        # FQDNLookup false and a Hostname: no name lookup at start.
        # The post-cache chain's default target stops every value, so that
        # collectd, which has no write plugin, does not log a complaint
        # for each one (which would count against it).
        conf.write(f'Hostname "vigil-bench"\nFQDNLookup false\n'
                   f'BaseDir "{os.path.join(directory, "collectd")}"\n'
                   f'PIDFile "{os.path.join(directory, "collectd.pid")}"\n'
                   f"Interval {TICK_S}\n"
                   "LoadPlugin cpu\nLoadPlugin memory\nLoadPlugin disk\n"
                   "LoadPlugin interface\nLoadPlugin load\n"
                   'PostCacheChain "ReadOnly"\n<Chain "ReadOnly">\n  Target "stop"\n</Chain>\n')
    return socket, vigild_conf, collectd_conf


def not_running_providers(answer):
    """What vigild's status says of each provider that does not run."""
    listed = {p["name"]: p for p in answer["providers"]}
    reasons = [f"  {name}: {listed[name]['unavailable']}" for name in PROVIDERS
               if name in listed and not listed[name]["running"]]
    return reasons + [f"  {name}: not in vigild's status" for name in PROVIDERS
                      if name not in listed]


def period_mean(cost0, count0, cost1, count1):
    """The mean over the period from vigild's means since its start."""
    if count1 <= count0:
        return float("nan")
    return (cost1["mean"] * count1 - cost0["mean"] * count0) / (count1 - count0)


def measure(vigild, vigil, plugin_dir, seconds, collectd, directory):
    socket, vigild_conf, collectd_conf = write_configs(directory)
    vigild_log = os.path.join(directory, "vigild.log")
    collectd_log = os.path.join(directory, "collectd.log")
    if collectd:
        test = subprocess.run([collectd, "-t", "-C", collectd_conf], capture_output=True,
                              text=True)
        if test.returncode != 0:
            raise Failed(f"collectd -t rejects the configuration:\n{test.stdout}{test.stderr}")

    env = dict(os.environ, VIGIL_PLUGIN_DIR=plugin_dir)
    env.pop("VIGIL_SOCKET", None)
    env.pop("LD_PRELOAD", None)
    running = []
    try:
        # Started together, so that the machine's noise falls on both alike.
        with open(vigild_log, "w") as log:
            running.append(("vigild", subprocess.Popen(
                [vigild, "--config", vigild_conf, "--foreground"], env=env,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log), vigild_log))
        if collectd:
            with open(collectd_log, "w") as log:
                running.append(("collectd", subprocess.Popen(
                    [collectd, "-f", "-C", collectd_conf], env=env,
                    stdin=subprocess.DEVNULL, stdout=log, stderr=log), collectd_log))
        started = time.monotonic()

        while True:
            for name, process, log in running:
                ensure_running(name, process, log)
            try:
                first = status(vigil, socket)
                break
            except Failed:
                if time.monotonic() - started > 10:
                    raise Failed(f"vigild did not serve {socket} within 10 s:\n"
                                 + log_tail(vigild_log)) from None
                time.sleep(0.05)
        not_running = not_running_providers(first)
        if not_running:
            raise Failed("not every provider runs in vigild:\n" + "\n".join(not_running))
        time.sleep(max(0.0, WARM_UP_S - (time.monotonic() - started)))

        # vigild's status is asked before the first CPU reading and after
        # the last, so that answering it falls outside the measured period;
        # its tick count may be off by one at each end for that.
        for name, process, log in running:
            ensure_running(name, process, log)
        before = status(vigil, socket)
        cpu_before = {name: cpu_ns(process.pid) for name, process, _ in running}
        begin = time.monotonic()
        time.sleep(seconds)
        cpu_after = {name: cpu_ns(process.pid) for name, process, _ in running}
        end = time.monotonic()
        after = status(vigil, socket)
        for name, process, log in running:
            ensure_running(name, process, log)
        source = cpu_source(running[0][1].pid)
    except BaseException:
        # What went wrong first is what is reported; how the daemons
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
    return before, after, cpu_before, cpu_after, end - begin, source


def report(before, after, cpu_before, cpu_after, period, source, collectd, version):
    ticks = after["daemon"]["ticks"] - before["daemon"]["ticks"]
    missed = after["daemon"]["missed_ticks"] - before["daemon"]["missed_ticks"]
    if ticks <= 0:
        raise Failed(f"vigild made no tick in {period:.1f} s")
    vigild_us = (cpu_after["vigild"] - cpu_before["vigild"]) / 1e3 / ticks
    print(f"CPU time from {source}; {period:.1f} s measured after {WARM_UP_S:.0f} s of warm-up")
    print(f"{'':<20} {'CPU ms':>9} {'reads':>7} {'µs per read':>12}")
    print(f"{'vigild':<20} {(cpu_after['vigild'] - cpu_before['vigild']) / 1e6:9.1f} "
          f"{ticks:7d} {vigild_us:12.1f}   ticks counted by vigild, {missed} missed")
    collectd_us = None
    if collectd:
        intervals = period / TICK_S
        collectd_us = (cpu_after["collectd"] - cpu_before["collectd"]) / 1e3 / intervals
        print(f"{'collectd ' + version:<20} "
              f"{(cpu_after['collectd'] - cpu_before['collectd']) / 1e6:9.1f} "
              f"{intervals:7.0f} {collectd_us:12.1f}   intervals: the period / {TICK_S} s")
        print(f"ratio vigild/collectd: {vigild_us / collectd_us:.3f}")

    print("vigild's own figures over the period (wall time per read, as it measures it):")
    tick0, tick1 = before["daemon"], after["daemon"]
    tick_mean = period_mean(tick0["tick_cost_us"], tick0["ticks"],
                            tick1["tick_cost_us"], tick1["ticks"])
    print(f"  {'tick':<10} {tick_mean:7.1f} µs   (max since the start "
          f"{tick1['tick_cost_us']['max']:.1f} µs)")
    for p0, p1 in zip(before["providers"], after["providers"]):
        reads = p1["reads"] - p0["reads"]
        errors = p1["read_errors"] - p0["read_errors"]
        mean = period_mean(p0["cost_us"], p0["reads"], p1["cost_us"], p1["reads"])
        note = f"   {errors} failed: {p1['last_error']}" if errors else ""
        print(f"  {p1['name']:<10} {mean:7.1f} µs   {reads} reads{note}")
    not_running = not_running_providers(after)
    if not_running:
        raise Failed("a provider stopped running during the period:\n" + "\n".join(not_running))

    under = vigild_us <= GOAL_US
    goal = (f"goal: <= {GOAL_US:.0f} µs per tick: {'met' if under else 'NOT met'} "
            f"({vigild_us:.1f} µs)")
    if collectd_us is None:
        print(goal + "; against collectd: not measured")
        return
    ratio = vigild_us / collectd_us
    print(goal + f"; <= {GOAL_RATIO}x collectd's: {'met' if ratio <= GOAL_RATIO else 'NOT met'} "
          f"({ratio:.2f}x); both: {'met' if under and ratio <= GOAL_RATIO else 'NOT met'}")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    vigild, vigil, plugin_dir = sys.argv[1:4]
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 30.0
    # A meson timeout or a kill ends the run as an exception, on whose way
    # out both daemons are stopped and the temporary directory removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench-daemon: terminated"))

    collectd = find_collectd()
    version = collectd_version(collectd) if collectd else None
    print(f"bench-daemon: a read every {TICK_S * 1000:.0f} ms; vigild with "
          f"{', '.join(PROVIDERS)}"
          + (f"; collectd {version} with cpu, memory, disk, interface, load" if collectd else ""))
    if collectd:
        print("neither writes: vigild keeps its values in memory, collectd in its cache "
              "(no write plugin; its post-cache chain stops each value)")
    else:
        print("collectd is not installed: measuring vigild alone. To compare, install it "
              "(`sudo apt-get install --no-install-recommends collectd-core`, or tools/bootstrap)")
    try:
        with tempfile.TemporaryDirectory(prefix="vigil-bench-daemon-") as directory:
            figures = measure(vigild, vigil, plugin_dir, seconds, collectd, directory)
            report(*figures, collectd, version)
    except (Failed, OSError, subprocess.SubprocessError, ValueError, KeyError) as failure:
        print(f"bench-daemon: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
