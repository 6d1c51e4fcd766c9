/* vigil runs — printing the runs (see runs_output.h). */
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <glib.h>
#include <json-glib/json-glib.h>

#include "runs_output.h"
#include "vigil/json_members.h"

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

void vigil_cli_runs_print_text(const PGresult *result)
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
    vigil_json_string(b, name,
                      PQgetisnull(result, row, column) ? NULL : PQgetvalue(result, row, column));
}

void vigil_cli_runs_print_json(const PGresult *result)
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
        vigil_json_string(b, "user", pw != NULL ? pw->pw_name : NULL);
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
    char *text = vigil_json_builder_text(b, TRUE);
    puts(text);
    g_free(text);
}
