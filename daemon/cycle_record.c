/* vigild — writing the cycle recording ([daemon] record): see cycle_record.h
 * for the format. Called from reasoning.c's entry points, so what is
 * written is exactly what the ADPIs and reasoners were given. */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "cycle_record.h"
#include "vigil/clock.h"
#include "vigil-build.h"
#include "energy_share.h"
#include "reasoning.h"
#include "tick_samples.h"
#include "verdicts.h"

struct vigild_cycle_record {
    char *path;
    FILE *file;
    uint64_t max_bytes;
    uint64_t bytes;
    gboolean limited;
    gboolean failed;
    uint32_t metrics_written; /* catalogue ids 1..this are in the file */
    GByteArray *payload;      /* the record being built */
    /* Activities of one process wait here until another record comes, so
     * that consecutive ones share one frame. */
    GByteArray *batch;
    uint64_t batch_process;
    uint64_t batch_count;
    uint64_t batch_last_start_ns, batch_last_seq;
    GArray *ids; /* uint64 process ids of a cycle, sorted */
};

/* ---- encoding -------------------------------------------------------------- */

/* The hot records (activities, samples) are encoded into a buffer on the
 * stack with these, then appended once: an append per field cost twice as
 * much (150 ns an activity, measured). */
static guint8 *enc_u64(guint8 *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (guint8)(v | 0x80);
        v >>= 7;
    }
    *p++ = (guint8)v;
    return p;
}

static guint8 *enc_i64(guint8 *p, int64_t v)
{
    /* Zigzag: small magnitudes of either sign take few bytes. */
    uint64_t sign = v < 0 ? UINT64_MAX : 0;
    return enc_u64(p, ((uint64_t)v << 1) ^ sign);
}

static guint8 *enc_double(guint8 *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; i++)
        *p++ = (guint8)(bits >> (8 * i));
    return p;
}

/* Room for the longest varint. */
#define VARINT_MAX_BYTES 10

static void put_u64(GByteArray *b, uint64_t v)
{
    guint8 bytes[VARINT_MAX_BYTES];
    g_byte_array_append(b, bytes, (guint)(enc_u64(bytes, v) - bytes));
}

static void put_i64(GByteArray *b, int64_t v)
{
    guint8 bytes[VARINT_MAX_BYTES];
    g_byte_array_append(b, bytes, (guint)(enc_i64(bytes, v) - bytes));
}

static void put_u8(GByteArray *b, guint8 v)
{
    g_byte_array_append(b, &v, 1);
}

static void put_double(GByteArray *b, double v)
{
    guint8 bytes[8];
    enc_double(bytes, v);
    g_byte_array_append(b, bytes, 8);
}

static void put_string(GByteArray *b, const char *s)
{
    size_t n = s != NULL ? strlen(s) : 0;
    put_u64(b, n);
    g_byte_array_append(b, (const guint8 *)(s != NULL ? s : ""), (guint)n);
}

static void put_le32(guint8 *out, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        out[i] = (guint8)(v >> (8 * i));
}

/* ---- framing --------------------------------------------------------------- */

static void write_failed(struct vigild_cycle_record *w)
{
    if (!w->failed)
        g_warning("record: cannot write %s: %s; recording stops", w->path, g_strerror(errno));
    w->failed = TRUE;
}

static void write_bytes(struct vigild_cycle_record *w, const void *data, size_t n)
{
    if (n > 0 && !w->failed && fwrite(data, 1, n, w->file) != n)
        write_failed(w);
    w->bytes += n;
}

static void emit(struct vigild_cycle_record *w, unsigned type, const GByteArray *payload);

