/* vigil runs: lists the runs stored in the warehouse, newest first.
 *
 *   vigil runs [--config FILE] [--limit N] [--job ID] [--user NAME|UID]
 *              [--since TIME] [--format text|json]
 *
 * One row a run, from the warehouse's run_overview view (warehouse/migrations/0001):
 * its number and key (what `vigil report` takes), the scheduler job, the
 * user, the program, start (UTC), duration, exit status, processes, bytes
 * read and written, energy when known. Read-only, and every value the user
 * gives is a query parameter. The connection string comes from [warehouse]
 * conninfo, else libpq's environment, as for `vigil report`. */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libpq-fe.h>

#include "commands.h"
#include "job_energy_views.h" /* vigil_cli_job_id_valid */
#include "runs_output.h"
#include "vigil-build.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

enum { DEFAULT_LIMIT = 20, MAX_LIMIT = 100000 };

struct runs_options {
    char *config_path;
    gint limit;
    char *job;
    char *user;
    char *since;
    char *format;
};

/* $1 job, $2 uid, $3 a time, $4 an age (interval back from now), $5 the
 * limit; NULL parameters do not filter. Times in UTC, as the server
 * formats them, so the output does not depend on its time zone. The
 * columns are runs_output.h's enum vigil_cli_runs_column, in order. */
static const char runs_sql[] =
    "SELECT run_id, run_key, scheduler_job_id, uid, program,"
    "       to_char(start_time AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS start_utc,"
    "       to_char(start_time AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
    "         AS start_time,"
    "       extract(epoch FROM end_time - start_time)::float8 AS duration_s, exit_status,"
    "       processes, bytes_read, bytes_written, energy_j"
    "  FROM run_overview"
    " WHERE ($1::text IS NULL OR scheduler_job_id = $1)"
    "   AND ($2::bigint IS NULL OR uid = $2::bigint)"
    "   AND ($3::timestamptz IS NULL OR start_time >= $3::timestamptz)"
    "   AND ($4::interval IS NULL OR start_time >= now() - $4::interval)"
    " ORDER BY start_time DESC, run_id DESC"
    " LIMIT $5::bigint";

/* --user: a name or a uid, as the uid the warehouse stores. */
static gboolean parse_user(const char *user, char uid_text[24], GError **error)
{
    if (vigil_warehouse_is_row_number(user)) {
        g_strlcpy(uid_text, user, 24);
        return TRUE;
    }
    const struct passwd *pw = getpwnam(user);
    if (pw == NULL) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--user %s: no such user on this machine (give the uid instead)", user);
        return FALSE;
    }
    g_snprintf(uid_text, 24, "%lu", (unsigned long)pw->pw_uid);
    return TRUE;
}

/* --since: "2 days", "12h" (an age, back from now: a number then a unit)
 * or a time PostgreSQL reads ("2026-11-20", "2026-11-20 10:00Z"). */
static gboolean is_age(const char *since)
{
    const char *p = since;
    while (g_ascii_isdigit(*p))
        p++;
    while (*p == ' ')
        p++;
    return p != since && g_ascii_isalpha(*p);
}

/* The runs, or NULL with error set: a --since PostgreSQL cannot read is
 * the user's (usage), anything else the warehouse's. */
static PGresult *query_runs(PGconn *db, const struct runs_options *o, const char *uid_text,
                            int *status, GError **error)
{
    char limit_text[16];
    g_snprintf(limit_text, sizeof limit_text, "%d", o->limit);
    gboolean age = o->since != NULL && is_age(o->since);
    const char *const params[] = {o->job, uid_text, o->since && !age ? o->since : NULL,
                                  age ? o->since : NULL, limit_text};
    PGresult *result = PQexecParams(db, runs_sql, 5, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(result) == PGRES_TUPLES_OK)
        return result;
    const char *state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
    if (o->since != NULL && state != NULL && strncmp(state, "22", 2) == 0) {
        /* Class 22, data exception: the one text we pass to a cast. */
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--since %s: expected a time (2026-11-20, 2026-11-20 10:00Z) or an age "
                    "(2 days, 12h): %s",
                    o->since, PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY));
        *status = VIGIL_EXIT_USAGE;
    } else {
        vigil_warehouse_set_read_error(db, result, "cannot read the warehouse's runs", error);
        *status = VIGIL_EXIT_FAILURE;
    }
    PQclear(result);
    return NULL;
}

