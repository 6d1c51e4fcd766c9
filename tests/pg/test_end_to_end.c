/* The whole chain: an instrumented program under vigild, vigild sending its
 * cycles to vigil-txd, vigil-txd storing them in PostgreSQL. What the
 * warehouse holds of each captured window is exactly what vigild forwarded
 * (its local sink, written from the same cycles, is the witness), the
 * stored report prints again as the console showed it, and a vigild that
 * spooled while vigil-txd was away replays its spool when it comes back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <json-glib/json-glib.h>

#include "test_daemon.h"
#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"

/* Starts vigild for the test: it captures everything, sends it up to the
 * fixture's vigil-txd (whether that is there yet or not) and keeps its
 * sink, off by default beside an uplink, as the test's witness. */
static void start_vigild(struct test_daemon *d, const struct test_txd_fixture *f)
{
    char *config = g_strdup_printf(
        "[capture]\nsink_enabled = yes\nmode = all\n[uplink]\nendpoint = ipc://%s/txd.sock\n"
        "spool_dir = %s/spool\n[warehouse]\nconninfo = %s\n",
        f->dir, f->dir, f->conninfo);
    test_daemon_start(d, f->dir, "providers = procstat;process\ncycle_ms = 200\n", config);
    g_free(config);
}

/* The fixture's vigil-txd, then vigild sending to it (start_vigild). */
static void start_chain(struct test_daemon *d, struct test_txd_fixture *f)
{
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    start_vigild(d, f);
}

/* Runs dd under the preload library against `d`, its text report in
 * DIR/report.txt; returns its pid. */
static pid_t run_dd(const struct test_daemon *d, const char *dir, const char *name)
{
    char *report_var = g_strdup_printf("VIGIL_REPORT=%s/%s.txt", dir, name);
    char *run_var = g_strdup_printf("VIGIL_RUN_ID=e2e-%s", name);
    const char *vars[] = {report_var, run_var, NULL};
    char **env = test_daemon_preload_env(d, vars);
    char *of = g_strdup_printf("of=%s/%s.out", dir, name);
    /* `sh -c 'echo $$; exec dd …'`: the pid the report and the warehouse
     * will name. */
    const char *argv[] = {"/bin/sh", "-c",
                          "echo $$; exec dd if=/dev/zero \"$0\" bs=4096 "
                          "count=300 status=none",
                          of, NULL};
    struct test_run run = test_run_program(dir, argv, env);
    test_assert_status(&run, 0, "dd under vigild");
    pid_t pid = (pid_t)g_ascii_strtoll(run.out, NULL, 10);
    assert_true(pid > 0);
    test_run_clear(&run);
    g_strfreev(env);
    g_free(of);
    g_free(report_var);
    g_free(run_var);
    return pid;
}

static int compare_i64(gconstpointer a, gconstpointer b)
{
    gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
    return x < y ? -1 : x > y;
}

/* The warehouse's sequence numbers of `pid`'s activities, sorted, as
 * "0,1,2…", and the sink's the same way: equal when the same activities,
 * each once. */
static char *warehouse_seqs(const struct test_txd_fixture *f, pid_t pid)
{
    char *sql = g_strdup_printf("SELECT coalesce(string_agg(seq::text, ',' ORDER BY seq), '') "
                                "FROM activities JOIN processes USING (process_id) WHERE pid = %d",
                                (int)pid);
    char *text = test_pg_query_text_in(f->conninfo, sql);
    g_free(sql);
    return text;
}

static char *joined(GArray *seqs)
{
    g_array_sort(seqs, compare_i64);
    GString *s = g_string_new("");
    for (guint i = 0; i < seqs->len; i++)
        g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i > 0 ? "," : "",
                               g_array_index(seqs, gint64, i));
    return g_string_free(s, FALSE);
}

/* Waits until the warehouse has `pid`'s report: the last thing vigild sends
 * of a process. */
static void wait_for_summary(const struct test_txd_fixture *f, pid_t pid)
{
    char *sql = g_strdup_printf("SELECT count(*) FROM run_summaries JOIN processes "
                                "USING (process_id) WHERE pid = %d AND end_time IS NOT NULL",
                                (int)pid);
    test_pg_wait_for_count_in(f->conninfo, sql, 1);
    g_free(sql);
}

