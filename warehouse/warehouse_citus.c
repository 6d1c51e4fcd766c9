/* vigil — the warehouse's tables laid out on a Citus cluster: run on the
 * coordinator after the ordinary migrations (`vigil db migrate --citus`, or
 * [warehouse] distributed = citus), which leave every table local.
 *
 * One row per table. A node's batch is one node_id's rows, so the time
 * series a node writes are distributed by node_id and co-located with
 * ingested_batches; activities, without node_id, by process_id. What the
 * readers join every run with (nodes, runs, processes and what is written
 * once per process, jobs, metrics, files, captures, the tuning trials) are
 * reference tables, a copy on every node, so that those joins stay on one
 * node. docs/scaling.md ("A Citus cluster") says why each table is where
 * it is and where Citus refused the first layout.
 *
 * Idempotent: a table Citus has already is left as it is; a table of the
 * schema without a row here is an error (lay it out: one line). The tables
 * not yet laid out are laid out in one transaction, their foreign keys
 * dropped first and made again where Citus allows them. */
#include <string.h>

#include "vigil/warehouse.h"
#include "warehouse_query.h"

struct citus_layout_row {
    const char *table;
    const char *distribution_column; /* NULL: a reference table */
    const char *colocate_with;       /* with a distribution column: "none" or a table */
    const char *before;              /* a statement run first, or NULL */
};

/* In order: a table is laid out after the one it is co-located with. */
static const struct citus_layout_row layout[] = {
    /* Reference tables: what the readers join every run with. Citus plans a
     * query over reference tables alone on one node, correlated subqueries
     * and all; one distributed table among them and it refuses the
     * correlated subqueries of run_overview, the energy views and
     * `vigil report` (each correction in docs/scaling.md). */
    {"jobs", NULL, NULL, NULL},
    {"metrics", NULL, NULL, NULL},
    {"metric_sets", NULL, NULL, NULL},
    {"files", NULL, NULL, NULL},
    {"nodes", NULL, NULL, NULL},
    {"runs", NULL, NULL, NULL},
    {"processes", NULL, NULL, NULL},
    {"run_summaries", NULL, NULL, NULL},
    {"captures", NULL, NULL, NULL},
    /* vigil-web's run page takes the UNION of a run's processes' and its
     * nodes' anomalies, joined to nodes: refused over a distributed table
     * ("complex joins…"). A few rows a node, only when something fires. */
    {"anomalies", NULL, NULL, NULL},
    /* Written once, when a process ends; vigil-web's run page joins them
     * to processes with LEFT JOIN, which Citus refuses from a reference
     * table to a distributed one ("complex joins are only supported when
     * all distributed tables are co-located…"). */
    {"file_stats", NULL, NULL, NULL},
    {"process_io_timelines", NULL, NULL, NULL},
    {"process_unwatched_ends", NULL, NULL, NULL},
    /* Beside processes, for its triggers (after_layout). */
    {"uplink_drops", NULL, NULL, NULL},
    {"tune_trials", NULL, NULL, NULL},
    {"tune_trial_results", NULL, NULL, NULL},
    {"tune_trial_adpis", NULL, NULL, NULL},
    /* The levels and how far each is built: a few rows. */
    {"statistics_levels", NULL, NULL, NULL},
    /* What a node's batch writes, by node_id, co-located. */
    {"ingested_batches", "node_id", "none", NULL},
    {"node_keys", "node_id", "ingested_batches", NULL},
    {"statistics_rollup_arrays", "node_id", "ingested_batches", NULL},
    {"window_statistics_arrays", "node_id", "ingested_batches", NULL},
    /* Built from the roll-ups by INSERT … SELECT, co-located by node_id. */
    {"statistics_level_blocks", "node_id", "ingested_batches", NULL},
    {"statistics_level_stale", "node_id", "ingested_batches", NULL},
    /* The system's own state rows have no node: 0, which no node is
     * (vigild derives an id for node_id = 0), since Citus refuses NULL. */
    {"reasoner_states", "node_id", "ingested_batches",
     "ALTER TABLE reasoner_states ALTER COLUMN node_id SET DEFAULT 0"},
    {"job_steps", "node_id", "ingested_batches", NULL},
    /* No node_id: by process_id, a process's rows in one shard. */
    {"activities", "process_id", "none", NULL},
    /* Its per-second counts, read with them by the heat map: beside them. */
    {"activity_seconds", "process_id", "activities", NULL},
};

/* The foreign keys Citus refuses under this layout (from a reference table
 * to a distributed one): not made again. None now; the first layout's
 * processes → nodes was one (docs/scaling.md). */
static const char *const refused_foreign_keys[] = {NULL};

