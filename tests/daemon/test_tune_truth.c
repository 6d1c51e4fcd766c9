/* vigil tune --truth's scoring (cli/tune_truth.c) on cycles made up here:
 * which anomalous workload cycles count as caught, which flagged cycles as
 * false flags, and a truth file read back and refused when wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_support.h"
#include "tune_truth.h"
#include "test_main.h"

#define S 1000000000ull

/* Replayed cycles k = 1..n, [k s, k+1 s), flagged where `flags` has a 1. */
static GArray *replayed(const char *flags)
{
    GArray *a = g_array_new(FALSE, FALSE, sizeof(struct tune_cycle));
    for (guint k = 0; flags[k] != '\0'; k++) {
        struct tune_cycle c = {.cycle = k + 1,
                               .start_ns = (k + 1) * S,
                               .end_ns = (k + 2) * S,
                               .flagged = flags[k] == '1'};
        g_array_append_val(a, c);
    }
    return a;
}

static void test_scoring(void **state)
{
    (void)state;
    /* Workload cycles 0.5 s later than vigild's, from 1.5 s to 11.5 s;
     * anomalies in the 3rd (3.5-4.5 s) and 7th (7.5-8.5 s). */
    GArray *truth = g_array_new(FALSE, FALSE, sizeof(struct tune_truth_cycle));
    for (guint i = 0; i < 10; i++) {
        struct tune_truth_cycle t = {.start_ns = (i + 1) * S + S / 2,
                                     .end_ns = (i + 2) * S + S / 2,
                                     .anomalous = i == 2 || i == 6};
        g_array_append_val(truth, t);
    }
    /* vigild cycles 1..12: the first anomaly overlaps cycles 3 and 4
     * (flagged: 4), the second 7 and 8, and cycle 9 right after them is
     * flagged; cycle 1 is a false flag. */
    GArray *cycles = replayed("100100001000");
    struct tune_truth_score score;
    tune_truth_score(truth, cycles, 1, 1, &score);
    assert_int_equal(score.anomalous, 2);
    assert_int_equal(score.caught, 2);
    /* Tolerated: 2..6 around the first, 6..10 around the second; in the
     * span (cycles 1..11) the clean ones are 1 and 11, of which 1 flagged. */
    assert_int_equal(score.clean_cycles, 2);
    assert_int_equal(score.false_flags, 1);
    g_array_free(cycles, TRUE);

    /* Nothing flagged near the second anomaly: one caught of two; cycle
     * 12 starts after the truth's last cycle ends, so it is no false flag. */
    cycles = replayed("000100000001");
    tune_truth_score(truth, cycles, 1, 1, &score);
    assert_int_equal(score.caught, 1);
    assert_int_equal(score.false_flags, 0);
    g_array_free(cycles, TRUE);
    g_array_free(truth, TRUE);
}

static void test_truth_file(void **state)
{
    char *path = g_build_filename((const char *)*state, "truth.jsonl", NULL);
    assert_true(g_file_set_contents(
        path,
        "{\"cycle\": 0, \"start_ns\": 10, \"end_ns\": 20, \"anomaly\": null, \"calls\": 3}\n"
        "{\"cycle\": 1, \"start_ns\": 20, \"end_ns\": 30, \"anomaly\": \"slow-io\"}\n",
        -1, NULL));
    GError *error = NULL;
    GArray *t = tune_truth_read(path, &error);
    assert_non_null(t);
    assert_int_equal(t->len, 2);
    assert_false(g_array_index(t, struct tune_truth_cycle, 0).anomalous);
    assert_true(g_array_index(t, struct tune_truth_cycle, 1).anomalous);
    assert_int_equal(g_array_index(t, struct tune_truth_cycle, 1).end_ns, 30);
    g_array_free(t, TRUE);

    /* An end before its start, and an anomaly that is a number. */
    const char *bad[] = {
        "{\"start_ns\": 20, \"end_ns\": 10, \"anomaly\": null}\n",
        "{\"start_ns\": 10, \"end_ns\": 20, \"anomaly\": 3}\n",
        "not json\n",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        assert_true(g_file_set_contents(path, bad[i], -1, NULL));
        assert_null(tune_truth_read(path, &error));
        test_assert_contains(error->message, "truth.jsonl: line 1: ");
        g_clear_error(&error);
    }
    assert_true(g_file_set_contents(path, "\n", -1, NULL));
    assert_null(tune_truth_read(path, &error));
    test_assert_contains(error->message, "no truth lines");
    g_clear_error(&error);
    g_free(path);
}

TEST_MAIN(cmocka_unit_test(test_scoring),
          cmocka_unit_test_setup_teardown(test_truth_file, test_make_dir, test_remove_dir))
