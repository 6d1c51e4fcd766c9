/* vigil — helpers shared by the test programs. */
#define _GNU_SOURCE /* program_invocation_short_name, realpath */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_support.h"

struct test_run test_run_program(const char *cwd, const char *const *argv, char **env)
{
    struct test_run run = {0};
    GError *error = NULL;
    int wait_status = 0;
    if (!g_spawn_sync(cwd, (char **)argv, env, G_SPAWN_SEARCH_PATH | G_SPAWN_STDIN_FROM_DEV_NULL,
                      NULL, NULL, &run.out, &run.err, &wait_status, &error))
        fail_msg("cannot run %s: %s", argv[0], error->message);
    run.status = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
    return run;
}

void test_run_clear(struct test_run *run)
{
    g_free(run->out);
    g_free(run->err);
    run->out = run->err = NULL;
}

char **test_clean_environment(const char *const *vars)
{
    char **env = g_get_environ();
    char **names = g_listenv();
    for (char **n = names; *n != NULL; n++)
        if (g_str_has_prefix(*n, "VIGIL_") || strcmp(*n, "LD_PRELOAD") == 0)
            env = g_environ_unsetenv(env, *n);
    g_strfreev(names);
    for (const char *const *v = vars; v != NULL && *v != NULL; v++) {
        const char *eq = strchr(*v, '=');
        if (eq == NULL)
            fail_msg("\"%s\" is not NAME=value", *v);
        char *name = g_strndup(*v, (gsize)(eq - *v));
        env = g_environ_setenv(env, name, eq + 1, TRUE);
        g_free(name);
    }
    return env;
}

/* `$VIGIL_CLI` and what the caller adds to it. */
static GPtrArray *vigil_argv_new(void)
{
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)test_env_or_fail("VIGIL_CLI"));
    return argv;
}

/* Runs `argv` (vigil_argv_new's) in `cwd` with `env` (NULL: a clean
 * environment), and frees it: every way of running vigil ends here. */
static struct test_run vigil_argv_run(GPtrArray *argv, const char *cwd, char **env)
{
    g_ptr_array_add(argv, NULL);
    char **clean = env == NULL ? test_clean_environment(NULL) : NULL;
    struct test_run run =
        test_run_program(cwd, (const char *const *)argv->pdata, env != NULL ? env : clean);
    g_strfreev(clean);
    g_ptr_array_free(argv, TRUE);
    return run;
}

struct test_run test_run_vigil_env(const char *cwd, char **env, const char *command,
                                   const char *const *args)
{
    GPtrArray *argv = vigil_argv_new();
    g_ptr_array_add(argv, (gpointer)command);
    for (const char *const *a = args; *a != NULL; a++)
        g_ptr_array_add(argv, (gpointer)*a);
    return vigil_argv_run(argv, cwd, env);
}

struct test_run test_run_vigil_va(const char *const *vars, const char *first, va_list words)
{
    GPtrArray *argv = vigil_argv_new();
    for (const char *a = first; a != NULL; a = va_arg(words, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    char **env = test_clean_environment(vars);
    struct test_run run = vigil_argv_run(argv, NULL, env);
    g_strfreev(env);
    return run;
}

struct test_run test_run_vigil_words(const char *const *vars, const char *first, ...)
{
    va_list words;
    va_start(words, first);
    struct test_run run = test_run_vigil_va(vars, first, words);
    va_end(words);
    return run;
}

struct test_run test_run_vigil(const char *cwd, const char *command, const char *const *args)
{
    return test_run_vigil_env(cwd, NULL, command, args);
}

int test_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t length = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &length), 0);
    close(fd);
    return ntohs(a.sin_port);
}

const char *test_env_or_fail(const char *name)
{
    const char *value = g_getenv(name);
    if (value == NULL || value[0] == '\0')
        fail_msg("%s is not set: run the tests with meson test", name);
    return value;
}

void test_assert_status(const struct test_run *run, int want, const char *what)
{
    if (run->status != want)
        fail_msg("%s exited with %d, not %d\nstdout: %s\nstderr: %s", what, run->status, want,
                 run->out, run->err);
}

/* test_assert_status, then each needle of `needles` in `text`. */
static void assert_says_va(const struct test_run *run, int want, const char *what, const char *text,
                           va_list needles)
{
    test_assert_status(run, want, what);
    for (const char *n = va_arg(needles, const char *); n != NULL;
         n = va_arg(needles, const char *))
        test_assert_contains(text, n);
}

void test_assert_out(const struct test_run *run, int want, const char *what, ...)
{
    va_list needles;
    va_start(needles, what);
    assert_says_va(run, want, what, run->out, needles);
    va_end(needles);
}

