/* Tests of the process provider on fixture trees ROOT/proc/PID/{stat,statm,io}
 * that the tests write, and on the real /proc with this test and a child.
 *
 * The provider keeps each process's files open from track() on, so a test
 * changes them in place (test_rewrite_file): a new file under the same name
 * would go unseen, as it would on a node. Process ids are not pids here, so
 * that a provider that mixed them up would be caught. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_provider.h"
#include "test_support.h"
#include "test_main.h"

#define LOG_DOMAIN "vigil-provider-process"
#define SOURCE     "process"

static const char *const io_metrics[] = {
    "process.read_bytes",
    "process.written_bytes",
    "process.disk_read_bytes",
    "process.disk_written_bytes",
};

/* What the fixture files of one process hold. */
struct fixture {
    pid_t pid;
    const char *comm;
    guint64 utime, stime, start_ticks;
    guint64 resident_pages;
    guint64 rchar, wchar, read_bytes, write_bytes;
};

/* As the kernel writes it, with a tpgid of -1 and a negative priority (a
 * real-time task): fields the provider skips may be negative. */
static char *stat_text(const struct fixture *f)
{
    return g_strdup_printf("%d (%s) S 1 %d %d 0 -1 4194560 1200 0 3 0 %" G_GUINT64_FORMAT
                           " %" G_GUINT64_FORMAT " 0 0 -2 0 1 0 %" G_GUINT64_FORMAT
                           " 23658496 1350 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 2 "
                           "1 1 0 0 0 0 0 0 0 0 0 0 0\n",
                           (int)f->pid, f->comm, (int)f->pid, (int)f->pid, f->utime, f->stime,
                           f->start_ticks);
}

static char *statm_text(const struct fixture *f)
{
    return g_strdup_printf("5776 %" G_GUINT64_FORMAT " 400 5 0 1100 0\n", f->resident_pages);
}

static char *io_text(const struct fixture *f)
{
    return g_strdup_printf("rchar: %" G_GUINT64_FORMAT "\nwchar: %" G_GUINT64_FORMAT
                           "\nsyscr: 10\nsyscw: 2\nread_bytes: %" G_GUINT64_FORMAT
                           "\nwrite_bytes: %" G_GUINT64_FORMAT "\ncancelled_write_bytes: 0\n",
                           f->rchar, f->wchar, f->read_bytes, f->write_bytes);
}

static char *proc_file(pid_t pid, const char *name)
{
    return g_strdup_printf("proc/%d/%s", (int)pid, name);
}

/* `rewrite`: in place, for files the provider holds open. */
static void put_file(const char *root, pid_t pid, const char *name, char *text, gboolean rewrite)
{
    char *relative = proc_file(pid, name);
    if (rewrite)
        test_rewrite_file(root, relative, text);
    else
        test_write_file(root, relative, text);
    g_free(relative);
    g_free(text);
}

static void write_process(const char *root, const struct fixture *f, gboolean with_io)
{
    put_file(root, f->pid, "stat", stat_text(f), FALSE);
    put_file(root, f->pid, "statm", statm_text(f), FALSE);
    if (with_io)
        put_file(root, f->pid, "io", io_text(f), FALSE);
}

static void rewrite_process(const char *root, const struct fixture *f)
{
    put_file(root, f->pid, "stat", stat_text(f), TRUE);
    put_file(root, f->pid, "statm", statm_text(f), TRUE);
    put_file(root, f->pid, "io", io_text(f), TRUE);
}

static char *sample_name(const char *metric, guint64 process_id)
{
    return g_strdup_printf("%s@%" G_GUINT64_FORMAT, metric, process_id);
}

static void assert_process_sample(GHashTable *samples, const char *metric, guint64 process_id,
                                  double want)
{
    char *name = sample_name(metric, process_id);
    test_assert_sample(samples, name, want);
    g_free(name);
}

