/* Integration tests of code regions: programs annotated with vigil's API
 * (regions.c) or with likwid's markers (the same source built with
 * -DUSE_LIKWID) run under libvigil-preload.so, and each region's figures
 * in the JSON report are checked against what the program did and what it
 * measured itself; the same programs run without vigil and print the same;
 * the region stack's hard cases (regions_edges.c) give the counts they
 * must. Times are compared, never bounded: a region as vigil sees it
 * begins before and ends after the interval the program measures inside
 * it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "test_report.h"
#include "test_support.h"
#include "test_main.h"

#define BLOCKS      16
#define BLOCK_BYTES 4096
#define IO_CALLS    (2 + 2 * BLOCKS)
/* The report rounds seconds to 6 decimals: half a microsecond either way. */
#define ROUNDING_S 0.5e-6

static char *program(const char *name)
{
    return g_build_filename(test_env_or_fail("VIGIL_TEST_PROGRAMS"), name, NULL);
}

/* Runs `name` in `dir`, under the library when `preload`, its JSON report
 * into DIR/report.json; standalone (no vigild). */
static struct test_run run(const char *dir, bool preload, const char *name, const char *arg)
{
    char *path = program(name);
    char *report = g_strdup_printf("VIGIL_REPORT=%s/report.json", dir);
    const char *vars[] = {report, "VIGIL_REPORT_FORMAT=json", "VIGIL_SOCKET=off", NULL};
    char **env = test_clean_environment(vars);
    if (preload)
        env = g_environ_setenv(env, "LD_PRELOAD", test_env_or_fail("VIGIL_PRELOAD_LIB"), TRUE);
    const char *argv[] = {path, dir, arg, NULL};
    struct test_run r = test_run_program(dir, argv, env);
    g_strfreev(env);
    g_free(report);
    g_free(path);
    return r;
}

static gint64 count(JsonObject *o, const char *member)
{
    if (!json_object_has_member(o, member))
        fail_msg("region %s has no %s", json_object_get_string_member(o, "name"), member);
    return json_object_get_int_member(o, member);
}

static double seconds(JsonObject *o, const char *member)
{
    return json_object_get_double_member(o, member);
}

/* What the program measured inside a region: "time NAME WALL_NS CPU_NS". */
static void measured(const char *err, const char *name, double *wall_s, double *cpu_s)
{
    char *key = g_strdup_printf("time %s ", name);
    const char *at = strstr(err, key);
    if (at == NULL)
        fail_msg("the program did not print its time in %s:\n%s", name, err);
    unsigned long long wall, cpu;
    assert_int_equal(sscanf(at + strlen(key), "%llu %llu", &wall, &cpu), 2);
    *wall_s = (double)wall / 1e9;
    *cpu_s = (double)cpu / 1e9;
    g_free(key);
}

/* The regions of regions.c's run, whichever way it was annotated. */
static void check_program_regions(const char *dir, const struct test_run *r)
{
    char *path = g_build_filename(dir, "report.json", NULL);
    struct test_report rep = test_report_load(path);
    JsonObject *main_region = test_report_region(&rep, "main"),
               *io = test_report_region(&rep, "io"), *compute = test_report_region(&rep, "compute");

    /* I/O: all of it in "io", and in "main" which holds it. */
    assert_int_equal(count(io, "entered"), 1);
    assert_int_equal(count(io, "calls"), IO_CALLS);
    assert_int_equal(count(io, "bytes_written"), BLOCKS * BLOCK_BYTES);
    assert_int_equal(count(io, "bytes_read"), BLOCKS * BLOCK_BYTES);
    assert_int_equal(count(compute, "calls"), 0);
    assert_int_equal(count(compute, "bytes_written"), 0);
    assert_int_equal(count(compute, "bytes_read"), 0);
    assert_int_equal(count(main_region, "calls"), IO_CALLS);
    assert_int_equal(count(main_region, "bytes_written"), BLOCKS * BLOCK_BYTES);
    assert_int_equal(count(main_region, "bytes_read"), BLOCKS * BLOCK_BYTES);

    /* Time: each region covers what the program measured inside it, and
     * "main" covers both of its regions. */
    const char *names[] = {"io", "compute", "main"};
    for (size_t i = 0; i < 3; i++) {
        double wall_s, cpu_s;
        measured(r->err, names[i], &wall_s, &cpu_s);
        JsonObject *o = test_report_region(&rep, names[i]);
        if (seconds(o, "wall_seconds") + ROUNDING_S < wall_s ||
            seconds(o, "cpu_seconds") + ROUNDING_S < cpu_s)
            fail_msg("region %s: %.6f s wall, %.6f s CPU in the report; the program measured "
                     "%.9f and %.9f inside it",
                     names[i], seconds(o, "wall_seconds"), seconds(o, "cpu_seconds"), wall_s,
                     cpu_s);
    }
    assert_true(seconds(main_region, "wall_seconds") + 2 * ROUNDING_S >=
                seconds(io, "wall_seconds") + seconds(compute, "wall_seconds"));

    /* Standalone: no energy, and each entry says so. */
    assert_true(json_object_get_null_member(compute, "energy_joule"));
    assert_int_equal(count(compute, "energy_missing"), 1);
    assert_int_equal(test_report_int(&rep, "region_notes.unmatched_ends"), 0);
    test_report_free(&rep);
    g_free(path);
}

