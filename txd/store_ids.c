/* vigil-txd — warehouse ids, looked up once and kept.
 *
 * A batch names metrics by their description and files by their path; the
 * warehouse gives each an id the first time it sees it, and each list of
 * metric ids a node's statistics come in (its metric set) as well. Asking the database
 * for every row would cost a round trip each, so ids are cached. The catch
 * is the transaction: an id made by an INSERT that then rolls back does not
 * exist, and caching it would make the next batch refer to nothing. So what a
 * transaction learns waits in `pending` until it commits (then it is
 * kept) or rolls back (then it is dropped). */
#include <string.h>

#include "txd.h"

/* Past this many files the cache starts again: a long-running server on a
 * busy system sees millions of paths, and a miss costs one round trip. */
#define FILE_CACHE_MAX 1000000u

struct id_cache {
    GHashTable *committed; /* key → id (gint64 boxed in the pointer) */
    GHashTable *pending;   /* learnt in the transaction now */
};

struct txd_ids {
    struct id_cache metrics; /* "name\x1funit\x1fkind\x1fsource\x1forigin" */
    struct id_cache sets;    /* GBytes of the metric ids (int32_t, in order) */
    struct id_cache files;   /* GBytes of the path */
    struct id_cache days;    /* "table index:day since the epoch" → 1 */
};

static void cache_init(struct id_cache *c, GHashFunc hash, GEqualFunc equal,
                       GDestroyNotify free_key)
{
    c->committed = g_hash_table_new_full(hash, equal, free_key, NULL);
    c->pending = g_hash_table_new_full(hash, equal, free_key, NULL);
}

static void cache_clear(struct id_cache *c)
{
    g_hash_table_destroy(c->committed);
    g_hash_table_destroy(c->pending);
}

static gboolean cache_find(const struct id_cache *c, gconstpointer key, int64_t *id)
{
    gpointer value;
    if (g_hash_table_lookup_extended(c->committed, key, NULL, &value) ||
        g_hash_table_lookup_extended(c->pending, key, NULL, &value)) {
        *id = (int64_t)GPOINTER_TO_SIZE(value);
        return TRUE;
    }
    return FALSE;
}

static void move_all(GHashTable *from, GHashTable *to)
{
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, from);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        g_hash_table_iter_steal(&it);
        g_hash_table_replace(to, key, value);
    }
}

static void cache_commit(struct id_cache *c, guint max_entries)
{
    if (g_hash_table_size(c->committed) + g_hash_table_size(c->pending) > max_entries)
        g_hash_table_remove_all(c->committed);
    move_all(c->pending, c->committed);
}

_Static_assert(sizeof(gsize) >= sizeof(int64_t), "ids are kept in pointers");

struct txd_ids *txd_ids_new(void)
{
    struct txd_ids *ids = g_new0(struct txd_ids, 1);
    cache_init(&ids->metrics, g_str_hash, g_str_equal, g_free);
    cache_init(&ids->sets, g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref);
    cache_init(&ids->files, g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref);
    cache_init(&ids->days, g_str_hash, g_str_equal, g_free);
    return ids;
}

void txd_ids_free(struct txd_ids *ids)
{
    if (ids == NULL)
        return;
    cache_clear(&ids->metrics);
    cache_clear(&ids->sets);
    cache_clear(&ids->files);
    cache_clear(&ids->days);
    g_free(ids);
}

void txd_ids_commit(struct txd_ids *ids)
{
    cache_commit(&ids->metrics, G_MAXUINT);
    cache_commit(&ids->sets, G_MAXUINT);
    cache_commit(&ids->files, FILE_CACHE_MAX);
    cache_commit(&ids->days, G_MAXUINT);
}

void txd_ids_rollback(struct txd_ids *ids)
{
    g_hash_table_remove_all(ids->metrics.pending);
    g_hash_table_remove_all(ids->sets.pending);
    g_hash_table_remove_all(ids->files.pending);
    g_hash_table_remove_all(ids->days.pending);
}

/* Runs a statement that returns one id in its first row, or no row. */
static int64_t query_id(PGconn *db, const char *sql, int n_params, const char *const *values,
                        const int *lengths, const int *formats, gboolean *found, GError **error)
{
    PGresult *result = PQexecParams(db, sql, n_params, NULL, values, lengths, formats, 0);
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
        txd_set_pg_error(error, db, result, sql);
        PQclear(result);
        return -1;
    }
    *found = PQntuples(result) > 0;
    int64_t id = *found ? g_ascii_strtoll(PQgetvalue(result, 0, 0), NULL, 10) : 0;
    PQclear(result);
    return id;
}

/* INSERT … ON CONFLICT DO NOTHING and a SELECT in one statement; when
 * another server inserted the same row at the same moment, neither part
 * sees it within this statement's snapshot, so one more try does. */
