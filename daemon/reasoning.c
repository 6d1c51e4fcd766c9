/* vigild — the reasoner tree on the node: a reasoner per registered process
 * and one for the node, each with the ADPIs its [reasoner.LEVEL] adpis key
 * names, decided at the end of every cycle (cycle_ms, 1 s by default).
 *
 * Processes decide first, with the node's last state as their parent's;
 * then the node, with this cycle's process states as its children's and the
 * system's last state (from upstream, once there is one) as its parent's.
 * The rule is the library's (vigil/reasoner.h), so the system reasoner in
 * vigil-txd applies the same one. */
#include <math.h>
#include <string.h>

#include "cycle_record.h"
#include "energy_share.h"
#include "reasoning.h"
#include "tick_costs.h"
#include "tick_samples.h"
#include "verdicts.h"
#include "vigil/clock.h"
#include "vigil/local_protocol.h"
#include "vigil/node_load.h"

/* A disk's busy time, "disk.*.busy_s" as a glob: tested by its two ends,
 * since g_pattern_match_simple compiled the pattern again for every metric
 * at every cycle's close (a tenth of the daemon's instructions). */
static gboolean is_disk_busy(const char *name)
{
    static const char prefix[] = "disk.", suffix[] = ".busy_s";
    size_t length = strlen(name);
    return length >= sizeof prefix - 1 + sizeof suffix - 1 &&
           strncmp(name, prefix, sizeof prefix - 1) == 0 &&
           strcmp(name + length - (sizeof suffix - 1), suffix) == 0;
}

/* ADPI instances ----------------------------------------------------------------------------- */

static void adpi_free(struct vigild_adpi *a)
{
    if (a->instance != NULL && a->plugin->descriptor->destroy != NULL)
        a->plugin->descriptor->destroy(a->instance);
    g_free(a->name);
    g_free(a->config_text);
    g_free(a);
}

/* The plugin of `kind` named `name`, its section declared in `config` so
 * that its keys can be read even when the file has no such section. */
static const struct vigil_plugin *load_plugin(vigil_plugin_registry *registry, vigil_config *config,
                                              enum vigil_plugin_kind kind, const char *name,
                                              char **section, GError **error)
{
    const struct vigil_plugin *plugin = vigil_plugin_registry_load(registry, kind, name, error);
    if (plugin == NULL)
        return NULL;
    *section = g_strconcat(vigil_plugin_kind_name(kind), ".", name, NULL);
    if (!vigil_config_has_section(config, *section) &&
        !vigil_plugin_registry_resolve_section(config, *section, registry, error)) {
        g_clear_pointer(section, g_free);
        return NULL;
    }
    return plugin;
}

static struct vigild_adpi *adpi_new(struct vigild_reasoning *r, vigil_config *config,
                                    const char *name, GError **error)
{
    char *section = NULL;
    const struct vigil_plugin *plugin =
        load_plugin(r->registry, config, VIGIL_PLUGIN_ADPI, name, &section, error);
    if (plugin == NULL)
        return NULL;
    struct vigil_plugin_context context = {.config = config, .section = section};
    void *instance = plugin->descriptor->create(&context, error);
    if (instance == NULL) {
        g_free(section);
        return NULL;
    }
    struct vigild_adpi *a = g_new0(struct vigild_adpi, 1);
    a->name = g_strdup(name);
    a->plugin = plugin;
    a->ops = plugin->descriptor->ops;
    a->instance = instance;
    a->config_text = vigil_plugin_config_text(config, plugin, section);
    g_free(section);
    return a;
}

/* The ADPI `name` of `old`, reconfigured when its section changed (or
 * made again when it cannot be), or a new one. */
