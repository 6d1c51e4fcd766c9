/* vigil — the sensor-sanity ADPI: values no working sensor gives.
 *
 * Each cycle, for the metrics of its scope:
 *   - a counter of `zero_metrics` (energy) that did not grow at all: a
 *     node that runs uses energy, so 0 J means the sensor is not counting;
 *   - a counter that went back: a counter only grows (a wrap the provider
 *     did not handle, a reset sensor);
 *   - a metric of `stuck_metrics` that kept one value for `stuck_cycles`
 *     cycles: free memory never sits still on a live node (once, when the
 *     count is reached);
 *   - a metric that had samples and has none: its provider stopped
 *     answering (once, in the first cycle without; again only after it
 *     came back).
 * All are ABNORMAL_OTHER: they say the measurement is wrong, not that the
 * node does well or badly. */
#include <math.h>

#include "adpi_metric_instance.h"

/* What the catalogue says of a metric, and what this ADPI keeps of it. */
struct sanity_metric {
    const struct vigil_metric_desc *desc; /* the catalogue outlives every ADPI */
    gboolean zero, stuck;                 /* matches zero_metrics, stuck_metrics */
    gboolean stuck_reported;              /* the current run was reported */
};
VIGIL_ADPI_METRICS_ENTRY(struct sanity_metric);

/* Its keys, each filling the field of its name (the table at the end). */
struct sanity_settings {
    char **zero_metrics;
    char **stuck_metrics;
    guint stuck_cycles;
};
static const struct vigil_settings_table settings_table;

struct sanity {
    struct adpi_metric_instance base; /* first: ADPI_METRIC_INSTANCE */
    struct sanity_settings settings;
};
ADPI_METRIC_INSTANCE(struct sanity);

static void match(void *entry, uint32_t id, void *user)
{
    (void)id;
    const struct sanity *s = user;
    struct sanity_metric *m = entry;
    const struct sanity_settings *settings = &s->settings;
    m->zero = vigil_metric_name_matches(m->desc->name, (const char *const *)settings->zero_metrics);
    m->stuck =
        vigil_metric_name_matches(m->desc->name, (const char *const *)settings->stuck_metrics);
}

static void check_counter(const struct sanity_metric *m, const struct vigil_cycle_metric *v,
                          const struct vigil_issue_sink *sink)
{
    const char *name = m->desc->name, *unit = m->desc->unit;
    if (v->went_back) {
        double earlier = v->has_before ? v->before : v->first;
        vigil_issue_report(sink, VIGIL_HEALTH_ABNORMAL_OTHER, name, v->last, earlier, NAN,
                           "%s went back: %.10g %s at the end of the cycle, %.10g %s before; "
                           "expected a counter never to decrease",
                           name, v->last, unit, earlier, unit);
        return;
    }
    double delta;
    if (m->zero && v->has_before && vigil_cycle_metric_delta(v, &delta) && delta == 0)
        vigil_issue_report(sink, VIGIL_HEALTH_ABNORMAL_OTHER, name, 0, NAN, NAN,
                           "0 %s in a cycle: %s stayed at %.10g %s; expected it to grow every "
                           "cycle",
                           unit, name, v->last, unit);
}

static void check_stuck(const struct sanity *s, struct sanity_metric *m,
                        const struct vigil_cycle_metric *v, const struct vigil_issue_sink *sink)
{
    guint run = v->has_before && !v->changed ? v->cycles_unchanged + 1 : 0;
    if (run == 0)
        m->stuck_reported = FALSE;
    if (!m->stuck || m->stuck_reported || run < s->settings.stuck_cycles)
        return;
    m->stuck_reported = TRUE;
    vigil_issue_report(sink, VIGIL_HEALTH_ABNORMAL_OTHER, m->desc->name, v->last, NAN, NAN,
                       "%s stayed at %.10g %s for %u cycles in a row; expected it to change "
                       "within %u cycles",
                       m->desc->name, v->last, m->desc->unit, run, s->settings.stuck_cycles);
}

static void sanity_check(void *instance, void *entry, const struct vigil_cycle_metric *v,
                         const struct vigil_issue_sink *sink)
{
    const struct sanity *s = instance;
    struct sanity_metric *m = entry;
    if (v == NULL)
        return;
    if (v->n == 0) {
        m->stuck_reported = FALSE;
        if (v->cycles_missing == 0)
            vigil_issue_report(sink, VIGIL_HEALTH_ABNORMAL_OTHER, m->desc->name, v->before, NAN,
                               NAN,
                               "%s had no sample in this cycle (the last was %.10g %s): its "
                               "provider stopped answering; expected samples every cycle",
                               m->desc->name, v->before, m->desc->unit);
        return;
    }
    if (v->kind == VIGIL_METRIC_COUNTER)
        check_counter(m, v, sink);
    check_stuck(s, m, v, sink);
}

static void *sanity_create(const struct vigil_plugin_context *ctx, GError **error)
{
    struct sanity *s = g_new0(struct sanity, 1);
    return adpi_metric_instance_init(&s->base, &settings_table, &s->settings,
                                     sizeof(struct sanity_metric), match, sanity_check, ctx, error);
}

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct sanity_settings, zero_metrics), .type = VIGIL_CONFIG_LIST,
     .default_value = "energy.*;node.energy_j;process.energy_j",
     .description = "counters (globs) for which a cycle without any increase is an issue"},
    {VIGIL_SETTING(struct sanity_settings, stuck_metrics), .type = VIGIL_CONFIG_LIST,
     .default_value = "",
     .description = "metrics (globs) that must not keep one value for stuck_cycles cycles"},
    {VIGIL_SETTING(struct sanity_settings, stuck_cycles), .type = VIGIL_CONFIG_INT,
     .default_value = "30", .min = 1, .max = 1000000,
     .description = "cycles in a row one value makes a stuck_metrics metric stuck"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct sanity_settings, keys, NULL);

VIGIL_PLUGIN(VIGIL_PLUGIN_ADPI, .name = "sensor-sanity",
             .description = "0 J cycles, counters going back, stuck and silent sensors",
             .settings = &settings_table, .create = sanity_create,
             .destroy = adpi_metric_instance_destroy, .ops = &adpi_metric_instance_ops);
