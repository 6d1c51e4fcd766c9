-- vigil-web's benchmark warehouse: one long MPI run and many short runs,
-- generated set-based (INSERT … SELECT generate_series) into a database
-- migrated to the latest schema and otherwise empty:
--
--   conninfo=$(tools/pg-private start /tmp/bench-web/pg)
--   build/cli/vigil db migrate --conninfo "$conninfo"
--   psql "$conninfo" -X -v ON_ERROR_STOP=1 -q -f bench/web/generate.sql
--
-- The sizes are psql variables (-v NAME=VALUE), with the issue's defaults:
--   ranks 1000             ranks of the long run (run 1), spread over
--   nodes 32               nodes node001 … node032 (rank r on node r % nodes + 1)
--   run_s 3600             its length in seconds, from
--   start '2026-11-20 00:00:00+00'
--   captures 20            captured windows in it, each of one rank's process,
--   capture_activities 50000  activities each (1,000,000 in all), over
--   capture_s 60           seconds each, window_statistics every 100 ms in them
--   anomalies 200          node-level anomalies spread over the run, besides
--                          2 per captured window
--   short_runs 10000       one-process runs over the `days` before `start`,
--   days 30                on the same nodes, each with the same small report
--
-- What it makes (defaults): 32 nodes, 12 metrics; run 1 with 1000
-- processes and 1000 run_summaries (rank 0's the job's report with 1000
-- energy_by_rank entries, the others "in_job_report": figures NULL, as
-- vigil-txd stores them); statistics_rollups at 1 s for the 32 nodes over
-- the hour and the 12 metrics (1,382,400 rows of the view, 115,200 rows
-- of arrays since migration 13; the fixture's formulas:
-- tests/web/fixture.sql); window_statistics at 100 ms in the 20 windows
-- for their node (20 × 600 × 12 = 144,000 rows of the view, 12,000 of arrays); 1,000,000 activities
-- and their per-second counts (activity_seconds, 2,400 rows);
-- 240 anomalies; reasoner states every cycle of every window; 10,000 short
-- runs (runs 2 … 10001). Every id is explicit; the sequences are set past
-- them at the end.
--
-- Measured here with the defaults (2 cores shared with other work,
-- PostgreSQL 15.18, default settings, under nice; psql's \timing): about
-- 30 s in all — statistics_rollups 14.2 s, activities 6.4 s, the short
-- runs' reports 1.9 s, the day partitions 2.4 s, ANALYZE 2.0 s,
-- window_statistics 1.0 s — and the database is then 450 MB
-- (pg_database_size).
--
-- Then the roll-up levels (5 s and 60 s, migration 15) are built as `vigil
-- db maintain` builds them, and their time printed.
--
-- Not generated: roll-ups outside the long run's hour (the short runs'
-- series are empty), the job report's per_rank statistics (the template's,
-- of 4 ranks), ingested_batches.

\if :{?ranks} \else \set ranks 1000 \endif
\if :{?nodes} \else \set nodes 32 \endif
\if :{?run_s} \else \set run_s 3600 \endif
\if :{?start} \else \set start '2026-11-20 00:00:00+00' \endif
\if :{?captures} \else \set captures 20 \endif
\if :{?capture_activities} \else \set capture_activities 50000 \endif
\if :{?capture_s} \else \set capture_s 60 \endif
\if :{?anomalies} \else \set anomalies 200 \endif
\if :{?short_runs} \else \set short_runs 10000 \endif
\if :{?days} \else \set days 30 \endif

\set ON_ERROR_STOP 1
\timing on
BEGIN;

CREATE TEMPORARY TABLE bench_settings ON COMMIT DROP AS
SELECT :ranks::integer AS ranks, :nodes::integer AS nodes, :run_s::integer AS run_s,
       :'start'::timestamptz AS start_time, :captures::integer AS captures,
       :capture_activities::integer AS capture_activities, :capture_s::integer AS capture_s,
       :anomalies::integer AS anomalies, :short_runs::integer AS short_runs,
       :days::integer AS days;

-- Every day's partition the rows need.
DO $$
DECLARE
    s bench_settings;
BEGIN
    SELECT * INTO s FROM bench_settings;
    PERFORM vigil_day_partition(t, d::date)
       FROM unnest(ARRAY['activities', 'statistics_rollups', 'window_statistics',
                         'reasoner_states']) t,
            generate_series((s.start_time AT TIME ZONE 'UTC')::date - s.days - 1,
                            ((s.start_time + s.run_s * interval '1 s') AT TIME ZONE 'UTC')::date,
                            interval '1 day') d;
END $$;

-- ---- nodes, metrics, reports ------------------------------------------------------

INSERT INTO nodes (node_id, hostname, first_seen, last_seen)
SELECT n, format('node%s', lpad(n::text, 3, '0')), s.start_time - s.days * interval '1 day',
       s.start_time + s.run_s * interval '1 s'
  FROM bench_settings s, generate_series(1, s.nodes) n;

