/* Tests of libvigil-preload.so under MPI: jobs of 4 ranks started with
 *
 *     mpirun --oversubscribe -np 4 $VIGIL_CLI run --report=json:DIR/report-%p.json -- PROGRAM…
 *
 * and their reports checked against what the programs know they did: the
 * joint report rank 0 writes at MPI_Finalize, the ranks' own reports when
 * asked for, and the report of a rank that never reaches MPI_Finalize.
 *
 * The energy tests run a fake vigild (tests/support/test_fake_vigild.h) in a
 * thread of this test, which every rank registers with.
 *
 * Needs VIGIL_CLI, VIGIL_MPI_IO_LEVELS, VIGIL_MPI_CHILDREN,
 * VIGIL_MPI_NONBLOCKING and VIGIL_MPI_EARLY_EXIT, which meson test sets.
 * Every test works in a fresh temporary directory, removed at its end. */
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
#include "test_fake_vigild.h"
#include "mpi_job.h"

#define RANKS MPI_JOB_RANKS

/* ---- reports ------------------------------------------------------------------------------ */

/* A field ("calls", "bytes", "errors") of an MPI-IO operation: see
 * test_report_op. */
static gint64 mpiio(const struct test_report *rep, const char *op, const char *field)
{
    return test_report_op(rep, "mpiio", op, field);
}

static bool is_joint(const struct test_report *rep)
{
    return json_object_has_member(rep->root, "ranks");
}

static gint compare_paths(gconstpointer a, gconstpointer b)
{
    return g_strcmp0(*(char *const *)a, *(char *const *)b);
}

/* The paths of DIR/report-*.json, sorted. */
static GPtrArray *report_paths(const char *dir)
{
    GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
    GDir *d = g_dir_open(dir, 0, NULL);
    assert_non_null(d);
    for (const char *name = g_dir_read_name(d); name != NULL; name = g_dir_read_name(d))
        if (g_str_has_prefix(name, "report-") && g_str_has_suffix(name, ".json"))
            g_ptr_array_add(paths, g_build_filename(dir, name, NULL));
    g_dir_close(d);
    g_ptr_array_sort(paths, compare_paths);
    return paths;
}

/* The one report of the job, which must be the joint one. */
static struct test_report the_joint_report(const char *dir)
{
    GPtrArray *paths = report_paths(dir);
    if (paths->len != 1)
        fail_msg("%u report files in %s, not 1 (the joint report)", paths->len, dir);
    struct test_report rep = test_report_load(g_ptr_array_index(paths, 0));
    g_ptr_array_free(paths, TRUE);
    if (!is_joint(&rep))
        fail_msg("%s is not a joint report (no \"ranks\")", rep.path);
    assert_int_equal(test_report_int(&rep, "ranks"), RANKS);
    return rep;
}

/* ---- the four levels ---------------------------------------------------------------------- */

/* What mpi-io-levels says it did: the one line of JSON rank 0 prints. */
struct workload {
    JsonParser *parser;
    JsonNode *root;
    JsonObject *calls;
    gint64 bytes_written, bytes_read;
};

static struct workload workload_parse(const char *out)
{
    const char *line = strstr(out, "{\"level\":");
    if (line == NULL)
        fail_msg("mpi-io-levels printed no totals:\n%s", out);
    const char *end = strchr(line, '\n');
    struct workload w = {.parser = json_parser_new()};
    GError *error = NULL;
    if (!json_parser_load_from_data(w.parser, line, end ? end - line : -1, &error))
        fail_msg("mpi-io-levels' totals are not JSON: %s", error->message);
    w.root = json_parser_get_root(w.parser);
    w.calls = test_json_object(w.root, "mpi-io-levels' totals", "calls");
    w.bytes_written = test_json_int(w.root, "mpi-io-levels' totals", "bytes_written");
    w.bytes_read = test_json_int(w.root, "mpi-io-levels' totals", "bytes_read");
    return w;
}

