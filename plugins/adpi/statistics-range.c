/* vigil — the statistics-range ADPI: values at the edge of their range.
 *
 * Each cycle, each metric of `metrics` has one value (a gauge's mean, a
 * counter's rate per second) that is judged against two ranges:
 *
 *   natural: what the quantity can be at all, where that is known. A node
 *            cpu.FIELD_s rate lies in [0, N] with N the CPUs (the cpuK.FIELD_s
 *            metrics in the catalogue), a per-CPU one and a disk's busy_s
 *            in [0, 1], a mem.*_bytes gauge in [0, mem.total_bytes],
 *            mem.swap_free_bytes in [0, mem.swap_total_bytes], a percentage
 *            in [0, 100]. A value in the top (or bottom, per `ends`)
 *            `percent` % of it is an issue: a saturated CPU, full memory.
 *   learned: for the metrics of `learn` too (by default the process's
 *            own: a node's values move with every program on it, so that
 *            one program's load would be flagged in another's name), the
 *            smallest and largest values of the first `training_cycles`
 *            cycles, then frozen, widened by `widen_percent` % of the
 *            largest of their spread and magnitudes, and by at least
 *            `margin_steps` of the metric's resolution: the smallest
 *            change seen between two of its samples (CPU time moves in
 *            10 ms ticks), as a rate over the cycle for a counter. The
 *            30 largest values of a noisy metric are not its largest
 *            ever, and a few ticks more than training saw are the
 *            counter's resolution, not news. A value outside it is new
 *            for this scope.
 *
 * One value gives at most one issue, the natural range's first, so that
 * the reasoner does not count one observation twice. */
#include <math.h>
#include <string.h>

#include "adpi_metric_instance.h"

enum natural {
    NATURAL_NONE,
    NATURAL_CPUS,    /* [0, CPUs]: a node's cpu.FIELD_s */
    NATURAL_ONE,     /* [0, 1]: a per-CPU time, a disk's busy time */
    NATURAL_MEMORY,  /* [0, mem.total_bytes] */
    NATURAL_SWAP,    /* [0, mem.swap_total_bytes] */
    NATURAL_PERCENT, /* [0, 100] */
};

/* In the order of the `ends` key's choices. */
enum ends { ENDS_TOP, ENDS_BOTTOM, ENDS_BOTH };

static gboolean watches(enum ends ends, enum ends end)
{
    return ends == end || ends == ENDS_BOTH;
}

struct range_metric {
    const struct vigil_metric_desc *desc; /* NULL for an id not seen yet */
    gboolean matches;
    enum natural natural;
    const char *cpu_field; /* NATURAL_CPUS: "user_s", inside desc->name */
    gboolean learns;       /* matches `learn`: judged against a learned range too */
    guint trained;         /* cycles with a value learned from */
    double min, max;
    gboolean has_raw;
    double raw;        /* the last sample */
    double resolution; /* the smallest change between two samples; 0 before one */
};
VIGIL_ADPI_METRICS_ENTRY(struct range_metric);

/* Its keys, each filling the field of its name (the table at the end). */
struct range_settings {
    char **metrics, **learn; /* globs */
    double percent, widen_percent;
    guint margin_steps, training_cycles;
    enum ends ends;
};
static const struct vigil_settings_table settings_table;

struct range {
    struct adpi_metric_instance base; /* first: ADPI_METRIC_INSTANCE */
    struct range_settings settings;
    uint32_t resolved; /* catalogue ids looked at */
    uint32_t mem_total_id, swap_total_id;
    double mem_total_bytes, swap_total_bytes; /* their latest samples; NAN before */
    GHashTable *cpus_by_field;                /* "user_s" → per-CPU metrics of it */
};
ADPI_METRIC_INSTANCE(struct range);

static void match(void *entry, uint32_t id, void *user)
{
    (void)id;
    const struct range *r = user;
    struct range_metric *m = entry;
    m->matches = vigil_metric_name_matches(m->desc->name, (const char *const *)r->settings.metrics);
    m->learns = vigil_metric_name_matches(m->desc->name, (const char *const *)r->settings.learn);
}

