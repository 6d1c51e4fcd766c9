/* The web suite's warehouse, tests/web/fixture.sql: it loads, with psql as
 * the web suite loads it, into a database migrated to the latest schema,
 * and holds the figures its header promises (the API and browser tests
 * assert on them), so a schema change that breaks it fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_warehouse.h"
#include "vigil/warehouse.h"

static guint64 count(const char *sql)
{
    return test_pg_query_u64_in(test_warehouse_fixture, sql);
}

static char *text(const char *sql)
{
    return test_pg_query_text_in(test_warehouse_fixture, sql);
}

static void test_rows_are_those_the_header_promises(void **state)
{
    (void)state;
    assert_int_equal(count("SELECT count(*) FROM nodes"), 3);
    assert_int_equal(count("SELECT count(*) FROM runs"), 12);
    assert_int_equal(count("SELECT count(*) FROM processes"), 18);
    assert_int_equal(count("SELECT count(*) FROM run_summaries"), 18);
    assert_int_equal(count("SELECT count(*) FROM captures"), 2);
    assert_int_equal(count("SELECT count(*) FROM anomalies"), 5);
    assert_int_equal(count("SELECT count(*) FROM reasoner_states"), 11);
    assert_int_equal(count("SELECT count(*) FROM statistics_rollups"), 531360);
    /* 300 activities inside each window, 6 of them failed. */
    char *got = text("SELECT string_agg(format('%s:%s:%s', c.capture_id, count, errors), ' '"
                     "  ORDER BY c.capture_id) FROM captures c, LATERAL (SELECT count(*),"
                     "  count(*) FILTER (WHERE errno <> 0) AS errors FROM activities a"
                     "  WHERE a.process_id = c.process_id AND a.start_time >= c.start_time"
                     "  AND a.start_time < c.end_time) x");
    assert_string_equal(got, "1:300:6 2:300:6");
    g_free(got);
    /* Their per-second counts: window 1's 6 s, window 2's 1.8 s (2 seconds). */
    got = text("SELECT string_agg(format('%s:%s:%s', process_id, seconds, calls), ' '"
               "  ORDER BY process_id) FROM (SELECT process_id, count(DISTINCT start_time)"
               "  AS seconds, sum(calls) AS calls FROM activity_seconds GROUP BY 1) x");
    assert_string_equal(got, "1:6:300 3:2:300");
    g_free(got);
    /* Newest first, pages of 5: 12..8, 7 6 5 4 2, 3 1. */
    got = text("SELECT string_agg(run_id::text, ' ' ORDER BY start_time DESC, run_id DESC)"
               " FROM runs");
    assert_string_equal(got, "12 11 10 9 8 7 6 5 4 2 3 1");
    g_free(got);
    /* The one spike: n1's energy window at 10:00:30. */
    got = text("SELECT string_agg(format('%s %s %s', node_id, to_char(start_time AT TIME ZONE"
               " 'UTC', 'HH24:MI:SS'), delta), ',') FROM statistics_rollups"
               " WHERE metric_id = 1 AND delta > 160");
    assert_string_equal(got, "1 10:00:30 400");
    g_free(got);
    got = text("SELECT string_agg(format('%s %s %s', run_id, energy_j, captures), ','"
               " ORDER BY run_id) FROM run_overview WHERE run_id <= 3");
    assert_string_equal(got, "1 36250 2,2 36000 0,3 1500 0");
    g_free(got);
}

static void test_summary_columns_are_the_reports_figures(void **state)
{
    (void)state;
    /* As vigil-txd stores them: a report the job's counts has none. */
    assert_int_equal(count("SELECT count(*) FROM run_summaries WHERE"
                           " coalesce((report->>'in_job_report')::boolean, false)"
                           " AND calls IS NULL AND bytes_read IS NULL AND bytes_written IS NULL"
                           " AND energy_j IS NULL"),
                     6);
    assert_int_equal(count("SELECT count(*) FROM run_summaries WHERE NOT"
                           " coalesce((report->>'in_job_report')::boolean, false)"
                           " AND calls = (report->'activities'->>'observed')::bigint"
                           " AND bytes_read = (report->>'io_bytes_read')::bigint"
                           " AND bytes_written = (report->>'io_bytes_written')::bigint"
                           " AND energy_j = (report->>'energy_joule')::float8"
                           " AND energy_source = 'powercap'"),
                     12);
    /* Every report names its own process, host and run. */
    assert_int_equal(count("SELECT count(*) FROM run_summaries s JOIN processes p"
                           " USING (process_id) JOIN nodes n USING (node_id) JOIN runs r"
                           " USING (run_id) WHERE (s.report->>'pid')::integer = p.pid"
                           " AND s.report->>'host' = n.hostname"
                           " AND s.report->>'run_key' = r.run_key"),
                     18);
}

static struct test_run vigil_report(const char *run, const char *format)
{
    return test_run_vigil_on_warehouse(test_warehouse_fixture, "report", run, "--format", format,
                                       NULL);
}

static void test_vigil_report_prints_the_stored_reports(void **state)
{
    (void)state;
    struct test_run r = vigil_report("1", "json");
    test_assert_out(&r, 0, "vigil report 1 --format json", "\"run_key\":\"fixture-ior-1\"",
                    "\"ranks\":4", "\"energy_joule\":36250.", NULL);
    test_run_clear(&r);
    r = vigil_report("3", "text");
    test_assert_out(&r, 0, "vigil report 3", "fixture-dd-3", "1500.000 (powercap)", NULL);
    test_run_clear(&r);
}

TEST_PG_MAIN(test_warehouse_fixture_group_setup, test_warehouse_fixture_group_teardown,
             cmocka_unit_test(test_rows_are_those_the_header_promises),
             cmocka_unit_test(test_summary_columns_are_the_reports_figures),
             cmocka_unit_test(test_vigil_report_prints_the_stored_reports))
