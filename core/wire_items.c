/* vigil — the wire's message types: each item type's layout and rules.
 *
 * The layouts are wire.h's tables, field by field; core/wire.c encodes,
 * decodes, sizes and frees every item from them. The checks are the rules
 * wire.h states for each type, run by the writer before it adds an item
 * and by the decoder after it reads one. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "vigil/health.h"
#include "vigil/local_protocol.h"
#include "vigil/wire.h"
#include "wire_items.h"

/* A process's argv comes from its REGISTER message, which can hold at most
 * this many (empty) arguments: the wire must take every one of them. */
_Static_assert(VIGIL_WIRE_ARGV_MAX >= VIGIL_LOCAL_MAX_BYTES, "argv of a REGISTER must fit");
/* A name item keeps its path's length in a u16. */
_Static_assert(VIGIL_PATH_MAX <= UINT16_MAX, "a path's length must fit its u16");

gboolean vigil_wire_fail(GError **error, enum vigil_wire_error_code code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    if (error != NULL)
        g_propagate_error(error, g_error_new_valist(VIGIL_WIRE_ERROR, code, format, ap));
    va_end(ap);
    return FALSE;
}

#define malformed wire_malformed

/* ---- the rules of each item type ------------------------------------------ */

static gboolean check_text(const char *field, const char *text, size_t max_bytes, GError **error)
{
    if (text == NULL)
        return malformed(error, "%s is missing", field);
    size_t length = strlen(text);
    if (length > max_bytes)
        return malformed(error, "%s of %zu bytes is longer than %zu", field, length, max_bytes);
    if (!g_utf8_validate_len(text, length, NULL))
        return malformed(error, "%s is not valid UTF-8", field);
    return TRUE;
}

static gboolean check_level_and_health(unsigned level, unsigned health, GError **error)
{
    if (vigil_level_name(level) == NULL)
        return malformed(error, "unknown level %u", level);
    if (vigil_health_name(health) == NULL)
        return malformed(error, "unknown health %u", health);
    return TRUE;
}

static gboolean check_activity(const void *item, GError **error)
{
    struct vigil_error err;
    if (vigil_activity_check(item, &err))
        return TRUE;
    return malformed(error, "%s", err.message);
}

static gboolean check_name(const void *item, GError **error)
{
    const struct vigil_wire_name *n = item;
    if (n->path == NULL && n->length > 0)
        return malformed(error, "file %u: path of %u bytes is missing", n->file_id, n->length);
    struct vigil_error err;
    if (vigil_name_check(n->file_id, n->path != NULL ? n->path : "", n->length, &err))
        return TRUE;
    return malformed(error, "%s", err.message);
}

static gboolean check_metric(const void *item, GError **error)
{
    const struct vigil_metric_desc *m = item;
    if (m->id == 0)
        return malformed(error, "metric id 0, which is never a metric");
    if (vigil_metric_kind_name(m->kind) == NULL)
        return malformed(error, "metric %u: unknown kind %d", m->id, (int)m->kind);
    if (vigil_metric_origin_name(m->origin) == NULL)
        return malformed(error, "metric %u: unknown origin %d", m->id, (int)m->origin);
    if (!vigil_metric_name_is_valid(m->name)) {
        char *escaped = g_strescape(m->name != NULL ? m->name : "(null)", NULL);
        malformed(error, "metric %u: name \"%s\" is not a valid metric name", m->id, escaped);
        g_free(escaped);
        return FALSE;
    }
    /* The catalogue refuses longer ones; better to refuse them here, where
     * the sender is still known. */
    return check_text("unit", m->unit, VIGIL_METRIC_TEXT_MAX, error) &&
           check_text("source", m->source, VIGIL_METRIC_TEXT_MAX, error);
}

static gboolean check_sample(const void *item, GError **error)
{
    const struct vigil_sample *s = item;
    if (s->metric_id == 0)
        return malformed(error, "sample of metric 0, which is never a metric");
    if (s->flags & ~(uint32_t)VIGIL_SAMPLE_KNOWN_FLAGS)
        return malformed(error, "sample of metric %u: unknown flags 0x%x", s->metric_id,
                         s->flags & ~(uint32_t)VIGIL_SAMPLE_KNOWN_FLAGS);
    if (!isfinite(s->value))
        return malformed(error, "sample of metric %u: value %g is not finite", s->metric_id,
                         s->value);
    return TRUE;
}

