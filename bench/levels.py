#!/usr/bin/env python3
"""bench-levels: the coarser roll-up levels (5 s and 60 s) built by the SQL
aggregation (vigil_build_levels, migration 15) and by the C one
(vigil_warehouse_build_levels: `vigil db maintain`), in one run on the same
roll-ups, side by side as ratios.

    levels.py VIGIL_CLI PG_PRIVATE [--nodes N] [--hours H]
              [--profiles realistic,minimal]

One private PostgreSQL cluster (tools/pg-private, autovacuum off so that
only the builds use its CPU); per profile a database migrated by `vigil db
migrate` and N nodes (default 4) × H hours (default 1) of 1 s roll-ups two
days ago, each row one node's every metric as arrays (statistics_rollup_
arrays), as vigil-txd stores them: the realistic profile's 434 metrics or
the minimal one's 50 (bench/fanin.py's), random values, every other metric
a gauge (delta NULL). Then, from nothing built each time:

sql: psql runs vigil_build_levels('1 day') until it is caught up;
c:   `vigil db maintain` (day partitions, then the C pass a day at a time
     until caught up).

Each is timed (wall) and charged the CPU of the whole cluster (the
postmaster's children, alive and reaped) and, for C, of `vigil` itself.
The two builds' blocks are compared: every slot equal (beyond floating
rounding: sums in another order), else the run fails. Printed per
profile: µs of PostgreSQL CPU and of wall time per 1 s value (a metric of
a node-second), the client's CPU per value, and the nodes one PostgreSQL
core keeps built at that cost (1 / (CPU per value × metrics)).

Exits 0 with the figures, 1 when the run failed."""
import argparse
import os
import resource
import signal
import sys
import tempfile
import time

from bench_support import FAILURES, Cluster, Failed, run

PROFILES = {"realistic": 434, "minimal": 50}

# The nodes' roll-ups: one row a second, its metric set's arrays; every
# other metric a gauge.
ROLLUPS_SQL = """
INSERT INTO nodes (node_id, hostname) SELECT n, 'node' || n FROM generate_series(1, {nodes}) n;
INSERT INTO metric_sets (metric_set_id, metric_ids)
     VALUES (1, ARRAY(SELECT generate_series(1, {metrics})));
SELECT vigil_day_partition('statistics_rollup_arrays',
                           (now() AT TIME ZONE 'UTC')::date - 2);
INSERT INTO statistics_rollup_arrays
SELECT n, 1, t, t + interval '1 s',
       array_fill(10, ARRAY[{metrics}]),
       ARRAY(SELECT floor(random() * 1000) FROM generate_series(1, {metrics})),
       ARRAY(SELECT 1000 + floor(random() * 1000) FROM generate_series(1, {metrics})),
       ARRAY(SELECT 2000 + floor(random() * 1000) FROM generate_series(1, {metrics})),
       ARRAY(SELECT CASE WHEN m % 2 = 0 THEN floor(random() * 5000) END
               FROM generate_series(1, {metrics}) m),
       repeat('0', {metrics})::varbit
  FROM generate_series(1, {nodes}) n, generate_series(0, {hours} * 3600 - 1) s,
       LATERAL (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
                       - interval '2 days' + interval '6 hours' + s * interval '1 s' AS t) x
"""

# Slots of the SQL build (kept as sql_blocks) and the C one that differ
# beyond floating rounding, and rows in one only.
DIFFER_SQL = """
SELECT count(*) FROM sql_blocks a FULL JOIN statistics_level_blocks b
 USING (node_id, metric_id, level_s, block_start),
 LATERAL unnest(a.samples, a.seconds, a.min, a.mean, a.max, a.delta, a.rate_min, a.rate_max,
                b.samples, b.seconds, b.min, b.mean, b.max, b.delta, b.rate_min, b.rate_max)
         AS u (s1, e1, n1, m1, x1, d1, r1, q1, s2, e2, n2, m2, x2, d2, r2, q2)
 WHERE u.s1 IS DISTINCT FROM u.s2 OR EXISTS (SELECT 1 FROM (VALUES (e1, e2), (n1, n2),
       (m1, m2), (x1, x2), (d1, d2), (r1, r2), (q1, q2)) p (a, b)
       WHERE NOT coalesce((a IS NULL AND b IS NULL)
                          OR abs(a - b) <= 1e-12 * greatest(abs(a), abs(b), 1), false))
"""


def cluster_cpu_s(data_dir):
    """The CPU seconds of the cluster: its postmaster's, its reaped
    children's and its live children's (user + system)."""
    with open(os.path.join(data_dir, "postmaster.pid")) as f:
        postmaster = int(f.readline())
    tick = os.sysconf("SC_CLK_TCK")

    def fields(pid):
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
        return text[text.rindex(")") + 2:].split()

    own = fields(postmaster)
    # utime, stime, cutime, cstime are fields 14-17 (1-based); after the
    # command, index 0 is field 3.
    total = sum(int(x) for x in own[11:15])
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == postmaster:
            continue
        try:
            f = fields(int(entry))
        except OSError:
            continue
        if int(f[1]) == postmaster:
            total += int(f[11]) + int(f[12])
    return total / tick