INSERT INTO metrics (metric_id, name, unit, kind, source, origin) VALUES
    (1, 'node.energy_j', 'J', 'counter', 'energy/powercap', 'measured'),
    (2, 'cpu.user_s', 's', 'counter', 'procstat', 'measured'),
    (3, 'cpu.system_s', 's', 'counter', 'procstat', 'measured'),
    (4, 'cpu.idle_s', 's', 'counter', 'procstat', 'measured'),
    (5, 'cpu.iowait_s', 's', 'counter', 'procstat', 'measured'),
    (6, 'mem.used_bytes', 'bytes', 'gauge', 'meminfo', 'measured'),
    (7, 'disk.sda.read_bytes', 'bytes', 'counter', 'diskstats', 'measured'),
    (8, 'disk.sda.write_bytes', 'bytes', 'counter', 'diskstats', 'measured'),
    (9, 'disk.sda.reads', 'count', 'counter', 'diskstats', 'measured'),
    (10, 'disk.sda.writes', 'count', 'counter', 'diskstats', 'measured'),
    (11, 'net.eth0.rx_bytes', 'bytes', 'counter', 'netdev', 'measured'),
    (12, 'net.eth0.tx_bytes', 'bytes', 'counter', 'netdev', 'measured');

-- The rates of tests/web/fixture.sql: base + amplitude × sin(2π (s +
-- phase × node) / period), s the epoch second.
CREATE TEMPORARY TABLE bench_rates ON COMMIT DROP AS
SELECT p.*, m.kind = 'counter' AS counter
  FROM (VALUES (1, 150.0, 10.0, 60, 0, false),
               (2, 2.0, 1.0, 300, 7, false),
               (3, 0.5, 0.2, 300, 7, false),
               (4, 5.3, -1.2, 300, 7, false),
               (5, 0.2, 0.0, 300, 7, false),
               (6, 8589934592.0, 1073741824.0, 600, 7, true),
               (7, 10000000.0, 5000000.0, 120, 7, true),
               (8, 20000000.0, 10000000.0, 90, 7, true),
               (9, 100.0, 50.0, 120, 7, true),
               (10, 200.0, 100.0, 90, 7, true),
               (11, 1000000.0, 500000.0, 240, 7, true),
               (12, 500000.0, 250000.0, 240, 7, true))
       AS p (metric_id, base, amplitude, period, phase, integral)
  JOIN metrics m USING (metric_id);

