/* vigil — the energy-efficiency ADPI (the SIOX paper's Listing 3).
 *
 * Each cycle: x = CPU seconds per joule, the summed increases of the
 * `cpu_metrics` counters over those of the `energy_metrics` counters. The
 * first `stabilisation_cycles` values only build a running mean and σ;
 * after them, a value above mean + k·σ is ABNORMAL_GOOD (more work per
 * joule) and one below mean − k·σ ABNORMAL_BAD, but only when it is also
 * `min_relative_deviation` away from the mean: a very steady baseline has
 * σ near 0, where any wobble would otherwise be an issue.
 *
 * Abnormal values stay out of the running statistics, so a long anomaly
 * does not widen the baseline until it looks normal. Cycles without energy
 * used or without a CPU counter say nothing about efficiency and are
 * skipped.
 *
 * So are cycles whose energy is a model's, unless `judge_estimated` is on:
 * vigil's estimate is linear in CPU utilisation, so CPU seconds per
 * estimated joule move with the load alone and would flag every change of
 * load as a change of efficiency. */
#include <math.h>

#include "adpi_metric_instance.h"

#define ISSUE_METRIC "cpu_s_per_j"

struct efficiency_metric {
    const struct vigil_metric_desc *desc; /* NULL for an id not seen yet */
    gboolean cpu, energy;                 /* matches cpu_metrics, energy_metrics */
};
VIGIL_ADPI_METRICS_ENTRY(struct efficiency_metric);

/* Its keys, each filling the field of its name (the table at the end). */
struct efficiency_settings {
    char **cpu_metrics, **energy_metrics; /* globs */
    guint stabilisation_cycles;
    double k, min_relative_deviation;
    gboolean judge_estimated;
};
static const struct vigil_settings_table settings_table;

struct efficiency {
    struct adpi_metric_instance base; /* first: ADPI_METRIC_INSTANCE */
    struct efficiency_settings settings;
    struct vigil_running_stats stats;
};
ADPI_METRIC_INSTANCE(struct efficiency);

static void match(void *entry, uint32_t id, void *user)
{
    (void)id;
    const struct efficiency *e = user;
    struct efficiency_metric *m = entry;
    m->cpu = vigil_metric_name_matches(m->desc->name, (const char *const *)e->settings.cpu_metrics);
    m->energy =
        vigil_metric_name_matches(m->desc->name, (const char *const *)e->settings.energy_metrics);
}

static void *efficiency_create(const struct vigil_plugin_context *ctx, GError **error)
{
    struct efficiency *e = g_new0(struct efficiency, 1);
    return adpi_metric_instance_init(&e->base, &settings_table, &e->settings,
                                     sizeof(struct efficiency_metric), match, NULL, ctx, error);
}

/* This cycle's CPU seconds per joule; FALSE when it has none. */
static gboolean cycle_efficiency(const struct efficiency *e, double *x, gboolean *estimated)
{
    double cpu_s = 0, energy_j = 0;
    guint n_cpu = 0;
    *estimated = FALSE;
    for (uint32_t id = 1; id < vigil_adpi_metrics_end(&e->base.metrics); id++) {
        const struct efficiency_metric *m = vigil_adpi_metrics_get(&e->base.metrics, id);
        double delta;
        if (m == NULL || m->desc->kind != VIGIL_METRIC_COUNTER ||
            !vigil_cycle_metric_delta(vigil_cycle_values_get(&e->base.values, id), &delta))
            continue;
        if (m->cpu) {
            cpu_s += delta;
            n_cpu++;
        }
        if (m->energy) {
            energy_j += delta;
            *estimated |= m->desc->origin == VIGIL_METRIC_ESTIMATED;
        }
    }
    if (n_cpu == 0 || !(energy_j > 0))
        return FALSE;
    *x = cpu_s / energy_j;
    return TRUE;
}

