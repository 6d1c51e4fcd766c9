/* vigil — encoding and decoding of wire messages.
 *
 * Every byte the decoder sees may come from a broken disk or a hostile peer,
 * so it checks each length before reading and each field before keeping it.
 * The writer and the decoder call the same check for each item type: what
 * one refuses the other never produces. Integers are assembled byte by byte
 * so that the format does not depend on the host's endianness or alignment. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <zlib.h>

#include "vigil/health.h"
#include "vigil/local_protocol.h"
#include "vigil/wire.h"

GQuark vigil_wire_error_quark(void)
{
    return g_quark_from_static_string("vigil-wire-error-quark");
}

/* Header field offsets, as documented in wire.h. */
#define OFFSET_MAGIC         0u
#define OFFSET_VERSION       4u
#define OFFSET_TYPE          6u
#define OFFSET_NODE_ID       8u
#define OFFSET_SEQUENCE      16u
#define OFFSET_COUNT         24u
#define OFFSET_PAYLOAD_BYTES 28u
#define OFFSET_RESERVED      32u

#define PROCESS_ID_BYTES    8u
#define STRING_LENGTH_BYTES 2u
#define ACTIVITY_BYTES      80u
#define NAME_FIXED_BYTES    6u /* file id, path length */
#define METRIC_FIXED_BYTES  6u /* id, kind, origin; three strings follow */
#define METRIC_MIN_BYTES    (METRIC_FIXED_BYTES + 3 * STRING_LENGTH_BYTES)
#define SAMPLE_BYTES        24u
#define ANOMALY_FIXED_BYTES 44u /* everything before the three strings */
#define ANOMALY_MIN_BYTES   (ANOMALY_FIXED_BYTES + 3 * STRING_LENGTH_BYTES)
#define STATE_BYTES         36u
/* Version 2 */
#define TEXT_LENGTH_BYTES     4u
#define ARGC_BYTES            4u
#define NODE_FIXED_BYTES      40u /* everything before the hostname */
#define NODE_MIN_BYTES        (NODE_FIXED_BYTES + STRING_LENGTH_BYTES)
#define PROCESS_FIXED_BYTES   40u /* everything before run_key */
#define PROCESS_MIN_BYTES     (PROCESS_FIXED_BYTES + 4 * STRING_LENGTH_BYTES + ARGC_BYTES)
#define ROLLUP_BYTES          64u
#define WINDOW_FIXED_BYTES    48u /* everything before the reasons */
#define WINDOW_MIN_BYTES      (WINDOW_FIXED_BYTES + TEXT_LENGTH_BYTES)
#define SUMMARY_FIXED_BYTES   8u /* the process id */
#define SUMMARY_MIN_BYTES     (SUMMARY_FIXED_BYTES + TEXT_LENGTH_BYTES)
#define REFUSAL_MIN_BYTES     TEXT_LENGTH_BYTES
#define JOB_FIXED_BYTES       24u /* everything before job_id */
#define JOB_MIN_BYTES         (JOB_FIXED_BYTES + 4 * STRING_LENGTH_BYTES)
#define DROP_BYTES            40u
#define UNWATCHED_END_BYTES   72u
#define BATCH_LENGTH_BYTES    4u /* before each inner message */
#define BATCH_ENTRY_MIN_BYTES (BATCH_LENGTH_BYTES + VIGIL_WIRE_HEADER_BYTES)

_Static_assert(VIGIL_WIRE_MAX_PAYLOAD_BYTES <= UINT32_MAX, "payload length must fit its u32");
_Static_assert(VIGIL_WIRE_TEXT_MAX < VIGIL_WIRE_MAX_PAYLOAD_BYTES, "a text must fit a message");
/* A process's argv comes from its REGISTER message, which can hold at most
 * this many (empty) arguments: the wire must take every one of them. */
_Static_assert(VIGIL_WIRE_ARGV_MAX >= VIGIL_LOCAL_MAX_BYTES, "argv of a REGISTER must fit");

/* ---- little-endian primitives ------------------------------------------ */

static uint16_t load_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

static uint32_t load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t load_u64(const uint8_t *p)
{
    return (uint64_t)load_u32(p) | (uint64_t)load_u32(p + 4) << 32;
}

