/* vigil — the roll-up levels' blocks aggregated in C, exactly as
 * vigil_build_level_blocks (migration 15) aggregates them in SQL: the
 * reference the pg suite compares this with, element by element.
 *
 * Exactly means PostgreSQL's arithmetic: a roll-up's length is
 * date_part('epoch', end - start) (the interval's whole days apart), its
 * block and slot come from floor() of epoch seconds as doubles; sums are
 * IEEE sums in the order the rows come; min and max order a NaN above
 * every number (float8smaller/float8larger: a NaN min only when every
 * value is NaN, a NaN max when any is); the mean is NULL where the slot's
 * samples sum to 0, delta NULL where every delta is (a gauge's), the
 * rates skip a NULL delta and a roll-up of 0 s. A slot without a roll-up
 * holds samples 0 and NULLs. Where SQL would stop with "value out of
 * range" (a sum past a double), this keeps IEEE's infinity. */
#include <math.h>
#include <string.h>

#include "levels_blocks.h"
#include "vigil/warehouse.h"

#define USECS_PER_DAY G_GINT64_CONSTANT(86400000000)

/* What a slot has seen: a roll-up, a delta that is not NULL, a rate. */
enum { SLOT_ROLLUP = 1, SLOT_DELTA = 2, SLOT_RATE = 4 };

enum { SECONDS, MIN, MEAN_SUM, MAX, DELTA, RATE_MIN, RATE_MAX, SLOT_DOUBLES };

/* One slot of one node's, metric's and block's: what its roll-ups add up
 * to so far. The block's slots side by side, so that a slot's update
 * touches one place. */
struct slot {
    int64_t samples;
    double v[SLOT_DOUBLES];
    uint8_t flags;
};

struct node_blocks {
    int64_t node_id;
    GHashTable *metric_index; /* metric id → its index + 1 */
    GArray *metric_ids;       /* int32_t, by index */
    GPtrArray *cells;         /* struct slot[slots], index × blocks + block; NULL: none yet */
    GHashTable *set_maps;     /* metric set id → guint[]: element i's metric index */
};

struct levels_blocks {
    GHashTable *sets;
    int level_s, slots;
    int64_t from_us, block_us;
    uint32_t blocks;
    GHashTable *nodes; /* &node_id → struct node_blocks */
    struct node_blocks *last;
    /* One row's arrays. */
    uint32_t room;
    int32_t *samples;
    double *min, *mean, *max, *delta;
    gboolean *delta_null, *scratch_null;
};

/* PostgreSQL's float8 order: NaN above everything, equal to itself. */
static inline gboolean pg_lt(double a, double b)
{
    return isnan(a) ? FALSE : (isnan(b) ? TRUE : a < b);
}

static inline gboolean pg_gt(double a, double b)
{
    return isnan(a) ? !isnan(b) : (isnan(b) ? FALSE : a > b);
}

/* float8smaller and float8larger as min() and max() step: the state kept
 * unless it is strictly beyond the new value. */
static inline double pg_smaller(double state, double v)
{
    return pg_lt(state, v) ? state : v;
}

static inline double pg_larger(double state, double v)
{
    return pg_gt(state, v) ? state : v;
}

/* date_part('epoch', end - start): timestamp_mi justifies whole days out
 * of the µs, and the epoch of an interval adds them back as seconds. */
static double interval_seconds(int64_t end_us, int64_t start_us)
{
    int64_t time_us = end_us - start_us;
    int64_t days = time_us / USECS_PER_DAY;
    time_us -= days * USECS_PER_DAY;
    return (double)time_us / 1000000.0 + (double)(days * 86400);
}

static void node_blocks_free(gpointer p)
{
    struct node_blocks *n = p;
    g_hash_table_destroy(n->metric_index);
    g_array_unref(n->metric_ids);
    g_ptr_array_unref(n->cells);
    g_hash_table_destroy(n->set_maps);
    g_free(n);
}

struct levels_blocks *levels_blocks_new(GHashTable *metric_sets, int level_s, int block_slots,
                                        int64_t from_us, uint32_t blocks)
{
    struct levels_blocks *l = g_new0(struct levels_blocks, 1);
    l->sets = metric_sets;
    l->level_s = level_s;
    l->slots = block_slots;
    l->from_us = from_us;
    l->block_us = (int64_t)level_s * block_slots * 1000000;
    l->blocks = blocks;
    l->nodes = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, node_blocks_free);
    return l;
}

void levels_blocks_free(struct levels_blocks *l)
{
    if (l == NULL)
        return;
    g_hash_table_destroy(l->nodes);
    g_free(l->samples);
    g_free(l->min);
    g_free(l->mean);
    g_free(l->max);
    g_free(l->delta);
    g_free(l->delta_null);
    g_free(l->scratch_null);
    g_free(l);
}

