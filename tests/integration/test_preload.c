/* Integration tests of libvigil-preload.so: programs run under LD_PRELOAD,
 * their behaviour compared with a run without it, and their JSON reports
 * checked against what they are known to have done.
 *
 * Needs VIGIL_PRELOAD_LIB (the library) and VIGIL_TEST_PROGRAMS (the
 * directory of the helper programs), which meson test sets. Every test
 * works in a fresh temporary directory, removed at its end. */
#define _GNU_SOURCE /* memmem */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "test_report.h"
#include "test_support.h"

/* ---- running programs ---------------------------------------------------------- */

/* The path of one of our helper programs (g_free it). */
static char *helper(const char *name)
{
    return g_build_filename(test_env_or_fail("VIGIL_TEST_PROGRAMS"), name, NULL);
}

/* Runs argv (NULL-terminated; argv[0] is looked up in PATH if it has no
 * slash) in `cwd`, with stdin from /dev/null, stdout and stderr captured.
 * The environment is this process's, without LD_PRELOAD or any VIGIL_*
 * variable, plus LD_PRELOAD=$VIGIL_PRELOAD_LIB when `preload`, plus `vars`
 * (NULL-terminated "NAME=value" strings, or NULL). */
static struct test_run run_program(const char *cwd, bool preload, const char *const *vars,
                                   const char *const *argv)
{
    char **env = test_clean_environment(vars);
    if (preload)
        env = g_environ_setenv(env, "LD_PRELOAD", test_env_or_fail("VIGIL_PRELOAD_LIB"), TRUE);
    struct test_run r = test_run_program(cwd, argv, env);
    g_strfreev(env);
    return r;
}

/* ---- reports ------------------------------------------------------------------------ */

/* A field ("calls", "bytes", "errors") of an operation of the POSIX or
 * the stdio layer: see test_report_op. */
static gint64 posix(const struct test_report *rep, const char *op, const char *field)
{
    return test_report_op(rep, "posix", op, field);
}

/* An operation's expected figure in a report: LAYER.OP.FIELD is WANT. */
struct op_figure {
    const char *layer, *op, *field;
    gint64 want;
};

/* Fails, naming the figure and both values, unless each of figures[] is
 * as expected. */
static void check_ops(const struct test_report *rep, const struct op_figure *figures, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct op_figure *f = &figures[i];
        gint64 got = test_report_op(rep, f->layer, f->op, f->field);
        if (got != f->want)
            fail_msg("%s: layers.%s.%s.%s is %" G_GINT64_FORMAT ", not %" G_GINT64_FORMAT,
                     rep->path, f->layer, f->op, f->field, got, f->want);
    }
}

/* The "files" entry of a path, or NULL. */
static JsonObject *report_file(const struct test_report *rep, const char *path)
{
    JsonNode *files = test_report_node(rep, "files");
    if (files == NULL || !JSON_NODE_HOLDS_ARRAY(files))
        fail_msg("%s: no files array", rep->path);
    JsonArray *array = json_node_get_array(files);
    for (guint i = 0; i < json_array_get_length(array); i++) {
        JsonObject *entry = json_array_get_object_element(array, i);
        if (entry != NULL && json_object_has_member(entry, "path") &&
            g_strcmp0(json_object_get_string_member(entry, "path"), path) == 0)
            return entry;
    }
    return NULL;
}

/* A field of the files entry of `path`, which must be there. */
static gint64 file_field(const struct test_report *rep, const char *path, const char *field)
{
    JsonObject *entry = report_file(rep, path);
    if (entry == NULL) {
        char *text = NULL;
        g_file_get_contents(rep->path, &text, NULL, NULL);
        fail_msg("%s: no files entry for %s in %s", rep->path, path, text);
    }
    if (!json_object_has_member(entry, field))
        fail_msg("%s: the files entry for %s has no %s", rep->path, path, field);
    return json_object_get_int_member(entry, field);
}

/* ---- files and directories -------------------------------------------------------- */

/* dir/name (g_free it). */
static char *in_dir(const char *dir, const char *name)
{
    return g_build_filename(dir, name, NULL);
}

/* Names of the entries of `dir` that start with `prefix`, sorted. */
static GPtrArray *dir_entries(const char *dir, const char *prefix)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    GDir *d = g_dir_open(dir, 0, NULL);
    assert_non_null(d);
    for (const char *name = g_dir_read_name(d); name != NULL; name = g_dir_read_name(d))
        if (g_str_has_prefix(name, prefix))
            g_ptr_array_add(names, g_strdup(name));
    g_dir_close(d);
    g_ptr_array_sort(names, (GCompareFunc)g_strcmp0);
    return names;
}

