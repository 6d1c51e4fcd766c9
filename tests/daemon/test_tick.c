/* vigild's tick: deadlines that pass while the daemon cannot run are
 * counted as missed, and one tick runs for all of them; where a tick's
 * time goes is counted part by part and subscriber by subscriber. */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "statmux.h"
#include "tick.h"
#include "tick_costs.h"
#include "tick_samples.h"
#include "vigil/clock.h"
#include "test_main.h"

static void test_late_reader_counts_missed_ticks(void **state)
{
    (void)state;
    struct vigild_ticker t = {.fd = -1};
    GError *error = NULL;
    assert_true(vigild_ticker_start(&t, VIGIL_NS_PER_MS, &error));
    struct pollfd p = {.fd = t.fd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, -1), 1);
    /* Not a synchronisation: the daemon being late is the condition under
     * test, and 20 ms late on a 1 ms tick misses at least some deadlines
     * whatever the machine does meanwhile. */
    nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
    uint64_t expirations = vigild_ticker_take(&t);
    assert_true(expirations >= 20);
    assert_int_equal(t.ticks, 1);
    assert_int_equal(t.missed, expirations - 1);
    /* Nothing pending now: a wake-up without a deadline is no tick. */
    uint64_t before = t.ticks;
    if (vigild_ticker_take(&t) == 0)
        assert_int_equal(t.ticks, before);
    vigild_ticker_stop(&t);
    assert_int_equal(t.fd, -1);
}

static void test_cost_keeps_count_last_max_and_total(void **state)
{
    (void)state;
    struct vigild_cost c = {0};
    vigild_cost_add(&c, 300);
    vigild_cost_add(&c, 1000);
    vigild_cost_add(&c, 200);
    assert_int_equal(c.count, 3);
    assert_int_equal(c.last_ns, 200);
    assert_int_equal(c.max_ns, 1000);
    assert_int_equal(c.total_ns, 1500);
    /* A mark charges the time since the previous one and hands on its own
     * clock reading, so that consecutive parts add up to the whole. */
    struct vigild_tick_costs costs = {0};
    uint64_t begin_ns = vigil_clock_monotonic_ns();
    uint64_t middle_ns = vigild_tick_costs_mark(&costs, VIGILD_PART_PROVIDERS, begin_ns);
    uint64_t end_ns = vigild_tick_costs_mark(&costs, VIGILD_PART_PUBLISH, middle_ns);
    assert_true(middle_ns >= begin_ns && end_ns >= middle_ns);
    assert_int_equal(costs.part[VIGILD_PART_PROVIDERS].total_ns +
                         costs.part[VIGILD_PART_PUBLISH].total_ns,
                     end_ns - begin_ns);
    assert_int_equal(costs.part[VIGILD_PART_DRAIN].count, 0);
}

static int calls;

static void count_call(void *user, const struct vigild_tick_samples *samples,
                       const vigil_metric_catalog *catalog)
{
    (void)samples;
    (void)catalog;
    (*(int *)user)++;
    calls++;
}

static void test_statmux_times_each_subscriber_by_name(void **state)
{
    (void)state;
    struct vigild_statmux m;
    vigild_statmux_init(&m);
    int first = 0, second = 0;
    vigild_statmux_subscribe_named(&m, "rollup", count_call, &first);
    vigild_statmux_subscribe(&m, count_call, &second);
    struct vigild_tick_samples samples = {0};
    vigild_statmux_publish(&m, &samples, NULL);
    vigild_statmux_publish(&m, &samples, NULL);
    assert_int_equal(first, 2);
    assert_int_equal(second, 2);
    assert_int_equal(calls, 4);

    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    vigild_statmux_json(b, &m);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    JsonArray *subscribers =
        json_object_get_array_member(json_node_get_object(root), "subscribers");
    assert_int_equal(json_array_get_length(subscribers), 2);
    JsonObject *rollup = json_array_get_object_element(subscribers, 0);
    assert_string_equal(json_object_get_string_member(rollup, "name"), "rollup");
    JsonObject *cost = json_object_get_object_member(rollup, "cost_us");
    assert_int_equal(json_object_get_int_member(cost, "count"), 2);
    assert_true(json_object_get_double_member(cost, "total") >= 0);
    /* One that subscribed without a name is still told apart by its place. */
    assert_string_equal(
        json_object_get_string_member(json_array_get_object_element(subscribers, 1), "name"),
        "subscriber");
    json_node_unref(root);
    g_object_unref(b);
    vigild_statmux_clear(&m);
}

TEST_MAIN(cmocka_unit_test(test_late_reader_counts_missed_ticks),
          cmocka_unit_test(test_cost_keeps_count_last_max_and_total),
          cmocka_unit_test(test_statmux_times_each_subscriber_by_name))
