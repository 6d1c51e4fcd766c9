#!/usr/bin/env python3
"""bench-fanin: how one vigil-txd and one PostgreSQL bear N nodes, each
sending one batch a second.

    fanin.py FANIN_LOAD VIGIL_TXD VIGIL_CLI PG_PRIVATE PLUGIN_DIR
             --ingest-sender=INGEST_SENDER
             [--nodes 100,500,1000,2000,5000] [--seconds S] [--warmup-s S]
             [--groups K] [--pg-options '-c NAME=VALUE'] [--citus [--workers N]]
             [--restart [--restart-at-s S]] [--handshakes N] [--copy-rows N]
             [fanin-load's options: --cores --ranks --activity-rate
              --forwarded-share --disks --nets --nodes-per-job --drain-s
              --reconnect-ivl-ms --reconnect-ivl-max-ms --connect-delay-max-ms]

One private PostgreSQL cluster (tools/pg-private, its default settings:
fsync and synchronous_commit on) serves the run; a database migrated once
with `vigil db migrate`, with today's and tomorrow's activity partitions,
is the template of each step's fresh database. For each N: a CURVE key
pair for vigil-txd (`vigil keygen`) and N for the nodes (`fanin-load
keygen`, the public keys vigil-txd's curve_authorized_keys), vigil-txd on
a free TCP port on loopback with CURVE, then FANIN_LOAD (bench/fanin_load.c)
as N nodes, each its own DEALER and key: see its comment for what a batch
holds. After the run the database must hold exactly the batches vigil-txd
acknowledged (ingested_batches), else the run fails; so does a vigil-txd
that aborted (libzmq's "Assertion failed" in its log).

Before the steps, once a run: the COPY ceiling, bench/ingest's figure on
this run's cluster (INGEST_SENDER's --copy-rows activity rows, default
1,000,000, by psql's \\copy into a fresh database: the rows a second this
PostgreSQL takes at best), and the cost of one CURVE handshake to
vigil-txd: --handshakes (default 500) fresh connections at once to an idle
vigil-txd (`fanin-load handshakes`), its CPU time from /proc over them
divided by their number, and how long they all took.

The table: offered and sustained (acknowledged) batches a second, ACK
latency p50/p99 of the batches sent in the measured window (">" when the
quantile falls among batches never acknowledged), vigil-txd's and
PostgreSQL's CPU (share of one core, from /proc/PID/stat over the window,
and per stored batch: what a shared machine's load changes least),
vigil-txd's peak RSS (VmHWM), the rows a second the acknowledged batches
stored and their ratio to the COPY ceiling ("/ COPY"), the load generator's own CPU (it shares the machine), the batches
held back (a node's socket full, or 64 unacknowledged) and the nodes
vigil-txd heard from (logged once each).

--groups K splits the nodes between K vigil-txd (each with its own
fanin-load, its own keys and its own connection) writing into the one
database at once: several groups of nodes into one warehouse. Their figures
are summed, the latencies merged. --pg-options sets PostgreSQL options on
vigil-txd's connections, for diagnosis only (`-c synchronous_commit=off`
shows what each batch's WAL flush costs, and breaks the promise that an
acknowledged batch is on disk). --citus runs each N on a fresh Citus
cluster (tools/pg-private start-citus, `vigil db migrate --citus`) of one
worker and then of --workers N (2), all on this machine, and prints
vigil-txd's rows a second side by side (PostgreSQL's CPU is the
coordinator's). The nodes connect and reconnect as
vigild's uplink does ([uplink] reconnect_ivl_ms, reconnect_ivl_max_ms,
connect_delay_max_ms: fanin-load's options of the same names).

--restart kills vigil-txd (SIGKILL) --restart-at-s (default 5) into each
step's measured window and starts it again on the same endpoint, keys and
database while the nodes go on sending; a second table says how long the
old one took to end and the new one to serve, how long until every node's
CURVE handshake succeeded again (fanin-load watches them) and until every
node had a batch acknowledged again (each with the median and 90th
percentile node), and the batches acknowledged meanwhile. The goals:
2,000 nodes with p99 <= 1 s; with --restart, 2,000 nodes all heard again
within 30 s. It exits 0 whether the goal is met or not (a
measurement), 1 when the run failed."""
import argparse
import datetime
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