/* "line 1\n" … "line N\n", what filler writes. */
static char *filler_text(long lines)
{
    GString *s = g_string_new(NULL);
    for (long i = 1; i <= lines; i++)
        g_string_append_printf(s, "line %ld\n", i);
    return g_string_free(s, FALSE);
}

/* filler writing `lines` lines into DIR/lines under the library with
 * `vars`: it exits 0 and its file is whole, whatever the library did. */
static struct test_run run_filler(const char *dir, const char *const *vars, long lines)
{
    char *program = helper("filler"), *target = in_dir(dir, "lines");
    char *count = g_strdup_printf("%ld", lines);
    const char *argv[] = {program, target, count, NULL};
    struct test_run r = run_program(dir, true, vars, argv);
    test_assert_status(&r, 0, "filler");
    char *text = test_read_file(target), *expected = filler_text(lines);
    assert_string_equal(text, expected);
    g_free(expected);
    g_free(text);
    g_free(count);
    g_free(target);
    g_free(program);
    return r;
}

/* The JSON report DIR/NAME, which must be named PREFIX-PID.json after the
 * pid it holds. */
static struct test_report load_pid_report(const char *dir, const char *prefix, const char *name)
{
    char *path = in_dir(dir, name);
    struct test_report rep = test_report_load(path);
    gint64 pid = test_report_int(&rep, "pid");
    assert_true(pid > 0);
    char *want = g_strdup_printf("%s%" G_GINT64_FORMAT ".json", prefix, pid);
    assert_string_equal(name, want);
    g_free(want);
    g_free(path);
    return rep;
}

/* ---- transparency -------------------------------------------------------------------- */

/* What transparency.c does; see the table at its top. */
enum {
    T_READS = 10,
    T_READ_ERRORS = 3,
    T_READ_BYTES = 33,
    T_WRITES = 10,
    T_WRITE_ERRORS = 1,
    T_WRITE_BYTES = 33,
    T_OPENS = 13,
    T_LSEEKS = 7,
    T_PREADS = 3,
    T_CLOSES = 20,
};

static bool file_contains(const char *path, const char *needle)
{
    char *data = NULL;
    gsize length = 0;
    if (!g_file_get_contents(path, &data, &length, NULL))
        fail_msg("cannot read %s", path);
    bool found = memmem(data, length, needle, strlen(needle)) != NULL;
    g_free(data);
    return found;
}

