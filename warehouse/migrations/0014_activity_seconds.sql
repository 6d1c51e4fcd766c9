-- Issue 32: per-process, per-second counts of the stored activities, so
-- that a long run's page reads a few thousand rows where it counted a
-- million activities (vigil-web's heat map).
--
-- vigil-txd counts a group's activities in C while it writes them and
-- COPYs the counts in the same transaction (txd/store_activity_seconds.c):
-- PostgreSQL aggregates nothing at ingest. A second's activities of one
-- process may come in several batches (a batch ends with the node's cycle,
-- not on a second), so a (process, second, layer, operation) may have
-- several rows: readers sum them. Summed, they equal counting activities
-- by their start_ns: calls count(*), bytes coalesce(sum(bytes), 0),
-- duration_ns sum(duration_ns).
--
-- Partitioned by day like activities, on the second; a day of it is made
-- with activities' day (vigil_day_partition below) and dropped with it
-- (`vigil db prune`, at activities' retention).
CREATE TABLE activity_seconds (
    node_id     bigint NOT NULL,      -- the process's node (for a layout by node)
    process_id  bigint NOT NULL,      -- processes.process_id
    start_time  timestamptz NOT NULL, -- the second: the activities' start_ns floored
    layer       smallint NOT NULL,
    operation   smallint NOT NULL,
    calls       bigint NOT NULL CHECK (calls > 0),
    bytes       bigint NOT NULL,      -- asked for
    duration_ns bigint NOT NULL
) PARTITION BY RANGE (start_time);
-- The heat map's read: a run's processes over a time range, index only.
CREATE INDEX activity_seconds_process ON activity_seconds (process_id, start_time)
    INCLUDE (calls, bytes);

-- Migration 13's (which sends the old names of the statistics to their
-- array tables), but a day of activities brings the same day of
-- activity_seconds (made first, so that a day of activities made before
-- this migration gets its counterpart when next asked for).
CREATE OR REPLACE FUNCTION vigil_day_partition(parent text, day date) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    table_name text := CASE parent WHEN 'statistics_rollups' THEN 'statistics_rollup_arrays'
                                   WHEN 'window_statistics' THEN 'window_statistics_arrays'
                                   ELSE parent END;
    name text := format('%s_%s', table_name, to_char(day, 'YYYYMMDD'));
    day_start timestamptz := day::timestamp AT TIME ZONE 'UTC';
BEGIN
    IF table_name = 'activities' THEN
        PERFORM vigil_day_partition('activity_seconds', day);
    END IF;
    IF to_regclass(name) IS NOT NULL THEN
        RETURN false;
    END IF;
    -- Only reading the catalogue: no lock on the parent until one is made.
    PERFORM 1 FROM pg_inherits i, vigil_partition_bounds(i.inhrelid::regclass) b
      WHERE i.inhparent = table_name::regclass
        AND b.lower_bound <= day_start AND b.upper_bound > day_start;
    IF FOUND THEN
        RETURN false;
    END IF;
    BEGIN
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                       name, table_name, day_start, day_start + interval '1 day');
    EXCEPTION WHEN duplicate_table OR unique_violation THEN
        -- Another server made it meanwhile (we waited for its lock).
        RETURN false;
    END;
    RETURN true;
END $$;

-- The counts of the activities stored before, one row per (process,
-- second, layer, operation); the days they fall in and every day
-- activities has a partition of (made ahead) get a partition first.
CREATE TEMPORARY TABLE activity_seconds_before ON COMMIT DROP AS
SELECT p.node_id, a.process_id, to_timestamp(s.second) AS start_time, a.layer, a.operation,
       count(*) AS calls, coalesce(sum(a.bytes), 0)::bigint AS bytes,
       sum(a.duration_ns)::bigint AS duration_ns
  FROM activities a
  JOIN processes p USING (process_id),
       LATERAL (SELECT floor(a.start_ns / 1000000000.0)::bigint AS second) s
 GROUP BY p.node_id, a.process_id, s.second, a.layer, a.operation;

SELECT vigil_day_partition('activity_seconds', d)
  FROM (SELECT DISTINCT (start_time AT TIME ZONE 'UTC')::date AS d FROM activity_seconds_before
        UNION
        SELECT to_date(substring(c.relname FROM '^activities_([0-9]{8})$'), 'YYYYMMDD')
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'activities'::regclass
           AND c.relname ~ '^activities_[0-9]{8}$') days;

INSERT INTO activity_seconds SELECT * FROM activity_seconds_before;
