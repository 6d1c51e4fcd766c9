/* vigil status: asks the node's vigild what it sees now (registered
 * processes, the latest statistics, each provider's cost, drops, missed
 * ticks) and prints it for people, or as the daemon's JSON with --json. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#include "commands.h"
#include "status_costs.h"
#include "status_energy.h"
#include "vigil/json_members.h"
#include "vigil/local_protocol.h"

/* A daemon that accepted but does not answer is as good as gone. */
#define ANSWER_TIMEOUT_S 10

/* The daemon's JSON, or NULL with error set. */
static char *ask(const char *path, int finished_pid, GError **error)
{
    int fd = vigil_cli_vigild_connect(path, ANSWER_TIMEOUT_S, NULL, error);
    if (fd < 0)
        return NULL;
    struct vigil_local_status_request request = {.finished_pid = finished_pid};
    struct vigil_error err = {{0}};
    char *buffer = g_malloc(VIGIL_LOCAL_MAX_BYTES);
    char *json = NULL;
    int json_fd = -1;
    enum vigil_local_type type;
    struct vigil_local_status answer;
    ssize_t length = -1;
    if (vigil_local_send(fd, VIGIL_LOCAL_STATUS_REQUEST, &request, sizeof request, -1, &err))
        length = vigil_local_receive(fd, buffer, &type, &json_fd, &err);
    if (length < 0) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "vigild on %s: %s", path,
                    errno == EAGAIN ? "no answer within 10 s" : err.message);
    } else if (type == VIGIL_LOCAL_REFUSED) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "vigild on %s refused: %.*s", path,
                    (int)length, buffer);
    } else if (type != VIGIL_LOCAL_STATUS ||
               !vigil_local_decode_fixed(type, buffer, (size_t)length, &answer, &err) ||
               json_fd < 0) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                    "vigild on %s answered with a malformed status (%s)", path,
                    err.message[0] ? err.message : "no JSON with it");
    } else {
        json = g_malloc(answer.json_bytes + 1);
        ssize_t got = pread(json_fd, json, answer.json_bytes, 0);
        if (got != (ssize_t)answer.json_bytes) {
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                        "vigild on %s: its status is shorter than it says", path);
            g_clear_pointer(&json, g_free);
        } else {
            json[got] = '\0';
        }
    }
    if (json_fd >= 0)
        close(json_fd);
    close(fd);
    g_free(buffer);
    return json;
}

static void print_cost(JsonObject *o, const char *name)
{
    JsonObject *cost = json_object_get_object_member(o, name);
    if (isnan(vigil_json_get_number(cost, "mean")))
        printf("none measured yet");
    else
        printf("last %.1f, mean %.1f, max %.1f µs", vigil_json_get_number(cost, "last"),
               vigil_json_get_number(cost, "mean"), vigil_json_get_number(cost, "max"));
}