static const char *const write_ops[] = {"write_at", "write_at_all", "write", "write_all"};
static const char *const read_ops[] = {"read_at", "read_at_all", "read", "read_all"};

/* The rank metrics of report.h (PRELOAD_RANK_METRICS), every one of which
 * the joint report has. */
static const char *const rank_metrics[] = {
    "runtime_ms",          "cpu_seconds",         "io_time_seconds",     "io_bytes_read",
    "io_bytes_written",    "network_bytes",       "posix_bytes_read",    "posix_bytes_written",
    "stdio_bytes_read",    "stdio_bytes_written", "mpiio_bytes_read",    "mpiio_bytes_written",
    "posix_calls",         "stdio_calls",         "mpiio_calls",         "activities_observed",
    "activities_recorded", "activities_dropped",  "activities_excluded",
};

/* Values are printed with 6 decimals: allow for that rounding. */
static void assert_close(double a, double b, const char *what)
{
    double slack = 1e-5 + 1e-12 * fabs(b);
    if (fabs(a - b) > slack)
        fail_msg("%s: %.6f, not %.6f", what, a, b);
}

static void check_per_rank(const struct test_report *rep)
{
    JsonObject *per_rank = test_report_object(rep, "per_rank");
    assert_int_equal(json_object_get_size(per_rank), G_N_ELEMENTS(rank_metrics));
    for (size_t m = 0; m < G_N_ELEMENTS(rank_metrics); m++) {
        char *base = g_strdup_printf("per_rank.%s", rank_metrics[m]);
        char *p_min = g_strconcat(base, ".min", NULL), *p_mean = g_strconcat(base, ".mean", NULL);
        char *p_max = g_strconcat(base, ".max", NULL), *p_sum = g_strconcat(base, ".sum", NULL);
        char *p_rank = g_strconcat(base, ".max_rank", NULL);
        double min = test_report_number(rep, p_min), mean = test_report_number(rep, p_mean);
        double max = test_report_number(rep, p_max), sum = test_report_number(rep, p_sum);
        gint64 max_rank = test_report_int(rep, p_rank);
        if (min > mean + 1e-6 || mean > max + 1e-6)
            fail_msg("%s: not min <= mean <= max: %.6f, %.6f, %.6f", base, min, mean, max);
        assert_close(mean * RANKS, sum, base);
        if (max_rank < 0 || max_rank >= RANKS)
            fail_msg("%s: max_rank %" G_GINT64_FORMAT " is no rank of %d", base, max_rank, RANKS);
        g_free(p_min);
        g_free(p_mean);
        g_free(p_max);
        g_free(p_sum);
        g_free(p_rank);
        g_free(base);
    }
}

