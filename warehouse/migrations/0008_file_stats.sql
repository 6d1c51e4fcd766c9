-- vigil warehouse, migration 8: per-file I/O characterization (issue 18),
-- Darshan's POSIX and MPI-IO counters per file, from each process's
-- report ("files", "timeline": docs/architecture.md, the report's JSON).
--
-- vigil-txd fills file_stats and process_io_timelines beside run_summaries
-- for every report it stores (transaction-server/store_file_stats.c), so
-- for every run, captured or not. A report whose "files" (or "timeline")
-- is malformed keeps its run_summaries row and the rest of its batch; only
-- that part has no rows, and vigil-txd logs why.
--
-- As in run_regions (0006), an MPI job's report (rank 0's, its files
-- merged over the ranks, with "ranks") counts for the job, and the ranks'
-- own reports ("in_job_report": true) are kept but not counted again.

-- One row per file of a report, in the report's order (busiest first).
-- Members a report has not (reports from before issue 18 have only path,
-- calls and bytes) are NULL; times in seconds since the process's start.
CREATE TABLE file_stats (
    process_id          bigint NOT NULL REFERENCES processes,
    position            integer NOT NULL,   -- 0: the report's busiest file
    in_job_report       boolean NOT NULL,   -- a rank's own report, counted in its job's
    path                text NOT NULL,
    mount               text NOT NULL,
    fs_type             text NOT NULL,
    calls               bigint NOT NULL,
    read_bytes          bigint NOT NULL,    -- the outermost level (MPI-IO if used)
    written_bytes       bigint NOT NULL,
    posix_reads         bigint,
    posix_writes        bigint,
    posix_opens         bigint,
    posix_seeks         bigint,
    posix_stats         bigint,
    posix_fsyncs        bigint,
    posix_other         bigint,
    posix_read_bytes    bigint,             -- what POSIX really moved
    posix_written_bytes bigint,
    max_read_offset     bigint,             -- Darshan's MAX_BYTE_READ; -1 none
    max_written_offset  bigint,
    seq_reads           bigint,
    seq_writes          bigint,
    consec_reads        bigint,
    consec_writes       bigint,
    read_size_hist      bigint[],           -- Darshan's 10 bins: 0-100, 100-1K, 1K-10K,
    write_size_hist     bigint[],           -- 10K-100K, 100K-1M, 1M-4M, 4M-10M, 10M-100M, 100M-1G, 1G+
    common_sizes        jsonb,              -- [{"size", "count"}], most common first
    common_strides      jsonb,              -- [{"stride", "count"}]
    read_time_s         float8,
    write_time_s        float8,
    meta_time_s         float8,
    first_open_s        float8,             -- NULL: none
    last_close_s        float8,
    first_io_s          float8,
    last_io_s           float8,
    mpiio_indep_reads   bigint,             -- NULL: not opened through MPI-IO
    mpiio_indep_writes  bigint,
    mpiio_coll_reads    bigint,
    mpiio_coll_writes   bigint,
    mpiio_split_reads   bigint,
    mpiio_split_writes  bigint,
    mpiio_nb_reads      bigint,
    mpiio_nb_writes     bigint,
    mpiio_read_bytes    bigint,
    mpiio_written_bytes bigint,
    rank_count          integer,            -- NULL: not a job's report
    shared              boolean,
    fastest_rank        integer,
    fastest_s           float8,
    fastest_bytes       bigint,
    slowest_rank        integer,
    slowest_s           float8,
    slowest_bytes       bigint,
    time_variance_s2    float8,
    bytes_variance      float8,
    most_posix_rank     integer,            -- the rank that moved the most POSIX bytes
    most_posix_bytes    bigint,             -- (two-phase collectives: the aggregator)
    least_posix_rank    integer,
    least_posix_bytes   bigint,
    PRIMARY KEY (process_id, position)
);

