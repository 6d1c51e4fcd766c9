/* vigil — the drift ADPI: a slow change that no single cycle shows.
 *
 * Per metric of `metrics`, its per-cycle values (a gauge's mean, a
 * counter's rate) go into a window of the last `long_cycles` cycles with a
 * value. Once the window is full, the mean of its newest `short_cycles`
 * values more than `max_relative_drift` × |long mean| away from the mean
 * of all of it is one ABNORMAL_OTHER issue, at the onset; the next comes
 * only after the metric was back within bounds. A process whose I/O rate
 * halves over ten minutes is seen here. */
#include <math.h>

#include "adpi_metric_instance.h"

struct drift_metric {
    const struct vigil_metric_desc *desc; /* NULL for an id not seen yet */
    gboolean matches;
    gboolean drifting; /* reported, and not back within bounds since */
    double *window;    /* ring of long_cycles values */
    guint capacity, count, next;
};
VIGIL_ADPI_METRICS_ENTRY(struct drift_metric);

/* Its keys, each filling the field of its name (the table at the end). */
struct drift_settings {
    char **metrics; /* globs */
    guint short_cycles, long_cycles;
    double max_relative_drift;
};

struct drift {
    struct adpi_metric_instance base; /* first: ADPI_METRIC_INSTANCE */
    struct drift_settings settings;
};
ADPI_METRIC_INSTANCE(struct drift);

static gboolean check_windows(const void *settings, const char *section, const vigil_config *config,
                              GError **error)
{
    (void)config;
    const struct drift_settings *s = settings;
    if (s->long_cycles > s->short_cycles)
        return TRUE;
    g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                "[%s] long_cycles (%u) must be greater than short_cycles (%u): the long "
                "window is the baseline the short one is compared with",
                section, s->long_cycles, s->short_cycles);
    return FALSE;
}

static const struct vigil_settings_table settings_table;

/* The window's i-th value, 0 the oldest. */
static double window_at(const struct drift_metric *m, guint i)
{
    return m->window[(m->next + m->capacity - m->count + i) % m->capacity];
}

/* A new length keeps the newest values that fit. */
static void resize_window(struct drift_metric *m, guint capacity)
{
    double *window = g_new(double, capacity);
    guint keep = MIN(m->count, capacity);
    for (guint i = 0; i < keep; i++)
        window[i] = window_at(m, m->count - keep + i);
    g_free(m->window);
    m->window = window;
    m->capacity = capacity;
    m->count = keep;
    m->next = keep % capacity;
}

static void match(void *entry, uint32_t id, void *user)
{
    (void)id;
    const struct drift *d = user;
    struct drift_metric *m = entry;
    m->matches = vigil_metric_name_matches(m->desc->name, (const char *const *)d->settings.metrics);
    /* Only a described metric has a window (drift_check). */
    if (m->window != NULL && m->capacity != d->settings.long_cycles)
        resize_window(m, d->settings.long_cycles);
}

static void push(struct drift_metric *m, guint capacity, double value)
{
    if (m->window == NULL) {
        m->window = g_new(double, capacity);
        m->capacity = capacity;
    }
    m->window[m->next] = value;
    m->next = (m->next + 1) % m->capacity;
    m->count = MIN(m->count + 1, m->capacity);
}

/* Summed afresh each cycle rather than kept as running sums, whose
 * rounding errors would pile up over a long run. */
static double window_mean(const struct drift_metric *m, guint newest)
{
    double sum = 0;
    for (guint i = m->count - newest; i < m->count; i++)
        sum += window_at(m, i);
    return sum / newest;
}

static void judge(const struct drift *d, struct drift_metric *m, const struct vigil_cycle_metric *v,
                  const struct vigil_issue_sink *sink)
{
    if (m->count < m->capacity)
        return;
    double short_mean = window_mean(m, d->settings.short_cycles);
    double long_mean = window_mean(m, m->capacity);
    double allowed = d->settings.max_relative_drift * fabs(long_mean);
    if (!(fabs(short_mean - long_mean) > allowed)) {
        m->drifting = FALSE;
        return;
    }
    if (m->drifting)
        return;
    m->drifting = TRUE;
    char unit[VIGIL_METRIC_TEXT_MAX + 3];
    g_snprintf(unit, sizeof unit, v->kind == VIGIL_METRIC_COUNTER ? "%s/s" : "%s", m->desc->unit);
    vigil_issue_report(sink, VIGIL_HEALTH_ABNORMAL_OTHER, m->desc->name, short_mean,
                       long_mean - allowed, long_mean + allowed,
                       "%s drifted: %.6g %s over the last %u cycles against %.6g %s over the "
                       "last %u; expected within %g %% of the latter",
                       m->desc->name, short_mean, unit, d->settings.short_cycles, long_mean, unit,
                       m->capacity, d->settings.max_relative_drift * 100);
}

/* The metric's value goes into its window, which is then judged. */
static void drift_check(void *instance, void *entry, const struct vigil_cycle_metric *v,
                        const struct vigil_issue_sink *sink)
{
    const struct drift *d = instance;
    struct drift_metric *m = entry;
    double value;
    if (!m->matches || !vigil_cycle_metric_value(v, &value))
        return;
    push(m, d->settings.long_cycles, value);
    judge(d, m, v, sink);
}

static void *drift_create(const struct vigil_plugin_context *ctx, GError **error)
{
    struct drift *d = g_new0(struct drift, 1);
    return adpi_metric_instance_init(&d->base, &settings_table, &d->settings,
                                     sizeof(struct drift_metric), match, drift_check, ctx, error);
}

static void drift_destroy(void *instance)
{
    struct drift *d = instance;
    for (uint32_t id = 1; id < vigil_adpi_metrics_end(&d->base.metrics); id++) {
        struct drift_metric *m = vigil_adpi_metrics_get(&d->base.metrics, id);
        if (m != NULL)
            g_free(m->window);
    }
    adpi_metric_instance_destroy(d);
}

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct drift_settings, metrics), .type = VIGIL_CONFIG_LIST,
     .default_value = "process.cpu_s;process.read_bytes;process.written_bytes;node.energy_j",
     .description = "metrics (globs) whose per-cycle values are watched for drift"},
    {VIGIL_SETTING(struct drift_settings, short_cycles), .type = VIGIL_CONFIG_INT,
     .default_value = "30", .min = 1, .max = 1000000,
     .description = "cycles of the recent mean; fewer than long_cycles"},
    {VIGIL_SETTING(struct drift_settings, long_cycles), .type = VIGIL_CONFIG_INT,
     .default_value = "600", .min = 2, .max = 1000000,
     .description = "cycles of the baseline mean; more than short_cycles"},
    {VIGIL_SETTING(struct drift_settings, max_relative_drift), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.5", .min = 0, .max = 1000,
     .description = "share of the baseline mean the recent one may be away from it"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct drift_settings, keys, check_windows);

VIGIL_PLUGIN(VIGIL_PLUGIN_ADPI, .name = "drift",
             .description = "a recent mean drifting away from a long-run one",
             .settings = &settings_table, .create = drift_create, .destroy = drift_destroy,
             .ops = &adpi_metric_instance_ops);
