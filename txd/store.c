/* vigil-txd — batches into PostgreSQL, exactly once, a group at a time.
 *
 * A group of waiting batches is one transaction: one statement records
 * every batch's (node, sequence) in ingested_batches, and a batch whose
 * record exists already (a daemon resends what it has no acknowledgement
 * for) writes nothing. Then one statement for the nodes, a few for what
 * is new (processes, runs, metrics, files: known ones cost nothing), and
 * one binary COPY per table for the rows of the whole group; one COMMIT
 * (one fdatasync of the WAL) serves them all, and only then does the
 * caller acknowledge. A batch whose own data is refused is rolled back
 * with the rest and refused alone, and the others are written again
 * without it; when a COPY of the whole group is refused, the group is
 * halved until the batch it came from is found. When anything else fails,
 * nothing of the transaction is in the database and its batches are tried
 * again. So a batch is in the warehouse once, whatever fails when. */
#include <string.h>

#include "store_batch.h"
#include "txd.h"
#include "vigil/health.h"
#include "vigil/run_key.h"
#include "vigil/schema.h"

/* vigil_warehouse_day_tables, by name. */
enum { ACTIVITIES, ROLLUPS, WINDOW_STATISTICS, STATES, LEVEL_BLOCKS, BATCHES };
_Static_assert(BATCHES + 1 == VIGIL_WAREHOUSE_DAY_TABLES, "one name for each day table");

/* A node's row as this server last wrote it (the key is node_id). */
struct txd_node_written {
    int64_t node_id;
    char *hostname;
    int64_t minute; /* of last_seen, wall clock, since the epoch */
};

static void node_written_free(gpointer data)
{
    struct txd_node_written *w = data;
    g_free(w->hostname);
    g_free(w);
}

struct txd_store *txd_store_new(const struct vigil_warehouse_settings *warehouse)
{
    struct txd_store *s = g_new0(struct txd_store, 1);
    vigil_settings_copy(&vigil_warehouse_keys, &s->settings, warehouse);
    s->ids = txd_ids_new();
    s->known_processes = txd_known_processes_new();
    s->below = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    s->highest = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    s->nodes_written = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, node_written_free);
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
    txd_store_levels_close(s);
    txd_ids_free(s->ids);
    txd_known_processes_free(s->known_processes);
    g_hash_table_destroy(s->below);
    g_hash_table_destroy(s->highest);
    g_hash_table_destroy(s->nodes_written);
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
    guint laid_out = 0; /* and, on Citus, the tables laid out as `vigil db migrate` does */
    if (ok && s->settings.migrate && s->settings.distributed == VIGIL_WAREHOUSE_CITUS)
        ok = vigil_warehouse_citus_layout(s->db, &laid_out, &local);
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
        /* On Citus (whatever [warehouse] distributed says: another vigil
         * may have laid it out) a group writes reference tables (nodes,
         * processes) in the transaction that wrote many shards, which
         * Citus allows only over one connection per worker. */
        gboolean citus = FALSE;
        PGresult *result =
            PQexec(s->db, "SELECT count(*) FROM pg_extension WHERE extname = 'citus'");
        ok = PQresultStatus(result) == PGRES_TUPLES_OK;
        if (!ok)
            txd_set_pg_error(&local, s->db, result, "looking for Citus");
        else
            citus = strcmp(PQgetvalue(result, 0, 0), "0") != 0;
        PQclear(result);
        char *sql =
            g_strdup_printf("SET TIME ZONE 'UTC'; SET statement_timeout = %u; "
                            "SET lock_timeout = %u%s",
                            s->settings.statement_timeout_ms, s->settings.lock_timeout_ms,
                            citus ? "; SET citus.multi_shard_modify_mode TO 'sequential'" : "");
        ok = ok && exec_command(s->db, sql, &local);
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

/* The end of `cycle`, reckoned from the batch's own cycle. */
static int64_t cycle_end_realtime(const struct batch_context *b, uint64_t cycle)
{
    int64_t back_ns = ((int64_t)b->node->cycle - (int64_t)cycle) * b->node->cycle_ms * 1000000;
    return realtime(b, b->node->cycle_end_ns) - back_ns;
}

gboolean txd_refuse(GError **error, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    g_propagate_error(error, g_error_new_valist(TXD_ERROR, TXD_ERROR_REFUSE, format, ap));
    va_end(ap);
    return FALSE;
}

gboolean txd_process_id_of(const struct batch_context *b, uint64_t daemon_id, int64_t *id,
                           const char *what, GError **error)
{
    if (lookup(b->processes, &daemon_id, id))
        return TRUE;
    return txd_refuse(
        error, "%s refers to process %" G_GUINT64_FORMAT ", which the batch does not describe",
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
    return txd_refuse(error, "a statistic refers to metric %u, which the batch does not describe",
                      daemon_id);
}

/* ---- the COPYs ------------------------------------------------------------------------- */

static gboolean copy_activities(struct batch_context *b, struct vigil_copy *c,
                                const struct vigil_wire_message *m, GError **error)
{
    int64_t process_id = 0;
    if (!txd_process_id_of(b, m->process_id, &process_id, "an activity", error))
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
                return txd_refuse(error,
                                  "activity %" G_GUINT64_FORMAT " of process %" G_GUINT64_FORMAT
                                  " refers to file %u, whose name the batch does not carry",
                                  a->seq, m->process_id, a->file_id);
            last_file = a->file_id;
            last_file_id = file_id;
        }
        vigil_copy_row(c, 16);
        vigil_copy_int8(c, process_id);
        vigil_copy_int8(c, (int64_t)a->seq);
        vigil_copy_int2(c, a->layer);
        vigil_copy_int2(c, (int16_t)a->op);
        if (file_id != 0)
            vigil_copy_int8(c, file_id);
        else
            vigil_copy_null(c);
        if (a->offset_bytes != VIGIL_OFFSET_UNKNOWN)
            vigil_copy_int8(c, a->offset_bytes);
        else
            vigil_copy_null(c);
        vigil_copy_int8(c, (int64_t)a->bytes_asked);
        vigil_copy_int8(c, a->result);
        vigil_copy_int4(c, a->errno_value);
        vigil_copy_timestamp_ns(c, start_ns);
        vigil_copy_int8(c, start_ns);
        vigil_copy_int8(c, (int64_t)(a->end_ns - a->start_ns));
        vigil_copy_int4(c, (int32_t)a->thread_id);
        if (a->parent_start_ns != 0)
            vigil_copy_int8(c, realtime(b, a->parent_start_ns));
        else
            vigil_copy_null(c);
        vigil_copy_int2(c, (int16_t)a->flags);
        if (a->comm_size != 0)
            vigil_copy_int4(c, (int32_t)a->comm_size);
        else
            vigil_copy_null(c);
    }
    return TRUE;
}

