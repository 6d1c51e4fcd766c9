/* vigild's per-process energy: the sharing rule, and the shares two
 * processes get over ticks of fixture energy and CPU times. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "energy_share.h"
#include "tick_samples.h"
#include "vigil/local_protocol.h"
#include "test_main.h"

static void test_split_by_cpu_share(void **state)
{
    (void)state;
    double cpu_s[] = {0.05, 0.15};
    double share_j[2];
    /* 10 J over 0.2 s of busy CPU: a quarter and three quarters. */
    vigild_energy_split(10.0, 0.2, cpu_s, 2, share_j);
    assert_float_equal(share_j[0], 2.5, 1e-12);
    assert_float_equal(share_j[1], 7.5, 1e-12);
}

static void test_split_leaves_the_rest_to_other_processes(void **state)
{
    (void)state;
    double cpu_s[] = {0.1};
    double share_j[1];
    vigild_energy_split(8.0, 0.4, cpu_s, 1, share_j);
    assert_float_equal(share_j[0], 2.0, 1e-12);
}

static void test_split_never_gives_more_than_the_node_used(void **state)
{
    (void)state;
    /* Process samples and the node's are not taken at one instant: their
     * CPU times can add up to more than the node's. */
    double cpu_s[] = {0.3, 0.1, -0.01};
    double share_j[3];
    vigild_energy_split(12.0, 0.2, cpu_s, 3, share_j);
    assert_float_equal(share_j[0] + share_j[1] + share_j[2], 12.0, 1e-9);
    assert_float_equal(share_j[0], 12.0 * 1 / 1.5, 1e-9); /* capped at 1, then scaled */
    assert_float_equal(share_j[1], 12.0 * 0.5 / 1.5, 1e-9);
    assert_float_equal(share_j[2], 0.0, 0);
}

static void test_split_with_an_idle_node(void **state)
{
    (void)state;
    double cpu_s[] = {0.0};
    double share_j[1];
    vigild_energy_split(5.0, 0.0, cpu_s, 1, share_j);
    assert_float_equal(share_j[0], 0.0, 0);
}

/* A catalogue as procstat, process and the energy provider make it. */
struct fixture {
    vigil_metric_catalog *catalog;
    uint32_t busy_ids[5], idle_id, energy_id, cpu_id;
    struct vigild_energy_share share;
    struct vigild_tick_samples samples;
};

static uint32_t reg(vigil_metric_catalog *c, const char *name, enum vigil_metric_origin origin)
{
    GError *error = NULL;
    uint32_t id = vigil_metric_register(c, name, "s", VIGIL_METRIC_COUNTER, "test", origin, &error);
    assert_null(error);
    return id;
}

static void fixture_init(struct fixture *f, const char *energy_metric,
                         enum vigil_metric_origin origin)
{
    f->catalog = vigil_metric_catalog_new();
    const char *busy[] = {"cpu.user_s", "cpu.nice_s", "cpu.system_s", "cpu.irq_s", "cpu.softirq_s"};
    for (int i = 0; i < 5; i++)
        f->busy_ids[i] = reg(f->catalog, busy[i], VIGIL_METRIC_MEASURED);
    f->idle_id = reg(f->catalog, "cpu.idle_s", VIGIL_METRIC_MEASURED);
    f->energy_id = reg(f->catalog, energy_metric, origin);
    f->cpu_id = reg(f->catalog, "process.cpu_s", VIGIL_METRIC_MEASURED);
    vigild_energy_share_init(&f->share);
    f->samples.node = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
    f->samples.process = g_array_new(FALSE, FALSE, sizeof(struct vigild_process_sample));
}

static void fixture_clear(struct fixture *f)
{
    vigild_energy_share_clear(&f->share);
    g_array_free(f->samples.node, TRUE);
    g_array_free(f->samples.process, TRUE);
    vigil_metric_catalog_free(f->catalog);
}

/* The energy zone of a fixture's node: its metric and origin. */
struct zone {
    const char *metric;
    enum vigil_metric_origin origin;
};

static const struct zone package = {"energy.pkg0_j", VIGIL_METRIC_MEASURED};
static const struct zone node_estimate = {"energy.node_j", VIGIL_METRIC_ESTIMATED};
static const struct zone psys = {"energy.psys_j", VIGIL_METRIC_MEASURED};

