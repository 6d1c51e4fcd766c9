#!/usr/bin/env python3
"""bench-storage: the warehouse's statistics in bytes per node-hour and rows
per node-second, one row per metric (the layout before migration 13)
beside one row per node and window holding arrays (after it), for the
realistic and the minimal profile of bench/fanin.py.

    storage.py FANIN_LOAD VIGIL_TXD VIGIL_CLI PG_PRIVATE PLUGIN_DIR
               [--nodes N] [--seconds S] [--profiles realistic,minimal]

One private PostgreSQL cluster (tools/pg-private); per profile a fresh
database migrated by `vigil db migrate`, one vigil-txd and fanin-load as N
nodes (default 8) sending one batch a second for about S seconds (default
30, after 3 s of warm-up). Every stored batch is one node-second: the
node-seconds are counted in ingested_batches, not assumed.

after:  what vigil-txd stored: statistics_rollup_arrays,
        window_statistics_arrays (every day partition, with its TOAST
        table and indexes: pg_total_relation_size) and metric_sets.
before: the same rows, read back through the views statistics_rollups and
        window_statistics, inserted in the order they arrived (time, node,
        metric) into tables of migration 1's shape with the indexes they
        had (node and time on both; migration 4's covering index on node,
        metric and time for the roll-ups), the indexes made first as on a
        live warehouse. The rows are compared: the two layouts must hold
        the same statistics, else the run fails.

levels: the coarser roll-up levels (migration 15: 5 s and 60 s slots, a
        row per node, metric and block) built over the stored roll-ups by
        vigil_build_level_blocks: what they add. A run is shorter than a
        block (10 min, 1 h), so a block holds only part of its slots; the
        figure a node-hour is an estimate: each row's size beyond that of
        the same row with no slot filled, scaled to all its slots filled
        (as its filled ones are), times a node-hour's rows, plus an index
        entry a row. Full blocks of real data compress differently (pglz
        on longer arrays): a first look, not a measurement of full blocks.

It prints, per profile, bytes per node-hour and rows per node-second of
each layout and their ratio, the arrays with and without the levels, with
the goal of issue 32 (the realistic profile at least 5x smaller). It exits 0 whether the goal is met or not (a
measurement), 1 when the run failed."""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
from types import SimpleNamespace

import fanin
from bench_support import FAILURES, RUN_TIMEOUT_S, Failed, log_tail, run

GOAL_RATIO = 5.0
# fanin-load's options for each profile (docs/scaling.md): realistic is its
# defaults (48 cores and ranks, 434 metrics, 17.5 % of cycles captured).
PROFILES = {
    "realistic": {},
    "minimal": {"ranks": 1, "cores": 0, "activity_rate": 0, "forwarded_share": 0.0},
}

OLD_TABLES_SQL = """
CREATE TABLE old_rollups (
    node_id bigint NOT NULL, metric_id integer NOT NULL, start_time timestamptz NOT NULL,
    end_time timestamptz NOT NULL, samples integer NOT NULL, min double precision NOT NULL,
    mean double precision NOT NULL, max double precision NOT NULL, delta double precision,
    uncertain boolean NOT NULL);
CREATE INDEX ON old_rollups (node_id, start_time);
CREATE INDEX ON old_rollups (node_id, metric_id, start_time)
    INCLUDE (end_time, min, mean, max, delta);
CREATE TABLE old_samples (
    node_id bigint NOT NULL, metric_id integer NOT NULL, time timestamptz NOT NULL,
    t_ns bigint NOT NULL, value double precision NOT NULL, uncertain boolean NOT NULL);
CREATE INDEX ON old_samples (node_id, time);
INSERT INTO old_rollups SELECT * FROM statistics_rollups ORDER BY start_time, node_id, metric_id;
INSERT INTO old_samples SELECT * FROM window_statistics ORDER BY time, node_id, metric_id;
"""

# Bytes of a partitioned table: every partition's heap, TOAST and indexes.
TREE_BYTES = ("(SELECT coalesce(sum(pg_total_relation_size(relid)), 0) "
              "FROM pg_partition_tree('{}') WHERE isleaf)")