/* A row of `columns` whose first are the node and the metric set of the
 * group's statistics: `daemon_ids[group[i]]` is item i's metric, as the
 * batch numbers it. */
static gboolean begin_metric_row(struct batch_context *b, struct vigil_copy *c, uint16_t columns,
                                 const uint32_t *daemon_ids, const GArray *group, GError **error)
{
    int32_t *ids = g_new(int32_t, group->len);
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < group->len; i++) {
        int64_t id = 0;
        ok = metric_id_of(b, daemon_ids[g_array_index(group, guint, i)], &id, error);
        ids[i] = (int32_t)id;
    }
    int64_t set_id =
        ok ? txd_ids_metric_set(b->store->ids, b->store->db, ids, group->len, error) : -1;
    g_free(ids);
    if (set_id < 0)
        return FALSE;
    vigil_copy_row(c, columns);
    vigil_copy_int8(c, b->node_id);
    vigil_copy_int4(c, (int32_t)set_id);
    return TRUE;
}

/* One row per roll-up window: the message's roll-ups grouped by their
 * start and end, each column an array in the group's order. A delta of
 * NaN (a gauge's) is a NULL element; min, mean and max are kept as they
 * came, NaN too, as the one-row-a-metric table kept them. */
static gboolean copy_rollups(struct batch_context *b, struct vigil_copy *c,
                             const struct vigil_wire_message *m, GError **error)
{
    guint n = m->header.count;
    uint64_t(*keys)[2] = g_malloc_n(MAX(n, 1), sizeof *keys);
    uint32_t *daemon_ids = g_new(uint32_t, n);
    for (guint i = 0; i < n; i++) {
        keys[i][0] = m->rollups[i].start_ns;
        keys[i][1] = m->rollups[i].end_ns;
        daemon_ids[i] = m->rollups[i].metric_id;
    }
    GPtrArray *groups = txd_store_groups((const uint64_t(*)[2])keys, n);
    int32_t *samples = g_new(int32_t, n);
    double *values = g_new(double, 4 * (size_t)n);
    gboolean *uncertain = g_new(gboolean, n);
    gboolean ok = TRUE;
    for (guint g = 0; ok && g < groups->len; g++) {
        const GArray *group = g_ptr_array_index(groups, g);
        ok = begin_metric_row(b, c, 10, daemon_ids, group, error);
        if (!ok)
            break;
        guint k = group->len;
        for (guint i = 0; i < k; i++) {
            const struct vigil_wire_rollup *r = &m->rollups[g_array_index(group, guint, i)];
            samples[i] = (int32_t)r->count;
            values[i] = r->min;
            values[k + i] = r->mean;
            values[2 * k + i] = r->max;
            values[3 * k + i] = r->delta;
            uncertain[i] = (r->flags & VIGIL_SAMPLE_UNCERTAIN) != 0;
        }
        const struct vigil_wire_rollup *first = &m->rollups[g_array_index(group, guint, 0)];
        vigil_copy_timestamp_ns(c, realtime(b, first->start_ns));
        vigil_copy_timestamp_ns(c, realtime(b, first->end_ns));
        vigil_copy_int4_array(c, samples, k);
        vigil_copy_float8_array(c, values, k, FALSE);
        vigil_copy_float8_array(c, values + k, k, FALSE);
        vigil_copy_float8_array(c, values + 2 * k, k, FALSE);
        vigil_copy_float8_array(c, values + 3 * k, k, TRUE);
        vigil_copy_varbit(c, uncertain, k);
    }
    g_ptr_array_unref(groups);
    g_free(keys);
    g_free(daemon_ids);
    g_free(samples);
    g_free(values);
    g_free(uncertain);
    return ok;
}

/* One row per tick: the message's samples grouped by their time. */
static gboolean copy_samples(struct batch_context *b, struct vigil_copy *c,
                             const struct vigil_wire_message *m, GError **error)
{
    guint n = m->header.count;
    uint64_t(*keys)[2] = g_malloc_n(MAX(n, 1), sizeof *keys);
    uint32_t *daemon_ids = g_new(uint32_t, n);
    for (guint i = 0; i < n; i++) {
        keys[i][0] = m->samples[i].t_ns;
        keys[i][1] = 0;
        daemon_ids[i] = m->samples[i].metric_id;
    }
    GPtrArray *groups = txd_store_groups((const uint64_t(*)[2])keys, n);
    double *values = g_new(double, n);
    gboolean *uncertain = g_new(gboolean, n);
    gboolean ok = TRUE;
    for (guint g = 0; ok && g < groups->len; g++) {
        const GArray *group = g_ptr_array_index(groups, g);
        ok = begin_metric_row(b, c, 6, daemon_ids, group, error);
        if (!ok)
            break;
        for (guint i = 0; i < group->len; i++) {
            const struct vigil_sample *x = &m->samples[g_array_index(group, guint, i)];
            values[i] = x->value;
            uncertain[i] = (x->flags & VIGIL_SAMPLE_UNCERTAIN) != 0;
        }
        int64_t t_ns = realtime(b, m->samples[g_array_index(group, guint, 0)].t_ns);
        vigil_copy_timestamp_ns(c, t_ns);
        vigil_copy_int8(c, t_ns);
        vigil_copy_float8_array(c, values, group->len, FALSE);
        vigil_copy_varbit(c, uncertain, group->len);
    }
    g_ptr_array_unref(groups);
    g_free(keys);
    g_free(daemon_ids);
    g_free(values);
    g_free(uncertain);
    return ok;
}

/* A process id column: NULL for the node (0). */
static gboolean copy_process_column(struct batch_context *b, struct vigil_copy *c,
                                    uint64_t daemon_id, const char *what, GError **error)
{
    if (daemon_id == 0) {
        vigil_copy_null(c);
        return TRUE;
    }
    int64_t id = 0;
    if (!txd_process_id_of(b, daemon_id, &id, what, error))
        return FALSE;
    vigil_copy_int8(c, id);
    return TRUE;
}

/* A row of `columns` whose first are a reasoner's level, the node, the
 * process (NULL: the node's own) and the cycle, as number and end. */
