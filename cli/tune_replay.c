/* vigil tune — replaying a cycle recording through vigild's own reasoning
 * and capture. Nothing of the feeding is copied here: the recording holds
 * the calls reasoning.c's entry points got (cycle_record.h), and this file
 * makes the same calls in the same order on the same code, linked from
 * vigild's library, then counts what came out. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cycle_record.h"
#include "tune_replay.h"
#include "vigil/schema.h"
#include "capture.h"
#include "energy_share.h"
#include "reasoning.h"
#include "vigild_settings.h"
#include "tick_samples.h"
#include "verdicts.h"

/* One registry for the run: issue plugin names and configurations'
 * resolver point into it. */
static vigil_plugin_registry *registry(void)
{
    static vigil_plugin_registry *shared;
    if (shared == NULL) {
        char *dir = vigil_plugin_default_directory();
        shared = vigil_plugin_registry_new(dir);
        g_free(dir);
    }
    return shared;
}

/* vigild's own checks, on a scratch reasoning that is thrown away. */
static gboolean check_config(vigil_config *config, const char *name, GError **error)
{
    struct vigild_settings settings = {0};
    if (!vigild_settings_read(&settings, config, error))
        return FALSE;
    vigild_settings_clear(&settings);
    vigil_metric_catalog *catalog = vigil_metric_catalog_new();
    struct vigild_energy_share energy;
    vigild_energy_share_init(&energy);
    struct vigild_reasoning r;
    vigild_reasoning_init(&r, registry(), catalog, &energy);
    gboolean ok = vigild_reasoning_check(&r, config, error);
    vigild_reasoning_clear(&r);
    vigild_energy_share_clear(&energy);
    vigil_metric_catalog_free(catalog);
    if (!ok)
        g_prefix_error(error, "%s: ", name);
    return ok;
}

static vigil_config *load_file(const char *path, GError **error)
{
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry());
    if (!vigil_schema_declare(config, error) || !vigil_config_load(config, path, error)) {
        vigil_config_free(config);
        return NULL;
    }
    return config;
}

vigil_config *tune_config_load(const char *path, GError **error)
{
    vigil_config *config = load_file(path, error);
    if (config != NULL && !check_config(config, path, error)) {
        vigil_config_free(config);
        return NULL;
    }
    return config;
}

/* A recorded configuration: its text in a private folder of its own (the
 * loader reads the folder's conf.d/ too), loaded as a file. */
vigil_config *tune_config_from_text(const char *text, GError **error)
{
    char *dir = g_dir_make_tmp("vigil-tune-XXXXXX", error);
    if (dir == NULL)
        return NULL;
    char *path = g_build_filename(dir, "recorded.conf", NULL);
    vigil_config *config = NULL;
    if (g_file_set_contents(path, text, -1, error))
        config = load_file(path, error);
    if (config != NULL && !check_config(config, "the recorded configuration", error))
        g_clear_pointer(&config, vigil_config_free);
    unlink(path);
    rmdir(dir);
    g_free(path);
    g_free(dir);
    return config;
}

static vigil_config *load_recorded(const char *text, gsize offset, GError **error)
{
    vigil_config *config = tune_config_from_text(text, error);
    if (config == NULL)
        g_prefix_error(error, "the CONFIG record at offset %" G_GSIZE_FORMAT ": ", offset);
    return config;
}

/* ---- counting ------------------------------------------------------------------------------ */

static void reason_free(struct tune_reason *x)
{
    g_free(x->example);
    g_free(x);
}

static void adpi_stats_free(struct tune_adpi_stats *a)
{
    g_free(a->plugin);
    g_hash_table_destroy(a->reasons);
    g_free(a);
}

static struct tune_adpi_stats *adpi_stats(struct tune_result *out, const char *plugin,
                                          enum vigil_level level)
{
    for (guint i = 0; i < out->adpis->len; i++) {
        struct tune_adpi_stats *a = g_ptr_array_index(out->adpis, i);
        if (a->level == level && strcmp(a->plugin, plugin) == 0)
            return a;
    }
    struct tune_adpi_stats *a = g_new0(struct tune_adpi_stats, 1);
    a->plugin = g_strdup(plugin);
    a->level = level;
    a->reasons =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)reason_free);
    g_ptr_array_add(out->adpis, a);
    return a;
}

