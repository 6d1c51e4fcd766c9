/* vigil — the helpers ADPIs share: issues, per-cycle metric values, globs,
 * per-metric tables. */
#include <stdarg.h>
#include <string.h>

#include "vigil/adpi.h"
#include "vigil/ontology.h"

/* A cut in the middle of a multi-byte character would leave text that a
 * JSON writer or a terminal rejects: end it before that character. */
static void end_at_valid_utf8(char *text)
{
    const char *end = NULL;
    if (!g_utf8_validate(text, -1, &end))
        text[end - text] = '\0';
}

void vigil_issue_report(const struct vigil_issue_sink *sink, enum vigil_health health,
                        const char *metric, double value, double expected_min, double expected_max,
                        const char *format, ...)
{
    if (sink == NULL || sink->report == NULL)
        return;
    struct vigil_issue issue = {
        .health = health,
        .value = value,
        .expected_min = expected_min,
        .expected_max = expected_max,
    };
    g_strlcpy(issue.metric, metric != NULL ? metric : "", sizeof issue.metric);
    end_at_valid_utf8(issue.metric);
    va_list args;
    va_start(args, format);
    g_vsnprintf(issue.message, sizeof issue.message, format, args);
    va_end(args);
    end_at_valid_utf8(issue.message);
    sink->report(sink->user, &issue);
}

/* What an ADPI keeps per metric ------------------------------------------------------------- */

void vigil_adpi_metrics_init(struct vigil_adpi_metrics *table, size_t entry_size)
{
    g_assert(entry_size >= sizeof(const struct vigil_metric_desc *));
    table->entries = g_array_new(FALSE, TRUE, (guint)entry_size);
    table->entry_size = entry_size;
}

void vigil_adpi_metrics_clear(struct vigil_adpi_metrics *table)
{
    if (table->entries != NULL)
        g_array_free(table->entries, TRUE);
    table->entries = NULL;
}

/* An entry's first member is its description (adpi.h). */
static const struct vigil_metric_desc **entry_desc(void *entry)
{
    return entry;
}

/* The entry of an id below the table's length, described or not. */
static void *entry_at(const struct vigil_adpi_metrics *table, uint32_t metric_id)
{
    return table->entries->data + (gsize)metric_id * table->entry_size;
}

/* Every sample of every tick comes through here, for each ADPI and the
 * cycle values: inlined into its callers in this file rather than called
 * through the library's PLT. */
static inline void *described_entry(const struct vigil_adpi_metrics *table, uint32_t metric_id)
{
    if (table->entries == NULL || metric_id == 0 || metric_id >= table->entries->len)
        return NULL;
    void *entry = entry_at(table, metric_id);
    return *entry_desc(entry) != NULL ? entry : NULL;
}

void *vigil_adpi_metrics_get(const struct vigil_adpi_metrics *table, uint32_t metric_id)
{
    return described_entry(table, metric_id);
}

uint32_t vigil_adpi_metrics_end(const struct vigil_adpi_metrics *table)
{
    return table->entries != NULL ? table->entries->len : 0;
}

/* A metric seen for the first time: described, if the catalogue can. */
static void *describe_entry(struct vigil_adpi_metrics *table, const vigil_metric_catalog *catalog,
                            uint32_t metric_id, vigil_adpi_metric_fn fn, void *user)
{
    const struct vigil_metric_desc *desc = vigil_metric_get(catalog, metric_id);
    if (desc == NULL)
        return NULL;
    /* Grown only for described ids: a sample with a stray id must not
     * make the table as long as that id. */
    if (metric_id >= table->entries->len)
        g_array_set_size(table->entries, metric_id + 1);
    void *entry = entry_at(table, metric_id);
    *entry_desc(entry) = desc;
    if (fn != NULL)
        fn(entry, metric_id, user);
    return entry;
}

static inline void *see_entry(struct vigil_adpi_metrics *table, const vigil_metric_catalog *catalog,
                              uint32_t metric_id, vigil_adpi_metric_fn fn, void *user)
{
    void *entry = described_entry(table, metric_id);
    return entry != NULL ? entry : describe_entry(table, catalog, metric_id, fn, user);
}

void *vigil_adpi_metrics_see_id(struct vigil_adpi_metrics *table,
                                const vigil_metric_catalog *catalog, uint32_t metric_id,
                                vigil_adpi_metric_fn fn, void *user)
{
    return see_entry(table, catalog, metric_id, fn, user);
}

void vigil_adpi_metrics_see(struct vigil_adpi_metrics *table, const vigil_metric_catalog *catalog,
                            const struct vigil_sample *samples, size_t n_samples,
                            vigil_adpi_metric_fn fn, void *user)
{
    for (size_t i = 0; i < n_samples; i++)
        see_entry(table, catalog, samples[i].metric_id, fn, user);
}

void vigil_adpi_metrics_rematch(struct vigil_adpi_metrics *table, vigil_adpi_metric_fn fn,
                                void *user)
{
    for (uint32_t id = 1; id < vigil_adpi_metrics_end(table); id++) {
        void *entry = vigil_adpi_metrics_get(table, id);
        if (entry != NULL)
            fn(entry, id, user);
    }
}

/* Per-cycle metric values ------------------------------------------------------------------- */

VIGIL_ADPI_METRICS_ENTRY(struct vigil_cycle_metric);