/* The triggers that keep processes.uplink_dropped_activities the sum of
 * its uplink_drops (0011_drops_and_refusals.sql) query one table from the
 * other's trigger. Citus runs a reference table's triggers on each of its
 * placements, where a query of a Citus table is refused ("cannot execute a
 * distributed query from a query on a shard"): on Citus they read and write
 * the placements beside them, so that every node's copy of processes is
 * kept from its own copy of uplink_drops (both reference tables).
 * Idempotent, run every time. */
static const char *const after_layout[] = {
    "CREATE OR REPLACE FUNCTION vigil_uplink_drops_to_process() RETURNS trigger"
    " LANGUAGE plpgsql SET citus.enable_manual_changes_to_shards = on AS $$"
    " DECLARE"
    "  d record;"
    "  processes_here text := (SELECT shard_name('processes'::regclass, shardid)"
    "                            FROM pg_dist_shard WHERE logicalrelid = 'processes'::regclass);"
    " BEGIN"
    "  IF TG_OP = 'DELETE' THEN d := OLD; ELSE d := NEW; END IF;"
    "  EXECUTE format('UPDATE %I SET uplink_dropped_activities ="
    "   (SELECT coalesce(sum(activities), 0)::bigint FROM %I"
    "     WHERE node_id = $1 AND pid = $2 AND start_monotonic_ns = $3)"
    "   WHERE node_id = $1 AND pid = $2 AND start_monotonic_ns = $3',"
    "   processes_here, TG_TABLE_NAME) USING d.node_id, d.pid, d.start_monotonic_ns;"
    "  RETURN NULL;"
    " END $$",
    "CREATE OR REPLACE FUNCTION vigil_process_uplink_dropped() RETURNS trigger"
    " LANGUAGE plpgsql SET citus.enable_manual_changes_to_shards = on AS $$"
    " DECLARE"
    "  drops_here text := (SELECT shard_name('uplink_drops'::regclass, shardid)"
    "                        FROM pg_dist_shard WHERE logicalrelid = 'uplink_drops'::regclass);"
    " BEGIN"
    "  EXECUTE format('SELECT coalesce(sum(activities), 0)::bigint FROM %I"
    "   WHERE node_id = $1 AND pid = $2 AND start_monotonic_ns = $3', drops_here)"
    "   INTO NEW.uplink_dropped_activities USING NEW.node_id, NEW.pid, NEW.start_monotonic_ns;"
    "  RETURN NEW;"
    " END $$",
};

/* The tables of the schema that stay on the coordinator alone. */
static const char *const coordinator_tables[] = {"vigil_schema_migrations"};

static gboolean run(PGconn *db, const char *sql, GError **error)
{
    PGresult *result = PQexec(db, sql);
    ExecStatusType status = PQresultStatus(result);
    gboolean ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
    if (!ok) {
        char *text = vigil_warehouse_one_line(PQresultErrorMessage(result));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION,
                    "laying the warehouse out on Citus failed at \"%s\": %s", sql, text);
        g_free(text);
    }
    PQclear(result);
    return ok;
}

/* The rows of `sql` (one column) as a set of strings; NULL on error. */
static GHashTable *column_set(PGconn *db, const char *sql, GError **error)
{
    PGresult *result = PQexec(db, sql);
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
        char *text = vigil_warehouse_one_line(PQresultErrorMessage(result));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "reading the warehouse's tables failed: %s", text);
        g_free(text);
        PQclear(result);
        return NULL;
    }
    GHashTable *set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int i = 0; i < PQntuples(result); i++)
        g_hash_table_add(set, g_strdup(PQgetvalue(result, i, 0)));
    PQclear(result);
    return set;
}

static const struct citus_layout_row *row_of(const char *table)
{
    for (size_t i = 0; i < G_N_ELEMENTS(layout); i++)
        if (strcmp(layout[i].table, table) == 0)
            return &layout[i];
    return NULL;
}

/* Every table of the schema has a row (or stays on the coordinator). */
static gboolean every_table_has_a_row(PGconn *db, GError **error)
{
    GHashTable *tables =
        column_set(db,
                   "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace"
                   " AND c.relkind IN ('r', 'p') AND NOT c.relispartition",
                   error);
    if (tables == NULL)
        return FALSE;
    GHashTableIter it;
    gpointer table;
    gboolean ok = TRUE;
    g_hash_table_iter_init(&it, tables);
    while (ok && g_hash_table_iter_next(&it, &table, NULL)) {
        if (row_of(table) == NULL &&
            !g_strv_contains((const char *const *)coordinator_tables, table)) {
            g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION,
                        "table %s has no place in the Citus layout (warehouse/warehouse_citus.c): "
                        "give it a row there",
                        (const char *)table);
            ok = FALSE;
        }
    }
    g_hash_table_destroy(tables);
    return ok;
}

