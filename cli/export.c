/* vigil export: a stored run's power profile, statistics or activities, as
 * CSV or JSON Lines, straight from the warehouse.
 *
 *   vigil export RUN [--what power|statistics|activities] [--format csv|json]
 *                    [--node N] [--config FILE]
 *
 * The rows are streamed: CSV through COPY (SELECT …) TO STDOUT, each COPY
 * message written as it arrives; JSON one object per line, built per row
 * from libpq's single-row mode. JSON Lines rather than one array: a
 * consumer (jq, pandas' read_json(lines=True), DuckDB's read_json) takes
 * the rows one at a time too, and an export cut short (head, a full disk)
 * leaves whole rows, not an array that never closes.
 *
 * A reader that goes away (`vigil export … | head`) ends it quietly, as it
 * ends cat: killed by SIGPIPE, after the query is dropped. Any other write
 * error (ENOSPC…) is reported and exits 1. The connection string comes
 * from [warehouse] conninfo or libpq's environment, as for `vigil report`. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <libpq-fe.h>

#include "commands.h"
#include "export_lookup.h"
#include "export_sql.h"
#include "export_stream.h"
#include "vigil-build.h"
#include "vigil/warehouse.h"

#define USAGE                                                                                      \
    "usage: vigil export RUN [--what power|statistics|activities] [--format csv|json] "            \
    "[--node N] [--config FILE]\n"

#define COLUMNS_HELP                                                                               \
    "Columns (times are ISO 8601 UTC to the microsecond; JSON Lines has the same names, one "      \
    "object a "                                                                                    \
    "line):\n"                                                                                     \
    "  power       time (the end of the roll-up window), node_id, hostname, metric (each\n"        \
    "              energy zone energy.*_j, the estimate energy.node_j, node.energy_j),\n"          \
    "              interval_s (the window), power_w (its energy / interval_s), energy_j\n"         \
    "              (running total on the node since the run's start, per metric),\n"               \
    "              source, estimated (true: a model's figure, not a meter's), uncertain;\n"        \
    "              by node, metric, time.\n"                                                       \
    "  statistics  start_time, end_time, node_id, hostname, metric, unit, kind, source,\n"         \
    "              estimated, samples, min, mean, max, delta (counters: the increase;\n"           \
    "              their min/mean/max are rates per second), uncertain; by node, metric,\n"        \
    "              time.\n"                                                                        \
    "  activities  time, start_ns, node_id, hostname, pid, rank, thread, layer, operation,\n"      \
    "              file, file_offset, bytes (asked for), result, errno, duration_ns; by\n"         \
    "              start.\n"                                                                       \
    "The roll-ups of a run are those of its nodes' windows that overlap its processes' time\n"     \
    "there, whole. CSV has a header line; an empty field is NULL.\n"

struct export_options {
    char *config_path;
    char *what;
    char *format;
    char *node;
};

static const char *const what_names[] = {
    [EXPORT_POWER] = "power",
    [EXPORT_STATISTICS] = "statistics",
    [EXPORT_ACTIVITIES] = "activities",
};

/* What an empty export lacks. */
static const char *const what_notes[] = {
    /* Parenthesised: one literal, made of two. */
    [EXPORT_POWER] = ("energy roll-ups (no energy.*_j nor node.energy_j metric of its nodes "
                      "during its time)"),
    [EXPORT_STATISTICS] = "roll-ups of its nodes during its time",
    [EXPORT_ACTIVITIES] = "captured activities",
};

static gboolean parse_what(const char *text, enum export_what *what)
{
    for (guint i = 0; i < G_N_ELEMENTS(what_names); i++)
        if (strcmp(text, what_names[i]) == 0) {
            *what = (enum export_what)i;
            return TRUE;
        }
    return FALSE;
}

/* The reader went away: end as a program killed by SIGPIPE, which is what
 * a shell expects of one writing into a closed pipe. */
static void die_of_sigpipe(void)
{
    signal(SIGPIPE, SIG_DFL);
    raise(SIGPIPE);
}

static void free_options(struct export_options *options)
{
    g_free(options->config_path);
    g_free(options->what);
    g_free(options->format);
    g_free(options->node);
}

