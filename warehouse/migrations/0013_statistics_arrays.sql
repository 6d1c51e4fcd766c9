-- vigil warehouse, migration 13 (issue 32): statistics as one row per node
-- and roll-up window (or tick) holding every metric's values as arrays,
-- instead of one row per metric. A 48-core node's 434 metrics were 434
-- rows a second (and 4,340 a captured second), each paying a tuple header,
-- its node, times and two index entries; now it is one row a second.
--
-- The arrays are in the order of the row's metric set: the ordered list of
-- metric ids, described once in metric_sets (as metrics are) and referred
-- to by id. Element i of every array is metric_ids[i]'s.
--
-- statistics_rollups and window_statistics become views of the same names
-- and the same row shape (unnest … WITH ORDINALITY), so every reader answers
-- as before; the series queries read the arrays directly where that is
-- faster (web/api_series.c, cli/advise_warehouse.c, cli/export_sql.c).
-- Every old row moves into the new tables, grouped by node and window (or
-- tick): nothing is lost, and the views show the same rows. node_id stays
-- the first column and the tables are partitioned by day, so that the
-- Citus layout (distributed by node_id) applies to them.

-- ---- metric sets -----------------------------------------------------------------

-- The key is the list's SHA-256: a B-tree entry holds at most about 2,700
-- bytes, and a large node's list (1,000 metrics) is 4,000.
CREATE FUNCTION vigil_metric_ids_sha256(ids integer[]) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT sha256(convert_to(array_to_string(ids, ','), 'UTF8'))
$$;

CREATE TABLE metric_sets (
    metric_set_id    serial PRIMARY KEY,
    metric_ids       integer[] NOT NULL CHECK (cardinality(metric_ids) > 0
                                               AND array_position(metric_ids, NULL) IS NULL),
    metric_ids_sha256 bytea GENERATED ALWAYS AS (vigil_metric_ids_sha256(metric_ids))
                          STORED UNIQUE
);

-- The id of the set `ids`, made when new. Its INSERT waits for another
-- server inserting the same set and then does nothing; the SELECT, a
-- statement of its own, sees that server's committed row.
CREATE FUNCTION vigil_metric_set(ids integer[]) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    id integer;
BEGIN
    SELECT metric_set_id INTO id FROM metric_sets
     WHERE metric_ids_sha256 = vigil_metric_ids_sha256(ids);
    IF FOUND THEN
        RETURN id;
    END IF;
    INSERT INTO metric_sets (metric_ids) VALUES (ids) ON CONFLICT DO NOTHING
        RETURNING metric_set_id INTO id;
    IF id IS NULL THEN
        SELECT metric_set_id INTO id FROM metric_sets
         WHERE metric_ids_sha256 = vigil_metric_ids_sha256(ids);
    END IF;
    RETURN id;
END $$;

-- ---- the tables ----------------------------------------------------------------------

-- A node's roll-ups of one window (1 s by default). delta holds NULL for a
-- gauge (and a counter without one: NaN on the wire), like the old column.
-- uncertain is a bit string, bit i-1 for element i (1: uncertain): 55
-- bytes for 434 metrics where a bool[] takes 434, and a node's flags are
-- nearly always all clear.
CREATE TABLE statistics_rollup_arrays (
    node_id       bigint NOT NULL,
    metric_set_id integer NOT NULL,
    start_time    timestamptz NOT NULL,
    end_time      timestamptz NOT NULL,
    samples       integer[] NOT NULL,
    min           double precision[] NOT NULL,
    mean          double precision[] NOT NULL,
    max           double precision[] NOT NULL,
    delta         double precision[] NOT NULL,
    uncertain     bit varying NOT NULL,
    CONSTRAINT statistics_rollup_arrays_lengths CHECK (
        cardinality(min) = cardinality(samples) AND cardinality(mean) = cardinality(samples)
        AND cardinality(max) = cardinality(samples)
        AND cardinality(delta) = cardinality(samples)
        AND length(uncertain) = cardinality(samples)),
    -- Only delta may hold NULLs, as only the old delta column could.
    CONSTRAINT statistics_rollup_arrays_values CHECK (
        array_position(samples, NULL) IS NULL AND array_position(min, NULL) IS NULL
        AND array_position(mean, NULL) IS NULL AND array_position(max, NULL) IS NULL)
) PARTITION BY RANGE (start_time);
CREATE INDEX statistics_rollup_arrays_node_time
    ON statistics_rollup_arrays (node_id, start_time);

-- A node's samples of one tick inside a captured window.
CREATE TABLE window_statistics_arrays (
    node_id       bigint NOT NULL,
    metric_set_id integer NOT NULL,
    time          timestamptz NOT NULL,
    t_ns          bigint NOT NULL,
    value         double precision[] NOT NULL,
    uncertain     bit varying NOT NULL,
    CONSTRAINT window_statistics_arrays_lengths CHECK (length(uncertain) = cardinality(value)),
    CONSTRAINT window_statistics_arrays_values CHECK (array_position(value, NULL) IS NULL)
) PARTITION BY RANGE (time);
CREATE INDEX window_statistics_arrays_node_time ON window_statistics_arrays (node_id, time);

-- Scripts (and fixtures) that make a day of the old tables get the new
-- table's: the old names are views now.
CREATE OR REPLACE FUNCTION vigil_day_partition(parent text, day date) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    table_name text := CASE parent WHEN 'statistics_rollups' THEN 'statistics_rollup_arrays'
                                   WHEN 'window_statistics' THEN 'window_statistics_arrays'
                                   ELSE parent END;
    name text := format('%s_%s', table_name, to_char(day, 'YYYYMMDD'));
    day_start timestamptz := day::timestamp AT TIME ZONE 'UTC';
