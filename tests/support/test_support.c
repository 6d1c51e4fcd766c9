/* vigil — helpers shared by the test programs. */
#define _GNU_SOURCE /* program_invocation_short_name, realpath */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

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

void test_assert_contains(const char *text, const char *needle)
{
    if (text == NULL || strstr(text, needle) == NULL)
        fail_msg("\"%s\" does not contain \"%s\"", text ? text : "(null)", needle);
}

void test_remove_tree(const char *dir)
{
    const char *argv[] = {"rm", "-rf", dir, NULL};
    g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL,
                 NULL);
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
