/* The preload library's hot-path helpers that replace table lookups with
 * code folded at compile time (instrument/preload.h): they must give what
 * the tables give, for every operation and at every bin's bounds. */
#include <pthread.h>
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

/* Two threads writing one file strictly in turn, each into its own stats
 * (as each thread's pending entry): sequentiality is the file's, so every
 * write but the first is consecutive, with no stride, and the writes never
 * switch to reads. The turn is handed over through an atomic word. */
#define IN_TURN_WRITES 1000
static struct preload_file_shared in_turn_file = {.last_end = {1, 1}};
static struct preload_layer_stats in_turn_stats[2];
static _Atomic int in_turn;

static void *write_in_turn(void *arg)
{
    int self = *(const int *)arg;
    struct preload_layer_stats *l = &in_turn_stats[self];
    l->shared = &in_turn_file;
    for (int i = self; i < IN_TURN_WRITES; i += 2) {
        while (atomic_load(&in_turn) != i)
            ;
        const struct preload_outcome o = {
            .op = VIGIL_OP_POSIX_PWRITE,
            .result = 100,
            .bytes_asked = 100,
            .bytes_moved = 100,
            .offset_bytes = (int64_t)i * 100,
        };
        preload_stats_note(l, PRELOAD_KIND_WRITE, &o, 1, 2);
        atomic_store(&in_turn, i + 1);
    }
    return NULL;
}

static void test_two_threads_in_turn_are_consecutive(void **state)
{
    (void)state;
    static const int ids[2] = {0, 1};
    pthread_t thread[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&thread[i], NULL, write_in_turn, (void *)&ids[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(thread[i], NULL), 0);
    const struct preload_layer_stats *a = &in_turn_stats[0], *b = &in_turn_stats[1];
    assert_int_equal(a->hist[1][0] + b->hist[1][0], IN_TURN_WRITES);
    assert_int_equal(a->consec[1] + b->consec[1], IN_TURN_WRITES - 1);
    assert_int_equal(a->forward[1] + b->forward[1], 0);
    assert_int_equal(a->strides.used + b->strides.used, 0);
    assert_int_equal(atomic_load(&in_turn_file.rw_switches), 0);
    assert_int_equal(atomic_load(&in_turn_file.last_end[1]), IN_TURN_WRITES * 100);
}

/* Reads and writes alternating in pairs on one file from two threads:
 * the switches are the file's (W W R R W W ...: one per pair after the
 * first). */
static void test_switches_are_the_files(void **state)
{
    (void)state;
    static struct preload_file_shared file = {.last_end = {1, 1}};
    static struct preload_layer_stats stats[2];
    for (int i = 0; i < 2; i++)
        stats[i].shared = &file;
    for (int i = 0; i < 40; i++) {
        bool write = (i / 2) % 2 == 0;
        const struct preload_outcome o = {
            .op = write ? VIGIL_OP_POSIX_PWRITE : VIGIL_OP_POSIX_PREAD,
            .bytes_moved = 10,
            .offset_bytes = 0,
        };
        preload_stats_note(&stats[i % 2], write ? PRELOAD_KIND_WRITE : PRELOAD_KIND_READ, &o, 1, 2);
    }
    assert_int_equal(atomic_load(&file.rw_switches), 19);
}

TEST_MAIN(cmocka_unit_test(test_folded_layer_and_class_match_the_table),
          cmocka_unit_test(test_size_bins_at_their_bounds),
          cmocka_unit_test(test_two_threads_in_turn_are_consecutive),
          cmocka_unit_test(test_switches_are_the_files))
