/* vigil — the latency-histogram ADPI: how long each operation's calls take.
 *
 * Per operation ("posix.write"), the durations of its first `learn_calls`
 * calls go into a log-linear histogram: below 16 ns one bucket per ns,
 * above it each power of two split into 16 equal buckets, so a bucket is
 * at most 1/16 of its values wide whatever their scale, in a fixed array
 * filled without allocating per call. The `low_quantile` and
 * `high_quantile` of that histogram, taken at their bucket's bounds, are
 * the operation's thresholds from then on.
 *
 * Each cycle, when an operation had at least `min_calls` calls: more than
 * `max_outer_share` of them above the high threshold is ABNORMAL_BAD (the
 * calls got slow), more than that below the low one ABNORMAL_GOOD.
 *
 * A node's own speed moves all its calls by tens of percent: a virtual
 * machine's host gets busy, a CPU changes its clock. Where the learned
 * durations are narrow, the low quantile lies a few percent below the
 * median (a write of 4 KiB to the page cache: 5th percentile 700 ns,
 * median 820 ns), and such a change would flag every cycle for hours.
 * So a threshold lies at least `min_ratio` times the learned median away
 * from it: a call is slow only beyond the median times it, fast only
 * below the median divided by it.
 *
 * A change that lasts is not an anomaly either, but a new phase: when an
 * operation has had issues in about `relearn_cycles` judged cycles, its
 * thresholds are learned again from its next `learn_calls` calls (as
 * call-rate learns its ranges again), so that a node that got three times
 * slower for an hour, or a program that moved to another file system, is
 * flagged for its first cycles and not for the hour. The cycles with an
 * issue are counted with a decay, each judged cycle keeping 1 - 1/(3 N)
 * of the count (N = relearn_cycles), and the thresholds go when it
 * reaches N: after 1.2 N cycles in a row (37 for 30), or when a third of
 * the cycles or more have issues for longer. Cycles in a row alone would
 * miss a change that leaves the calls near a threshold, where the cycles
 * flip between an issue and none (capture-eval's seed-1 run replayed as if
 * the node got 1.6 times as fast: 139 cycles flagged, never 30 in a row).
 *
 * Other programs on the node slow a process's calls too: a thread among N
 * runnable per CPU waits for its turn, a write waits behind another's
 * fsync on a busy disk. With `weigh_node_load`, each cycle's thresholds
 * move by how much more (or less) loaded the node is than while the
 * thresholds were learned (the node's samples, vigil/node_load.h): the
 * cycle's load factor over the mean factor of the learning cycles. A call
 * is slow only beyond what the node's load explains. The cycle's calls are
 * kept in a histogram of their own until the cycle's load is known, so a
 * moved threshold is applied at its bucket's bounds: a call in the
 * threshold's bucket is neither slow nor fast (1/16 of the value at most). */
#include <math.h>
#include <string.h>

#include "vigil/node_load.h"

#include "adpi_op_instance.h"

#define LINEAR_NS   16u /* durations below it have a bucket each */
#define SUB_BUCKETS 16u /* per power of two above it */
#define SUB_BITS    4u  /* log2(SUB_BUCKETS) */
/* Powers of two from 2^4 to 2^63. */
#define N_BUCKETS (LINEAR_NS + (64u - SUB_BITS) * SUB_BUCKETS)

struct latency_op {
    guint32 counts[N_BUCKETS];
    guint64 learned; /* calls in the histogram */
    gboolean ready;  /* learning is over: the thresholds hold */
    guint64 low_ns;  /* calls below it are fast */
    guint64 high_ns; /* calls above it are slow */
    /* The threshold is min_ratio from the median, not the quantile. */
    gboolean low_by_median, high_by_median;
    double issue_score; /* judged cycles with an issue, decayed */
    /* The node's load factor while learning: the sum over learning cycles
     * of the factor times the calls learned in them, and those calls. */
    double learn_load_sum;
    guint64 learn_load_calls, learned_in_cycle;
    /* This cycle's judged calls, by bucket. */
    guint64 n;
    guint32 cycle_counts[N_BUCKETS];
};

