/* The roll-up levels built in C (warehouse/warehouse_levels.c) against the
 * SQL that is their reference (vigil_build_level_blocks, migration 15):
 * one fixture built both ways, every row and every element compared as
 * PostgreSQL prints it (so a NaN, a NULL, -0 or a last bit apart differs).
 * The fixture has a gauge and two counters, slots without roll-ups,
 * roll-ups of 0 s and 2 s, samples 0, NaN and infinite values, a node
 * whose metric set changed, a node missing from `nodes`, blocks on both
 * sides of midnight and a roll-up across it, and a late roll-up whose
 * stale blocks are built again. Also: another session's pass (busy), a
 * cancelled pass and a malformed row leave everything as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_warehouse.h"
#include "vigil/warehouse.h"

/* Midnight (UTC) two days ago; every level's blocks ended long ago. */
#define DAY "(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - interval '2 days')"

/* Three nodes (3 not in `nodes`) from 20 min before DAY to 70 min after:
 * node 1 changes its metric set at +10 min, node 2 keeps the changed one.
 * Metric 1 a gauge (delta NULL), 2 and 3 counters (3's delta sometimes
 * NULL or NaN). Values are multiples of 0.25, so that sums in any order
 * are the same double. */
static const char fixture[] =
    "INSERT INTO nodes (node_id, hostname) VALUES (1, 'n1'), (2, 'n2');"
    "INSERT INTO metric_sets (metric_set_id, metric_ids) VALUES (101, '{1,2}'), (102, '{2,3,1}');"
    "SELECT vigil_day_partition('statistics_rollup_arrays', (" DAY " AT TIME ZONE 'UTC')::date + d)"
    " FROM generate_series(-1, 0) d;"
    "INSERT INTO statistics_rollup_arrays (node_id, metric_set_id, start_time, end_time, samples,"
    " min, mean, max, delta, uncertain)"
    " SELECT n, st.set_id, x.t, x.t + x.len, a.samples, a.min, a.mean, a.max, a.delta,"
    "  repeat('0', cardinality(ms.ids))::text::varbit"
    " FROM generate_series(1, 3) n, generate_series(-1200, 4199) s,"
    " LATERAL (SELECT CASE WHEN n = 2 OR (n = 1 AND s >= 600) THEN 102 ELSE 101 END AS set_id) st,"
    " LATERAL (SELECT metric_ids AS ids FROM metric_sets WHERE metric_set_id = st.set_id) ms,"
    " LATERAL (SELECT " DAY " + s * interval '1 s' + n * interval '0.25 s' AS t,"
    "  CASE WHEN s % 11 = 0 THEN interval '2 s' WHEN s % 23 = 5 THEN interval '0 s'"
    "  ELSE interval '1 s' END AS len) x,"
    " LATERAL (SELECT array_agg(v.samples ORDER BY u.o) AS samples, array_agg(v.min ORDER BY u.o)"
    "  AS min, array_agg(v.mean ORDER BY u.o) AS mean, array_agg(v.max ORDER BY u.o) AS max,"
    "  array_agg(v.delta ORDER BY u.o) AS delta"
    "  FROM unnest(ms.ids) WITH ORDINALITY u (m, o), LATERAL (SELECT"
    "   CASE WHEN s / 5 % 29 = 7 THEN 0 ELSE 8 + abs(s) % 3 END AS samples,"
    "   CASE WHEN s % 43 = 6 THEN 'NaN'::float8 ELSE (abs(s) * 7 % 13) * 1.5 + u.m END AS min,"
    "   CASE WHEN s % 31 = 2 THEN 'NaN'::float8"
    "    ELSE (abs(s) * 7 % 13) * 1.5 + u.m + abs(s) % 5 END AS mean,"
    "   CASE WHEN s % 37 = 1 THEN 'Infinity'::float8 WHEN s % 41 = 4 THEN 'NaN'::float8"
    "    ELSE (abs(s) * 7 % 13) * 1.5 + u.m + 10 + abs(s) % 4 END AS max,"
    "   CASE WHEN u.m = 1 THEN NULL WHEN u.m = 2 THEN (abs(s) * 31 % 97) * 0.25"
    "    WHEN s % 13 = 0 THEN NULL WHEN s % 19 = 0 THEN 'NaN'::float8"
    "    ELSE (abs(s) % 7) * 0.5 - 1 END AS delta) v) a"
    " WHERE s % 17 <> 3";