/* "cpuK.FIELD" (K digits): FIELD, else NULL. */
static const char *per_cpu_field(const char *name)
{
    if (!g_str_has_prefix(name, "cpu") || !g_ascii_isdigit(name[3]))
        return NULL;
    const char *p = name + 3;
    while (g_ascii_isdigit(*p))
        p++;
    return *p == '.' ? p + 1 : NULL;
}

static enum natural natural_of(const struct vigil_metric_desc *d, const char **cpu_field)
{
    const char *name = d->name;
    if (d->kind == VIGIL_METRIC_COUNTER) {
        if (g_str_has_prefix(name, "cpu.") && g_str_has_suffix(name, "_s") &&
            strchr(name + 4, '.') == NULL) {
            *cpu_field = name + 4;
            return NATURAL_CPUS;
        }
        const char *field = per_cpu_field(name);
        if ((field != NULL && g_str_has_suffix(field, "_s") && strchr(field, '.') == NULL) ||
            g_pattern_match_simple("disk.*.busy_s", name))
            return NATURAL_ONE;
    } else {
        if (strcmp(name, "mem.swap_free_bytes") == 0)
            return NATURAL_SWAP;
        /* The totals are the ranges' ends: always at the top of their own. */
        if (strcmp(name, "mem.total_bytes") != 0 && strcmp(name, "mem.swap_total_bytes") != 0 &&
            g_pattern_match_simple("mem.*_bytes", name))
            return NATURAL_MEMORY;
    }
    return strcmp(d->unit, "percent") == 0 ? NATURAL_PERCENT : NATURAL_NONE;
}

static void resolve(void *entry, uint32_t id, void *user)
{
    struct range *r = user;
    struct range_metric *m = entry;
    const struct vigil_metric_desc *d = m->desc;
    match(m, id, r);
    m->natural = natural_of(d, &m->cpu_field);
    if (strcmp(d->name, "mem.total_bytes") == 0)
        r->mem_total_id = id;
    else if (strcmp(d->name, "mem.swap_total_bytes") == 0)
        r->swap_total_id = id;
    const char *field = per_cpu_field(d->name);
    if (field != NULL) {
        gpointer n = g_hash_table_lookup(r->cpus_by_field, field);
        g_hash_table_insert(r->cpus_by_field, g_strdup(field),
                            GUINT_TO_POINTER(GPOINTER_TO_UINT(n) + 1));
    }
}

static void range_samples(void *instance, const vigil_metric_catalog *catalog,
                          const struct vigil_sample *samples, size_t n_samples)
{
    struct range *r = instance;
    /* The whole catalogue, not only this scope's samples: a node's CPUs
     * count even when only cpu.user_s is judged. */
    for (uint32_t count = vigil_metric_count(catalog); r->resolved < count;)
        vigil_adpi_metrics_see_id(&r->base.metrics, catalog, ++r->resolved, resolve, r);
    for (size_t i = 0; i < n_samples; i++) {
        if (samples[i].metric_id == 0)
            continue;
        struct range_metric *m = vigil_adpi_metrics_get(&r->base.metrics, samples[i].metric_id);
        /* Learned with the range and frozen with it: a metric that never
         * moved in training has no margin. */
        if (m != NULL && m->matches && m->learns && m->trained < r->settings.training_cycles) {
            double change = fabs(samples[i].value - m->raw);
            if (m->has_raw && change > 0)
                m->resolution = m->resolution > 0 ? MIN(m->resolution, change) : change;
            m->raw = samples[i].value;
            m->has_raw = TRUE;
        }
        if (samples[i].metric_id == r->mem_total_id)
            r->mem_total_bytes = samples[i].value;
        else if (samples[i].metric_id == r->swap_total_id)
            r->swap_total_bytes = samples[i].value;
    }
    vigil_cycle_values_add(&r->base.values, catalog, samples, n_samples);
}

