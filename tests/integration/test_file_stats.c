/* Integration tests of the per-file counters and offsets of
 * libvigil-preload.so (instrument/file_stats.c, files.c): ior-patterns runs
 * IOR-like access patterns whose Darshan counters are known exactly, and
 * its JSON report must give exactly those; inherited descriptors are named
 * by their files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include <cmocka.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "test_report.h"
#include "test_support.h"
#include "test_main.h"

static int setup(void **state)
{
    *state = g_dir_make_tmp("vigil-file-stats-XXXXXX", NULL);
    return *state != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    test_remove_tree(*state);
    g_free(*state);
    return 0;
}

/* argv run under the library with a JSON report at dir/report-PID.json. */
static struct test_run run_preloaded(const char *dir, const char *const *argv)
{
    char *report = g_strdup_printf("VIGIL_REPORT=%s/report-%%p.json", dir);
    const char *vars[] = {report, "VIGIL_REPORT_FORMAT=json", "VIGIL_SOCKET=/nonexistent", NULL};
    char **env = test_clean_environment(vars);
    env = g_environ_setenv(env, "LD_PRELOAD", test_env_or_fail("VIGIL_PRELOAD_LIB"), TRUE);
    struct test_run r = test_run_program(dir, argv, env);
    g_strfreev(env);
    g_free(report);
    return r;
}

static struct test_report load_report_of(const char *dir, long pid)
{
    char *path = g_strdup_printf("%s/report-%ld.json", dir, pid);
    struct test_report rep = test_report_load(path);
    g_free(path);
    return rep;
}

/* Where a program run by report_of_run says its pid. */
enum pid_on { PID_ON_STDOUT, PID_ON_STDERR };

/* Runs `argv` under the library in `dir` (run_preloaded); it must exit 0.
 * Returns its report, named by the pid it said. */
static struct test_report report_of_run(const char *dir, const char *const *argv, const char *what,
                                        enum pid_on pid_on)
{
    struct test_run r = run_preloaded(dir, argv);
    test_assert_status(&r, 0, what);
    struct test_report rep =
        load_report_of(dir, strtol(pid_on == PID_ON_STDERR ? r.err : r.out, NULL, 10));
    test_run_clear(&r);
    return rep;
}

/* `ior-patterns ARGS…` (up to a NULL) under the library in `dir`: it must
 * exit 0; its report, named by the pid it prints, in *rep. */
static struct test_run ior_patterns(const char *dir, struct test_report *rep, const char *first,
                                    ...) G_GNUC_NULL_TERMINATED;