static void assert_no_process_sample(GHashTable *samples, const char *metric, guint64 process_id)
{
    char *name = sample_name(metric, process_id);
    if (g_hash_table_contains(samples, name))
        fail_msg("%s was emitted", name);
    g_free(name);
}

/* The provider's arithmetic, done the same way: exact comparisons hold. */
static double want_cpu_s(const struct fixture *f)
{
    return (double)(f->utime + f->stime) / (double)sysconf(_SC_CLK_TCK);
}

static double want_rss_bytes(const struct fixture *f)
{
    return (double)f->resident_pages * (double)sysconf(_SC_PAGESIZE);
}

/* All six values of `f` under `process_id`, or only cpu and rss. */
static void assert_process(GHashTable *samples, guint64 process_id, const struct fixture *f,
                           gboolean with_io)
{
    assert_process_sample(samples, "process.cpu_s", process_id, want_cpu_s(f));
    assert_process_sample(samples, "process.rss_bytes", process_id, want_rss_bytes(f));
    const double io[] = {(double)f->rchar, (double)f->wchar, (double)f->read_bytes,
                         (double)f->write_bytes};
    for (gsize i = 0; i < G_N_ELEMENTS(io_metrics); i++) {
        if (with_io)
            assert_process_sample(samples, io_metrics[i], process_id, io[i]);
        else
            assert_no_process_sample(samples, io_metrics[i], process_id);
    }
}

static void assert_no_process(GHashTable *samples, guint64 process_id)
{
    assert_no_process_sample(samples, "process.cpu_s", process_id);
    assert_no_process_sample(samples, "process.rss_bytes", process_id);
    for (gsize i = 0; i < G_N_ELEMENTS(io_metrics); i++)
        assert_no_process_sample(samples, io_metrics[i], process_id);
}

/* One read, which must succeed, checked against `want`: for each process
 * id, its fixture or NULL when nothing may be emitted for it. */
struct expected {
    guint64 process_id;
    const struct fixture *f;
    gboolean with_io;
};

static void expect_read(struct test_provider *p, const struct expected *want, gsize n)
{
    GHashTable *samples = test_provider_read_ok(p, 1);
    guint count = 0;
    for (gsize i = 0; i < n; i++) {
        if (want[i].f == NULL) {
            assert_no_process(samples, want[i].process_id);
            continue;
        }
        assert_process(samples, want[i].process_id, want[i].f, want[i].with_io);
        count += want[i].with_io ? 6 : 2;
    }
    assert_int_equal(g_hash_table_size(samples), count);
    g_hash_table_destroy(samples);
}

/* What the provider logs, at every level it uses. */
#define LOG_LEVELS                                                                                 \
    (G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO | G_LOG_LEVEL_DEBUG)

/* The message must name ROOT/relative. */
static void assert_names_path(const char *message, const char *root, const char *relative)
{
    char *path = g_build_filename(root, relative, NULL);
    test_assert_contains(message, path);
    g_free(path);
}

static const struct fixture first = {
    .pid = 100,
    .comm = "ior",
    .utime = 250,
    .stime = 51,
    .start_ticks = 68875,
    .resident_pages = 360,
    .rchar = 6976,
    .wchar = 1048576,
    .read_bytes = 4096,
    .write_bytes = 1044480,
};

static const struct fixture second = {
    .pid = 4194303,
    .comm = "a) (b c)",
    .utime = 7,
    .stime = 0,
    .start_ticks = 12,
    .resident_pages = 1,
    .rchar = 0,
    .wchar = 9007199254740992, /* 2^53: a double still holds it exactly */
    .read_bytes = 0,
    .write_bytes = 512,
};

static void start_with(struct test_provider *p, const char *root)
{
    test_provider_start_at(p, "process", root);
}

/* `first` and `second` written out, and the provider started on them,
 * tracking them as processes 7 and 8. */
static void start_tracking_both(struct test_provider *p, const char *root)
{
    write_process(root, &first, TRUE);
    write_process(root, &second, TRUE);
    start_with(p, root);
    test_provider_track_ok(p, 7, first.pid);
    test_provider_track_ok(p, 8, second.pid);
}

