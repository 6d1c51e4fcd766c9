/* vigil-txd — one batch into PostgreSQL, exactly once.
 *
 * A batch is stored in one transaction that begins by recording its
 * (node, sequence) in ingested_batches. When that row exists already the
 * batch was stored before (a daemon resends what it has no acknowledgement
 * for), and the transaction is rolled back with nothing written. When the
 * commit succeeds the caller acknowledges; when anything fails, nothing of
 * the batch is in the database and the daemon will send it again. So a
 * batch is in the warehouse once, whatever fails when.
 *
 * The rows go in with binary COPY, one COPY per table per batch. Small
 * tables (nodes, runs, processes, summaries) take parameterised upserts. */
#include <string.h>

#include "txd.h"
#include "vigil/health.h"

struct txd_store {
    char *conninfo;
    gboolean migrate;
    PGconn *db;
    struct txd_ids *ids;
    struct txd_store_counts counts;
    GHashTable *below; /* node id → when a sequence below its highest was last said */
};

GQuark txd_error_quark(void)
{
    return g_quark_from_static_string("vigil-txd-error-quark");
}

void txd_set_pg_error(GError **error, PGconn *db, const PGresult *result, const char *what)
{
    const char *state = result != NULL ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : NULL;
    const char *message = result != NULL && PQresultErrorMessage(result)[0] != '\0'
                              ? PQresultErrorMessage(result)
                              : PQerrorMessage(db);
    /* Class 22 (data exception), 23 (integrity constraint violation) and
     * 54 (a program limit: a row or an index entry too large): the rows
     * themselves are wrong, and would be wrong next time too. Retrying
     * such a batch for ever would stop every node's batches behind it. */
    gboolean data_error =
        state != NULL && (g_str_has_prefix(state, "22") || g_str_has_prefix(state, "23") ||
                          g_str_has_prefix(state, "54"));
    if (PQstatus(db) != CONNECTION_OK)
        data_error = FALSE;
    char *trimmed = g_strstrip(g_strdup(message));
    char *short_what = g_strndup(what, 60);
    g_set_error(error, TXD_ERROR, data_error ? TXD_ERROR_REFUSE : TXD_ERROR_RETRY, "%s%s (%s): %s",
                short_what, strlen(what) > 60 ? "…" : "", state != NULL ? state : "no SQLSTATE",
                trimmed);
    g_free(short_what);
    g_free(trimmed);
}

struct txd_store *txd_store_new(const char *conninfo, gboolean migrate)
{
    struct txd_store *s = g_new0(struct txd_store, 1);
    s->conninfo = g_strdup(conninfo != NULL ? conninfo : "");
    s->migrate = migrate;
    s->ids = txd_ids_new();
    s->below = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    return s;
}

static void disconnect(struct txd_store *s)
{
    if (s->db != NULL)
        PQfinish(s->db);
    s->db = NULL;
    txd_ids_rollback(s->ids);
}

void txd_store_free(struct txd_store *s)
{
    if (s == NULL)
        return;
    disconnect(s);
    txd_ids_free(s->ids);
    g_hash_table_destroy(s->below);
    g_free(s->conninfo);
    g_free(s);
}

gboolean txd_store_connected(const struct txd_store *s)
{
    return s->db != NULL && PQstatus(s->db) == CONNECTION_OK;
}

static gboolean exec_command(PGconn *db, const char *sql, GError **error)
{
    PGresult *result = PQexec(db, sql);
    gboolean ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    if (!ok)
        txd_set_pg_error(error, db, result, sql);
    PQclear(result);
    return ok;
}

gboolean txd_store_connect(struct txd_store *s, GError **error)
{
    if (txd_store_connected(s))
        return TRUE;
    disconnect(s);
    GError *local = NULL;
    s->db = vigil_warehouse_connect(s->conninfo, &local);
    if (s->db == NULL) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_RETRY, "%s", local->message);
        g_error_free(local);
        return FALSE;
    }
    guint version = 0, latest = vigil_warehouse_latest_version();
    gboolean ok = s->migrate ? vigil_warehouse_migrate(s->db, NULL, &local)
                             : vigil_warehouse_current_version(s->db, &version, &local);
    if (ok && !s->migrate && version != latest) {
        g_set_error(&local, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION,
                    "the warehouse's schema is at version %u, this vigil-txd writes version %u: "
                    "run `vigil db migrate`, or set [warehouse] migrate = true",
                    version, latest);
        ok = FALSE;
    }
    /* Partitions are days in UTC, whatever the server's time zone. */
    if (ok && !exec_command(s->db, "SET TIME ZONE 'UTC'", &local))
        ok = FALSE;
    if (!ok) {
        /* A schema that is not this version's, or a migration that fails,
         * is the admin's to fix: not worth retrying. Anything else (the
         * connection dropped meanwhile) is. */
        gboolean admin =
            g_error_matches(local, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION);
        g_set_error(error, TXD_ERROR, admin ? TXD_ERROR_REFUSE : TXD_ERROR_RETRY, "%s",
                    local->message);
        g_error_free(local);
        disconnect(s);
        return FALSE;
    }
    return TRUE;
}

void txd_store_counts(const struct txd_store *s, struct txd_store_counts *out)
{
    *out = s->counts;
}

/* ---- one batch ------------------------------------------------------------------------- */