/* The node's reasoner and capture, and the last cycle's node issues. */
static void print_reasoning(JsonObject *root)
{
    /* A daemon older than the reasoners has neither. */
    if (!json_object_has_member(root, "reasoning") || !json_object_has_member(root, "capture"))
        return;
    JsonObject *r = json_object_get_object_member(root, "reasoning");
    JsonObject *c = json_object_get_object_member(root, "capture");
    const char *health = vigil_json_get_string(r, "node_health");
    printf("\nreasoning: a cycle every %" G_GINT64_FORMAT " ms, %" G_GINT64_FORMAT
           " decided; the node %s, abnormal in %" G_GINT64_FORMAT "\n",
           vigil_json_get_int(r, "cycle_ms"), vigil_json_get_int(r, "cycles"),
           health != NULL ? health : "not decided yet",
           vigil_json_get_int(r, "node_abnormal_cycles"));
    JsonArray *issues = json_object_get_array_member(r, "node_issues");
    for (guint i = 0; i < json_array_get_length(issues); i++) {
        JsonObject *x = json_array_get_object_element(issues, i);
        printf("  %s %s: %s\n", vigil_json_get_string(x, "health"),
               vigil_json_get_string(x, "plugin"), vigil_json_get_string(x, "message"));
    }
    JsonObject *t = json_object_get_object_member(c, "totals");
    const char *sink = vigil_json_get_string(c, "sink");
    printf("capture: %s (%" G_GINT64_FORMAT " before, %" G_GINT64_FORMAT
           " after) to %s: %" G_GINT64_FORMAT " activities observed, %" G_GINT64_FORMAT
           " forwarded in %" G_GINT64_FORMAT " windows, %" G_GINT64_FORMAT
           " dropped, %" G_GINT64_FORMAT " lost, %" G_GINT64_FORMAT " held\n",
           vigil_json_get_string(c, "mode"), vigil_json_get_int(c, "pre_cycles"),
           vigil_json_get_int(c, "post_cycles"), sink != NULL ? sink : "no sink",
           vigil_json_get_int(t, "observed"), vigil_json_get_int(t, "forwarded"),
           vigil_json_get_int(t, "windows"), vigil_json_get_int(t, "dropped"),
           vigil_json_get_int(t, "lost"), vigil_json_get_int(t, "held"));
    if (sink != NULL && json_object_has_member(c, "sink_max_bytes"))
        printf("  sink: %" G_GINT64_FORMAT " bytes in its file of at most %" G_GINT64_FORMAT
               ", %" G_GINT64_FORMAT " full files kept, %" G_GINT64_FORMAT " rotations\n",
               vigil_json_get_int(c, "sink_bytes"), vigil_json_get_int(c, "sink_max_bytes"),
               vigil_json_get_int(c, "sink_keep_files"), vigil_json_get_int(c, "sink_rotations"));
    else if (sink == NULL && json_object_has_member(c, "sink_enabled"))
        printf("  no sink ([capture] sink_enabled = %s)\n",
               vigil_json_get_string(c, "sink_enabled"));
    if (vigil_json_get_int(c, "sink_files_dropped") + vigil_json_get_int(c, "sink_lines_dropped") >
        0)
        printf("  warning: the sink deleted %" G_GINT64_FORMAT " full files and %" G_GINT64_FORMAT
               " lines too long for a file (%" G_GINT64_FORMAT
               " bytes of windows) to stay within [capture] sink_max_bytes and sink_keep_files\n",
               vigil_json_get_int(c, "sink_files_dropped"),
               vigil_json_get_int(c, "sink_lines_dropped"),
               vigil_json_get_int(c, "sink_bytes_dropped"));
    if (vigil_json_get_int(c, "sink_errors") > 0)
        printf("  %" G_GINT64_FORMAT " writes to the sink failed: windows since are not all "
               "in it (see vigild's log)\n",
               vigil_json_get_int(c, "sink_errors"));
}

/* The uplink to vigil-txd in one line, and a warning when anything was
 * lost or refused on the way. */
