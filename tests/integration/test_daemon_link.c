/* Integration tests of libvigil-preload.so's link to vigild: programs run
 * with LD_PRELOAD against a fake vigild (tests/support/test_fake_vigild.h) that
 * listens in a thread of this test, and their registrations and reports
 * checked: what REGISTER says, the summary in the report (energy and the
 * drained count, which must equal the records the library wrote), and
 * every way the link can fail (no daemon, one that never answers, never
 * accepts or refuses, VIGIL_SOCKET=off, a program that closes the
 * connection), forked children and exec'd images; and the REPORT each
 * process sends at exit: its exit status, and its report's JSON, from which
 * the report it printed can be made again byte for byte.
 *
 * Needs VIGIL_PRELOAD_LIB, VIGIL_TEST_PROGRAMS and VIGIL_CONNECT_SPY, which
 * meson test sets. Every test works in a fresh temporary directory. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "report_json.h"
#include "test_report.h"
#include "test_support.h"
#include "test_fake_vigild.h"

/* ---- running programs ------------------------------------------------------------------- */

static char *helper(const char *name)
{
    return g_build_filename(test_env_or_fail("VIGIL_TEST_PROGRAMS"), name, NULL);
}

struct child {
    pid_t pid;
    int status; /* exit status, or 128 + signal */
    char *out, *err;
};

/* Runs argv in `dir` with this process's environment cleaned of LD_PRELOAD
 * and VIGIL_* (test_clean_environment), plus `vars`, plus LD_PRELOAD =
 * `preload` unless NULL; stdin from /dev/null, stdout and stderr into
 * files, read back once it has ended. Its pid is known, so that the test
 * can compare it with what vigild was told. */
static struct child run_child(const char *dir, const char *preload, const char *const *vars,
                              const char *const *argv)
{
    char **env = test_clean_environment(vars);
    if (preload != NULL)
        env = g_environ_setenv(env, "LD_PRELOAD", preload, TRUE);
    char *out_path = g_build_filename(dir, ".child-out", NULL);
    char *err_path = g_build_filename(dir, ".child-err", NULL);
    int out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int err_fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(out_fd >= 0 && err_fd >= 0);
    struct child c = {0};
    GError *error = NULL;
    if (!g_spawn_async_with_fds(dir, (char **)argv, env,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDIN_FROM_DEV_NULL |
                                    G_SPAWN_SEARCH_PATH_FROM_ENVP,
                                NULL, NULL, &c.pid, -1, out_fd, err_fd, &error))
        fail_msg("cannot run %s: %s", argv[0], error->message);
    close(out_fd);
    close(err_fd);
    int wait_status;
    pid_t waited;
    do
        waited = waitpid(c.pid, &wait_status, 0);
    while (waited < 0 && errno == EINTR);
    assert_int_equal(waited, c.pid);
    c.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
    g_file_get_contents(out_path, &c.out, NULL, NULL);
    g_file_get_contents(err_path, &c.err, NULL, NULL);
    unlink(out_path);
    unlink(err_path);
    g_free(out_path);
    g_free(err_path);
    g_strfreev(env);
    return c;
}

static void child_clear(struct child *c)
{
    g_free(c->out);
    g_free(c->err);
}

static void assert_status(const struct child *c, int want, const char *what)
{
    if (c->status != want)
        fail_msg("%s exited with %d, not %d\nstdout: %s\nstderr: %s", what, c->status, want, c->out,
                 c->err);
}

static const char *preload_lib(void)
{
    return test_env_or_fail("VIGIL_PRELOAD_LIB");
}

/* Everything a test needs: its directory, the socket path, the variables. */
struct setup {
    const char *dir;
    char *socket_path;
    char *socket_var; /* VIGIL_SOCKET=… */
    char *report_path;
    char *report_var;
};

static struct setup setup_of(const char *dir, const char *report_name)
{
    struct setup s = {.dir = dir};
    s.socket_path = g_build_filename(dir, "vigild.sock", NULL);
    s.socket_var = g_strdup_printf("VIGIL_SOCKET=%s", s.socket_path);
    s.report_path = g_build_filename(dir, report_name, NULL);
    s.report_var = g_strdup_printf("VIGIL_REPORT=%s", s.report_path);
    return s;
}

static void setup_free(struct setup *s)
{
    g_free(s->socket_path);
    g_free(s->socket_var);
    g_free(s->report_path);
    g_free(s->report_var);
}

/* The rest of the line of `text` that starts with `prefix` (g_free it);
 * fails when there is none. */
static char *line_after(const char *text, const char *prefix)
{
    for (const char *line = text; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t length = end != NULL ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, prefix, strlen(prefix)) == 0)
            return g_strndup(line + strlen(prefix), length - strlen(prefix));
        line = end != NULL ? end + 1 : NULL;
    }
    fail_msg("no line starting with \"%s\" in:\n%s", prefix, text);
    return NULL;
}

/* The "recorded" count of a text report's activities line. */
static unsigned long long text_recorded(const char *report)
{
    char *rest = line_after(report, "activities: ");
    unsigned long long observed = 0, recorded = 0;
    if (sscanf(rest, "%llu observed, %llu recorded", &observed, &recorded) != 2)
        fail_msg("cannot read the activities line: %s", rest);
    g_free(rest);
    return recorded;
}

static void assert_line(const char *report, const char *prefix, const char *want)
{
    char *rest = line_after(report, prefix);
    if (strcmp(rest, want) != 0)
        fail_msg("%s\"%s\", not \"%s\"", prefix, rest, want);
    g_free(rest);
}

/* The JSON report's value at `dotted`, as compact JSON text. */
static void assert_json_text(const struct test_report *rep, const char *dotted, const char *want)
{
    JsonNode *node = test_report_node(rep, dotted);
    if (node == NULL)
        fail_msg("no %s in %s", dotted, rep->path);
    char *text = json_to_string(node, FALSE);
    if (strcmp(text, want) != 0)
        fail_msg("%s is %s, not %s", dotted, text, want);
    g_free(text);
}