/* Tests --------------------------------------------------------------------------------------- */

static void test_start_registers_the_metrics(void **state)
{
    struct test_provider p;
    /* An empty tree: start() reads nothing. */
    start_with(&p, *state);
    test_assert_metric(&p, "process.cpu_s", "s", VIGIL_METRIC_COUNTER, VIGIL_METRIC_MEASURED,
                       SOURCE);
    test_assert_metric(&p, "process.rss_bytes", "bytes", VIGIL_METRIC_GAUGE, VIGIL_METRIC_MEASURED,
                       SOURCE);
    for (gsize i = 0; i < G_N_ELEMENTS(io_metrics); i++)
        test_assert_metric(&p, io_metrics[i], "bytes", VIGIL_METRIC_COUNTER, VIGIL_METRIC_MEASURED,
                           SOURCE);
    assert_int_equal(vigil_metric_count(p.catalog), 6);
    expect_read(&p, NULL, 0);
    test_provider_close(&p);
}

static void test_two_processes(void **state)
{
    const char *root = *state;
    struct test_provider p;
    start_tracking_both(&p, root);
    const struct expected want[] = {{7, &first, TRUE}, {8, &second, TRUE}};
    expect_read(&p, want, G_N_ELEMENTS(want));
    test_provider_close(&p);
}

/* A process may name itself anything: only the last ')' closes the name. */
static void test_command_names_with_parentheses(void **state)
{
    const char *root = *state;
    static const char *const names[] = {
        "a) (b c)", ") S 1 2 3 4 5 6 7 8 9 10 11 12", "()", "x\ny) R", " ", "((((",
    };
    struct fixture f[G_N_ELEMENTS(names)];
    struct expected want[G_N_ELEMENTS(names)];
    struct test_provider p;
    start_with(&p, root);
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        f[i] = first;
        f[i].pid = (pid_t)(10 + i);
        f[i].comm = names[i];
        f[i].utime = 100 * i;
        f[i].start_ticks = 1000 + i;
        write_process(root, &f[i], TRUE);
        test_provider_track_ok(&p, 20 + i, f[i].pid);
        want[i] = (struct expected){20 + i, &f[i], TRUE};
    }
    expect_read(&p, want, G_N_ELEMENTS(want));
    test_provider_close(&p);
}

static void test_a_second_read_sees_the_new_values(void **state)
{
    const char *root = *state;
    struct test_provider p;
    start_tracking_both(&p, root);
    const struct expected before[] = {{7, &first, TRUE}, {8, &second, TRUE}};
    expect_read(&p, before, G_N_ELEMENTS(before));

    struct fixture later = first;
    later.utime += 1000;
    later.stime += 7;
    later.resident_pages = 120; /* a gauge may go down */
    later.rchar += 65536;
    later.wchar += 3;
    later.read_bytes += 8192;
    later.write_bytes += 4096;
    rewrite_process(root, &later);
    const struct expected after[] = {{7, &later, TRUE}, {8, &second, TRUE}};
    expect_read(&p, after, G_N_ELEMENTS(after));
    test_provider_close(&p);
}

/* A kernel without task I/O accounting has no io file. */
static void test_a_process_without_io(void **state)
{
    const char *root = *state;
    write_process(root, &first, FALSE);
    write_process(root, &second, TRUE);
    struct test_provider p;
    start_with(&p, root);
    struct test_log log;
    test_log_begin(&log, LOG_DOMAIN, LOG_LEVELS);
    test_provider_track_ok(&p, 7, first.pid);
    test_provider_track_ok(&p, 8, second.pid);
    const struct expected want[] = {{7, &first, FALSE}, {8, &second, TRUE}};
    expect_read(&p, want, G_N_ELEMENTS(want));
    expect_read(&p, want, G_N_ELEMENTS(want));
    /* Said once, at track, with the file and the reason. */
    assert_int_equal(log.count, 1);
    test_assert_contains(log.text->str, "message: process 7 (pid 100)");
    assert_names_path(log.text->str, root, "proc/100/io");
    test_assert_contains(log.text->str, g_strerror(ENOENT));
    g_free(test_log_end(&log));
    test_provider_close(&p);
}