static char *vigil_report(const struct test_daemon *d, const char *run)
{
    struct test_run r =
        test_run_vigil(NULL, "report", (const char *[]){"--config", d->config_path, run, NULL});
    test_assert_status(&r, 0, "vigil report");
    char *out = g_strdup(r.out);
    test_run_clear(&r);
    return out;
}

static void check_run(const struct test_txd_fixture *f, const struct test_daemon *d,
                      const char *sink, pid_t pid, const char *name)
{
    wait_for_summary(f, pid);
    GArray *forwarded = test_daemon_sink_seqs(sink, pid);
    assert_true(forwarded->len > 0);
    char *expected = joined(forwarded);
    char *stored = warehouse_seqs(f, pid);
    assert_string_equal(stored, expected);
    g_free(expected);
    g_free(stored);
    g_array_free(forwarded, TRUE);

    char *report_path = g_strdup_printf("%s/%s.txt", f->dir, name);
    char *console = test_read_file(report_path);
    char *run = g_strdup_printf("e2e-%s", name);
    char *again = vigil_report(d, run);
    assert_string_equal(again, console);
    g_free(again);
    g_free(run);
    g_free(console);
    g_free(report_path);
}

/* Runs dd as `name` against `d` (run_dd) and checks what the warehouse
 * holds of it against `sink` and its report (check_run); returns its pid. */
static pid_t run_dd_and_check(const struct test_txd_fixture *f, const struct test_daemon *d,
                              const char *sink, const char *name)
{
    pid_t pid = run_dd(d, f->dir, name);
    check_run(f, d, sink, pid, name);
    return pid;
}

static void test_what_vigild_forwards_is_what_the_warehouse_holds(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_daemon d;
    start_chain(&d, f);
    char *sink = g_strdup(d.capture_path);
    pid_t pid = run_dd_and_check(f, &d, sink, "all");
    /* Its report's files and timeline (file_stats, schema 0008): dd's
     * output, 300 sequential writes of 4 KiB. */
    test_pg_assert_text_printf(
        f->conninfo,
        "300 1228800 299 299 1228799 {0,0,300,0,0,0,0,0,0,0} "
        "[{\"size\": 4096, \"count\": 300, \"exact\": true}]",
        "SELECT concat_ws(' ', posix_writes, written_bytes, seq_writes, consec_writes, "
        "max_written_offset, write_size_hist, common_sizes) FROM file_stats JOIN processes "
        "USING (process_id) WHERE pid = %d AND path = '%s/all.out'",
        (int)pid, f->dir);
    assert_int_equal(
        test_pg_query_u64_printf(f->conninfo,
                                 "SELECT count(*) FROM run_io_timelines WHERE pid = %d AND "
                                 "(SELECT sum(b) FROM unnest(written_bytes) b) >= 1228800",
                                 (int)pid),
        1);
    /* One run, one process, its program and exit status. */
    assert_int_equal(test_pg_query_u64_in(f->conninfo, "SELECT count(*) FROM runs WHERE run_key "
                                                       "= 'e2e-all' AND exit_status = 0"),
                     1);
    /* The node's statistics: its 1 s roll-ups keep coming, and the captured
     * cycles' samples at full resolution came with the activities. */
    test_pg_wait_for_count_in(
        f->conninfo,
        "SELECT count(*) FROM statistics_rollups r JOIN metrics m USING (metric_id) "
        "WHERE m.name LIKE 'cpu.%'",
        1);
    assert_true(test_pg_query_u64_in(f->conninfo, "SELECT count(*) FROM window_statistics") > 0);
    g_free(test_daemon_stop(&d));
    g_free(sink);
}

static void test_a_spool_is_replayed_after_a_restart(void **state)
{
    struct test_txd_fixture *f = *state;
    /* vigil-txd is not there: vigild keeps the batches. */
    struct test_daemon d;
    start_vigild(&d, f);
    pid_t pid = run_dd(&d, f->dir, "spooled");
    char *sink = g_strdup(d.capture_path);
    /* The process's cycles are decided, then a stop spools what is left. */
    JsonNode *status = test_daemon_status(&d, pid);
    json_node_unref(status);
    char *log = test_daemon_stop(&d);
    g_free(log);
    /* No vigil-txd has been there (the database is not even migrated):
     * what there is, is in the spool's segments. */
    char *spool = g_build_filename(f->dir, "spool", NULL);
    assert_true(test_count_files(spool, "", ".spool") > 0);

    /* vigil-txd comes, and vigild starts again on the same spool. */
    start_chain(&d, f);
    check_run(f, &d, sink, pid, "spooled");
    g_free(test_daemon_stop(&d));
    g_free(spool);
    g_free(sink);
}

