/* A restart of vigild in the middle of a writing program loses nothing
 * and doubles nothing: a program writes, vigild is killed (SIGKILL) or
 * stopped (SIGTERM) and started again while the program waits, the program
 * writes on and exits, and the warehouse holds every one of its writes
 * exactly once, with its file, and its report. In between, the new vigild
 * has taken the process back by itself (daemon/process_state.c), before
 * the program said anything. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "test_daemon.h"
#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "writer.h"

#define FIRST_WRITES  3000
#define SECOND_WRITES 5000

static const char daemon_lines[] = "providers = procstat;process;energy\ncycle_ms = 200\n";

/* vigild (more of its [uplink] in `uplink_lines`) and the writer under it,
 * its `first` writes made, the fixture's vigil-txd not started. Returns
 * vigild's config, to start it again with (g_free it). */
static char *start_writing_without_txd(struct test_txd_fixture *f, const char *uplink_lines,
                                       struct test_daemon *d, struct writer *w, long first,
                                       long second)
{
    char *config = writer_daemon_config(f, NULL, uplink_lines);
    test_daemon_start(d, f->dir, daemon_lines, config);
    writer_start(w, d, f->dir, first, second, NULL);
    return config;
}

/* The same with the fixture's vigil-txd started first. */
static char *start_writing(struct test_txd_fixture *f, const char *uplink_lines,
                           struct test_daemon *d, struct writer *w, long first, long second)
{
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    return start_writing_without_txd(f, uplink_lines, d, w, first, second);
}

/* start_writing, then vigild killed once it drained the `first` writes.
 * Puts vigild's state folder in `*state_dir` when `state_dir` is not NULL
 * (g_free it). Returns vigild's config, as start_writing. */
static char *start_writing_then_kill(struct test_txd_fixture *f, struct test_daemon *d,
                                     struct writer *w, long first, long second, char **state_dir)
{
    char *config = start_writing(f, "", d, w, first, second);
    writer_wait_for_drained(d, w->pid, first);
    if (state_dir != NULL)
        *state_dir = g_strconcat(d->socket_path, ".state", NULL);
    g_free(test_daemon_kill(d));
    return config;
}

/* How many processes vigild took back from the state its last run left. */
static void assert_recovered(const struct test_daemon *d, gint64 want)
{
    JsonNode *status = test_daemon_status(d, 0);
    assert_int_equal(
        test_daemon_json_int(json_node_get_object(status), "processes", "recovered_total", NULL),
        want);
    json_node_unref(status);
}

/* Every write once, each with its file; nothing else of it twice. */
static void check_warehouse(const struct test_txd_fixture *f, GPid pid, guint64 writes)
{
    writer_wait_for_report(f->conninfo, f->dir, pid);
    assert_int_equal(writer_writes_stored(f->conninfo, pid), writes);
    assert_int_equal(
        test_pg_query_u64_printf(f->conninfo,
                                 "SELECT count(*) FROM activities a JOIN processes USING "
                                 "(process_id) JOIN files USING (file_id) WHERE pid = %d AND "
                                 "operation = 6 AND encode(path_bytes, 'escape') LIKE "
                                 "'%%/written'",
                                 (int)pid),
        writes);
    assert_int_equal(
        test_pg_query_u64_printf(f->conninfo,
                                 "SELECT count(*) - count(DISTINCT seq) FROM activities JOIN "
                                 "processes USING (process_id) WHERE pid = %d",
                                 (int)pid),
        0);
    /* One process, however many vigilds served it. */
    assert_int_equal(test_pg_query_u64_printf(
                         f->conninfo, "SELECT count(*) FROM processes WHERE pid = %d", (int)pid),
                     1);
}

/* Whether vigild has given the writer a share of the node's energy (it
 * has no note of why not any more); the share, when it has. */
static gboolean shared_energy(JsonObject *process, gpointer energy_j)
{
    if (json_object_has_member(process, "energy_note"))
        return FALSE;
    *(double *)energy_j = json_object_get_double_member(process, "energy_j");
    return TRUE;
}

/* Waits until vigild has given the writer a share of the node's energy and
 * a cycle has ended since, so that the share is in what the cycle's end
 * commits; returns the share. The writer waits, using no CPU: its share no
 * longer grows. */
static double wait_for_energy(const struct test_daemon *d, GPid pid)
{
    double energy_j = 0;
    writer_wait_two_cycles_after(d, pid, shared_energy, &energy_j,
                                 "shared the node's energy with the writer");
    return energy_j;
}

/* The new vigild took the writer back before it said anything, its energy
 * going on from where the last one left it, marked uncertain for the gap. */
static void check_taken_back(const struct test_daemon *d, GPid pid, double energy_before_j)
{
    assert_recovered(d, 1);
    JsonNode *status = test_daemon_status(d, 0);
    JsonObject *p = test_daemon_process(status, pid);
    assert_non_null(p);
    assert_int_equal(json_object_get_int_member(p, "restarts"), 1);
    assert_int_equal(json_object_get_int_member(p, "restart_lost"), 0);
    assert_true(json_object_get_boolean_member(p, "energy_uncertain"));
    assert_true(json_object_get_double_member(p, "energy_j") >= energy_before_j);
    json_node_unref(status);
}

