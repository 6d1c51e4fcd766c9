-- vigil warehouse, migration 6: code regions (vigil_region_begin/end and
-- likwid's markers) per run, from the reports' "regions" arrays
-- (run_summaries.report). Only a view: no row is moved or rewritten.
--
-- A process's report lists its regions, each inclusive of the regions
-- nested in it. An MPI job's report (rank 0's, with "ranks") lists the
-- job's regions, already summed over its ranks, with each figure's per-rank
-- min, mean, max and sum; the ranks' own reports ("in_job_report": true)
-- are counted there and not again. A run's other processes (a launcher, a
-- program's children) add their own.
--
-- run_regions: one row per run and region name.
--   processes          the processes that entered it (a job: its ranks that did)
--   entered … cpu_seconds, energy_joule: sums over them
--   energy_joule       NULL when no process had a figure for it
--   energy_missing     entries without an energy figure (no vigild, or
--                      begun and ended before its first figure)
--   energy_estimated   some of it rests on the node's estimated energy
--   min_/mean_/max_…   per process: wall and CPU seconds, bytes read and
--                      written, calls, energy. The mean is the sum over the
--                      processes that entered the region; for energy, over
--                      those with a figure (a job's ranks count as having
--                      one when the job's region has any: its report does
--                      not say how many of its ranks had).

CREATE VIEW run_regions AS
WITH reports AS (
    SELECT p.run_id, s.report
      FROM run_summaries s
      JOIN processes p USING (process_id)
     WHERE jsonb_typeof(s.report -> 'regions') = 'array'
       AND coalesce((s.report ->> 'in_job_report')::boolean, false) = false
),
parts AS (
    -- A process's own region: one process, its figure is min, max and sum.
    SELECT r.run_id, g ->> 'name' AS region,
           coalesce((g ->> 'ranks')::integer, 1) AS processes,
           (g ->> 'entered')::bigint AS entered,
           (g ->> 'calls')::bigint AS calls,
           (g ->> 'bytes_read')::bigint AS bytes_read,
           (g ->> 'bytes_written')::bigint AS bytes_written,
           (g ->> 'wall_seconds')::float8 AS wall_seconds,
           (g ->> 'cpu_seconds')::float8 AS cpu_seconds,
           (g ->> 'energy_joule')::float8 AS energy_joule,
           (g ->> 'energy_missing')::bigint AS energy_missing,
           (g ->> 'energy_estimated')::boolean AS energy_estimated,
           -- Per process: a job's per_rank figures, else the process's own.
           coalesce((g #>> '{per_rank,wall_seconds,min}')::float8, (g ->> 'wall_seconds')::float8) AS wall_min,
           coalesce((g #>> '{per_rank,wall_seconds,max}')::float8, (g ->> 'wall_seconds')::float8) AS wall_max,
           coalesce((g #>> '{per_rank,cpu_seconds,min}')::float8, (g ->> 'cpu_seconds')::float8) AS cpu_min,
           coalesce((g #>> '{per_rank,cpu_seconds,max}')::float8, (g ->> 'cpu_seconds')::float8) AS cpu_max,
           coalesce((g #>> '{per_rank,bytes_read,min}')::float8, (g ->> 'bytes_read')::float8) AS read_min,
           coalesce((g #>> '{per_rank,bytes_read,max}')::float8, (g ->> 'bytes_read')::float8) AS read_max,
           coalesce((g #>> '{per_rank,bytes_written,min}')::float8, (g ->> 'bytes_written')::float8) AS written_min,
           coalesce((g #>> '{per_rank,bytes_written,max}')::float8, (g ->> 'bytes_written')::float8) AS written_max,
           coalesce((g #>> '{per_rank,calls,min}')::float8, (g ->> 'calls')::float8) AS calls_min,
           coalesce((g #>> '{per_rank,calls,max}')::float8, (g ->> 'calls')::float8) AS calls_max,
           CASE WHEN g ? 'per_rank' THEN (g #>> '{per_rank,energy_joule,min}')::float8
                ELSE (g ->> 'energy_joule')::float8 END AS energy_min,
           CASE WHEN g ? 'per_rank' THEN (g #>> '{per_rank,energy_joule,max}')::float8
                ELSE (g ->> 'energy_joule')::float8 END AS energy_max,
           CASE WHEN (g ->> 'energy_joule') IS NULL THEN 0
                ELSE coalesce((g ->> 'ranks')::integer, 1) END AS processes_with_energy
      FROM reports r, jsonb_array_elements(r.report -> 'regions') g
)
SELECT run_id, region,
       sum(processes)::integer AS processes,
       sum(entered)::bigint AS entered,
       sum(calls)::bigint AS calls,
       sum(bytes_read)::bigint AS bytes_read,
       sum(bytes_written)::bigint AS bytes_written,
       sum(wall_seconds) AS wall_seconds,
       sum(cpu_seconds) AS cpu_seconds,
       sum(energy_joule) AS energy_joule,
       sum(energy_missing)::bigint AS energy_missing,
       coalesce(bool_or(energy_estimated), false) AS energy_estimated,
       min(wall_min) AS min_wall_seconds,
       sum(wall_seconds) / sum(processes) AS mean_wall_seconds,
       max(wall_max) AS max_wall_seconds,
       min(cpu_min) AS min_cpu_seconds,
       sum(cpu_seconds) / sum(processes) AS mean_cpu_seconds,
       max(cpu_max) AS max_cpu_seconds,
       min(read_min) AS min_bytes_read,
       sum(bytes_read)::float8 / sum(processes) AS mean_bytes_read,
       max(read_max) AS max_bytes_read,
       min(written_min) AS min_bytes_written,
       sum(bytes_written)::float8 / sum(processes) AS mean_bytes_written,
       max(written_max) AS max_bytes_written,
       min(calls_min) AS min_calls,
       sum(calls)::float8 / sum(processes) AS mean_calls,
       max(calls_max) AS max_calls,
       min(energy_min) AS min_energy_joule,
       sum(energy_joule) / nullif(sum(processes_with_energy), 0) AS mean_energy_joule,
       max(energy_max) AS max_energy_joule
  FROM parts
 GROUP BY run_id, region;