/* Rows of `reference` and statistics_level_blocks that differ as text. */
static const char differ_sql[] =
    "SELECT count(*) FROM reference r FULL JOIN statistics_level_blocks b"
    " USING (node_id, metric_id, level_s, block_start)"
    " WHERE (r.samples, r.seconds, r.min, r.mean, r.max, r.delta, r.rate_min, r.rate_max)::text"
    " IS DISTINCT FROM"
    " (b.samples, b.seconds, b.min, b.mean, b.max, b.delta, b.rate_min, b.rate_max)::text";

/* Passes of the C build until it is caught up; the blocks written. */
static guint64 build_in_c(PGconn *db)
{
    guint64 written = 0;
    for (int pass = 0; pass < 100; pass++) {
        gboolean busy = TRUE, caught_up = FALSE;
        guint64 rows = 0;
        GError *error = NULL;
        if (!vigil_warehouse_build_levels(db, "1 day", NULL, &busy, &caught_up, &rows, &error))
            fail_msg("building the levels in C: %s", error->message);
        assert_false(busy);
        written += rows;
        if (caught_up)
            return written;
    }
    fail_msg("the C build never caught up");
    return 0;
}

static void build_in_sql(const char *conninfo)
{
    test_pg_exec_in(conninfo, "DO $$ BEGIN LOOP EXIT WHEN (SELECT bool_and(caught_up)"
                              " FROM vigil_build_levels('1 day')); END LOOP; END $$");
}

static void keep_as_reference(const char *conninfo)
{
    test_pg_exec_in(conninfo, "DROP TABLE IF EXISTS reference;"
                              "CREATE TABLE reference AS SELECT * FROM statistics_level_blocks");
}

static void forget_the_levels(const char *conninfo)
{
    test_pg_exec_in(conninfo, "DELETE FROM statistics_level_blocks;"
                              "UPDATE statistics_levels SET built_until = NULL");
}

static guint64 count(const char *conninfo, const char *sql)
{
    return test_pg_query_u64_in(conninfo, sql);
}

static void test_c_builds_what_sql_builds(void **state)
{
    struct test_warehouse_db *t = *state;
    test_pg_exec_in(t->conninfo, fixture);
    build_in_sql(t->conninfo);
    keep_as_reference(t->conninfo);
    /* The fixture reaches what it says: both days, every kind of element. */
    assert_true(count(t->conninfo, "SELECT count(DISTINCT block_start::date) FROM reference") >= 2);
    assert_int_equal(count(t->conninfo, "SELECT count(DISTINCT node_id) FROM reference"), 3);
    assert_true(count(t->conninfo, "SELECT count(*) FROM reference, unnest(mean) m"
                                   " WHERE m = 'NaN'") > 0);
    assert_true(count(t->conninfo, "SELECT count(*) FROM reference, unnest(samples, mean) u (s, m)"
                                   " WHERE s > 0 AND m IS NULL") == 0);
    assert_true(count(t->conninfo, "SELECT count(*) FROM reference, unnest(max) m"
                                   " WHERE m = 'Infinity'") > 0);
    assert_true(count(t->conninfo, "SELECT count(*) FROM reference, unnest(samples, seconds)"
                                   " u (s, secs) WHERE s = 0 AND secs IS NOT NULL") > 0);
    assert_true(count(t->conninfo, "SELECT count(*) FROM reference, unnest(samples) s"
                                   " WHERE s = 0") > 0);

    forget_the_levels(t->conninfo);
    guint64 written = build_in_c(t->db);
    assert_int_equal(written, count(t->conninfo, "SELECT count(*) FROM reference"));
    assert_int_equal(count(t->conninfo, differ_sql), 0);
    /* The comparison sees one element a bit apart. */
    test_pg_exec_in(t->conninfo,
                    "UPDATE statistics_level_blocks SET seconds[2] = seconds[2] * (1 + 1e-15)"
                    " WHERE node_id = 2 AND metric_id = 3 AND level_s = 5 AND seconds[2] > 0");
    assert_true(count(t->conninfo, differ_sql) > 0);
    /* Built once: a second pass writes nothing. */
    assert_int_equal(build_in_c(t->db), 0);

    /* A late roll-up of node 2 in a built slot: its blocks marked stale
     * (as vigil-txd marks them), built again by C, then by SQL. */
    test_pg_exec_in(t->conninfo,
                    "INSERT INTO statistics_rollup_arrays SELECT 2, 102, t, t + interval '1 s',"
                    " '{5,5,5}', '{0.5,0.5,0.5}', '{1,2,3}', '{7,7,7}', '{4,NULL,NULL}', '000'"
                    " FROM (SELECT " DAY " + interval '30 min 0.5 s' AS t) x;"
                    "INSERT INTO statistics_level_stale SELECT 2, level_s,"
                    " vigil_level_block_start(" DAY " + interval '30 min', level_s, block_slots)"
                    " FROM statistics_levels");
    guint64 before = count(t->conninfo, "SELECT sum(s) FROM statistics_level_blocks,"
                                        " unnest(samples) s WHERE node_id = 2");
    assert_int_equal(build_in_c(t->db), 2 * 3);
    assert_int_equal(count(t->conninfo, "SELECT sum(s) FROM statistics_level_blocks,"
                                        " unnest(samples) s WHERE node_id = 2"),
                     before + 2 * 3 * 5);
    assert_int_equal(count(t->conninfo, "SELECT count(*) FROM statistics_level_stale"), 0);
    keep_as_reference(t->conninfo);
    test_pg_exec_in(t->conninfo,
                    "INSERT INTO statistics_level_stale SELECT 2, level_s,"
                    " vigil_level_block_start(" DAY " + interval '30 min', level_s, block_slots)"
                    " FROM statistics_levels");
    build_in_sql(t->conninfo);
    assert_int_equal(count(t->conninfo, differ_sql), 0);
}