static void check_level(const char *dir, int level)
{
    char *data = g_build_filename(dir, "data", NULL);
    char level_text[16];
    snprintf(level_text, sizeof level_text, "%d", level);
    struct test_run r =
        mpi_job_run(dir, NULL, test_env_or_fail("VIGIL_MPI_IO_LEVELS"), "--level", level_text,
                    "--blocks", "16", "--block-bytes", "4096", "--file", data, NULL);
    test_assert_status(&r, 0, "mpi-io-levels under vigil");
    struct workload w = workload_parse(r.out);
    assert_int_equal(test_json_int(w.root, "mpi-io-levels' totals", "level"), level);
    assert_int_equal(test_json_int(w.root, "mpi-io-levels' totals", "ranks"), RANKS);
    assert_int_equal(w.bytes_written, (gint64)RANKS * 16 * 4096);
    assert_int_equal(w.bytes_read, w.bytes_written);

    struct test_report rep = the_joint_report(dir);
    /* Every call the workload made, counted as many times as it made it… */
    JsonObjectIter it;
    const char *op;
    JsonNode *value;
    json_object_iter_init(&it, w.calls);
    while (json_object_iter_next(&it, &op, &value))
        if (mpiio(&rep, op, "calls") != json_node_get_int(value))
            fail_msg("level %d: %s: %" G_GINT64_FORMAT " %s calls reported, %" G_GINT64_FORMAT
                     " made",
                     level, rep.path, mpiio(&rep, op, "calls"), op, json_node_get_int(value));
    /* …and no call it did not make. */
    gint64 mpiio_calls = 0;
    JsonObject *layer = test_report_object(&rep, "layers.mpiio");
    json_object_iter_init(&it, layer);
    while (json_object_iter_next(&it, &op, &value)) {
        if (!json_object_has_member(w.calls, op))
            fail_msg("level %d: %s reports %s, which the workload never called", level, rep.path,
                     op);
        mpiio_calls += mpiio(&rep, op, "calls");
    }

    gint64 written = 0, read_bytes = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(write_ops); i++) {
        written += mpiio(&rep, write_ops[i], "bytes");
        read_bytes += mpiio(&rep, read_ops[i], "bytes");
        assert_int_equal(mpiio(&rep, write_ops[i], "errors"), 0);
        assert_int_equal(mpiio(&rep, read_ops[i], "errors"), 0);
    }
    assert_int_equal(written, w.bytes_written);
    assert_int_equal(read_bytes, w.bytes_read);

    check_per_rank(&rep);
    assert_close(test_report_number(&rep, "per_rank.mpiio_bytes_written.sum"),
                 (double)w.bytes_written, "per_rank.mpiio_bytes_written.sum");
    assert_close(test_report_number(&rep, "per_rank.mpiio_bytes_read.sum"), (double)w.bytes_read,
                 "per_rank.mpiio_bytes_read.sum");
    assert_close(test_report_number(&rep, "per_rank.mpiio_calls.sum"), (double)mpiio_calls,
                 "per_rank.mpiio_calls.sum");
    /* The POSIX calls that moved the MPI-IO data are in the POSIX layer,
     * but the job's totals count those bytes once: at least bytes_written
     * of the layers' sum is left out. */
    double layers_written = test_report_number(&rep, "per_rank.posix_bytes_written.sum") +
                            test_report_number(&rep, "per_rank.stdio_bytes_written.sum") +
                            test_report_number(&rep, "per_rank.mpiio_bytes_written.sum");
    gint64 io_written = test_report_int(&rep, "io_bytes_written");
    if (io_written < w.bytes_written || (double)(io_written + w.bytes_written) > layers_written)
        fail_msg("level %d: io_bytes_written %" G_GINT64_FORMAT " for %" G_GINT64_FORMAT
                 " written through MPI-IO and %.0f in the layers: counted twice, or not at all",
                 level, io_written, w.bytes_written, layers_written);
    assert_close(test_report_number(&rep, "per_rank.io_bytes_written.sum"), (double)io_written,
                 "per_rank.io_bytes_written.sum");

    test_report_free(&rep);
    g_object_unref(w.parser);
    test_run_clear(&r);
    g_free(data);
}

static void test_level_0(void **state)
{
    check_level(*state, 0);
}

static void test_level_1(void **state)
{
    check_level(*state, 1);
}

static void test_level_2(void **state)
{
    check_level(*state, 2);
}

static void test_level_3(void **state)
{
    check_level(*state, 3);
}

/* ---- the POSIX calls of an MPI-IO call ---------------------------------------------------- */

