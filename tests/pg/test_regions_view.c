/* The warehouse's run_regions view (warehouse/migrations/0006_regions.sql) over reports
 * as vigil-txd stores them: a plain process's, an MPI job's (rank 0's
 * report with "ranks", whose regions hold every rank's, and the other
 * ranks' own reports, marked "in_job_report", which must not count again)
 * and a report without regions. Each row's sums and per-process min, mean
 * and max are checked against the figures put in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_warehouse.h"
#include "vigil/warehouse.h"

/* A database at the latest schema, which has the run_regions view
 * (migration 6). */
static const char fixture[] =
    "INSERT INTO nodes (node_id, hostname) VALUES (1, 'n1');"
    "INSERT INTO runs (run_id, run_key, program, argv, uid, start_time) VALUES"
    " (1, 'plain', 'a', '{a}', 0, now()), (2, 'job', 'b', '{b}', 0, now());"
    "INSERT INTO processes (process_id, run_id, node_id, pid, uid, rank, program, argv, cwd,"
    " start_time, start_monotonic_ns) VALUES"
    " (1, 1, 1, 10, 0, NULL, 'a', '{a}', '/', now(), 1),"
    " (2, 1, 1, 11, 0, NULL, 'a', '{a}', '/', now(), 2),"
    " (3, 1, 1, 12, 0, NULL, 'sh', '{sh}', '/', now(), 3),"
    " (4, 2, 1, 20, 0, 0, 'b', '{b}', '/', now(), 4),"
    " (5, 2, 1, 21, 0, 1, 'b', '{b}', '/', now(), 5);"
    /* Run 1: two processes entered "solver", one with energy; a shell
     * without regions. */
    "INSERT INTO run_summaries (process_id, report) VALUES"
    " (1, '{\"regions\":[{\"name\":\"solver\",\"entered\":2,\"calls\":10,\"bytes_read\":100,"
    "\"bytes_written\":1000,\"wall_seconds\":1.5,\"cpu_seconds\":1.0,\"energy_joule\":30.0,"
    "\"energy_missing\":0,\"energy_estimated\":true,\"energy_uncertain\":false,\"open\":0}],"
    "\"region_notes\":{}}'),"
    " (2, '{\"regions\":[{\"name\":\"solver\",\"entered\":1,\"calls\":4,\"bytes_read\":300,"
    "\"bytes_written\":0,\"wall_seconds\":0.5,\"cpu_seconds\":0.25,\"energy_joule\":null,"
    "\"energy_missing\":1,\"energy_estimated\":false,\"energy_uncertain\":false,\"open\":0}],"
    "\"region_notes\":{}}'),"
    " (3, '{\"program\":\"sh\"}'),"
    /* Run 2: the job's report on rank 0 (2 ranks), rank 1's own. */
    " (4, '{\"ranks\":2,\"regions\":[{\"name\":\"io\",\"entered\":2,\"calls\":68,"
    "\"bytes_read\":131072,\"bytes_written\":131072,\"wall_seconds\":0.3,\"cpu_seconds\":0.2,"
    "\"energy_joule\":4.0,\"energy_missing\":0,\"energy_estimated\":false,"
    "\"energy_uncertain\":false,\"open\":0,\"ranks\":2,\"per_rank\":{"
    "\"entered\":{\"max_rank\":0,\"min\":1,\"mean\":1,\"max\":1,\"sum\":2},"
    "\"calls\":{\"max_rank\":0,\"min\":34,\"mean\":34,\"max\":34,\"sum\":68},"
    "\"bytes_read\":{\"max_rank\":0,\"min\":65536,\"mean\":65536,\"max\":65536,\"sum\":131072},"
    "\"bytes_written\":{\"max_rank\":0,\"min\":65536,\"mean\":65536,\"max\":65536,\"sum\":131072},"
    "\"wall_seconds\":{\"max_rank\":1,\"min\":0.1,\"mean\":0.15,\"max\":0.2,\"sum\":0.3},"
    "\"cpu_seconds\":{\"max_rank\":1,\"min\":0.05,\"mean\":0.1,\"max\":0.15,\"sum\":0.2},"
    "\"energy_joule\":{\"max_rank\":1,\"min\":1.0,\"mean\":2.0,\"max\":3.0,\"sum\":4.0}}}],"
    "\"region_notes\":{}}'),"
    " (5, '{\"in_job_report\":true,\"rank\":1,\"regions\":[{\"name\":\"io\",\"entered\":1,"
    "\"calls\":34,\"bytes_read\":65536,\"bytes_written\":65536,\"wall_seconds\":0.2,"
    "\"cpu_seconds\":0.15,\"energy_joule\":3.0,\"energy_missing\":0,\"energy_estimated\":false,"
    "\"energy_uncertain\":false,\"open\":0}],\"region_notes\":{}}');";

