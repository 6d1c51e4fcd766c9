#!/usr/bin/env python3
"""bench-ingest: activities per second into vigil's warehouse through
vigil-txd, beside psql's COPY of the same rows from a file (the practical
limit) and one INSERT per row (what SIOX did), on the same server in the
same run.

    ingest.py SENDER VIGIL_TXD VIGIL_CLI PG_PRIVATE PLUGIN_DIR
              [--rows N] [--batch-rows B] [--window W] [--insert-rows N]
              [--insert-unprepared] [--rounds R]

SENDER is bench/ingest-sender, which makes the one stream of activity rows
every method stores. One private PostgreSQL cluster (tools/pg-private, its
default settings: fsync and synchronous_commit on) serves the whole run; a
database migrated once with `vigil db migrate` is the template of every
other, and holds the day's activities partition already. Each method of
each round writes into a fresh database made from it, after a CHECKPOINT,
and a sync, so none inherits another's dirty buffers or table, nor
pays for its writes; it is dropped after.
The methods run interleaved, in a rotated order, over --rounds rounds
(default 5), and the median of each method's rates is reported, because a
2-core shared machine is noisy.

  vigil-txd   a vigil-txd serving an ipc:// socket and writing into its
              database; the sender first sends a batch without activities
              (the connection, the node, process and file rows), then
              --rows activities (default 1,000,000) in batches of
              --batch-rows (default 20,000) built beforehand, keeping up to
              --window (default 8) unacknowledged as vigild's uplink does.
              Time: from the first send to the last acknowledgement, which
              vigil-txd sends after each batch's commit.
  psql COPY   `psql -c "\\copy activities (...) FROM FILE"`, text format,
              one transaction; the file is written before the clock starts.
              Time: psql's run, its start and connection included.
  INSERT      the first --insert-rows (default 50,000) of the same rows,
              one prepared INSERT each (PQexecPrepared: no statement text
              to parse per row, the best per-row inserting can do; with
              --insert-unprepared PQexecParams, the text parsed each time)
              in one transaction, timed in the sender around BEGIN..COMMIT.
              Only a sample, to keep the run short: its rate stays flat
              with the count, since every row costs one round trip.
  INSERT,     the same, with a process spinning on a core meanwhile. A
  awake       virtual machine's idle core takes tens of µs to wake, and a
              per-row INSERT wakes the server and then the client once per
              row: on an idle 2-core VM that makes it several times slower
              (measured: 11,000 against 60,000 rows/s) than on a busy one,
              where the two hand over on running cores. The ratio goal is
              judged against the faster of the two INSERT figures.

Every database is checked afterwards: its activities (count, and a sum of
hashes of every column as text) must equal a reference database loaded
from the same file, the INSERT database's against the reference's first
--insert-rows. A mismatch fails the run.

It prints the rates and the ratios against their goals (vigil-txd at least
0.7x the COPY rate and at least 20x the faster INSERT rate). It exits 0
whether the goals are met or not: it is a measurement. It exits 1 only when
the run failed, saying what failed."""
import argparse
import datetime
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import bench_support
from bench_support import FAILURES, Failed, log_tail, run, start_txd

GOAL_COPY_RATIO = 0.7
GOAL_INSERT_RATIO = 20.0
METHODS = ["txd", "copy", "insert", "insert-awake"]
NAMES = {"txd": "vigil-txd", "copy": "psql COPY", "insert": "INSERT per row",
         "insert-awake": "INSERT, awake"}
SAMPLED = ("insert", "insert-awake")
COLUMNS = ("process_id, seq, layer, operation, file_id, file_offset, bytes, result, errno, "
           "start_time, start_ns, duration_ns, thread, parent_start_ns, flags, comm_size")
STOP_TIMEOUT_S = 60


def last_json_line(text, what):
    lines = [line for line in text.splitlines() if line.startswith("{")]
    if not lines:
        raise Failed(f"{what} printed no figures:\n{text}")
    return json.loads(lines[-1])


