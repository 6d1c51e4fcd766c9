/* vigil runs: lists the runs stored in the warehouse, newest first.
 *
 *   vigil runs [--config FILE] [--limit N] [--job ID] [--user NAME|UID]
 *              [--since TIME] [--format text|json]
 *
 * One row a run, from the warehouse's run_overview view (schema/0001):
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
#include <json-glib/json-glib.h>

#include "commands.h"
#include "report_job_energy.h" /* vigil_cli_job_id_valid */
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
 * formats them, so the output does not depend on its time zone. */
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

enum column {
    COL_RUN_ID,
    COL_RUN_KEY,
    COL_JOB,
    COL_UID,
    COL_PROGRAM,
    COL_START_UTC,
    COL_START_TIME,
    COL_DURATION_S,
    COL_EXIT_STATUS,
    COL_PROCESSES,
    COL_BYTES_READ,
    COL_BYTES_WRITTEN,
    COL_ENERGY_J,
};

/* --user: a name or a uid, as the uid the warehouse stores. */
static gboolean parse_user(const char *user, char uid_text[24], GError **error)
{
    if (cli_is_number(user)) {
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

/* The user's name for `uid_text`, or the number when this machine does
 * not know it. */
static char *user_name(const char *uid_text)
{
    const struct passwd *pw = getpwuid((uid_t)g_ascii_strtoull(uid_text, NULL, 10));
    return g_strdup(pw != NULL ? pw->pw_name : uid_text);
}

static char *format_duration(const PGresult *result, int row)
{
    if (PQgetisnull(result, row, COL_DURATION_S))
        return g_strdup("running");
    double s = g_ascii_strtod(PQgetvalue(result, row, COL_DURATION_S), NULL);
    if (s < 60)
        return g_strdup_printf("%.3f s", s);
    guint64 whole = (guint64)(s + 0.5);
    if (whole < 3600)
        return g_strdup_printf("%um%02us", (unsigned)(whole / 60), (unsigned)(whole % 60));
    return g_strdup_printf("%uh%02um%02us", (unsigned)(whole / 3600), (unsigned)(whole / 60 % 60),
                           (unsigned)(whole % 60));
}

static char *format_bytes(const PGresult *result, int row, int column)
{
    if (PQgetisnull(result, row, column))
        return g_strdup("n/a");
    return g_format_size_full(g_ascii_strtoull(PQgetvalue(result, row, column), NULL, 10),
                              G_FORMAT_SIZE_IEC_UNITS);
}

static char *text_or(const PGresult *result, int row, int column, const char *null_text)
{
    return g_strdup(PQgetisnull(result, row, column) ? null_text : PQgetvalue(result, row, column));
}

enum { TEXT_COLUMNS = 12 };

static void print_text(const PGresult *result)
{
    static const char *const headers[TEXT_COLUMNS] = {
        "RUN",      "KEY",  "JOB",   "USER", "PROGRAM", "START (UTC)",
        "DURATION", "EXIT", "PROCS", "READ", "WRITTEN", "ENERGY"};
    int rows = PQntuples(result);
    char ***cells = g_new0(char **, rows);
    size_t widths[TEXT_COLUMNS];
    for (int c = 0; c < TEXT_COLUMNS; c++)
        widths[c] = g_utf8_strlen(headers[c], -1);
    for (int i = 0; i < rows; i++) {
        char **row = cells[i] = g_new0(char *, TEXT_COLUMNS + 1);
        row[0] = text_or(result, i, COL_RUN_ID, "");
        row[1] = text_or(result, i, COL_RUN_KEY, "-");
        row[2] = text_or(result, i, COL_JOB, "-");
        row[3] = user_name(PQgetvalue(result, i, COL_UID));
        row[4] = text_or(result, i, COL_PROGRAM, "");
        row[5] = text_or(result, i, COL_START_UTC, "");
        row[6] = format_duration(result, i);
        row[7] = text_or(result, i, COL_EXIT_STATUS, "-");
        row[8] = text_or(result, i, COL_PROCESSES, "0");
        row[9] = format_bytes(result, i, COL_BYTES_READ);
        row[10] = format_bytes(result, i, COL_BYTES_WRITTEN);
        row[11] = PQgetisnull(result, i, COL_ENERGY_J)
                      ? g_strdup("n/a")
                      : g_strdup_printf("%.2f J",
                                        g_ascii_strtod(PQgetvalue(result, i, COL_ENERGY_J), NULL));
        for (int c = 0; c < TEXT_COLUMNS; c++)
            widths[c] = MAX(widths[c], (size_t)g_utf8_strlen(row[c], -1));
    }
    for (int i = -1; i < rows; i++) {
        GString *line = g_string_new(NULL);
        for (int c = 0; c < TEXT_COLUMNS; c++) {
            const char *cell = i < 0 ? headers[c] : cells[i][c];
            size_t pad = widths[c] - (size_t)g_utf8_strlen(cell, -1);
            /* Numbers to the right, words to the left; no trailing blanks. */
            gboolean right = c == 0 || c >= 6;
            if (c > 0)
                g_string_append(line, "  ");
            if (right)
                for (size_t k = 0; k < pad; k++)
                    g_string_append_c(line, ' ');
            g_string_append(line, cell);
            if (!right && c < TEXT_COLUMNS - 1)
                for (size_t k = 0; k < pad; k++)
                    g_string_append_c(line, ' ');
        }
        puts(line->str);
        g_string_free(line, TRUE);
    }
    for (int i = 0; i < rows; i++)
        g_strfreev(cells[i]);
    g_free(cells);
}

static void add_number_or_null(JsonBuilder *b, const char *name, const PGresult *result, int row,
                               int column, gboolean integer)
{
    json_builder_set_member_name(b, name);
    if (PQgetisnull(result, row, column))
        json_builder_add_null_value(b);
    else if (integer)
        json_builder_add_int_value(b, g_ascii_strtoll(PQgetvalue(result, row, column), NULL, 10));
    else
        json_builder_add_double_value(b, g_ascii_strtod(PQgetvalue(result, row, column), NULL));
}

static void add_text_or_null(JsonBuilder *b, const char *name, const PGresult *result, int row,
                             int column)
{
    json_builder_set_member_name(b, name);
    if (PQgetisnull(result, row, column))
        json_builder_add_null_value(b);
    else
        json_builder_add_string_value(b, PQgetvalue(result, row, column));
}

/* A JSON array of runs, with the names of the web API's RUN object
 * (docs/web-api.md) where they mean the same. */
static void print_json(const PGresult *result)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_array(b);
    for (int i = 0; i < PQntuples(result); i++) {
        json_builder_begin_object(b);
        add_number_or_null(b, "run_id", result, i, COL_RUN_ID, TRUE);
        add_text_or_null(b, "run_key", result, i, COL_RUN_KEY);
        add_text_or_null(b, "job", result, i, COL_JOB);
        add_number_or_null(b, "uid", result, i, COL_UID, TRUE);
        const struct passwd *pw =
            getpwuid((uid_t)g_ascii_strtoull(PQgetvalue(result, i, COL_UID), NULL, 10));
        json_builder_set_member_name(b, "user");
        if (pw != NULL)
            json_builder_add_string_value(b, pw->pw_name);
        else
            json_builder_add_null_value(b);
        add_text_or_null(b, "program", result, i, COL_PROGRAM);
        add_text_or_null(b, "start_time", result, i, COL_START_TIME);
        add_number_or_null(b, "duration_s", result, i, COL_DURATION_S, FALSE);
        add_number_or_null(b, "exit_status", result, i, COL_EXIT_STATUS, TRUE);
        add_number_or_null(b, "processes", result, i, COL_PROCESSES, TRUE);
        add_number_or_null(b, "bytes_read", result, i, COL_BYTES_READ, TRUE);
        add_number_or_null(b, "bytes_written", result, i, COL_BYTES_WRITTEN, TRUE);
        add_number_or_null(b, "energy_j", result, i, COL_ENERGY_J, FALSE);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    JsonGenerator *gen = json_generator_new();
    JsonNode *root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    json_generator_set_pretty(gen, TRUE);
    char *text = json_generator_to_data(gen, NULL);
    puts(text);
    g_free(text);
    json_node_unref(root);
    g_object_unref(gen);
    g_object_unref(b);
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
        cli_warehouse_set_error(db, result, "cannot read the warehouse's runs", error);
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
    if (o->format != NULL && strcmp(o->format, "text") != 0 && strcmp(o->format, "json") != 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--format %s: expected text or json", o->format);
        return FALSE;
    }
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
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &o.config_path,
         "Configuration file ([warehouse] conninfo); default: $VIGIL_CONFIG, "
         "else " VIGIL_SYSCONF_DIR
         "/vigil.conf if it exists, else libpq's environment (PGHOST, PGSERVICE and the like)",
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
    GOptionContext *context = g_option_context_new(NULL);
    g_option_context_set_summary(context,
                                 "Lists the runs stored in the warehouse, newest first: number "
                                 "and key (for `vigil report`), job, user, program, start (UTC), "
                                 "duration, exit status, processes, bytes read and written, "
                                 "energy.");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    int status = VIGIL_EXIT_USAGE;
    PGconn *db = NULL;
    PGresult *result = NULL;
    char *conninfo = NULL;
    char uid_text[24];

    if (!g_option_context_parse(context, &argc, &argv, &error) || !check_options(&o, &error) ||
        (o.user != NULL && !parse_user(o.user, uid_text, &error))) {
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
        print_json(result);
    else if (PQntuples(result) == 0)
        fprintf(stderr, "vigil runs: no stored run%s\n",
                o.job || o.user || o.since ? " matches" : "s yet");
    else
        print_text(result);
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
    g_option_context_free(context);
    return status;
}
