/* vigil — `vigil report --job ID` (report_job.h). The text keeps the
 * report's layout (a 27-column name, then the value); its first line is
 * JOB and its last the job's energy line, as the report of a run has it.
 *
 *   JOB                        4242
 *   USER                       alice (uid 1000)
 *   NODE_LIST                  node[01-02]
 *   HOSTS                      node01,node02
 *   BEGIN                      2026-11-26T10:00:00.000000Z
 *   END                        2026-11-26T10:02:03.500000Z
 *   STEP 0                     ior on node01,node02, 64 ranks, read 1.0 GiB …
 *   JOB_TOTAL                  2 steps, 3 runs, 130 processes, read …
 *   JOB_ENERGY_JOULE           …
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-glib/json-glib.h>

#include "report_job.h"
#include "job_energy_views.h"
#include "vigil/json_members.h"
#include "vigil/report.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

#define UTC_TEXT(column)                                                                           \
    "to_char(" column " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

static const char summary_sql[] =
    "SELECT user_name, uid, node_list, coalesce(hosts, ''), " UTC_TEXT("begin_time") ", " UTC_TEXT(
        "end_time") ", steps, runs, processes, bytes_read, bytes_written, "
                    "extract(epoch FROM end_time - begin_time) "
                    "FROM job_summary WHERE scheduler_job_id = $1";

static const char runs_sql[] =
    "SELECT step_id, run_key, program, coalesce(hosts, ''), processes, ranks, bytes_read, "
    "bytes_written, extract(epoch FROM end_time - start_time), energy_j, energy_complete, "
    "energy_estimated FROM job_runs WHERE scheduler_job_id = $1 ORDER BY start_time, run_id";

/* A column's text, or NULL when it is NULL. */
static const char *value(const PGresult *r, int row, int column)
{
    return PQgetisnull(r, row, column) ? NULL : PQgetvalue(r, row, column);
}

static gint64 int_value(const PGresult *r, int row, int column)
{
    return PQgetisnull(r, row, column) ? 0 : g_ascii_strtoll(PQgetvalue(r, row, column), NULL, 10);
}

static double double_value(const PGresult *r, int row, int column)
{
    return PQgetisnull(r, row, column) ? NAN : g_ascii_strtod(PQgetvalue(r, row, column), NULL);
}

static void line(GString *out, const char *name, const char *text)
{
    g_string_append_printf(out, "%-27s%s\n", name, text);
}

/* "1.0 GiB (1073741824 B)": the exact count for scripts, the rounded one
 * for people (GLib's g_format_size puts a no-break space in it). */
static char *bytes_text(gint64 bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes < 1024)
        return g_strdup_printf("%" G_GINT64_FORMAT " B", bytes);
    double v = (double)bytes / 1024;
    size_t u = 0;
    while (v >= 1024 && u + 1 < G_N_ELEMENTS(units))
        v /= 1024, u++;
    return g_strdup_printf("%.1f %s (%" G_GINT64_FORMAT " B)", v, units[u], bytes);
}

static char *seconds_text(double s)
{
    return isnan(s) ? g_strdup("running") : g_strdup_printf("%.3f s", s);
}

static void text_report(GString *out, const char *job, const PGresult *s, const PGresult *runs,
                        const struct vigil_report_job_energy *energy)
{
    line(out, "JOB", job);
    char *user = value(s, 0, 1) != NULL
                     ? g_strdup_printf("%s (uid %s)", value(s, 0, 0) ? value(s, 0, 0) : "unknown",
                                       value(s, 0, 1))
                     : g_strdup(value(s, 0, 0) ? value(s, 0, 0) : "unknown");
    line(out, "USER", user);
    g_free(user);
    line(out, "NODE_LIST", value(s, 0, 2) != NULL ? value(s, 0, 2) : "unknown");
    line(out, "HOSTS", value(s, 0, 3)[0] != '\0' ? value(s, 0, 3) : "none seen");
    line(out, "BEGIN", value(s, 0, 4) != NULL ? value(s, 0, 4) : "unknown");
    line(out, "END", value(s, 0, 5) != NULL ? value(s, 0, 5) : "not yet");
    for (int i = 0; i < PQntuples(runs); i++) {
        const char *step = value(runs, i, 0);
        char *name = step != NULL ? g_strdup_printf("STEP %s", step)
                                  : g_strdup_printf("RUN %s", value(runs, i, 1));
        gint64 processes = int_value(runs, i, 4), ranks = int_value(runs, i, 5);
        char *read = bytes_text(int_value(runs, i, 6));
        char *written = bytes_text(int_value(runs, i, 7));
        char *time = seconds_text(double_value(runs, i, 8));
        char *program = g_path_get_basename(value(runs, i, 2) != NULL ? value(runs, i, 2) : "?");
        double energy_j = double_value(runs, i, 9);
        gboolean complete = strcmp(PQgetvalue(runs, i, 10), "t") == 0;
        gboolean estimated = strcmp(PQgetvalue(runs, i, 11), "t") == 0;
        char *energy_part = isnan(energy_j) ? g_strdup("energy n/a")
                                            : g_strdup_printf("%.3f J%s%s", energy_j,
                                                              estimated ? " (estimated)" : "",
                                                              complete ? "" : " (incomplete)");
        char *text =
            g_strdup_printf("%s on %s, %" G_GINT64_FORMAT " %s, read %s, written %s, %s, %s",
                            program, value(runs, i, 3)[0] != '\0' ? value(runs, i, 3) : "no node",
                            ranks > 0 ? ranks : processes,
                            ranks > 0 ? (ranks == 1 ? "rank" : "ranks")
                                      : (processes == 1 ? "process" : "processes"),
                            read, written, time, energy_part);
        line(out, name, text);
        g_free(text);
        g_free(energy_part);
        g_free(program);
        g_free(time);
        g_free(written);
        g_free(read);
        g_free(name);
    }
    char *read = bytes_text(int_value(s, 0, 9));
    char *written = bytes_text(int_value(s, 0, 10));
    char *time = seconds_text(double_value(s, 0, 11));
    char *total = g_strdup_printf("%" G_GINT64_FORMAT " steps, %" G_GINT64_FORMAT
                                  " runs, %" G_GINT64_FORMAT " processes, read %s, written %s, %s",
                                  int_value(s, 0, 6), int_value(s, 0, 7), int_value(s, 0, 8), read,
                                  written, time);
    line(out, "JOB_TOTAL", total);
    g_free(total);
    g_free(time);
    g_free(written);
    g_free(read);
    /* The energy line as vigil_cli_job_energy_render writes it, without
     * its JOB line. */
    char *energy_text = vigil_cli_job_energy_render(job, energy, FALSE);
    const char *after_job = strchr(energy_text, '\n');
    g_string_append(out, after_job != NULL ? after_job + 1 : "");
    g_free(energy_text);
}