void test_assert_err(const struct test_run *run, int want, const char *what, ...)
{
    va_list needles;
    va_start(needles, what);
    assert_says_va(run, want, what, run->err, needles);
    va_end(needles);
}

void test_assert_contains(const char *text, const char *needle)
{
    if (text == NULL || strstr(text, needle) == NULL)
        fail_msg("\"%s\" does not contain \"%s\"", text ? text : "(null)", needle);
}

char *test_read_file(const char *path)
{
    char *text = NULL;
    GError *error = NULL;
    if (!g_file_get_contents(path, &text, NULL, &error))
        fail_msg("cannot read %s: %s", path, error->message);
    return text;
}

guint test_count_files(const char *dir, const char *prefix, const char *suffix)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    assert_non_null(d);
    guint n = 0;
    for (const char *name; (name = g_dir_read_name(d)) != NULL;)
        n += g_str_has_prefix(name, prefix) && g_str_has_suffix(name, suffix);
    g_dir_close(d);
    return n;
}

char *test_new_file(const char *dir, const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);
    GError *error = NULL;
    if (!g_file_set_contents(path, text, -1, &error))
        fail_msg("cannot write %s: %s", path, error->message);
    return path;
}

char *test_new_filef(const char *dir, const char *name, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *text = g_strdup_vprintf(format, args);
    va_end(args);
    char *path = test_new_file(dir, name, text);
    g_free(text);
    return path;
}

void test_wait_for_file_text(const char *path, const char *needle)
{
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    for (;;) {
        char *text = NULL;
        gboolean found = g_file_get_contents(path, &text, NULL, NULL) && strstr(text, needle);
        g_free(text);
        if (found)
            return;
        if (g_get_monotonic_time() > deadline)
            fail_msg("%s never said \"%s\"", path, needle);
        g_usleep(20000); /* polling a condition, with a deadline */
    }
}

void test_assert_contains_all(const char *text, const char *const *needles, gsize n)
{
    for (gsize i = 0; i < n; i++)
        test_assert_contains(text, needles[i]);
}

void test_remove_tree(const char *dir)
{
    const char *argv[] = {"rm", "-rf", dir, NULL};
    g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL,
                 NULL);
}

void test_write_file(const char *dir, const char *relative, const char *text)
{
    char *path = g_build_filename(dir, relative, NULL);
    char *parent = g_path_get_dirname(path);
    g_mkdir_with_parents(parent, 0755);
    GError *error = NULL;
    if (!g_file_set_contents(path, text, -1, &error))
        fail_msg("writing %s: %s", path, error->message);
    g_free(parent);
    g_free(path);
}

void test_rewrite_file(const char *dir, const char *relative, const char *text)
{
    char *path = g_build_filename(dir, relative, NULL);
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        fail_msg("opening %s: %s", path, g_strerror(errno));
    size_t length = strlen(text);
    if (write(fd, text, length) != (ssize_t)length)
        fail_msg("writing %s: %s", path, g_strerror(errno));
    if (close(fd) != 0)
        fail_msg("closing %s: %s", path, g_strerror(errno));
    g_free(path);
}

int test_make_dir(void **state)
{
    char *template = g_strdup_printf("vigil-%s-XXXXXX", program_invocation_short_name);
    char *dir = g_dir_make_tmp(template, NULL);
    g_free(template);
    if (dir == NULL)
        return -1;
    char *real = realpath(dir, NULL);
    g_free(dir);
    if (real == NULL)
        return -1;
    *state = g_strdup(real);
    free(real);
    return 0;
}

int test_remove_dir(void **state)
{
    test_remove_tree(*state);
    g_free(*state);
    *state = NULL;
    return 0;
}

pid_t test_start_detached(const char *dir, const char *program, const char *config,
                          const char *pid_file, const char *log, int *pidfd)
{
    /* The shell sends the detached server's stderr to its log, so that
     * nothing holds the pipes of this run open. */
    const char *argv[] = {
        "/bin/sh", "-c",   "exec \"$0\" --config \"$1\" --pid-file \"$2\" 2>>\"$3\"",
        program,   config, pid_file,
        log,       NULL};
    char **env = test_clean_environment(NULL);
    struct test_run run = test_run_program(dir, argv, env);
    g_strfreev(env);
    char *name = g_path_get_basename(program);
    if (run.status != 0) {
        char *text = NULL;
        g_file_get_contents(log, &text, NULL, NULL);
        fail_msg("%s did not start (status %d): %s%s", name, run.status, run.err,
                 text != NULL ? text : "");
    }
    test_run_clear(&run);
    char *pid_text = NULL;
    assert_true(g_file_get_contents(pid_file, &pid_text, NULL, NULL));
    pid_t pid = (pid_t)g_ascii_strtoll(pid_text, NULL, 10);
    g_free(pid_text);
    if (pid <= 0)
        fail_msg("%s wrote no pid to %s", name, pid_file);
    *pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (*pidfd < 0)
        fail_msg("pidfd_open of %s (pid %d): %s", name, (int)pid, g_strerror(errno));
    g_free(name);
    return pid;
}