static struct vigild_adpi *adpi_take(struct vigild_reasoning *r, vigil_config *config,
                                     GPtrArray *old, const char *name)
{
    GError *error = NULL;
    for (guint i = 0; i < old->len; i++) {
        struct vigild_adpi *a = g_ptr_array_index(old, i);
        if (a == NULL || strcmp(a->name, name) != 0)
            continue;
        old->pdata[i] = NULL;
        char *section = g_strconcat("adpi.", name, NULL);
        char *text = vigil_plugin_config_text(config, a->plugin, section);
        struct vigil_plugin_context context = {.config = config, .section = section};
        if (strcmp(text, a->config_text) != 0 && a->ops->reconfigure != NULL &&
            a->ops->reconfigure(a->instance, &context, &error)) {
            g_free(a->config_text);
            a->config_text = text;
            text = NULL;
        } else if (strcmp(a->config_text, text) != 0) {
            /* Cannot take the values in place: it starts learning again. */
            if (error != NULL)
                g_message("adpi %s: %s; it is made again", name, error->message);
            g_clear_error(&error);
            adpi_free(a);
            a = adpi_new(r, config, name, &error);
        }
        g_free(text);
        g_free(section);
        if (a == NULL) {
            g_warning("adpi %s: %s", name, error->message);
            g_error_free(error);
        }
        return a;
    }
    struct vigild_adpi *a = adpi_new(r, config, name, &error);
    if (a == NULL) {
        g_warning("adpi %s: %s", name, error->message);
        g_error_free(error);
    }
    return a;
}

static void reasoner_set_adpis(struct vigild_reasoning *r, struct vigild_reasoner *x,
                               vigil_config *config)
{
    GPtrArray *old = x->adpis;
    x->adpis = g_ptr_array_new_with_free_func((GDestroyNotify)adpi_free);
    char **names = r->adpi_names[x->level];
    for (guint i = 0; names != NULL && names[i] != NULL; i++) {
        struct vigild_adpi *a = adpi_take(r, config, old, names[i]);
        if (a != NULL) {
            a->cost = vigild_adpi_costs_for(r->adpi_costs, x->level, a->name);
            g_ptr_array_add(x->adpis, a);
        }
    }
    /* What is left of the old set was not named again. */
    g_ptr_array_set_free_func(old, NULL);
    for (guint i = 0; i < old->len; i++)
        if (g_ptr_array_index(old, i) != NULL)
            adpi_free(g_ptr_array_index(old, i));
    g_ptr_array_free(old, TRUE);
}

/* Reasoners ---------------------------------------------------------------------------------- */

static struct vigild_reasoner *reasoner_new(enum vigil_level level, uint64_t process_id)
{
    struct vigild_reasoner *x = g_new0(struct vigild_reasoner, 1);
    x->level = level;
    x->process_id = process_id;
    x->adpis = g_ptr_array_new();
    x->issues = g_array_new(FALSE, FALSE, sizeof(struct vigild_issue));
    x->verdict.level = level;
    x->verdict.process_id = process_id;
    return x;
}

static void reasoner_free(struct vigild_reasoner *x)
{
    g_ptr_array_free(x->adpis, TRUE);
    g_array_free(x->issues, TRUE);
    g_free(x);
}

void vigild_reasoning_init(struct vigild_reasoning *r, vigil_plugin_registry *registry,
                           vigil_metric_catalog *catalog, const struct vigild_energy_share *energy)
{
    memset(r, 0, sizeof *r);
    r->registry = registry;
    r->catalog = catalog;
    r->energy = energy;
    r->node = reasoner_new(VIGIL_LEVEL_NODE, 0);
    r->processes =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, (GDestroyNotify)reasoner_free);
    r->cycle = 1;
    r->cycle_start_ns = vigil_clock_monotonic_ns();
    r->cycle_ticks = 10;
    vigil_cycle_values_init(&r->node_values);
    r->feed = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
    r->children = g_array_new(FALSE, FALSE, sizeof(enum vigil_health));
    r->adpi_costs = g_ptr_array_new_with_free_func((GDestroyNotify)vigild_adpi_cost_free);
}

static const char *const level_plugins[VIGIL_LEVEL_COUNT + 1] = {
    [VIGIL_LEVEL_PROCESS] = "process",
    [VIGIL_LEVEL_NODE] = "node",
};

