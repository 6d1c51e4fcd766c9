/* vigil — running vigild in a test: a private daemon on a socket in the
 * test's folder, asked what it sees through `vigil status --json`, and
 * stopped with SIGTERM. Include after <cmocka.h>. */
#ifndef VIGIL_TEST_DAEMON_H
#define VIGIL_TEST_DAEMON_H

#include <sys/types.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "test_support.h"

struct test_daemon {
    char *dir;
    char *config_path;
    char *socket_path;
    char *log_path;
    char *capture_path; /* [capture] sink */
    pid_t pid;
    int pidfd;
};

/* Starts vigild (from $VIGILD) with a vigil.conf in `dir` whose [daemon]
 * section has the socket and `daemon_lines`, then a [capture] section whose
 * sink is DIR/capture.jsonl, followed by `more_config`
 * (either may be NULL). Returns once the daemon serves its socket: vigild
 * detaches only then. Its log goes to DIR/vigild.log. */
void test_daemon_start(struct test_daemon *d, const char *dir, const char *daemon_lines,
                       const char *more_config);

/* SIGTERM, then waits for it to exit; returns its log. g_free it. */
char *test_daemon_stop(struct test_daemon *d);
/* test_daemon_stop; its log must say `needle`. */
void test_daemon_stop_saying(struct test_daemon *d, const char *needle);
/* SIGKILL, then waits for it to die; returns its log (its socket stays,
 * as after a crash). g_free it. */
char *test_daemon_kill(struct test_daemon *d);

/* cmocka teardown: kills a daemon a failed test left running, then
 * removes the test's folder (test_remove_dir). */
int test_daemon_teardown(void **state);
/* A test with its own folder (test_make_dir) and that teardown. */
#define TEST_WITH_DIR(f) cmocka_unit_test_setup_teardown(f, test_make_dir, test_daemon_teardown)

/* `$VIGIL_CLI ARGS…` (NULL-terminated) for daemon `d`, as an admin runs
 * it on the node: VIGIL_SOCKET and VIGIL_CONFIG are the daemon's. */
struct test_run test_daemon_vigil(const struct test_daemon *d, const char *const *args);
/* The same in `cwd` (NULL: here), with more variables ("NAME=value",
 * NULL-terminated, or NULL). */
struct test_run test_daemon_vigil_env(const struct test_daemon *d, const char *cwd,
                                      const char *const *vars, const char *const *args);

/* A clean environment (test_clean_environment) for a program run under
 * the preload library ($VIGIL_PRELOAD_LIB) against `d`: LD_PRELOAD and
 * VIGIL_SOCKET, then `vars` ("NAME=value", NULL-terminated, or NULL).
 * g_strfreev it. */
char **test_daemon_preload_env(const struct test_daemon *d, const char *const *vars);

/* dd started in `dir` with `env`, copying `count` blocks of `bs` bytes
 * ("count=N", "bs=N") from /dev/zero to `of` ("of=PATH") and saying
 * nothing; its pid, not reaped (wait_exit it). Fails the test if dd does
 * not start. */
GPid test_daemon_spawn_dd(const char *dir, char **env, const char *of, const char *bs,
                          const char *count);

/* Runs argv in `cwd` (NULL: here) with `env`: it must exit 1 (`what`
 * names it in a failure) saying `says` on stderr. */
void test_daemon_assert_refused(const char *cwd, const char *const *argv, char **env,
                                const char *what, const char *says);

/* SIGKILL to every daemon started and not stopped (a failed test's). */
void test_daemon_kill_all(void);

/* `vigil status --json` (from $VIGIL_CLI), parsed; `finished_pid` as its
 * --finished-pid, or 0. Free with json_node_unref. */
JsonNode *test_daemon_status(const struct test_daemon *d, pid_t finished_pid);
/* The same, asked by another user (`uid`, with its own group only). */
JsonNode *test_daemon_status_as(const struct test_daemon *d, uid_t uid, pid_t finished_pid);

/* `vigil status --socket SOCKET_PATH`, as text (a daemon there or not). */
struct test_run test_daemon_status_text(const char *socket_path);
/* The same, which must exit 0 and say each of needles[] (`n` of them);
 * its output. g_free it. */
char *test_daemon_status_text_says(const char *socket_path, const char *const *needles, gsize n);

/* The status's process of pid `pid` (the newest one), or NULL. */
JsonObject *test_daemon_process(JsonNode *status, pid_t pid);

/* The objects of a capture sink's lines (JSON, one a line) whose "type"
 * is `type`, in the sink's order. g_ptr_array_unref it. */
GPtrArray *test_daemon_sink_lines(const char *sink_path, const char *type);
/* The sequence numbers of `pid`'s activities in a capture sink, in the
 * sink's order, repeats kept. g_array_unref it. */
GArray *test_daemon_sink_seqs(const char *sink_path, pid_t pid);

/* An integer member of `object` at a path of names ("processes", "running"). */
gint64 test_daemon_json_int(JsonObject *object, const char *first, ...) G_GNUC_NULL_TERMINATED;

#endif