char *test_end_detached(const char *program, pid_t pid, int pidfd, int signal, const char *log)
{
    assert_int_equal(kill(pid, signal), 0);
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    if (poll(&p, 1, 60000) != 1)
        fail_msg("%s (pid %d) did not end on signal %d", program, (int)pid, signal);
    close(pidfd);
    char *text = NULL;
    assert_true(g_file_get_contents(log, &text, NULL, NULL));
    return text;
}

gboolean test_caps_drop(struct test_caps *saved, guint32 mask)
{
    memset(saved, 0, sizeof *saved);
    saved->header.version = _LINUX_CAPABILITY_VERSION_3;
    if (syscall(SYS_capget, &saved->header, saved->data) != 0 ||
        (saved->data[0].effective & mask) != mask)
        return FALSE;
    struct __user_cap_data_struct lowered[2];
    memcpy(lowered, saved->data, sizeof lowered);
    lowered[0].effective &= ~mask;
    return syscall(SYS_capset, &saved->header, lowered) == 0;
}

void test_caps_restore(const struct test_caps *saved)
{
    struct test_caps copy = *saved; /* capset takes non-const pointers */
    if (syscall(SYS_capset, &copy.header, copy.data) != 0)
        fail_msg("restoring capabilities: %s", g_strerror(errno));
}

gboolean test_caps_have(guint32 cap)
{
    struct test_caps now;
    memset(&now, 0, sizeof now);
    now.header.version = _LINUX_CAPABILITY_VERSION_3;
    return syscall(SYS_capget, &now.header, now.data) == 0 &&
           (now.data[0].effective & (1u << cap)) != 0;
}

void test_deny_read(const char *root, const char *relative, struct test_caps *saved)
{
    const guint32 read_override = (1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH);
    char *path = g_build_filename(root, relative, NULL);
    if (chmod(path, 0) != 0)
        fail_msg("chmod 0 %s: %s", path, g_strerror(errno));
    if (!test_caps_drop(saved, read_override)) {
        g_free(path);
        test_skip("cannot put down CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH");
    }
    int probe = open(path, O_RDONLY | O_CLOEXEC);
    g_free(path);
    if (probe >= 0) {
        close(probe);
        test_caps_restore(saved);
        test_skip("a file of mode 0 is still readable without the override "
                  "capabilities: nothing to test here");
    }
}

static void keep_log_line(const gchar *domain, GLogLevelFlags level, const gchar *message,
                          gpointer user_data)
{
    (void)domain;
    struct test_log *log = user_data;
    const char *name = (level & G_LOG_LEVEL_WARNING)   ? "warning"
                       : (level & G_LOG_LEVEL_MESSAGE) ? "message"
                       : (level & G_LOG_LEVEL_INFO)    ? "info"
                                                       : "debug";
    g_string_append_printf(log->text, "%s: %s\n", name, message);
    log->count++;
}

void test_log_begin(struct test_log *log, const char *domain, GLogLevelFlags levels)
{
    log->domain = domain;
    log->text = g_string_new(NULL);
    log->count = 0;
    log->handler = g_log_set_handler(domain, levels, keep_log_line, log);
}

char *test_log_end(struct test_log *log)
{
    g_log_remove_handler(log->domain, log->handler);
    return g_string_free(log->text, FALSE);
}

void test_skip(const char *why)
{
    if (g_getenv("CI") != NULL)
        fail_msg("%s; under CI a test never skips", why);
    print_message("skipped: %s\n", why);
    skip();
    /* cmocka's skip() leaves by a longjmp, but is not declared noreturn. */
    /* cppcheck-suppress unreachableCode */
    abort();
}

void test_skip_unless(gboolean condition, const char *why)
{
    if (!condition)
        test_skip(why);
}

int test_skip_program(const char *why)
{
    if (g_getenv("CI") != NULL) {
        fprintf(stderr, "%s; under CI a test never skips\n", why);
        return 1;
    }
    printf("skipped: %s\n", why);
    return 77; /* meson's "skipped" */
}
