/* vigil report: prints the end-of-run report of a stored run, exactly as
 * the console showed it.
 *
 *   vigil report RUN [--config FILE] [--format text|json] [--process PID[@HOST]]
 *   vigil report --job ID [--config FILE] [--format text|json]
 *
 * RUN is a run's number (runs.run_id) or its key (what the report's RUN
 * line says). The report shown is the run's job report when it has one
 * (rank 0's, for an MPI job), else that of its first process that sent
 * one; --process picks another process's own. The stored JSON is read back
 * into the report's figures and printed by the renderer the preload
 * library uses (report/report_text.c), so nothing is reformatted on the way.
 * One thing is added when the stored report lacks it and the run had more
 * than one process: the run's energy across its nodes (JOB_ENERGY_JOULE,
 * "job_energy"), from the warehouse; and always, what vigild's uplink
 * dropped of the activities it forwarded, which a report written at exit
 * cannot know (UPLINK_LOST_ACTIVITIES, "uplink_lost_activities": the
 * run's, or with --process the process's). --job prints a scheduler job's.
 *
 * The connection string comes from [warehouse] conninfo in the
 * configuration, else libpq's environment (PGHOST, PGSERVICE, ~/.pgpass),
 * never from the command line, where every user could read a password. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libpq-fe.h>

#include "commands.h"
#include "report_job.h"
#include "job_energy_views.h"
#include "report_json.h"
#include "vigil-build.h"
#include "vigil/config.h"
#include "vigil/plugin.h"
#include "vigil/schema.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

struct report_options {
    char *config_path;
    char *format;  /* "text" (default) or "json" */
    char *process; /* PID or PID@HOST, or NULL */
    char *job;     /* --job: a scheduler job id, or NULL */
};

/* The stored report to print, and whose it is. */
struct stored_report {
    char *json;
    char *whose; /* "pid 1234 on node17" */
    /* Forwarded activities vigild's uplink dropped: the process's with
     * --process, else the run's. */
    uint64_t uplink_lost_activities;
};

static gboolean parse_process_option(const char *text, char **pid, char **host, GError **error)
{
    const char *at = strchr(text, '@');
    *pid = at != NULL ? g_strndup(text, (gsize)(at - text)) : g_strdup(text);
    *host = at != NULL ? g_strdup(at + 1) : NULL;
    if (!vigil_warehouse_is_row_number(*pid) || (*host != NULL && (*host)[0] == '\0')) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--process %s: expected PID or PID@HOST", text);
        g_clear_pointer(pid, g_free);
        g_clear_pointer(host, g_free);
        return FALSE;
    }
    return TRUE;
}

/* The run's job report when it has one, else its first process's that
 * sent one; or the report of process `pid` (on `host`, unless NULL). */
static gboolean find_report(PGconn *db, const char *run, const char *run_id, const char *pid,
                            const char *host, struct stored_report *out, GError **error)
{
    const char *const params[] = {run_id, pid, host};
    PGresult *result =
        vigil_warehouse_query(db,
                              "SELECT s.report::text, p.pid, n.hostname,"
                              "       CASE WHEN $2::integer IS NULL"
                              "            THEN (SELECT sum(rp.uplink_dropped_activities)"
                              "                    FROM processes rp WHERE rp.run_id = p.run_id)"
                              "            ELSE p.uplink_dropped_activities END"
                              "  FROM processes p JOIN run_summaries s USING (process_id)"
                              "  JOIN nodes n USING (node_id)"
                              " WHERE p.run_id = $1::bigint"
                              "   AND ($2::integer IS NULL OR p.pid = $2::integer)"
                              "   AND ($3::text IS NULL OR n.hostname = $3)"
                              /* A job's report first (rank 0's: it has "ranks"), then by start. */
                              " ORDER BY (s.report ? 'ranks') DESC, p.start_time, p.process_id",
                              3, params, error);
    gboolean ok = result != NULL;
    int rows = ok ? PQntuples(result) : 0;
    if (ok && rows == 0) {
        if (pid != NULL)
            g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                        "run %s has no stored report of pid %s%s%s", run, pid,
                        host != NULL ? " on " : "", host != NULL ? host : "");
        else
            g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                        "run %s has no stored report: none of its processes sent one, or "
                        "vigil-txd has not stored them yet",
                        run);
        ok = FALSE;
    } else if (ok && pid != NULL && host == NULL && rows > 1) {
        GString *where = g_string_new(NULL);
        for (int i = 0; i < rows; i++)
            g_string_append_printf(where, "%s%s@%s", i > 0 ? ", " : "", PQgetvalue(result, i, 1),
                                   PQgetvalue(result, i, 2));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "--process %s names %d processes of run %s (%s): say which with PID@HOST", pid,
                    rows, run, where->str);
        g_string_free(where, TRUE);
        ok = FALSE;
    }
    if (ok) {
        out->json = g_strdup(PQgetvalue(result, 0, 0));
        out->whose =
            g_strdup_printf("pid %s on %s", PQgetvalue(result, 0, 1), PQgetvalue(result, 0, 2));
        out->uplink_lost_activities = g_ascii_strtoull(PQgetvalue(result, 0, 3), NULL, 10);
    }
    if (result != NULL)
        PQclear(result);
    return ok;
}

