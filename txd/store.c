/* vigil-txd — batches into PostgreSQL, exactly once, a group at a time.
 *
 * Each batch is stored in its own savepoint that begins by recording its
 * (node, sequence) in ingested_batches. When that row exists already (also
 * from earlier in the same group) the batch was stored before (a daemon
 * resends what it has no acknowledgement for), and its savepoint is rolled
 * back with nothing written. A batch whose rows the database refuses is
 * rolled back to its savepoint alone. Up to a group of batches share one
 * transaction, so one COMMIT (one fdatasync of the WAL) serves them all;
 * only when it succeeds does the caller acknowledge. When anything else
 * fails, nothing of the group is in the database and every batch of it is
 * tried again. So a batch is in the warehouse once, whatever fails when.
 *
 * The rows go in with binary COPY, one COPY per table per batch. Small
 * tables (nodes, runs, processes, summaries) take parameterised upserts. */
#include <string.h>

#include "txd.h"
#include "vigil/health.h"
#include "vigil/run_key.h"
#include "vigil/schema.h"

/* vigil_warehouse_day_tables, by name. */
enum { ACTIVITIES, ROLLUPS, WINDOW_STATISTICS, STATES, BATCHES };
_Static_assert(BATCHES + 1 == VIGIL_WAREHOUSE_DAY_TABLES, "one name for each day table");

struct txd_store {
    struct vigil_warehouse_settings settings;
    PGconn *db;
    int64_t next_maintain_ns; /* monotonic; 0: at the next turn */
    struct txd_ids *ids;
    struct txd_store_counts counts;
    GHashTable *below; /* node id → when a sequence below its highest was last said */
};

struct txd_store *txd_store_new(const struct vigil_warehouse_settings *warehouse)
{
    struct txd_store *s = g_new0(struct txd_store, 1);
    vigil_settings_copy(&vigil_warehouse_keys, &s->settings, warehouse);
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
    vigil_settings_clear(&vigil_warehouse_keys, &s->settings);
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
    s->db = vigil_warehouse_connect_timeout(s->settings.conninfo, s->settings.connect_timeout_s,
                                            &local);
    if (s->db == NULL) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_RETRY, "%s", local->message);
        g_error_free(local);
        return FALSE;
    }
    guint version = 0, latest = vigil_warehouse_latest_version();
    gboolean ok = s->settings.migrate ? vigil_warehouse_migrate(s->db, NULL, &local)
                                      : vigil_warehouse_current_version(s->db, &version, &local);
    if (ok && !s->settings.migrate && version != latest) {
        g_set_error(&local, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION,
                    "the warehouse's schema is at version %u, this vigil-txd writes version %u: "
                    "run `vigil db migrate`, or set [warehouse] migrate = true",
                    version, latest);
        ok = FALSE;
    }
    /* Partitions are days in UTC, whatever the server's time zone. A
     * statement or a lock wait past its timeout fails, and the batch waits
     * and is tried again, rather than vigil-txd hanging on it (set after
     * migrating: a migration may rightly take longer). */
    if (ok) {
        char *sql = g_strdup_printf("SET TIME ZONE 'UTC'; SET statement_timeout = %u; "
                                    "SET lock_timeout = %u",
                                    s->settings.statement_timeout_ms, s->settings.lock_timeout_ms);
        ok = exec_command(s->db, sql, &local);
        g_free(sql);
    }
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
    /* Partitions may have gone while we were away; and the maintenance
     * step runs at each connection. */
    txd_ids_forget_partitions(s->ids);
    s->next_maintain_ns = 0;
    txd_store_maintain_when_due(s);
    return TRUE;
}

void txd_store_maintain_when_due(struct txd_store *s)
{
    int64_t now_ns = g_get_monotonic_time() * 1000;
    if (!txd_store_connected(s) || now_ns < s->next_maintain_ns)
        return;
    s->next_maintain_ns = now_ns + (int64_t)s->settings.maintain_interval_s * 1000000000;
    guint created = 0;
    GError *error = NULL;
    if (!vigil_warehouse_maintain(s->db, s->settings.partitions_ahead_days, &created, &error)) {
        /* A lock held elsewhere, say: tried again soon; batches make the
         * partitions they need meanwhile. */
        g_warning("the maintenance step failed, tried again in a minute: %s", error->message);
        g_error_free(error);
        s->next_maintain_ns = now_ns + MIN((int64_t)s->settings.maintain_interval_s, 60) *
                                           G_GINT64_CONSTANT(1000000000);
        if (PQstatus(s->db) != CONNECTION_OK)
            disconnect(s);
        return;
    }
    if (created > 0)
        g_message("made %u day partitions ahead (yesterday, today and %u days after)", created,
                  s->settings.partitions_ahead_days);
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
    GHashTable *runs;      /* "UID KEY" (the key a process of UID named) → struct batch_run */
    GHashTable *jobs;      /* scheduler job id → warehouse id */
    /* Daemon's process id → its UNWATCHED_ENDS item: its end is a bound. */
    GHashTable *unwatched_ends;
    uint64_t rows;
    uint64_t runs_described;
    struct txd_activity_seconds *activity_seconds; /* while store_rows copies activities */
    gboolean other_key; /* refused: its node id belongs to another CURVE key */
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
    g_propagate_error(error, g_error_new_valist(TXD_ERROR, TXD_ERROR_REFUSE, format, ap));
    va_end(ap);
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

const char *txd_param_int(GPtrArray *buffers, int64_t v)
{
    char *text = g_strdup_printf("%" G_GINT64_FORMAT, v);
    g_ptr_array_add(buffers, text);
    return text;
}

const char *txd_param_timestamp(GPtrArray *buffers, int64_t realtime_ns)
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
    const char *values[] = {txd_param_int(buffers, b->node_id), b->node->hostname};
    static const char sql[] =
        "INSERT INTO nodes (node_id, hostname) VALUES ($1, $2) "
        "ON CONFLICT (node_id) DO UPDATE SET hostname = EXCLUDED.hostname, last_seen = now()";
    gboolean ok = txd_exec_params(b->store->db, sql, 2, values, error);
    g_ptr_array_unref(buffers);
    return ok;
}

/* A run a batch names: its id, the job a process of it gave, and whether
 * a process of it is new or changed, so that the run must be described
 * again. */
struct batch_run {
    int64_t run_id;
    int64_t job_id; /* 0: none */
    gboolean changed;
};

/* One statement returning (id), (id, flag) or (id, flag, number) in its
 * first row, or no row. */
