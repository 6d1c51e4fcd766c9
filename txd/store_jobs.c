/* vigil-txd — a batch's JOBS items (wire.h): the job's user, uid and node
 * list, and its begin and end on the batch's node, into jobs and job_steps
 * (warehouse/migrations/0007_jobs.sql). A job's begin is the first whole-job begin over
 * its nodes and its end the last end: each node's prolog and epilog tell
 * of their own node. Replaying a batch writes the same values again.
 *
 * Root's word (VIGIL_WIRE_JOB_FROM_ROOT: the prolog, the SPANK plugin)
 * and the job's user's are not equal (warehouse/migrations/0010_run_owners.sql): what
 * root told of a job (jobs.root_fields) a user's notice does not change,
 * and a user's notice of a job root said is another uid's is not stored
 * at all; root's first word on a field replaces what a user said. */
#include <string.h>

#include "txd.h"

/* The realtime of a monotonic time of the batch's node, as timestamptz
 * text (UTC, µs); NULL for 0, a time not told. */
static const char *param_time(GPtrArray *buffers, uint64_t monotonic_ns, int64_t offset_ns)
{
    return monotonic_ns != 0 ? txd_param_timestamp(buffers, (int64_t)monotonic_ns + offset_ns)
                             : NULL;
}

static gboolean store_job(PGconn *db, int64_t node_id, int64_t offset_ns,
                          const struct vigil_wire_job *job, GError **error)
{
    GPtrArray *buffers = g_ptr_array_new_with_free_func(g_free);
    const char *begin = param_time(buffers, job->begin_ns, offset_ns);
    const char *end = param_time(buffers, job->end_ns, offset_ns);
    const char *uid = job->uid != UINT32_MAX ? txd_param_int(buffers, job->uid) : NULL;
    const char *node = txd_param_int(buffers, node_id);
    gboolean from_root = (job->flags & VIGIL_WIRE_JOB_FROM_ROOT) != 0;
    /* The row, made when new (ON CONFLICT DO UPDATE locks it: two nodes'
     * notices of one job are written one after the other), then what the
     * notice says over what was there: root's over anything but its own
     * earlier word on a time (the first begin and the last end over the
     * nodes), a user's only where root said nothing. Only whole-job
     * notices move the job's begin and end. The step's row follows when
     * the job's was written: a user's notice of a job root said is another
     * uid's writes neither. A user fills a step's times, root sets them. */
    static const char sql[] =
        "WITH told AS (INSERT INTO jobs AS j (scheduler_job_id, user_name, uid, node_list, "
        "begin_time, end_time, root_fields) "
        "VALUES ($1, nullif($2, ''), $3::bigint, nullif($4, ''), "
        "CASE WHEN $7 = '' THEN $5::timestamptz END, CASE WHEN $7 = '' THEN $6::timestamptz END, "
        "CASE WHEN $8::boolean THEN ((CASE WHEN nullif($2, '') IS NOT NULL THEN 1 ELSE 0 END) | "
        "(CASE WHEN $3::bigint IS NOT NULL THEN 2 ELSE 0 END) | "
        "(CASE WHEN nullif($4, '') IS NOT NULL THEN 4 ELSE 0 END) | "
        "(CASE WHEN $7 = '' AND $5::timestamptz IS NOT NULL THEN 8 ELSE 0 END) | "
        "(CASE WHEN $7 = '' AND $6::timestamptz IS NOT NULL THEN 16 ELSE 0 END))::smallint "
        "ELSE 0::smallint END) "
        "ON CONFLICT (scheduler_job_id) DO UPDATE SET "
        "user_name = CASE WHEN NOT $8::boolean AND j.root_fields & 1 <> 0 THEN j.user_name "
        "ELSE coalesce(EXCLUDED.user_name, j.user_name) END, "
        "uid = CASE WHEN NOT $8::boolean AND j.root_fields & 2 <> 0 THEN j.uid "
        "ELSE coalesce(EXCLUDED.uid, j.uid) END, "
        "node_list = CASE WHEN NOT $8::boolean AND j.root_fields & 4 <> 0 THEN j.node_list "
        "ELSE coalesce(EXCLUDED.node_list, j.node_list) END, "
        "begin_time = CASE WHEN j.root_fields & 8 <> 0 AND NOT $8::boolean THEN j.begin_time "
        "WHEN j.root_fields & 8 = 0 AND $8::boolean "
        "THEN coalesce(EXCLUDED.begin_time, j.begin_time) "
        "ELSE least(j.begin_time, EXCLUDED.begin_time) END, "
        "end_time = CASE WHEN j.root_fields & 16 <> 0 AND NOT $8::boolean THEN j.end_time "
        "WHEN j.root_fields & 16 = 0 AND $8::boolean THEN coalesce(EXCLUDED.end_time, j.end_time) "
        "ELSE greatest(j.end_time, EXCLUDED.end_time) END, "
        "root_fields = j.root_fields | EXCLUDED.root_fields "
        "WHERE $8::boolean OR j.root_fields & 2 = 0 OR j.uid = EXCLUDED.uid "
        "RETURNING job_id) "
        "INSERT INTO job_steps AS s (job_id, step_id, node_id, begin_time, end_time) "
        "SELECT job_id, $7, $9::bigint, $5::timestamptz, $6::timestamptz FROM told "
        "ON CONFLICT (job_id, step_id, node_id) DO UPDATE SET "
        "begin_time = CASE WHEN $8::boolean THEN coalesce(EXCLUDED.begin_time, s.begin_time) "
        "ELSE coalesce(s.begin_time, EXCLUDED.begin_time) END, "
        "end_time = CASE WHEN $8::boolean THEN coalesce(EXCLUDED.end_time, s.end_time) "
        "ELSE coalesce(s.end_time, EXCLUDED.end_time) END "
        "RETURNING 1";
    const char *values[] = {job->job_id, job->user, uid,          job->nodes,
                            begin,       end,       job->step_id, from_root ? "t" : "f",
                            node};
    PGresult *result = PQexecParams(db, sql, 9, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK;
    if (!ok)
        txd_set_pg_error(error, db, result, sql);
    else if (PQntuples(result) == 0)
        g_warning("node %" G_GINT64_FORMAT ": uid %u's notice of job %s%s%s is not stored: root "
                  "told the warehouse the job is another uid's",
                  node_id, job->uid, job->job_id, job->step_id[0] != '\0' ? "." : "", job->step_id);
    PQclear(result);
    /* Runs of other uids filed under the job before root said whose it is
     * (their processes named it): taken out. Runs are locked after the
     * job's row, as everywhere in a batch. */
    static const char unfile_sql[] =
        "UPDATE runs SET job_id = NULL WHERE job_id = (SELECT job_id FROM jobs "
        "WHERE scheduler_job_id = $1) AND uid <> $2::bigint";
    if (ok && from_root && uid != NULL) {
        const char *unfile_values[] = {job->job_id, uid};
        result = PQexecParams(db, unfile_sql, 2, NULL, unfile_values, NULL, NULL, 0);
        ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        if (!ok)
            txd_set_pg_error(error, db, result, unfile_sql);
        else if (strcmp(PQcmdTuples(result), "0") != 0)
            g_warning("job %s is uid %u's as root told: %s runs of other uids that named it are "
                      "no longer filed under it",
                      job->job_id, job->uid, PQcmdTuples(result));
        PQclear(result);
    }
    g_ptr_array_unref(buffers);
    return ok;
}

static gint compare_jobs(gconstpointer a, gconstpointer b)
{
    const struct vigil_wire_job *x = *(const struct vigil_wire_job *const *)a;
    const struct vigil_wire_job *y = *(const struct vigil_wire_job *const *)b;
    int c = strcmp(x->job_id, y->job_id);
    return c != 0 ? c : strcmp(x->step_id, y->step_id);
}

gboolean txd_store_jobs(PGconn *db, int64_t node_id, int64_t realtime_offset_ns,
                        const struct vigil_wire_message *batch, uint64_t *rows, GError **error)
{
    /* In the order of their ids, so that two servers writing notices of
     * the same jobs never wait for each other's row locks in a circle. */
    GPtrArray *jobs = TXD_BATCH_ITEMS(batch, VIGIL_WIRE_JOBS, jobs, compare_jobs);
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < jobs->len; i++) {
        ok = store_job(db, node_id, realtime_offset_ns, g_ptr_array_index(jobs, i), error);
        *rows += ok ? 1 : 0;
    }
    g_ptr_array_unref(jobs);
    return ok;
}
