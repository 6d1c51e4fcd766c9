/* vigil — the call-rate ADPI: how many calls of each operation a cycle
 * makes, and how many bytes they move.
 *
 * Per operation ("posix.write"), each cycle's calls and bytes (reads and
 * writes: what the calls returned) are counted. The first
 * `training_cycles` full cycles of the instance give each operation's
 * smallest and largest counts (an operation not seen in them: 0 to 0);
 * the instance's first cycle is left out, since its scope began somewhere
 * inside it. After training, a cycle is an issue (ABNORMAL_OTHER) when an
 * operation's
 *
 *   calls  exceed the largest by more than `max_rise` of it and by at
 *          least `min_calls`: a storm, also of an operation rare before
 *          (learned from training, never from the storm itself);
 *   calls  fall below the smallest by more than `max_drop` of it and by
 *          at least `min_calls`: a stall, or a phase without I/O;
 *   bytes  exceed the largest by more than `max_rise` of it and by at
 *          least `min_bytes`: a bandwidth burst in the same calls.
 *
 * Judged cycles do not widen the range, so a storm is never learned from
 * itself; but `relearn_cycles` judged cycles in a row flagged for one
 * operation are a new phase of the program, not an anomaly: its range is
 * learned again from the next cycle on. The `min_*` floors keep a few
 * calls more or less of a rare operation from being news.
 *
 * A cycle is a count of vigild's ticks: on a node too loaded for vigild
 * to tick on time one lasts seconds and counts seconds of calls. So the
 * training cycles' shortest and longest lengths are learned too, and a
 * longer cycle's upper bounds grow (a shorter one's lower bound shrinks)
 * in proportion: only ever wider. */
#include <math.h>
#include <string.h>

#include "adpi_op_instance.h"

struct rate_op {
    /* This cycle. */
    guint64 calls, bytes;
    /* Learned. */
    guint trained; /* training cycles seen */
    guint64 min_calls, max_calls, max_bytes;
    guint flagged_in_a_row;
};

/* Its keys, each filling the field of its name (the table at the end). */
struct rate_settings {
    char **operations; /* globs of "layer.op" */
    guint training_cycles, relearn_cycles;
    double max_rise, max_drop;
    guint64 min_calls, min_bytes;
};
static const struct vigil_settings_table settings_table;

struct rate {
    struct adpi_op_instance base; /* first: ADPI_OP_INSTANCE */
    struct rate_settings settings;
    guint64 cycles; /* ended */
    /* Cycle lengths: the last end, and the shortest and longest of the
     * training cycles (0 until learned). */
    uint64_t last_end_ns, min_length_ns, max_length_ns;
    guint lengths_learned;
    struct rate_op ops[VIGIL_OP_MAX_ID + 1];
};
ADPI_OP_INSTANCE(struct rate);

static void *rate_create(const struct vigil_plugin_context *ctx, GError **error)
{
    struct rate *r = g_new0(struct rate, 1);
    return adpi_op_instance_init(&r->base, &settings_table, &r->settings, &r->settings.operations,
                                 ctx, error);
}

static void rate_activity(void *instance, const struct vigil_activity *a)
{
    struct rate *r = instance;
    if (!vigil_op_is_valid(a->op) || !r->base.judged[a->op])
        return;
    struct rate_op *op = &r->ops[a->op];
    op->calls++;
    enum vigil_op_class class = vigil_op_class(a->op);
    if ((class == VIGIL_OP_READS || class == VIGIL_OP_WRITES) && a->result > 0)
        op->bytes += (guint64)a->result;
}

static void learn(struct rate_op *op)
{
    op->min_calls = op->trained == 0 ? op->calls : MIN(op->min_calls, op->calls);
    op->max_calls = op->trained == 0 ? op->calls : MAX(op->max_calls, op->calls);
    op->max_bytes = op->trained == 0 ? op->bytes : MAX(op->max_bytes, op->bytes);
    op->trained++;
}

/* The largest count that is no news: above `max` by more than the rise
 * and by at least the floor. */
static double high_bound(double max, double rise, double floor)
{
    return MAX(max * (1 + rise), max + floor);
}

/* How much longer (stretch > 1) or shorter (shrink < 1) than the
 * training cycles this one lasted. */
struct cycle_length {
    double stretch, shrink;
};

/* What a bound was scaled by, for the message: a bound that was moved for
 * the cycle's length must say so, or the figures in it do not add up. */
static void length_note(char *out, size_t size, double factor)
{
    if (factor == 1)
        out[0] = '\0';
    else
        g_snprintf(out, size, ", scaled by %.2f for a cycle %s than any learned", factor,
                   factor > 1 ? "longer" : "shorter");
}

