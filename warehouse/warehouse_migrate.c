/* vigil — bringing the warehouse's schema up to date.
 *
 * The database records each migration it has applied, with the SHA-256 of
 * its text, in vigil_schema_migrations. A migration runs in its own
 * transaction together with its record, so a database is always at a whole
 * version: a failure leaves nothing of that migration behind. A session-level
 * advisory lock serialises programs that migrate at the same time (two
 * vigil-txd starting together): the second sees what the first applied. */
#include <stdlib.h>
#include <string.h>

#include "vigil/warehouse.h"
#include "warehouse_migrations.h"
#include "warehouse_query.h"

/* Any fixed number will do, as long as nothing else on the database uses it
 * for another purpose: "vigmig" in ASCII. */
#define MIGRATION_LOCK_KEY "130195078867303"

#define CREATE_RECORD_TABLE                                                                        \
    "CREATE TABLE IF NOT EXISTS vigil_schema_migrations ("                                         \
    " version integer PRIMARY KEY,"                                                                \
    " name text NOT NULL,"                                                                         \
    " sha256 text NOT NULL,"                                                                       \
    " applied_at timestamptz NOT NULL DEFAULT now())"

guint vigil_warehouse_latest_version(void)
{
    return vigil_warehouse_migration_count == 0
               ? 0
               : vigil_warehouse_migrations[vigil_warehouse_migration_count - 1].version;
}

/* PostgreSQL's primary message, with its detail and hint, on one line. */
static char *server_message(const PGconn *db, const PGresult *result)
{
    const char *primary =
        result != NULL ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    if (primary == NULL) /* no answer from the server: libpq's own message */
        return vigil_warehouse_one_line(PQerrorMessage(db));
    GString *text = g_string_new(primary);
    const char *detail = PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL);
    const char *hint = PQresultErrorField(result, PG_DIAG_MESSAGE_HINT);
    const char *context = PQresultErrorField(result, PG_DIAG_CONTEXT);
    const char *state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
    if (detail != NULL)
        g_string_append_printf(text, " (%s)", detail);
    if (hint != NULL)
        g_string_append_printf(text, " (hint: %s)", hint);
    if (context != NULL) /* where inside a function body */
        g_string_append_printf(text, " (context: %s)", context);
    if (state != NULL)
        g_string_append_printf(text, " [SQLSTATE %s]", state);
    char *line = vigil_warehouse_one_line(text->str);
    g_string_free(text, TRUE);
    return line;
}

/* Runs one statement: its result (rows or none), or NULL with error set,
 * saying what it was `doing`, when it fails. */
static PGresult *run_query(PGconn *db, const char *sql, const char *doing, GError **error)
{
    PGresult *result = PQexec(db, sql);
    if (PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK)
        return result;
    char *text = server_message(db, result);
    g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                "the warehouse failed %s: %s", doing, text);
    g_free(text);
    PQclear(result);
    return NULL;
}

/* A statement whose rows, if any, do not matter. */
static gboolean run_command(PGconn *db, const char *sql, const char *doing, GError **error)
{
    PGresult *result = run_query(db, sql, doing, error);
    PQclear(result);
    return result != NULL;
}

gboolean vigil_warehouse_current_version(PGconn *db, guint *version, GError **error)
{
    PGresult *result = run_query(db, "SELECT to_regclass('vigil_schema_migrations') IS NOT NULL",
                                 "looking for vigil_schema_migrations", error);
    if (result == NULL)
        return FALSE;
    gboolean has_table = strcmp(PQgetvalue(result, 0, 0), "t") == 0;
    PQclear(result);
    if (!has_table) {
        *version = 0;
        return TRUE;
    }
    result = run_query(db, "SELECT coalesce(max(version), 0) FROM vigil_schema_migrations",
                       "reading vigil_schema_migrations", error);
    if (result == NULL)
        return FALSE;
    *version = (guint)strtoul(PQgetvalue(result, 0, 0), NULL, 10);
    PQclear(result);
    return TRUE;
}

/* The line of `sql` that PostgreSQL's error position (1-based, in
 * characters) points into; 0 when it gave none. */
static unsigned error_line(const PGresult *result, const char *sql)
{
    const char *position = PQresultErrorField(result, PG_DIAG_STATEMENT_POSITION);
    if (position == NULL)
        return 0;
    long characters = strtol(position, NULL, 10);
    unsigned line = 1;
    const char *p = sql;
    for (long i = 1; i < characters && *p != '\0'; i++, p = g_utf8_next_char(p))
        if (*p == '\n')
            line++;
    return line;
}

/* Checks the recorded migrations against the built-in ones: the database
 * must hold 1…N, each with the text we have, and nothing we do not know.
 * *recorded gets N. */