/* Another user's io, as an unprivileged vigild meets it: the read
 * overrides are out of the effective set for the track. */
static void test_a_process_whose_io_is_unreadable(void **state)
{
    const char *root = *state;
    write_process(root, &first, TRUE);
    struct test_caps saved;
    test_deny_read(root, "proc/100/io", &saved);

    struct test_provider p;
    start_with(&p, root);
    struct test_log log;
    test_log_begin(&log, LOG_DOMAIN, LOG_LEVELS);
    GError *error = NULL;
    gboolean tracked = test_provider_track(&p, 7, first.pid, &error);
    test_caps_restore(&saved);
    if (!tracked)
        fail_msg("track: %s", error->message);
    const struct expected want[] = {{7, &first, FALSE}};
    expect_read(&p, want, G_N_ELEMENTS(want));
    assert_int_equal(log.count, 1);
    assert_names_path(log.text->str, root, "proc/100/io");
    test_assert_contains(log.text->str, g_strerror(EACCES));
    g_free(test_log_end(&log));
    test_provider_close(&p);
}

/* Its pid given to another process: a new start time in stat. */
static void test_a_process_that_ended(void **state)
{
    const char *root = *state;
    struct test_provider p;
    start_tracking_both(&p, root);

    struct test_log log;
    test_log_begin(&log, LOG_DOMAIN, LOG_LEVELS);
    struct fixture other = first;
    other.start_ticks = first.start_ticks + 1;
    other.comm = "bash";
    rewrite_process(root, &other);
    const struct expected want[] = {{7, NULL, TRUE}, {8, &second, TRUE}};
    expect_read(&p, want, G_N_ELEMENTS(want));
    /* Ended is for good, even were the file to look like it again. */
    rewrite_process(root, &first);
    expect_read(&p, want, G_N_ELEMENTS(want));
    /* Logged once, at info level: a process ending is no fault. */
    assert_int_equal(log.count, 1);
    test_assert_contains(log.text->str, "info: process 7 (pid 100) has ended");
    assert_names_path(log.text->str, root, "proc/100/stat");
    g_free(test_log_end(&log));

    /* The daemon untracks it; the new process can be tracked under its
     * own id. */
    test_provider_untrack(&p, 7);
    rewrite_process(root, &other);
    test_provider_track_ok(&p, 9, other.pid);
    const struct expected then[] = {{7, NULL, TRUE}, {8, &second, TRUE}, {9, &other, TRUE}};
    expect_read(&p, then, G_N_ELEMENTS(then));
    test_provider_close(&p);
}

/* Files are opened at track and kept: a stat that goes away afterwards is
 * still read through the descriptor (on /proc the kernel then fails the
 * read: see test_the_real_proc_with_a_child), while a new track needs
 * the file. */
static void test_files_are_kept_open(void **state)
{
    const char *root = *state;
    write_process(root, &first, TRUE);
    struct test_provider p;
    start_with(&p, root);
    test_provider_track_ok(&p, 7, first.pid);
    char *stat = g_build_filename(root, "proc/100/stat", NULL);
    assert_int_equal(g_unlink(stat), 0);
    const struct expected want[] = {{7, &first, TRUE}};
    expect_read(&p, want, G_N_ELEMENTS(want));

    test_provider_untrack(&p, 7);
    GError *error = NULL;
    assert_false(test_provider_track(&p, 7, first.pid, &error));
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE));
    test_assert_contains(error->message, stat);
    g_error_free(error);
    g_free(stat);
    test_provider_close(&p);
}

