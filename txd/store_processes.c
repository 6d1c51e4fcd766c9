/* vigil-txd — a batch's processes, and the jobs and runs they belong to.
 *
 * A process is one row, keyed by (node, pid, start); its run is the one
 * its run key names (or one kept apart for its uid); a run is described
 * again (job, exit status, end) whenever one of its processes is new or
 * changed. Every batch a node sends describes each process it names, so
 * most process items are ones stored before and unchanged: this server
 * remembers what it stored of each, and such an item costs no statement. */
#include <string.h>

#include "store_batch.h"
#include "vigil/run_key.h"

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

/* ---- what this server stored of each process ------------------------------------------ */

/* Past this many the cache starts again (a miss costs one statement):
 * about twice the running processes of 2,000 nodes of 48 ranks. */
#define KNOWN_PROCESSES_MAX 262144u

/* The processes table's key. */
struct known_key {
    int64_t node_id;
    uint64_t start_monotonic_ns;
    int32_t pid;
};

/* What the row holds of what a batch may change: the process's end, exit
 * status and rank as last written (0 / -1: none yet), merged as the
 * upsert's coalesce merges them. */
struct known_process {
    struct known_key key;
    int64_t process_id;
    int64_t end_realtime_ns;
    int32_t exit_code, rank;
    uint32_t uid;
};

struct txd_known_processes {
    GHashTable *committed; /* struct known_key * → struct known_process * (the same block) */
    GHashTable *pending;   /* learnt in the transaction now */
};

static guint known_key_hash(gconstpointer p)
{
    const struct known_key *k = p;
    return g_int64_hash(&k->node_id) ^ g_int64_hash(&k->start_monotonic_ns) ^ (guint)k->pid;
}

static gboolean known_key_equal(gconstpointer a, gconstpointer b)
{
    const struct known_key *x = a, *y = b;
    return x->node_id == y->node_id && x->start_monotonic_ns == y->start_monotonic_ns &&
           x->pid == y->pid;
}

struct txd_known_processes *txd_known_processes_new(void)
{
    struct txd_known_processes *k = g_new0(struct txd_known_processes, 1);
    k->committed = g_hash_table_new_full(known_key_hash, known_key_equal, NULL, g_free);
    k->pending = g_hash_table_new_full(known_key_hash, known_key_equal, NULL, g_free);
    return k;
}

void txd_known_processes_free(struct txd_known_processes *k)
{
    if (k == NULL)
        return;
    g_hash_table_destroy(k->committed);
    g_hash_table_destroy(k->pending);
    g_free(k);
}

void txd_known_processes_commit(struct txd_known_processes *k)
{
    if (g_hash_table_size(k->committed) + g_hash_table_size(k->pending) > KNOWN_PROCESSES_MAX)
        g_hash_table_remove_all(k->committed);
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, k->pending);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        g_hash_table_iter_steal(&it);
        struct known_process *known = value;
        g_hash_table_replace(k->committed, &known->key, known);
    }
}

void txd_known_processes_rollback(struct txd_known_processes *k)
{
    g_hash_table_remove_all(k->pending);
}

static struct known_key key_of(const struct batch_context *b, const struct vigil_wire_process *p)
{
    return (struct known_key){
        .node_id = b->node_id, .start_monotonic_ns = p->start_ns, .pid = p->pid};
}

static const struct known_process *known_find(const struct txd_known_processes *k,
                                              const struct known_key *key)
{
    const struct known_process *known = g_hash_table_lookup(k->pending, key);
    return known != NULL ? known : g_hash_table_lookup(k->committed, key);
}

/* Whether storing `p` again would change nothing: its upsert would find
 * every field it sets equal to the row's (the same rule as its WHERE). */
static gboolean known_unchanged(const struct known_process *known, const struct batch_context *b,
                                const struct vigil_wire_process *p)
{
    return known != NULL && known->uid == p->uid &&
           (p->end_ns == 0 || realtime(b, p->end_ns) == known->end_realtime_ns) &&
           (p->exit_code < 0 || p->exit_code == known->exit_code) &&
           (p->rank < 0 || p->rank == known->rank) &&
           !g_hash_table_contains(b->unwatched_ends, &p->process_id);
}

/* `p` was written (or found as it is) as `process_id`: its row now holds
 * what it had, with p's values where p has one. */
static void known_learn(struct txd_known_processes *k, const struct batch_context *b,
                        const struct vigil_wire_process *p, int64_t process_id)
{
    struct known_key key = key_of(b, p);
    const struct known_process *before = known_find(k, &key);
    struct known_process *known = g_new(struct known_process, 1);
    *known =
        before != NULL ? *before : (struct known_process){.key = key, .exit_code = -1, .rank = -1};
    known->process_id = process_id;
    known->uid = p->uid;
    if (p->end_ns != 0)
        known->end_realtime_ns = realtime(b, p->end_ns);
    if (p->exit_code >= 0)
        known->exit_code = p->exit_code;
    if (p->rank >= 0)
        known->rank = p->rank;
    g_hash_table_replace(k->pending, &known->key, known);
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
        txd_refuse(error, "process %d starts at a time out of range", p->pid);
    /* Ended while no vigild ran: its end lies between the two. */
    const struct vigil_wire_unwatched_end *unwatched =
        g_hash_table_lookup(b->unwatched_ends, &p->process_id);
    const char *end_earliest = NULL;
    if (ok && unwatched != NULL) {
        if (unwatched->latest_end_ns != p->end_ns)
            ok = txd_refuse(error,
                            "process %d: its unwatched end's latest (%" G_GUINT64_FORMAT
                            " ns) is not its end (%" G_GUINT64_FORMAT " ns)",
                            p->pid, unwatched->latest_end_ns, p->end_ns);
        else if ((end_earliest = txd_param_timestamp(
                      buffers, realtime(b, MAX(unwatched->earliest_end_ns, p->start_ns)))) == NULL)
            ok = txd_refuse(error, "process %d: its earliest end is a time out of range", p->pid);
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
            ok = txd_refuse(error,
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
        known_learn(b->store->known_processes, b, p, process_id);
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

gboolean txd_store_processes(struct batch_context *b, GError **error)
{
    GPtrArray *processes =
        TXD_BATCH_ITEMS(b->batch, VIGIL_WIRE_PROCESSES, processes, compare_processes);
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < processes->len; i++) {
        const struct vigil_wire_process *p = g_ptr_array_index(processes, i);
        struct known_key key = key_of(b, p);
        const struct known_process *known = known_find(b->store->known_processes, &key);
        if (known_unchanged(known, b, p))
            g_hash_table_replace(b->processes, g_memdup2(&p->process_id, sizeof p->process_id),
                                 GSIZE_TO_POINTER((gsize)known->process_id));
        else
            ok = store_process(b, p, error);
    }
    g_ptr_array_unref(processes);
    /* An unwatched end names a process the batch describes. */
    GHashTableIter ends;
    gpointer end;
    g_hash_table_iter_init(&ends, b->unwatched_ends);
    int64_t unused;
    while (ok && g_hash_table_iter_next(&ends, &end, NULL))
        ok = txd_process_id_of(b, *(const uint64_t *)end, &unused, "an unwatched end", error);
    return ok && describe_runs(b, error);
}
