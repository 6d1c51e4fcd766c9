-- What bench/web/run's EXPLAIN (ANALYZE, BUFFERS) of vigil-web's series
-- query suggests for the schema, to try against the same warehouse:
--
--   bench/web/run --with-sql bench/web/proposed.sql
--
-- A run's power series reads one metric of 32 nodes over an hour: 115,200
-- of the 1,382,400 roll-ups. vigil-txd stores a tick's metrics together, so
-- every heap page holds all 12 metrics of a few seconds of one node and the
-- index scan on (node_id, metric_id, start_time) still reads nearly every
-- page of those nodes (19,500 buffers, 150 MB, for 115,200 rows; more than
-- the default shared_buffers of 128 MB, so each request reads them again).
-- A covering index gives the query everything from the index's own leaf
-- pages, in order (about 1,300 buffers once autovacuum has set the
-- visibility map): an index-only scan. It replaces migration 4's index of
-- the same key. Cost: a bigger index (the five columns in every entry), on
-- every roll-up vigil-txd writes.
CREATE INDEX statistics_rollups_series
    ON statistics_rollups (node_id, metric_id, start_time)
    INCLUDE (end_time, min, mean, max, delta);
DROP INDEX statistics_rollups_node_metric_time;
VACUUM (ANALYZE) statistics_rollups;