/* vigil-txd up from the start, or only once vigild was restarted. */
enum txd_when { TXD_FIRST, TXD_AFTER_RESTART };

static void restart_in_the_middle(struct test_txd_fixture *f, gboolean kill,
                                  const char *uplink_lines, enum txd_when txd)
{
    struct test_daemon d;
    struct writer w;
    char *config =
        txd == TXD_FIRST
            ? start_writing(f, uplink_lines, &d, &w, FIRST_WRITES, SECOND_WRITES)
            : start_writing_without_txd(f, uplink_lines, &d, &w, FIRST_WRITES, SECOND_WRITES);
    double energy_j = wait_for_energy(&d, w.pid);
    g_free(kill ? test_daemon_kill(&d) : test_daemon_stop(&d));
    test_daemon_start(&d, f->dir, daemon_lines, config);
    check_taken_back(&d, w.pid, energy_j);
    if (txd == TXD_AFTER_RESTART)
        test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    writer_finish(&w);
    check_warehouse(f, w.pid, FIRST_WRITES + SECOND_WRITES);
    /* The program's own report was answered by the new vigild. */
    char *report_path = g_build_filename(f->dir, "writer.txt", NULL);
    char *report = test_read_file(report_path);
    test_assert_contains(report, "VIGILD");
    g_free(report);
    g_free(report_path);
    g_free(test_daemon_stop(&d));
    g_free(config);
}

static void test_sigkill_of_vigild_loses_nothing(void **state)
{
    restart_in_the_middle(*state, TRUE, "", TXD_FIRST);
}

static void test_sigterm_of_vigild_loses_nothing(void **state)
{
    restart_in_the_middle(*state, FALSE, "", TXD_FIRST);
}

/* Batches not written ahead (spool_after_ms): a cycle's ring positions are
 * committed once vigil-txd acknowledges its batch, not before; the
 * writes are all stored once all the same. */
static void test_sigkill_without_write_ahead_loses_nothing(void **state)
{
    restart_in_the_middle(*state, TRUE, "spool_after_ms = 60000\n", TXD_FIRST);
}

/* The same with no batch ever acknowledged before the kill (vigil-txd is
 * not there yet): every cycle's ring positions wait, and the writer's
 * energy is taken back all the same. Before, it was saved only with the
 * positions: the new vigild took the writer back with no share (not
 * marked uncertain, its energy starting again from 0); with [uplink]
 * connect_delay_max_ms, the test above met it whenever vigild's first
 * connect came after the kill. */
static void test_sigkill_before_any_acknowledgement_keeps_the_energy(void **state)
{
    restart_in_the_middle(*state, TRUE, "spool_after_ms = 60000\n", TXD_AFTER_RESTART);
}

static guint count_lines_with(const char *text, const char *needle)
{
    guint n = 0;
    for (const char *at = text; (at = strstr(at, needle)) != NULL; at += strlen(needle))
        n++;
    return n;
}

/* Lets the writer finish; checks what the warehouse has of it and that
 * vigild warned at most once of files without a name. Returns vigild's
 * log, vigild stopped (g_free it). */
static char *finish_with_names(struct test_txd_fixture *f, struct test_daemon *d, struct writer *w,
                               guint64 writes)
{
    writer_finish(w);
    writer_wait_for_report(f->conninfo, f->dir, w->pid);
    char *log = test_daemon_stop(d);
    guint warnings = count_lines_with(log, "has no name");
    if (warnings > 1)
        fail_msg("vigild warned %u times of files without a name", warnings);
    check_warehouse(f, w->pid, writes);
    return log;
}

/* vigild restarted with another state_dir cannot take the writer back: it
 * learns of it only at its exit, when the writer registers again, and has
 * none of the file names the first vigild drained. The writer sends them
 * again (vigild asks through the ring), so every write of the 50,000 has its
 * file; before, the 44,200 written after the restart had none, and vigild
 * warned of it every 1,000. */
static void test_names_come_again_to_a_vigild_with_another_state_dir(void **state)
{
    enum { FIRST = 5800, SECOND = 44200 };
    struct test_txd_fixture *f = *state;
    struct test_daemon d;
    struct writer w;
    char *config = start_writing_then_kill(f, &d, &w, FIRST, SECOND, NULL);
    char *elsewhere = g_strdup_printf("%sstate_dir = %s/elsewhere\n", daemon_lines, f->dir);
    test_daemon_start(&d, f->dir, elsewhere, config);
    assert_recovered(&d, 0);
    char *log = finish_with_names(f, &d, &w, FIRST + SECOND);
    test_assert_contains(log, "asked for its file names again");
    test_assert_contains(log, "its file names came again");
    g_free(log);
    g_free(elsewhere);
    g_free(config);
}

/* The same when the names file is lost and the writer is taken back: the
 * new vigild asks for the names again at once, and keeps the writer's
 * activities back until they are in. */
