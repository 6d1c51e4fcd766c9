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

static void test_dots_and_slashes_go(void **state)
{
    (void)state;
    check("/tmp/run/./in.bin", 8, "/tmp/run/in.bin");
    check("/tmp/run/.", 8, "/tmp/run");
    check("/tmp//run///out/", 0, "/tmp/run/out");
    check("//x", 0, "/x");
    check("/./././", 0, "/");
    check("/", 0, "/");
    check("/.hidden/..x/...", 0, "/.hidden/..x/...");
    check("/a/b", 0, "/a/b"); /* already clean: the same bytes */
}

static void test_dot_dot_of_the_physical_prefix(void **state)
{
    (void)state;
    /* The working directory /home/u/run (11 bytes) is physical. */
    check("/home/u/run/../data/in", 11, "/home/u/data/in");
    check("/home/u/run/../../../../etc/x", 11, "/etc/x");
    check("/home/u/run/./../x", 11, "/home/u/x");
    /* Root's parent is root, whoever named it. */
    check("/../x", 0, "/x");
    check("/a/../../x", 0, "/a/../../x");
}

static void test_dot_dot_after_a_named_component_stays(void **state)
{
    (void)state;
    /* "link" may be a symbolic link: link/.. need not be /home/u/run. */
    check("/home/u/run/link/../x", 11, "/home/u/run/link/../x");
    check("/home/u/run/link/./../x", 11, "/home/u/run/link/../x");
    /* Nor can a later ".." undo a kept one, or reach the prefix past it. */
    check("/home/u/run/a/../../x", 11, "/home/u/run/a/../../x");
    /* An absolute path from the program: nothing is known physical. */
    check("/srv/data/../x", 0, "/srv/data/../x");
    /* A component that only starts in the prefix is not physical. */
    check("/home/u/runner/../x", 11, "/home/u/runner/../x");
}

static void test_names_that_are_not_paths_are_left_alone(void **state)
{
    (void)state;
    check("<stdout>", 0, "<stdout>");
    check("", 0, "");
}

TEST_MAIN(cmocka_unit_test(test_dots_and_slashes_go),
          cmocka_unit_test(test_dot_dot_of_the_physical_prefix),
          cmocka_unit_test(test_dot_dot_after_a_named_component_stays),
          cmocka_unit_test(test_names_that_are_not_paths_are_left_alone))
