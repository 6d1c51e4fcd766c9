/* vigil-web — a series at a coarser level, bucketed in C (see
 * series_levels.h). The arithmetic is the SQL's it replaced, step for
 * step: per node, label and time the matching metrics are summed (a
 * slot, or a 1 s roll-up), then each such value falls in the bucket of
 * its time. NAN stands for SQL's NULL throughout: sums, mins and maxes
 * skip it, as SQL's aggregates skip NULL. */
#include <math.h>
#include <string.h>

#include "db_pool.h"
#include "pg_binary.h"
#include "series_levels.h"

/* The metrics of the labels, and whether each is an idle or iowait CPU
 * state (cpu's busy share leaves those out). $2 labels, $3 patterns. */
#define WANTED_SQL                                                                                 \
    "WITH parts AS (SELECT * FROM unnest($2::text[], $3::text[]) AS p(label, pattern)),"           \
    " wanted AS (SELECT m.metric_id, parts.label,"                                                 \
    "        (m.name LIKE '%.idle\\_s' OR m.name LIKE '%.iowait\\_s') AS idle"                     \
    "   FROM metrics m JOIN parts ON m.name LIKE parts.pattern)"

/* The level's blocks that may hold a slot of [$5, $6) (a block spans at
 * most a day), a line's in time order. $1 nodes, $4 the level. */
#define BLOCKS_SQL(arrays)                                                                         \
    WANTED_SQL " SELECT b.node_id, w.label, w.idle, b.block_start, b.samples, b.seconds, " arrays  \
               "   FROM statistics_level_blocks b JOIN wanted w USING (metric_id)"                 \
               "  WHERE b.node_id = ANY ($1::bigint[]) AND b.level_s = $4::int"                    \
               "    AND b.block_start > to_timestamp($5::float8 / 1e6::float8) - interval '1 day'" \
               "    AND b.block_start < to_timestamp($6::float8 / 1e6::float8)"                    \
               "  ORDER BY b.node_id, w.label, b.block_start, b.metric_id"

/* The 1 s roll-ups of [$4, $5) and [$6, $7) (the edges the level does not
 * serve), read from their arrays (migration 13): m says where each metric
 * is in each metric set. A line's in time order. */
#define ROLLUPS_SQL(values)                                                                        \
    WANTED_SQL ", m AS MATERIALIZED (SELECT s.metric_set_id, w.label, w.idle, i"                   \
               "   FROM metric_sets s JOIN wanted w ON w.metric_id = ANY (s.metric_ids),"          \
               "        unnest(array_positions(s.metric_ids, w.metric_id)) AS i)"                  \
               " SELECT a.node_id, m.label, m.idle, a.start_time, a.end_time, " values             \
               "   FROM statistics_rollup_arrays a JOIN m USING (metric_set_id)"                   \
               "  WHERE a.node_id = ANY ($1::bigint[])"                                            \
               "    AND ((a.start_time >= to_timestamp($4::float8 / 1e6::float8)"                  \
               "          AND a.start_time < to_timestamp($5::float8 / 1e6::float8))"              \
               "         OR (a.start_time >= to_timestamp($6::float8 / 1e6::float8)"               \
               "             AND a.start_time < to_timestamp($7::float8 / 1e6::float8)))"          \
               "  ORDER BY a.node_id, m.label, a.start_time, m.metric_set_id, m.i"

/* One value per node, label and time: the matching metrics summed (the
 * longest one's seconds), `idle` the idle and iowait states' deltas. */
struct per_t {
    double lo, mid, hi, dur, delta, rlo, rhi, idle;
};

/* One bucket: lo and hi its min and max; the mean is num / den (a
 * weighted mean, or sum / n for a plain average). */
struct bucket {
    double lo, num, den, hi;
    guint n;
};

struct line_state {
    struct bucket *buckets;
    gboolean pending; /* a 1 s roll-up's time is being summed in `acc` */
    gint64 t_us;
    struct per_t acc;
    double running; /* the running sum's deltas so far */
};