-- Each report's bytes read and written per time bin (Darshan's heatmap):
-- bin i covers [i, i + 1) × bin_s seconds after the process's start.
CREATE TABLE process_io_timelines (
    process_id     bigint PRIMARY KEY REFERENCES processes,
    in_job_report  boolean NOT NULL,
    bin_s          float8 NOT NULL,
    read_bytes     bigint[] NOT NULL,
    written_bytes  bigint[] NOT NULL
);

-- Element-wise sum of bigint arrays (histograms), NULL counting as empty.
CREATE FUNCTION vigil_int8_array_add(a bigint[], b bigint[]) RETURNS bigint[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE
        (SELECT array_agg(coalesce(x, 0) + coalesce(y, 0) ORDER BY i)
           FROM unnest(a, b) WITH ORDINALITY AS t(x, y, i)) END
$$;
CREATE AGGREGATE vigil_int8_array_sum(bigint[]) (
    SFUNC = vigil_int8_array_add, STYPE = bigint[]
);

-- One row per run and path: the reports that count (see above) summed.
-- Offsets and last times are the max, first times the min (each relative
-- to its own process's start); the common sizes and strides are those of
-- the counted reports added up, four kept (as Darshan reduces them: the
-- exact top four of the whole run could differ). For a job's file the
-- rank figures are its report's ("ranks").
CREATE VIEW run_files AS
WITH counted AS (
    SELECT p.run_id, f.*
      FROM file_stats f JOIN processes p USING (process_id)
     WHERE NOT f.in_job_report
)
SELECT c.run_id, c.path, min(c.mount) AS mount, min(c.fs_type) AS fs_type,
       count(*) AS reports,
       sum(c.calls) AS calls, sum(c.read_bytes) AS read_bytes,
       sum(c.written_bytes) AS written_bytes,
       sum(c.posix_reads) AS posix_reads, sum(c.posix_writes) AS posix_writes,
       sum(c.posix_opens) AS posix_opens, sum(c.posix_seeks) AS posix_seeks,
       sum(c.posix_stats) AS posix_stats, sum(c.posix_fsyncs) AS posix_fsyncs,
       sum(c.posix_other) AS posix_other,
       sum(c.posix_read_bytes) AS posix_read_bytes,
       sum(c.posix_written_bytes) AS posix_written_bytes,
       max(c.max_read_offset) AS max_read_offset,
       max(c.max_written_offset) AS max_written_offset,
       sum(c.seq_reads) AS seq_reads, sum(c.seq_writes) AS seq_writes,
       sum(c.consec_reads) AS consec_reads, sum(c.consec_writes) AS consec_writes,
       vigil_int8_array_sum(c.read_size_hist) AS read_size_hist,
       vigil_int8_array_sum(c.write_size_hist) AS write_size_hist,
       (SELECT jsonb_agg(jsonb_build_object('size', s.size, 'count', s.n) ORDER BY s.n DESC, s.size)
          FROM (SELECT (e ->> 'size')::bigint AS size, sum((e ->> 'count')::bigint) AS n
                  FROM counted c2, jsonb_array_elements(c2.common_sizes) e
                 WHERE c2.run_id = c.run_id AND c2.path = c.path
                 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 4) s) AS common_sizes,
       (SELECT jsonb_agg(jsonb_build_object('stride', s.stride, 'count', s.n) ORDER BY s.n DESC, s.stride)
          FROM (SELECT (e ->> 'stride')::bigint AS stride, sum((e ->> 'count')::bigint) AS n
                  FROM counted c2, jsonb_array_elements(c2.common_strides) e
                 WHERE c2.run_id = c.run_id AND c2.path = c.path
                 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 4) s) AS common_strides,
       sum(c.read_time_s) AS read_time_s, sum(c.write_time_s) AS write_time_s,
       sum(c.meta_time_s) AS meta_time_s,
       min(c.first_open_s) AS first_open_s, max(c.last_close_s) AS last_close_s,
       min(c.first_io_s) AS first_io_s, max(c.last_io_s) AS last_io_s,
       sum(c.mpiio_indep_reads) AS mpiio_indep_reads,
       sum(c.mpiio_indep_writes) AS mpiio_indep_writes,
       sum(c.mpiio_coll_reads) AS mpiio_coll_reads,
       sum(c.mpiio_coll_writes) AS mpiio_coll_writes,
       sum(c.mpiio_split_reads) AS mpiio_split_reads,
       sum(c.mpiio_split_writes) AS mpiio_split_writes,
       sum(c.mpiio_nb_reads) AS mpiio_nb_reads, sum(c.mpiio_nb_writes) AS mpiio_nb_writes,
       sum(c.mpiio_read_bytes) AS mpiio_read_bytes,
       sum(c.mpiio_written_bytes) AS mpiio_written_bytes,
       max(c.rank_count) AS rank_count, bool_or(c.shared) AS shared,
       min(c.fastest_rank) AS fastest_rank, min(c.fastest_s) AS fastest_s,
       min(c.fastest_bytes) AS fastest_bytes,
       max(c.slowest_rank) AS slowest_rank, max(c.slowest_s) AS slowest_s,
       max(c.slowest_bytes) AS slowest_bytes,
       max(c.time_variance_s2) AS time_variance_s2, max(c.bytes_variance) AS bytes_variance,
       min(c.most_posix_rank) AS most_posix_rank, max(c.most_posix_bytes) AS most_posix_bytes,
       min(c.least_posix_rank) AS least_posix_rank, min(c.least_posix_bytes) AS least_posix_bytes
  FROM counted c
 GROUP BY c.run_id, c.path;

-- The timelines that count, with their process (for the run page's plot).
CREATE VIEW run_io_timelines AS
SELECT p.run_id, t.process_id, p.node_id, n.hostname, p.pid, p.rank, p.start_time,
       t.bin_s, t.read_bytes, t.written_bytes
  FROM process_io_timelines t
  JOIN processes p USING (process_id)
  JOIN nodes n USING (node_id)
 WHERE NOT t.in_job_report;

-- Files a run's counted reports did not list: a report lists every file
-- unless that passes its size bound, when the least busy are left out and
-- "files_total" still counts them.
CREATE VIEW run_files_unlisted AS
SELECT p.run_id,
       sum(greatest((s.report ->> 'files_total')::bigint
                    - jsonb_array_length(s.report -> 'files'), 0)) AS files_unlisted
  FROM run_summaries s JOIN processes p USING (process_id)
 WHERE coalesce(s.report -> 'in_job_report' = 'true'::jsonb, false) = false
   AND jsonb_typeof(s.report -> 'files') = 'array'
   AND s.report ->> 'files_total' ~ '^[0-9]{1,18}$'
 GROUP BY p.run_id;

-- Reports stored before this migration: their files as they were listed
-- (path, calls and bytes; nothing else was kept then). Entries that are
-- not an object with those members are passed over.
INSERT INTO file_stats (process_id, position, in_job_report, path, mount, fs_type, calls,
                        read_bytes, written_bytes)
SELECT s.process_id, (f.i - 1)::integer,
       coalesce(s.report -> 'in_job_report' = 'true'::jsonb, false),
       f.e ->> 'path', '/', '',
       (f.e ->> 'calls')::bigint,
       (f.e ->> 'bytes_read')::bigint, (f.e ->> 'bytes_written')::bigint
  FROM run_summaries s,
       jsonb_array_elements(CASE WHEN jsonb_typeof(s.report -> 'files') = 'array'
                                 THEN s.report -> 'files' ELSE '[]'::jsonb END)
           WITH ORDINALITY AS f(e, i)
 WHERE jsonb_typeof(f.e) = 'object'
   AND jsonb_typeof(f.e -> 'path') = 'string'
   AND f.e ->> 'calls' ~ '^[0-9]{1,18}$'
   AND f.e ->> 'bytes_read' ~ '^[0-9]{1,18}$'
   AND f.e ->> 'bytes_written' ~ '^[0-9]{1,18}$';
