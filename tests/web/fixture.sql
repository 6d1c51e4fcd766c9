-- The web suite's warehouse: fixed, deterministic content that the API
-- tests and the browser tests assert on. Load it into a database migrated
-- to the latest schema (`vigil db migrate`):
--
--   psql "$CONNINFO" -X -v ON_ERROR_STOP=1 -q -f tests/web/fixture.sql
--
-- Every id is explicit; the sequences are set past them at the end. All
-- times are UTC on 2026-11-20.
--
-- nodes     1 n1, 2 n2, 3 n3.    jobs  1 '4242', 2 '4243'.
-- users     uids 0 (root), 1 (daemon), 65534 (nobody): names every Debian has.
-- runs (12; newest first by start: 12 11 10 9 8 7 6 5 4 2 3 1, so
--       limit=5 gives 3 pages: 12..8 | 7 6 5 4 2 | 3 1):
--   1  ior -w -r  job 4242, uid 1, 10:00:00 → 10:02:00, exit 0; MPI, 4 ranks:
--      process 1 rank 0 pid 4100 on n1, 2 rank 1 pid 4101 n1,
--      3 rank 2 pid 4200 n2, 4 rank 3 pid 4201 n2 (each 10:00:00 → 10:02:00).
--   2  ior -w -r  job 4243, uid 1, 11:00:00 → 11:02:00, exit 0; processes
--      5..8, ranks 0..3, pids 5100 5101 on n1, 5200 5201 on n2. No anomaly,
--      no capture.
--   3  dd  uid 65534, 10:01:00 → 10:01:30 on n1 (process 9, pid 6100):
--      run 1's neighbour on n1. Its report has two code regions, set by
--      hand: "copy" (8 calls, 8388608 bytes written, 12.5 J) and "setup"
--      (entered twice, no energy figure), and one unmatched end.
--   4..12 cp, tar, python3, ls, cp, tar, python3, ls, gzip on n3 (process
--      run_id + 6, pid 7000 + run_id), uid 0, 1, 65534, 0, 1, 65534, 0, 1,
--      65534; run N starts at 12:00 + (N - 4) × 15 min and lasts its
--      report's runtime_ms (2 … 88 ms).
-- reports (run_summaries, one per process, 18): the JSON `vigil run`
--   wrote for real workloads here (mpi-io-levels --level 1 under mpirun
--   -np 4 with VIGIL_REPORT_PER_RANK=1 for runs 1 and 2 — 64 and 128
--   blocks —, dd for run 3, the short programs for 4..12), with program,
--   argv, host, pid, run_key and paths made to agree with these rows
--   (/scratch/ior.dat). As vigil-txd stores them: rank 0's process holds
--   the job's report (with "ranks": 4), ranks 1..3 their own, marked
--   "in_job_report": true, whose figure columns are NULL (the job's
--   report already counts them). The columns are read out of the JSON by
--   vigil-txd's own expressions (txd/store.c).
--   Energy is not measured here (no powercap, no vigild): it was set by
--   hand, energy_source 'powercap': run 1 ranks 9125, 9125, 9000, 9000 J
--   (job 36250 J), run 2 4 × 9000 J (36000 J), run 3 1500 J, runs 4..12
--   150 W × runtime.
-- file_stats, process_io_timelines: run 3's /tmp/x and <stderr>, run 1's
--   shared /scratch/ior.dat (see "per-file characterization" below).
-- captures (2, both of run 1), 300 activities each, every one on
--   /scratch/ior.dat (file 1), layer posix:
--   1  n1, process 1 (rank 0), 10:00:28 → 10:00:34, cycles 89..94;
--      activities every 20 ms from 10:00:28.000: 200 writes, 100 reads
--      (every third is a read), 6 with errno 5 (EIO, result -1).
--   2  n2, process 3 (rank 2), 10:01:10 → 10:01:12, cycles 131..132;
--      activities every 6 ms from 10:01:10.000, the same mix.
--   A node's cycle C ends at 09:59:00 + C s (vigild started at 09:59:00).
--   activity_seconds holds their counts per process and second.
-- anomalies (5): 1 node n1 statistics-range energy.node_j cycle 91
--   10:00:31 (value 400, expected 100..200); 2 process 1 latency-histogram
--   cycle 92 10:00:32; 3 process 3 statistics-range cycle 131 10:01:11;
--   4 node n2 latency-histogram cycle 132 10:01:12; 5 node n1
--   statistics-range cycle 135 10:01:15 (run 3's; node-level anomalies
--   have no process, and run 1 was on n1 then too).
-- reasoner_states (11): node n1 cycles 89..94 (BAD at 90..92, else OK),
--   process 1 cycles 91, 92 BAD; node n2 cycles 131, 132 BAD, process 3
--   cycle 131 BAD.
-- metrics 1..12 and statistics_rollups: every 1 s window from 09:59:00 to
--   14:05:00 (14760 windows) for n1, n2, n3 and all 12 metrics: 531360
--   rows, samples 10, uncertain false. As vigild writes them
--   (daemon/rollup.c): a counter's min/mean/max are of its rate per second
--   (mean = delta, min = 0.98 delta, max = 1.02 delta), delta its increase;
--   a gauge's min/mean/max are its values, delta NULL. energy.node_j:
--   150 + 10 sin(2π s / 60) W, s the epoch second, on every node — its
--   sum over any whole minute is 9000 J (to 1e-6) — except ONE spike: n1's window
--   starting 10:00:30 has delta 400 (mean 400, min 392, max 408) where it
--   would be 150. So over run 1 (10:00:00 → 10:02:00) n1's roll-ups sum to
--   18250 J, n2's to 18000 J. Other metrics vary by node (phase 7 s ×
--   node_id); the 4 cpu.* rates add up to 8 s/s (8 CPUs).
-- Per run (run_overview): run 1 calls 4368, read 16819552, written
--   16798466 B, energy 36250 J, captures 2; run 2 calls 5016, read
--   33596840, written 33575755, 36000 J; run 3 calls 29, written 8388701,
--   1500 J. A rank's own figures: ranks 1..3 in their reports' JSON
--   (run_summaries.report), rank 0's only inside the job's report
--   (per_rank min/mean/max, energy_by_rank). Loads in about 6 s; the database is about 110 MB.
-- tune trials (schema/0009, made by hand): 1 and 2 on n1, stored 13:00 and
--   14:00; trial 2 has a candidate (flagged cycles 12 → 4, recall 0.95 →
--   0.9, min_calls 10 → 50 moves latency-histogram's cycles 9 → 2,
--   threshold 1 → 3 the node reasoner's 6 → 1, sensor-sanity silenced).

BEGIN;

DO $$
BEGIN
    PERFORM vigil_day_partition(t, DATE '2026-11-20')
       FROM unnest(ARRAY['activities', 'statistics_rollups', 'window_statistics',
                         'reasoner_states']) t;
END $$;

INSERT INTO nodes (node_id, hostname, first_seen, last_seen) VALUES
    (1, 'n1', '2026-11-20 09:59:00Z', '2026-11-20 14:05:00Z'),
    (2, 'n2', '2026-11-20 09:59:00Z', '2026-11-20 14:05:00Z'),
    (3, 'n3', '2026-11-20 09:59:00Z', '2026-11-20 14:05:00Z');

INSERT INTO jobs (job_id, scheduler_job_id) VALUES (1, '4242'), (2, '4243');

-- The reports, by the process they belong to (generated from the measured
-- JSON: see the top of this file).
CREATE TEMPORARY TABLE fixture_reports (process_id bigint PRIMARY KEY, report jsonb NOT NULL)
    ON COMMIT DROP;
INSERT INTO fixture_reports (process_id, report) VALUES
(1, '{"vigil_report":1,"program":"ior","argv":["ior","-w","-r"],"pid":4100,"host":"n1","runtime_ms":841.448,"cpu_seconds":1.106893,"energy_joule":36250.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","ranks_with_summary":0,"reason":"rank 0: no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":16819552,"io_bytes_written":16798466,"network_bytes":316,"activities":{"observed":4368,"recorded":2576,"dropped":0,"excluded":1792},"layers":{"posix":{"open":{"calls":92,"bytes":0,"time_ns":4329018,"errors":48},"close":{"calls":176,"bytes":0,"time_ns":774035,"errors":0},"read":{"calls":306,"bytes":3400,"time_ns":1582764,"errors":0},"write":{"calls":235,"bytes":1912,"time_ns":30640328,"errors":0},"pread":{"calls":64,"bytes":16777216,"time_ns":1499191,"errors":0},"pwrite":{"calls":64,"bytes":16777216,"time_ns":4378335,"errors":0},"writev":{"calls":36,"bytes":19142,"time_ns":3477389,"errors":0},"fsync":{"calls":4,"bytes":0,"time_ns":66122035,"errors":0},"fcntl":{"calls":28,"bytes":0,"time_ns":71716,"errors":0},"mmap":{"calls":28,"bytes":0,"time_ns":395231,"errors":0},"stat":{"calls":834,"bytes":0,"time_ns":43500957,"errors":12},"lstat":{"calls":4,"bytes":0,"time_ns":14336,"errors":0},"fstat":{"calls":48,"bytes":0,"time_ns":99070,"errors":0},"unlink":{"calls":9,"bytes":0,"time_ns":458152,"errors":1},"mkdir":{"calls":14,"bytes":0,"time_ns":2702635,"errors":9},"access":{"calls":8,"bytes":0,"time_ns":203903,"errors":8},"send":{"calls":4,"bytes":284,"time_ns":151346,"errors":0},"recv":{"calls":8,"bytes":32,"time_ns":151592015,"errors":0}},"stdio":{"fopen":{"calls":44,"bytes":0,"time_ns":1083028,"errors":32},"fclose":{"calls":12,"bytes":0,"time_ns":85758,"errors":0},"fread":{"calls":24,"bytes":38936,"time_ns":704369,"errors":0},"fflush":{"calls":1,"bytes":0,"time_ns":1412,"errors":0},"printf":{"calls":8,"bytes":236,"time_ns":1148665,"errors":0}},"mpiio":{"open":{"calls":4,"bytes":0,"time_ns":72222700,"errors":0},"close":{"calls":4,"bytes":0,"time_ns":6997145,"errors":0},"delete":{"calls":1,"bytes":0,"time_ns":2955389,"errors":1},"sync":{"calls":4,"bytes":0,"time_ns":67189224,"errors":0},"read_at_all":{"calls":256,"bytes":16777216,"time_ns":263028334,"errors":0},"write_at_all":{"calls":256,"bytes":16777216,"time_ns":239767084,"errors":0}}},"files":[],"ranks":4,"per_rank":{"runtime_ms":{"min":726.767888,"mean":780.026139,"max":841.448289,"sum":3120.104557,"max_rank":0},"cpu_seconds":{"min":0.266015,"mean":0.276723,"max":0.293419,"sum":1.106893,"max_rank":0},"io_time_seconds":{"min":0.222394,"mean":0.241794,"max":0.264303,"sum":0.967176,"max_rank":2},"io_bytes_read":{"min":4204876.0,"mean":4204888.0,"max":4204908.0,"sum":16819552.0,"max_rank":3},"io_bytes_written":{"min":4199535.0,"mean":4199616.5,"max":4199813.0,"sum":16798466.0,"max_rank":0},"network_bytes":{"min":79.0,"mean":79.0,"max":79.0,"sum":316.0,"max_rank":0},"posix_bytes_read":{"min":846.0,"mean":4195162.0,"max":16778062.0,"sum":16780648.0,"max_rank":0},"posix_bytes_written":{"min":5302.0,"mean":4199638.5,"max":16782600.0,"sum":16798554.0,"max_rank":0},"stdio_bytes_read":{"min":9734.0,"mean":9734.0,"max":9734.0,"sum":38936.0,"max_rank":0},"stdio_bytes_written":{"min":0.0,"mean":59.0,"max":236.0,"sum":236.0,"max_rank":0},"mpiio_bytes_read":{"min":4194304.0,"mean":4194304.0,"max":4194304.0,"sum":16777216.0,"max_rank":0},"mpiio_bytes_written":{"min":4194304.0,"mean":4194304.0,"max":4194304.0,"sum":16777216.0,"max_rank":0},"posix_calls":{"min":450.0,"mean":490.5,"max":590.0,"sum":1962.0,"max_rank":0},"stdio_calls":{"min":20.0,"mean":22.25,"max":29.0,"sum":89.0,"max_rank":0},"mpiio_calls":{"min":131.0,"mean":131.25,"max":132.0,"sum":525.0,"max_rank":0},"activities_observed":{"min":1049.0,"mean":1092.0,"max":1199.0,"sum":4368.0,"max_rank":0},"activities_recorded":{"min":601.0,"mean":644.0,"max":751.0,"sum":2576.0,"max_rank":0},"activities_dropped":{"min":0.0,"mean":0.0,"max":0.0,"sum":0.0,"max_rank":0},"activities_excluded":{"min":448.0,"mean":448.0,"max":448.0,"sum":1792.0,"max_rank":0}},"energy_by_rank":[{"rank":0,"energy_joule":9125.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild_process_id":null,"capture_forwarded":null,"vigild_state":"standalone"},{"rank":1,"energy_joule":9125.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild_process_id":null,"capture_forwarded":null,"vigild_state":"standalone"},{"rank":2,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild_process_id":null,"capture_forwarded":null,"vigild_state":"standalone"},{"rank":3,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild_process_id":null,"capture_forwarded":null,"vigild_state":"standalone"}],"run_key":"fixture-ior-1"}'),
(2, '{"vigil_report":1,"program":"ior","argv":["ior","-w","-r"],"pid":4101,"rank":1,"host":"n1","runtime_ms":888.256,"cpu_seconds":0.329369,"energy_joule":9125.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":4205000,"io_bytes_written":4199762,"network_bytes":79,"activities":{"observed":1105,"recorded":656,"dropped":0,"excluded":449},"layers":{"posix":{"open":{"calls":23,"bytes":0,"time_ns":1176329,"errors":12},"close":{"calls":57,"bytes":0,"time_ns":399401,"errors":0},"read":{"calls":90,"bytes":962,"time_ns":661166,"errors":0},"write":{"calls":68,"bytes":544,"time_ns":3864291,"errors":0},"writev":{"calls":15,"bytes":4914,"time_ns":1001214,"errors":0},"fsync":{"calls":1,"bytes":0,"time_ns":16663409,"errors":0},"fcntl":{"calls":7,"bytes":0,"time_ns":19146,"errors":0},"mmap":{"calls":7,"bytes":0,"time_ns":62737,"errors":0},"stat":{"calls":211,"bytes":0,"time_ns":12171502,"errors":3},"lstat":{"calls":1,"bytes":0,"time_ns":4248,"errors":0},"fstat":{"calls":12,"bytes":0,"time_ns":28806,"errors":0},"unlink":{"calls":2,"bytes":0,"time_ns":28284,"errors":0},"mkdir":{"calls":6,"bytes":0,"time_ns":879367,"errors":4},"access":{"calls":2,"bytes":0,"time_ns":82625,"errors":2},"send":{"calls":1,"bytes":71,"time_ns":36099,"errors":0},"recv":{"calls":2,"bytes":8,"time_ns":38253592,"errors":0}},"stdio":{"fopen":{"calls":11,"bytes":0,"time_ns":361562,"errors":8},"fclose":{"calls":3,"bytes":0,"time_ns":52920,"errors":0},"fread":{"calls":6,"bytes":9734,"time_ns":162877,"errors":0}},"mpiio":{"open":{"calls":1,"bytes":0,"time_ns":16561106,"errors":0},"close":{"calls":1,"bytes":0,"time_ns":1570729,"errors":0},"sync":{"calls":1,"bytes":0,"time_ns":16707722,"errors":0},"read_at_all":{"calls":64,"bytes":4194304,"time_ns":65245811,"errors":0},"write_at_all":{"calls":64,"bytes":4194304,"time_ns":59843420,"errors":0}}},"files":[{"path":"/scratch/ior.dat","calls":131,"bytes_read":4194304,"bytes_written":4194304},{"path":"/etc/openmpi/openmpi-mca-params.conf","calls":8,"bytes_read":6714,"bytes_written":0},{"path":"/usr/lib/x86_64-linux-gnu/pmix2/share/pmix-mca-params.conf","calls":4,"bytes_read":3020,"bytes_written":0},{"path":"/usr/share/misc/pci.ids","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/usr/share/misc/pci.ids.gz","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11422/1/1","calls":5,"bytes_read":0,"bytes_written":0},{"path":"/run/udev/data/b254:0","calls":5,"bytes_read":0,"bytes_written":0},{"path":"<stderr>","calls":3,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11422/pmix_dstor_ds21_11422/smlockseg-1080033281","calls":3,"bytes_read":0,"bytes_written":0},{"path":"<stdout>","calls":3,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-ior-1","in_job_report":true}'),
(3, '{"vigil_report":1,"program":"ior","argv":["ior","-w","-r"],"pid":4200,"rank":2,"host":"n2","runtime_ms":885.986,"cpu_seconds":0.304654,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":4204984,"io_bytes_written":4199746,"network_bytes":79,"activities":{"observed":1091,"recorded":642,"dropped":0,"excluded":449},"layers":{"posix":{"open":{"calls":23,"bytes":0,"time_ns":941484,"errors":12},"close":{"calls":57,"bytes":0,"time_ns":227052,"errors":0},"read":{"calls":88,"bytes":946,"time_ns":360873,"errors":0},"write":{"calls":66,"bytes":528,"time_ns":12336886,"errors":0},"writev":{"calls":15,"bytes":4914,"time_ns":1217622,"errors":0},"fsync":{"calls":1,"bytes":0,"time_ns":16406686,"errors":0},"fcntl":{"calls":7,"bytes":0,"time_ns":16701,"errors":0},"mmap":{"calls":7,"bytes":0,"time_ns":72665,"errors":0},"stat":{"calls":206,"bytes":0,"time_ns":6433920,"errors":3},"lstat":{"calls":1,"bytes":0,"time_ns":3537,"errors":0},"fstat":{"calls":12,"bytes":0,"time_ns":21590,"errors":0},"unlink":{"calls":2,"bytes":0,"time_ns":201128,"errors":0},"mkdir":{"calls":1,"bytes":0,"time_ns":796120,"errors":0},"access":{"calls":2,"bytes":0,"time_ns":36408,"errors":2},"send":{"calls":1,"bytes":71,"time_ns":39284,"errors":0},"recv":{"calls":2,"bytes":8,"time_ns":68570816,"errors":0}},"stdio":{"fopen":{"calls":11,"bytes":0,"time_ns":206899,"errors":8},"fclose":{"calls":3,"bytes":0,"time_ns":10288,"errors":0},"fread":{"calls":6,"bytes":9734,"time_ns":183616,"errors":0}},"mpiio":{"open":{"calls":1,"bytes":0,"time_ns":16685230,"errors":0},"close":{"calls":1,"bytes":0,"time_ns":3909778,"errors":0},"sync":{"calls":1,"bytes":0,"time_ns":16533203,"errors":0},"read_at_all":{"calls":64,"bytes":4194304,"time_ns":65602638,"errors":0},"write_at_all":{"calls":64,"bytes":4194304,"time_ns":59970790,"errors":0}}},"files":[{"path":"/scratch/ior.dat","calls":131,"bytes_read":4194304,"bytes_written":4194304},{"path":"/etc/openmpi/openmpi-mca-params.conf","calls":8,"bytes_read":6714,"bytes_written":0},{"path":"/usr/lib/x86_64-linux-gnu/pmix2/share/pmix-mca-params.conf","calls":4,"bytes_read":3020,"bytes_written":0},{"path":"/usr/share/misc/pci.ids","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/usr/share/misc/pci.ids.gz","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/run/udev/data/b254:0","calls":5,"bytes_read":0,"bytes_written":0},{"path":"<stderr>","calls":3,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11422/pmix_dstor_ds21_11422/smlockseg-1080033281","calls":3,"bytes_read":0,"bytes_written":0},{"path":"<stdout>","calls":3,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11422/pmix_dstor_ds21_11422/smdataseg-1080033281-0","calls":3,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-ior-1","in_job_report":true}'),
(4, '{"vigil_report":1,"program":"ior","argv":["ior","-w","-r"],"pid":4201,"rank":3,"host":"n2","runtime_ms":811.482,"cpu_seconds":0.294976,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":4205016,"io_bytes_written":4199778,"network_bytes":79,"activities":{"observed":1099,"recorded":650,"dropped":0,"excluded":449},"layers":{"posix":{"open":{"calls":23,"bytes":0,"time_ns":650933,"errors":12},"close":{"calls":57,"bytes":0,"time_ns":271500,"errors":0},"read":{"calls":92,"bytes":978,"time_ns":425400,"errors":0},"write":{"calls":70,"bytes":560,"time_ns":17585719,"errors":0},"writev":{"calls":15,"bytes":4914,"time_ns":1085392,"errors":0},"fsync":{"calls":1,"bytes":0,"time_ns":16041046,"errors":0},"fcntl":{"calls":7,"bytes":0,"time_ns":14228,"errors":0},"mmap":{"calls":7,"bytes":0,"time_ns":173378,"errors":0},"stat":{"calls":206,"bytes":0,"time_ns":10016156,"errors":3},"lstat":{"calls":1,"bytes":0,"time_ns":2374,"errors":0},"fstat":{"calls":12,"bytes":0,"time_ns":22893,"errors":0},"unlink":{"calls":2,"bytes":0,"time_ns":158078,"errors":0},"mkdir":{"calls":1,"bytes":0,"time_ns":530811,"errors":0},"access":{"calls":2,"bytes":0,"time_ns":39535,"errors":2},"send":{"calls":1,"bytes":71,"time_ns":45285,"errors":0},"recv":{"calls":2,"bytes":8,"time_ns":36048467,"errors":0}},"stdio":{"fopen":{"calls":11,"bytes":0,"time_ns":246922,"errors":8},"fclose":{"calls":3,"bytes":0,"time_ns":10579,"errors":0},"fread":{"calls":6,"bytes":9734,"time_ns":150324,"errors":0}},"mpiio":{"open":{"calls":1,"bytes":0,"time_ns":19410325,"errors":0},"close":{"calls":1,"bytes":0,"time_ns":829543,"errors":0},"sync":{"calls":1,"bytes":0,"time_ns":16900917,"errors":0},"read_at_all":{"calls":64,"bytes":4194304,"time_ns":65992718,"errors":0},"write_at_all":{"calls":64,"bytes":4194304,"time_ns":59923413,"errors":0}}},"files":[{"path":"/scratch/ior.dat","calls":131,"bytes_read":4194304,"bytes_written":4194304},{"path":"/etc/openmpi/openmpi-mca-params.conf","calls":8,"bytes_read":6714,"bytes_written":0},{"path":"/usr/lib/x86_64-linux-gnu/pmix2/share/pmix-mca-params.conf","calls":4,"bytes_read":3020,"bytes_written":0},{"path":"/usr/share/misc/pci.ids","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/usr/share/misc/pci.ids.gz","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/run/udev/data/b254:0","calls":5,"bytes_read":0,"bytes_written":0},{"path":"<stderr>","calls":3,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11422/pmix_dstor_ds21_11422/smlockseg-1080033281","calls":3,"bytes_read":0,"bytes_written":0},{"path":"<stdout>","calls":3,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11422/pmix_dstor_ds21_11422/smdataseg-1080033281-0","calls":3,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-ior-1","in_job_report":true}'),
(5, '{"vigil_report":1,"program":"ior","argv":["ior","-w","-r"],"pid":5100,"host":"n1","runtime_ms":1000.393,"cpu_seconds":1.481737,"energy_joule":36000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","ranks_with_summary":0,"reason":"rank 0: no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":33596840,"io_bytes_written":33575755,"network_bytes":316,"activities":{"observed":5016,"recorded":3224,"dropped":0,"excluded":1792},"layers":{"posix":{"open":{"calls":92,"bytes":0,"time_ns":4131291,"errors":48},"close":{"calls":176,"bytes":0,"time_ns":879238,"errors":0},"read":{"calls":315,"bytes":3472,"time_ns":1740514,"errors":0},"write":{"calls":244,"bytes":1984,"time_ns":37038396,"errors":0},"pread":{"calls":128,"bytes":33554432,"time_ns":2284712,"errors":0},"pwrite":{"calls":128,"bytes":33554432,"time_ns":6114787,"errors":0},"writev":{"calls":36,"bytes":19142,"time_ns":4490632,"errors":0},"fsync":{"calls":4,"bytes":0,"time_ns":121521961,"errors":0},"fcntl":{"calls":28,"bytes":0,"time_ns":63162,"errors":0},"mmap":{"calls":28,"bytes":0,"time_ns":307982,"errors":0},"stat":{"calls":829,"bytes":0,"time_ns":34780361,"errors":12},"lstat":{"calls":4,"bytes":0,"time_ns":12995,"errors":0},"fstat":{"calls":48,"bytes":0,"time_ns":98829,"errors":0},"unlink":{"calls":9,"bytes":0,"time_ns":7459774,"errors":0},"mkdir":{"calls":9,"bytes":0,"time_ns":5762310,"errors":4},"access":{"calls":8,"bytes":0,"time_ns":195140,"errors":8},"send":{"calls":4,"bytes":284,"time_ns":262483,"errors":0},"recv":{"calls":8,"bytes":32,"time_ns":99096836,"errors":0}},"stdio":{"fopen":{"calls":44,"bytes":0,"time_ns":1121442,"errors":32},"fclose":{"calls":12,"bytes":0,"time_ns":53021,"errors":0},"fread":{"calls":24,"bytes":38936,"time_ns":633438,"errors":0},"fflush":{"calls":1,"bytes":0,"time_ns":621,"errors":0},"printf":{"calls":8,"bytes":237,"time_ns":139531,"errors":0}},"mpiio":{"open":{"calls":4,"bytes":0,"time_ns":73448949,"errors":0},"close":{"calls":4,"bytes":0,"time_ns":4626248,"errors":0},"delete":{"calls":1,"bytes":0,"time_ns":14814825,"errors":0},"sync":{"calls":4,"bytes":0,"time_ns":123450547,"errors":0},"read_at_all":{"calls":512,"bytes":33554432,"time_ns":598948244,"errors":0},"write_at_all":{"calls":512,"bytes":33554432,"time_ns":280071459,"errors":0}}},"files":[],"ranks":4,"per_rank":{"runtime_ms":{"min":914.270086,"mean":965.891563,"max":1000.392966,"sum":3863.566251,"max_rank":0},"cpu_seconds":{"min":0.317752,"mean":0.370434,"max":0.458634,"sum":1.481737,"max_rank":1},"io_time_seconds":{"min":0.339408,"mean":0.355887,"max":0.371861,"sum":1.42355,"max_rank":2},"io_bytes_read":{"min":8399188.0,"mean":8399210.0,"max":8399228.0,"sum":33596840.0,"max_rank":1},"io_bytes_written":{"min":8393855.0,"mean":8393938.75,"max":8394126.0,"sum":33575755.0,"max_rank":0},"network_bytes":{"min":79.0,"mean":79.0,"max":79.0,"sum":316.0,"max_rank":0},"posix_bytes_read":{"min":862.0,"mean":8389484.0,"max":33555286.0,"sum":33557936.0,"max_rank":0},"posix_bytes_written":{"min":5318.0,"mean":8393960.5,"max":33559824.0,"sum":33575842.0,"max_rank":0},"stdio_bytes_read":{"min":9734.0,"mean":9734.0,"max":9734.0,"sum":38936.0,"max_rank":0},"stdio_bytes_written":{"min":0.0,"mean":59.25,"max":237.0,"sum":237.0,"max_rank":0},"mpiio_bytes_read":{"min":8388608.0,"mean":8388608.0,"max":8388608.0,"sum":33554432.0,"max_rank":0},"mpiio_bytes_written":{"min":8388608.0,"mean":8388608.0,"max":8388608.0,"sum":33554432.0,"max_rank":0},"posix_calls":{"min":462.0,"mean":524.5,"max":710.0,"sum":2098.0,"max_rank":0},"stdio_calls":{"min":20.0,"mean":22.25,"max":29.0,"sum":89.0,"max_rank":0},"mpiio_calls":{"min":259.0,"mean":259.25,"max":260.0,"sum":1037.0,"max_rank":0},"activities_observed":{"min":1189.0,"mean":1254.0,"max":1447.0,"sum":5016.0,"max_rank":0},"activities_recorded":{"min":741.0,"mean":806.0,"max":999.0,"sum":3224.0,"max_rank":0},"activities_dropped":{"min":0.0,"mean":0.0,"max":0.0,"sum":0.0,"max_rank":0},"activities_excluded":{"min":448.0,"mean":448.0,"max":448.0,"sum":1792.0,"max_rank":0}},"energy_by_rank":[{"rank":0,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild_process_id":null,"capture_forwarded":null,"vigild_state":"standalone"},{"rank":1,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild_process_id":null,"capture_forwarded":null,"vigild_state":"standalone"},{"rank":2,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild_process_id":null,"capture_forwarded":null,"vigild_state":"standalone"},{"rank":3,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild_process_id":null,"capture_forwarded":null,"vigild_state":"standalone"}],"run_key":"fixture-ior-2"}'),
(6, '{"vigil_report":1,"program":"ior","argv":["ior","-w","-r"],"pid":5101,"rank":1,"host":"n1","runtime_ms":1095.947,"cpu_seconds":0.508416,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":8399336,"io_bytes_written":8394098,"network_bytes":79,"activities":{"observed":1231,"recorded":782,"dropped":0,"excluded":449},"layers":{"posix":{"open":{"calls":23,"bytes":0,"time_ns":1243871,"errors":12},"close":{"calls":57,"bytes":0,"time_ns":364233,"errors":0},"read":{"calls":94,"bytes":994,"time_ns":438509,"errors":0},"write":{"calls":72,"bytes":576,"time_ns":18789249,"errors":0},"writev":{"calls":15,"bytes":4914,"time_ns":545309,"errors":0},"fsync":{"calls":1,"bytes":0,"time_ns":30615688,"errors":0},"fcntl":{"calls":7,"bytes":0,"time_ns":16691,"errors":0},"mmap":{"calls":7,"bytes":0,"time_ns":75040,"errors":0},"stat":{"calls":206,"bytes":0,"time_ns":10446385,"errors":3},"lstat":{"calls":1,"bytes":0,"time_ns":4148,"errors":0},"fstat":{"calls":12,"bytes":0,"time_ns":23505,"errors":0},"unlink":{"calls":2,"bytes":0,"time_ns":30006,"errors":0},"mkdir":{"calls":1,"bytes":0,"time_ns":556989,"errors":0},"access":{"calls":2,"bytes":0,"time_ns":39764,"errors":2},"send":{"calls":1,"bytes":71,"time_ns":61846,"errors":0},"recv":{"calls":2,"bytes":8,"time_ns":4943254,"errors":0}},"stdio":{"fopen":{"calls":11,"bytes":0,"time_ns":262363,"errors":8},"fclose":{"calls":3,"bytes":0,"time_ns":10280,"errors":0},"fread":{"calls":6,"bytes":9734,"time_ns":165655,"errors":0}},"mpiio":{"open":{"calls":1,"bytes":0,"time_ns":20409337,"errors":0},"close":{"calls":1,"bytes":0,"time_ns":500032,"errors":0},"sync":{"calls":1,"bytes":0,"time_ns":30861923,"errors":0},"read_at_all":{"calls":128,"bytes":8388608,"time_ns":149946914,"errors":0},"write_at_all":{"calls":128,"bytes":8388608,"time_ns":69979305,"errors":0}}},"files":[{"path":"/scratch/ior.dat","calls":259,"bytes_read":8388608,"bytes_written":8388608},{"path":"/etc/openmpi/openmpi-mca-params.conf","calls":8,"bytes_read":6714,"bytes_written":0},{"path":"/usr/lib/x86_64-linux-gnu/pmix2/share/pmix-mca-params.conf","calls":4,"bytes_read":3020,"bytes_written":0},{"path":"/usr/share/misc/pci.ids","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/usr/share/misc/pci.ids.gz","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/run/udev/data/b254:0","calls":5,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11442/pmix_dstor_ds21_11442/initial-pmix_shared-segment-0","calls":3,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11442/pmix_dstor_ds21_11442/smdataseg-1078722561-0","calls":3,"bytes_read":0,"bytes_written":0},{"path":"<stderr>","calls":3,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11442/pmix_dstor_ds12_11442/initial-pmix_shared-segment-0","calls":3,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-ior-2","in_job_report":true}'),
(7, '{"vigil_report":1,"program":"ior","argv":["ior","-w","-r"],"pid":5200,"rank":2,"host":"n2","runtime_ms":1065.537,"cpu_seconds":0.363828,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":8399288,"io_bytes_written":8394050,"network_bytes":79,"activities":{"observed":1229,"recorded":780,"dropped":0,"excluded":449},"layers":{"posix":{"open":{"calls":23,"bytes":0,"time_ns":609702,"errors":12},"close":{"calls":57,"bytes":0,"time_ns":389204,"errors":0},"read":{"calls":88,"bytes":946,"time_ns":406268,"errors":0},"write":{"calls":66,"bytes":528,"time_ns":7987031,"errors":0},"writev":{"calls":15,"bytes":4914,"time_ns":2051395,"errors":0},"fsync":{"calls":1,"bytes":0,"time_ns":29971464,"errors":0},"fcntl":{"calls":7,"bytes":0,"time_ns":14179,"errors":0},"mmap":{"calls":7,"bytes":0,"time_ns":57288,"errors":0},"stat":{"calls":211,"bytes":0,"time_ns":5271464,"errors":3},"lstat":{"calls":1,"bytes":0,"time_ns":2475,"errors":0},"fstat":{"calls":12,"bytes":0,"time_ns":22391,"errors":0},"unlink":{"calls":2,"bytes":0,"time_ns":12964,"errors":0},"mkdir":{"calls":6,"bytes":0,"time_ns":781004,"errors":4},"access":{"calls":2,"bytes":0,"time_ns":44024,"errors":2},"send":{"calls":1,"bytes":71,"time_ns":68880,"errors":0},"recv":{"calls":2,"bytes":8,"time_ns":58455046,"errors":0}},"stdio":{"fopen":{"calls":11,"bytes":0,"time_ns":286999,"errors":8},"fclose":{"calls":3,"bytes":0,"time_ns":10810,"errors":0},"fread":{"calls":6,"bytes":9734,"time_ns":118963,"errors":0}},"mpiio":{"open":{"calls":1,"bytes":0,"time_ns":14293883,"errors":0},"close":{"calls":1,"bytes":0,"time_ns":1430876,"errors":0},"sync":{"calls":1,"bytes":0,"time_ns":30766794,"errors":0},"read_at_all":{"calls":128,"bytes":8388608,"time_ns":149653662,"errors":0},"write_at_all":{"calls":128,"bytes":8388608,"time_ns":70039330,"errors":0}}},"files":[{"path":"/scratch/ior.dat","calls":259,"bytes_read":8388608,"bytes_written":8388608},{"path":"/etc/openmpi/openmpi-mca-params.conf","calls":8,"bytes_read":6714,"bytes_written":0},{"path":"/usr/lib/x86_64-linux-gnu/pmix2/share/pmix-mca-params.conf","calls":4,"bytes_read":3020,"bytes_written":0},{"path":"/usr/share/misc/pci.ids","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/usr/share/misc/pci.ids.gz","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11442/1/2","calls":5,"bytes_read":0,"bytes_written":0},{"path":"/run/udev/data/b254:0","calls":5,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11442/pmix_dstor_ds21_11442/initial-pmix_shared-segment-0","calls":3,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11442/pmix_dstor_ds21_11442/smdataseg-1078722561-0","calls":3,"bytes_read":0,"bytes_written":0},{"path":"<stderr>","calls":3,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-ior-2","in_job_report":true}'),
(8, '{"vigil_report":1,"program":"ior","argv":["ior","-w","-r"],"pid":5201,"rank":3,"host":"n2","runtime_ms":1050.269,"cpu_seconds":0.364907,"energy_joule":9000.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":8399336,"io_bytes_written":8394098,"network_bytes":79,"activities":{"observed":1231,"recorded":782,"dropped":0,"excluded":449},"layers":{"posix":{"open":{"calls":23,"bytes":0,"time_ns":608733,"errors":12},"close":{"calls":57,"bytes":0,"time_ns":367963,"errors":0},"read":{"calls":94,"bytes":994,"time_ns":543795,"errors":0},"write":{"calls":72,"bytes":576,"time_ns":17010278,"errors":0},"writev":{"calls":15,"bytes":4914,"time_ns":1571981,"errors":0},"fsync":{"calls":1,"bytes":0,"time_ns":30063639,"errors":0},"fcntl":{"calls":7,"bytes":0,"time_ns":13666,"errors":0},"mmap":{"calls":7,"bytes":0,"time_ns":61986,"errors":0},"stat":{"calls":206,"bytes":0,"time_ns":8283741,"errors":3},"lstat":{"calls":1,"bytes":0,"time_ns":2485,"errors":0},"fstat":{"calls":12,"bytes":0,"time_ns":22074,"errors":0},"unlink":{"calls":2,"bytes":0,"time_ns":12333,"errors":0},"mkdir":{"calls":1,"bytes":0,"time_ns":3930206,"errors":0},"access":{"calls":2,"bytes":0,"time_ns":49685,"errors":2},"send":{"calls":1,"bytes":71,"time_ns":45615,"errors":0},"recv":{"calls":2,"bytes":8,"time_ns":30363814,"errors":0}},"stdio":{"fopen":{"calls":11,"bytes":0,"time_ns":239079,"errors":8},"fclose":{"calls":3,"bytes":0,"time_ns":11944,"errors":0},"fread":{"calls":6,"bytes":9734,"time_ns":140635,"errors":0}},"mpiio":{"open":{"calls":1,"bytes":0,"time_ns":18284985,"errors":0},"close":{"calls":1,"bytes":0,"time_ns":2145353,"errors":0},"sync":{"calls":1,"bytes":0,"time_ns":30853817,"errors":0},"read_at_all":{"calls":128,"bytes":8388608,"time_ns":149330027,"errors":0},"write_at_all":{"calls":128,"bytes":8388608,"time_ns":69898964,"errors":0}}},"files":[{"path":"/scratch/ior.dat","calls":259,"bytes_read":8388608,"bytes_written":8388608},{"path":"/etc/openmpi/openmpi-mca-params.conf","calls":8,"bytes_read":6714,"bytes_written":0},{"path":"/usr/lib/x86_64-linux-gnu/pmix2/share/pmix-mca-params.conf","calls":4,"bytes_read":3020,"bytes_written":0},{"path":"/usr/share/misc/pci.ids","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/usr/share/misc/pci.ids.gz","calls":6,"bytes_read":0,"bytes_written":0},{"path":"/run/udev/data/b254:0","calls":5,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11442/pmix_dstor_ds21_11442/initial-pmix_shared-segment-0","calls":3,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11442/pmix_dstor_ds21_11442/smdataseg-1078722561-0","calls":3,"bytes_read":0,"bytes_written":0},{"path":"<stderr>","calls":3,"bytes_read":0,"bytes_written":0},{"path":"/tmp/ompi.vm.0/pid.11442/pmix_dstor_ds12_11442/initial-pmix_shared-segment-0","calls":3,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-ior-2","in_job_report":true}'),
(9, '{"vigil_report":1,"program":"dd","argv":["dd","if=/dev/zero","of=/tmp/x","bs=1M","count=8"],"pid":6100,"host":"n1","runtime_ms":10.179,"cpu_seconds":0.0148,"energy_joule":1500.0,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":0,"io_bytes_written":8388701,"network_bytes":0,"activities":{"observed":29,"recorded":16,"dropped":0,"excluded":13},"layers":{"posix":{"open":{"calls":1,"bytes":0,"time_ns":202822,"errors":0},"close":{"calls":2,"bytes":0,"time_ns":6202,"errors":0},"write":{"calls":8,"bytes":8388608,"time_ns":2406394,"errors":0},"dup2":{"calls":1,"bytes":0,"time_ns":2715,"errors":0}},"stdio":{"fclose":{"calls":1,"bytes":0,"time_ns":2725,"errors":0},"fprintf":{"calls":2,"bytes":93,"time_ns":118814,"errors":0},"fflush":{"calls":1,"bytes":0,"time_ns":962,"errors":0}},"mpiio":{}},"files":[{"path":"/tmp/x","calls":12,"bytes_read":0,"bytes_written":8388608},{"path":"<stderr>","calls":4,"bytes_read":0,"bytes_written":93}],"regions":[{"name":"copy","entered":1,"calls":8,"bytes_read":0,"bytes_written":8388608,"wall_seconds":0.002412,"cpu_seconds":0.002101,"energy_joule":12.5,"energy_missing":0,"energy_estimated":false,"energy_uncertain":false,"open":0},{"name":"setup","entered":2,"calls":3,"bytes_read":0,"bytes_written":0,"wall_seconds":0.000208,"cpu_seconds":0.000197,"energy_joule":null,"energy_missing":2,"energy_estimated":false,"energy_uncertain":false,"open":0}],"region_notes":{"names_dropped":0,"unmatched_ends":1,"closed_by_outer":0,"too_deep":0,"dropped_calls":0},"run_key":"fixture-dd-3"}'),
(10, '{"vigil_report":1,"program":"cp","argv":["cp","a.txt","b.txt"],"pid":7004,"host":"n3","runtime_ms":2.4,"cpu_seconds":0.008845,"energy_joule":0.36,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":0,"io_bytes_written":6,"network_bytes":0,"activities":{"observed":17,"recorded":17,"dropped":0,"excluded":0},"layers":{"posix":{"open":{"calls":2,"bytes":0,"time_ns":59823,"errors":1},"openat":{"calls":1,"bytes":0,"time_ns":133331,"errors":0},"close":{"calls":2,"bytes":0,"time_ns":4890,"errors":0},"lseek":{"calls":1,"bytes":0,"time_ns":3768,"errors":0},"fstat":{"calls":2,"bytes":0,"time_ns":3797,"errors":0},"fstatat":{"calls":1,"bytes":0,"time_ns":24006,"errors":0},"copy_file_range":{"calls":2,"bytes":6,"time_ns":44223,"errors":0}},"stdio":{"fclose":{"calls":3,"bytes":0,"time_ns":7024,"errors":0},"fflush":{"calls":3,"bytes":0,"time_ns":1183,"errors":0}},"mpiio":{}},"files":[{"path":"/tmp/short/b.txt","calls":6,"bytes_read":0,"bytes_written":6},{"path":"/tmp/short/a.txt","calls":4,"bytes_read":0,"bytes_written":0},{"path":"<stdin>","calls":3,"bytes_read":0,"bytes_written":0},{"path":"<stderr>","calls":2,"bytes_read":0,"bytes_written":0},{"path":"<stdout>","calls":2,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-cp-4"}'),
(11, '{"vigil_report":1,"program":"tar","argv":["tar","cf","t.tar","a.txt","b.txt"],"pid":7005,"host":"n3","runtime_ms":4.472,"cpu_seconds":0.009545,"energy_joule":0.671,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":12,"io_bytes_written":10240,"network_bytes":0,"activities":{"observed":21,"recorded":21,"dropped":0,"excluded":0},"layers":{"posix":{"openat":{"calls":2,"bytes":0,"time_ns":6093,"errors":0},"creat":{"calls":1,"bytes":0,"time_ns":163568,"errors":0},"close":{"calls":3,"bytes":0,"time_ns":6764,"errors":0},"read":{"calls":2,"bytes":12,"time_ns":10441,"errors":0},"write":{"calls":1,"bytes":10240,"time_ns":39844,"errors":0},"fcntl":{"calls":3,"bytes":0,"time_ns":10129,"errors":0},"fstat":{"calls":5,"bytes":0,"time_ns":10578,"errors":0},"fstatat":{"calls":2,"bytes":0,"time_ns":53341,"errors":0}},"stdio":{"fclose":{"calls":2,"bytes":0,"time_ns":4039,"errors":0}},"mpiio":{}},"files":[{"path":"/tmp/short/t.tar","calls":4,"bytes_read":0,"bytes_written":10240},{"path":"/tmp/short/a.txt","calls":6,"bytes_read":6,"bytes_written":0},{"path":"/tmp/short/b.txt","calls":6,"bytes_read":6,"bytes_written":0},{"path":"<stderr>","calls":2,"bytes_read":0,"bytes_written":0},{"path":"<stdout>","calls":2,"bytes_read":0,"bytes_written":0},{"path":"<stdin>","calls":1,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-tar-5"}'),
(12, '{"vigil_report":1,"program":"python3","argv":["python3","-c","open(\"c.txt\",\"w\").write(\"x\"*100000)"],"pid":7006,"host":"n3","runtime_ms":82.995,"cpu_seconds":0.154071,"energy_joule":12.449,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":1333538,"io_bytes_written":100000,"network_bytes":0,"activities":{"observed":735,"recorded":735,"dropped":0,"excluded":0},"layers":{"posix":{"open":{"calls":55,"bytes":0,"time_ns":1941306,"errors":0},"close":{"calls":55,"bytes":0,"time_ns":184006,"errors":0},"read":{"calls":108,"bytes":1333538,"time_ns":4238634,"errors":0},"write":{"calls":1,"bytes":100000,"time_ns":131829,"errors":0},"lseek":{"calls":114,"bytes":0,"time_ns":177140,"errors":0},"fcntl":{"calls":4,"bytes":0,"time_ns":9378,"errors":0},"mmap":{"calls":5,"bytes":0,"time_ns":82025,"errors":0},"stat":{"calls":275,"bytes":0,"time_ns":4462677,"errors":38},"fstat":{"calls":111,"bytes":0,"time_ns":208683,"errors":0}},"stdio":{"fopen":{"calls":5,"bytes":0,"time_ns":188816,"errors":5},"fflush":{"calls":2,"bytes":0,"time_ns":3977,"errors":0}},"mpiio":{}},"files":[{"path":"/usr/lib/python3.11/__pycache__/typing.cpython-311.pyc","calls":8,"bytes_read":160698,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/zipfile.cpython-311.pyc","calls":8,"bytes_read":118009,"bytes_written":0},{"path":"/tmp/short/c.txt","calls":6,"bytes_read":0,"bytes_written":100000},{"path":"/usr/lib/python3.11/__pycache__/ipaddress.cpython-311.pyc","calls":8,"bytes_read":94246,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/enum.cpython-311.pyc","calls":8,"bytes_read":87088,"bytes_written":0},{"path":"/usr/lib/python3.11/collections/__pycache__/__init__.cpython-311.pyc","calls":8,"bytes_read":78239,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/shutil.cpython-311.pyc","calls":8,"bytes_read":70968,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/threading.cpython-311.pyc","calls":8,"bytes_read":70102,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/pathlib.cpython-311.pyc","calls":8,"bytes_read":67744,"bytes_written":0},{"path":"/usr/lib/python3.11/urllib/__pycache__/parse.cpython-311.pyc","calls":8,"bytes_read":54638,"bytes_written":0}],"run_key":"fixture-python3-6"}'),
(13, '{"vigil_report":1,"program":"ls","argv":["ls","-l","/usr/bin"],"pid":7007,"host":"n3","runtime_ms":38.901,"cpu_seconds":0.042517,"energy_joule":5.835,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":0,"io_bytes_written":0,"network_bytes":0,"activities":{"observed":1457,"recorded":1457,"dropped":0,"excluded":0},"layers":{"posix":{"statx":{"calls":1453,"bytes":0,"time_ns":20468185,"errors":0}},"stdio":{"fclose":{"calls":2,"bytes":0,"time_ns":5260,"errors":0},"fflush":{"calls":2,"bytes":0,"time_ns":2274,"errors":0}},"mpiio":{}},"files":[{"path":"<stderr>","calls":2,"bytes_read":0,"bytes_written":0},{"path":"<stdout>","calls":2,"bytes_read":0,"bytes_written":0},{"path":"/usr/bin/llvm-cov","calls":1,"bytes_read":0,"bytes_written":0},{"path":"/usr/bin/echo","calls":1,"bytes_read":0,"bytes_written":0},{"path":"/usr/bin/ed","calls":1,"bytes_read":0,"bytes_written":0},{"path":"/usr/bin/xmlcatalog","calls":1,"bytes_read":0,"bytes_written":0},{"path":"/usr/bin/mpicc.openmpi","calls":1,"bytes_read":0,"bytes_written":0},{"path":"/usr/bin/savelog","calls":1,"bytes_read":0,"bytes_written":0},{"path":"/usr/bin/tomlq","calls":1,"bytes_read":0,"bytes_written":0},{"path":"/usr/bin/gprof","calls":1,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-ls-7"}'),
(14, '{"vigil_report":1,"program":"cp","argv":["cp","t.tar","u.tar"],"pid":7008,"host":"n3","runtime_ms":2.504,"cpu_seconds":0.007914,"energy_joule":0.376,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":0,"io_bytes_written":10240,"network_bytes":0,"activities":{"observed":17,"recorded":17,"dropped":0,"excluded":0},"layers":{"posix":{"open":{"calls":2,"bytes":0,"time_ns":66424,"errors":1},"openat":{"calls":1,"bytes":0,"time_ns":157888,"errors":0},"close":{"calls":2,"bytes":0,"time_ns":5469,"errors":0},"lseek":{"calls":1,"bytes":0,"time_ns":3556,"errors":0},"fstat":{"calls":2,"bytes":0,"time_ns":4307,"errors":0},"fstatat":{"calls":1,"bytes":0,"time_ns":24045,"errors":0},"copy_file_range":{"calls":2,"bytes":10240,"time_ns":55763,"errors":0}},"stdio":{"fclose":{"calls":3,"bytes":0,"time_ns":7945,"errors":0},"fflush":{"calls":3,"bytes":0,"time_ns":1562,"errors":0}},"mpiio":{}},"files":[{"path":"/tmp/short/u.tar","calls":6,"bytes_read":0,"bytes_written":10240},{"path":"/tmp/short/t.tar","calls":4,"bytes_read":0,"bytes_written":0},{"path":"<stdin>","calls":3,"bytes_read":0,"bytes_written":0},{"path":"<stderr>","calls":2,"bytes_read":0,"bytes_written":0},{"path":"<stdout>","calls":2,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-cp-8"}'),
(15, '{"vigil_report":1,"program":"tar","argv":["tar","xf","t.tar","-C","/tmp/short"],"pid":7009,"host":"n3","runtime_ms":2.692,"cpu_seconds":0.007071,"energy_joule":0.404,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":10240,"io_bytes_written":12,"network_bytes":0,"activities":{"observed":21,"recorded":21,"dropped":0,"excluded":0},"layers":{"posix":{"open":{"calls":1,"bytes":0,"time_ns":23074,"errors":0},"openat":{"calls":5,"bytes":0,"time_ns":192161,"errors":2},"close":{"calls":3,"bytes":0,"time_ns":6643,"errors":0},"read":{"calls":1,"bytes":10240,"time_ns":43171,"errors":0},"write":{"calls":2,"bytes":12,"time_ns":26349,"errors":0},"fcntl":{"calls":3,"bytes":0,"time_ns":7304,"errors":0},"fstat":{"calls":2,"bytes":0,"time_ns":4399,"errors":0},"unlinkat":{"calls":2,"bytes":0,"time_ns":76815,"errors":0}},"stdio":{"fclose":{"calls":2,"bytes":0,"time_ns":4780,"errors":0}},"mpiio":{}},"files":[{"path":"/tmp/short/t.tar","calls":5,"bytes_read":10240,"bytes_written":0},{"path":"/tmp/short/a.txt","calls":5,"bytes_read":0,"bytes_written":6},{"path":"/tmp/short/b.txt","calls":5,"bytes_read":0,"bytes_written":6},{"path":"<stderr>","calls":2,"bytes_read":0,"bytes_written":0},{"path":"<stdout>","calls":2,"bytes_read":0,"bytes_written":0},{"path":"/tmp/short","calls":1,"bytes_read":0,"bytes_written":0},{"path":"<stdin>","calls":1,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-tar-9"}'),
(16, '{"vigil_report":1,"program":"python3","argv":["python3","-c","print(len(open(\"c.txt\").read()))"],"pid":7010,"host":"n3","runtime_ms":87.971,"cpu_seconds":0.170449,"energy_joule":13.196,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":1433538,"io_bytes_written":7,"network_bytes":0,"activities":{"observed":739,"recorded":739,"dropped":0,"excluded":0},"layers":{"posix":{"open":{"calls":55,"bytes":0,"time_ns":1729879,"errors":0},"close":{"calls":55,"bytes":0,"time_ns":150324,"errors":0},"read":{"calls":110,"bytes":1433538,"time_ns":4905502,"errors":0},"write":{"calls":2,"bytes":7,"time_ns":5760,"errors":0},"lseek":{"calls":114,"bytes":0,"time_ns":191292,"errors":0},"fcntl":{"calls":4,"bytes":0,"time_ns":10138,"errors":0},"mmap":{"calls":5,"bytes":0,"time_ns":82144,"errors":0},"stat":{"calls":275,"bytes":0,"time_ns":4350953,"errors":38},"fstat":{"calls":112,"bytes":0,"time_ns":234163,"errors":0}},"stdio":{"fopen":{"calls":5,"bytes":0,"time_ns":255932,"errors":5},"fflush":{"calls":2,"bytes":0,"time_ns":3255,"errors":0}},"mpiio":{}},"files":[{"path":"/usr/lib/python3.11/__pycache__/typing.cpython-311.pyc","calls":8,"bytes_read":160698,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/zipfile.cpython-311.pyc","calls":8,"bytes_read":118009,"bytes_written":0},{"path":"/tmp/short/c.txt","calls":8,"bytes_read":100000,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/ipaddress.cpython-311.pyc","calls":8,"bytes_read":94246,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/enum.cpython-311.pyc","calls":8,"bytes_read":87088,"bytes_written":0},{"path":"/usr/lib/python3.11/collections/__pycache__/__init__.cpython-311.pyc","calls":8,"bytes_read":78239,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/shutil.cpython-311.pyc","calls":8,"bytes_read":70968,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/threading.cpython-311.pyc","calls":8,"bytes_read":70102,"bytes_written":0},{"path":"/usr/lib/python3.11/__pycache__/pathlib.cpython-311.pyc","calls":8,"bytes_read":67744,"bytes_written":0},{"path":"/usr/lib/python3.11/urllib/__pycache__/parse.cpython-311.pyc","calls":8,"bytes_read":54638,"bytes_written":0}],"run_key":"fixture-python3-10"}'),
(17, '{"vigil_report":1,"program":"ls","argv":["ls","/tmp"],"pid":7011,"host":"n3","runtime_ms":2.699,"cpu_seconds":0.00792,"energy_joule":0.405,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":0,"io_bytes_written":0,"network_bytes":0,"activities":{"observed":5,"recorded":5,"dropped":0,"excluded":0},"layers":{"posix":{"statx":{"calls":1,"bytes":0,"time_ns":38652,"errors":0}},"stdio":{"fclose":{"calls":2,"bytes":0,"time_ns":4770,"errors":0},"fflush":{"calls":2,"bytes":0,"time_ns":3356,"errors":0}},"mpiio":{}},"files":[{"path":"<stderr>","calls":2,"bytes_read":0,"bytes_written":0},{"path":"<stdout>","calls":2,"bytes_read":0,"bytes_written":0},{"path":"/tmp","calls":1,"bytes_read":0,"bytes_written":0}],"run_key":"fixture-ls-11"}'),
(18, '{"vigil_report":1,"program":"gzip","argv":["gzip","-k","-f","t.tar"],"pid":7012,"host":"n3","runtime_ms":2.029,"cpu_seconds":0.006367,"energy_joule":0.304,"energy_source":"powercap","energy_estimated":false,"energy_uncertain":false,"energy_note":null,"vigild":{"state":"standalone","process_id":null,"reason":"no vigild at /run/vigil/vigild.sock (No such file or directory)","activities_drained":null,"names_drained":null,"gaps":null,"dropped":null,"anomalies":null,"cpu_seconds":null,"capture":{"mode":null,"cycles":null,"abnormal_cycles":null,"observed":null,"forwarded":null,"dropped":null,"lost":null,"held":null}},"io_bytes_read":10240,"io_bytes_written":138,"network_bytes":0,"activities":{"observed":8,"recorded":8,"dropped":0,"excluded":0},"layers":{"posix":{"openat":{"calls":2,"bytes":0,"time_ns":203081,"errors":0},"close":{"calls":2,"bytes":0,"time_ns":5761,"errors":0},"read":{"calls":2,"bytes":10240,"time_ns":62307,"errors":0},"write":{"calls":1,"bytes":138,"time_ns":31940,"errors":0},"fstat":{"calls":1,"bytes":0,"time_ns":9998,"errors":0}},"stdio":{},"mpiio":{}},"files":[{"path":"/tmp/short/t.tar","calls":5,"bytes_read":10240,"bytes_written":0},{"path":"/tmp/short/t.tar.gz","calls":3,"bytes_read":0,"bytes_written":138}],"run_key":"fixture-gzip-12"}');

-- ---- runs and processes --------------------------------------------------------

INSERT INTO runs (run_id, run_key, job_id, program, argv, uid, start_time, end_time, exit_status)
VALUES
    (1, 'fixture-ior-1', 1, 'ior', '{ior,-w,-r}', 1,
     '2026-11-20 10:00:00Z', '2026-11-20 10:02:00Z', 0),
    (2, 'fixture-ior-2', 2, 'ior', '{ior,-w,-r}', 1,
     '2026-11-20 11:00:00Z', '2026-11-20 11:02:00Z', 0),
    (3, 'fixture-dd-3', NULL, 'dd', '{dd,if=/dev/zero,of=/tmp/x,bs=1M,count=8}', 65534,
     '2026-11-20 10:01:00Z', '2026-11-20 10:01:30Z', 0);

INSERT INTO processes (process_id, run_id, node_id, pid, uid, rank, program, argv, cwd,
                       start_time, start_monotonic_ns, end_time, exit_status)
SELECT p.process_id, p.run_id, p.node_id, p.pid, r.uid, p.rank, r.program, r.argv, '/scratch',
       r.start_time, p.pid::bigint * 1000000000, r.end_time, 0
  FROM (VALUES (1, 1, 1, 4100, 0), (2, 1, 1, 4101, 1), (3, 1, 2, 4200, 2), (4, 1, 2, 4201, 3),
               (5, 2, 1, 5100, 0), (6, 2, 1, 5101, 1), (7, 2, 2, 5200, 2), (8, 2, 2, 5201, 3),
               (9, 3, 1, 6100, NULL))
       AS p (process_id, run_id, node_id, pid, rank)
  JOIN runs r USING (run_id);

-- Runs 4..12: one process each on n3, lasting its report's runtime.
INSERT INTO runs (run_id, run_key, program, argv, uid, start_time, end_time, exit_status)
SELECT n, f.report->>'run_key', f.report->>'program',
       ARRAY(SELECT jsonb_array_elements_text(f.report->'argv')),
       (ARRAY[0, 1, 65534])[(n - 4) % 3 + 1],
       start_time, start_time + (f.report->>'runtime_ms')::float8 * interval '1 ms', 0
  FROM generate_series(4, 12) n
  JOIN fixture_reports f ON f.process_id = n + 6,
       LATERAL (SELECT timestamptz '2026-11-20 12:00:00Z' + (n - 4) * interval '15 min'
                       AS start_time) s;

INSERT INTO processes (process_id, run_id, node_id, pid, uid, rank, program, argv, cwd,
                       start_time, start_monotonic_ns, end_time, exit_status)
SELECT run_id + 6, run_id, 3, 7000 + run_id, uid, NULL, program, argv, '/tmp',
       start_time, (7000 + run_id) * 1000000000::bigint, end_time, 0
  FROM runs WHERE run_id BETWEEN 4 AND 12;

-- As vigil-txd stores a report (txd/store.c): the figures
-- out of the JSON, none for a report the job's report already counts.
INSERT INTO run_summaries (process_id, report, calls, bytes_read, bytes_written, energy_j,
                           energy_source)
SELECT process_id, r,
       CASE WHEN own THEN (r->'activities'->>'observed')::bigint END,
       CASE WHEN own THEN (r->>'io_bytes_read')::bigint END,
       CASE WHEN own THEN (r->>'io_bytes_written')::bigint END,
       CASE WHEN own THEN (r->>'energy_joule')::float8 END, r->>'energy_source'
  FROM (SELECT process_id, report AS r,
               NOT coalesce((report->>'in_job_report')::boolean, false) AS own
          FROM fixture_reports) f;

-- ---- captured windows ----------------------------------------------------------

INSERT INTO files (file_id, path_bytes, path) VALUES
    (1, convert_to('/scratch/ior.dat', 'UTF8'), '/scratch/ior.dat');

INSERT INTO captures (capture_id, node_id, process_id, first_cycle, last_cycle, start_time,
                      end_time, activities_forwarded, reasons) VALUES
    (1, 1, 1, 89, 94, '2026-11-20 10:00:28Z', '2026-11-20 10:00:34Z', 300,
     'node n1 BAD: energy.node_j 400 J/s out of [100, 200] (statistics-range)'),
    (2, 2, 3, 131, 132, '2026-11-20 10:01:10Z', '2026-11-20 10:01:12Z', 300,
     'process 3 BAD: posix.write.bytes_per_s out of range (statistics-range)');

-- 300 activities per window: every third a read, the others writes of
-- 64 KiB blocks in order; every 50th (i = 49, 99, …) fails with EIO.
INSERT INTO activities (process_id, seq, layer, operation, file_id, file_offset, bytes, result,
                        errno, start_time, start_ns, duration_ns, thread, parent_start_ns, flags,
                        comm_size)
SELECT w.process_id, 1000 + i, 1, CASE WHEN i % 3 = 2 THEN 5 ELSE 6 END, 1,
       i::bigint * 65536, 65536,
       CASE WHEN i % 50 = 49 THEN -1 ELSE 65536 END,
       CASE WHEN i % 50 = 49 THEN 5 ELSE 0 END,
       w.start_time + i * w.step,
       (extract(epoch FROM w.start_time)::bigint * 1000000000)
           + i * (extract(epoch FROM w.step) * 1000000000)::bigint,
       200000 + (i % 7) * 10000, w.pid, NULL, 0, NULL
  FROM (VALUES (1, 4100, timestamptz '2026-11-20 10:00:28Z', interval '20 ms'),
               (3, 4200, timestamptz '2026-11-20 10:01:10Z', interval '6 ms'))
       AS w (process_id, pid, start_time, step),
       generate_series(0, 299) i;

-- Their counts per process and second, as vigil-txd keeps them beside
-- (warehouse/migrations/0014_activity_seconds.sql); the heat map reads them.
INSERT INTO activity_seconds (node_id, process_id, start_time, layer, operation, calls, bytes,
                              duration_ns)
SELECT p.node_id, a.process_id, to_timestamp(floor(a.start_ns / 1e9)), a.layer, a.operation,
       count(*), coalesce(sum(a.bytes), 0), sum(a.duration_ns)
  FROM activities a JOIN processes p USING (process_id)
 GROUP BY 1, 2, 3, 4, 5;

INSERT INTO anomalies (anomaly_id, level, node_id, process_id, cycle, time, state, plugin,
                       metric, value, expected_min, expected_max, message) VALUES
    (1, 'node', 1, NULL, 91, '2026-11-20 10:00:31Z', 'BAD', 'statistics-range',
     'energy.node_j', 400, 100, 200, 'energy.node_j 400 J/s out of [100, 200]'),
    (2, 'process', 1, 1, 92, '2026-11-20 10:00:32Z', 'BAD', 'latency-histogram',
     'posix.write.latency_ns', 5200000, NULL, 1000000,
     'posix write latency p99 5.2 ms above 1 ms'),
    (3, 'process', 2, 3, 131, '2026-11-20 10:01:11Z', 'BAD', 'statistics-range',
     'posix.write.bytes_per_s', 3276800, 10485760, NULL,
     'posix.write.bytes_per_s 3276800 below 10485760'),
    (4, 'node', 2, NULL, 132, '2026-11-20 10:01:12Z', 'BAD', 'latency-histogram',
     'disk.sda.write_latency_ns', 9000000, NULL, 2000000,
     'disk sda write latency p99 9 ms above 2 ms'),
    (5, 'node', 1, NULL, 135, '2026-11-20 10:01:15Z', 'BAD', 'statistics-range',
     'disk.sda.write_bytes', 90000000, 0, 60000000,
     'disk.sda.write_bytes 90000000 B/s out of [0, 60000000]');

INSERT INTO reasoner_states (level, node_id, process_id, cycle, time, state, overloaded_mask,
                             bad_issues, good_issues, other_issues)
SELECT 'node', 1, NULL, c, timestamptz '2026-11-20 09:59:00Z' + c * interval '1 s',
       CASE WHEN c BETWEEN 90 AND 92 THEN 'BAD' ELSE 'OK' END, 0,
       CASE WHEN c BETWEEN 90 AND 92 THEN 1 ELSE 0 END, 0, 0
  FROM generate_series(89, 94) c
UNION ALL
SELECT 'process', 1, 1, c, timestamptz '2026-11-20 09:59:00Z' + c * interval '1 s', 'BAD', 0,
       1, 0, 0
  FROM generate_series(91, 92) c
UNION ALL
SELECT 'node', 2, NULL, c, timestamptz '2026-11-20 09:59:00Z' + c * interval '1 s', 'BAD', 0,
       1, 0, 0
  FROM generate_series(131, 132) c
UNION ALL
SELECT 'process', 2, 3, 131, timestamptz '2026-11-20 10:01:11Z', 'BAD', 0, 1, 0, 0;

-- ---- node statistics -------------------------------------------------------------

-- rate = base + amplitude × sin(2π (s + phase × node_id) / period), s the
-- epoch second: per second for a counter, the value for a gauge.
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

-- 8 CPUs: user + system + idle + iowait = 8 s per second.
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
  FROM (SELECT node_id, metric_id, t, m.kind = 'counter' AS counter, amplitude,
               CASE WHEN node_id = 1 AND metric_id = 1 AND t = '2026-11-20 10:00:30Z' THEN 400
                    WHEN integral THEN round(r)
                    ELSE r END AS v
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
          JOIN metrics m USING (metric_id),
               generate_series(1, 3) node_id,
               generate_series(timestamptz '2026-11-20 09:59:00Z',
                               timestamptz '2026-11-20 14:04:59Z', interval '1 s') t,
               LATERAL (SELECT base + amplitude
                               * sin(2 * pi() * (extract(epoch FROM t) + phase * node_id)
                                     / period) AS r) rate) x
 GROUP BY node_id, t;

-- ---- per-file characterization (schema/0008_file_stats.sql) ----------------------

-- As vigil-txd stores a report's "files" and "timeline", set by hand (the
-- reports above predate them). Run 3 (dd, process 9): /tmp/x, 8 writes of
-- 1 MiB one after the other (7 sequential and consecutive), and <stderr>,
-- 4 small writes; its timeline, 4 bins of 2.5 ms. Run 1: the job's report
-- (process 1) lists /scratch/ior.dat shared by the 4 ranks, collective
-- MPI-IO, rank 3 the fastest and rank 0 the slowest; rank 1's own report
-- (process 2, in_job_report) lists it too and is not counted again.
INSERT INTO file_stats (process_id, position, in_job_report, path, mount, fs_type, calls,
    read_bytes, written_bytes, posix_reads, posix_writes, posix_opens, posix_seeks, posix_stats,
    posix_fsyncs, posix_other, posix_read_bytes, posix_written_bytes, max_read_offset,
    max_written_offset, seq_reads, seq_writes, consec_reads, consec_writes, read_size_hist,
    write_size_hist, common_sizes, common_strides, read_time_s, write_time_s, meta_time_s,
    first_open_s, last_close_s, first_io_s, last_io_s, mpiio_indep_reads, mpiio_indep_writes,
    mpiio_coll_reads, mpiio_coll_writes, mpiio_split_reads, mpiio_split_writes, mpiio_nb_reads,
    mpiio_nb_writes, mpiio_read_bytes, mpiio_written_bytes, rank_count, shared, fastest_rank,
    fastest_s, fastest_bytes, slowest_rank, slowest_s, slowest_bytes, time_variance_s2,
    bytes_variance) VALUES
