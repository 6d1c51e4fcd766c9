/* vigil — helpers shared by the test programs: running a program and
 * capturing what it says, giving it a clean environment, removing a
 * folder, and assertions on text. Include after <cmocka.h>. */
#ifndef VIGIL_TEST_SUPPORT_H
#define VIGIL_TEST_SUPPORT_H

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

void test_assert_contains(const char *text, const char *needle);
void test_remove_tree(const char *dir);

#endif
