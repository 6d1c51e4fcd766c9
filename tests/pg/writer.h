/* restart_writer under the preload library, served by a test's vigild, and
 * what the warehouse stored of it: for the tests that stop, kill or starve
 * vigild while a program writes (test_restart.c, test_spool_faults.c).
 * Include after <cmocka.h>. */
#ifndef VIGIL_TEST_PG_WRITER_H
#define VIGIL_TEST_PG_WRITER_H

#include <glib.h>

#include "test_daemon.h"
#include "test_txd.h"

struct writer {
    GPid pid;
    int in, out;
};

/* vigild's [daemon] lines for these tests, beyond its socket. */
#define WRITER_DAEMON_LINES "providers = procstat;process\ncycle_ms = 200\n"

/* vigild's config for these tests: it captures everything and sends it up
 * to the fixture's vigil-txd (ipc://DIR/txd.sock, whether that is there
 * yet or not), spooling in `spool_dir` (NULL: DIR/spool), with
 * `uplink_lines` more of [uplink] (or ""); [warehouse] is the fixture's,
 * for `vigil report`. g_free it. */
char *writer_daemon_config(const struct test_txd_fixture *f, const char *spool_dir,
                           const char *uplink_lines);

/* Starts restart_writer on DIR/written: it makes `first` one-byte writes,
 * then waits for writer_finish to make `second` more. Returns once the
 * first are done. `extra_env`: more NAME=VALUE for it, or NULL. */
void writer_start(struct writer *w, const struct test_daemon *d, const char *dir, long first,
                  long second, const char *const *extra_env);
/* The same with the first writes in chunks of 1,000, `pace_us` apart. */
void writer_start_paced(struct writer *w, const struct test_daemon *d, const char *dir, long first,
                        long second, long pace_us, const char *const *extra_env);
/* Lets it make its second writes and waits for it to exit 0. */
void writer_finish(struct writer *w);

/* Its write() calls (operation 6) the warehouse holds. */
guint64 writer_writes_stored(const char *conninfo, GPid pid);
/* Waits (a generous bound) until the warehouse has its report, the last
 * thing vigild sends of a process; fails with vigild's log (DIR/vigild.log). */
void writer_wait_for_report(const char *conninfo, const char *dir, GPid pid);
/* Whether what a test waits for holds of the writer's process (its
 * object in vigild's status); `data` is the test's. */
typedef gboolean (*writer_holds_fn)(JsonObject *process, gpointer data);
/* Polls vigild's status until `holds` says yes, then until two more cycles
 * have ended, so that the batch of the cycle where it held has been made
 * and the cycle's end has committed (or not) its ring; fails after a
 * generous bound, saying vigild never did `what`. */
void writer_wait_two_cycles_after(const struct test_daemon *d, GPid pid, writer_holds_fn holds,
                                  gpointer data, const char *what);
/* The same until vigild has drained at least `activities` of its
 * activities. */
void writer_wait_for_drained(const struct test_daemon *d, GPid pid, gint64 activities);
/* Waits until vigild has nothing left unacknowledged and has had at least
 * one batch acknowledged: its spool replayed and stored. */
void writer_wait_for_all_sent(const struct test_daemon *d);

#endif