static void assert_track_fails(struct test_provider *p, guint64 process_id, pid_t pid,
                               enum vigil_provider_error_code code, const char *in_message)
{
    GError *error = NULL;
    if (test_provider_track(p, process_id, pid, &error))
        fail_msg("track of pid %d succeeded", (int)pid);
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, (gint)code));
    test_assert_contains(error->message, in_message);
    g_error_free(error);
}

static void test_track_of_a_missing_process(void **state)
{
    const char *root = *state;
    write_process(root, &first, TRUE);
    struct test_provider p;
    start_with(&p, root);
    char *path = g_build_filename(root, "proc/300/stat", NULL);
    assert_track_fails(&p, 7, 300, VIGIL_PROVIDER_ERROR_UNAVAILABLE, path);
    assert_track_fails(&p, 7, 300, VIGIL_PROVIDER_ERROR_UNAVAILABLE, g_strerror(ENOENT));
    g_free(path);
    /* statm is needed as much as stat. */
    char *statm = g_build_filename(root, "proc/100/statm", NULL);
    assert_int_equal(g_unlink(statm), 0);
    assert_track_fails(&p, 7, first.pid, VIGIL_PROVIDER_ERROR_UNAVAILABLE, statm);
    g_free(statm);
    assert_track_fails(&p, 7, 0, VIGIL_PROVIDER_ERROR_UNAVAILABLE, "not a process id");
    assert_track_fails(&p, 7, -1, VIGIL_PROVIDER_ERROR_UNAVAILABLE, "not a process id");
    /* Nothing was left behind by the failures. */
    expect_read(&p, NULL, 0);
    test_provider_close(&p);
}

/* Each is what /proc/100/stat holds, and what the error must say. */
static const struct {
    const char *text;
    const char *in_message;
} malformed_stats[] = {
    {"", "does not start with \"100 (\""},
    {"101 (ior) S 1 100 100 0 -1 4194560 1200 0 3 0 250 51 0 0 -2 0 1 0 68875 1\n",
     "does not start with \"100 (\""},
    {"100 ior S 1 100 100 0 -1 4194560 1200 0 3 0 250 51 0 0 -2 0 1 0 68875 1\n",
     "does not start with \"100 (\""},
    {"100 (ior S 1 100 100 0 -1 4194560 1200 0 3 0 250 51 0 0 -2 0 1 0 68875 1\n",
     "the command name has no ')'"},
    {"100 (ior) 1 100 100 0 -1 4194560 1200 0 3 0 250 51 0 0 -2 0 1 0 68875 1\n",
     "no one-letter state"},
    {"100 (ior)\n", "no one-letter state"},
    {"100 (ior) S 1 100 100 0 -1 4194560 1200 0 3 0 -250 51 0 0 -2 0 1 0 68875 1\n",
     "field 14 is missing or not a non-negative whole number"},
    {"100 (ior) S 1 100 100 0 -1 4194560 1200 0 3 0 250 5x1 0 0 -2 0 1 0 68875 1\n",
     "field 15 is missing"},
    {"100 (ior) S 1 100 100 0 -1 4194560 1200 0 3 0 250 51 0 0 -2 0 1 0\n", "field 22 is missing"},
    {"100 (ior) S 1 100 100 0 -1 4194560 1200 0 3 0 250 51 0 0 -2 0 1 0 0x10 1\n",
     "field 22 is missing"},
    {"100 (ior) S 1 100 100 0 --1 4194560 1200 0 3 0 250 51 0 0 -2 0 1 0 68875 1\n",
     "field 8 is missing or not a whole number"},
    {"100 (ior) S 1 100 100 0 -1 4194560 1200 0 3 0 250 51 0 0 -2 0 1 0 99999999999999999999 1\n",
     "field 22"},
};

