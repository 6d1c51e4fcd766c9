-- vigil warehouse, migration 17 (issue 33): the rest of Darshan's per-file
-- counters, and Darshan's conventions for the ones stored since 0008.
--
-- New columns of file_stats, one per new member of a file's "posix" and
-- "mpiio" objects (docs/darshan-counters.md gives each one's Darshan
-- name); vigil-txd fills them (txd/store_file_stats.c). NULL where the
-- report lacks the member: rows stored before this migration, reports of
-- a vigil from before issue 33, files not opened through MPI-IO. A mode
-- of -1 (not known) is NULL too. file_stats has no stdio columns (a
-- report's "stdio" object stays in run_summaries only), so none are added.
--
-- Conventions. Reports written before issue 33 put an access of exactly a
-- bin edge (100, 1024, 10240, 102400, 1048576, 4194304, 10485760,
-- 104857600, 1073741824 bytes) in the bin above it, and give a max offset
-- of -1 for none; their common sizes and strides could count more than
-- there were. Reports of issue 33 bin as Darshan does (each bin holds its
-- upper edge), give 0 for none, and mark each common value's count
-- "exact" (else a lower bound). The old rows cannot be re-binned (the
-- sizes are not kept: 1024 and 1025 are in one bin), so they stay as they
-- are and are marked: size_bins_upper_inclusive is true for a row whose
-- report carries issue 33's members (vigil-txd sets it when the "posix"
-- object has "rw_switches"), NULL for the others, and run_files tells
-- whether every counted row of a path is of the new kind. Their -1 max
-- offsets are kept too: max() over a path mixes -1 and 0 harmlessly.
-- Their posix_fsyncs counted fdatasync calls too; in the new rows it
-- counts fsync alone, and posix_fsyncs + posix_fdatasyncs is the old
-- figure.
--
-- On Citus file_stats is a reference table (warehouse/warehouse_citus.c):
-- ALTER TABLE reaches every copy, as 0008's columns did.
ALTER TABLE file_stats
    ADD COLUMN size_bins_upper_inclusive  boolean,   -- true: Darshan's bins; NULL: before issue 33
    ADD COLUMN posix_rw_switches          bigint,    -- POSIX_RW_SWITCHES
    ADD COLUMN posix_fdatasyncs           bigint,    -- POSIX_FDSYNCS (posix_fsyncs: fsync only)
    ADD COLUMN posix_filenos              bigint,    -- POSIX_FILENOS
    ADD COLUMN posix_dups                 bigint,    -- POSIX_DUPS
    ADD COLUMN posix_mode                 integer,   -- POSIX_MODE; NULL: not known
    ADD COLUMN posix_file_alignment_bytes bigint,    -- POSIX_FILE_ALIGNMENT
    ADD COLUMN posix_file_not_aligned     bigint,    -- POSIX_FILE_NOT_ALIGNED
    ADD COLUMN posix_mem_alignment_bytes  bigint,    -- POSIX_MEM_ALIGNMENT
    ADD COLUMN posix_mem_not_aligned      bigint,    -- POSIX_MEM_NOT_ALIGNED
    ADD COLUMN posix_max_read_time_s      float8,    -- POSIX_F_MAX_READ_TIME
    ADD COLUMN posix_max_read_time_size   bigint,    -- POSIX_MAX_READ_TIME_SIZE
    ADD COLUMN posix_max_write_time_s     float8,    -- POSIX_F_MAX_WRITE_TIME
    ADD COLUMN posix_max_write_time_size  bigint,    -- POSIX_MAX_WRITE_TIME_SIZE
    ADD COLUMN mpiio_indep_opens          bigint,    -- MPIIO_INDEP_OPENS
    ADD COLUMN mpiio_coll_opens           bigint,    -- MPIIO_COLL_OPENS
    ADD COLUMN mpiio_syncs                bigint,    -- MPIIO_SYNCS
    ADD COLUMN mpiio_hints                bigint,    -- MPIIO_HINTS
    ADD COLUMN mpiio_views                bigint,    -- MPIIO_VIEWS
    ADD COLUMN mpiio_rw_switches          bigint,    -- MPIIO_RW_SWITCHES
    ADD COLUMN mpiio_mode                 integer,   -- MPIIO_MODE (amode); NULL: not known
    ADD COLUMN mpiio_read_size_hist       bigint[],  -- MPIIO_SIZE_READ_AGG_*, the 10 bins above
    ADD COLUMN mpiio_write_size_hist      bigint[],  -- MPIIO_SIZE_WRITE_AGG_*
    ADD COLUMN mpiio_common_sizes         jsonb,     -- MPIIO_ACCESS1..4: [{"size", "count", "exact"}]
    ADD COLUMN mpiio_max_read_time_s      float8,    -- MPIIO_F_MAX_READ_TIME
    ADD COLUMN mpiio_max_read_time_size   bigint,    -- MPIIO_MAX_READ_TIME_SIZE
    ADD COLUMN mpiio_max_write_time_s     float8,    -- MPIIO_F_MAX_WRITE_TIME
    ADD COLUMN mpiio_max_write_time_size  bigint;    -- MPIIO_MAX_WRITE_TIME_SIZE

