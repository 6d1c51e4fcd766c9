/* The files of an MPI job's report: mpi-file-patterns (file_patterns.c)
 * run on 4 ranks under `vigil run`, with each rank's own report too
 * (VIGIL_REPORT_PER_RANK=1), and every file's MPI-IO counts, bytes and
 * ranks checked against what the program did, exactly; both levels (the
 * bytes asked of MPI-IO and those POSIX moved, per rank); the job's
 * timeline against the ranks'. Times are not
 * compared with anything but each other (fastest <= slowest, a variance
 * that fits between them): they are the machine's.
 *
 * Needs VIGIL_CLI and VIGIL_MPI_FILE_PATTERNS, which meson test sets. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "test_report.h"
#include "test_support.h"
#include "mpi_job.h"

#define RANKS MPI_JOB_RANKS
#define B     ((gint64)4096) /* file_patterns.c's block */

struct job {
    struct test_report joint;
    struct test_report own[RANKS]; /* by rank */
    char *dir;
};

/* Runs the workload on 4 ranks with JSON reports in `dir`: the job's and
 * each rank's own. */
static void run_patterns(const char *dir, struct job *job)
{
    const char *vars[] = {"VIGIL_REPORT_PER_RANK=1", NULL};
    struct test_run r =
        mpi_job_run(dir, vars, test_env_or_fail("VIGIL_MPI_FILE_PATTERNS"), dir, NULL);
    test_assert_status(&r, 0, "mpi-file-patterns under vigil");
    test_run_clear(&r);

    memset(job, 0, sizeof *job);
    job->dir = g_strdup(dir);
    mpi_job_reports_load(dir, &job->joint, job->own);
}

static void job_free(struct job *job)
{
    mpi_job_reports_free(&job->joint, job->own);
    g_free(job->dir);
}

/* The entry of DIR/name in a report's "files"; fails when there is none or
 * more than one. */
static JsonNode *file_entry(const struct test_report *rep, const char *dir, const char *name)
{
    char *path = g_build_filename(dir, name, NULL);
    JsonArray *files = json_node_get_array(test_report_node(rep, "files"));
    JsonNode *found = NULL;
    for (guint i = 0; i < json_array_get_length(files); i++) {
        JsonNode *f = json_array_get_element(files, i);
        if (g_strcmp0(test_json_string(f, rep->path, "path"), path) == 0) {
            if (found != NULL)
                fail_msg("%s: %s is listed twice", rep->path, path);
            found = f;
        }
    }
    if (found == NULL)
        fail_msg("%s: no file %s", rep->path, path);
    g_free(path);
    return found;
}

static bool is_null(JsonNode *file, const char *member)
{
    JsonNode *node = test_json_node(file, member);
    if (node == NULL)
        fail_msg("a file without \"%s\"", member);
    return JSON_NODE_HOLDS_NULL(node);
}

/* The kinds of MPI-IO call, as the report names them. */
enum kind { INDEP, COLL, SPLIT, NB, KINDS };
static const char *const kind_names[KINDS] = {"indep", "coll", "split", "nb"};

/* The MPI-IO counts a file must have: reads and writes by kind. */
struct kinds {
    gint64 reads[KINDS], writes[KINDS];
    gint64 read_bytes, written_bytes;
};

static void check_count(JsonNode *file, const char *where, const char *name, gint64 want)
{
    gint64 got = test_json_int(file, where, name);
    if (got != want)
        fail_msg("%s: %s is %" G_GINT64_FORMAT ", not %" G_GINT64_FORMAT, where, name, got, want);
}

static void check_mpiio(JsonNode *file, const char *where, struct kinds want)
{
    if (is_null(file, "mpiio"))
        fail_msg("%s: \"mpiio\" is null", where);
    for (int k = 0; k < KINDS; k++) {
        char *reads = g_strdup_printf("mpiio.%s_reads", kind_names[k]);
        char *writes = g_strdup_printf("mpiio.%s_writes", kind_names[k]);
        check_count(file, where, reads, want.reads[k]);
        check_count(file, where, writes, want.writes[k]);
        g_free(reads);
        g_free(writes);
    }
    check_count(file, where, "mpiio.read_bytes", want.read_bytes);
    check_count(file, where, "mpiio.written_bytes", want.written_bytes);
    /* The outermost level of a file used only through MPI-IO is MPI-IO's. */
    assert_int_equal(test_json_int(file, where, "read_bytes"), want.read_bytes);
    assert_int_equal(test_json_int(file, where, "written_bytes"), want.written_bytes);
    for (const char *const *t = (const char *const[]){"mpiio.read_time_s", "mpiio.write_time_s",
                                                      "mpiio.meta_time_s", NULL};
         *t != NULL; t++)
        if (test_json_number(file, where, *t) < 0)
            fail_msg("%s: %s is negative", where, *t);
}

