/* vigil tune --replay FILE [--config CANDIDATE] [--truth TRUTH]: a cycle
 * recording ([daemon] record) replayed offline through vigild's own ADPIs,
 * reasoners and capture, first with the configuration it was recorded
 * with (whose decisions must come out exactly as vigild made them), then
 * with a candidate; what each flags and forwards is printed side by side,
 * and with --store kept in the warehouse for the web UI (tune_store.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "commands.h"
#include "tune_replay.h"
#include "tune_store.h"
#include "tune_truth.h"
#include "vigil/json_members.h"
#include "vigil/warehouse.h"

struct tune_options {
    char *replay;
    char *config;
    char *truth;
    char *format;
    gboolean store;
    char *node;
    char *warehouse_config;
    char *scale_durations;
};

static double share(uint64_t part, uint64_t whole)
{
    return whole > 0 ? (double)part / (double)whole : 0.0;
}

/* ---- text ---------------------------------------------------------------------------------- */

static void row_u64(const char *label, const struct tune_column *c, guint n,
                    uint64_t (*get)(const struct tune_column *))
{
    printf("  %-34s", label);
    for (guint i = 0; i < n; i++)
        printf(" %14" G_GUINT64_FORMAT, get(&c[i]));
    printf("\n");
}

static uint64_t get_flagged(const struct tune_column *c)
{
    return c->result.flagged_cycles;
}

static uint64_t get_process_abnormal(const struct tune_column *c)
{
    return c->result.abnormal_cycles[VIGIL_LEVEL_PROCESS];
}

static uint64_t get_node_abnormal(const struct tune_column *c)
{
    return c->result.abnormal_cycles[VIGIL_LEVEL_NODE];
}

static uint64_t get_forwarded(const struct tune_column *c)
{
    return c->result.forwarded;
}

static uint64_t get_windows(const struct tune_column *c)
{
    return c->result.windows;
}

static const char *level_name(enum vigil_level level)
{
    return level == VIGIL_LEVEL_PROCESS ? "process" : level == VIGIL_LEVEL_NODE ? "node" : "system";
}

/* The ADPI `plugin` at `level` in a result, or NULL when it never spoke. */
static const struct tune_adpi_stats *find_adpi(const struct tune_result *r, const char *plugin,
                                               enum vigil_level level)
{
    for (guint i = 0; i < r->adpis->len; i++) {
        const struct tune_adpi_stats *a = g_ptr_array_index(r->adpis, i);
        if (a->level == level && strcmp(a->plugin, plugin) == 0)
            return a;
    }
    return NULL;
}

#define REASONS_SHOWN 3

static void print_why(const char *name, const struct tune_adpi_stats *a)
{
    if (a == NULL)
        return;
    GPtrArray *keys = tune_sorted_reasons(a);
    for (guint k = 0; k < keys->len && k < REASONS_SHOWN; k++) {
        const struct tune_reason *reason = g_hash_table_lookup(a->reasons, keys->pdata[k]);
        printf("      %s: %s: %" G_GUINT64_FORMAT " issues, e.g. \"%s\"\n", name,
               (const char *)keys->pdata[k], reason->issues, reason->example);
    }
    if (keys->len > REASONS_SHOWN)
        printf("      %s: and %u more metrics\n", name, keys->len - REASONS_SHOWN);
    g_ptr_array_free(keys, TRUE);
}

