-- vigil warehouse, migration 1: the tables vigil-txd writes and the views
-- vigil-web and `vigil report` read.
--
-- Applied by `vigil db migrate` (or vigil-txd with [warehouse] migrate = true)
-- inside one transaction, together with its row in vigil_schema_migrations;
-- a migration that fails leaves nothing behind.
--
-- Times: every *_time column is timestamptz (µs). Activities also keep their
-- exact start in ns since the epoch (start_ns), because two calls of one
-- thread can start within the same µs.

-- ---- who and what ----------------------------------------------------------

CREATE TABLE nodes (
    node_id    bigint PRIMARY KEY,          -- vigild's [uplink] node_id
    hostname   text NOT NULL,
    first_seen timestamptz NOT NULL DEFAULT now(),
    last_seen  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE jobs (
    job_id           bigserial PRIMARY KEY,
    scheduler_job_id text NOT NULL UNIQUE      -- SLURM_JOB_ID and the like
);

-- A run is one launch of a program: every process that shares a run key
-- (all ranks of an MPI job, a program and its children).
CREATE TABLE runs (
    run_id      bigserial PRIMARY KEY,
    run_key     text NOT NULL UNIQUE,
    job_id      bigint REFERENCES jobs,
    program     text NOT NULL,
    argv        text[] NOT NULL,
    uid         bigint NOT NULL,             -- uid_t is unsigned 32-bit
    start_time  timestamptz NOT NULL,
    end_time    timestamptz,               -- NULL while a process of it runs
    exit_status integer                    -- its first pid's last program's; NULL: unknown
);
CREATE INDEX runs_start_time ON runs (start_time DESC);

CREATE TABLE processes (
    process_id  bigserial PRIMARY KEY,
    run_id      bigint NOT NULL REFERENCES runs,
    node_id     bigint NOT NULL REFERENCES nodes,
    pid         integer NOT NULL,
    uid         bigint NOT NULL,             -- uid_t is unsigned 32-bit
    rank        integer,                   -- NULL outside MPI
    program     text NOT NULL,
    argv        text[] NOT NULL,
    cwd         text NOT NULL,
    start_time  timestamptz NOT NULL,
    -- The node's CLOCK_MONOTONIC at its start: with node and pid, the key.
    -- Not the realtime start, which every batch reckons anew from the node's
    -- clock offset, and which moves by microseconds as NTP slews the clock.
    start_monotonic_ns bigint NOT NULL,
    end_time    timestamptz,
    exit_status integer,
    UNIQUE (node_id, pid, start_monotonic_ns)
);
CREATE INDEX processes_run ON processes (run_id);

-- Paths are bytes on Linux, not always UTF-8: path_bytes are the path, path
-- the text shown (invalid bytes replaced). The key is the bytes' SHA-256: a
-- B-tree entry holds at most about 2700 bytes, and a path may have 4095.
CREATE TABLE files (
    file_id     bigserial PRIMARY KEY,
    path_bytes  bytea NOT NULL,
    path_sha256 bytea GENERATED ALWAYS AS (sha256(path_bytes)) STORED UNIQUE,
    path        text NOT NULL
);

-- ---- activities ------------------------------------------------------------

-- Partitioned by day on start_time; vigil-txd creates a day's partition
-- (vigil_activity_partition) before it first writes into it.
CREATE TABLE activities (
    process_id      bigint NOT NULL,      -- processes.process_id
    seq             bigint NOT NULL,      -- the ring position: gaps are losses
    layer           smallint NOT NULL,    -- 1 posix, 2 stdio, 3 mpiio
    operation       smallint NOT NULL,    -- ontology ids (core/ontology.h)
    file_id         bigint,               -- files.file_id; NULL for none
    file_offset     bigint,
    bytes           bigint,               -- asked for
    result          bigint,
    errno           integer NOT NULL,
    start_time      timestamptz NOT NULL,
    start_ns        bigint NOT NULL,
    duration_ns     bigint NOT NULL,
    thread          integer NOT NULL,
    parent_start_ns bigint,               -- the enclosing call's start_ns, same thread
    flags           smallint NOT NULL,
    comm_size       integer
) PARTITION BY RANGE (start_time);
CREATE INDEX activities_process ON activities (process_id, start_ns);

CREATE FUNCTION vigil_activity_partition(day date) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    name text := format('activities_%s', to_char(day, 'YYYYMMDD'));
BEGIN
    EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF activities
                    FOR VALUES FROM (%L) TO (%L)',
                   name, day::timestamptz, (day + 1)::timestamptz);
    RETURN name;
END $$;

-- ---- statistics ------------------------------------------------------------

CREATE TABLE metrics (
    metric_id serial PRIMARY KEY,
    name      text NOT NULL,
    unit      text NOT NULL,
    kind      text NOT NULL CHECK (kind IN ('counter', 'gauge')),
    source    text NOT NULL,
    origin    text NOT NULL CHECK (origin IN ('measured', 'estimated')),
    UNIQUE (name, unit, kind, source, origin)
);

-- Every node's statistics, rolled up per window (1 s by default).
CREATE TABLE statistics_rollups (
    node_id    bigint NOT NULL,
    metric_id  integer NOT NULL,
    start_time timestamptz NOT NULL,
    end_time   timestamptz NOT NULL,
    samples    integer NOT NULL,
    min        double precision NOT NULL,
    mean       double precision NOT NULL,
    max        double precision NOT NULL,
    delta      double precision,          -- counters only
    uncertain  boolean NOT NULL
);
CREATE INDEX statistics_rollups_node_time ON statistics_rollups (node_id, start_time);

