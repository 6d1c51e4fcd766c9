/* restart_writer in a test and what the warehouse stored of it (writer.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-glib/json-glib.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "writer.h"

#define DEADLINE_US (120 * G_USEC_PER_SEC)
#define POLL_US     20000

char *writer_daemon_config(const struct test_txd_fixture *f, const char *spool_dir,
                           const char *uplink_lines)
{
    char *spool = spool_dir != NULL ? g_strdup(spool_dir) : g_build_filename(f->dir, "spool", NULL);
    char *config = g_strdup_printf("[capture]\nmode = all\n[uplink]\nendpoint = ipc://%s/txd.sock\n"
                                   "spool_dir = %s\n%s[warehouse]\nconninfo = %s\n",
                                   f->dir, spool, uplink_lines, f->conninfo);
    g_free(spool);
    return config;
}

void writer_start(struct writer *w, const struct test_daemon *d, const char *dir, long first,
                  long second, const char *const *extra_env)
{
    writer_start_paced(w, d, dir, first, second, 0, extra_env);
}

void writer_start_paced(struct writer *w, const struct test_daemon *d, const char *dir, long first,
                        long second, long pace_us, const char *const *extra_env)
{
    GPtrArray *vars = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(vars, g_strdup_printf("VIGIL_REPORT=%s/writer.txt", dir));
    g_ptr_array_add(vars, g_strdup("VIGIL_RUN_ID=restart"));
    for (const char *const *v = extra_env; v != NULL && *v != NULL; v++)
        g_ptr_array_add(vars, g_strdup(*v));
    g_ptr_array_add(vars, NULL);
    char **env = test_daemon_preload_env(d, (const char *const *)vars->pdata);
    char *target = g_build_filename(dir, "written", NULL);
    char *first_text = g_strdup_printf("%ld", first), *second_text = g_strdup_printf("%ld", second);
    char *pace_text = g_strdup_printf("%ld", pace_us);
    const char *argv[] = {
        test_env_or_fail("RESTART_WRITER"), target, first_text, second_text, pace_text, NULL};
    GError *error = NULL;
    if (!g_spawn_async_with_pipes(dir, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                                  &w->pid, &w->in, &w->out, NULL, &error))
        fail_msg("restart_writer: %s", error->message);
    char line[64] = "";
    ssize_t n = read(w->out, line, sizeof line - 1);
    assert_true(n > 0);
    line[n] = '\0';
    test_assert_contains(line, "paused");
    g_strfreev(env);
    g_free(target);
    g_free(first_text);
    g_free(second_text);
    g_free(pace_text);
    g_ptr_array_free(vars, TRUE);
}

void writer_finish(struct writer *w)
{
    assert_int_equal(write(w->in, "g", 1), 1);
    int status;
    assert_int_equal(waitpid(w->pid, &status, 0), w->pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    close(w->in);
    close(w->out);
}

guint64 writer_writes_stored(const char *conninfo, GPid pid)
{
    return test_pg_query_u64_printf(
        conninfo,
        "SELECT count(*) FROM activities JOIN processes USING (process_id) "
        "WHERE pid = %d AND operation = 6",
        (int)pid);
}

void writer_wait_for_report(const char *conninfo, const char *dir, GPid pid)
{
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    while (test_pg_query_u64_printf(
               conninfo,
               "SELECT count(*) FROM run_summaries JOIN processes USING (process_id) "
               "WHERE pid = %d AND end_time IS NOT NULL",
               (int)pid) == 0) {
        if (g_get_monotonic_time() > deadline) {
            char *log_path = g_build_filename(dir, "vigild.log", NULL), *log = NULL;
            g_file_get_contents(log_path, &log, NULL, NULL);
            fail_msg("the warehouse never got the writer's report (%" G_GUINT64_FORMAT
                     " writes stored); vigild's log:\n%s",
                     writer_writes_stored(conninfo, pid), log);
        }
        g_usleep(POLL_US); /* polling a condition, with a deadline */
    }
}

void writer_wait_two_cycles_after(const struct test_daemon *d, GPid pid, writer_holds_fn holds,
                                  gpointer data, const char *what)
{
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    gint64 held_in_cycle = -1;
    for (;;) {
        JsonNode *status = test_daemon_status(d, 0);
        JsonObject *p = test_daemon_process(status, pid);
        assert_non_null(p);
        gint64 cycles =
            test_daemon_json_int(json_node_get_object(status), "reasoning", "cycles", NULL);
        if (held_in_cycle < 0 && holds(p, data))
            held_in_cycle = cycles;
        json_node_unref(status);
        if (held_in_cycle >= 0 && cycles > held_in_cycle + 1)
            return;
        if (g_get_monotonic_time() > deadline)
            fail_msg("vigild never %s (process %d)", what, (int)pid);
        g_usleep(POLL_US); /* polling a condition, with a deadline */
    }
}

static gboolean drained(JsonObject *process, gpointer activities)
{
    return json_object_get_int_member(process, "activities") >= *(const gint64 *)activities;
}

void writer_wait_for_drained(const struct test_daemon *d, GPid pid, gint64 activities)
{
    char *what = g_strdup_printf("drained %" G_GINT64_FORMAT " activities", activities);
    writer_wait_two_cycles_after(d, pid, drained, &activities, what);
    g_free(what);
}

void writer_wait_for_all_sent(const struct test_daemon *d)
{
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    for (;;) {
        JsonNode *status = test_daemon_status(d, 0);
        JsonObject *root = json_node_get_object(status);
        gint64 unacked = test_daemon_json_int(root, "uplink", "unacked", NULL);
        gint64 acked = test_daemon_json_int(root, "uplink", "acked", NULL);
        json_node_unref(status);
        if (unacked == 0 && acked > 0)
            return;
        if (g_get_monotonic_time() > deadline)
            fail_msg("vigild still has %" G_GINT64_FORMAT " batches unacknowledged", unacked);
        g_usleep(POLL_US); /* polling a condition, with a deadline */
    }
}