static void print_adpis(const struct tune_column *c, guint n)
{
    /* Every ADPI that spoke in any column, in the order first seen. */
    GPtrArray *seen = g_ptr_array_new();
    for (guint i = 0; i < n; i++)
        for (guint k = 0; k < c[i].result.adpis->len; k++) {
            const struct tune_adpi_stats *a = g_ptr_array_index(c[i].result.adpis, k);
            gboolean known = FALSE;
            for (guint j = 0; j < seen->len && !known; j++) {
                const struct tune_adpi_stats *s = g_ptr_array_index(seen, j);
                known = s->level == a->level && strcmp(s->plugin, a->plugin) == 0;
            }
            if (!known)
                g_ptr_array_add(seen, (gpointer)a);
        }
    printf("\ncycles each ADPI reported issues in, and why (metric, health):\n");
    if (seen->len == 0)
        printf("  none: no ADPI reported an issue\n");
    for (guint j = 0; j < seen->len; j++) {
        const struct tune_adpi_stats *s = g_ptr_array_index(seen, j);
        char *label = g_strdup_printf("%s %s", level_name(s->level), s->plugin);
        printf("  %-34s", label);
        g_free(label);
        for (guint i = 0; i < n; i++) {
            const struct tune_adpi_stats *a = find_adpi(&c[i].result, s->plugin, s->level);
            printf(" %14" G_GUINT64_FORMAT, a != NULL ? a->cycles : 0);
        }
        printf("\n");
        for (guint i = 0; i < n; i++)
            print_why(c[i].name, find_adpi(&c[i].result, s->plugin, s->level));
    }
    g_ptr_array_free(seen, TRUE);
}

/* Wall-clock µs as ISO 8601 UTC to the second; NULL for -1. g_free it. */
static char *wall_text(gint64 wall_us)
{
    if (wall_us < 0)
        return NULL;
    GDateTime *t = g_date_time_new_from_unix_utc(wall_us / G_USEC_PER_SEC);
    char *text = t != NULL ? g_date_time_format(t, "%Y-%m-%dT%H:%M:%SZ") : NULL;
    if (t != NULL)
        g_date_time_unref(t);
    return text;
}

static void print_text(const char *path, const struct tune_durations *scaled,
                       const struct tune_column *c, guint n)
{
    const struct tune_result *r = &c[0].result;
    double span_s = (double)(r->last_ns - MIN(r->first_ns, r->last_ns)) / 1e9;
    printf("recording %s: %" G_GUINT64_FORMAT " cycles (%" G_GUINT64_FORMAT
           " judged) over %.1f s, %" G_GUINT64_FORMAT " processes, %" G_GUINT64_FORMAT
           " activities, by vigild %s, %" G_GUINT64_FORMAT " reloads; %s\n",
           path, r->cycles, r->judged_cycles, span_s, r->processes, r->activities,
           r->vigil_version != NULL ? r->vigil_version : "?", r->reloads,
           r->limited ? "it stopped at record_max_bytes"
           : r->ended ? "vigild stopped cleanly"
                      : "it ends without vigild's stop (still recording, or killed)");
    char *from = wall_text(tune_result_wall_us(r, r->first_ns)),
         *to = wall_text(tune_result_wall_us(r, r->last_ns));
    if (r->node != NULL)
        printf("recorded on node %s, from %s to %s\n", r->node, from, to);
    else
        printf("the recording (format 1) names neither its node nor its wall-clock time\n");
    g_free(from);
    g_free(to);
    if (r->cut_at_offset >= 0)
        printf("the file ends inside a record at offset %" G_GINT64_FORMAT
               " (vigild killed while writing it, or still recording): the cycles before it are "
               "replayed\n",
               r->cut_at_offset);
    for (guint i = 0; i < n; i++)
        printf("replay with the %s configuration: %.3f s (%.0fx real time)\n", c[i].name,
               c[i].result.replay_s,
               c[i].result.replay_s > 0 ? span_s / c[i].result.replay_s : 0.0);
    if (scaled != NULL)
        printf("what if: every call from cycle %" G_GUINT64_FORMAT
               " on took %g times as long as recorded (a node %.3g times as fast); the recorded "
               "decisions are compared before it only\n",
               scaled->from_cycle, scaled->factor, 1 / scaled->factor);
    if (r->first_mismatch == NULL)
        printf("recorded decisions reproduced: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
               " cycles identical\n",
               r->matched, r->compared);
    else
        printf("recorded decisions NOT reproduced: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
               " cycles identical; first difference: %s\n",
               r->matched, r->compared, r->first_mismatch);
    printf("\n  %-34s", "");
    for (guint i = 0; i < n; i++)
        printf(" %14s", c[i].name);
    printf("\n");
    row_u64("cycles flagged (capture triggers)", c, n, get_flagged);
    row_u64("  by a process reasoner", c, n, get_process_abnormal);
    row_u64("  by the node reasoner", c, n, get_node_abnormal);
    row_u64("capture windows", c, n, get_windows);
    row_u64("activities forwarded", c, n, get_forwarded);
    printf("  %-34s", "share forwarded");
    for (guint i = 0; i < n; i++)
        printf(" %13.1f%%", 100 * share(c[i].result.forwarded, c[i].result.observed));
    printf("\n");
    if (c[0].scored) {
        printf("  %-34s", "recall (anomalous cycles caught)");
        for (guint i = 0; i < n; i++)
            printf(" %6" G_GUINT64_FORMAT "/%-3" G_GUINT64_FORMAT " %4.2f", c[i].score.caught,
                   c[i].score.anomalous, share(c[i].score.caught, c[i].score.anomalous));
        printf("\n  %-34s", "false flags (of clean cycles)");
        for (guint i = 0; i < n; i++)
            printf(" %6" G_GUINT64_FORMAT "/%-3" G_GUINT64_FORMAT " %3.0f%%",
                   c[i].score.false_flags, c[i].score.clean_cycles,
                   100 * share(c[i].score.false_flags, c[i].score.clean_cycles));
        printf("\n");
    }
    print_adpis(c, n);
}