/* What one batch needs while it is written: its node's clock and the
 * warehouse ids of the processes and files it names. */
struct batch_context {
    struct txd_store *store;
    const struct vigil_wire_message *batch;
    const struct vigil_wire_node *node;
    int64_t node_id;       /* as the warehouse keys it */
    GHashTable *processes; /* daemon's process id → warehouse id (boxed) */
    GHashTable *files;     /* "process id:file id" → warehouse id */
    GHashTable *metrics;   /* daemon's metric id → warehouse id */
    uint64_t rows;
};

static int64_t realtime(const struct batch_context *b, uint64_t monotonic_ns)
{
    return (int64_t)monotonic_ns + b->node->realtime_offset_ns;
}

/* The end of `cycle`, reckoned from the batch's own cycle. */
static int64_t cycle_end_realtime(const struct batch_context *b, uint64_t cycle)
{
    int64_t back_ns = ((int64_t)b->node->cycle - (int64_t)cycle) * b->node->cycle_ms * 1000000;
    return realtime(b, b->node->cycle_end_ns) - back_ns;
}

static gboolean refuse(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);
static gboolean refuse(GError **error, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    char *text = g_strdup_vprintf(format, ap);
    va_end(ap);
    g_set_error_literal(error, TXD_ERROR, TXD_ERROR_REFUSE, text);
    g_free(text);
    return FALSE;
}

static gboolean lookup(GHashTable *table, gconstpointer key, int64_t *id)
{
    gpointer value;
    if (!g_hash_table_lookup_extended(table, key, NULL, &value))
        return FALSE;
    *id = (int64_t)GPOINTER_TO_SIZE(value);
    return TRUE;
}

static gboolean process_id_of(const struct batch_context *b, uint64_t daemon_id, int64_t *id,
                              const char *what, GError **error)
{
    if (lookup(b->processes, &daemon_id, id))
        return TRUE;
    return refuse(error,
                  "%s refers to process %" G_GUINT64_FORMAT ", which the batch does not describe",
                  what, daemon_id);
}

/* A parameter as text; `buffers` keeps the strings alive. */
static const char *param_int(GPtrArray *buffers, int64_t v)
{
    char *text = g_strdup_printf("%" G_GINT64_FORMAT, v);
    g_ptr_array_add(buffers, text);
    return text;
}

static const char *param_timestamp(GPtrArray *buffers, int64_t realtime_ns)
{
    /* PostgreSQL takes an epoch in seconds with a fraction through
     * to_timestamp; as text, ISO 8601 in UTC keeps the µs exact. */
    GDateTime *t = g_date_time_new_from_unix_utc(realtime_ns / 1000000000);
    if (t == NULL)
        return NULL;
    char *date = g_date_time_format(t, "%Y-%m-%d %H:%M:%S");
    g_date_time_unref(t);
    char *text =
        g_strdup_printf("%s.%06" G_GINT64_FORMAT "+00", date, (realtime_ns % 1000000000) / 1000);
    g_free(date);
    g_ptr_array_add(buffers, text);
    return text;
}

/* text[] as PostgreSQL's binary array: dimensions, no nulls, element type
 * text (OID 25), then each element's length and bytes. */
static GByteArray *text_array_binary(char **items, uint32_t count)
{
    GByteArray *b = g_byte_array_new();
    uint32_t header[5] = {count > 0 ? 1u : 0u, 0, 25, count, 1};
    for (unsigned i = 0; i < (count > 0 ? 5u : 3u); i++) {
        uint32_t be = GUINT32_TO_BE(header[i]);
        g_byte_array_append(b, (const uint8_t *)&be, 4);
    }
    for (uint32_t i = 0; i < count; i++) {
        uint32_t length = (uint32_t)strlen(items[i]);
        uint32_t be = GUINT32_TO_BE(length);
        g_byte_array_append(b, (const uint8_t *)&be, 4);
        g_byte_array_append(b, (const uint8_t *)items[i], length);
    }
    return b;
}

static gboolean query_one_id(PGconn *db, const char *sql, int n, const char *const *values,
                             const int *lengths, const int *formats, int64_t *id, GError **error)
{
    PGresult *result = PQexecParams(db, sql, n, NULL, values, lengths, formats, 0);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1;
    if (!ok)
        txd_set_pg_error(error, db, result, sql);
    else
        *id = g_ascii_strtoll(PQgetvalue(result, 0, 0), NULL, 10);
    PQclear(result);
    return ok;
}