static void check_same_output(const char *dir, const char *name)
{
    struct test_run with = run(dir, true, name, "1000000");
    test_assert_status(&with, 0, name);
    check_program_regions(dir, &with);
    struct test_run without = run(dir, false, name, "1000000");
    test_assert_status(&without, 0, name);
    assert_string_equal(with.out, without.out);
    test_assert_contains(without.out, "io moved 131072 bytes in 34 calls");
    /* Without vigil there is no report, and the regions cost nothing. */
    assert_null(strstr(without.err, "vigil"));
    test_run_clear(&with);
    test_run_clear(&without);
}

static void test_vigil_regions(void **state)
{
    check_same_output(*state, "regions");
}

static void test_likwid_markers(void **state)
{
    test_skip_unless(g_file_test(program("regions-likwid"), G_FILE_TEST_EXISTS),
                     "regions-likwid is built only where liblikwid is");
    check_same_output(*state, "regions-likwid");
}

/* Fortran's module: a name in a longer CHARACTER variable loses its
 * trailing blanks; the line written ("0123456789" and a newline) is in
 * both regions. */
static void test_fortran_module(void **state)
{
    const char *dir = *state;
    test_skip_unless(g_file_test(program("regions-fortran"), G_FILE_TEST_EXISTS),
                     "regions-fortran is built only where gfortran is");
    struct test_run r = run(dir, true, "regions-fortran", NULL);
    test_assert_out(&r, 0, "regions-fortran", "fortran done", NULL);
    char *path = g_build_filename(dir, "report.json", NULL);
    struct test_report rep = test_report_load(path);
    JsonObject *solver = test_report_region(&rep, "solver"),
               *padded = test_report_region(&rep, "padded");
    assert_int_equal(count(solver, "bytes_written"), 11);
    assert_int_equal(count(padded, "bytes_written"), 11);
    assert_true(count(padded, "calls") > 0);
    assert_int_equal(count(solver, "calls"), count(padded, "calls"));
    assert_int_equal(json_array_get_length(json_node_get_array(test_report_node(&rep, "regions"))),
                     2);
    test_report_free(&rep);
    g_free(path);
    test_run_clear(&r);
}

static void test_region_stack_edges(void **state)
{
    const char *dir = *state;
    struct test_run r = run(dir, true, "regions-edges", NULL);
    test_assert_status(&r, 0, "regions-edges");
    char *path = g_build_filename(dir, "report.json", NULL);
    struct test_report rep = test_report_load(path);
    enum { THREADS = 8, ROUNDS = 1000, NAMES = 70, DEPTH = 40, DEPTH_FOLLOWED = 32 };
    JsonObject *outer = test_report_region(&rep, "outer"),
               *inner = test_report_region(&rep, "inner");
    /* The recursion adds no entry; every thread's rounds are there. */
    assert_int_equal(count(outer, "entered"), THREADS * (ROUNDS + 1));
    assert_int_equal(count(inner, "entered"), THREADS * ROUNDS);
    assert_int_equal(count(inner, "calls"), THREADS * ROUNDS);
    assert_int_equal(count(inner, "bytes_written"), THREADS * ROUNDS);
    assert_int_equal(count(outer, "bytes_written"), THREADS * ROUNDS);
    assert_int_equal(count(test_report_region(&rep, "left-open"), "entered"), THREADS);
    assert_int_equal(count(test_report_region(&rep, "deep"), "entered"), 1);
    assert_int_equal(count(test_report_region(&rep, "open-at-exit"), "entered"), 0);
    assert_int_equal(count(test_report_region(&rep, "open-at-exit"), "open"), 1);
    assert_int_equal(count(outer, "open"), 0);
    assert_int_equal(test_report_int(&rep, "region_notes.unmatched_ends"), THREADS);
    assert_int_equal(test_report_int(&rep, "region_notes.closed_by_outer"), THREADS);
    assert_int_equal(test_report_int(&rep, "region_notes.too_deep"), DEPTH - DEPTH_FOLLOWED);
    /* outer, inner, left-open, deep, open-at-exit, then names up to 64. */
    assert_int_equal(test_report_int(&rep, "region_notes.names_dropped"), NAMES - (64 - 5));
    assert_int_equal(test_report_int(&rep, "region_notes.dropped_calls"), 0);
    assert_int_equal(json_array_get_length(json_node_get_array(test_report_node(&rep, "regions"))),
                     64);
    test_report_free(&rep);
    g_free(path);
    test_run_clear(&r);
}

TEST_MAIN(cmocka_unit_test_setup_teardown(test_vigil_regions, test_make_dir, test_remove_dir),
          cmocka_unit_test_setup_teardown(test_likwid_markers, test_make_dir, test_remove_dir),
          cmocka_unit_test_setup_teardown(test_fortran_module, test_make_dir, test_remove_dir),
          cmocka_unit_test_setup_teardown(test_region_stack_edges, test_make_dir, test_remove_dir))