static gboolean begin_cycle_row(struct batch_context *b, struct vigil_copy *c, uint16_t columns,
                                unsigned level, uint64_t daemon_process_id, uint64_t cycle,
                                const char *what, GError **error)
{
    vigil_copy_row(c, columns);
    vigil_copy_text(c, vigil_level_name(level));
    vigil_copy_int8(c, b->node_id);
    if (!copy_process_column(b, c, daemon_process_id, what, error))
        return FALSE;
    vigil_copy_int8(c, (int64_t)cycle);
    vigil_copy_timestamp_ns(c, cycle_end_realtime(b, cycle));
    return TRUE;
}

static void copy_finite_or_null(struct vigil_copy *c, double v)
{
    if (isfinite(v))
        vigil_copy_float8(c, v);
    else
        vigil_copy_null(c);
}

static gboolean copy_anomalies(struct batch_context *b, struct vigil_copy *c,
                               const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_anomaly *a = &m->anomalies[i];
        if (!begin_cycle_row(b, c, 12, a->level, a->process_id, a->cycle, "an anomaly", error))
            return FALSE;
        vigil_copy_text(c, vigil_health_name(a->health));
        vigil_copy_text(c, a->plugin);
        vigil_copy_text(c, a->metric);
        vigil_copy_float8_or_null(c, a->value);
        copy_finite_or_null(c, a->expected_min);
        copy_finite_or_null(c, a->expected_max);
        vigil_copy_text(c, a->message);
    }
    return TRUE;
}

static gboolean copy_states(struct batch_context *b, struct vigil_copy *c,
                            const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_state *s = &m->states[i];
        if (!begin_cycle_row(b, c, 10, s->level, s->process_id, s->cycle, "a reasoner state",
                             error))
            return FALSE;
        vigil_copy_text(c, vigil_health_name(s->health));
        vigil_copy_int4(c, (int32_t)s->overloaded_mask);
        vigil_copy_int4(c, (int32_t)s->bad_issues);
        vigil_copy_int4(c, (int32_t)s->good_issues);
        vigil_copy_int4(c, (int32_t)s->other_issues);
    }
    return TRUE;
}

static gboolean copy_windows(struct batch_context *b, struct vigil_copy *c,
                             const struct vigil_wire_message *m, GError **error)
{
    for (uint32_t i = 0; i < m->header.count; i++) {
        const struct vigil_wire_window *w = &m->windows[i];
        vigil_copy_row(c, 8);
        vigil_copy_int8(c, b->node_id);
        if (!copy_process_column(b, c, w->process_id, "a captured window", error))
            return FALSE;
        vigil_copy_int8(c, (int64_t)w->first_cycle);
        vigil_copy_int8(c, (int64_t)w->last_cycle);
        vigil_copy_timestamp_ns(c, realtime(b, w->start_ns));
        vigil_copy_timestamp_ns(c, realtime(b, w->end_ns));
        vigil_copy_int8(c, (int64_t)w->activities_forwarded);
        vigil_copy_text(c, w->reasons);
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
        if (!txd_process_id_of(b, s->process_id, &process_id, "a run summary", error))
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
    GArray *names = g_array_new(FALSE, FALSE, sizeof(struct batch_name));
    gboolean ok = TRUE;
    for (uint32_t i = 0; ok && i < batch->header.count; i++) {
        const struct vigil_wire_message *m = &batch->inner[i];
        if (m->header.type == VIGIL_WIRE_METRICS)
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
    ok = ok && txd_store_processes(b, error);
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

/* ---- the claim: whose batch it is, and whether it is new ---------------------------------- */

/* A sequence below the node's highest (of those this server stored since
 * it started: reading the warehouse's would cost a statement a batch) is
 * a spool replayed late, or a node
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

/* ---- a group of batches, one transaction ------------------------------------------------ */

/* What became of a batch's claim in the group's transaction. */
enum claim {
    CLAIM_WRITE,     /* new: its rows go in */
    CLAIM_DUPLICATE, /* stored before: nothing to write */
    CLAIM_REFUSED,   /* its key or its sequence rule it out */
};

/* One batch of the group being written. What it says in the log and
 * counts waits for the COMMIT: a transaction rolled back and tried again
 * without a refused batch would say it twice. */
struct group_batch {
    struct txd_group_item *item;
    struct batch_context b;
    enum claim claim;
    GError *refusal;      /* why, for CLAIM_REFUSED */
    gboolean impostor;    /* refused: its node id is another CURVE key's */
    gboolean reused;      /* its (node, sequence) was stored with other content */
    char *reused_warning; /* stored all the same (a later cycle): said at COMMIT */
    gboolean below;       /* its sequence is below the node's highest */
    uint64_t highest;
};

/* The batches of a group in one transaction, in the group's order. */
struct group {
    struct txd_store *store;
    struct group_batch *batches;
    guint n;
    /* struct txd_node_written the group wrote to `nodes`: the store's
     * cache takes them when it commits. */
    GPtrArray *nodes_written;
    /* When a batch's own data is refused: which one (G_MAXUINT: a COPY of
     * the whole group was, and which batch is found by bisecting). */
    guint refused;
    uint64_t rows;
};

/* The claim statement's parameters: node, sequence, messages, items,
 * batch time (µs since the epoch), CRC-32, bytes. */
#define CLAIM_PARAMS 7

/* Array parameters as text: {1,2} and {"a","b"}. */
static void array_add_int(GString *a, int64_t v)
{
    g_string_append_printf(a, "%s%" G_GINT64_FORMAT, a->len > 1 ? "," : "", v);
}

static void array_add_text(GString *a, const char *text)
{
    g_string_append(a, a->len > 1 ? ",\"" : "\"");
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\')
            g_string_append_c(a, '\\');
        g_string_append_c(a, *c);
    }
    g_string_append_c(a, '"');
}

/* Runs `sql` with `n` parameters, the text of the arrays; the result (of
 * `expect`) or NULL with error. */
static PGresult *exec_arrays(PGconn *db, const char *sql, GString **arrays, int n,
                             ExecStatusType expect, GError **error)
{
    const char *values[8];
    g_assert(n <= (int)G_N_ELEMENTS(values));
    for (int i = 0; i < n; i++) {
        g_string_append_c(arrays[i], '}');
        values[i] = arrays[i]->str;
    }
    PGresult *result = PQexecParams(db, sql, n, NULL, values, NULL, NULL, 0);
    for (int i = 0; i < n; i++)
        g_string_free(arrays[i], TRUE);
    if (PQresultStatus(result) == expect)
        return result;
    txd_set_pg_error(error, db, result, sql);
    PQclear(result);
    return NULL;
}

static gboolean writes(const struct group_batch *gb)
{
    return gb->claim == CLAIM_WRITE;
}

/* With CURVE: each node id must be its sender key's. The first key a node
 * id comes with is recorded; a batch of that node id with another key is
 * refused, and counted on the node's row. Two statements for the group's
 * nodes (the first key of each, in the group's order): record what is
 * new, then read each node's key. */
static gboolean check_node_keys(struct group *g, GError **error)
{
    GString *nodes = g_string_new("{"), *keys = g_string_new("{");
    GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < g->n; i++) {
        struct group_batch *gb = &g->batches[i];
        if (gb->item->origin.curve_key != NULL && g_hash_table_add(seen, &gb->b.node_id)) {
            array_add_int(nodes, gb->b.node_id);
            array_add_text(keys, gb->item->origin.curve_key);
        }
    }
    guint distinct = g_hash_table_size(seen);
    g_hash_table_destroy(seen);
    if (distinct == 0) {
        g_string_free(nodes, TRUE);
        g_string_free(keys, TRUE);
        return TRUE;
    }
    /* Then read in a statement of its own, whose snapshot also shows a key
     * another server recorded meanwhile (no correlated subquery: Citus
     * refuses them over distributed tables). */
    static const char sql[] = "INSERT INTO node_keys (node_id, curve_public_key) "
                              "SELECT * FROM unnest($1::bigint[], $2::text[]) ORDER BY 1 ON "
                              "CONFLICT (node_id) DO NOTHING";
    static const char read_sql[] =
        "SELECT node_id, curve_public_key FROM node_keys WHERE node_id = ANY($1::bigint[])";
    char *node_list = g_strdup(nodes->str);
    GString *arrays[] = {nodes, keys};
    PGresult *result = exec_arrays(g->store->db, sql, arrays, 2, PGRES_COMMAND_OK, error);
    if (result != NULL) {
        PQclear(result);
        GString *read[] = {g_string_new(node_list)};
        result = exec_arrays(g->store->db, read_sql, read, 1, PGRES_TUPLES_OK, error);
    }
    g_free(node_list);
    if (result == NULL)
        return FALSE;
    gboolean ok = TRUE;
    GHashTable *owner = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    for (int r = 0; r < PQntuples(result); r++) {
        int64_t node = g_ascii_strtoll(PQgetvalue(result, r, 0), NULL, 10);
        g_hash_table_insert(owner, g_memdup2(&node, sizeof node), PQgetvalue(result, r, 1));
    }
    if ((guint)PQntuples(result) != distinct) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_RETRY, "of %u nodes' keys recorded, %d were found",
                    distinct, PQntuples(result));
        ok = FALSE;
    }
    for (guint i = 0; ok && i < g->n; i++) {
        struct group_batch *gb = &g->batches[i];
        const char *key = gb->item->origin.curve_key;
        const char *known = key != NULL ? g_hash_table_lookup(owner, &gb->b.node_id) : NULL;
        if (known == NULL || strcmp(known, key) == 0)
            continue;
        gb->claim = CLAIM_REFUSED;
        gb->impostor = TRUE;
        txd_refuse(&gb->refusal,
                   "node %" G_GINT64_FORMAT " belongs to CURVE key %s, and this batch came with "
                   "key %s: a node cannot write as another (when the node's key is the wrong "
                   "one, `vigil node keys --forget %" G_GINT64_FORMAT
                   "` lets the next batch claim it, and `vigil spool resend` on the node sends "
                   "what was refused)",
                   gb->b.node_id, known, key, gb->b.node_id);
        char node[24];
        g_snprintf(node, sizeof node, "%" G_GINT64_FORMAT, gb->b.node_id);
        const char *values[] = {node, key, gb->refusal->message};
        static const char count_sql[] =
            "UPDATE node_keys SET refused_batches = refused_batches + 1, refused_key = $2, "
            "refused_at = now(), refused_reason = $3 WHERE node_id = $1::bigint";
        ok = txd_exec_params(g->store->db, count_sql, 3, values, error);
    }
    g_hash_table_destroy(owner);
    PQclear(result);
    return ok;
}