(9, 0, false, '/tmp/x', '/tmp', 'tmpfs', 12, 0, 8388608, 0, 8, 1, 0, 1, 1, 1, 0, 8388608, -1,
 8388607, 0, 7, 0, 7, '{0,0,0,0,0,0,0,0,0,0}', '{0,0,0,0,0,8,0,0,0,0}',
 '[{"size": 1048576, "count": 8}]', '[{"stride": 0, "count": 7}]', 0, 0.004, 0.0002,
 0.0005, 0.0095, 0.0006, 0.009, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(9, 1, false, '<stderr>', '/', '', 4, 0, 93, 0, 4, 0, 0, 0, 0, 0, 0, 93, -1, -1, 0, 0, 0, 0,
 '{0,0,0,0,0,0,0,0,0,0}', '{4,0,0,0,0,0,0,0,0,0}',
 '[{"size": 31, "count": 2}, {"size": 15, "count": 1}, {"size": 16, "count": 1}]', '[]',
 0, 0.00003, 0, NULL, NULL, 0.0096, 0.0099, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
(1, 0, false, '/scratch/ior.dat', '/scratch', 'lustre', 525, 16777216, 16777216, 256, 256, 4,
 0, 4, 4, 4, 16777216, 16777216, 16777215, 16777215, 252, 252, 252, 252,
 '{0,0,0,0,256,0,0,0,0,0}', '{0,0,0,0,256,0,0,0,0,0}', '[{"size": 65536, "count": 512}]',
 '[{"stride": 0, "count": 504}]', 0.26, 0.24, 0.15, 0.02, 0.84, 0.03, 0.8, 0, 0, 256, 256, 0,
 0, 0, 0, 16777216, 16777216, 4, true, 3, 0.12, 8388608, 0, 0.26, 8388608, 0.0035, 0),
(2, 0, true, '/scratch/ior.dat', '/scratch', 'lustre', 131, 4194304, 4194304, 64, 64, 1, 0,
 1, 1, 1, 4194304, 4194304, 16777215, 16777215, 63, 63, 63, 63, '{0,0,0,0,64,0,0,0,0,0}',
 '{0,0,0,0,64,0,0,0,0,0}', '[{"size": 65536, "count": 128}]', '[{"stride": 0, "count": 126}]',
 0.06, 0.06, 0.04, 0.02, 0.88, 0.03, 0.8, 0, 0, 64, 64, 0, 0, 0, 0, 4194304, 4194304, NULL,
 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);

-- Issue 33's counters (schema/0017), run 3's only: its report bins as
-- Darshan does; run 1's rows are from before, and its page says so. /tmp/x:
-- 2 of its 8 writes not on a 4 KiB boundary, the slowest 1.5 ms.
UPDATE file_stats SET size_bins_upper_inclusive = true, posix_rw_switches = 0,
       posix_fdatasyncs = 0, posix_filenos = 0, posix_dups = 0, posix_mode = 420,
       posix_file_alignment_bytes = 4096, posix_file_not_aligned = 2,
       posix_mem_alignment_bytes = 8, posix_mem_not_aligned = 0, posix_max_read_time_s = 0,
       posix_max_read_time_size = 0, posix_max_write_time_s = 0.0015,
       posix_max_write_time_size = 1048576
 WHERE process_id = 9 AND position = 0;
UPDATE file_stats SET size_bins_upper_inclusive = true, posix_rw_switches = 0,
       posix_file_alignment_bytes = 4096, posix_file_not_aligned = 4,
       posix_max_write_time_s = 0.00001, posix_max_write_time_size = 31
 WHERE process_id = 9 AND position = 1;
-- dd's report's findings (the report's top-level "findings", kept whole),
-- as the library writes them: one warning, and one whose evidence is
-- markup (shown as text). `vigil report 3` reads them back.
UPDATE run_summaries SET report = report || '{"findings": [
  {"id": "misaligned_accesses", "severity": "warning", "file": "/tmp/x", "rank": null,
   "evidence": "2 of 8 writes to /tmp/x do not start on a 4 KiB boundary.",
   "advice": "Write in multiples of the file system block size."},
  {"id": "odd_members", "severity": "info", "file": null, "rank": null,
   "evidence": "<b id=\"injected\">not bold</b>", "advice": "none"}],
  "findings_thresholds": "vigild"}'::jsonb
 WHERE process_id = 9;
-- Findings no vigil wrote, in cp's report (run 4): one without evidence,
-- which vigil-web passes over; one whose severity, file and rank are of
-- the wrong kind (shown as null).
UPDATE run_summaries SET report = report || '{"findings": [
  {"id": "broken", "severity": "info", "file": null, "rank": null, "advice": "none"},
  {"id": "wrong_kinds", "severity": "critical", "file": 7, "rank": "3",
   "evidence": "members of the wrong kind", "advice": "none"}]}'::jsonb
 WHERE process_id = 10;