gboolean vigild_reasoning_check(struct vigild_reasoning *r, vigil_config *config, GError **error)
{
    for (unsigned level = VIGIL_LEVEL_PROCESS; level <= VIGIL_LEVEL_NODE; level++) {
        char *section = NULL;
        if (load_plugin(r->registry, config, VIGIL_PLUGIN_REASONER, level_plugins[level], &section,
                        error) == NULL)
            return FALSE;
        struct vigil_reasoner_settings settings;
        if (!vigil_reasoner_settings_load(config, section, &settings, error)) {
            g_free(section);
            return FALSE;
        }
        char *const *names = settings.adpis;
        for (guint i = 0; names != NULL && names[i] != NULL; i++) {
            /* A throwaway instance: its create() checks its keys together. */
            GError *adpi_error = NULL;
            struct vigild_adpi *a = adpi_new(r, config, names[i], &adpi_error);
            if (a == NULL) {
                g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                            "[%s] adpis: %s: %s", section, names[i], adpi_error->message);
                g_error_free(adpi_error);
                vigil_reasoner_settings_clear(&settings);
                g_free(section);
                return FALSE;
            }
            adpi_free(a);
        }
        vigil_reasoner_settings_clear(&settings);
        g_free(section);
    }
    return TRUE;
}

void vigild_reasoning_configure(struct vigild_reasoning *r, vigil_config *config, guint cycle_ticks)
{
    for (unsigned level = VIGIL_LEVEL_PROCESS; level <= VIGIL_LEVEL_NODE; level++) {
        char *section = NULL;
        GError *error = NULL;
        const struct vigil_plugin *plugin = load_plugin(r->registry, config, VIGIL_PLUGIN_REASONER,
                                                        level_plugins[level], &section, &error);
        if (plugin == NULL) { /* vigild_reasoning_check passed: cannot happen */
            g_critical("reasoner %s: %s", level_plugins[level], error->message);
            g_error_free(error);
            continue;
        }
        struct vigil_plugin_context context = {.config = config, .section = section};
        const struct vigil_reasoner_ops *ops = plugin->descriptor->ops;
        if (r->instances[level] == NULL)
            r->instances[level] = plugin->descriptor->create(&context, &error);
        else if (!ops->reconfigure(r->instances[level], &context, &error))
            g_warning("reasoner %s: %s; its values stay", level_plugins[level], error->message);
        g_clear_error(&error);
        r->plugins[level] = plugin;
        struct vigil_reasoner_settings settings = {0};
        if (!vigil_reasoner_settings_load(config, section, &settings, &error)) {
            g_critical("reasoner %s: %s", level_plugins[level], error->message); /* checked */
            g_clear_error(&error);
        }
        g_strfreev(r->adpi_names[level]);
        r->adpi_names[level] = g_steal_pointer(&settings.adpis);
        vigil_reasoner_settings_clear(&settings);
        g_free(section);
    }
    r->config = config;
    reasoner_set_adpis(r, r->node, config);
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, r->processes);
    while (g_hash_table_iter_next(&it, NULL, &value))
        reasoner_set_adpis(r, value, config);
    r->cycle_ticks = cycle_ticks;
    if (r->record != NULL)
        vigild_cycle_record_config(r->record, config);
}

void vigild_reasoning_add_process(struct vigild_reasoning *r, uint64_t process_id)
{
    if (g_hash_table_contains(r->processes, &process_id))
        return;
    struct vigild_reasoner *x = reasoner_new(VIGIL_LEVEL_PROCESS, process_id);
    if (r->config != NULL)
        reasoner_set_adpis(r, x, r->config);
    g_hash_table_insert(r->processes, &x->process_id, x);
    if (r->record != NULL)
        vigild_cycle_record_process(r->record, process_id, FALSE);
}

void vigild_reasoning_end_process(struct vigild_reasoning *r, uint64_t process_id)
{
    struct vigild_reasoner *x = g_hash_table_lookup(r->processes, &process_id);
    if (x != NULL)
        x->ended = TRUE;
    if (r->record != NULL)
        vigild_cycle_record_process(r->record, process_id, TRUE);
}

/* Feeding ------------------------------------------------------------------------------------ */

/* The id of a metric vigild derives itself, registered as measured or
 * estimated like the energy it comes from; 0 when it cannot be. */