static int64_t insert_or_select(PGconn *db, const char *sql, int n_params,
                                const char *const *values, const int *lengths, const int *formats,
                                GError **error)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        gboolean found = FALSE;
        int64_t id = query_id(db, sql, n_params, values, lengths, formats, &found, error);
        if (id < 0 || found)
            return id;
    }
    g_set_error(error, TXD_ERROR, TXD_ERROR_RETRY, "no id came back from: %s", sql);
    return -1;
}

int64_t txd_ids_metric(struct txd_ids *ids, PGconn *db, const struct vigil_metric_desc *m,
                       GError **error)
{
    const char *kind = vigil_metric_kind_name(m->kind);
    const char *origin = vigil_metric_origin_name(m->origin);
    char *key = g_strjoin("\x1f", m->name, m->unit, kind, m->source, origin, NULL);
    int64_t id;
    if (cache_find(&ids->metrics, key, &id)) {
        g_free(key);
        return id;
    }
    static const char sql[] =
        "WITH inserted AS (INSERT INTO metrics (name, unit, kind, source, origin) "
        "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING metric_id) "
        "SELECT metric_id FROM inserted UNION ALL SELECT metric_id FROM metrics "
        "WHERE name = $1 AND unit = $2 AND kind = $3 AND source = $4 AND origin = $5 LIMIT 1";
    const char *values[] = {m->name, m->unit, kind, m->source, origin};
    id = insert_or_select(db, sql, 5, values, NULL, NULL, error);
    if (id < 0) {
        g_free(key);
        return -1;
    }
    g_hash_table_replace(ids->metrics.pending, key, GSIZE_TO_POINTER((gsize)id));
    return id;
}

int64_t txd_ids_metric_set(struct txd_ids *ids, PGconn *db, const int32_t *metric_ids, guint n,
                           GError **error)
{
    GBytes *key = g_bytes_new(metric_ids, n * sizeof *metric_ids);
    int64_t id;
    if (cache_find(&ids->sets, key, &id)) {
        g_bytes_unref(key);
        return id;
    }
    /* vigil_metric_set inserts it when new, waiting for another server
     * inserting the same set, and then finds that one's. */
    GString *text = g_string_sized_new(8 * n + 2);
    g_string_append_c(text, '{');
    for (guint i = 0; i < n; i++)
        g_string_append_printf(text, "%s%" G_GINT32_FORMAT, i > 0 ? "," : "", metric_ids[i]);
    g_string_append_c(text, '}');
    static const char sql[] = "SELECT vigil_metric_set($1::integer[])";
    const char *values[] = {text->str};
    gboolean found = FALSE;
    id = query_id(db, sql, 1, values, NULL, NULL, &found, error);
    g_string_free(text, TRUE);
    if (id >= 0 && !found) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_RETRY, "no id came back from: %s", sql);
        id = -1;
    }
    if (id < 0) {
        g_bytes_unref(key);
        return -1;
    }
    g_hash_table_replace(ids->sets.pending, key, GSIZE_TO_POINTER((gsize)id));
    return id;
}

int64_t txd_ids_file(struct txd_ids *ids, PGconn *db, const char *path, size_t length,
                     GError **error)
{
    GBytes *key = g_bytes_new(path, length);
    int64_t id;
    if (cache_find(&ids->files, key, &id)) {
        g_bytes_unref(key);
        return id;
    }
    /* The key is the path's bytes; the text is what people read, with any
     * byte that is not UTF-8 replaced. */
    char *shown = g_utf8_make_valid(path, (gssize)length);
    static const char sql[] =
        "WITH inserted AS (INSERT INTO files (path_bytes, path) VALUES ($1, $2) "
        "ON CONFLICT DO NOTHING RETURNING file_id) "
        "SELECT file_id FROM inserted UNION ALL "
        "SELECT file_id FROM files WHERE path_sha256 = sha256($1) LIMIT 1";
    const char *values[] = {path, shown};
    const int lengths[] = {(int)length, 0};
    const int formats[] = {1, 0};
    id = insert_or_select(db, sql, 2, values, lengths, formats, error);
    g_free(shown);
    if (id < 0) {
        g_bytes_unref(key);
        return -1;
    }
    g_hash_table_replace(ids->files.pending, key, GSIZE_TO_POINTER((gsize)id));
    return id;
}

gboolean txd_ids_partition(struct txd_ids *ids, PGconn *db, unsigned t, int64_t day, GError **error)
{
    char *key = g_strdup_printf("%u:%" G_GINT64_FORMAT, t, day);
    int64_t known;
    if (cache_find(&ids->days, key, &known)) {
        g_free(key);
        return TRUE;
    }
    GError *local = NULL;
    if (!vigil_warehouse_day_partition(db, vigil_warehouse_day_tables[t], day, NULL, &local)) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_RETRY, "%s", local->message);
        g_error_free(local);
        g_free(key);
        return FALSE;
    }
    /* Made (or found) in a transaction of its own, committed already. */
    g_hash_table_replace(ids->days.committed, key, GSIZE_TO_POINTER(1));
    return TRUE;
}

void txd_ids_forget_partitions(struct txd_ids *ids)
{
    g_hash_table_remove_all(ids->days.committed);
    g_hash_table_remove_all(ids->days.pending);
}