/* A node whose spool folder is emptied between two runs (a new disk, an
 * admin's rm -r) numbers its batches again without it. Before, it started
 * again at 1 and vigil-txd took its batches for ones it had and dropped
 * them; now every write of the second run is in the warehouse, once. */
static void test_a_node_with_an_emptied_spool_folder_loses_nothing(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_daemon d;
    start_chain(&d, f);
    char *sink = g_strdup(d.capture_path);
    run_dd_and_check(f, &d, sink, "before");
    g_free(test_daemon_stop(&d));
    char *spool = g_build_filename(f->dir, "spool", NULL);
    test_remove_tree(spool);
    assert_false(g_file_test(spool, G_FILE_TEST_EXISTS));
    g_free(spool);

    start_vigild(&d, f);
    pid_t after = run_dd_and_check(f, &d, sink, "after");
    /* Against dd itself: its 300 writes of 4096 bytes (the shell's echo
     * of its pid is one more write), each once. */
    assert_int_equal(test_pg_query_u64_printf(f->conninfo,
                                              "SELECT count(DISTINCT seq) FROM activities JOIN "
                                              "processes USING (process_id) WHERE pid = %d AND "
                                              "operation = 6 AND bytes = 4096",
                                              (int)after),
                     300);
    assert_int_equal(test_pg_query_u64_printf(f->conninfo,
                                              "SELECT count(*) FROM activities JOIN processes "
                                              "USING (process_id) WHERE pid = %d AND "
                                              "operation = 6 AND bytes = 4096",
                                              (int)after),
                     300);
    g_free(test_daemon_stop(&d));
    char *log = test_txd_stop(&f->txd);
    test_assert_contains(log, "; 0 reusing a sequence");
    g_free(log);
    g_free(sink);
}

/* `vigil run --report=off` prints nothing, and the warehouse still gets the
 * report's figures: dd's 300 writes of 4 KiB, its calls and bytes. (Off had
 * meant no report at all, so the run showed no calls and no bytes.) */
static void test_report_off_prints_nothing_and_stores_the_figures(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_daemon d;
    start_chain(&d, f);
    const char *vars[] = {"VIGIL_RUN_ID=e2e-off", NULL};
    char **env = test_clean_environment(vars);
    char *of = g_strdup_printf("of=%s/off.out", f->dir);
    const char *argv[] = {test_env_or_fail("VIGIL_CLI"),
                          "run",
                          "--config",
                          d.config_path,
                          "--report=off",
                          "--",
                          "/bin/sh",
                          "-c",
                          "echo $$; exec dd if=/dev/zero \"$0\" bs=4096 count=300 status=none",
                          of,
                          NULL};
    struct test_run run = test_run_program(f->dir, argv, env);
    test_assert_status(&run, 0, "vigil run --report=off");
    assert_string_equal(run.err, "");
    pid_t pid = (pid_t)g_ascii_strtoll(run.out, NULL, 10);
    assert_true(pid > 0);
    test_run_clear(&run);
    wait_for_summary(f, pid);
    test_pg_assert_text_printf(f->conninfo, "t 1228800",
                               "SELECT concat_ws(' ', s.calls > 0, s.bytes_written) FROM "
                               "run_summaries s JOIN processes USING (process_id) WHERE pid = %d",
                               (int)pid);
    g_free(test_daemon_stop(&d));
    g_strfreev(env);
    g_free(of);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_what_vigild_forwards_is_what_the_warehouse_holds),
             TEST_WITH_TXD_FIXTURE(test_a_spool_is_replayed_after_a_restart),
             TEST_WITH_TXD_FIXTURE(test_a_node_with_an_emptied_spool_folder_loses_nothing),
             TEST_WITH_TXD_FIXTURE(test_report_off_prints_nothing_and_stores_the_figures))