#define ENERGY_LINE  "CONSUMED_ENERGY_JOULE      "
#define VIGILD_LINE  "VIGILD                     "
#define CAPTURE_LINE "CAPTURE                    "

static struct test_fake_vigild_settings answering(double energy_j, const char *source,
                                                  uint32_t flags, const char *note)
{
    return (struct test_fake_vigild_settings){
        .mode = TEST_FAKE_VIGILD_ANSWER,
        .energy_j = energy_j,
        .energy_source = source,
        .energy_flags = flags,
        .energy_note = note,
    };
}

static uint64_t realtime_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A test's fake vigild, and the program it ran under the library. */
struct linked {
    struct setup s;
    struct test_fake_vigild *d;
    char *filler; /* the helper most tests run */
    char *lines;  /* the file it writes: DIR/lines */
    struct child c;
};

/* Starts a fake vigild on the test's socket with `settings`, or, when
 * NULL, one that answers 1.5 J from energy/powercap. */
static struct linked linked_start(const char *dir, const char *report_name,
                                  const struct test_fake_vigild_settings *settings)
{
    struct linked t = {.s = setup_of(dir, report_name)};
    struct test_fake_vigild_settings powercap = answering(1.5, "energy/powercap", 0, NULL);
    t.d = test_fake_vigild_start(t.s.socket_path, settings != NULL ? settings : &powercap);
    t.filler = helper("filler");
    t.lines = g_build_filename(dir, "lines", NULL);
    return t;
}

/* Runs argv under the library with `vars`, fails unless it exits with
 * `want_status`, then stops the fake vigild: what it saw is whole. */
static void linked_run(struct linked *t, const char *const *vars, const char *const *argv,
                       int want_status)
{
    t->c = run_child(t->s.dir, preload_lib(), vars, argv);
    assert_status(&t->c, want_status, argv[0]);
    test_fake_vigild_stop(t->d);
}

/* linked_start with a text report, then filler writing `lines` lines
 * under the library with vigild's socket and the report's path: it must
 * exit 0. */
static struct linked
linked_filled(const char *dir, const struct test_fake_vigild_settings *settings, const char *lines)
{
    struct linked t = linked_start(dir, "report.txt", settings);
    const char *argv[] = {t.filler, t.lines, lines, NULL};
    const char *vars[] = {t.s.socket_var, t.s.report_var, NULL};
    linked_run(&t, vars, argv, 0);
    return t;
}

static void linked_clear(struct linked *t)
{
    child_clear(&t->c);
    test_fake_vigild_free(t->d);
    g_free(t->filler);
    g_free(t->lines);
    setup_free(&t->s);
}

/* The report a client sent to vigild, parsed; vigil_cli_report_clear it. */
static void parse_sent_report(const struct test_fake_vigild_client *r,
                              struct vigil_cli_report *stored)
{
    assert_non_null(r->report_json);
    GError *error = NULL;
    if (!vigil_cli_report_parse(r->report_json, -1, stored, &error))
        fail_msg("the report sent to vigild cannot be read: %s\n%s", error->message,
                 r->report_json);
}

/* ---- registration ------------------------------------------------------------------------ */

static void test_registration(void **state)
{
    struct linked t = linked_start(*state, "report.json", NULL);
    char program_real[PATH_MAX];
    assert_non_null(realpath(t.filler, program_real));
    const char *vars[] = {t.s.socket_var,      t.s.report_var,          "VIGIL_REPORT_FORMAT=json",
                          "SLURM_JOB_ID=4242", "VIGIL_RING_SLOTS=1024", NULL};
    const char *argv[] = {t.filler, t.lines, "10", NULL};
    uint64_t before_ns = realtime_ns();
    t.c = run_child(t.s.dir, preload_lib(), vars, argv);
    uint64_t after_ns = realtime_ns();
    assert_status(&t.c, 0, "filler");
    test_fake_vigild_stop(t.d);

    assert_int_equal(test_fake_vigild_count(t.d), 1);
    const struct test_fake_vigild_client *r = test_fake_vigild_client(t.d, 0);
    if (r->problem != NULL)
        fail_msg("the registration is refused: %s", r->problem);
    assert_true(r->registered);
    assert_int_equal(r->pid, t.c.pid); /* SO_PEERCRED: the program itself registered */
    assert_int_equal(r->uid, getuid());
    assert_string_equal(r->program, program_real);
    assert_string_equal(r->cwd, t.s.dir);
    assert_string_equal(r->job, "4242");
    assert_int_equal(r->fixed.argc, 3);
    assert_int_equal(r->argv->len, 3);
    for (guint i = 0; i < 3; i++)
        assert_string_equal(g_ptr_array_index(r->argv, i), argv[i]);
    assert_int_equal(r->fixed.flags, 0);
    assert_int_equal(r->fixed.mpi_rank, -1);
    assert_int_equal(r->rank, -1); /* no MPI: no RANK */
    /* The ring it passed is one vigild can attach, of the size it says. */
    assert_true(r->ring_attached);
    assert_int_equal(r->ring_slots, 1024);
    assert_int_equal(r->fixed.ring_slots, 1024);
    assert_true(r->fixed.start_realtime_ns >= before_ns && r->fixed.start_realtime_ns <= after_ns);
    assert_true(r->fixed.start_monotonic_ns > 0);
    assert_int_equal(r->summary_requests, 1);
    assert_true(r->closed);
    /* It read everything it was sent before it ended: vigild sees an end,
     * not a reset. */
    assert_false(r->reset);

    struct test_report rep = test_report_load(t.s.report_path);
    assert_int_equal(test_report_int(&rep, "pid"), t.c.pid);
    assert_int_equal(test_report_int(&rep, "vigild.process_id"), r->process_id);
    test_report_free(&rep);
    linked_clear(&t);
}

