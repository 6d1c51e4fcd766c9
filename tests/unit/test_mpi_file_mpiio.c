/* One file's MPI-IO record merged across an MPI job's ranks
 * (instrument/mpi_file_mpiio.c, built into this test): sums, the slowest
 * calls with their sizes, the mode of the first rank that knows it, and the
 * common sizes as lower bounds that say when they are exact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "mpi_file_mpiio.h"
#include "test_main.h"

static struct vigil_report_file_mpiio record(int64_t mode)
{
    return (struct vigil_report_file_mpiio){.mode = mode};
}

static void add_size(struct vigil_report_file_mpiio *r, int64_t size, uint64_t count)
{
    r->common_sizes[r->common_size_count++] =
        (struct vigil_report_common){.value = size, .count = count, .exact = true};
}

static void test_sums_and_slowest(void **state)
{
    (void)state;
    struct vigil_report_file_mpiio a = record(-1), b = record(9), c = record(5);
    a.coll_opens = b.coll_opens = c.coll_opens = 1;
    a.indep_opens = 2;
    a.hints = 3;
    b.views = 2;
    c.syncs = 4;
    a.rw_switches = 1;
    c.rw_switches = 2;
    a.coll_writes = 7;
    a.write_size_hist[1] = 3;
    b.write_size_hist[1] = 4;
    c.read_size_hist[9] = 1;
    a.max_write_time_s = 0.5;
    a.max_write_time_size = 100;
    b.max_write_time_s = 0.75; /* the slowest: its size goes with it */
    b.max_write_time_size = 4096;
    c.max_write_time_s = 0.25;
    c.max_write_time_size = 1;
    c.max_read_time_s = 0.125;
    c.max_read_time_size = 1 << 20;
    static struct preload_job_mpiio m;
    preload_job_mpiio_add(&m, &a, true);
    preload_job_mpiio_add(&m, &b, false);
    preload_job_mpiio_add(&m, &c, false);
    preload_job_mpiio_finish(&m);
    const struct vigil_report_file_mpiio *r = &m.mpiio;
    assert_int_equal(r->coll_opens, 3);
    assert_int_equal(r->indep_opens, 2);
    assert_int_equal(r->hints, 3);
    assert_int_equal(r->views, 2);
    assert_int_equal(r->syncs, 4);
    assert_int_equal(r->rw_switches, 3);
    assert_int_equal(r->coll_writes, 7);
    assert_int_equal(r->write_size_hist[1], 7);
    assert_int_equal(r->read_size_hist[9], 1);
    assert_int_equal(r->mode, 9); /* rank 0 did not know it: rank 1's */
    assert_true(r->max_write_time_s == 0.75);
    assert_int_equal(r->max_write_time_size, 4096);
    assert_true(r->max_read_time_s == 0.125);
    assert_int_equal(r->max_read_time_size, 1 << 20);
    assert_int_equal(r->common_size_count, 0);

    /* Rank 0's mode when it knows one, whatever the others say. */
    struct vigil_report_file_mpiio first = record(37);
    preload_job_mpiio_add(&m, &first, true);
    preload_job_mpiio_add(&m, &b, false);
    preload_job_mpiio_finish(&m);
    assert_int_equal(m.mpiio.mode, 37);
}

/* A size a rank does not list is known absent only when that rank listed
 * every size it saw (fewer than four, all exact). */
static void test_common_sizes_exact_when_known(void **state)
{
    (void)state;
    struct vigil_report_file_mpiio a = record(0), b = record(0), c = record(0), d = record(0);
    add_size(&a, 4096, 3); /* complete */
    add_size(&a, 100, 2);
    add_size(&b, 4096, 5); /* four: there may be more */
    add_size(&b, 1024, 4);
    add_size(&b, 100, 1);
    add_size(&b, 7, 1);
    add_size(&c, 4096, 1); /* complete */
    add_size(&d, 4096, 1); /* four, without 1024 */
    add_size(&d, 100, 1);
    add_size(&d, 9, 1);
    add_size(&d, 8, 1);
    static struct preload_job_mpiio m;
    preload_job_mpiio_add(&m, &a, true);
    preload_job_mpiio_add(&m, &b, false);
    preload_job_mpiio_add(&m, &c, false);
    preload_job_mpiio_add(&m, &d, false);
    preload_job_mpiio_finish(&m);
    const struct vigil_report_common want[] = {
        {4096, 10, true}, /* every rank's part known */
        {1024, 4, false}, /* rank 3 may have had some */
        {100, 4, true},   /* equal counts: the larger size first, as Darshan */
        {9, 1, false},    /* rank 1 may have had some */
    };
    assert_int_equal(m.mpiio.common_size_count, 4);
    for (int i = 0; i < 4; i++) {
        const struct vigil_report_common *got = &m.mpiio.common_sizes[i];
        assert_int_equal(got->value, want[i].value);
        assert_int_equal(got->count, want[i].count);
        assert_int_equal(got->exact, want[i].exact);
    }
}

/* More sizes than candidates: an evicted size that comes back has lost its
 * earlier count, so it is a lower bound and not exact. */
static void test_evicted_size_is_a_lower_bound(void **state)
{
    (void)state;
    static struct preload_job_mpiio m;
    struct vigil_report_file_mpiio r = record(0);
    add_size(&r, 1, 2);
    preload_job_mpiio_add(&m, &r, true);
    for (int size = 2; size <= PRELOAD_MPIIO_CANDIDATES; size++) {
        r = record(0);
        add_size(&r, size, 2);
        preload_job_mpiio_add(&m, &r, false);
    }
    r = record(0);
    add_size(&r, 1000, 3); /* evicts size 1, the first of the least common */
    preload_job_mpiio_add(&m, &r, false);
    r = record(0);
    add_size(&r, 1, 3); /* back: 5 in truth */
    preload_job_mpiio_add(&m, &r, false);
    preload_job_mpiio_finish(&m);
    const struct vigil_report_common *top = m.mpiio.common_sizes;
    assert_int_equal(m.mpiio.common_size_count, 4);
    assert_int_equal(top[0].value, 1000);
    assert_int_equal(top[0].count, 3);
    assert_int_equal(top[1].value, 1);
    assert_true(top[1].count <= 5);
    assert_false(top[1].exact);
    /* Sizes every rank's part of which is known stay exact. */
    assert_int_equal(top[2].count, 2);
    assert_true(top[2].exact);
}

TEST_MAIN(cmocka_unit_test(test_sums_and_slowest),
          cmocka_unit_test(test_common_sizes_exact_when_known),
          cmocka_unit_test(test_evicted_size_is_a_lower_bound))