/* FALSE for a normal value; else reports it. */
static gboolean judge(const struct efficiency *e, double x, gboolean estimated,
                      const struct vigil_issue_sink *sink)
{
    double mean = e->stats.mean, sigma = vigil_running_stats_stddev(&e->stats);
    /* Beyond k·σ and beyond the relative deviation: the wider bound wins. */
    double lo = MIN(mean - e->settings.k * sigma, mean * (1 - e->settings.min_relative_deviation));
    double hi = MAX(mean + e->settings.k * sigma, mean * (1 + e->settings.min_relative_deviation));
    enum vigil_health health;
    const char *how;
    if (x > hi) {
        health = VIGIL_HEALTH_ABNORMAL_GOOD;
        how = "more";
    } else if (x < lo) {
        health = VIGIL_HEALTH_ABNORMAL_BAD;
        how = "less";
    } else {
        return FALSE;
    }
    vigil_issue_report(sink, health, ISSUE_METRIC, x, lo, hi,
                       "%.6g CPU s per J%s, %s work per joule than usual: expected %.6g to "
                       "%.6g (mean %.6g, σ %.6g over %" G_GUINT64_FORMAT " cycles, k %g, at "
                       "least %g %% off)",
                       x, estimated ? " (estimated energy)" : "", how, lo, hi, mean, sigma,
                       (guint64)e->stats.n, e->settings.k,
                       e->settings.min_relative_deviation * 100);
    return TRUE;
}

static void efficiency_cycle(void *instance, uint64_t cycle, uint64_t end_ns,
                             const struct vigil_issue_sink *sink)
{
    (void)cycle;
    (void)end_ns;
    struct efficiency *e = instance;
    double x;
    gboolean estimated;
    if (cycle_efficiency(e, &x, &estimated) && (!estimated || e->settings.judge_estimated) &&
        (e->stats.n < e->settings.stabilisation_cycles || !judge(e, x, estimated, sink)))
        vigil_running_stats_add(&e->stats, x);
    vigil_cycle_values_next(&e->base.values);
}

static const struct vigil_adpi_ops efficiency_ops = {
    .samples = adpi_metric_instance_samples,
    .cycle = efficiency_cycle,
    .reconfigure = adpi_metric_instance_reconfigure,
};

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct efficiency_settings, cpu_metrics), .type = VIGIL_CONFIG_LIST,
     .default_value =
         "cpu.user_s;cpu.nice_s;cpu.system_s;cpu.irq_s;cpu.softirq_s;cpu.steal_s;process.cpu_s",
     .description = "CPU time counters (globs) whose increases are the work done"},
    {VIGIL_SETTING(struct efficiency_settings, energy_metrics), .type = VIGIL_CONFIG_LIST,
     .default_value = "node.energy_j;process.energy_j",
     .description = "energy counters (globs) whose increases are the energy used"},
    {VIGIL_SETTING(struct efficiency_settings, stabilisation_cycles), .type = VIGIL_CONFIG_INT,
     .default_value = "10", .min = 2, .max = 1000000,
     .description = "cycles with a value that only build the mean and σ"},
    {VIGIL_SETTING(struct efficiency_settings, k), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "3", .min = 0, .max = 100,
     .description = "standard deviations from the mean at which a value is abnormal"},
    {VIGIL_SETTING(struct efficiency_settings, min_relative_deviation), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.05", .min = 0, .max = 10,
     .description = "share of the mean a value must also be away from it to be abnormal"},
    {VIGIL_SETTING(struct efficiency_settings, judge_estimated), .type = VIGIL_CONFIG_BOOL,
     .default_value = "false",
     .description = "judge cycles whose energy is estimated too; vigil's estimate follows CPU "
                    "load, so the ratio then measures load, not efficiency"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct efficiency_settings, keys, NULL);

VIGIL_PLUGIN(VIGIL_PLUGIN_ADPI, .name = "energy-efficiency",
             .description = "CPU seconds per joule against their running mean ± k·σ",
             .settings = &settings_table, .create = efficiency_create,
             .destroy = adpi_metric_instance_destroy, .ops = &efficiency_ops);