/* The foreign keys touching the tables still to lay out: dropped now, their
 * definitions kept in `remade` ("ALTER TABLE … ADD CONSTRAINT …"). */
static gboolean drop_foreign_keys(PGconn *db, GPtrArray *remade, GError **error)
{
    PGresult *result =
        PQexec(db, "SELECT c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)"
                   " FROM pg_constraint c WHERE c.contype = 'f'"
                   " AND c.connamespace = 'public'::regnamespace AND NOT EXISTS (SELECT 1 FROM"
                   " pg_dist_partition p WHERE p.logicalrelid IN (c.conrelid, c.confrelid))");
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
        char *text = vigil_warehouse_one_line(PQresultErrorMessage(result));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "reading the warehouse's foreign keys failed: %s", text);
        g_free(text);
        PQclear(result);
        return FALSE;
    }
    gboolean ok = TRUE;
    for (int i = 0; ok && i < PQntuples(result); i++) {
        const char *table = PQgetvalue(result, i, 0), *name = PQgetvalue(result, i, 1);
        char *drop = g_strdup_printf("ALTER TABLE %s DROP CONSTRAINT %s", table, name);
        ok = run(db, drop, error);
        g_free(drop);
        if (!g_strv_contains((const char *const *)refused_foreign_keys, name))
            g_ptr_array_add(remade, g_strdup_printf("ALTER TABLE %s ADD CONSTRAINT %s %s", table,
                                                    name, PQgetvalue(result, i, 2)));
    }
    PQclear(result);
    return ok;
}

static gboolean lay_out(PGconn *db, const struct citus_layout_row *row, GError **error)
{
    if (row->before != NULL && !run(db, row->before, error))
        return FALSE;
    char *sql = row->distribution_column == NULL
                    ? g_strdup_printf("SELECT create_reference_table('%s')", row->table)
                    : g_strdup_printf("SELECT create_distributed_table('%s', '%s', "
                                      "colocate_with => '%s')",
                                      row->table, row->distribution_column, row->colocate_with);
    gboolean ok = run(db, sql, error);
    g_free(sql);
    return ok;
}

gboolean vigil_warehouse_citus_layout(PGconn *db, guint *laid_out, GError **error)
{
    *laid_out = 0;
    GHashTable *citus = column_set(db, "SELECT 1 FROM pg_extension WHERE extname = 'citus'", error);
    if (citus == NULL)
        return FALSE;
    gboolean has_citus = g_hash_table_size(citus) > 0;
    g_hash_table_destroy(citus);
    if (!has_citus) {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION,
                    "the database has no Citus (CREATE EXTENSION citus on the coordinator and "
                    "every worker, and citus_add_node for each worker): it cannot be laid out "
                    "for [warehouse] distributed = citus");
        return FALSE;
    }
    if (!every_table_has_a_row(db, error))
        return FALSE;
    GHashTable *done =
        column_set(db, "SELECT logicalrelid::regclass::text FROM pg_dist_partition", error);
    if (done == NULL)
        return FALSE;
    GPtrArray *remade = g_ptr_array_new_with_free_func(g_free);
    /* Triggers (uplink_drops → processes) are allowed on distributed tables
     * only with this: they touch co-located or reference rows. Foreign keys
     * to reference tables made in the transaction that made shards want one
     * connection per worker. */
    gboolean ok = run(db,
                      "BEGIN; SET LOCAL citus.enable_unsafe_triggers = on;"
                      " SET LOCAL client_min_messages = warning;"
                      " SET LOCAL citus.multi_shard_modify_mode = sequential",
                      error) &&
                  drop_foreign_keys(db, remade, error);
    for (size_t i = 0; ok && i < G_N_ELEMENTS(layout); i++) {
        if (g_hash_table_contains(done, layout[i].table))
            continue;
        ok = lay_out(db, &layout[i], error);
        if (ok)
            (*laid_out)++;
    }
    for (guint i = 0; ok && i < remade->len; i++)
        ok = run(db, g_ptr_array_index(remade, i), error);
    for (size_t i = 0; ok && i < G_N_ELEMENTS(after_layout); i++)
        ok = run(db, after_layout[i], error);
    ok = ok && run(db, "COMMIT", error);
    if (!ok) {
        PQclear(PQexec(db, "ROLLBACK"));
        *laid_out = 0;
    }
    g_ptr_array_unref(remade);
    g_hash_table_destroy(done);
    return ok;
}