static gboolean check_anomaly(const void *item, GError **error)
{
    const struct vigil_wire_anomaly *a = item;
    if (!check_level_and_health(a->level, a->health, error))
        return FALSE;
    if (!isfinite(a->value))
        return malformed(error, "value %g is not finite", a->value);
    if (isnan(a->expected_min) || isnan(a->expected_max))
        return malformed(error, "expected range [%g, %g] contains NaN", a->expected_min,
                         a->expected_max);
    if (a->expected_min > a->expected_max)
        return malformed(error, "expected minimum %g is above expected maximum %g", a->expected_min,
                         a->expected_max);
    return check_text("plugin", a->plugin, VIGIL_WIRE_STRING_MAX, error) &&
           check_text("metric", a->metric, VIGIL_WIRE_STRING_MAX, error) &&
           check_text("message", a->message, VIGIL_WIRE_STRING_MAX, error);
}

static gboolean check_state(const void *item, GError **error)
{
    const struct vigil_wire_state *s = item;
    return check_level_and_health(s->level, s->health, error);
}

/* Version 2 strings are stored as PostgreSQL text, which must be UTF-8 and
 * cannot hold a NUL (a C string has none; the decoder catches one before
 * it copies). */
static gboolean check_string(const char *field, const char *s, GError **error)
{
    return check_text(field, s, VIGIL_WIRE_STRING_MAX, error);
}

static gboolean check_long_text(const char *field, const char *s, GError **error)
{
    return check_text(field, s, VIGIL_WIRE_TEXT_MAX, error);
}

static gboolean check_not_empty(const char *field, const char *s, GError **error)
{
    if (!check_string(field, s, error))
        return FALSE;
    if (s[0] == '\0')
        return malformed(error, "%s is empty", field);
    return TRUE;
}

static gboolean check_reserved_u32(uint32_t reserved, GError **error)
{
    if (reserved != 0)
        return malformed(error, "reserved field is 0x%08x, not 0", reserved);
    return TRUE;
}

/* The spans of the version-2 items; the caller names whose it is. */
static gboolean check_span(uint64_t start_ns, uint64_t end_ns, GError **error)
{
    if (end_ns < start_ns)
        return malformed(error, "ends (%" PRIu64 " ns) before it starts (%" PRIu64 " ns)", end_ns,
                         start_ns);
    return TRUE;
}

static gboolean check_node(const void *item, GError **error)
{
    const struct vigil_wire_node *n = item;
    if (!check_reserved_u32(n->reserved, error))
        return FALSE;
    if (n->cycle_ms == 0)
        return malformed(error, "cycle_ms is 0; a cycle lasts at least 1 ms");
    if (!check_span(n->cycle_start_ns, n->cycle_end_ns, error)) {
        g_prefix_error(error, "cycle %" PRIu64 ": ", n->cycle);
        return FALSE;
    }
    return check_not_empty("hostname", n->hostname, error);
}

/* A wait(2) status as the shell shows it: the exit status, or 128+signal. */
#define EXIT_CODE_MAX 255

static gboolean check_process_fields(const struct vigil_wire_process *p, GError **error)
{
    if (p->pid <= 0)
        return malformed(error, "pid %" PRId32 " is not a process id", p->pid);
    if (p->rank < -1)
        return malformed(error, "rank %" PRId32 " is below -1 (not MPI)", p->rank);
    if (p->exit_code < -1 || p->exit_code > EXIT_CODE_MAX)
        return malformed(error, "exit code %" PRId32 " is outside -1 (unknown) to %d", p->exit_code,
                         EXIT_CODE_MAX);
    /* end_ns 0: still running. */
    if (p->end_ns != 0 && !check_span(p->start_ns, p->end_ns, error))
        return FALSE;
    if (!check_not_empty("run_key", p->run_key, error) || !check_string("job", p->job, error) ||
        !check_string("program", p->program, error) || !check_string("cwd", p->cwd, error))
        return FALSE;
    if (p->argc > VIGIL_WIRE_ARGV_MAX)
        return malformed(error, "argc %" PRIu32 " is over the limit of %u", p->argc,
                         VIGIL_WIRE_ARGV_MAX);
    if (p->argc > 0 && p->argv == NULL)
        return malformed(error, "argv of %" PRIu32 " arguments is missing", p->argc);
    for (uint32_t i = 0; i < p->argc; i++) {
        char field[32];
        g_snprintf(field, sizeof field, "argv[%" PRIu32 "]", i);
        if (!check_string(field, p->argv[i], error))
            return FALSE;
    }
    return TRUE;
}

