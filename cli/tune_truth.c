/* vigil tune --truth: a replay's flagged cycles scored against a workload's
 * ground truth, the JSON lines bench/capture_eval_workload writes (one per
 * workload cycle: "cycle", "start_ns", "end_ns", "anomaly" or null,
 * "calls", "warmup"), with CLOCK_MONOTONIC times as vigild's. */
#include <json-glib/json-glib.h>

#include "tune_truth.h"

static gboolean member_u64(JsonObject *o, const char *name, uint64_t *out)
{
    JsonNode *n = json_object_get_member(o, name);
    if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64 ||
        json_node_get_int(n) < 0)
        return FALSE;
    *out = (uint64_t)json_node_get_int(n);
    return TRUE;
}

GArray *tune_truth_read(const char *path, GError **error)
{
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, error))
        return NULL;
    GArray *cycles = g_array_new(FALSE, FALSE, sizeof(struct tune_truth_cycle));
    char **lines = g_strsplit(text, "\n", -1);
    g_free(text);
    JsonParser *parser = json_parser_new();
    for (guint i = 0; lines[i] != NULL; i++) {
        if (lines[i][0] == '\0')
            continue;
        GError *json_error = NULL;
        JsonNode *root = NULL;
        if (json_parser_load_from_data(parser, lines[i], -1, &json_error))
            root = json_parser_get_root(parser);
        struct tune_truth_cycle c = {0};
        JsonObject *o =
            root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
        JsonNode *anomaly = o != NULL ? json_object_get_member(o, "anomaly") : NULL;
        if (o == NULL || !member_u64(o, "start_ns", &c.start_ns) ||
            !member_u64(o, "end_ns", &c.end_ns) || c.end_ns < c.start_ns || anomaly == NULL ||
            !(JSON_NODE_HOLDS_NULL(anomaly) ||
              (JSON_NODE_HOLDS_VALUE(anomaly) &&
               json_node_get_value_type(anomaly) == G_TYPE_STRING))) {
            g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: line %u: %s", path, i + 1,
                        json_error != NULL ? json_error->message
                                           : "not a truth line: it needs start_ns and end_ns "
                                             "(end not before start) and anomaly (a name or "
                                             "null)");
            g_clear_error(&json_error);
            g_array_free(cycles, TRUE);
            cycles = NULL;
            break;
        }
        c.anomalous = JSON_NODE_HOLDS_VALUE(anomaly);
        g_array_append_val(cycles, c);
    }
    g_object_unref(parser);
    g_strfreev(lines);
    if (cycles != NULL && cycles->len == 0) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s: no truth lines", path);
        g_array_free(cycles, TRUE);
        cycles = NULL;
    }
    return cycles;
}

void tune_truth_score(const GArray *truth, const GArray *replayed, guint pre, guint post,
                      struct tune_truth_score *out)
{
    *out = (struct tune_truth_score){0};
    const struct tune_truth_cycle *t = (const struct tune_truth_cycle *)truth->data;
    const struct tune_cycle *c = (const struct tune_cycle *)replayed->data;
    uint64_t run_start = t[0].start_ns, run_end = t[truth->len - 1].end_ns;
    gboolean *tolerated = g_new0(gboolean, replayed->len + 1);
    for (guint i = 0; i < truth->len; i++) {
        if (!t[i].anomalous)
            continue;
        out->anomalous++;
        /* The replayed cycles it overlaps, and the one after: a cycle's
         * last tick is drained in the next. */
        gboolean caught = FALSE;
        for (guint k = 0; k < replayed->len; k++) {
            gboolean overlaps = c[k].start_ns < t[i].end_ns && c[k].end_ns > t[i].start_ns;
            if (!overlaps)
                continue;
            caught = caught || c[k].flagged || (k + 1 < replayed->len && c[k + 1].flagged);
            for (guint j = k >= pre ? k - pre : 0; j <= k + post + 1 && j < replayed->len; j++)
                tolerated[j] = TRUE;
        }
        out->caught += caught;
    }
    for (guint k = 0; k < replayed->len; k++) {
        if (c[k].end_ns <= run_start || c[k].start_ns >= run_end || tolerated[k])
            continue;
        out->clean_cycles++;
        out->false_flags += c[k].flagged;
    }
    g_free(tolerated);
}