static void count_verdict(struct tune_result *out, const struct vigild_verdict *v, uint64_t cycle,
                          gboolean *level_abnormal)
{
    enum vigil_health own = v->decision.own;
    out->decisions[v->level]++;
    if (own >= 1 && own <= VIGIL_HEALTH_COUNT)
        out->own_states[v->level][own]++;
    if (vigil_health_is_abnormal(own))
        level_abnormal[v->level] = TRUE;
    for (guint i = 0; i < v->n_issues; i++) {
        const struct vigild_issue *issue = &v->issues[i];
        struct tune_adpi_stats *a = adpi_stats(out, issue->plugin, v->level);
        a->issues++;
        if (issue->issue.health <= VIGIL_HEALTH_COUNT)
            a->by_health[issue->issue.health]++;
        if (a->last_cycle != cycle) {
            a->cycles++;
            a->last_cycle = cycle;
        }
        const char *health = vigil_health_name(issue->issue.health);
        char *key = g_strdup_printf("%s %s", issue->issue.metric, health ? health : "?");
        struct tune_reason *reason = g_hash_table_lookup(a->reasons, key);
        if (reason == NULL) {
            reason = g_new0(struct tune_reason, 1);
            reason->example = g_strdup(issue->issue.message);
            g_hash_table_insert(a->reasons, key, reason);
        } else {
            g_free(key);
        }
        reason->issues++;
    }
}

/* ---- the recorded decisions, against the replayed ones ------------------------------------ */

static gboolean same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

/* Reads one recorded verdict and compares it with the replay's; a
 * difference is described in `why`. */
static void compare_verdict(struct vigild_record_payload *p, const struct vigild_cycle_verdicts *v,
                            GString *why)
{
    uint64_t id = vigild_payload_u64(p, "process id");
    const struct vigild_verdict *x = id == 0 ? v->node : v->process(v->user, id);
    enum vigil_health recorded[5];
    for (int i = 0; i < 5; i++)
        recorded[i] = vigild_payload_u8(p, "state");
    guint8 held = vigild_payload_u8(p, "held");
    uint64_t counts[3];
    for (int i = 0; i < 3; i++)
        counts[i] = vigild_payload_u64(p, "count");
    uint64_t n_issues = vigild_payload_u64(p, "issue count");
    const char *who = id == 0 ? "node" : "process";
    if (x == NULL && why->len == 0)
        g_string_printf(why, "%s %" G_GUINT64_FORMAT ": recorded a decision, replayed none", who,
                        id);
    if (x != NULL && why->len == 0) {
        const struct vigil_reasoner_decision *d = &x->decision;
        enum vigil_health replayed[5] = {d->state, d->upward, d->own, d->own_raw, d->upward_raw};
        guint8 replayed_held =
            (guint8)((d->held ? 1 : 0) | (d->upward_held ? 2 : 0) | (d->own_held ? 4 : 0));
        if (memcmp(recorded, replayed, sizeof recorded) != 0 || held != replayed_held ||
            counts[0] != d->bad || counts[1] != d->good || counts[2] != d->other)
            g_string_printf(why,
                            "%s %" G_GUINT64_FORMAT ": recorded %s (own %s, %" G_GUINT64_FORMAT
                            " bad, %" G_GUINT64_FORMAT " good), replayed %s (own %s, %u bad, %u "
                            "good)",
                            who, id, vigil_health_name(recorded[0]), vigil_health_name(recorded[2]),
                            counts[0], counts[1], vigil_health_name(d->state),
                            vigil_health_name(d->own), d->bad, d->good);
        else if (n_issues != x->n_issues)
            g_string_printf(
                why, "%s %" G_GUINT64_FORMAT ": recorded %" G_GUINT64_FORMAT " issues, replayed %u",
                who, id, n_issues, x->n_issues);
    }
    for (uint64_t i = 0; i < n_issues && !p->bad; i++) {
        char *plugin = vigild_payload_string(p, "issue plugin");
        guint8 health = vigild_payload_u8(p, "issue health");
        char *metric = vigild_payload_string(p, "issue metric");
        double value = vigild_payload_double(p, "issue value");
        char *message = vigild_payload_string(p, "issue message");
        if (x != NULL && why->len == 0 && i < x->n_issues) {
            const struct vigild_issue *issue = &x->issues[i];
            if (strcmp(plugin, issue->plugin) != 0 || health != issue->issue.health ||
                strcmp(metric, issue->issue.metric) != 0 ||
                !same_double(value, issue->issue.value) ||
                strcmp(message, issue->issue.message) != 0)
                g_string_printf(why,
                                "%s %" G_GUINT64_FORMAT ": issue %" G_GUINT64_FORMAT
                                " recorded %s %s %s (%s), replayed %s %s %s (%s)",
                                who, id, i + 1, plugin, vigil_health_name(health), metric, message,
                                issue->plugin, vigil_health_name(issue->issue.health),
                                issue->issue.metric, issue->issue.message);
        }
        g_free(plugin);
        g_free(metric);
        g_free(message);
    }
}