/* The counts of a file every rank read one block of and `writes` blocks
 * were written to, all through calls of `kind`. */
static struct kinds one_kind(enum kind kind, gint64 writes)
{
    struct kinds k = {.read_bytes = RANKS * B, .written_bytes = writes * B};
    k.reads[kind] = RANKS;
    k.writes[kind] = writes;
    return k;
}

/* A shared file's ranks: all 4, the fastest and the slowest with the bytes
 * `bytes_of(rank)` says that rank moved, and variances that fit. */
static void check_shared(JsonNode *file, const char *where, gint64 (*bytes_of)(gint64 rank),
                         double bytes_variance)
{
    if (is_null(file, "ranks"))
        fail_msg("%s: \"ranks\" is null in a job's report", where);
    assert_int_equal(test_json_int(file, where, "ranks.count"), RANKS);
    JsonNode *shared = test_json_node(file, "ranks.shared");
    assert_true(shared != NULL && json_node_get_boolean(shared));
    gint64 fastest = test_json_int(file, where, "ranks.fastest_rank");
    gint64 slowest = test_json_int(file, where, "ranks.slowest_rank");
    assert_in_range(fastest, 0, RANKS - 1);
    assert_in_range(slowest, 0, RANKS - 1);
    assert_int_equal(test_json_int(file, where, "ranks.fastest_bytes"), bytes_of(fastest));
    assert_int_equal(test_json_int(file, where, "ranks.slowest_bytes"), bytes_of(slowest));
    double fastest_s = test_json_number(file, where, "ranks.fastest_s");
    double slowest_s = test_json_number(file, where, "ranks.slowest_s");
    if (!(0 <= fastest_s && fastest_s <= slowest_s))
        fail_msg("%s: fastest %.6f s, slowest %.6f s", where, fastest_s, slowest_s);
    /* A variance is at most a quarter of the range squared (Popoviciu),
     * with room for the 6 decimals the times are printed with. */
    double variance = test_json_number(file, where, "ranks.time_variance_s2");
    double half = (slowest_s - fastest_s) / 2 + 1e-6;
    if (!(variance >= 0 && variance <= half * half * 1.000001))
        fail_msg("%s: time variance %g s2 for times from %.6f to %.6f s", where, variance,
                 fastest_s, slowest_s);
    double got = test_json_number(file, where, "ranks.bytes_variance");
    if (fabs(got - bytes_variance) > 1e-6 * bytes_variance)
        fail_msg("%s: bytes variance %.6e, not %.6e", where, got, bytes_variance);
}

/* A file of one rank's own. */
static void check_own(JsonNode *file, const char *where, gint64 rank, gint64 bytes)
{
    if (is_null(file, "ranks"))
        fail_msg("%s: \"ranks\" is null in a job's report", where);
    assert_int_equal(test_json_int(file, where, "ranks.count"), 1);
    JsonNode *shared = test_json_node(file, "ranks.shared");
    assert_true(shared != NULL && !json_node_get_boolean(shared));
    assert_int_equal(test_json_int(file, where, "ranks.fastest_rank"), rank);
    assert_int_equal(test_json_int(file, where, "ranks.slowest_rank"), rank);
    assert_int_equal(test_json_int(file, where, "ranks.fastest_bytes"), bytes);
    assert_int_equal(test_json_int(file, where, "ranks.slowest_bytes"), bytes);
    assert_true(test_json_number(file, where, "ranks.time_variance_s2") == 0);
    assert_true(test_json_number(file, where, "ranks.bytes_variance") == 0);
}

static gint64 coll_bytes(gint64 rank)
{
    (void)rank;
    return 3 * B; /* 2 blocks written, 1 read */
}