INSERT INTO process_io_timelines (process_id, in_job_report, bin_s, read_bytes,
                                  written_bytes) VALUES
    (9, false, 0.0025, '{0,0,0,0}', '{2097152,4194304,2097152,93}'),
    (1, false, 0.25, '{0,8388608,8388608,0}', '{8388608,8388608,0,0}'),
    (2, true, 0.25, '{0,2097152,2097152,0}', '{2097152,2097152,0,0}');

-- ---- vigil tune --store trials (schema/0009) ---------------------------------------
-- Two trials of recordings made on n1: 1 the recorded configuration alone
-- (no candidate, no truth); 2 a candidate raising latency-histogram's
-- min_calls and the node reasoner's threshold, scored against truth. The
-- candidate flags 4 cycles where the recorded one flagged 12; sensor-sanity
-- stops speaking under it; latency-histogram goes from 9 cycles to 2.

INSERT INTO tune_trials (trial_id, stored_at, stored_by, recording, node, recorded_until, span_s,
                         vigil_version, cycles, judged_cycles, processes, activities, reloads,
                         limited, ended, decisions_compared, decisions_matched, candidate_file,
                         truth_file, changed_keys) VALUES
    (1, '2026-11-20 13:00:00+00', 'root', '/var/lib/vigil/rec-1.bin', 'n1',
     '2026-11-20 12:10:00+00', 600, '0.1.0', 600, 595, 3, 12000, 0, false, true, 600, 600,
     NULL, NULL, '[]'),
    (2, '2026-11-20 14:00:00+00', 'root', '/var/lib/vigil/rec-2.bin', 'n1',
     '2026-11-20 13:30:00+00', 300, '0.1.0', 300, 298, 2, 9000, 1, false, true, 300, 300,
     '/etc/vigil/candidate.conf', '/tmp/truth.jsonl',
     '[{"section": "adpi.latency-histogram", "key": "min_calls", "recorded": "10", "candidate": "50"},
       {"section": "reasoner.node", "key": "threshold", "recorded": "1", "candidate": "3"}]');

