/* vigil — day partitions: made ahead of time, dropped when expired.
 *
 * Making a partition takes an ACCESS EXCLUSIVE lock on its table, which
 * would stop every ingest transaction behind it; dropping one does too. So
 * neither happens inside an ingest transaction: each is a statement of its
 * own, made under the session's lock_timeout by whoever calls. The SQL of
 * the partitions themselves is migration 2's (vigil_day_partition,
 * vigil_partition_bounds). */
#include <string.h>

#include "vigil/warehouse.h"
#include "warehouse_query.h"

const char *const vigil_warehouse_day_tables[VIGIL_WAREHOUSE_DAY_TABLES] = {
    "activities",      "statistics_rollup_arrays", "window_statistics_arrays",
    "reasoner_states", "statistics_level_blocks",  "ingested_batches",
};
/* Derived from statistics_rollup_arrays (migration 15), so a batch's claim
 * need not outlive them. */
enum { LEVEL_BLOCKS = 4 };

static void set_query_error(GError **error, PGconn *db, const PGresult *result, const char *what)
{
    const char *message = result != NULL && PQresultErrorMessage(result)[0] != '\0'
                              ? PQresultErrorMessage(result)
                              : PQerrorMessage(db);
    const char *state = result != NULL ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : NULL;
    char *text = vigil_warehouse_one_line(message);
    g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY, "%s (%s): %s", what,
                state != NULL ? state : "no SQLSTATE", text);
    g_free(text);
}

/* `day_sql` is a date expression of $2. */
static gboolean make_partition(PGconn *db, const char *table, const char *day_sql,
                               const char *day_param, gboolean *created, GError **error)
{
    char *sql = g_strdup_printf("SELECT vigil_day_partition($1, %s)", day_sql);
    const char *values[] = {table, day_param};
    PGresult *result = PQexecParams(db, sql, 2, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) == 1;
    if (!ok) {
        char *what = g_strdup_printf("making the partition of %s for a day", table);
        set_query_error(error, db, result, what);
        g_free(what);
    } else if (created != NULL) {
        *created = strcmp(PQgetvalue(result, 0, 0), "t") == 0;
    }
    PQclear(result);
    g_free(sql);
    return ok;
}

gboolean vigil_warehouse_day_partition(PGconn *db, const char *table, gint64 day, gboolean *created,
                                       GError **error)
{
    char day_text[32];
    g_snprintf(day_text, sizeof day_text, "%" G_GINT64_FORMAT, day);
    return make_partition(db, table, "'1970-01-01'::date + $2::integer", day_text, created, error);
}

gboolean vigil_warehouse_maintain(PGconn *db, guint ahead_days, guint *created, GError **error)
{
    guint made = 0;
    /* From yesterday: what a node sends just after midnight is mostly of
     * the day before. */
    for (gint offset = -1; offset <= (gint)ahead_days; offset++) {
        char offset_text[16];
        g_snprintf(offset_text, sizeof offset_text, "%d", offset);
        for (unsigned t = 0; t < VIGIL_WAREHOUSE_DAY_TABLES; t++) {
            gboolean one = FALSE;
            /* The database's today: its clock is the one the rows' times
             * are compared with. */
            if (!make_partition(db, vigil_warehouse_day_tables[t],
                                "(now() AT TIME ZONE 'UTC')::date + $2::integer", offset_text, &one,
                                error)) {
                if (created != NULL)
                    *created = made;
                return FALSE;
            }
            made += one ? 1 : 0;
        }
    }
    if (created != NULL)
        *created = made;
    return TRUE;
}

guint vigil_warehouse_batches_retention(const struct vigil_warehouse_retention *r)
{
    guint days = r->days[VIGIL_WAREHOUSE_DAY_TABLES - 1];
    if (days == 0)
        return 0;
    for (unsigned t = 0; t + 1 < VIGIL_WAREHOUSE_DAY_TABLES; t++) {
        if (t == LEVEL_BLOCKS)
            continue;
        if (r->days[t] == 0)
            return 0;
        days = MAX(days, r->days[t]);
    }
    return days;
}