static void print_uplink(JsonObject *root)
{
    JsonNode *node = json_object_get_member(root, "uplink");
    if (node == NULL) /* a daemon older than the uplink */
        return;
    if (!JSON_NODE_HOLDS_OBJECT(node)) {
        printf("uplink: none ([uplink] endpoint is empty)\n");
        return;
    }
    JsonObject *u = json_node_get_object(node);
    const char *system = vigil_json_get_string(u, "system_state");
    printf("uplink: %s as node %" G_GINT64_FORMAT ", %s: %" G_GINT64_FORMAT
           " batches, %" G_GINT64_FORMAT " acknowledged, %" G_GINT64_FORMAT
           " waiting (%" G_GINT64_FORMAT " in the spool, %" G_GINT64_FORMAT
           " bytes), %" G_GINT64_FORMAT " replayed from it; system %s\n",
           vigil_json_get_string(u, "endpoint"), vigil_json_get_int(u, "node_id"),
           json_object_get_boolean_member(u, "connected") ? "connected" : "not connected",
           vigil_json_get_int(u, "batches"), vigil_json_get_int(u, "acked"),
           vigil_json_get_int(u, "unacked"), vigil_json_get_int(u, "spooled_batches"),
           vigil_json_get_int(u, "spool_bytes"), vigil_json_get_int(u, "replayed"),
           system != NULL ? system : "state not known");
    gint64 dropped = vigil_json_get_int(u, "dropped_full_batches"),
           refused = vigil_json_get_int(u, "refused");
    gint64 corrupt = vigil_json_get_int(u, "spool_corrupt"),
           skipped = vigil_json_get_int(u, "items_skipped");
    gint64 unnamed = vigil_json_get_int(u, "names_missing");
    gint64 memory = vigil_json_get_int(u, "dropped_memory_batches");
    gint64 deleted = vigil_json_get_int(u, "refused_deleted");
    if (dropped + refused + corrupt + skipped + unnamed + memory > 0) {
        const char *error = vigil_json_get_string(u, "last_error");
        printf("  warning: %" G_GINT64_FORMAT " batches (%" G_GINT64_FORMAT
               " bytes) dropped from the full spool, %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT
               " bytes) dropped from full memory while the spool failed, %" G_GINT64_FORMAT
               " refused by vigil-txd (kept in %s/refused, %" G_GINT64_FORMAT
               " of them deleted for refused_max_bytes), %" G_GINT64_FORMAT
               " damaged spool stretches, %" G_GINT64_FORMAT " items left out, %" G_GINT64_FORMAT
               " activities without their file's name; last error: %s\n",
               dropped, vigil_json_get_int(u, "dropped_full_bytes"), memory,
               vigil_json_get_int(u, "dropped_memory_bytes"), refused,
               vigil_json_get_string(u, "spool_dir"), deleted, corrupt, skipped, unnamed,
               error != NULL ? error : "none");
    }
    /* Refused batches wait in refused/ until someone sends them again. */
    if (vigil_json_get_int(u, "refused_kept") > 0)
        printf("  warning: %" G_GINT64_FORMAT " batches refused by vigil-txd wait in "
               "%s/refused (%" G_GINT64_FORMAT " refused in all); the last reason: %s; once "
               "that is fixed (a node id another key claimed: `vigil node keys`), `vigil spool "
               "resend` sends them again\n",
               vigil_json_get_int(u, "refused_kept"), vigil_json_get_string(u, "spool_dir"),
               refused,
               vigil_json_get_string(u, "last_refusal") != NULL
                   ? vigil_json_get_string(u, "last_refusal")
                   : "not known (refused before this "
                     "vigild started)");
    /* What those batches carried: what the warehouse will lack, and be
     * told of (wire DROPS, carried by later batches). */
    gint64 lost_activities = vigil_json_get_int(u, "dropped_activities");
    if (lost_activities + vigil_json_get_int(u, "dropped_unknown_batches") > 0)
        printf("  warning: %" G_GINT64_FORMAT " forwarded activities in %" G_GINT64_FORMAT
               " dropped batches never reach the warehouse (%" G_GINT64_FORMAT
               " more batches were lost unread); each process's count is in the list below "
               "and goes to the warehouse\n",
               lost_activities, vigil_json_get_int(u, "dropped_batches"),
               vigil_json_get_int(u, "dropped_unknown_batches"));
}

/* Who holds the socket, the limits, and what was refused. */
static void print_clients(JsonObject *root)
{
    JsonNode *node = json_object_get_member(root, "clients");
    if (node == NULL || !JSON_NODE_HOLDS_OBJECT(node)) /* a daemon older than the limits */
        return;
    JsonObject *c = json_node_get_object(node);
    JsonObject *r = json_object_get_object_member(c, "refused");
    printf("clients: %" G_GINT64_FORMAT " connections (%" G_GINT64_FORMAT
           " not registered, each closed %" G_GINT64_FORMAT
           " ms after it connected), %" G_GINT64_FORMAT
           " descriptors of a budget of %" G_GINT64_FORMAT " (limit %" G_GINT64_FORMAT
           "); a user may hold %" G_GINT64_FORMAT " connections and %" G_GINT64_FORMAT
           " processes, and ask for the status %" G_GINT64_FORMAT
           " times a second after %" G_GINT64_FORMAT "\n",
           vigil_json_get_int(c, "connections"), vigil_json_get_int(c, "unregistered"),
           vigil_json_get_int(c, "unregistered_timeout_ms"), vigil_json_get_int(c, "fds_in_use"),
           vigil_json_get_int(c, "fd_budget"), vigil_json_get_int(c, "fd_limit"),
           vigil_json_get_int(c, "max_connections_per_uid"),
           vigil_json_get_int(c, "max_processes_per_uid"),
           vigil_json_get_int(c, "status_requests_per_s"),
           vigil_json_get_int(c, "status_requests_burst"));
    /* Each kind the daemon counts, by its name (docs/architecture.md,
     * local_server.c), a newer daemon's too. */
    GString *kinds = g_string_new(NULL);
    GList *names = r != NULL ? json_object_get_members(r) : NULL;
    for (GList *n = names; n != NULL; n = n->next) {
        gint64 count = vigil_json_get_int(r, n->data);
        if (count > 0)
            g_string_append_printf(kinds, "%s%" G_GINT64_FORMAT " %s", kinds->len > 0 ? ", " : "",
                                   count, (const char *)n->data);
    }
    g_list_free(names);
    if (kinds->len > 0 || vigil_json_get_int(c, "closed_idle") > 0)
        printf("  warning: refused %s; closed %" G_GINT64_FORMAT " idle\n",
               kinds->len > 0 ? kinds->str : "none", vigil_json_get_int(c, "closed_idle"));
    g_string_free(kinds, TRUE);
}