static gboolean check_recorded(PGconn *db, guint *recorded, GError **error)
{
    PGresult *rows = run_query(db,
                               "SELECT version, name, sha256 FROM vigil_schema_migrations"
                               " ORDER BY version",
                               "reading vigil_schema_migrations", error);
    if (rows == NULL)
        return FALSE;
    gboolean ok = TRUE;
    guint latest = vigil_warehouse_latest_version();
    int n = PQntuples(rows);
    for (int i = 0; i < n && ok; i++) {
        long version = strtol(PQgetvalue(rows, i, 0), NULL, 10);
        const char *name = PQgetvalue(rows, i, 1), *sha256 = PQgetvalue(rows, i, 2);
        if (version > (long)latest) {
            g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION,
                        "the warehouse's schema is at version %ld (migration %s), newer than "
                        "this vigil knows (version %u): upgrade vigil before using it",
                        (long)strtol(PQgetvalue(rows, n - 1, 0), NULL, 10),
                        PQgetvalue(rows, n - 1, 1), latest);
            ok = FALSE;
        } else if (version != i + 1) {
            /* Applying the missing ones after later ones would not give
             * the schema any version describes. */
            g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION,
                        "vigil_schema_migrations records migration %ld (%s) but not %d: the "
                        "table was edited by hand",
                        version, name, i + 1);
            ok = FALSE;
        } else {
            const struct vigil_warehouse_migration *built_in = &vigil_warehouse_migrations[i];
            if (strcmp(name, built_in->name) != 0 || strcmp(sha256, built_in->sha256) != 0) {
                g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION,
                            "migration %s was changed after it was applied (the warehouse "
                            "recorded %s with SHA-256 %s, this vigil has %s with %s): a "
                            "migration that was applied is never edited, add a new one",
                            built_in->name, name, sha256, built_in->name, built_in->sha256);
                ok = FALSE;
            }
        }
    }
    PQclear(rows);
    *recorded = (guint)n;
    return ok;
}

/* Applies one migration with its record in one transaction. */
static gboolean apply(PGconn *db, const struct vigil_warehouse_migration *m, GError **error)
{
    if (!run_command(db, "BEGIN", "to begin a transaction", error))
        return FALSE;
    PGresult *result = PQexec(db, m->sql);
    ExecStatusType status = PQresultStatus(result);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
        PQclear(result);
        char version[16];
        g_snprintf(version, sizeof version, "%u", m->version);
        const char *const params[] = {version, m->name, m->sha256};
        result = PQexecParams(db,
                              "INSERT INTO vigil_schema_migrations (version, name, sha256)"
                              " VALUES ($1, $2, $3)",
                              3, NULL, params, NULL, NULL, 0);
        status = PQresultStatus(result);
        if (status == PGRES_COMMAND_OK) {
            PQclear(result);
            result = PQexec(db, "COMMIT");
            status = PQresultStatus(result);
            if (status == PGRES_COMMAND_OK) {
                PQclear(result);
                return TRUE;
            }
        }
    }
    char *text = server_message(db, result);
    unsigned line = error_line(result, m->sql);
    char *where = line > 0 ? g_strdup_printf(" at line %u of %s.sql", line, m->name) : g_strdup("");
    g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION,
                "migration %s failed%s: %s; nothing of it was applied", m->name, where, text);
    g_free(where);
    g_free(text);
    PQclear(result);
    /* Fails too when the connection is gone, and then the server has
     * rolled back already. */
    PQclear(PQexec(db, "ROLLBACK"));
    return FALSE;
}

gboolean vigil_warehouse_migrate(PGconn *db, guint *applied, GError **error)
{
    guint count = 0;
    if (applied != NULL)
        *applied = 0;
    if (!run_command(db, "SELECT pg_advisory_lock(" MIGRATION_LOCK_KEY ")",
                     "to take the migration lock", error))
        return FALSE;
    guint recorded = 0;
    gboolean ok =
        run_command(db, CREATE_RECORD_TABLE, "to create vigil_schema_migrations", error) &&
        check_recorded(db, &recorded, error);
    for (size_t i = recorded; ok && i < vigil_warehouse_migration_count; i++) {
        ok = apply(db, &vigil_warehouse_migrations[i], error);
        if (ok) {
            count++;
            g_info("applied migration %s: the warehouse's schema is at version %u",
                   vigil_warehouse_migrations[i].name, vigil_warehouse_migrations[i].version);
        }
    }
    /* An error above is what matters; a lost connection released the lock. */
    PQclear(PQexec(db, "SELECT pg_advisory_unlock(" MIGRATION_LOCK_KEY ")"));
    if (applied != NULL)
        *applied = count;
    return ok;
}