/* The unit of a metric's cycle value: a counter's is a rate. */
static void value_unit(const struct vigil_metric_desc *d, char *unit, size_t size)
{
    g_snprintf(unit, size, d->kind == VIGIL_METRIC_COUNTER ? "%s/s" : "%s", d->unit);
}

/* The natural range now, with what it rests on; FALSE when none is known. */
static gboolean natural_range(const struct range *r, const struct range_metric *m, double *lo,
                              double *hi, char *why, size_t why_size)
{
    *lo = 0;
    why[0] = '\0';
    switch (m->natural) {
    case NATURAL_CPUS: {
        guint n = GPOINTER_TO_UINT(g_hash_table_lookup(r->cpus_by_field, m->cpu_field));
        *hi = n;
        g_snprintf(why, why_size, " (%u CPUs)", n);
        return n > 0;
    }
    case NATURAL_ONE:
        *hi = 1;
        return TRUE;
    case NATURAL_MEMORY:
        *hi = r->mem_total_bytes;
        g_strlcpy(why, " (mem.total_bytes)", why_size);
        return !isnan(*hi);
    case NATURAL_SWAP:
        *hi = r->swap_total_bytes;
        g_strlcpy(why, " (mem.swap_total_bytes)", why_size);
        return *hi > 0;
    case NATURAL_PERCENT:
        *hi = 100;
        return TRUE;
    case NATURAL_NONE:
    default:
        return FALSE;
    }
}

static gboolean check_natural(const struct range *r, const struct range_metric *m, double value,
                              const struct vigil_issue_sink *sink)
{
    double lo, hi;
    char why[64];
    if (!natural_range(r, m, &lo, &hi, why, sizeof why))
        return FALSE;
    const struct range_settings *s = &r->settings;
    double margin = s->percent / 100.0 * (hi - lo);
    double ok_lo = watches(s->ends, ENDS_BOTTOM) ? lo + margin : lo;
    double ok_hi = watches(s->ends, ENDS_TOP) ? hi - margin : hi;
    const char *end;
    if (watches(s->ends, ENDS_TOP) && value > ok_hi)
        end = "top";
    else if (watches(s->ends, ENDS_BOTTOM) && value < ok_lo)
        end = "bottom";
    else
        return FALSE;
    char unit[VIGIL_METRIC_TEXT_MAX + 3];
    value_unit(m->desc, unit, sizeof unit);
    vigil_issue_report(sink, VIGIL_HEALTH_ABNORMAL_OTHER, m->desc->name, value, ok_lo, ok_hi,
                       "%s at %.6g %s, in the %s %g %% of its natural range [%.6g, %.6g] %s%s; "
                       "expected %.6g to %.6g %s",
                       m->desc->name, value, unit, end, s->percent, lo, hi, unit, why, ok_lo, ok_hi,
                       unit);
    return TRUE;
}

/* The metric's resolution in the unit of its cycle value: a counter's
 * smallest change as a rate over this cycle. */
static double resolution_of(const struct range_metric *m, const struct vigil_cycle_metric *cm)
{
    if (m->desc->kind != VIGIL_METRIC_COUNTER)
        return m->resolution;
    uint64_t from = cm->has_before ? cm->before_t_ns : cm->first_t_ns;
    double cycle_s = (double)(cm->last_t_ns - from) / 1e9;
    return cycle_s > 0 ? m->resolution / cycle_s : 0;
}

static void check_learned(const struct range *r, const struct range_metric *m, double value,
                          double resolution, const struct vigil_issue_sink *sink)
{
    double spread = MAX(m->max - m->min, MAX(fabs(m->max), fabs(m->min)));
    /* All zeros in training of a metric that never moved leave no margin:
     * anything else is new. */
    const struct range_settings *s = &r->settings;
    double margin = MAX(s->widen_percent / 100.0 * spread, s->margin_steps * resolution);
    double lo = m->min - margin, hi = m->max + margin;
    if (value >= lo && value <= hi)
        return;
    char unit[VIGIL_METRIC_TEXT_MAX + 3];
    value_unit(m->desc, unit, sizeof unit);
    vigil_issue_report(sink, VIGIL_HEALTH_ABNORMAL_OTHER, m->desc->name, value, lo, hi,
                       "%s at %.6g %s, outside its learned range [%.6g, %.6g] %s: %.6g to %.6g "
                       "over its first %u cycles, widened by %g %% or %u steps of %.6g",
                       m->desc->name, value, unit, lo, hi, unit, m->min, m->max, m->trained,
                       s->widen_percent, s->margin_steps, resolution);
}