/* ---- json ---------------------------------------------------------------------------------- */

static void json_column(JsonBuilder *b, const struct tune_column *c)
{
    const struct tune_result *r = &c->result;
    json_builder_begin_object(b);
    vigil_json_int(b, "cycles", r->cycles);
    vigil_json_int(b, "flagged_cycles", r->flagged_cycles);
    vigil_json_int(b, "process_abnormal_cycles", r->abnormal_cycles[VIGIL_LEVEL_PROCESS]);
    vigil_json_int(b, "node_abnormal_cycles", r->abnormal_cycles[VIGIL_LEVEL_NODE]);
    json_builder_set_member_name(b, "own_states");
    json_builder_begin_object(b);
    for (unsigned level = VIGIL_LEVEL_PROCESS; level <= VIGIL_LEVEL_NODE; level++) {
        json_builder_set_member_name(b, level_name(level));
        json_builder_begin_object(b);
        for (unsigned h = 1; h <= VIGIL_HEALTH_COUNT; h++)
            if (r->own_states[level][h] > 0)
                vigil_json_int(b, vigil_health_name(h), r->own_states[level][h]);
        json_builder_end_object(b);
    }
    json_builder_end_object(b);
    vigil_json_int(b, "windows", r->windows);
    vigil_json_int(b, "observed", r->observed);
    vigil_json_int(b, "forwarded", r->forwarded);
    vigil_json_int(b, "dropped", r->dropped);
    vigil_json_int(b, "lost", r->lost);
    vigil_json_number(b, "forwarded_share", share(r->forwarded, r->observed));
    if (strcmp(c->name, "recorded") == 0) { /* a candidate is meant to differ */
        vigil_json_int(b, "decisions_compared", r->compared);
        vigil_json_int(b, "decisions_matched", r->matched);
        vigil_json_string(b, "first_mismatch", r->first_mismatch);
    }
    vigil_json_number(b, "replay_s", r->replay_s);
    if (c->scored) {
        json_builder_set_member_name(b, "truth");
        json_builder_begin_object(b);
        vigil_json_int(b, "anomalous_cycles", c->score.anomalous);
        vigil_json_int(b, "caught", c->score.caught);
        vigil_json_number(b, "recall", share(c->score.caught, c->score.anomalous));
        vigil_json_int(b, "clean_cycles", c->score.clean_cycles);
        vigil_json_int(b, "false_flags", c->score.false_flags);
        json_builder_end_object(b);
    }
    json_builder_set_member_name(b, "adpis");
    json_builder_begin_array(b);
    for (guint i = 0; i < r->adpis->len; i++) {
        const struct tune_adpi_stats *a = g_ptr_array_index(r->adpis, i);
        json_builder_begin_object(b);
        vigil_json_string(b, "plugin", a->plugin);
        vigil_json_string(b, "level", level_name(a->level));
        vigil_json_int(b, "cycles", a->cycles);
        vigil_json_int(b, "issues", a->issues);
        json_builder_set_member_name(b, "reasons");
        json_builder_begin_array(b);
        GPtrArray *keys = tune_sorted_reasons(a);
        for (guint k = 0; k < keys->len; k++) {
            const struct tune_reason *reason = g_hash_table_lookup(a->reasons, keys->pdata[k]);
            json_builder_begin_object(b);
            vigil_json_string(b, "reason", keys->pdata[k]);
            vigil_json_int(b, "issues", reason->issues);
            vigil_json_string(b, "example", reason->example);
            json_builder_end_object(b);
        }
        g_ptr_array_free(keys, TRUE);
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

static void print_json(const char *path, const struct tune_durations *scaled,
                       const struct tune_column *c, guint n)
{
    const struct tune_result *r = &c[0].result;
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "recording");
    json_builder_begin_object(b);
    vigil_json_string(b, "path", path);
    vigil_json_string(b, "node", r->node);
    const char *const span_names[] = {"first_cycle_at", "last_cycle_at"};
    const uint64_t span_ns[] = {r->first_ns, r->last_ns};
    for (int i = 0; i < 2; i++) {
        char *at = wall_text(tune_result_wall_us(r, span_ns[i]));
        vigil_json_string(b, span_names[i], at);
        g_free(at);
    }
    vigil_json_int(b, "cycles", r->cycles);
    vigil_json_int(b, "judged_cycles", r->judged_cycles);
    vigil_json_int(b, "processes", r->processes);
    vigil_json_int(b, "activities", r->activities);
    vigil_json_int(b, "reloads", r->reloads);
    vigil_json_bool(b, "limited", r->limited);
    vigil_json_bool(b, "ended", r->ended);
    json_builder_set_member_name(b, "cut_at_offset");
    if (r->cut_at_offset >= 0)
        json_builder_add_int_value(b, r->cut_at_offset);
    else
        json_builder_add_null_value(b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "scale_durations");
    if (scaled != NULL) {
        json_builder_begin_object(b);
        vigil_json_number(b, "factor", scaled->factor);
        vigil_json_int(b, "from_cycle", scaled->from_cycle);
        json_builder_end_object(b);
    } else {
        json_builder_add_null_value(b);
    }
    for (guint i = 0; i < n; i++) {
        json_builder_set_member_name(b, c[i].name);
        json_column(b, &c[i]);
    }
    json_builder_end_object(b);
    char *text = vigil_json_builder_text(b, TRUE);
    printf("%s\n", text);
    g_free(text);
}

/* ---- the warehouse ------------------------------------------------------------------------- */

static char *display_path(const char *path)
{
    if (path == NULL)
        return NULL;
    char *absolute = g_canonicalize_filename(path, NULL);
    char *shown = g_filename_display_name(absolute);
    g_free(absolute);
    return shown;
}

static gboolean store(const struct tune_options *o, const vigil_config *candidate,
                      const struct tune_column *columns, guint n, GError **error)
{
    /* Files by their absolute names, shown in UTF-8 (the warehouse's text)
     * whatever bytes the file system has. */
    const struct tune_result *r = &columns[0].result;
    /* The node is the recording's own: stored under another name, its
     * trials would sit beside another node's runs. */
    if (o->node != NULL && r->node != NULL && strcmp(o->node, r->node) != 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--node %s: the recording was made on node %s (its START record); "
                    "leave --node out to store it as %s's",
                    o->node, r->node, r->node);
        return FALSE;
    }
    const char *node = o->node != NULL ? o->node : r->node;
    if (node == NULL) {
        node = g_get_host_name();
        fprintf(stderr,
                "vigil tune: the recording (format 1) does not name its node: stored as this "
                "host's, %s (--node names another)\n",
                node);
    }
    char *recording = display_path(o->replay), *candidate_file = display_path(o->config),
         *truth_file = display_path(o->truth);
    struct tune_trial trial = {
        .recording = o->replay,
        .recording_name = recording,
        .node = node,
        .candidate_file = candidate_file,
        .truth_file = truth_file,
        .columns = columns,
        .n_columns = n,
        .candidate = candidate,
    };
    char *conninfo = vigil_cli_warehouse_conninfo(o->warehouse_config, error);
    PGconn *db = conninfo != NULL ? vigil_warehouse_connect(conninfo, error) : NULL;
    gint64 trial_id = 0;
    gboolean ok = db != NULL && tune_store(db, &trial, &trial_id, error);
    if (ok)
        fprintf(stderr, "vigil tune: stored as trial %" G_GINT64_FORMAT "\n", trial_id);
    if (db != NULL)
        PQfinish(db);
    g_free(conninfo);
    g_free(recording);
    g_free(candidate_file);
    g_free(truth_file);
    return ok;
}

