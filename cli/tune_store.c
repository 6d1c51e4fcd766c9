/* vigil tune --store: a trial into the warehouse (warehouse/migrations/0009), read back
 * by vigil-web through the tune_comparisons view. One transaction: a trial
 * is stored whole or not at all. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "tune_store.h"
#include "vigil/json_members.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

/* ---- the changed keys ---------------------------------------------------------------------- */

/* A key's effective value as text (vigil_config_value_text), or its
 * default in a plugin's section the configuration does not load. */
static char *value_text(const vigil_config *config, const struct vigil_config_key *k)
{
    if (!vigil_config_has_section(config, k->section))
        return g_strdup(k->default_value);
    return vigil_config_value_text(config, k->section, k->name);
}

struct key_values {
    const vigil_config *config;
    GTree *values; /* "section\nkey" → value text */
};

/* Whether the replay applies a candidate's key (tune_replay.c's
 * apply_config): every ADPI and reasoner key, and capture's decisions (not
 * its sink). The cycles are the recording's, so [daemon]'s tick_ms and
 * cycle_ms do not apply; paths, sockets and providers move nothing in a
 * replay. */
static gboolean replay_applies(const char *section, const char *name)
{
    static const char *const capture[] = {"mode", "pre_cycles", "post_cycles", "max_held", NULL};
    if (g_str_has_prefix(section, "adpi.") || g_str_has_prefix(section, "reasoner."))
        return TRUE;
    return strcmp(section, "capture") == 0 && g_strv_contains(capture, name);
}

static void collect_key(const struct vigil_config_key *k, gpointer user_data)
{
    struct key_values *kv = user_data;
    if (!replay_applies(k->section, k->name))
        return;
    g_tree_insert(kv->values, g_strdup_printf("%s\n%s", k->section, k->name),
                  value_text(kv->config, k));
}

static gint compare_ids(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    return strcmp(a, b);
}

static GTree *key_values(const vigil_config *config)
{
    struct key_values kv = {
        .config = config,
        .values = g_tree_new_full(compare_ids, NULL, g_free, g_free),
    };
    vigil_config_foreach_key(config, collect_key, &kv);
    return kv.values;
}

static void set_text_or_null(JsonObject *o, const char *name, const char *text)
{
    if (text != NULL)
        json_object_set_string_member(o, name, text);
    else
        json_object_set_null_member(o, name);
}

struct diff {
    GTree *other;
    JsonArray *out;
    gboolean recorded_side; /* walking the recorded keys */
};

static void add_change(JsonArray *out, const char *id, const char *recorded, const char *candidate)
{
    const char *newline = strchr(id, '\n');
    JsonObject *o = json_object_new();
    char *section = g_strndup(id, (gsize)(newline - id));
    json_object_set_string_member(o, "section", section);
    g_free(section);
    json_object_set_string_member(o, "key", newline + 1);
    set_text_or_null(o, "recorded", recorded);
    set_text_or_null(o, "candidate", candidate);
    json_array_add_object_element(out, o);
}

static gboolean diff_key(gpointer key, gpointer value, gpointer user_data)
{
    struct diff *d = user_data;
    const char *other = g_tree_lookup(d->other, key);
    if (d->recorded_side && (other == NULL || strcmp(other, value) != 0))
        add_change(d->out, key, value, other);
    else if (!d->recorded_side && other == NULL)
        add_change(d->out, key, NULL, value);
    return FALSE;
}

static gint by_section_and_key(gconstpointer a, gconstpointer b)
{
    JsonObject *x = json_node_get_object(*(JsonNode *const *)a);
    JsonObject *y = json_node_get_object(*(JsonNode *const *)b);
    int c = strcmp(json_object_get_string_member(x, "section"),
                   json_object_get_string_member(y, "section"));
    return c != 0 ? c
                  : strcmp(json_object_get_string_member(x, "key"),
                           json_object_get_string_member(y, "key"));
}