static const struct per_t PER_T_NULL = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN};

static void add(double *sum, double v)
{
    if (!isnan(v))
        *sum = isnan(*sum) ? v : *sum + v;
}

static void keep_min(double *m, double v)
{
    if (!isnan(v) && (isnan(*m) || v < *m))
        *m = v;
}

static void keep_max(double *m, double v)
{
    if (!isnan(v) && (isnan(*m) || v > *m))
        *m = v;
}

/* A metric's value at a time into its label's sum at that time. */
static void sum_into(struct per_t *acc, const struct per_t *v, gboolean idle)
{
    add(&acc->lo, v->lo);
    add(&acc->mid, v->mid);
    add(&acc->hi, v->hi);
    keep_max(&acc->dur, v->dur);
    add(&acc->delta, v->delta);
    add(&acc->rlo, v->rlo);
    add(&acc->rhi, v->rhi);
    if (idle)
        add(&acc->idle, v->delta);
}

/* A label's value at `t_us` into its bucket (SQL's BUCKET_SQL, in the
 * same float8 steps, so that a time on a bucket's edge falls alike). */
static void emit(const struct series_level_ask *ask, struct line_state *s, gint64 t_us,
                 const struct per_t *p)
{
    double v = NAN;
    if (ask->how == SERIES_RUNNING_SUM) {
        add(&s->running, p->delta);
        v = s->running;
    } else if (ask->how == SERIES_CPU_BUSY) {
        v = isnan(p->idle) || isnan(p->delta) || p->delta == 0 ? NAN
                                                               : 100 * (1 - p->idle / p->delta);
    }
    double k = floor(((double)t_us / 1e6 - (double)ask->from_us / 1e6) * (double)ask->points /
                     (((double)ask->to_us - (double)ask->from_us) / 1e6));
    k = MIN((double)ask->points - 1, k);
    if (!(k >= 0))
        return;
    struct bucket *b = &s->buckets[(guint)k];
    switch (ask->how) {
    case SERIES_GAUGE:
        keep_min(&b->lo, p->lo);
        if (!isnan(p->mid) && !isnan(p->dur))
            add(&b->num, p->mid * p->dur);
        add(&b->den, p->dur);
        keep_max(&b->hi, p->hi);
        break;
    case SERIES_RATE:
        keep_min(&b->lo, p->rlo);
        add(&b->num, p->delta);
        if (!isnan(p->delta))
            add(&b->den, p->dur);
        keep_max(&b->hi, p->rhi);
        break;
    case SERIES_RUNNING_SUM:
    case SERIES_CPU_BUSY:
        keep_min(&b->lo, v);
        if (!isnan(v)) {
            add(&b->num, v);
            b->n++;
        }
        keep_max(&b->hi, v);
        break;
    }
}

static void flush(const struct series_level_ask *ask, struct line_state *s)
{
    if (s->pending)
        emit(ask, s, s->t_us, &s->acc);
    s->pending = FALSE;
}

/* The line of a row's node and label, or -1 (a node or label not asked). */
static int line_of(const struct series_level_ask *ask, GHashTable *node_index, const PGresult *r,
                   int row)
{
    gint64 node = web_pg_int8(r, row, 0);
    int place = GPOINTER_TO_INT(g_hash_table_lookup(node_index, &node)) - 1;
    const char *label = PQgetvalue(r, row, 1);
    for (guint p = 0; place >= 0 && p < ask->n_parts; p++)
        if (strcmp(ask->part_labels[p], label) == 0)
            return place * (int)ask->n_parts + (int)p;
    return -1;
}

