#!/usr/bin/env python3
"""bench-metrics: what a Prometheus scrape costs vigild's /metrics, beside
collectd's write_prometheus plugin, both running at the same time.

    metrics_compare.py VIGILD PLUGIN_DIR [SCRAPES]

vigild runs with every provider at a 100 ms tick and `[metrics] listen`;
collectd with its cpu, memory, disk, interface and load plugins at
`Interval 0.1` (vigild's tick) and write_prometheus; each on a free
loopback port, in the foreground. After a warm-up, both are left idle for
about as long as the scrapes will take, then scraped SCRAPES times each
(default 500), alternately, over one keep-alive connection each, with the
headers Prometheus sends. Per scrape it prints the client's wall time,
the server's CPU time (each process's CPU clock over the scrapes less its
idle rate over the idle period times the scrapes' period, so that its
background reads are not counted), the response's bytes and samples
(lines that are not comments), both side by side and the ratio
vigild/collectd. Every response must parse; vigild's last one and
collectd's go through `promtool check metrics` where it is installed.
It stops both with SIGTERM and checks they exited.

It exits non-zero only when something failed to run; no figure is a goal.
Without collectd's write_prometheus (or the libraries it needs) it says
what to install and measures vigild alone."""
import gzip
import http.client
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from bench_support import FAILURES, Failed, ensure_running, free_port, log_tail, stop, write_config
from daemon_compare import (PROVIDERS, check_collectd_config, collectd_conf_head, collectd_version,
                            cpu_ns, cpu_source, find_collectd)

TICK_S = 0.1
WARM_UP_S = 2.0
WARM_UP_SCRAPES = 50
COLLECTD_PLUGIN_DIR = "/usr/lib/collectd"
# What Prometheus 2.x sends with each scrape (scrape/scrape.go).
SCRAPE_HEADERS = {
    "Accept": "application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
              "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    "Accept-Encoding": "gzip",
    "User-Agent": "Prometheus/2.42.0",
    "X-Prometheus-Scrape-Timeout-Seconds": "10",
}
# The node figures each must serve for the comparison to mean anything.
NEEDED = {
    "vigild": ["vigil_node_cpu_seconds_total", "vigil_node_memory_used_bytes",
               "vigil_node_disk_read_bytes_total", "vigil_node_network_received_bytes_total"],
    "collectd": ["collectd_cpu_total", "collectd_memory", "collectd_disk_disk_octets_read_total",
                 "collectd_interface_if_octets_rx_total", "collectd_load_shortterm"],
}
# Packages of the libraries write_prometheus.so links (Debian 12).
LIBRARY_PACKAGES = {"libmicrohttpd.so.12": "libmicrohttpd12",
                    "libprotobuf-c.so.1": "libprotobuf-c1"}

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)'
                    r'(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*",?)*\})?'
                    r' (\S+)( -?[0-9.e+]+)?$')


def write_prometheus_missing():
    """Why collectd cannot load write_prometheus here, or None."""
    plugin = os.path.join(COLLECTD_PLUGIN_DIR, "write_prometheus.so")
    if not os.path.exists(plugin):
        return f"{plugin} does not exist (package collectd-core)"
    ldd = subprocess.run(["ldd", plugin], capture_output=True, text=True)
    missing = [line.split()[0] for line in ldd.stdout.splitlines() if "not found" in line]
    if missing:
        packages = " ".join(LIBRARY_PACKAGES.get(m, "?") for m in missing)
        return (f"{plugin} needs {', '.join(missing)}: `sudo apt-get install "
                f"--no-install-recommends {packages}`, or tools/bootstrap")
    return None