static gboolean check_process(const void *item, GError **error)
{
    const struct vigil_wire_process *p = item;
    if (p->process_id == 0)
        return malformed(error, "process id 0, which is never a process");
    if (check_process_fields(p, error))
        return TRUE;
    g_prefix_error(error, "process %" PRIu64 ": ", p->process_id);
    return FALSE;
}

/* How far a mean of `count` values may lie outside their [min, max]: the
 * sum behind it rounds by up to (count - 1) ulps of the largest magnitude,
 * and the division by one more half-ulp. A mean just past max is then
 * still a right mean, not a wrong field. */
static double mean_rounding_slack(const struct vigil_wire_rollup *r)
{
    double magnitude = MAX(fabs(r->min), fabs(r->max));
    return (double)r->count * DBL_EPSILON * magnitude;
}

static gboolean check_rollup_fields(const struct vigil_wire_rollup *r, GError **error)
{
    if (r->flags & ~(uint32_t)VIGIL_SAMPLE_KNOWN_FLAGS)
        return malformed(error, "unknown flags 0x%x",
                         r->flags & ~(uint32_t)VIGIL_SAMPLE_KNOWN_FLAGS);
    if (!check_reserved_u32(r->reserved, error) || !check_span(r->start_ns, r->end_ns, error))
        return FALSE;
    if (r->count == 0)
        return malformed(error, "count 0; a roll-up summarises at least one value");
    if (isnan(r->min) || isnan(r->mean) || isnan(r->max))
        return malformed(error, "min %g, mean %g or max %g is NaN", r->min, r->mean, r->max);
    /* An overflowing sum makes the mean infinite: only finite ones are ordered. */
    if (isfinite(r->min) && isfinite(r->mean) && isfinite(r->max)) {
        double slack = mean_rounding_slack(r);
        if (r->min > r->max || r->mean < r->min - slack || r->mean > r->max + slack)
            return malformed(error, "min %.17g, mean %.17g and max %.17g are out of order", r->min,
                             r->mean, r->max);
    }
    return TRUE; /* delta: NaN for a gauge, any value for a counter */
}

static gboolean check_rollup(const void *item, GError **error)
{
    const struct vigil_wire_rollup *r = item;
    if (r->metric_id == 0)
        return malformed(error, "roll-up of metric 0, which is never a metric");
    if (check_rollup_fields(r, error))
        return TRUE;
    g_prefix_error(error, "roll-up of metric %" PRIu32 ": ", r->metric_id);
    return FALSE;
}

/* process_id 0 is the node's own window. */
static gboolean check_window(const void *item, GError **error)
{
    const struct vigil_wire_window *w = item;
    if (w->first_cycle > w->last_cycle)
        malformed(error, "first cycle %" PRIu64 " is after its last cycle %" PRIu64, w->first_cycle,
                  w->last_cycle);
    else if (check_span(w->start_ns, w->end_ns, error) &&
             check_long_text("reasons", w->reasons, error))
        return TRUE;
    g_prefix_error(error, "window of process %" PRIu64 ": ", w->process_id);
    return FALSE;
}

/* The JSON is not parsed here: the warehouse's jsonb does, and refuses the
 * batch with the server's reason. */
static gboolean check_summary(const void *item, GError **error)
{
    const struct vigil_wire_summary *s = item;
    if (s->process_id == 0)
        return malformed(error, "summary of process id 0, which is never a process");
    if (!check_long_text("report_json", s->report_json, error))
        return FALSE;
    if (s->report_json[0] == '\0')
        return malformed(error, "report_json is empty");
    return TRUE;
}