/* ---- the replay ---------------------------------------------------------------------------- */

struct replay {
    struct tune_result *out;
    vigil_config *candidate;
    const struct tune_durations *durations; /* NULL: as recorded */
    GPtrArray *configs; /* the recorded ones, kept while reasoning may point into them */
    vigil_metric_catalog *catalog;
    struct vigild_energy_share energy;
    struct vigild_reasoning reasoning;
    struct vigild_capture capture;
    gboolean configured;
    struct vigild_tick_samples samples;
    GArray *activities;
};

static void apply_config(struct replay *x, vigil_config *config)
{
    struct vigild_settings settings = {0};
    GError *error = NULL;
    if (!vigild_settings_read(&settings, config, &error)) { /* checked at load */
        g_critical("%s", error->message);
        g_error_free(error);
        return;
    }
    vigild_reasoning_configure(&x->reasoning, config, settings.cycle_ticks);
    const struct vigild_capture_settings *c = &settings.capture;
    vigild_capture_configure(&x->capture, c->mode, c->pre_cycles, c->post_cycles, c->max_held);
    x->out->pre_cycles = c->pre_cycles;
    x->out->post_cycles = c->post_cycles;
    vigild_settings_clear(&settings);
    x->configured = TRUE;
}

static gboolean on_config(struct replay *x, struct vigild_record_payload *p, GError **error)
{
    char *text = vigild_payload_string(p, "configuration");
    if (!vigild_payload_done(p, error)) {
        g_free(text);
        return FALSE;
    }
    if (x->configured)
        x->out->reloads++;
    else
        x->out->recorded_config = g_strdup(text);
    if (x->candidate != NULL) {
        /* The candidate applies throughout: the recorded reloads are not
         * its. */
        if (!x->configured)
            apply_config(x, x->candidate);
        g_free(text);
        return TRUE;
    }
    vigil_config *config = load_recorded(text, p->offset, error);
    g_free(text);
    if (config == NULL)
        return FALSE;
    g_ptr_array_add(x->configs, config);
    apply_config(x, config);
    return TRUE;
}

static gboolean on_metric(struct replay *x, struct vigild_record_payload *p, GError **error)
{
    uint64_t id = vigild_payload_u64(p, "metric id");
    guint8 kind = vigild_payload_u8(p, "metric kind");
    guint8 origin = vigild_payload_u8(p, "metric origin");
    char *name = vigild_payload_string(p, "metric name");
    char *unit = vigild_payload_string(p, "metric unit");
    char *source = vigild_payload_string(p, "metric source");
    gboolean ok = vigild_payload_done(p, error);
    if (ok) {
        /* reasoning.c may have registered its own derived metric already,
         * as it did live at the same point. */
        const struct vigil_metric_desc *known = id <= vigil_metric_count(x->catalog)
                                                    ? vigil_metric_get(x->catalog, (uint32_t)id)
                                                    : NULL;
        uint32_t got =
            known != NULL && strcmp(known->name, name) == 0
                ? known->id
                : vigil_metric_register(x->catalog, name, unit, kind, source, origin, NULL);
        if (got != id) {
            g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_CORRUPT,
                        "corrupt at offset %" G_GSIZE_FORMAT
                        ": metric %s recorded as id %" G_GUINT64_FORMAT ", replayed as %u",
                        p->offset, name, id, got);
            ok = FALSE;
        }
    }
    g_free(name);
    g_free(unit);
    g_free(source);
    return ok;
}