def store(args, cluster, database, work, profile):
    """fanin-load as --nodes nodes through one vigil-txd into `database`."""
    options = dict(fanin_load=args.fanin_load, vigil_txd=args.vigil_txd,
                   vigil_cli=args.vigil_cli, plugin_dir=args.plugin_dir, pg_options=None,
                   txd_prefix=None, seconds=args.seconds, warmup_s=3, drain_s=10,
                   restart=False, restart_at_s=None)
    options.update({name: None for name in fanin.PROFILE + fanin.RECONNECT
                    if name not in options})
    options.update(PROFILES[profile])
    group = fanin.group_run(SimpleNamespace(**options), cluster, database, work, args.nodes, 1)
    try:
        out, err = group["load"].communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        group["load"].kill()
        raise Failed(f"fanin-load did not finish within {RUN_TIMEOUT_S} s") from None
    finally:
        fanin.stop_txd(group["pid"], group["log"])
    if group["load"].returncode != 0:
        raise Failed(f"fanin-load run failed (status {group['load'].returncode}):\n{err}{out}\n"
                     f"vigil-txd's log ends with:\n{log_tail(group['log'])}")


def measure(cluster, database):
    q = lambda sql: int(cluster.psql(database, sql))  # noqa: E731
    node_seconds = q("SELECT count(*) FROM ingested_batches")
    if node_seconds == 0:
        raise Failed(f"{database}: no batch was stored")
    cluster.psql(database, OLD_TABLES_SQL)
    # Nothing lost: every node-second's roll-up of every metric is there.
    metrics = q("SELECT count(DISTINCT metric_id) FROM statistics_rollups")
    rollups = q("SELECT count(*) FROM old_rollups")
    if rollups != node_seconds * metrics:
        raise Failed(f"{database}: {rollups} roll-ups, not {node_seconds} node-seconds x "
                     f"{metrics} metrics")
    after_bytes = q(f"SELECT {TREE_BYTES.format('statistics_rollup_arrays')}"
                    f" + {TREE_BYTES.format('window_statistics_arrays')}"
                    " + pg_total_relation_size('metric_sets')")
    before_bytes = q("SELECT pg_total_relation_size('old_rollups')"
                     " + pg_total_relation_size('old_samples')")
    # The levels over every block the roll-ups fall in.
    cluster.psql(database, "SELECT vigil_build_level_blocks(l.level_s,"
                 " vigil_level_block_start(r.first, l.level_s, l.block_slots),"
                 " vigil_level_block_start(r.last, l.level_s, l.block_slots)"
                 " + make_interval(secs => l.level_s * l.block_slots))"
                 " FROM statistics_levels l, (SELECT min(start_time) AS first,"
                 " max(start_time) AS last FROM statistics_rollup_arrays) r")
    # A run is shorter than a block: each row's size beyond that of the
    # same row with no slot filled (array headers and NULL bitmaps) scaled
    # to all its slots filled as its filled ones are, times the rows of a
    # node-hour, plus an index entry (about 40 bytes) a row.
    levels_per_node_hour = 0.0
    for row in cluster.psql(
            database, "SELECT level_s, block_slots, avg(empty + (whole - empty)"
            " * block_slots / filled) FROM (SELECT l.level_s, l.block_slots,"
            " pg_column_size(b.*)::float8 AS whole,"
            " (SELECT count(*) FROM unnest(b.samples) x WHERE x > 0) AS filled,"
            " pg_column_size(ROW(b.node_id, b.metric_id, b.level_s, b.block_start,"
            " array_fill(0, ARRAY[l.block_slots]), e, e, e, e, e, e, e))::float8 AS empty"
            " FROM statistics_level_blocks b JOIN statistics_levels l USING (level_s),"
            " LATERAL (SELECT array_fill(NULL::float8, ARRAY[l.block_slots]) AS e) n) r"
            " GROUP BY 1, 2").splitlines():
        level_s, slots, full_row_bytes = row.split("|")
        rows_per_node_hour = metrics * 3600 / (int(level_s) * int(slots))
        levels_per_node_hour += rows_per_node_hour * (float(full_row_bytes) + 40)
    return {
        "levels_rows": q("SELECT count(*) FROM statistics_level_blocks"),
        "levels_bytes_per_node_hour": levels_per_node_hour,
        "node_seconds": node_seconds,
        # fanin-load sends a window item per rank of each captured cycle.
        "captured": q("SELECT count(DISTINCT (node_id, first_cycle)) FROM captures"),
        "metrics": metrics,
        "before_rows": q("SELECT (SELECT count(*) FROM old_rollups)"
                         " + (SELECT count(*) FROM old_samples)"),
        "after_rows": q("SELECT (SELECT count(*) FROM statistics_rollup_arrays)"
                        " + (SELECT count(*) FROM window_statistics_arrays)"),
        "before_bytes": before_bytes,
        "after_bytes": after_bytes,
    }


