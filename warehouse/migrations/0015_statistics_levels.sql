-- vigil warehouse, migration 15 (issue 32): coarser roll-up levels, so that
-- a series over a long interval reads few rows. Since migration 13 a 1 s
-- roll-up row holds all a node's metrics as arrays, and reading one
-- metric's element detoasts the whole array; a coarser level in the same
-- wide shape would still detoast a row per window. So the levels are
-- metric-major: one row holds ONE metric of one node over a block of a
-- fixed number of slots, each column an array with one element a slot.
--
-- Slot k (0-based) of a block covers [block_start + k * level_s,
-- + level_s) and aggregates the 1 s roll-ups of statistics_rollup_arrays
-- that START in it: samples summed (0 where there is none: the other
-- arrays hold NULL there), seconds (the roll-ups' lengths) summed, min of
-- min, the samples-weighted mean, max of max, delta summed (NULL for
-- gauges), and, for counters, the min and max over the slot's roll-ups of
-- the rate delta / (end - start): a series' band stays the band of the
-- 1 s rates.
--
-- The levels are rows of statistics_levels, with how far each is built:
-- another level is one row. 5 s and 60 s: a 1 h run page asks 600 points
-- (6 s buckets), which a 10 s level could not serve. A block's length
-- divides a day, so a block never crosses a day partition; blocks are
-- short (10 min, 1 h) because a series reads the part of its interval not
-- yet built (whole blocks only) from the 1 s roll-ups.
--
-- Built by vigil_build_levels (vigil-txd's maintenance, every [txd]
-- levels_interval_s, and `vigil db maintain`): only blocks that ended a
-- margin ago (120 s) and only up to a bounded span a pass. A late batch
-- (a spool replayed after an outage) marks the blocks its roll-ups fall in
-- as stale in its own transaction (txd/store_levels.c), and the next pass
-- builds them again.

CREATE TABLE statistics_levels (
    level_s     integer PRIMARY KEY CHECK (level_s > 1),
    block_slots integer NOT NULL CHECK (block_slots > 0
                                        AND 86400 % (level_s * block_slots) = 0),
    -- Every block before this is built (NULL: none yet).
    built_until timestamptz
);
INSERT INTO statistics_levels (level_s, block_slots) VALUES (5, 120), (60, 60);

CREATE TABLE statistics_level_blocks (
    node_id     bigint NOT NULL,
    metric_id   integer NOT NULL,
    level_s     integer NOT NULL,
    block_start timestamptz NOT NULL,
    samples     integer[] NOT NULL,
    seconds     double precision[] NOT NULL,
    min         double precision[] NOT NULL,
    mean        double precision[] NOT NULL,
    max         double precision[] NOT NULL,
    delta       double precision[] NOT NULL,
    rate_min    double precision[] NOT NULL,
    rate_max    double precision[] NOT NULL,
    CONSTRAINT statistics_level_blocks_lengths CHECK (
        cardinality(seconds) = cardinality(samples) AND cardinality(min) = cardinality(samples)
        AND cardinality(mean) = cardinality(samples) AND cardinality(max) = cardinality(samples)
        AND cardinality(delta) = cardinality(samples)
        AND cardinality(rate_min) = cardinality(samples)
        AND cardinality(rate_max) = cardinality(samples))
) PARTITION BY RANGE (block_start);
CREATE UNIQUE INDEX statistics_level_blocks_key
    ON statistics_level_blocks (node_id, metric_id, level_s, block_start);

-- Blocks a late batch touched after (or while) they were built.
CREATE TABLE statistics_level_stale (
    node_id     bigint NOT NULL,
    level_s     integer NOT NULL,
    block_start timestamptz NOT NULL,
    PRIMARY KEY (node_id, level_s, block_start)
);

-- The start of the block of `level` holding `t`.
CREATE FUNCTION vigil_level_block_start(t timestamptz, level_s integer, block_slots integer)
RETURNS timestamptz LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
SELECT to_timestamp(floor(date_part('epoch', t) / (level_s * block_slots))
                    * (level_s * block_slots))
$$;

-- Builds every block of the level starting in [from_t, to_t) (both block
-- bounds) of the nodes `nodes` (NULL: every node), replacing what was
-- there; the rows written.
CREATE FUNCTION vigil_build_level_blocks(level integer, from_t timestamptz, to_t timestamptz,
                                         nodes bigint[] DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    slots integer;
    written bigint;
BEGIN
    SELECT block_slots INTO STRICT slots FROM statistics_levels WHERE level_s = level;
    -- Its days, when the maintenance step has not made them (old roll-ups).
    PERFORM vigil_day_partition('statistics_level_blocks', d::date)
       FROM generate_series((from_t AT TIME ZONE 'UTC')::date,
                            ((to_t - interval '1 microsecond') AT TIME ZONE 'UTC')::date,
                            interval '1 day') d;
    DELETE FROM statistics_level_blocks b
     WHERE b.level_s = level AND b.block_start >= from_t AND b.block_start < to_t
       AND (nodes IS NULL OR b.node_id = ANY (nodes));
    -- The slots that have roll-ups, then each block's arrays over all its
    -- slots (a slot without one: samples 0, the others NULL).
    WITH s AS MATERIALIZED (
        SELECT r.node_id, r.metric_id, r.block_start,
               floor((date_part('epoch', r.start_time) - date_part('epoch', r.block_start))
                     / level)::integer AS k,
               sum(r.samples)::integer AS samples, sum(r.seconds) AS seconds,
               min(r.min) AS min, sum(r.mean * r.samples) / nullif(sum(r.samples), 0) AS mean,
               max(r.max) AS max, sum(r.delta) AS delta,
               min(r.delta / nullif(r.seconds, 0)) AS rate_min,
               max(r.delta / nullif(r.seconds, 0)) AS rate_max
          FROM (SELECT a.node_id, u.metric_id, a.start_time,
                       vigil_level_block_start(a.start_time, level, slots) AS block_start,
                       date_part('epoch', a.end_time - a.start_time) AS seconds,
                       u.samples, u.min, u.mean, u.max, u.delta
                  FROM statistics_rollup_arrays a
                  JOIN metric_sets ms USING (metric_set_id),
                       unnest(ms.metric_ids, a.samples, a.min, a.mean, a.max, a.delta)
                       AS u (metric_id, samples, min, mean, max, delta)
                 WHERE a.start_time >= from_t AND a.start_time < to_t
                   AND (nodes IS NULL OR a.node_id = ANY (nodes))) r
         GROUP BY 1, 2, 3, 4)
    INSERT INTO statistics_level_blocks
    SELECT bl.node_id, bl.metric_id, level, bl.block_start,
           array_agg(coalesce(s.samples, 0) ORDER BY k.k),
           array_agg(s.seconds ORDER BY k.k), array_agg(s.min ORDER BY k.k),
           array_agg(s.mean ORDER BY k.k), array_agg(s.max ORDER BY k.k),
           array_agg(s.delta ORDER BY k.k), array_agg(s.rate_min ORDER BY k.k),
           array_agg(s.rate_max ORDER BY k.k)
      FROM (SELECT DISTINCT node_id, metric_id, block_start FROM s) bl
     CROSS JOIN generate_series(0, slots - 1) k (k)
      LEFT JOIN s ON s.node_id = bl.node_id AND s.metric_id = bl.metric_id
                 AND s.block_start = bl.block_start AND s.k = k.k
     GROUP BY bl.node_id, bl.metric_id, bl.block_start;
    GET DIAGNOSTICS written = ROW_COUNT;
    RETURN written;
END $$;

-- One pass of building, under a try-lock (several vigil-txd groups run it:
-- one builds, the others pass): first the stale blocks already built (each
-- node's again), then, per level, the blocks from built_until that ended at
-- least 120 s ago, at most `span` of them. A level's first pass starts at
-- the oldest day of statistics_rollup_arrays, and a pass skips the days
-- retention dropped. One row per level: the rows written, how far it is
-- built, and whether it is caught up (nothing more to build now); no rows
-- when another session holds the lock.
--
-- Why the stale marks make it exact: a batch marks the blocks of its
-- roll-ups that started more than 60 s ago (txd/store_levels.c), in its
-- own transaction. A roll-up it does not mark started less than 60 s
-- before its transaction, so its block ends after that, and is built no
-- sooner than 120 s after its end: the transaction committed long before
-- (an ingest transaction lasts far less than the 60 s between the two
-- margins), and the build sees it. A marked block is built again by the
-- first pass that sees the mark, which is after the batch's COMMIT.
CREATE FUNCTION vigil_build_levels(span interval DEFAULT interval '1 day')
RETURNS TABLE (level_s integer, rows_written bigint, built_until timestamptz, caught_up boolean)
LANGUAGE plpgsql AS $$
DECLARE
    lv record;
    st record;
    from_t timestamptz;
    to_t timestamptz;
    oldest timestamptz;
    ready timestamptz;
    written bigint;
BEGIN
    IF NOT pg_try_advisory_xact_lock(7020176829764907885) THEN -- "vigilgrp" + 1
        RETURN;
    END IF;
    SELECT min(b.lower_bound) INTO oldest
      FROM pg_inherits i, vigil_partition_bounds(i.inhrelid::regclass) b
     WHERE i.inhparent = 'statistics_rollup_arrays'::regclass;
    FOR lv IN SELECT * FROM statistics_levels l ORDER BY l.level_s FOR UPDATE LOOP
        written := 0;
        FOR st IN DELETE FROM statistics_level_stale s WHERE s.level_s = lv.level_s
                  RETURNING s.node_id, s.block_start LOOP
            IF lv.built_until IS NOT NULL AND st.block_start < lv.built_until THEN
                written := written + vigil_build_level_blocks(
                    lv.level_s, st.block_start,
                    st.block_start + make_interval(secs => lv.level_s * lv.block_slots),
                    ARRAY[st.node_id]);
            END IF;
        END LOOP;
        ready := vigil_level_block_start(now() - interval '120 s', lv.level_s, lv.block_slots);
        from_t := greatest(lv.built_until, oldest);
        to_t := least(from_t + greatest(span, make_interval(secs => lv.level_s * lv.block_slots)),
                      ready);
        IF from_t IS NOT NULL AND to_t > from_t THEN
            to_t := vigil_level_block_start(to_t, lv.level_s, lv.block_slots);
            written := written + vigil_build_level_blocks(lv.level_s, from_t, to_t);
            UPDATE statistics_levels l SET built_until = to_t WHERE l.level_s = lv.level_s;
            lv.built_until := to_t;
        END IF;
        level_s := lv.level_s;
        rows_written := written;
        built_until := lv.built_until;
        caught_up := from_t IS NULL OR lv.built_until >= ready;
        RETURN NEXT;
    END LOOP;
END $$;