/* mpi-children checks its own ring (see children.c) and says so. */
static void test_children(void **state)
{
    const char *dir = *state;
    struct test_run r = mpi_job_run(dir, NULL, test_env_or_fail("VIGIL_MPI_CHILDREN"), dir, NULL);
    test_assert_status(&r, 0, "mpi-children under vigil");
    int oks = 0;
    char **lines = g_strsplit(r.out, "\n", -1);
    for (char **line = lines; *line != NULL; line++) {
        unsigned long children = 0;
        int rank = -1;
        if (sscanf(*line, "children ok %lu (rank %d)", &children, &rank) != 2)
            continue;
        if (children < 1)
            fail_msg("rank %d: no POSIX call under its MPI_File_write_at:\n%s", rank, r.out);
        oks++;
    }
    g_strfreev(lines);
    if (oks != RANKS)
        fail_msg("%d ranks of %d said \"children ok\":\n%s\n%s", oks, RANKS, r.out, r.err);
    test_run_clear(&r);
}

/* ---- nonblocking calls -------------------------------------------------------------------- */

static void test_nonblocking_counted_once(void **state)
{
    const char *dir = *state;
    struct test_run r =
        mpi_job_run(dir, NULL, test_env_or_fail("VIGIL_MPI_NONBLOCKING"), dir, "8", NULL);
    test_assert_status(&r, 0, "mpi-nonblocking under vigil");
    struct test_report rep = the_joint_report(dir);
    /* 8 requests of 4 KiB per rank, whichever call completed them. */
    assert_int_equal(mpiio(&rep, "iwrite_at", "calls"), RANKS * 8);
    assert_int_equal(mpiio(&rep, "iwrite_at", "bytes"), RANKS * 8 * 4096);
    assert_int_equal(mpiio(&rep, "iwrite_at", "errors"), 0);
    assert_int_equal(mpiio(&rep, "iread_at", "calls"), RANKS * 8);
    assert_int_equal(mpiio(&rep, "iread_at", "bytes"), RANKS * 8 * 4096);
    assert_int_equal(mpiio(&rep, "iread_at", "errors"), 0);
    assert_int_equal(mpiio(&rep, "open", "calls"), RANKS);
    assert_int_equal(mpiio(&rep, "close", "calls"), RANKS);
    assert_close(test_report_number(&rep, "per_rank.mpiio_calls.sum"), RANKS * (8 + 8 + 2),
                 "per_rank.mpiio_calls.sum");
    assert_close(test_report_number(&rep, "per_rank.mpiio_calls.min"), 8 + 8 + 2,
                 "per_rank.mpiio_calls.min");
    test_report_free(&rep);
    test_run_clear(&r);
}

/* ---- each rank's own report ------------------------------------------------------------- */

static void test_per_rank_reports(void **state)
{
    const char *dir = *state;
    char *data = g_build_filename(dir, "data", NULL);
    const char *vars[] = {"VIGIL_REPORT_PER_RANK=1", NULL};
    struct test_run r =
        mpi_job_run(dir, vars, test_env_or_fail("VIGIL_MPI_IO_LEVELS"), "--level", "0", "--blocks",
                    "16", "--block-bytes", "4096", "--file", data, NULL);
    test_assert_status(&r, 0, "mpi-io-levels under vigil, VIGIL_REPORT_PER_RANK=1");
    struct workload w = workload_parse(r.out);

    GPtrArray *paths = report_paths(dir);
    GString *found = g_string_new(NULL);
    int joints = 0, own = 0;
    unsigned ranks_seen = 0; /* one bit per rank that wrote its own report */
    gint64 own_calls = 0, own_bytes = 0, joint_calls = -1, joint_bytes = -1;
    for (guint i = 0; i < paths->len; i++) {
        struct test_report rep = test_report_load(g_ptr_array_index(paths, i));
        g_string_append_printf(found, "\n  %s: pid %" G_GINT64_FORMAT "%s", rep.path,
                               test_report_int(&rep, "pid"), is_joint(&rep) ? ", joint" : "");
        if (is_joint(&rep)) {
            joints++;
            assert_int_equal(test_report_int(&rep, "ranks"), RANKS);
            /* Named apart from rank 0's own report. */
            assert_true(g_str_has_suffix(rep.path, "-job.json"));
            joint_calls = mpiio(&rep, "write_at", "calls");
            joint_bytes = mpiio(&rep, "write_at", "bytes");
        } else {
            own++;
            gint64 rank = test_report_int(&rep, "rank");
            assert_true(rank >= 0 && rank < RANKS);
            ranks_seen |= 1u << rank;
            own_calls += mpiio(&rep, "write_at", "calls");
            own_bytes += mpiio(&rep, "write_at", "bytes");
        }
        test_report_free(&rep);
    }
    if (own != RANKS || joints != 1)
        fail_msg("%d per-rank and %d joint reports, not %d and 1:%s\n(with %%p in the path, "
                 "rank 0's own report and the joint one have the same name)",
                 own, joints, RANKS, found->str);
    assert_int_equal(ranks_seen, (1u << RANKS) - 1); /* every rank, once */
    assert_int_equal(own_bytes, w.bytes_written);
    assert_int_equal(own_calls, joint_calls);
    assert_int_equal(own_bytes, joint_bytes);

    g_string_free(found, TRUE);
    g_ptr_array_free(paths, TRUE);
    g_object_unref(w.parser);
    test_run_clear(&r);
    g_free(data);
}