static gboolean check_job(const void *item, GError **error)
{
    const struct vigil_wire_job *j = item;
    if ((j->flags & ~(uint32_t)VIGIL_WIRE_JOB_FROM_ROOT) != 0) {
        malformed(error, "unknown flags 0x%x", j->flags & ~(uint32_t)VIGIL_WIRE_JOB_FROM_ROOT);
        goto bad;
    }
    if (!check_not_empty("job_id", j->job_id, error) ||
        !check_string("step_id", j->step_id, error) || !check_string("user", j->user, error) ||
        !check_string("nodes", j->nodes, error))
        goto bad;
    if (j->begin_ns != 0 && j->end_ns != 0 && !check_span(j->begin_ns, j->end_ns, error))
        goto bad;
    return TRUE;
bad:
    g_prefix_error(error, "job %s: ", j->job_id != NULL ? j->job_id : "(none)");
    return FALSE;
}

static gboolean check_drop(const void *item, GError **error)
{
    const struct vigil_wire_drop *d = item;
    if (!check_reserved_u32(d->reserved, error))
        return FALSE;
    if (d->pid <= 0)
        return malformed(error, "drops of pid %d, not a process", (int)d->pid);
    if (d->counter == 0)
        return malformed(error, "drops of pid %d counted by counter 0, which names none",
                         (int)d->pid);
    return TRUE;
}

#define UNWATCHED_END_FLAGS                                                                        \
    (VIGIL_WIRE_UNWATCHED_ENERGY_ESTIMATED | VIGIL_WIRE_UNWATCHED_ENERGY_UNCERTAIN |               \
     VIGIL_WIRE_UNWATCHED_RING_READ)

/* A figure that may be unknown (NaN), never negative or infinite. */
static gboolean check_figure(const char *field, double value, GError **error)
{
    if (!isnan(value) && (!isfinite(value) || value < 0))
        return malformed(error, "%s is %g; it is NaN (unknown) or finite and not negative", field,
                         value);
    return TRUE;
}

static gboolean check_unwatched_end(const void *item, GError **error)
{
    const struct vigil_wire_unwatched_end *e = item;
    if (e->process_id == 0)
        return malformed(error, "unwatched end of process id 0, which is never a process");
    if (!check_reserved_u32(e->reserved, error))
        goto bad;
    if (e->latest_end_ns == 0) {
        malformed(error, "latest_end_ns is 0; the end has a latest time");
        goto bad;
    }
    if (!check_span(e->earliest_end_ns, e->latest_end_ns, error) ||
        !check_figure("cpu_s", e->cpu_s, error) || !check_figure("energy_j", e->energy_j, error))
        goto bad;
    if (e->flags & ~UNWATCHED_END_FLAGS) {
        malformed(error, "unknown flags 0x%x", e->flags & ~UNWATCHED_END_FLAGS);
        goto bad;
    }
    return TRUE;
bad:
    g_prefix_error(error, "unwatched end of process %" PRIu64 ": ", e->process_id);
    return FALSE;
}

static gboolean check_refusal(const void *item, GError **error)
{
    const struct vigil_wire_refusal *r = item;
    if (!check_long_text("reason", r->reason, error))
        return FALSE;
    if (r->reason[0] == '\0')
        return malformed(error, "reason is empty");
    return TRUE;
}

/* ---- the layouts, as wire.h documents them -------------------------------- */

#define MEMBER_BYTES(item, member) sizeof(((struct item *)NULL)->member)
#define FIXED(item, member, bytes)                                                                 \
    {                                                                                              \
        .kind = WIRE_FIXED, .name = #member, .offset = offsetof(struct item, member),              \
        .wire_bytes = (bytes), .member_bytes = MEMBER_BYTES(item, member)                          \
    }
#define ZERO(bytes)                                                                                \
    {                                                                                              \
        .kind = WIRE_ZERO, .name = "reserved", .wire_bytes = (bytes)                               \
    }
#define STRING(item, member)                                                                       \
    {                                                                                              \
        .kind = WIRE_STRING, .name = #member, .offset = offsetof(struct item, member)              \
    }
#define TEXT(item, member)                                                                         \
    {                                                                                              \
        .kind = WIRE_TEXT, .name = #member, .offset = offsetof(struct item, member)                \
    }
#define COUNTED(kind_, item, count, member)                                                        \
    {                                                                                              \
        .kind = (kind_), .name = #member, .offset = offsetof(struct item, member),                 \
        .count_offset = offsetof(struct item, count), .count_bytes = MEMBER_BYTES(item, count),    \
        .count_name = #count                                                                       \
    }

