/* vigil — vigild's /metrics, served by a real vigild: promtool accepts
 * both text formats, running jobs get series of their own up to max_jobs
 * (the rest folded), a bad address is refused naming the key, and every
 * metric the Grafana dashboard queries is one the endpoint describes. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include <cmocka.h>

#include "metrics_fetch.h"
#include "test_daemon.h"
#include "test_support.h"

/* Only a failure waits this long. */
#define DEADLINE_US (30 * G_USEC_PER_SEC)
#define POLL_US     (50 * 1000)

/* promtool check metrics: its exit status and what it printed. */
static int promtool_check(const char *text, char **out)
{
    const char *argv[] = {"promtool", "check", "metrics", NULL};
    GError *error = NULL;
    GSubprocess *p =
        g_subprocess_newv(argv,
                          G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                              G_SUBPROCESS_FLAGS_STDERR_MERGE,
                          &error);
    if (p == NULL)
        fail_msg("cannot run promtool: %s", error->message);
    if (!g_subprocess_communicate_utf8(p, text, NULL, out, NULL, &error))
        fail_msg("promtool: %s", error->message);
    int status = g_subprocess_get_if_exited(p) ? g_subprocess_get_exit_status(p) : 128;
    g_object_unref(p);
    return status;
}

/* Prometheus's text format: promtool parses it and its linter finds
 * nothing to say (names, units, HELP of every metric). */
static void promtool_accepts(const char *text)
{
    char *out = NULL;
    int status = promtool_check(text, &out);
    if (status != 0 || (out != NULL && out[0] != '\0'))
        fail_msg("promtool check metrics (status %d) on the 0.0.4 text: %s\n--- the text:\n%s",
                 status, out, text);
    g_free(out);
}

/* OpenMetrics: promtool (2.42) reads Prometheus's text format only, where
 * a counter's HELP names its sample, `…_total`, while OpenMetrics names
 * the family. So it must parse the text (status 3, lint findings; 1 is a
 * parse error), and its one finding allowed is that difference: "X_total
 * no help text" for a counter family X the text declares. Prometheus's own
 * OpenMetrics parser reads it in test_metrics_prometheus. */
static void promtool_parses_openmetrics(const char *text)
{
    char *out = NULL;
    int status = promtool_check(text, &out);
    if (status != 0 && status != 3)
        fail_msg("promtool check metrics cannot parse the OpenMetrics text (status %d): %s\n"
                 "--- the text:\n%s",
                 status, out, text);
    char **findings = g_strsplit(out, "\n", -1);
    for (char **f = findings; *f != NULL; f++) {
        if ((*f)[0] == '\0')
            continue;
        char *family = g_str_has_suffix(*f, "_total no help text")
                           ? g_strndup(*f, strlen(*f) - strlen("_total no help text"))
                           : NULL;
        char *declared = family != NULL ? g_strdup_printf("# TYPE %s counter\n", family) : NULL;
        if (declared == NULL || strstr(text, declared) == NULL)
            fail_msg("promtool check metrics on the OpenMetrics text: %s", *f);
        g_free(declared);
        g_free(family);
    }
    g_strfreev(findings);
    g_free(out);
}

/* GETs /metrics as OpenMetrics until `series` has a sample (and, when
 * `at_least` is not NaN, one that large). */
static char *wait_for_sample(const char *url, const char *series, double at_least)
{
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    for (;;) {
        char *text = metrics_get(url, METRICS_OPENMETRICS_ACCEPT, NULL, NULL);
        double value = metrics_sample(text, series);
        if (!isnan(value) && (isnan(at_least) || value >= at_least))
            return text;
        if (g_get_monotonic_time() > deadline)
            fail_msg("no sample %s%s%g after %d s:\n%s", series,
                     isnan(at_least) ? "" : " >= ", isnan(at_least) ? 0.0 : at_least,
                     (int)(DEADLINE_US / G_USEC_PER_SEC), text);
        g_free(text);
        g_usleep(POLL_US); /* between two polls of a bounded loop */
    }
}

