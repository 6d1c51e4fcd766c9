/* vigil — anomaly-detection plugins (ADPIs).
 *
 * An ADPI is a plugin of kind VIGIL_PLUGIN_ADPI (plugin.h) whose `ops`
 * point to a struct vigil_adpi_ops. vigild creates one instance per
 * reasoner that lists it in its `adpis` key: one for the node reasoner,
 * and one for each registered process's reasoner, so that what an
 * instance learns is about one process or one node. Each instance is fed:
 *
 *   samples:  every tick, the statistics of its scope: the node's samples
 *             for a node ADPI, the process's own (process.*) for a process
 *             ADPI;
 *   activity: every activity of its scope (a process ADPI: the process's;
 *             a node ADPI: every process's), times in CLOCK_MONOTONIC ns;
 *   node_load: a process ADPI only, if it asks: at each cycle's close,
 *             before `cycle`, the node's load over that cycle, which a
 *             process's figures are judged in (a call slowed by other
 *             programs is not the process's anomaly);
 *   cycle:    at the end of each reasoner cycle (1 s by default), the
 *             issues it sees in that cycle, each with a health state, the
 *             metric, the value, the range expected and a message.
 *
 * An ADPI reports issues, not observations: a cycle in which all is as
 * expected reports nothing. What it learns (ranges, means, histograms)
 * survives a configuration reload: vigild calls reconfigure() with the new
 * values instead of making a new instance. */
#ifndef VIGIL_ADPI_H
#define VIGIL_ADPI_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#include "vigil/activity.h"
#include "vigil/health.h"
#include "vigil/metric.h"
#include "vigil/plugin.h"

struct vigil_node_load;

#define VIGIL_ISSUE_METRIC_MAX  127
#define VIGIL_ISSUE_MESSAGE_MAX 255

struct vigil_issue {
    enum vigil_health health;
    /* A metric's name ("energy.node_j") or, for an activity ADPI, the
     * operation ("posix.write"). */
    char metric[VIGIL_ISSUE_METRIC_MAX + 1];
    double value;
    double expected_min, expected_max; /* NAN for an open end */
    char message[VIGIL_ISSUE_MESSAGE_MAX + 1];
};

struct vigil_issue_sink {
    void (*report)(void *user, const struct vigil_issue *issue);
    void *user;
};

/* Fills an issue and hands it to the sink; names and messages too long
 * are cut. */
void vigil_issue_report(const struct vigil_issue_sink *sink, enum vigil_health health,
                        const char *metric, double value, double expected_min, double expected_max,
                        const char *format, ...) G_GNUC_PRINTF(7, 8);

struct vigil_adpi_ops {
    /* Optional: one tick's samples of the instance's scope. */
    void (*samples)(void *instance, const vigil_metric_catalog *catalog,
                    const struct vigil_sample *samples, size_t n_samples);
    /* Optional: one activity of the instance's scope. */
    void (*activity)(void *instance, const struct vigil_activity *activity);
    /* The end of cycle `cycle` at `end_ns`: reports its issues. */
    void (*cycle)(void *instance, uint64_t cycle, uint64_t end_ns,
                  const struct vigil_issue_sink *sink);
    /* Optional: takes new configuration values from the next cycle on,
     * keeping what was learned. Without it, a changed section makes vigild
     * create a new instance, which starts learning again. FALSE with error
     * set keeps the old values. */
    gboolean (*reconfigure)(void *instance, const struct vigil_plugin_context *context,
                            GError **error);
    /* Optional, for process ADPIs: the node's load over the cycle about to
     * close (vigil/node_load.h), given before cycle(). Worked out once per
     * cycle for all processes, from the node's samples a node ADPI gets
     * through samples(). */
    void (*node_load)(void *instance, const struct vigil_node_load *load);
};

/* What an ADPI keeps per metric -------------------------------------------------------------- */

/* A table of the ADPI's own entries, by metric id (0 unused). An entry's
 * first member must be `const struct vigil_metric_desc *desc`: NULL until
 * the catalogue describes the id, its description after (the catalogue
 * outlives every ADPI). The rest of an entry starts zeroed and is the
 * ADPI's; the table only sets desc. */
struct vigil_adpi_metrics {
    GArray *entries;
    size_t entry_size; /* kept here: GArray's asks a call every lookup */
};

/* Fails the build when `type` does not start with desc, which the table
 * reads without knowing the type. */
#define VIGIL_ADPI_METRICS_ENTRY(type) G_STATIC_ASSERT(G_STRUCT_OFFSET(type, desc) == 0)

/* Derives what the ADPI needs from an entry's description, such as
 * whether the name matches its globs. */
typedef void (*vigil_adpi_metric_fn)(void *entry, uint32_t metric_id, void *user);

void vigil_adpi_metrics_init(struct vigil_adpi_metrics *table, size_t entry_size);
void vigil_adpi_metrics_clear(struct vigil_adpi_metrics *table);
/* The entry of a metric, described and handed to `fn` (optional) the first
 * time the catalogue knows it; NULL while it does not, in which case the
 * catalogue is asked again next time. */