-- Common values of the counted reports of one run and path (`values`, a
-- jsonb array per report, `key` "size" or "stride") added up, four kept
-- (as Darshan reduces them). A sum's count is exact only when every
-- counted report with such values (`reports` of them) listed the value as
-- exact; a report that did not list it may have evicted it. "exact" is
-- left out when no report said (before issue 33).
CREATE FUNCTION vigil_common_values_merge(values_by_report jsonb[], key text, reports bigint)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_agg(jsonb_strip_nulls(jsonb_build_object(key, s.value, 'count', s.n,
                                                          'exact', s.exact))
                     ORDER BY s.n DESC, s.value)
      FROM (SELECT (e ->> key)::bigint AS value, sum((e ->> 'count')::bigint) AS n,
                   CASE WHEN count(e -> 'exact') = 0 THEN NULL
                        ELSE count(*) FILTER (WHERE e -> 'exact' = 'true'::jsonb) = reports
                   END AS exact
              FROM unnest(values_by_report) r(v),
                   jsonb_array_elements(CASE WHEN jsonb_typeof(r.v) = 'array' THEN r.v END) e
             GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 4) s
$$;

-- run_files as in 0008, its common values merged by the function above,
-- and the new counters after its columns: counts summed, the slowest call
-- the max (its size that call's), an alignment the smallest (the one the
-- reports agree on when they do), a mode the first report's that knows it.
CREATE OR REPLACE VIEW run_files AS
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
       vigil_common_values_merge(array_agg(c.common_sizes), 'size', count(c.common_sizes))
           AS common_sizes,
       vigil_common_values_merge(array_agg(c.common_strides), 'stride',
                                 count(c.common_strides))
           AS common_strides,
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
       min(c.least_posix_rank) AS least_posix_rank, min(c.least_posix_bytes) AS least_posix_bytes,
       -- NULL: no counted row has POSIX counters; false: one is from before issue 33.
       bool_and(coalesce(c.size_bins_upper_inclusive, false))
           FILTER (WHERE c.posix_reads IS NOT NULL) AS size_bins_upper_inclusive,
       sum(c.posix_rw_switches) AS posix_rw_switches,
       sum(c.posix_fdatasyncs) AS posix_fdatasyncs,
       sum(c.posix_filenos) AS posix_filenos, sum(c.posix_dups) AS posix_dups,
       (array_agg(c.posix_mode ORDER BY c.process_id, c.position)
           FILTER (WHERE c.posix_mode IS NOT NULL))[1] AS posix_mode,
       min(c.posix_file_alignment_bytes) AS posix_file_alignment_bytes,
       sum(c.posix_file_not_aligned) AS posix_file_not_aligned,
       min(c.posix_mem_alignment_bytes) AS posix_mem_alignment_bytes,
       sum(c.posix_mem_not_aligned) AS posix_mem_not_aligned,
       max(c.posix_max_read_time_s) AS posix_max_read_time_s,
       (array_agg(c.posix_max_read_time_size ORDER BY c.posix_max_read_time_s DESC)
           FILTER (WHERE c.posix_max_read_time_s IS NOT NULL))[1] AS posix_max_read_time_size,
       max(c.posix_max_write_time_s) AS posix_max_write_time_s,
       (array_agg(c.posix_max_write_time_size ORDER BY c.posix_max_write_time_s DESC)
           FILTER (WHERE c.posix_max_write_time_s IS NOT NULL))[1] AS posix_max_write_time_size,
       sum(c.mpiio_indep_opens) AS mpiio_indep_opens,
       sum(c.mpiio_coll_opens) AS mpiio_coll_opens,
       sum(c.mpiio_syncs) AS mpiio_syncs, sum(c.mpiio_hints) AS mpiio_hints,
       sum(c.mpiio_views) AS mpiio_views, sum(c.mpiio_rw_switches) AS mpiio_rw_switches,
       (array_agg(c.mpiio_mode ORDER BY c.process_id, c.position)
           FILTER (WHERE c.mpiio_mode IS NOT NULL))[1] AS mpiio_mode,
       vigil_int8_array_sum(c.mpiio_read_size_hist) AS mpiio_read_size_hist,
       vigil_int8_array_sum(c.mpiio_write_size_hist) AS mpiio_write_size_hist,
       vigil_common_values_merge(array_agg(c.mpiio_common_sizes), 'size',
                                 count(c.mpiio_common_sizes)) AS mpiio_common_sizes,
       max(c.mpiio_max_read_time_s) AS mpiio_max_read_time_s,
       (array_agg(c.mpiio_max_read_time_size ORDER BY c.mpiio_max_read_time_s DESC)
           FILTER (WHERE c.mpiio_max_read_time_s IS NOT NULL))[1] AS mpiio_max_read_time_size,
       max(c.mpiio_max_write_time_s) AS mpiio_max_write_time_s,
       (array_agg(c.mpiio_max_write_time_size ORDER BY c.mpiio_max_write_time_s DESC)
           FILTER (WHERE c.mpiio_max_write_time_s IS NOT NULL))[1] AS mpiio_max_write_time_size
  FROM counted c
 GROUP BY c.run_id, c.path;