JsonArray *tune_config_changes(const char *recorded_text, const vigil_config *candidate,
                               GError **error)
{
    vigil_config *recorded = tune_config_from_text(recorded_text, error);
    if (recorded == NULL) {
        g_prefix_error(error, "the recording's configuration: ");
        return NULL;
    }
    GTree *was = key_values(recorded), *is = key_values(candidate);
    JsonArray *out = json_array_new();
    struct diff d = {.other = is, .out = out, .recorded_side = TRUE};
    g_tree_foreach(was, diff_key, &d);
    d = (struct diff){.other = was, .out = out, .recorded_side = FALSE};
    g_tree_foreach(is, diff_key, &d);
    /* Both walks are sorted; the keys only the candidate has go in place. */
    GList *nodes = json_array_get_elements(out);
    GPtrArray *sorted = g_ptr_array_new();
    for (GList *n = nodes; n != NULL; n = n->next)
        g_ptr_array_add(sorted, n->data);
    g_ptr_array_sort(sorted, by_section_and_key);
    JsonArray *result = json_array_sized_new(sorted->len);
    for (guint i = 0; i < sorted->len; i++)
        json_array_add_element(result, json_node_copy(sorted->pdata[i]));
    g_ptr_array_free(sorted, TRUE);
    g_list_free(nodes);
    json_array_unref(out);
    g_tree_destroy(was);
    g_tree_destroy(is);
    vigil_config_free(recorded);
    return result;
}

/* ---- the rows ------------------------------------------------------------------------------ */

/* The text of a node (vigil_json_object_node, _array_node), which it takes. */
static char *node_text(JsonNode *node)
{
    char *text = json_to_string(node, FALSE);
    json_node_unref(node);
    return text;
}

static char *own_states_json(const struct tune_result *r)
{
    JsonObject *o = json_object_new();
    static const enum vigil_level levels[] = {VIGIL_LEVEL_PROCESS, VIGIL_LEVEL_NODE};
    for (gsize l = 0; l < G_N_ELEMENTS(levels); l++) {
        JsonObject *states = json_object_new();
        for (unsigned h = 1; h <= VIGIL_HEALTH_COUNT; h++)
            if (r->own_states[levels[l]][h] > 0)
                json_object_set_int_member(states, vigil_health_name(h),
                                           (gint64)r->own_states[levels[l]][h]);
        json_object_set_object_member(o, levels[l] == VIGIL_LEVEL_PROCESS ? "process" : "node",
                                      states);
    }
    return node_text(vigil_json_object_node(o));
}

static char *reasons_json(const struct tune_adpi_stats *a)
{
    GPtrArray *keys = tune_sorted_reasons(a);
    JsonArray *list = json_array_sized_new(keys->len);
    for (guint k = 0; k < keys->len; k++) {
        const struct tune_reason *reason = g_hash_table_lookup(a->reasons, keys->pdata[k]);
        JsonObject *o = json_object_new();
        /* Plugins' words, stored as text: UTF-8 whatever they wrote. */
        json_object_set_string_member(o, "reason", keys->pdata[k]);
        json_object_set_int_member(o, "issues", (gint64)reason->issues);
        char *example = g_utf8_make_valid(reason->example, -1);
        json_object_set_string_member(o, "example", example);
        g_free(example);
        json_array_add_object_element(list, o);
    }
    g_ptr_array_free(keys, TRUE);
    return node_text(vigil_json_array_node(list));
}

/* Runs `sql` with text parameters; FALSE with error set naming `what`. */
static gboolean exec(PGconn *db, const char *sql, int n, const char *const *params,
                     const char *what, PGresult **rows, GError **error)
{
    PGresult *r = PQexecParams(db, sql, n, NULL, params, NULL, NULL, 0);
    ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
        char *why = g_strstrip(g_strdup(PQresultErrorMessage(r)));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY, "%s: %s", what, why);
        g_free(why);
        PQclear(r);
        return FALSE;
    }
    if (rows != NULL)
        *rows = r;
    else
        PQclear(r);
    return TRUE;
}