import bench_support
import ingest
from bench_support import FAILURES, RUN_TIMEOUT_S, Failed, free_port, log_tail, run

GOAL_NODES = 2000
GOAL_P99_MS = 1000.0
STOP_TIMEOUT_S = 20
PROFILE = ("cores", "ranks", "activity_rate", "forwarded_share", "disks", "nets",
           "nodes_per_job", "drain_s")
# As vigild's [uplink] keys of the same names; fanin-load's defaults are theirs.
RECONNECT = ("reconnect_ivl_ms", "reconnect_ivl_max_ms", "connect_delay_max_ms")
GOAL_RESTART_S = 30.0


class Cluster(bench_support.Cluster):
    def postmaster_pid(self):
        """The server's (a Citus cluster's coordinator's)."""
        coordinator = os.path.join(self.directory, "coordinator")
        for root, _dirs, files in os.walk(coordinator if self.citus_workers else self.directory):
            if "postmaster.pid" in files:
                with open(os.path.join(root, "postmaster.pid")) as f:
                    return int(f.readline())
        raise Failed(f"no postmaster.pid under {self.directory}")


def start_txd(args, cluster, database, work, port):
    """vigil-txd with a key pair of its own and `work`/authorized as its
    nodes' keys. Its pid, endpoint, public key and log; restart_txd starts
    it again from the same files."""
    txd_key = os.path.join(work, "txd.key")
    run([args.vigil_cli, "keygen", txd_key], "vigil keygen")
    with open(txd_key + ".pub") as f:
        server_public = f.read().strip()
    config = os.path.join(work, "txd.conf")
    endpoint = f"tcp://127.0.0.1:{port}"
    with open(config, "w") as conf:
        conf.write(f"[txd]\nbind = {endpoint}\ncurve_key_file = {txd_key}\n"
                   f"curve_authorized_keys = {work}/authorized\n"
                   f"[warehouse]\nconninfo = {cluster.conninfo_for(database)}"
                   + (f" options='{args.pg_options}'" if args.pg_options else "")
                   + "\nmigrate = false\n")
    pid, log_path = launch_txd(args, cluster, work, "txd")
    return pid, endpoint, server_public, log_path


def launch_txd(args, cluster, work, name):
    """vigil-txd from `work`/txd.conf, its log `work`/NAME.log."""
    log_path = os.path.join(work, f"{name}.log")
    env = dict(cluster.env, VIGIL_PLUGIN_DIR=args.plugin_dir)
    prefix = args.txd_prefix.split() if args.txd_prefix else []
    pid = bench_support.start_txd(args.vigil_txd, os.path.join(work, "txd.conf"),
                                  os.path.join(work, f"{name}.pid"), log_path, env, prefix)
    return pid, log_path


def stop_txd(pid, log_path):
    """SIGTERM; SIGKILL when it is still busy after STOP_TIMEOUT_S. Not a
    failure: vigil-txd stores its whole queue before it reads the signal
    (server.c, store_pending), and a saturated step leaves a long queue.
    What it acknowledged is stored whichever way it ends. Returns whether
    it had to be killed."""
    pidfd = os.pidfd_open(pid)
    try:
        os.kill(pid, signal.SIGTERM)
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        if poller.poll(STOP_TIMEOUT_S * 1000):
            return False
        os.kill(pid, signal.SIGKILL)
        poller.poll()
        return True
    finally:
        os.close(pidfd)


def load_options(args):
    """fanin-load's options that bench-fanin passes on as given."""
    options = []
    for name in PROFILE + RECONNECT:
        value = getattr(args, name)
        if value is not None:
            options += [f"--{name.replace('_', '-')}", str(value)]
    return options