static gint64 indep_bytes(gint64 rank)
{
    return (rank + 2) * B; /* rank + 1 blocks written, 1 read */
}

static gint64 two_blocks(gint64 rank)
{
    (void)rank;
    return 2 * B;
}

static gint64 three_blocks(gint64 rank)
{
    (void)rank;
    return 3 * B;
}

static gint64 posix_bytes(JsonNode *file, const char *where)
{
    return test_json_int(file, where, "posix.read_bytes") +
           test_json_int(file, where, "posix.written_bytes");
}

/* Both levels: what each rank asked of MPI-IO, and what it moved through
 * POSIX. In the collective writes of coll.dat the aggregators moved every
 * byte (a two-phase collective: which ranks aggregate is MPI's choice), so
 * only the sums over the ranks are known, and they are exact: the blocks
 * cover the file without holes. In indep.dat each rank moved its own. The
 * job's file names the ranks that moved the most and the fewest. */
static void check_posix_levels(const struct job *job)
{
    gint64 coll_read = 0, coll_written = 0, most = -1, least = -1;
    gint64 most_rank = -1, least_rank = -1;
    for (int rank = 0; rank < RANKS; rank++) {
        const struct test_report *own = &job->own[rank];
        JsonNode *f = file_entry(own, job->dir, "coll.dat");
        coll_read += test_json_int(f, own->path, "posix.read_bytes");
        coll_written += test_json_int(f, own->path, "posix.written_bytes");
        gint64 bytes = posix_bytes(f, own->path);
        if (most < 0 || bytes > most) {
            most = bytes;
            most_rank = rank;
        }
        if (least < 0 || bytes < least) {
            least = bytes;
            least_rank = rank;
        }
        f = file_entry(own, job->dir, "indep.dat");
        assert_int_equal(test_json_int(f, own->path, "posix.read_bytes"),
                         test_json_int(f, own->path, "mpiio.read_bytes"));
        assert_int_equal(test_json_int(f, own->path, "posix.written_bytes"),
                         test_json_int(f, own->path, "mpiio.written_bytes"));
        /* Nonblocking MPI-IO: Open MPI's OMPIO moves it with POSIX aio and
         * collects it inside MPI_Wait; its POSIX level is the rank's all
         * the same (it was 0 before aio was counted). */
        f = file_entry(own, job->dir, "nb.dat");
        assert_int_equal(test_json_int(f, own->path, "posix.read_bytes"),
                         test_json_int(f, own->path, "mpiio.read_bytes"));
        assert_int_equal(test_json_int(f, own->path, "posix.written_bytes"),
                         test_json_int(f, own->path, "mpiio.written_bytes"));
    }
    assert_int_equal(coll_read, RANKS * B);
    assert_int_equal(coll_written, 2 * RANKS * B);
    JsonNode *f = file_entry(&job->joint, job->dir, "coll.dat");
    const char *where = "the job's coll.dat";
    assert_int_equal(test_json_int(f, where, "posix.read_bytes"), RANKS * B);
    assert_int_equal(test_json_int(f, where, "posix.written_bytes"), 2 * RANKS * B);
    assert_int_equal(test_json_int(f, where, "ranks.most_posix_rank"), most_rank);
    assert_int_equal(test_json_int(f, where, "ranks.most_posix_bytes"), most);
    assert_int_equal(test_json_int(f, where, "ranks.least_posix_rank"), least_rank);
    assert_int_equal(test_json_int(f, where, "ranks.least_posix_bytes"), least);
    /* The largest offsets are the ranks' largest: the end of the file. */
    assert_int_equal(test_json_int(f, where, "posix.max_written_offset"), 2 * RANKS * B - 1);
    assert_int_equal(test_json_int(f, where, "posix.max_read_offset"), RANKS * B - 1);
    f = file_entry(&job->joint, job->dir, "indep.dat");
    assert_int_equal(test_json_int(f, "the job's indep.dat", "posix.max_written_offset"),
                     RANKS * (RANKS + 1) / 2 * B - 1);
    assert_int_equal(test_json_int(f, "the job's indep.dat", "posix.writes"),
                     RANKS * (RANKS + 1) / 2);
    assert_int_equal(test_json_int(f, "the job's indep.dat", "posix.write_size_hist.2"),
                     RANKS * (RANKS + 1) / 2); /* 4 KiB: the 1K-10K bin */
    assert_int_equal(test_json_int(f, "the job's indep.dat", "posix.common_sizes.0.size"), B);
    assert_int_equal(test_json_int(f, "the job's indep.dat", "posix.common_sizes.0.count"),
                     RANKS * (RANKS + 1) / 2 + RANKS); /* the writes and the reads */
    assert_int_equal(test_json_int(f, "the job's indep.dat", "ranks.most_posix_rank"), RANKS - 1);
    assert_int_equal(test_json_int(f, "the job's indep.dat", "ranks.most_posix_bytes"),
                     (RANKS + 1) * B);
    assert_int_equal(test_json_int(f, "the job's indep.dat", "ranks.least_posix_rank"), 0);
    assert_int_equal(test_json_int(f, "the job's indep.dat", "ranks.least_posix_bytes"), 2 * B);
}