/* Without SLURM_JOB_ID the job is empty; without arguments argv is the
 * program's name alone. */
static void test_registration_without_job(void **state)
{
    struct linked t = linked_start(*state, "report.txt", NULL);
    const char *vars[] = {t.s.socket_var, t.s.report_var, NULL};
    const char *argv[] = {"true", NULL};
    linked_run(&t, vars, argv, 0);
    assert_int_equal(test_fake_vigild_count(t.d), 1);
    const struct test_fake_vigild_client *r = test_fake_vigild_client(t.d, 0);
    assert_true(r->registered);
    assert_string_equal(r->job, "");
    assert_int_equal(r->argv->len, 1);
    assert_string_equal(g_ptr_array_index(r->argv, 0), "true");
    linked_clear(&t);
}

/* ---- the summary in the report --------------------------------------------------------- */

static void test_summary_in_text_report(void **state)
{
    struct linked t = linked_filled(*state, NULL, "50");
    assert_string_equal(t.c.err, ""); /* the report went to its file; nothing else was said */

    char *report = test_read_file(t.s.report_path);
    assert_line(report, ENERGY_LINE, "1.500 (energy/powercap)");
    unsigned long long recorded = text_recorded(report);
    assert_true(recorded >= 52); /* open, 50 writes, close */
    const struct test_fake_vigild_client *r = test_fake_vigild_client(t.d, 0);
    /* What vigild drained is what the library wrote: all of it, and only it. */
    assert_int_equal(r->answered_activities, recorded);
    assert_int_equal(r->activities, recorded);
    assert_false(r->reset);
    char *want = g_strdup_printf("process %llu: %llu activities drained, 0 gaps, 0 dropped",
                                 (unsigned long long)r->process_id, recorded);
    assert_line(report, VIGILD_LINE, want);
    /* The fake's capture: the process ended within its first cycle, which
     * is not decided yet, so vigild holds everything it drained. */
    char *capture = g_strdup_printf("anomalies: 0 abnormal cycles of 0; 0 of %llu activities "
                                    "forwarded (0.0 %%), 0 dropped, 0 lost, %llu held at exit",
                                    recorded, recorded);
    assert_line(report, CAPTURE_LINE, capture);
    test_assert_contains(report, "0 dropped (ring full), ");

    g_free(capture);
    g_free(want);
    g_free(report);
    linked_clear(&t);
}

/* The calls of each operation in a JSON report's layers, as "layer.op=calls;". */
static char *calls_by_op(const struct test_report *rep)
{
    GString *out = g_string_new(NULL);
    JsonObject *layers = test_report_object(rep, "layers");
    GList *names = json_object_get_members(layers);
    names = g_list_sort(names, (GCompareFunc)g_strcmp0);
    for (GList *l = names; l != NULL; l = l->next) {
        JsonObject *ops = json_object_get_object_member(layers, l->data);
        GList *op_names = g_list_sort(json_object_get_members(ops), (GCompareFunc)g_strcmp0);
        for (GList *o = op_names; o != NULL; o = o->next)
            g_string_append_printf(
                out, "%s.%s=%" G_GINT64_FORMAT ";", (const char *)l->data, (const char *)o->data,
                json_object_get_int_member(json_object_get_object_member(ops, o->data), "calls"));
        g_list_free(op_names);
    }
    g_list_free(names);
    return g_string_free(out, FALSE);
}

/* vigild's [insight] thresholds, sent after the summary, make the
 * findings; without them (an older vigild), the defaults do. */