static void read_sample(struct vigild_record_payload *p, uint64_t tick_ns, struct vigil_sample *s)
{
    s->metric_id = (uint32_t)vigild_payload_u64(p, "sample metric");
    s->flags = (uint32_t)vigild_payload_u64(p, "sample flags");
    s->t_ns = tick_ns + (uint64_t)vigild_payload_i64(p, "sample time");
    s->value = vigild_payload_double(p, "sample value");
}

static gboolean on_samples(struct replay *x, struct vigild_record_payload *p, GError **error)
{
    struct vigild_tick_samples *t = &x->samples;
    t->t_ns = vigild_payload_u64(p, "tick time");
    x->energy.flags = (uint32_t)vigild_payload_u64(p, "energy flags");
    g_array_set_size(t->node, 0);
    g_array_set_size(t->process, 0);
    uint64_t n = vigild_payload_u64(p, "node sample count");
    for (uint64_t i = 0; i < n && !p->bad && p->at < p->size; i++) {
        struct vigil_sample s;
        read_sample(p, t->t_ns, &s);
        g_array_append_val(t->node, s);
    }
    n = vigild_payload_u64(p, "process sample count");
    for (uint64_t i = 0; i < n && !p->bad && p->at < p->size; i++) {
        struct vigild_process_sample s;
        s.process_id = vigild_payload_u64(p, "sample process");
        read_sample(p, t->t_ns, &s.sample);
        g_array_append_val(t->process, s);
    }
    /* The energy accounts as reasoning.c read them live. */
    g_hash_table_remove_all(x->energy.processes);
    n = vigild_payload_u64(p, "energy account count");
    for (uint64_t i = 0; i < n && !p->bad && p->at < p->size; i++) {
        uint64_t id = vigild_payload_u64(p, "energy process");
        vigild_energy_share_add_process(&x->energy, id);
        struct vigild_energy_account *a = g_hash_table_lookup(x->energy.processes, &id);
        a->shared = vigild_payload_u8(p, "energy shared") != 0;
        a->energy_j = vigild_payload_double(p, "energy");
    }
    if (!vigild_payload_done(p, error))
        return FALSE;
    for (guint i = 0; i < t->node->len; i++)
        if (vigil_metric_get(x->catalog,
                             g_array_index(t->node, struct vigil_sample, i).metric_id) == NULL) {
            g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_CORRUPT,
                        "corrupt at offset %" G_GSIZE_FORMAT ": a sample of metric %u, which no "
                        "METRIC record before it describes",
                        p->offset, g_array_index(t->node, struct vigil_sample, i).metric_id);
            return FALSE;
        }
    x->out->samples_ticks++;
    if (x->out->first_ns == 0)
        x->out->first_ns = t->t_ns;
    vigild_reasoning_samples(&x->reasoning, t, x->catalog);
    return TRUE;
}

static gboolean on_process(struct replay *x, struct vigild_record_payload *p, GError **error)
{
    uint64_t id = vigild_payload_u64(p, "process id");
    if (!vigild_payload_done(p, error))
        return FALSE;
    if (p->type == VIGILD_RECORD_PROCESS_ADD) {
        x->out->processes++;
        vigild_reasoning_add_process(&x->reasoning, id);
        vigild_capture_add_process(&x->capture, id, 0, "", -1);
    } else {
        vigild_reasoning_end_process(&x->reasoning, id);
        vigild_capture_end_process(&x->capture, id);
    }
    return TRUE;
}