static uint32_t derived_id(struct vigild_reasoning *r, uint32_t *id, const char *name,
                           gboolean estimated)
{
    if (*id != 0)
        return *id == UINT32_MAX ? 0 : *id;
    GError *error = NULL;
    *id = vigil_metric_register(r->catalog, name, "J", VIGIL_METRIC_COUNTER, "vigild/energy-share",
                                estimated ? VIGIL_METRIC_ESTIMATED : VIGIL_METRIC_MEASURED, &error);
    if (*id == 0) {
        g_warning("%s: %s; the ADPIs go without it", name, error->message);
        g_error_free(error);
        *id = UINT32_MAX;
        return 0;
    }
    return *id;
}

static void feed_samples(struct vigild_reasoner *x, const vigil_metric_catalog *catalog,
                         const GArray *samples)
{
    uint64_t since_ns = vigil_clock_monotonic_ns();
    for (guint i = 0; i < x->adpis->len; i++) {
        const struct vigild_adpi *a = g_ptr_array_index(x->adpis, i);
        if (a->ops->samples == NULL)
            continue;
        a->ops->samples(a->instance, catalog, (const struct vigil_sample *)samples->data,
                        samples->len);
        uint64_t now_ns = vigil_clock_monotonic_ns();
        vigild_cost_add(&a->cost->samples, now_ns - since_ns);
        since_ns = now_ns;
    }
}

static void append_energy(struct vigild_reasoning *r, uint32_t *id, const char *name,
                          double energy_j, uint64_t t_ns)
{
    gboolean estimated = (r->energy->flags & VIGIL_LOCAL_ENERGY_ESTIMATED) != 0;
    if (!isfinite(energy_j) || derived_id(r, id, name, estimated) == 0)
        return;
    struct vigil_sample s = {
        .metric_id = *id,
        .flags = (r->energy->flags & VIGIL_LOCAL_ENERGY_UNCERTAIN) ? VIGIL_SAMPLE_UNCERTAIN : 0,
        .t_ns = t_ns,
        .value = energy_j,
    };
    g_array_append_val(r->feed, s);
}

void vigild_reasoning_samples(void *reasoning, const struct vigild_tick_samples *samples,
                              const vigil_metric_catalog *catalog)
{
    struct vigild_reasoning *r = reasoning;
    if (r->record != NULL)
        vigild_cycle_record_samples(r->record, samples, catalog, r->energy);
    vigil_cycle_values_add(&r->node_values, catalog,
                           (const struct vigil_sample *)samples->node->data, samples->node->len);
    g_array_set_size(r->feed, 0);
    g_array_append_vals(r->feed, samples->node->data, samples->node->len);
    feed_samples(r->node, catalog, r->feed);
    /* A provider emits one process's samples together: each run of the
     * same id is that process's part of the tick. */
    const GArray *all = samples->process;
    for (guint i = 0; i < all->len;) {
        uint64_t id = g_array_index(all, struct vigild_process_sample, i).process_id;
        g_array_set_size(r->feed, 0);
        for (; i < all->len && g_array_index(all, struct vigild_process_sample, i).process_id == id;
             i++)
            g_array_append_val(r->feed, g_array_index(all, struct vigild_process_sample, i).sample);
        struct vigild_reasoner *x = g_hash_table_lookup(r->processes, &id);
        if (x == NULL)
            continue;
        const struct vigild_energy_account *account = vigild_energy_share_account(r->energy, id);
        if (account != NULL && account->shared)
            append_energy(r, &r->process_energy_id, "process.energy_j", account->energy_j,
                          samples->t_ns);
        feed_samples(x, catalog, r->feed);
    }
}

static void feed_activity(struct vigild_reasoner *x, const struct vigil_activity *activity)
{
    for (guint i = 0; i < x->adpis->len; i++) {
        const struct vigild_adpi *a = g_ptr_array_index(x->adpis, i);
        if (a->ops->activity == NULL)
            continue;
        struct vigild_cost *cost = &a->cost->activities;
        if (cost->count++ % VIGILD_ACTIVITY_SAMPLE_EVERY != 0) {
            a->ops->activity(a->instance, activity);
            continue;
        }
        uint64_t begin_ns = vigil_clock_monotonic_ns();
        a->ops->activity(a->instance, activity);
        uint64_t ns = vigil_clock_monotonic_ns() - begin_ns;
        cost->last_ns = ns;
        cost->total_ns += ns * VIGILD_ACTIVITY_SAMPLE_EVERY;
        if (ns > cost->max_ns)
            cost->max_ns = ns;
    }
}