static void test_a_malformed_stat_fails_track(void **state)
{
    const char *root = *state;
    write_process(root, &first, TRUE);
    struct test_provider p;
    start_with(&p, root);
    for (gsize i = 0; i < G_N_ELEMENTS(malformed_stats); i++) {
        test_rewrite_file(root, "proc/100/stat", malformed_stats[i].text);
        char *path = g_build_filename(root, "proc/100/stat", NULL);
        assert_track_fails(&p, 7, first.pid, VIGIL_PROVIDER_ERROR_READ, path);
        assert_track_fails(&p, 7, first.pid, VIGIL_PROVIDER_ERROR_READ,
                           malformed_stats[i].in_message);
        g_free(path);
    }
    expect_read(&p, NULL, 0);
    test_provider_close(&p);
}

/* A file of one process that reads wrong leaves that process out of the
 * read, which still succeeds for the others, and is logged once with the
 * file and what is wrong, not at every tick; once it reads right the
 * process is back. */
static void assert_broken_then_back(const char *root, const char *name, const char *bad,
                                    const char *in_message)
{
    struct test_provider p;
    start_tracking_both(&p, root);

    struct test_log log;
    test_log_begin(&log, LOG_DOMAIN, LOG_LEVELS);
    char *relative = proc_file(first.pid, name);
    test_rewrite_file(root, relative, bad);
    const struct expected without[] = {{7, NULL, TRUE}, {8, &second, TRUE}};
    expect_read(&p, without, G_N_ELEMENTS(without));
    expect_read(&p, without, G_N_ELEMENTS(without));
    if (log.count != 1)
        fail_msg("%s holding \"%s\": %u messages, not 1:\n%s", name, bad, log.count, log.text->str);
    test_assert_contains(log.text->str, "warning: process 7 (pid 100)");
    assert_names_path(log.text->str, root, relative);
    test_assert_contains(log.text->str, in_message);

    rewrite_process(root, &first);
    const struct expected with[] = {{7, &first, TRUE}, {8, &second, TRUE}};
    expect_read(&p, with, G_N_ELEMENTS(with));
    /* Broken again after reading right: that is news again. */
    test_rewrite_file(root, relative, bad);
    expect_read(&p, without, G_N_ELEMENTS(without));
    assert_int_equal(log.count, 2);
    g_free(test_log_end(&log));
    g_free(relative);
    test_provider_close(&p);
}

static void test_a_malformed_file_leaves_only_its_process_out(void **state)
{
    const char *root = *state;
    for (gsize i = 0; i < G_N_ELEMENTS(malformed_stats); i++)
        assert_broken_then_back(root, "stat", malformed_stats[i].text,
                                malformed_stats[i].in_message);
    assert_broken_then_back(root, "statm", "5776 360 400 5 0 1100\n", "expected 7 whole numbers");
    assert_broken_then_back(root, "statm", "5776 -360 400 5 0 1100 0\n",
                            "expected 7 whole numbers");
    assert_broken_then_back(root, "statm", "5776 360 400 5 0 1100 0\n1\n",
                            "expected 7 whole numbers");
    assert_broken_then_back(root, "io", "rchar: 1\nwchar: 2\nread_bytes: 3\n",
                            "no \"write_bytes\" line");
    assert_broken_then_back(root, "io", "rchar: 1\nwchar: 2\nread_bytes: 3\nwrite_bytes: 4 kB\n",
                            "line 4: expected one whole number");
    assert_broken_then_back(root, "io", "rchar: 1\nwchar: 2\nread_bytes: 3\nrchar: 5\n",
                            "line 4: this line appears twice");
}

static void test_untrack(void **state)
{
    const char *root = *state;
    struct test_provider p;
    start_tracking_both(&p, root);
    /* One id, one process. */
    assert_track_fails(&p, 8, first.pid, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                       "process 8 is tracked already (pid 4194303)");

    test_provider_untrack(&p, 7);
    const struct expected one[] = {{7, NULL, TRUE}, {8, &second, TRUE}};
    expect_read(&p, one, G_N_ELEMENTS(one));
    /* Again, and an id never tracked: nothing happens. */
    test_provider_untrack(&p, 7);
    test_provider_untrack(&p, 12345);
    expect_read(&p, one, G_N_ELEMENTS(one));

    /* Two ids may watch one pid (a process that registered twice). */
    test_provider_track_ok(&p, 7, first.pid);
    test_provider_track_ok(&p, 9, first.pid);
    const struct expected three[] = {{7, &first, TRUE}, {8, &second, TRUE}, {9, &first, TRUE}};
    expect_read(&p, three, G_N_ELEMENTS(three));

    test_provider_untrack(&p, 8);
    test_provider_untrack(&p, 7);
    test_provider_untrack(&p, 9);
    expect_read(&p, NULL, 0);
    test_provider_close(&p);
}

