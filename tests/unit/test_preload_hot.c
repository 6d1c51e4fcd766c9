/* The preload library's hot-path helpers that replace table lookups with
 * code folded at compile time (instrument/preload.h): they must give what
 * the tables give, for every operation and at every bin's bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "preload.h"
#include "test_main.h"

/* Each operation's layer and class through the folded switch (the op is
 * a constant at each call, as in a wrapper) against vigil_op_table. */
#define CHECK_OP(suffix, id, layer, name, cls)                                                     \
    assert_int_equal(preload_op_layer(id), vigil_op_layer(id));                                    \
    assert_int_equal(preload_op_class(id), vigil_op_class(id));                                    \
    checked++;

static void test_folded_layer_and_class_match_the_table(void **state)
{
    (void)state;
    unsigned checked = 0;
    VIGIL_OPERATIONS(CHECK_OP)
    assert_true(checked > 50);
    /* A run-time op goes to the table, unknown ones to 0. */
    volatile unsigned unknown = VIGIL_OP_MAX_ID + 5;
    assert_int_equal(preload_op_layer(unknown), 0);
    assert_int_equal(preload_op_class(unknown), 0);
}

/* Darshan's bins (DARSHAN_BUCKET_INC): 0-100, 100-1K, 1K-10K, 10K-100K,
 * 100K-1M, 1M-4M, 4M-10M, 10M-100M, 100M-1G, 1G+, each including its upper
 * bound: an access of exactly 1 MiB is in 100K-1M. */
static void test_size_bins_at_their_bounds(void **state)
{
    (void)state;
    static const uint64_t upper[PRELOAD_SIZE_BINS - 1] = {
        100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600, 1073741824};
    assert_int_equal(preload_size_bin(0), 0);
    for (unsigned bin = 0; bin < PRELOAD_SIZE_BINS - 1; bin++) {
        assert_int_equal(preload_size_bin(upper[bin]), bin);
        assert_int_equal(preload_size_bin(upper[bin] + 1), bin + 1);
        if (bin > 0)
            assert_int_equal(preload_size_bin(upper[bin - 1] + 1), bin);
    }
    assert_int_equal(preload_size_bin(UINT64_MAX), PRELOAD_SIZE_BINS - 1);
}

TEST_MAIN(cmocka_unit_test(test_folded_layer_and_class_match_the_table),
          cmocka_unit_test(test_size_bins_at_their_bounds))
