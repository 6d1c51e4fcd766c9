/* A file's most common sizes and strides (instrument/common_values.c,
 * built into this test): with more distinct values than slots, no count
 * the report gives is above the truth, and each one flagged exact is the
 * truth; Darshan's rules for what is listed, and in what order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "preload.h"
#include "test_main.h"
#include "vigil/report.h"

#define VALUES 40

/* Value v (1 .. VALUES) is seen truth[v] times, in an interleaved stream:
 * a few common values among many rare ones, more than the slots. */
static void stream(struct preload_common *t, uint64_t truth[VALUES + 1])
{
    memset(truth, 0, (VALUES + 1) * sizeof truth[0]);
    for (int round = 0; round < 50; round++)
        for (int64_t v = 1; v <= VALUES; v++) {
            bool common = v % 10 == 3; /* 3, 13, 23, 33: every round */
            bool sometimes = v % 7 == 0 && round % 3 == 0;
            bool once = round == (int)v % 50 && !common && !sometimes;
            if (common || sometimes || once) {
                if (PRELOAD_LIKELY(t->used > 0 && t->value[0] == v))
                    t->count[0]++;
                else
                    preload_common_note(t, v, 1, 0);
                truth[v]++;
            }
        }
}

static void check_never_above(const struct vigil_report_common *out, int n,
                              const uint64_t truth[VALUES + 1])
{
    for (int i = 0; i < n; i++) {
        assert_true(out[i].value >= 1 && out[i].value <= VALUES);
        assert_true(out[i].count >= 1);
        assert_true(out[i].count <= truth[out[i].value]);
        if (out[i].exact)
            assert_int_equal(out[i].count, truth[out[i].value]);
        if (i > 0)
            assert_true(out[i - 1].count >= out[i].count);
    }
}

static void test_counts_never_above_the_truth(void **state)
{
    (void)state;
    static struct preload_common t;
    uint64_t truth[VALUES + 1];
    stream(&t, truth);
    struct vigil_report_common out[VIGIL_REPORT_COMMON];
    int n = preload_common_top(&t, out);
    assert_int_equal(n, VIGIL_REPORT_COMMON);
    check_never_above(out, n, truth);
    /* Each seen in every round but entering the table with the error of
     * the value it evicted: listed, none of them exact. */
    for (int i = 0; i < n; i++)
        assert_int_equal(out[i].value % 10, 3);
}

/* Merged tables (a thread's into its file's, twice) keep the guarantee. */
static void test_merged_tables_never_above_the_truth(void **state)
{
    (void)state;
    static struct preload_common a, b, into;
    uint64_t truth_a[VALUES + 1], truth_b[VALUES + 1], truth[VALUES + 1];
    stream(&a, truth_a);
    stream(&b, truth_b);
    preload_common_merge(&into, &a);
    preload_common_merge(&into, &b);
    for (int v = 0; v <= VALUES; v++)
        truth[v] = truth_a[v] + truth_b[v];
    struct vigil_report_common out[VIGIL_REPORT_COMMON];
    int n = preload_common_top(&into, out);
    assert_true(n > 0);
    check_never_above(out, n, truth);
}

/* No more values than slots: every count exact. Darshan lists no 0 and no
 * negative value, and orders equal counts by the larger value. */
static void test_few_values_exact_in_darshans_order(void **state)
{
    (void)state;
    static struct preload_common t;
    const int64_t values[] = {0, 0, 0, 0, 0, -4096, -4096, -4096, 100, 4096, 4096, 65536, 100, 7};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        preload_common_note(&t, values[i], 1, 0);
    struct vigil_report_common out[VIGIL_REPORT_COMMON];
    int n = preload_common_top(&t, out);
    const struct vigil_report_common want[] = {
        {4096, 2, true}, {100, 2, true}, {65536, 1, true}, {7, 1, true}};
    assert_int_equal(n, 4);
    for (int i = 0; i < n; i++) {
        assert_int_equal(out[i].value, want[i].value);
        assert_int_equal(out[i].count, want[i].count);
        assert_true(out[i].exact);
    }
}

/* An error past 32 bits lowers the count with it: count - error kept. */
static void test_large_error_keeps_the_lower_bound(void **state)
{
    (void)state;
    static struct preload_common t;
    for (int64_t v = 1; v <= PRELOAD_COMMON_SLOTS; v++)
        preload_common_note(&t, v, UINT64_C(1) << 33, 0);
    preload_common_note(&t, 99, 5, 0); /* evicts a value counted 2^33 times */
    struct vigil_report_common out[VIGIL_REPORT_COMMON];
    int n = preload_common_top(&t, out);
    for (int i = 0; i < n; i++)
        if (out[i].value == 99)
            assert_int_equal(out[i].count, 5);
    uint32_t at = 0;
    while (t.value[at] != 99)
        at++;
    assert_int_equal(t.count[at] - t.error[at], 5);
}

TEST_MAIN(cmocka_unit_test(test_counts_never_above_the_truth),
          cmocka_unit_test(test_merged_tables_never_above_the_truth),
          cmocka_unit_test(test_few_values_exact_in_darshans_order),
          cmocka_unit_test(test_large_error_keeps_the_lower_bound))