static const struct wire_field activity_fields[] = {
    FIXED(vigil_activity, record_type, 1),  FIXED(vigil_activity, layer, 1),
    FIXED(vigil_activity, op, 2),           FIXED(vigil_activity, file_id, 4),
    FIXED(vigil_activity, seq, 8),          FIXED(vigil_activity, parent_start_ns, 8),
    FIXED(vigil_activity, start_ns, 8),     FIXED(vigil_activity, end_ns, 8),
    FIXED(vigil_activity, offset_bytes, 8), FIXED(vigil_activity, bytes_asked, 8),
    FIXED(vigil_activity, result, 8),       FIXED(vigil_activity, errno_value, 4),
    FIXED(vigil_activity, thread_id, 4),    FIXED(vigil_activity, flags, 4),
    FIXED(vigil_activity, comm_size, 4),
};

static const struct wire_field name_fields[] = {
    FIXED(vigil_wire_name, file_id, 4),
    FIXED(vigil_wire_name, length, 2),
    COUNTED(WIRE_BYTES, vigil_wire_name, length, path),
};

static const struct wire_field metric_fields[] = {
    FIXED(vigil_metric_desc, id, 4),     FIXED(vigil_metric_desc, kind, 1),
    FIXED(vigil_metric_desc, origin, 1), STRING(vigil_metric_desc, name),
    STRING(vigil_metric_desc, unit),     STRING(vigil_metric_desc, source),
};

static const struct wire_field sample_fields[] = {
    FIXED(vigil_sample, metric_id, 4),
    FIXED(vigil_sample, flags, 4),
    FIXED(vigil_sample, t_ns, 8),
    FIXED(vigil_sample, value, 8),
};

static const struct wire_field anomaly_fields[] = {
    FIXED(vigil_wire_anomaly, cycle, 8),
    FIXED(vigil_wire_anomaly, process_id, 8),
    FIXED(vigil_wire_anomaly, level, 1),
    FIXED(vigil_wire_anomaly, health, 1),
    ZERO(2),
    FIXED(vigil_wire_anomaly, value, 8),
    FIXED(vigil_wire_anomaly, expected_min, 8),
    FIXED(vigil_wire_anomaly, expected_max, 8),
    STRING(vigil_wire_anomaly, plugin),
    STRING(vigil_wire_anomaly, metric),
    STRING(vigil_wire_anomaly, message),
};

static const struct wire_field state_fields[] = {
    FIXED(vigil_wire_state, cycle, 8),
    FIXED(vigil_wire_state, process_id, 8),
    FIXED(vigil_wire_state, level, 1),
    FIXED(vigil_wire_state, health, 1),
    ZERO(2),
    FIXED(vigil_wire_state, overloaded_mask, 4),
    FIXED(vigil_wire_state, bad_issues, 4),
    FIXED(vigil_wire_state, good_issues, 4),
    FIXED(vigil_wire_state, other_issues, 4),
};

static const struct wire_field node_fields[] = {
    FIXED(vigil_wire_node, realtime_offset_ns, 8),
    FIXED(vigil_wire_node, cycle, 8),
    FIXED(vigil_wire_node, cycle_start_ns, 8),
    FIXED(vigil_wire_node, cycle_end_ns, 8),
    FIXED(vigil_wire_node, cycle_ms, 4),
    FIXED(vigil_wire_node, reserved, 4),
    STRING(vigil_wire_node, hostname),
};

static const struct wire_field process_fields[] = {
    FIXED(vigil_wire_process, process_id, 8), FIXED(vigil_wire_process, pid, 4),
    FIXED(vigil_wire_process, uid, 4),        FIXED(vigil_wire_process, rank, 4),
    FIXED(vigil_wire_process, exit_code, 4),  FIXED(vigil_wire_process, start_ns, 8),
    FIXED(vigil_wire_process, end_ns, 8),     STRING(vigil_wire_process, run_key),
    STRING(vigil_wire_process, job),          STRING(vigil_wire_process, program),
    STRING(vigil_wire_process, cwd),          COUNTED(WIRE_ARGV, vigil_wire_process, argc, argv),
};