void vigild_reasoning_activity(struct vigild_reasoning *r, uint64_t process_id,
                               const struct vigil_activity *activity)
{
    if (r->record != NULL)
        vigild_cycle_record_activity(r->record, process_id, activity);
    struct vigild_reasoner *x = g_hash_table_lookup(r->processes, &process_id);
    if (x != NULL)
        feed_activity(x, activity);
    feed_activity(r->node, activity);
}

gboolean vigild_reasoning_tick(struct vigild_reasoning *r)
{
    return ++r->ticks_in_cycle >= r->cycle_ticks;
}

/* Deciding ----------------------------------------------------------------------------------- */

struct issue_target {
    struct vigild_reasoner *reasoner;
    const char *plugin;
};

static void take_issue(void *user, const struct vigil_issue *issue)
{
    struct issue_target *t = user;
    struct vigild_issue x = {.plugin = t->plugin, .issue = *issue};
    g_array_append_val(t->reasoner->issues, x);
}

/* `node_load`: the cycle's load of the node, for the process ADPIs that
 * judge in it; NULL for the node's reasoner. */
static void decide(struct vigild_reasoning *r, struct vigild_reasoner *x, uint64_t end_ns,
                   gboolean judge, const struct vigil_node_load *node_load,
                   struct vigil_reasoner_input *input)
{
    g_array_set_size(x->issues, 0);
    struct issue_target target = {.reasoner = x};
    struct vigil_issue_sink sink = {.report = take_issue, .user = &target};
    for (guint i = 0; judge && i < x->adpis->len; i++) {
        const struct vigild_adpi *a = g_ptr_array_index(x->adpis, i);
        target.plugin = a->plugin->descriptor->name;
        uint64_t begin_ns = vigil_clock_monotonic_ns();
        if (node_load != NULL && a->ops->node_load != NULL)
            a->ops->node_load(a->instance, node_load);
        a->ops->cycle(a->instance, r->cycle, end_ns, &sink);
        vigild_cost_add(&a->cost->cycle, vigil_clock_monotonic_ns() - begin_ns);
    }
    memset(input->issues, 0, sizeof input->issues);
    for (guint i = 0; i < x->issues->len; i++) {
        unsigned health = g_array_index(x->issues, struct vigild_issue, i).issue.health;
        if (health >= 1 && health <= VIGIL_HEALTH_COUNT)
            input->issues[health]++;
    }
    const struct vigil_reasoner_ops *ops = r->plugins[x->level]->descriptor->ops;
    vigil_reasoner_decide(ops->rule(r->instances[x->level]), &x->memory, input,
                          &x->verdict.decision);
    x->verdict.issues = (const struct vigild_issue *)x->issues->data;
    x->verdict.n_issues = x->issues->len;
    x->decided = TRUE;
}

/* This cycle's state of the node metric `name`, or NULL. */
static const struct vigil_cycle_metric *node_metric(const struct vigild_reasoning *r,
                                                    const char *name)
{
    const struct vigil_metric_desc *m = vigil_metric_lookup(r->catalog, name);
    return m != NULL ? vigil_cycle_values_get(&r->node_values, m->id) : NULL;
}

static gboolean cycle_value(const struct vigild_reasoning *r, const char *name, double *value)
{
    const struct vigil_cycle_metric *cm = node_metric(r, name);
    return cm != NULL && vigil_cycle_metric_value(cm, value);
}

/* The node's utilisation this cycle: CPU busy time over all CPU time,
 * memory used over total, the busiest disk's busy time per second. */