/* The 1 s roll-ups' rows before the level's part (`head`) or after it. */
static void rollup_rows(const struct series_level_ask *ask, GHashTable *node_index,
                        const PGresult *r, struct line_state *states, gboolean head)
{
    gboolean gauge = ask->how == SERIES_GAUGE;
    for (int row = 0; row < PQntuples(r); row++) {
        gint64 t_us = web_pg_timestamptz_us(r, row, 3);
        int line = line_of(ask, node_index, r, row);
        if (line < 0 || (t_us < ask->served_from_us) != head)
            continue;
        struct line_state *s = &states[line];
        if (s->pending && s->t_us != t_us)
            flush(ask, s);
        if (!s->pending) {
            s->pending = TRUE;
            s->t_us = t_us;
            s->acc = PER_T_NULL;
        }
        struct per_t v = PER_T_NULL;
        v.dur = (double)(web_pg_timestamptz_us(r, row, 4) - t_us) / 1e6;
        if (gauge) {
            v.lo = web_pg_float8(r, row, 5);
            v.mid = web_pg_float8(r, row, 6);
            v.hi = web_pg_float8(r, row, 7);
        } else {
            v.delta = web_pg_float8(r, row, 5);
            v.rlo = v.rhi = v.dur == 0 ? NAN : v.delta / v.dur;
        }
        sum_into(&s->acc, &v, web_pg_bool(r, row, 2));
    }
    for (guint i = 0; states[i].buckets != NULL; i++)
        flush(ask, &states[i]);
}

/* The level's blocks: the rows of one line and block start (one a
 * metric) summed per slot, the slots in the served part emitted in order. */
static gboolean block_rows(const struct series_level_ask *ask, GHashTable *node_index,
                           const PGresult *r, struct line_state *states, GError **error)
{
    gboolean gauge = ask->how == SERIES_GAUGE;
    gint64 slot_us = ask->level_s * G_GINT64_CONSTANT(1000000);
    GArray *slots = g_array_new(FALSE, FALSE, sizeof(struct per_t));
    GArray *filled = g_array_new(FALSE, TRUE, sizeof(gboolean));
    int rows = PQntuples(r);
    gboolean ok = TRUE;
    for (int first = 0; ok && first < rows;) {
        int line = line_of(ask, node_index, r, first);
        gint64 block_us = web_pg_timestamptz_us(r, first, 3);
        int end = first + 1;
        while (end < rows && line_of(ask, node_index, r, end) == line &&
               web_pg_timestamptz_us(r, end, 3) == block_us)
            end++;
        g_array_set_size(slots, 0);
        g_array_set_size(filled, 0);
        for (int row = first; ok && row < end && line >= 0; row++) {
            double *a[5] = {NULL};
            gint64 n = web_pg_int4_array(r, row, 4, &a[0], error); /* samples */
            for (int c = 1; ok && c < 5; c++)
                ok = n >= 0 && web_pg_float8_array(r, row, 4 + c, &a[c], error) == n;
            if (ok && n > (gint64)slots->len) {
                guint was = slots->len;
                g_array_set_size(slots, (guint)n);
                g_array_set_size(filled, (guint)n);
                for (guint k = was; k < slots->len; k++)
                    g_array_index(slots, struct per_t, k) = PER_T_NULL;
            }
            for (gint64 k = 0; ok && k < n; k++) {
                gint64 t_us = block_us + k * slot_us;
                if (!(a[0][k] > 0) || t_us < ask->served_from_us || t_us >= ask->served_to_us)
                    continue;
                struct per_t v = PER_T_NULL;
                v.dur = a[1][k];
                if (gauge) {
                    v.lo = a[2][k];
                    v.mid = a[3][k];
                    v.hi = a[4][k];
                } else {
                    v.delta = a[2][k];
                    v.rlo = a[3][k];
                    v.rhi = a[4][k];
                }
                sum_into(&g_array_index(slots, struct per_t, k), &v, web_pg_bool(r, row, 2));
                g_array_index(filled, gboolean, k) = TRUE;
            }
            if (ok == FALSE && error != NULL && *error == NULL)
                g_set_error(error, WEB_ERROR, WEB_ERROR_INTERNAL,
                            "a level block's arrays are not of one length");
            for (int c = 0; c < 5; c++)
                g_free(a[c]);
        }
        for (guint k = 0; ok && line >= 0 && k < slots->len; k++)
            if (g_array_index(filled, gboolean, k))
                emit(ask, &states[line], block_us + (gint64)k * slot_us,
                     &g_array_index(slots, struct per_t, k));
        first = end;
    }
    g_array_unref(slots);
    g_array_unref(filled);
    return ok;
}