/* ---- a program without MPI --------------------------------------------------------------- */

/* The MPI-IO wrappers are in the library, but libmpi is not brought in
 * by them. */
static void test_no_libmpi_without_mpi(void **state)
{
    (void)state;
    struct test_run r =
        test_run_vigil_words(NULL, "run", "--report=off", "--", "cat", "/proc/self/maps", NULL);
    test_assert_out(&r, 0, "cat /proc/self/maps under vigil", "libvigil-preload.so", NULL);
    if (strstr(r.out, "libmpi") != NULL)
        fail_msg("libmpi is mapped into cat:\n%s", r.out);
    test_run_clear(&r);
}

/* ---- a rank that leaves early ------------------------------------------------------------- */

/* Rank 1 of mpi-early-exit calls exit(0) without MPI_Finalize: mpirun then
 * ends the job, with a non-zero status, whatever the other ranks do. Rank
 * 1 has written its own report, all the same. */
static void test_early_exit_reports(void **state)
{
    const char *dir = *state;
    struct test_run r = mpi_job_run(dir, NULL, test_env_or_fail("VIGIL_MPI_EARLY_EXIT"), dir, NULL);
    char *pid_path = g_build_filename(dir, "rank-1.pid", NULL);
    char *pid_text = NULL;
    if (!g_file_get_contents(pid_path, &pid_text, NULL, NULL))
        fail_msg("rank 1 wrote no pid (job status %d)\nstdout: %s\nstderr: %s", r.status, r.out,
                 r.err);
    g_strchomp(pid_text);
    char *report_path = g_strdup_printf("%s/report-%s.json", dir, pid_text);
    if (!g_file_test(report_path, G_FILE_TEST_IS_REGULAR)) {
        GPtrArray *paths = report_paths(dir);
        GString *found = g_string_new(NULL);
        for (guint i = 0; i < paths->len; i++)
            g_string_append_printf(found, " %s", (char *)g_ptr_array_index(paths, i));
        fail_msg("rank 1 (pid %s) left no report; there are:%s", pid_text, found->str);
    }
    struct test_report rep = test_report_load(report_path);
    assert_false(is_joint(&rep));
    assert_int_equal(test_report_int(&rep, "pid"), g_ascii_strtoll(pid_text, NULL, 10));
    assert_int_equal(mpiio(&rep, "write_at", "calls"), 1);
    assert_int_equal(mpiio(&rep, "write_at", "bytes"), 4096);
    assert_int_equal(mpiio(&rep, "open", "calls"), 1);
    test_report_free(&rep);
    g_free(report_path);
    g_free(pid_text);
    g_free(pid_path);
    test_run_clear(&r);
}

/* ---- energy from vigild -------------------------------------------------------------------- */

/* The clients of the fake vigild that told it their rank, by rank; fails
 * unless each rank of the job registered once. */