static size_t node_utilisation(const struct vigild_reasoning *r,
                               const struct vigil_node_load *node_load, struct vigil_load *load)
{
    size_t n = 0;
    if (isfinite(node_load->cpu_busy))
        load[n++] = (struct vigil_load){"cpu", node_load->cpu_busy};
    double used, size;
    if (cycle_value(r, "mem.used_bytes", &used) && cycle_value(r, "mem.total_bytes", &size) &&
        size > 0)
        load[n++] = (struct vigil_load){"memory", used / size};
    double busiest = -1;
    for (uint32_t id = 1; id <= vigil_metric_count(r->catalog); id++) {
        const struct vigil_metric_desc *m = vigil_metric_get(r->catalog, id);
        const struct vigil_cycle_metric *cm = vigil_cycle_values_get(&r->node_values, id);
        double rate;
        if (cm != NULL && is_disk_busy(m->name) && vigil_cycle_metric_value(cm, &rate) &&
            rate > busiest)
            busiest = rate;
    }
    if (busiest >= 0)
        load[n++] = (struct vigil_load){"io", MIN(busiest, 1.0)};
    return n;
}

static const struct vigild_verdict *process_verdict(void *user, uint64_t process_id)
{
    return vigild_reasoning_verdict(user, process_id);
}

void vigild_reasoning_close_cycle(struct vigild_reasoning *r, uint64_t end_ns, gboolean judge,
                                  struct vigild_cycle_verdicts *out)
{
    /* Processes that ended had their last cycle decided at the close
     * before: only now may their verdicts go. */
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, r->processes);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct vigild_reasoner *x = value;
        if (x->ended && x->decided_after_end)
            g_hash_table_iter_remove(&it);
    }
    enum vigil_health node_last = r->node->decided ? r->node->verdict.decision.state : 0;
    /* Once for every process: the node's samples of the cycle. */
    struct vigil_node_load node_load;
    vigil_node_load_of(&r->node_values, r->catalog, &node_load);
    g_array_set_size(r->children, 0);
    g_hash_table_iter_init(&it, r->processes);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct vigild_reasoner *x = value;
        struct vigil_reasoner_input input = {.parent = node_last};
        decide(r, x, end_ns, judge, &node_load, &input);
        g_array_append_val(r->children, x->verdict.decision.upward_raw);
        if (x->ended)
            x->decided_after_end = TRUE;
    }
    struct vigil_load load[3];
    struct vigil_reasoner_input input = {
        .children = (const enum vigil_health *)r->children->data,
        .n_children = r->children->len,
        .parent = r->system_state,
        .load = load,
        .n_load = judge ? node_utilisation(r, &node_load, load) : 0,
    };
    decide(r, r->node, end_ns, judge, NULL, &input);
    vigil_cycle_values_next(&r->node_values);
    *out = (struct vigild_cycle_verdicts){
        .cycle = r->cycle,
        .start_ns = r->cycle_start_ns,
        .end_ns = end_ns,
        .node = &r->node->verdict,
        .system_state = r->system_state,
        .process = process_verdict,
        .user = r,
    };
    if (r->record != NULL)
        vigild_cycle_record_cycle(r->record, r, judge, out);
    r->cycle++;
    r->cycle_start_ns = end_ns;
    r->ticks_in_cycle = 0;
}

const struct vigild_verdict *vigild_reasoning_verdict(const struct vigild_reasoning *r,
                                                      uint64_t process_id)
{
    if (process_id == 0)
        return r->node->decided ? &r->node->verdict : NULL;
    const struct vigild_reasoner *x = g_hash_table_lookup(r->processes, &process_id);
    return x != NULL && x->decided ? &x->verdict : NULL;
}

void vigild_reasoning_clear(struct vigild_reasoning *r)
{
    if (r->processes == NULL)
        return;
    g_hash_table_destroy(r->processes);
    r->processes = NULL;
    vigild_cycle_record_close(r->record);
    r->record = NULL;
    reasoner_free(r->node);
    for (unsigned level = 1; level <= VIGIL_LEVEL_COUNT; level++) {
        if (r->instances[level] != NULL)
            r->plugins[level]->descriptor->destroy(r->instances[level]);
        g_strfreev(r->adpi_names[level]);
    }
    vigil_cycle_values_clear(&r->node_values);
    g_array_free(r->feed, TRUE);
    g_array_free(r->children, TRUE);
    g_ptr_array_free(r->adpi_costs, TRUE);
}