static struct test_run ior_patterns(const char *dir, struct test_report *rep, const char *first,
                                    ...)
{
    char *program = g_build_filename(test_env_or_fail("VIGIL_TEST_PROGRAMS"), "ior-patterns", NULL);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, program);
    va_list args;
    va_start(args, first);
    for (const char *a = first; a != NULL; a = va_arg(args, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(args);
    g_ptr_array_add(argv, NULL);
    struct test_run r = run_preloaded(dir, (const char *const *)argv->pdata);
    char *what = g_strjoinv(" ", (char **)argv->pdata + 1);
    test_assert_status(&r, 0, what);
    *rep = load_report_of(dir, strtol(r.out, NULL, 10));
    g_free(what);
    g_ptr_array_free(argv, TRUE);
    g_free(program);
    return r;
}

/* The "files" entry of dir/name; the test fails without one. */
static JsonNode *file_entry(const struct test_report *rep, const char *path)
{
    JsonArray *files = json_node_get_array(test_report_node(rep, "files"));
    for (guint i = 0; i < json_array_get_length(files); i++) {
        JsonNode *node = json_array_get_element(files, i);
        if (g_strcmp0(test_json_string(node, rep->path, "path"), path) == 0)
            return node;
    }
    fail_msg("%s: no files entry for %s", rep->path, path);
    return NULL;
}

static gint64 counter(JsonNode *file, const char *dotted)
{
    JsonNode *node = test_json_node(file, dotted);
    if (node != NULL && json_node_get_value_type(node) == G_TYPE_BOOLEAN)
        return json_node_get_boolean(node);
    return test_json_int(file, "files entry", dotted);
}

static guint array_length(JsonNode *file, const char *dotted)
{
    JsonNode *node = test_json_node(file, dotted);
    if (node == NULL || !JSON_NODE_HOLDS_ARRAY(node))
        fail_msg("%s is not an array", dotted);
    return json_array_get_length(json_node_get_array(node));
}

/* Expected POSIX counters of one file. */
struct expected {
    const char *name;
    gint64 opens, reads, writes, seeks, other;
    gint64 read_bytes, written_bytes, max_read, max_written;
    gint64 seq_reads, consec_reads, seq_writes, consec_writes;
};

static void check_file(const struct test_report *rep, const char *dir, const struct expected *e)
{
    char *path = g_build_filename(dir, e->name, NULL);
    JsonNode *f = file_entry(rep, path);
    const struct {
        const char *key;
        gint64 want;
    } checks[] = {
        {"posix.opens", e->opens},
        {"posix.reads", e->reads},
        {"posix.writes", e->writes},
        {"posix.seeks", e->seeks},
        {"posix.other", e->other},
        {"posix.read_bytes", e->read_bytes},
        {"posix.written_bytes", e->written_bytes},
        {"posix.max_read_offset", e->max_read},
        {"posix.max_written_offset", e->max_written},
        {"posix.seq_reads", e->seq_reads},
        {"posix.consec_reads", e->consec_reads},
        {"posix.seq_writes", e->seq_writes},
        {"posix.consec_writes", e->consec_writes},
    };
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++)
        if (counter(f, checks[i].key) != checks[i].want)
            fail_msg("%s: %s is %" G_GINT64_FORMAT ", not %" G_GINT64_FORMAT, path, checks[i].key,
                     counter(f, checks[i].key), checks[i].want);
    g_free(path);
}

/* The child forked while its parent held pend.a's and pend.b's counts in
 * its pending entries: its report has its own calls only. */
