/* vigild — what the uplink and the spool dropped of what the outbox gave
 * them: at memory_max_bytes when the spool cannot take a batch, at
 * spool_max_bytes (the oldest segments), a batch larger than the spool, a
 * batch vigil-txd refused that could not be kept, a batch lost with its
 * file. Each is counted here per process, from the batch itself: its
 * PROCESSES items say whose its ACTIVITIES are. The outbox carries the
 * counts to the warehouse in later batches (wire DROPS), `vigil status`
 * shows them.
 *
 * A batch is walked message by message once its own header and CRC (which
 * covers its inner messages) check; only PROCESSES messages are decoded,
 * and an ACTIVITIES message is counted by its header. */
#include <string.h>

#include "vigil/wire.h"
#include "uplink_drops.h"

struct process_key {
    int32_t pid;
    uint64_t start_ns;
};

struct vigild_drops {
    GMutex lock;
    uint64_t counter;
    uint64_t generation;
    GHashTable *counts; /* struct process_key * → struct vigild_drop_count * (the key) */
    struct vigild_drops_totals totals;
};

static guint key_hash(gconstpointer p)
{
    const struct vigild_drop_count *k = p;
    return g_int64_hash(&k->start_ns) ^ (guint)k->pid;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    const struct vigild_drop_count *x = a, *y = b;
    return x->pid == y->pid && x->start_ns == y->start_ns;
}

struct vigild_drops *vigild_drops_new(void)
{
    struct vigild_drops *d = g_new0(struct vigild_drops, 1);
    g_mutex_init(&d->lock);
    d->counts = g_hash_table_new_full(key_hash, key_equal, g_free, NULL);
    return d;
}

void vigild_drops_free(struct vigild_drops *d)
{
    if (d == NULL)
        return;
    g_hash_table_destroy(d->counts);
    g_mutex_clear(&d->lock);
    g_free(d);
}

void vigild_drops_set_counter(struct vigild_drops *d, uint64_t counter)
{
    g_mutex_lock(&d->lock);
    d->counter = counter;
    g_mutex_unlock(&d->lock);
}

uint64_t vigild_drops_counter(const struct vigild_drops *d)
{
    return d->counter;
}

static uint64_t load_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint32_t load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* What a batch holds, per process id of the batch. */
struct tally {
    GHashTable *whose; /* process id → struct process_key (owned) */
    GHashTable *count; /* process id → activities (in a gsize) */
};

/* An inner message of a batch whose CRC checked: its own header is read as
 * it is (its CRC is covered by the batch's), and only a PROCESSES message
 * is decoded. */
static void tally_message(struct tally *t, const uint8_t *m, size_t length)
{
    if (length < VIGIL_WIRE_HEADER_BYTES)
        return;
    unsigned type = (unsigned)m[6] | (unsigned)m[7] << 8;
    uint32_t count = load_u32(m + 24), payload_bytes = load_u32(m + 28);
    if (type == VIGIL_WIRE_ACTIVITIES && payload_bytes >= 8 &&
        length >= VIGIL_WIRE_HEADER_BYTES + 8) {
        uint64_t id = load_u64(m + VIGIL_WIRE_HEADER_BYTES);
        gsize before = GPOINTER_TO_SIZE(g_hash_table_lookup(t->count, &id));
        g_hash_table_replace(t->count, g_memdup2(&id, sizeof id), GSIZE_TO_POINTER(before + count));
    } else if (type == VIGIL_WIRE_PROCESSES) {
        struct vigil_wire_message decoded;
        if (!vigil_wire_decode(m, length, &decoded, NULL))
            return;
        for (uint32_t i = 0; i < decoded.header.count; i++) {
            const struct vigil_wire_process *p = &decoded.processes[i];
            struct process_key *k = g_new(struct process_key, 1);
            k->pid = p->pid;
            k->start_ns = p->start_ns;
            g_hash_table_replace(t->whose, g_memdup2(&p->process_id, sizeof p->process_id), k);
        }
        vigil_wire_message_clear(&decoded);
    }
}