static gboolean store_node(struct batch_context *b, GError **error)
{
    GPtrArray *buffers = g_ptr_array_new_with_free_func(g_free);
    const char *values[] = {param_int(buffers, b->node_id), b->node->hostname};
    static const char sql[] =
        "INSERT INTO nodes (node_id, hostname) VALUES ($1, $2) "
        "ON CONFLICT (node_id) DO UPDATE SET hostname = EXCLUDED.hostname, last_seen = now()";
    PGresult *result = PQexecParams(b->store->db, sql, 2, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    if (!ok)
        txd_set_pg_error(error, b->store->db, result, sql);
    PQclear(result);
    g_ptr_array_unref(buffers);
    return ok;
}

static gboolean store_process(struct batch_context *b, const struct vigil_wire_process *p,
                              GError **error)
{
    PGconn *db = b->store->db;
    GPtrArray *buffers = g_ptr_array_new_with_free_func(g_free);
    GByteArray *argv = text_array_binary(p->argv, p->argc);
    int64_t start_ns = realtime(b, p->start_ns);
    const char *start = param_timestamp(buffers, start_ns);
    const char *end = p->end_ns != 0 ? param_timestamp(buffers, realtime(b, p->end_ns)) : NULL;
    const char *exit_status = p->exit_code >= 0 ? param_int(buffers, p->exit_code) : NULL;
    gboolean ok = start != NULL;
    if (!ok)
        refuse(error, "process %d starts at a time out of range", p->pid);

    int64_t job_id = 0;
    if (ok && p->job[0] != '\0') {
        static const char sql[] =
            "WITH inserted AS (INSERT INTO jobs (scheduler_job_id) VALUES ($1) "
            "ON CONFLICT DO NOTHING RETURNING job_id) SELECT job_id FROM inserted "
            "UNION ALL SELECT job_id FROM jobs WHERE scheduler_job_id = $1 LIMIT 1";
        const char *values[] = {p->job};
        ok = query_one_id(db, sql, 1, values, NULL, NULL, &job_id, error);
    }
    int64_t run_id = 0;
    if (ok) {
        /* The run's description follows from its processes (below); here
         * it only needs to exist. */
        static const char sql[] =
            "INSERT INTO runs (run_key, job_id, program, argv, uid, start_time, end_time, "
            "exit_status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
            "ON CONFLICT (run_key) DO UPDATE SET "
            "job_id = coalesce(runs.job_id, EXCLUDED.job_id) "
            "RETURNING run_id";
        const char *values[] = {p->run_key,
                                job_id != 0 ? param_int(buffers, job_id) : NULL,
                                p->program,
                                (const char *)argv->data,
                                param_int(buffers, p->uid),
                                start,
                                end,
                                exit_status};
        const int lengths[] = {0, 0, 0, (int)argv->len, 0, 0, 0, 0};
        const int formats[] = {0, 0, 0, 1, 0, 0, 0, 0};
        ok = query_one_id(db, sql, 8, values, lengths, formats, &run_id, error);
    }
    int64_t process_id = 0;
    if (ok) {
        static const char sql[] =
            "INSERT INTO processes (run_id, node_id, pid, uid, rank, program, argv, cwd, "
            "start_time, start_monotonic_ns, end_time, exit_status) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
            "ON CONFLICT (node_id, pid, start_monotonic_ns) DO UPDATE SET "
            "end_time = coalesce(EXCLUDED.end_time, processes.end_time), "
            "exit_status = coalesce(EXCLUDED.exit_status, processes.exit_status), "
            "rank = coalesce(EXCLUDED.rank, processes.rank) "
            "RETURNING process_id";
        const char *values[] = {param_int(buffers, run_id),
                                param_int(buffers, b->node_id),
                                param_int(buffers, p->pid),
                                param_int(buffers, p->uid),
                                p->rank >= 0 ? param_int(buffers, p->rank) : NULL,
                                p->program,
                                (const char *)argv->data,
                                p->cwd,
                                start,
                                param_int(buffers, (int64_t)p->start_ns),
                                end,
                                exit_status};
        const int lengths[] = {0, 0, 0, 0, 0, 0, (int)argv->len, 0, 0, 0, 0, 0};
        const int formats[] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
        ok = query_one_id(db, sql, 12, values, lengths, formats, &process_id, error);
    }
    if (ok) {
        /* A run is described by its first process (program, arguments,
         * user) whichever batch brought it first; its exit status is that
         * pid's last program's (a shell that exec'd the real program has
         * none of its own); it spans from its first start to its last end,
         * and has no end while a process of it runs: batches from several
         * nodes come in any order. */
        static const char sql[] =
            "UPDATE runs SET program = first.program, argv = first.argv, uid = first.uid, "
            "exit_status = (SELECT exit_status FROM processes p WHERE p.run_id = $1 AND "
            "p.node_id = first.node_id AND p.pid = first.pid ORDER BY p.start_time DESC, "
            "p.process_id DESC LIMIT 1), start_time = span.start_time, "
            "end_time = span.end_time "
            "FROM (SELECT program, argv, uid, node_id, pid FROM processes WHERE run_id = $1 "
            "ORDER BY start_time, process_id LIMIT 1) AS first, "
            "(SELECT min(start_time) AS start_time, CASE WHEN bool_and(end_time IS NOT NULL) "
            "THEN max(end_time) END AS end_time FROM processes WHERE run_id = $1) AS span "
            "WHERE runs.run_id = $1";
        const char *values[] = {param_int(buffers, run_id)};
        PGresult *result = PQexecParams(db, sql, 1, NULL, values, NULL, NULL, 0);
        ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        if (!ok)
            txd_set_pg_error(error, db, result, sql);
        PQclear(result);
    }
    if (ok) {
        uint64_t *key = g_new(uint64_t, 1);
        *key = p->process_id;
        g_hash_table_replace(b->processes, key, GSIZE_TO_POINTER((gsize)process_id));
        b->rows++;
    }
    g_byte_array_unref(argv);
    g_ptr_array_unref(buffers);
    return ok;
}

static char *file_key(uint64_t process_id, uint32_t file_id)
{
    return g_strdup_printf("%" G_GUINT64_FORMAT ":%u", process_id, file_id);
}

static gboolean store_names(struct batch_context *b, const struct vigil_wire_message *m,
                            GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_name *n = &m->names[i];
        int64_t id = txd_ids_file(b->store->ids, b->store->db, n->path, n->length, error);
        if (id < 0)
            return FALSE;
        g_hash_table_replace(b->files, file_key(m->process_id, n->file_id),
                             GSIZE_TO_POINTER((gsize)id));
    }
    return TRUE;
}