gboolean web_series_level_fill(struct web_request *req, const struct series_level_ask *ask,
                               GPtrArray *lines, GHashTable *node_index, GError **error)
{
    gboolean gauge = ask->how == SERIES_GAUGE;
    char level[24], from[24], to[24], served_from[24], served_to[24];
    g_snprintf(level, sizeof level, "%" G_GINT64_FORMAT, ask->level_s);
    g_snprintf(from, sizeof from, "%" G_GINT64_FORMAT, ask->from_us);
    g_snprintf(to, sizeof to, "%" G_GINT64_FORMAT, ask->to_us);
    g_snprintf(served_from, sizeof served_from, "%" G_GINT64_FORMAT, ask->served_from_us);
    g_snprintf(served_to, sizeof served_to, "%" G_GINT64_FORMAT, ask->served_to_us);
    const char *block_params[] = {ask->node_ids, ask->labels, ask->patterns,
                                  level,         served_from, served_to};
    PGresult *blocks = web_db_query_prepared(
        req, gauge ? "vigil_web_series_gauge_blocks" : "vigil_web_series_counter_blocks",
        gauge ? BLOCKS_SQL("b.min, b.mean, b.max") : BLOCKS_SQL("b.delta, b.rate_min, b.rate_max"),
        G_N_ELEMENTS(block_params), block_params, error);
    if (blocks == NULL)
        return FALSE;
    /* The edges: only when the level does not serve the whole interval. */
    PGresult *rollups = NULL;
    if (ask->from_us < ask->served_from_us || ask->served_to_us < ask->to_us) {
        const char *params[] = {ask->node_ids, ask->labels, ask->patterns, from, served_from,
                                served_to,     to};
        rollups =
            web_db_query_binary(req,
                                gauge ? ROLLUPS_SQL("a.min[m.i], a.mean[m.i], a.max[m.i]")
                                      : ROLLUPS_SQL("a.delta[m.i], NULL::float8, NULL::float8"),
                                G_N_ELEMENTS(params), params, error);
        if (rollups == NULL) {
            PQclear(blocks);
            return FALSE;
        }
    }

    /* One state a line, and one more, zeroed, to end the array. */
    struct line_state *states = g_new0(struct line_state, lines->len + 1);
    for (guint i = 0; i < lines->len; i++) {
        states[i].buckets = g_new(struct bucket, ask->points);
        for (guint k = 0; k < ask->points; k++)
            states[i].buckets[k] = (struct bucket){NAN, NAN, NAN, NAN, 0};
        states[i].running = NAN;
    }
    if (rollups != NULL)
        rollup_rows(ask, node_index, rollups, states, TRUE);
    gboolean ok = block_rows(ask, node_index, blocks, states, error);
    if (ok && rollups != NULL)
        rollup_rows(ask, node_index, rollups, states, FALSE);
    for (guint i = 0; i < lines->len; i++) {
        struct series_line *l = g_ptr_array_index(lines, i);
        for (guint k = 0; ok && k < ask->points; k++) {
            const struct bucket *b = &states[i].buckets[k];
            l->lo[k] = b->lo;
            l->hi[k] = b->hi;
            if (ask->how == SERIES_RUNNING_SUM || ask->how == SERIES_CPU_BUSY)
                l->mid[k] = b->n > 0 ? b->num / b->n : NAN;
            else
                l->mid[k] = isnan(b->num) || isnan(b->den) || b->den == 0 ? NAN : b->num / b->den;
        }
        g_free(states[i].buckets);
    }
    g_free(states);
    PQclear(blocks);
    if (rollups != NULL)
        PQclear(rollups);
    return ok;
}