static void test_both_formats_accepted_by_promtool(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    char *url = metrics_daemon_start(&d, dir, NULL);
    /* Power comes with the first roll-up window: every family has a
     * sample then. */
    char *om = wait_for_sample(url, "vigil_node_power_watts", NAN);
    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *energy = json_object_get_object_member(json_node_get_object(status), "energy");
    JsonObject *daemon = json_object_get_object_member(json_node_get_object(status), "daemon");
    assert_string_equal(json_object_get_string_member(daemon, "metrics"), url);
    char *series =
        g_strdup_printf("vigil_node_energy_joules_total{source=\"%s\",estimated=\"%s\"}",
                        json_object_get_string_member(energy, "source"),
                        json_object_get_boolean_member(energy, "estimated") ? "true" : "false");
    double joules = metrics_sample(om, series);
    if (!(joules >= 0))
        fail_msg("no %s >= 0 in:\n%s", series, om);
    assert_true(g_str_has_suffix(om, "\n# EOF\n"));
    test_assert_contains(om, "# TYPE vigil_node_energy_joules counter\n"
                             "# UNIT vigil_node_energy_joules joules\n");
    assert_true(metrics_sample(om, "vigil_daemon_ticks_total") >= 1);
    assert_true(metrics_sample(om, "vigil_node_cpu_seconds_total{mode=\"idle\"}") > 0);
    assert_true(metrics_sample(om, "vigil_node_memory_total_bytes") > 0);
    promtool_parses_openmetrics(om);

    guint code = 0;
    char *type = NULL;
    char *om_again = metrics_get(url, METRICS_OPENMETRICS_ACCEPT, &code, &type);
    assert_int_equal(code, 200);
    assert_string_equal(type, "application/openmetrics-text; version=1.0.0; charset=utf-8");
    g_free(type);
    g_free(om_again);
    /* No Accept: Prometheus's text format 0.0.4, counters typed by sample. */
    char *text = metrics_get(url, NULL, &code, &type);
    assert_int_equal(code, 200);
    assert_string_equal(type, "text/plain; version=0.0.4; charset=utf-8");
    test_assert_contains(text, "# TYPE vigil_node_energy_joules_total counter\n");
    assert_null(strstr(text, "# EOF"));
    assert_null(strstr(text, "# UNIT"));
    promtool_accepts(text);
    g_free(type);
    g_free(text);

    char *other_url = g_strconcat(url, "-or-else", NULL);
    char *nothing = metrics_get(other_url, NULL, &code, NULL);
    assert_int_equal(code, 404);
    g_free(nothing);
    g_free(other_url);

    g_free(test_daemon_stop(&d));
    json_node_unref(status);
    g_free(series);
    g_free(om);
    g_free(url);
}

struct job_process {
    GPid pid;
    int stdin_fd;
};

/* `cat` under the preload library, registered with vigild as a process
 * of job `job`; it reads what the test writes to stdin_fd. */
static struct job_process start_job_process(const struct test_daemon *d, const char *job)
{
    char *job_var = g_strconcat("SLURM_JOB_ID=", job, NULL);
    const char *vars[] = {job_var, "VIGIL_REPORT=off", NULL};
    char **env = test_daemon_preload_env(d, vars);
    const char *argv[] = {"cat", NULL};
    struct job_process p = {0, -1};
    GError *error = NULL;
    if (!g_spawn_async_with_pipes(d->dir, (char **)argv, env,
                                  G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
                                      G_SPAWN_STDOUT_TO_DEV_NULL,
                                  NULL, NULL, &p.pid, &p.stdin_fd, NULL, NULL, &error))
        fail_msg("cannot run cat: %s", error->message);
    g_strfreev(env);
    g_free(job_var);
    return p;
}