static const struct wire_field rollup_fields[] = {
    FIXED(vigil_wire_rollup, metric_id, 4), FIXED(vigil_wire_rollup, flags, 4),
    FIXED(vigil_wire_rollup, start_ns, 8),  FIXED(vigil_wire_rollup, end_ns, 8),
    FIXED(vigil_wire_rollup, count, 4),     FIXED(vigil_wire_rollup, reserved, 4),
    FIXED(vigil_wire_rollup, min, 8),       FIXED(vigil_wire_rollup, mean, 8),
    FIXED(vigil_wire_rollup, max, 8),       FIXED(vigil_wire_rollup, delta, 8),
};

static const struct wire_field window_fields[] = {
    FIXED(vigil_wire_window, process_id, 8), FIXED(vigil_wire_window, first_cycle, 8),
    FIXED(vigil_wire_window, last_cycle, 8), FIXED(vigil_wire_window, start_ns, 8),
    FIXED(vigil_wire_window, end_ns, 8),     FIXED(vigil_wire_window, activities_forwarded, 8),
    TEXT(vigil_wire_window, reasons),
};

static const struct wire_field summary_fields[] = {
    FIXED(vigil_wire_summary, process_id, 8),
    TEXT(vigil_wire_summary, report_json),
};

static const struct wire_field refusal_fields[] = {
    TEXT(vigil_wire_refusal, reason),
};

static const struct wire_field job_fields[] = {
    FIXED(vigil_wire_job, begin_ns, 8), FIXED(vigil_wire_job, end_ns, 8),
    FIXED(vigil_wire_job, uid, 4),      FIXED(vigil_wire_job, flags, 4),
    STRING(vigil_wire_job, job_id),     STRING(vigil_wire_job, step_id),
    STRING(vigil_wire_job, user),       STRING(vigil_wire_job, nodes),
};

static const struct wire_field drop_fields[] = {
    FIXED(vigil_wire_drop, pid, 4),        FIXED(vigil_wire_drop, reserved, 4),
    FIXED(vigil_wire_drop, start_ns, 8),   FIXED(vigil_wire_drop, counter, 8),
    FIXED(vigil_wire_drop, activities, 8), FIXED(vigil_wire_drop, batches, 8),
};

static const struct wire_field unwatched_end_fields[] = {
    FIXED(vigil_wire_unwatched_end, process_id, 8),
    FIXED(vigil_wire_unwatched_end, earliest_end_ns, 8),
    FIXED(vigil_wire_unwatched_end, latest_end_ns, 8),
    FIXED(vigil_wire_unwatched_end, activities, 8),
    FIXED(vigil_wire_unwatched_end, dropped, 8),
    FIXED(vigil_wire_unwatched_end, seq_gaps, 8),
    FIXED(vigil_wire_unwatched_end, cpu_s, 8),
    FIXED(vigil_wire_unwatched_end, energy_j, 8),
    FIXED(vigil_wire_unwatched_end, flags, 4),
    FIXED(vigil_wire_unwatched_end, reserved, 4),
};

/* ---- the types ------------------------------------------------------------ */

/* A type of items: its name, the decoded message's array of them, its
 * layout and its check. */
#define ITEMS(name_, array, fields_, check_)                                                       \
    .name = (name_), .items_offset = offsetof(struct vigil_wire_message, array),                   \
    .item_bytes = sizeof(*((struct vigil_wire_message *)NULL)->array), .fields = (fields_),        \
    .field_count = G_N_ELEMENTS(fields_), .check = (check_)