static gboolean judge(const struct rate *r, guint id, const struct rate_op *op,
                      const struct cycle_length *length, const struct vigil_issue_sink *sink)
{
    char stretched[80], shrunk[80];
    length_note(stretched, sizeof stretched, length->stretch);
    length_note(shrunk, sizeof shrunk, length->shrink);
    char name[VIGIL_ISSUE_METRIC_MAX + 1];
    g_snprintf(name, sizeof name, "%s.%s", vigil_layer_name(vigil_op_layer(id)), vigil_op_name(id));
    gboolean flagged = FALSE;
    double calls = (double)op->calls, bytes = (double)op->bytes;
    double hi = high_bound((double)op->max_calls * length->stretch, r->settings.max_rise,
                           (double)r->settings.min_calls);
    double min_calls = (double)op->min_calls * length->shrink;
    double lo =
        MIN(min_calls * (1 - r->settings.max_drop), min_calls - (double)r->settings.min_calls);
    if (calls > hi) {
        vigil_issue_report(
            sink, VIGIL_HEALTH_ABNORMAL_OTHER, name, calls, lo, hi,
            "%s: %.0f calls in the cycle, more than %.0f (at most %" G_GUINT64_FORMAT
            " in each of %u cycles learned%s, plus %g %% and at least %" G_GUINT64_FORMAT ")",
            name, calls, hi, op->max_calls, op->trained, stretched, 100 * r->settings.max_rise,
            r->settings.min_calls);
        flagged = TRUE;
    } else if (calls < lo) {
        vigil_issue_report(
            sink, VIGIL_HEALTH_ABNORMAL_OTHER, name, calls, lo, hi,
            "%s: %.0f calls in the cycle, fewer than %.0f (at least %" G_GUINT64_FORMAT
            " in each of %u cycles learned%s, less %g %% and at least %" G_GUINT64_FORMAT ")",
            name, calls, lo, op->min_calls, op->trained, shrunk, 100 * r->settings.max_drop,
            r->settings.min_calls);
        flagged = TRUE;
    }
    double bytes_hi = high_bound((double)op->max_bytes * length->stretch, r->settings.max_rise,
                                 (double)r->settings.min_bytes);
    if (bytes > bytes_hi) {
        char bytes_name[VIGIL_ISSUE_METRIC_MAX + 1];
        g_snprintf(bytes_name, sizeof bytes_name, "%s.bytes", name);
        vigil_issue_report(
            sink, VIGIL_HEALTH_ABNORMAL_OTHER, bytes_name, bytes, NAN, bytes_hi,
            "%s: %.0f bytes in the cycle, more than %.0f (at most %" G_GUINT64_FORMAT
            " in each of %u cycles learned%s, plus %g %% and at least %" G_GUINT64_FORMAT ")",
            name, bytes, bytes_hi, op->max_bytes, op->trained, stretched,
            100 * r->settings.max_rise, r->settings.min_bytes);
        flagged = TRUE;
    }
    return flagged;
}

static void rate_cycle(void *instance, uint64_t cycle, uint64_t end_ns,
                       const struct vigil_issue_sink *sink)
{
    (void)cycle;
    struct rate *r = instance;
    /* The scope began inside the first cycle: its counts are a part. */
    gboolean partial = r->cycles++ == 0;
    struct cycle_length length = {1, 1};
    if (!partial && end_ns > r->last_end_ns) {
        uint64_t ns = end_ns - r->last_end_ns;
        if (r->lengths_learned < r->settings.training_cycles) {
            r->min_length_ns = r->lengths_learned == 0 ? ns : MIN(r->min_length_ns, ns);
            r->max_length_ns = r->lengths_learned == 0 ? ns : MAX(r->max_length_ns, ns);
            r->lengths_learned++;
        } else if (ns > r->max_length_ns) {
            length.stretch = (double)ns / (double)r->max_length_ns;
        } else if (ns < r->min_length_ns) {
            length.shrink = (double)ns / (double)r->min_length_ns;
        }
    }
    r->last_end_ns = end_ns;
    for (guint id = 0; id <= VIGIL_OP_MAX_ID; id++) {
        struct rate_op *op = &r->ops[id];
        if (!partial && r->base.judged[id]) {
            if (op->trained < r->settings.training_cycles) {
                learn(op);
            } else if (judge(r, id, op, &length, sink)) {
                if (++op->flagged_in_a_row >= r->settings.relearn_cycles) {
                    op->trained = 0; /* a new phase: learn it */
                    op->flagged_in_a_row = 0;
                }
            } else {
                op->flagged_in_a_row = 0;
            }
        }
        op->calls = op->bytes = 0;
    }
}

static const struct vigil_adpi_ops rate_ops = {
    .activity = rate_activity,
    .cycle = rate_cycle,
    .reconfigure = adpi_op_instance_reconfigure,
};

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct rate_settings, operations), .type = VIGIL_CONFIG_LIST,
     .default_value = "*",
     .description = "operations (globs of LAYER.OP, \"posix.*\") whose calls and bytes per cycle "
                    "are judged"},
    {VIGIL_SETTING(struct rate_settings, training_cycles), .type = VIGIL_CONFIG_INT,
     .default_value = "30", .min = 1, .max = 1000000,
     .description = "full cycles from which each operation's range of calls and bytes is learned"},
    {VIGIL_SETTING(struct rate_settings, max_rise), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.5", .min = 0, .max = 1000,
     .description = "share above the largest learned count of calls or bytes that is still no "
                    "news"},
    {VIGIL_SETTING(struct rate_settings, max_drop), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.3", .min = 0, .max = 1,
     .description = "share below the smallest learned count of calls that is still no news"},
    {VIGIL_SETTING(struct rate_settings, min_calls), .type = VIGIL_CONFIG_INT,
     .default_value = "50", .min = 1, .max = 1000000000,
     .description = "calls a cycle must differ by from the learned range to be news"},
    {VIGIL_SETTING(struct rate_settings, min_bytes), .type = VIGIL_CONFIG_INT,
     .default_value = "1048576", .min = 1, .max = 1099511627776.0,
     .description = "bytes a cycle must exceed the learned largest by to be news"},
    {VIGIL_SETTING(struct rate_settings, relearn_cycles), .type = VIGIL_CONFIG_INT,
     .default_value = "30", .min = 1, .max = 1000000,
     .description = "judged cycles in a row flagged for an operation after which it is a new "
                    "phase: its range is learned again"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct rate_settings, keys, NULL);

VIGIL_PLUGIN(
    VIGIL_PLUGIN_ADPI, .name = "call-rate",
    .description = "calls and bytes per cycle of each operation outside their learned range",
    .settings = &settings_table, .create = rate_create, .destroy = adpi_op_instance_destroy,
    .ops = &rate_ops);
