-- vigil warehouse, migration 2: every table that grows with time is
-- partitioned by day (UTC), so that retention drops whole partitions
-- (`vigil db prune`) instead of deleting rows, and partitions are made ahead
-- of time by a maintenance step (`vigil db maintain`, and vigil-txd at start
-- and periodically), never inside an ingest transaction: making one takes
-- an ACCESS EXCLUSIVE lock on its table.
--
-- Partitioned by day: activities (since migration 1, on start_time),
-- statistics_rollups (start_time), window_statistics (time),
-- reasoner_states (time: a node's state every cycle) and ingested_batches
-- (batch_time, new: the batch's own time, as the node reckoned the end of
-- its cycle).
--
-- The rows of migration 1's tables are kept as they are, without copying:
-- each old table becomes one partition, TABLE_0001, holding every time up
-- to two days after the later of its last row and now (so that batches in
-- flight during the upgrade land in it). Day partitions follow it. An
-- empty old table is dropped instead. Applied in one transaction.

-- ---- helpers -------------------------------------------------------------------

-- A partition's bounds, read back from the catalogue: MINVALUE and MAXVALUE
-- as -infinity and infinity.
CREATE FUNCTION vigil_partition_bounds(part regclass, OUT lower_bound timestamptz,
                                       OUT upper_bound timestamptz)
LANGUAGE sql STABLE AS $$
SELECT CASE WHEN m[1] = 'MINVALUE' THEN '-infinity'
            ELSE btrim(m[1], '''') END::timestamptz,
       CASE WHEN m[2] = 'MAXVALUE' THEN 'infinity'
            ELSE btrim(m[2], '''') END::timestamptz
  FROM pg_class c,
       regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \((.*)\) TO \((.*)\)') AS m
 WHERE c.oid = part
$$;

-- Makes the partition of `parent` for `day` (UTC), PARENT_YYYYMMDD, unless
-- a partition already holds that day; true when it made one. Days are UTC
-- whatever the session's time zone.
CREATE FUNCTION vigil_day_partition(parent text, day date) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    name text := format('%s_%s', parent, to_char(day, 'YYYYMMDD'));
    day_start timestamptz := day::timestamp AT TIME ZONE 'UTC';
BEGIN
    IF to_regclass(name) IS NOT NULL THEN
        RETURN false;
    END IF;
    -- Only reading the catalogue: no lock on the parent until one is made.
    PERFORM 1 FROM pg_inherits i, vigil_partition_bounds(i.inhrelid::regclass) b
      WHERE i.inhparent = parent::regclass
        AND b.lower_bound <= day_start AND b.upper_bound > day_start;
    IF FOUND THEN
        RETURN false;
    END IF;
    BEGIN
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                       name, parent, day_start, day_start + interval '1 day');
    EXCEPTION WHEN duplicate_table OR unique_violation THEN
        -- Another server made it meanwhile (we waited for its lock).
        RETURN false;
    END;
    RETURN true;
END $$;

-- Migration 1's name for it, kept for scripts that call it.
CREATE OR REPLACE FUNCTION vigil_activity_partition(day date) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM vigil_day_partition('activities', day);
    RETURN format('activities_%s', to_char(day, 'YYYYMMDD'));
END $$;

-- Turns the renamed old table PARENT_0001 into PARENT's first partition,
-- or drops it when it holds no rows.
CREATE FUNCTION vigil_adopt_old_rows(parent text, time_column text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    old text := parent || '_0001';
    last timestamptz;
    upper timestamptz;
BEGIN
    EXECUTE format('SELECT max(%I) FROM %I', time_column, old) INTO last;
    IF last IS NULL THEN
        EXECUTE format('DROP TABLE %I', old);
        RETURN;
    END IF;
    upper := ((greatest(last, now()) AT TIME ZONE 'UTC')::date + 2)::timestamp AT TIME ZONE 'UTC';
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)',
                   parent, old, upper);
END $$;