BEGIN
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

-- ---- the old rows, moved ------------------------------------------------------------------

DROP VIEW run_statistics;
ALTER TABLE statistics_rollups RENAME TO statistics_rollups_old;
ALTER TABLE window_statistics RENAME TO window_statistics_old;

SELECT vigil_day_partition('statistics_rollup_arrays', d)
  FROM (SELECT DISTINCT (start_time AT TIME ZONE 'UTC')::date AS d FROM statistics_rollups_old) x;
SELECT vigil_day_partition('window_statistics_arrays', d)
  FROM (SELECT DISTINCT (time AT TIME ZONE 'UTC')::date AS d FROM window_statistics_old) x;

-- Grouped by node and window, each group's metrics in id order (a metric
-- that appears twice in a window, which vigil-txd never wrote, stays twice).
INSERT INTO statistics_rollup_arrays
SELECT node_id, vigil_metric_set(ids), start_time, end_time, samples, min, mean, max, delta,
       uncertain
  FROM (SELECT node_id, start_time, end_time,
               array_agg(metric_id ORDER BY metric_id, ctid) AS ids,
               array_agg(samples ORDER BY metric_id, ctid) AS samples,
               array_agg(min ORDER BY metric_id, ctid) AS min,
               array_agg(mean ORDER BY metric_id, ctid) AS mean,
               array_agg(max ORDER BY metric_id, ctid) AS max,
               array_agg(delta ORDER BY metric_id, ctid) AS delta,
               string_agg(CASE WHEN uncertain THEN '1' ELSE '0' END, ''
                          ORDER BY metric_id, ctid)::varbit AS uncertain
          FROM statistics_rollups_old
         GROUP BY node_id, start_time, end_time) g;

INSERT INTO window_statistics_arrays
SELECT node_id, vigil_metric_set(ids), time, t_ns, value, uncertain
  FROM (SELECT node_id, time, t_ns,
               array_agg(metric_id ORDER BY metric_id, ctid) AS ids,
               array_agg(value ORDER BY metric_id, ctid) AS value,
               string_agg(CASE WHEN uncertain THEN '1' ELSE '0' END, ''
                          ORDER BY metric_id, ctid)::varbit AS uncertain
          FROM window_statistics_old
         GROUP BY node_id, time, t_ns) g;

DROP TABLE statistics_rollups_old;
DROP TABLE window_statistics_old;

-- ---- the old names, as views ---------------------------------------------------------------

CREATE VIEW statistics_rollups AS
SELECT r.node_id, u.metric_id, r.start_time, r.end_time, u.samples, u.min, u.mean, u.max,
       u.delta, get_bit(r.uncertain, (u.i - 1)::integer) = 1 AS uncertain
  FROM statistics_rollup_arrays r
  JOIN metric_sets s USING (metric_set_id)
 CROSS JOIN LATERAL unnest(s.metric_ids, r.samples, r.min, r.mean, r.max, r.delta)
       WITH ORDINALITY AS u (metric_id, samples, min, mean, max, delta, i);

CREATE VIEW window_statistics AS
SELECT w.node_id, u.metric_id, w.time, w.t_ns, u.value,
       get_bit(w.uncertain, (u.i - 1)::integer) = 1 AS uncertain
  FROM window_statistics_arrays w
  JOIN metric_sets s USING (metric_set_id)
 CROSS JOIN LATERAL unnest(s.metric_ids, w.value) WITH ORDINALITY AS u (metric_id, value, i);

-- For test fixtures and hand-made rows only (vigil-txd writes the arrays
-- by binary COPY): a row inserted into a view becomes a row of its own
-- with a one-metric set. The views show it as it was inserted; the table
-- just holds it less compactly than a node's whole window would be.
CREATE FUNCTION vigil_insert_statistics_rollup() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO statistics_rollup_arrays
    VALUES (NEW.node_id, vigil_metric_set(ARRAY[NEW.metric_id]), NEW.start_time, NEW.end_time,
            ARRAY[NEW.samples], ARRAY[NEW.min], ARRAY[NEW.mean], ARRAY[NEW.max],
            ARRAY[NEW.delta], CASE WHEN NEW.uncertain THEN B'1' ELSE B'0' END);
    RETURN NEW;
END $$;
CREATE TRIGGER statistics_rollups_insert INSTEAD OF INSERT ON statistics_rollups
    FOR EACH ROW EXECUTE FUNCTION vigil_insert_statistics_rollup();

CREATE FUNCTION vigil_insert_window_statistic() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO window_statistics_arrays
    VALUES (NEW.node_id, vigil_metric_set(ARRAY[NEW.metric_id]), NEW.time, NEW.t_ns,
            ARRAY[NEW.value], CASE WHEN NEW.uncertain THEN B'1' ELSE B'0' END);
    RETURN NEW;
END $$;
CREATE TRIGGER window_statistics_insert INSTEAD OF INSERT ON window_statistics
    FOR EACH ROW EXECUTE FUNCTION vigil_insert_window_statistic();

-- As migration 2 made it, on the view.
CREATE VIEW run_statistics AS
SELECT p.run_id, st.node_id, m.name AS metric, m.unit, m.kind, m.origin,
       st.start_time, st.end_time, st.min, st.mean, st.max, st.delta, st.uncertain
  FROM (SELECT run_id, node_id, min(start_time) AS start_time,
               max(coalesce(end_time, 'infinity')) AS end_time
          FROM processes GROUP BY run_id, node_id) p
  JOIN statistics_rollups st ON st.node_id = p.node_id
   AND st.end_time >= p.start_time AND st.start_time <= p.end_time
  JOIN metrics m USING (metric_id);