static gboolean store_metrics(struct batch_context *b, const struct vigil_wire_message *m,
                              GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        int64_t id = txd_ids_metric(b->store->ids, b->store->db, &m->metrics[i], error);
        if (id < 0)
            return FALSE;
        g_hash_table_replace(b->metrics, GUINT_TO_POINTER(m->metrics[i].id),
                             GSIZE_TO_POINTER((gsize)id));
    }
    return TRUE;
}

static gboolean metric_id_of(const struct batch_context *b, uint32_t daemon_id, int64_t *id,
                             GError **error)
{
    if (lookup(b->metrics, GUINT_TO_POINTER(daemon_id), id))
        return TRUE;
    return refuse(error, "a statistic refers to metric %u, which the batch does not describe",
                  daemon_id);
}

/* ---- the COPYs ------------------------------------------------------------------------- */

static gboolean copy_activities(struct batch_context *b, struct txd_copy *c,
                                const struct vigil_wire_message *m, GError **error)
{
    int64_t process_id = 0;
    if (!process_id_of(b, m->process_id, &process_id, "an activity", error))
        return FALSE;
    int64_t last_day_start = -1;
    /* Consecutive activities mostly name the same file: its id is looked
     * up (through a formatted key) only when the file changes. */
    uint32_t last_file = VIGIL_FILE_NONE;
    int64_t last_file_id = 0;
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_activity *a = &m->activities[i];
        int64_t start_ns = realtime(b, a->start_ns);
        /* One partition a day: ask only when the day changes. */
        int64_t day = start_ns / G_GINT64_CONSTANT(86400000000000);
        if (day != last_day_start) {
            if (!txd_ids_partition(b->store->ids, b->store->db, start_ns, error))
                return FALSE;
            last_day_start = day;
        }
        int64_t file_id = 0;
        if (a->file_id != VIGIL_FILE_NONE && a->file_id == last_file) {
            file_id = last_file_id;
        } else if (a->file_id != VIGIL_FILE_NONE) {
            char *key = file_key(m->process_id, a->file_id);
            gboolean known = lookup(b->files, key, &file_id);
            g_free(key);
            if (!known)
                return refuse(error,
                              "activity %" G_GUINT64_FORMAT " of process %" G_GUINT64_FORMAT
                              " refers to file %u, whose name the batch does not carry",
                              a->seq, m->process_id, a->file_id);
            last_file = a->file_id;
            last_file_id = file_id;
        }
        txd_copy_row(c, 16);
        txd_copy_int8(c, process_id);
        txd_copy_int8(c, (int64_t)a->seq);
        txd_copy_int2(c, a->layer);
        txd_copy_int2(c, (int16_t)a->op);
        if (file_id != 0)
            txd_copy_int8(c, file_id);
        else
            txd_copy_null(c);
        if (a->offset_bytes != VIGIL_OFFSET_UNKNOWN)
            txd_copy_int8(c, a->offset_bytes);
        else
            txd_copy_null(c);
        txd_copy_int8(c, (int64_t)a->bytes_asked);
        txd_copy_int8(c, a->result);
        txd_copy_int4(c, a->errno_value);
        txd_copy_timestamp_ns(c, start_ns);
        txd_copy_int8(c, start_ns);
        txd_copy_int8(c, (int64_t)(a->end_ns - a->start_ns));
        txd_copy_int4(c, (int32_t)a->thread_id);
        if (a->parent_start_ns != 0)
            txd_copy_int8(c, realtime(b, a->parent_start_ns));
        else
            txd_copy_null(c);
        txd_copy_int2(c, (int16_t)a->flags);
        if (a->comm_size != 0)
            txd_copy_int4(c, (int32_t)a->comm_size);
        else
            txd_copy_null(c);
    }
    return TRUE;
}

static gboolean copy_rollups(struct batch_context *b, struct txd_copy *c,
                             const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_rollup *r = &m->rollups[i];
        int64_t metric_id = 0;
        if (!metric_id_of(b, r->metric_id, &metric_id, error))
            return FALSE;
        txd_copy_row(c, 10);
        txd_copy_int8(c, b->node_id);
        txd_copy_int4(c, (int32_t)metric_id);
        txd_copy_timestamp_ns(c, realtime(b, r->start_ns));
        txd_copy_timestamp_ns(c, realtime(b, r->end_ns));
        txd_copy_int4(c, (int32_t)r->count);
        txd_copy_float8(c, r->min);
        txd_copy_float8(c, r->mean);
        txd_copy_float8(c, r->max);
        txd_copy_float8_or_null(c, r->delta);
        txd_copy_bool(c, (r->flags & VIGIL_SAMPLE_UNCERTAIN) != 0);
    }
    return TRUE;
}

