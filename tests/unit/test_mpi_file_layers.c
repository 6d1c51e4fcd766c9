/* One file's layer counters merged across an MPI job's ranks
 * (instrument/mpi_file_layers.c, built into this test): sums, the largest
 * offsets, the earliest and latest times with -1 meaning none, and the most
 * common sizes and strides from each rank's four. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "mpi_file_layers.h"
#include "test_report_figures.h"
#include "test_main.h"

/* `writes` writes of `bytes` in all, each in size bin 2, the last byte
 * written at `max_offset`, taking `seconds`. */
static void wrote(struct vigil_report_file_layer *l, uint64_t writes, uint64_t bytes,
                  int64_t max_offset, double seconds)
{
    l->writes = writes;
    l->written_bytes = bytes;
    l->max_written_offset = max_offset;
    l->write_size_hist[2] = writes;
    l->write_time_s = seconds;
}

static void test_sums_and_extremes(void **state)
{
    (void)state;
    struct vigil_report_file_layer a = test_report_layer_none(), b = test_report_layer_none(),
                                   c = test_report_layer_none();
    a.reads = 2;
    a.read_bytes = 200;
    wrote(&a, 3, 300, 299, 0.5);
    a.first_open_s = 1.5;
    a.last_close_s = 2.5;
    a.first_io_s = 1.75;
    a.last_io_s = 2.25;
    wrote(&b, 1, 4096, 8191, 0.25);
    b.max_read_offset = 99;
    b.first_open_s = 1.0;
    b.last_close_s = 3.0; /* no I/O times: -1 stays out of the earliest */
    c.opens = 1;          /* only opened */
    c.first_open_s = 0.5;
    static struct preload_job_layer m;
    preload_job_layer_add(&m, &a, true);
    preload_job_layer_add(&m, &b, false);
    preload_job_layer_add(&m, &c, false);
    preload_job_layer_finish(&m);
    const struct vigil_report_file_layer *l = &m.layer;
    assert_int_equal(l->reads, 2);
    assert_int_equal(l->writes, 4);
    assert_int_equal(l->opens, 1);
    assert_int_equal(l->read_bytes, 200);
    assert_int_equal(l->written_bytes, 4396);
    assert_int_equal(l->max_written_offset, 8191);
    assert_int_equal(l->max_read_offset, 99);
    assert_int_equal(l->write_size_hist[2], 4);
    assert_true(l->write_time_s == 0.75);
    assert_true(l->first_open_s == 0.5);
    assert_true(l->last_close_s == 3.0);
    assert_true(l->first_io_s == 1.75);
    assert_true(l->last_io_s == 2.25);
}

static void test_nothing_stays_none(void **state)
{
    (void)state;
    struct vigil_report_file_layer a = test_report_layer_none(), b = test_report_layer_none();
    static struct preload_job_layer m;
    preload_job_layer_add(&m, &a, true);
    preload_job_layer_add(&m, &b, false);
    preload_job_layer_finish(&m);
    assert_int_equal(m.layer.max_read_offset, 0);
    assert_int_equal(m.layer.max_written_offset, 0);
    assert_int_equal(m.layer.mode, -1);
    assert_true(m.layer.first_open_s == -1 && m.layer.first_io_s == -1);
    assert_true(m.layer.last_close_s == -1 && m.layer.last_io_s == -1);
    assert_int_equal(m.layer.common_size_count, 0);
    assert_int_equal(m.layer.common_stride_count, 0);
}

static void add_common(struct vigil_report_file_layer *l, int64_t value, uint64_t count)
{
    l->common_sizes[l->common_size_count++] =
        (struct vigil_report_common){.value = value, .count = count};
}

/* Counts of a size add up across ranks; most common first, the larger
 * value first on a tie (Darshan's order); four kept. */
static void test_common_sizes(void **state)
{
    (void)state;
    struct vigil_report_file_layer a = test_report_layer_none(), b = test_report_layer_none();
    add_common(&a, 4096, 10);
    add_common(&a, 100, 5);
    add_common(&a, 7, 3);
    add_common(&a, 9, 1);
    add_common(&b, 100, 8);
    add_common(&b, 65536, 3);
    add_common(&b, 1, 2);
    b.common_strides[0] = (struct vigil_report_common){.value = -4096, .count = 6};
    b.common_stride_count = 1;
    static struct preload_job_layer m;
    preload_job_layer_add(&m, &a, true);
    preload_job_layer_add(&m, &b, false);
    preload_job_layer_finish(&m);
    const struct vigil_report_file_layer *l = &m.layer;
    assert_int_equal(l->common_size_count, 4);
    const struct vigil_report_common want[] = {
        {100, 13, false}, {4096, 10, false}, {65536, 3, false}, {7, 3, false}};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(l->common_sizes[i].value, want[i].value);
        assert_int_equal(l->common_sizes[i].count, want[i].count);
    }
    assert_int_equal(l->common_stride_count, 1);
    assert_int_equal(l->common_strides[0].value, -4096);
    assert_int_equal(l->common_strides[0].count, 6);
}