/* ---- the command --------------------------------------------------------------------------- */

/* "0.8" or "0.8@300": a factor from 0.001 to 1000, a cycle from 1. */
static gboolean parse_durations(const char *text, struct tune_durations *d, GError **error)
{
    char *end;
    errno = 0;
    d->factor = g_ascii_strtod(text, &end);
    d->from_cycle = 1;
    gboolean ok = end != text && errno == 0 && d->factor >= 0.001 && d->factor <= 1000;
    if (ok && *end == '@') {
        const char *cycle = end + 1;
        guint64 from;
        ok = g_ascii_string_to_unsigned(cycle, 10, 1, G_MAXUINT64, &from, NULL);
        d->from_cycle = from;
    } else if (ok) {
        ok = *end == '\0';
    }
    if (!ok)
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--scale-durations %s: expected FACTOR[@CYCLE], a factor from 0.001 to 1000 "
                    "and a cycle from 1 (0.8@300: calls from cycle 300 on took 0.8 times as long)",
                    text);
    return ok;
}

int vigil_cli_tune(int argc, char **argv)
{
    struct tune_options o = {0};
    GOptionEntry entries[] = {
        {"replay", 'r', 0, G_OPTION_ARG_FILENAME, &o.replay,
         "The recording to replay ([daemon] record of vigild)", "FILE"},
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &o.config,
         "A candidate configuration, replayed beside the recorded one (its [adpi.*], "
         "[reasoner.*] and [capture] apply; the cycles are the recording's)",
         "CANDIDATE"},
        {"truth", 't', 0, G_OPTION_ARG_FILENAME, &o.truth,
         "Ground truth (JSON lines as capture-eval-workload writes): recall and false flags",
         "TRUTH"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &o.format, "text (the default) or json", "FORMAT"},
        {"store", 's', 0, G_OPTION_ARG_NONE, &o.store,
         "Also store the comparison in the warehouse, for the web UI's thresholds page", NULL},
        {"node", 'n', 0, G_OPTION_ARG_STRING, &o.node,
         "With --store, for a recording that does not name its node (format 1): the node it "
         "was made on (default: this host). A recording that names its node must be stored "
         "under that name",
         "NAME"},
        {"scale-durations", 'd', 0, G_OPTION_ARG_STRING, &o.scale_durations,
         "What if the node became slower or faster: every call from cycle CYCLE on (default "
         "1) took FACTOR times as long as recorded (0.8: a node 1.25 times as fast), as when a "
         "virtual machine's host gets busy or a CPU changes its clock. Both configurations see "
         "it; the recorded decisions are compared before CYCLE only",
         "FACTOR[@CYCLE]"},
        {"warehouse-config", 'w', 0, G_OPTION_ARG_FILENAME, &o.warehouse_config,
         "With --store: the configuration whose [warehouse] conninfo names the warehouse "
         "(default: $VIGIL_CONFIG, else the default file, else libpq's environment)",
         "FILE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = NULL,
        .summary =
            "Replays a recording of vigild's cycles through the same ADPIs, reasoners and "
            "capture, offline, with the configuration it was recorded with and with a "
            "candidate, and prints per ADPI and per reasoner the cycles flagged and why, the "
            "share of activities forwarded and, with ground truth, recall and false flags.",
    };
    GError *error = NULL;
    int status = VIGIL_EXIT_USAGE;
    struct tune_column columns[2] = {{.name = "recorded"}, {.name = "candidate"}};
    guint n = 0;
    vigil_config *candidate = NULL;
    GArray *truth = NULL;
    gboolean json = FALSE;
    struct tune_durations durations;
    const struct tune_durations *scaled = NULL; /* durations as recorded */

    if (!vigil_cli_options_ok("tune", &help, entries, &argc, &argv))
        goto out;
    if (argc != 1 || o.replay == NULL) {
        fprintf(stderr, "usage: vigil tune --replay FILE [--config CANDIDATE.conf] "
                        "[--truth TRUTH] [--scale-durations FACTOR[@CYCLE]] [--format text|json] "
                        "[--store [--node NAME] [--warehouse-config FILE]]\n");
        goto out;
    }
    if (!o.store && (o.node != NULL || o.warehouse_config != NULL)) {
        fprintf(stderr, "vigil tune: --%s is for --store\n",
                o.node != NULL ? "node" : "warehouse-config");
        goto out;
    }
    if (o.node != NULL &&
        (o.node[0] == '\0' || strlen(o.node) > 255 || !g_utf8_validate(o.node, -1, NULL))) {
        fprintf(stderr, "vigil tune: --node: expected a node name of 1 to 255 characters\n");
        goto out;
    }
    if (o.scale_durations != NULL && !parse_durations(o.scale_durations, &durations, &error)) {
        fprintf(stderr, "vigil tune: %s\n", error->message);
        goto out;
    }
    if (o.scale_durations != NULL && o.store) {
        fprintf(stderr, "vigil tune: --scale-durations is a what-if, not what the node did: "
                        "it is not stored (--store)\n");
        goto out;
    }
    if (o.scale_durations != NULL)
        scaled = &durations;
    if (!vigil_cli_format_is_json(o.format, &json, &error)) {
        fprintf(stderr, "vigil tune: %s\n", error->message);
        goto out;
    }
    status = VIGIL_EXIT_FAILURE;
    if (o.config != NULL && (candidate = tune_config_load(o.config, &error)) == NULL) {
        fprintf(stderr, "vigil tune: %s\n", error->message);
        goto out;
    }
    if (o.truth != NULL && (truth = tune_truth_read(o.truth, &error)) == NULL) {
        fprintf(stderr, "vigil tune: %s\n", error->message);
        goto out;
    }
    if (!tune_replay(o.replay, NULL, scaled, &columns[n++].result, &error) ||
        (candidate != NULL &&
         !tune_replay(o.replay, candidate, scaled, &columns[n++].result, &error))) {
        fprintf(stderr, "vigil tune: %s\n", error->message);
        goto out;
    }
    for (guint i = 0; truth != NULL && i < n; i++) {
        tune_truth_score(truth, columns[i].result.cycle_list, columns[i].result.pre_cycles,
                         columns[i].result.post_cycles, &columns[i].score);
        columns[i].scored = TRUE;
    }
    if (json)
        print_json(o.replay, scaled, columns, n);
    else
        print_text(o.replay, scaled, columns, n);
    /* Figures from a replay that does not reproduce vigild are not what
     * vigild would do: said, and not a success. */
    status = columns[0].result.first_mismatch == NULL ? VIGIL_EXIT_OK : VIGIL_EXIT_FAILURE;
    if (o.store && !store(&o, candidate, columns, n, &error)) {
        fprintf(stderr, "vigil tune: %s\n", error->message);
        status = VIGIL_EXIT_FAILURE;
    }

out:
    g_clear_error(&error);
    for (guint i = 0; i < G_N_ELEMENTS(columns); i++)
        tune_result_clear(&columns[i].result);
    if (truth != NULL)
        g_array_free(truth, TRUE);
    if (candidate != NULL)
        vigil_config_free(candidate);
    g_free(o.replay);
    g_free(o.config);
    g_free(o.truth);
    g_free(o.format);
    g_free(o.node);
    g_free(o.warehouse_config);
    g_free(o.scale_durations);
    return status;
}