#define U64(buf, v) (g_snprintf(buf, sizeof buf, "%" G_GUINT64_FORMAT, (guint64)(v)), buf)

static const char insert_trial_sql[] =
    "INSERT INTO tune_trials (stored_by, recording, node, recorded_until, span_s, vigil_version,"
    " cycles, judged_cycles, processes, activities, reloads, limited, ended,"
    " decisions_compared, decisions_matched, candidate_file, truth_file, changed_keys)"
    " VALUES ($1, $2, $3, timestamptz 'epoch' + $4::bigint * interval '1 us', $5::float8, $6,"
    " $7, $8, $9, $10, $11, $12::boolean, $13::boolean, $14, $15, $16, $17, $18::jsonb)"
    " RETURNING trial_id";

static gboolean insert_trial(PGconn *db, const struct tune_trial *t, const char *changed,
                             gint64 until_us, char *trial_id, gsize id_size, GError **error)
{
    const struct tune_result *r = &t->columns[0].result;
    char *version = g_utf8_make_valid(r->vigil_version != NULL ? r->vigil_version : "?", -1);
    char span[G_ASCII_DTOSTR_BUF_SIZE], until[24], cycles[24], judged[24], processes[24],
        activities[24], reloads[24], compared[24], matched[24];
    g_ascii_dtostr(span, sizeof span, (double)(r->last_ns - MIN(r->first_ns, r->last_ns)) / 1e9);
    g_snprintf(until, sizeof until, "%" G_GINT64_FORMAT, until_us);
    const char *params[] = {
        g_get_user_name(),
        t->recording_name,
        t->node,
        until,
        span,
        version,
        U64(cycles, r->cycles),
        U64(judged, r->judged_cycles),
        U64(processes, r->processes),
        U64(activities, r->activities),
        U64(reloads, r->reloads),
        r->limited ? "true" : "false",
        r->ended ? "true" : "false",
        U64(compared, r->compared),
        U64(matched, r->matched),
        t->candidate_file,
        t->truth_file,
        changed,
    };
    PGresult *rows = NULL;
    gboolean ok =
        exec(db, insert_trial_sql, G_N_ELEMENTS(params), params, "storing the trial", &rows, error);
    g_free(version);
    if (!ok)
        return FALSE;
    g_strlcpy(trial_id, PQgetvalue(rows, 0, 0), id_size);
    PQclear(rows);
    return TRUE;
}

static const char insert_result_sql[] =
    "INSERT INTO tune_trial_results (trial_id, config, flagged_cycles, process_abnormal_cycles,"
    " node_abnormal_cycles, own_states, windows, observed, forwarded, dropped, lost,"
    " anomalous_cycles, caught, clean_cycles, false_flags, replay_s)"
    " VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12, $13, $14, $15,"
    " $16::float8)";

static const char insert_adpi_sql[] =
    "INSERT INTO tune_trial_adpis (trial_id, config, level, plugin, cycles, issues, reasons)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)";