static gboolean query_row(PGconn *db, const char *sql, int n, const char *const *values,
                          const int *lengths, const int *formats, gboolean *found, int64_t *id,
                          gboolean *flag, int64_t *number, GError **error)
{
    PGresult *result = PQexecParams(db, sql, n, NULL, values, lengths, formats, 0);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK;
    if (!ok)
        txd_set_pg_error(error, db, result, sql);
    *found = ok && PQntuples(result) > 0;
    if (*found) {
        *id = g_ascii_strtoll(PQgetvalue(result, 0, 0), NULL, 10);
        if (flag != NULL)
            *flag = strcmp(PQgetvalue(result, 0, 1), "t") == 0;
        if (number != NULL)
            *number = g_ascii_strtoll(PQgetvalue(result, 0, 2), NULL, 10);
    }
    PQclear(result);
    return ok;
}

/* The uid root told the warehouse scheduler job `job` is (jobs.uid with
 * root_fields' uid bit); FALSE when no root notice said. */
static gboolean root_job_uid(struct batch_context *b, const char *job, gboolean *told, int64_t *uid,
                             GError **error)
{
    const char *values[] = {job};
    static const char sql[] = "SELECT uid FROM jobs WHERE scheduler_job_id = $1 "
                              "AND root_fields & 2 <> 0 AND uid IS NOT NULL";
    return query_row(b->store->db, sql, 1, values, NULL, NULL, told, uid, NULL, NULL, error);
}

/* Why run `key` is not uid `uid`'s before any run is looked up: its name
 * says whose it is, or root said whose its Slurm job is; NULL when
 * neither rules it out. */
static char *not_by_name(struct batch_context *b, const char *key, uint32_t uid, GError **error)
{
    uint32_t named = 0;
    char job[VIGIL_RUN_KEY_MAX + 1];
    if (vigil_run_key_owner(key, &named))
        return named != uid ? g_strdup_printf("its name says it is uid %u's", named) : NULL;
    gboolean told = FALSE;
    int64_t job_uid = 0;
    if (!vigil_run_key_scheduler_job(key, job, sizeof job) ||
        !root_job_uid(b, job, &told, &job_uid, error) || !told || job_uid == (int64_t)uid)
        return NULL;
    return g_strdup_printf("root told job %s is uid %" G_GINT64_FORMAT "'s", job, job_uid);
}

/* Keys a process may be sent on to: its run's, its own apart, and (a run
 * of that name left by hand, or before migration 10) one further each. */
#define RUN_KEY_HOPS_MAX 4

/* The run of `p`: the one its key names when that is its uid's, else the
 * one kept apart for its uid (vigil_run_key_apart), as vigild keeps it,
 * since runs span nodes and a node's vigild may not have known. A run is
 * made when new, with `p`'s program, argv, uid and start, which never
 * change after; INSERT … ON CONFLICT DO NOTHING takes no lock on a run
 * that exists, so batches of one run from several nodes do not wait for
 * each other here, and of two servers making one run, the first to commit
 * decides whose it is. */
static struct batch_run *run_of(struct batch_context *b, const struct vigil_wire_process *p,
                                const char *argv, int argv_length, const char *start,
                                const char *end, const char *exit_status, GPtrArray *buffers,
                                GError **error)
{
    char *cache_key = g_strdup_printf("%u %s", p->uid, p->run_key);
    struct batch_run *run = g_hash_table_lookup(b->runs, cache_key);
    if (run != NULL) {
        g_free(cache_key);
        return run;
    }
    PGconn *db = b->store->db;
    static const char sql[] =
        "WITH inserted AS (INSERT INTO runs (run_key, program, argv, uid, start_time, end_time, "
        "exit_status, asked_run_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
        "ON CONFLICT (run_key) DO NOTHING RETURNING run_id, uid) "
        "SELECT run_id, true, uid FROM inserted UNION ALL "
        "SELECT run_id, false, uid FROM runs WHERE run_key = $1 LIMIT 1";
    char key[VIGIL_RUN_KEY_MAX + 1];
    g_strlcpy(key, p->run_key, sizeof key);
    GError *local = NULL;
    char *why = not_by_name(b, key, p->uid, &local);
    if (local != NULL) {
        g_propagate_error(error, local);
        g_free(cache_key);
        return NULL;
    }
    int64_t run_id = 0, run_uid = 0;
    gboolean found = FALSE, inserted = FALSE;
    int hop = 0;
    for (; hop < RUN_KEY_HOPS_MAX; hop++) {
        if (why != NULL) {
            char apart[VIGIL_RUN_KEY_MAX + 1];
            vigil_run_key_apart(apart, key, p->uid);
            g_strlcpy(key, apart, sizeof key);
        }
        const char *values[] = {
            key,   p->program, argv,        txd_param_int(buffers, p->uid),
            start, end,        exit_status, strcmp(key, p->run_key) != 0 ? p->run_key : NULL};
        const int lengths[] = {0, 0, argv_length, 0, 0, 0, 0, 0};
        const int formats[] = {0, 0, 1, 0, 0, 0, 0, 0};
        /* A run another server inserted meanwhile is seen by neither part
         * of the statement's snapshot: the second try sees it. */
        found = FALSE;
        for (int attempt = 0; attempt < 2 && !found; attempt++)
            if (!query_row(db, sql, 8, values, lengths, formats, &found, &run_id, &inserted,
                           &run_uid, error)) {
                g_free(why);
                g_free(cache_key);
                return NULL;
            }
        if (!found || run_uid == (int64_t)p->uid)
            break;
        g_free(why);
        why = g_strdup_printf("its first process was uid %" G_GINT64_FORMAT "'s", run_uid);
        found = FALSE;
    }
    if (!found) {
        /* Every key tried is another uid's: runs made by hand, not by
         * vigil-txd. A run that did not come back at all is tried again. */
        g_set_error(error, TXD_ERROR, hop == RUN_KEY_HOPS_MAX ? TXD_ERROR_REFUSE : TXD_ERROR_RETRY,
                    "no run of uid %u's came back for run key %s (tried up to %s)", p->uid,
                    p->run_key, key);
        g_free(why);
        g_free(cache_key);
        return NULL;
    }
    if (inserted && why != NULL)
        g_message("batch %" G_GINT64_FORMAT ":%" G_GUINT64_FORMAT ": pid %d (uid %u) named run %s, "
                  "which is not its uid's (%s): stored in run %s",
                  b->node_id, b->batch->header.sequence, p->pid, p->uid, p->run_key, why, key);
    g_free(why);
    run = g_new0(struct batch_run, 1);
    run->run_id = run_id;
    run->changed = inserted;
    g_hash_table_insert(b->runs, cache_key, run);
    return run;
}