/* The bound: the record goes when it fits with room for a LIMIT after it. */
static gboolean fits(struct vigild_cycle_record *w, guint payload_bytes)
{
    if (w->limited || w->failed)
        return FALSE;
    if (w->bytes + payload_bytes + 2u * VIGILD_RECORD_FRAME_BYTES <= w->max_bytes)
        return TRUE;
    w->limited = TRUE;
    g_warning("record: %s reached [daemon] record_max_bytes (%" G_GUINT64_FORMAT
              " bytes); recording stops here",
              w->path, w->max_bytes);
    GByteArray *none = g_byte_array_new();
    emit(w, VIGILD_RECORD_LIMIT, none); /* the room for it was kept */
    g_byte_array_free(none, TRUE);
    return FALSE;
}

static void emit(struct vigild_cycle_record *w, unsigned type, const GByteArray *payload)
{
    if (type != VIGILD_RECORD_LIMIT && !fits(w, payload->len))
        return;
    guint8 head[5];
    head[0] = (guint8)type;
    put_le32(head + 1, payload->len);
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, head, sizeof head);
    if (payload->len > 0) /* zlib's crc32 of a NULL buffer is its initial value */
        crc = crc32(crc, payload->data, payload->len);
    guint8 tail[4];
    put_le32(tail, (uint32_t)crc);
    write_bytes(w, head, sizeof head);
    write_bytes(w, payload->data, payload->len);
    write_bytes(w, tail, sizeof tail);
}

static void flush_batch(struct vigild_cycle_record *w)
{
    if (w->batch_count == 0)
        return;
    g_byte_array_set_size(w->payload, 0);
    put_u64(w->payload, w->batch_process);
    put_u64(w->payload, w->batch_count);
    g_byte_array_append(w->payload, w->batch->data, w->batch->len);
    emit(w, VIGILD_RECORD_ACTIVITIES, w->payload);
    g_byte_array_set_size(w->batch, 0);
    w->batch_count = 0;
}

/* A record other than activities: the batch before it goes first. */
static GByteArray *begin(struct vigild_cycle_record *w)
{
    flush_batch(w);
    g_byte_array_set_size(w->payload, 0);
    return w->payload;
}

/* ---- the records ------------------------------------------------------------ */

struct vigild_cycle_record *vigild_cycle_record_open(const char *path, uint64_t max_bytes,
                                                     uint64_t first_cycle_start_ns,
                                                     const char *node, GError **error)
{
    FILE *file = fopen(path, "wbe");
    if (file == NULL) {
        int e = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                    "[daemon] record: cannot open %s: %s", path, g_strerror(e));
        return NULL;
    }
    struct vigild_cycle_record *w = g_new0(struct vigild_cycle_record, 1);
    w->path = g_strdup(path);
    w->file = file;
    w->max_bytes = max_bytes;
    w->payload = g_byte_array_new();
    w->batch = g_byte_array_new();
    w->ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    guint8 header[VIGILD_RECORD_HEADER_BYTES] = {0};
    memcpy(header, VIGILD_RECORD_MAGIC, 8);
    put_le32(header + 8, VIGILD_RECORD_VERSION);
    write_bytes(w, header, sizeof header);
    GByteArray *b = begin(w);
    put_u64(b, first_cycle_start_ns);
    put_string(b, VIGIL_VERSION);
    put_string(b, node != NULL ? node : g_get_host_name());
    struct vigil_clock_offset offset;
    vigil_clock_offset_measure(&offset);
    put_i64(b, offset.realtime_minus_monotonic_ns);
    emit(w, VIGILD_RECORD_START, b);
    return w;
}

void vigild_cycle_record_config(struct vigild_cycle_record *w, const vigil_config *config)
{
    char *text = vigild_record_config_text(config);
    GByteArray *b = begin(w);
    put_string(b, text);
    emit(w, VIGILD_RECORD_CONFIG, b);
    g_free(text);
}

/* Metrics the catalogue got since the last record: a replay registers them
 * in the same order, so every id means the same metric. */