/* cmocka setup: *state is the test's zone (its prestate), then the
 * fixture with that zone. */
static int setup(void **state)
{
    const struct zone *zone = *state;
    struct fixture *f = g_new0(struct fixture, 1);
    fixture_init(f, zone->metric, zone->origin);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_clear(*state);
    g_free(*state);
    return 0;
}

/* One tick: the node's user and system time (the other busy fields stay
 * 0), its energy counter, and each process's CPU time. */
static void tick_with(struct fixture *f, double user_s, double system_s, double energy_j,
                      const double *process_cpu_s, size_t n_processes, uint32_t extra_id,
                      double extra_value)
{
    g_array_set_size(f->samples.node, 0);
    g_array_set_size(f->samples.process, 0);
    const double busy[5] = {user_s, 0, system_s, 0, 0};
    for (int i = 0; i < 5; i++) {
        struct vigil_sample s = {.metric_id = f->busy_ids[i], .value = busy[i]};
        g_array_append_val(f->samples.node, s);
    }
    struct vigil_sample idle = {.metric_id = f->idle_id, .value = 1000};
    g_array_append_val(f->samples.node, idle);
    if (!isnan(energy_j)) { /* NaN: the zone was not sampled this tick */
        struct vigil_sample energy = {.metric_id = f->energy_id, .value = energy_j};
        g_array_append_val(f->samples.node, energy);
    }
    for (size_t i = 0; i < n_processes; i++) {
        struct vigild_process_sample p = {
            .process_id = i + 1,
            .sample = {.metric_id = f->cpu_id, .value = process_cpu_s[i]},
        };
        g_array_append_val(f->samples.process, p);
    }
    if (extra_id != 0) {
        struct vigil_sample extra = {.metric_id = extra_id, .value = extra_value};
        g_array_append_val(f->samples.node, extra);
    }
    vigild_energy_share_add(&f->share, &f->samples, f->catalog);
}

static void tick(struct fixture *f, double user_s, double system_s, double energy_j,
                 const double *process_cpu_s, size_t n_processes)
{
    tick_with(f, user_s, system_s, energy_j, process_cpu_s, n_processes, 0, 0);
}

static void test_two_processes_get_their_shares(void **state)
{
    struct fixture *f = *state;
    vigild_energy_share_add_process(&f->share, 1);
    vigild_energy_share_add_process(&f->share, 2);

    /* Tick 1 sets the node's baselines; the processes' CPU time since
     * their start (0.02 s and 0) has no node delta to share yet. */
    tick(f, 100.00, 50.00, 5000.0, (double[]){0.02, 0.0}, 2);
    /* Tick 2: the node was busy 0.2 s and used 20 J; process 1 used
     * 0.05 s, process 2 0.10 s: 5 J and 10 J. */
    tick(f, 100.15, 50.05, 5020.0, (double[]){0.07, 0.10}, 2);
    /* Tick 3: busy 0.1 s, 6 J; only process 2 ran (0.1 s): all 6 J. */
    tick(f, 100.20, 50.10, 5026.0, (double[]){0.07, 0.20}, 2);

    const struct vigild_energy_account *a = vigild_energy_share_account(&f->share, 1);
    const struct vigild_energy_account *b = vigild_energy_share_account(&f->share, 2);
    assert_non_null(a);
    assert_non_null(b);
    assert_float_equal(a->energy_j, 5.0, 1e-9);
    assert_float_equal(b->energy_j, 16.0, 1e-9);
    assert_float_equal(a->cpu_s, 0.07, 1e-12);
    assert_float_equal(b->cpu_s, 0.20, 1e-12);
    assert_true(a->shared);
    assert_int_equal(a->flags, 0); /* measured, certain */
    assert_string_equal(f->share.source, "test");
    assert_null(f->share.unavailable);
}

static void test_estimated_energy_marks_the_shares(void **state)
{
    struct fixture *f = *state;
    vigild_energy_share_add_process(&f->share, 1);
    tick(f, 10.0, 0.0, 100.0, (double[]){0.0}, 1);
    tick(f, 10.1, 0.0, 104.0, (double[]){0.1}, 1);
    const struct vigild_energy_account *a = vigild_energy_share_account(&f->share, 1);
    assert_float_equal(a->energy_j, 4.0, 1e-9);
    assert_true(a->flags & VIGIL_LOCAL_ENERGY_ESTIMATED);
}

