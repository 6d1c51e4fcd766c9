-- vigil warehouse, migration 7: scheduler jobs as the scheduler tells of
-- them, and a job's summary across its steps and nodes.
--
-- The Slurm prolog/epilog (`vigil job begin|end`) and the SPANK plugin tell
-- each node's vigild when a job, or a step of it, begins and ends there;
-- vigild forwards each notice (wire item JOBS) and vigil-txd keeps, per
-- job, the user, uid and node list, and from the whole-job notices the
-- first begin and the last end over its nodes; and per (job, step, node)
-- the notice's begin and end in job_steps.
--
-- A run's step needs no notice: a process under srun takes its run key
-- from SLURM_JOB_ID and SLURM_STEP_ID ("slurm-JOB.STEP", core/run_key.c)
-- and its job from SLURM_JOB_ID, so job_runs reads the step from the key.
-- (A batch script's own processes have "slurm-JOB": no step; a run key
-- given by VIGIL_RUN_ID hides the step, not the job.)

ALTER TABLE jobs
    ADD COLUMN user_name  text,          -- NULL: no notice said
    ADD COLUMN uid        bigint,        -- uid_t is unsigned 32-bit
    ADD COLUMN node_list  text,          -- as the scheduler writes it: "node[01-04]"
    ADD COLUMN begin_time timestamptz,   -- the first whole-job begin over its nodes
    ADD COLUMN end_time   timestamptz;   -- the last whole-job end over its nodes

-- One row per notice's (job, step, node); step_id '' is the whole job (the
-- prolog and epilog), so its rows say which nodes the job had.
CREATE TABLE job_steps (
    job_id     bigint NOT NULL REFERENCES jobs,
    step_id    text NOT NULL,
    node_id    bigint NOT NULL REFERENCES nodes,
    begin_time timestamptz,
    end_time   timestamptz,
    PRIMARY KEY (job_id, step_id, node_id)
);

CREATE INDEX runs_job ON runs (job_id) WHERE job_id IS NOT NULL;

-- Every run of a job, one line of `vigil report --job` each: its step,
-- nodes, ranks, bytes and energy (run_energy: the sum of its processes'
-- figures; complete is false while one of them has none).
CREATE VIEW job_runs AS
SELECT r.job_id, j.scheduler_job_id, r.run_id, r.run_key,
       CASE WHEN left(r.run_key, length(j.scheduler_job_id) + 7) = 'slurm-' || j.scheduler_job_id || '.'
            THEN substr(r.run_key, length(j.scheduler_job_id) + 8) END AS step_id,
       r.program, r.uid, r.start_time, r.end_time, r.exit_status,
       o.processes, o.nodes,
       (SELECT string_agg(DISTINCT n.hostname, ',' ORDER BY n.hostname)
          FROM processes p JOIN nodes n USING (node_id) WHERE p.run_id = r.run_id) AS hosts,
       (SELECT count(DISTINCT p.rank) FROM processes p WHERE p.run_id = r.run_id) AS ranks,
       coalesce(o.bytes_read, 0) AS bytes_read,
       coalesce(o.bytes_written, 0) AS bytes_written,
       e.energy_j, coalesce(e.complete, false) AS energy_complete,
       coalesce(e.estimated, false) AS energy_estimated
  FROM runs r
  JOIN jobs j USING (job_id)
  JOIN run_overview o USING (run_id)
  LEFT JOIN run_energy e USING (run_id);

-- A job across its steps and nodes, for `vigil report --job` and the web.
-- Without notices (no prolog, no SPANK) its begin and end are its runs'.
-- steps counts the steps its runs and its step notices name.
CREATE VIEW job_summary AS
SELECT j.job_id, j.scheduler_job_id, j.user_name, j.uid, j.node_list,
       coalesce(j.begin_time, jr.first_start) AS begin_time,
       CASE WHEN j.begin_time IS NOT NULL OR j.end_time IS NOT NULL THEN j.end_time
            ELSE jr.last_end END AS end_time,
       (SELECT string_agg(DISTINCT n.hostname, ',' ORDER BY n.hostname)
          FROM (SELECT p.node_id FROM processes p JOIN runs r USING (run_id)
                 WHERE r.job_id = j.job_id
                UNION SELECT s.node_id FROM job_steps s WHERE s.job_id = j.job_id) seen
          JOIN nodes n USING (node_id)) AS hosts,
       (SELECT count(*) FROM (SELECT step_id FROM job_runs WHERE job_id = j.job_id
                                 AND step_id IS NOT NULL
                              UNION SELECT step_id FROM job_steps WHERE job_id = j.job_id
                                 AND step_id <> '') st) AS steps,
       coalesce(jr.runs, 0) AS runs,
       coalesce(jr.processes, 0) AS processes,
       coalesce(jr.bytes_read, 0) AS bytes_read,
       coalesce(jr.bytes_written, 0) AS bytes_written,
       je.energy_j,
       coalesce(je.complete, false) AS energy_complete,
       coalesce(je.estimated, false) AS energy_estimated
  FROM jobs j
  LEFT JOIN (SELECT job_id, count(*) AS runs, sum(processes) AS processes,
                    sum(bytes_read) AS bytes_read, sum(bytes_written) AS bytes_written,
                    min(start_time) AS first_start,
                    CASE WHEN bool_and(end_time IS NOT NULL) THEN max(end_time) END AS last_end
               FROM job_runs GROUP BY job_id) jr USING (job_id)
  LEFT JOIN job_energy je USING (job_id);