static int print_report(const struct stored_report *stored, gboolean json, const char *run,
                        const struct vigil_report_job_energy *run_energy)
{
    struct vigil_cli_report report;
    GError *error = NULL;
    if (!vigil_cli_report_parse(stored->json, -1, &report, &error)) {
        fprintf(stderr, "vigil report: the stored report of run %s (%s) cannot be read: %s\n", run,
                stored->whose, error->message);
        g_error_free(error);
        return VIGIL_EXIT_FAILURE;
    }
    if (VIGIL_CLI_REPORT_ADDS_JOB_ENERGY(&report.r, run_energy))
        report.r.job_energy = *run_energy;
    report.r.uplink_lost_known = true;
    report.r.uplink_lost_activities = stored->uplink_lost_activities;
    char *text = json ? vigil_cli_report_json(&report.r) : vigil_cli_report_text(&report.r);
    fputs(text, stdout);
    g_free(text);
    vigil_cli_report_clear(&report);
    return fflush(stdout) == 0 ? VIGIL_EXIT_OK : VIGIL_EXIT_FAILURE;
}

int vigil_cli_report(int argc, char **argv)
{
    struct report_options options = {0};
    GOptionEntry entries[] = {
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &options.config_path,
         VIGIL_CLI_WAREHOUSE_CONFIG_HELP, "FILE"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &options.format,
         "text (as the console showed it; the default) or json", "FORMAT"},
        {"process", 'p', 0, G_OPTION_ARG_STRING, &options.process,
         "The report of this process of the run instead", "PID[@HOST]"},
        {"job", 'j', 0, G_OPTION_ARG_STRING, &options.job,
         "The report of this scheduler job across its steps and nodes (user, nodes, begin and "
         "end, each step's program, ranks, bytes, time and energy, the totals), instead of RUN",
         "ID"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = "RUN",
        .summary = "Prints the end-of-run report of RUN (a run number or a run key) "
                   "from the warehouse, as the console showed it.\nThe runs: " HOW_TO_LIST_RUNS,
    };
    GError *error = NULL;
    int status = VIGIL_EXIT_USAGE;
    PGconn *db = NULL;
    char *conninfo = NULL, *run_id = NULL, *pid = NULL, *host = NULL;
    struct stored_report stored = {0};

    if (!vigil_cli_options_ok("report", &help, entries, &argc, &argv))
        goto out;
    if (argc != (options.job != NULL ? 1 : 2) || (options.job != NULL && options.process != NULL)) {
        fprintf(stderr, "usage: vigil report RUN [--config FILE] [--format text|json] "
                        "[--process PID[@HOST]]\n"
                        "       vigil report --job ID [--config FILE] [--format text|json]\n");
        goto out;
    }
    if (options.job != NULL && !vigil_cli_job_id_valid(options.job)) {
        fprintf(stderr,
                "vigil report: --job %s: a scheduler job id is letters, digits and "
                "._+- (at most 128)\n",
                options.job);
        goto out;
    }
    const char *run = options.job != NULL ? options.job : argv[1];
    gboolean json = FALSE;
    if (!vigil_cli_format_is_json(options.format, &json, &error)) {
        fprintf(stderr, "vigil report: %s\n", error->message);
        goto out;
    }
    if (options.process != NULL && !parse_process_option(options.process, &pid, &host, &error)) {
        fprintf(stderr, "vigil report: %s\n", error->message);
        goto out;
    }
    status = VIGIL_EXIT_FAILURE;
    conninfo = vigil_cli_warehouse_conninfo(options.config_path, &error);
    if (conninfo == NULL) {
        fprintf(stderr, "vigil report: %s\n", error->message);
        goto out;
    }
    db = vigil_warehouse_connect(conninfo, &error);
    if (db == NULL) {
        fprintf(stderr, "vigil report: %s\n", error->message);
        goto out;
    }
    struct vigil_report_job_energy energy;
    if (options.job != NULL) {
        char *text = vigil_cli_report_job(db, options.job, json, &error);
        if (text == NULL) {
            fprintf(stderr, "vigil report: %s\n", error->message);
            goto out;
        }
        fputs(text, stdout);
        g_free(text);
        status = fflush(stdout) == 0 ? VIGIL_EXIT_OK : VIGIL_EXIT_FAILURE;
        goto out;
    }
    run_id = vigil_warehouse_find_run(db, run, &error);
    if (run_id == NULL || !find_report(db, run, run_id, pid, host, &stored, &error) ||
        !vigil_cli_run_energy(db, run_id, &energy, &error)) {
        fprintf(stderr, "vigil report: %s\n", error->message);
        goto out;
    }
    status = print_report(&stored, json, run, &energy);

out:
    g_clear_error(&error);
    if (db != NULL)
        PQfinish(db);
    g_free(conninfo);
    g_free(run_id);
    g_free(pid);
    g_free(host);
    g_free(stored.json);
    g_free(stored.whose);
    g_free(options.config_path);
    g_free(options.format);
    g_free(options.process);
    g_free(options.job);
    return status;
}
