/* vigil — one pass of building the coarser roll-up levels (migrations 15
 * and 16): the blocks that ended a margin ago, at most `span` of them a
 * level, and the stale blocks late batches marked.
 *
 * In one transaction: vigil_levels_plan (SQL, under the levels' try-lock)
 * says which blocks and records them built; then, a bounded read at a
 * time, the 1 s roll-ups' arrays come by binary COPY, are aggregated in C
 * (levels_blocks.c, exactly vigil_build_level_blocks' aggregation), the
 * blocks they replace are deleted and the new ones written by binary
 * COPY. PostgreSQL only moves arrays: 15 to 30 times less of its CPU
 * than when it aggregated them itself (docs/scaling.md,
 * bench/levels.py). */
#include <string.h>

#include "copy_binary.h"
#include "levels_blocks.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

/* A read's slots at most (nodes × metrics × blocks × slots): its
 * aggregates (72 bytes a slot) and its rows to write (up to 100) stay
 * below about 90 MiB, in vigil-txd as in `vigil db maintain`. */
#define CELLS_A_READ (1u << 19)

/* One row of vigil_levels_plan: blocks to build, of one node or all. */
struct levels_work {
    int level_s, block_slots;
    gboolean one_node;
    int64_t node_id;
    int64_t from_us, to_us;
};

static void set_failed(GError **error, PGconn *db, const PGresult *result, const char *what)
{
    const char *state = result != NULL ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : NULL;
    char *text = vigil_warehouse_one_line(result != NULL && PQresultErrorMessage(result)[0] != '\0'
                                              ? PQresultErrorMessage(result)
                                              : PQerrorMessage(db));
    g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                "building the roll-up levels: %s (%s): %s", what,
                state != NULL ? state : "no SQLSTATE", text);
    g_free(text);
}

static gboolean failed(GError **error, PGconn *db, PGresult *result, const char *what)
{
    set_failed(error, db, result, what);
    PQclear(result);
    return FALSE;
}