/* A claim that did not simply succeed: a resend, or a (node, sequence)
 * stored before with other content. Its key is (node, sequence, the end
 * of its cycle): a node whose numbers started again (its spool folder
 * reset) sends a used sequence for a later cycle, which is another key:
 * stored, and said loudly with both digests. The same key with other
 * content is not a resend either: refused, with both digests, so that
 * nothing is dropped silently. */
static gboolean settle_claim(struct group_batch *gb, gboolean claimed, GError **error)
{
    struct batch_context *b = &gb->b;
    const struct txd_batch_origin *origin = &gb->item->origin;
    char node[32], sequence[32], crc32[16], bytes[32];
    g_snprintf(node, sizeof node, "%" G_GINT64_FORMAT, b->node_id);
    g_snprintf(sequence, sizeof sequence, "%" G_GINT64_FORMAT, (int64_t)b->batch->header.sequence);
    g_snprintf(crc32, sizeof crc32, "%" G_GUINT32_FORMAT, origin->crc32);
    g_snprintf(bytes, sizeof bytes, "%" G_GUINT64_FORMAT, origin->bytes);
    gboolean resend = FALSE, known = FALSE;
    uint32_t other_crc32 = 0;
    uint64_t other_bytes = 0;
    if (!other_content(b, node, sequence, crc32, bytes, &resend, &known, &other_crc32, &other_bytes,
                       error))
        return FALSE;
    if (!claimed && resend) {
        gb->claim = CLAIM_DUPLICATE;
        return TRUE;
    }
    gb->reused = TRUE;
    char *was =
        known ? g_strdup_printf("crc32 %08" G_GINT32_MODIFIER "x (%" G_GUINT64_FORMAT " bytes)",
                                other_crc32, other_bytes)
              : g_strdup("no recorded content");
    char *text =
        g_strdup_printf("sequence reused: was the node's spool folder reset? Node "
                        "%" G_GINT64_FORMAT " sequence %" G_GUINT64_FORMAT
                        " was stored with content %s; this batch has crc32 "
                        "%08" G_GINT32_MODIFIER "x (%" G_GUINT64_FORMAT " bytes)",
                        b->node_id, b->batch->header.sequence, was, origin->crc32, origin->bytes);
    g_free(was);
    if (claimed) {
        gb->claim = CLAIM_WRITE;
        gb->reused_warning = g_strdup_printf("%s, for a later cycle: stored too, under its own "
                                             "cycle end",
                                             text);
    } else {
        gb->claim = CLAIM_REFUSED;
        txd_refuse(&gb->refusal, "%s, for the same cycle end, and is not stored", text);
    }
    g_free(text);
    return TRUE;
}