static void learn(struct range_metric *m, double value)
{
    m->min = m->trained == 0 ? value : MIN(m->min, value);
    m->max = m->trained == 0 ? value : MAX(m->max, value);
    m->trained++;
}

static void range_check(void *instance, void *entry, const struct vigil_cycle_metric *cm,
                        const struct vigil_issue_sink *sink)
{
    struct range *r = instance;
    struct range_metric *m = entry;
    double value;
    if (!m->matches || !vigil_cycle_metric_value(cm, &value))
        return;
    gboolean reported = check_natural(r, m, value, sink);
    if (!m->learns)
        return;
    if (m->trained < r->settings.training_cycles)
        learn(m, value);
    else if (!reported)
        check_learned(r, m, value, resolution_of(m, cm), sink);
}

static void *range_create(const struct vigil_plugin_context *ctx, GError **error)
{
    struct range *r = g_new0(struct range, 1);
    if (adpi_metric_instance_init(&r->base, &settings_table, &r->settings,
                                  sizeof(struct range_metric), match, range_check, ctx,
                                  error) == NULL)
        return NULL;
    r->mem_total_bytes = r->swap_total_bytes = NAN;
    r->cpus_by_field = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return r;
}

static void range_destroy(void *instance)
{
    struct range *r = instance;
    g_hash_table_destroy(r->cpus_by_field);
    adpi_metric_instance_destroy(r);
}

static const struct vigil_adpi_ops range_ops = {
    .samples = range_samples,
    .cycle = adpi_metric_instance_cycle,
    .reconfigure = adpi_metric_instance_reconfigure,
};

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct range_settings, metrics), .type = VIGIL_CONFIG_LIST,
     .default_value = "process.cpu_s;mem.used_bytes",
     .description = "metrics (globs) whose per-cycle values are judged against their natural "
                    "range, where one is known"},
    {VIGIL_SETTING(struct range_settings, learn), .type = VIGIL_CONFIG_LIST,
     .default_value = "process.*",
     .description = "metrics (globs) of `metrics` judged against the range learned over "
                    "training_cycles too; a node's values move with every program on it"},
    {VIGIL_SETTING(struct range_settings, percent), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "5", .min = 0.01, .max = 50,
     .description = "share of a natural range at its ends that is an issue"},
    {VIGIL_SETTING(struct range_settings, widen_percent), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "100", .min = 0, .max = 10000,
     .description = "the learned range is widened on each side by this share of the largest of "
                    "its spread and magnitudes"},
    {VIGIL_SETTING(struct range_settings, margin_steps), .type = VIGIL_CONFIG_INT,
     .default_value = "4", .min = 0, .max = 1000000,
     .description = "the learned range is widened on each side by at least this many of the "
                    "metric's smallest changes (CPU time moves in 10 ms ticks)"},
    {VIGIL_SETTING(struct range_settings, training_cycles), .type = VIGIL_CONFIG_INT,
     .default_value = "30", .min = 1, .max = 1000000,
     .description = "cycles with a value from which a metric's range is learned"},
    {VIGIL_SETTING(struct range_settings, ends), .type = VIGIL_CONFIG_ENUM, .default_value = "top",
     .choices = "top|bottom|both", .description = "which ends of a natural range are issues"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct range_settings, keys, NULL);

VIGIL_PLUGIN(
    VIGIL_PLUGIN_ADPI, .name = "statistics-range",
    .description = "values at the ends of their natural range or outside their learned one",
    .settings = &settings_table, .create = range_create, .destroy = range_destroy,
    .ops = &range_ops);
