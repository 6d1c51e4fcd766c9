/* vigil-web — the pool of warehouse connections. */
#include <string.h>

#include "db_pool.h"
#include "vigil/warehouse.h"

struct web_db_pool {
    char *conninfo;
    guint connect_timeout_s;
    guint statement_timeout_ms;
    GAsyncQueue *idle; /* struct slot * */
    GPtrArray *slots;
    /* After a failed connection, requests are answered 503 at once for a
     * second instead of each waiting connect_timeout_s for a server that
     * is not there. */
    GMutex down_lock;
    gint64 down_until_us;
    char *down_why;
    /* PGconn * → the names of the statements prepared on it (a set). A
     * connection's entry goes before it is finished: another may get its
     * address. */
    GMutex prepared_lock;
    GHashTable *prepared;
};

static void forget_prepared(struct web_db_pool *pool, PGconn *db)
{
    g_mutex_lock(&pool->prepared_lock);
    g_hash_table_remove(pool->prepared, db);
    g_mutex_unlock(&pool->prepared_lock);
}

enum { POOL_DOWN_RETRY_US = G_USEC_PER_SEC };

/* A GAsyncQueue cannot hold NULL, and a slot may be unconnected. */
struct slot {
    PGconn *db;
};

struct web_db_pool *web_db_pool_new(const char *conninfo, guint size, guint connect_timeout_s,
                                    guint statement_timeout_ms)
{
    struct web_db_pool *pool = g_new0(struct web_db_pool, 1);
    pool->conninfo = g_strdup(conninfo);
    pool->connect_timeout_s = connect_timeout_s;
    pool->statement_timeout_ms = statement_timeout_ms;
    pool->idle = g_async_queue_new();
    pool->slots = g_ptr_array_new_with_free_func(g_free);
    g_mutex_init(&pool->down_lock);
    g_mutex_init(&pool->prepared_lock);
    pool->prepared = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL,
                                           (GDestroyNotify)g_hash_table_unref);
    for (guint i = 0; i < size; i++) {
        struct slot *s = g_new0(struct slot, 1);
        g_ptr_array_add(pool->slots, s);
        g_async_queue_push(pool->idle, s);
    }
    return pool;
}

void web_db_pool_free(struct web_db_pool *pool)
{
    if (pool == NULL)
        return;
    for (guint i = 0; i < pool->slots->len; i++) {
        struct slot *s = g_ptr_array_index(pool->slots, i);
        if (s->db != NULL)
            PQfinish(s->db);
    }
    g_ptr_array_unref(pool->slots);
    g_async_queue_unref(pool->idle);
    g_mutex_clear(&pool->down_lock);
    g_hash_table_unref(pool->prepared);
    g_mutex_clear(&pool->prepared_lock);
    g_free(pool->down_why);
    g_free(pool->conninfo);
    g_free(pool);
}

static void set_unavailable(GError **error, PGconn *db, const char *what)
{
    char *why = g_strstrip(g_strdup(db != NULL ? PQerrorMessage(db) : "no connection"));
    g_set_error(error, WEB_ERROR, WEB_ERROR_UNAVAILABLE, "the warehouse is unreachable (%s): %s",
                what, why[0] != '\0' ? why : "connection lost");
    g_free(why);
}

static gboolean exec_ok(PGconn *db, const char *sql)
{
    PGresult *r = PQexec(db, sql);
    gboolean ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    return ok;
}