static gint64 array_sum(JsonNode *root, const char *where, const char *dotted)
{
    JsonNode *node = test_json_node(root, dotted);
    if (node == NULL || !JSON_NODE_HOLDS_ARRAY(node))
        fail_msg("%s: no array %s", where, dotted);
    JsonArray *a = json_node_get_array(node);
    gint64 sum = 0;
    for (guint i = 0; i < json_array_get_length(a); i++)
        sum += json_array_get_int_element(a, i);
    return sum;
}

/* A layer's bytes ("posix" or "stdio") of a file; 0 when it is null. */
static gint64 layer_bytes(JsonNode *file, const char *where, const char *layer, const char *rw)
{
    JsonNode *node = test_json_node(file, layer);
    if (node == NULL || JSON_NODE_HOLDS_NULL(node))
        return 0;
    char *dotted = g_strdup_printf("%s.%s_bytes", layer, rw);
    gint64 bytes = test_json_int(file, where, dotted);
    g_free(dotted);
    return bytes;
}

/* A report's timeline holds the bytes POSIX and stdio moved, those under
 * MPI-IO calls too: what its files' layers say they moved. */
static void check_timeline_is_the_files(const struct test_report *rep)
{
    JsonNode *root = json_node_init_object(json_node_alloc(), rep->root);
    JsonArray *files = json_node_get_array(test_json_node(root, "files"));
    gint64 read = 0, written = 0;
    for (guint i = 0; i < json_array_get_length(files); i++) {
        JsonNode *f = json_array_get_element(files, i);
        read +=
            layer_bytes(f, rep->path, "posix", "read") + layer_bytes(f, rep->path, "stdio", "read");
        written += layer_bytes(f, rep->path, "posix", "written") +
                   layer_bytes(f, rep->path, "stdio", "written");
    }
    assert_int_equal(array_sum(root, rep->path, "timeline.read_bytes"), read);
    assert_int_equal(array_sum(root, rep->path, "timeline.written_bytes"), written);
    json_node_unref(root);
}

/* The job lists every file ("files_total"), and its timeline holds every
 * rank's bytes, at the widest rank's bin width; each timeline holds what
 * its report's files' layers moved. */
static void check_timeline(const struct job *job)
{
    check_timeline_is_the_files(&job->joint);
    for (int rank = 0; rank < RANKS; rank++)
        check_timeline_is_the_files(&job->own[rank]);
    JsonNode *root = json_node_init_object(json_node_alloc(), job->joint.root);
    const char *where = job->joint.path;
    assert_int_equal(test_json_int(root, where, "files_total"),
                     json_array_get_length(json_node_get_array(test_json_node(root, "files"))));
    gint64 read = 0, written = 0;
    double widest = 0;
    for (int rank = 0; rank < RANKS; rank++) {
        JsonNode *own = json_node_init_object(json_node_alloc(), job->own[rank].root);
        read += array_sum(own, job->own[rank].path, "timeline.read_bytes");
        written += array_sum(own, job->own[rank].path, "timeline.written_bytes");
        double bin_s = test_json_number(own, job->own[rank].path, "timeline.bin_s");
        widest = bin_s > widest ? bin_s : widest;
        json_node_unref(own);
    }
    assert_int_equal(array_sum(root, where, "timeline.read_bytes"), read);
    assert_int_equal(array_sum(root, where, "timeline.written_bytes"), written);
    assert_true(test_json_number(root, where, "timeline.bin_s") == widest);
    json_node_unref(root);
}