/* The claim's parameters, one array each, for the batches still to write;
 * how many. */
static guint claim_arrays(struct group *g, GString **arrays)
{
    for (int i = 0; i < CLAIM_PARAMS; i++)
        arrays[i] = g_string_new("{");
    guint claiming = 0;
    for (guint i = 0; i < g->n; i++) {
        struct group_batch *gb = &g->batches[i];
        if (!writes(gb))
            continue;
        const struct vigil_wire_header *h = &gb->b.batch->header;
        uint64_t items = 0;
        for (uint32_t k = 0; k < h->count; k++)
            items += gb->b.batch->inner[k].header.count;
        int64_t values[CLAIM_PARAMS] = {gb->b.node_id,
                                        (int64_t)h->sequence,
                                        h->count,
                                        (int64_t)items,
                                        batch_time_ns(&gb->b) / 1000,
                                        gb->item->origin.crc32,
                                        (int64_t)gb->item->origin.bytes};
        for (int k = 0; k < CLAIM_PARAMS; k++)
            array_add_int(arrays[k], values[k]);
        claiming++;
    }
    for (int i = 0; i < CLAIM_PARAMS; i++)
        g_string_append_c(arrays[i], '}');
    return claiming;
}

static char *pair_key(int64_t node_id, int64_t sequence)
{
    return g_strdup_printf("%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT, node_id, sequence);
}

/* What the claim's two statements said of each batch still to write:
 * claimed (new), or stored before; and whether its (node, sequence) was
 * stored for another cycle end. */
static gboolean claim_read(struct group *g, const PGresult *before, const PGresult *claimed,
                           GError **error)
{
    GHashTable *new_pairs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    /* "node:sequence:time" → 1, and "node:sequence" → how many times */
    GHashTable *times = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int r = 0; r < PQntuples(claimed); r++)
        g_hash_table_add(new_pairs, pair_key(g_ascii_strtoll(PQgetvalue(claimed, r, 0), NULL, 10),
                                             g_ascii_strtoll(PQgetvalue(claimed, r, 1), NULL, 10)));
    for (int r = 0; r < PQntuples(before); r++) {
        char *key = g_strdup_printf("%s:%s:%s", PQgetvalue(before, r, 0), PQgetvalue(before, r, 1),
                                    PQgetvalue(before, r, 2));
        g_hash_table_insert(times, key, GUINT_TO_POINTER(1));
        char *pair = pair_key(g_ascii_strtoll(PQgetvalue(before, r, 0), NULL, 10),
                              g_ascii_strtoll(PQgetvalue(before, r, 1), NULL, 10));
        guint count = GPOINTER_TO_UINT(g_hash_table_lookup(times, pair));
        g_hash_table_insert(times, pair, GUINT_TO_POINTER(count + 1));
    }
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < g->n; i++) {
        struct group_batch *gb = &g->batches[i];
        if (!writes(gb))
            continue;
        int64_t sequence = (int64_t)gb->b.batch->header.sequence;
        char *pair = pair_key(gb->b.node_id, sequence);
        char *exact = g_strdup_printf("%s:%" G_GINT64_FORMAT, pair, batch_time_ns(&gb->b) / 1000);
        gboolean is_new = g_hash_table_contains(new_pairs, pair);
        /* Stored before under another cycle end: a row of the pair with
         * another time than this batch's. */
        guint others = GPOINTER_TO_UINT(g_hash_table_lookup(times, pair)) -
                       (g_hash_table_contains(times, exact) ? 1 : 0);
        gboolean used_before = others > 0;
        g_free(pair);
        g_free(exact);
        const uint64_t *highest = g_hash_table_lookup(g->store->highest, &gb->b.node_id);
        if (highest != NULL && (uint64_t)sequence < *highest) {
            gb->below = TRUE;
            gb->highest = *highest;
        }
        if (!is_new || used_before)
            ok = settle_claim(gb, is_new, error);
    }
    g_hash_table_destroy(new_pairs);
    g_hash_table_destroy(times);
    return ok;
}

/* Statements sent at once in libpq's pipeline mode: one round trip for
 * them all. Their results in `results` (PQclear them), or FALSE with the
 * first failure. A connection left in pipeline mode is dropped. COPY
 * cannot run in pipeline mode, so only the statements before a group's
 * COPYs go this way. */
struct pipelined {
    const char *sql;
    int n_params;
    const char *const *values;
    ExecStatusType expect;
};

static gboolean exec_pipelined(struct txd_store *s, const struct pipelined *q, int n,
                               PGresult **results, GError **error)
{
    PGconn *db = s->db;
    gboolean ok = PQenterPipelineMode(db) == 1;
    for (int i = 0; ok && i < n; i++)
        ok = PQsendQueryParams(db, q[i].sql, q[i].n_params, NULL, q[i].values, NULL, NULL, 0) == 1;
    ok = ok && PQpipelineSync(db) == 1;
    if (!ok)
        txd_set_pg_error(error, db, NULL, "sending a pipeline");
    for (int i = 0; i < n; i++)
        results[i] = NULL;
    /* Each statement's result, then NULL; a statement after a failed one
     * is PGRES_PIPELINE_ABORTED; then the SYNC. */
    for (int i = 0; ok && i < n; i++) {
        results[i] = PQgetResult(db);
        if (results[i] == NULL || PQresultStatus(results[i]) != q[i].expect) {
            txd_set_pg_error(error, db, results[i], q[i].sql);
            ok = FALSE;
        }
        for (PGresult *more; results[i] != NULL && (more = PQgetResult(db)) != NULL;)
            PQclear(more);
    }
    for (PGresult *r; (r = PQgetResult(db)) != NULL;) {
        ExecStatusType status = PQresultStatus(r);
        PQclear(r);
        if (status == PGRES_PIPELINE_SYNC)
            break;
    }
    if (PQexitPipelineMode(db) != 1) {
        if (ok)
            txd_set_pg_error(error, db, NULL, "leaving pipeline mode");
        ok = FALSE;
        disconnect(s);
    }
    if (!ok)
        for (int i = 0; i < n; i++)
            g_clear_pointer(&results[i], PQclear);
    return ok;
}