static void test_psys_is_preferred_to_the_packages(void **state)
{
    struct fixture *f = *state;
    uint32_t pkg = reg(f->catalog, "energy.pkg0_j", VIGIL_METRIC_MEASURED);
    vigild_energy_share_add_process(&f->share, 1);
    /* psys moves 30 J, the package 10 J: psys contains it. */
    for (int t = 0; t < 2; t++)
        tick_with(f, 1.0 + t * 0.1, 0, 1000.0 + t * 30, (double[]){t * 0.1}, 1, pkg, 10.0 * t);
    assert_float_equal(vigild_energy_share_account(&f->share, 1)->energy_j, 30.0, 1e-9);
}

static void test_a_counter_going_back_shares_nothing(void **state)
{
    struct fixture *f = *state;
    vigild_energy_share_add_process(&f->share, 1);
    tick(f, 1.0, 0, 500.0, (double[]){0.0}, 1);
    tick(f, 1.1, 0, 400.0, (double[]){0.1}, 1);
    assert_float_equal(vigild_energy_share_account(&f->share, 1)->energy_j, 0.0, 0);
    assert_false(vigild_energy_share_account(&f->share, 1)->shared);
}

static void test_a_change_of_zones_shares_nothing(void **state)
{
    struct fixture *f = *state;
    uint32_t estimate = reg(f->catalog, "energy.node_j", VIGIL_METRIC_ESTIMATED);
    vigild_energy_share_add_process(&f->share, 1);
    /* The package's total is 500 J, then only the estimate's (900 J) is
     * sampled: 400 J more is no energy anybody used. */
    tick(f, 1.0, 0, 500.0, (double[]){0.0}, 1);
    tick_with(f, 1.1, 0, NAN, (double[]){0.1}, 1, estimate, 900.0);
    assert_float_equal(vigild_energy_share_account(&f->share, 1)->energy_j, 0.0, 0);
    /* From then on the estimate's deltas are shared. */
    tick_with(f, 1.2, 0, NAN, (double[]){0.2}, 1, estimate, 910.0);
    assert_float_equal(vigild_energy_share_account(&f->share, 1)->energy_j, 10.0, 1e-9);
}

static uint32_t reg_from(vigil_metric_catalog *c, const char *name, const char *source,
                         enum vigil_metric_origin origin)
{
    GError *error = NULL;
    uint32_t id = vigil_metric_register(c, name, "J", VIGIL_METRIC_COUNTER, source, origin, &error);
    assert_null(error);
    return id;
}

static const struct vigild_energy_segment *segment(const struct fixture *f, guint i)
{
    assert_true(i < f->share.segments->len);
    return &g_array_index(f->share.segments, struct vigild_energy_segment, i);
}

/* powercap's package, then the estimate, then powercap again: the node's
 * sum goes on from each segment's first tick, which adds nothing; the
 * process whose life spanned them says which. */
