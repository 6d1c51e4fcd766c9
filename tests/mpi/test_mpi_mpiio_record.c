/* Each file's MPI-IO record (Darshan's MPIIO_* counters: opens, hints,
 * views, syncs, mode, read/write switches, the size histograms, the common
 * sizes, the slowest read and write): mpi-mpiio-record (mpiio_record.c) run
 * on 4 ranks under `vigil run`, each rank's own report
 * (VIGIL_REPORT_PER_RANK=1) and the job's checked against the counts the
 * program's calls give, derived by hand below. The slowest calls' times are
 * the machine's: only their sizes are checked (one of the calls') and that
 * they took some time.
 *
 * Needs VIGIL_CLI and VIGIL_MPI_MPIIO_RECORD, which meson test sets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <mpi.h>

#include "test_report.h"
#include "test_support.h"
#include "mpi_job.h"

#define RANKS MPI_JOB_RANKS
#define BINS  10

struct job {
    struct test_report joint;
    struct test_report own[RANKS]; /* by rank */
};

static void run_job(const char *dir, struct job *job)
{
    const char *vars[] = {"VIGIL_REPORT_PER_RANK=1", NULL};
    struct test_run r =
        mpi_job_run(dir, vars, test_env_or_fail("VIGIL_MPI_MPIIO_RECORD"), dir, NULL);
    test_assert_status(&r, 0, "mpi-mpiio-record under vigil");
    test_run_clear(&r);
    memset(job, 0, sizeof *job);
    mpi_job_reports_load(dir, &job->joint, job->own);
}

static void job_free(struct job *job)
{
    mpi_job_reports_free(&job->joint, job->own);
}

/* The "mpiio" of DIR/name in a report's "files", which must be there once. */
static JsonNode *mpiio_of(const struct test_report *rep, const char *dir, const char *name)
{
    char *path = g_build_filename(dir, name, NULL);
    JsonArray *files = json_node_get_array(test_report_node(rep, "files"));
    JsonNode *found = NULL;
    for (guint i = 0; i < json_array_get_length(files); i++) {
        JsonNode *f = json_array_get_element(files, i);
        if (g_strcmp0(test_json_string(f, rep->path, "path"), path) != 0)
            continue;
        if (found != NULL)
            fail_msg("%s: %s is listed twice", rep->path, path);
        found = test_json_node(f, "mpiio");
    }
    if (found == NULL || JSON_NODE_HOLDS_NULL(found))
        fail_msg("%s: no MPI-IO record of %s", rep->path, path);
    g_free(path);
    return found;
}

struct common {
    gint64 size, count;
};

/* What a file's record must say; `sizes` ends at a 0 size. */
struct want {
    gint64 indep_opens, coll_opens, hints, views, syncs, rw_switches, mode;
    gint64 indep_reads, indep_writes, coll_reads, coll_writes;
    gint64 read_hist[BINS], write_hist[BINS];
    struct common sizes[5];
    gint64 read_sizes[3], write_sizes[9]; /* what the slowest may be; ends at -1 */
};

static void check_count(JsonNode *m, const char *where, const char *name, gint64 want)
{
    gint64 got = test_json_int(m, where, name);
    if (got != want)
        fail_msg("%s: %s is %" G_GINT64_FORMAT ", not %" G_GINT64_FORMAT, where, name, got, want);
}

/* The slowest call of a direction: one of `sizes` (none when the first is
 * -1), and some time when there was one. */
static void check_slowest(JsonNode *m, const char *where, const char *rw, const gint64 *sizes)
{
    char *time_name = g_strdup_printf("max_%s_time_s", rw);
    char *size_name = g_strdup_printf("max_%s_time_size", rw);
    double time_s = test_json_number(m, where, time_name);
    gint64 size = test_json_int(m, where, size_name);
    bool known = sizes[0] < 0 && size == 0 && time_s == 0;
    for (int i = 0; sizes[i] >= 0; i++)
        known |= size == sizes[i] && time_s > 0;
    if (!known)
        fail_msg("%s: %s %.6f s of %" G_GINT64_FORMAT " bytes: no call of this program", where, rw,
                 time_s, size);
    g_free(time_name);
    g_free(size_name);
}

/* The record `m` against `w`, its counts times `ranks`. */
static void check_record(JsonNode *m, const char *where, const struct want *w, gint64 ranks)
{
    static const struct {
        const char *name;
        size_t offset;
    } counts[] = {
#define COUNT(name) {#name, offsetof(struct want, name)}
        COUNT(indep_opens), COUNT(coll_opens),  COUNT(hints),       COUNT(views),
        COUNT(syncs),       COUNT(rw_switches), COUNT(indep_reads), COUNT(indep_writes),
        COUNT(coll_reads),  COUNT(coll_writes),
#undef COUNT
    };
    for (size_t i = 0; i < G_N_ELEMENTS(counts); i++)
        check_count(m, where, counts[i].name,
                    ranks * *(const gint64 *)((const char *)w + counts[i].offset));
    check_count(m, where, "mode", w->mode);
    for (int bin = 0; bin < BINS; bin++) {
        char name[64];
        snprintf(name, sizeof name, "read_size_hist.%d", bin);
        check_count(m, where, name, ranks * w->read_hist[bin]);
        snprintf(name, sizeof name, "write_size_hist.%d", bin);
        check_count(m, where, name, ranks * w->write_hist[bin]);
    }
    JsonArray *sizes = json_node_get_array(test_json_node(m, "common_sizes"));
    guint n = 0;
    while (w->sizes[n].size != 0)
        n++;
    if (json_array_get_length(sizes) != n)
        fail_msg("%s: %u common sizes, not %u", where, json_array_get_length(sizes), n);
    for (guint i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "common_sizes.%u.size", i);
        check_count(m, where, name, w->sizes[i].size);
        snprintf(name, sizeof name, "common_sizes.%u.count", i);
        check_count(m, where, name, ranks * w->sizes[i].count);
        snprintf(name, sizeof name, "common_sizes.%u.exact", i);
        JsonNode *exact = test_json_node(m, name);
        if (exact == NULL || !JSON_NODE_HOLDS_VALUE(exact) || !json_node_get_boolean(exact))
            fail_msg("%s: %s is not true", where, name);
    }
    check_slowest(m, where, "read", w->read_sizes);
    check_slowest(m, where, "write", w->write_sizes);
}