/* The claim, in two statements: first what ingested_batches held of the
 * group's (node, sequence)s (the pairs from unnest, an index probe each:
 * `node_id = ANY(…) AND sequence = ANY(…)` probed every node with every
 * sequence, 65,536 probes for a group of 256, 272 ms against 1.8 ms on a
 * table of 600,000 claims; a claim from before migration 2 has no time,
 * -infinity), then the INSERT, whose RETURNING says which batches are
 * new. A batch not returned was stored before (a daemon resends what it
 * has no acknowledgement for). No correlated subquery: Citus refuses them
 * over a distributed table. */
static const char claim_before_sql[] =
    "SELECT node_id, sequence, CASE WHEN isfinite(batch_time) "
    "THEN (extract(epoch FROM batch_time) * 1000000)::bigint END "
    "FROM ingested_batches WHERE (node_id, sequence) IN "
    "(SELECT * FROM unnest($1::bigint[], $2::bigint[]))";
static const char claim_sql[] =
    "INSERT INTO ingested_batches (node_id, sequence, messages, rows, batch_time, "
    "content_crc32, content_bytes) SELECT node_id, sequence, messages, rows, "
    "timestamptz 'epoch' + time_us * interval '1 microsecond', crc32, bytes "
    "FROM unnest($1::bigint[], $2::bigint[], $3::int[], $4::bigint[], $5::bigint[], "
    "$6::bigint[], $7::bigint[]) AS i(node_id, sequence, messages, rows, time_us, crc32, bytes) "
    "ON CONFLICT DO NOTHING RETURNING node_id, sequence";

/* Shared rows (jobs, runs, metrics, files) are taken batch after batch, so
 * two groups of several batches could wait for each other in a circle. A
 * group of several takes this lock exclusively (one such group in the
 * warehouse at a time); a group of one, whose rows are taken in a fixed
 * order, shares it. */
#define GROUP_LOCK_KEY "7020176829764907884" /* "vigilgrp" */

/* The transaction, its lock and the claims: in one round trip when no
 * node's key is to be checked first (the server knows each node's key
 * after its first batch), else in turn, since a batch refused for its key
 * must not be claimed. */
static gboolean begin_and_claim(struct group *g, GError **error)
{
    struct txd_store *s = g->store;
    const char *lock = g->n > 1 ? "SELECT pg_advisory_xact_lock(" GROUP_LOCK_KEY ")"
                                : "SELECT pg_advisory_xact_lock_shared(" GROUP_LOCK_KEY ")";
    gboolean keys = FALSE;
    for (guint i = 0; i < g->n; i++)
        keys = keys || g->batches[i].item->origin.curve_key != NULL;
    if (keys) {
        PGresult *result = PQexec(s->db, "BEGIN");
        gboolean ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        PQclear(result);
        result = ok ? PQexec(s->db, lock) : NULL;
        ok = ok && PQresultStatus(result) == PGRES_TUPLES_OK;
        if (!ok)
            txd_set_pg_error(error, s->db, result, lock);
        PQclear(result);
        if (!ok || !check_node_keys(g, error))
            return FALSE;
    }
    GString *arrays[CLAIM_PARAMS];
    guint claiming = claim_arrays(g, arrays);
    const char *values[CLAIM_PARAMS];
    for (int i = 0; i < CLAIM_PARAMS; i++)
        values[i] = arrays[i]->str;
    const struct pipelined q[] = {
        {"BEGIN", 0, NULL, PGRES_COMMAND_OK},
        {lock, 0, NULL, PGRES_TUPLES_OK},
        {claim_before_sql, 2, values, PGRES_TUPLES_OK},
        {claim_sql, CLAIM_PARAMS, values, PGRES_TUPLES_OK},
    };
    enum { N_QUERIES = G_N_ELEMENTS(q) };
    PGresult *results[N_QUERIES];
    int first = keys ? 2 : 0;
    gboolean ok =
        claiming == 0 || exec_pipelined(s, q + first, N_QUERIES - first, results + first, error);
    if (ok && claiming > 0) {
        ok = claim_read(g, results[N_QUERIES - 2], results[N_QUERIES - 1], error);
        for (int i = first; i < N_QUERIES; i++)
            PQclear(results[i]);
    }
    for (int i = 0; i < CLAIM_PARAMS; i++)
        g_string_free(arrays[i], TRUE);
    return ok;
}