static gboolean on_activities(struct replay *x, struct vigild_record_payload *p, GError **error)
{
    g_array_set_size(x->activities, 0);
    uint64_t id = vigild_payload_activities(p, x->activities);
    if (!vigild_payload_done(p, error))
        return FALSE;
    /* Activities are filed in the cycle open when they are fed. */
    const struct tune_durations *d = x->durations;
    gboolean scaled = d != NULL && x->reasoning.cycle >= d->from_cycle;
    for (guint i = 0; i < x->activities->len; i++) {
        struct vigil_activity *a = &g_array_index(x->activities, struct vigil_activity, i);
        if (scaled && a->end_ns > a->start_ns) {
            double ns = round((double)(a->end_ns - a->start_ns) * d->factor);
            double room = (double)(UINT64_MAX - a->start_ns);
            a->end_ns = ns < room ? a->start_ns + (uint64_t)ns : UINT64_MAX;
        }
        vigild_reasoning_activity(&x->reasoning, id, a);
        vigild_capture_activity(&x->capture, id, a);
    }
    x->out->activities += x->activities->len;
    return TRUE;
}

static gboolean on_cycle(struct replay *x, struct vigild_record_payload *p, GError **error)
{
    struct tune_result *out = x->out;
    uint64_t cycle = vigild_payload_u64(p, "cycle");
    uint64_t end_ns = vigild_payload_u64(p, "cycle end");
    gboolean judge = vigild_payload_u8(p, "judged") != 0;
    x->reasoning.system_state = vigild_payload_u8(p, "system state");
    if (p->bad)
        return vigild_payload_done(p, error);
    if (cycle != x->reasoning.cycle) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_CORRUPT,
                    "corrupt at offset %" G_GSIZE_FORMAT ": cycle %" G_GUINT64_FORMAT
                    " recorded where cycle %" G_GUINT64_FORMAT " was due",
                    p->offset, cycle, x->reasoning.cycle);
        return FALSE;
    }
    struct vigild_cycle_verdicts v;
    vigild_reasoning_close_cycle(&x->reasoning, end_ns, judge, &v);
    v.final = !judge;
    /* The recorded decisions, against these. */
    uint64_t n = vigild_payload_u64(p, "decision count");
    GString *why = g_string_new(NULL);
    guint replayed = 1; /* the node */
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, x->reasoning.processes);
    while (g_hash_table_iter_next(&it, &key, NULL))
        if (v.process(v.user, *(uint64_t *)key) != NULL)
            replayed++;
    for (uint64_t i = 0; i < n && !p->bad && p->at < p->size; i++)
        compare_verdict(p, &v, why);
    if (!vigild_payload_done(p, error)) {
        g_string_free(why, TRUE);
        return FALSE;
    }
    if (why->len == 0 && n != replayed)
        g_string_printf(why, "%" G_GUINT64_FORMAT " decisions recorded, %u replayed", n, replayed);
    if (x->durations == NULL || cycle < x->durations->from_cycle) {
        out->compared++;
        if (why->len == 0)
            out->matched++;
        else if (out->first_mismatch == NULL)
            out->first_mismatch =
                g_strdup_printf("cycle %" G_GUINT64_FORMAT ": %s", cycle, why->str);
    }
    g_string_free(why, TRUE);
    /* What was decided, counted. */
    gboolean level_abnormal[VIGIL_LEVEL_COUNT + 1] = {FALSE};
    count_verdict(out, v.node, cycle, level_abnormal);
    g_hash_table_iter_init(&it, x->reasoning.processes);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        const struct vigild_verdict *pv = v.process(v.user, *(uint64_t *)key);
        if (pv != NULL)
            count_verdict(out, pv, cycle, level_abnormal);
    }
    gboolean flagged = vigil_health_is_abnormal(v.system_state);
    for (unsigned level = 1; level <= VIGIL_LEVEL_COUNT; level++)
        if (level_abnormal[level]) {
            out->abnormal_cycles[level]++;
            flagged = TRUE;
        }
    out->flagged_cycles += flagged;
    out->cycles++;
    out->judged_cycles += judge;
    out->last_ns = end_ns;
    struct tune_cycle c = {
        .cycle = cycle, .start_ns = v.start_ns, .end_ns = end_ns, .flagged = flagged};
    g_array_append_val(out->cycle_list, c);
    vigild_capture_close_cycle(&x->capture, &v);
    return TRUE;
}

