/* vigild — the roll-ups: each node metric summarised over a window of
 * ticks (1 s by default), which is what is kept for a whole run when the
 * full-resolution samples are not.
 *
 * A counter's raw values mean nothing in a summary, so its min, mean and
 * max are of its rate between consecutive samples, and its delta is exact:
 * the window's last value minus the last value before the window. A
 * counter that went backwards (a reset, a wrap the provider could not
 * unwrap) makes its window uncertain.
 *
 * A window runs from the tick that closed the one before (its counters'
 * base) to its own last tick, so that a counter's delta and the window's
 * length cover the same time and delta / length is its rate: from its
 * first tick instead, a 1 s window of 100 ms ticks would be 0.9 s long and
 * every rate read from the warehouse 11 % high. The first window of a
 * daemon starts at its first tick, which is its counters' base. */
#include <math.h>

#include "rollup.h"
#include "tick_samples.h"

struct rollup_acc {
    gboolean seen;      /* any sample in the current window */
    gboolean has_last;  /* a sample ever */
    double last_value;  /* the latest sample's value */
    uint64_t last_t_ns; /* and when */
    double base_value;  /* a counter's last value before the window, or NaN */
    uint32_t count;     /* values (gauge) or rates (counter) in the window */
    double min, max, sum;
    uint32_t flags;
};

void vigild_rollup_init(struct vigild_rollup *r, guint window_ticks)
{
    r->window_ticks = window_ticks;
    r->ticks_in_window = 0;
    r->window_start_ns = 0;
    r->last_close_ns = 0;
    r->metrics = g_array_new(FALSE, TRUE, sizeof(struct rollup_acc));
    r->latest = g_array_new(FALSE, TRUE, sizeof(struct vigild_rollup_window));
    r->windows_closed = 0;
}

/* A new length applies from the next window on: the current one closes at
 * its old length or the new one, whichever comes first. */
void vigild_rollup_set_window(struct vigild_rollup *r, guint window_ticks)
{
    r->window_ticks = window_ticks;
}

static void reset_window(struct rollup_acc *a)
{
    a->seen = FALSE;
    a->count = 0;
    a->min = INFINITY;
    a->max = -INFINITY;
    a->sum = 0;
    a->flags = 0;
    a->base_value = a->has_last ? a->last_value : NAN;
}

static struct rollup_acc *acc_for(struct vigild_rollup *r, uint32_t metric_id)
{
    if (metric_id >= r->metrics->len) {
        guint old = r->metrics->len;
        g_array_set_size(r->metrics, metric_id + 1);
        g_array_set_size(r->latest, metric_id + 1);
        for (guint i = old; i <= metric_id; i++)
            reset_window(&g_array_index(r->metrics, struct rollup_acc, i));
    }
    return &g_array_index(r->metrics, struct rollup_acc, metric_id);
}

static void add_value(struct rollup_acc *a, double v)
{
    a->count++;
    a->sum += v;
    if (v < a->min)
        a->min = v;
    if (v > a->max)
        a->max = v;
}

static void close_window(struct vigild_rollup *r, const vigil_metric_catalog *catalog,
                         uint64_t end_ns)
{
    for (guint id = 1; id < r->metrics->len; id++) {
        struct rollup_acc *a = &g_array_index(r->metrics, struct rollup_acc, id);
        if (!a->seen)
            continue;
        const struct vigil_metric_desc *desc = vigil_metric_get(catalog, id);
        gboolean counter = desc != NULL && desc->kind == VIGIL_METRIC_COUNTER;
        struct vigild_rollup_window *w = &g_array_index(r->latest, struct vigild_rollup_window, id);
        w->metric_id = id;
        w->flags = a->flags;
        w->start_ns = r->window_start_ns;
        w->end_ns = end_ns;
        w->count = a->count;
        w->min = a->count > 0 ? a->min : NAN;
        w->max = a->count > 0 ? a->max : NAN;
        w->mean = a->count > 0 ? a->sum / a->count : NAN;
        w->delta = counter ? a->last_value - a->base_value : NAN;
        reset_window(a);
    }
    r->windows_closed++;
}

void vigild_rollup_add(void *rollup, const struct vigild_tick_samples *samples,
                       const vigil_metric_catalog *catalog)
{
    struct vigild_rollup *r = rollup;
    if (r->ticks_in_window == 0)
        r->window_start_ns = r->last_close_ns != 0 ? r->last_close_ns : samples->t_ns;
    for (guint i = 0; i < samples->node->len; i++) {
        const struct vigil_sample *s = &g_array_index(samples->node, struct vigil_sample, i);
        const struct vigil_metric_desc *desc = vigil_metric_get(catalog, s->metric_id);
        if (desc == NULL)
            continue;
        struct rollup_acc *a = acc_for(r, s->metric_id);
        if (desc->kind == VIGIL_METRIC_COUNTER) {
            if (isnan(a->base_value))
                a->base_value = a->has_last ? a->last_value : s->value;
            if (a->has_last && s->t_ns > a->last_t_ns) {
                if (s->value < a->last_value)
                    a->flags |= VIGIL_SAMPLE_UNCERTAIN;
                add_value(a, (s->value - a->last_value) * 1e9 / (double)(s->t_ns - a->last_t_ns));
            }
        } else {
            add_value(a, s->value);
        }
        a->flags |= s->flags & VIGIL_SAMPLE_UNCERTAIN;
        a->seen = TRUE;
        a->has_last = TRUE;
        a->last_value = s->value;
        a->last_t_ns = s->t_ns;
    }
    if (++r->ticks_in_window >= r->window_ticks) {
        close_window(r, catalog, samples->t_ns);
        r->last_close_ns = samples->t_ns;
        r->ticks_in_window = 0;
    }
}

const struct vigild_rollup_window *vigild_rollup_latest(const struct vigild_rollup *r,
                                                        uint32_t metric_id)
{
    if (metric_id >= r->latest->len)
        return NULL;
    const struct vigild_rollup_window *w =
        &g_array_index(r->latest, struct vigild_rollup_window, metric_id);
    return w->metric_id == metric_id ? w : NULL;
}

void vigild_rollup_clear(struct vigild_rollup *r)
{
    if (r->metrics != NULL)
        g_array_free(r->metrics, TRUE);
    if (r->latest != NULL)
        g_array_free(r->latest, TRUE);
    r->metrics = r->latest = NULL;
}