static gint compare_node_ids(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The nodes of the batches written, one statement: their host names and
 * when they were last heard from (EXCLUDED's, whose default is now():
 * Citus refuses now() in DO UPDATE SET). In node order, so that two
 * servers never wait for each other in a circle.
 *
 * A node is written when new, renamed, or first heard in a new minute of
 * the wall clock: last_seen is right to within a minute, and in the other
 * 59 seconds a group writes nothing to `nodes`. Every node's minute turns
 * at once, so the writes come together at the turn; on Citus `nodes` is a
 * reference table, and each write of it a two-phase commit over every
 * worker. */
static gboolean store_nodes(struct group *g, GError **error)
{
    struct txd_store *s = g->store;
    int64_t minute = g_get_real_time() / G_USEC_PER_SEC / 60;
    GTree *nodes = g_tree_new_full(compare_node_ids, NULL, NULL, NULL);
    for (guint i = 0; i < g->n; i++) {
        if (!writes(&g->batches[i]))
            continue;
        const struct batch_context *b = &g->batches[i].b;
        const struct txd_node_written *w = g_hash_table_lookup(s->nodes_written, &b->node_id);
        if (w == NULL || w->minute != minute || strcmp(w->hostname, b->node->hostname) != 0)
            g_tree_replace(nodes, (gpointer)&b->node_id, (gpointer)b->node->hostname);
    }
    g_ptr_array_set_size(g->nodes_written, 0);
    if (g_tree_nnodes(nodes) == 0) {
        g_tree_destroy(nodes);
        return TRUE;
    }
    GString *arrays[] = {g_string_new("{"), g_string_new("{")};
    GTreeNode *node = g_tree_node_first(nodes);
    for (; node != NULL; node = g_tree_node_next(node)) {
        struct txd_node_written *w = g_new(struct txd_node_written, 1);
        w->node_id = *(const int64_t *)g_tree_node_key(node);
        w->hostname = g_strdup(g_tree_node_value(node));
        w->minute = minute;
        g_ptr_array_add(g->nodes_written, w);
        array_add_int(arrays[0], w->node_id);
        array_add_text(arrays[1], w->hostname);
    }
    g_tree_destroy(nodes);
    static const char sql[] =
        "INSERT INTO nodes (node_id, hostname) SELECT * FROM unnest($1::bigint[], $2::text[]) "
        "ON CONFLICT (node_id) DO UPDATE SET hostname = EXCLUDED.hostname, "
        "last_seen = EXCLUDED.last_seen";
    PGresult *result = exec_arrays(s->db, sql, arrays, 2, PGRES_COMMAND_OK, error);
    PQclear(result);
    return result != NULL;
}

typedef gboolean (*copy_rows_fn)(struct batch_context *b, struct vigil_copy *c,
                                 const struct vigil_wire_message *m, GError **error);

/* One COPY for every message of `type` in the batches written. A row a
 * batch cannot make refuses that batch (g->refused); rows the database
 * refuses refuse the group's COPY as a whole (g->refused = G_MAXUINT). */
static gboolean copy_all(struct group *g, enum vigil_wire_type type, copy_rows_fn rows,
                         const char *statement, GError **error)
{
    struct vigil_copy c;
    vigil_copy_init(&c);
    gboolean ok = TRUE;
    for (guint i = 0; ok && i < g->n; i++) {
        struct group_batch *gb = &g->batches[i];
        for (uint32_t k = 0; ok && writes(gb) && k < gb->b.batch->header.count; k++)
            if (gb->b.batch->inner[k].header.type == type)
                ok = rows(&gb->b, &c, &gb->b.batch->inner[k], error);
        if (!ok)
            g->refused = i;
    }
    if (ok) {
        ok = txd_copy_send(g->store->db, statement, &c, error);
        if (!ok)
            g->refused = G_MAXUINT;
    }
    g->rows += c.rows;
    vigil_copy_clear(&c);
    return ok;
}

/* The COPYs of a group, one per table: the messages of `type` in every
 * batch written, as `rows` makes them. */
static const struct {
    enum vigil_wire_type type;
    copy_rows_fn rows;
    const char *statement;
} group_copies[] = {
    {VIGIL_WIRE_ACTIVITIES, copy_activities,
     "COPY activities (process_id, seq, layer, operation, file_id, file_offset, bytes, result, "
     "errno, start_time, start_ns, duration_ns, thread, parent_start_ns, flags, comm_size) "
     "FROM STDIN (FORMAT binary)"},
    {VIGIL_WIRE_ROLLUPS, copy_rollups,
     "COPY statistics_rollup_arrays (node_id, metric_set_id, start_time, end_time, samples, min, "
     "mean, max, delta, uncertain) FROM STDIN (FORMAT binary)"},
    {VIGIL_WIRE_SAMPLES, copy_samples,
     "COPY window_statistics_arrays (node_id, metric_set_id, time, t_ns, value, uncertain) "
     "FROM STDIN (FORMAT binary)"},
    {VIGIL_WIRE_ANOMALIES, copy_anomalies,
     "COPY anomalies (level, node_id, process_id, cycle, time, state, plugin, metric, value, "
     "expected_min, expected_max, message) FROM STDIN (FORMAT binary)"},
    {VIGIL_WIRE_STATES, copy_states,
     "COPY reasoner_states (level, node_id, process_id, cycle, time, state, overloaded_mask, "
     "bad_issues, good_issues, other_issues) FROM STDIN (FORMAT binary)"},
    {VIGIL_WIRE_WINDOWS, copy_windows,
     "COPY captures (node_id, process_id, first_cycle, last_cycle, start_time, end_time, "
     "activities_forwarded, reasons) FROM STDIN (FORMAT binary)"},
};

/* The group's rows, once its claims are settled: the nodes, what each
 * batch describes (its own statements: a refusal names the batch), the
 * COPYs of the whole group, then the reports. */
static gboolean store_rows(struct group *g, GError **error)
{
    if (!store_nodes(g, error))
        return FALSE;
    for (guint i = 0; i < g->n; i++)
        if (writes(&g->batches[i]) && !store_describing(&g->batches[i].b, error)) {
            g->refused = i;
            return FALSE;
        }
    /* copy_activities counts each activity per second too, for the whole
     * group; the counts go in one COPY of their own after the activities'. */
    struct txd_activity_seconds *seconds = txd_activity_seconds_new();
    for (guint i = 0; i < g->n; i++)
        g->batches[i].b.activity_seconds = seconds;
    gboolean ok = TRUE;
    for (size_t t = 0; ok && t < G_N_ELEMENTS(group_copies); t++) {
        ok = copy_all(g, group_copies[t].type, group_copies[t].rows, group_copies[t].statement,
                      error);
        if (ok && group_copies[t].type == VIGIL_WIRE_ACTIVITIES &&
            !txd_activity_seconds_copy(seconds, g->store->db, error)) {
            g->refused = G_MAXUINT;
            ok = FALSE;
        }
    }
    for (guint i = 0; i < g->n; i++)
        g->batches[i].b.activity_seconds = NULL;
    txd_activity_seconds_free(seconds);
    if (ok) {
        struct txd_levels_late *late = txd_levels_late_new();
        for (guint i = 0; i < g->n; i++)
            if (writes(&g->batches[i]))
                txd_levels_late_add(late, &g->batches[i].b);
        ok = txd_levels_late_store(late, g->store->db, error);
    }
    for (guint i = 0; ok && i < g->n; i++)
        if (writes(&g->batches[i]) && !store_all_summaries(&g->batches[i].b, error)) {
            g->refused = i;
            ok = FALSE;
        }
    for (guint i = 0; i < g->n; i++)
        g->rows += g->batches[i].b.rows;
    return ok;
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

static struct group *group_new(struct txd_store *s, struct txd_group_item **items, guint n)
{
    struct group *g = g_new0(struct group, 1);
    g->store = s;
    g->n = n;
    g->batches = g_new0(struct group_batch, n);
    g->nodes_written = g_ptr_array_new_with_free_func(node_written_free);
    for (guint i = 0; i < n; i++) {
        g->batches[i].item = items[i];
        batch_context_init(&g->batches[i].b, s, items[i]->batch);
    }
    return g;
}

static void group_free(struct group *g)
{
    for (guint i = 0; i < g->n; i++) {
        batch_context_clear(&g->batches[i].b);
        g_clear_error(&g->batches[i].refusal);
        g_free(g->batches[i].reused_warning);
    }
    g_free(g->batches);
    g_ptr_array_unref(g->nodes_written);
    g_free(g);
}

/* Nothing of the transaction may stay: roll back, or drop a connection
 * that cannot even do that; forget the ids it learnt. */
static void rollback(struct txd_store *s)
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
    txd_known_processes_rollback(s->known_processes);
}

/* The group committed: each batch's result, what it says, what it counts. */
static void group_committed(struct group *g)
{
    struct txd_store *s = g->store;
    txd_ids_commit(s->ids);
    txd_known_processes_commit(s->known_processes);
    gsize n_written = 0;
    gpointer *written = g_ptr_array_steal(g->nodes_written, &n_written);
    for (gsize i = 0; i < n_written; i++)
        g_hash_table_replace(s->nodes_written, &((struct txd_node_written *)written[i])->node_id,
                             written[i]);
    g_free(written);
    for (guint i = 0; i < g->n; i++) {
        struct group_batch *gb = &g->batches[i];
        struct txd_group_item *item = gb->item;
        if (gb->impostor)
            s->counts.batches_impostor++;
        if (gb->reused)
            s->counts.batches_reused++;
        if (gb->reused_warning != NULL)
            g_warning("%s", gb->reused_warning);
        if (gb->claim == CLAIM_REFUSED) {
            item->result = TXD_REFUSED;
            item->error = g_steal_pointer(&gb->refusal);
        } else if (gb->claim == CLAIM_DUPLICATE) {
            item->result = TXD_DUPLICATE;
        } else {
            item->result = TXD_STORED;
            s->counts.runs_described += gb->b.runs_described;
            uint64_t sequence = gb->b.batch->header.sequence;
            if (gb->below)
                note_sequence_below(s, gb->b.node_id, sequence, gb->highest);
            uint64_t *highest = g_hash_table_lookup(s->highest, &gb->b.node_id);
            if (highest == NULL)
                g_hash_table_insert(s->highest, g_memdup2(&gb->b.node_id, sizeof gb->b.node_id),
                                    g_memdup2(&sequence, sizeof sequence));
            else if (sequence > *highest)
                *highest = sequence;
        }
    }
    s->counts.rows_stored += g->rows;
}

/* Writes the batches in one transaction. FALSE with error when it was
 * rolled back: then g->refused says which batch's own data was refused
 * (G_MAXUINT: somewhere in the group's COPYs), or, with a retry error,
 * none: the database failed. */
static gboolean write_group(struct group *g, GError **error)
{
    struct txd_store *s = g->store;
    g->refused = G_MAXUINT;
    gboolean ok =
        begin_and_claim(g, error) && store_rows(g, error) && exec_command(s->db, "COMMIT", error);
    if (!ok) {
        if (!g_error_matches(*error, TXD_ERROR, TXD_ERROR_REFUSE))
            g->refused = G_MAXUINT;
        rollback(s);
        return FALSE;
    }
    group_committed(g);
    return TRUE;
}

/* Stores `items` (pointers into the caller's group), each once. A batch
 * whose own data is refused is refused alone, and the others are written
 * again without it; a COPY of the group refused as a whole is bisected
 * until the batch it came from is found. A batch that repeats a (node,
 * sequence) of the same group waits for the group's COMMIT, so that it
 * meets its claim. FALSE (with a retry error) when the database failed:
 * what committed before stays, and is found as stored when tried again. */
static gboolean store_items(struct txd_store *s, struct txd_group_item **items, guint n,
                            GError **error)
{
    GPtrArray *now = g_ptr_array_new(), *later = g_ptr_array_new();
    GHashTable *keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < n; i++) {
        const struct vigil_wire_header *h = &items[i]->batch->header;
        char *key =
            g_strdup_printf("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT, h->node_id, h->sequence);
        g_ptr_array_add(g_hash_table_add(keys, key) ? now : later, items[i]);
    }
    g_hash_table_destroy(keys);
    gboolean ok = TRUE;
    while (ok && now->len > 0) {
        struct group *g = group_new(s, (struct txd_group_item **)now->pdata, now->len);
        GError *local = NULL;
        if (write_group(g, &local)) {
            group_free(g);
            break;
        }
        if (!g_error_matches(local, TXD_ERROR, TXD_ERROR_REFUSE)) {
            g_propagate_error(error, local);
            group_free(g);
            ok = FALSE;
            break;
        }
        if (g->refused != G_MAXUINT || now->len == 1) {
            /* That batch alone; the others again, without it. */
            guint refused = g->refused != G_MAXUINT ? g->refused : 0;
            struct txd_group_item *item = g_ptr_array_index(now, refused);
            item->result = TXD_REFUSED;
            item->error = local;
            g_ptr_array_remove_index(now, refused);
            group_free(g);
            continue;
        }
        group_free(g);
        g_clear_error(&local);
        guint half = now->len / 2;
        ok = store_items(s, (struct txd_group_item **)now->pdata, half, error) &&
             store_items(s, (struct txd_group_item **)now->pdata + half, now->len - half, error);
        break;
    }
    if (ok && later->len > 0)
        ok = store_items(s, (struct txd_group_item **)later->pdata, later->len, error);
    g_ptr_array_unref(now);
    g_ptr_array_unref(later);
    return ok;
}

/* The whole group failed: say so when it timed out, and have every batch
 * of it tried again (what committed before is found as stored then). */
static enum txd_store_result group_failed(struct txd_store *s, struct txd_group_item *items,
                                          guint n, GError *local, GError **error)
{
    for (guint i = 0; i < n; i++) {
        g_clear_error(&items[i].error);
        items[i].result = TXD_RETRY;
    }
    if (g_error_matches(local, TXD_ERROR, TXD_ERROR_NO_PARTITION)) {
        txd_ids_forget_partitions(s->ids);
        g_message("%s; the partitions are checked again", local->message);
    }
    if (strstr(local->message, " timeout ([warehouse] ") != NULL)
        g_warning("batch %" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT
                  "%s waits, unacknowledged, to be tried again: %s",
                  items[0].batch->header.node_id, items[0].batch->header.sequence,
                  n > 1 ? " and the rest of its group" : "", local->message);
    local->code = TXD_ERROR_RETRY;
    g_propagate_error(error, local);
    return TXD_RETRY;
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
    struct txd_group_item **order = g_new(struct txd_group_item *, n);
    for (guint i = 0; i < n; i++)
        order[i] = &items[i];
    gboolean ok = store_items(s, order, n, &local);
    g_free(order);
    if (!ok)
        return group_failed(s, items, n, local, error);
    for (guint i = 0; i < n; i++) {
        uint64_t *count = items[i].result == TXD_STORED      ? &s->counts.batches_stored
                          : items[i].result == TXD_DUPLICATE ? &s->counts.batches_duplicate
                                                             : &s->counts.batches_refused;
        (*count)++;
    }
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