static gboolean check_options(const struct runs_options *o, GError **error)
{
    if (o->limit < 1 || o->limit > MAX_LIMIT) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--limit %d: expected a number of runs from 1 to %d", o->limit, MAX_LIMIT);
        return FALSE;
    }
    gboolean json;
    if (!vigil_cli_format_is_json(o->format, &json, error))
        return FALSE;
    if (o->job != NULL && !vigil_cli_job_id_valid(o->job)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--job %s: a scheduler job id is letters, digits and ._+- (at most 128)",
                    o->job);
        return FALSE;
    }
    return TRUE;
}

int vigil_cli_runs(int argc, char **argv)
{
    struct runs_options o = {.limit = DEFAULT_LIMIT};
    GOptionEntry entries[] = {
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &o.config_path, VIGIL_CLI_WAREHOUSE_CONFIG_HELP,
         "FILE"},
        {"limit", 'n', 0, G_OPTION_ARG_INT, &o.limit, "At most N runs, the newest (default 20)",
         "N"},
        {"job", 'j', 0, G_OPTION_ARG_STRING, &o.job, "Only the runs of this scheduler job", "ID"},
        {"user", 'u', 0, G_OPTION_ARG_STRING, &o.user, "Only this user's runs", "NAME|UID"},
        {"since", 's', 0, G_OPTION_ARG_STRING, &o.since,
         "Only runs started since TIME (2026-11-20, 2026-11-20 10:00Z) or in the last AGE "
         "(2 days, 12h)",
         "TIME|AGE"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &o.format, "text (the default) or json", "FORMAT"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = NULL,
        .summary = "Lists the runs stored in the warehouse, newest first: number "
                   "and key (for `vigil report`), job, user, program, start (UTC), "
                   "duration, exit status, processes, bytes read and written, "
                   "energy.",
    };
    GError *error = NULL;
    int status = VIGIL_EXIT_USAGE;
    PGconn *db = NULL;
    PGresult *result = NULL;
    char *conninfo = NULL;
    char uid_text[24];

    if (!vigil_cli_parse_options(&help, entries, &argc, &argv, &error) ||
        !check_options(&o, &error) || (o.user != NULL && !parse_user(o.user, uid_text, &error))) {
        fprintf(stderr, "vigil runs: %s\n", error->message);
        goto out;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: vigil runs [--config FILE] [--limit N] [--job ID] "
                        "[--user NAME|UID] [--since TIME|AGE] [--format text|json]\n");
        goto out;
    }
    status = VIGIL_EXIT_FAILURE;
    conninfo = vigil_cli_warehouse_conninfo(o.config_path, &error);
    if (conninfo == NULL || (db = vigil_warehouse_connect(conninfo, &error)) == NULL ||
        (result = query_runs(db, &o, o.user != NULL ? uid_text : NULL, &status, &error)) == NULL) {
        fprintf(stderr, "vigil runs: %s\n", error->message);
        goto out;
    }
    if (o.format != NULL && strcmp(o.format, "json") == 0)
        vigil_cli_runs_print_json(result);
    else if (PQntuples(result) == 0)
        fprintf(stderr, "vigil runs: no stored run%s\n",
                o.job || o.user || o.since ? " matches" : "s yet");
    else
        vigil_cli_runs_print_text(result);
    status = fflush(stdout) == 0 ? VIGIL_EXIT_OK : VIGIL_EXIT_FAILURE;

out:
    g_clear_error(&error);
    if (result != NULL)
        PQclear(result);
    if (db != NULL)
        PQfinish(db);
    g_free(conninfo);
    g_free(o.config_path);
    g_free(o.job);
    g_free(o.user);
    g_free(o.since);
    g_free(o.format);
    return status;
}