static void make_room(struct levels_blocks *l, uint32_t n)
{
    if (n <= l->room)
        return;
    l->room = MAX(n, (uint32_t)l->slots);
    l->samples = g_renew(int32_t, l->samples, l->room);
    l->min = g_renew(double, l->min, l->room);
    l->mean = g_renew(double, l->mean, l->room);
    l->max = g_renew(double, l->max, l->room);
    l->delta = g_renew(double, l->delta, l->room);
    l->delta_null = g_renew(gboolean, l->delta_null, l->room);
    l->scratch_null = g_renew(gboolean, l->scratch_null, l->room);
}

static struct node_blocks *node_of(struct levels_blocks *l, int64_t node_id)
{
    if (l->last != NULL && l->last->node_id == node_id)
        return l->last;
    struct node_blocks *n = g_hash_table_lookup(l->nodes, &node_id);
    if (n == NULL) {
        n = g_new0(struct node_blocks, 1);
        n->node_id = node_id;
        n->metric_index = g_hash_table_new(g_direct_hash, g_direct_equal);
        n->metric_ids = g_array_new(FALSE, FALSE, sizeof(int32_t));
        n->cells = g_ptr_array_new_with_free_func(g_free);
        n->set_maps = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
        g_hash_table_insert(l->nodes, &n->node_id, n);
    }
    l->last = n;
    return n;
}

/* Element i of the set's arrays → the node's index of its metric. */
static const guint *set_map_of(struct levels_blocks *l, struct node_blocks *n, int32_t set_id,
                               const struct levels_metric_set *set)
{
    guint *map = g_hash_table_lookup(n->set_maps, GINT_TO_POINTER(set_id));
    if (map != NULL)
        return map;
    map = g_new(guint, MAX(set->n, 1));
    for (uint32_t i = 0; i < set->n; i++) {
        gpointer key = GINT_TO_POINTER(set->metric_ids[i]);
        guint index = GPOINTER_TO_UINT(g_hash_table_lookup(n->metric_index, key));
        if (index == 0) {
            g_array_append_val(n->metric_ids, set->metric_ids[i]);
            index = n->metric_ids->len;
            g_hash_table_insert(n->metric_index, key, GUINT_TO_POINTER(index));
            for (uint32_t b = 0; b < l->blocks; b++)
                g_ptr_array_add(n->cells, NULL);
        }
        map[i] = index - 1;
    }
    g_hash_table_insert(n->set_maps, GINT_TO_POINTER(set_id), map);
    return map;
}

static gboolean bad_row(GError **error, int64_t node_id, int64_t start_us, const char *why)
{
    g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                "building the roll-up levels: node %" G_GINT64_FORMAT
                "'s roll-up at %" G_GINT64_FORMAT " µs since 1970: %s",
                node_id, start_us, why);
    return FALSE;
}

gboolean levels_blocks_add(struct levels_blocks *l, const struct vigil_copy_field *f,
                           GError **error)
{
    int64_t node_id, start_us, end_us;
    int32_t set_id;
    if (!vigil_copy_get_int8(&f[0], "node_id", &node_id, error) ||
        !vigil_copy_get_int4(&f[1], "metric_set_id", &set_id, error) ||
        !vigil_copy_get_timestamp_us(&f[2], "start_time", &start_us, error) ||
        !vigil_copy_get_timestamp_us(&f[3], "end_time", &end_us, error))
        return FALSE;
    const struct levels_metric_set *set = g_hash_table_lookup(l->sets, GINT_TO_POINTER(set_id));
    if (set == NULL)
        return bad_row(error, node_id, start_us, "its metric set is not in metric_sets");
    make_room(l, set->n);
    uint32_t n[5];
    if (!vigil_copy_get_int4_array(&f[4], "samples", l->samples, set->n, &n[0], error) ||
        !vigil_copy_get_float8_array(&f[5], "min", l->min, l->scratch_null, set->n, &n[1], error) ||
        !vigil_copy_get_float8_array(&f[6], "mean", l->mean, l->scratch_null, set->n, &n[2],
                                     error) ||
        !vigil_copy_get_float8_array(&f[7], "max", l->max, l->scratch_null, set->n, &n[3], error) ||
        !vigil_copy_get_float8_array(&f[8], "delta", l->delta, l->delta_null, set->n, &n[4], error))
        return FALSE;
    for (unsigned i = 0; i < G_N_ELEMENTS(n); i++)
        if (n[i] != set->n)
            return bad_row(error, node_id, start_us,
                           "its arrays are not as long as its metric set");
    /* vigil_level_block_start and the slot, in PostgreSQL's doubles. */
    double epoch_s = (double)start_us / 1000000.0;
    double block_length_s = (double)l->level_s * l->slots;
    int64_t block_start_s = (int64_t)(floor(epoch_s / block_length_s) * block_length_s);
    int64_t block_start_us = block_start_s * 1000000;
    int64_t b = (block_start_us - l->from_us) / l->block_us;
    if (block_start_us < l->from_us || b >= l->blocks)
        return bad_row(error, node_id, start_us, "it is outside the blocks read");
    double k_double = floor((epoch_s - (double)block_start_s) / l->level_s);
    /* A slot past the block (it cannot be) is dropped, as the SQL's join drops it. */
    gboolean in_block = k_double >= 0 && k_double < l->slots;
    int k = in_block ? (int)k_double : 0;
    double seconds = interval_seconds(end_us, start_us);
    struct node_blocks *node = node_of(l, node_id);
    const guint *map = set_map_of(l, node, set_id, set);
    for (uint32_t i = 0; i < set->n; i++) {
        gpointer *at = &node->cells->pdata[(size_t)map[i] * l->blocks + (size_t)b];
        if (*at == NULL)
            *at = g_new0(struct slot, l->slots);
        if (!in_block)
            continue;
        struct slot *c = (struct slot *)*at + k;
        double *v = c->v;
        if (!(c->flags & SLOT_ROLLUP)) {
            c->flags |= SLOT_ROLLUP;
            c->samples = l->samples[i];
            v[SECONDS] = seconds;
            v[MIN] = l->min[i];
            v[MEAN_SUM] = l->mean[i] * (double)l->samples[i];
            v[MAX] = l->max[i];
        } else {
            c->samples += l->samples[i];
            v[SECONDS] += seconds;
            v[MIN] = pg_smaller(v[MIN], l->min[i]);
            v[MEAN_SUM] += l->mean[i] * (double)l->samples[i];
            v[MAX] = pg_larger(v[MAX], l->max[i]);
        }
        if (l->delta_null[i])
            continue;
        double delta = l->delta[i];
        if (!(c->flags & SLOT_DELTA)) {
            c->flags |= SLOT_DELTA;
            v[DELTA] = delta;
        } else {
            v[DELTA] += delta;
        }
        if (seconds == 0.0)
            continue;
        double rate = delta / seconds;
        if (!(c->flags & SLOT_RATE)) {
            c->flags |= SLOT_RATE;
            v[RATE_MIN] = v[RATE_MAX] = rate;
        } else {
            v[RATE_MIN] = pg_smaller(v[RATE_MIN], rate);
            v[RATE_MAX] = pg_larger(v[RATE_MAX], rate);
        }
    }
    return TRUE;
}