def write_configs(directory, vigild_port, collectd_port):
    vigild_conf = write_config(
        directory, "vigild.conf",
        f"[daemon]\nsocket = {os.path.join(directory, 'vigild.sock')}\n"
        f"tick_ms = {int(TICK_S * 1000)}\nproviders = {';'.join(PROVIDERS)}\n"
        f"[metrics]\nlisten = 127.0.0.1:{vigild_port}\n")
    collectd_conf = write_config(
        directory, "collectd.conf",
        collectd_conf_head(directory, TICK_S)
        + "LoadPlugin cpu\nLoadPlugin memory\nLoadPlugin disk\n"
        "LoadPlugin interface\nLoadPlugin load\nLoadPlugin write_prometheus\n"
        f'<Plugin write_prometheus>\n  Host "127.0.0.1"\n  Port "{collectd_port}"\n'
        "</Plugin>\n")
    return vigild_conf, collectd_conf


class Server:
    """One running exporter, its keep-alive connection and its figures."""

    def __init__(self, name, process, log, port):
        self.name, self.process, self.log, self.port = name, process, log, port
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        self.connections = 0
        self.sock = None
        self.wall_us = []
        self.wire_bytes = []
        self.text_bytes = []
        self.samples = []
        self.content_type = self.content_encoding = None
        self.last_text = ""

    def scrape(self):
        """One GET /metrics; returns the text, records the figures."""
        begin = time.perf_counter_ns()
        self.connection.request("GET", "/metrics", headers=SCRAPE_HEADERS)
        response = self.connection.getresponse()
        body = response.read()
        wall_ns = time.perf_counter_ns() - begin
        if self.connection.sock is not self.sock:
            self.sock = self.connection.sock
            self.connections += 1
        if response.status != 200:
            raise Failed(f"{self.name}: GET /metrics answered {response.status} "
                         f"{response.reason}")
        self.content_type = response.getheader("Content-Type")
        self.content_encoding = response.getheader("Content-Encoding")
        text = (gzip.decompress(body) if self.content_encoding == "gzip" else body).decode()
        self.wall_us.append(wall_ns / 1e3)
        self.wire_bytes.append(len(body))
        self.text_bytes.append(len(text))
        self.samples.append(check_text(self.name, text, self.content_type))
        self.last_text = text
        return text

    def scrape_text_004(self):
        """The text 0.0.4 form, which promtool reads as it is meant: it
        takes an OpenMetrics counter's HELP, given for the family name,
        for a metric without help text."""
        self.connection.request("GET", "/metrics",
                                headers={"Accept": "text/plain;version=0.0.4"})
        response = self.connection.getresponse()
        text = response.read().decode()
        if response.status != 200:
            raise Failed(f"{self.name}: GET /metrics (text 0.0.4) answered {response.status}")
        check_text(self.name, text, response.getheader("Content-Type"))
        return text

    def forget(self):
        """Drop the warm-up's figures."""
        self.wall_us, self.wire_bytes, self.text_bytes, self.samples = [], [], [], []
        self.connections = 1 if self.connection.sock else 0


def check_text(name, text, content_type):
    """The number of samples; a line that is not a comment, blank or a sample fails."""
    samples = 0
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, 1):
        if line.startswith("#") or not line.strip():
            continue
        found = SAMPLE.match(line)
        if not found:
            raise Failed(f"{name}: line {number} of /metrics is not a sample: {line!r}")
        try:
            float(found.group(3))
        except ValueError:
            raise Failed(f"{name}: line {number} of /metrics has no number: {line!r}") from None
        samples += 1
    if content_type and content_type.startswith("application/openmetrics-text") \
            and (not lines or lines[-1] != "# EOF"):
        raise Failed(f"{name}: OpenMetrics text without '# EOF' at its end")
    return samples


def check_needed(name, text):
    missing = [m for m in NEEDED[name] if not re.search(rf"^{m}[{{ ]", text, re.MULTILINE)]
    if missing:
        raise Failed(f"{name} serves no {', '.join(missing)}: a source does not run")


def promtool_check(name, text):
    """promtool's verdict on a response, or None without promtool."""
    promtool = shutil.which("promtool")
    if not promtool:
        return None
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                             text=True, timeout=30)
    findings = (checked.stdout + checked.stderr).strip()
    if "error while linting" in findings:
        raise Failed(f"promtool cannot parse {name}'s /metrics:\n{findings}")
    return "clean" if checked.returncode == 0 and not findings else \
        "lint findings: " + "; ".join(findings.splitlines())