static gboolean copy_samples(struct batch_context *b, struct txd_copy *c,
                             const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_sample *s = &m->samples[i];
        int64_t metric_id = 0;
        if (!metric_id_of(b, s->metric_id, &metric_id, error))
            return FALSE;
        txd_copy_row(c, 6);
        txd_copy_int8(c, b->node_id);
        txd_copy_int4(c, (int32_t)metric_id);
        txd_copy_timestamp_ns(c, realtime(b, s->t_ns));
        txd_copy_int8(c, realtime(b, s->t_ns));
        txd_copy_float8(c, s->value);
        txd_copy_bool(c, (s->flags & VIGIL_SAMPLE_UNCERTAIN) != 0);
    }
    return TRUE;
}

/* A process id column: NULL for the node (0). */
static gboolean copy_process_column(struct batch_context *b, struct txd_copy *c, uint64_t daemon_id,
                                    const char *what, GError **error)
{
    if (daemon_id == 0) {
        txd_copy_null(c);
        return TRUE;
    }
    int64_t id = 0;
    if (!process_id_of(b, daemon_id, &id, what, error))
        return FALSE;
    txd_copy_int8(c, id);
    return TRUE;
}

static gboolean copy_anomalies(struct batch_context *b, struct txd_copy *c,
                               const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_anomaly *a = &m->anomalies[i];
        txd_copy_row(c, 12);
        txd_copy_text(c, vigil_level_name(a->level));
        txd_copy_int8(c, b->node_id);
        if (!copy_process_column(b, c, a->process_id, "an anomaly", error))
            return FALSE;
        txd_copy_int8(c, (int64_t)a->cycle);
        txd_copy_timestamp_ns(c, cycle_end_realtime(b, a->cycle));
        txd_copy_text(c, vigil_health_name(a->health));
        txd_copy_text(c, a->plugin);
        txd_copy_text(c, a->metric);
        txd_copy_float8_or_null(c, a->value);
        if (isfinite(a->expected_min))
            txd_copy_float8(c, a->expected_min);
        else
            txd_copy_null(c);
        if (isfinite(a->expected_max))
            txd_copy_float8(c, a->expected_max);
        else
            txd_copy_null(c);
        txd_copy_text(c, a->message);
    }
    return TRUE;
}

static gboolean copy_states(struct batch_context *b, struct txd_copy *c,
                            const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_state *s = &m->states[i];
        txd_copy_row(c, 10);
        txd_copy_text(c, vigil_level_name(s->level));
        txd_copy_int8(c, b->node_id);
        if (!copy_process_column(b, c, s->process_id, "a reasoner state", error))
            return FALSE;
        txd_copy_int8(c, (int64_t)s->cycle);
        txd_copy_timestamp_ns(c, cycle_end_realtime(b, s->cycle));
        txd_copy_text(c, vigil_health_name(s->health));
        txd_copy_int4(c, (int32_t)s->overloaded_mask);
        txd_copy_int4(c, (int32_t)s->bad_issues);
        txd_copy_int4(c, (int32_t)s->good_issues);
        txd_copy_int4(c, (int32_t)s->other_issues);
    }
    return TRUE;
}

static gboolean copy_windows(struct batch_context *b, struct txd_copy *c,
                             const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_window *w = &m->windows[i];
        txd_copy_row(c, 8);
        txd_copy_int8(c, b->node_id);
        if (!copy_process_column(b, c, w->process_id, "a captured window", error))
            return FALSE;
        txd_copy_int8(c, (int64_t)w->first_cycle);
        txd_copy_int8(c, (int64_t)w->last_cycle);
        txd_copy_timestamp_ns(c, realtime(b, w->start_ns));
        txd_copy_timestamp_ns(c, realtime(b, w->end_ns));
        txd_copy_int8(c, (int64_t)w->activities_forwarded);
        txd_copy_text(c, w->reasons);
    }
    return TRUE;
}

static gboolean store_summaries(struct batch_context *b, const struct vigil_wire_message *m,
                                GError **error)
{
    /* The figures the web UI sorts by are read out of the report by the
     * database itself, so that they cannot disagree with it. Under MPI
     * rank 0's report covers the job, and each other rank's own report is
     * also in it ("in_job_report"): those keep their JSON but no figures,
     * or a run's sums would count them twice. */
    static const char sql[] =
        "INSERT INTO run_summaries (process_id, report, calls, bytes_read, bytes_written, "
        "energy_j, energy_source) "
        "SELECT $1, r, "
        "CASE WHEN own THEN (r->'activities'->>'observed')::bigint END, "
        "CASE WHEN own THEN (r->>'io_bytes_read')::bigint END, "
        "CASE WHEN own THEN (r->>'io_bytes_written')::bigint END, "
        "CASE WHEN own THEN (r->>'energy_joule')::float8 END, r->>'energy_source' "
        "FROM (SELECT $2::jsonb AS r, NOT coalesce(($2::jsonb->>'in_job_report')::boolean, "
        "false) AS own) AS report "
        "ON CONFLICT (process_id) DO UPDATE SET report = EXCLUDED.report, "
        "calls = EXCLUDED.calls, bytes_read = EXCLUDED.bytes_read, "
        "bytes_written = EXCLUDED.bytes_written, energy_j = EXCLUDED.energy_j, "
        "energy_source = EXCLUDED.energy_source";
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_summary *s = &m->summaries[i];
        int64_t process_id = 0;
        if (!process_id_of(b, s->process_id, &process_id, "a run summary", error))
            return FALSE;
        char *id_text = g_strdup_printf("%" G_GINT64_FORMAT, process_id);
        const char *values[] = {id_text, s->report_json};
        PGresult *result = PQexecParams(b->store->db, sql, 2, NULL, values, NULL, NULL, 0);
        gboolean ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        if (!ok)
            txd_set_pg_error(error, b->store->db, result, sql);
        PQclear(result);
        g_free(id_text);
        if (!ok)
            return FALSE;
        b->rows++;
    }
    return TRUE;
}