static void print_text(JsonObject *root)
{
    JsonObject *d = json_object_get_object_member(root, "daemon");
    printf("vigild %s, pid %" G_GINT64_FORMAT ", up %.1f s, serving %s\n",
           vigil_json_get_string(d, "version"), vigil_json_get_int(d, "pid"),
           vigil_json_get_number(d, "uptime_s"), vigil_json_get_string(d, "socket"));
    printf("tick every %" G_GINT64_FORMAT " ms: %" G_GINT64_FORMAT " ticks, %" G_GINT64_FORMAT
           " missed; cost per tick ",
           vigil_json_get_int(d, "tick_ms"), vigil_json_get_int(d, "ticks"),
           vigil_json_get_int(d, "missed_ticks"));
    print_cost(d, "tick_cost_us");
    printf("\n\nproviders:\n");
    JsonArray *providers = json_object_get_array_member(root, "providers");
    for (guint i = 0; i < json_array_get_length(providers); i++) {
        JsonObject *p = json_array_get_object_element(providers, i);
        printf("  %-10s ", vigil_json_get_string(p, "name"));
        if (!json_object_get_boolean_member(p, "running")) {
            printf("not running: %s\n", vigil_json_get_string(p, "unavailable"));
            continue;
        }
        printf("%" G_GINT64_FORMAT " reads, %" G_GINT64_FORMAT " failed; cost per read ",
               vigil_json_get_int(p, "reads"), vigil_json_get_int(p, "read_errors"));
        print_cost(p, "cost_us");
        printf("\n");
        if (vigil_json_get_string(p, "note") != NULL)
            printf("  %-10s %s\n", "", vigil_json_get_string(p, "note"));
    }
    vigil_cli_status_tick_costs(root);
    JsonObject *energy = json_object_get_object_member(root, "energy");
    if (vigil_json_get_string(energy, "unavailable") != NULL)
        printf("\nenergy: n/a (%s)\n", vigil_json_get_string(energy, "unavailable"));
    else
        printf("\nenergy: from %s%s\n", vigil_json_get_string(energy, "source"),
               json_object_get_boolean_member(energy, "estimated") ? " (estimated)" : "");
    vigil_cli_status_energy_segments(energy);

    print_reasoning(root);
    print_uplink(root);
    print_clients(root);

    JsonObject *ps = json_object_get_object_member(root, "processes");
    printf("\nprocesses: %" G_GINT64_FORMAT " running, %" G_GINT64_FORMAT
           " ended, %" G_GINT64_FORMAT " dropped, %" G_GINT64_FORMAT " refused, %" G_GINT64_FORMAT
           " kept out of another user's run\n",
           vigil_json_get_int(ps, "running"), vigil_json_get_int(ps, "ended_total"),
           vigil_json_get_int(ps, "dropped_total"), vigil_json_get_int(ps, "refused_total"),
           vigil_json_get_int(ps, "placed_apart_total"));
    JsonArray *list = json_object_get_array_member(ps, "list");
    if (json_array_get_length(list) > 0)
        printf("  %6s %8s %-8s %11s %6s %8s %11s %8s %10s  %s\n", "ID", "PID", "STATE",
               "ACTIVITIES", "GAPS", "DROPPED", "UPLINK_LOST", "CPU_S", "ENERGY_J", "PROGRAM");
    for (guint i = 0; i < json_array_get_length(list); i++) {
        JsonObject *p = json_array_get_object_element(list, i);
        char energy_text[32];
        double energy_j = vigil_json_get_number(p, "energy_j");
        if (isnan(energy_j))
            g_strlcpy(energy_text, "n/a", sizeof energy_text);
        else
            g_snprintf(energy_text, sizeof energy_text, "%.3f%s", energy_j,
                       json_object_get_boolean_member(p, "energy_estimated") ? "~" : "");
        char cpu_text[32];
        double cpu_s = vigil_json_get_number(p, "cpu_s");
        if (isnan(cpu_s))
            g_strlcpy(cpu_text, "n/a", sizeof cpu_text);
        else
            g_snprintf(cpu_text, sizeof cpu_text, "%.3f", cpu_s);
        printf("  %6" G_GINT64_FORMAT " %8" G_GINT64_FORMAT " %-8s %11" G_GINT64_FORMAT
               " %6" G_GINT64_FORMAT " %8" G_GINT64_FORMAT " %11" G_GINT64_FORMAT " %8s %10s  %s\n",
               vigil_json_get_int(p, "id"), vigil_json_get_int(p, "pid"),
               vigil_json_get_string(p, "state"), vigil_json_get_int(p, "activities"),
               vigil_json_get_int(p, "corrupt") + vigil_json_get_int(p, "torn"),
               vigil_json_get_int(p, "dropped"), vigil_json_get_int(p, "uplink_dropped_activities"),
               cpu_text, energy_text, vigil_json_get_string(p, "program"));
    }
    if (vigil_json_get_int(ps, "not_listed_other_users") > 0)
        printf("  and %" G_GINT64_FORMAT
               " process(es) of other users, listed only to root and vigild's user\n",
               vigil_json_get_int(ps, "not_listed_other_users"));
    printf("  (~: estimated; DROPPED: records the ring had no room for; UPLINK_LOST: forwarded "
           "activities the uplink or the spool dropped)\n\nstatistics (latest sample; a counter's "
           "rate is per second over "
           "the last roll-up):\n");
    JsonArray *metrics = json_object_get_array_member(root, "metrics");
    for (guint i = 0; i < json_array_get_length(metrics); i++) {
        JsonObject *m = json_array_get_object_element(metrics, i);
        double value = vigil_json_get_number(m, "value");
        if (isnan(value))
            continue;
        printf("  %-28s %16.3f %-6s", vigil_json_get_string(m, "name"), value,
               vigil_json_get_string(m, "unit"));
        JsonNode *rollup = json_object_get_member(m, "rollup");
        if (strcmp(vigil_json_get_string(m, "kind"), "counter") == 0 &&
            JSON_NODE_HOLDS_OBJECT(rollup))
            printf(" %14.3f/s", vigil_json_get_number(json_node_get_object(rollup), "mean"));
        printf("%s%s\n",
               strcmp(vigil_json_get_string(m, "origin"), "estimated") == 0 ? " estimated" : "",
               json_object_get_boolean_member(m, "uncertain") ? " uncertain" : "");
    }
}