static void check_forked_child(const char *dir)
{
    char *pid_path = g_build_filename(dir, "child.pid", NULL);
    char *text = test_read_file(pid_path);
    struct test_report rep = load_report_of(dir, strtol(text, NULL, 10));
    g_free(text);
    g_free(pid_path);
    static const struct expected files[] = {
        /* name      opens reads writes seeks other  rbytes wbytes  maxr  maxw  sr cr sw cw
         * (maxr, maxw: Darshan's MAX_BYTE, 0 when none; sequential as
         * Darshan judges it: after an open the last byte is 0, so an
         * access past 0 is sequential, one at 1 consecutive) */
        /* The child's write at 200, its first: past the start of its own
         * figures, so sequential. */
        {"pend.b", 0, 0, 1, 0, 0, 0, 100, 0, 299, 0, 0, 1, 0},
        {"pend.c", 1, 0, 1, 0, 0, 0, 100, 0, 99, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        check_file(&rep, dir, &files[i]);
    /* pend.a: no call of the child's (listed with none, or not at all). */
    char *a = g_build_filename(dir, "pend.a", NULL);
    JsonArray *all = json_node_get_array(test_report_node(&rep, "files"));
    for (guint i = 0; i < json_array_get_length(all); i++) {
        JsonNode *f = json_array_get_element(all, i);
        if (g_strcmp0(test_json_string(f, rep.path, "path"), a) == 0) {
            assert_int_equal(counter(f, "calls"), 0);
            assert_int_equal(counter(f, "posix.writes"), 0);
        }
    }
    g_free(a);
    test_report_free(&rep);
}

static void test_ior_patterns(void **state)
{
    const char *dir = *state;
    struct test_report rep;
    struct test_run r = ior_patterns(dir, &rep, dir, NULL);

    static const struct expected files[] = {
        /* name      opens reads writes seeks other  rbytes wbytes  maxr  maxw  sr cr sw cw */
        {"fpp.0", 1, 0, 8, 0, 1, 0, 524288, 0, 524287, 0, 0, 7, 7},
        {"fpp.3", 1, 0, 8, 0, 1, 0, 524288, 0, 524287, 0, 0, 7, 7},
        {"strided", 1, 0, 8, 8, 1, 0, 32768, 0, 118783, 0, 0, 7, 0},
        /* The first write, at 3000, past the start: sequential. */
        {"random", 1, 8, 8, 0, 1, 8000, 8000, 7999, 7999, 7, 7, 4, 0},
        /* Append mode: the kernel's end, 50 to 950; reopened, so the write
         * at 50 is sequential, not consecutive. */
        {"append", 2, 0, 11, 0, 2, 0, 1050, 0, 1049, 0, 0, 10, 9},
        /* Two descriptions appending in turn share the file's end. */
        {"appenders", 2, 0, 10, 0, 2, 0, 1000, 0, 999, 0, 0, 9, 9},
        /* A forked child's two appends (100, 200) moved the parent's end:
         * its second is at 300. */
        {"fork.append", 1, 0, 2, 0, 1, 0, 200, 0, 399, 0, 0, 1, 0},
        /* F_SETFL O_APPEND: at the end (100), not at the position (0). */
        {"setfl", 1, 0, 3, 1, 3, 0, 300, 0, 299, 0, 0, 2, 2},
        /* ftruncate, then another description's O_TRUNC: back to 0. */
        {"truncated", 2, 0, 4, 0, 3, 0, 400, 0, 199, 0, 0, 1, 1},
        /* Reads at 0 and 50 from the position, writes at 0 and the end. */
        {"append.rw", 1, 2, 2, 2, 1, 150, 200, 149, 199, 1, 1, 1, 1},
        /* copy_file_range, sendfile and splice move both offsets: the
         * source is read at 0 and 1000 by the first two, at 3000 by read,
         * the last write is at 3100 (splice's 1000 bytes are not counted);
         * copy_file_range at the source's end reads 0 bytes at 4000 and
         * writes 0 at 3200, both consecutive. */
        {"kcopy.src", 1, 4, 1, 1, 1, 3000, 4000, 3999, 3999, 3, 2, 0, 0},
        {"kcopy.dst", 1, 0, 5, 0, 1, 0, 2200, 0, 3199, 0, 0, 4, 3},
        /* Two threads in turn: 1000 writes, each but the first where the
         * file's previous one (the other thread's) ended. */
        {"threads.order", 1, 0, 1000, 0, 1, 0, 100000, 0, 99999, 0, 0, 999, 999},
        /* meta_counters: writes at 0, 100, 200, a pread of 50 at 0 between
         * the second and third (not sequential: no read before it); other:
         * dup, its close, the close; opens: open, dup and two filenos
         * (Darshan's REFOPEN). */
        {"meta", 4, 1, 3, 0, 3, 50, 300, 49, 299, 0, 0, 2, 2},
        /* dup and F_DUPFD share the offset; other: dup, fcntl, 3 closes;
         * opens: open, dup, F_DUPFD (Darshan's REFOPEN). */
        {"dup", 3, 0, 4, 0, 5, 0, 400, 0, 399, 0, 0, 3, 3},
        {"lseek", 1, 1, 2, 2, 1, 4096, 4106, 4095, 4105, 0, 0, 1, 1},
        /* The child's write at 100 moved the parent's offset to 200. */
        {"fork", 1, 0, 2, 0, 1, 0, 200, 0, 299, 0, 0, 1, 0},
        /* Read in, write out, in turn: both files' counts held at once. */
        {"copy.in", 1, 8, 1, 1, 1, 8000, 8000, 7999, 7999, 7, 7, 0, 0},
        {"copy.out", 1, 0, 8, 0, 1, 0, 8000, 0, 7999, 0, 0, 7, 7},
        /* Six files in turn: evicted and taken again at every move. */
        {"cycle.0", 1, 0, 4, 0, 1, 0, 400, 0, 399, 0, 0, 3, 3},
        {"cycle.5", 1, 0, 4, 0, 1, 0, 400, 0, 399, 0, 0, 3, 3},
        /* Pending in the parent when it forked; the child's are its own. */
        {"pend.a", 1, 0, 4, 0, 1, 0, 400, 0, 399, 0, 0, 3, 3},
        {"pend.b", 1, 0, 2, 0, 1, 0, 200, 0, 199, 0, 0, 1, 1},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        check_file(&rep, dir, &files[i]);

    /* Two threads appending at once, each through its own description:
     * the last of the 2002 appends at 200100, whatever the order
     * (sequential counts depend on it, and are not checked). */
    char *path = g_build_filename(dir, "threads.append", NULL);
    JsonNode *threaded = file_entry(&rep, path);
    assert_int_equal(counter(threaded, "posix.writes"), 2002);
    assert_int_equal(counter(threaded, "posix.written_bytes"), 200200);
    assert_int_equal(counter(threaded, "posix.max_written_offset"), 200199);
    g_free(path);

    path = g_build_filename(dir, "fpp.1", NULL);
    JsonNode *fpp = file_entry(&rep, path);
    assert_int_equal(counter(fpp, "posix.write_size_hist.3"), 8); /* 64 KiB: 10K-100K */
    assert_int_equal(counter(fpp, "posix.common_sizes.0.size"), 65536);
    assert_int_equal(counter(fpp, "posix.common_sizes.0.count"), 8);
    assert_true(counter(fpp, "posix.common_sizes.0.exact"));
    /* Consecutive writes have stride 0, which Darshan does not list. */
    assert_int_equal(array_length(fpp, "posix.common_strides"), 0);
    assert_int_equal(counter(fpp, "calls"), 10);
    assert_int_equal(counter(fpp, "written_bytes"), 524288);
    assert_true(test_json_number(fpp, path, "posix.first_open_s") >= 0);
    assert_true(test_json_number(fpp, path, "posix.last_close_s") >=
                test_json_number(fpp, path, "posix.last_io_s"));
    g_free(path);

    path = g_build_filename(dir, "strided", NULL);
    JsonNode *strided = file_entry(&rep, path);
    assert_int_equal(counter(strided, "posix.common_strides.0.stride"), 12288);
    assert_int_equal(counter(strided, "posix.common_strides.0.count"), 7);
    assert_int_equal(counter(strided, "posix.write_size_hist.2"), 8);
    g_free(path);

    /* The shuffled writes at 3, 0, 7, 1, 6, 2, 5, 4 (x 1000, 1000 bytes
     * each) jump forward by 6000, 4000 and 2000 past the previous one's
     * end, and back four times (Darshan lists no backward stride, nor the
     * reads' 0); ties: the larger first. */
    path = g_build_filename(dir, "random", NULL);
    JsonNode *random = file_entry(&rep, path);
    assert_int_equal(array_length(random, "posix.common_strides"), 3);
    const gint64 strides[3][2] = {{6000, 1}, {4000, 1}, {2000, 1}};
    for (int i = 0; i < 3; i++) {
        char *stride = g_strdup_printf("posix.common_strides.%d.stride", i);
        char *count = g_strdup_printf("posix.common_strides.%d.count", i);
        assert_int_equal(counter(random, stride), strides[i][0]);
        assert_int_equal(counter(random, count), strides[i][1]);
        g_free(stride);
        g_free(count);
    }
    assert_int_equal(counter(random, "posix.read_size_hist.1"), 8); /* 1000: 100-1K */
    g_free(path);

    /* Darshan's rarer counters, by hand from meta_counters: the mode open_in
     * gives (0644); writes of 100 at 0, 100 and 200, a read of 50 at 0
     * between the second and third (2 switches), 100 and 200 not on the
     * file system's block; the first write's buffer is buffer + 1, with
     * buffer page-aligned; the slowest write moved 100, the read 50. */
    path = g_build_filename(dir, "meta", NULL);
    JsonNode *meta = file_entry(&rep, path);
    struct statfs fs;
    assert_int_equal(statfs(dir, &fs), 0);
    const struct {
        const char *key;
        gint64 want;
    } rare[] = {
        {"posix.mode", 0644},
        {"posix.rw_switches", 2},
        {"posix.fsyncs", 1},
        {"posix.fdatasyncs", 2},
        {"posix.dups", 1},
        {"posix.filenos", 2},
        {"posix.file_alignment_bytes", fs.f_bsize},
        {"posix.file_not_aligned", 2},
        {"posix.mem_alignment_bytes", 8},
        {"posix.mem_not_aligned", 1},
        {"posix.max_read_time_size", 50},
        {"posix.max_write_time_size", 100},
        {"stdio.mode", -1},
        {"stdio.rw_switches", 0},
        {"stdio.mem_alignment_bytes", 0},
    };
    for (size_t i = 0; i < sizeof rare / sizeof rare[0]; i++)
        if (counter(meta, rare[i].key) != rare[i].want)
            fail_msg("%s: %s is %" G_GINT64_FORMAT ", not %" G_GINT64_FORMAT, path, rare[i].key,
                     counter(meta, rare[i].key), rare[i].want);
    assert_true(test_json_number(meta, path, "posix.max_read_time_s") > 0);
    assert_true(test_json_number(meta, path, "posix.max_write_time_s") > 0);
    g_free(path);

    /* Two threads in turn on one file: no gap between any two writes. */
    path = g_build_filename(dir, "threads.order", NULL);
    assert_int_equal(array_length(file_entry(&rep, path), "posix.common_strides"), 0);
    g_free(path);

    /* Streams: the stdio layer's counters, from the stream's position. */
    path = g_build_filename(dir, "stdio", NULL);
    JsonNode *stream = file_entry(&rep, path);
    assert_int_equal(counter(stream, "stdio.opens"), 1);
    assert_int_equal(counter(stream, "stdio.writes"), 10);
    assert_int_equal(counter(stream, "stdio.seq_writes"), 9);
    assert_int_equal(counter(stream, "stdio.consec_writes"), 9);
    assert_int_equal(counter(stream, "stdio.max_written_offset"), 9999);
    assert_int_equal(counter(stream, "stdio.common_sizes.0.size"), 1000);
    assert_int_equal(counter(stream, "posix.writes"), 0); /* glibc's own write(2) is not seen */
    g_free(path);

    /* Excluded calls are in the totals, and no file. Each call observed is
     * recorded, dropped or excluded, once: the excluded ones, counted in
     * the operation table like the others, had been counted twice. */
    assert_true(test_report_int(&rep, "activities.excluded") >= 1002);
    assert_int_equal(test_report_int(&rep, "activities.recorded") +
                         test_report_int(&rep, "activities.dropped") +
                         test_report_int(&rep, "activities.excluded"),
                     test_report_int(&rep, "activities.observed"));
    gint64 calls = 0;
    JsonObject *layers = json_node_get_object(test_report_node(&rep, "layers"));
    GList *names = json_object_get_members(layers);
    for (GList *l = names; l != NULL; l = l->next) {
        JsonObject *ops = json_object_get_object_member(layers, l->data);
        GList *op_names = json_object_get_members(ops);
        for (GList *o = op_names; o != NULL; o = o->next)
            calls +=
                json_object_get_int_member(json_object_get_object_member(ops, o->data), "calls");
        g_list_free(op_names);
    }
    g_list_free(names);
    assert_int_equal(calls, test_report_int(&rep, "activities.observed"));
    assert_true(test_report_op(&rep, "posix", "write", "calls") >=
                1000 + 8 * 4 + 8 + 11 + 4 + 2 + 2);
    JsonArray *all = json_node_get_array(test_report_node(&rep, "files"));
    for (guint i = 0; i < json_array_get_length(all); i++)
        assert_string_not_equal(test_json_string(json_array_get_element(all, i), rep.path, "path"),
                                "/dev/null");
    assert_int_equal(test_report_int(&rep, "files_total"), json_array_get_length(all));

    /* The timeline holds every byte the files' counters hold. */
    gint64 file_read = 0, file_written = 0, timeline_read = 0, timeline_written = 0;
    for (guint i = 0; i < json_array_get_length(all); i++) {
        JsonNode *f = json_array_get_element(all, i);
        file_read += counter(f, "posix.read_bytes");
        file_written += counter(f, "posix.written_bytes");
        if (!JSON_NODE_HOLDS_NULL(test_json_node(f, "stdio"))) {
            file_read += counter(f, "stdio.read_bytes");
            file_written += counter(f, "stdio.written_bytes");
        }
    }
    JsonArray *bins = json_node_get_array(test_report_node(&rep, "timeline.read_bytes"));
    JsonArray *wbins = json_node_get_array(test_report_node(&rep, "timeline.written_bytes"));
    assert_int_equal(json_array_get_length(bins), json_array_get_length(wbins));
    for (guint i = 0; i < json_array_get_length(bins); i++) {
        timeline_read += json_array_get_int_element(bins, i);
        timeline_written += json_array_get_int_element(wbins, i);
    }
    assert_int_equal(timeline_read, file_read);
    assert_int_equal(timeline_written, file_written);
    assert_true(test_report_number(&rep, "timeline.bin_s") > 0);

    check_forked_child(dir);
    test_report_free(&rep);
    test_run_clear(&r);
}

/* A descriptor the program did not open is named by its file at first use,
 * with its offset from the kernel; a standard stream on a file too. */
static void test_inherited_descriptors(void **state)
{
    const char *dir = *state;
    char *program = g_build_filename(test_env_or_fail("VIGIL_TEST_PROGRAMS"), "ior-patterns", NULL);
    char *three = g_build_filename(dir, "three", NULL);
    const char *argv[] = {"sh", "-c", "echo $$; exec \"$0\" --fd3 3>\"$1\"", program, three, NULL};
    struct test_report rep = report_of_run(dir, argv, "ior-patterns --fd3", PID_ON_STDOUT);
    JsonNode *f = file_entry(&rep, three);
    assert_int_equal(counter(f, "posix.writes"), 3);
    assert_int_equal(counter(f, "posix.opens"), 0);
    assert_int_equal(counter(f, "posix.seq_writes"), 2);
    assert_int_equal(counter(f, "posix.consec_writes"), 2);
    assert_int_equal(counter(f, "posix.max_written_offset"), 29);
    assert_true(test_json_number(f, three, "posix.first_open_s") == -1);
    test_report_free(&rep);

    /* Inherited in append mode, on a file of 50 bytes: 50, 60 and 70. */
    assert_true(g_file_set_contents(three, "0123456789012345678901234567890123456789012345678\n",
                                    50, NULL));
    argv[2] = "echo $$; exec \"$0\" --fd3 3>>\"$1\"";
    rep = report_of_run(dir, argv, "ior-patterns --fd3 (append)", PID_ON_STDOUT);
    f = file_entry(&rep, three);
    assert_int_equal(counter(f, "posix.writes"), 3);
    assert_int_equal(counter(f, "posix.seq_writes"), 3); /* 50: past the start */
    assert_int_equal(counter(f, "posix.consec_writes"), 2);
    assert_int_equal(counter(f, "posix.max_written_offset"), 79);
    test_report_free(&rep);

    g_free(three);
    g_free(program);
}

/* gzip's output is out.gz, not <stdout>. */
static void test_gzip_output_is_its_file(void **state)
{
    const char *dir = *state;
    char *in = g_build_filename(dir, "in.txt", NULL);
    char *out = g_build_filename(dir, "out.gz", NULL);
    assert_true(g_file_set_contents(in, "vigil vigil vigil vigil\n", -1, NULL));
    const char *gzip[] = {"sh", "-c", "echo $$ >&2; exec gzip -c \"$0\" >\"$1\"", in, out, NULL};
    struct test_report rep = report_of_run(dir, gzip, "gzip", PID_ON_STDERR);
    gsize size = 0;
    char *compressed = NULL;
    assert_true(g_file_get_contents(out, &compressed, &size, NULL));
    g_free(compressed);
    assert_int_equal(counter(file_entry(&rep, out), "written_bytes"), size);
    JsonArray *all = json_node_get_array(test_report_node(&rep, "files"));
    for (guint i = 0; i < json_array_get_length(all); i++)
        assert_string_not_equal(test_json_string(json_array_get_element(all, i), rep.path, "path"),
                                "<stdout>");
    test_report_free(&rep);
    g_free(in);
    g_free(out);
}

/* A kernel copy is a write in the operation table, and its input was read:
 * kernel_copies alone reads 1000 bytes each through copy_file_range,
 * sendfile and read (splice is not counted), and writes 4000 + 100 +
 * 1000 + 1000 + 100, besides the pid on stdout. The totals say so, as
 * they would had it copied through read(2) and write(2). */
static void test_kernel_copies_read_their_input(void **state)
{
    const char *dir = *state;
    struct test_report rep;
    struct test_run r = ior_patterns(dir, &rep, "--kernel-copies", dir, NULL);
    assert_int_equal(test_report_op(&rep, "posix", "copy_file_range", "bytes"), 1000);
    assert_int_equal(test_report_op(&rep, "posix", "sendfile", "bytes"), 1000);
    assert_int_equal(test_report_int(&rep, "io_bytes_read"), 3000);
    assert_int_equal(test_report_int(&rep, "io_bytes_written"), 6200 + strlen(r.out));
    test_report_free(&rep);
    test_run_clear(&r);
}

/* POSIX aio is counted when the program collects a request's result, as
 * the call it was, at its offset: two writes (one through lio_listio) and
 * a read; a write nobody collected is not counted; nor are requests past
 * the 4096 in flight the library follows, which it says. */
static void test_aio_requests(void **state)
{
    const char *dir = *state;
    struct test_report rep;
    struct test_run r = ior_patterns(dir, &rep, "--aio", dir, NULL);
    assert_int_equal(test_report_op(&rep, "posix", "aio_write", "calls"), 2 + 4096);
    assert_int_equal(test_report_op(&rep, "posix", "aio_write", "bytes"), 2000 + 4096);
    assert_int_equal(test_report_op(&rep, "posix", "aio_read", "calls"), 1);
    assert_int_equal(test_report_op(&rep, "posix", "aio_read", "bytes"), 500);
    assert_int_equal(test_report_int(&rep, "io_bytes_read"), 500);
    static const struct expected aio = {
        /* name      opens reads writes seeks other  rbytes wbytes  maxr  maxw  sr cr sw cw */
        "aio.dat", 1, 1, 2, 0, 1, 500, 2000, 499, 1999, 0, 0, 1, 1};
    check_file(&rep, dir, &aio);
    /* 4100 requests in flight at once: the 4096 the library follows are
     * counted, the other 4 are not, and stderr says so. */
    char *many = g_build_filename(dir, "aio.many", NULL);
    assert_int_equal(counter(file_entry(&rep, many), "posix.writes"), 4096);
    test_assert_contains(r.err, "vigil: more POSIX aio requests in flight than the 4096 it "
                                "follows: the others are not counted\n");
    g_free(many);
    test_report_free(&rep);
    test_run_clear(&r);
}

/* More paths than the file table holds (65536 slots): each path is a file
 * or is counted as untracked, and the report says how many were not. */
static void test_file_table_full(void **state)
{
    const char *dir = *state;
    enum { paths = 70000 };
    char *count = g_strdup_printf("%d", paths);
    struct test_report rep;
    struct test_run r = ior_patterns(dir, &rep, "--many-paths", dir, count, NULL);
    gint64 untracked = test_report_int(&rep, "files_untracked");
    gint64 tracked = 0;
    JsonArray *all = json_node_get_array(test_report_node(&rep, "files"));
    for (guint i = 0; i < json_array_get_length(all); i++)
        tracked += strstr(test_json_string(json_array_get_element(all, i), rep.path, "path"),
                          "/missing.") != NULL;
    assert_true(untracked > 0);
    assert_int_equal(tracked + untracked, paths);
    assert_int_equal(test_report_op(&rep, "posix", "stat", "calls"), paths);
    test_report_free(&rep);
    test_run_clear(&r);
    g_free(count);
}

/* One name per file: gzip given "./in.txt" opens "." and then "in.txt"
 * under it, and "../" from a subfolder leads back to the same file; each
 * is the file's one clean name (from the working directory's real path,
 * since that is what the library joins them to). */
static void test_relative_names_are_clean(void **state)
{
    char *dir = realpath(*state, NULL);
    assert_non_null(dir);
    char *in = g_build_filename(dir, "in.txt", NULL);
    char *sub = g_build_filename(dir, "sub", NULL);
    assert_true(g_file_set_contents(in, "vigil vigil vigil vigil\n", -1, NULL));
    assert_int_equal(g_mkdir_with_parents(sub, 0700), 0);
    g_free(sub);
    /* The shell execs the program, so its pid names the report. */
    const char *argv[] = {"sh", "-c", "echo $$ >&2; exec gzip -c ./in.txt >.//out.gz", NULL};
    struct test_report rep = report_of_run(dir, argv, "gzip -c ./in.txt", PID_ON_STDERR);
    assert_int_equal(counter(file_entry(&rep, in), "read_bytes"), 24);
    JsonArray *all = json_node_get_array(test_report_node(&rep, "files"));
    for (guint i = 0; i < json_array_get_length(all); i++) {
        const char *path = test_json_string(json_array_get_element(all, i), rep.path, "path");
        if (strstr(path, "/.") != NULL || strstr(path, "//") != NULL)
            fail_msg("%s: a files entry is named %s", rep.path, path);
    }
    test_report_free(&rep);

    /* Into a pipe, where cat reads with read(2), not copy_file_range. */
    argv[2] = "echo $$ >&2; cd sub && exec cat ../in.txt";
    rep = report_of_run(dir, argv, "cat ../in.txt from sub", PID_ON_STDERR);
    assert_int_equal(counter(file_entry(&rep, in), "read_bytes"), 24);
    test_report_free(&rep);
    g_free(in);
    free(dir);
}

/* A program logging through open(O_APPEND) pays no system call for its
 * offsets: N appends through two descriptions, traced by strace, make no
 * lseek, and their offsets are still exact (the file held 50 bytes). */
static void test_append_without_lseek(void **state)
{
    const char *dir = *state;
    enum { appends = 1000 };
    char *program = g_build_filename(test_env_or_fail("VIGIL_TEST_PROGRAMS"), "ior-patterns", NULL);
    char *log = g_build_filename(dir, "log", NULL);
    char *trace = g_build_filename(dir, "trace", NULL);
    char *count = g_strdup_printf("%d", appends);
    char *preload = g_strdup_printf("LD_PRELOAD=%s", test_env_or_fail("VIGIL_PRELOAD_LIB"));
    char *strace = g_find_program_in_path("strace");
    if (strace == NULL)
        fail_msg("strace is not on the PATH (tools/bootstrap installs it)");
    assert_true(
        g_file_set_contents(log, "0123456789012345678901234567890123456789012345678\n", 50, NULL));
    /* LD_PRELOAD for the traced program only, not for strace itself. */
    const char *argv[] = {strace, "-f",    "-qq",   "-e",       "trace=lseek", "-o",  trace,
                          "-E",   preload, program, "--append", log,           count, NULL};
    char *report = g_strdup_printf("VIGIL_REPORT=%s/report-%%p.json", dir);
    const char *vars[] = {report, "VIGIL_REPORT_FORMAT=json", "VIGIL_SOCKET=/nonexistent", NULL};
    char **env = test_clean_environment(vars);
    struct test_run r = test_run_program(dir, argv, env);
    test_assert_status(&r, 0, "strace ior-patterns --append");

    char *traced = test_read_file(trace);
    if (strstr(traced, "lseek(") != NULL)
        fail_msg("%d appends made lseek calls:\n%.2000s", appends, traced);

    struct test_report rep = load_report_of(dir, strtol(r.out, NULL, 10));
    JsonNode *f = file_entry(&rep, log);
    assert_int_equal(counter(f, "posix.writes"), appends);
    assert_int_equal(counter(f, "posix.seq_writes"), appends); /* the first, at 50: too */
    assert_int_equal(counter(f, "posix.consec_writes"), appends - 1);
    assert_int_equal(counter(f, "posix.max_written_offset"), 50 + appends * 100 - 1);
    /* All consecutive: stride 0, which Darshan does not list. */
    assert_int_equal(array_length(f, "posix.common_strides"), 0);
    test_report_free(&rep);
    test_run_clear(&r);
    g_strfreev(env);
    g_free(report);
    g_free(traced);
    g_free(strace);
    g_free(preload);
    g_free(count);
    g_free(trace);
    g_free(log);
    g_free(program);
}

TEST_MAIN(cmocka_unit_test_setup_teardown(test_ior_patterns, setup, teardown),
          cmocka_unit_test_setup_teardown(test_inherited_descriptors, setup, teardown),
          cmocka_unit_test_setup_teardown(test_gzip_output_is_its_file, setup, teardown),
          cmocka_unit_test_setup_teardown(test_append_without_lseek, setup, teardown),
          cmocka_unit_test_setup_teardown(test_kernel_copies_read_their_input, setup, teardown),
          cmocka_unit_test_setup_teardown(test_relative_names_are_clean, setup, teardown),
          cmocka_unit_test_setup_teardown(test_aio_requests, setup, teardown),
          cmocka_unit_test_setup_teardown(test_file_table_full, setup, teardown))
