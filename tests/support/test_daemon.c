/* vigil — running vigild in a test. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_daemon.h"
#include "test_support.h"

/* The daemons started and not stopped yet (a test may run several, one a
 * node): a test that fails half-way leaves them to test_daemon_kill_all. */
#define RUNNING_MAX 16
static pid_t running_pids[RUNNING_MAX];

static void note_running(pid_t old_pid, pid_t new_pid)
{
    for (int i = 0; i < RUNNING_MAX; i++)
        if (running_pids[i] == old_pid) {
            running_pids[i] = new_pid;
            return;
        }
    fail_msg("more than %d vigild at once in one test", RUNNING_MAX);
}

void test_daemon_start(struct test_daemon *d, const char *dir, const char *daemon_lines,
                       const char *more_config)
{
    memset(d, 0, sizeof *d);
    d->dir = g_strdup(dir);
    d->config_path = g_build_filename(dir, "vigil.conf", NULL);
    d->socket_path = g_build_filename(dir, "vigild.sock", NULL);
    d->log_path = g_build_filename(dir, "vigild.log", NULL);
    char *pid_path = g_build_filename(dir, "vigild.pid", NULL);
    d->capture_path = g_build_filename(dir, "capture.jsonl", NULL);
    char *config = g_strdup_printf("[daemon]\nsocket = %s\n%s\n[capture]\nsink = %s\n%s\n",
                                   d->socket_path, daemon_lines != NULL ? daemon_lines : "",
                                   d->capture_path, more_config != NULL ? more_config : "");
    assert_true(g_file_set_contents(d->config_path, config, -1, NULL));
    g_free(config);
    d->pid = test_start_detached(dir, test_env_or_fail("VIGILD"), d->config_path, pid_path,
                                 d->log_path, &d->pidfd);
    note_running(0, d->pid);
    g_free(pid_path);
}

/* Sends `signal`, waits for the daemon to exit, returns its log and
 * forgets it. */
static char *end_daemon(struct test_daemon *d, int signal)
{
    char *log = test_end_detached("vigild", d->pid, d->pidfd, signal, d->log_path);
    note_running(d->pid, 0);
    if (signal == SIGTERM) /* a clean stop removes the socket */
        assert_false(g_file_test(d->socket_path, G_FILE_TEST_EXISTS));
    g_free(d->dir);
    g_free(d->config_path);
    g_free(d->socket_path);
    g_free(d->capture_path);
    g_free(d->log_path);
    return log;
}

char *test_daemon_stop(struct test_daemon *d)
{
    return end_daemon(d, SIGTERM);
}

char *test_daemon_kill(struct test_daemon *d)
{
    return end_daemon(d, SIGKILL);
}

/* `vigil status --json`, run as `uid` through setpriv when it is not ours. */
static JsonNode *status_of(const struct test_daemon *d, gboolean as_other, uid_t uid,
                           pid_t finished_pid)
{
    char *pid_text = g_strdup_printf("%d", (int)finished_pid);
    char *reuid = g_strdup_printf("--reuid=%u", (unsigned)uid);
    char *regid = g_strdup_printf("--regid=%u", (unsigned)uid);
    const char *argv[] = {
        "setpriv", reuid,    regid,      "--clear-groups", test_env_or_fail("VIGIL_CLI"),
        "status",  "--json", "--socket", d->socket_path,   "--finished-pid",
        pid_text,  NULL};
    char **env = test_clean_environment(NULL);
    struct test_run run = test_run_program(NULL, as_other ? argv : argv + 4, env);
    g_strfreev(env);
    test_assert_status(&run, 0, "vigil status");
    GError *error = NULL;
    JsonNode *root = json_from_string(run.out, &error);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
        fail_msg("vigil status --json printed no JSON object: %s\n%s",
                 error != NULL ? error->message : "", run.out);
    test_run_clear(&run);
    g_free(pid_text);
    g_free(reuid);
    g_free(regid);
    return root;
}

JsonNode *test_daemon_status(const struct test_daemon *d, pid_t finished_pid)
{
    return status_of(d, FALSE, 0, finished_pid);
}

JsonNode *test_daemon_status_as(const struct test_daemon *d, uid_t uid, pid_t finished_pid)
{
    return status_of(d, TRUE, uid, finished_pid);
}

JsonObject *test_daemon_process(JsonNode *status, pid_t pid)
{
    JsonObject *processes =
        json_object_get_object_member(json_node_get_object(status), "processes");
    JsonArray *list = json_object_get_array_member(processes, "list");
    /* The newest is the one that started last. Neither the list's order
     * nor vigild's ids say which: a program that exec'd another (sh -c
     * 'exec dd') registered on a connection of its own that vigild may
     * read after the new program's, and both end in the same sweep. */
    JsonObject *found = NULL;
    for (guint i = 0; i < json_array_get_length(list); i++) {
        JsonObject *p = json_array_get_object_element(list, i);
        if (json_object_get_int_member(p, "pid") == pid &&
            (found == NULL || json_object_get_int_member(p, "start_monotonic_ns") >
                                  json_object_get_int_member(found, "start_monotonic_ns")))
            found = p;
    }
    return found;
}

gint64 test_daemon_json_int(JsonObject *object, const char *first, ...)
{
    va_list names;
    va_start(names, first);
    const char *name = first;
    for (;;) {
        if (object == NULL || !json_object_has_member(object, name))
            fail_msg("no member \"%s\" in the JSON", name);
        const char *next = va_arg(names, const char *);
        if (next == NULL) {
            va_end(names);
            return json_object_get_int_member(object, name);
        }
        object = json_object_get_object_member(object, name);
        name = next;
    }
}

