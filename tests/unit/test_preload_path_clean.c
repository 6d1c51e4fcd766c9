/* One name per file (instrument/path_clean.c): "." and empty components
 * go, ".." goes only where it certainly names the lexical parent (root,
 * or a component of the physical prefix), and nothing else changes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "preload.h"
#include "test_main.h"

/* `physical` is how many leading bytes of `in` are physical. */
static void check(const char *in, size_t physical, const char *want)
{
    char path[256];
    size_t length = strlen(in);
    assert_true(length < sizeof path);
    memcpy(path, in, length + 1);
    size_t cleaned = preload_path_clean(path, length, physical);
    if (strcmp(path, want) != 0 || cleaned != strlen(want))
        fail_msg("\"%s\" (physical %zu) cleaned to \"%s\" (length %zu), not \"%s\"", in, physical,
                 path, cleaned, want);
}

/* A path, how many of its leading bytes are physical, and its clean form. */
struct path_case {
    const char *in;
    size_t physical;
    const char *want;
};

static const struct path_case cases[] = {
    /* "." and empty components go. */
    {"/tmp/run/./in.bin", 8, "/tmp/run/in.bin"},
    {"/tmp/run/.", 8, "/tmp/run"},
    {"/tmp//run///out/", 0, "/tmp/run/out"},
    {"//x", 0, "/x"},
    {"/./././", 0, "/"},
    {"/", 0, "/"},
    {"/.hidden/..x/...", 0, "/.hidden/..x/..."},
    {"/a/b", 0, "/a/b"}, /* already clean: the same bytes */

    /* ".." of the physical prefix: the working directory /home/u/run (11
     * bytes) is physical. */
    {"/home/u/run/../data/in", 11, "/home/u/data/in"},
    {"/home/u/run/../../../../etc/x", 11, "/etc/x"},
    {"/home/u/run/./../x", 11, "/home/u/x"},
    /* Root's parent is root, whoever named it. */
    {"/../x", 0, "/x"},
    {"/a/../../x", 0, "/a/../../x"},

    /* ".." after a named component stays: "link" may be a symbolic link,
     * link/.. need not be /home/u/run. */
    {"/home/u/run/link/../x", 11, "/home/u/run/link/../x"},
    {"/home/u/run/link/./../x", 11, "/home/u/run/link/../x"},
    /* Nor can a later ".." undo a kept one, or reach the prefix past it. */
    {"/home/u/run/a/../../x", 11, "/home/u/run/a/../../x"},
    /* An absolute path from the program: nothing is known physical. */
    {"/srv/data/../x", 0, "/srv/data/../x"},
    /* A component that only starts in the prefix is not physical. */
    {"/home/u/runner/../x", 11, "/home/u/runner/../x"},

    /* Names that are not paths are left alone. */
    {"<stdout>", 0, "<stdout>"},
    {"", 0, ""},
};

static void test_paths_are_cleaned(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(cases[i].in, cases[i].physical, cases[i].want);
}

TEST_MAIN(cmocka_unit_test(test_paths_are_cleaned))