static gboolean store_all_summaries(struct batch_context *b, GError **error)
{
    for (uint32_t i = 0; i < b->batch->header.count; i++)
        if (b->batch->inner[i].header.type == VIGIL_WIRE_SUMMARIES &&
            !store_summaries(b, &b->batch->inner[i], error))
            return FALSE;
    return TRUE;
}

typedef gboolean (*copy_rows_fn)(struct batch_context *b, struct txd_copy *c,
                                 const struct vigil_wire_message *m, GError **error);

/* One COPY for every message of `type` in the batch. */
static gboolean copy_all(struct batch_context *b, enum vigil_wire_type type, copy_rows_fn rows,
                         const char *statement, GError **error)
{
    struct txd_copy c;
    txd_copy_init(&c);
    gboolean ok = TRUE;
    for (uint32_t i = 0; ok && i < b->batch->header.count; i++)
        if (b->batch->inner[i].header.type == type)
            ok = rows(b, &c, &b->batch->inner[i], error);
    if (ok)
        ok = txd_copy_send(b->store->db, statement, &c, error);
    b->rows += c.rows;
    txd_copy_clear(&c);
    return ok;
}

/* Each message type that names things first, so the COPYs can use their
 * ids. */
static gboolean store_describing(struct batch_context *b, GError **error)
{
    const struct vigil_wire_message *batch = b->batch;
    for (uint32_t i = 0; i < batch->header.count; i++) {
        const struct vigil_wire_message *m = &batch->inner[i];
        gboolean ok = TRUE;
        if (m->header.type == VIGIL_WIRE_PROCESSES)
            for (uint32_t k = 0; ok && k < m->header.count; k++)
                ok = store_process(b, &m->processes[k], error);
        else if (m->header.type == VIGIL_WIRE_METRICS)
            ok = store_metrics(b, m, error);
        if (!ok)
            return FALSE;
    }
    /* Names after processes: a file id is its process's. */
    for (uint32_t i = 0; i < batch->header.count; i++)
        if (batch->inner[i].header.type == VIGIL_WIRE_NAMES &&
            !store_names(b, &batch->inner[i], error))
            return FALSE;
    return TRUE;
}

static gboolean store_rows(struct batch_context *b, GError **error)
{
    if (!store_node(b, error) || !store_describing(b, error))
        return FALSE;
    return copy_all(b, VIGIL_WIRE_ACTIVITIES, copy_activities,
                    "COPY activities (process_id, seq, layer, operation, file_id, file_offset, "
                    "bytes, result, errno, start_time, start_ns, duration_ns, thread, "
                    "parent_start_ns, flags, comm_size) FROM STDIN (FORMAT binary)",
                    error) &&
           copy_all(b, VIGIL_WIRE_ROLLUPS, copy_rollups,
                    "COPY statistics_rollups (node_id, metric_id, start_time, end_time, samples, "
                    "min, mean, max, delta, uncertain) FROM STDIN (FORMAT binary)",
                    error) &&
           copy_all(b, VIGIL_WIRE_SAMPLES, copy_samples,
                    "COPY window_statistics (node_id, metric_id, time, t_ns, value, uncertain) "
                    "FROM STDIN (FORMAT binary)",
                    error) &&
           copy_all(b, VIGIL_WIRE_ANOMALIES, copy_anomalies,
                    "COPY anomalies (level, node_id, process_id, cycle, time, state, plugin, "
                    "metric, value, expected_min, expected_max, message) "
                    "FROM STDIN (FORMAT binary)",
                    error) &&
           copy_all(b, VIGIL_WIRE_STATES, copy_states,
                    "COPY reasoner_states (level, node_id, process_id, cycle, time, state, "
                    "overloaded_mask, bad_issues, good_issues, other_issues) "
                    "FROM STDIN (FORMAT binary)",
                    error) &&
           copy_all(b, VIGIL_WIRE_WINDOWS, copy_windows,
                    "COPY captures (node_id, process_id, first_cycle, last_cycle, start_time, "
                    "end_time, activities_forwarded, reasons) FROM STDIN (FORMAT binary)",
                    error) &&
           store_all_summaries(b, error);
}

/* ---- the claim: whose batch it is, and whether it is new ---------------------------------- */

/* With CURVE: the node id must be the sender key's. The first key a node
 * id comes with is recorded; a batch of that node id with another key is
 * refused. (Two servers seeing a new node at once: the second's INSERT
 * waits for the first's commit and inserts nothing, but its statement's
 * snapshot, older, may not show the row: the batch is tried again.) */