static PGconn *connect_slot(struct web_db_pool *pool, GError **error)
{
    GError *connect_error = NULL;
    PGconn *db =
        vigil_warehouse_connect_timeout(pool->conninfo, pool->connect_timeout_s, &connect_error);
    if (db == NULL) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_UNAVAILABLE, "the warehouse is unreachable: %s",
                    connect_error->message);
        g_error_free(connect_error);
        return NULL;
    }
    /* Read-only whatever the role may do: vigil-web never writes. UTC and
     * ISO make the timestamps' text one format (json_rows.c reads it). */
    char *setup = g_strdup_printf("SET default_transaction_read_only = on;"
                                  "SET statement_timeout = %u;"
                                  "SET TimeZone = 'UTC';"
                                  "SET DateStyle = 'ISO, YMD';"
                                  /* A series' aggregation spilled to disk at 4 MB. */
                                  "SET work_mem = '32MB';"
                                  "SET application_name = 'vigil-web'",
                                  pool->statement_timeout_ms);
    gboolean ok = exec_ok(db, setup);
    g_free(setup);
    if (!ok) {
        set_unavailable(error, db, "setting up the connection");
        PQfinish(db);
        return NULL;
    }
    return db;
}

static gboolean begin(PGconn *db)
{
    return exec_ok(db, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
}

PGconn *web_db_pool_take(struct web_db_pool *pool, GError **error)
{
    struct slot *s = g_async_queue_pop(pool->idle);
    /* A connection the server dropped (restart, idle timeout) is only
     * found out by using it: one fresh try, then 503. */
    if (s->db != NULL && (PQstatus(s->db) != CONNECTION_OK || !begin(s->db))) {
        forget_prepared(pool, s->db);
        PQfinish(s->db);
        s->db = NULL;
    }
    if (s->db == NULL) {
        g_mutex_lock(&pool->down_lock);
        gboolean down = g_get_monotonic_time() < pool->down_until_us;
        if (down)
            g_set_error(error, WEB_ERROR, WEB_ERROR_UNAVAILABLE, "%s", pool->down_why);
        g_mutex_unlock(&pool->down_lock);
        if (down) {
            g_async_queue_push(pool->idle, s);
            return NULL;
        }
        GError *connect_error = NULL;
        s->db = connect_slot(pool, &connect_error);
        if (s->db == NULL) {
            g_mutex_lock(&pool->down_lock);
            pool->down_until_us = g_get_monotonic_time() + POOL_DOWN_RETRY_US;
            g_free(pool->down_why);
            pool->down_why = g_strdup(connect_error->message);
            g_mutex_unlock(&pool->down_lock);
            g_propagate_error(error, connect_error);
        }
        if (s->db == NULL || !begin(s->db)) {
            if (s->db != NULL) {
                set_unavailable(error, s->db, "opening a transaction");
                forget_prepared(pool, s->db);
                PQfinish(s->db);
                s->db = NULL;
            }
            g_async_queue_push(pool->idle, s);
            return NULL;
        }
    }
    return s->db;
}

void web_db_pool_give(struct web_db_pool *pool, PGconn *db)
{
    for (guint i = 0; i < pool->slots->len; i++) {
        struct slot *s = g_ptr_array_index(pool->slots, i);
        if (s->db != db)
            continue;
        /* Read-only: COMMIT and ROLLBACK are the same; ROLLBACK also ends
         * a transaction a failed query aborted. */
        if (PQstatus(db) != CONNECTION_OK || !exec_ok(db, "ROLLBACK")) {
            forget_prepared(pool, db);
            PQfinish(db);
            s->db = NULL;
        }
        g_async_queue_push(pool->idle, s);
        return;
    }
    g_critical("web_db_pool_give: a connection not of this pool");
}

/* `r`, or NULL with error set (and r cleared) when it is a failure. */
static PGresult *checked(struct web_request *req, PGresult *r, GError **error)
{
    ExecStatusType status = PQresultStatus(r);
    if (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK)
        return r;
    const char *sqlstate = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    char *why = g_strstrip(g_strdup(PQresultErrorMessage(r)));
    if (PQstatus(req->db) != CONNECTION_OK || sqlstate == NULL ||
        g_str_has_prefix(sqlstate, "08") || g_str_has_prefix(sqlstate, "57P")) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_UNAVAILABLE, "the warehouse is unreachable: %s",
                    why[0] != '\0' ? why : "connection lost");
    } else if (strcmp(sqlstate, "57014") == 0) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_UNAVAILABLE,
                    "the warehouse did not answer within [web] statement_timeout_ms = %u ms; "
                    "ask for a shorter interval or fewer rows",
                    req->settings->statement_timeout_ms);
    } else {
        g_set_error(error, WEB_ERROR, WEB_ERROR_INTERNAL, "a query failed (SQLSTATE %s): %s",
                    sqlstate, why);
    }
    g_free(why);
    PQclear(r);
    return NULL;
}