static gboolean command(PGconn *db, const char *sql, int n, const char *const *values,
                        GError **error)
{
    PGresult *r = PQexecParams(db, sql, n, NULL, values, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return failed(error, db, r, sql);
    PQclear(r);
    return TRUE;
}

static gboolean cancelled(GCancellable *cancel, GError **error)
{
    return g_cancellable_set_error_if_cancelled(cancel, error);
}

/* The plan's rows; *busy when another session holds the lock. */
static gboolean plan(PGconn *db, const char *span, GArray *work, gboolean *busy,
                     gboolean *caught_up, GError **error)
{
    static const char sql[] = "SELECT level_s, block_slots, node_id,"
                              " (date_part('epoch', from_t) * 1000000)::bigint,"
                              " (date_part('epoch', to_t) * 1000000)::bigint, caught_up"
                              " FROM vigil_levels_plan($1::interval)";
    const char *values[] = {span};
    PGresult *r = PQexecParams(db, sql, 1, NULL, values, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return failed(error, db, r, "vigil_levels_plan");
    *busy = PQntuples(r) == 0;
    *caught_up = TRUE;
    for (int i = 0; i < PQntuples(r); i++) {
        if (PQgetisnull(r, i, 2))
            *caught_up = *caught_up && strcmp(PQgetvalue(r, i, 5), "t") == 0;
        if (PQgetisnull(r, i, 3))
            continue;
        struct levels_work w = {
            .level_s = (int)g_ascii_strtoll(PQgetvalue(r, i, 0), NULL, 10),
            .block_slots = (int)g_ascii_strtoll(PQgetvalue(r, i, 1), NULL, 10),
            .one_node = !PQgetisnull(r, i, 2),
            .node_id = g_ascii_strtoll(PQgetvalue(r, i, 2), NULL, 10),
            .from_us = g_ascii_strtoll(PQgetvalue(r, i, 3), NULL, 10),
            .to_us = g_ascii_strtoll(PQgetvalue(r, i, 4), NULL, 10),
        };
        g_array_append_val(work, w);
    }
    PQclear(r);
    return TRUE;
}

/* Every metric set, once a pass; *longest the most metrics of one. */
static GHashTable *metric_sets(PGconn *db, uint32_t *longest, GError **error)
{
    GHashTable *sets = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    struct vigil_copy_reader r;
    *longest = 1;
    if (!vigil_copy_reader_start(
            &r, db,
            "COPY (SELECT metric_set_id, metric_ids FROM metric_sets) TO STDOUT (FORMAT binary)",
            error)) {
        g_hash_table_destroy(sets);
        return NULL;
    }
    gboolean ok = TRUE;
    int got;
    while ((got = vigil_copy_reader_next(&r, 2, error)) == 1) {
        int32_t id;
        uint32_t n;
        ok = vigil_copy_get_int4(&r.fields[0], "metric_set_id", &id, error) &&
             vigil_copy_get_array_length(&r.fields[1], "metric_ids", &n, error);
        if (!ok)
            break;
        struct levels_metric_set *set = g_malloc(sizeof *set + (size_t)MAX(n, 1) * sizeof(int32_t));
        ok = vigil_copy_get_int4_array(&r.fields[1], "metric_ids", set->metric_ids, n, &set->n,
                                       error);
        g_hash_table_insert(sets, GINT_TO_POINTER(id), set);
        *longest = MAX(*longest, n);
        if (!ok)
            break;
    }
    vigil_copy_reader_clear(&r);
    if (!ok || got < 0) {
        g_hash_table_destroy(sets);
        return NULL;
    }
    return sets;
}

/* Every node's id, in order: the reads take the nodes a range at a time. */
static GArray *node_ids(PGconn *db, GError **error)
{
    PGresult *r = PQexec(db, "SELECT node_id FROM nodes ORDER BY node_id");
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        failed(error, db, r, "reading the nodes");
        return NULL;
    }
    GArray *ids = g_array_sized_new(FALSE, FALSE, sizeof(int64_t), (guint)PQntuples(r));
    for (int i = 0; i < PQntuples(r); i++) {
        int64_t id = g_ascii_strtoll(PQgetvalue(r, i, 0), NULL, 10);
        g_array_append_val(ids, id);
    }
    PQclear(r);
    return ids;
}

/* One read: level `w`'s blocks [from_us, to_us) of the nodes in
 * [node_low, node_high) (has_low/has_high FALSE: unbounded), deleted and
 * built again. */
struct levels_read {
    int64_t from_us, to_us;
    gboolean has_low, has_high;
    int64_t node_low, node_high;
};

static char *time_literal(int64_t us)
{
    return g_strdup_printf("timestamptz 'epoch' + %" G_GINT64_FORMAT " * interval '1 microsecond'",
                           us);
}

static gboolean build_read(PGconn *db, GHashTable *sets, const struct levels_work *w,
                           const struct levels_read *rd, guint64 *rows, GError **error)
{
    char *from = time_literal(rd->from_us), *to = time_literal(rd->to_us);
    char *low = rd->has_low ? g_strdup_printf(" AND node_id >= %" G_GINT64_FORMAT, rd->node_low)
                            : g_strdup("");
    char *high = rd->has_high ? g_strdup_printf(" AND node_id < %" G_GINT64_FORMAT, rd->node_high)
                              : g_strdup("");
    char *delete = g_strdup_printf("DELETE FROM statistics_level_blocks WHERE level_s = %d"
                                   " AND block_start >= %s AND block_start < %s%s%s",
                                   w->level_s, from, to, low, high);
    char *read = g_strdup_printf("COPY (SELECT " LEVELS_ROLLUP_COLUMNS
                                 " FROM statistics_rollup_arrays WHERE start_time >= %s"
                                 " AND start_time < %s%s%s) TO STDOUT (FORMAT binary)",
                                 from, to, low, high);
    g_free(from);
    g_free(to);
    g_free(low);
    g_free(high);
    int64_t block_us = (int64_t)w->level_s * w->block_slots * 1000000;
    struct levels_blocks *blocks =
        levels_blocks_new(sets, w->level_s, w->block_slots, rd->from_us,
                          (uint32_t)((rd->to_us - rd->from_us) / block_us));
    struct vigil_copy out = {0};
    struct vigil_copy_reader r;
    gboolean ok =
        command(db, delete, 0, NULL, error) && vigil_copy_reader_start(&r, db, read, error);
    if (ok) {
        int got;
        while ((got = vigil_copy_reader_next(&r, LEVELS_ROLLUP_FIELDS, error)) == 1)
            if (!levels_blocks_add(blocks, r.fields, error))
                break;
        ok = got == 0;
        vigil_copy_reader_clear(&r);
    }
    guint64 written = 0;
    if (ok) {
        vigil_copy_init(&out);
        ok = levels_blocks_encode(blocks, &out, &written, error) &&
             vigil_copy_send(db,
                             "COPY statistics_level_blocks (" LEVELS_BLOCK_COLUMNS
                             ") FROM STDIN (FORMAT binary)",
                             &out, set_failed, error);
        vigil_copy_clear(&out);
    }
    levels_blocks_free(blocks);
    g_free(delete);
    g_free(read);
    *rows += ok ? written : 0;
    return ok;
}

/* A work item's reads: whole blocks, nodes a range at a time, each read
 * at most CELLS_A_READ slots. */
static gboolean build_work(PGconn *db, GHashTable *sets, uint32_t longest, const GArray *nodes,
                           const struct levels_work *w, GCancellable *cancel, guint64 *rows,
                           GError **error)
{
    guint64 cells_node_block = (guint64)longest * (guint64)w->block_slots;
    int64_t block_us = (int64_t)w->level_s * w->block_slots * 1000000;
    guint node_count = w->one_node ? 1 : MAX(nodes->len, 1);
    guint nodes_a_read = (guint)MAX(1, CELLS_A_READ / cells_node_block);
    guint64 blocks_a_read =
        nodes_a_read >= node_count ? MAX(1, CELLS_A_READ / (cells_node_block * node_count)) : 1;
    for (int64_t from = w->from_us; from < w->to_us; from += (int64_t)blocks_a_read * block_us) {
        struct levels_read rd = {.from_us = from,
                                 .to_us = MIN(w->to_us, from + (int64_t)blocks_a_read * block_us)};
        if (w->one_node) {
            rd.has_low = rd.has_high = TRUE;
            rd.node_low = w->node_id;
            rd.node_high = w->node_id + 1;
            if (cancelled(cancel, error) || !build_read(db, sets, w, &rd, rows, error))
                return FALSE;
            continue;
        }
        /* The first range has no lower bound and the last no upper one, so
         * that a node missing from `nodes` is built too. */
        for (guint first = 0; first < node_count; first += nodes_a_read) {
            guint next = first + nodes_a_read;
            rd.has_low = first > 0;
            rd.node_low = first > 0 ? g_array_index(nodes, int64_t, first) : 0;
            rd.has_high = next < nodes->len;
            rd.node_high = rd.has_high ? g_array_index(nodes, int64_t, next) : 0;
            if (cancelled(cancel, error) || !build_read(db, sets, w, &rd, rows, error))
                return FALSE;
        }
    }
    return TRUE;
}

static gboolean pass(PGconn *db, const char *span, GCancellable *cancel, gboolean *busy,
                     gboolean *caught_up, guint64 *rows, GError **error)
{
    GArray *work = g_array_new(FALSE, FALSE, sizeof(struct levels_work));
    gboolean ok = plan(db, span, work, busy, caught_up, error);
    if (!ok || work->len == 0) {
        g_array_unref(work);
        return ok;
    }
    uint32_t longest = 1;
    GHashTable *sets = metric_sets(db, &longest, error);
    GArray *nodes = sets != NULL ? node_ids(db, error) : NULL;
    ok = nodes != NULL;
    for (guint i = 0; ok && i < work->len; i++)
        ok = build_work(db, sets, longest, nodes, &g_array_index(work, struct levels_work, i),
                        cancel, rows, error);
    if (nodes != NULL)
        g_array_unref(nodes);
    if (sets != NULL)
        g_hash_table_destroy(sets);
    g_array_unref(work);
    return ok;
}

gboolean vigil_warehouse_build_levels(PGconn *db, const char *span, GCancellable *cancel,
                                      gboolean *busy, gboolean *caught_up, guint64 *rows,
                                      GError **error)
{
    *busy = FALSE;
    *caught_up = FALSE;
    *rows = 0;
    if (cancelled(cancel, error) || !command(db, "BEGIN", 0, NULL, error))
        return FALSE;
    gboolean ok = pass(db, span, cancel, busy, caught_up, rows, error) &&
                  !cancelled(cancel, error) && command(db, "COMMIT", 0, NULL, error);
    if (!ok) {
        PQclear(PQexec(db, "ROLLBACK"));
        *rows = 0;
    }
    return ok;
}