-- Full resolution (every tick), only inside captured windows.
CREATE TABLE window_statistics (
    node_id   bigint NOT NULL,
    metric_id integer NOT NULL,
    time      timestamptz NOT NULL,
    t_ns      bigint NOT NULL,
    value     double precision NOT NULL,
    uncertain boolean NOT NULL
);
CREATE INDEX window_statistics_node_time ON window_statistics (node_id, time);

-- ---- anomalies, states, captures ---------------------------------------------

CREATE TABLE anomalies (
    anomaly_id   bigserial PRIMARY KEY,
    level        text NOT NULL CHECK (level IN ('process', 'node', 'system')),
    node_id      bigint NOT NULL,
    process_id   bigint,                  -- NULL when about the node
    cycle        bigint NOT NULL,
    time         timestamptz NOT NULL,    -- the end of the cycle
    state        text NOT NULL,           -- the health the plugin gave
    plugin       text NOT NULL,
    metric       text NOT NULL,
    value        double precision,
    expected_min double precision,
    expected_max double precision,
    message      text NOT NULL
);
CREATE INDEX anomalies_node_time ON anomalies (node_id, time);
CREATE INDEX anomalies_process ON anomalies (process_id) WHERE process_id IS NOT NULL;

-- Reasoner decisions: the node's every cycle, a process's when not OK, the
-- system's as vigil-txd decided it.
CREATE TABLE reasoner_states (
    level           text NOT NULL CHECK (level IN ('process', 'node', 'system')),
    node_id         bigint,                -- NULL for the system
    process_id      bigint,
    cycle           bigint NOT NULL,
    time            timestamptz NOT NULL,
    state           text NOT NULL,
    overloaded_mask integer NOT NULL,
    bad_issues      integer NOT NULL,
    good_issues     integer NOT NULL,
    other_issues    integer NOT NULL
);
CREATE INDEX reasoner_states_node_time ON reasoner_states (node_id, time);

CREATE TABLE captures (
    capture_id           bigserial PRIMARY KEY,
    node_id              bigint NOT NULL,
    process_id           bigint,          -- NULL for a window of the node
    first_cycle          bigint NOT NULL,
    last_cycle           bigint NOT NULL,
    start_time           timestamptz NOT NULL,
    end_time             timestamptz NOT NULL,
    activities_forwarded bigint NOT NULL,
    reasons              text NOT NULL
);
CREATE INDEX captures_process ON captures (process_id);

-- The end-of-run report of each process, as its JSON, with the figures the
-- web UI sorts and sums by as columns.
CREATE TABLE run_summaries (
    process_id     bigint PRIMARY KEY REFERENCES processes,
    report         jsonb NOT NULL,
    calls          bigint,
    bytes_read     bigint,
    bytes_written  bigint,
    energy_j       double precision,
    energy_source  text
);

-- ---- exactly-once ingest -------------------------------------------------------

-- One row per batch ever stored, written in the same transaction as the
-- batch: a batch already here is acknowledged without being written again.
CREATE TABLE ingested_batches (
    node_id     bigint NOT NULL,
    sequence    bigint NOT NULL,
    ingested_at timestamptz NOT NULL DEFAULT now(),
    messages    integer NOT NULL,
    rows        bigint NOT NULL,
    PRIMARY KEY (node_id, sequence)
);

-- ---- views for the web UI and `vigil report` -----------------------------------

CREATE VIEW run_overview AS
SELECT r.run_id, r.run_key, j.scheduler_job_id, r.program, r.argv, r.uid,
       r.start_time, r.end_time, r.exit_status,
       count(DISTINCT p.process_id) AS processes,
       count(DISTINCT p.node_id) AS nodes,
       sum(s.calls) AS calls,
       sum(s.bytes_read) AS bytes_read,
       sum(s.bytes_written) AS bytes_written,
       sum(s.energy_j) AS energy_j,
       (SELECT count(*) FROM captures c JOIN processes cp USING (process_id)
         WHERE cp.run_id = r.run_id) AS captures
  FROM runs r
  LEFT JOIN jobs j USING (job_id)
  LEFT JOIN processes p USING (run_id)
  LEFT JOIN run_summaries s USING (process_id)
 GROUP BY r.run_id, j.scheduler_job_id;

-- The statistics of every node a run was on, while it ran.
CREATE VIEW run_statistics AS
SELECT p.run_id, st.node_id, m.name AS metric, m.unit, m.kind, m.origin,
       st.start_time, st.end_time, st.min, st.mean, st.max, st.delta, st.uncertain
  FROM (SELECT run_id, node_id, min(start_time) AS start_time,
               max(coalesce(end_time, 'infinity')) AS end_time
          FROM processes GROUP BY run_id, node_id) p
  JOIN statistics_rollups st ON st.node_id = p.node_id
   AND st.end_time >= p.start_time AND st.start_time <= p.end_time
  JOIN metrics m USING (metric_id);

CREATE VIEW run_activities AS
SELECT p.run_id, a.process_id, p.node_id, p.pid, p.rank, a.seq, a.layer, a.operation,
       f.path, a.file_offset, a.bytes, a.result, a.errno, a.start_time, a.start_ns,
       a.duration_ns, a.thread, a.parent_start_ns, a.flags
  FROM activities a
  JOIN processes p USING (process_id)
  LEFT JOIN files f USING (file_id);