void vigil_cycle_values_init(struct vigil_cycle_values *cv)
{
    vigil_adpi_metrics_init(&cv->metrics, sizeof(struct vigil_cycle_metric));
}

void vigil_cycle_values_clear(struct vigil_cycle_values *cv)
{
    vigil_adpi_metrics_clear(&cv->metrics);
}

static void describe(void *entry, uint32_t metric_id, void *user)
{
    (void)user;
    struct vigil_cycle_metric *m = entry;
    m->metric_id = metric_id;
    m->kind = m->desc->kind;
}

static void add_sample(struct vigil_cycle_metric *m, const struct vigil_sample *s)
{
    gboolean has_previous = m->n > 0 || m->has_before;
    double previous = m->n > 0 ? m->last : m->before;
    if (has_previous && s->value != previous)
        m->changed = TRUE;
    if (has_previous && m->kind == VIGIL_METRIC_COUNTER && s->value < previous)
        m->went_back = TRUE;
    if (m->n == 0) {
        m->first = s->value;
        m->first_t_ns = s->t_ns;
    }
    m->n++;
    m->sum += s->value;
    m->last = s->value;
    m->last_t_ns = s->t_ns;
    m->flags |= s->flags & VIGIL_SAMPLE_UNCERTAIN;
}

void vigil_cycle_values_add(struct vigil_cycle_values *cv, const vigil_metric_catalog *catalog,
                            const struct vigil_sample *samples, size_t n_samples)
{
    for (size_t i = 0; i < n_samples; i++) {
        /* A sample of a metric the catalogue does not describe is left
         * out: there is no telling a counter from a gauge, and a wrong
         * guess would give a wrong value. */
        struct vigil_cycle_metric *m =
            see_entry(&cv->metrics, catalog, samples[i].metric_id, describe, NULL);
        if (m != NULL)
            add_sample(m, &samples[i]);
    }
}

const struct vigil_cycle_metric *vigil_cycle_values_get(const struct vigil_cycle_values *cv,
                                                        uint32_t metric_id)
{
    return described_entry(&cv->metrics, metric_id);
}

/* A counter's increase and the time it took, over this cycle. */
static gboolean counter_span(const struct vigil_cycle_metric *m, double *delta, uint64_t *dt_ns)
{
    if (m == NULL || m->kind != VIGIL_METRIC_COUNTER || m->n == 0 || m->went_back)
        return FALSE;
    if (m->has_before) {
        *delta = m->last - m->before;
        *dt_ns = m->last_t_ns - m->before_t_ns;
        return TRUE;
    }
    if (m->n < 2)
        return FALSE;
    *delta = m->last - m->first;
    *dt_ns = m->last_t_ns - m->first_t_ns;
    return TRUE;
}

gboolean vigil_cycle_metric_value(const struct vigil_cycle_metric *m, double *value)
{
    if (m == NULL || m->n == 0)
        return FALSE;
    if (m->kind != VIGIL_METRIC_COUNTER) {
        *value = m->sum / (double)m->n;
        return TRUE;
    }
    double delta;
    uint64_t dt_ns;
    /* Samples with one timestamp (or clocks gone wrong) give no rate. */
    if (!counter_span(m, &delta, &dt_ns) || dt_ns == 0 || dt_ns > (uint64_t)INT64_MAX)
        return FALSE;
    *value = delta / ((double)dt_ns / 1e9);
    return TRUE;
}

gboolean vigil_cycle_metric_delta(const struct vigil_cycle_metric *m, double *delta)
{
    uint64_t dt_ns;
    return counter_span(m, delta, &dt_ns);
}

void vigil_cycle_values_next(struct vigil_cycle_values *cv)
{
    for (uint32_t id = 1; id < vigil_adpi_metrics_end(&cv->metrics); id++) {
        struct vigil_cycle_metric *m = vigil_adpi_metrics_get(&cv->metrics, id);
        if (m == NULL)
            continue;
        if (m->n == 0) {
            m->cycles_missing++;
            /* A gap breaks a run: nobody saw it stay put through the gap. */
            m->cycles_unchanged = 0;
            continue;
        }
        m->cycles_missing = 0;
        if (m->has_before && !m->changed)
            m->cycles_unchanged++;
        else
            m->cycles_unchanged = 0;
        m->has_before = TRUE;
        m->before = m->last;
        m->before_t_ns = m->last_t_ns;
        m->n = 0;
        m->flags = 0;
        m->first = m->last = m->sum = 0;
        m->first_t_ns = m->last_t_ns = 0;
        m->went_back = FALSE;
        m->changed = FALSE;
    }
}

gboolean vigil_metric_name_matches(const char *name, const char *const *patterns)
{
    if (name == NULL || patterns == NULL)
        return FALSE;
    for (size_t i = 0; patterns[i] != NULL; i++)
        if (g_pattern_match_simple(patterns[i], name))
            return TRUE;
    return FALSE;
}

void vigil_ops_matching(const char *const *patterns, gboolean *judged)
{
    for (guint op = 0; op <= VIGIL_OP_MAX_ID; op++) {
        judged[op] = FALSE;
        if (!vigil_op_is_valid(op))
            continue;
        char *name =
            g_strdup_printf("%s.%s", vigil_layer_name(vigil_op_layer(op)), vigil_op_name(op));
        judged[op] = vigil_metric_name_matches(name, patterns);
        g_free(name);
    }
}