static void test_the_node_sum_goes_on_across_sources(void **state)
{
    struct fixture *f = *state;
    uint32_t powercap =
        reg_from(f->catalog, "energy.pkg1_j", "energy/powercap", VIGIL_METRIC_MEASURED);
    uint32_t estimate =
        reg_from(f->catalog, "energy.node_j", "energy/estimate", VIGIL_METRIC_ESTIMATED);
    vigild_energy_share_add_process(&f->share, 1);
    vigild_energy_share_set_owner(&f->share, 1, "", "run-a");
    f->samples.t_ns = 1000;
    tick_with(f, 1.0, 0, NAN, (double[]){0.0}, 1, powercap, 500.0);
    assert_float_equal(f->share.node_energy_j, 0.0, 0);
    f->samples.t_ns = 2000;
    tick_with(f, 1.1, 0, NAN, (double[]){0.1}, 1, powercap, 520.0);
    assert_float_equal(f->share.node_energy_j, 20.0, 1e-9);
    /* The estimate's total is 9000 J: no jump, a new segment. */
    f->samples.t_ns = 3000;
    tick_with(f, 1.2, 0, NAN, (double[]){0.2}, 1, estimate, 9000.0);
    assert_float_equal(f->share.node_energy_j, 20.0, 1e-9);
    f->samples.t_ns = 4000;
    tick_with(f, 1.3, 0, NAN, (double[]){0.3}, 1, estimate, 9007.5);
    assert_float_equal(f->share.node_energy_j, 27.5, 1e-9);
    /* Back to powercap, whose counter went on meanwhile: nothing of it. */
    f->samples.t_ns = 5000;
    tick_with(f, 1.4, 0, NAN, (double[]){0.4}, 1, powercap, 600.0);
    f->samples.t_ns = 6000;
    tick_with(f, 1.5, 0, NAN, (double[]){0.5}, 1, powercap, 601.0);
    assert_float_equal(f->share.node_energy_j, 28.5, 1e-9);

    assert_int_equal(f->share.segments->len, 3);
    assert_int_equal(f->share.segments_total, 3);
    assert_string_equal(segment(f, 0)->source, "energy/powercap");
    assert_int_equal(segment(f, 0)->start_ns, 1000);
    assert_string_equal(segment(f, 1)->source, "energy/estimate");
    assert_int_equal(segment(f, 1)->start_ns, 3000);
    assert_float_equal(segment(f, 1)->start_j, 20.0, 1e-9);
    assert_string_equal(segment(f, 2)->source, "energy/powercap");
    assert_float_equal(segment(f, 2)->start_j, 27.5, 1e-9);

    /* Alone on the node, the process had all of it, from both sources. */
    const struct vigild_energy_account *a = vigild_energy_share_account(&f->share, 1);
    assert_float_equal(a->energy_j, 28.5, 1e-9);
    assert_string_equal(a->sources, "energy/powercap+energy/estimate");
    assert_true(a->flags & VIGIL_LOCAL_ENERGY_ESTIMATED);
}

/* Fewer zones after a failed read, or a counter that went back (a
 * restarted provider counts from 0): new segments, the sum goes on; a
 * tick without an energy sample keeps the segment. */
static void test_a_reset_counter_starts_a_segment(void **state)
{
    struct fixture *f = *state;
    uint32_t pkg1 = reg(f->catalog, "energy.pkg1_j", VIGIL_METRIC_MEASURED);
    tick_with(f, 1.0, 0, 100.0, NULL, 0, pkg1, 100.0);
    tick_with(f, 1.1, 0, 110.0, NULL, 0, pkg1, 105.0);
    assert_float_equal(f->share.node_energy_j, 15.0, 1e-9);
    tick(f, 1.2, 0, 120.0, NULL, 0); /* pkg1 not read: one zone */
    tick(f, 1.3, 0, 0.0, NULL, 0);   /* went back */
    tick(f, 1.4, 0, NAN, NULL, 0);   /* no sample */
    tick(f, 1.5, 0, 4.0, NULL, 0);
    assert_float_equal(f->share.node_energy_j, 19.0, 1e-9);
    assert_int_equal(f->share.segments_total, 3);
    assert_int_equal(segment(f, 1)->zone_count, 1);
    assert_int_equal(segment(f, 0)->zone_count, 2);
}

/* Two processes of one job alone on the node: the job has the node's whole
 * delta, split by their CPU time, though the node was busy with more. */