def group_run(args, cluster, database, work, nodes, first_node_id):
    """One vigil-txd and its fanin-load: started, not waited for."""
    os.makedirs(work)
    run([args.fanin_load, "keygen", str(nodes), work], "fanin-load keygen")
    pid, endpoint, server_public, log_path = start_txd(args, cluster, database, work,
                                                       free_port())
    profile = load_options(args)
    if args.restart:
        profile += ["--restart-at-s", str(args.restart_at_s)]
    latencies = os.path.join(work, "latencies")
    load = subprocess.Popen([args.fanin_load, "run", endpoint, work,
                             f"--server-key={server_public}",
                             "--nodes", str(nodes), "--first-node-id", str(first_node_id),
                             "--seconds", str(args.seconds), "--warmup-s", str(args.warmup_s),
                             "--txd-pid", str(pid), "--postmaster-pid",
                             str(cluster.postmaster_pid()), "--latencies-out", latencies]
                            + profile, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    return {"pid": pid, "log": log_path, "load": load, "latencies": latencies, "work": work,
            "logs": [log_path]}


def restart_when_asked(args, cluster, g):
    """--restart: waits for fanin-load's "restart", then SIGKILLs vigil-txd
    (nothing it has not acknowledged is stored twice or lost: the nodes
    send again) and starts it again on the same endpoint, keys and
    database, and tells fanin-load its pid. The output read so far."""
    seen = []
    for line in g["load"].stdout:
        seen.append(line)
        if line.strip() == "restart":
            asked = time.monotonic()
            os.kill(g["pid"], signal.SIGKILL)
            pidfd = os.pidfd_open(g["pid"])
            try:
                poller = select.poll()
                poller.register(pidfd, select.POLLIN)
                poller.poll()
            finally:
                os.close(pidfd)
            g["gone_s"] = time.monotonic() - asked
            g["pid"], log_path = launch_txd(args, cluster, g["work"], "txd-restarted")
            g["back_s"] = time.monotonic() - asked
            g["logs"].append(log_path)
            g["log"] = log_path
            g["load"].stdin.write(f"{g['pid']}\n")
            g["load"].stdin.flush()
            break
    return "".join(seen)


def merged(parts, nodes):
    """The groups' figures as one: sums, and quantiles of every latency."""
    figures = dict(parts[0])
    for name in ("offered_per_s", "sent_in_window", "acked_per_s", "rows_per_s",
                 "txd_cpu_share", "load_cpu_share", "txd_peak_rss_kib", "sent", "acked",
                 "unacked", "held_back", "refused", "unexpected"):
        figures[name] = sum(p[name] for p in parts)
    # PostgreSQL's CPU is the whole server's, the same in every group's.
    figures["pg_cpu_share"] = max(p["pg_cpu_share"] for p in parts)
    latencies = sorted(v for p in parts for v in p["latencies_ms"])
    sent = figures["sent_in_window"]

    def quantile(q):
        rank = max(1, -(-int(q * sent * 1000) // 1000))
        return latencies[rank - 1] if rank <= len(latencies) else -1.0
    figures.update(nodes=nodes, p50_ms=quantile(0.5), p99_ms=quantile(0.99),
                   max_ms=quantile(1.0), groups=len(parts))
    return figures


def step(args, cluster, nodes, work_root, database=None):
    """One run of `nodes` nodes into a fresh copy of fanin_template, or into
    `database` as it is (a Citus cluster's: Citus's metadata is per
    database, and CREATE DATABASE … TEMPLATE copies none to the workers)."""
    fresh = database is None
    if fresh:
        database = f"fanin_{nodes}"
        cluster.psql("postgres", f"CREATE DATABASE {database} TEMPLATE fanin_template")
    cluster.psql("postgres", "CHECKPOINT")
    work = tempfile.mkdtemp(prefix=f"n{nodes}-", dir=work_root)
    # Nodes split as evenly as they go between the groups, each with its
    # own vigil-txd (its own connection to the one warehouse).
    groups = []
    first = 1
    try:
        for g in range(args.groups):
            count = nodes // args.groups + (1 if g < nodes % args.groups else 0)
            groups.append(group_run(args, cluster, database, os.path.join(work, f"g{g}"),
                                    count, first))
            first += count
        parts = []
        for g in groups:
            before = restart_when_asked(args, cluster, g) if args.restart else ""
            try:
                out, err = g["load"].communicate(timeout=RUN_TIMEOUT_S)
                out = before + out
            except subprocess.TimeoutExpired:
                g["load"].kill()
                raise Failed(f"fanin-load did not finish within {RUN_TIMEOUT_S} s") from None
            if g["load"].returncode != 0:
                raise Failed(f"fanin-load run failed (status {g['load'].returncode}):\n{err}"
                             f"{out}\nvigil-txd's log ends with:\n{log_tail(g['log'])}")
            part = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
            with open(g["latencies"]) as f:
                part["latencies_ms"] = [float(line) for line in f]
            if "back_s" in g:
                part.update(restart_gone_s=g["gone_s"], restart_back_s=g["back_s"])
            parts.append(part)
    finally:
        killed = 0
        for g in groups:
            if g["load"].poll() is None:
                g["load"].kill()
                g["load"].wait()
            if args.txd_prefix and "callgrind" in args.txd_prefix:
                # Its profile so far, before a SIGKILL could lose it.
                subprocess.run(["callgrind_control", "--dump=fanin", str(g["pid"])],
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
            killed += stop_txd(g["pid"], g["log"])
    figures = merged(parts, nodes)
    figures["txd_killed"] = killed
    # The nodes vigil-txd took a batch from (it logs each once): a node
    # whose CURVE handshake waits on a busy vigil-txd sends nothing.
    # A vigil-txd that aborted (libzmq's assertions go to its log) fails
    # the run: its end is not seen otherwise, since it is stopped here
    # whether or not it is still there.
    heard = 0
    for g in groups:
        nodes_heard = set()
        for path in g["logs"]:
            with open(path, errors="replace") as log:
                text = log.read()
            nodes_heard |= set(re.findall(r"node (\d+) connected", text))
            aborted = re.search(r"^.*Assertion failed.*$", text, re.MULTILINE)
            if aborted:
                raise Failed(f"vigil-txd aborted ({path}): {aborted.group(0)}")
        heard += len(nodes_heard)
    figures["nodes_heard"] = heard
    del figures["latencies_ms"]
    stored = int(cluster.psql(database, "SELECT count(*) FROM ingested_batches"))
    # Every acknowledged batch is stored; one stored after the generator
    # stopped waiting is not an error, one acknowledged and missing is.
    if stored < figures["acked"] or stored > figures["sent"]:
        raise Failed(f"N={nodes}: {stored} batches stored, {figures['acked']} acknowledged, "
                     f"{figures['sent']} sent")
    figures["stored"] = stored
    if fresh:
        cluster.psql("postgres", f"DROP DATABASE {database}")
    return figures


def copy_ceiling(args, cluster, work):
    """bench/ingest's COPY figure on this run's cluster: --copy-rows activity
    rows (ingest-sender's, the same rows bench-ingest stores) by psql's
    \\copy into a fresh database, after a CHECKPOINT and a sync. Rows a
    second: what this PostgreSQL takes at best, vigil-txd's ceiling."""
    now_s = int(time.time())
    # One hour into today, UTC: fanin_template holds today's partition.
    start_realtime_ns = (now_s - now_s % 86400 + 3600) * 10**9
    copy_file = os.path.join(work, "activities.copy")
    run([args.ingest_sender, "copy-file", copy_file, "--rows", str(args.copy_rows),
         "--start-realtime-ns", str(start_realtime_ns)], "ingest-sender copy-file")
    database = "fanin_copy"
    cluster.psql("postgres", f"CREATE DATABASE {database} TEMPLATE fanin_template")
    cluster.psql("postgres", "CHECKPOINT")
    os.sync()
    try:
        elapsed, _ = ingest.run_copy(argparse.Namespace(copy_file=copy_file), cluster, database,
                                     work)
        stored = int(cluster.psql(database, "SELECT count(*) FROM activities"))
        if stored != args.copy_rows:
            raise Failed(f"COPY ceiling: {stored} activities stored, {args.copy_rows} expected")
    finally:
        cluster.psql("postgres", f"DROP DATABASE IF EXISTS {database}")
        os.unlink(copy_file)
    return args.copy_rows / elapsed


def handshake_cost(args, cluster, work_root):
    """vigil-txd's CPU per CURVE handshake: --handshakes fresh connections
    at once to an idle vigil-txd (fanin-load handshakes), each watched until
    its handshake succeeds; its CPU time from /proc over them."""
    database = "fanin_handshakes"
    cluster.psql("postgres", f"CREATE DATABASE {database} TEMPLATE fanin_template")
    work = os.path.join(work_root, "handshakes")
    os.makedirs(work)
    pid = None
    try:
        run([args.fanin_load, "keygen", str(args.handshakes), work], "fanin-load keygen")
        pid, endpoint, server_public, log_path = start_txd(args, cluster, database, work,
                                                           free_port())
        out = run([args.fanin_load, "handshakes", endpoint, work, f"--server-key={server_public}",
                   "--nodes", str(args.handshakes), "--txd-pid", str(pid)],
                  "fanin-load handshakes")
        return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
    finally:
        if pid is not None:
            stop_txd(pid, log_path)
        cluster.psql("postgres", f"DROP DATABASE IF EXISTS {database}")


def latency(ms):
    return "  >drain" if ms < 0 else f"{ms:8.0f}"


def per_batch_ms(share, f):
    """CPU ms a stored batch cost: the machine's load changes how many
    batches a second there are, much less what each costs."""
    return f"{1000 * share / f['acked_per_s']:>6.1f}" if f["acked_per_s"] > 0 else "     -"


def report(rows, ceiling):
    print("\n  nodes  offered/s  acked/s   p50 ms   p99 ms  txd CPU  ms/batch  txd RSS MiB  "
          "PG CPU  ms/batch    rows/s  / COPY  load CPU  batch KiB  held back  heard")
    for f in rows:
        print(f"  {f['nodes']:>5} {f['offered_per_s']:>10.0f} {f['acked_per_s']:>8.0f} "
              f"{latency(f['p50_ms'])} {latency(f['p99_ms'])} {f['txd_cpu_share']:>8.2f} "
              f"{per_batch_ms(f['txd_cpu_share'], f):>9} "
              f"{f['txd_peak_rss_kib'] / 1024:>12.0f} {f['pg_cpu_share']:>7.2f} "
              f"{per_batch_ms(f['pg_cpu_share'], f):>9} "
              f"{f['rows_per_s']:>9.0f} {f['rows_per_s'] / ceiling:>7.3f} "
              f"{f['load_cpu_share']:>9.2f} "
              f"{f['mean_batch_bytes'] / 1024:>10.1f} {f['held_back']:>10} {f['nodes_heard']:>6}"
              + ("   (vigil-txd killed: still storing its queue)" if f["txd_killed"] else ""))
    print(f"  / COPY: vigil-txd's rows/s over the COPY ceiling of this run, {ceiling:,.0f} rows/s")
    restarted = [f for f in rows if "restart_heard" in f]
    if restarted:
        print("\n  vigil-txd killed and started again while the nodes send (seconds from the "
              "kill):\n"
              "                       handshakes again               a batch acknowledged again\n"
              "  nodes  gone  serving   nodes    all    p50    p90   nodes    all    p50    p90  "
              "acked meanwhile  acked/s")

        def seconds(value):
            return f"{value:>6.1f}" if value >= 0 else "     -"
        for f in restarted:
            print(f"  {f['nodes']:>5} {f['restart_gone_s']:>5.1f} {f['restart_back_s']:>8.1f} "
                  f"{f['restart_handshaken']:>7} "
                  f"{seconds(f['restart_handshakes_all_s'])} "
                  f"{seconds(f['restart_handshakes_p50_s'])} "
                  f"{seconds(f['restart_handshakes_p90_s'])} {f['restart_heard']:>7} "
                  f"{seconds(f['restart_all_heard_s'])} {seconds(f['restart_p50_s'])} "
                  f"{seconds(f['restart_p90_s'])} {f['restart_acked']:>16} "
                  f"{f['restart_acked_per_s']:>8.0f}")
        print("  gone: until the old vigil-txd had ended; serving: until the new one served. "
              "\"-\": not every node\n  within the window. A batch acknowledged waits for "
              "the batches queued before it.")
    goal = [f for f in rows if f["nodes"] == GOAL_NODES]
    if goal:
        f = goal[0]
        met = 0 <= f["p99_ms"] <= GOAL_P99_MS and f["acked_per_s"] >= 0.99 * f["offered_per_s"]
        if "restart_heard" in f:
            met = 0 <= f["restart_all_heard_s"] <= GOAL_RESTART_S
            print(f"goal: {GOAL_NODES} nodes all heard again within {GOAL_RESTART_S:.0f} s of "
                  f"a vigil-txd restart: {'met' if met else 'NOT met'}")
        else:
            print(f"goal: {GOAL_NODES} nodes at one batch a second, p99 <= {GOAL_P99_MS:.0f} ms: "
                  f"{'met' if met else 'NOT met'}")


def migrate(args, cluster, database, citus):
    run([args.vigil_cli, "db", "migrate", "--conninfo", cluster.conninfo_for(database)]
        + (["--citus"] if citus else []), "vigil db migrate", env=cluster.env)
    today = datetime.datetime.now(datetime.timezone.utc).date()
    for day in (today, today + datetime.timedelta(days=1)):
        cluster.psql(database, f"SELECT vigil_activity_partition('{day}')")


def citus_runs(args, steps, work):
    """--citus: each N on a fresh Citus cluster of 1 worker, then of
    --workers; vigil-txd's rows a second side by side."""
    counts = sorted({1, args.workers})
    table = {}
    for workers in counts:
        for nodes in steps:
            with tempfile.TemporaryDirectory(prefix="vigil-bench-fanin-citus-") as pg_dir, \
                    Cluster(args.pg_private, pg_dir, citus_workers=workers) as cluster:
                migrate(args, cluster, "vigil", citus=True)
                figures = step(args, cluster, nodes, work, database="vigil")
                figures["workers"] = workers
                print(json.dumps(figures), flush=True)
                table[(nodes, workers)] = figures
    print(f"\nbench-fanin --citus: a coordinator and 1 or {args.workers} workers on this "
          f"machine ({os.cpu_count()} cores), load average {os.getloadavg()[0]:.1f} at the end")
    print("  nodes" + "".join(f"  rows/s {w} worker{'s' if w > 1 else ' '}" for w in counts)
          + "  acked/s " + " ".join(f"{w:>6}w" for w in counts)
          + (f"  ratio {counts[-1]}:1" if len(counts) > 1 else ""))
    for nodes in steps:
        rows = [table[(nodes, w)] for w in counts]
        line = f"  {nodes:>5}" + "".join(f"  {f['rows_per_s']:>16.0f}" for f in rows)
        line += "          " + " ".join(f"{f['acked_per_s']:>7.0f}" for f in rows)
        if len(rows) > 1 and rows[0]["rows_per_s"] > 0:
            line += f"  {rows[-1]['rows_per_s'] / rows[0]['rows_per_s']:>9.2f}"
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("fanin_load", "vigil_txd", "vigil_cli", "pg_private", "plugin_dir"):
        parser.add_argument(name)
    parser.add_argument("--nodes", default="100,500,1000,2000,5000")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--warmup-s", type=int, default=8)
    parser.add_argument("--cores", type=int)
    parser.add_argument("--ranks", type=int)
    parser.add_argument("--activity-rate", type=int)
    parser.add_argument("--forwarded-share", type=float)
    parser.add_argument("--disks", type=int)
    parser.add_argument("--nets", type=int)
    parser.add_argument("--nodes-per-job", type=int)
    parser.add_argument("--drain-s", type=int)
    # Diagnosis only: `-c synchronous_commit=off` shows what the WAL flush
    # of each batch's commit costs, and breaks the promise that an
    # acknowledged batch is on disk.
    parser.add_argument("--pg-options")
    parser.add_argument("--groups", type=int, default=1)
    # A profiler for vigil-txd: "valgrind --tool=callgrind
    # --callgrind-out-file=/tmp/txd.%p" (valgrind follows it as it detaches).
    parser.add_argument("--txd-prefix")
    # vigild's reconnect spreading, as its [uplink] keys.
    parser.add_argument("--reconnect-ivl-ms", type=int)
    parser.add_argument("--reconnect-ivl-max-ms", type=int)
    parser.add_argument("--connect-delay-max-ms", type=int)
    parser.add_argument("--restart", action="store_true")
    parser.add_argument("--restart-at-s", type=int, default=5)
    parser.add_argument("--handshakes", type=int, default=500)
    parser.add_argument("--ingest-sender", required=True)
    parser.add_argument("--copy-rows", type=int, default=1_000_000)
    # The warehouse on Citus (tools/pg-private start-citus, `vigil db migrate
    # --citus`): each step with 1 worker and with --workers, side by side.
    parser.add_argument("--citus", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    for name in ("fanin_load", "vigil_txd", "vigil_cli", "pg_private", "plugin_dir",
                 "ingest_sender"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    try:
        steps = [int(n) for n in args.nodes.split(",")]
    except ValueError:
        parser.error(f"--nodes {args.nodes}: a comma-separated list of counts")
    if any(n < args.groups for n in steps) or args.seconds < 1 or args.warmup_s < 0 \
            or args.groups < 1:
        parser.error("node counts at least --groups (1), --seconds at least 1, "
                     "--warmup-s at least 0")
    if args.restart and (args.groups != 1 or not 0 <= args.restart_at_s < args.seconds):
        parser.error("--restart: with one group, and --restart-at-s within --seconds")
    if args.handshakes < 1 or args.copy_rows < 1:
        parser.error("--handshakes and --copy-rows: at least 1")
    if args.workers < 1:
        parser.error("--workers at least 1")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench-fanin: terminated"))
    if args.citus:
        try:
            with tempfile.TemporaryDirectory(prefix="vigil-bench-fanin-") as work:
                citus_runs(args, steps, work)
        except FAILURES as failure:
            print(f"bench-fanin: {failure}", file=sys.stderr)
            sys.exit(1)
        return
    try:
        with tempfile.TemporaryDirectory(prefix="vigil-bench-fanin-") as work, \
                tempfile.TemporaryDirectory(prefix="vigil-bench-fanin-pg-") as pg_dir:
            with Cluster(args.pg_private, pg_dir) as cluster:
                cluster.psql("postgres", "CREATE DATABASE fanin_template")
                migrate(args, cluster, "fanin_template", citus=False)
                print(f"bench-fanin: {cluster.description()}; {os.cpu_count()} cores, load "
                      f"average {os.getloadavg()[0]:.1f} at the start", flush=True)
                ceiling = copy_ceiling(args, cluster, work)
                print(f"COPY ceiling (bench/ingest's psql \\copy of {args.copy_rows:,} activity "
                      f"rows): {ceiling:,.0f} rows/s", flush=True)
                cost = handshake_cost(args, cluster, work)
                print(f"CURVE handshakes: {cost['handshakes']} fresh connections at once took "
                      f"{cost['seconds']:.2f} s and {cost['txd_cpu_s']:.2f} s of vigil-txd's CPU: "
                      f"{cost['txd_cpu_ms_each']:.2f} ms each", flush=True)
                rows = []
                for nodes in steps:
                    figures = step(args, cluster, nodes, work)
                    print(json.dumps(figures), flush=True)
                    rows.append(figures)
                print(f"one batch a second per node: {rows[0]['metrics']} metrics, "
                      f"{rows[0]['ranks']} processes; load average "
                      f"{os.getloadavg()[0]:.1f} at the end")
                print(f"CURVE handshake: {cost['txd_cpu_ms_each']:.2f} ms of vigil-txd's CPU each "
                      f"({cost['handshakes']} at once); COPY ceiling {ceiling:,.0f} rows/s")
                report(rows, ceiling)
    except FAILURES as failure:
        print(f"bench-fanin: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
