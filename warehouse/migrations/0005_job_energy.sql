-- vigil warehouse, migration 5: the energy of a job and of a run across
-- their nodes.
--
-- vigild gives each process its share of its node's energy; on a node that
-- only one job's processes use, the job's processes share the node's whole
-- energy (docs/architecture.md, energy_share.c). So a job's energy on a node
-- is the sum of its processes' figures there, and its energy is the sum over
-- its nodes. The figures come from each process's end-of-run report
-- (run_summaries.report): its own "energy_joule", or, in an MPI job's joint
-- report, its rank's entry of "energy_by_rank" (run_summaries.energy_j
-- holds the joint sum on rank 0's row and nothing on the others', so it
-- cannot be summed by node).
--
-- Views only: nothing to migrate in the tables.

-- Every process with a report and its own energy figure (NULL: vigild had
-- none, and the report says why).
CREATE VIEW process_energy AS
SELECT p.process_id, p.run_id, r.job_id, j.scheduler_job_id, p.node_id, n.hostname, p.rank,
       p.start_time, p.end_time,
       (e.figure->>'energy_joule')::double precision AS energy_j,
       nullif(e.figure->>'energy_source', 'none') AS energy_source,
       coalesce((e.figure->>'energy_estimated')::boolean, false) AS estimated,
       coalesce((e.figure->>'energy_uncertain')::boolean, false) AS uncertain
  FROM processes p
  JOIN runs r USING (run_id)
  LEFT JOIN jobs j USING (job_id)
  JOIN nodes n USING (node_id)
  JOIN run_summaries s USING (process_id)
 CROSS JOIN LATERAL (
       SELECT CASE WHEN jsonb_typeof(s.report->'energy_by_rank') = 'array' AND p.rank IS NOT NULL
                   THEN (SELECT x FROM jsonb_array_elements(s.report->'energy_by_rank') x
                          WHERE (x->>'rank')::integer = p.rank)
                   ELSE s.report END AS figure) e;

-- A run's energy on each of its nodes, over the interval it was there.
CREATE VIEW run_energy_nodes AS
SELECT run_id, node_id, hostname,
       min(start_time) AS start_time,
       CASE WHEN bool_or(end_time IS NULL) THEN NULL ELSE max(end_time) END AS end_time,
       count(*) AS processes,
       count(energy_j) AS processes_with_energy,
       sum(energy_j) AS energy_j,
       bool_or(estimated) AS estimated,
       bool_or(uncertain) AS uncertain,
       (SELECT string_agg(DISTINCT src, '+' ORDER BY src)
          FROM unnest(array_agg(pe.energy_source)) AS a(list),
               unnest(string_to_array(a.list, '+')) AS src) AS sources
  FROM process_energy pe
 GROUP BY run_id, node_id, hostname;

-- A job's (every run of one scheduler job id) energy on each of its nodes.
CREATE VIEW job_energy_nodes AS
SELECT job_id, scheduler_job_id, node_id, hostname,
       min(start_time) AS start_time,
       CASE WHEN bool_or(end_time IS NULL) THEN NULL ELSE max(end_time) END AS end_time,
       count(*) AS processes,
       count(energy_j) AS processes_with_energy,
       sum(energy_j) AS energy_j,
       bool_or(estimated) AS estimated,
       bool_or(uncertain) AS uncertain,
       (SELECT string_agg(DISTINCT src, '+' ORDER BY src)
          FROM unnest(array_agg(pe.energy_source)) AS a(list),
               unnest(string_to_array(a.list, '+')) AS src) AS sources
  FROM process_energy pe
 WHERE job_id IS NOT NULL
 GROUP BY job_id, scheduler_job_id, node_id, hostname;

-- A run's energy: the sum over its nodes, and the per-node min/mean/max.
-- complete is false while a process of it has no figure (still running,
-- no report yet, or vigild had none): the sum is then a lower bound.
CREATE VIEW run_energy AS
SELECT run_id,
       sum(energy_j) AS energy_j,
       count(*) AS nodes,
       min(energy_j) AS node_min_j,
       avg(energy_j) AS node_mean_j,
       max(energy_j) AS node_max_j,
       bool_or(estimated) AS estimated,
       bool_or(uncertain) AS uncertain,
       bool_and(processes_with_energy = processes) AS complete,
       (SELECT string_agg(DISTINCT src, '+' ORDER BY src)
          FROM unnest(array_agg(n.sources)) AS a(list),
               unnest(string_to_array(a.list, '+')) AS src) AS sources
  FROM run_energy_nodes n
 GROUP BY run_id;

CREATE VIEW job_energy AS
SELECT job_id, scheduler_job_id,
       sum(energy_j) AS energy_j,
       count(*) AS nodes,
       min(energy_j) AS node_min_j,
       avg(energy_j) AS node_mean_j,
       max(energy_j) AS node_max_j,
       bool_or(estimated) AS estimated,
       bool_or(uncertain) AS uncertain,
       bool_and(processes_with_energy = processes) AS complete,
       (SELECT string_agg(DISTINCT src, '+' ORDER BY src)
          FROM unnest(array_agg(n.sources)) AS a(list),
               unnest(string_to_array(a.list, '+')) AS src) AS sources
  FROM job_energy_nodes n
 GROUP BY job_id, scheduler_job_id;