static void test_job_files(void **state)
{
    const char *dir = *state;
    struct job job;
    run_patterns(dir, &job);
    const struct test_report *rep = &job.joint;

    /* The shared files: every rank read one block of each, and `writes`
     * blocks were written, all through one kind of call; what the ranks
     * moved. */
    static const struct {
        const char *name;
        enum kind kind;
        gint64 writes;
        gint64 (*bytes_of)(gint64 rank);
        double bytes_variance;
    } shared[] = {
        {"coll.dat", COLL, 2 * RANKS, coll_bytes, 0},
        /* Ranks moved (r + 2) blocks: the variance of 0..3, in blocks. */
        {"indep.dat", INDEP, RANKS * (RANKS + 1) / 2, indep_bytes,
         (double)B * B * (RANKS * RANKS - 1) / 12.0},
        {"split.dat", SPLIT, RANKS, two_blocks, 0},
        {"nb.dat", NB, 2 * RANKS, three_blocks, 0},
    };
    JsonNode *f;
    for (size_t i = 0; i < G_N_ELEMENTS(shared); i++) {
        f = file_entry(rep, dir, shared[i].name);
        check_mpiio(f, shared[i].name, one_kind(shared[i].kind, shared[i].writes));
        check_shared(f, shared[i].name, shared[i].bytes_of, shared[i].bytes_variance);
    }

    for (gint64 rank = 0; rank < RANKS; rank++) {
        char name[32];
        if (rank < RANKS / 2) {
            snprintf(name, sizeof name, "own-%d.dat", (int)rank);
            f = file_entry(rep, dir, name);
            check_mpiio(f, name, (struct kinds){.writes[INDEP] = 3, .written_bytes = 3 * B});
            check_own(f, name, rank, 3 * B);
        } else {
            snprintf(name, sizeof name, "posix-%d.dat", (int)rank);
            f = file_entry(rep, dir, name);
            assert_true(is_null(f, "mpiio"));
            assert_int_equal(test_json_int(f, name, "written_bytes"), 2 * B);
            check_own(f, name, rank, 2 * B);
        }
    }

    /* Every rank wrote a line to its standard output: the job's <stdout>
     * has the four ranks' bytes, and is no shared file (each rank's stream
     * is its own), so it is not in the text's shared files either. */
    JsonNode *out = NULL;
    JsonArray *all = json_node_get_array(test_report_node(rep, "files"));
    for (guint i = 0; i < json_array_get_length(all); i++)
        if (g_strcmp0(test_json_string(json_array_get_element(all, i), rep->path, "path"),
                      "<stdout>") == 0)
            out = json_array_get_element(all, i);
    if (out == NULL)
        fail_msg("%s: no files entry for <stdout>", rep->path);
    assert_int_equal(test_json_int(out, "<stdout>", "ranks.count"), RANKS);
    assert_int_equal(test_json_int(out, "<stdout>", "written_bytes"), RANKS * 12);
    JsonNode *stream_shared = test_json_node(out, "ranks.shared");
    assert_true(stream_shared != NULL && !json_node_get_boolean(stream_shared));

    /* Each rank's own report: its own share, at the MPI-IO level, and no
     * "ranks" (that is the job's). */
    for (int rank = 0; rank < RANKS; rank++) {
        const struct test_report *own = &job.own[rank];
        f = file_entry(own, dir, "coll.dat");
        check_mpiio(
            f, own->path,
            (struct kinds){
                .reads[COLL] = 1, .writes[COLL] = 2, .read_bytes = B, .written_bytes = 2 * B});
        assert_true(is_null(f, "ranks"));
        f = file_entry(own, dir, "indep.dat");
        check_mpiio(f, own->path,
                    (struct kinds){.reads[INDEP] = 1,
                                   .writes[INDEP] = rank + 1,
                                   .read_bytes = B,
                                   .written_bytes = (rank + 1) * B});
    }
    check_posix_levels(&job);
    check_timeline(&job);
    job_free(&job);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, test_make_dir, test_remove_dir)
    const struct CMUnitTest tests[] = {
        T(test_job_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