/* One column of a block: each slot's value, NULL where `needs` is not
 * among its flags. */
static void encode_column(struct vigil_copy *out, const struct slot *c, int slots, unsigned column,
                          uint8_t needs, double *values, gboolean *null)
{
    for (int k = 0; k < slots; k++) {
        null[k] = !(c[k].flags & needs);
        values[k] = null[k] ? 0 : c[k].v[column];
    }
    vigil_copy_float8_array_nulls(out, values, null, (uint32_t)slots);
}

gboolean levels_blocks_encode(struct levels_blocks *l, struct vigil_copy *out, guint64 *rows,
                              GError **error)
{
    make_room(l, (uint32_t)l->slots);
    int32_t *samples = l->samples;
    double *values = l->min;
    gboolean *null = l->scratch_null;
    *rows = 0;
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, l->nodes);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        const struct node_blocks *n = value;
        for (guint m = 0; m < n->metric_ids->len; m++) {
            for (uint32_t b = 0; b < l->blocks; b++) {
                const struct slot *c = n->cells->pdata[(size_t)m * l->blocks + b];
                if (c == NULL)
                    continue;
                int64_t block_start_us = l->from_us + (int64_t)b * l->block_us;
                for (int k = 0; k < l->slots; k++) {
                    if (c[k].samples > G_MAXINT32 || c[k].samples < G_MININT32)
                        return bad_row(error, n->node_id, block_start_us,
                                       "a slot's samples are past an integer");
                    samples[k] = (int32_t)c[k].samples;
                }
                vigil_copy_row(out, LEVELS_BLOCK_FIELDS);
                vigil_copy_int8(out, n->node_id);
                vigil_copy_int4(out, g_array_index(n->metric_ids, int32_t, m));
                vigil_copy_int4(out, l->level_s);
                vigil_copy_timestamp_ns(out, block_start_us * 1000);
                vigil_copy_int4_array(out, samples, (uint32_t)l->slots);
                encode_column(out, c, l->slots, SECONDS, SLOT_ROLLUP, values, null);
                encode_column(out, c, l->slots, MIN, SLOT_ROLLUP, values, null);
                /* The mean: NULL where the samples sum to 0. */
                for (int k = 0; k < l->slots; k++) {
                    null[k] = !(c[k].flags & SLOT_ROLLUP) || c[k].samples == 0;
                    values[k] = null[k] ? 0 : c[k].v[MEAN_SUM] / (double)c[k].samples;
                }
                vigil_copy_float8_array_nulls(out, values, null, (uint32_t)l->slots);
                encode_column(out, c, l->slots, MAX, SLOT_ROLLUP, values, null);
                encode_column(out, c, l->slots, DELTA, SLOT_DELTA, values, null);
                encode_column(out, c, l->slots, RATE_MIN, SLOT_RATE, values, null);
                encode_column(out, c, l->slots, RATE_MAX, SLOT_RATE, values, null);
                (*rows)++;
            }
        }
    }
    return TRUE;
}