static gboolean on_start(struct replay *x, struct vigild_record_payload *p, GError **error)
{
    uint64_t start_ns = vigild_payload_u64(p, "first cycle start");
    char *version = vigild_payload_string(p, "version");
    char *node = NULL;
    int64_t wall_offset_ns = 0;
    if (p->version >= 2) {
        node = vigild_payload_string(p, "node");
        wall_offset_ns = vigild_payload_i64(p, "wall-clock offset");
    }
    gboolean ok = vigild_payload_done(p, error);
    if (ok && node != NULL && node[0] == '\0') {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_CORRUPT,
                    "corrupt at offset %" G_GSIZE_FORMAT ": the START record names no node",
                    p->offset);
        ok = FALSE;
    }
    if (!ok) {
        g_free(version);
        g_free(node);
        return FALSE;
    }
    g_free(x->out->vigil_version);
    x->out->vigil_version = version;
    g_free(x->out->node);
    x->out->node = node;
    x->out->has_wall_clock = p->version >= 2;
    x->out->realtime_minus_monotonic_ns = wall_offset_ns;
    x->reasoning.cycle_start_ns = start_ns;
    x->capture.cycle_start_ns = start_ns;
    return TRUE;
}

typedef gboolean record_handler(struct replay *x, struct vigild_record_payload *p, GError **error);

/* LIMIT: the recording stopped at record_max_bytes; END: vigild ended it cleanly. */
static gboolean on_limit(struct replay *x, struct vigild_record_payload *p, GError **error)
{
    x->out->limited = TRUE;
    return vigild_payload_done(p, error);
}

static gboolean on_end(struct replay *x, struct vigild_record_payload *p, GError **error)
{
    x->out->ended = TRUE;
    return vigild_payload_done(p, error);
}

static gboolean dispatch(struct replay *x, struct vigild_record_payload *p, GError **error)
{
    if (!x->configured && p->type != VIGILD_RECORD_START && p->type != VIGILD_RECORD_CONFIG &&
        p->type != VIGILD_RECORD_METRIC) {
        g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_CORRUPT,
                    "corrupt at offset %" G_GSIZE_FORMAT ": a %s record before any CONFIG record",
                    p->offset, vigild_record_type_name(p->type));
        return FALSE;
    }
    static record_handler *const on[VIGILD_RECORD_TYPE_MAX + 1] = {
        [VIGILD_RECORD_START] = on_start,           [VIGILD_RECORD_CONFIG] = on_config,
        [VIGILD_RECORD_METRIC] = on_metric,         [VIGILD_RECORD_SAMPLES] = on_samples,
        [VIGILD_RECORD_PROCESS_ADD] = on_process,   [VIGILD_RECORD_PROCESS_END] = on_process,
        [VIGILD_RECORD_ACTIVITIES] = on_activities, [VIGILD_RECORD_CYCLE] = on_cycle,
        [VIGILD_RECORD_LIMIT] = on_limit,           [VIGILD_RECORD_END] = on_end,
    };
    /* A type this vigil does not know (a newer vigild's) is passed over. */
    if (p->type > VIGILD_RECORD_TYPE_MAX || on[p->type] == NULL)
        return TRUE;
    return on[p->type](x, p, error);
}

