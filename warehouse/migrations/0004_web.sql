-- vigil warehouse, migration 4: what vigil-web's queries need to stay fast
-- on a big warehouse (see docs/web-api.md), and two views it reads.
--
-- Only indexes and views: no row is moved or rewritten. Building the
-- indexes reads the tables once (inside the migration's transaction, so
-- writers wait for it on a big warehouse: run `vigil db migrate` when
-- vigil-txd can pause).

-- ---- indexes ---------------------------------------------------------------------

-- The runs list, newest first, paged by key (start_time, run_id): every
-- page is one index range scan wherever it is. It covers migration 1's
-- runs_start_time (start_time DESC), which is dropped.
CREATE INDEX runs_start_time_run ON runs (start_time DESC, run_id DESC);
DROP INDEX runs_start_time;
-- The same for one user's runs (auth = remote-user, or ?user=).
CREATE INDEX runs_uid_start_time_run ON runs (uid, start_time DESC, run_id DESC);

-- The runs of a node in an interval (?node=, a node's page, a run's
-- neighbours): processes on the node that started before the interval's end.
CREATE INDEX processes_node_start_time ON processes (node_id, start_time);

-- A node's captured windows in an interval.
CREATE INDEX captures_node_start_time ON captures (node_id, start_time);

-- Anomalies by time (the anomalies list, the thresholds page's counts) and
-- by plugin and time (?plugin=, how often each plugin fired).
CREATE INDEX anomalies_time ON anomalies (time);
CREATE INDEX anomalies_plugin_time ON anomalies (plugin, time);

-- A run's time series: one metric of one node over an interval. Made on
-- the partitioned parent, so every partition (and every one made later)
-- gets it. The node-and-time index of migration 2 stays: it serves every
-- metric of a node at once. It carries the columns the series read, so
-- they are read from the index alone (once autovacuum has marked a
-- partition's pages all-visible): vigil-txd stores a tick's metrics side
-- by side, so one metric's roll-ups are spread over every heap page of
-- the node, and an hour of 32 nodes read 150 MB of heap for one series
-- without them (bench/web: 1,206 ms against 427 ms for that query).
CREATE INDEX statistics_rollups_node_metric_time
    ON statistics_rollups (node_id, metric_id, start_time)
    INCLUDE (end_time, min, mean, max, delta);

-- ---- views -------------------------------------------------------------------------

-- Every process of every run with its node's name and its report's figures
-- (NULL until it sent its report: report_sent false). Read by vigil-web
-- for a run's ranks table and rank statistics.
CREATE VIEW run_processes AS
SELECT p.run_id, p.process_id, p.rank, p.pid, p.uid, p.node_id, n.hostname, p.program,
       p.start_time, p.end_time, p.exit_status,
       s.calls, s.bytes_read, s.bytes_written, s.energy_j, s.energy_source,
       s.process_id IS NOT NULL AS report_sent
  FROM processes p
  JOIN nodes n USING (node_id)
  LEFT JOIN run_summaries s USING (process_id);

-- Every node a run was on, and when it was there: from its first process's
-- start to its last process's end there, NULL while one still runs. Read by
-- vigil-web for a run's nodes, its neighbours and its series' intervals.
CREATE VIEW run_nodes AS
SELECT p.run_id, p.node_id, n.hostname,
       min(p.start_time) AS start_time,
       CASE WHEN bool_or(p.end_time IS NULL) THEN NULL ELSE max(p.end_time) END AS end_time
  FROM processes p
  JOIN nodes n USING (node_id)
 GROUP BY p.run_id, p.node_id, n.hostname;