static void clients_by_rank(const struct test_fake_vigild *d,
                            const struct test_fake_vigild_client *by_rank[RANKS])
{
    memset(by_rank, 0, RANKS * sizeof by_rank[0]);
    for (guint i = 0; i < test_fake_vigild_count(d); i++) {
        const struct test_fake_vigild_client *c = test_fake_vigild_client(d, i);
        if (c->rank < 0)
            continue; /* not a rank: a process the job started besides */
        if (c->rank >= RANKS || c->size != RANKS || by_rank[c->rank] != NULL)
            fail_msg("a client says it is rank %d of %d", c->rank, c->size);
        by_rank[c->rank] = c;
    }
    for (int r = 0; r < RANKS; r++)
        if (by_rank[r] == NULL)
            fail_msg("rank %d never told vigild its rank", r);
}

static void no_energy_for_rank_2(const struct test_fake_vigild_client *client,
                                 struct vigil_local_summary *summary, void *user)
{
    (void)user;
    if (client->rank == 2) {
        summary->energy_j = NAN;
        summary->energy_source[0] = '\0';
        g_strlcpy(summary->energy_note, "no RAPL here", sizeof summary->energy_note);
    }
}

/* Each rank's capture its own (observed their sum, as vigild must give
 * it): rank 1 had two abnormal cycles, rank 3 lost some, and rank 2's
 * node captures everything. */
static void capture_by_rank(const struct test_fake_vigild_client *client,
                            struct vigil_local_summary *summary, void *user)
{
    (void)user;
    uint64_t rank = (uint64_t)client->rank;
    if (client->rank == 2)
        g_strlcpy(summary->capture_mode, "all", sizeof summary->capture_mode);
    summary->cycles = 4;
    summary->abnormal_cycles = rank == 1 ? 2 : 0;
    summary->activities_forwarded = 100 * (rank + 1);
    summary->activities_dropped = 10 * rank;
    summary->activities_lost = rank == 3 ? 7 : 0;
    summary->activities_observed = summary->activities_forwarded + summary->activities_dropped +
                                   summary->activities_lost + summary->activities_held;
}

/* A job run by energy_job: its joint report, the fake vigild and its
 * clients by rank. */
struct energy_job {
    struct test_report rep;
    struct test_fake_vigild *daemon;
    const struct test_fake_vigild_client *by_rank[RANKS];
};

/* Runs mpi-nonblocking with every rank registered with a fake vigild that
 * answers 1.5 J (as `answer` may change), and checks what is the same
 * whatever the energy: each rank said its rank and asked for its summary
 * once, and what vigild drained is what the ranks recorded. The joint
 * report is the caller's to check; energy_job_free frees the whole. */