static void test_findings_with_vigilds_thresholds(void **state)
{
    struct vigil_insight_thresholds insight;
    vigil_insight_defaults(&insight);
    insight.metadata_min_calls = 1; /* filler's one open is then too much */
    insight.metadata_share = 0.001;
    struct test_fake_vigild_settings settings = answering(1.5, "energy/powercap", 0, NULL);
    settings.insight = &insight;
    struct linked t = linked_start(*state, "report.json", &settings);
    const char *argv[] = {t.filler, t.lines, "50", NULL};
    const char *vars[] = {t.s.socket_var, t.s.report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    linked_run(&t, vars, argv, 0);
    struct test_report rep = test_report_load(t.s.report_path);
    assert_string_equal(test_report_string(&rep, "findings_thresholds"), "vigild");
    assert_string_equal(test_report_string(&rep, "findings.0.id"), "metadata_heavy");
    assert_null(test_report_node(&rep, "findings.1"));
    /* What vigild keeps is what was printed, findings included. */
    const struct test_fake_vigild_client *r = test_fake_vigild_client(t.d, 0);
    struct vigil_cli_report stored;
    parse_sent_report(r, &stored);
    assert_int_equal(stored.r.finding_count, 1);
    assert_string_equal(stored.r.findings[0].id, "metadata_heavy");
    vigil_cli_report_clear(&stored);
    test_report_free(&rep);
    linked_clear(&t);

    /* The same fake without INSIGHT: the defaults, which say nothing here. */
    t = linked_start(*state, "report.json", NULL);
    const char *argv_again[] = {t.filler, t.lines, "50", NULL};
    const char *vars_again[] = {t.s.socket_var, t.s.report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    linked_run(&t, vars_again, argv_again, 0);
    rep = test_report_load(t.s.report_path);
    assert_string_equal(test_report_string(&rep, "findings_thresholds"), "defaults");
    assert_null(test_report_node(&rep, "findings.0"));
    assert_string_equal(test_report_string(&rep, "vigild.state"), "summary");
    test_report_free(&rep);
    linked_clear(&t);
}

static void test_summary_in_json_report(void **state)
{
    struct linked t = linked_start(*state, "report.json", NULL);
    const char *argv[] = {t.filler, t.lines, "50", NULL};
    const char *vars[] = {t.s.socket_var, t.s.report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    linked_run(&t, vars, argv, 0);

    struct test_report rep = test_report_load(t.s.report_path);
    assert_true(test_report_number(&rep, "energy_joule") == 1.5);
    assert_string_equal(test_report_string(&rep, "energy_source"), "energy/powercap");
    assert_false(json_node_get_boolean(test_report_node(&rep, "energy_estimated")));
    assert_true(JSON_NODE_HOLDS_NULL(test_report_node(&rep, "energy_note")));
    assert_string_equal(test_report_string(&rep, "vigild.state"), "summary");
    assert_true(JSON_NODE_HOLDS_NULL(test_report_node(&rep, "vigild.reason")));
    const struct test_fake_vigild_client *r = test_fake_vigild_client(t.d, 0);
    gint64 recorded = test_report_int(&rep, "activities.recorded");
    assert_int_equal(test_report_int(&rep, "vigild.activities_drained"), recorded);
    assert_int_equal(r->activities, recorded);
    assert_int_equal(test_report_int(&rep, "vigild.names_drained"), r->names);
    assert_true(r->names >= 1); /* the file's name went before its first activity */
    assert_int_equal(test_report_int(&rep, "vigild.gaps"), 0);
    assert_true(test_report_number(&rep, "vigild.cpu_seconds") == 0.5);
    char *capture = g_strdup_printf(
        "{\"mode\":\"anomalies\",\"cycles\":0,\"abnormal_cycles\":0,\"observed\":%" G_GINT64_FORMAT
        ",\"forwarded\":0,\"dropped\":0,\"lost\":0,\"held\":%" G_GINT64_FORMAT "}",
        recorded, recorded);
    assert_json_text(&rep, "vigild.capture", capture);
    g_free(capture);

    /* The library's own socket calls were neither counted nor recorded:
     * the report's calls are those of a run without vigild, and no socket
     * operation went into the ring. */
    const char *off_vars[] = {"VIGIL_SOCKET=off", t.s.report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    struct child alone = run_child(t.s.dir, preload_lib(), off_vars, argv);
    assert_status(&alone, 0, "filler without vigild");
    struct test_report alone_rep = test_report_load(t.s.report_path);
    char *with = calls_by_op(&rep), *without = calls_by_op(&alone_rep);
    assert_string_equal(with, without);
    assert_int_equal(test_report_int(&alone_rep, "activities.recorded"), recorded);
    for (unsigned op = VIGIL_OP_POSIX_SEND; op <= VIGIL_OP_POSIX_RECVMSG; op++)
        assert_int_equal(r->ops[op], 0);

    g_free(with);
    g_free(without);
    test_report_free(&alone_rep);
    test_report_free(&rep);
    child_clear(&alone);
    linked_clear(&t);
}

/* ---- the report for vigild ---------------------------------------------------------------- */

/* The report a process printed (text) is the one its JSON for vigild
 * gives back, byte for byte: `vigil report` prints the stored JSON so. The
 * run key it registered with is the report's. */
static void test_report_for_vigild_gives_the_printed_text(void **state)
{
    struct linked t = linked_start(*state, "report.txt", NULL);
    char *target = g_build_filename(t.s.dir, "caf\xe9 \x01lines", NULL); /* odd bytes too */
    const char *vars[] = {t.s.socket_var, t.s.report_var, "VIGIL_RUN_ID=link-test-1", NULL};
    const char *argv[] = {t.filler, target, "20", NULL};
    linked_run(&t, vars, argv, 0);

    assert_int_equal(test_fake_vigild_count(t.d), 1);
    const struct test_fake_vigild_client *r = test_fake_vigild_client(t.d, 0);
    assert_string_equal(r->run_key, "link-test-1");
    assert_int_equal(r->reports, 1);
    assert_int_equal(r->exit_code, 0);
    assert_true(r->report_sealed);
    assert_false(r->reset);
    struct vigil_cli_report stored;
    parse_sent_report(r, &stored);
    char *printed = test_read_file(t.s.report_path);
    char *again = vigil_cli_report_text(&stored.r);
    if (strcmp(printed, again) != 0)
        fail_msg("printed:\n%s\nfrom the JSON sent to vigild:\n%s", printed, again);
    assert_line(printed, "RUN                        ", "link-test-1");
    g_free(again);
    g_free(printed);
    vigil_cli_report_clear(&stored);
    g_free(target);
    linked_clear(&t);
}

/* With VIGIL_REPORT_FORMAT=json, the JSON vigild gets is the file's. */
static void test_report_for_vigild_is_the_printed_json(void **state)
{
    struct test_fake_vigild_settings settings = answering(NAN, "", 0, "no RAPL here");
    struct linked t = linked_start(*state, "report.json", &settings);
    const char *vars[] = {t.s.socket_var, t.s.report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    const char *argv[] = {t.filler, t.lines, "5", NULL};
    linked_run(&t, vars, argv, 0);
    const struct test_fake_vigild_client *r = test_fake_vigild_client(t.d, 0);
    char *printed = test_read_file(t.s.report_path);
    assert_non_null(r->report_json);
    assert_string_equal(r->report_json, printed);
    /* The run key the library made for itself, and exported. */
    struct test_report rep = test_report_load(t.s.report_path);
    assert_string_equal(test_report_string(&rep, "run_key"), r->run_key);
    char *prefix = g_strdup_printf("%s-%d-", g_get_host_name(), (int)t.c.pid);
    assert_true(g_str_has_prefix(r->run_key, prefix));
    g_free(prefix);
    test_report_free(&rep);
    g_free(printed);
    linked_clear(&t);
}

/* The exit status: exit() from a return from main, _exit (dash's way
 * out), and none at all for a process a signal killed. */
static void test_exit_status_for_vigild(void **state)
{
    static const struct {
        const char *script;
        int status;    /* as the shell's parent sees it */
        int reports;   /* REPORT messages */
        int exit_code; /* in the REPORT; -2 for none */
    } cases[] = {
        {"exit 3", 3, 1, 3},
        {"exec false", 1, 1, 1},                 /* coreutils: return from main */
        {"exec env true", 0, 1, 0},              /* env exec's: each image reports */
        {"kill -KILL $$", 128 + SIGKILL, 0, -2}, /* no way out through us */
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        struct linked t = linked_start(*state, "report.txt", NULL);
        const char *vars[] = {t.s.socket_var, t.s.report_var, NULL};
        const char *argv[] = {"sh", "-c", cases[i].script, NULL};
        linked_run(&t, vars, argv, cases[i].status);
        const struct test_fake_vigild_client *r =
            test_fake_vigild_client(t.d, test_fake_vigild_count(t.d) - 1);
        if (r->reports != cases[i].reports || r->exit_code != cases[i].exit_code)
            fail_msg("sh -c '%s': %d reports, exit code %d; want %d, %d", cases[i].script,
                     r->reports, r->exit_code, cases[i].reports, cases[i].exit_code);
        linked_clear(&t);
    }
}

/* `true` under the library against the test's fake vigild, its report in
 * text, then in JSON: the text, and the JSON loaded. */
static char *text_then_json(struct linked *t, struct test_report *json)
{
    const char *vars[] = {t->s.socket_var, t->s.report_var, NULL};
    const char *argv[] = {"true", NULL};
    t->c = run_child(t->s.dir, preload_lib(), vars, argv);
    assert_status(&t->c, 0, "true");
    char *text = test_read_file(t->s.report_path);
    child_clear(&t->c);

    const char *json_vars[] = {t->s.socket_var, t->s.report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    t->c = run_child(t->s.dir, preload_lib(), json_vars, argv);
    assert_status(&t->c, 0, "true");
    *json = test_report_load(t->s.report_path);
    return text;
}

/* The energy line for an estimate, and for no energy (with vigild's why). */
static void energy_line_for(const char *dir, const struct test_fake_vigild_settings *settings,
                            const char *want_line, const char *want_json_note)
{
    struct linked t = linked_start(dir, "report.txt", settings);
    struct test_report rep;
    char *report = text_then_json(&t, &rep);
    assert_line(report, ENERGY_LINE, want_line);
    g_free(report);
    if (want_json_note != NULL) {
        assert_true(JSON_NODE_HOLDS_NULL(test_report_node(&rep, "energy_joule")));
        assert_string_equal(test_report_string(&rep, "energy_source"), "none");
        assert_string_equal(test_report_string(&rep, "energy_note"), want_json_note);
    } else {
        assert_true(test_report_number(&rep, "energy_joule") == settings->energy_j);
        assert_string_equal(test_report_string(&rep, "energy_source"), settings->energy_source);
        assert_true(json_node_get_boolean(test_report_node(&rep, "energy_estimated")) ==
                    ((settings->energy_flags & VIGIL_LOCAL_ENERGY_ESTIMATED) != 0));
        assert_true(json_node_get_boolean(test_report_node(&rep, "energy_uncertain")) ==
                    ((settings->energy_flags & VIGIL_LOCAL_ENERGY_UNCERTAIN) != 0));
    }
    assert_string_equal(test_report_string(&rep, "vigild.state"), "summary");
    test_report_free(&rep);
    linked_clear(&t);
}

static void test_estimated_energy(void **state)
{
    struct test_fake_vigild_settings settings = answering(
        3.21, "energy/estimate", VIGIL_LOCAL_ENERGY_ESTIMATED | VIGIL_LOCAL_ENERGY_UNCERTAIN, NULL);
    energy_line_for(*state, &settings, "3.210 (energy/estimate, estimated, uncertain)", NULL);
}

static void test_no_energy_with_vigild_reason(void **state)
{
    const char *note = "no RAPL: /sys/class/powercap does not exist";
    struct test_fake_vigild_settings settings = answering(NAN, "", 0, note);
    char *want = g_strdup_printf("n/a (%s)", note);
    energy_line_for(*state, &settings, want, note);
    g_free(want);
}

/* The capture line and JSON object for vigild's capture figures: each
 * case's, with 52000 activities observed. */
static void test_capture(void **state)
{
    static const struct {
        struct test_fake_vigild_capture capture;
        const char *line, *json;
    } cases[] = {
        {{.mode = "anomalies",
          .cycles = 12,
          .abnormal_cycles = 3,
          .forwarded = 4210,
          .dropped = 47100,
          .held = 690},
         "anomalies: 3 abnormal cycles of 12; 4210 of 52000 activities forwarded (8.1 %), "
         "47100 dropped, 0 lost, 690 held at exit",
         "{\"mode\":\"anomalies\",\"cycles\":12,\"abnormal_cycles\":3,\"observed\":52000,"
         "\"forwarded\":4210,\"dropped\":47100,\"lost\":0,\"held\":690}"},
        /* Activities a window should have kept but vigild had no memory
         * left for. */
        {{.mode = "anomalies",
          .cycles = 12,
          .abnormal_cycles = 3,
          .forwarded = 4198,
          .dropped = 47100,
          .lost = 12,
          .held = 690},
         "anomalies: 3 abnormal cycles of 12; 4198 of 52000 activities forwarded (8.1 %), "
         "47100 dropped, 690 held at exit, 12 lost: vigild's capture memory bound was hit",
         "{\"mode\":\"anomalies\",\"cycles\":12,\"abnormal_cycles\":3,\"observed\":52000,"
         "\"forwarded\":4198,\"dropped\":47100,\"lost\":12,\"held\":690}"},
        {{.mode = "none", .cycles = 12, .dropped = 52000},
         "capture off: 52000 activities observed, none forwarded",
         "{\"mode\":\"none\",\"cycles\":12,\"abnormal_cycles\":0,\"observed\":52000,"
         "\"forwarded\":0,\"dropped\":52000,\"lost\":0,\"held\":0}"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        struct test_fake_vigild_settings settings = answering(1.5, "energy/powercap", 0, NULL);
        settings.capture = cases[i].capture;
        struct linked t = linked_start(*state, "report.txt", &settings);
        struct test_report rep;
        char *report = text_then_json(&t, &rep);
        assert_line(report, CAPTURE_LINE, cases[i].line);
        /* Right after the VIGILD line, with the figures of the header. */
        char *vigild = line_after(report, VIGILD_LINE);
        char *pair =
            g_strdup_printf("%s%s\n%s%s\n", VIGILD_LINE, vigild, CAPTURE_LINE, cases[i].line);
        test_assert_contains(report, pair);
        assert_json_text(&rep, "vigild.capture", cases[i].json);
        g_free(pair);
        g_free(vigild);
        g_free(report);
        test_report_free(&rep);
        linked_clear(&t);
    }
}

/* ---- when the link fails ----------------------------------------------------------------- */

/* VIGIL_REPORT=off prints nothing, and vigild still gets the report, with
 * its summary in it, for the warehouse: off had sent none, and the run had
 * no calls and no bytes there. */
static void test_report_off(void **state)
{
    struct linked t = linked_start(*state, "unused", NULL);
    const char *argv[] = {t.filler, t.lines, "50", NULL};
    const char *vars[] = {t.s.socket_var, "VIGIL_REPORT=off", NULL};
    linked_run(&t, vars, argv, 0);
    assert_string_equal(t.c.err, "");
    assert_int_equal(test_fake_vigild_count(t.d), 1);
    const struct test_fake_vigild_client *r = test_fake_vigild_client(t.d, 0);
    assert_int_equal(r->summary_requests, 1);
    assert_int_equal(r->reports, 1);
    struct vigil_cli_report stored;
    parse_sent_report(r, &stored);
    assert_int_equal(stored.r.ops[VIGIL_OP_POSIX_WRITE].calls, 50);
    assert_string_equal(stored.r.link.energy_source, "energy/powercap");
    vigil_cli_report_clear(&stored);
    assert_int_equal(r->exit_code, 0);
    assert_true(r->closed);
    assert_int_equal(r->ops[VIGIL_OP_POSIX_WRITE], 50);
    assert_int_equal(r->gaps, 0);
    linked_clear(&t);
}

/* No daemon: the program runs as it would without the library (same
 * status, same output, its first descriptor is 3), nothing is printed,
 * and the report says why there is no energy. */
static void test_no_daemon(void **state)
{
    struct setup s = setup_of(*state, "report.txt");
    char *program = helper("linkprobe");
    const char *argv[] = {program, s.dir, "7", NULL};
    struct child plain = run_child(s.dir, NULL, NULL, argv);
    assert_status(&plain, 7, "linkprobe without the library");
    assert_string_equal(plain.out, "fd=3\n");
    const char *vars[] = {s.socket_var, s.report_var, NULL};
    struct child c = run_child(s.dir, preload_lib(), vars, argv);
    assert_status(&c, 7, "linkprobe");
    assert_string_equal(c.out, plain.out);
    assert_string_equal(c.err, "");

    char *report = test_read_file(s.report_path);
    char *why = g_strdup_printf("no vigild at %s (No such file or directory)", s.socket_path);
    char *energy = g_strdup_printf("n/a (%s)", why), *line = g_strdup_printf("standalone: %s", why);
    assert_line(report, ENERGY_LINE, energy);
    assert_line(report, VIGILD_LINE, line);
    assert_line(report, CAPTURE_LINE, energy); /* n/a, and the same why */
    test_assert_contains(report, "dropped (ring full: no vigild drains it)");

    g_free(line);
    g_free(energy);
    g_free(why);
    g_free(report);
    child_clear(&c);
    child_clear(&plain);
    g_free(program);
    setup_free(&s);
}

/* The socket is ours and out of the program's way: with vigild connected,
 * the program's first open() still gets 3. */
static void test_descriptor_numbers_untouched(void **state)
{
    struct linked t = linked_start(*state, "report.txt", NULL);
    char *program = helper("linkprobe");
    const char *argv[] = {program, t.s.dir, "0", NULL};
    const char *vars[] = {t.s.socket_var, t.s.report_var, NULL};
    linked_run(&t, vars, argv, 0);
    assert_string_equal(t.c.out, "fd=3\n");
    assert_int_equal(test_fake_vigild_count(t.d), 1);
    assert_int_equal(test_fake_vigild_client(t.d, 0)->summary_requests, 1);
    char *report = test_read_file(t.s.report_path);
    assert_line(report, ENERGY_LINE, "1.500 (energy/powercap)");
    g_free(report);
    g_free(program);
    linked_clear(&t);
}

/* The first client asked for its summary once and had none, for `why`:
 * the text report says so on its energy and vigild lines. Returns the
 * report (g_free it). */
static char *assert_no_summary(const struct linked *t, const char *why)
{
    const struct test_fake_vigild_client *r = test_fake_vigild_client(t->d, 0);
    assert_int_equal(r->summary_requests, 1);
    char *report = test_read_file(t->s.report_path);
    char *energy = g_strdup_printf("n/a (%s)", why);
    char *vigild =
        g_strdup_printf("process %llu, no summary: %s", (unsigned long long)r->process_id, why);
    assert_line(report, ENERGY_LINE, energy);
    assert_line(report, VIGILD_LINE, vigild);
    g_free(vigild);
    g_free(energy);
    return report;
}

/* A daemon that takes the registration but never answers the summary. */
static void test_silent_daemon(void **state)
{
    struct test_fake_vigild_settings settings = {.mode = TEST_FAKE_VIGILD_SILENT};
    struct linked t = linked_filled(*state, &settings, "5");
    assert_int_equal(test_fake_vigild_count(t.d), 1);
    char *report = assert_no_summary(&t, "vigild did not answer within 100 ms");
    assert_line(report, CAPTURE_LINE, "n/a (vigild did not answer within 100 ms)");
    /* It went on draining after the process ended: nothing was lost. */
    assert_int_equal(test_fake_vigild_client(t.d, 0)->activities, text_recorded(report));

    g_free(report);
    linked_clear(&t);
}

/* A daemon that goes away instead of answering. */
static void test_daemon_goes_away(void **state)
{
    struct test_fake_vigild_settings settings = {.mode = TEST_FAKE_VIGILD_HANG_UP};
    struct linked t = linked_filled(*state, &settings, "5");
    g_free(assert_no_summary(&t, "vigild went away"));
    linked_clear(&t);
}

/* A daemon whose backlog is full: connect() gives up after the send timeout. */
static void test_daemon_never_accepts(void **state)
{
    struct test_fake_vigild_settings settings = {.mode = TEST_FAKE_VIGILD_NO_ACCEPT};
    struct linked t = linked_start(*state, "report.txt", &settings);
    char *program = helper("linkprobe");
    const char *argv[] = {program, t.s.dir, "3", NULL};
    const char *vars[] = {t.s.socket_var, t.s.report_var, NULL};
    linked_run(&t, vars, argv, 3);
    assert_string_equal(t.c.out, "fd=3\n");
    char *report = test_read_file(t.s.report_path);
    assert_line(report, ENERGY_LINE, "n/a (vigild did not accept within 5 ms)");
    assert_line(report, VIGILD_LINE, "standalone: vigild did not accept within 5 ms");
    g_free(report);
    g_free(program);
    linked_clear(&t);
}

static void test_refused(void **state)
{
    struct test_fake_vigild_settings settings = {
        .mode = TEST_FAKE_VIGILD_REFUSE,
        .refusal = "vigild serves at most 0 processes (max_processes)",
    };
    struct linked t = linked_filled(*state, &settings, "5");
    assert_string_equal(t.c.err, "");
    assert_int_equal(test_fake_vigild_count(t.d), 1);
    assert_true(test_fake_vigild_client(t.d, 0)->registered);
    assert_int_equal(test_fake_vigild_client(t.d, 0)->summary_requests, 0);

    char *report = test_read_file(t.s.report_path);
    const char *why =
        "vigild refused the registration: vigild serves at most 0 processes (max_processes)";
    char *energy = g_strdup_printf("n/a (%s)", why), *line = g_strdup_printf("standalone: %s", why);
    assert_line(report, ENERGY_LINE, energy);
    assert_line(report, VIGILD_LINE, line);
    g_free(line);
    g_free(energy);
    g_free(report);
    linked_clear(&t);
}

/* A program that closes every descriptor closes ours too: the report says
 * so, and the library does not write on whatever took the number. */
static void test_program_closes_the_connection(void **state)
{
    struct linked t = linked_start(*state, "report.txt", NULL);
    char *program = helper("linkprobe");
    const char *argv[] = {program, t.s.dir, "0", "closeall", NULL};
    const char *vars[] = {t.s.socket_var, t.s.report_var, NULL};
    linked_run(&t, vars, argv, 0);
    assert_int_equal(test_fake_vigild_count(t.d), 1);
    assert_int_equal(test_fake_vigild_client(t.d, 0)->summary_requests, 0);
    assert_true(test_fake_vigild_client(t.d, 0)->closed);
    char *report = test_read_file(t.s.report_path);
    assert_line(report, ENERGY_LINE, "n/a (the program closed its connection to vigild)");
    g_free(report);
    g_free(program);
    linked_clear(&t);
}

/* VIGIL_SOCKET=off: no socket is made and nothing is connected to (the spy
 * library, preloaded after ours, would say), and the report says why. */
static void test_socket_off(void **state)
{
    struct setup s = setup_of(*state, "report.txt");
    char *preload = g_strdup_printf("%s:%s", preload_lib(), test_env_or_fail("VIGIL_CONNECT_SPY"));
    const char *argv[] = {"true", NULL};
    /* The spy sees the attempt when there is one. */
    const char *on_vars[] = {s.socket_var, s.report_var, NULL};
    struct child on = run_child(s.dir, preload, on_vars, argv);
    assert_status(&on, 0, "true");
    test_assert_contains(on.err, "spy: socket AF_UNIX\n");
    char *connect_line = g_strdup_printf("spy: connect %s\n", s.socket_path);
    test_assert_contains(on.err, connect_line);

    const char *off_vars[] = {"VIGIL_SOCKET=off", s.report_var, NULL};
    struct child off = run_child(s.dir, preload, off_vars, argv);
    assert_status(&off, 0, "true");
    assert_string_equal(off.err, "");
    char *report = test_read_file(s.report_path);
    assert_line(report, ENERGY_LINE, "n/a (VIGIL_SOCKET=off: vigild not contacted)");
    assert_line(report, VIGILD_LINE, "standalone: VIGIL_SOCKET=off: vigild not contacted");
    assert_line(report, CAPTURE_LINE, "n/a (VIGIL_SOCKET=off: vigild not contacted)");
    /* JSON has the same keys as with a summary, all null. */
    const char *json_vars[] = {"VIGIL_SOCKET=off", s.report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    struct child json = run_child(s.dir, preload, json_vars, argv);
    assert_status(&json, 0, "true");
    struct test_report rep = test_report_load(s.report_path);
    assert_json_text(&rep, "vigild.capture",
                     "{\"mode\":null,\"cycles\":null,\"abnormal_cycles\":null,\"observed\":null,"
                     "\"forwarded\":null,\"dropped\":null,\"lost\":null,\"held\":null}");

    test_report_free(&rep);
    child_clear(&json);
    g_free(report);
    g_free(connect_line);
    child_clear(&off);
    child_clear(&on);
    g_free(preload);
    setup_free(&s);
}

/* ---- processes that fork or exec --------------------------------------------------------- */

static struct test_report report_of_pid(const char *dir, pid_t pid)
{
    char *name = g_strdup_printf("report-%d.json", (int)pid);
    char *path = g_build_filename(dir, name, NULL);
    struct test_report rep = test_report_load(path);
    g_free(path);
    g_free(name);
    return rep;
}

/* forker MODE under the library, each process's JSON report in its own
 * file (report-PID.json), against the test's fake vigild. */
static struct linked run_forker(const char *dir, const char *mode)
{
    struct linked t = linked_start(dir, "report-%p.json", NULL);
    char *program = helper("forker");
    const char *argv[] = {program, mode, dir, NULL};
    const char *vars[] = {t.s.socket_var, t.s.report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    linked_run(&t, vars, argv, 0);
    g_free(program);
    return t;
}

/* Each process of the two registers on its own connection, with its own
 * pid and ring, and gets its own summary: the child does not speak on the
 * parent's connection, nor take it away. */
static void test_fork(void **state)
{
    const char *dir = *state;
    struct linked t = run_forker(dir, "fork");
    assert_int_equal(test_fake_vigild_count(t.d), 2);
    const struct test_fake_vigild_client *parent = test_fake_vigild_find(t.d, t.c.pid);
    assert_non_null(parent);
    const struct test_fake_vigild_client *child = test_fake_vigild_client(t.d, 0) == parent
                                                      ? test_fake_vigild_client(t.d, 1)
                                                      : test_fake_vigild_client(t.d, 0);
    assert_int_not_equal(child->pid, parent->pid);
    assert_true(parent->registered && child->registered);
    assert_true(parent->ring_attached && child->ring_attached);
    assert_int_not_equal(child->ring_inode, parent->ring_inode);
    assert_int_not_equal(child->process_id, parent->process_id);
    assert_string_equal(child->program, parent->program);
    assert_int_equal(parent->summary_requests, 1);
    assert_int_equal(child->summary_requests, 1);

    const struct test_fake_vigild_client *both[] = {parent, child};
    for (int i = 0; i < 2; i++) {
        struct test_report rep = report_of_pid(dir, both[i]->pid);
        gint64 recorded = test_report_int(&rep, "activities.recorded");
        assert_int_equal(test_report_int(&rep, "vigild.process_id"), both[i]->process_id);
        assert_int_equal(test_report_int(&rep, "vigild.activities_drained"), recorded);
        assert_int_equal(both[i]->activities, recorded);
        assert_true(test_report_number(&rep, "energy_joule") == 1.5);
        test_report_free(&rep);
    }
    /* Each drained its own writes: 20 for the parent, 10 for the child. */
    assert_int_equal(parent->ops[VIGIL_OP_POSIX_WRITE], 20);
    assert_int_equal(child->ops[VIGIL_OP_POSIX_WRITE], 10);
    linked_clear(&t);
}

/* exec replaces the image (the connection is close-on-exec): the new one
 * registers again, with the same pid. */
static void test_exec(void **state)
{
    const char *dir = *state;
    struct linked t = run_forker(dir, "exec");
    assert_int_equal(test_fake_vigild_count(t.d), 2);
    const struct test_fake_vigild_client *before = test_fake_vigild_client(t.d, 0);
    const struct test_fake_vigild_client *after = test_fake_vigild_client(t.d, 1);
    assert_int_equal(before->pid, t.c.pid);
    assert_int_equal(after->pid, t.c.pid);
    assert_string_equal(g_ptr_array_index(before->argv, 1), "exec");
    assert_string_equal(g_ptr_array_index(after->argv, 1), "after");
    /* The first image asked for nothing (exec skips exit), but what it
     * wrote was drained once its connection closed. */
    assert_int_equal(before->summary_requests, 0);
    assert_true(before->closed);
    assert_int_equal(before->ops[VIGIL_OP_POSIX_WRITE], 5);
    assert_int_equal(after->summary_requests, 1);
    assert_int_equal(after->ops[VIGIL_OP_POSIX_WRITE], 7);
    struct test_report rep = report_of_pid(dir, t.c.pid);
    assert_int_equal(test_report_int(&rep, "vigild.process_id"), after->process_id);
    assert_int_equal(test_report_int(&rep, "vigild.activities_drained"),
                     test_report_int(&rep, "activities.recorded"));
    test_report_free(&rep);
    linked_clear(&t);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, test_make_dir, test_remove_dir)
    const struct CMUnitTest tests[] = {
        T(test_registration),
        T(test_registration_without_job),
        T(test_summary_in_text_report),
        T(test_summary_in_json_report),
        T(test_findings_with_vigilds_thresholds),
        T(test_report_for_vigild_gives_the_printed_text),
        T(test_report_for_vigild_is_the_printed_json),
        T(test_exit_status_for_vigild),
        T(test_estimated_energy),
        T(test_no_energy_with_vigild_reason),
        T(test_capture),
        T(test_report_off),
        T(test_no_daemon),
        T(test_descriptor_numbers_untouched),
        T(test_silent_daemon),
        T(test_daemon_goes_away),
        T(test_daemon_never_accepts),
        T(test_refused),
        T(test_program_closes_the_connection),
        T(test_socket_off),
        T(test_fork),
        T(test_exec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