void *vigil_adpi_metrics_see_id(struct vigil_adpi_metrics *table,
                                const vigil_metric_catalog *catalog, uint32_t metric_id,
                                vigil_adpi_metric_fn fn, void *user);
/* vigil_adpi_metrics_see_id for each sample's metric. */
void vigil_adpi_metrics_see(struct vigil_adpi_metrics *table, const vigil_metric_catalog *catalog,
                            const struct vigil_sample *samples, size_t n_samples,
                            vigil_adpi_metric_fn fn, void *user);
/* Hands every described entry to `fn` again, in id order: after a
 * reconfiguration changed the globs. */
void vigil_adpi_metrics_rematch(struct vigil_adpi_metrics *table, vigil_adpi_metric_fn fn,
                                void *user);
/* The entry of a described metric, else NULL. */
void *vigil_adpi_metrics_get(const struct vigil_adpi_metrics *table, uint32_t metric_id);
/* One past the largest id that may have an entry: loop ids from 1 below it
 * and skip those whose vigil_adpi_metrics_get is NULL. */
uint32_t vigil_adpi_metrics_end(const struct vigil_adpi_metrics *table);

/* Per-cycle values of metrics -------------------------------------------------------------- */

/* What most statistics ADPIs judge: one value per metric per cycle. A
 * gauge's is its mean over the cycle; a counter's is its rate per second
 * from the last sample of the cycle before to the last of this one (from
 * the first of this one when there is none before). Counters that went
 * back are flagged, not turned into a negative rate. */
struct vigil_cycle_metric {
    const struct vigil_metric_desc *desc; /* first: an entry of vigil_adpi_metrics */
    uint32_t metric_id;
    enum vigil_metric_kind kind;
    uint32_t n;     /* samples in this cycle */
    uint32_t flags; /* VIGIL_SAMPLE_UNCERTAIN if a sample in it was */
    double first, last, sum;
    uint64_t first_t_ns, last_t_ns;
    gboolean has_before; /* the last sample of an earlier cycle */
    double before;
    uint64_t before_t_ns;
    gboolean went_back;        /* a counter: a sample lower than the one before it */
    gboolean changed;          /* a sample differed from the one before it */
    uint32_t cycles_unchanged; /* cycles in a row in which it did not change */
    uint32_t cycles_missing;   /* cycles in a row with no sample, after it had some */
};

struct vigil_cycle_values {
    struct vigil_adpi_metrics metrics; /* struct vigil_cycle_metric */
};

void vigil_cycle_values_init(struct vigil_cycle_values *cv);
void vigil_cycle_values_clear(struct vigil_cycle_values *cv);
void vigil_cycle_values_add(struct vigil_cycle_values *cv, const vigil_metric_catalog *catalog,
                            const struct vigil_sample *samples, size_t n_samples);
/* The metric's state, or NULL when it never had a sample. */
const struct vigil_cycle_metric *vigil_cycle_values_get(const struct vigil_cycle_values *cv,
                                                        uint32_t metric_id);
/* Its value for this cycle (mean or rate), or FALSE when there is none:
 * no sample this cycle, a counter with a single sample ever, or one that
 * went back. */
gboolean vigil_cycle_metric_value(const struct vigil_cycle_metric *m, double *value);
/* A counter's increase over this cycle (last minus the last before, or
 * minus the first of this cycle when there is none before); FALSE as for
 * the value, and for a gauge. */
gboolean vigil_cycle_metric_delta(const struct vigil_cycle_metric *m, double *delta);
/* Closes the cycle: updates the unchanged and missing counts and makes
 * this cycle's last sample the one before. Call after the ADPI's cycle()
 * has read the values. */
void vigil_cycle_values_next(struct vigil_cycle_values *cv);

/* Running mean and standard deviation (Welford): stable for long runs. */
struct vigil_running_stats {
    uint64_t n;
    double mean, m2;
};

static inline void vigil_running_stats_add(struct vigil_running_stats *s, double x)
{
    s->n++;
    double d = x - s->mean;
    s->mean += d / (double)s->n;
    s->m2 += d * (x - s->mean);
}

static inline double vigil_running_stats_stddev(const struct vigil_running_stats *s)
{
    return s->n > 1 ? sqrt(s->m2 / (double)(s->n - 1)) : 0.0;
}

/* Whether `name` matches one of `patterns` (shell globs: "cpu.*_s",
 * "disk.*"). */
gboolean vigil_metric_name_matches(const char *name, const char *const *patterns);

/* judged[op] for every operation id: whether its "layer.op" name
 * ("posix.read") matches one of `patterns`; FALSE for ids that are no
 * operation. `judged` has VIGIL_OP_MAX_ID + 1 entries (vigil/ontology.h). */
void vigil_ops_matching(const char *const *patterns, gboolean *judged);

#endif