gboolean tune_replay(const char *path, vigil_config *candidate,
                     const struct tune_durations *durations, struct tune_result *out,
                     GError **error)
{
    memset(out, 0, sizeof *out);
    out->cut_at_offset = -1;
    out->adpis = g_ptr_array_new_with_free_func((GDestroyNotify)adpi_stats_free);
    out->cycle_list = g_array_new(FALSE, FALSE, sizeof(struct tune_cycle));
    struct vigild_record_reader reader;
    if (!vigild_record_reader_open(&reader, path, error))
        return FALSE;
    gint64 began_us = g_get_monotonic_time();
    struct replay x = {.out = out, .candidate = candidate, .durations = durations};
    x.configs = g_ptr_array_new_with_free_func((GDestroyNotify)vigil_config_free);
    x.catalog = vigil_metric_catalog_new();
    vigild_energy_share_init(&x.energy);
    vigild_reasoning_init(&x.reasoning, registry(), x.catalog, &x.energy);
    vigild_capture_init(&x.capture, x.catalog);
    x.samples.node = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
    x.samples.process = g_array_new(FALSE, FALSE, sizeof(struct vigild_process_sample));
    x.activities = g_array_new(FALSE, FALSE, sizeof(struct vigil_activity));
    struct vigild_record_payload p;
    gboolean ok = TRUE;
    GError *local = NULL;
    while (ok && vigild_record_next(&reader, &p, &local))
        ok = dispatch(&x, &p, &local);
    /* A file that ends inside a record is what a SIGKILL during a write,
     * or a copy taken while vigild still records, leaves: everything
     * before that record is whole (each record has its checksum), so it
     * is replayed. Damage anywhere else is refused. */
    char *cut = NULL;
    if (g_error_matches(local, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_TRUNCATED)) {
        out->cut_at_offset = (gint64)reader.offset;
        cut = g_strdup(local->message);
        g_clear_error(&local);
    }
    if (local != NULL) {
        ok = FALSE;
        if (!g_str_has_prefix(local->message, path))
            g_prefix_error(&local, "%s: ", path);
        g_propagate_error(error, local);
    } else if (out->cycles == 0) {
        ok = FALSE;
        if (cut != NULL)
            g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_TRUNCATED,
                        "%s, before the recording's first complete cycle", cut);
        else
            g_set_error(error, VIGILD_RECORD_ERROR, VIGILD_RECORD_ERROR_FORMAT,
                        "%s: the recording has no complete cycle", path);
    }
    g_free(cut);
    struct vigild_capture_counts counts;
    vigild_capture_counts(&x.capture, 0, &counts);
    out->observed = counts.observed;
    out->forwarded = counts.forwarded;
    out->dropped = counts.dropped;
    out->lost = counts.lost;
    out->windows = counts.windows;
    vigild_capture_clear(&x.capture);
    vigild_reasoning_clear(&x.reasoning);
    vigild_energy_share_clear(&x.energy);
    vigil_metric_catalog_free(x.catalog);
    g_ptr_array_free(x.configs, TRUE);
    g_array_free(x.samples.node, TRUE);
    g_array_free(x.samples.process, TRUE);
    g_array_free(x.activities, TRUE);
    vigild_record_reader_clear(&reader);
    out->replay_s = (double)(g_get_monotonic_time() - began_us) / 1e6;
    return ok;
}

static gint by_issues(gconstpointer a, gconstpointer b, gpointer reasons)
{
    const struct tune_reason *x = g_hash_table_lookup(reasons, *(char *const *)a);
    const struct tune_reason *y = g_hash_table_lookup(reasons, *(char *const *)b);
    if (x->issues != y->issues)
        return x->issues > y->issues ? -1 : 1;
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The reasons of an ADPI, most issues first. */
GPtrArray *tune_sorted_reasons(const struct tune_adpi_stats *a)
{
    GPtrArray *keys = g_ptr_array_new();
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, a->reasons);
    while (g_hash_table_iter_next(&it, &key, NULL))
        g_ptr_array_add(keys, key);
    g_ptr_array_sort_with_data(keys, by_issues, a->reasons);
    return keys;
}

void tune_result_clear(struct tune_result *r)
{
    if (r->adpis != NULL)
        g_ptr_array_free(r->adpis, TRUE);
    if (r->cycle_list != NULL)
        g_array_free(r->cycle_list, TRUE);
    g_free(r->first_mismatch);
    g_free(r->vigil_version);
    g_free(r->node);
    g_free(r->recorded_config);
    memset(r, 0, sizeof *r);
}

gint64 tune_result_wall_us(const struct tune_result *r, uint64_t monotonic_ns)
{
    if (!r->has_wall_clock)
        return -1;
    return ((int64_t)monotonic_ns + r->realtime_minus_monotonic_ns) / 1000;
}
