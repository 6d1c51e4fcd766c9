/* A job's energy across its nodes from its processes' figures
 * (report/report_job_energy.c): grouped by host, whatever the ranks' order. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "vigil/local_protocol.h"
#include "vigil/report.h"
#include "test_main.h"

/* The job's energy from its `n` ranks' figures. */
static struct vigil_report_job_energy job_of(const struct vigil_report_process_energy *ranks, int n)
{
    int order[8];
    assert_true(n <= 8);
    struct vigil_report_job_energy j;
    vigil_report_job_energy_from_processes(ranks, n, order, &j);
    return j;
}

static void test_ranks_grouped_by_host(void **state)
{
    (void)state;
    /* Four ranks on two nodes, interleaved; node-b's ranks have their
     * node's whole energy between them. */
    const struct vigil_report_process_energy ranks[] = {
        {.host = "node-b", .energy_j = 2.0, .source = "energy/powercap"},
        {.host = "node-a", .energy_j = 0.5, .source = "energy/powercap"},
        {.host = "node-b",
         .energy_j = 1.5,
         .source = "energy/powercap+energy/estimate",
         .flags = VIGIL_LOCAL_ENERGY_ESTIMATED},
        {.host = "node-a", .energy_j = 0.75, .source = "energy/powercap"},
    };
    struct vigil_report_job_energy j = job_of(ranks, 4);
    assert_int_equal(j.nodes, 2);
    assert_int_equal(j.processes, 4);
    assert_int_equal(j.processes_with_energy, 4);
    assert_float_equal(j.energy_j, 4.75, 1e-12);
    assert_float_equal(j.node_min_j, 1.25, 1e-12);
    assert_string_equal(j.min_host, "node-a");
    assert_float_equal(j.node_max_j, 3.5, 1e-12);
    assert_string_equal(j.max_host, "node-b");
    assert_float_equal(j.node_mean_j, 2.375, 1e-12);
    assert_string_equal(j.sources, "energy/powercap+energy/estimate");
    assert_int_equal(j.flags, VIGIL_LOCAL_ENERGY_ESTIMATED);
}

/* A rank without a figure counts as a process without one; a node none of
 * whose ranks has one is in no min, mean or max. */
static void test_ranks_without_figures(void **state)
{
    (void)state;
    const struct vigil_report_process_energy ranks[] = {
        {.host = "node-a", .energy_j = 1.0, .source = "energy/estimate"},
        {.host = "node-a", .energy_j = NAN, .source = ""},
        {.host = "node-c", .energy_j = NAN, .source = ""},
        {.host = "node-b", .energy_j = 3.0, .source = "energy/estimate"},
    };
    struct vigil_report_job_energy j = job_of(ranks, 4);
    assert_int_equal(j.nodes, 3);
    assert_int_equal(j.processes_with_energy, 2);
    assert_float_equal(j.energy_j, 4.0, 1e-12);
    assert_float_equal(j.node_mean_j, 2.0, 1e-12);
    assert_float_equal(j.node_min_j, 1.0, 1e-12);

    const struct vigil_report_process_energy none[] = {{.host = "x", .energy_j = NAN}};
    j = job_of(none, 1);
    assert_int_equal(j.nodes, 0); /* nothing to show */
}

TEST_MAIN(cmocka_unit_test(test_ranks_grouped_by_host),
          cmocka_unit_test(test_ranks_without_figures))