/* Its keys, each filling the field of its name (the table at the end). */
struct latency_settings {
    char **operations; /* globs of "layer.op" */
    guint64 learn_calls, min_calls;
    double low_quantile, high_quantile, max_outer_share, min_ratio;
    guint relearn_cycles;
    gboolean weigh_node_load;
};
static const struct vigil_settings_table settings_table;

struct latency {
    struct adpi_op_instance base; /* first: ADPI_OP_INSTANCE */
    struct latency_settings settings;
    struct latency_op *ops[VIGIL_OP_MAX_ID + 1]; /* NULL until its first call */
    double cycle_load_factor; /* of the cycle about to close (node_load), else NAN */
};
ADPI_OP_INSTANCE(struct latency);

static guint bucket_of(guint64 ns)
{
    if (ns < LINEAR_NS)
        return (guint)ns;
    guint power = 63u - (guint)__builtin_clzll(ns); /* ≥ SUB_BITS */
    guint sub = (guint)(ns >> (power - SUB_BITS)) & (SUB_BUCKETS - 1);
    return LINEAR_NS + (power - SUB_BITS) * SUB_BUCKETS + sub;
}

static guint64 bucket_low_ns(guint bucket)
{
    if (bucket < LINEAR_NS)
        return bucket;
    guint power = SUB_BITS + (bucket - LINEAR_NS) / SUB_BUCKETS;
    guint64 sub = (bucket - LINEAR_NS) % SUB_BUCKETS;
    return (SUB_BUCKETS + sub) << (power - SUB_BITS);
}

/* The largest duration in the bucket. */
static guint64 bucket_high_ns(guint bucket)
{
    return bucket + 1 < N_BUCKETS ? bucket_low_ns(bucket + 1) - 1 : G_MAXUINT64;
}

/* The bucket holding the q-quantile of the learned calls: the one where
 * the ceil(q·n)-th smallest call is. */
static guint quantile_bucket(const struct latency_op *op, double q)
{
    double rank = ceil(q * (double)op->learned);
    guint64 want = rank < 1 ? 1 : (guint64)rank;
    guint64 seen = 0;
    for (guint b = 0; b < N_BUCKETS; b++) {
        seen += op->counts[b];
        if (seen >= want)
            return b;
    }
    return N_BUCKETS - 1;
}

/* `ns` times `scale`, in whole ns. */
static guint64 scaled_ns(guint64 ns, double scale)
{
    double x = (double)ns * scale;
    return x >= 1.8e19 ? G_MAXUINT64 : (guint64)x;
}

/* The median's bucket bounds, widened by min_ratio, so that a call in the
 * median's bucket is never slow or fast by the ratio alone. */
static void set_thresholds(const struct latency *l, struct latency_op *op)
{
    guint median = quantile_bucket(op, 0.5);
    guint64 low = bucket_low_ns(quantile_bucket(op, l->settings.low_quantile));
    guint64 low_by_median = scaled_ns(bucket_low_ns(median), 1 / l->settings.min_ratio);
    guint64 high = bucket_high_ns(quantile_bucket(op, l->settings.high_quantile));
    guint64 high_by_median = scaled_ns(bucket_high_ns(median), l->settings.min_ratio);
    op->low_by_median = low_by_median < low;
    op->low_ns = MIN(low, low_by_median);
    op->high_by_median = high_by_median > high;
    op->high_ns = MAX(high, high_by_median);
    op->ready = TRUE;
}

static void *latency_create(const struct vigil_plugin_context *ctx, GError **error)
{
    struct latency *l = g_new0(struct latency, 1);
    if (adpi_op_instance_init(&l->base, &settings_table, &l->settings, &l->settings.operations, ctx,
                              error) == NULL)
        return NULL;
    l->cycle_load_factor = NAN;
    return l;
}