# ---- the cluster ----------------------------------------------------------------------------

class Cluster(bench_support.Cluster):
    """The private cluster, with the databases a measure makes."""

    def create_database(self, name, template):
        self.psql("postgres", f"CREATE DATABASE {name} TEMPLATE {template}")

    def drop_database(self, name):
        self.psql("postgres", f"DROP DATABASE IF EXISTS {name}")

    def fingerprint(self, database, below_seq):
        """(count, sum of hashes of every column as text) of the
        activities whose seq is below `below_seq`."""
        out = self.psql(database,
                        "SELECT count(*), coalesce(sum(hashtext(a::text)::bigint), 0) "
                        f"FROM activities a WHERE seq < {below_seq}").strip()
        count, total = out.split("|")
        return int(count), int(total)


# ---- the methods ----------------------------------------------------------------------------

def run_txd(args, cluster, database, work):
    config = os.path.join(work, "txd.conf")
    log_path = os.path.join(work, f"{database}-txd.log")
    pid_path = os.path.join(work, "txd.pid")
    endpoint = f"ipc://{work}/txd.sock"
    with open(config, "w") as conf:
        conf.write(f"[txd]\nbind = {endpoint}\n"
                   f"[warehouse]\nconninfo = {cluster.conninfo_for(database)}\nmigrate = false\n")
    env = dict(cluster.env, VIGIL_PLUGIN_DIR=args.plugin_dir)
    pid = start_txd(args.vigil_txd, config, pid_path, log_path, env)
    pidfd = os.pidfd_open(pid)
    try:
        out = run([args.sender, "send", endpoint, "--rows", str(args.rows),
                   "--batch-rows", str(args.batch_rows), "--window", str(args.window),
                   "--start-realtime-ns", str(args.start_realtime_ns)],
                  "ingest-sender send", env=cluster.env)
    except Failed as failure:
        raise Failed(f"{failure}\nvigil-txd's log ends with:\n{log_tail(log_path)}") from None
    finally:
        stop_txd(pid, pidfd, log_path)
    figures = last_json_line(out, "ingest-sender send")
    batches = int(cluster.psql(database, "SELECT count(*) FROM ingested_batches").strip())
    if batches != figures["batches"] + 1:
        raise Failed(f"{database}: {batches} rows in ingested_batches, "
                     f"expected {figures['batches'] + 1} (the opening batch and the others)")
    return figures["seconds"], figures


def stop_txd(pid, pidfd, log_path):
    try:
        os.kill(pid, signal.SIGTERM)
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        if not poller.poll(STOP_TIMEOUT_S * 1000):
            os.kill(pid, signal.SIGKILL)
            raise Failed(f"vigil-txd (pid {pid}) did not stop within {STOP_TIMEOUT_S} s of "
                         "SIGTERM (killed):\n" + log_tail(log_path))
    finally:
        os.close(pidfd)


def run_copy(args, cluster, database, work):
    begin = time.monotonic()
    run([cluster.psql_path, "-X", "-q", "-v", "ON_ERROR_STOP=1",
         "-d", cluster.conninfo_for(database),
         "-c", f"\\copy activities ({COLUMNS}) FROM '{args.copy_file}'"],
        "psql \\copy", env=cluster.env)
    return time.monotonic() - begin, {}


def run_insert(args, cluster, database, work):
    return insert(args, cluster, database)


def run_insert_awake(args, cluster, database, work):
    # A process spinning on a core: the client and the server then hand
    # each row over on a core that is running, not one woken from idle.
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                               stdin=subprocess.DEVNULL)
    try:
        return insert(args, cluster, database)
    finally:
        spinner.kill()
        spinner.wait()


def insert(args, cluster, database):
    out = run([args.sender, "insert", cluster.conninfo_for(database),
               "--rows", str(args.insert_rows), "--start-realtime-ns", str(args.start_realtime_ns)]
              + (["--unprepared"] if args.insert_unprepared else []),
              "ingest-sender insert", env=cluster.env)
    return last_json_line(out, "ingest-sender insert")["seconds"], {}