void vigil_warehouse_expired_free(gpointer data)
{
    struct vigil_warehouse_expired *e = data;
    g_free(e->table);
    g_free(e->partition);
    g_free(e->until);
    g_free(e);
}

/* The partitions of `table` whose upper bound is at most `days` days
 * before today (UTC), oldest first. */
static gboolean list_expired(PGconn *db, const char *table, guint days, GPtrArray *out,
                             GError **error)
{
    static const char sql[] =
        "SELECT c.relname, to_char(b.upper_bound AT TIME ZONE 'UTC', 'YYYY-MM-DD') "
        "FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid, "
        "vigil_partition_bounds(c.oid::regclass) b WHERE i.inhparent = $1::regclass "
        "AND b.upper_bound <= (((now() AT TIME ZONE 'UTC')::date - $2::integer)::timestamp "
        "AT TIME ZONE 'UTC') ORDER BY b.upper_bound";
    char days_text[16];
    g_snprintf(days_text, sizeof days_text, "%u", days);
    const char *values[] = {table, days_text};
    PGresult *result = PQexecParams(db, sql, 2, NULL, values, NULL, NULL, 0);
    gboolean ok = PQresultStatus(result) == PGRES_TUPLES_OK;
    if (!ok) {
        char *what = g_strdup_printf("listing the partitions of %s", table);
        set_query_error(error, db, result, what);
        g_free(what);
    }
    for (int i = 0; ok && i < PQntuples(result); i++) {
        struct vigil_warehouse_expired *e = g_new0(struct vigil_warehouse_expired, 1);
        e->table = g_strdup(table);
        e->partition = g_strdup(PQgetvalue(result, i, 0));
        e->until = g_strdup(PQgetvalue(result, i, 1));
        g_ptr_array_add(out, e);
    }
    PQclear(result);
    return ok;
}

/* Drops (or, dry, lists) the partitions of `table` older than `days`. */
static gboolean prune_table(PGconn *db, const char *table, guint days, gboolean dry_run,
                            GPtrArray *out, GError **error)
{
    guint first = out->len;
    if (!list_expired(db, table, days, out, error))
        return FALSE;
    for (guint i = first; !dry_run && i < out->len; i++) {
        const struct vigil_warehouse_expired *e = g_ptr_array_index(out, i);
        char *quoted = PQescapeIdentifier(db, e->partition, strlen(e->partition));
        char *sql = g_strdup_printf("DROP TABLE %s", quoted);
        PQfreemem(quoted);
        PGresult *result = PQexec(db, sql);
        gboolean ok = PQresultStatus(result) == PGRES_COMMAND_OK;
        if (!ok) {
            char *what = g_strdup_printf("dropping %s", e->partition);
            set_query_error(error, db, result, what);
            g_free(what);
            /* What was not dropped is not reported as dropped. */
            g_ptr_array_set_size(out, i);
        }
        PQclear(result);
        g_free(sql);
        if (!ok)
            return FALSE;
    }
    return TRUE;
}

gboolean vigil_warehouse_prune(PGconn *db, const struct vigil_warehouse_retention *r,
                               gboolean dry_run, GPtrArray *out, GError **error)
{
    /* Day tables whose days come and go with a day table's (migration 14:
     * activities' per-second counts, made by vigil_day_partition with
     * activities' days). */
    static const char *const follower[VIGIL_WAREHOUSE_DAY_TABLES] = {"activity_seconds"};
    for (unsigned t = 0; t < VIGIL_WAREHOUSE_DAY_TABLES; t++) {
        guint days =
            t + 1 == VIGIL_WAREHOUSE_DAY_TABLES ? vigil_warehouse_batches_retention(r) : r->days[t];
        if (days == 0)
            continue;
        if (!prune_table(db, vigil_warehouse_day_tables[t], days, dry_run, out, error) ||
            (follower[t] != NULL && !prune_table(db, follower[t], days, dry_run, out, error)))
            return FALSE;
    }
    return TRUE;
}