static void latency_destroy(void *instance)
{
    struct latency *l = instance;
    for (guint op = 0; op <= VIGIL_OP_MAX_ID; op++)
        g_free(l->ops[op]);
    adpi_op_instance_destroy(l);
}

/* Learned thresholds are kept, but follow new quantiles (the histogram is
 * still there); an operation still learning stops when it has enough. */
static gboolean latency_reconfigure(void *instance, const struct vigil_plugin_context *ctx,
                                    GError **error)
{
    struct latency *l = instance;
    if (!adpi_op_instance_reconfigure(l, ctx, error))
        return FALSE;
    for (guint op = 0; op <= VIGIL_OP_MAX_ID; op++)
        if (l->ops[op] != NULL &&
            (l->ops[op]->ready || l->ops[op]->learned >= l->settings.learn_calls))
            set_thresholds(l, l->ops[op]);
    return TRUE;
}

static void latency_activity(void *instance, const struct vigil_activity *a)
{
    struct latency *l = instance;
    unsigned op_id = a->op;
    if (!vigil_op_is_valid(op_id) || vigil_op_layer(op_id) != a->layer || !l->base.judged[op_id])
        return;
    struct latency_op *op = l->ops[op_id];
    if (op == NULL)
        op = l->ops[op_id] = g_new0(struct latency_op, 1);
    guint64 ns = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
    if (!op->ready) {
        op->counts[bucket_of(ns)]++;
        op->learned_in_cycle++;
        if (++op->learned >= l->settings.learn_calls)
            set_thresholds(l, op);
        return;
    }
    op->n++;
    op->cycle_counts[bucket_of(ns)]++;
}

/* "35.8 µs": a duration for people. */
static void format_ns(guint64 ns, char *text, size_t size)
{
    if (ns < 1000)
        g_snprintf(text, size, "%" G_GUINT64_FORMAT " ns", ns);
    else if (ns < 1000000)
        g_snprintf(text, size, "%.3g µs", (double)ns / 1e3);
    else if (ns < 1000000000)
        g_snprintf(text, size, "%.3g ms", (double)ns / 1e6);
    else
        g_snprintf(text, size, "%.3g s", (double)ns / 1e9);
}

/* "95th", "51st", "99.5th". */
static const char *ordinal_suffix(double percent)
{
    /* 0.57 × 100 is 56.99999999999999 in doubles. */
    double whole = round(percent);
    if (fabs(percent - whole) > 1e-9)
        return "th";
    long n = (long)whole;
    if (n % 100 >= 11 && n % 100 <= 13)
        return "th";
    switch (n % 10) {
    case 1:
        return "st";
    case 2:
        return "nd";
    case 3:
        return "rd";
    default:
        return "th";
    }
}

/* A cycle's thresholds, moved by the node's load. */
struct judged {
    guint64 low_ns, high_ns;
    double scale; /* of the learned thresholds: 1 without the node's load */
};

/* TRUE when it reported an issue. */
static gboolean report_share(const struct latency *l, const struct latency_op *op,
                             const struct judged *j, const char *name, guint64 outer, gboolean slow,
                             const struct vigil_issue_sink *sink)
{
    double share = (double)outer / (double)op->n;
    if (!(share > l->settings.max_outer_share))
        return FALSE;
    char threshold[32], load[48] = "";
    format_ns(slow ? j->high_ns : j->low_ns, threshold, sizeof threshold);
    if (slow ? j->scale > 1 : j->scale < 1)
        g_snprintf(load, sizeof load, " times %.3g for the node's load", j->scale);
    /* What the threshold is: "the 95th percentile", "2 times the median". */
    char what[48];
    double quantile = slow ? l->settings.high_quantile : l->settings.low_quantile;
    if (slow ? op->high_by_median : op->low_by_median)
        g_snprintf(what, sizeof what, slow ? "%g times the median" : "the median over %g",
                   l->settings.min_ratio);
    else
        g_snprintf(what, sizeof what, "the %g%s percentile", quantile * 100,
                   ordinal_suffix(quantile * 100));
    vigil_issue_report(sink, slow ? VIGIL_HEALTH_ABNORMAL_BAD : VIGIL_HEALTH_ABNORMAL_GOOD, name,
                       share, 0, l->settings.max_outer_share,
                       "%.3g %% of %" G_GUINT64_FORMAT " %s calls took %s than %s, %s of the "
                       "first %" G_GUINT64_FORMAT "%s; expected at most %g %%",
                       share * 100, op->n, name, slow ? "more" : "less", threshold, what,
                       op->learned, load, l->settings.max_outer_share * 100);
    return TRUE;
}