/* Walks a BATCH's inner messages; FALSE when its frame does not check. */
static gboolean tally_batch(struct tally *t, const uint8_t *batch, size_t length)
{
    struct vigil_wire_header h;
    if (!vigil_wire_peek_header(batch, length, &h, NULL) || h.type != VIGIL_WIRE_BATCH)
        return FALSE;
    size_t at = VIGIL_WIRE_HEADER_BYTES, end = VIGIL_WIRE_HEADER_BYTES + h.payload_bytes;
    for (uint32_t i = 0; i < h.count && at + 4 <= end; i++) {
        size_t inner = load_u32(batch + at);
        at += 4;
        if (inner > end - at)
            break;
        tally_message(t, batch + at, inner);
        at += inner;
    }
    return TRUE;
}

static struct vigild_drop_count *count_of(struct vigild_drops *d, const struct process_key *k)
{
    struct vigild_drop_count probe = {.pid = k->pid, .start_ns = k->start_ns};
    struct vigild_drop_count *c = g_hash_table_lookup(d->counts, &probe);
    if (c == NULL) {
        c = g_memdup2(&probe, sizeof probe);
        g_hash_table_add(d->counts, c);
    }
    return c;
}

void vigild_drops_count_batch(struct vigild_drops *d, const uint8_t *batch, size_t length)
{
    struct tally t = {
        .whose = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free),
        .count = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
    };
    gboolean readable = tally_batch(&t, batch, length);
    g_mutex_lock(&d->lock);
    d->generation++;
    d->totals.batches++;
    if (!readable)
        d->totals.unknown_batches++;
    GHashTableIter it;
    gpointer id, activities;
    g_hash_table_iter_init(&it, t.count);
    while (g_hash_table_iter_next(&it, &id, &activities)) {
        uint64_t n = GPOINTER_TO_SIZE(activities);
        d->totals.activities += n;
        const struct process_key *k = g_hash_table_lookup(t.whose, id);
        if (k == NULL || n == 0)
            continue; /* every batch describes what it names: not from vigild's outbox */
        struct vigild_drop_count *c = count_of(d, k);
        c->activities += n;
        c->batches++;
    }
    g_mutex_unlock(&d->lock);
    g_hash_table_destroy(t.whose);
    g_hash_table_destroy(t.count);
}

void vigild_drops_count_unknown(struct vigild_drops *d)
{
    g_mutex_lock(&d->lock);
    d->generation++;
    d->totals.batches++;
    d->totals.unknown_batches++;
    g_mutex_unlock(&d->lock);
}

uint64_t vigild_drops_generation(struct vigild_drops *d)
{
    g_mutex_lock(&d->lock);
    uint64_t generation = d->generation;
    g_mutex_unlock(&d->lock);
    return generation;
}

GArray *vigild_drops_list(struct vigild_drops *d)
{
    g_mutex_lock(&d->lock);
    GArray *out = g_array_sized_new(FALSE, FALSE, sizeof(struct vigild_drop_count),
                                    g_hash_table_size(d->counts));
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, d->counts);
    while (g_hash_table_iter_next(&it, &key, NULL))
        g_array_append_vals(out, key, 1);
    g_mutex_unlock(&d->lock);
    return out;
}

void vigild_drops_totals(struct vigild_drops *d, struct vigild_drops_totals *out)
{
    g_mutex_lock(&d->lock);
    *out = d->totals;
    g_mutex_unlock(&d->lock);
}

gboolean vigild_drops_of(struct vigild_drops *d, int32_t pid, uint64_t start_ns,
                         struct vigild_drop_count *out)
{
    struct vigild_drop_count probe = {.pid = pid, .start_ns = start_ns};
    g_mutex_lock(&d->lock);
    const struct vigild_drop_count *c = g_hash_table_lookup(d->counts, &probe);
    if (c != NULL)
        *out = *c;
    g_mutex_unlock(&d->lock);
    return c != NULL;
}