static char *value(const char *conninfo, const char *column, int run, const char *region)
{
    char *sql = g_strdup_printf("SELECT coalesce(%s::text, 'NULL') FROM run_regions"
                                " WHERE run_id = %d AND region = '%s'",
                                column, run, region);
    char *text = test_pg_query_text_in(conninfo, sql);
    g_free(sql);
    return text;
}

static void expect(const char *conninfo, int run, const char *region, const char *column,
                   const char *want)
{
    char *got = value(conninfo, column, run, region);
    if (strcmp(got, want) != 0)
        fail_msg("run %d, region %s: %s is %s, not %s", run, region, column, got, want);
    g_free(got);
}

static void test_run_regions(void **state)
{
    (void)state;
    /* The latest schema has the run_regions view (migration 6). */
    assert_true(vigil_warehouse_latest_version() >= 6);
    char *conninfo = test_warehouse_new_migrated();
    test_pg_exec_in(conninfo, fixture);
    /* One row per run and region: the shell and rank 1's own report add none. */
    assert_int_equal(test_pg_query_u64_in(conninfo, "SELECT count(*) FROM run_regions"), 2);

    expect(conninfo, 1, "solver", "processes", "2");
    expect(conninfo, 1, "solver", "entered", "3");
    expect(conninfo, 1, "solver", "calls", "14");
    expect(conninfo, 1, "solver", "bytes_read", "400");
    expect(conninfo, 1, "solver", "wall_seconds", "2");
    expect(conninfo, 1, "solver", "min_wall_seconds", "0.5");
    expect(conninfo, 1, "solver", "mean_wall_seconds", "1");
    expect(conninfo, 1, "solver", "max_wall_seconds", "1.5");
    expect(conninfo, 1, "solver", "min_bytes_read", "100");
    expect(conninfo, 1, "solver", "max_bytes_read", "300");
    /* Energy: only the process that had a figure. */
    expect(conninfo, 1, "solver", "energy_joule", "30");
    expect(conninfo, 1, "solver", "energy_missing", "1");
    expect(conninfo, 1, "solver", "mean_energy_joule", "30");
    expect(conninfo, 1, "solver", "energy_estimated", "true");

    /* The job: its report's sums, per-rank figures from its per_rank. */
    expect(conninfo, 2, "io", "processes", "2");
    expect(conninfo, 2, "io", "entered", "2");
    expect(conninfo, 2, "io", "calls", "68");
    expect(conninfo, 2, "io", "bytes_written", "131072");
    expect(conninfo, 2, "io", "min_wall_seconds", "0.1");
    expect(conninfo, 2, "io", "max_wall_seconds", "0.2");
    expect(conninfo, 2, "io", "mean_wall_seconds", "0.15");
    expect(conninfo, 2, "io", "min_energy_joule", "1");
    expect(conninfo, 2, "io", "max_energy_joule", "3");
    expect(conninfo, 2, "io", "mean_energy_joule", "2");
    g_free(conninfo);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown, cmocka_unit_test(test_run_regions))