-- Reports `vigil run` wrote here (tests/web/fixture.sql's runs 1 and 3),
-- as templates: the job's, a rank's, a single process's.
CREATE TEMPORARY TABLE bench_templates (name text PRIMARY KEY, report jsonb NOT NULL)
    ON COMMIT DROP;
INSERT INTO bench_templates VALUES
    ('job', '{"pid": 4100, "argv": ["ior", "-w", "-r"], "host": "n1", "files": [], "ranks": 4, "layers": {"mpiio": {"open": {"bytes": 0, "calls": 4, "errors": 0, "time_ns": 72222700}, "sync": {"bytes": 0, "calls": 4, "errors": 0, "time_ns": 67189224}, "close": {"bytes": 0, "calls": 4, "errors": 0, "time_ns": 6997145}, "delete": {"bytes": 0, "calls": 1, "errors": 1, "time_ns": 2955389}, "read_at_all": {"bytes": 16777216, "calls": 256, "errors": 0, "time_ns": 263028334}, "write_at_all": {"bytes": 16777216, "calls": 256, "errors": 0, "time_ns": 239767084}}, "posix": {"mmap": {"bytes": 0, "calls": 28, "errors": 0, "time_ns": 395231}, "open": {"bytes": 0, "calls": 92, "errors": 48, "time_ns": 4329018}, "read": {"bytes": 3400, "calls": 306, "errors": 0, "time_ns": 1582764}, "recv": {"bytes": 32, "calls": 8, "errors": 0, "time_ns": 151592015}, "send": {"bytes": 284, "calls": 4, "errors": 0, "time_ns": 151346}, "stat": {"bytes": 0, "calls": 834, "errors": 12, "time_ns": 43500957}, "close": {"bytes": 0, "calls": 176, "errors": 0, "time_ns": 774035}, "fcntl": {"bytes": 0, "calls": 28, "errors": 0, "time_ns": 71716}, "fstat": {"bytes": 0, "calls": 48, "errors": 0, "time_ns": 99070}, "fsync": {"bytes": 0, "calls": 4, "errors": 0, "time_ns": 66122035}, "lstat": {"bytes": 0, "calls": 4, "errors": 0, "time_ns": 14336}, "mkdir": {"bytes": 0, "calls": 14, "errors": 9, "time_ns": 2702635}, "pread": {"bytes": 16777216, "calls": 64, "errors": 0, "time_ns": 1499191}, "write": {"bytes": 1912, "calls": 235, "errors": 0, "time_ns": 30640328}, "access": {"bytes": 0, "calls": 8, "errors": 8, "time_ns": 203903}, "pwrite": {"bytes": 16777216, "calls": 64, "errors": 0, "time_ns": 4378335}, "unlink": {"bytes": 0, "calls": 9, "errors": 1, "time_ns": 458152}, "writev": {"bytes": 19142, "calls": 36, "errors": 0, "time_ns": 3477389}}, "stdio": {"fopen": {"bytes": 0, "calls": 44, "errors": 32, "time_ns": 1083028}, "fread": {"bytes": 38936, "calls": 24, "errors": 0, "time_ns": 704369}, "fclose": {"bytes": 0, "calls": 12, "errors": 0, "time_ns": 85758}, "fflush": {"bytes": 0, "calls": 1, "errors": 0, "time_ns": 1412}, "printf": {"bytes": 236, "calls": 8, "errors": 0, "time_ns": 1148665}}}, "vigild": {"gaps": null, "state": "standalone", "reason": "rank 0: no vigild at /run/vigil/vigild.sock (No such file or directory)", "capture": {"held": null, "lost": null, "mode": null, "cycles": null, "dropped": null, "observed": null, "forwarded": null, "abnormal_cycles": null}, "dropped": null, "anomalies": null, "cpu_seconds": null, "names_drained": null, "activities_drained": null, "ranks_with_summary": 0}, "program": "ior", "run_key": "fixture-ior-1", "per_rank": {"runtime_ms": {"max": 841.448289, "min": 726.767888, "sum": 3120.104557, "mean": 780.026139, "max_rank": 0}, "cpu_seconds": {"max": 0.293419, "min": 0.266015, "sum": 1.106893, "mean": 0.276723, "max_rank": 0}, "mpiio_calls": {"max": 132.0, "min": 131.0, "sum": 525.0, "mean": 131.25, "max_rank": 0}, "posix_calls": {"max": 590.0, "min": 450.0, "sum": 1962.0, "mean": 490.5, "max_rank": 0}, "stdio_calls": {"max": 29.0, "min": 20.0, "sum": 89.0, "mean": 22.25, "max_rank": 0}, "io_bytes_read": {"max": 4204908.0, "min": 4204876.0, "sum": 16819552.0, "mean": 4204888.0, "max_rank": 3}, "network_bytes": {"max": 79.0, "min": 79.0, "sum": 316.0, "mean": 79.0, "max_rank": 0}, "io_time_seconds": {"max": 0.264303, "min": 0.222394, "sum": 0.967176, "mean": 0.241794, "max_rank": 2}, "io_bytes_written": {"max": 4199813.0, "min": 4199535.0, "sum": 16798466.0, "mean": 4199616.5, "max_rank": 0}, "mpiio_bytes_read": {"max": 4194304.0, "min": 4194304.0, "sum": 16777216.0, "mean": 4194304.0, "max_rank": 0}, "posix_bytes_read": {"max": 16778062.0, "min": 846.0, "sum": 16780648.0, "mean": 4195162.0, "max_rank": 0}, "stdio_bytes_read": {"max": 9734.0, "min": 9734.0, "sum": 38936.0, "mean": 9734.0, "max_rank": 0}, "activities_dropped": {"max": 0.0, "min": 0.0, "sum": 0.0, "mean": 0.0, "max_rank": 0}, "activities_excluded": {"max": 448.0, "min": 448.0, "sum": 1792.0, "mean": 448.0, "max_rank": 0}, "activities_observed": {"max": 1199.0, "min": 1049.0, "sum": 4368.0, "mean": 1092.0, "max_rank": 0}, "activities_recorded": {"max": 751.0, "min": 601.0, "sum": 2576.0, "mean": 644.0, "max_rank": 0}, "mpiio_bytes_written": {"max": 4194304.0, "min": 4194304.0, "sum": 16777216.0, "mean": 4194304.0, "max_rank": 0}, "posix_bytes_written": {"max": 16782600.0, "min": 5302.0, "sum": 16798554.0, "mean": 4199638.5, "max_rank": 0}, "stdio_bytes_written": {"max": 236.0, "min": 0.0, "sum": 236.0, "mean": 59.0, "max_rank": 0}}, "activities": {"dropped": 0, "excluded": 1792, "observed": 4368, "recorded": 2576}, "runtime_ms": 841.448, "cpu_seconds": 1.106893, "energy_note": null, "energy_joule": 36250.0, "vigil_report": 1, "energy_source": "powercap", "io_bytes_read": 16819552, "network_bytes": 316, "energy_by_rank": [{"rank": 0, "energy_note": null, "energy_joule": 9125.0, "vigild_state": "standalone", "energy_source": "powercap", "energy_estimated": false, "energy_uncertain": false, "capture_forwarded": null, "vigild_process_id": null}, {"rank": 1, "energy_note": null, "energy_joule": 9125.0, "vigild_state": "standalone", "energy_source": "powercap", "energy_estimated": false, "energy_uncertain": false, "capture_forwarded": null, "vigild_process_id": null}, {"rank": 2, "energy_note": null, "energy_joule": 9000.0, "vigild_state": "standalone", "energy_source": "powercap", "energy_estimated": false, "energy_uncertain": false, "capture_forwarded": null, "vigild_process_id": null}, {"rank": 3, "energy_note": null, "energy_joule": 9000.0, "vigild_state": "standalone", "energy_source": "powercap", "energy_estimated": false, "energy_uncertain": false, "capture_forwarded": null, "vigild_process_id": null}], "energy_estimated": false, "energy_uncertain": false, "io_bytes_written": 16798466}'),
    ('rank', '{"pid": 4101, "argv": ["ior", "-w", "-r"], "host": "n1", "rank": 1, "files": [{"path": "/scratch/ior.dat", "calls": 131, "bytes_read": 4194304, "bytes_written": 4194304}, {"path": "/etc/openmpi/openmpi-mca-params.conf", "calls": 8, "bytes_read": 6714, "bytes_written": 0}, {"path": "/usr/lib/x86_64-linux-gnu/pmix2/share/pmix-mca-params.conf", "calls": 4, "bytes_read": 3020, "bytes_written": 0}, {"path": "/usr/share/misc/pci.ids", "calls": 6, "bytes_read": 0, "bytes_written": 0}, {"path": "/usr/share/misc/pci.ids.gz", "calls": 6, "bytes_read": 0, "bytes_written": 0}, {"path": "/tmp/ompi.vm.0/pid.11422/1/1", "calls": 5, "bytes_read": 0, "bytes_written": 0}, {"path": "/run/udev/data/b254:0", "calls": 5, "bytes_read": 0, "bytes_written": 0}, {"path": "<stderr>", "calls": 3, "bytes_read": 0, "bytes_written": 0}, {"path": "/tmp/ompi.vm.0/pid.11422/pmix_dstor_ds21_11422/smlockseg-1080033281", "calls": 3, "bytes_read": 0, "bytes_written": 0}, {"path": "<stdout>", "calls": 3, "bytes_read": 0, "bytes_written": 0}], "layers": {"mpiio": {"open": {"bytes": 0, "calls": 1, "errors": 0, "time_ns": 16561106}, "sync": {"bytes": 0, "calls": 1, "errors": 0, "time_ns": 16707722}, "close": {"bytes": 0, "calls": 1, "errors": 0, "time_ns": 1570729}, "read_at_all": {"bytes": 4194304, "calls": 64, "errors": 0, "time_ns": 65245811}, "write_at_all": {"bytes": 4194304, "calls": 64, "errors": 0, "time_ns": 59843420}}, "posix": {"mmap": {"bytes": 0, "calls": 7, "errors": 0, "time_ns": 62737}, "open": {"bytes": 0, "calls": 23, "errors": 12, "time_ns": 1176329}, "read": {"bytes": 962, "calls": 90, "errors": 0, "time_ns": 661166}, "recv": {"bytes": 8, "calls": 2, "errors": 0, "time_ns": 38253592}, "send": {"bytes": 71, "calls": 1, "errors": 0, "time_ns": 36099}, "stat": {"bytes": 0, "calls": 211, "errors": 3, "time_ns": 12171502}, "close": {"bytes": 0, "calls": 57, "errors": 0, "time_ns": 399401}, "fcntl": {"bytes": 0, "calls": 7, "errors": 0, "time_ns": 19146}, "fstat": {"bytes": 0, "calls": 12, "errors": 0, "time_ns": 28806}, "fsync": {"bytes": 0, "calls": 1, "errors": 0, "time_ns": 16663409}, "lstat": {"bytes": 0, "calls": 1, "errors": 0, "time_ns": 4248}, "mkdir": {"bytes": 0, "calls": 6, "errors": 4, "time_ns": 879367}, "write": {"bytes": 544, "calls": 68, "errors": 0, "time_ns": 3864291}, "access": {"bytes": 0, "calls": 2, "errors": 2, "time_ns": 82625}, "unlink": {"bytes": 0, "calls": 2, "errors": 0, "time_ns": 28284}, "writev": {"bytes": 4914, "calls": 15, "errors": 0, "time_ns": 1001214}}, "stdio": {"fopen": {"bytes": 0, "calls": 11, "errors": 8, "time_ns": 361562}, "fread": {"bytes": 9734, "calls": 6, "errors": 0, "time_ns": 162877}, "fclose": {"bytes": 0, "calls": 3, "errors": 0, "time_ns": 52920}}}, "vigild": {"gaps": null, "state": "standalone", "reason": "no vigild at /run/vigil/vigild.sock (No such file or directory)", "capture": {"held": null, "lost": null, "mode": null, "cycles": null, "dropped": null, "observed": null, "forwarded": null, "abnormal_cycles": null}, "dropped": null, "anomalies": null, "process_id": null, "cpu_seconds": null, "names_drained": null, "activities_drained": null}, "program": "ior", "run_key": "fixture-ior-1", "activities": {"dropped": 0, "excluded": 449, "observed": 1105, "recorded": 656}, "runtime_ms": 888.256, "cpu_seconds": 0.329369, "energy_note": null, "energy_joule": 9125.0, "vigil_report": 1, "energy_source": "powercap", "in_job_report": true, "io_bytes_read": 4205000, "network_bytes": 79, "energy_estimated": false, "energy_uncertain": false, "io_bytes_written": 4199762}'),
    ('single', '{"pid": 6100, "argv": ["dd", "if=/dev/zero", "of=/tmp/x", "bs=1M", "count=8"], "host": "n1", "files": [{"path": "/tmp/x", "calls": 12, "bytes_read": 0, "bytes_written": 8388608}, {"path": "<stderr>", "calls": 4, "bytes_read": 0, "bytes_written": 93}], "layers": {"mpiio": {}, "posix": {"dup2": {"bytes": 0, "calls": 1, "errors": 0, "time_ns": 2715}, "open": {"bytes": 0, "calls": 1, "errors": 0, "time_ns": 202822}, "close": {"bytes": 0, "calls": 2, "errors": 0, "time_ns": 6202}, "write": {"bytes": 8388608, "calls": 8, "errors": 0, "time_ns": 2406394}}, "stdio": {"fclose": {"bytes": 0, "calls": 1, "errors": 0, "time_ns": 2725}, "fflush": {"bytes": 0, "calls": 1, "errors": 0, "time_ns": 962}, "fprintf": {"bytes": 93, "calls": 2, "errors": 0, "time_ns": 118814}}}, "vigild": {"gaps": null, "state": "standalone", "reason": "no vigild at /run/vigil/vigild.sock (No such file or directory)", "capture": {"held": null, "lost": null, "mode": null, "cycles": null, "dropped": null, "observed": null, "forwarded": null, "abnormal_cycles": null}, "dropped": null, "anomalies": null, "process_id": null, "cpu_seconds": null, "names_drained": null, "activities_drained": null}, "program": "dd", "run_key": "fixture-dd-3", "activities": {"dropped": 0, "excluded": 13, "observed": 29, "recorded": 16}, "runtime_ms": 10.179, "cpu_seconds": 0.0148, "energy_note": null, "energy_joule": 1500.0, "vigil_report": 1, "energy_source": "powercap", "io_bytes_read": 0, "network_bytes": 0, "energy_estimated": false, "energy_uncertain": false, "io_bytes_written": 8388701}');

-- ---- the long run ---------------------------------------------------------------------

INSERT INTO jobs (job_id, scheduler_job_id) VALUES (1, '900001');

INSERT INTO runs (run_id, run_key, job_id, program, argv, uid, start_time, end_time, exit_status)
SELECT 1, 'bench-lammps-1', 1, 'lmp', '{lmp,-in,in.lj}', 1000, s.start_time,
       s.start_time + s.run_s * interval '1 s', 0
  FROM bench_settings s;

INSERT INTO processes (process_id, run_id, node_id, pid, uid, rank, program, argv, cwd,
                       start_time, start_monotonic_ns, end_time, exit_status)
SELECT r + 1, 1, r % s.nodes + 1, 100000 + r, 1000, r, 'lmp', '{lmp,-in,in.lj}', '/scratch/lj',
       s.start_time, (100000 + r) * 1000000000::bigint,
       s.start_time + s.run_s * interval '1 s', 0
  FROM bench_settings s, generate_series(0, s.ranks - 1) r;

-- Each rank's figures, varied by rank; rank 0's process holds the job's
-- report (their sums, 1000 energy_by_rank entries), as vigil-txd stores it.
CREATE TEMPORARY TABLE bench_rank_figures ON COMMIT DROP AS
SELECT r AS rank, r % s.nodes + 1 AS node_id, 100000 + r AS pid,
       1000000 + (r::bigint * 7919) % 50000 AS calls,
       (1073741824 + (r::bigint * 104729) % 268435456)::bigint AS bytes_read,
       (2147483648 + (r::bigint * 15485863) % 536870912)::bigint AS bytes_written,
       round((s.run_s * 150.0 * s.nodes / s.ranks * (0.9 + (r % 21) / 100.0))::numeric, 3)::float8
           AS energy_j
  FROM bench_settings s, generate_series(0, s.ranks - 1) r;

INSERT INTO run_summaries (process_id, report, calls, bytes_read, bytes_written, energy_j,
                           energy_source)
SELECT f.rank + 1,
       t.report || jsonb_build_object(
           'program', 'lmp', 'argv', jsonb_build_array('lmp', '-in', 'in.lj'), 'pid', f.pid,
           'rank', f.rank, 'host', format('node%s', lpad(f.node_id::text, 3, '0')),
           'run_key', 'bench-lammps-1', 'runtime_ms', s.run_s * 1000.0,
           'io_bytes_read', f.bytes_read, 'io_bytes_written', f.bytes_written,
           'energy_joule', f.energy_j,
           'activities', jsonb_build_object('observed', f.calls, 'recorded', f.calls,
                                            'dropped', 0, 'excluded', 0)),
       NULL, NULL, NULL, NULL, 'powercap'
  FROM bench_rank_figures f, bench_settings s, bench_templates t
 WHERE t.name = 'rank' AND f.rank > 0;

INSERT INTO run_summaries (process_id, report, calls, bytes_read, bytes_written, energy_j,
                           energy_source)
SELECT 1, r, (r->'activities'->>'observed')::bigint, (r->>'io_bytes_read')::bigint,
       (r->>'io_bytes_written')::bigint, (r->>'energy_joule')::float8, r->>'energy_source'
  FROM (SELECT t.report || jsonb_build_object(
                   'program', 'lmp', 'argv', jsonb_build_array('lmp', '-in', 'in.lj'),
                   'pid', 100000, 'host', 'node001', 'run_key', 'bench-lammps-1',
                   'runtime_ms', s.run_s * 1000.0, 'ranks', s.ranks,
                   'io_bytes_read', sum(f.bytes_read), 'io_bytes_written', sum(f.bytes_written),
                   'energy_joule', sum(f.energy_j),
                   'activities', jsonb_build_object('observed', sum(f.calls),
                                                    'recorded', sum(f.calls),
                                                    'dropped', 0, 'excluded', 0),
                   'energy_by_rank', jsonb_agg(
                       (t.report->'energy_by_rank'->0)
                       || jsonb_build_object('rank', f.rank, 'energy_joule', f.energy_j)
                       ORDER BY f.rank)) AS r
          FROM bench_rank_figures f, bench_settings s, bench_templates t
         WHERE t.name = 'job'
         GROUP BY t.report, s.run_s, s.ranks) j;

-- Every node's roll-ups over the run, 1 s each.
-- One row per node and window holding its metrics as arrays, as vigil-txd
-- stores them (migration 13); the view statistics_rollups shows them a
-- metric a row.
INSERT INTO statistics_rollup_arrays (node_id, metric_set_id, start_time, end_time, samples,
                                      min, mean, max, delta, uncertain)
SELECT node_id, vigil_metric_set(array_agg(metric_id ORDER BY metric_id)), t,
       t + interval '1 s', array_agg(10 ORDER BY metric_id),
       array_agg(CASE WHEN counter THEN 0.98 * v ELSE v - 0.01 * amplitude END
                 ORDER BY metric_id),
       array_agg(v ORDER BY metric_id),
       array_agg(CASE WHEN counter THEN 1.02 * v ELSE v + 0.01 * amplitude END
                 ORDER BY metric_id),
       array_agg(CASE WHEN counter THEN v END ORDER BY metric_id),
       repeat('0', count(*)::integer)::varbit
  FROM (SELECT node_id, metric_id, t, counter, amplitude,
               CASE WHEN integral THEN round(r) ELSE r END AS v
          FROM bench_settings s, bench_rates p,
               generate_series(1, s.nodes) node_id,
               generate_series(s.start_time, s.start_time + (s.run_s - 1) * interval '1 s',
                               interval '1 s') t,
               LATERAL (SELECT base + amplitude
                               * sin(2 * pi() * (extract(epoch FROM t) + phase * node_id)
                                     / period) AS r) rate) x
 GROUP BY node_id, t;

-- ---- captured windows ---------------------------------------------------------------------

-- Window k (0-based) of the process of rank (k × 37) % ranks, spread over
-- the run; its node's cycle C ends at the run's start + C s.
CREATE TEMPORARY TABLE bench_windows ON COMMIT DROP AS
SELECT k + 1 AS capture_id, p.process_id, p.node_id, p.pid,
       s.start_time + ((k + 1) * (s.run_s - s.capture_s) / (s.captures + 1)) * interval '1 s'
           AS start_time,
       (k + 1) * (s.run_s - s.capture_s) / (s.captures + 1) AS first_s,
       s.capture_s, s.capture_activities
  FROM bench_settings s, generate_series(0, s.captures - 1) k
  JOIN processes p ON p.run_id = 1 AND p.rank = (k * 37) % (SELECT ranks FROM bench_settings);

INSERT INTO captures (capture_id, node_id, process_id, first_cycle, last_cycle, start_time,
                      end_time, activities_forwarded, reasons)
SELECT capture_id, node_id, process_id, first_s + 1, first_s + capture_s, start_time,
       start_time + capture_s * interval '1 s', capture_activities,
       format('process %s BAD: posix.write.latency_ns above its range (latency-histogram)',
              process_id)
  FROM bench_windows;

INSERT INTO files (file_id, path_bytes, path)
SELECT capture_id, convert_to(format('/scratch/lj/dump.%s', capture_id), 'UTF8'),
       format('/scratch/lj/dump.%s', capture_id)
  FROM bench_windows;

-- Evenly over the window: two writes of 1 MiB for each read; every 1000th fails.
INSERT INTO activities (process_id, seq, layer, operation, file_id, file_offset, bytes, result,
                        errno, start_time, start_ns, duration_ns, thread, parent_start_ns, flags,
                        comm_size)
SELECT w.process_id, i, 1, CASE WHEN i % 3 = 2 THEN 5 ELSE 6 END, w.capture_id,
       i * 1048576, 1048576,
       CASE WHEN i % 1000 = 999 THEN -1 ELSE 1048576 END,
       CASE WHEN i % 1000 = 999 THEN 5 ELSE 0 END,
       w.start_time + i * step_ns / 1000.0 * interval '1 us',
       extract(epoch FROM w.start_time)::bigint * 1000000000 + i * step_ns,
       100000 + (i % 97) * 1000, w.pid, NULL, 0, NULL
  FROM bench_windows w,
       LATERAL (SELECT w.capture_s * 1000000000::bigint / w.capture_activities AS step_ns) st,
       generate_series(0::bigint, w.capture_activities - 1) i;

-- Their counts per process and second, as vigil-txd keeps them beside
-- (warehouse/migrations/0014_activity_seconds.sql): the heat map reads them.
INSERT INTO activity_seconds (node_id, process_id, start_time, layer, operation, calls, bytes,
                              duration_ns)
SELECT p.node_id, a.process_id, to_timestamp(floor(a.start_ns / 1e9)), a.layer, a.operation,
       count(*), coalesce(sum(a.bytes), 0), sum(a.duration_ns)
  FROM activities a JOIN processes p USING (process_id)
 GROUP BY 1, 2, 3, 4, 5;

-- Full resolution in the windows: every 100 ms, every metric, the window's node.
-- One row per node and tick, its metrics as arrays (migration 13).
INSERT INTO window_statistics_arrays (node_id, metric_set_id, time, t_ns, value, uncertain)
SELECT w.node_id, vigil_metric_set(array_agg(p.metric_id ORDER BY p.metric_id)), t,
       (extract(epoch FROM t) * 1000000000)::bigint,
       array_agg(CASE WHEN p.counter THEN p.base * extract(epoch FROM t - w.start_time)
                      ELSE p.base END
                     + p.amplitude * sin(2 * pi() * (extract(epoch FROM t) + p.phase * w.node_id)
                                         / p.period) ORDER BY p.metric_id),
       repeat('0', count(*)::integer)::varbit
  FROM bench_windows w, bench_rates p,
       generate_series(w.start_time, w.start_time + w.capture_s * interval '1 s'
                                     - interval '100 ms', interval '100 ms') t
 GROUP BY w.node_id, t;

INSERT INTO reasoner_states (level, node_id, process_id, cycle, time, state, overloaded_mask,
                             bad_issues, good_issues, other_issues)
SELECT 'node', w.node_id, NULL, c, s.start_time + c * interval '1 s',
       CASE WHEN c % 10 = 0 THEN 'BAD' ELSE 'OK' END, 0,
       CASE WHEN c % 10 = 0 THEN 1 ELSE 0 END, 0, 0
  FROM bench_windows w, bench_settings s,
       generate_series(w.first_s + 1, w.first_s + w.capture_s) c;

INSERT INTO anomalies (level, node_id, process_id, cycle, time, state, plugin, metric, value,
                       expected_min, expected_max, message)
SELECT 'process', w.node_id, w.process_id, w.first_s + 2, s.start_time + (w.first_s + 2)
           * interval '1 s', 'BAD', 'latency-histogram', 'posix.write.latency_ns', 5200000,
       NULL, 1000000, 'posix write latency p99 5.2 ms above 1 ms'
  FROM bench_windows w, bench_settings s
UNION ALL
SELECT 'node', w.node_id, NULL, w.first_s + 3, s.start_time + (w.first_s + 3) * interval '1 s',
       'BAD', 'statistics-range', 'disk.sda.write_bytes', 90000000, 0, 60000000,
       'disk.sda.write_bytes 90000000 B/s out of [0, 60000000]'
  FROM bench_windows w, bench_settings s
UNION ALL
SELECT 'node', a % s.nodes + 1, NULL, c, s.start_time + c * interval '1 s', 'BAD',
       'statistics-range', 'energy.node_j', 400, 100, 200, 'energy.node_j 400 J/s out of [100, 200]'
  FROM bench_settings s, generate_series(0, s.anomalies - 1) a,
       LATERAL (SELECT 1 + (a::bigint * 7919) % s.run_s AS c) cy;

-- ---- the short runs -----------------------------------------------------------------------

-- Run i + 1 (i = 1 … short_runs) on node i % nodes + 1, evenly over the
-- `days` before the long run, 5 s to 15 min long.
INSERT INTO runs (run_id, run_key, program, argv, uid, start_time, end_time, exit_status)
SELECT i + 1, format('bench-short-%s', i), prog, ARRAY[prog, format('in.%s', i)],
       1000 + i % 50, st, st + (5 + (i * 7919) % 895) * interval '1 s',
       CASE WHEN i % 97 = 0 THEN 1 ELSE 0 END
  FROM bench_settings s, generate_series(1, s.short_runs) i,
       LATERAL (SELECT (ARRAY['cp', 'tar', 'python3', 'ls', 'dd', 'gzip', 'rsync',
                              'ior'])[i % 8 + 1] AS prog,
                       s.start_time - s.days * interval '1 day'
                           + (i - 1) * (s.days * interval '1 day') / s.short_runs AS st) x;

INSERT INTO processes (process_id, run_id, node_id, pid, uid, rank, program, argv, cwd,
                       start_time, start_monotonic_ns, end_time, exit_status)
SELECT s.ranks + r.run_id - 1, r.run_id, (r.run_id - 1) % s.nodes + 1, 200000 + r.run_id,
       r.uid, NULL, r.program, r.argv, '/home', r.start_time,
       (200000 + r.run_id) * 1000000000::bigint, r.end_time, r.exit_status
  FROM runs r, bench_settings s
 WHERE r.run_id > 1;

INSERT INTO run_summaries (process_id, report, calls, bytes_read, bytes_written, energy_j,
                           energy_source)
SELECT process_id, r, (r->'activities'->>'observed')::bigint, (r->>'io_bytes_read')::bigint,
       (r->>'io_bytes_written')::bigint, (r->>'energy_joule')::float8, r->>'energy_source'
  FROM (SELECT p.process_id,
               t.report || jsonb_build_object(
                   'program', p.program, 'argv', to_jsonb(p.argv), 'pid', p.pid,
                   'host', format('node%s', lpad(p.node_id::text, 3, '0')),
                   'run_key', format('bench-short-%s', p.run_id - 1),
                   'runtime_ms', extract(epoch FROM p.end_time - p.start_time) * 1000,
                   'io_bytes_read', (p.run_id * 104729) % 1073741824,
                   'io_bytes_written', (p.run_id * 15485863) % 1073741824,
                   'energy_joule', round((extract(epoch FROM p.end_time - p.start_time)
                                          * (20 + p.run_id % 100))::numeric, 3),
                   'activities', jsonb_build_object('observed', 20 + (p.run_id * 31) % 10000,
                                                    'recorded', 20 + (p.run_id * 31) % 10000,
                                                    'dropped', 0, 'excluded', 0)) AS r
          FROM processes p, bench_templates t
         WHERE p.run_id > 1 AND t.name = 'single') x;

-- ---- the sequences past the explicit ids ----------------------------------------------------

DO $$
BEGIN
    PERFORM setval('jobs_job_id_seq', (SELECT max(job_id) FROM jobs));
    PERFORM setval('runs_run_id_seq', (SELECT max(run_id) FROM runs));
    PERFORM setval('processes_process_id_seq', (SELECT max(process_id) FROM processes));
    PERFORM setval('files_file_id_seq', (SELECT max(file_id) FROM files));
    PERFORM setval('metrics_metric_id_seq', (SELECT max(metric_id) FROM metrics));
    PERFORM setval('captures_capture_id_seq', (SELECT max(capture_id) FROM captures));
END $$;

COMMIT;

-- ---- the roll-up levels (migration 15) ------------------------------------------------------
-- As `vigil db maintain` builds them: vigil_build_levels, a day a pass,
-- until caught up (only blocks that ended 2 minutes ago: `start` must be in
-- the past). Its time on a line of its own, which bench/web/run prints.
SELECT clock_timestamp() AS levels_begin \gset
DO $$
BEGIN
    LOOP
        EXIT WHEN (SELECT coalesce(bool_and(caught_up), true) FROM vigil_build_levels('1 day'));
    END LOOP;
END $$;
SELECT format('levels: %s blocks (%s) built in %s s', count(*),
              string_agg(DISTINCT level_s || ' s', ', '),
              round(extract(epoch FROM clock_timestamp() - :'levels_begin'::timestamptz), 1))
       AS levels_line
  FROM statistics_level_blocks \gset
\echo :levels_line

ANALYZE;