def report(results):
    print("\n  profile    metrics  node-s  captured  layout              rows/node-s  "
          "bytes/node-hour")
    for profile, f in results:
        per_hour = lambda b: b * 3600 / f["node_seconds"]  # noqa: E731
        for name, key in (("row per metric", "before"), ("arrays (after)", "after")):
            print(f"  {profile:<10} {f['metrics']:>7} {f['node_seconds']:>7} "
                  f"{f['captured'] / f['node_seconds']:>8.1%}  {name:<18}"
                  f"{f[key + '_rows'] / f['node_seconds']:>13.1f} "
                  f"{per_hour(f[key + '_bytes']) / 2**20:>12.1f} MiB")
        with_levels = per_hour(f["after_bytes"]) + f["levels_bytes_per_node_hour"]
        print(f"  {profile:<10} {f['metrics']:>7} {f['node_seconds']:>7} "
              f"{f['captured'] / f['node_seconds']:>8.1%}  {'arrays + levels':<18}"
              f"{'':>13} {with_levels / 2**20:>12.1f} MiB  (the levels about "
              f"{f['levels_bytes_per_node_hour'] / 2**20:.1f} MiB, estimated from "
              f"{f['levels_rows']} rows)")
        print(f"  {profile:<10} ratio before/after: rows {f['before_rows'] / f['after_rows']:.1f}x,"
              f" bytes {f['before_bytes'] / f['after_bytes']:.1f}x, with the levels "
              f"{per_hour(f['before_bytes']) / with_levels:.1f}x")
    for profile, f in results:
        if profile == "realistic":
            ratio = f["before_bytes"] / f["after_bytes"]
            print(f"goal: realistic profile >= {GOAL_RATIO:.0f}x smaller per node-hour: "
                  f"{ratio:.1f}x, {'met' if ratio >= GOAL_RATIO else 'NOT met'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("fanin_load", "vigil_txd", "vigil_cli", "pg_private", "plugin_dir"):
        parser.add_argument(name)
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--profiles", default="realistic,minimal")
    args = parser.parse_args()
    for name in ("fanin_load", "vigil_txd", "vigil_cli", "pg_private", "plugin_dir"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
    profiles = args.profiles.split(",")
    if any(p not in PROFILES for p in profiles) or args.nodes < 1 or args.seconds < 1:
        parser.error(f"--profiles from {','.join(PROFILES)}; --nodes and --seconds at least 1")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench-storage: terminated"))
    try:
        with tempfile.TemporaryDirectory(prefix="vigil-bench-storage-") as work, \
                tempfile.TemporaryDirectory(prefix="vigil-bench-storage-pg-") as pg_dir:
            with fanin.Cluster(args.pg_private, pg_dir) as cluster:
                print(f"bench-storage: {cluster.description()}; {args.nodes} nodes, "
                      f"{args.seconds} s each profile", flush=True)
                results = []
                for profile in profiles:
                    database = f"storage_{profile}"
                    cluster.psql("postgres", f"CREATE DATABASE {database}")
                    run([args.vigil_cli, "db", "migrate", "--conninfo",
                         cluster.conninfo_for(database)], "vigil db migrate", env=cluster.env)
                    cluster.psql(database, "SELECT vigil_activity_partition("
                                 "(now() AT TIME ZONE 'UTC')::date)")
                    store(args, cluster, database, os.path.join(work, profile), profile)
                    results.append((profile, measure(cluster, database)))
                report(results)
    except FAILURES as failure:
        print(f"bench-storage: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