/* Not const: each entry's layout is derived from its fields at first use. */
static struct wire_type types[VIGIL_WIRE_TYPE_COUNT + 1] = {
    [VIGIL_WIRE_ACTIVITIES] = {ITEMS("activities", activities, activity_fields, check_activity),
                               .carries_process_id = TRUE},
    [VIGIL_WIRE_NAMES] = {ITEMS("names", names, name_fields, check_name),
                          .carries_process_id = TRUE},
    [VIGIL_WIRE_METRICS] = {ITEMS("metrics", metrics, metric_fields, check_metric)},
    [VIGIL_WIRE_SAMPLES] = {ITEMS("samples", samples, sample_fields, check_sample)},
    [VIGIL_WIRE_ANOMALIES] = {ITEMS("anomalies", anomalies, anomaly_fields, check_anomaly)},
    [VIGIL_WIRE_STATES] = {ITEMS("states", states, state_fields, check_state)},
    [VIGIL_WIRE_ACK] = {.name = "ack", .item_count = WIRE_NO_ITEMS, .batch_cannot_hold = TRUE},
    /* Whole messages, which core/wire.c decodes as messages. */
    [VIGIL_WIRE_BATCH] = {.name = "batch",
                          .item_count = WIRE_SOME_MESSAGES,
                          .batch_cannot_hold = TRUE,
                          .items_offset = offsetof(struct vigil_wire_message, inner),
                          .item_bytes = sizeof(struct vigil_wire_message)},
    [VIGIL_WIRE_NODE] = {ITEMS("node", nodes, node_fields, check_node),
                         .item_count = WIRE_ONE_ITEM},
    [VIGIL_WIRE_PROCESSES] = {ITEMS("processes", processes, process_fields, check_process)},
    [VIGIL_WIRE_ROLLUPS] = {ITEMS("rollups", rollups, rollup_fields, check_rollup)},
    [VIGIL_WIRE_WINDOWS] = {ITEMS("windows", windows, window_fields, check_window)},
    [VIGIL_WIRE_SUMMARIES] = {ITEMS("summaries", summaries, summary_fields, check_summary)},
    [VIGIL_WIRE_REFUSED] = {ITEMS("refused", refusals, refusal_fields, check_refusal),
                            .item_count = WIRE_ONE_ITEM, .batch_cannot_hold = TRUE},
    [VIGIL_WIRE_JOBS] = {ITEMS("jobs", jobs, job_fields, check_job)},
    [VIGIL_WIRE_DROPS] = {ITEMS("drops", drops, drop_fields, check_drop)},
    [VIGIL_WIRE_UNWATCHED_ENDS] = {ITEMS("unwatched_ends", unwatched_ends, unwatched_end_fields,
                                         check_unwatched_end)},
};

/* ---- what the codec derives from each layout ------------------------------ */

static gboolean is_fixed(const struct wire_field *f)
{
    return f->kind == WIRE_FIXED || f->kind == WIRE_ZERO;
}

/* Whether f's wire bytes are its member's, where a run of them that ends
 * at the item's byte `end` can take it in. */
static gboolean extends_copy(const struct wire_field *f, size_t end)
{
    return G_BYTE_ORDER == G_LITTLE_ENDIAN && f->kind == WIRE_FIXED &&
           f->wire_bytes == f->member_bytes && f->offset == end;
}

static void derive_layout(struct wire_type *t)
{
    struct wire_layout *l = &t->layout;
    const struct wire_field *f = t->fields;
    while (l->fixed_fields < t->field_count && is_fixed(&f[l->fixed_fields]))
        l->fixed_bytes += f[l->fixed_fields++].wire_bytes;
    l->min_bytes = l->fixed_bytes;
    for (size_t i = l->fixed_fields; i < t->field_count; i++) {
        /* The decoder takes the fixed part whole, before the rest. */
        g_assert(!is_fixed(&f[i]));
        l->min_bytes += wire_length_prefix_bytes(f[i].kind);
    }
    l->copied_offset = t->field_count > 0 ? f[0].offset : 0;
    while (l->copied_fields < t->field_count &&
           extends_copy(&f[l->copied_fields], l->copied_offset + l->copied_bytes))
        l->copied_bytes += f[l->copied_fields++].wire_bytes;
    l->copies_whole_item = t->field_count > 0 && l->copied_fields == t->field_count &&
                           l->copied_offset == 0 && l->copied_bytes == t->item_bytes;
}

const struct wire_type *vigil_wire_types(void)
{
    static gsize derived = 0;
    if (g_once_init_enter(&derived)) {
        for (size_t i = 0; i < G_N_ELEMENTS(types); i++)
            derive_layout(&types[i]);
        g_once_init_leave(&derived, 1);
    }
    return types;
}

const struct wire_type *vigil_wire_type(unsigned type)
{
    const struct wire_type *all = vigil_wire_types();
    return type <= VIGIL_WIRE_TYPE_COUNT && all[type].name != NULL ? &all[type] : NULL;
}
