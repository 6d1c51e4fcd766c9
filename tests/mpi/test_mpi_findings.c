/* The findings of an MPI job's report (report/insight.c on rank 0's joint
 * report): across the ranks, what no rank's own report can see. The job
 * (mpi-insight-job) writes a shared file with small independent MPI-IO
 * calls, and rank 0 alone writes a large file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "test_main.h"
#include "test_report.h"
#include "test_support.h"

#include "mpi_job.h"

static int setup(void **state)
{
    *state = g_dir_make_tmp("vigil-mpi-findings-XXXXXX", NULL);
    return *state != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    test_remove_tree(*state);
    g_free(*state);
    return 0;
}

/* The job's report in `dir`: report-PID-job.json. */
static struct test_report job_report(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    assert_non_null(d);
    char *path = NULL;
    for (const char *name = g_dir_read_name(d); name != NULL; name = g_dir_read_name(d))
        if (g_str_has_prefix(name, "report-") && g_str_has_suffix(name, "-job.json")) {
            assert_null(path);
            path = g_build_filename(dir, name, NULL);
        }
    g_dir_close(d);
    if (path == NULL)
        fail_msg("no job report in %s", dir);
    struct test_report rep = test_report_load(path);
    g_free(path);
    return rep;
}

static void test_job_findings(void **state)
{
    const char *dir = *state;
    /* Without vigild: the default thresholds. */
    const char *vars[] = {"VIGIL_SOCKET=/nonexistent", NULL};
    struct test_run r =
        mpi_job_run(dir, vars, test_env_or_fail("VIGIL_MPI_INSIGHT_JOB"), dir, NULL);
    test_assert_status(&r, 0, "mpi-insight-job under vigil");
    test_run_clear(&r);
    struct test_report rep = job_report(dir);
    assert_string_equal(test_report_string(&rep, "findings_thresholds"), "defaults");

    /* Exactly these two, in the engine's order (the job's, then files'). */
    assert_string_equal(test_report_string(&rep, "findings.0.id"), "rank_imbalance");
    assert_int_equal(test_report_int(&rep, "findings.0.rank"), 0);
    assert_true(JSON_NODE_HOLDS_NULL(test_report_node(&rep, "findings.0.file")));
    /* 272 MiB of its own and 300 blocks of the shared file. */
    assert_string_equal(test_report_string(&rep, "findings.0.evidence"),
                        "rank 0 wrote 273.2 MiB, 3.9 times the mean of 69.2 MiB over 4 ranks");
    assert_string_equal(test_report_string(&rep, "findings.1.id"), "independent_mpiio");
    char *shared = g_build_filename(dir, "shared.dat", NULL);
    assert_string_equal(test_report_string(&rep, "findings.1.file"), shared);
    assert_true(JSON_NODE_HOLDS_NULL(test_report_node(&rep, "findings.1.rank")));
    assert_string_equal(test_report_string(&rep, "findings.1.evidence"),
                        "4 ranks made 1200 independent MPI-IO reads and writes of 4 KiB on "
                        "average, and no collective one");
    assert_null(test_report_node(&rep, "findings.2"));
    g_free(shared);
    test_report_free(&rep);
}

TEST_MAIN(cmocka_unit_test_setup_teardown(test_job_findings, setup, teardown))
