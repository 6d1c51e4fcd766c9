-- vigil warehouse, migration 16 (issue 32): the roll-up levels built in C.
-- vigil_build_level_blocks (migration 15) aggregates in SQL: it unnests
-- every 1 s roll-up array and groups the values by slot, about 13 µs of
-- PostgreSQL's CPU a value. vigil_warehouse_build_levels
-- (warehouse/warehouse_levels.c) now reads the arrays by binary COPY,
-- aggregates in C exactly as that function does, and writes the blocks by
-- binary COPY. What stays in SQL is the bookkeeping of vigil_build_levels,
-- unchanged: this function answers which blocks a pass builds and records
-- that they are built, in the pass's transaction; the C builds them in the
-- same transaction, so a failed pass leaves everything as it was.
--
-- vigil_build_level_blocks stays, and vigil_build_levels becomes its
-- caller on this bookkeeping (below): the pg suite builds one fixture both
-- ways and compares every element, and bench/levels.py measures one
-- against the other.

-- The day partitions of statistics_level_blocks for [from_t, to_t), as
-- vigil_build_level_blocks makes them (old roll-ups have none yet).
CREATE FUNCTION vigil_level_partitions(from_t timestamptz, to_t timestamptz)
RETURNS void LANGUAGE sql AS $$
SELECT count(vigil_day_partition('statistics_level_blocks', d::date))
  FROM generate_series((from_t AT TIME ZONE 'UTC')::date,
                       ((to_t - interval '1 microsecond') AT TIME ZONE 'UTC')::date,
                       interval '1 day') d
$$;

-- Under vigil_build_levels' try-lock (no rows when another session holds
-- it): per level, first one row per stale block already built (node_id
-- set: that node's block again), its mark deleted; then one row with
-- node_id NULL: the blocks of every node to build, [from_t, to_t) (NULL
-- when none), built_until moved to to_t, and whether the level is caught
-- up. The day partitions of every range are made here. Migration 15's
-- vigil_build_levels' choice of blocks (see there why it is exact).
CREATE FUNCTION vigil_levels_plan(span interval DEFAULT interval '1 day')
RETURNS TABLE (level_s integer, block_slots integer, node_id bigint, from_t timestamptz,
               to_t timestamptz, caught_up boolean)
LANGUAGE plpgsql AS $$
DECLARE
    lv record;
    st record;
    oldest timestamptz;
    ready timestamptz;
BEGIN
    IF NOT pg_try_advisory_xact_lock(7020176829764907885) THEN -- vigil_build_levels' lock
        RETURN;
    END IF;
    SELECT min(b.lower_bound) INTO oldest
      FROM pg_inherits i, vigil_partition_bounds(i.inhrelid::regclass) b
     WHERE i.inhparent = 'statistics_rollup_arrays'::regclass;
    FOR lv IN SELECT * FROM statistics_levels l ORDER BY l.level_s FOR UPDATE LOOP
        level_s := lv.level_s;
        block_slots := lv.block_slots;
        caught_up := NULL;
        FOR st IN DELETE FROM statistics_level_stale s WHERE s.level_s = lv.level_s
                  RETURNING s.node_id, s.block_start LOOP
            IF lv.built_until IS NOT NULL AND st.block_start < lv.built_until THEN
                node_id := st.node_id;
                from_t := st.block_start;
                to_t := st.block_start + make_interval(secs => lv.level_s * lv.block_slots);
                PERFORM vigil_level_partitions(from_t, to_t);
                RETURN NEXT;
            END IF;
        END LOOP;
        node_id := NULL;
        ready := vigil_level_block_start(now() - interval '120 s', lv.level_s, lv.block_slots);
        from_t := greatest(lv.built_until, oldest);
        to_t := least(from_t + greatest(span, make_interval(secs => lv.level_s * lv.block_slots)),
                      ready);
        IF from_t IS NOT NULL AND to_t > from_t THEN
            to_t := vigil_level_block_start(to_t, lv.level_s, lv.block_slots);
            PERFORM vigil_level_partitions(from_t, to_t);
            UPDATE statistics_levels l SET built_until = to_t WHERE l.level_s = lv.level_s;
            lv.built_until := to_t;
        ELSE
            to_t := NULL;
        END IF;
        caught_up := from_t IS NULL OR lv.built_until >= ready;
        IF to_t IS NULL THEN
            from_t := NULL;
        END IF;
        RETURN NEXT;
    END LOOP;
END $$;

-- Migration 15's SQL build on the same bookkeeping, so that the two ways
-- differ only in the aggregation: the reference the pg suite and
-- bench/levels.py compare the C with.
CREATE OR REPLACE FUNCTION vigil_build_levels(span interval DEFAULT interval '1 day')
RETURNS TABLE (level_s integer, rows_written bigint, built_until timestamptz, caught_up boolean)
LANGUAGE plpgsql AS $$
DECLARE
    w record;
    written bigint := 0;
BEGIN
    FOR w IN SELECT * FROM vigil_levels_plan(span) LOOP
        IF w.from_t IS NOT NULL THEN
            written := written + vigil_build_level_blocks(
                w.level_s, w.from_t, w.to_t,
                CASE WHEN w.node_id IS NOT NULL THEN ARRAY[w.node_id] END);
        END IF;
        IF w.node_id IS NULL THEN
            level_s := w.level_s;
            rows_written := written;
            built_until := (SELECT l.built_until FROM statistics_levels l
                             WHERE l.level_s = w.level_s);
            caught_up := w.caught_up;
            RETURN NEXT;
            written := 0;
        END IF;
    END LOOP;
END $$;