/* DIR/record.dat, per rank (mpiio_record.c's calls):
 * - opens: 1, on MPI_COMM_WORLD (4 ranks): collective; with an info: a hint
 * - hints: the open's, set_info's, the first set_view's: 3
 * - views: 2; syncs: 1
 * - writes: 8 + 1 independent (write_at), 2 collective (write_at_all);
 *   reads: 1 independent (read_at), 1 collective (read_at_all)
 * - write sizes 0, 100, 101, 1024, 1025, 10240, 10240, 10241, 4096, 4096,
 *   100: bins 0-100 {0, 100, 100}, 100-1K {101, 1024}, 1K-10K {1025,
 *   10240, 10240, 4096, 4096}, 10K-100K {10241}; read sizes 1024 (100-1K),
 *   4096 (1K-10K)
 * - common sizes (reads and writes): 4096 x 3, then 10240, 1024 and 100
 *   x 2 each (equal counts: the larger first, as Darshan); 0 never listed
 * - rw_switches: writes, then read (1), write (2), read (3). */
static const struct want record_dat = {
    .coll_opens = 1,
    .hints = 3,
    .views = 2,
    .syncs = 1,
    .rw_switches = 3,
    .mode = MPI_MODE_CREATE | MPI_MODE_RDWR,
    .indep_reads = 1,
    .indep_writes = 9,
    .coll_reads = 1,
    .coll_writes = 2,
    .read_hist = {0, 1, 1},
    .write_hist = {3, 2, 5, 1},
    .sizes = {{4096, 3}, {10240, 2}, {1024, 2}, {100, 2}, {0, 0}},
    .read_sizes = {1024, 4096, -1},
    .write_sizes = {0, 100, 101, 1024, 1025, 10240, 10241, 4096, -1},
};

/* DIR/self-R.dat: one open on MPI_COMM_SELF (independent), no info, two
 * writes of 1 MiB (the 100K-1M bin: its upper edge) and 1 MiB + 1 (1M-4M),
 * the larger first on equal counts. */
static const struct want self_dat = {
    .indep_opens = 1,
    .mode = MPI_MODE_CREATE | MPI_MODE_WRONLY,
    .indep_writes = 2,
    .write_hist = {0, 0, 0, 0, 1, 1},
    .sizes = {{1048577, 1}, {1048576, 1}, {0, 0}},
    .read_sizes = {-1},
    .write_sizes = {1048576, 1048577, -1},
};

static void test_record(void **state)
{
    const char *dir = *state;
    struct job job;
    run_job(dir, &job);
    double slowest_s = 0;
    gint64 slowest_sizes[RANKS];
    for (int rank = 0; rank < RANKS; rank++) {
        const struct test_report *own = &job.own[rank];
        JsonNode *m = mpiio_of(own, dir, "record.dat");
        check_record(m, own->path, &record_dat, 1);
        double time_s = test_json_number(m, own->path, "max_write_time_s");
        slowest_s = time_s > slowest_s ? time_s : slowest_s;
        slowest_sizes[rank] = test_json_int(m, own->path, "max_write_time_size");
        char name[32];
        snprintf(name, sizeof name, "self-%d.dat", rank);
        check_record(mpiio_of(own, dir, name), own->path, &self_dat, 1);
        /* The job's: one rank's file, as that rank said. */
        check_record(mpiio_of(&job.joint, dir, name), job.joint.path, &self_dat, 1);
    }
    /* The job's record.dat: every count summed over the 4 ranks (each
     * rank listed each common size with its exact count: the sums are
     * exact), the mode rank 0's, the slowest write the slowest rank's. */
    JsonNode *m = mpiio_of(&job.joint, dir, "record.dat");
    check_record(m, job.joint.path, &record_dat, RANKS);
    assert_true(test_json_number(m, job.joint.path, "max_write_time_s") == slowest_s);
    gint64 size = test_json_int(m, job.joint.path, "max_write_time_size");
    bool a_slowest = false;
    for (int rank = 0; rank < RANKS; rank++) {
        JsonNode *own = mpiio_of(&job.own[rank], dir, "record.dat");
        a_slowest |= test_json_number(own, job.own[rank].path, "max_write_time_s") == slowest_s &&
                     slowest_sizes[rank] == size;
    }
    assert_true(a_slowest);
    job_free(&job);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, test_make_dir, test_remove_dir)
    const struct CMUnitTest tests[] = {
        T(test_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