/* Another session building: the pass does nothing and says so. A
 * cancelled pass and one that meets a malformed row roll back. */
static void test_busy_cancelled_and_malformed(void **state)
{
    struct test_warehouse_db *t = *state;
    test_pg_exec_in(t->conninfo, fixture);
    PGconn *other = test_warehouse_connect(t->conninfo);
    PQclear(PQexec(other, "BEGIN; SELECT pg_advisory_xact_lock(7020176829764907885)"));
    gboolean busy = FALSE, caught_up = TRUE;
    guint64 rows = 1;
    GError *error = NULL;
    assert_true(
        vigil_warehouse_build_levels(t->db, "1 day", NULL, &busy, &caught_up, &rows, &error));
    assert_true(busy);
    assert_int_equal(rows, 0);
    PQclear(PQexec(other, "COMMIT"));
    PQfinish(other);

    GCancellable *cancel = g_cancellable_new();
    g_cancellable_cancel(cancel);
    assert_false(
        vigil_warehouse_build_levels(t->db, "1 day", cancel, &busy, &caught_up, &rows, &error));
    assert_true(g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED));
    g_clear_error(&error);
    g_object_unref(cancel);

    /* A roll-up whose arrays are shorter than its metric set (the pass
     * spans both days). */
    test_pg_exec_in(t->conninfo,
                    "INSERT INTO statistics_rollup_arrays SELECT 2, 102, t, t + interval '1 s',"
                    " '{5}', '{0.5}', '{1}', '{7}', '{4}', '0'"
                    " FROM (SELECT " DAY " + interval '30 min 0.5 s' AS t) x");
    assert_false(
        vigil_warehouse_build_levels(t->db, "3 days", NULL, &busy, &caught_up, &rows, &error));
    test_assert_contains(error->message, "node 2's roll-up at");
    test_assert_contains(error->message, "its arrays are not as long as its metric set");
    g_clear_error(&error);
    assert_int_equal(count(t->conninfo, "SELECT count(*) FROM statistics_level_blocks"), 0);
    assert_int_equal(
        count(t->conninfo, "SELECT count(*) FROM statistics_levels WHERE built_until IS NOT NULL"),
        0);
    /* The connection goes on. */
    assert_int_equal(PQstatus(t->db), CONNECTION_OK);
}

static int migrated_db_setup(void **state)
{
    struct test_warehouse_db *t = g_new0(struct test_warehouse_db, 1);
    t->conninfo = test_warehouse_new_migrated();
    t->db = test_warehouse_connect(t->conninfo);
    *state = t;
    return 0;
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             cmocka_unit_test_setup_teardown(test_c_builds_what_sql_builds, migrated_db_setup,
                                             test_warehouse_db_teardown),
             cmocka_unit_test_setup_teardown(test_busy_cancelled_and_malformed, migrated_db_setup,
                                             test_warehouse_db_teardown))