-- ---- statistics_rollups ----------------------------------------------------------

-- The view names the table itself, not its name: made again below.
DROP VIEW run_statistics;
ALTER TABLE statistics_rollups RENAME TO statistics_rollups_0001;
ALTER INDEX statistics_rollups_node_time RENAME TO statistics_rollups_0001_node_time;
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
) PARTITION BY RANGE (start_time);
CREATE INDEX statistics_rollups_node_time ON statistics_rollups (node_id, start_time);
SELECT vigil_adopt_old_rows('statistics_rollups', 'start_time');

-- ---- window_statistics -------------------------------------------------------------

ALTER TABLE window_statistics RENAME TO window_statistics_0001;
ALTER INDEX window_statistics_node_time RENAME TO window_statistics_0001_node_time;
CREATE TABLE window_statistics (
    node_id   bigint NOT NULL,
    metric_id integer NOT NULL,
    time      timestamptz NOT NULL,
    t_ns      bigint NOT NULL,
    value     double precision NOT NULL,
    uncertain boolean NOT NULL
) PARTITION BY RANGE (time);
CREATE INDEX window_statistics_node_time ON window_statistics (node_id, time);
SELECT vigil_adopt_old_rows('window_statistics', 'time');

-- ---- reasoner_states ----------------------------------------------------------------

ALTER TABLE reasoner_states RENAME TO reasoner_states_0001;
ALTER INDEX reasoner_states_node_time RENAME TO reasoner_states_0001_node_time;
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
) PARTITION BY RANGE (time);
CREATE INDEX reasoner_states_node_time ON reasoner_states (node_id, time);
SELECT vigil_adopt_old_rows('reasoner_states', 'time');

-- ---- ingested_batches ----------------------------------------------------------------

-- A resent batch is the same bytes, so the same batch_time: it lands in the
-- partition where it was recorded, and the key finds it there. The old rows
-- have no batch_time (-infinity); their partition keeps its old key on
-- (node_id, sequence) as well, and every batch up to its upper bound (two
-- days past the upgrade) is checked against it by ON CONFLICT DO NOTHING.
ALTER TABLE ingested_batches RENAME TO ingested_batches_0001;
ALTER TABLE ingested_batches_0001 RENAME CONSTRAINT ingested_batches_pkey
    TO ingested_batches_0001_node_sequence;
ALTER TABLE ingested_batches_0001
    ADD COLUMN batch_time timestamptz NOT NULL DEFAULT '-infinity';
ALTER TABLE ingested_batches_0001 ALTER COLUMN batch_time DROP DEFAULT;
CREATE TABLE ingested_batches (
    node_id     bigint NOT NULL,
    sequence    bigint NOT NULL,
    batch_time  timestamptz NOT NULL,     -- the end of the batch's cycle, by the node
    ingested_at timestamptz NOT NULL DEFAULT now(),
    messages    integer NOT NULL,
    rows        bigint NOT NULL,
    -- Not a primary key: the old rows' partition keeps its own.
    CONSTRAINT ingested_batches_key UNIQUE (node_id, sequence, batch_time)
) PARTITION BY RANGE (batch_time);
SELECT vigil_adopt_old_rows('ingested_batches', 'ingested_at');

DROP FUNCTION vigil_adopt_old_rows(text, text);

-- As migration 1 made it, on the new table.
CREATE VIEW run_statistics AS
SELECT p.run_id, st.node_id, m.name AS metric, m.unit, m.kind, m.origin,
       st.start_time, st.end_time, st.min, st.mean, st.max, st.delta, st.uncertain
  FROM (SELECT run_id, node_id, min(start_time) AS start_time,
               max(coalesce(end_time, 'infinity')) AS end_time
          FROM processes GROUP BY run_id, node_id) p
  JOIN statistics_rollups st ON st.node_id = p.node_id
   AND st.end_time >= p.start_time AND st.start_time <= p.end_time
  JOIN metrics m USING (metric_id);