static void test_names_come_again_when_the_names_file_is_lost(void **state)
{
    enum { FIRST = 5800, SECOND = 44200 };
    struct test_txd_fixture *f = *state;
    struct test_daemon d;
    struct writer w;
    char *state_dir;
    char *config = start_writing_then_kill(f, &d, &w, FIRST, SECOND, &state_dir);
    GDir *folder = g_dir_open(state_dir, 0, NULL);
    assert_non_null(folder);
    guint lost = 0;
    for (const char *name; (name = g_dir_read_name(folder)) != NULL;) {
        if (!g_str_has_suffix(name, ".names"))
            continue;
        char *path = g_build_filename(state_dir, name, NULL);
        assert_int_equal(g_unlink(path), 0);
        g_free(path);
        lost++;
    }
    g_dir_close(folder);
    assert_int_equal(lost, 1);
    test_daemon_start(&d, f->dir, daemon_lines, config);
    assert_recovered(&d, 1);
    g_free(finish_with_names(f, &d, &w, FIRST + SECOND));
    g_free(state_dir);
    g_free(config);
}

/* Waits (a generous bound) until the writer's process row has an end. */
static void wait_for_end(const struct test_txd_fixture *f, GPid pid)
{
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (test_pg_query_u64_printf(
               f->conninfo,
               "SELECT count(*) FROM processes WHERE pid = %d AND end_time IS NOT NULL",
               (int)pid) == 0) {
        if (g_get_monotonic_time() > deadline)
            fail_msg("the writer, which ended while vigild was down, has no end in the "
                     "warehouse: end_time is %s",
                     test_pg_query_u64_printf(
                         f->conninfo, "SELECT count(*) FROM processes WHERE pid = %d", (int)pid) > 0
                         ? "NULL"
                         : "missing with its row");
        g_usleep(20000); /* polling a condition, with a deadline */
    }
}

/* The writer ends while vigild is down (killed after its first writes).
 * The vigild started again finds its state and its pid gone: the
 * warehouse gets its end as a bound, between the last time the first
 * vigild saw it running and the moment the second found it gone, the run
 * ends too, and what the first vigild counted is kept. The writes after
 * the kill went with the process's memory: nobody held its ring. (Before,
 * its run stayed open for ever, end_time NULL.) */
static void test_an_end_while_vigild_is_down_is_stored_as_a_bound(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_daemon d;
    struct writer w;
    char *config = start_writing_then_kill(f, &d, &w, FIRST_WRITES, SECOND_WRITES, NULL);
    gint64 before_exit_us = g_get_real_time();
    writer_finish(&w);
    gint64 after_exit_us = g_get_real_time();
    test_daemon_start(&d, f->dir, daemon_lines, config);
    wait_for_end(f, w.pid);
    /* Its end between the two, and the true end inside them. */
    test_pg_assert_text_printf(f->conninfo, "t t t t t",
                               "SELECT concat_ws(' ', end_time_earliest < end_time, "
                               "end_time_earliest <= to_timestamp(%" G_GINT64_FORMAT " / 1e6), "
                               "end_time >= to_timestamp(%" G_GINT64_FORMAT
                               " / 1e6), end_time_earliest >= start_time, "
                               "exit_status IS NULL) FROM processes WHERE pid = %d",
                               before_exit_us, after_exit_us, (int)w.pid);
    /* The run ends with it, as a bound too, and is no longer shown running. */
    assert_int_equal(
        test_pg_query_u64_printf(f->conninfo,
                                 "SELECT count(*) FROM runs WHERE run_key = 'restart' AND "
                                 "end_time = (SELECT end_time FROM processes WHERE pid = %d) "
                                 "AND end_time_earliest IS NOT NULL",
                                 (int)w.pid),
        1);
    /* What the first vigild counted of it (every activity stored) and
     * its first writes, stored. */
    test_pg_assert_text_printf(
        f->conninfo, "t t 0 f",
        "SELECT concat_ws(' ', u.activities = (SELECT count(*) FROM activities a WHERE "
        "a.process_id = u.process_id), u.activities >= %d, u.dropped, u.ring_read) FROM "
        "process_unwatched_ends u JOIN processes USING (process_id) WHERE pid = %d",
        FIRST_WRITES, (int)w.pid);
    assert_int_equal(writer_writes_stored(f->conninfo, w.pid), FIRST_WRITES);
    char *log = test_daemon_stop(&d);
    test_assert_contains(log, "ended while no vigild ran");
    g_free(log);
    g_free(config);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_sigkill_of_vigild_loses_nothing),
             TEST_WITH_TXD_FIXTURE(test_sigterm_of_vigild_loses_nothing),
             TEST_WITH_TXD_FIXTURE(test_sigkill_without_write_ahead_loses_nothing),
             TEST_WITH_TXD_FIXTURE(test_sigkill_before_any_acknowledgement_keeps_the_energy),
             TEST_WITH_TXD_FIXTURE(test_names_come_again_to_a_vigild_with_another_state_dir),
             TEST_WITH_TXD_FIXTURE(test_names_come_again_when_the_names_file_is_lost),
             TEST_WITH_TXD_FIXTURE(test_an_end_while_vigild_is_down_is_stored_as_a_bound))
