/* vigil — helpers shared by the test programs: running a program and
 * capturing what it says, giving it a clean environment, a fresh folder
 * per test, and assertions on text and exit statuses. Include after
 * <cmocka.h>. (Reading JSON reports: test_report.h.) */
#ifndef VIGIL_TEST_SUPPORT_H
#define VIGIL_TEST_SUPPORT_H

#include <stdarg.h>
#include <linux/capability.h>
#include <glib.h>

struct test_run {
    int status; /* exit status, or 128 + the signal that ended it */
    char *out;
    char *err;
};

/* Runs argv in `cwd` (NULL: here) with `env` (NULL: ours), stdin from
 * /dev/null, capturing stdout and stderr; fails the test if it cannot
 * start. */
struct test_run test_run_program(const char *cwd, const char *const *argv, char **env);
void test_run_clear(struct test_run *run);

/* Our environment without LD_PRELOAD and without any VIGIL_* variable, so
 * that a program sees only what the test gives it, plus `vars`
 * ("NAME=value" strings, NULL-terminated, or NULL). g_strfreev it. */
char **test_clean_environment(const char *const *vars);

/* `$VIGIL_CLI command args…` (args NULL-terminated) in `cwd`, in a clean
 * environment (test_clean_environment). */
struct test_run test_run_vigil(const char *cwd, const char *command, const char *const *args);
/* `$VIGIL_CLI WORDS…` (up to a NULL) here, in a clean environment plus
 * `vars` (test_clean_environment); and the same with the words in a
 * va_list, for helpers that take them. */
struct test_run test_run_vigil_words(const char *const *vars, const char *first,
                                     ...) G_GNUC_NULL_TERMINATED;
struct test_run test_run_vigil_va(const char *const *vars, const char *first, va_list words);
/* The same with `env` (NULL: a clean environment). */
struct test_run test_run_vigil_env(const char *cwd, char **env, const char *command,
                                   const char *const *args);
/* `$VIGIL_CLI COMMAND ARGS…` (NULL-terminated), here, in a clean
 * environment: test_run_vigil_words without variables. */
#define test_vigil(...) test_run_vigil_words(NULL, __VA_ARGS__)

/* A loopback TCP port no one holds now, from the kernel (other tests run
 * at the same time). */
int test_free_port(void);

/* The value of the environment variable `name`, which meson test sets:
 * fails the test when it is unset or empty. */
const char *test_env_or_fail(const char *name);

/* Fails with everything the program said when its status is not `want`;
 * `what` names the program in the message. */
void test_assert_status(const struct test_run *run, int want, const char *what);
/* test_assert_status, then that what it said on stdout (test_assert_out)
 * or on stderr (test_assert_err) contains each of the needles (up to a
 * NULL). */
void test_assert_out(const struct test_run *run, int want, const char *what,
                     ...) G_GNUC_NULL_TERMINATED;
void test_assert_err(const struct test_run *run, int want, const char *what,
                     ...) G_GNUC_NULL_TERMINATED;

/* What the file at `path` holds (g_free it); fails the test, with why,
 * when it cannot be read. */
char *test_read_file(const char *path);
/* How many entries of `dir` have a name that starts with `prefix` and ends
 * with `suffix` ("" for any). */
guint test_count_files(const char *dir, const char *prefix, const char *suffix);
/* A file DIR/NAME holding `text` (or what printf makes of `format`, …);
 * its path (g_free it). */
char *test_new_file(const char *dir, const char *name, const char *text);
char *test_new_filef(const char *dir, const char *name, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

void test_assert_contains(const char *text, const char *needle);
/* Polls the file at `path` (a log) until it holds `needle`; fails after a
 * minute, which only a failure waits. */
void test_wait_for_file_text(const char *path, const char *needle);
/* `text` contains each of needles[]. */
void test_assert_contains_all(const char *text, const char *const *needles, gsize n);
void test_remove_tree(const char *dir);

/* Writes `text` to DIR/relative, making folders as needed. */
void test_write_file(const char *dir, const char *relative, const char *text);

/* Rewrites DIR/relative in place, truncating the same inode, as the
 * kernel's files change: a provider keeps its descriptor, so a new inode
 * (test_write_file renames one over the old) would go unseen. */
void test_rewrite_file(const char *dir, const char *relative, const char *text);

/* cmocka setup and teardown: a fresh temporary folder per test,
 * vigil-PROGRAM-XXXXXX, its real path (the library reports real, absolute
 * paths) in *state; and its removal, with everything in it. */
int test_make_dir(void **state);
int test_remove_dir(void **state);

/* One skip policy. A test that cannot run here (a program, a file or a
 * right is missing) says why and skips, unless CI is set: under CI a test
 * never skips, and what is missing is a failure. test_skip_unless is for
 * inside a cmocka test; test_skip_program for a test program's main, which
 * returns what it gives (77, meson's "skipped", or 1 under CI). */
void test_skip_unless(gboolean condition, const char *why);
/* The same when the test already knows it cannot run: it does not return. */
G_GNUC_NORETURN void test_skip(const char *why);
int test_skip_program(const char *why);

/* A server that detaches (vigild, vigil-txd): PROGRAM --config CONFIG
 * --pid-file PID_FILE started in `dir` in a clean environment, its stderr
 * appended to LOG. Returns its pid once it has detached, with *pidfd open
 * on it; fails the test, with the log, when it does not start. */
pid_t test_start_detached(const char *dir, const char *program, const char *config,
                          const char *pid_file, const char *log, int *pidfd);
/* Sends it `signal` and waits for it to end (a minute at most), closing
 * the pidfd; returns the log (g_free it). */
char *test_end_detached(const char *program, pid_t pid, int pidfd, int signal, const char *log);

/* Root reads any file whatever its mode. To test what an unprivileged
 * daemon meets, a test takes capabilities (CAP_DAC_OVERRIDE…) out of its
 * effective set; they stay permitted and are put back afterwards. */
struct test_caps {
    struct __user_cap_header_struct header;
    struct __user_cap_data_struct data[2];
};

/* Drops `mask` (capabilities below 32) from the effective set, saving the
 * set in *saved; FALSE when they were not all effective or it cannot. */
gboolean test_caps_drop(struct test_caps *saved, guint32 mask);
/* Puts back what test_caps_drop saved; fails the test when it cannot. */
void test_caps_restore(const struct test_caps *saved);
/* Whether capability `cap` (below 32) is effective now. */
gboolean test_caps_have(guint32 cap);

/* Makes ROOT/relative mode 0 and puts the read overrides (CAP_DAC_OVERRIDE,
 * CAP_DAC_READ_SEARCH) out of the effective set, saving it in *saved, so
 * that the file is denied to this process as it is to an unprivileged
 * daemon; skips the test when that cannot be done, or when the file is
 * still readable. test_caps_restore(saved) puts them back. */
void test_deny_read(const char *root, const char *relative, struct test_caps *saved);

/* What code under test logs in one GLib log domain, as the daemon's log
 * shows it: a line "LEVEL: message" each (warning, message, info or debug),
 * and how many. */
struct test_log {
    const char *domain;
    GString *text;
    guint count;
    guint handler;
};
/* Captures `levels` of `domain` from now on. */
void test_log_begin(struct test_log *log, const char *domain, GLogLevelFlags levels);
/* Stops capturing; returns the text (g_free it). */
char *test_log_end(struct test_log *log);

#endif
