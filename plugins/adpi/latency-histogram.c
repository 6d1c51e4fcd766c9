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
 * calls got slow), more than that below the low one ABNORMAL_GOOD. */
#include <math.h>
#include <string.h>

#include "vigil/adpi.h"
#include "vigil/ontology.h"
#include "vigil/plugin.h"

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
    /* This cycle's calls. */
    guint64 n, fast, slow;
};

struct latency {
    gboolean judged[VIGIL_OP_MAX_ID + 1]; /* matches `operations` */
    guint64 learn_calls, min_calls;
    double low_quantile, high_quantile, max_outer_share;
    struct latency_op *ops[VIGIL_OP_MAX_ID + 1]; /* NULL until its first call */
};

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

static void set_thresholds(const struct latency *l, struct latency_op *op)
{
    op->low_ns = bucket_low_ns(quantile_bucket(op, l->low_quantile));
    op->high_ns = bucket_high_ns(quantile_bucket(op, l->high_quantile));
    op->ready = TRUE;
}

static void read_config(struct latency *l, const struct vigil_plugin_context *ctx)
{
    const char *const *patterns = vigil_config_get_list(ctx->config, ctx->section, "operations");
    for (guint op = 0; op <= VIGIL_OP_MAX_ID; op++) {
        l->judged[op] = FALSE;
        if (!vigil_op_is_valid(op))
            continue;
        char *name =
            g_strdup_printf("%s.%s", vigil_layer_name(vigil_op_layer(op)), vigil_op_name(op));
        l->judged[op] = vigil_metric_name_matches(name, patterns);
        g_free(name);
    }
    l->learn_calls = (guint64)vigil_config_get_int(ctx->config, ctx->section, "learn_calls");
    l->min_calls = (guint64)vigil_config_get_int(ctx->config, ctx->section, "min_calls");
    l->low_quantile = vigil_config_get_double(ctx->config, ctx->section, "low_quantile");
    l->high_quantile = vigil_config_get_double(ctx->config, ctx->section, "high_quantile");
    l->max_outer_share = vigil_config_get_double(ctx->config, ctx->section, "max_outer_share");
}

static void *latency_create(const struct vigil_plugin_context *ctx, GError **error)
{
    (void)error;
    struct latency *l = g_new0(struct latency, 1);
    read_config(l, ctx);
    return l;
}

static void latency_destroy(void *instance)
{
    struct latency *l = instance;
    for (guint op = 0; op <= VIGIL_OP_MAX_ID; op++)
        g_free(l->ops[op]);
    g_free(l);
}

/* Learned thresholds are kept, but follow new quantiles (the histogram is
 * still there); an operation still learning stops when it has enough. */
static gboolean latency_reconfigure(void *instance, const struct vigil_plugin_context *ctx,
                                    GError **error)
{
    (void)error;
    struct latency *l = instance;
    read_config(l, ctx);
    for (guint op = 0; op <= VIGIL_OP_MAX_ID; op++)
        if (l->ops[op] != NULL && (l->ops[op]->ready || l->ops[op]->learned >= l->learn_calls))
            set_thresholds(l, l->ops[op]);
    return TRUE;
}

static void latency_activity(void *instance, const struct vigil_activity *a)
{
    struct latency *l = instance;
    unsigned op_id = a->op;
    if (!vigil_op_is_valid(op_id) || vigil_op_layer(op_id) != a->layer || !l->judged[op_id])
        return;
    struct latency_op *op = l->ops[op_id];
    if (op == NULL)
        op = l->ops[op_id] = g_new0(struct latency_op, 1);
    guint64 ns = a->end_ns > a->start_ns ? a->end_ns - a->start_ns : 0;
    if (!op->ready) {
        op->counts[bucket_of(ns)]++;
        if (++op->learned >= l->learn_calls)
            set_thresholds(l, op);
        return;
    }
    op->n++;
    op->fast += ns < op->low_ns;
    op->slow += ns > op->high_ns;
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

static void report_share(const struct latency *l, const struct latency_op *op, const char *name,
                         guint64 outer, gboolean slow, const struct vigil_issue_sink *sink)
{
    double share = (double)outer / (double)op->n;
    if (!(share > l->max_outer_share))
        return;
    char threshold[32];
    format_ns(slow ? op->high_ns : op->low_ns, threshold, sizeof threshold);
    double quantile = slow ? l->high_quantile : l->low_quantile;
    vigil_issue_report(sink, slow ? VIGIL_HEALTH_ABNORMAL_BAD : VIGIL_HEALTH_ABNORMAL_GOOD, name,
                       share, 0, l->max_outer_share,
                       "%.3g %% of %" G_GUINT64_FORMAT " %s calls took %s than %s, the %g%s "
                       "percentile of the first %" G_GUINT64_FORMAT "; expected at most %g %%",
                       share * 100, op->n, name, slow ? "more" : "less", threshold, quantile * 100,
                       ordinal_suffix(quantile * 100), op->learned, l->max_outer_share * 100);
}

static void latency_cycle(void *instance, uint64_t cycle, uint64_t end_ns,
                          const struct vigil_issue_sink *sink)
{
    (void)cycle;
    (void)end_ns;
    struct latency *l = instance;
    for (guint op_id = 0; op_id <= VIGIL_OP_MAX_ID; op_id++) {
        struct latency_op *op = l->ops[op_id];
        if (op == NULL || !op->ready)
            continue;
        if (op->n >= l->min_calls && l->judged[op_id]) {
            char name[64];
            g_snprintf(name, sizeof name, "%s.%s", vigil_layer_name(vigil_op_layer(op_id)),
                       vigil_op_name(op_id));
            report_share(l, op, name, op->slow, TRUE, sink);
            report_share(l, op, name, op->fast, FALSE, sink);
        }
        op->n = op->fast = op->slow = 0;
    }
}

static const struct vigil_adpi_ops latency_ops = {
    .activity = latency_activity,
    .cycle = latency_cycle,
    .reconfigure = latency_reconfigure,
};

static const struct vigil_config_key keys[] = {
    {.name = "operations",
     .type = VIGIL_CONFIG_LIST,
     .default_value = "*",
     .description = "operations (globs on LAYER.OP: posix.write, mpiio.*) whose calls are timed"},
    {.name = "learn_calls",
     .type = VIGIL_CONFIG_INT,
     .default_value = "5000",
     .min = 1,
     .max = 100000000,
     .description = "calls of an operation from which its thresholds are learned"},
    {.name = "low_quantile",
     .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.05",
     .min = 0,
     .max = 0.49,
     .description = "quantile of the learned durations below which a call is fast"},
    {.name = "high_quantile",
     .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.95",
     .min = 0.51,
     .max = 1,
     .description = "quantile of the learned durations above which a call is slow"},
    {.name = "max_outer_share",
     .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.3",
     .min = 0,
     .max = 1,
     /* Below a half: a slow spell of one cycle's length that straddles
      * two cycles leaves at least half of one of them slow. */
     .description = "share of a cycle's calls that may be fast, or slow, without issue"},
    {.name = "min_calls",
     .type = VIGIL_CONFIG_INT,
     .default_value = "100",
     .min = 1,
     .max = 1000000000,
     .description = "calls of an operation a cycle needs to be judged"},
};

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_ADPI,
    .name = "latency-histogram",
    .description = "shares of each operation's calls slower or faster than it learned",
    .config_keys = keys,
    .n_config_keys = G_N_ELEMENTS(keys),
    .create = latency_create,
    .destroy = latency_destroy,
    .ops = &latency_ops,
};