static void transparency_of(const char *dir, const char *program_name, bool fortified)
{
    char *program = helper(program_name);
    /* The fortified build must really call the _chk variants, the other not. */
    assert_true(file_contains(program, "__read_chk") == fortified);
    assert_true(file_contains(program, "__pread64_chk") == fortified);
    assert_true(file_contains(program, "__fgets_chk") == fortified);
    assert_true(file_contains(program, "__fread_chk") == fortified);
    assert_true(file_contains(program, "__fread_unlocked_chk") == fortified);

    char *plain_dir = in_dir(dir, "plain"), *preload_dir = in_dir(dir, "preload");
    char *report_path = in_dir(dir, "report.json");
    assert_int_equal(g_mkdir(plain_dir, 0700), 0);
    assert_int_equal(g_mkdir(preload_dir, 0700), 0);

    const char *plain_argv[] = {program, plain_dir, NULL};
    struct test_run plain = run_program(dir, false, NULL, plain_argv);
    char *report_var = g_strdup_printf("VIGIL_REPORT=%s", report_path);
    const char *vars[] = {report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    const char *preload_argv[] = {program, preload_dir, NULL};
    struct test_run preloaded = run_program(dir, true, vars, preload_argv);

    test_assert_status(&plain, 0, "transparency without the library");
    assert_int_equal(preloaded.status, plain.status);
    assert_string_equal(preloaded.out, plain.out);
    char *plain_log = in_dir(plain_dir, "log"), *preload_log = in_dir(preload_dir, "log");
    char *plain_text = test_read_file(plain_log), *preload_text = test_read_file(preload_log);
    /* The battery ran to its end, and the failures it expects happened. */
    test_assert_contains(plain_text, "read-bad-fd ret=-1 errno=EBADF");
    test_assert_contains(plain_text, "read-directory ret=-1 errno=EISDIR");
    test_assert_contains(plain_text, "read-interrupted ret=-1 errno=EINTR");
    test_assert_contains(plain_text, "read-short ret=10 ");
    test_assert_contains(plain_text, "read-eof ret=0 ");
    test_assert_contains(plain_text, "handler open=3 write=6 lseek=0 read=6 ");
    test_assert_contains(plain_text, "fgets ret=9 ");
    test_assert_contains(plain_text, "\ndone\n");
    assert_string_equal(preload_text, plain_text);

    struct test_report rep = test_report_load(report_path);
    static const struct op_figure posix_ops[] = {
        {"posix", "read", "calls", T_READS},
        {"posix", "read", "errors", T_READ_ERRORS},
        {"posix", "read", "bytes", T_READ_BYTES},
        {"posix", "write", "calls", T_WRITES},
        {"posix", "write", "errors", T_WRITE_ERRORS},
        {"posix", "write", "bytes", T_WRITE_BYTES},
        {"posix", "open", "calls", T_OPENS},
        {"posix", "open", "errors", 1},
        {"posix", "lseek", "calls", T_LSEEKS},
        {"posix", "lseek", "errors", 1},
        {"posix", "pread", "calls", T_PREADS},
        {"posix", "pread", "errors", 1},
        {"posix", "pread", "bytes", 8},
        {"posix", "pwrite", "calls", 2},
        {"posix", "pwrite", "bytes", 10},
        {"posix", "readv", "bytes", 11},
        {"posix", "writev", "bytes", 11},
        {"posix", "dup", "calls", 1},
        {"posix", "dup2", "calls", 2},
        {"posix", "fcntl", "calls", 1},
        {"posix", "close", "calls", T_CLOSES},
    };
    check_ops(&rep, posix_ops, G_N_ELEMENTS(posix_ops));

    /* Per file: the four descriptors of one file, the reused 0-2, and the
     * calls made inside the signal handler. */
    char *ten = in_dir(preload_dir, "ten"), *dup = in_dir(preload_dir, "dup");
    char *f1 = in_dir(preload_dir, "f1"), *sig = in_dir(preload_dir, "sig");
    assert_int_equal(file_field(&rep, ten, "bytes_written"), 10);
    assert_int_equal(file_field(&rep, ten, "bytes_read"), 10);
    assert_int_equal(file_field(&rep, ten, "calls"), 8);
    assert_int_equal(file_field(&rep, dup, "bytes_written"), 4);
    assert_int_equal(file_field(&rep, dup, "bytes_read"), 4);
    assert_int_equal(file_field(&rep, f1, "bytes_written"), 4);
    assert_int_equal(file_field(&rep, f1, "bytes_read"), 4);
    assert_int_equal(file_field(&rep, sig, "bytes_written"), 6);
    assert_int_equal(file_field(&rep, sig, "bytes_read"), 6);
    /* Nothing went to the program's stdout: what fd 1 wrote went to f1. */
    JsonObject *out = report_file(&rep, "<stdout>");
    if (out != NULL)
        assert_int_equal(json_object_get_int_member(out, "bytes_written"), 0);

    /* The handler's stat (wrap_posix_paths.c) and the stdio calls. */
    static const struct op_figure handler_ops[] = {
        {"posix", "stat", "calls", 1},
        {"stdio", "fopen", "calls", 1},
        {"stdio", "fprintf", "calls", 1},
        {"stdio", "fwrite", "calls", 2}, /* fwrite_unlocked is one */
        {"stdio", "fwrite", "bytes", 4 + 3},
        {"stdio", "rewind", "calls", 2},
        {"stdio", "fgets", "calls", 1},
        {"stdio", "getdelim", "calls", 1},
        {"stdio", "getdelim", "bytes", 9},
        {"stdio", "fread", "calls", 2}, /* fread_unlocked is one */
        {"stdio", "fread", "bytes", 4 + 4},
        {"stdio", "fclose", "calls", 1},
    };
    check_ops(&rep, handler_ops, G_N_ELEMENTS(handler_ops));

    test_report_free(&rep);
    g_free(ten);
    g_free(dup);
    g_free(f1);
    g_free(sig);
    g_free(plain_text);
    g_free(preload_text);
    g_free(plain_log);
    g_free(preload_log);
    g_free(report_var);
    test_run_clear(&plain);
    test_run_clear(&preloaded);
    g_free(report_path);
    g_free(plain_dir);
    g_free(preload_dir);
    g_free(program);
}

static void test_transparency(void **state)
{
    transparency_of(*state, "transparency", false);
}

static void test_transparency_fortified(void **state)
{
    transparency_of(*state, "transparency-fortified", true);
}

/* ---- real programs ---------------------------------------------------------------------- */

/* "VIGIL_REPORT=DIR/report.json" and the JSON format. */
struct report_vars {
    char *path;
    char *var;
    const char *vars[4];
};

static void report_vars_init(struct report_vars *rv, const char *dir, const char *extra)
{
    rv->path = in_dir(dir, "report.json");
    rv->var = g_strdup_printf("VIGIL_REPORT=%s", rv->path);
    rv->vars[0] = rv->var;
    rv->vars[1] = "VIGIL_REPORT_FORMAT=json";
    rv->vars[2] = extra;
    rv->vars[3] = NULL;
}

static void report_vars_free(struct report_vars *rv)
{
    g_free(rv->path);
    g_free(rv->var);
}

static void test_stdout_is_untouched(void **state)
{
    char *printf_path = g_find_program_in_path("printf");
    assert_non_null(printf_path);
    const char *argv[] = {printf_path, "a\\nb\\n", NULL};
    const char *vars[] = {"VIGIL_REPORT=stderr", NULL};
    struct test_run r = run_program(*state, true, vars, argv);
    test_assert_err(&r, 0, "printf", "== vigil report: ", NULL);
    assert_string_equal(r.out, "a\nb\n");
    test_run_clear(&r);
    g_free(printf_path);
}

static void test_dd(void **state)
{
    const char *dir = *state;
    struct report_vars rv;
    report_vars_init(&rv, dir, NULL);
    char *out = in_dir(dir, "zeros");
    char *of = g_strdup_printf("of=%s", out);
    const char *argv[] = {"dd", "if=/dev/zero", of, "bs=1M", "count=64", NULL};
    struct test_run r = run_program(dir, true, rv.vars, argv);
    test_assert_status(&r, 0, "dd");

    struct test_report rep = test_report_load(rv.path);
    assert_int_equal(posix(&rep, "write", "calls"), 64);
    assert_int_equal(posix(&rep, "write", "bytes"), 67108864);
    assert_int_equal(file_field(&rep, out, "bytes_written"), 67108864);
    /* /dev/zero is excluded by default: its 64 reads are in the totals (the
     * README's "counted, not recorded"), but recorded as no activity and
     * listed as no file. */
    assert_true(test_report_int(&rep, "activities.excluded") >= 64);
    assert_true(posix(&rep, "read", "calls") >= 64);
    assert_true(posix(&rep, "read", "bytes") >= 67108864);
    /* Timed like any other: 64 MiB are not read in no time. */
    assert_true(posix(&rep, "read", "time_ns") > 0);
    assert_true(test_report_int(&rep, "io_bytes_read") >= 67108864);
    assert_null(report_file(&rep, "/dev/zero"));

    test_report_free(&rep);
    test_run_clear(&r);
    g_free(of);
    g_free(out);
    report_vars_free(&rv);
}

static void test_cp(void **state)
{
    const char *dir = *state;
    enum { SIZE = 8 << 20 };
    char *src = in_dir(dir, "src"), *dst = in_dir(dir, "dst");
    /* Pseudo-random bytes: no holes for cp to skip, nothing to compress. */
    GRand *rand = g_rand_new_with_seed(42);
    guint32 *data = g_malloc(SIZE);
    for (size_t i = 0; i < SIZE / sizeof *data; i++)
        data[i] = g_rand_int(rand);
    g_rand_free(rand);
    assert_true(g_file_set_contents(src, (const char *)data, SIZE, NULL));

    struct report_vars rv;
    report_vars_init(&rv, dir, NULL);
    /* No reflink (a clone moves no bytes); copy_file_range counts as a
     * write in the totals, and as a read of its source in the files. */
    const char *argv[] = {"cp", "--reflink=never", src, dst, NULL};
    struct test_run r = run_program(dir, true, rv.vars, argv);
    test_assert_status(&r, 0, "cp");

    char *copy = NULL;
    gsize length = 0;
    assert_true(g_file_get_contents(dst, &copy, &length, NULL));
    assert_int_equal(length, SIZE);
    assert_memory_equal(copy, data, SIZE);
    g_free(copy);
    g_free(data);

    struct test_report rep = test_report_load(rv.path);
    assert_int_equal(file_field(&rep, dst, "bytes_written"), SIZE);
    assert_int_equal(file_field(&rep, src, "bytes_read"), SIZE);
    assert_int_equal(file_field(&rep, src, "bytes_written"), 0);
    assert_int_equal(test_report_int(&rep, "io_bytes_written"), SIZE);

    test_report_free(&rep);
    test_run_clear(&r);
    report_vars_free(&rv);
    g_free(src);
    g_free(dst);
}

/* GNU's text tools go through gnulib's unlocked stdio (fread_unlocked,
 * fwrite_unlocked…) and getdelim: sort and sed read and write every byte
 * of a 1000-line file, and the report says so (it had said 0 and 0). */
static void test_text_tools(void **state)
{
    const char *dir = *state;
    char *in = in_dir(dir, "lines"), *out = in_dir(dir, "out");
    GString *text = g_string_new(NULL);
    for (int i = 1000; i > 0; i--)
        g_string_append_printf(text, "line %d\n", i);
    assert_true(g_file_set_contents(in, text->str, (gssize)text->len, NULL));
    const char *const commands[][6] = {
        {"sort", in, "-o", out, NULL},
        {"sed", "-n", "-e", "p", in, NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(commands); i++) {
        struct report_vars rv;
        report_vars_init(&rv, dir, NULL);
        /* sed writes to its stdout: a file, so that it is named. */
        char *script = g_strdup_printf("exec \"$@\" >\"%s.stdout\"", out);
        const char *argv[] = {
            "sh",           "-c",           script,         "sh",           commands[i][0],
            commands[i][1], commands[i][2], commands[i][3], commands[i][4], NULL};
        struct test_run r = run_program(dir, true, rv.vars, argv);
        test_assert_status(&r, 0, commands[i][0]);
        struct test_report rep = test_report_load(rv.path);
        assert_int_equal(test_report_int(&rep, "io_bytes_read"), (gint64)text->len);
        assert_int_equal(test_report_int(&rep, "io_bytes_written"), (gint64)text->len);
        assert_int_equal(file_field(&rep, in, "bytes_read"), (gint64)text->len);
        test_report_free(&rep);
        test_run_clear(&r);
        report_vars_free(&rv);
        g_free(script);
    }
    g_string_free(text, TRUE);
    g_free(in);
    g_free(out);
}

static void test_tar(void **state)
{
    const char *dir = *state;
    char *data = in_dir(dir, "data");
    assert_int_equal(g_mkdir(data, 0700), 0);
    static const struct {
        const char *name;
        size_t size;
    } files[] = {{"a", 1000}, {"b", 20000}, {"c", 5}, {"d", 70000}};
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
        char *path = g_build_filename(data, files[i].name, NULL);
        char *text = g_malloc(files[i].size);
        memset(text, 'a' + (int)i, files[i].size);
        assert_true(g_file_set_contents(path, text, (gssize)files[i].size, NULL));
        g_free(text);
        g_free(path);
    }

    struct report_vars rv;
    report_vars_init(&rv, dir, NULL);
    /* Relative paths: the library makes them absolute from the cwd. */
    const char *argv[] = {"tar", "--totals", "-cf", "OUT.tar", "data", NULL};
    struct test_run r = run_program(dir, true, rv.vars, argv);
    test_assert_status(&r, 0, "tar");
    const char *total = strstr(r.err, "Total bytes written: ");
    if (total == NULL)
        fail_msg("no totals in tar's stderr: %s", r.err);
    long long written = strtoll(total + strlen("Total bytes written: "), NULL, 10);
    assert_true(written >= 70000);

    struct test_report rep = test_report_load(rv.path);
    char *archive = in_dir(dir, "OUT.tar");
    assert_int_equal(file_field(&rep, archive, "bytes_written"), written);
    char *d = g_build_filename(data, "d", NULL);
    assert_int_equal(file_field(&rep, d, "bytes_read"), 70000);

    g_free(d);
    g_free(archive);
    test_report_free(&rep);
    test_run_clear(&r);
    report_vars_free(&rv);
    g_free(data);
}

/* jobs[0].DIRECTION.io_bytes and .total_ios of a fio JSON output. */
static void fio_result(const char *path, const char *direction, gint64 *io_bytes, gint64 *total_ios)
{
    JsonParser *parser = json_parser_new();
    GError *error = NULL;
    if (!json_parser_load_from_file(parser, path, &error))
        fail_msg("fio's output %s is not JSON: %s", path, error->message);
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *jobs = json_object_get_array_member(root, "jobs");
    assert_non_null(jobs);
    assert_true(json_array_get_length(jobs) >= 1);
    JsonObject *job = json_array_get_object_element(jobs, 0);
    JsonObject *dir = json_object_get_object_member(job, direction);
    assert_non_null(dir);
    *io_bytes = json_object_get_int_member(dir, "io_bytes");
    *total_ios = json_object_get_int_member(dir, "total_ios");
    g_object_unref(parser);
}

/* One fio job on DIR/fio.data: `rw` is "write" or "read", `op` the POSIX
 * call its engine makes. */
static void fio_job(const char *dir, const char *rw, const char *engine, const char *op)
{
    char *target = in_dir(dir, "fio.data"), *output = in_dir(dir, "fio.json");
    char *filename = g_strdup_printf("--filename=%s", target);
    char *rw_arg = g_strdup_printf("--rw=%s", rw),
         *engine_arg = g_strdup_printf("--ioengine=%s", engine);
    char *output_arg = g_strdup_printf("--output=%s", output);
    struct report_vars rv;
    report_vars_init(&rv, dir, NULL);
    /* --thread: by default fio runs each job in a forked child, which has
     * its own report; as a thread the job counts in the one report here. */
    const char *argv[] = {"fio",      "--name=w", filename,
                          rw_arg,     "--bs=4k",  "--size=16M",
                          engine_arg, "--thread", "--output-format=json",
                          output_arg, NULL};
    struct test_run r = run_program(dir, true, rv.vars, argv);
    test_assert_status(&r, 0, "fio");

    gint64 io_bytes, total_ios;
    fio_result(output, rw, &io_bytes, &total_ios);
    assert_int_equal(io_bytes, 16 << 20);
    assert_true(total_ios >= (16 << 20) / 4096);
    struct test_report rep = test_report_load(rv.path);
    assert_int_equal(
        file_field(&rep, target, strcmp(rw, "read") == 0 ? "bytes_read" : "bytes_written"),
        io_bytes);
    assert_true(posix(&rep, op, "calls") >= total_ios);

    test_report_free(&rep);
    test_run_clear(&r);
    report_vars_free(&rv);
    g_free(filename);
    g_free(rw_arg);
    g_free(engine_arg);
    g_free(output_arg);
    g_free(target);
    g_free(output);
}

static void test_fio(void **state)
{
    char *fio = g_find_program_in_path("fio");
    test_skip_unless(fio != NULL, "fio is not installed");
    g_free(fio);
    fio_job(*state, "write", "sync", "write");
    fio_job(*state, "read", "psync", "pread"); /* on the file the first job wrote */
}

/* ---- helper programs ------------------------------------------------------------------------ */

static void test_threads(void **state)
{
    const char *dir = *state;
    struct report_vars rv;
    report_vars_init(&rv, dir, "VIGIL_EXCLUDE="); /* /dev/null counts like any file */
    char *program = helper("threads");
    const char *argv[] = {program, "16", "100000", NULL};
    struct test_run r = run_program(dir, true, rv.vars, argv);
    test_assert_status(&r, 0, "threads");

    struct test_report rep = test_report_load(rv.path);
    assert_int_equal(posix(&rep, "write", "calls"), 1600000);
    assert_int_equal(posix(&rep, "write", "bytes"), 1600000);
    assert_int_equal(posix(&rep, "write", "errors"), 0);
    assert_int_equal(test_report_int(&rep, "activities.excluded"), 0);
    assert_int_equal(file_field(&rep, "/dev/null", "bytes_written"), 1600000);
    assert_int_equal(file_field(&rep, "/dev/null", "calls"), 1600000 + 2); /* open, close */

    test_report_free(&rep);
    test_run_clear(&r);
    g_free(program);
    report_vars_free(&rv);
}

/* "VIGIL_REPORT=DIR/r-%p.json", JSON. */
static char *per_pid_report_var(const char *dir)
{
    return g_strdup_printf("VIGIL_REPORT=%s/r-%%p.json", dir);
}

/* `forker MODE DIR` under the library, with JSON reports per pid
 * (per_pid_report_var): it must exit 0 leaving `count` reports, whose
 * names it returns (g_ptr_array_free them). */
static GPtrArray *run_forker(const char *dir, const char *mode, guint count)
{
    char *report_var = per_pid_report_var(dir);
    const char *vars[] = {report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    char *program = helper("forker");
    const char *argv[] = {program, mode, dir, NULL};
    struct test_run r = run_program(dir, true, vars, argv);
    char *what = g_strdup_printf("forker %s", mode);
    test_assert_status(&r, 0, what);
    GPtrArray *reports = dir_entries(dir, "r-");
    assert_int_equal(reports->len, count);
    g_free(what);
    test_run_clear(&r);
    g_free(program);
    g_free(report_var);
    return reports;
}

static void test_fork(void **state)
{
    const char *dir = *state;
    GPtrArray *reports = run_forker(dir, "fork", 2);
    char *parent = in_dir(dir, "parent"), *child = in_dir(dir, "child");
    gint64 pids[2];
    bool saw_parent = false, saw_child = false;
    for (guint i = 0; i < 2; i++) {
        struct test_report rep = load_pid_report(dir, "r-", g_ptr_array_index(reports, i));
        pids[i] = test_report_int(&rep, "pid");
        gint64 writes = posix(&rep, "write", "calls");
        if (writes == 20) {
            saw_parent = true;
            assert_int_equal(file_field(&rep, parent, "bytes_written"), 20);
            assert_null(report_file(&rep, child));
        } else if (writes == 10) {
            saw_child = true;
            assert_int_equal(file_field(&rep, child, "bytes_written"), 10);
            assert_null(report_file(&rep, parent)); /* the parent's counts stay the parent's */
        } else {
            fail_msg("%s: %" G_GINT64_FORMAT " writes, neither 20 nor 10", rep.path, writes);
        }
        test_report_free(&rep);
    }
    assert_true(saw_parent && saw_child);
    assert_true(pids[0] != pids[1]);

    g_ptr_array_free(reports, TRUE);
    g_free(parent);
    g_free(child);
}

static void test_exec(void **state)
{
    const char *dir = *state;
    /* exec replaces the first image without exit handlers: one report. */
    GPtrArray *reports = run_forker(dir, "exec", 1);
    struct test_report rep = load_pid_report(dir, "r-", g_ptr_array_index(reports, 0));
    assert_string_equal(test_report_string(&rep, "argv.1"), "after");
    assert_int_equal(posix(&rep, "write", "calls"), 7);
    char *after = in_dir(dir, "after"), *before = in_dir(dir, "before");
    assert_int_equal(file_field(&rep, after, "bytes_written"), 7);
    assert_null(report_file(&rep, before));

    g_free(after);
    g_free(before);
    test_report_free(&rep);
    g_ptr_array_free(reports, TRUE);
}

static void test_full_ring(void **state)
{
    const char *dir = *state;
    struct report_vars rv;
    report_vars_init(&rv, dir, "VIGIL_RING_SLOTS=64");
    /* Nobody drains the ring: most records are dropped, none is lost from
     * the counts, and the program's output is whole. */
    struct test_run r = run_filler(dir, rv.vars, 10000);
    char *target = in_dir(dir, "lines"), *expected = filler_text(10000);
    struct test_report rep = test_report_load(rv.path);
    gint64 observed = test_report_int(&rep, "activities.observed");
    gint64 recorded = test_report_int(&rep, "activities.recorded");
    gint64 dropped = test_report_int(&rep, "activities.dropped");
    gint64 excluded = test_report_int(&rep, "activities.excluded");
    assert_true(dropped > 0);
    assert_true(recorded <= 64);
    assert_int_equal(recorded + dropped + excluded, observed);
    assert_int_equal(posix(&rep, "write", "calls"), 10000);
    assert_int_equal(file_field(&rep, target, "bytes_written"), (gint64)strlen(expected));

    test_report_free(&rep);
    g_free(expected);
    test_run_clear(&r);
    g_free(target);
    report_vars_free(&rv);
}

/* ---- configuration -------------------------------------------------------------------------- */

/* Bad path pointers answered by libc with an error, a descriptor number
 * reused after close_range, openat under an excluded directory: each once
 * went wrong (a crash, a pipe's bytes credited to a closed file, a /proc
 * file recorded). */
static void test_edges(void **state)
{
    const char *dir = *state;
    char *program = helper("edges");
    const char *argv[] = {program, dir, NULL};
    struct test_run plain = run_program(dir, false, NULL, argv);
    test_assert_status(&plain, 0, "edges without vigil");
    struct report_vars rv;
    report_vars_init(&rv, dir, NULL);
    struct test_run preloaded = run_program(dir, true, rv.vars, argv);
    test_assert_status(&preloaded, 0, "edges with vigil");
    assert_string_equal(preloaded.out, plain.out);
    test_assert_contains(plain.out, "access-bad-mode ret=-1 errno=EINVAL");
    test_assert_contains(plain.out, "stat-unterminated ret=-1 errno=ENAMETOOLONG");

    struct test_report rep = test_report_load(rv.path);
    char *closed = in_dir(dir, "closed-by-range");
    /* The file got its one byte, and none of the pipe's 100. */
    assert_int_equal(file_field(&rep, closed, "bytes_written"), 1);
    assert_int_equal(file_field(&rep, closed, "bytes_read"), 0);
    assert_null(report_file(&rep, "status"));
    assert_null(report_file(&rep, "/proc/self/status"));
    assert_true(test_report_int(&rep, "activities.excluded") >= 2); /* open /proc/self, openat */

    g_free(closed);
    test_report_free(&rep);
    report_vars_free(&rv);
    test_run_clear(&preloaded);
    test_run_clear(&plain);
    g_free(program);
}

static void test_report_off(void **state)
{
    const char *dir = *state;
    /* The same quiet program reports on stderr by default... */
    struct test_run r = run_filler(dir, NULL, 10);
    test_assert_contains(r.err, "== vigil report: ");
    test_run_clear(&r);
    /* ...and with VIGIL_REPORT=off says nothing, anywhere. */
    const char *vars[] = {"VIGIL_REPORT=off", "VIGIL_REPORT_FORMAT=json", NULL};
    r = run_filler(dir, vars, 10);
    assert_string_equal(r.err, "");
    assert_string_equal(r.out, "");
    GPtrArray *entries = dir_entries(dir, "");
    assert_int_equal(entries->len, 1); /* only the file filler wrote */
    assert_string_equal(g_ptr_array_index(entries, 0), "lines");
    g_ptr_array_free(entries, TRUE);
    test_run_clear(&r);
}

static void test_bad_ring_slots(void **state)
{
    const char *dir = *state;
    struct report_vars rv;
    report_vars_init(&rv, dir, "VIGIL_RING_SLOTS=abc");
    struct test_run r = run_filler(dir, rv.vars, 100);
    test_assert_contains(r.err, "VIGIL_RING_SLOTS=abc");
    /* The default ring was used: still instrumented, nothing dropped. */
    struct test_report rep = test_report_load(rv.path);
    assert_int_equal(posix(&rep, "write", "calls"), 100);
    assert_int_equal(test_report_int(&rep, "activities.dropped"), 0);

    test_report_free(&rep);
    test_run_clear(&r);
    report_vars_free(&rv);
}

/* The calls of 5 reads and 5 writes of dd on /dev/zero and /dev/null
 * counted as excluded with VIGIL_EXCLUDE=`exclude`. */
static int64_t excluded_by(const char *dir, const char *exclude)
{
    char *variable = g_strdup_printf("VIGIL_EXCLUDE=%s", exclude);
    struct report_vars rv;
    report_vars_init(&rv, dir, variable);
    const char *argv[] = {"dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=5", NULL};
    struct test_run r = run_program(dir, true, rv.vars, argv);
    test_assert_status(&r, 0, "dd");
    struct test_report rep = test_report_load(rv.path);
    int64_t excluded = test_report_int(&rep, "activities.excluded");
    test_report_free(&rep);
    test_run_clear(&r);
    report_vars_free(&rv);
    g_free(variable);
    return excluded;
}

/* VIGIL_EXCLUDE separates prefixes with ';', as [preload] exclude does;
 * the old ':' form is still read when there is no ';'; with a ';', a ':'
 * is part of a path. */
static void test_exclusion_separators(void **state)
{
    const char *dir = *state;
    assert_true(excluded_by(dir, "/nowhere;/dev") >= 10);
    assert_true(excluded_by(dir, "/nowhere:/dev") >= 10);
    assert_int_equal(excluded_by(dir, "/nowhere:/dev;"), 0);
    assert_int_equal(excluded_by(dir, ""), 0);
}

/* An exclusion list longer than the library holds is refused whole and
 * said so, never cut short: /dev/null, excluded by default, stays excluded. */
static void test_exclusion_list_too_long(void **state)
{
    const char *dir = *state;
    GString *list = g_string_new("VIGIL_EXCLUDE=");
    for (int i = 0; i < 20; i++)
        g_string_append_printf(list, "%s/nowhere%d", i ? ";" : "", i);
    struct report_vars rv;
    report_vars_init(&rv, dir, list->str);
    const char *argv[] = {"dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=10", NULL};
    struct test_run r = run_program(dir, true, rv.vars, argv);
    test_assert_err(&r, 0, "dd", "VIGIL_EXCLUDE has 20 prefixes", NULL);
    struct test_report rep = test_report_load(rv.path);
    assert_true(test_report_int(&rep, "activities.excluded") >= 20); /* 10 reads, 10 writes */
    test_report_free(&rep);
    test_run_clear(&r);
    report_vars_free(&rv);
    g_string_free(list, TRUE);
}

static void test_report_path_with_pid(void **state)
{
    const char *dir = *state;
    char *report_var = g_strdup_printf("VIGIL_REPORT=%s/report-%%p.json", dir);
    const char *vars[] = {report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    struct test_run r = run_filler(dir, vars, 3);

    GPtrArray *reports = dir_entries(dir, "report-");
    assert_int_equal(reports->len, 1);
    struct test_report rep = load_pid_report(dir, "report-", g_ptr_array_index(reports, 0));
    assert_int_equal(posix(&rep, "write", "calls"), 3);

    test_report_free(&rep);
    g_ptr_array_free(reports, TRUE);
    test_run_clear(&r);
    g_free(report_var);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, test_make_dir, test_remove_dir)
    const struct CMUnitTest tests[] = {
        T(test_transparency),
        T(test_transparency_fortified),
        T(test_stdout_is_untouched),
        T(test_edges),
        T(test_dd),
        T(test_cp),
        T(test_text_tools),
        T(test_tar),
        T(test_fio),
        T(test_threads),
        T(test_fork),
        T(test_exec),
        T(test_full_ring),
        T(test_report_off),
        T(test_bad_ring_slots),
        T(test_exclusion_list_too_long),
        T(test_exclusion_separators),
        T(test_report_path_with_pid),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