static void json_report(GString *out, const char *job, const PGresult *s, const PGresult *runs,
                        const struct vigil_report_job_energy *energy)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    vigil_json_string(b, "job", job);
    vigil_json_string(b, "user", value(s, 0, 0));
    json_builder_set_member_name(b, "uid");
    if (value(s, 0, 1) != NULL)
        json_builder_add_int_value(b, int_value(s, 0, 1));
    else
        json_builder_add_null_value(b);
    vigil_json_string(b, "node_list", value(s, 0, 2));
    vigil_json_string(b, "hosts", value(s, 0, 3));
    vigil_json_string(b, "begin", value(s, 0, 4));
    vigil_json_string(b, "end", value(s, 0, 5));
    json_builder_set_member_name(b, "steps");
    json_builder_begin_array(b);
    for (int i = 0; i < PQntuples(runs); i++) {
        json_builder_begin_object(b);
        vigil_json_string(b, "step", value(runs, i, 0));
        vigil_json_string(b, "run_key", value(runs, i, 1));
        vigil_json_string(b, "program", value(runs, i, 2));
        vigil_json_string(b, "hosts", value(runs, i, 3));
        vigil_json_int(b, "processes", int_value(runs, i, 4));
        vigil_json_int(b, "ranks", int_value(runs, i, 5));
        vigil_json_int(b, "bytes_read", int_value(runs, i, 6));
        vigil_json_int(b, "bytes_written", int_value(runs, i, 7));
        vigil_json_number(b, "time_s", double_value(runs, i, 8));
        vigil_json_number(b, "energy_joule", double_value(runs, i, 9));
        vigil_json_bool(b, "energy_complete", strcmp(PQgetvalue(runs, i, 10), "t") == 0);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "total");
    json_builder_begin_object(b);
    vigil_json_int(b, "steps", int_value(s, 0, 6));
    vigil_json_int(b, "runs", int_value(s, 0, 7));
    vigil_json_int(b, "processes", int_value(s, 0, 8));
    vigil_json_int(b, "bytes_read", int_value(s, 0, 9));
    vigil_json_int(b, "bytes_written", int_value(s, 0, 10));
    vigil_json_number(b, "time_s", double_value(s, 0, 11));
    json_builder_end_object(b);
    json_builder_end_object(b);
    char *text = vigil_json_builder_text(b, FALSE);
    /* Its last member is the energy, in the JSON every report writes
     * ("job_energy", report/report_text.c): the object closed after it. */
    char *energy_json = vigil_cli_job_energy_render(job, energy, TRUE);
    const char *member = strstr(energy_json, "\"job_energy\"");
    g_string_append_len(out, text, (gssize)strlen(text) - 1);
    g_string_append_c(out, ',');
    g_string_append(out, member != NULL ? member : "\"job_energy\":null}\n");
    g_free(energy_json);
    g_free(text);
}

char *vigil_cli_report_job(PGconn *db, const char *job, gboolean json, GError **error)
{
    const char *const params[] = {job};
    PGresult *summary = vigil_warehouse_query(db, summary_sql, 1, params, error);
    if (summary == NULL)
        return NULL;
    if (PQntuples(summary) == 0) {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "the warehouse has no job %s; `" HOW_TO_LIST_RUNS "` shows each run's job",
                    job);
        PQclear(summary);
        return NULL;
    }
    PGresult *runs = vigil_warehouse_query(db, runs_sql, 1, params, error);
    PGresult *energy_rows =
        runs != NULL ? vigil_warehouse_query(db, vigil_cli_job_energy_sql, 1, params, error) : NULL;
    char *out = NULL;
    if (energy_rows != NULL) {
        struct vigil_report_job_energy energy;
        vigil_cli_job_energy_from_result(energy_rows, &energy);
        GString *text = g_string_new(NULL);
        if (json)
            json_report(text, job, summary, runs, &energy);
        else
            text_report(text, job, summary, runs, &energy);
        out = g_string_free(text, FALSE);
    }
    if (energy_rows != NULL)
        PQclear(energy_rows);
    if (runs != NULL)
        PQclear(runs);
    PQclear(summary);
    return out;
}