static void test_an_exclusive_node_is_the_jobs(void **state)
{
    struct fixture *f = *state;
    vigild_energy_share_add_process(&f->share, 1);
    vigild_energy_share_add_process(&f->share, 2);
    vigild_energy_share_set_owner(&f->share, 1, "4711", "run-a");
    vigild_energy_share_set_owner(&f->share, 2, "4711", "run-b"); /* one job, two runs */
    tick(f, 10.0, 0, 100.0, (double[]){0.0, 0.0}, 2);
    /* Busy 0.4 s, the processes 0.05 s and 0.15 s: a quarter and three
     * quarters of all 20 J. */
    tick(f, 10.4, 0, 120.0, (double[]){0.05, 0.15}, 2);
    assert_float_equal(vigild_energy_share_account(&f->share, 1)->energy_j, 5.0, 1e-9);
    assert_float_equal(vigild_energy_share_account(&f->share, 2)->energy_j, 15.0, 1e-9);
    /* Neither used CPU: equal shares. */
    tick(f, 10.5, 0, 124.0, (double[]){0.05, 0.15}, 2);
    assert_float_equal(vigild_energy_share_account(&f->share, 1)->energy_j, 7.0, 1e-9);
    assert_float_equal(vigild_energy_share_account(&f->share, 2)->energy_j, 17.0, 1e-9);

    /* A process of another job: the node is shared, each gets its part of
     * the busy CPU time (0.5 s): 0.1 s and 0.1 s of 10 J. */
    vigild_energy_share_add_process(&f->share, 3);
    vigild_energy_share_set_owner(&f->share, 3, NULL, "other-run");
    tick(f, 10.5, 0, 124.0, (double[]){0.05, 0.15, 0.0}, 3);
    tick(f, 11.0, 0, 134.0, (double[]){0.15, 0.25, 0.0}, 3);
    assert_float_equal(vigild_energy_share_account(&f->share, 1)->energy_j, 9.0, 1e-9);
    assert_float_equal(vigild_energy_share_account(&f->share, 2)->energy_j, 19.0, 1e-9);
    assert_float_equal(vigild_energy_share_account(&f->share, 3)->energy_j, 0.0, 0);
    /* It ends: the job's alone again. */
    vigild_energy_share_remove_process(&f->share, 3);
    tick(f, 11.5, 0, 144.0, (double[]){0.25, 0.25}, 2);
    assert_float_equal(vigild_energy_share_account(&f->share, 1)->energy_j, 19.0, 1e-9);
    assert_float_equal(vigild_energy_share_account(&f->share, 2)->energy_j, 19.0, 1e-9);
}

static void test_sources_are_joined_and_kept_short(void **state)
{
    (void)state;
    char s[VIGILD_ENERGY_SOURCES_BYTES] = "";
    vigild_energy_sources_add(s, sizeof s, "energy/powercap");
    vigild_energy_sources_add(s, sizeof s, "energy/powercap");
    vigild_energy_sources_add(s, sizeof s, NULL);
    assert_string_equal(s, "energy/powercap");
    vigild_energy_sources_add(s, sizeof s, "energy/estimate");
    assert_string_equal(s, "energy/powercap+energy/estimate");
    char out[32];
    vigild_energy_sources_compact(s, out, sizeof out); /* 31 bytes: fits */
    assert_string_equal(out, "energy/powercap+energy/estimate");

    char t[VIGILD_ENERGY_SOURCES_BYTES] = "energy/likwid";
    vigild_energy_sources_add(t, sizeof t, "energy/powercap");
    vigild_energy_sources_add(t, sizeof t, "energy/estimate");
    assert_string_equal(t, "energy/likwid+energy/powercap+energy/estimate");
    vigild_energy_sources_compact(t, out, sizeof out);
    assert_string_equal(out, "energy/likwid+powercap+estimate");
    vigild_energy_sources_add(t, sizeof t, "energy/a-long-fourth-source");
    vigild_energy_sources_compact(t, out, sizeof out);
    assert_string_equal(out, "energy/likwid+powercap+…");
    assert_true(strlen(out) < sizeof out);
    /* No room in the list: it stays as it was. */
    char u[20] = "energy/powercap";
    vigild_energy_sources_add(u, sizeof u, "energy/estimate");
    assert_string_equal(u, "energy/powercap");
}

/* A test with a fixture whose node has energy zone `zone`. */
#define WITH_ZONE(f, zone)                                                                         \
    cmocka_unit_test_prestate_setup_teardown(f, setup, teardown, (void *)&(zone))

TEST_MAIN(cmocka_unit_test(test_split_by_cpu_share),
          cmocka_unit_test(test_split_leaves_the_rest_to_other_processes),
          cmocka_unit_test(test_split_never_gives_more_than_the_node_used),
          cmocka_unit_test(test_split_with_an_idle_node),
          WITH_ZONE(test_two_processes_get_their_shares, package),
          WITH_ZONE(test_estimated_energy_marks_the_shares, node_estimate),
          WITH_ZONE(test_psys_is_preferred_to_the_packages, psys),
          WITH_ZONE(test_a_counter_going_back_shares_nothing, package),
          WITH_ZONE(test_a_change_of_zones_shares_nothing, package),
          WITH_ZONE(test_the_node_sum_goes_on_across_sources, package),
          WITH_ZONE(test_a_reset_counter_starts_a_segment, package),
          WITH_ZONE(test_an_exclusive_node_is_the_jobs, package),
          cmocka_unit_test(test_sources_are_joined_and_kept_short))