static void end_job_process(struct job_process *p)
{
    close(p->stdin_fd);
    int status = 0;
    assert_int_equal(waitpid(p->pid, &status, 0), p->pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    g_spawn_close_pid(p->pid);
}

#define JOB_BYTES (1 << 20)

static void test_jobs_labelled_up_to_max_jobs(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    char *url = metrics_daemon_start(&d, dir, "max_jobs = 1\n");
    /* A job id with the characters a label value escapes. */
    struct job_process first = start_job_process(&d, "42\"4\\2");
    const char *first_series = "{job_id=\"42\\\"4\\\\2\"}";
    char *read_series = g_strconcat("vigil_job_read_bytes_total", first_series, NULL);
    char *processes_series = g_strconcat("vigil_job_processes", first_series, NULL);
    char *page = wait_for_sample(url, processes_series, 1);
    g_free(page);
    struct job_process second = start_job_process(&d, "4343");
    char *block = g_malloc0(64 * 1024);
    for (int written = 0; written < JOB_BYTES; written += 64 * 1024)
        assert_int_equal(write(first.stdin_fd, block, 64 * 1024), 64 * 1024);
    g_free(block);
    /* cat read them: the process provider's rchar shows them at a tick. */
    char *om = wait_for_sample(url, read_series, JOB_BYTES);
    g_free(om);
    om = wait_for_sample(url, "vigil_jobs_running", 2);
    assert_true(metrics_sample(om, "vigil_jobs_folded") == 1);
    assert_true(metrics_sample(om, "vigil_job_processes{job_id=\"_other\"}") == 1);
    assert_true(isnan(metrics_sample(om, "vigil_job_processes{job_id=\"4343\"}")));
    promtool_parses_openmetrics(om);
    char *text = metrics_get(url, NULL, NULL, NULL);
    promtool_accepts(text);
    g_free(text);
    g_free(om);

    end_job_process(&first);
    end_job_process(&second);
    /* Gone with their last process; the folded series goes on at 0
     * processes, its counters kept. */
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    for (;;) {
        om = metrics_get(url, METRICS_OPENMETRICS_ACCEPT, NULL, NULL);
        if (metrics_sample(om, "vigil_jobs_running") == 0)
            break;
        if (g_get_monotonic_time() > deadline)
            fail_msg("the jobs did not end:\n%s", om);
        g_free(om);
        g_usleep(POLL_US); /* between two polls of a bounded loop */
    }
    assert_true(isnan(metrics_sample(om, read_series)));
    assert_true(metrics_sample(om, "vigil_job_processes{job_id=\"_other\"}") == 0);
    assert_true(metrics_sample(om, "vigil_jobs_folded") == 0);
    g_free(om);
    g_free(test_daemon_stop(&d));
    g_free(processes_series);
    g_free(read_series);
    g_free(url);
}

static void test_bad_listen_refused_naming_the_key(void **state)
{
    const char *dir = *state;
    char *config = test_new_filef(dir, "bad.conf",
                                  "[daemon]\nsocket = %s/vigild.sock\n[metrics]\n"
                                  "listen = 127.0.0.1:99999\n",
                                  dir);
    char **env = test_clean_environment(NULL);
    const char *check[] = {
        test_env_or_fail("VIGIL_CLI"), "config", "check", "--config", config, NULL};
    test_daemon_assert_refused(dir, check, env, "vigil config check",
                               "[metrics] listen = 127.0.0.1:99999");
    const char *daemon[] = {test_env_or_fail("VIGILD"), "--foreground", "--config", config, NULL};
    test_daemon_assert_refused(dir, daemon, env, "vigild", "[metrics] listen = 127.0.0.1:99999");
    g_strfreev(env);
    g_free(config);
}

/* Without [metrics] nothing listens: the status says so. */
static void test_off_by_default(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    test_daemon_start(&d, dir, "providers = procstat\n", NULL);
    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *daemon = json_object_get_object_member(json_node_get_object(status), "daemon");
    assert_true(json_object_has_member(daemon, "metrics"));
    assert_true(json_object_get_null_member(daemon, "metrics"));
    json_node_unref(status);
    char *log = test_daemon_stop(&d);
    assert_null(strstr(log, "metrics on"));
    g_free(log);
}

static void collect_exprs(JsonNode *node, GPtrArray *out)
{
    if (JSON_NODE_HOLDS_OBJECT(node)) {
        JsonObject *o = json_node_get_object(node);
        GList *members = json_object_get_members(o);
        for (GList *m = members; m != NULL; m = m->next) {
            JsonNode *child = json_object_get_member(o, m->data);
            gboolean query = strcmp(m->data, "expr") == 0 || strcmp(m->data, "definition") == 0;
            if (query && JSON_NODE_HOLDS_VALUE(child))
                g_ptr_array_add(out, (gpointer)json_node_get_string(child));
            else
                collect_exprs(child, out);
        }
        g_list_free(members);
    } else if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        for (guint i = 0; i < json_array_get_length(a); i++)
            collect_exprs(json_array_get_element(a, i), out);
    }
}