PGresult *web_db_query(struct web_request *req, const char *sql, int n_params,
                       const char *const *params, GError **error)
{
    return checked(req, PQexecParams(req->db, sql, n_params, NULL, params, NULL, NULL, 0), error);
}

PGresult *web_db_query_binary(struct web_request *req, const char *sql, int n_params,
                              const char *const *params, GError **error)
{
    return checked(req, PQexecParams(req->db, sql, n_params, NULL, params, NULL, NULL, 1), error);
}

/* A statement of the request's transaction that only sets something. */
static gboolean set_ok(struct web_request *req, const char *sql, GError **error)
{
    PGresult *r = checked(req, PQexec(req->db, sql), error);
    if (r != NULL)
        PQclear(r);
    return r != NULL;
}

PGresult *web_db_query_prepared(struct web_request *req, const char *name, const char *sql,
                                int n_params, const char *const *params, GError **error)
{
    struct web_db_pool *pool = req->context->pool;
    g_mutex_lock(&pool->prepared_lock);
    GHashTable *names = g_hash_table_lookup(pool->prepared, req->db);
    if (names == NULL) {
        names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        g_hash_table_insert(pool->prepared, req->db, names);
    }
    /* Only this request's thread uses req->db (and its set) until it is given back. */
    gboolean prepared = g_hash_table_contains(names, name);
    g_mutex_unlock(&pool->prepared_lock);
    if (!prepared) {
        PGresult *r = checked(req, PQprepare(req->db, name, sql, n_params, NULL), error);
        if (r == NULL)
            return NULL;
        PQclear(r);
        g_mutex_lock(&pool->prepared_lock);
        g_hash_table_add(names, g_strdup(name));
        g_mutex_unlock(&pool->prepared_lock);
    }
    /* The generic plan, planned once: the custom plans PostgreSQL would
     * keep choosing (their cost counts only the partitions they keep) were
     * planned at each request, 7-12 ms for a level's blocks (bench/web). */
    if (!set_ok(req, "SET LOCAL plan_cache_mode = force_generic_plan", error))
        return NULL;
    PGresult *r =
        checked(req, PQexecPrepared(req->db, name, n_params, params, NULL, NULL, 1), error);
    if (r != NULL && !set_ok(req, "SET LOCAL plan_cache_mode = DEFAULT", error))
        g_clear_pointer(&r, PQclear);
    return r;
}

/* web_db_query, a 404 "WHAT ID does not exist" + `unless` for no row. */
static PGresult *query_found(struct web_request *req, const char *sql, int n_params,
                             const char *const *params, const char *what, const char *id,
                             const char *unless, GError **error)
{
    PGresult *r = web_db_query(req, sql, n_params, params, error);
    if (r != NULL && PQntuples(r) == 0) {
        g_clear_pointer(&r, PQclear);
        g_set_error(error, WEB_ERROR, WEB_ERROR_NOT_FOUND, "%s %s does not exist%s", what, id,
                    unless);
    }
    return r;
}

PGresult *web_db_query_found(struct web_request *req, const char *sql, int n_params,
                             const char *const *params, const char *what, const char *id,
                             GError **error)
{
    return query_found(req, sql, n_params, params, what, id, "", error);
}

PGresult *web_db_query_owned(struct web_request *req, const char *sql, int n_params,
                             const char *const *params, const char *what, const char *id,
                             GError **error)
{
    return query_found(req, sql, n_params, params, what, id,
                       req->viewer.admin ? "" : " or is not yours", error);
}