static gboolean store_process(struct batch_context *b, const struct vigil_wire_process *p,
                              GError **error)
{
    PGconn *db = b->store->db;
    GPtrArray *buffers = g_ptr_array_new_with_free_func(g_free);
    GByteArray *argv = text_array_binary(p->argv, p->argc);
    int64_t start_ns = realtime(b, p->start_ns);
    const char *start = txd_param_timestamp(buffers, start_ns);
    const char *end = p->end_ns != 0 ? txd_param_timestamp(buffers, realtime(b, p->end_ns)) : NULL;
    const char *exit_status = p->exit_code >= 0 ? txd_param_int(buffers, p->exit_code) : NULL;
    gboolean ok = start != NULL;
    if (!ok)
        refuse(error, "process %d starts at a time out of range", p->pid);
    /* Ended while no vigild ran: its end lies between the two. */
    const struct vigil_wire_unwatched_end *unwatched =
        g_hash_table_lookup(b->unwatched_ends, &p->process_id);
    const char *end_earliest = NULL;
    if (ok && unwatched != NULL) {
        if (unwatched->latest_end_ns != p->end_ns)
            ok = refuse(error,
                        "process %d: its unwatched end's latest (%" G_GUINT64_FORMAT
                        " ns) is not its end (%" G_GUINT64_FORMAT " ns)",
                        p->pid, unwatched->latest_end_ns, p->end_ns);
        else if ((end_earliest = txd_param_timestamp(
                      buffers, realtime(b, MAX(unwatched->earliest_end_ns, p->start_ns)))) == NULL)
            ok = refuse(error, "process %d: its earliest end is a time out of range", p->pid);
    }

    int64_t job_id = 0;
    if (ok && p->job[0] != '\0' && !lookup(b->jobs, p->job, &job_id)) {
        static const char sql[] =
            "WITH inserted AS (INSERT INTO jobs (scheduler_job_id) VALUES ($1) "
            "ON CONFLICT DO NOTHING RETURNING job_id) SELECT job_id FROM inserted "
            "UNION ALL SELECT job_id FROM jobs WHERE scheduler_job_id = $1 LIMIT 1";
        const char *values[] = {p->job};
        ok = query_one_id(db, sql, 1, values, NULL, NULL, &job_id, error);
        if (ok) /* once per batch: all ranks of a job name it */
            g_hash_table_insert(b->jobs, g_strdup(p->job), GSIZE_TO_POINTER((gsize)job_id));
    }
    struct batch_run *run = NULL;
    if (ok) {
        run = run_of(b, p, (const char *)argv->data, (int)argv->len, start, end, exit_status,
                     buffers, error);
        ok = run != NULL;
    }
    int64_t process_id = 0;
    if (ok) {
        if (run->job_id == 0)
            run->job_id = job_id;
        /* Rewritten only when something changed; then RETURNING says so
         * (a new process or a changed one changes its run). A process
         * already stored as it is returns no row, and is looked up. */
        static const char sql[] =
            "WITH upserted AS (INSERT INTO processes (run_id, node_id, pid, uid, rank, program, "
            "argv, cwd, start_time, start_monotonic_ns, end_time, exit_status, "
            "end_time_earliest) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) "
            "ON CONFLICT (node_id, pid, start_monotonic_ns) DO UPDATE SET "
            "end_time = coalesce(EXCLUDED.end_time, processes.end_time), "
            "exit_status = coalesce(EXCLUDED.exit_status, processes.exit_status), "
            "rank = coalesce(EXCLUDED.rank, processes.rank), "
            "end_time_earliest = coalesce(EXCLUDED.end_time_earliest, "
            "processes.end_time_earliest) "
            "WHERE processes.uid = EXCLUDED.uid AND "
            "(processes.end_time, processes.exit_status, processes.rank, "
            "processes.end_time_earliest) IS DISTINCT FROM "
            "(coalesce(EXCLUDED.end_time, processes.end_time), "
            "coalesce(EXCLUDED.exit_status, processes.exit_status), "
            "coalesce(EXCLUDED.rank, processes.rank), "
            "coalesce(EXCLUDED.end_time_earliest, processes.end_time_earliest)) "
            "RETURNING process_id, uid) SELECT process_id, true, uid FROM upserted UNION ALL "
            "SELECT process_id, false, uid FROM processes WHERE node_id = $2 AND pid = $3 AND "
            "start_monotonic_ns = $10 LIMIT 1";
        const char *values[] = {txd_param_int(buffers, run->run_id),
                                txd_param_int(buffers, b->node_id),
                                txd_param_int(buffers, p->pid),
                                txd_param_int(buffers, p->uid),
                                p->rank >= 0 ? txd_param_int(buffers, p->rank) : NULL,
                                p->program,
                                (const char *)argv->data,
                                p->cwd,
                                start,
                                txd_param_int(buffers, (int64_t)p->start_ns),
                                end,
                                exit_status,
                                end_earliest};
        const int lengths[] = {0, 0, 0, 0, 0, 0, (int)argv->len, 0, 0, 0, 0, 0, 0};
        const int formats[] = {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
        gboolean found = FALSE, changed = FALSE;
        int64_t stored_uid = 0;
        for (int attempt = 0; ok && attempt < 2 && !found; attempt++)
            ok = query_row(db, sql, 13, values, lengths, formats, &found, &process_id, &changed,
                           &stored_uid, error);
        if (ok && !found) {
            g_set_error(error, TXD_ERROR, TXD_ERROR_RETRY, "no process id came back for pid %d",
                        p->pid);
            ok = FALSE;
        }
        /* The same (node, pid, start) as another user's process: a start a
         * vigild took from a REGISTER (before issue 30), forged to take
         * that process's row. */
        if (ok && stored_uid != (int64_t)p->uid)
            ok = refuse(error,
                        "process %d of uid %u starts at %" G_GUINT64_FORMAT
                        " ns, as process %" G_GINT64_FORMAT " of uid %" G_GINT64_FORMAT
                        " on this node did: a process's start must be its own",
                        p->pid, p->uid, p->start_ns, process_id, stored_uid);
        if (ok && changed)
            run->changed = TRUE;
        if (ok && unwatched != NULL &&
            (ok = txd_store_unwatched_end(db, process_id, unwatched, error)))
            b->rows++;
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

static gint compare_run_ids(gconstpointer a, gconstpointer b)
{
    const struct batch_run *x = *(struct batch_run *const *)a, *y = *(struct batch_run *const *)b;
    return x->run_id < y->run_id ? -1 : x->run_id > y->run_id;
}

/* Describes again, once per batch, each run a new or changed process of
 * the batch belongs to: its scheduler job (the one its processes name,
 * unless root told that job is another uid's: SLURM_JOB_ID is anyone's to
 * set); its exit status its first
 * process's pid's last program's (a shell that exec'd the real program has
 * none of its own); its end, the last of its processes', none while one
 * runs. Its first process is the first stored (the lowest process id):
 * its uid, program, arguments and start were set when it made the run,
 * and are not touched here. Batches of several nodes come in any order, and through several
 * servers: the run's row is locked first, by a statement of its own, so
 * that the description is read from a snapshot taken after every other
 * transaction that changed the run committed. Runs in id order, so that
 * two servers never wait for each other's locks in a circle. */
static gboolean describe_runs(struct batch_context *b, GError **error)
{
    GPtrArray *changed = g_ptr_array_new();
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, b->runs);
    while (g_hash_table_iter_next(&it, NULL, &value))
        if (((struct batch_run *)value)->changed)
            g_ptr_array_add(changed, value);
    g_ptr_array_sort(changed, compare_run_ids);
    static const char lock_sql[] = "SELECT run_id FROM runs WHERE run_id = $1 FOR NO KEY UPDATE";
    static const char sql[] =
        "UPDATE runs SET job_id = coalesce(runs.job_id, (SELECT j.job_id FROM jobs j "
        "WHERE j.job_id = $2 AND (j.root_fields & 2 = 0 OR j.uid = runs.uid))), "
        "exit_status = (SELECT exit_status FROM processes p WHERE p.run_id = $1 AND "
        "p.node_id = first.node_id AND p.pid = first.pid ORDER BY p.start_time DESC, "
        "p.process_id DESC LIMIT 1), end_time = span.end_time, "
        "end_time_earliest = CASE WHEN span.end_earliest < span.end_time "
        "THEN span.end_earliest END "
        "FROM (SELECT node_id, pid FROM processes WHERE run_id = $1 "
        "ORDER BY process_id LIMIT 1) AS first, "
        "(SELECT CASE WHEN bool_and(end_time IS NOT NULL) THEN max(end_time) END AS end_time, "
        "max(coalesce(end_time_earliest, end_time)) AS end_earliest "
        "FROM processes WHERE run_id = $1) AS span "
        "WHERE runs.run_id = $1";
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < changed->len; i++) {
        const struct batch_run *run = g_ptr_array_index(changed, i);
        char run_id[32], job_id[32];
        g_snprintf(run_id, sizeof run_id, "%" G_GINT64_FORMAT, run->run_id);
        g_snprintf(job_id, sizeof job_id, "%" G_GINT64_FORMAT, run->job_id);
        const char *values[] = {run_id, run->job_id != 0 ? job_id : NULL};
        PGresult *result = PQexecParams(b->store->db, lock_sql, 1, NULL, values, NULL, NULL, 0);
        ok = PQresultStatus(result) == PGRES_TUPLES_OK;
        if (!ok)
            txd_set_pg_error(error, b->store->db, result, lock_sql);
        PQclear(result);
        if (!ok)
            break;
        result = PQexecParams(b->store->db, sql, 2, NULL, values, NULL, NULL, 0);
        ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        if (!ok)
            txd_set_pg_error(error, b->store->db, result, sql);
        PQclear(result);
        b->runs_described++;
    }
    g_ptr_array_unref(changed);
    return ok;
}

static char *file_key(uint64_t process_id, uint32_t file_id)
{
    return g_strdup_printf("%" G_GUINT64_FORMAT ":%u", process_id, file_id);
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
    /* Consecutive activities mostly name the same file: its id is looked
     * up (through a formatted key) only when the file changes. */
    uint32_t last_file = VIGIL_FILE_NONE;
    int64_t last_file_id = 0;
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_activity *a = &m->activities[i];
        int64_t start_ns = realtime(b, a->start_ns);
        txd_activity_seconds_add(b->activity_seconds, b->node_id, process_id, start_ns, a->layer,
                                 a->op, a->bytes_asked, (int64_t)(a->end_ns - a->start_ns));
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

/* A row of `columns` whose first are the node and the statistic's metric. */
static gboolean begin_metric_row(struct batch_context *b, struct txd_copy *c, uint16_t columns,
                                 uint32_t daemon_metric_id, GError **error)
{
    int64_t metric_id = 0;
    if (!metric_id_of(b, daemon_metric_id, &metric_id, error))
        return FALSE;
    txd_copy_row(c, columns);
    txd_copy_int8(c, b->node_id);
    txd_copy_int4(c, (int32_t)metric_id);
    return TRUE;
}

static gboolean copy_rollups(struct batch_context *b, struct txd_copy *c,
                             const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_rollup *r = &m->rollups[i];
        if (!begin_metric_row(b, c, 10, r->metric_id, error))
            return FALSE;
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
        if (!begin_metric_row(b, c, 6, s->metric_id, error))
            return FALSE;
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

/* A row of `columns` whose first are a reasoner's level, the node, the
 * process (NULL: the node's own) and the cycle, as number and end. */
static gboolean begin_cycle_row(struct batch_context *b, struct txd_copy *c, uint16_t columns,
                                unsigned level, uint64_t daemon_process_id, uint64_t cycle,
                                const char *what, GError **error)
{
    txd_copy_row(c, columns);
    txd_copy_text(c, vigil_level_name(level));
    txd_copy_int8(c, b->node_id);
    if (!copy_process_column(b, c, daemon_process_id, what, error))
        return FALSE;
    txd_copy_int8(c, (int64_t)cycle);
    txd_copy_timestamp_ns(c, cycle_end_realtime(b, cycle));
    return TRUE;
}

static void copy_finite_or_null(struct txd_copy *c, double v)
{
    if (isfinite(v))
        txd_copy_float8(c, v);
    else
        txd_copy_null(c);
}

static gboolean copy_anomalies(struct batch_context *b, struct txd_copy *c,
                               const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_anomaly *a = &m->anomalies[i];
        if (!begin_cycle_row(b, c, 12, a->level, a->process_id, a->cycle, "an anomaly", error))
            return FALSE;
        txd_copy_text(c, vigil_health_name(a->health));
        txd_copy_text(c, a->plugin);
        txd_copy_text(c, a->metric);
        txd_copy_float8_or_null(c, a->value);
        copy_finite_or_null(c, a->expected_min);
        copy_finite_or_null(c, a->expected_max);
        txd_copy_text(c, a->message);
    }
    return TRUE;
}

static gboolean copy_states(struct batch_context *b, struct txd_copy *c,
                            const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_state *s = &m->states[i];
        if (!begin_cycle_row(b, c, 10, s->level, s->process_id, s->cycle, "a reasoner state",
                             error))
            return FALSE;
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
                                GArray *refs, GError **error)
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
        struct txd_report_ref ref = {
            .process_id = process_id,
            .report_json = s->report_json,
            .label = g_strdup_printf(
                "batch %" G_GINT64_FORMAT ":%" G_GUINT64_FORMAT ", process %" G_GUINT64_FORMAT
                " (process_id %" G_GINT64_FORMAT " in the warehouse)",
                b->node_id, b->batch->header.sequence, s->process_id, process_id)};
        g_array_append_val(refs, ref);
    }
    return TRUE;
}