/* How many times longer than on an idle node the node's load may make a
 * call this cycle, NAN when the samples do not say. A thread among N
 * runnable per CPU gets 1/N of one. */
static double load_factor(const struct vigil_node_load *load)
{
    double run_queue = vigil_node_load_run_queue(load);
    if (!isfinite(run_queue))
        return NAN;
    return MAX(run_queue, 1.0);
}

static void latency_node_load(void *instance, const struct vigil_node_load *load)
{
    struct latency *l = instance;
    l->cycle_load_factor = load_factor(load);
}

/* TRUE when the cycle's calls were an issue. */
static gboolean judge(const struct latency *l, guint op_id, struct latency_op *op, double factor,
                      const struct vigil_issue_sink *sink)
{
    struct judged j = {.low_ns = op->low_ns, .high_ns = op->high_ns, .scale = 1};
    double learned =
        op->learn_load_calls > 0 ? op->learn_load_sum / (double)op->learn_load_calls : NAN;
    if (l->settings.weigh_node_load && isfinite(factor) && learned > 0) {
        /* Only ever wider: more load makes calls slower, less load faster. */
        j.scale = factor / learned;
        if (j.scale > 1)
            j.high_ns = scaled_ns(op->high_ns, j.scale);
        else
            j.low_ns = scaled_ns(op->low_ns, j.scale);
    }
    /* Only buckets wholly beyond a threshold count: with the learned
     * thresholds, which are buckets' bounds, that is exact. */
    guint64 slow = 0, fast = 0;
    for (guint b = 0; b < N_BUCKETS; b++) {
        if (op->cycle_counts[b] == 0)
            continue;
        if (bucket_low_ns(b) > j.high_ns)
            slow += op->cycle_counts[b];
        else if (bucket_high_ns(b) < j.low_ns)
            fast += op->cycle_counts[b];
    }
    char name[64];
    g_snprintf(name, sizeof name, "%s.%s", vigil_layer_name(vigil_op_layer(op_id)),
               vigil_op_name(op_id));
    gboolean slow_issue = report_share(l, op, &j, name, slow, TRUE, sink);
    gboolean fast_issue = report_share(l, op, &j, name, fast, FALSE, sink);
    return slow_issue || fast_issue;
}

/* A new phase: the operation's thresholds are learned again. */
static void relearn(struct latency_op *op)
{
    memset(op->counts, 0, sizeof op->counts);
    op->learned = 0;
    op->ready = FALSE;
    op->learn_load_sum = 0;
    op->learn_load_calls = 0;
    op->issue_score = 0;
}