static gboolean check_node_key(struct batch_context *b, const char *key, GError **error)
{
    char node[32];
    g_snprintf(node, sizeof node, "%" G_GINT64_FORMAT, b->node_id);
    const char *values[] = {node, key};
    static const char sql[] =
        "WITH learnt AS (INSERT INTO node_keys (node_id, curve_public_key) VALUES ($1, $2) "
        "ON CONFLICT (node_id) DO NOTHING RETURNING curve_public_key) "
        "SELECT curve_public_key FROM learnt "
        "UNION ALL SELECT curve_public_key FROM node_keys WHERE node_id = $1 LIMIT 1";
    PGresult *result = PQexecParams(b->store->db, sql, 2, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1;
    if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 0) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_RETRY,
                    "node %" G_GINT64_FORMAT "'s key was being recorded by another server",
                    b->node_id);
    } else if (!ok) {
        txd_set_pg_error(error, b->store->db, result, sql);
    } else if (strcmp(PQgetvalue(result, 0, 0), key) != 0) {
        b->store->counts.batches_impostor++;
        ok = refuse(error,
                    "node %" G_GINT64_FORMAT " belongs to CURVE key %s, and this batch came with "
                    "key %s: a node cannot write as another (a node given a new key needs its "
                    "row in node_keys deleted, and vigil-txd restarted)",
                    b->node_id, PQgetvalue(result, 0, 0), key);
    }
    PQclear(result);
    return ok;
}

/* A sequence below the node's highest is a spool replayed late, or a node
 * whose numbers went back (its spool folder lost while its clock was
 * behind): said at once, then at most once a minute a node, with the
 * count, so that a replay of thousands does not bury the log. */
static void note_sequence_below(struct txd_store *s, int64_t node_id, uint64_t sequence,
                                uint64_t highest)
{
    struct below {
        gboolean said;
        int64_t said_ns;
        uint64_t since;
    };
    struct below *b = g_hash_table_lookup(s->below, &node_id);
    if (b == NULL) {
        int64_t *key = g_memdup2(&node_id, sizeof node_id);
        b = g_new0(struct below, 1);
        g_hash_table_insert(s->below, key, b);
    }
    s->counts.batches_below++;
    b->since++;
    int64_t now_ns = g_get_monotonic_time() * 1000;
    if (b->said && now_ns - b->said_ns < INT64_C(60000000000))
        return;
    g_warning("node %" G_GINT64_FORMAT " sent sequence %" G_GUINT64_FORMAT " below its highest "
              "stored, %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " such batches since last "
              "said): a spool replayed late, or the node's sequence went back (its spool folder "
              "reset while its clock was behind?); stored, since no batch has that number",
              node_id, sequence, highest, b->since);
    b->said = TRUE;
    b->said_ns = now_ns;
    b->since = 0;
}

/* The content a claimed (node, sequence) was stored with, read afresh (a
 * new statement sees a claim another server committed meanwhile). FALSE
 * with error on failure; *known FALSE for a claim from before schema
 * version 3, which recorded no content. */