int vigil_cli_status(int argc, char **argv)
{
    char *socket_option = NULL, *config_path = NULL;
    gboolean as_json = FALSE;
    int finished_pid = 0;
    GOptionEntry entries[] = {
        {"socket", 0, 0, G_OPTION_ARG_FILENAME, &socket_option,
         "The daemon's socket (default: $VIGIL_SOCKET, else [daemon] socket)", "PATH"},
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
         "The configuration whose [daemon] socket to use", "FILE"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &as_json, "Print the daemon's JSON as it is", NULL},
        {"finished-pid", 0, 0, G_OPTION_ARG_INT, &finished_pid,
         "A pid that has ended: say whether the daemon drained it (every ended process is "
         "drained before the answer)",
         "PID"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = "- what the node's vigild sees now",
    };
    GError *error = NULL;
    int status = VIGIL_EXIT_OK;
    if (!vigil_cli_parse_options(&help, entries, &argc, &argv, &error) || argc > 1 ||
        finished_pid < 0) {
        fprintf(stderr, "vigil status: %s\n",
                error != NULL ? error->message : "unexpected arguments");
        status = VIGIL_EXIT_USAGE;
        goto out;
    }
    char *path = vigil_cli_socket_path(socket_option, config_path, &error);
    char *json = path != NULL ? ask(path, finished_pid, &error) : NULL;
    g_free(path);
    if (json == NULL) {
        fprintf(stderr, "vigil status: %s\n", error->message);
        status = VIGIL_EXIT_FAILURE;
        goto out;
    }
    if (as_json) {
        printf("%s\n", json);
    } else {
        JsonParser *parser = json_parser_new();
        if (json_parser_load_from_data(parser, json, -1, &error) &&
            JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
            print_text(json_node_get_object(json_parser_get_root(parser)));
        } else {
            fprintf(stderr, "vigil status: the daemon's answer is not JSON: %s\n",
                    error != NULL ? error->message : "not an object");
            status = VIGIL_EXIT_FAILURE;
        }
        g_object_unref(parser);
    }
    g_free(json);
out:
    g_clear_error(&error);
    g_free(socket_option);
    g_free(config_path);
    return status;
}