static void latency_cycle(void *instance, uint64_t cycle, uint64_t end_ns,
                          const struct vigil_issue_sink *sink)
{
    (void)cycle;
    (void)end_ns;
    struct latency *l = instance;
    double factor = l->cycle_load_factor;
    l->cycle_load_factor = NAN; /* a cycle without its load judges without it */
    for (guint op_id = 0; op_id <= VIGIL_OP_MAX_ID; op_id++) {
        struct latency_op *op = l->ops[op_id];
        if (op == NULL)
            continue;
        /* Before judging: learning may have ended in this cycle. */
        if (op->learned_in_cycle > 0 && isfinite(factor)) {
            op->learn_load_sum += factor * (double)op->learned_in_cycle;
            op->learn_load_calls += op->learned_in_cycle;
        }
        op->learned_in_cycle = 0;
        if (!op->ready || op->n == 0)
            continue;
        if (op->n >= l->settings.min_calls && l->base.judged[op_id]) {
            double keep = 1 - 1 / (3.0 * l->settings.relearn_cycles);
            op->issue_score = op->issue_score * keep + (judge(l, op_id, op, factor, sink) ? 1 : 0);
            /* 1e-9: a count that reaches N but for rounding reaches it. */
            if (op->issue_score + 1e-9 >= l->settings.relearn_cycles)
                relearn(op);
        }
        op->n = 0;
        memset(op->cycle_counts, 0, sizeof op->cycle_counts);
    }
}

static const struct vigil_adpi_ops latency_ops = {
    .activity = latency_activity,
    .cycle = latency_cycle,
    .reconfigure = latency_reconfigure,
    .node_load = latency_node_load,
};

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct latency_settings, operations), .type = VIGIL_CONFIG_LIST,
     .default_value = "*",
     .description = "operations (globs on LAYER.OP: posix.write, mpiio.*) whose calls are timed"},
    {VIGIL_SETTING(struct latency_settings, learn_calls), .type = VIGIL_CONFIG_INT,
     .default_value = "5000", .min = 1, .max = 100000000,
     .description = "calls of an operation from which its thresholds are learned"},
    {VIGIL_SETTING(struct latency_settings, low_quantile), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.05", .min = 0, .max = 0.49,
     .description = "quantile of the learned durations below which a call is fast"},
    {VIGIL_SETTING(struct latency_settings, high_quantile), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.95", .min = 0.51, .max = 1,
     .description = "quantile of the learned durations above which a call is slow"},
    {VIGIL_SETTING(struct latency_settings, max_outer_share), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.3", .min = 0, .max = 1,
     /* Below a half: a slow spell of one cycle's length that straddles
      * two cycles leaves at least half of one of them slow. */
     .description = "share of a cycle's calls that may be fast, or slow, without issue"},
    {VIGIL_SETTING(struct latency_settings, min_ratio), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "2", .min = 1, .max = 1000,
     .description = "a call is slow only above the learned median times it, fast only below the "
                    "median divided by it (1: the quantiles alone), so that the node getting "
                    "faster or slower by less is not an anomaly"},
    {VIGIL_SETTING(struct latency_settings, relearn_cycles), .type = VIGIL_CONFIG_INT,
     .default_value = "30", .min = 1, .max = 1000000,
     .description = "judged cycles with an issue for an operation, counted with a decay (each "
                    "cycle keeps 1 - 1/(3 N) of the count), at which it is a new phase (the node "
                    "or the program changed for good) and its thresholds are learned again from "
                    "its next calls: about 1.2 N cycles in a row, or a third of the cycles for "
                    "longer"},
    {VIGIL_SETTING(struct latency_settings, min_calls), .type = VIGIL_CONFIG_INT,
     .default_value = "100", .min = 1, .max = 1000000000,
     .description = "calls of an operation a cycle needs to be judged"},
    {VIGIL_SETTING(struct latency_settings, weigh_node_load), .type = VIGIL_CONFIG_BOOL,
     .default_value = "true",
     .description = "move each cycle's thresholds by the node's load then over its load while "
                    "they were learned (threads wanting a CPU per CPU), so that calls other "
                    "programs slowed down are not this process's anomaly"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct latency_settings, keys, NULL);

VIGIL_PLUGIN(VIGIL_PLUGIN_ADPI, .name = "latency-histogram",
             .description = "shares of each operation's calls slower or faster than it learned",
             .settings = &settings_table, .create = latency_create, .destroy = latency_destroy,
             .ops = &latency_ops);
