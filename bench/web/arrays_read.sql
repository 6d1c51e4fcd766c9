-- Reading statistics from their arrays (migration 13) against reading them
-- through the view statistics_rollups, and against the layout before it
-- (a row per metric with migration 4's covering index), on the same data:
-- 8 nodes x 1 h of 1 s windows of 434 metrics (28,800 rows, random
-- integers 0-1,000 as float8: realistic TOASTed arrays). In a database
-- fresh from `vigil db migrate` (it adds rows; run it once):
--
--   psql -X -d CONNINFO -f bench/web/arrays_read.sql | grep -E 'Time|differing|rows'
--
-- Each query is timed three times (\timing) after a warm-up run; the
-- queries are web/api_series.c's gauge series (one metric per label) and
-- cli/advise_warehouse.c's energy windows with their parameters written
-- in, and each pair must give the same rows (differing: 0). Figures in
-- docs/scaling.md.

\set ON_ERROR_STOP 1
INSERT INTO metrics (name, unit, kind, source, origin)
SELECT 'm.' || i, 'x', CASE WHEN i % 2 = 0 THEN 'counter' ELSE 'gauge' END, 's', 'measured'
  FROM generate_series(1, 432) i;
INSERT INTO metrics (name, unit, kind, source, origin) VALUES
  ('node.energy_j', 'J', 'counter', 'vigild/energy-share', 'measured'),
  ('mem.used_bytes', 'bytes', 'gauge', 'meminfo', 'measured');
INSERT INTO nodes (node_id, hostname) SELECT i, 'n' || i FROM generate_series(1, 8) i;
SELECT vigil_day_partition('statistics_rollup_arrays', DATE '2026-11-20');
WITH s AS (SELECT vigil_metric_set(array_agg(metric_id ORDER BY metric_id)) AS id, count(*)::int AS n
             FROM metrics)
INSERT INTO statistics_rollup_arrays
SELECT node, s.id, t, t + interval '1 s', array_fill(10, ARRAY[s.n]), v, v, v, v,
       repeat('0', s.n)::varbit
  FROM s, generate_series(1, 8) node,
       generate_series(timestamptz '2026-11-20 10:00Z', timestamptz '2026-11-20 10:59:59Z',
                       interval '1 s') t,
       LATERAL (SELECT array_agg(round(random() * 1000 + node + 0 * g)::float8) AS v
                  FROM generate_series(1, s.n) g WHERE t IS NOT NULL) x;
VACUUM ANALYZE;
\timing on
-- A gauge, one metric, 8 nodes over an hour into 300 buckets: through the view
PREPARE view_gauge AS
WITH parts AS (SELECT * FROM unnest('{used}'::text[], '{mem.used\_bytes}'::text[]) AS p(label, pattern)),
 m AS (SELECT m.metric_id, m.name, parts.label FROM metrics m JOIN parts ON m.name LIKE parts.pattern)
SELECT st.node_id, m.label, least(299, floor((date_part('epoch', st.start_time) - 1795168800) * 300 / 3600))::int AS bucket,
       min(st.min), avg(st.mean), max(st.max)
  FROM statistics_rollups st JOIN m USING (metric_id)
 WHERE st.node_id = ANY ('{1,2,3,4,5,6,7,8}') AND st.start_time >= '2026-11-20 10:00Z' AND st.start_time < '2026-11-20 11:00Z'
 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
PREPARE array_gauge AS
WITH parts AS (SELECT * FROM unnest('{used}'::text[], '{mem.used\_bytes}'::text[]) AS p(label, pattern)),
 wanted AS (SELECT m.metric_id, m.name, parts.label FROM metrics m JOIN parts ON m.name LIKE parts.pattern),
 m AS MATERIALIZED (SELECT s.metric_set_id, w.metric_id, w.name, w.label, i FROM metric_sets s
        JOIN wanted w ON w.metric_id = ANY (s.metric_ids), unnest(array_positions(s.metric_ids, w.metric_id)) AS i)
SELECT st.node_id, m.label, least(299, floor((date_part('epoch', st.start_time) - 1795168800) * 300 / 3600))::int AS bucket,
       min(st.min), avg(st.mean), max(st.max)
  FROM statistics_rollup_arrays a JOIN m USING (metric_set_id),
       LATERAL (SELECT a.node_id, a.start_time, a.end_time, a.min[m.i] AS min, a.mean[m.i] AS mean,
                       a.max[m.i] AS max, a.delta[m.i] AS delta) st
 WHERE a.node_id = ANY ('{1,2,3,4,5,6,7,8}') AND a.start_time >= '2026-11-20 10:00Z' AND a.start_time < '2026-11-20 11:00Z'
 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
-- the same answers
-- advise's energy windows of a run on nodes 1..8, 10:10 to 10:40
PREPARE view_advise AS
WITH r AS (SELECT timestamptz '2026-11-20 10:10Z' AS start_time, timestamptz '2026-11-20 10:40Z' AS end_time),
 n AS (SELECT generate_series(1, 8)::bigint AS node_id),
 w AS (SELECT s.node_id, s.start_time, s.end_time, s.mean, s.min, s.max, s.delta, s.uncertain, m.name, m.kind, m.origin,
              extract(epoch FROM s.end_time - s.start_time)::float8 AS length_s
         FROM r, statistics_rollups s JOIN metrics m USING (metric_id)
        WHERE s.node_id IN (SELECT node_id FROM n)
          AND s.start_time < r.end_time AND s.end_time > r.start_time AND m.name ~ '^node\.energy_j$'
          AND s.start_time > r.start_time - interval '1 hour' AND s.end_time > s.start_time)
SELECT node_id, name, count(*), sum(delta) FROM w GROUP BY 1, 2 ORDER BY 1, 2;
PREPARE array_advise AS
WITH r AS (SELECT timestamptz '2026-11-20 10:10Z' AS start_time, timestamptz '2026-11-20 10:40Z' AS end_time),
 n AS (SELECT generate_series(1, 8)::bigint AS node_id),
 m AS MATERIALIZED (SELECT s.metric_set_id, m.name, m.kind, m.origin, i FROM metric_sets s
        JOIN metrics m ON m.metric_id = ANY (s.metric_ids) AND m.name ~ '^node\.energy_j$',
        unnest(array_positions(s.metric_ids, m.metric_id)) AS i),
 w AS (SELECT a.node_id, a.start_time, a.end_time, a.mean[m.i] AS mean, a.min[m.i] AS min,
              a.max[m.i] AS max, a.delta[m.i] AS delta,
              get_bit(a.uncertain, m.i::integer - 1) = 1 AS uncertain, m.name, m.kind, m.origin,
              extract(epoch FROM a.end_time - a.start_time)::float8 AS length_s
         FROM r, statistics_rollup_arrays a JOIN m USING (metric_set_id)
        WHERE a.node_id IN (SELECT node_id FROM n)
          AND a.start_time < r.end_time AND a.end_time > r.start_time
          AND a.start_time > r.start_time - interval '1 hour' AND a.end_time > a.start_time)
SELECT node_id, name, count(*), sum(delta) FROM w GROUP BY 1, 2 ORDER BY 1, 2;
-- warm both, then time each three times
EXECUTE view_gauge \g /dev/null
EXECUTE array_gauge \g /dev/null
EXPLAIN (ANALYZE, BUFFERS) EXECUTE view_gauge;
EXPLAIN (ANALYZE, BUFFERS) EXECUTE array_gauge;
EXECUTE view_gauge \g /dev/null
EXECUTE array_gauge \g /dev/null
EXECUTE view_gauge \g /dev/null
EXECUTE array_gauge \g /dev/null
EXECUTE view_advise \g /dev/null
EXECUTE array_advise \g /dev/null
EXPLAIN (ANALYZE, BUFFERS) EXECUTE view_advise;
EXPLAIN (ANALYZE, BUFFERS) EXECUTE array_advise;
EXECUTE view_advise \g /dev/null
EXECUTE array_advise \g /dev/null
-- same answers
CREATE TEMP TABLE a1 AS EXECUTE view_gauge; CREATE TEMP TABLE a2 AS EXECUTE array_gauge;
SELECT (SELECT count(*) FROM (TABLE a1 EXCEPT ALL TABLE a2) x) + (SELECT count(*) FROM (TABLE a2 EXCEPT ALL TABLE a1) y) AS gauge_rows_differing, (SELECT count(*) FROM a1) AS gauge_rows;
CREATE TEMP TABLE b1 AS EXECUTE view_advise; CREATE TEMP TABLE b2 AS EXECUTE array_advise;
SELECT (SELECT count(*) FROM (TABLE b1 EXCEPT ALL TABLE b2) x) + (SELECT count(*) FROM (TABLE b2 EXCEPT ALL TABLE b1) y) AS advise_rows_differing, (SELECT count(*) FROM b1) AS advise_rows;
-- The layout before migration 13: the same rows, a row per metric.
CREATE TABLE old_rollups AS SELECT * FROM statistics_rollups;
CREATE INDEX ON old_rollups (node_id, start_time);
CREATE INDEX ON old_rollups (node_id, metric_id, start_time) INCLUDE (end_time, min, mean, max, delta);
VACUUM ANALYZE old_rollups;
PREPARE old_gauge AS
WITH parts AS (SELECT * FROM unnest('{used}'::text[], '{mem.used\_bytes}'::text[]) AS p(label, pattern)),
 m AS (SELECT m.metric_id, m.name, parts.label FROM metrics m JOIN parts ON m.name LIKE parts.pattern)
SELECT st.node_id, m.label, least(299, floor((date_part('epoch', st.start_time) - 1795168800) * 300 / 3600))::int AS bucket,
       min(st.min), avg(st.mean), max(st.max)
  FROM old_rollups st JOIN m USING (metric_id)
 WHERE st.node_id = ANY ('{1,2,3,4,5,6,7,8}') AND st.start_time >= '2026-11-20 10:00Z' AND st.start_time < '2026-11-20 11:00Z'
 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
EXECUTE old_gauge \g /dev/null
EXECUTE old_gauge \g /dev/null
EXECUTE old_gauge \g /dev/null
CREATE TEMP TABLE c1 AS EXECUTE old_gauge;
SELECT (SELECT count(*) FROM (TABLE a1 EXCEPT ALL TABLE c1) x) + (SELECT count(*) FROM (TABLE c1 EXCEPT ALL TABLE a1) y) AS old_gauge_rows_differing;