INSERT INTO tune_trial_results (trial_id, config, flagged_cycles, process_abnormal_cycles,
                                node_abnormal_cycles, own_states, windows, observed, forwarded,
                                dropped, lost, anomalous_cycles, caught, clean_cycles,
                                false_flags, replay_s) VALUES
    (1, 'recorded', 5, 5, 0, '{"process": {"warning": 5}, "node": {}}', 2, 12000, 1500, 0, 0,
     NULL, NULL, NULL, NULL, 0.25),
    (2, 'recorded', 12, 9, 6, '{"process": {"warning": 9}, "node": {"warning": 6}}', 4, 9000,
     1800, 0, 0, 20, 19, 280, 6, 0.125),
    (2, 'candidate', 4, 2, 1, '{"process": {"warning": 2}, "node": {"warning": 1}}', 3, 9000,
     900, 0, 0, 20, 18, 280, 1, 0.125);

INSERT INTO tune_trial_adpis (trial_id, config, level, plugin, cycles, issues, reasons) VALUES
    (1, 'recorded', 'process', 'latency-histogram', 5, 7,
     '[{"reason": "posix.write warning", "issues": 7, "example": "posix.write latency shifted"}]'),
    (2, 'recorded', 'process', 'latency-histogram', 9, 11,
     '[{"reason": "posix.write warning", "issues": 11, "example": "posix.write latency shifted"}]'),
    (2, 'recorded', 'node', 'sensor-sanity', 6, 6,
     '[{"reason": "mem.total_bytes warning", "issues": 6, "example": "mem.total_bytes stuck"}]'),
    (2, 'candidate', 'process', 'latency-histogram', 2, 2,
     '[{"reason": "posix.write warning", "issues": 2, "example": "posix.write latency shifted"}]');

-- ---- the sequences past the explicit ids -----------------------------------------

DO $$
BEGIN
    PERFORM setval('jobs_job_id_seq', (SELECT max(job_id) FROM jobs));
    PERFORM setval('runs_run_id_seq', (SELECT max(run_id) FROM runs));
    PERFORM setval('processes_process_id_seq', (SELECT max(process_id) FROM processes));
    PERFORM setval('files_file_id_seq', (SELECT max(file_id) FROM files));
    PERFORM setval('metrics_metric_id_seq', (SELECT max(metric_id) FROM metrics));
    PERFORM setval('anomalies_anomaly_id_seq', (SELECT max(anomaly_id) FROM anomalies));
    PERFORM setval('captures_capture_id_seq', (SELECT max(capture_id) FROM captures));
    PERFORM setval('tune_trials_trial_id_seq', (SELECT max(trial_id) FROM tune_trials));
END $$;

COMMIT;
