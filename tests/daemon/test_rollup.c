/* vigild's roll-ups and full-resolution history, over fixture samples. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "history.h"
#include "rollup.h"
#include "tick_samples.h"
#include "vigil/clock.h"
#include "test_main.h"

struct fixture {
    vigil_metric_catalog *catalog;
    uint32_t counter_id, gauge_id;
    struct vigild_tick_samples samples;
};

static int setup(void **state)
{
    struct fixture *f = g_new0(struct fixture, 1);
    f->catalog = vigil_metric_catalog_new();
    f->counter_id =
        vigil_metric_register(f->catalog, "disk.sda.read_bytes", "bytes", VIGIL_METRIC_COUNTER,
                              "test", VIGIL_METRIC_MEASURED, NULL);
    f->gauge_id = vigil_metric_register(f->catalog, "mem.used_bytes", "bytes", VIGIL_METRIC_GAUGE,
                                        "test", VIGIL_METRIC_MEASURED, NULL);
    assert_true(f->counter_id != 0 && f->gauge_id != 0);
    f->samples.node = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
    f->samples.process = g_array_new(FALSE, FALSE, sizeof(struct vigild_process_sample));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    g_array_free(f->samples.node, TRUE);
    g_array_free(f->samples.process, TRUE);
    vigil_metric_catalog_free(f->catalog);
    g_free(f);
    return 0;
}

/* Tick `n`, 100 ms after the one before. */
static void set_tick(struct fixture *f, uint64_t n, double counter, double gauge, uint32_t flags)
{
    g_array_set_size(f->samples.node, 0);
    f->samples.tick = n;
    f->samples.t_ns = n * 100 * VIGIL_NS_PER_MS;
    struct vigil_sample c = {f->counter_id, flags, f->samples.t_ns, counter};
    struct vigil_sample g = {f->gauge_id, 0, f->samples.t_ns, gauge};
    g_array_append_val(f->samples.node, c);
    g_array_append_val(f->samples.node, g);
}

static void test_rollup_windows(void **state)
{
    struct fixture *f = *state;
    struct vigild_rollup r;
    vigild_rollup_init(&r, 4);
    /* Counter: 1000, then +100, +300, +200 per 100 ms; gauge 5, 7, 3, 9. */
    const double counter[] = {1000, 1100, 1400, 1600, 1600, 2600, 2600, 2600};
    const double gauge[] = {5, 7, 3, 9, 1, 1, 1, 2};
    for (uint64_t t = 0; t < 4; t++) {
        assert_null(vigild_rollup_latest(&r, f->counter_id));
        set_tick(f, t, counter[t], gauge[t], 0);
        vigild_rollup_add(&r, &f->samples, f->catalog);
    }
    const struct vigild_rollup_window *w = vigild_rollup_latest(&r, f->counter_id);
    assert_non_null(w);
    assert_float_equal(w->delta, 600, 0); /* its first value is its base */
    /* The daemon's first window starts at its first tick, its base. */
    assert_int_equal(w->start_ns, 0);
    assert_int_equal(w->end_ns, 3 * 100 * VIGIL_NS_PER_MS);
    assert_int_equal(w->count, 3); /* three rates between four samples */
    assert_float_equal(w->min, 1000, 1e-9);
    assert_float_equal(w->max, 3000, 1e-9);
    assert_float_equal(w->mean, 2000, 1e-9);
    const struct vigild_rollup_window *g = vigild_rollup_latest(&r, f->gauge_id);
    assert_float_equal(g->min, 3, 0);
    assert_float_equal(g->max, 9, 0);
    assert_float_equal(g->mean, 6, 0);
    assert_true(isnan(g->delta));

    /* The second window's delta starts from the first's last value: no
     * increment is lost or counted twice between windows. */
    for (uint64_t t = 4; t < 8; t++) {
        set_tick(f, t, counter[t], gauge[t], t == 6 ? VIGIL_SAMPLE_UNCERTAIN : 0);
        vigild_rollup_add(&r, &f->samples, f->catalog);
    }
    w = vigild_rollup_latest(&r, f->counter_id);
    assert_float_equal(w->delta, 1000, 0);
    /* It runs from the first window's last tick to its own: 400 ms, the
     * time its delta covers, so delta / length is the counter's rate. */
    assert_int_equal(w->start_ns, 3 * 100 * VIGIL_NS_PER_MS);
    assert_int_equal(w->end_ns, 7 * 100 * VIGIL_NS_PER_MS);
    assert_int_equal(w->count, 4);
    assert_float_equal(w->max, 10000, 1e-9);
    assert_true(w->flags & VIGIL_SAMPLE_UNCERTAIN);
    assert_int_equal(r.windows_closed, 2);
    vigild_rollup_clear(&r);
}

static void test_rollup_counter_going_back_is_uncertain(void **state)
{
    struct fixture *f = *state;
    struct vigild_rollup r;
    vigild_rollup_init(&r, 2);
    set_tick(f, 0, 500, 0, 0);
    vigild_rollup_add(&r, &f->samples, f->catalog);
    set_tick(f, 1, 100, 0, 0);
    vigild_rollup_add(&r, &f->samples, f->catalog);
    const struct vigild_rollup_window *w = vigild_rollup_latest(&r, f->counter_id);
    assert_float_equal(w->delta, -400, 0);
    assert_true(w->flags & VIGIL_SAMPLE_UNCERTAIN);
    vigild_rollup_clear(&r);
}

static void test_history_keeps_the_newest(void **state)
{
    struct fixture *f = *state;
    struct vigild_history h;
    vigild_history_init(&h, 5);
    for (uint64_t t = 0; t < 12; t++) {
        set_tick(f, t, (double)t, 0, 0);
        vigild_history_add(&h, &f->samples, f->catalog);
    }
    GArray *out = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
    assert_int_equal(vigild_history_get(&h, f->counter_id, 0, out), 5);
    for (guint i = 0; i < 5; i++)
        assert_float_equal(g_array_index(out, struct vigil_sample, i).value, 7 + i, 0);
    g_array_set_size(out, 0);
    /* From tick 10 on. */
    assert_int_equal(vigild_history_get(&h, f->counter_id, 10 * 100 * VIGIL_NS_PER_MS, out), 2);

    /* Shrinking keeps the newest, in order; growing keeps them all. */
    vigild_history_resize(&h, 3);
    g_array_set_size(out, 0);
    assert_int_equal(vigild_history_get(&h, f->counter_id, 0, out), 3);
    assert_float_equal(g_array_index(out, struct vigil_sample, 0).value, 9, 0);
    assert_float_equal(g_array_index(out, struct vigil_sample, 2).value, 11, 0);
    vigild_history_resize(&h, 10);
    set_tick(f, 12, 12, 0, 0);
    vigild_history_add(&h, &f->samples, f->catalog);
    g_array_set_size(out, 0);
    assert_int_equal(vigild_history_get(&h, f->counter_id, 0, out), 4);
    assert_float_equal(g_array_index(out, struct vigil_sample, 3).value, 12, 0);
    assert_int_equal(vigild_history_get(&h, 999, 0, out), 0);
    g_array_free(out, TRUE);
    vigild_history_clear(&h);
}

#define WITH_FIXTURE(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

TEST_MAIN(WITH_FIXTURE(test_rollup_windows),
          WITH_FIXTURE(test_rollup_counter_going_back_is_uncertain),
          WITH_FIXTURE(test_history_keeps_the_newest))