static gboolean stored_content(struct batch_context *b, const char *node, const char *sequence,
                               gboolean *known, uint32_t *crc32, uint64_t *bytes, GError **error)
{
    const char *values[] = {node, sequence};
    static const char sql[] = "SELECT content_crc32, content_bytes FROM ingested_batches "
                              "WHERE node_id = $1 AND sequence = $2";
    PGresult *result = PQexecParams(b->store->db, sql, 2, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1;
    if (!ok) {
        txd_set_pg_error(error, b->store->db, result, sql);
    } else {
        *known = !PQgetisnull(result, 0, 0) && !PQgetisnull(result, 0, 1);
        *crc32 = *known ? (uint32_t)g_ascii_strtoull(PQgetvalue(result, 0, 0), NULL, 10) : 0;
        *bytes = *known ? g_ascii_strtoull(PQgetvalue(result, 0, 1), NULL, 10) : 0;
    }
    PQclear(result);
    return ok;
}

/* Records the batch as stored, with what it holds; FALSE with *duplicate
 * when the same batch was stored before. A (node, sequence) stored before
 * with other content is not a resend: refused with both digests, so that
 * nothing is lost silently. */
static gboolean claim_batch(struct batch_context *b, const struct txd_batch_origin *origin,
                            gboolean *duplicate, GError **error)
{
    const struct vigil_wire_header *h = &b->batch->header;
    if (origin->curve_key != NULL && !check_node_key(b, origin->curve_key, error))
        return FALSE;
    uint64_t items = 0;
    for (uint32_t i = 0; i < h->count; i++)
        items += b->batch->inner[i].header.count;
    char node[32], sequence[32], messages[32], rows[32], crc32[16], bytes[32];
    g_snprintf(node, sizeof node, "%" G_GINT64_FORMAT, b->node_id);
    g_snprintf(sequence, sizeof sequence, "%" G_GINT64_FORMAT, (int64_t)h->sequence);
    g_snprintf(messages, sizeof messages, "%u", h->count);
    g_snprintf(rows, sizeof rows, "%" G_GUINT64_FORMAT, items);
    g_snprintf(crc32, sizeof crc32, "%" G_GUINT32_FORMAT, origin->crc32);
    g_snprintf(bytes, sizeof bytes, "%" G_GUINT64_FORMAT, origin->bytes);
    const char *values[] = {node, sequence, messages, rows, crc32, bytes};
    /* The subquery sees the table as it was before the INSERT: the node's
     * highest sequence until now (an index's last entry). */
    static const char sql[] =
        "WITH claimed AS (INSERT INTO ingested_batches (node_id, sequence, messages, rows, "
        "content_crc32, content_bytes) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING "
        "RETURNING 1) "
        "SELECT (SELECT count(*) FROM claimed), "
        "(SELECT max(sequence) FROM ingested_batches WHERE node_id = $1)";
    PGresult *result = PQexecParams(b->store->db, sql, 6, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1;
    if (!ok) {
        txd_set_pg_error(error, b->store->db, result, sql);
        PQclear(result);
        return FALSE;
    }
    *duplicate = strcmp(PQgetvalue(result, 0, 0), "0") == 0;
    gboolean has_highest = !PQgetisnull(result, 0, 1);
    uint64_t highest = has_highest ? g_ascii_strtoull(PQgetvalue(result, 0, 1), NULL, 10) : 0;
    PQclear(result);
    if (!*duplicate) {
        if (has_highest && h->sequence < highest)
            note_sequence_below(b->store, b->node_id, h->sequence, highest);
        return TRUE;
    }
    gboolean known = FALSE;
    uint32_t stored_crc32 = 0;
    uint64_t stored_bytes = 0;
    if (!stored_content(b, node, sequence, &known, &stored_crc32, &stored_bytes, error))
        return FALSE;
    if (!known || (stored_crc32 == origin->crc32 && stored_bytes == origin->bytes))
        return TRUE; /* a resend */
    b->store->counts.batches_reused++;
    *duplicate = FALSE;
    return refuse(
        error,
        "sequence reused: was the node's spool folder reset? Node %" G_GINT64_FORMAT
        " sequence %" G_GUINT64_FORMAT " was stored with content crc32 %08" G_GINT32_MODIFIER
        "x (%" G_GUINT64_FORMAT " bytes); this batch has crc32 %08" G_GINT32_MODIFIER
        "x (%" G_GUINT64_FORMAT " bytes) and is not stored",
        b->node_id, h->sequence, stored_crc32, stored_bytes, origin->crc32, origin->bytes);
}

static enum txd_store_result failed(struct txd_store *s, GError *local, GError **error)
{
    /* Nothing of the batch may stay: roll back, or drop a connection
     * that cannot even do that. */
    if (s->db != NULL && PQstatus(s->db) == CONNECTION_OK &&
        PQtransactionStatus(s->db) != PQTRANS_IDLE) {
        PGresult *result = PQexec(s->db, "ROLLBACK");
        if (PQresultStatus(result) != PGRES_COMMAND_OK)
            disconnect(s);
        PQclear(result);
    }
    if (s->db != NULL && PQstatus(s->db) != CONNECTION_OK)
        disconnect(s);
    txd_ids_rollback(s->ids);
    gboolean refused = g_error_matches(local, TXD_ERROR, TXD_ERROR_REFUSE);
    g_propagate_error(error, local);
    if (refused)
        s->counts.batches_refused++;
    return refused ? TXD_REFUSED : TXD_RETRY;
}

enum txd_store_result txd_store_batch(struct txd_store *s, const struct vigil_wire_message *batch,
                                      const struct txd_batch_origin *origin, GError **error)
{
    GError *local = NULL;
    if (!txd_store_connect(s, &local)) {
        g_propagate_error(error, local);
        return TXD_RETRY;
    }
    struct batch_context b = {
        .store = s,
        .batch = batch,
        .node = &batch->inner[0].nodes[0], /* the decoder checked it is there */
        .node_id = (int64_t)batch->header.node_id,
        .processes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
        .files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .metrics = g_hash_table_new(NULL, NULL),
    };
    gboolean duplicate = FALSE;
    gboolean ok =
        exec_command(s->db, "BEGIN", &local) && claim_batch(&b, origin, &duplicate, &local);
    if (ok && duplicate)
        ok = exec_command(s->db, "ROLLBACK", &local);
    else if (ok)
        ok = store_rows(&b, &local) && exec_command(s->db, "COMMIT", &local);
    g_hash_table_destroy(b.processes);
    g_hash_table_destroy(b.files);
    g_hash_table_destroy(b.metrics);
    if (!ok)
        return failed(s, local, error);
    if (duplicate) {
        s->counts.batches_duplicate++;
        return TXD_DUPLICATE;
    }
    txd_ids_commit(s->ids);
    s->counts.batches_stored++;
    s->counts.rows_stored += b.rows;
    return TXD_STORED;
}

gboolean txd_store_system_state(struct txd_store *s, const struct vigil_wire_state *state,
                                int64_t realtime_ns, GError **error)
{
    if (!txd_store_connected(s))
        return FALSE;
    GPtrArray *buffers = g_ptr_array_new_with_free_func(g_free);
    const char *values[] = {
        param_int(buffers, (int64_t)state->cycle), param_timestamp(buffers, realtime_ns),
        vigil_health_name(state->health),          param_int(buffers, state->overloaded_mask),
        param_int(buffers, state->bad_issues),     param_int(buffers, state->good_issues),
        param_int(buffers, state->other_issues)};
    static const char sql[] =
        "INSERT INTO reasoner_states (level, cycle, time, state, overloaded_mask, bad_issues, "
        "good_issues, other_issues) VALUES ('system', $1, $2, $3, $4, $5, $6, $7)";
    PGresult *result = PQexecParams(s->db, sql, 7, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    if (!ok)
        txd_set_pg_error(error, s->db, result, sql);
    PQclear(result);
    g_ptr_array_unref(buffers);
    return ok;
}