/* Runs the export itself: exit status. */
static int export_run(const struct export_options *options, const char *run, enum export_what what,
                      gboolean json)
{
    GError *error = NULL;
    int write_errno = 0;
    int status = VIGIL_EXIT_FAILURE;
    PGconn *db = NULL;
    char *sql = NULL;
    struct export_run r;
    gint64 node_id = 0;
    char *conninfo = vigil_cli_warehouse_conninfo(options->config_path, &error);
    if (conninfo == NULL)
        goto out;
    db = vigil_warehouse_connect(conninfo, &error);
    if (db == NULL)
        goto out;
    if (!export_find_run(db, run, &r, &error) ||
        (options->node != NULL && !export_find_node(db, run, &r, options->node, &node_id, &error)))
        goto out;
    sql = export_select_sql(what, &r, node_id);
    /* A write into a closed pipe is an EPIPE to handle, not a death in the
     * middle of libpq. */
    signal(SIGPIPE, SIG_IGN);
    /* Whole blocks into the pipe or file, not 4 KiB at a time. */
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    guint64 rows = 0;
    gboolean ok = json ? export_stream_json_lines(db, sql, stdout, &rows, &write_errno, &error)
                       : export_stream_csv(db, sql, stdout, &rows, &write_errno, &error);
    if (ok && fflush(stdout) != 0)
        write_errno = errno != 0 ? errno : EIO;
    if (ok && write_errno == 0) {
        status = VIGIL_EXIT_OK;
        /* Nothing is an answer, but one to point out. */
        if (rows == 0)
            fprintf(stderr, "vigil export: run %s has no %s in the warehouse%s%s\n", run,
                    what_notes[what], options->node != NULL ? " on node " : "",
                    options->node != NULL ? options->node : "");
    }

out:
    if (db != NULL)
        PQfinish(db); /* drops a query cut short with it */
    if (write_errno == EPIPE) {
        die_of_sigpipe();
    } else if (write_errno != 0) {
        fprintf(stderr, "vigil export: cannot write the export to standard output: %s\n",
                g_strerror(write_errno));
    } else if (error != NULL) {
        fprintf(stderr, "vigil export: %s\n", error->message);
    }
    g_clear_error(&error);
    g_free(sql);
    g_free(conninfo);
    return status;
}

int vigil_cli_export(int argc, char **argv)
{
    struct export_options options = {0};
    GOptionEntry entries[] = {
        {"what", 'w', 0, G_OPTION_ARG_STRING, &options.what,
         "power (the default): each node's power and energy over time; statistics: every "
         "metric's roll-ups; activities: the captured I/O calls",
         "WHAT"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &options.format,
         "csv (the default) or json (JSON Lines: one object a line)", "FORMAT"},
        {"node", 'n', 0, G_OPTION_ARG_STRING, &options.node,
         "Only this node of the run (a node id or a host name)", "N"},
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &options.config_path,
         VIGIL_CLI_WAREHOUSE_CONFIG_HELP, "FILE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = "RUN",
        .summary = "Writes a stored run's power profile, statistics or activities to standard "
                   "output, as CSV or JSON Lines, streamed from the warehouse.\nRUN is a run "
                   "number or a run key, as for `vigil report`.",
        .description = COLUMNS_HELP,
    };
    int status = VIGIL_EXIT_USAGE;
    enum export_what what = EXPORT_POWER;

    if (!vigil_cli_options_ok("export", &help, entries, &argc, &argv)) {
        free_options(&options);
        return status;
    }
    if (argc != 2) {
        fprintf(stderr, USAGE);
    } else if (options.what != NULL && !parse_what(options.what, &what)) {
        fprintf(stderr, "vigil export: --what %s: expected power, statistics or activities\n",
                options.what);
    } else if (options.format != NULL && strcmp(options.format, "csv") != 0 &&
               strcmp(options.format, "json") != 0) {
        fprintf(stderr, "vigil export: --format %s: expected csv or json\n", options.format);
    } else if (options.node != NULL && options.node[0] == '\0') {
        fprintf(stderr, "vigil export: --node: expected a node id or a host name\n");
    } else {
        status = export_run(&options, argv[1], what,
                            options.format != NULL && strcmp(options.format, "json") == 0);
    }
    free_options(&options);
    return status;
}