def children_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measured(cluster, data_dir, action):
    """Runs `action`; (wall s, cluster CPU s, this process's children's CPU s)."""
    cluster.psql("postgres", "CHECKPOINT")
    cpu0, client0, wall0 = cluster_cpu_s(data_dir), children_cpu_s(), time.monotonic()
    action()
    # What the build left to write is its cost too.
    cluster.psql("postgres", "CHECKPOINT")
    wall = time.monotonic() - wall0
    return wall, cluster_cpu_s(data_dir) - cpu0, children_cpu_s() - client0


def forget_levels(cluster, database):
    cluster.psql(database, "TRUNCATE statistics_level_blocks;"
                 " UPDATE statistics_levels SET built_until = NULL")
    cluster.psql(database, "VACUUM ANALYZE")


def bench_profile(args, cluster, data_dir, profile):
    metrics = PROFILES[profile]
    database = f"levels_{profile}"
    conninfo = cluster.conninfo_for(database)
    cluster.psql("postgres", f"CREATE DATABASE {database}")
    run([args.vigil_cli, "db", "migrate", "--conninfo", conninfo], "vigil db migrate",
        env=cluster.env)
    cluster.psql(database, ROLLUPS_SQL.format(nodes=args.nodes, hours=args.hours,
                                              metrics=metrics), "loading the roll-ups")
    cluster.psql(database, "VACUUM ANALYZE")
    values = args.nodes * args.hours * 3600 * metrics

    forget_levels(cluster, database)
    sql = measured(cluster, data_dir, lambda: cluster.psql(
        database, "DO $$ BEGIN LOOP EXIT WHEN (SELECT bool_and(caught_up)"
        " FROM vigil_build_levels('1 day')); END LOOP; END $$", "the SQL build"))
    cluster.psql(database, "CREATE TABLE sql_blocks AS SELECT * FROM statistics_level_blocks")
    blocks = int(cluster.psql(database, "SELECT count(*) FROM sql_blocks"))
    forget_levels(cluster, database)
    c = measured(cluster, data_dir, lambda: run(
        [args.vigil_cli, "db", "maintain", "--conninfo", conninfo], "vigil db maintain",
        env=cluster.env))
    differ = int(cluster.psql(database, DIFFER_SQL, "comparing the builds"))
    if differ:
        raise Failed(f"{profile}: {differ} slots of the C build differ from the SQL build's")
    c_blocks = int(cluster.psql(database, "SELECT count(*) FROM statistics_level_blocks"))
    if c_blocks != blocks or blocks == 0:
        raise Failed(f"{profile}: {c_blocks} blocks built in C, {blocks} in SQL")
    cluster.psql("postgres", f"DROP DATABASE {database}")
    return {"metrics": metrics, "values": values, "blocks": blocks, "sql": sql, "c": c}


def report(results):
    print("\n  profile    metrics  1 s values  build  PG CPU µs/value  wall µs/value  "
          "client CPU µs/value  nodes a PG core keeps built")
    for profile, r in results:
        for way in ("sql", "c"):
            wall, pg_cpu, client = r[way]
            per = lambda s: s * 1e6 / r["values"]  # noqa: E731
            nodes = 1 / (pg_cpu / r["values"] * r["metrics"]) if pg_cpu > 0 else float("inf")
            print(f"  {profile:<10} {r['metrics']:>7} {r['values']:>11,}  {way:<5} "
                  f"{per(pg_cpu):>15.3f} {per(wall):>14.3f} "
                  f"{per(client) if way == 'c' else 0:>20.3f} {nodes:>27,.0f}")
        sql, c = r["sql"], r["c"]
        print(f"  {profile:<10} {'':>7} {'':>11}  ratio SQL / C: PostgreSQL CPU "
              f"{sql[1] / max(c[1], 1e-9):.1f} x, wall {sql[0] / max(c[0], 1e-9):.1f} x "
              f"({r['blocks']:,} blocks each, equal)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vigil_cli")
    parser.add_argument("pg_private")
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--hours", type=int, default=1)
    parser.add_argument("--profiles", default="realistic,minimal")
    args = parser.parse_args()
    profiles = args.profiles.split(",")
    if any(p not in PROFILES for p in profiles) or args.nodes < 1 or not 1 <= args.hours <= 17:
        parser.error(f"--profiles from {','.join(PROFILES)}; --nodes at least 1; "
                     "--hours 1 to 17 (the roll-ups stay in one day)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench-levels: terminated"))
    try:
        with tempfile.TemporaryDirectory(prefix="vigil-bench-levels-pg-") as pg_dir:
            with Cluster(args.pg_private, pg_dir) as cluster:
                cluster.psql("postgres", "ALTER SYSTEM SET autovacuum = off")
                cluster.psql("postgres", "SELECT pg_reload_conf()")
                print(f"bench-levels: {cluster.description()}; {args.nodes} nodes × "
                      f"{args.hours} h each profile", flush=True)
                results = [(p, bench_profile(args, cluster, os.path.join(pg_dir, "data"), p))
                           for p in profiles]
                report(results)
    except FAILURES as failure:
        print(f"bench-levels: {failure}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