void test_daemon_kill_all(void)
{
    for (int i = 0; i < RUNNING_MAX; i++) {
        if (running_pids[i] > 0)
            kill(running_pids[i], SIGKILL);
        running_pids[i] = 0;
    }
}

int test_daemon_teardown(void **state)
{
    test_daemon_kill_all();
    return test_remove_dir(state);
}

struct test_run test_daemon_vigil_env(const struct test_daemon *d, const char *cwd,
                                      const char *const *vars, const char *const *args)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)test_env_or_fail("VIGIL_CLI"));
    for (const char *const *a = args; *a != NULL; a++)
        g_ptr_array_add(argv, (gpointer)*a);
    g_ptr_array_add(argv, NULL);
    GPtrArray *all_vars = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(all_vars, g_strconcat("VIGIL_SOCKET=", d->socket_path, NULL));
    g_ptr_array_add(all_vars, g_strconcat("VIGIL_CONFIG=", d->config_path, NULL));
    for (const char *const *v = vars; v != NULL && *v != NULL; v++)
        g_ptr_array_add(all_vars, g_strdup(*v));
    g_ptr_array_add(all_vars, NULL);
    char **env = test_clean_environment((const char *const *)all_vars->pdata);
    struct test_run run = test_run_program(cwd, (const char *const *)argv->pdata, env);
    g_strfreev(env);
    g_ptr_array_free(all_vars, TRUE);
    g_ptr_array_free(argv, TRUE);
    return run;
}

struct test_run test_daemon_vigil(const struct test_daemon *d, const char *const *args)
{
    return test_daemon_vigil_env(d, NULL, NULL, args);
}

GPtrArray *test_daemon_sink_lines(const char *sink_path, const char *type)
{
    char *text = NULL;
    assert_true(g_file_get_contents(sink_path, &text, NULL, NULL));
    GPtrArray *objects = g_ptr_array_new_with_free_func((GDestroyNotify)json_object_unref);
    JsonParser *parser = json_parser_new();
    char **lines = g_strsplit(text, "\n", -1);
    for (char **line = lines; *line != NULL && **line != '\0'; line++) {
        assert_true(json_parser_load_from_data(parser, *line, -1, NULL));
        JsonObject *o = json_node_get_object(json_parser_get_root(parser));
        if (strcmp(json_object_get_string_member(o, "type"), type) == 0)
            g_ptr_array_add(objects, json_object_ref(o));
    }
    g_strfreev(lines);
    g_object_unref(parser);
    g_free(text);
    return objects;
}

GArray *test_daemon_sink_seqs(const char *sink_path, pid_t pid)
{
    GPtrArray *lines = test_daemon_sink_lines(sink_path, "activities");
    GArray *seqs = g_array_new(FALSE, FALSE, sizeof(gint64));
    for (guint l = 0; l < lines->len; l++) {
        JsonObject *o = g_ptr_array_index(lines, l);
        if (json_object_get_int_member(o, "pid") != pid)
            continue;
        JsonArray *activities = json_object_get_array_member(o, "activities");
        for (guint i = 0; i < json_array_get_length(activities); i++) {
            gint64 seq = json_array_get_int_element(json_array_get_array_element(activities, i), 0);
            g_array_append_val(seqs, seq);
        }
    }
    g_ptr_array_unref(lines);
    return seqs;
}

struct test_run test_daemon_status_text(const char *socket_path)
{
    const char *argv[] = {test_env_or_fail("VIGIL_CLI"), "status", "--socket", socket_path, NULL};
    char **env = test_clean_environment(NULL);
    struct test_run run = test_run_program(NULL, argv, env);
    g_strfreev(env);
    return run;
}

char *test_daemon_status_text_says(const char *socket_path, const char *const *needles, gsize n)
{
    struct test_run run = test_daemon_status_text(socket_path);
    test_assert_status(&run, 0, "vigil status");
    test_assert_contains_all(run.out, needles, n);
    char *out = g_steal_pointer(&run.out);
    test_run_clear(&run);
    return out;
}

char **test_daemon_preload_env(const struct test_daemon *d, const char *const *vars)
{
    GPtrArray *all = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(all, g_strconcat("VIGIL_SOCKET=", d->socket_path, NULL));
    g_ptr_array_add(all, g_strconcat("LD_PRELOAD=", test_env_or_fail("VIGIL_PRELOAD_LIB"), NULL));
    for (const char *const *v = vars; v != NULL && *v != NULL; v++)
        g_ptr_array_add(all, g_strdup(*v));
    g_ptr_array_add(all, NULL);
    char **env = test_clean_environment((const char *const *)all->pdata);
    g_ptr_array_free(all, TRUE);
    return env;
}

GPid test_daemon_spawn_dd(const char *dir, char **env, const char *of, const char *bs,
                          const char *count)
{
    const char *argv[] = {"dd", "if=/dev/zero", of, bs, count, "status=none", NULL};
    GError *error = NULL;
    GPid pid;
    if (!g_spawn_async(dir, (char **)argv, env,
                       G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
                           G_SPAWN_STDIN_FROM_DEV_NULL,
                       NULL, NULL, &pid, &error))
        fail_msg("cannot run dd: %s", error->message);
    return pid;
}

void test_daemon_assert_refused(const char *cwd, const char *const *argv, char **env,
                                const char *what, const char *says)
{
    struct test_run run = test_run_program(cwd, argv, env);
    test_assert_status(&run, 1, what);
    test_assert_contains(run.err, says);
    test_run_clear(&run);
}

void test_daemon_stop_saying(struct test_daemon *d, const char *needle)
{
    char *log = test_daemon_stop(d);
    test_assert_contains(log, needle);
    g_free(log);
}
