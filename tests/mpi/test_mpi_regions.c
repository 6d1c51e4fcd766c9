/* Code regions in an MPI job's report: the regions program of
 * tests/integration (built with -DUSE_MPI: each rank does the same I/O in a
 * file of its own, then computes) run as a job of 4 ranks under `vigil
 * run`; the joint report has each region's sums over the ranks and its
 * per-rank min, mean and max, checked against what every rank did.
 *
 * Needs VIGIL_CLI and VIGIL_MPI_REGIONS, which meson test sets. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "test_report.h"
#include "test_support.h"
#include "mpi_job.h"
#include "test_main.h"

#define RANKS    MPI_JOB_RANKS
#define IO_BYTES (16 * 4096)
#define IO_CALLS 34

/* region.per_rank.FIGURE.STAT */
static double per_rank(JsonObject *region, const char *figure, const char *stat)
{
    JsonObject *f =
        json_object_get_object_member(json_object_get_object_member(region, "per_rank"), figure);
    return json_object_get_double_member(f, stat);
}

static void test_job_regions(void **state)
{
    const char *dir = *state;
    struct test_run r =
        mpi_job_run(dir, NULL, test_env_or_fail("VIGIL_MPI_REGIONS"), dir, "1000000", NULL);
    test_assert_status(&r, 0, "the regions job");

    /* The joint report is the one whose name ends in "-job.json". */
    GDir *d = g_dir_open(dir, 0, NULL);
    char *joint = NULL;
    for (const char *name; (name = g_dir_read_name(d)) != NULL;)
        if (g_str_has_suffix(name, "-job.json"))
            joint = g_build_filename(dir, name, NULL);
    g_dir_close(d);
    if (joint == NULL)
        fail_msg("no joint report in %s\nstderr: %s", dir, r.err);
    struct test_report rep = test_report_load(joint);
    assert_int_equal(test_report_int(&rep, "ranks"), RANKS);

    JsonObject *io = test_report_region(&rep, "io"), *compute = test_report_region(&rep, "compute"),
               *whole = test_report_region(&rep, "main");
    assert_int_equal(json_object_get_int_member(io, "ranks"), RANKS);
    assert_int_equal(json_object_get_int_member(io, "entered"), RANKS);
    assert_int_equal(json_object_get_int_member(io, "calls"), RANKS * IO_CALLS);
    assert_int_equal(json_object_get_int_member(io, "bytes_written"), RANKS * IO_BYTES);
    assert_int_equal(json_object_get_int_member(whole, "bytes_read"), RANKS * IO_BYTES);
    assert_int_equal(json_object_get_int_member(compute, "calls"), 0);
    /* Every rank did the same I/O: its min, mean and max agree. */
    assert_true(per_rank(io, "bytes_written", "min") == IO_BYTES);
    assert_true(per_rank(io, "bytes_written", "mean") == IO_BYTES);
    assert_true(per_rank(io, "bytes_written", "max") == IO_BYTES);
    assert_true(per_rank(io, "calls", "sum") == RANKS * IO_CALLS);
    /* Times: the sum of the ranks' is the region's, the max at least the mean. */
    double sum = per_rank(compute, "wall_seconds", "sum");
    assert_true(fabs(sum - json_object_get_double_member(compute, "wall_seconds")) < 1e-5);
    assert_true(per_rank(compute, "wall_seconds", "max") >=
                per_rank(compute, "wall_seconds", "mean"));
    assert_true(per_rank(compute, "wall_seconds", "mean") >=
                per_rank(compute, "wall_seconds", "min"));
    test_report_free(&rep);
    g_free(joint);
    test_run_clear(&r);
}

TEST_MAIN(cmocka_unit_test_setup_teardown(test_job_regions, test_make_dir, test_remove_dir))
