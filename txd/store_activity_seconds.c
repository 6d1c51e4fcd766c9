/* vigil-txd — a group's activities counted per process, second, layer and
 * operation while store.c writes them, then COPYed into activity_seconds
 * (warehouse/migrations/0014_activity_seconds.sql) in the group's
 * transaction: the counts come and go with the activities themselves, and
 * PostgreSQL aggregates nothing. The rows go in the order their first activity came,
 * which follows time within a process. */
#include "txd.h"

/* One row: its key, then what it sums. */
struct second_counts {
    int64_t node_id, process_id, second; /* second: start_ns floored, since the epoch */
    uint16_t layer, operation;
    /* Unsigned: a sum past 2^63 wraps as the int8 column would read it. */
    uint64_t calls, bytes, duration_ns;
};

struct txd_activity_seconds {
    GHashTable *by_key;  /* struct second_counts * (its key fields) → itself */
    GPtrArray *in_order; /* the same, as first met; owns them */
    struct second_counts *last;
};

static guint key_hash(gconstpointer p)
{
    const struct second_counts *k = p;
    uint64_t h = (uint64_t)k->process_id * UINT64_C(0x9E3779B97F4A7C15);
    h ^= (uint64_t)k->second * UINT64_C(0xC2B2AE3D27D4EB4F);
    h ^= ((uint64_t)k->layer << 16 | k->operation) * UINT64_C(0x165667B19E3779F9);
    h ^= (uint64_t)k->node_id;
    return (guint)(h ^ h >> 32);
}

static gboolean same_key(const struct second_counts *a, const struct second_counts *b)
{
    return a->process_id == b->process_id && a->second == b->second && a->layer == b->layer &&
           a->operation == b->operation && a->node_id == b->node_id;
}

static gboolean key_equal(gconstpointer a, gconstpointer b)
{
    return same_key(a, b);
}

struct txd_activity_seconds *txd_activity_seconds_new(void)
{
    struct txd_activity_seconds *s = g_new0(struct txd_activity_seconds, 1);
    s->by_key = g_hash_table_new(key_hash, key_equal);
    s->in_order = g_ptr_array_new_with_free_func(g_free);
    return s;
}

void txd_activity_seconds_free(struct txd_activity_seconds *s)
{
    if (s == NULL)
        return;
    g_hash_table_destroy(s->by_key);
    g_ptr_array_unref(s->in_order);
    g_free(s);
}

void txd_activity_seconds_add(struct txd_activity_seconds *s, int64_t node_id, int64_t process_id,
                              int64_t start_ns, uint16_t layer, uint16_t operation, uint64_t bytes,
                              int64_t duration_ns)
{
    const int64_t second_ns = G_GINT64_CONSTANT(1000000000);
    /* Floored, as the column's partitions and the heat map's bins are. */
    int64_t second =
        start_ns >= 0 ? start_ns / second_ns : -((-start_ns + second_ns - 1) / second_ns);
    struct second_counts key = {.node_id = node_id,
                                .process_id = process_id,
                                .second = second,
                                .layer = layer,
                                .operation = operation};
    /* A run of one operation in one second is the common case. */
    struct second_counts *c =
        s->last != NULL && same_key(s->last, &key) ? s->last : g_hash_table_lookup(s->by_key, &key);
    if (c == NULL) {
        c = g_memdup2(&key, sizeof key);
        g_hash_table_add(s->by_key, c);
        g_ptr_array_add(s->in_order, c);
    }
    c->calls++;
    c->bytes += bytes;
    c->duration_ns += (uint64_t)duration_ns;
    s->last = c;
}

gboolean txd_activity_seconds_copy(struct txd_activity_seconds *s, PGconn *db, GError **error)
{
    struct vigil_copy c;
    vigil_copy_init(&c);
    for (guint i = 0; i < s->in_order->len; i++) {
        const struct second_counts *r = g_ptr_array_index(s->in_order, i);
        vigil_copy_row(&c, 8);
        vigil_copy_int8(&c, r->node_id);
        vigil_copy_int8(&c, r->process_id);
        vigil_copy_timestamp_ns(&c, r->second * G_GINT64_CONSTANT(1000000000));
        vigil_copy_int2(&c, (int16_t)r->layer);
        vigil_copy_int2(&c, (int16_t)r->operation);
        vigil_copy_int8(&c, (int64_t)r->calls);
        vigil_copy_int8(&c, (int64_t)r->bytes);
        vigil_copy_int8(&c, (int64_t)r->duration_ns);
    }
    gboolean ok = txd_copy_send(db,
                                "COPY activity_seconds (node_id, process_id, start_time, layer, "
                                "operation, calls, bytes, duration_ns) FROM STDIN (FORMAT binary)",
                                &c, error);
    vigil_copy_clear(&c);
    return ok;
}