RUNNERS = {"txd": run_txd, "copy": run_copy, "insert": run_insert,
           "insert-awake": run_insert_awake}


# ---- the run --------------------------------------------------------------------------------

def prepare(args, cluster, work):
    """The template database, migrated, with the rows' day's partition; the
    COPY file; the reference fingerprints."""
    cluster.psql("postgres", "CREATE DATABASE ingest_template")
    run([args.vigil_cli, "db", "migrate", "--conninfo", cluster.conninfo_for("ingest_template")],
        "vigil db migrate", env=cluster.env)
    day = datetime.datetime.fromtimestamp(args.start_realtime_ns // 10**9, datetime.timezone.utc)
    cluster.psql("ingest_template", f"SELECT vigil_activity_partition('{day.date()}')")

    args.copy_file = os.path.join(work, "activities.copy")
    written = last_json_line(run([args.sender, "copy-file", args.copy_file, "--rows",
                                  str(args.rows), "--start-realtime-ns",
                                  str(args.start_realtime_ns)], "ingest-sender copy-file"),
                             "ingest-sender copy-file")
    cluster.create_database("ingest_reference", "ingest_template")
    run([cluster.psql_path, "-X", "-q", "-v", "ON_ERROR_STOP=1",
         "-d", cluster.conninfo_for("ingest_reference"),
         "-c", f"\\copy activities ({COLUMNS}) FROM '{args.copy_file}'"],
        "psql \\copy into the reference database", env=cluster.env)
    reference = {
        "full": cluster.fingerprint("ingest_reference", args.rows),
        "sample": cluster.fingerprint("ingest_reference", args.insert_rows),
    }
    cluster.drop_database("ingest_reference")
    if reference["full"][0] != args.rows or reference["sample"][0] != args.insert_rows:
        raise Failed(f"the reference database holds {reference['full'][0]} activities "
                     f"({reference['sample'][0]} below seq {args.insert_rows}), "
                     f"expected {args.rows} ({args.insert_rows})")
    return reference, written["bytes"]


def measure(args, cluster, work, reference):
    rates = {method: [] for method in METHODS}
    seconds = {method: [] for method in METHODS}
    details = []
    for round_number in range(args.rounds):
        # Rotated, so that no method always runs first (or last) in a round.
        turn = round_number % len(METHODS)
        order = METHODS[turn:] + METHODS[:turn]
        for method in order:
            database = f"ingest_{method.replace('-', '_')}_{round_number + 1}"
            rows = args.insert_rows if method in SAMPLED else args.rows
            cluster.create_database(database, "ingest_template")
            # The last method's pages written out, the server's and the
            # kernel's, so that none is paid for by the next one.
            cluster.psql("postgres", "CHECKPOINT")
            os.sync()
            try:
                elapsed, figures = RUNNERS[method](args, cluster, database, work)
                expected = reference["sample" if method in SAMPLED else "full"]
                stored = cluster.fingerprint(database, rows)
                if stored != expected:
                    raise Failed(f"{NAMES[method]}, round {round_number + 1}: the database holds "
                                 f"{stored[0]} activities with fingerprint {stored[1]}, the "
                                 f"reference {expected[0]} with {expected[1]}: not the same rows")
                total = int(cluster.psql(database, "SELECT count(*) FROM activities").strip())
                if total != rows:
                    raise Failed(f"{NAMES[method]}, round {round_number + 1}: {total} activities "
                                 f"stored, expected {rows}")
            finally:
                cluster.drop_database(database)
            rates[method].append(rows / elapsed)
            seconds[method].append(elapsed)
            details.append(f"  round {round_number + 1} {NAMES[method]:<15} {rows:>9} rows "
                           f"{elapsed:8.2f} s {rows / elapsed:>11,.0f} rows/s")
            print(details[-1], flush=True)
            if figures:
                args.txd_figures = figures
    return rates, seconds


def report(args, rates, seconds):
    median = {method: statistics.median(rates[method]) for method in METHODS}
    print(f"median of {args.rounds} rounds:")
    print(f"  {'method':<15} {'rows':>9} {'seconds':>9} {'rows/s':>11}   "
          "rounds: slowest-fastest")
    for method in METHODS:
        rows = args.insert_rows if method in SAMPLED else args.rows
        print(f"  {NAMES[method]:<15} {rows:>9} {statistics.median(seconds[method]):9.2f} "
              f"{median[method]:>11,.0f}   {min(rates[method]):>11,.0f}-{max(rates[method]):,.0f}")
    copy_ratio = median["txd"] / median["copy"]
    # Judged against the faster of the two INSERT figures: the goal must
    # hold against per-row inserting at its best.
    fastest = max(SAMPLED, key=lambda method: median[method])
    insert_ratio = median["txd"] / median[fastest]
    copy_met = copy_ratio >= GOAL_COPY_RATIO
    insert_met = insert_ratio >= GOAL_INSERT_RATIO
    print(f"vigil-txd / psql COPY:      {copy_ratio:6.2f}   goal >= {GOAL_COPY_RATIO}: "
          f"{'met' if copy_met else 'NOT met'}")
    for method in SAMPLED:
        ratio = median["txd"] / median[method]
        print(f"vigil-txd / {NAMES[method] + ':':<15}{ratio:6.1f}"
              + (f"   goal >= {GOAL_INSERT_RATIO:.0f} (the faster INSERT): "
                 f"{'met' if insert_met else 'NOT met'}" if method == fastest else ""))
    print(f"both goals: {'met' if copy_met and insert_met else 'NOT met'}")


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sender")
    parser.add_argument("vigil_txd")
    parser.add_argument("vigil_cli")
    parser.add_argument("pg_private")
    parser.add_argument("plugin_dir")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch-rows", type=int, default=20_000)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--insert-rows", type=int, default=50_000)
    parser.add_argument("--insert-unprepared", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for name in ("rows", "batch_rows", "window", "insert_rows", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    # vigil-txd detaches into /, where relative paths mean nothing.
    for name in ("sender", "vigil_txd", "vigil_cli", "pg_private", "plugin_dir"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    if args.insert_rows > args.rows:
        parser.error("--insert-rows cannot be more than --rows: the sample is their first rows")
    # One hour into today, UTC: the rows' day, whose partition the template
    # holds, whenever in the day the run is (the rows span a second).
    now_s = int(time.time())
    args.start_realtime_ns = (now_s - now_s % 86400 + 3600) * 10**9
    return args


def main():
    args = parse_arguments()
    # A meson timeout or a kill ends the run as an exception, on whose way
    # out vigil-txd and the cluster are stopped and the folders removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench-ingest: terminated"))
    try:
        with tempfile.TemporaryDirectory(prefix="vigil-bench-ingest-") as work, \
                tempfile.TemporaryDirectory(prefix="vigil-bench-ingest-pg-") as pg_dir:
            with Cluster(args.pg_private, pg_dir) as cluster:
                print(f"bench-ingest: {cluster.description()}")
                reference, copy_bytes = prepare(args, cluster, work)
                batches = -(-args.rows // args.batch_rows)
                print(f"{args.rows} activities: vigil-txd gets {batches} batches of up to "
                      f"{args.batch_rows} (window {args.window}); psql COPY a text file of "
                      f"{copy_bytes / 2**20:.0f} MiB; INSERT per row the first "
                      f"{args.insert_rows} ({'unprepared' if args.insert_unprepared else 'prepared'}, "
                      f"one transaction); {args.rounds} rounds, "
                      "each method in a fresh database", flush=True)
                rates, seconds = measure(args, cluster, work, reference)
                figures = getattr(args, "txd_figures", None)
                if figures:
                    print(f"vigil-txd's batches: {figures['wire_bytes'] / figures['batches'] / 2**20:.2f} "
                          "MiB each on the wire")
                report(args, rates, seconds)
    except FAILURES as failure:
        print(f"bench-ingest: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