/* Every vigil_ name a panel queries is described by the endpoint (a
 * family's TYPE line, or a counter's _total sample name), so that the
 * dashboard cannot drift from what vigild serves. */
static void test_dashboard_queries_served_metrics(void **state)
{
    const char *dir = *state;
    JsonParser *parser = json_parser_new();
    GError *error = NULL;
    const char *path = test_env_or_fail("VIGIL_DASHBOARD");
    if (!json_parser_load_from_file(parser, path, &error))
        fail_msg("%s is not valid JSON: %s", path, error->message);
    GPtrArray *exprs = g_ptr_array_new();
    collect_exprs(json_parser_get_root(parser), exprs);
    assert_true(exprs->len >= 4);

    struct test_daemon d;
    char *url = metrics_daemon_start(&d, dir, NULL);
    char *om = metrics_get(url, METRICS_OPENMETRICS_ACCEPT, NULL, NULL);
    GHashTable *served = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    char **lines = g_strsplit(om, "\n", -1);
    for (char **l = lines; *l != NULL; l++) {
        char name[256], type[32];
        if (sscanf(*l, "# TYPE %255s %31s", name, type) != 2)
            continue;
        g_hash_table_add(served, g_strdup(name));
        if (strcmp(type, "counter") == 0)
            g_hash_table_add(served, g_strconcat(name, "_total", NULL));
    }
    g_strfreev(lines);
    GRegex *names = g_regex_new("vigil_[a-zA-Z0-9_]+", 0, 0, NULL);
    guint used = 0;
    for (guint i = 0; i < exprs->len; i++) {
        GMatchInfo *match = NULL;
        g_regex_match(names, g_ptr_array_index(exprs, i), 0, &match);
        for (; g_match_info_matches(match); g_match_info_next(match, NULL)) {
            char *name = g_match_info_fetch(match, 0);
            if (!g_hash_table_contains(served, name))
                fail_msg("the dashboard queries %s, which vigild's /metrics does not serve "
                         "(in: %s)",
                         name, (const char *)g_ptr_array_index(exprs, i));
            used++;
            g_free(name);
        }
        g_match_info_free(match);
    }
    assert_true(used >= exprs->len);
    g_regex_unref(names);
    g_hash_table_destroy(served);
    g_free(om);
    g_free(url);
    g_free(test_daemon_stop(&d));
    g_ptr_array_free(exprs, TRUE);
    g_object_unref(parser);
}

int main(void)
{
    metrics_require_tool("promtool", "the test checks /metrics with promtool check metrics");
    const struct CMUnitTest tests[] = {
        TEST_WITH_DIR(test_both_formats_accepted_by_promtool),
        TEST_WITH_DIR(test_jobs_labelled_up_to_max_jobs),
        TEST_WITH_DIR(test_bad_listen_refused_naming_the_key),
        TEST_WITH_DIR(test_off_by_default),
        TEST_WITH_DIR(test_dashboard_queries_served_metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