def wait_served(server, started):
    while True:
        ensure_running(server.name, server.process, server.log)
        try:
            server.scrape()
            return
        except (OSError, http.client.HTTPException):
            server.connection.close()
            if time.monotonic() - started > 10:
                raise Failed(f"{server.name} did not serve 127.0.0.1:{server.port}/metrics "
                             "within 10 s:\n" + log_tail(server.log)) from None
            time.sleep(0.05)


def measure(vigild, plugin_dir, scrapes, collectd, directory):
    ports = {"vigild": free_port(), "collectd": free_port()}
    vigild_conf, collectd_conf = write_configs(directory, ports["vigild"], ports["collectd"])
    if collectd:
        check_collectd_config(collectd, collectd_conf)
    env = dict(os.environ, VIGIL_PLUGIN_DIR=plugin_dir)
    env.pop("VIGIL_SOCKET", None)
    env.pop("LD_PRELOAD", None)
    commands = [("vigild", [vigild, "--config", vigild_conf, "--foreground"])]
    if collectd:
        commands.append(("collectd", [collectd, "-f", "-C", collectd_conf]))
    servers = []
    try:
        # Started together, so that the machine's noise falls on both alike.
        for name, command in commands:
            log_path = os.path.join(directory, name + ".log")
            with open(log_path, "w") as log:
                process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                                           stdout=log, stderr=log)
            servers.append(Server(name, process, log_path, ports[name]))
        started = time.monotonic()
        for server in servers:
            wait_served(server, started)
        time.sleep(max(0.0, WARM_UP_S - (time.monotonic() - started)))

        warm_begin = time.monotonic()
        for _ in range(WARM_UP_SCRAPES):
            for server in servers:
                server.scrape()
        idle_s = (time.monotonic() - warm_begin) * scrapes / WARM_UP_SCRAPES
        for server in servers:
            check_needed(server.name, server.last_text)
            server.forget()

        # Idle first, for about as long as the scrapes will take: each
        # one's background cost (its ticks or intervals) per second.
        idle0 = {s.name: cpu_ns(s.process.pid) for s in servers}
        idle_begin = time.monotonic()
        time.sleep(idle_s)
        idle1 = {s.name: cpu_ns(s.process.pid) for s in servers}
        idle_end = time.monotonic()

        # Alternately, each one first half the time, so that neither always
        # follows the other's scrape.
        cpu0 = {s.name: cpu_ns(s.process.pid) for s in servers}
        begin = time.monotonic()
        for i in range(scrapes):
            for server in (servers if i % 2 == 0 else servers[::-1]):
                server.scrape()
        cpu1 = {s.name: cpu_ns(s.process.pid) for s in servers}
        end = time.monotonic()
        for server in servers:
            ensure_running(server.name, server.process, server.log)
        source = cpu_source(servers[0].process.pid)
        verdicts = {s.name: promtool_check(s.name, s.scrape_text_004()) for s in servers}
    except BaseException:
        # What went wrong first is what is reported; how the servers
        # stopped after it goes to stderr.
        for server in servers:
            server.connection.close()
            try:
                stop(server.name, server.process, server.log)
            except Failed as failure:
                print(f"bench-metrics: {failure}", file=sys.stderr)
        raise
    errors = []
    for server in servers:
        server.connection.close()
        try:
            stop(server.name, server.process, server.log)
        except Failed as failure:
            errors.append(str(failure))
    if errors:
        raise Failed("\n".join(errors))
    idle_period, period = idle_end - idle_begin, end - begin
    figures = {}
    for s in servers:
        idle_rate = (idle1[s.name] - idle0[s.name]) / idle_period
        scrape_ns = (cpu1[s.name] - cpu0[s.name]) - idle_rate * period
        figures[s.name] = {
            "server": s, "idle_us_per_s": idle_rate / 1e3,
            "cpu_us": scrape_ns / 1e3 / scrapes, "verdict": verdicts[s.name],
        }
    return figures, idle_period, period, source