static GHashTable *read_self(struct test_provider *p)
{
    GHashTable *samples = test_provider_read_ok(p, 1);
    assert_true(test_sample_value(samples, "process.cpu_s@1") >= 0);
    assert_true(test_sample_value(samples, "process.rss_bytes@1") > 0);
    return samples;
}

static double growth(GHashTable *before, GHashTable *after, const char *name)
{
    return test_sample_value(after, name) - test_sample_value(before, name);
}

/* This test itself, on the real /proc: what it reads and writes between
 * two reads must show. */
static void test_the_real_proc(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    start_with(&p, "/");
    test_provider_track_ok(&p, 1, getpid());
    GHashTable *before = read_self(&p);

    enum { BYTES = 1 << 16 };
    char *data = g_malloc0(BYTES);
    char *path = g_build_filename(dir, "data", NULL);
    GError *error = NULL;
    if (!g_file_set_contents(path, data, BYTES, &error))
        fail_msg("writing %s: %s", path, error->message);
    gsize length = 0;
    char *back = NULL;
    if (!g_file_get_contents(path, &back, &length, &error))
        fail_msg("reading %s: %s", path, error->message);
    assert_int_equal(length, BYTES);

    GHashTable *after = read_self(&p);
    assert_true(test_sample_value(after, "process.read_bytes@1") > 0);
    assert_true(growth(before, after, "process.read_bytes@1") >= BYTES);
    assert_true(growth(before, after, "process.written_bytes@1") >= BYTES);
    assert_true(growth(before, after, "process.cpu_s@1") >= 0);
    assert_true(growth(before, after, "process.disk_read_bytes@1") >= 0);
    assert_true(growth(before, after, "process.disk_written_bytes@1") >= 0);
    assert_int_equal(g_hash_table_size(after), 6);

    g_hash_table_destroy(after);
    g_hash_table_destroy(before);
    g_free(back);
    g_free(path);
    g_free(data);
    test_provider_close(&p);
}

/* A child that waits on a pipe, tracked, then reaped: the kernel fails the
 * read of its kept stat (ESRCH), and it is no longer reported; this test
 * still is. */
static void test_the_real_proc_with_a_child(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char c;
        close(fds[1]);
        _exit(read(fds[0], &c, 1) == 0 ? 0 : 1);
    }
    close(fds[0]);

    struct test_provider p;
    start_with(&p, "/");
    test_provider_track_ok(&p, 1, getpid());
    test_provider_track_ok(&p, 2, child);
    GHashTable *samples = test_provider_read_ok(&p, 1);
    assert_true(test_sample_value(samples, "process.rss_bytes@2") > 0);
    assert_int_equal(g_hash_table_size(samples), 12);
    g_hash_table_destroy(samples);

    struct test_log log;
    test_log_begin(&log, LOG_DOMAIN, LOG_LEVELS);
    close(fds[1]);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    for (int i = 0; i < 2; i++) {
        samples = test_provider_read_ok(&p, 1);
        assert_no_process(samples, 2);
        assert_true(test_sample_value(samples, "process.rss_bytes@1") > 0);
        assert_int_equal(g_hash_table_size(samples), 6);
        g_hash_table_destroy(samples);
    }
    assert_int_equal(log.count, 1);
    test_assert_contains(log.text->str, "info: process 2");
    test_assert_contains(log.text->str, "has ended");
    test_assert_contains(log.text->str, g_strerror(ESRCH));
    g_free(test_log_end(&log));
    test_provider_untrack(&p, 2);
    test_provider_close(&p);
}