static gboolean insert_column(PGconn *db, const char *trial_id, const struct tune_column *c,
                              GError **error)
{
    const struct tune_result *r = &c->result;
    char flagged[24], process[24], node[24], windows[24], observed[24], forwarded[24], dropped[24],
        lost[24], anomalous[24], caught[24], clean[24], false_flags[24],
        replay[G_ASCII_DTOSTR_BUF_SIZE];
    char *states = own_states_json(r);
    g_ascii_dtostr(replay, sizeof replay, r->replay_s);
    const char *params[] = {
        trial_id,
        c->name,
        U64(flagged, r->flagged_cycles),
        U64(process, r->abnormal_cycles[VIGIL_LEVEL_PROCESS]),
        U64(node, r->abnormal_cycles[VIGIL_LEVEL_NODE]),
        states,
        U64(windows, r->windows),
        U64(observed, r->observed),
        U64(forwarded, r->forwarded),
        U64(dropped, r->dropped),
        U64(lost, r->lost),
        c->scored ? U64(anomalous, c->score.anomalous) : NULL,
        c->scored ? U64(caught, c->score.caught) : NULL,
        c->scored ? U64(clean, c->score.clean_cycles) : NULL,
        c->scored ? U64(false_flags, c->score.false_flags) : NULL,
        replay,
    };
    char *what = g_strdup_printf("storing the %s configuration's figures", c->name);
    gboolean ok = exec(db, insert_result_sql, G_N_ELEMENTS(params), params, what, NULL, error);
    g_free(states);
    for (guint i = 0; ok && i < r->adpis->len; i++) {
        const struct tune_adpi_stats *a = g_ptr_array_index(r->adpis, i);
        char cycles[24], issues[24];
        char *reasons = reasons_json(a);
        const char *adpi_params[] = {
            trial_id,
            c->name,
            a->level == VIGIL_LEVEL_PROCESS ? "process" : "node",
            a->plugin,
            U64(cycles, a->cycles),
            U64(issues, a->issues),
            reasons,
        };
        ok = exec(db, insert_adpi_sql, G_N_ELEMENTS(adpi_params), adpi_params, what, NULL, error);
        g_free(reasons);
    }
    g_free(what);
    return ok;
}

gboolean tune_store(PGconn *db, const struct tune_trial *t, gint64 *trial_id, GError **error)
{
    const struct tune_result *r = &t->columns[0].result;
    if (r->first_mismatch != NULL) {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "not stored: the replay did not reproduce vigild's decisions (%s)",
                    r->first_mismatch);
        return FALSE;
    }
    /* The recording's end in wall-clock time: its last cycle's, by the
     * offset its START record gives (format 2). A format 1 file does not
     * give it: its modification time is when vigild last wrote it, unless
     * a copy changed it. */
    gint64 until_us = tune_result_wall_us(r, r->last_ns);
    struct stat st;
    if (until_us < 0 && stat(t->recording, &st) != 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno), "%s: %s", t->recording,
                    g_strerror(errno));
        return FALSE;
    }
    if (until_us < 0)
        until_us = (gint64)st.st_mtim.tv_sec * G_USEC_PER_SEC + st.st_mtim.tv_nsec / 1000;
    char *changed = NULL;
    if (t->candidate != NULL) {
        if (r->recorded_config == NULL) {
            g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                        "%s: the recording has no CONFIG record", t->recording);
            return FALSE;
        }
        JsonArray *changes = tune_config_changes(r->recorded_config, t->candidate, error);
        if (changes == NULL)
            return FALSE;
        changed = node_text(vigil_json_array_node(changes));
    } else {
        changed = g_strdup("[]");
    }
    /* A database without migration 9 is told so, as the readers do. */
    PGresult *check =
        vigil_warehouse_query(db, "SELECT 1 FROM tune_trials LIMIT 0", 0, NULL, error);
    if (check == NULL) {
        g_free(changed);
        return FALSE;
    }
    PQclear(check);
    char id[24] = "";
    gboolean ok = exec(db, "BEGIN", 0, NULL, "storing the trial", NULL, error) &&
                  insert_trial(db, t, changed, until_us, id, sizeof id, error);
    for (guint i = 0; ok && i < t->n_columns; i++)
        ok = insert_column(db, id, &t->columns[i], error);
    ok = ok && exec(db, "COMMIT", 0, NULL, "storing the trial", NULL, error);
    if (!ok)
        PQclear(PQexec(db, "ROLLBACK"));
    else
        *trial_id = g_ascii_strtoll(id, NULL, 10);
    g_free(changed);
    return ok;
}