static void write_metrics(struct vigild_cycle_record *w, const vigil_metric_catalog *catalog)
{
    uint32_t count = vigil_metric_count(catalog);
    for (uint32_t id = w->metrics_written + 1; id <= count; id++) {
        const struct vigil_metric_desc *m = vigil_metric_get(catalog, id);
        GByteArray *b = begin(w);
        put_u64(b, id);
        put_u8(b, (guint8)m->kind);
        put_u8(b, (guint8)m->origin);
        put_string(b, m->name);
        put_string(b, m->unit);
        put_string(b, m->source);
        emit(w, VIGILD_RECORD_METRIC, b);
    }
    w->metrics_written = count;
}

static void put_sample(GByteArray *b, const struct vigil_sample *s, uint64_t tick_ns)
{
    guint8 bytes[3 * VARINT_MAX_BYTES + 8], *p = bytes;
    p = enc_u64(p, s->metric_id);
    p = enc_u64(p, s->flags);
    p = enc_i64(p, (int64_t)(s->t_ns - tick_ns));
    p = enc_double(p, s->value);
    g_byte_array_append(b, bytes, (guint)(p - bytes));
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void vigild_cycle_record_samples(struct vigild_cycle_record *w,
                                 const struct vigild_tick_samples *samples,
                                 const vigil_metric_catalog *catalog,
                                 const struct vigild_energy_share *energy)
{
    write_metrics(w, catalog);
    GByteArray *b = begin(w);
    put_u64(b, samples->t_ns);
    put_u64(b, energy->flags);
    put_u64(b, samples->node->len);
    for (guint i = 0; i < samples->node->len; i++)
        put_sample(b, &g_array_index(samples->node, struct vigil_sample, i), samples->t_ns);
    put_u64(b, samples->process->len);
    for (guint i = 0; i < samples->process->len; i++) {
        const struct vigild_process_sample *s =
            &g_array_index(samples->process, struct vigild_process_sample, i);
        put_u64(b, s->process_id);
        put_sample(b, &s->sample, samples->t_ns);
    }
    /* Each process's energy account as reasoning.c reads it this tick. */
    g_array_set_size(w->ids, 0);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, energy->processes);
    while (g_hash_table_iter_next(&it, &key, NULL))
        g_array_append_val(w->ids, *(uint64_t *)key);
    g_array_sort(w->ids, compare_u64);
    put_u64(b, w->ids->len);
    for (guint i = 0; i < w->ids->len; i++) {
        uint64_t id = g_array_index(w->ids, uint64_t, i);
        const struct vigild_energy_account *a = vigild_energy_share_account(energy, id);
        put_u64(b, id);
        put_u8(b, a->shared ? 1 : 0);
        put_double(b, a->energy_j);
    }
    emit(w, VIGILD_RECORD_SAMPLES, b);
}

void vigild_cycle_record_process(struct vigild_cycle_record *w, uint64_t process_id, gboolean ended)
{
    GByteArray *b = begin(w);
    put_u64(b, process_id);
    emit(w, ended ? VIGILD_RECORD_PROCESS_END : VIGILD_RECORD_PROCESS_ADD, b);
}

void vigild_cycle_record_activity(struct vigild_cycle_record *w, uint64_t process_id,
                                  const struct vigil_activity *a)
{
    if (w->batch_count > 0 && w->batch_process != process_id)
        flush_batch(w);
    if (w->batch_count == 0) {
        w->batch_process = process_id;
        w->batch_last_start_ns = 0;
        w->batch_last_seq = 0;
    }
    /* Times and sequence numbers as differences: a few bytes each. */
    guint8 bytes[1 + 13 * VARINT_MAX_BYTES], *p = bytes;
    *p++ = a->layer;
    p = enc_u64(p, a->op);
    p = enc_u64(p, a->file_id);
    p = enc_i64(p, (int64_t)(a->seq - w->batch_last_seq));
    p = enc_i64(p, (int64_t)(a->start_ns - w->batch_last_start_ns));
    p = enc_i64(p, (int64_t)(a->end_ns - a->start_ns));
    p = enc_i64(p, a->parent_start_ns == 0 ? 0 : (int64_t)(a->start_ns - a->parent_start_ns) + 1);
    p = enc_i64(p, a->offset_bytes);
    p = enc_u64(p, a->bytes_asked);
    p = enc_i64(p, a->result);
    p = enc_i64(p, a->errno_value);
    p = enc_u64(p, a->thread_id);
    p = enc_u64(p, a->flags);
    p = enc_u64(p, a->comm_size);
    GByteArray *b = w->batch;
    g_byte_array_append(b, bytes, (guint)(p - bytes));
    w->batch_last_seq = a->seq;
    w->batch_last_start_ns = a->start_ns;
    w->batch_count++;
    /* A batch stays well below the largest payload a reader takes. */
    if (b->len > (1u << 20))
        flush_batch(w);
}