def report(figures, idle_period, period, scrapes, source, version):
    print(f"CPU time from {source}; {scrapes} scrapes of each in {period:.2f} s, after an idle "
          f"{idle_period:.2f} s whose rate is subtracted")
    names = list(figures)
    head = "".join(f"{(n if n == 'vigild' else 'collectd ' + version):>21}" for n in names)
    ratio_head = f"{'vigild/collectd':>17}" if len(names) == 2 else ""
    print(f"{'per scrape':<28}{head}{ratio_head}")

    def row(label, value, fmt):
        values = [value(figures[n]) for n in names]
        line = f"{label:<28}" + "".join(f"{v:>21{fmt}}" for v in values)
        if len(values) == 2:
            line += f"{values[0] / values[1]:>17.3f}" if values[1] else f"{'-':>17}"
        print(line)

    row("wall µs, mean", lambda f: statistics.fmean(f["server"].wall_us), ".1f")
    row("wall µs, median", lambda f: statistics.median(f["server"].wall_us), ".1f")
    row("wall µs, 99th percentile",
        lambda f: statistics.quantiles(f["server"].wall_us, n=100)[98], ".1f")
    row("server CPU µs", lambda f: f["cpu_us"], ".1f")
    row("response bytes (on the wire)", lambda f: statistics.fmean(f["server"].wire_bytes),
        ".0f")
    row("response bytes (text)", lambda f: statistics.fmean(f["server"].text_bytes), ".0f")
    row("samples", lambda f: statistics.fmean(f["server"].samples), ".1f")
    row("server CPU ns per sample", lambda f: f["cpu_us"] * 1e3 / statistics.fmean(
        f["server"].samples), ".0f")
    row("idle CPU µs per second", lambda f: f["idle_us_per_s"], ".0f")
    for name in names:
        s = figures[name]["server"]
        verdict = figures[name]["verdict"]
        print(f"{name}: {s.content_type}"
              + (f", {s.content_encoding}" if s.content_encoding else ", not compressed")
              + f"; {s.connections} connection(s); every response parses"
              + ("" if verdict is None else f"; promtool check metrics of its text 0.0.4: {verdict}"))
    if not shutil.which("promtool"):
        print("promtool is not installed: responses checked by this script's parser only "
              "(`sudo apt-get install prometheus` for promtool)")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    vigild, plugin_dir = sys.argv[1:3]
    scrapes = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    if scrapes < 2:
        sys.exit("bench-metrics: SCRAPES must be at least 2")
    # A meson timeout or a kill ends the run as an exception, on whose way
    # out both servers are stopped and the temporary directory removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench-metrics: terminated"))

    collectd = find_collectd()
    missing = ("collectd is not installed (`sudo apt-get install --no-install-recommends "
               "collectd-core`, or tools/bootstrap)") if not collectd \
        else write_prometheus_missing()
    version = collectd_version(collectd) if collectd else "?"
    print(f"bench-metrics: GET /metrics with Prometheus's headers, keep-alive; vigild "
          f"(tick {TICK_S * 1000:.0f} ms, {', '.join(PROVIDERS)})"
          + ("" if missing else f"; collectd {version} (Interval {TICK_S}, cpu, memory, disk, "
             "interface, load) with write_prometheus"))
    if missing:
        print(f"{missing}: measuring vigild alone")
        collectd = None
    try:
        with tempfile.TemporaryDirectory(prefix="vigil-bench-metrics-") as directory:
            figures, idle_period, period, source = measure(vigild, plugin_dir, scrapes,
                                                           collectd, directory)
            report(figures, idle_period, period, scrapes, source, version)
    except FAILURES + (http.client.HTTPException, UnicodeDecodeError) as failure:
        print(f"bench-metrics: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