static struct energy_job energy_job(const char *dir, test_fake_vigild_answer_fn answer)
{
    struct energy_job job;
    const struct test_fake_vigild_client **by_rank = job.by_rank;
    char *socket_path = g_build_filename(dir, "vigild.sock", NULL);
    char *socket_var = g_strdup_printf("VIGIL_SOCKET=%s", socket_path);
    struct test_fake_vigild_settings settings = {
        .mode = TEST_FAKE_VIGILD_ANSWER,
        .energy_j = 1.5,
        .energy_source = "energy/powercap",
        .answer = answer,
    };
    struct test_fake_vigild *d = test_fake_vigild_start(socket_path, &settings);
    const char *vars[] = {socket_var, NULL};
    struct test_run r =
        mpi_job_run(dir, vars, test_env_or_fail("VIGIL_MPI_NONBLOCKING"), dir, "8", NULL);
    test_assert_status(&r, 0, "mpi-nonblocking under vigil, with vigild");
    test_fake_vigild_stop(d);
    clients_by_rank(d, by_rank);
    uint64_t answered = 0;
    for (int rank = 0; rank < RANKS; rank++) {
        assert_true(by_rank[rank]->registered);
        assert_int_equal(by_rank[rank]->summary_requests, 1);
        answered += by_rank[rank]->answered_activities;
    }
    struct test_report rep = the_joint_report(dir);
    /* Taken at MPI_Finalize, with the figures: what the ranks recorded by
     * then, every record of it drained, none of the library's own. */
    assert_int_equal(test_report_int(&rep, "vigild.ranks_with_summary"), RANKS);
    assert_int_equal(test_report_int(&rep, "vigild.activities_drained"), answered);
    assert_int_equal(test_report_int(&rep, "vigild.activities_drained"),
                     test_report_int(&rep, "activities.recorded"));
    /* At exit, each rank told vigild its exit status and sent a report:
     * rank 0 the job's, exactly as printed; the others their own, which
     * the job's counts too. */
    char *printed = test_read_file(rep.path);
    for (int rank = 0; rank < RANKS; rank++) {
        const struct test_fake_vigild_client *c = by_rank[rank];
        assert_int_equal(c->reports, 1);
        assert_int_equal(c->exit_code, 0);
        assert_non_null(c->report_json);
        if (rank == 0) {
            assert_string_equal(c->report_json, printed);
            continue;
        }
        char *own = g_strdup_printf("\"rank\":%d,", rank);
        test_assert_contains(c->report_json, own);
        test_assert_contains(c->report_json, "\"in_job_report\":true");
        g_free(own);
    }
    g_free(printed);
    JsonNode *by_rank_node = test_report_node(&rep, "energy_by_rank");
    assert_non_null(by_rank_node);
    assert_int_equal(json_array_get_length(json_node_get_array(by_rank_node)), RANKS);
    for (int rank = 0; rank < RANKS; rank++) {
        char *path = g_strdup_printf("energy_by_rank.%d.vigild_process_id", rank);
        assert_int_equal(test_report_int(&rep, path), by_rank[rank]->process_id);
        g_free(path);
    }
    test_run_clear(&r);
    g_free(socket_var);
    g_free(socket_path);
    job.rep = rep;
    job.daemon = d;
    return job;
}

static void energy_job_free(struct energy_job *job)
{
    test_report_free(&job->rep);
    test_fake_vigild_free(job->daemon);
}

/* Every rank has its energy: the job's is their sum. */
static void test_job_energy_is_the_sum(void **state)
{
    struct energy_job job = energy_job(*state, NULL);
    assert_close(test_report_number(&job.rep, "energy_joule"), RANKS * 1.5, "energy_joule");
    assert_string_equal(test_report_string(&job.rep, "energy_source"), "energy/powercap");
    assert_true(JSON_NODE_HOLDS_NULL(test_report_node(&job.rep, "energy_note")));
    assert_string_equal(test_report_string(&job.rep, "vigild.state"), "summary");
    for (int rank = 0; rank < RANKS; rank++) {
        char *path = g_strdup_printf("energy_by_rank.%d.energy_joule", rank);
        assert_close(test_report_number(&job.rep, path), 1.5, path);
        g_free(path);
    }
    /* By node: all ranks are on this one. */
    char host[64] = "";
    assert_int_equal(gethostname(host, sizeof host - 1), 0);
    assert_int_equal(test_report_int(&job.rep, "job_energy.nodes"), 1);
    assert_int_equal(test_report_int(&job.rep, "job_energy.processes_with_energy"), RANKS);
    assert_close(test_report_number(&job.rep, "job_energy.energy_joule"), RANKS * 1.5,
                 "job_energy.energy_joule");
    assert_close(test_report_number(&job.rep, "job_energy.node_max_joule"), RANKS * 1.5,
                 "job_energy.node_max_joule");
    assert_string_equal(test_report_string(&job.rep, "job_energy.node_max_host"), host);
    assert_string_equal(test_report_string(&job.rep, "job_energy.sources"), "energy/powercap");
    /* The fake holds everything each rank drained (no cycle decided yet). */
    assert_string_equal(test_report_string(&job.rep, "vigild.capture.mode"), "anomalies");
    assert_int_equal(test_report_int(&job.rep, "vigild.capture.held"),
                     test_report_int(&job.rep, "vigild.activities_drained"));
    assert_int_equal(test_report_int(&job.rep, "vigild.capture.observed"),
                     test_report_int(&job.rep, "vigild.activities_drained"));
    energy_job_free(&job);
}