static void store_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void store_u32(uint8_t *p, uint32_t v)
{
    for (unsigned i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void store_u64(uint8_t *p, uint64_t v)
{
    store_u32(p, (uint32_t)v);
    store_u32(p + 4, (uint32_t)(v >> 32));
}

static uint64_t double_bits(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

static double double_from_bits(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Sequential reads from a span the caller has already bounds-checked. */

static uint8_t next_u8(const uint8_t **p)
{
    return *(*p)++;
}

static uint16_t next_u16(const uint8_t **p)
{
    uint16_t v = load_u16(*p);
    *p += 2;
    return v;
}

static uint32_t next_u32(const uint8_t **p)
{
    uint32_t v = load_u32(*p);
    *p += 4;
    return v;
}

static uint64_t next_u64(const uint8_t **p)
{
    uint64_t v = load_u64(*p);
    *p += 8;
    return v;
}

static double next_f64(const uint8_t **p)
{
    return double_from_bits(next_u64(p));
}

/* Sequential writes into a span the writer has already reserved. */

static void put_u8(uint8_t **p, uint8_t v)
{
    *(*p)++ = v;
}

static void put_u16(uint8_t **p, uint16_t v)
{
    store_u16(*p, v);
    *p += 2;
}

static void put_u32(uint8_t **p, uint32_t v)
{
    store_u32(*p, v);
    *p += 4;
}

static void put_u64(uint8_t **p, uint64_t v)
{
    store_u64(*p, v);
    *p += 8;
}

static void put_f64(uint8_t **p, double v)
{
    put_u64(p, double_bits(v));
}

static void put_bytes(uint8_t **p, const void *bytes, size_t length)
{
    if (length > 0)
        memcpy(*p, bytes, length);
    *p += length;
}

/* Callers have checked the length against VIGIL_WIRE_STRING_MAX. */
static void put_string(uint8_t **p, const char *s)
{
    size_t length = strlen(s);
    put_u16(p, (uint16_t)length);
    put_bytes(p, s, length);
}

static size_t string_wire_bytes(const char *s)
{
    return STRING_LENGTH_BYTES + strlen(s);
}

/* Callers have checked the length against VIGIL_WIRE_TEXT_MAX. */
static void put_text(uint8_t **p, const char *s)
{
    size_t length = strlen(s);
    put_u32(p, (uint32_t)length);
    put_bytes(p, s, length);
}

static size_t text_wire_bytes(const char *s)
{
    return TEXT_LENGTH_BYTES + strlen(s);
}

/* ---- item checks, shared by the writer and the decoder ----------------- */

static void set_error_va(GError **error, enum vigil_wire_error_code code, const char *format,
                         va_list ap) G_GNUC_PRINTF(3, 0);

static void set_error_va(GError **error, enum vigil_wire_error_code code, const char *format,
                         va_list ap)
{
    if (error == NULL)
        return;
    char *message = g_strdup_vprintf(format, ap);
    g_set_error_literal(error, VIGIL_WIRE_ERROR, code, message);
    g_free(message);
}

static gboolean wire_error(GError **error, enum vigil_wire_error_code code, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

static gboolean wire_error(GError **error, enum vigil_wire_error_code code, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    set_error_va(error, code, format, ap);
    va_end(ap);
    return FALSE;
}

/* Nearly every refusal is a malformed field. */
static gboolean malformed(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);

static gboolean malformed(GError **error, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    set_error_va(error, VIGIL_WIRE_ERROR_MALFORMED, format, ap);
    va_end(ap);
    return FALSE;
}

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

static gboolean check_activity(const struct vigil_activity *a, GError **error)
{
    struct vigil_error err;
    if (vigil_activity_check(a, &err))
        return TRUE;
    return malformed(error, "%s", err.message);
}

static gboolean check_name(uint32_t file_id, const char *path, size_t length, GError **error)
{
    struct vigil_error err;
    if (vigil_name_check(file_id, path, length, &err))
        return TRUE;
    return malformed(error, "%s", err.message);
}

static gboolean check_metric(const struct vigil_metric_desc *m, GError **error)
{
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

static gboolean check_sample(const struct vigil_sample *s, GError **error)
{
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

static gboolean check_anomaly(const struct vigil_wire_anomaly *a, GError **error)
{
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

static gboolean check_state(const struct vigil_wire_state *s, GError **error)
{
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

static gboolean check_node(const struct vigil_wire_node *n, GError **error)
{
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

static gboolean check_process(const struct vigil_wire_process *p, GError **error)
{
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

static gboolean check_rollup(const struct vigil_wire_rollup *r, GError **error)
{
    if (r->metric_id == 0)
        return malformed(error, "roll-up of metric 0, which is never a metric");
    if (check_rollup_fields(r, error))
        return TRUE;
    g_prefix_error(error, "roll-up of metric %" PRIu32 ": ", r->metric_id);
    return FALSE;
}

static gboolean check_window_fields(const struct vigil_wire_window *w, GError **error)
{
    if (w->first_cycle > w->last_cycle)
        return malformed(error, "first cycle %" PRIu64 " is after its last cycle %" PRIu64,
                         w->first_cycle, w->last_cycle);
    return check_span(w->start_ns, w->end_ns, error) &&
           check_long_text("reasons", w->reasons, error);
}

/* process_id 0 is the node's own window. */
static gboolean check_window(const struct vigil_wire_window *w, GError **error)
{
    if (check_window_fields(w, error))
        return TRUE;
    g_prefix_error(error, "window of process %" PRIu64 ": ", w->process_id);
    return FALSE;
}

/* The JSON is not parsed here: the warehouse's jsonb does, and refuses the
 * batch with the server's reason. */
static gboolean check_summary(const struct vigil_wire_summary *s, GError **error)
{
    if (s->process_id == 0)
        return malformed(error, "summary of process id 0, which is never a process");
    if (!check_long_text("report_json", s->report_json, error))
        return FALSE;
    if (s->report_json[0] == '\0')
        return malformed(error, "report_json is empty");
    return TRUE;
}

static gboolean check_job(const struct vigil_wire_job *j, GError **error)
{
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

static gboolean check_drop(const struct vigil_wire_drop *d, GError **error)
{
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

static gboolean check_unwatched_end(const struct vigil_wire_unwatched_end *e, GError **error)
{
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

static gboolean check_refusal(const struct vigil_wire_refusal *r, GError **error)
{
    if (!check_long_text("reason", r->reason, error))
        return FALSE;
    if (r->reason[0] == '\0')
        return malformed(error, "reason is empty");
    return TRUE;
}

/* ---- item encodings ------------------------------------------------------ */

static void encode_activity(uint8_t *p, const struct vigil_activity *a)
{
    put_u8(&p, a->record_type);
    put_u8(&p, a->layer);
    put_u16(&p, a->op);
    put_u32(&p, a->file_id);
    put_u64(&p, a->seq);
    put_u64(&p, a->parent_start_ns);
    put_u64(&p, a->start_ns);
    put_u64(&p, a->end_ns);
    put_u64(&p, (uint64_t)a->offset_bytes);
    put_u64(&p, a->bytes_asked);
    put_u64(&p, (uint64_t)a->result);
    put_u32(&p, (uint32_t)a->errno_value);
    put_u32(&p, a->thread_id);
    put_u32(&p, a->flags);
    put_u32(&p, a->comm_size);
}

static void encode_name(uint8_t *p, uint32_t file_id, const char *path, size_t length)
{
    put_u32(&p, file_id);
    put_u16(&p, (uint16_t)length);
    put_bytes(&p, path, length);
}

static void encode_metric(uint8_t *p, const struct vigil_metric_desc *m)
{
    put_u32(&p, m->id);
    put_u8(&p, (uint8_t)m->kind);
    put_u8(&p, (uint8_t)m->origin);
    put_string(&p, m->name);
    put_string(&p, m->unit);
    put_string(&p, m->source);
}

static void encode_sample(uint8_t *p, const struct vigil_sample *s)
{
    put_u32(&p, s->metric_id);
    put_u32(&p, s->flags);
    put_u64(&p, s->t_ns);
    put_f64(&p, s->value);
}

static void encode_anomaly(uint8_t *p, const struct vigil_wire_anomaly *a)
{
    put_u64(&p, a->cycle);
    put_u64(&p, a->process_id);
    put_u8(&p, a->level);
    put_u8(&p, a->health);
    put_u16(&p, 0);
    put_f64(&p, a->value);
    put_f64(&p, a->expected_min);
    put_f64(&p, a->expected_max);
    put_string(&p, a->plugin);
    put_string(&p, a->metric);
    put_string(&p, a->message);
}

static void encode_state(uint8_t *p, const struct vigil_wire_state *s)
{
    put_u64(&p, s->cycle);
    put_u64(&p, s->process_id);
    put_u8(&p, s->level);
    put_u8(&p, s->health);
    put_u16(&p, 0);
    put_u32(&p, s->overloaded_mask);
    put_u32(&p, s->bad_issues);
    put_u32(&p, s->good_issues);
    put_u32(&p, s->other_issues);
}

static void encode_node(uint8_t *p, const struct vigil_wire_node *n)
{
    put_u64(&p, (uint64_t)n->realtime_offset_ns);
    put_u64(&p, n->cycle);
    put_u64(&p, n->cycle_start_ns);
    put_u64(&p, n->cycle_end_ns);
    put_u32(&p, n->cycle_ms);
    put_u32(&p, 0);
    put_string(&p, n->hostname);
}

static size_t process_wire_bytes(const struct vigil_wire_process *proc)
{
    size_t bytes = PROCESS_FIXED_BYTES + string_wire_bytes(proc->run_key) +
                   string_wire_bytes(proc->job) + string_wire_bytes(proc->program) +
                   string_wire_bytes(proc->cwd) + ARGC_BYTES;
    for (uint32_t i = 0; i < proc->argc; i++)
        bytes += string_wire_bytes(proc->argv[i]);
    return bytes;
}

static void encode_process(uint8_t *p, const struct vigil_wire_process *proc)
{
    put_u64(&p, proc->process_id);
    put_u32(&p, (uint32_t)proc->pid);
    put_u32(&p, proc->uid);
    put_u32(&p, (uint32_t)proc->rank);
    put_u32(&p, (uint32_t)proc->exit_code);
    put_u64(&p, proc->start_ns);
    put_u64(&p, proc->end_ns);
    put_string(&p, proc->run_key);
    put_string(&p, proc->job);
    put_string(&p, proc->program);
    put_string(&p, proc->cwd);
    put_u32(&p, proc->argc);
    for (uint32_t i = 0; i < proc->argc; i++)
        put_string(&p, proc->argv[i]);
}

static void encode_rollup(uint8_t *p, const struct vigil_wire_rollup *r)
{
    put_u32(&p, r->metric_id);
    put_u32(&p, r->flags);
    put_u64(&p, r->start_ns);
    put_u64(&p, r->end_ns);
    put_u32(&p, r->count);
    put_u32(&p, 0);
    put_f64(&p, r->min);
    put_f64(&p, r->mean);
    put_f64(&p, r->max);
    put_f64(&p, r->delta);
}

static void encode_window(uint8_t *p, const struct vigil_wire_window *w)
{
    put_u64(&p, w->process_id);
    put_u64(&p, w->first_cycle);
    put_u64(&p, w->last_cycle);
    put_u64(&p, w->start_ns);
    put_u64(&p, w->end_ns);
    put_u64(&p, w->activities_forwarded);
    put_text(&p, w->reasons);
}

static void encode_summary(uint8_t *p, const struct vigil_wire_summary *s)
{
    put_u64(&p, s->process_id);
    put_text(&p, s->report_json);
}

static size_t job_wire_bytes(const struct vigil_wire_job *j)
{
    return JOB_FIXED_BYTES + string_wire_bytes(j->job_id) + string_wire_bytes(j->step_id) +
           string_wire_bytes(j->user) + string_wire_bytes(j->nodes);
}

static void encode_job(uint8_t *p, const struct vigil_wire_job *j)
{
    put_u64(&p, j->begin_ns);
    put_u64(&p, j->end_ns);
    put_u32(&p, j->uid);
    put_u32(&p, j->flags);
    put_string(&p, j->job_id);
    put_string(&p, j->step_id);
    put_string(&p, j->user);
    put_string(&p, j->nodes);
}

static void encode_drop(uint8_t *p, const struct vigil_wire_drop *d)
{
    put_u32(&p, (uint32_t)d->pid);
    put_u32(&p, 0);
    put_u64(&p, d->start_ns);
    put_u64(&p, d->counter);
    put_u64(&p, d->activities);
    put_u64(&p, d->batches);
}

static void encode_unwatched_end(uint8_t *p, const struct vigil_wire_unwatched_end *e)
{
    put_u64(&p, e->process_id);
    put_u64(&p, e->earliest_end_ns);
    put_u64(&p, e->latest_end_ns);
    put_u64(&p, e->activities);
    put_u64(&p, e->dropped);
    put_u64(&p, e->seq_gaps);
    put_f64(&p, e->cpu_s);
    put_f64(&p, e->energy_j);
    put_u32(&p, e->flags);
    put_u32(&p, 0);
}

static void encode_refusal(uint8_t *p, const struct vigil_wire_refusal *r)
{
    put_text(&p, r->reason);
}

/* ---- item decodings -------------------------------------------------------
 * Each gets its fixed-size part already bounds-checked, and reads anything
 * variable-length from `tail`, which it checks itself. */

struct reader {
    const uint8_t *p;
    size_t left_bytes;
};

static const uint8_t *reader_take(struct reader *r, size_t bytes)
{
    if (r->left_bytes < bytes)
        return NULL;
    const uint8_t *p = r->p;
    r->p += bytes;
    r->left_bytes -= bytes;
    return p;
}

static const uint8_t *read_bytes(struct reader *r, const char *field, size_t length, GError **error)
{
    const uint8_t *bytes = reader_take(r, length);
    if (bytes == NULL)
        malformed(error, "%s is truncated: needs %zu bytes, %zu left", field, length,
                  r->left_bytes);
    return bytes;
}

static char *copy_string(const uint8_t *bytes, size_t length)
{
    char *s = g_malloc(length + 1);
    if (length > 0)
        memcpy(s, bytes, length);
    s[length] = '\0';
    return s;
}

/* The text checks run later, on the copy; a NUL must be caught here because
 * the copy would silently end at it. */
static gboolean read_string(struct reader *r, const char *field, char **out, GError **error)
{
    const uint8_t *length_bytes = reader_take(r, STRING_LENGTH_BYTES);
    if (length_bytes == NULL)
        return malformed(error, "length of %s is truncated: needs %u bytes, %zu left", field,
                         STRING_LENGTH_BYTES, r->left_bytes);
    uint16_t length = load_u16(length_bytes);
    const uint8_t *bytes = read_bytes(r, field, length, error);
    if (bytes == NULL)
        return FALSE;
    if (memchr(bytes, '\0', length) != NULL)
        return malformed(error, "%s contains a NUL byte", field);
    *out = copy_string(bytes, length);
    return TRUE;
}

static gboolean check_reserved(uint16_t reserved, GError **error)
{
    if (reserved != 0)
        return malformed(error, "reserved field is 0x%04x, not 0", reserved);
    return TRUE;
}

static gboolean decode_activity(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    (void)tail;
    struct vigil_activity *a = item;
    a->record_type = next_u8(&p);
    a->layer = next_u8(&p);
    a->op = next_u16(&p);
    a->file_id = next_u32(&p);
    a->seq = next_u64(&p);
    a->parent_start_ns = next_u64(&p);
    a->start_ns = next_u64(&p);
    a->end_ns = next_u64(&p);
    a->offset_bytes = (int64_t)next_u64(&p);
    a->bytes_asked = next_u64(&p);
    a->result = (int64_t)next_u64(&p);
    a->errno_value = (int32_t)next_u32(&p);
    a->thread_id = next_u32(&p);
    a->flags = next_u32(&p);
    a->comm_size = next_u32(&p);
    return check_activity(a, error);
}

static gboolean decode_name(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    struct vigil_wire_name *n = item;
    n->file_id = next_u32(&p);
    n->length = next_u16(&p);
    const uint8_t *path = read_bytes(tail, "path", n->length, error);
    if (path == NULL || !check_name(n->file_id, (const char *)path, n->length, error))
        return FALSE;
    n->path = copy_string(path, n->length);
    return TRUE;
}

static gboolean decode_metric(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    struct vigil_metric_desc *m = item;
    m->id = next_u32(&p);
    m->kind = (enum vigil_metric_kind)next_u8(&p);
    m->origin = (enum vigil_metric_origin)next_u8(&p);
    return read_string(tail, "name", &m->name, error) &&
           read_string(tail, "unit", &m->unit, error) &&
           read_string(tail, "source", &m->source, error) && check_metric(m, error);
}

static gboolean decode_sample(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    (void)tail;
    struct vigil_sample *s = item;
    s->metric_id = next_u32(&p);
    s->flags = next_u32(&p);
    s->t_ns = next_u64(&p);
    s->value = next_f64(&p);
    return check_sample(s, error);
}

static gboolean decode_anomaly(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    struct vigil_wire_anomaly *a = item;
    a->cycle = next_u64(&p);
    a->process_id = next_u64(&p);
    a->level = next_u8(&p);
    a->health = next_u8(&p);
    uint16_t reserved = next_u16(&p);
    a->value = next_f64(&p);
    a->expected_min = next_f64(&p);
    a->expected_max = next_f64(&p);
    return check_reserved(reserved, error) && read_string(tail, "plugin", &a->plugin, error) &&
           read_string(tail, "metric", &a->metric, error) &&
           read_string(tail, "message", &a->message, error) && check_anomaly(a, error);
}

static gboolean decode_state(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    (void)tail;
    struct vigil_wire_state *s = item;
    s->cycle = next_u64(&p);
    s->process_id = next_u64(&p);
    s->level = next_u8(&p);
    s->health = next_u8(&p);
    uint16_t reserved = next_u16(&p);
    s->overloaded_mask = next_u32(&p);
    s->bad_issues = next_u32(&p);
    s->good_issues = next_u32(&p);
    s->other_issues = next_u32(&p);
    return check_reserved(reserved, error) && check_state(s, error);
}

/* A text's length is checked against its limit before its bytes are
 * looked for, so a huge length gets the right error. */
static gboolean read_text(struct reader *r, const char *field, char **out, GError **error)
{
    const uint8_t *length_bytes = reader_take(r, TEXT_LENGTH_BYTES);
    if (length_bytes == NULL)
        return malformed(error, "length of %s is truncated: needs %u bytes, %zu left", field,
                         TEXT_LENGTH_BYTES, r->left_bytes);
    uint32_t length = load_u32(length_bytes);
    if (length > VIGIL_WIRE_TEXT_MAX)
        return malformed(error, "%s of %" PRIu32 " bytes is longer than %u", field, length,
                         VIGIL_WIRE_TEXT_MAX);
    const uint8_t *bytes = read_bytes(r, field, length, error);
    if (bytes == NULL)
        return FALSE;
    if (memchr(bytes, '\0', length) != NULL)
        return malformed(error, "%s contains a NUL byte", field);
    *out = copy_string(bytes, length);
    return TRUE;
}

static gboolean decode_node(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    struct vigil_wire_node *n = item;
    n->realtime_offset_ns = (int64_t)next_u64(&p);
    n->cycle = next_u64(&p);
    n->cycle_start_ns = next_u64(&p);
    n->cycle_end_ns = next_u64(&p);
    n->cycle_ms = next_u32(&p);
    n->reserved = next_u32(&p);
    return read_string(tail, "hostname", &n->hostname, error) && check_node(n, error);
}

/* argc is checked before the array it sizes is allocated. */
static gboolean read_argv(struct reader *r, struct vigil_wire_process *proc, GError **error)
{
    const uint8_t *argc_bytes = reader_take(r, ARGC_BYTES);
    if (argc_bytes == NULL)
        return malformed(error, "argc is truncated: needs %u bytes, %zu left", ARGC_BYTES,
                         r->left_bytes);
    uint32_t argc = load_u32(argc_bytes);
    if (argc > VIGIL_WIRE_ARGV_MAX)
        return malformed(error, "argc %" PRIu32 " is over the limit of %u", argc,
                         VIGIL_WIRE_ARGV_MAX);
    proc->argv = g_new0(char *, (size_t)argc + 1);
    proc->argc = argc;
    for (uint32_t i = 0; i < argc; i++) {
        char field[32];
        g_snprintf(field, sizeof field, "argv[%" PRIu32 "]", i);
        if (!read_string(r, field, &proc->argv[i], error))
            return FALSE;
    }
    return TRUE;
}

static gboolean decode_process(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    struct vigil_wire_process *proc = item;
    proc->process_id = next_u64(&p);
    proc->pid = (int32_t)next_u32(&p);
    proc->uid = next_u32(&p);
    proc->rank = (int32_t)next_u32(&p);
    proc->exit_code = (int32_t)next_u32(&p);
    proc->start_ns = next_u64(&p);
    proc->end_ns = next_u64(&p);
    return read_string(tail, "run_key", &proc->run_key, error) &&
           read_string(tail, "job", &proc->job, error) &&
           read_string(tail, "program", &proc->program, error) &&
           read_string(tail, "cwd", &proc->cwd, error) && read_argv(tail, proc, error) &&
           check_process(proc, error);
}

static gboolean decode_rollup(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    (void)tail;
    struct vigil_wire_rollup *r = item;
    r->metric_id = next_u32(&p);
    r->flags = next_u32(&p);
    r->start_ns = next_u64(&p);
    r->end_ns = next_u64(&p);
    r->count = next_u32(&p);
    r->reserved = next_u32(&p);
    r->min = next_f64(&p);
    r->mean = next_f64(&p);
    r->max = next_f64(&p);
    r->delta = next_f64(&p);
    return check_rollup(r, error);
}

static gboolean decode_window(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    struct vigil_wire_window *w = item;
    w->process_id = next_u64(&p);
    w->first_cycle = next_u64(&p);
    w->last_cycle = next_u64(&p);
    w->start_ns = next_u64(&p);
    w->end_ns = next_u64(&p);
    w->activities_forwarded = next_u64(&p);
    return read_text(tail, "reasons", &w->reasons, error) && check_window(w, error);
}

static gboolean decode_summary(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    struct vigil_wire_summary *s = item;
    s->process_id = next_u64(&p);
    return read_text(tail, "report_json", &s->report_json, error) && check_summary(s, error);
}

static gboolean decode_job(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    struct vigil_wire_job *j = item;
    j->begin_ns = next_u64(&p);
    j->end_ns = next_u64(&p);
    j->uid = next_u32(&p);
    j->flags = next_u32(&p);
    return read_string(tail, "job_id", &j->job_id, error) &&
           read_string(tail, "step_id", &j->step_id, error) &&
           read_string(tail, "user", &j->user, error) &&
           read_string(tail, "nodes", &j->nodes, error) && check_job(j, error);
}

static gboolean decode_drop(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    (void)tail;
    struct vigil_wire_drop *d = item;
    d->pid = (int32_t)next_u32(&p);
    d->reserved = next_u32(&p);
    d->start_ns = next_u64(&p);
    d->counter = next_u64(&p);
    d->activities = next_u64(&p);
    d->batches = next_u64(&p);
    return check_drop(d, error);
}

static gboolean decode_unwatched_end(const uint8_t *p, struct reader *tail, void *item,
                                     GError **error)
{
    (void)tail;
    struct vigil_wire_unwatched_end *e = item;
    e->process_id = next_u64(&p);
    e->earliest_end_ns = next_u64(&p);
    e->latest_end_ns = next_u64(&p);
    e->activities = next_u64(&p);
    e->dropped = next_u64(&p);
    e->seq_gaps = next_u64(&p);
    e->cpu_s = next_f64(&p);
    e->energy_j = next_f64(&p);
    e->flags = next_u32(&p);
    e->reserved = next_u32(&p);
    return check_unwatched_end(e, error);
}

static gboolean decode_refusal(const uint8_t *p, struct reader *tail, void *item, GError **error)
{
    (void)p;
    struct vigil_wire_refusal *r = item;
    return read_text(tail, "reason", &r->reason, error) && check_refusal(r, error);
}

typedef gboolean (*item_decoder)(const uint8_t *fixed, struct reader *tail, void *item,
                                 GError **error);

struct item_codec {
    size_t item_size;   /* of the decoded struct */
    size_t fixed_bytes; /* read before any variable-length part */
    size_t min_bytes;   /* the smallest encoding: bounds a plausible count */
    item_decoder decode;
};

static const struct item_codec codecs[VIGIL_WIRE_TYPE_COUNT + 1] = {
    [VIGIL_WIRE_ACTIVITIES] = {sizeof(struct vigil_activity), ACTIVITY_BYTES, ACTIVITY_BYTES,
                               decode_activity},
    [VIGIL_WIRE_NAMES] = {sizeof(struct vigil_wire_name), NAME_FIXED_BYTES, NAME_FIXED_BYTES,
                          decode_name},
    [VIGIL_WIRE_METRICS] = {sizeof(struct vigil_metric_desc), METRIC_FIXED_BYTES, METRIC_MIN_BYTES,
                            decode_metric},
    [VIGIL_WIRE_SAMPLES] = {sizeof(struct vigil_sample), SAMPLE_BYTES, SAMPLE_BYTES, decode_sample},
    [VIGIL_WIRE_ANOMALIES] = {sizeof(struct vigil_wire_anomaly), ANOMALY_FIXED_BYTES,
                              ANOMALY_MIN_BYTES, decode_anomaly},
    [VIGIL_WIRE_STATES] = {sizeof(struct vigil_wire_state), STATE_BYTES, STATE_BYTES, decode_state},
    [VIGIL_WIRE_NODE] = {sizeof(struct vigil_wire_node), NODE_FIXED_BYTES, NODE_MIN_BYTES,
                         decode_node},
    [VIGIL_WIRE_PROCESSES] = {sizeof(struct vigil_wire_process), PROCESS_FIXED_BYTES,
                              PROCESS_MIN_BYTES, decode_process},
    [VIGIL_WIRE_ROLLUPS] = {sizeof(struct vigil_wire_rollup), ROLLUP_BYTES, ROLLUP_BYTES,
                            decode_rollup},
    [VIGIL_WIRE_WINDOWS] = {sizeof(struct vigil_wire_window), WINDOW_FIXED_BYTES, WINDOW_MIN_BYTES,
                            decode_window},
    [VIGIL_WIRE_SUMMARIES] = {sizeof(struct vigil_wire_summary), SUMMARY_FIXED_BYTES,
                              SUMMARY_MIN_BYTES, decode_summary},
    [VIGIL_WIRE_REFUSED] = {sizeof(struct vigil_wire_refusal), 0, REFUSAL_MIN_BYTES,
                            decode_refusal},
    [VIGIL_WIRE_JOBS] = {sizeof(struct vigil_wire_job), JOB_FIXED_BYTES, JOB_MIN_BYTES, decode_job},
    [VIGIL_WIRE_DROPS] = {sizeof(struct vigil_wire_drop), DROP_BYTES, DROP_BYTES, decode_drop},
    [VIGIL_WIRE_UNWATCHED_ENDS] = {sizeof(struct vigil_wire_unwatched_end), UNWATCHED_END_BYTES,
                                   UNWATCHED_END_BYTES, decode_unwatched_end},
    /* BATCH holds whole messages, not items: decode_batch. */
};

/* ---- messages ------------------------------------------------------------ */

static const char *const type_names[VIGIL_WIRE_TYPE_COUNT + 1] = {
    [VIGIL_WIRE_ACTIVITIES] = "activities",
    [VIGIL_WIRE_NAMES] = "names",
    [VIGIL_WIRE_METRICS] = "metrics",
    [VIGIL_WIRE_SAMPLES] = "samples",
    [VIGIL_WIRE_ANOMALIES] = "anomalies",
    [VIGIL_WIRE_STATES] = "states",
    [VIGIL_WIRE_ACK] = "ack",
    [VIGIL_WIRE_BATCH] = "batch",
    [VIGIL_WIRE_NODE] = "node",
    [VIGIL_WIRE_PROCESSES] = "processes",
    [VIGIL_WIRE_ROLLUPS] = "rollups",
    [VIGIL_WIRE_WINDOWS] = "windows",
    [VIGIL_WIRE_SUMMARIES] = "summaries",
    [VIGIL_WIRE_REFUSED] = "refused",
    [VIGIL_WIRE_JOBS] = "jobs",
    [VIGIL_WIRE_DROPS] = "drops",
    [VIGIL_WIRE_UNWATCHED_ENDS] = "unwatched_ends",
};

const char *vigil_wire_type_name(unsigned type)
{
    return type <= VIGIL_WIRE_TYPE_COUNT ? type_names[type] : NULL;
}

static gboolean carries_process_id(unsigned type)
{
    return type == VIGIL_WIRE_ACTIVITIES || type == VIGIL_WIRE_NAMES;
}

uint32_t vigil_wire_checksum(const uint8_t *message, size_t length)
{
    uLong crc = crc32_z(0, Z_NULL, 0);
    crc = crc32_z(crc, message, MIN(length, (size_t)VIGIL_WIRE_CRC_OFFSET));
    if (length > VIGIL_WIRE_HEADER_BYTES)
        crc = crc32_z(crc, message + VIGIL_WIRE_HEADER_BYTES, length - VIGIL_WIRE_HEADER_BYTES);
    return (uint32_t)crc;
}

static void free_names(struct vigil_wire_name *names, uint32_t count)
{
    for (uint32_t i = 0; names != NULL && i < count; i++)
        g_free(names[i].path);
}

static void free_metrics(struct vigil_metric_desc *metrics, uint32_t count)
{
    for (uint32_t i = 0; metrics != NULL && i < count; i++) {
        g_free(metrics[i].name);
        g_free(metrics[i].unit);
        g_free(metrics[i].source);
    }
}

static void free_anomalies(struct vigil_wire_anomaly *anomalies, uint32_t count)
{
    for (uint32_t i = 0; anomalies != NULL && i < count; i++) {
        g_free(anomalies[i].plugin);
        g_free(anomalies[i].metric);
        g_free(anomalies[i].message);
    }
}

static void free_nodes(struct vigil_wire_node *nodes, uint32_t count)
{
    for (uint32_t i = 0; nodes != NULL && i < count; i++)
        g_free(nodes[i].hostname);
}

/* argv is NULL-terminated however far its decoding got. */
static void free_processes(struct vigil_wire_process *processes, uint32_t count)
{
    for (uint32_t i = 0; processes != NULL && i < count; i++) {
        g_free(processes[i].run_key);
        g_free(processes[i].job);
        g_free(processes[i].program);
        g_free(processes[i].cwd);
        g_strfreev(processes[i].argv);
    }
}

static void free_windows(struct vigil_wire_window *windows, uint32_t count)
{
    for (uint32_t i = 0; windows != NULL && i < count; i++)
        g_free(windows[i].reasons);
}

static void free_summaries(struct vigil_wire_summary *summaries, uint32_t count)
{
    for (uint32_t i = 0; summaries != NULL && i < count; i++)
        g_free(summaries[i].report_json);
}

static void free_refusals(struct vigil_wire_refusal *refusals, uint32_t count)
{
    for (uint32_t i = 0; refusals != NULL && i < count; i++)
        g_free(refusals[i].reason);
}

static void free_jobs(struct vigil_wire_job *jobs, uint32_t count)
{
    for (uint32_t i = 0; jobs != NULL && i < count; i++) {
        g_free(jobs[i].job_id);
        g_free(jobs[i].step_id);
        g_free(jobs[i].user);
        g_free(jobs[i].nodes);
    }
}

static void free_inner(struct vigil_wire_message *inner, uint32_t count)
{
    for (uint32_t i = 0; inner != NULL && i < count; i++)
        vigil_wire_message_clear(&inner[i]);
}

/* Only the array of the message's type holds header.count items. */
static void free_item_strings(struct vigil_wire_message *m)
{
    uint32_t count = m->header.count;
    switch (m->header.type) {
    case VIGIL_WIRE_NAMES:
        free_names(m->names, count);
        break;
    case VIGIL_WIRE_METRICS:
        free_metrics(m->metrics, count);
        break;
    case VIGIL_WIRE_ANOMALIES:
        free_anomalies(m->anomalies, count);
        break;
    case VIGIL_WIRE_NODE:
        free_nodes(m->nodes, count);
        break;
    case VIGIL_WIRE_PROCESSES:
        free_processes(m->processes, count);
        break;
    case VIGIL_WIRE_WINDOWS:
        free_windows(m->windows, count);
        break;
    case VIGIL_WIRE_SUMMARIES:
        free_summaries(m->summaries, count);
        break;
    case VIGIL_WIRE_REFUSED:
        free_refusals(m->refusals, count);
        break;
    case VIGIL_WIRE_JOBS:
        free_jobs(m->jobs, count);
        break;
    case VIGIL_WIRE_BATCH:
        free_inner(m->inner, count);
        break;
    default:
        break;
    }
}

void vigil_wire_message_clear(struct vigil_wire_message *m)
{
    if (m == NULL)
        return;
    free_item_strings(m);
    g_free(m->activities);
    g_free(m->names);
    g_free(m->metrics);
    g_free(m->samples);
    g_free(m->anomalies);
    g_free(m->states);
    g_free(m->nodes);
    g_free(m->processes);
    g_free(m->rollups);
    g_free(m->windows);
    g_free(m->summaries);
    g_free(m->refusals);
    g_free(m->jobs);
    g_free(m->drops);
    g_free(m->unwatched_ends);
    g_free(m->inner);
    memset(m, 0, sizeof *m);
}

/* Everything that says whether these bytes are one whole message of this
 * format, before anything in them is trusted. The version is checked only
 * when asked: a peek reads the header of any version, since the header's
 * layout is the same in all of them. */
static gboolean decode_envelope(const uint8_t *b, size_t length, gboolean check_version,
                                struct vigil_wire_header *h, GError **error)
{
    if (length < VIGIL_WIRE_HEADER_BYTES)
        return wire_error(error, VIGIL_WIRE_ERROR_TRUNCATED,
                          "message of %zu bytes is shorter than the %u-byte header", length,
                          VIGIL_WIRE_HEADER_BYTES);
    h->magic = load_u32(b + OFFSET_MAGIC);
    if (h->magic != VIGIL_WIRE_MAGIC)
        return wire_error(error, VIGIL_WIRE_ERROR_MALFORMED, "not a vigil message: magic 0x%08x",
                          h->magic);
    h->version = load_u16(b + OFFSET_VERSION);
    if (check_version && h->version != VIGIL_WIRE_VERSION)
        return wire_error(error, VIGIL_WIRE_ERROR_VERSION,
                          "wire version %u, this vigil reads version %u", h->version,
                          VIGIL_WIRE_VERSION);
    h->payload_bytes = load_u32(b + OFFSET_PAYLOAD_BYTES);
    if (h->payload_bytes > VIGIL_WIRE_MAX_PAYLOAD_BYTES)
        return wire_error(error, VIGIL_WIRE_ERROR_TOO_LARGE,
                          "payload of %u bytes is over the limit of %u", h->payload_bytes,
                          VIGIL_WIRE_MAX_PAYLOAD_BYTES);
    size_t expected_bytes = (size_t)VIGIL_WIRE_HEADER_BYTES + h->payload_bytes;
    if (length != expected_bytes)
        return wire_error(error,
                          length < expected_bytes ? VIGIL_WIRE_ERROR_TRUNCATED
                                                  : VIGIL_WIRE_ERROR_MALFORMED,
                          "message of %zu bytes, but its header says %zu (%u of payload)", length,
                          expected_bytes, h->payload_bytes);
    uint32_t stored_crc = load_u32(b + VIGIL_WIRE_CRC_OFFSET);
    uint32_t actual_crc = vigil_wire_checksum(b, length);
    if (stored_crc != actual_crc)
        return wire_error(error, VIGIL_WIRE_ERROR_CHECKSUM,
                          "checksum mismatch: header says 0x%08x, the message has 0x%08x",
                          stored_crc, actual_crc);
    h->type = load_u16(b + OFFSET_TYPE);
    h->node_id = load_u64(b + OFFSET_NODE_ID);
    h->sequence = load_u64(b + OFFSET_SEQUENCE);
    h->count = load_u32(b + OFFSET_COUNT);
    return TRUE;
}

gboolean vigil_wire_peek_header(const void *data, size_t length, struct vigil_wire_header *out,
                                GError **error)
{
    g_return_val_if_fail(out != NULL, FALSE);
    memset(out, 0, sizeof *out);
    g_return_val_if_fail(data != NULL || length == 0, FALSE);
    struct vigil_wire_header header;
    if (!decode_envelope(data, length, FALSE, &header, error))
        return FALSE;
    *out = header;
    return TRUE;
}

static gboolean decode_header(const uint8_t *b, size_t length, struct vigil_wire_header *h,
                              GError **error)
{
    if (!decode_envelope(b, length, TRUE, h, error))
        return FALSE;
    uint32_t reserved = load_u32(b + OFFSET_RESERVED);
    if (reserved != 0)
        return malformed(error, "reserved header field is 0x%08x, not 0", reserved);
    if (vigil_wire_type_name(h->type) == NULL)
        return malformed(error, "unknown message type %u", h->type);
    return TRUE;
}

static void attach_items(struct vigil_wire_message *m, void *items)
{
    switch (m->header.type) {
    case VIGIL_WIRE_ACTIVITIES:
        m->activities = items;
        break;
    case VIGIL_WIRE_NAMES:
        m->names = items;
        break;
    case VIGIL_WIRE_METRICS:
        m->metrics = items;
        break;
    case VIGIL_WIRE_SAMPLES:
        m->samples = items;
        break;
    case VIGIL_WIRE_ANOMALIES:
        m->anomalies = items;
        break;
    case VIGIL_WIRE_STATES:
        m->states = items;
        break;
    case VIGIL_WIRE_NODE:
        m->nodes = items;
        break;
    case VIGIL_WIRE_PROCESSES:
        m->processes = items;
        break;
    case VIGIL_WIRE_ROLLUPS:
        m->rollups = items;
        break;
    case VIGIL_WIRE_WINDOWS:
        m->windows = items;
        break;
    case VIGIL_WIRE_SUMMARIES:
        m->summaries = items;
        break;
    case VIGIL_WIRE_REFUSED:
        m->refusals = items;
        break;
    case VIGIL_WIRE_JOBS:
        m->jobs = items;
        break;
    case VIGIL_WIRE_DROPS:
        m->drops = items;
        break;
    case VIGIL_WIRE_UNWATCHED_ENDS:
        m->unwatched_ends = items;
        break;
    default:
        g_assert_not_reached();
    }
}

static gboolean decode_items(struct reader *r, struct vigil_wire_message *m, GError **error)
{
    const char *name = vigil_wire_type_name(m->header.type);
    const struct item_codec *codec = &codecs[m->header.type];
    uint32_t count = m->header.count;
    /* A count the payload cannot hold must not size an allocation. */
    if (count > r->left_bytes / codec->min_bytes)
        return malformed(error,
                         "%s message: %u items need at least %zu bytes each, but only %zu "
                         "payload bytes hold items",
                         name, count, codec->min_bytes, r->left_bytes);
    uint8_t *items = g_malloc0_n(count, codec->item_size);
    attach_items(m, items);
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *fixed = reader_take(r, codec->fixed_bytes);
        if (fixed == NULL)
            return malformed(error,
                             "%s message: item %u of %u is truncated: needs %zu bytes, %zu left",
                             name, i + 1, count, codec->fixed_bytes, r->left_bytes);
        if (!codec->decode(fixed, r, items + (size_t)i * codec->item_size, error)) {
            g_prefix_error(error, "%s message: item %u of %u: ", name, i + 1, count);
            return FALSE;
        }
    }
    if (r->left_bytes != 0)
        return malformed(error, "%s message: %zu bytes left over after its %u items", name,
                         r->left_bytes, count);
    return TRUE;
}

/* How many items a message of this type may hold, whatever they are: an
 * ack none, a node or a refusal exactly one, a batch at least its node. */
static gboolean check_item_count(unsigned type, uint32_t count, GError **error)
{
    const char *name = vigil_wire_type_name(type);
    if (type == VIGIL_WIRE_ACK && count != 0)
        return malformed(error, "ack message with %u items; an ack carries none", count);
    if ((type == VIGIL_WIRE_NODE || type == VIGIL_WIRE_REFUSED) && count != 1)
        return malformed(error, "%s message with %u items; it holds exactly one", name, count);
    if (type == VIGIL_WIRE_BATCH && count == 0)
        return malformed(error, "batch message holds no messages; a batch starts with its node "
                                "message");
    return TRUE;
}

/* What a batch may hold at position `index` (from 0), judged from the
 * inner message's header alone. The caller names the position. */
static gboolean check_inner_header(const struct vigil_wire_header *inner, uint64_t node_id,
                                   uint64_t sequence, uint32_t index, GError **error)
{
    const char *name = vigil_wire_type_name(inner->type);
    if (inner->type == VIGIL_WIRE_BATCH || inner->type == VIGIL_WIRE_ACK ||
        inner->type == VIGIL_WIRE_REFUSED)
        return malformed(error, "%s message, which a batch cannot hold", name);
    if (inner->node_id != node_id)
        return malformed(error, "%s message of node %" PRIu64 ", but the batch is of node %" PRIu64,
                         name, inner->node_id, node_id);
    if (inner->sequence != sequence)
        return malformed(error, "%s message with sequence %" PRIu64 ", but the batch's is %" PRIu64,
                         name, inner->sequence, sequence);
    if (index == 0 && inner->type != VIGIL_WIRE_NODE)
        return malformed(error, "%s message first; a batch starts with its node message", name);
    if (index > 0 && inner->type == VIGIL_WIRE_NODE)
        return malformed(error, "a second node message; a batch has exactly one");
    return TRUE;
}

static gboolean decode_payload(const uint8_t *payload, struct vigil_wire_message *m,
                               GError **error);

/* One message of a batch, shared by the decoder and the writer: its header
 * is judged before its payload, so a batch inside a batch is refused before
 * it could be decoded (and recurse). `out` is left empty on failure. */
static gboolean decode_inner(const uint8_t *bytes, size_t length, uint64_t node_id,
                             uint64_t sequence, uint32_t index, struct vigil_wire_message *out,
                             GError **error)
{
    memset(out, 0, sizeof *out);
    struct vigil_wire_header header;
    if (!decode_header(bytes, length, &header, error) ||
        !check_inner_header(&header, node_id, sequence, index, error))
        return FALSE;
    out->header = header;
    if (decode_payload(bytes + VIGIL_WIRE_HEADER_BYTES, out, error))
        return TRUE;
    vigil_wire_message_clear(out);
    return FALSE;
}

static gboolean decode_batch(struct reader *r, struct vigil_wire_message *m, GError **error)
{
    uint32_t count = m->header.count;
    if (count > r->left_bytes / BATCH_ENTRY_MIN_BYTES)
        return malformed(error,
                         "batch message: %u messages need at least %u bytes each, but the "
                         "payload has %zu",
                         count, BATCH_ENTRY_MIN_BYTES, r->left_bytes);
    m->inner = g_new0(struct vigil_wire_message, count);
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *length_bytes = reader_take(r, BATCH_LENGTH_BYTES);
        if (length_bytes == NULL)
            return malformed(error,
                             "batch message: length of message %u of %u is truncated: needs %u "
                             "bytes, %zu left",
                             i + 1, count, BATCH_LENGTH_BYTES, r->left_bytes);
        uint32_t length = load_u32(length_bytes);
        const uint8_t *bytes = reader_take(r, length);
        if (bytes == NULL)
            return malformed(
                error,
                "batch message: message %u of %u is truncated: its length says %" PRIu32
                " bytes, %zu left",
                i + 1, count, length, r->left_bytes);
        if (!decode_inner(bytes, length, m->header.node_id, m->header.sequence, i, &m->inner[i],
                          error)) {
            g_prefix_error(error, "batch message: message %u of %u: ", i + 1, count);
            return FALSE;
        }
    }
    if (r->left_bytes != 0)
        return malformed(error, "batch message: %zu bytes left over after its %u messages",
                         r->left_bytes, count);
    return TRUE;
}

static gboolean decode_payload(const uint8_t *payload, struct vigil_wire_message *m, GError **error)
{
    const struct vigil_wire_header *h = &m->header;
    if (!check_item_count(h->type, h->count, error))
        return FALSE;
    struct reader r = {payload, h->payload_bytes};
    if (h->type == VIGIL_WIRE_ACK) {
        if (h->payload_bytes != 0)
            return malformed(error, "ack message with %u payload bytes; an ack carries none",
                             h->payload_bytes);
        return TRUE;
    }
    if (h->type == VIGIL_WIRE_BATCH)
        return decode_batch(&r, m, error);
    if (carries_process_id(h->type)) {
        const uint8_t *p = reader_take(&r, PROCESS_ID_BYTES);
        if (p == NULL)
            return malformed(error,
                             "%s message: payload of %u bytes has no room for the %u-byte "
                             "process id",
                             vigil_wire_type_name(h->type), h->payload_bytes, PROCESS_ID_BYTES);
        m->process_id = load_u64(p);
    }
    return decode_items(&r, m, error);
}

gboolean vigil_wire_decode(const void *data, size_t length, struct vigil_wire_message *out,
                           GError **error)
{
    g_return_val_if_fail(out != NULL, FALSE);
    memset(out, 0, sizeof *out);
    g_return_val_if_fail(data != NULL || length == 0, FALSE);
    const uint8_t *bytes = data;
    struct vigil_wire_header header;
    if (!decode_header(bytes, length, &header, error))
        return FALSE;
    out->header = header;
    if (decode_payload(bytes + VIGIL_WIRE_HEADER_BYTES, out, error))
        return TRUE;
    vigil_wire_message_clear(out);
    return FALSE;
}

/* ---- the writer ------------------------------------------------------------ */

struct vigil_wire_writer {
    GByteArray *bytes; /* header, then the payload so far */
    enum vigil_wire_type type;
    uint32_t count;
};

vigil_wire_writer *vigil_wire_writer_new(enum vigil_wire_type type, uint64_t node_id,
                                         uint64_t sequence, uint64_t process_id)
{
    g_return_val_if_fail(vigil_wire_type_name(type) != NULL, NULL);
    g_return_val_if_fail(carries_process_id(type) || process_id == 0, NULL);
    vigil_wire_writer *w = g_new0(vigil_wire_writer, 1);
    w->type = type;
    w->bytes = g_byte_array_sized_new(VIGIL_WIRE_HEADER_BYTES + PROCESS_ID_BYTES);
    g_byte_array_set_size(w->bytes, VIGIL_WIRE_HEADER_BYTES);
    uint8_t *h = w->bytes->data;
    memset(h, 0, VIGIL_WIRE_HEADER_BYTES);
    store_u32(h + OFFSET_MAGIC, VIGIL_WIRE_MAGIC);
    store_u16(h + OFFSET_VERSION, VIGIL_WIRE_VERSION);
    store_u16(h + OFFSET_TYPE, (uint16_t)type);
    store_u64(h + OFFSET_NODE_ID, node_id);
    store_u64(h + OFFSET_SEQUENCE, sequence);
    if (carries_process_id(type)) {
        uint8_t prefix[PROCESS_ID_BYTES];
        store_u64(prefix, process_id);
        g_byte_array_append(w->bytes, prefix, sizeof prefix);
    }
    return w;
}

void vigil_wire_writer_free(vigil_wire_writer *w)
{
    if (w == NULL)
        return;
    g_byte_array_unref(w->bytes);
    g_free(w);
}

uint32_t vigil_wire_writer_count(const vigil_wire_writer *w)
{
    g_return_val_if_fail(w != NULL, 0);
    return w->count;
}

/* Space for one more item at the end of the payload, counted. */
static uint8_t *writer_append_item(vigil_wire_writer *w, size_t item_bytes, GError **error)
{
    size_t payload_bytes = w->bytes->len - VIGIL_WIRE_HEADER_BYTES;
    if (item_bytes > VIGIL_WIRE_MAX_PAYLOAD_BYTES - payload_bytes) {
        wire_error(error, VIGIL_WIRE_ERROR_TOO_LARGE,
                   "cannot add to the %s message: %zu more bytes would take its payload of %zu "
                   "bytes over the limit of %u",
                   vigil_wire_type_name(w->type), item_bytes, payload_bytes,
                   VIGIL_WIRE_MAX_PAYLOAD_BYTES);
        return NULL;
    }
    g_byte_array_set_size(w->bytes, w->bytes->len + (guint)item_bytes);
    w->count++;
    return w->bytes->data + w->bytes->len - item_bytes;
}

static gboolean refuse(const vigil_wire_writer *w, GError **error)
{
    g_prefix_error(error, "cannot add to the %s message: ", vigil_wire_type_name(w->type));
    return FALSE;
}

gboolean vigil_wire_add_activity(vigil_wire_writer *w, const struct vigil_activity *activity,
                                 GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_ACTIVITIES, FALSE);
    g_return_val_if_fail(activity != NULL, FALSE);
    if (!check_activity(activity, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, ACTIVITY_BYTES, error);
    if (p == NULL)
        return FALSE;
    encode_activity(p, activity);
    return TRUE;
}

gboolean vigil_wire_add_name(vigil_wire_writer *w, uint32_t file_id, const char *path,
                             size_t length, GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_NAMES, FALSE);
    g_return_val_if_fail(path != NULL || length == 0, FALSE);
    if (path == NULL)
        path = "";
    if (!check_name(file_id, path, length, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, NAME_FIXED_BYTES + length, error);
    if (p == NULL)
        return FALSE;
    encode_name(p, file_id, path, length);
    return TRUE;
}

gboolean vigil_wire_add_metric(vigil_wire_writer *w, const struct vigil_metric_desc *metric,
                               GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_METRICS, FALSE);
    g_return_val_if_fail(metric != NULL, FALSE);
    if (!check_metric(metric, error))
        return refuse(w, error);
    size_t item_bytes = METRIC_FIXED_BYTES + string_wire_bytes(metric->name) +
                        string_wire_bytes(metric->unit) + string_wire_bytes(metric->source);
    uint8_t *p = writer_append_item(w, item_bytes, error);
    if (p == NULL)
        return FALSE;
    encode_metric(p, metric);
    return TRUE;
}

gboolean vigil_wire_add_sample(vigil_wire_writer *w, const struct vigil_sample *sample,
                               GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_SAMPLES, FALSE);
    g_return_val_if_fail(sample != NULL, FALSE);
    if (!check_sample(sample, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, SAMPLE_BYTES, error);
    if (p == NULL)
        return FALSE;
    encode_sample(p, sample);
    return TRUE;
}

gboolean vigil_wire_add_anomaly(vigil_wire_writer *w, const struct vigil_wire_anomaly *anomaly,
                                GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_ANOMALIES, FALSE);
    g_return_val_if_fail(anomaly != NULL, FALSE);
    if (!check_anomaly(anomaly, error))
        return refuse(w, error);
    size_t item_bytes = ANOMALY_FIXED_BYTES + string_wire_bytes(anomaly->plugin) +
                        string_wire_bytes(anomaly->metric) + string_wire_bytes(anomaly->message);
    uint8_t *p = writer_append_item(w, item_bytes, error);
    if (p == NULL)
        return FALSE;
    encode_anomaly(p, anomaly);
    return TRUE;
}

gboolean vigil_wire_add_state(vigil_wire_writer *w, const struct vigil_wire_state *state,
                              GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_STATES, FALSE);
    g_return_val_if_fail(state != NULL, FALSE);
    if (!check_state(state, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, STATE_BYTES, error);
    if (p == NULL)
        return FALSE;
    encode_state(p, state);
    return TRUE;
}

/* A node or a refusal message holds exactly one item. */
static gboolean writer_has_room(const vigil_wire_writer *w, GError **error)
{
    if ((w->type == VIGIL_WIRE_NODE || w->type == VIGIL_WIRE_REFUSED) && w->count == 1)
        return malformed(error,
                         "cannot add to the %s message: it holds exactly one item, and has it",
                         vigil_wire_type_name(w->type));
    return TRUE;
}

gboolean vigil_wire_add_node(vigil_wire_writer *w, const struct vigil_wire_node *node,
                             GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_NODE, FALSE);
    g_return_val_if_fail(node != NULL, FALSE);
    if (!writer_has_room(w, error))
        return FALSE;
    if (!check_node(node, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, NODE_FIXED_BYTES + string_wire_bytes(node->hostname), error);
    if (p == NULL)
        return FALSE;
    encode_node(p, node);
    return TRUE;
}

gboolean vigil_wire_add_process(vigil_wire_writer *w, const struct vigil_wire_process *process,
                                GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_PROCESSES, FALSE);
    g_return_val_if_fail(process != NULL, FALSE);
    if (!check_process(process, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, process_wire_bytes(process), error);
    if (p == NULL)
        return FALSE;
    encode_process(p, process);
    return TRUE;
}

gboolean vigil_wire_add_rollup(vigil_wire_writer *w, const struct vigil_wire_rollup *rollup,
                               GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_ROLLUPS, FALSE);
    g_return_val_if_fail(rollup != NULL, FALSE);
    if (!check_rollup(rollup, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, ROLLUP_BYTES, error);
    if (p == NULL)
        return FALSE;
    encode_rollup(p, rollup);
    return TRUE;
}

gboolean vigil_wire_add_window(vigil_wire_writer *w, const struct vigil_wire_window *window,
                               GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_WINDOWS, FALSE);
    g_return_val_if_fail(window != NULL, FALSE);
    if (!check_window(window, error))
        return refuse(w, error);
    uint8_t *p =
        writer_append_item(w, WINDOW_FIXED_BYTES + text_wire_bytes(window->reasons), error);
    if (p == NULL)
        return FALSE;
    encode_window(p, window);
    return TRUE;
}

gboolean vigil_wire_add_summary(vigil_wire_writer *w, const struct vigil_wire_summary *summary,
                                GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_SUMMARIES, FALSE);
    g_return_val_if_fail(summary != NULL, FALSE);
    if (!check_summary(summary, error))
        return refuse(w, error);
    uint8_t *p =
        writer_append_item(w, SUMMARY_FIXED_BYTES + text_wire_bytes(summary->report_json), error);
    if (p == NULL)
        return FALSE;
    encode_summary(p, summary);
    return TRUE;
}

gboolean vigil_wire_add_job(vigil_wire_writer *w, const struct vigil_wire_job *job, GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_JOBS, FALSE);
    g_return_val_if_fail(job != NULL, FALSE);
    if (!check_job(job, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, job_wire_bytes(job), error);
    if (p == NULL)
        return FALSE;
    encode_job(p, job);
    return TRUE;
}

gboolean vigil_wire_add_drop(vigil_wire_writer *w, const struct vigil_wire_drop *drop,
                             GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_DROPS, FALSE);
    g_return_val_if_fail(drop != NULL, FALSE);
    if (!check_drop(drop, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, DROP_BYTES, error);
    if (p == NULL)
        return FALSE;
    encode_drop(p, drop);
    return TRUE;
}

gboolean vigil_wire_add_unwatched_end(vigil_wire_writer *w,
                                      const struct vigil_wire_unwatched_end *end, GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_UNWATCHED_ENDS, FALSE);
    g_return_val_if_fail(end != NULL, FALSE);
    if (!check_unwatched_end(end, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, UNWATCHED_END_BYTES, error);
    if (p == NULL)
        return FALSE;
    encode_unwatched_end(p, end);
    return TRUE;
}

gboolean vigil_wire_add_refusal(vigil_wire_writer *w, const struct vigil_wire_refusal *refusal,
                                GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_REFUSED, FALSE);
    g_return_val_if_fail(refusal != NULL, FALSE);
    if (!writer_has_room(w, error))
        return FALSE;
    if (!check_refusal(refusal, error))
        return refuse(w, error);
    uint8_t *p = writer_append_item(w, text_wire_bytes(refusal->reason), error);
    if (p == NULL)
        return FALSE;
    encode_refusal(p, refusal);
    return TRUE;
}

/* The message is decoded whole, with the decoder's own batch rules: a
 * batch the writer makes is then one the decoder takes, whatever bytes the
 * caller passed. */
gboolean vigil_wire_add_message(vigil_wire_writer *w, GBytes *message, GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_BATCH, FALSE);
    g_return_val_if_fail(message != NULL, FALSE);
    gsize length;
    const uint8_t *bytes = g_bytes_get_data(message, &length);
    const uint8_t *h = w->bytes->data;
    struct vigil_wire_message inner;
    if (!decode_inner(bytes, length, load_u64(h + OFFSET_NODE_ID), load_u64(h + OFFSET_SEQUENCE),
                      w->count, &inner, error)) {
        g_prefix_error(error, "cannot add to the batch message: message %u: ", w->count + 1);
        return FALSE;
    }
    vigil_wire_message_clear(&inner);
    uint8_t *p = writer_append_item(w, BATCH_LENGTH_BYTES + length, error);
    if (p == NULL)
        return FALSE;
    put_u32(&p, (uint32_t)length); /* under the payload limit, as writer_append_item checked */
    put_bytes(&p, bytes, length);
    return TRUE;
}

gboolean vigil_wire_add_writer(vigil_wire_writer *w, vigil_wire_writer *inner, GError **error)
{
    g_return_val_if_fail(w != NULL && w->type == VIGIL_WIRE_BATCH, FALSE);
    g_return_val_if_fail(inner != NULL, FALSE);
    GBytes *message = vigil_wire_writer_finish(inner);
    if (message == NULL)
        return malformed(error, "cannot add to the batch message: message %u could not be finished",
                         w->count + 1);
    /* Its items passed the writer's checks as they were added: only what
     * makes it fit this batch is left to check, not its payload again. */
    gsize length;
    const uint8_t *bytes = g_bytes_get_data(message, &length);
    struct vigil_wire_header header = {
        .type = load_u16(bytes + OFFSET_TYPE),
        .node_id = load_u64(bytes + OFFSET_NODE_ID),
        .sequence = load_u64(bytes + OFFSET_SEQUENCE),
    };
    const uint8_t *h = w->bytes->data;
    gboolean ok = check_inner_header(&header, load_u64(h + OFFSET_NODE_ID),
                                     load_u64(h + OFFSET_SEQUENCE), w->count, error);
    if (!ok)
        g_prefix_error(error, "cannot add to the batch message: message %u: ", w->count + 1);
    uint8_t *p = ok ? writer_append_item(w, BATCH_LENGTH_BYTES + length, error) : NULL;
    if (p != NULL) {
        put_u32(&p, (uint32_t)length); /* under the payload limit, as writer_append_item checked */
        put_bytes(&p, bytes, length);
    }
    g_bytes_unref(message);
    return p != NULL;
}

GBytes *vigil_wire_writer_finish(vigil_wire_writer *w)
{
    g_return_val_if_fail(w != NULL, NULL);
    GError *error = NULL;
    if (!check_item_count(w->type, w->count, &error)) {
        /* The caller forgot its node or refusal, or built an empty batch. */
        g_critical("vigil_wire_writer_finish: %s", error->message);
        g_error_free(error);
        vigil_wire_writer_free(w);
        return NULL;
    }
    uint8_t *h = w->bytes->data;
    size_t length = w->bytes->len;
    store_u32(h + OFFSET_COUNT, w->count);
    store_u32(h + OFFSET_PAYLOAD_BYTES, (uint32_t)(length - VIGIL_WIRE_HEADER_BYTES));
    store_u32(h + VIGIL_WIRE_CRC_OFFSET, vigil_wire_checksum(h, length));
    GBytes *bytes = g_byte_array_free_to_bytes(w->bytes);
    g_free(w);
    return bytes;
}

/* ---- re-encoding a decoded message --------------------------------------- */

/* An inner message of a batch, encoded on its own and added whole. Its type
 * is checked first so that a batch in a batch cannot recurse. */
static gboolean add_inner(vigil_wire_writer *w, const struct vigil_wire_message *inner, uint32_t i,
                          GError **error)
{
    if (inner->header.type == VIGIL_WIRE_BATCH)
        return malformed(error,
                         "cannot add to the batch message: message %u: batch message, "
                         "which a batch cannot hold",
                         i + 1);
    GBytes *bytes = vigil_wire_encode_message(inner, error);
    if (bytes == NULL) {
        g_prefix_error(error, "cannot add to the batch message: message %u: ", i + 1);
        return FALSE;
    }
    gboolean ok = vigil_wire_add_message(w, bytes, error);
    g_bytes_unref(bytes);
    return ok;
}

static gboolean add_item(vigil_wire_writer *w, const struct vigil_wire_message *m, uint32_t i,
                         GError **error)
{
    switch (m->header.type) {
    case VIGIL_WIRE_ACTIVITIES:
        return vigil_wire_add_activity(w, &m->activities[i], error);
    case VIGIL_WIRE_NAMES:
        return vigil_wire_add_name(w, m->names[i].file_id, m->names[i].path, m->names[i].length,
                                   error);
    case VIGIL_WIRE_METRICS:
        return vigil_wire_add_metric(w, &m->metrics[i], error);
    case VIGIL_WIRE_SAMPLES:
        return vigil_wire_add_sample(w, &m->samples[i], error);
    case VIGIL_WIRE_ANOMALIES:
        return vigil_wire_add_anomaly(w, &m->anomalies[i], error);
    case VIGIL_WIRE_STATES:
        return vigil_wire_add_state(w, &m->states[i], error);
    case VIGIL_WIRE_BATCH:
        return add_inner(w, &m->inner[i], i, error);
    case VIGIL_WIRE_NODE:
        return vigil_wire_add_node(w, &m->nodes[i], error);
    case VIGIL_WIRE_PROCESSES:
        return vigil_wire_add_process(w, &m->processes[i], error);
    case VIGIL_WIRE_ROLLUPS:
        return vigil_wire_add_rollup(w, &m->rollups[i], error);
    case VIGIL_WIRE_WINDOWS:
        return vigil_wire_add_window(w, &m->windows[i], error);
    case VIGIL_WIRE_SUMMARIES:
        return vigil_wire_add_summary(w, &m->summaries[i], error);
    case VIGIL_WIRE_REFUSED:
        return vigil_wire_add_refusal(w, &m->refusals[i], error);
    case VIGIL_WIRE_JOBS:
        return vigil_wire_add_job(w, &m->jobs[i], error);
    case VIGIL_WIRE_DROPS:
        return vigil_wire_add_drop(w, &m->drops[i], error);
    case VIGIL_WIRE_UNWATCHED_ENDS:
        return vigil_wire_add_unwatched_end(w, &m->unwatched_ends[i], error);
    default:
        g_assert_not_reached();
    }
    return FALSE;
}

static gboolean message_has_items(const struct vigil_wire_message *m)
{
    switch (m->header.type) {
    case VIGIL_WIRE_ACTIVITIES:
        return m->activities != NULL;
    case VIGIL_WIRE_NAMES:
        return m->names != NULL;
    case VIGIL_WIRE_METRICS:
        return m->metrics != NULL;
    case VIGIL_WIRE_SAMPLES:
        return m->samples != NULL;
    case VIGIL_WIRE_ANOMALIES:
        return m->anomalies != NULL;
    case VIGIL_WIRE_STATES:
        return m->states != NULL;
    case VIGIL_WIRE_BATCH:
        return m->inner != NULL;
    case VIGIL_WIRE_NODE:
        return m->nodes != NULL;
    case VIGIL_WIRE_PROCESSES:
        return m->processes != NULL;
    case VIGIL_WIRE_ROLLUPS:
        return m->rollups != NULL;
    case VIGIL_WIRE_WINDOWS:
        return m->windows != NULL;
    case VIGIL_WIRE_SUMMARIES:
        return m->summaries != NULL;
    case VIGIL_WIRE_REFUSED:
        return m->refusals != NULL;
    case VIGIL_WIRE_JOBS:
        return m->jobs != NULL;
    case VIGIL_WIRE_DROPS:
        return m->drops != NULL;
    case VIGIL_WIRE_UNWATCHED_ENDS:
        return m->unwatched_ends != NULL;
    default:
        return FALSE;
    }
}

GBytes *vigil_wire_encode_message(const struct vigil_wire_message *m, GError **error)
{
    g_return_val_if_fail(m != NULL, NULL);
    unsigned type = m->header.type;
    if (vigil_wire_type_name(type) == NULL) {
        malformed(error, "cannot encode a message of unknown type %u", type);
        return NULL;
    }
    if (!carries_process_id(type) && m->process_id != 0) {
        malformed(error, "a %s message carries no process id, but it is %llu",
                  vigil_wire_type_name(type), (unsigned long long)m->process_id);
        return NULL;
    }
    if (!check_item_count(type, m->header.count, error))
        return NULL;
    if (m->header.count > 0 && !message_has_items(m)) {
        malformed(error, "a %s message of %u items without its items", vigil_wire_type_name(type),
                  m->header.count);
        return NULL;
    }
    vigil_wire_writer *w =
        vigil_wire_writer_new(type, m->header.node_id, m->header.sequence, m->process_id);
    for (uint32_t i = 0; i < m->header.count; i++) {
        if (!add_item(w, m, i, error)) {
            vigil_wire_writer_free(w);
            return NULL;
        }
    }
    return vigil_wire_writer_finish(w);
}