/* The reports, then their files and timelines (store_file_stats.c). */
static gboolean store_all_summaries(struct batch_context *b, GError **error)
{
    GArray *refs = g_array_new(FALSE, FALSE, sizeof(struct txd_report_ref));
    gboolean ok = TRUE;
    for (uint32_t i = 0; ok && i < b->batch->header.count; i++)
        if (b->batch->inner[i].header.type == VIGIL_WIRE_SUMMARIES)
            ok = store_summaries(b, &b->batch->inner[i], refs, error);
    if (ok)
        ok = txd_store_file_stats(b->store->db, (const struct txd_report_ref *)(void *)refs->data,
                                  refs->len, &b->rows, error);
    for (guint i = 0; i < refs->len; i++)
        g_free((char *)g_array_index(refs, struct txd_report_ref, i).label);
    g_array_unref(refs);
    return ok;
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

static gint compare_processes(gconstpointer a, gconstpointer b)
{
    const struct vigil_wire_process *x = *(const struct vigil_wire_process *const *)a;
    const struct vigil_wire_process *y = *(const struct vigil_wire_process *const *)b;
    /* By key (the order runs are made in), then start: of a batch's new
     * run's processes, the earliest makes it. */
    int c = strcmp(x->run_key, y->run_key);
    if (c != 0)
        return c;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

struct batch_name {
    uint64_t process_id;
    const struct vigil_wire_name *name;
};

static gint compare_names(gconstpointer a, gconstpointer b)
{
    const struct vigil_wire_name *x = ((const struct batch_name *)a)->name;
    const struct vigil_wire_name *y = ((const struct batch_name *)b)->name;
    int c = memcmp(x->path, y->path, MIN(x->length, y->length));
    return c != 0 ? c : (x->length > y->length) - (x->length < y->length);
}

GPtrArray *txd_batch_items(const struct vigil_wire_message *batch, enum vigil_wire_type type,
                           size_t items_offset, size_t item_size, GCompareFunc compare)
{
    GPtrArray *items = g_ptr_array_new();
    for (uint32_t i = 0; i < batch->header.count; i++) {
        const struct vigil_wire_message *m = &batch->inner[i];
        if (m->header.type != type)
            continue;
        const char *first = *(const char *const *)((const char *)m + items_offset);
        for (uint32_t k = 0; k < m->header.count; k++)
            g_ptr_array_add(items, (gpointer)(first + k * item_size));
    }
    g_ptr_array_sort(items, compare);
    return items;
}

/* What the COPYs refer to first: the job notices, processes (and their
 * runs and jobs), metrics, then files (a file id is its process's). Jobs
 * are written in the order of their ids, then new runs and files in the
 * order of their keys, so that two servers inserting the same new ones
 * never wait for each other in a circle. */
static gboolean store_describing(struct batch_context *b, GError **error)
{
    const struct vigil_wire_message *batch = b->batch;
    GPtrArray *processes = g_ptr_array_new();
    GArray *names = g_array_new(FALSE, FALSE, sizeof(struct batch_name));
    gboolean ok = TRUE;
    for (uint32_t i = 0; ok && i < batch->header.count; i++) {
        const struct vigil_wire_message *m = &batch->inner[i];
        if (m->header.type == VIGIL_WIRE_PROCESSES)
            for (uint32_t k = 0; k < m->header.count; k++)
                g_ptr_array_add(processes, &m->processes[k]);
        else if (m->header.type == VIGIL_WIRE_METRICS)
            ok = store_metrics(b, m, error);
        else if (m->header.type == VIGIL_WIRE_NAMES)
            for (uint32_t k = 0; k < m->header.count; k++) {
                struct batch_name n = {.process_id = m->process_id, .name = &m->names[k]};
                g_array_append_val(names, n);
            }
    }
    /* Jobs first: root's word on a job's uid, in the same batch as its
     * step's first processes, says whose the step's run key is. */
    ok = ok && txd_store_jobs(b->store->db, b->node_id, b->node->realtime_offset_ns, b->batch,
                              &b->rows, error);
    g_ptr_array_sort(processes, compare_processes);
    for (guint i = 0; ok && i < processes->len; i++)
        ok = store_process(b, g_ptr_array_index(processes, i), error);
    /* An unwatched end names a process the batch describes. */
    GHashTableIter ends;
    gpointer end;
    g_hash_table_iter_init(&ends, b->unwatched_ends);
    int64_t unused;
    while (ok && g_hash_table_iter_next(&ends, &end, NULL))
        ok = process_id_of(b, *(const uint64_t *)end, &unused, "an unwatched end", error);
    ok = ok && describe_runs(b, error);
    ok = ok && txd_store_drops(b->store->db, b->node_id, b->batch, &b->rows, error);
    g_array_sort(names, compare_names);
    for (guint i = 0; ok && i < names->len; i++) {
        const struct batch_name *n = &g_array_index(names, struct batch_name, i);
        int64_t id =
            txd_ids_file(b->store->ids, b->store->db, n->name->path, n->name->length, error);
        ok = id >= 0;
        if (ok)
            g_hash_table_replace(b->files, file_key(n->process_id, n->name->file_id),
                                 GSIZE_TO_POINTER((gsize)id));
    }
    g_ptr_array_unref(processes);
    g_array_unref(names);
    return ok;
}

/* The end of the batch's cycle by the node's clock: the same in every copy
 * of the batch, so a resend meets its record in ingested_batches. */
static int64_t batch_time_ns(const struct batch_context *b)
{
    return realtime(b, b->node->cycle_end_ns);
}

static int64_t day_of(int64_t realtime_ns)
{
    const int64_t day_ns = G_GINT64_CONSTANT(86400000000000);
    return realtime_ns >= 0 ? realtime_ns / day_ns : -((-realtime_ns + day_ns - 1) / day_ns);
}

/* Every day partition the batch's rows go into, made before its
 * transaction (each in a short one of its own) when missing: an old
 * spool replayed brings days the maintenance step did not make. */
static gboolean make_partitions(struct batch_context *b, GError **error)
{
    struct txd_ids *ids = b->store->ids;
    PGconn *db = b->store->db;
    if (!txd_ids_partition(ids, db, BATCHES, day_of(batch_time_ns(b)), error))
        return FALSE;
    int64_t last[BATCHES] = {G_MININT64, G_MININT64, G_MININT64, G_MININT64};
    for (uint32_t i = 0; i < b->batch->header.count; i++) {
        const struct vigil_wire_message *m = &b->batch->inner[i];
        for (uint32_t k = 0; k < m->header.count; k++) {
            unsigned t;
            int64_t day;
            if (m->header.type == VIGIL_WIRE_ACTIVITIES)
                t = ACTIVITIES, day = day_of(realtime(b, m->activities[k].start_ns));
            else if (m->header.type == VIGIL_WIRE_ROLLUPS)
                t = ROLLUPS, day = day_of(realtime(b, m->rollups[k].start_ns));
            else if (m->header.type == VIGIL_WIRE_SAMPLES)
                t = WINDOW_STATISTICS, day = day_of(realtime(b, m->samples[k].t_ns));
            else if (m->header.type == VIGIL_WIRE_STATES)
                t = STATES, day = day_of(cycle_end_realtime(b, m->states[k].cycle));
            else
                break;
            if (day != last[t] && !txd_ids_partition(ids, db, t, day, error))
                return FALSE;
            last[t] = day;
        }
    }
    return TRUE;
}

static gboolean store_rows(struct batch_context *b, GError **error)
{
    if (!store_node(b, error) || !store_describing(b, error))
        return FALSE;
    /* copy_activities counts each activity per second too. */
    b->activity_seconds = txd_activity_seconds_new();
    gboolean ok = copy_all(b, VIGIL_WIRE_ACTIVITIES, copy_activities,
                           "COPY activities (process_id, seq, layer, operation, file_id, "
                           "file_offset, bytes, result, errno, start_time, start_ns, duration_ns, "
                           "thread, parent_start_ns, flags, comm_size) FROM STDIN (FORMAT binary)",
                           error) &&
                  txd_activity_seconds_copy(b->activity_seconds, b->store->db, error);
    txd_activity_seconds_free(b->activity_seconds);
    b->activity_seconds = NULL;
    return ok &&
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
        b->other_key = TRUE;
        ok = refuse(error,
                    "node %" G_GINT64_FORMAT " belongs to CURVE key %s, and this batch came with "
                    "key %s: a node cannot write as another (when the node's key is the wrong "
                    "one, `vigil node keys --forget %" G_GINT64_FORMAT
                    "` lets the next batch claim it, and `vigil spool resend` on the node sends "
                    "what was refused)",
                    b->node_id, PQgetvalue(result, 0, 0), key, b->node_id);
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

/* What the other batches of a (node, sequence) held, read afresh (a new
 * statement sees a claim another server committed meanwhile): *resend
 * when one had this content or recorded none (a claim from before schema
 * version 3), and the content of one that differs (*known FALSE when
 * none recorded any). */
static gboolean other_content(struct batch_context *b, const char *node, const char *sequence,
                              const char *crc32, const char *bytes, gboolean *resend,
                              gboolean *known, uint32_t *other_crc32, uint64_t *other_bytes,
                              GError **error)
{
    const char *values[] = {node, sequence, crc32, bytes};
    static const char sql[] =
        "SELECT coalesce(bool_or(content_crc32 IS NULL OR (content_crc32 = $3 AND "
        "content_bytes = $4)), false), "
        "(array_agg(content_crc32) FILTER (WHERE content_crc32 <> $3 OR content_bytes <> $4))[1], "
        "(array_agg(content_bytes) FILTER (WHERE content_crc32 <> $3 OR content_bytes <> $4))[1] "
        "FROM ingested_batches WHERE node_id = $1 AND sequence = $2";
    PGresult *result = PQexecParams(b->store->db, sql, 4, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1;
    if (!ok) {
        txd_set_pg_error(error, b->store->db, result, sql);
    } else {
        *resend = strcmp(PQgetvalue(result, 0, 0), "t") == 0;
        *known = !PQgetisnull(result, 0, 1) && !PQgetisnull(result, 0, 2);
        *other_crc32 = *known ? (uint32_t)g_ascii_strtoull(PQgetvalue(result, 0, 1), NULL, 10) : 0;
        *other_bytes = *known ? g_ascii_strtoull(PQgetvalue(result, 0, 2), NULL, 10) : 0;
    }
    PQclear(result);
    return ok;
}

/* Records the batch as stored, with what it holds; FALSE with *duplicate
 * when the same batch was stored before. Its key is (node, sequence, the
 * end of its cycle): a node whose numbers started again (its spool folder
 * reset) sends a used sequence for a later cycle, which is another key:
 * stored, and said loudly with both digests. The same key with other
 * content is not a resend either: refused, with both digests, so that
 * nothing is dropped silently. */
static gboolean claim_batch(struct batch_context *b, const struct txd_batch_origin *origin,
                            gboolean *duplicate, GError **error)
{
    const struct vigil_wire_header *h = &b->batch->header;
    if (origin->curve_key != NULL && !check_node_key(b, origin->curve_key, error))
        return FALSE;
    uint64_t items = 0;
    for (uint32_t i = 0; i < h->count; i++)
        items += b->batch->inner[i].header.count;
    char node[32], sequence[32], messages[32], rows[32], batch_time[32], crc32[16], bytes[32];
    g_snprintf(node, sizeof node, "%" G_GINT64_FORMAT, b->node_id);
    g_snprintf(sequence, sizeof sequence, "%" G_GINT64_FORMAT, (int64_t)h->sequence);
    g_snprintf(messages, sizeof messages, "%u", h->count);
    g_snprintf(rows, sizeof rows, "%" G_GUINT64_FORMAT, items);
    g_snprintf(crc32, sizeof crc32, "%" G_GUINT32_FORMAT, origin->crc32);
    g_snprintf(bytes, sizeof bytes, "%" G_GUINT64_FORMAT, origin->bytes);
    /* Binary timestamptz: µs since 2000-01-01. */
    int64_t pg_time_be = (int64_t)GUINT64_TO_BE(
        (uint64_t)(batch_time_ns(b) / 1000 - G_GINT64_CONSTANT(946684800000000)));
    memcpy(batch_time, &pg_time_be, sizeof pg_time_be);
    const char *values[] = {node, sequence, messages, rows, batch_time, crc32, bytes};
    const int lengths[] = {0, 0, 0, 0, sizeof pg_time_be, 0, 0};
    const int formats[] = {0, 0, 0, 0, 1, 0, 0};
    /* The subqueries see the table as it was before the INSERT: the node's
     * highest sequence until now (an index's last entry), and whether this
     * sequence was stored before for another cycle end (a node whose
     * numbers started again). */
    static const char sql[] =
        "WITH claimed AS (INSERT INTO ingested_batches (node_id, sequence, messages, rows, "
        "batch_time, content_crc32, content_bytes) VALUES ($1, $2, $3, $4, $5::timestamptz, $6, "
        "$7) ON CONFLICT DO NOTHING RETURNING 1) "
        "SELECT (SELECT count(*) FROM claimed), "
        "(SELECT max(sequence) FROM ingested_batches WHERE node_id = $1), "
        "(SELECT count(*) FROM ingested_batches WHERE node_id = $1 AND sequence = $2 AND "
        "batch_time <> $5::timestamptz)";
    PGresult *result = PQexecParams(b->store->db, sql, 7, NULL, values, lengths, formats, 0);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1;
    if (!ok) {
        txd_set_pg_error(error, b->store->db, result, sql);
        PQclear(result);
        return FALSE;
    }
    *duplicate = strcmp(PQgetvalue(result, 0, 0), "0") == 0;
    gboolean has_highest = !PQgetisnull(result, 0, 1);
    uint64_t highest = has_highest ? g_ascii_strtoull(PQgetvalue(result, 0, 1), NULL, 10) : 0;
    gboolean used_before = strcmp(PQgetvalue(result, 0, 2), "0") != 0;
    PQclear(result);
    if (!*duplicate && !used_before) {
        if (has_highest && h->sequence < highest)
            note_sequence_below(b->store, b->node_id, h->sequence, highest);
        return TRUE;
    }
    gboolean resend = FALSE, known = FALSE;
    uint32_t other_crc32 = 0;
    uint64_t other_bytes = 0;
    if (!other_content(b, node, sequence, crc32, bytes, &resend, &known, &other_crc32, &other_bytes,
                       error))
        return FALSE;
    if (*duplicate && resend)
        return TRUE;
    b->store->counts.batches_reused++;
    char *was =
        known ? g_strdup_printf("crc32 %08" G_GINT32_MODIFIER "x (%" G_GUINT64_FORMAT " bytes)",
                                other_crc32, other_bytes)
              : g_strdup("no recorded content");
    char *text = g_strdup_printf("sequence reused: was the node's spool folder reset? Node "
                                 "%" G_GINT64_FORMAT " sequence %" G_GUINT64_FORMAT
                                 " was stored with content %s; this batch has crc32 "
                                 "%08" G_GINT32_MODIFIER "x (%" G_GUINT64_FORMAT " bytes)",
                                 b->node_id, h->sequence, was, origin->crc32, origin->bytes);
    g_free(was);
    gboolean stored = !*duplicate;
    if (stored)
        g_warning("%s, for a later cycle: stored too, under its own cycle end", text);
    else
        refuse(error, "%s, for the same cycle end, and is not stored", text);
    *duplicate = FALSE;
    g_free(text);
    return stored;
}

/* ---- a group of batches, one transaction ------------------------------------------------ */

/* The whole group failed: nothing of it may stay. Roll back, or drop a
 * connection that cannot even do that; forget the ids it learnt. */
static enum txd_store_result group_failed(struct txd_store *s, const struct txd_group_item *items,
                                          guint n, GError *local, GError **error)
{
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
    if (g_error_matches(local, TXD_ERROR, TXD_ERROR_NO_PARTITION)) {
        txd_ids_forget_partitions(s->ids);
        g_message("%s; the partitions are checked again", local->message);
    }
    if (strstr(local->message, " timeout ([warehouse] ") != NULL)
        g_warning("batch %" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT
                  "%s waits, unacknowledged, to be tried again: %s",
                  items[0].batch->header.node_id, items[0].batch->header.sequence,
                  n > 1 ? " and the rest of its group" : "", local->message);
    /* Only what a batch's own statements say of it refuses it (in its
     * savepoint); a failure of the group as a whole is tried again. */
    local->code = TXD_ERROR_RETRY;
    g_propagate_error(error, local);
    return TXD_RETRY;
}

static void batch_context_init(struct batch_context *b, struct txd_store *s,
                               const struct vigil_wire_message *batch)
{
    *b = (struct batch_context){
        .store = s,
        .batch = batch,
        .node = &batch->inner[0].nodes[0], /* the decoder checked it is there */
        .node_id = (int64_t)batch->header.node_id,
        .processes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
        .files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .metrics = g_hash_table_new(NULL, NULL),
        .runs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
        .jobs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
        .unwatched_ends = txd_unwatched_ends_of(batch),
    };
}

static void batch_context_clear(struct batch_context *b)
{
    g_hash_table_destroy(b->processes);
    g_hash_table_destroy(b->files);
    g_hash_table_destroy(b->metrics);
    g_hash_table_destroy(b->runs);
    g_hash_table_destroy(b->jobs);
    g_hash_table_destroy(b->unwatched_ends);
}

/* A batch refused for its node's key: counted on the node's row, after
 * the batch's own statements are rolled back, in the group's transaction,
 * so that `vigil node keys` shows the refusals a wrong claim causes. */
static gboolean note_key_refusal(struct txd_store *s, int64_t node_id, const char *key,
                                 const char *reason, GError **error)
{
    char node[24];
    g_snprintf(node, sizeof node, "%" G_GINT64_FORMAT, node_id);
    const char *values[] = {node, key, reason};
    static const char sql[] =
        "UPDATE node_keys SET refused_batches = refused_batches + 1, refused_key = $2, "
        "refused_at = now(), refused_reason = $3 WHERE node_id = $1::bigint";
    return txd_exec_params(s->db, sql, 3, values, error);
}

/* Nothing of the batch stays, the rest of the group goes on. */
static gboolean batch_rollback(struct txd_store *s, GError **error)
{
    txd_ids_batch_rollback(s->ids);
    return exec_command(s->db, "ROLLBACK TO SAVEPOINT batch; RELEASE SAVEPOINT batch", error);
}

/* One batch of the group, in its savepoint. FALSE (with error) only when
 * the group must be rolled back; a refusal is the item's. */
static gboolean group_store_one(struct txd_store *s, struct txd_group_item *item, uint64_t *rows,
                                uint64_t *runs_described, GError **error)
{
    struct batch_context b;
    batch_context_init(&b, s, item->batch);
    GError *local = NULL;
    gboolean duplicate = FALSE;
    gboolean ok = exec_command(s->db, "SAVEPOINT batch", error);
    if (!ok) {
        batch_context_clear(&b);
        return FALSE;
    }
    ok = claim_batch(&b, &item->origin, &duplicate, &local);
    if (ok && duplicate) {
        item->result = TXD_DUPLICATE;
        ok = batch_rollback(s, error);
    } else if (ok && store_rows(&b, &local)) {
        item->result = TXD_STORED;
        *rows += b.rows;
        *runs_described += b.runs_described;
        txd_ids_batch_release(s->ids);
        ok = exec_command(s->db, "RELEASE SAVEPOINT batch", error);
    } else if (g_error_matches(local, TXD_ERROR, TXD_ERROR_REFUSE)) {
        item->result = TXD_REFUSED;
        item->error = local;
        ok = batch_rollback(s, error) &&
             (!b.other_key ||
              note_key_refusal(s, b.node_id, item->origin.curve_key, local->message, error));
    } else {
        g_propagate_error(error, local);
        ok = FALSE;
    }
    batch_context_clear(&b);
    return ok;
}

/* Within one batch, shared rows (jobs, runs, metrics, files) are taken in
 * a fixed order, so that two vigil-txd storing one batch each never wait
 * for each other in a circle. A group of several batches takes them batch
 * after batch, out of that order: two groups could deadlock. So a group of
 * several takes this lock exclusively (one such group in the warehouse at
 * a time), and a group of one shares it. */
#define GROUP_LOCK_KEY "7020176829764907884" /* "vigilgrp" */

static gboolean begin_group(struct txd_store *s, guint n, GError **error)
{
    const char *sql = n > 1 ? "BEGIN; SELECT pg_advisory_xact_lock(" GROUP_LOCK_KEY ")"
                            : "BEGIN; SELECT pg_advisory_xact_lock_shared(" GROUP_LOCK_KEY ")";
    PGresult *result = PQexec(s->db, sql);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK;
    if (!ok)
        txd_set_pg_error(error, s->db, result, sql);
    PQclear(result);
    return ok;
}

enum txd_store_result txd_store_group(struct txd_store *s, struct txd_group_item *items, guint n,
                                      GError **error)
{
    GError *local = NULL;
    for (guint i = 0; i < n; i++) {
        items[i].result = TXD_RETRY;
        items[i].error = NULL;
    }
    if (!txd_store_connect(s, &local)) {
        g_propagate_error(error, local);
        return TXD_RETRY;
    }
    /* Every partition the group needs, before its transaction. */
    for (guint i = 0; i < n; i++) {
        struct batch_context b;
        batch_context_init(&b, s, items[i].batch);
        gboolean made = make_partitions(&b, &local);
        batch_context_clear(&b);
        if (!made)
            return group_failed(s, items, n, local, error);
    }
    uint64_t rows = 0, runs_described = 0;
    gboolean ok = begin_group(s, n, &local);
    for (guint i = 0; ok && i < n; i++)
        ok = group_store_one(s, &items[i], &rows, &runs_described, &local);
    ok = ok && exec_command(s->db, "COMMIT", &local);
    if (!ok) {
        for (guint i = 0; i < n; i++) {
            g_clear_error(&items[i].error);
            items[i].result = TXD_RETRY;
        }
        return group_failed(s, items, n, local, error);
    }
    txd_ids_commit(s->ids);
    for (guint i = 0; i < n; i++) {
        if (items[i].result == TXD_STORED)
            s->counts.batches_stored++;
        else if (items[i].result == TXD_DUPLICATE)
            s->counts.batches_duplicate++;
        else if (items[i].result == TXD_REFUSED)
            s->counts.batches_refused++;
    }
    s->counts.rows_stored += rows;
    s->counts.runs_described += runs_described;
    return TXD_STORED;
}

enum txd_store_result txd_store_batch(struct txd_store *s, const struct vigil_wire_message *batch,
                                      const struct txd_batch_origin *origin, GError **error)
{
    struct txd_group_item item = {.batch = batch, .origin = *origin};
    if (txd_store_group(s, &item, 1, error) != TXD_STORED)
        return TXD_RETRY;
    if (item.error != NULL)
        g_propagate_error(error, item.error);
    return item.result;
}

gboolean txd_store_system_state(struct txd_store *s, const struct vigil_wire_state *state,
                                int64_t realtime_ns, GError **error)
{
    if (!txd_store_connected(s) ||
        !txd_ids_partition(s->ids, s->db, STATES, day_of(realtime_ns), error))
        return FALSE;
    GPtrArray *buffers = g_ptr_array_new_with_free_func(g_free);
    const char *values[] = {txd_param_int(buffers, (int64_t)state->cycle),
                            txd_param_timestamp(buffers, realtime_ns),
                            vigil_health_name(state->health),
                            txd_param_int(buffers, state->overloaded_mask),
                            txd_param_int(buffers, state->bad_issues),
                            txd_param_int(buffers, state->good_issues),
                            txd_param_int(buffers, state->other_issues)};
    static const char sql[] =
        "INSERT INTO reasoner_states (level, cycle, time, state, overloaded_mask, bad_issues, "
        "good_issues, other_issues) VALUES ('system', $1, $2, $3, $4, $5, $6, $7)";
    gboolean ok = txd_exec_params(s->db, sql, 7, values, error);
    g_ptr_array_unref(buffers);
    return ok;
}