/* A process that becomes unreadable to vigild while tracked, as one that
 * runs a setuid program does: here a child that makes itself non-dumpable,
 * whose io the kernel then shows only to a reader with CAP_SYS_PTRACE,
 * which this test puts out of its effective set for one read. Its cpu and
 * rss are still reported; its io no longer is, and that is said once. */
static void test_the_real_proc_with_io_lost_while_tracked(void **state)
{
    (void)state;
    /* Without it the child's io would be out of reach from the start. */
    test_skip_unless(test_caps_have(CAP_SYS_PTRACE), "no CAP_SYS_PTRACE");
    int ready[2], done[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(done), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char c;
        close(ready[0]);
        close(done[1]);
        gboolean ok = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 && write(ready[1], "r", 1) == 1;
        _exit(ok && read(done[0], &c, 1) == 0 ? 0 : 1);
    }
    close(ready[1]);
    close(done[0]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    close(ready[0]);

    struct test_provider p;
    start_with(&p, "/");
    test_provider_track_ok(&p, 2, child);
    GHashTable *samples = test_provider_read_ok(&p, 1);
    assert_int_equal(g_hash_table_size(samples), 6);
    g_hash_table_destroy(samples);

    struct test_log log;
    test_log_begin(&log, LOG_DOMAIN, LOG_LEVELS);
    struct test_caps saved;
    gboolean dropped = test_caps_drop(&saved, 1u << CAP_SYS_PTRACE);
    GError *error = NULL;
    samples = dropped ? test_provider_read(&p, 1, &error) : NULL;
    if (dropped)
        test_caps_restore(&saved);
    close(done[1]);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (!dropped) {
        g_free(test_log_end(&log));
        test_provider_close(&p);
        test_skip("no CAP_SYS_PTRACE to put down");
    }
    if (samples == NULL)
        fail_msg("read: %s", error->message);
    assert_true(test_sample_value(samples, "process.rss_bytes@2") > 0);
    assert_true(test_sample_value(samples, "process.cpu_s@2") >= 0);
    for (gsize i = 0; i < G_N_ELEMENTS(io_metrics); i++)
        assert_no_process_sample(samples, io_metrics[i], 2);
    assert_int_equal(g_hash_table_size(samples), 2);
    g_hash_table_destroy(samples);
    assert_int_equal(log.count, 1);
    test_assert_contains(log.text->str, "message: process 2");
    test_assert_contains(log.text->str, "without its I/O from now on");
    char *io = g_strdup_printf("/proc/%d/io", (int)child);
    test_assert_contains(log.text->str, io);
    g_free(io);
    test_assert_contains(log.text->str, g_strerror(EACCES));
    g_free(test_log_end(&log));
    test_provider_close(&p);
}

TEST_MAIN(TEST_WITH_DIR(test_start_registers_the_metrics), TEST_WITH_DIR(test_two_processes),
          TEST_WITH_DIR(test_command_names_with_parentheses),
          TEST_WITH_DIR(test_a_second_read_sees_the_new_values),
          TEST_WITH_DIR(test_a_process_without_io),
          TEST_WITH_DIR(test_a_process_whose_io_is_unreadable),
          TEST_WITH_DIR(test_a_process_that_ended), TEST_WITH_DIR(test_files_are_kept_open),
          TEST_WITH_DIR(test_track_of_a_missing_process),
          TEST_WITH_DIR(test_a_malformed_stat_fails_track),
          TEST_WITH_DIR(test_a_malformed_file_leaves_only_its_process_out),
          TEST_WITH_DIR(test_untrack), TEST_WITH_DIR(test_the_real_proc),
          TEST_WITH_DIR(test_the_real_proc_with_a_child),
          TEST_WITH_DIR(test_the_real_proc_with_io_lost_while_tracked))