static void put_verdict(GByteArray *b, const struct vigild_verdict *v)
{
    const struct vigil_reasoner_decision *d = &v->decision;
    put_u64(b, v->process_id);
    put_u8(b, (guint8)d->state);
    put_u8(b, (guint8)d->upward);
    put_u8(b, (guint8)d->own);
    put_u8(b, (guint8)d->own_raw);
    put_u8(b, (guint8)d->upward_raw);
    put_u8(b, (guint8)((d->held ? 1 : 0) | (d->upward_held ? 2 : 0) | (d->own_held ? 4 : 0)));
    put_u64(b, d->bad);
    put_u64(b, d->good);
    put_u64(b, d->other);
    put_u64(b, v->n_issues);
    for (guint i = 0; i < v->n_issues; i++) {
        const struct vigild_issue *issue = &v->issues[i];
        put_string(b, issue->plugin);
        put_u8(b, (guint8)issue->issue.health);
        put_string(b, issue->issue.metric);
        put_double(b, issue->issue.value);
        put_string(b, issue->issue.message);
    }
}

void vigild_cycle_record_cycle(struct vigild_cycle_record *w, const struct vigild_reasoning *r,
                               gboolean judge, const struct vigild_cycle_verdicts *v)
{
    GByteArray *b = begin(w);
    put_u64(b, v->cycle);
    put_u64(b, v->end_ns);
    put_u8(b, judge ? 1 : 0);
    put_u8(b, (guint8)v->system_state);
    g_array_set_size(w->ids, 0);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, r->processes);
    while (g_hash_table_iter_next(&it, &key, NULL))
        if (v->process(v->user, *(uint64_t *)key) != NULL)
            g_array_append_val(w->ids, *(uint64_t *)key);
    g_array_sort(w->ids, compare_u64);
    put_u64(b, w->ids->len + 1);
    put_verdict(b, v->node);
    for (guint i = 0; i < w->ids->len; i++)
        put_verdict(b, v->process(v->user, g_array_index(w->ids, uint64_t, i)));
    emit(w, VIGILD_RECORD_CYCLE, b);
    /* A cycle is the unit a replay needs whole: on disk at its end. */
    if (!w->failed && fflush(w->file) != 0)
        write_failed(w);
}

void vigild_cycle_record_close(struct vigild_cycle_record *w)
{
    if (w == NULL)
        return;
    GByteArray *b = begin(w);
    emit(w, VIGILD_RECORD_END, b);
    if (fclose(w->file) != 0 && !w->failed)
        g_warning("record: cannot write %s: %s", w->path, g_strerror(errno));
    g_byte_array_free(w->payload, TRUE);
    g_byte_array_free(w->batch, TRUE);
    g_array_free(w->ids, TRUE);
    g_free(w->path);
    g_free(w);
}

uint64_t vigild_cycle_record_bytes(const struct vigild_cycle_record *w)
{
    return w->bytes;
}

gboolean vigild_cycle_record_limited(const struct vigild_cycle_record *w)
{
    return w->limited;
}

const char *vigild_cycle_record_path(const struct vigild_cycle_record *w)
{
    return w->path;
}