/* Past the candidates the merge keeps, a value less common than all of
 * them is left out, and a more common one takes the least common's place. */
static void test_candidates_are_bounded(void **state)
{
    (void)state;
    static struct preload_job_layer m;
    struct vigil_report_file_layer l = test_report_layer_none();
    preload_job_layer_add(&m, &l, true);
    for (int i = 0; i < PRELOAD_COMMON_CANDIDATES + 4; i++) {
        l = test_report_layer_none();
        add_common(&l, 1000 + i, (uint64_t)(i == PRELOAD_COMMON_CANDIDATES + 3 ? 50 : 2));
        preload_job_layer_add(&m, &l, false);
    }
    preload_job_layer_finish(&m);
    assert_int_equal(m.layer.common_sizes[0].value, 1000 + PRELOAD_COMMON_CANDIDATES + 3);
    assert_int_equal(m.layer.common_sizes[0].count, 50);
    assert_int_equal(m.layer.common_sizes[1].count, 2);
}

/* A merged count is exact only when every rank gave its exact count. */
static void test_exact_only_from_every_rank(void **state)
{
    (void)state;
    struct vigil_report_file_layer a = test_report_layer_none(), b = test_report_layer_none();
    a.common_sizes[0] = (struct vigil_report_common){.value = 4096, .count = 5, .exact = true};
    a.common_sizes[1] = (struct vigil_report_common){.value = 100, .count = 4, .exact = true};
    a.common_size_count = 2;
    b.common_sizes[0] = (struct vigil_report_common){.value = 4096, .count = 6, .exact = true};
    b.common_sizes[1] = (struct vigil_report_common){.value = 7, .count = 2, .exact = false};
    b.common_size_count = 2;
    static struct preload_job_layer m;
    preload_job_layer_add(&m, &a, true);
    preload_job_layer_add(&m, &b, false);
    preload_job_layer_finish(&m);
    const struct vigil_report_common *c = m.layer.common_sizes;
    assert_int_equal(m.layer.common_size_count, 3);
    assert_true(c[0].value == 4096 && c[0].count == 11 && c[0].exact);
    assert_true(c[1].value == 100 && c[1].count == 4 && !c[1].exact); /* b's not known */
    assert_true(c[2].value == 7 && c[2].count == 2 && !c[2].exact);
}

/* Issue 33's counters across ranks: sums; the slowest call with its size;
 * the block size ranks agree on, else the smallest known; rank 0's mode,
 * or the first rank's that knows it. */
static void test_rare_counters(void **state)
{
    (void)state;
    struct vigil_report_file_layer a = test_report_layer_none(), b = test_report_layer_none(),
                                   c = test_report_layer_none();
    a.rw_switches = 2;
    a.fdatasyncs = 1;
    a.file_not_aligned = 3;
    a.file_alignment_bytes = 1048576;
    a.mem_alignment_bytes = 8;
    a.max_write_time_s = 0.5;
    a.max_write_time_size = 100;
    b.rw_switches = 1;
    b.dups = 2;
    b.filenos = 1;
    b.mode = 0644;
    b.file_alignment_bytes = 4096;
    b.max_write_time_s = 0.75;
    b.max_write_time_size = 4096;
    b.max_read_time_s = 0.25;
    b.max_read_time_size = 10;
    c.mode = 0600;
    static struct preload_job_layer m;
    preload_job_layer_add(&m, &a, true);
    preload_job_layer_add(&m, &b, false);
    preload_job_layer_add(&m, &c, false);
    preload_job_layer_finish(&m);
    const struct vigil_report_file_layer *l = &m.layer;
    assert_int_equal(l->rw_switches, 3);
    assert_int_equal(l->fdatasyncs, 1);
    assert_int_equal(l->dups, 2);
    assert_int_equal(l->filenos, 1);
    assert_int_equal(l->file_not_aligned, 3);
    assert_int_equal(l->file_alignment_bytes, 4096);
    assert_int_equal(l->mem_alignment_bytes, 8);
    assert_int_equal(l->mode, 0644);
    assert_true(l->max_write_time_s == 0.75 && l->max_write_time_size == 4096);
    assert_true(l->max_read_time_s == 0.25 && l->max_read_time_size == 10);
}

TEST_MAIN(cmocka_unit_test(test_sums_and_extremes), cmocka_unit_test(test_nothing_stays_none),
          cmocka_unit_test(test_common_sizes), cmocka_unit_test(test_candidates_are_bounded),
          cmocka_unit_test(test_exact_only_from_every_rank), cmocka_unit_test(test_rare_counters))