/* The job's capture figures are the exact sums of the ranks', its mode
 * "mixed" when the ranks' differ; each rank's forwarded count is listed. */
static void test_job_capture_is_the_sum(void **state)
{
    struct energy_job job = energy_job(*state, capture_by_rank);
    uint64_t held = 0;
    for (int rank = 0; rank < RANKS; rank++)
        held += job.by_rank[rank]->answered_activities;
    assert_string_equal(test_report_string(&job.rep, "vigild.capture.mode"), "mixed");
    assert_int_equal(test_report_int(&job.rep, "vigild.capture.cycles"), 4 * RANKS);
    assert_int_equal(test_report_int(&job.rep, "vigild.capture.abnormal_cycles"), 2);
    assert_int_equal(test_report_int(&job.rep, "vigild.capture.forwarded"), 100 + 200 + 300 + 400);
    assert_int_equal(test_report_int(&job.rep, "vigild.capture.dropped"), 0 + 10 + 20 + 30);
    assert_int_equal(test_report_int(&job.rep, "vigild.capture.lost"), 7);
    assert_int_equal(test_report_int(&job.rep, "vigild.capture.held"), held);
    assert_int_equal(test_report_int(&job.rep, "vigild.capture.observed"), 1000 + 60 + 7 + held);
    for (int rank = 0; rank < RANKS; rank++) {
        char *path = g_strdup_printf("energy_by_rank.%d.capture_forwarded", rank);
        assert_int_equal(test_report_int(&job.rep, path), 100 * (rank + 1));
        g_free(path);
    }
    energy_job_free(&job);
}

/* A rank without energy: the job has none, and says which rank and why. */
static void test_job_energy_needs_every_rank(void **state)
{
    struct energy_job job = energy_job(*state, no_energy_for_rank_2);
    assert_true(JSON_NODE_HOLDS_NULL(test_report_node(&job.rep, "energy_joule")));
    assert_string_equal(test_report_string(&job.rep, "energy_note"), "rank 2: no RAPL here");
    assert_true(JSON_NODE_HOLDS_NULL(test_report_node(&job.rep, "energy_by_rank.2.energy_joule")));
    assert_string_equal(test_report_string(&job.rep, "energy_by_rank.2.energy_note"),
                        "no RAPL here");
    assert_close(test_report_number(&job.rep, "energy_by_rank.3.energy_joule"), 1.5,
                 "energy_by_rank.3.energy_joule");
    /* The job's energy by node counts what is known, and says what is not. */
    assert_int_equal(test_report_int(&job.rep, "job_energy.processes"), RANKS);
    assert_int_equal(test_report_int(&job.rep, "job_energy.processes_with_energy"), RANKS - 1);
    assert_close(test_report_number(&job.rep, "job_energy.energy_joule"), (RANKS - 1) * 1.5,
                 "job_energy.energy_joule");
    energy_job_free(&job);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, test_make_dir, test_remove_dir)
    const struct CMUnitTest tests[] = {
        T(test_level_0),
        T(test_level_1),
        T(test_level_2),
        T(test_level_3),
        T(test_children),
        T(test_job_energy_is_the_sum),
        T(test_job_energy_needs_every_rank),
        T(test_job_capture_is_the_sum),
        T(test_nonblocking_counted_once),
        T(test_per_rank_reports),
        T(test_no_libmpi_without_mpi),
        T(test_early_exit_reports),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
