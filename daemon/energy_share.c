/* vigild — per-process energy: each tick, the node's energy delta is
 * shared among the registered processes by their share of the CPU time the
 * node was busy for, and summed over each process's life.
 *
 * This is an attribution, not a measurement: RAPL meters a socket, not a
 * process. CPU time is the best single proxy a node offers without
 * per-core counters; a process that mostly waits on I/O gets little of the
 * node's energy even though its I/O costs some. The node's energy is the
 * platform zone (psys) when RAPL has one, since it already contains the
 * packages; else the packages plus their DRAM; else the estimate.
 *
 * The node's energy (node.energy_j) is one running sum of the deltas: a
 * change of source, of zone kind or count, or a counter that went back
 * starts a new segment (energy_segments.c) whose first tick adds nothing,
 * rather than a jump from one total to another.
 *
 * On a node whose registered processes all belong to one job (or run),
 * that job gets the node's whole delta, split among its processes by their
 * CPU time: the node is the job's, as Slurm counts an exclusive node, and
 * the idle power it draws is the job's too. Only on a node shared between
 * jobs is a process's share its part of the node's busy CPU time. */
#include <math.h>
#include <string.h>

#include "energy_share.h"
#include "tick_samples.h"
#include "vigil/local_protocol.h"

void vigild_energy_split(double energy_j, double busy_s, const double *cpu_s, size_t n,
                         double *share_j)
{
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        double share = busy_s > 0 && cpu_s[i] > 0 ? cpu_s[i] / busy_s : 0;
        share_j[i] = share > 1 ? 1 : share;
        total += share_j[i];
    }
    double scale = total > 1 ? 1 / total : 1;
    for (size_t i = 0; i < n; i++)
        share_j[i] *= scale * energy_j;
}

/* Shares of a whole delta among one job's processes by the CPU time they
 * used; equal shares when none used any. */
static void split_whole(double energy_j, const double *cpu_s, size_t n, double *share_j)
{
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += cpu_s[i] > 0 ? cpu_s[i] : 0;
    for (size_t i = 0; i < n; i++)
        share_j[i] =
            total > 0 ? energy_j * (cpu_s[i] > 0 ? cpu_s[i] : 0) / total : energy_j / (double)n;
}

static void account_free(gpointer data)
{
    struct vigild_energy_account *a = data;
    g_free(a->owner);
    g_free(a);
}

void vigild_energy_share_init(struct vigild_energy_share *e)
{
    e->processes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, account_free);
    e->owners = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    e->segments = g_array_new(FALSE, TRUE, sizeof(struct vigild_energy_segment));
    e->segments_total = 0;
    e->node_cpu_busy_s = NAN;
    e->node_energy_j = NAN;
    e->node_metric_id = 0;
    e->zone_total_j = NAN;
    e->zone_kind = -1;
    e->zone_count = 0;
    e->source = NULL;
    e->flags = 0;
    e->unavailable =
        g_strdup("vigild has not sampled the node's energy yet (it started less than a tick ago)");
    e->roles = g_array_new(FALSE, TRUE, sizeof(guint8));
    e->tick_accounts = g_ptr_array_new();
    e->tick_used_s = g_array_new(FALSE, FALSE, sizeof(double));
}

void vigild_energy_share_add_process(struct vigild_energy_share *e, uint64_t process_id)
{
    struct vigild_energy_account *a = g_new0(struct vigild_energy_account, 1);
    a->cpu_s_last = NAN;
    a->cpu_s = NAN;
    g_hash_table_replace(e->processes, g_memdup2(&process_id, sizeof process_id), a);
}

void vigild_energy_share_restore(struct vigild_energy_share *e, uint64_t process_id, double cpu_s,
                                 double energy_j, uint32_t flags, gboolean shared)
{
    struct vigild_energy_account *a = g_hash_table_lookup(e->processes, &process_id);
    if (a == NULL)
        return;
    a->cpu_s = cpu_s;
    a->energy_j = isnan(energy_j) ? 0 : energy_j;
    a->shared = shared;
    /* The energy of the gap is nobody's: the figure goes on, marked. */
    a->flags = flags | VIGIL_LOCAL_ENERGY_UNCERTAIN;
    a->rebase = TRUE;
}

static void owner_drop(struct vigild_energy_share *e, const char *owner)
{
    if (owner == NULL)
        return;
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(e->owners, owner));
    if (n <= 1)
        g_hash_table_remove(e->owners, owner);
    else
        g_hash_table_insert(e->owners, g_strdup(owner), GUINT_TO_POINTER(n - 1));
}

void vigild_energy_share_set_owner(struct vigild_energy_share *e, uint64_t process_id,
                                   const char *job, const char *run_key)
{
    struct vigild_energy_account *a = g_hash_table_lookup(e->processes, &process_id);
    if (a == NULL)
        return;
    owner_drop(e, a->owner);
    g_clear_pointer(&a->owner, g_free);
    if (job != NULL && job[0] != '\0')
        a->owner = g_strconcat("job:", job, NULL);
    else if (run_key != NULL && run_key[0] != '\0')
        a->owner = g_strconcat("run:", run_key, NULL);
    if (a->owner == NULL)
        return;
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(e->owners, a->owner));
    g_hash_table_insert(e->owners, g_strdup(a->owner), GUINT_TO_POINTER(n + 1));
}

/* One owner for every registered process: a process without one is an
 * owner of its own. */
static gboolean node_is_exclusive(const struct vigild_energy_share *e)
{
    if (g_hash_table_size(e->owners) != 1)
        return FALSE;
    GHashTableIter it;
    gpointer owner, count;
    g_hash_table_iter_init(&it, e->owners);
    g_hash_table_iter_next(&it, &owner, &count);
    return GPOINTER_TO_UINT(count) == g_hash_table_size(e->processes);
}

void vigild_energy_share_remove_process(struct vigild_energy_share *e, uint64_t process_id)
{
    struct vigild_energy_account *a = g_hash_table_lookup(e->processes, &process_id);
    if (a != NULL)
        owner_drop(e, a->owner);
    g_hash_table_remove(e->processes, &process_id);
}

const struct vigild_energy_account *vigild_energy_share_account(const struct vigild_energy_share *e,
                                                                uint64_t process_id)
{
    return g_hash_table_lookup(e->processes, &process_id);
}

void vigild_energy_share_set_unavailable(struct vigild_energy_share *e, const char *why)
{
    g_free(e->unavailable);
    e->unavailable = g_strdup(why);
}

enum zone_role { ZONE_NONE, ZONE_PSYS, ZONE_PACKAGE, ZONE_DRAM, ZONE_ESTIMATE };

/* "energy.pkg0_j" is a package; "energy.pkg0.core_j" a part of one. */
static enum zone_role zone_role(const char *name)
{
    if (!g_str_has_prefix(name, "energy.") || !g_str_has_suffix(name, "_j"))
        return ZONE_NONE;
    const char *stem = name + strlen("energy.");
    if (strcmp(stem, "psys_j") == 0)
        return ZONE_PSYS;
    if (strcmp(stem, "node_j") == 0)
        return ZONE_ESTIMATE;
    if (g_str_has_suffix(stem, "dram_j"))
        return ZONE_DRAM;
    if (g_str_has_prefix(stem, "pkg") && strchr(stem, '.') == NULL)
        return ZONE_PACKAGE;
    return ZONE_NONE;
}

/* A metric's role, worked out once per metric id: a tick then costs an
 * array lookup per sample, not string comparisons. */
enum metric_role {
    ROLE_UNKNOWN = 0, /* not looked at yet */
    ROLE_OTHER,
    ROLE_BUSY_CPU, /* a node CPU time that counts as busy */
    ROLE_ZONE_PSYS,
    ROLE_ZONE_PACKAGE, /* a package or DRAM zone */
    ROLE_ZONE_ESTIMATE,
    ROLE_PROCESS_CPU,
};

static const char *const busy_fields[] = {"cpu.user_s", "cpu.nice_s", "cpu.system_s", "cpu.irq_s",
                                          "cpu.softirq_s"};

static enum metric_role metric_role(struct vigild_energy_share *e,
                                    const vigil_metric_catalog *catalog, uint32_t id)
{
    if (id >= e->roles->len)
        g_array_set_size(e->roles, id + 1);
    guint8 *role = &g_array_index(e->roles, guint8, id);
    if (*role != ROLE_UNKNOWN)
        return *role;
    const struct vigil_metric_desc *d = vigil_metric_get(catalog, id);
    *role = ROLE_OTHER;
    if (d == NULL)
        return *role;
    for (gsize f = 0; f < G_N_ELEMENTS(busy_fields); f++)
        if (strcmp(d->name, busy_fields[f]) == 0)
            *role = ROLE_BUSY_CPU;
    if (strcmp(d->name, "process.cpu_s") == 0)
        *role = ROLE_PROCESS_CPU;
    switch (zone_role(d->name)) {
    case ZONE_PSYS:
        *role = ROLE_ZONE_PSYS;
        break;
    case ZONE_PACKAGE:
    case ZONE_DRAM:
        *role = ROLE_ZONE_PACKAGE;
        break;
    case ZONE_ESTIMATE:
        *role = ROLE_ZONE_ESTIMATE;
        break;
    case ZONE_NONE:
        break;
    }
    return *role;
}

/* What one tick says about the node. */
struct node_tick {
    double zone_j[3]; /* psys, packages and DRAM, estimate */
    gboolean has_zone[3];
    guint zone_count[3];
    uint32_t zone_flags[3];
    const char *zone_source[3];
    double busy_s;
    guint busy_found;
};

static void scan_node(struct vigild_energy_share *e, const struct vigild_tick_samples *samples,
                      const vigil_metric_catalog *catalog, struct node_tick *n)
{
    memset(n, 0, sizeof *n);
    for (guint i = 0; i < samples->node->len; i++) {
        const struct vigil_sample *s = &g_array_index(samples->node, struct vigil_sample, i);
        enum metric_role role = metric_role(e, catalog, s->metric_id);
        if (role == ROLE_BUSY_CPU) {
            n->busy_s += s->value;
            n->busy_found++;
            continue;
        }
        int zone = role == ROLE_ZONE_PSYS       ? 0
                   : role == ROLE_ZONE_PACKAGE  ? 1
                   : role == ROLE_ZONE_ESTIMATE ? 2
                                                : -1;
        if (zone < 0)
            continue;
        const struct vigil_metric_desc *d = vigil_metric_get(catalog, s->metric_id);
        n->zone_j[zone] += s->value;
        n->has_zone[zone] = TRUE;
        n->zone_count[zone]++;
        n->zone_source[zone] = d->source;
        n->zone_flags[zone] |=
            (s->flags & VIGIL_SAMPLE_UNCERTAIN ? VIGIL_LOCAL_ENERGY_UNCERTAIN : 0) |
            (d->origin == VIGIL_METRIC_ESTIMATED ? VIGIL_LOCAL_ENERGY_ESTIMATED : 0);
    }
}

/* The node's energy counter this tick (psys, else packages and DRAM, else
 * the estimate), or NaN when no energy metric was sampled. */
static double node_energy_j(const struct node_tick *n, const char **source, uint32_t *flags,
                            int *zone_kind)
{
    for (int zone = 0; zone < 3; zone++) {
        if (n->has_zone[zone]) {
            *source = n->zone_source[zone];
            *flags = n->zone_flags[zone];
            *zone_kind = zone;
            return n->zone_j[zone];
        }
    }
    *zone_kind = -1;
    return NAN;
}

/* The node's energy since the last tick, added to its running sum; NaN
 * when there is none to share: no energy sampled, or the first tick of a
 * segment (another source or other zones than the last tick's, or a
 * counter that went back, as a restarted provider's does). A tick without
 * an energy sample keeps the segment: the next delta covers both. */
static double node_energy_delta(struct vigild_energy_share *e, const struct node_tick *n,
                                double energy, const char *source, int zone_kind, uint64_t t_ns)
{
    if (isnan(energy))
        return NAN;
    guint count = n->zone_count[zone_kind];
    const struct vigild_energy_segment *last =
        e->segments->len > 0
            ? &g_array_index(e->segments, struct vigild_energy_segment, e->segments->len - 1)
            : NULL;
    gboolean same = last != NULL && !isnan(e->zone_total_j) && zone_kind == e->zone_kind &&
                    count == e->zone_count &&
                    strncmp(last->source, source, sizeof last->source) == 0 &&
                    energy >= e->zone_total_j;
    double delta = same ? energy - e->zone_total_j : NAN;
    if (!same) {
        if (isnan(e->node_energy_j))
            e->node_energy_j = 0;
        vigild_energy_segment_start(e, source, zone_kind, count, t_ns);
    } else {
        e->node_energy_j += delta;
    }
    e->zone_total_j = energy;
    e->zone_kind = zone_kind;
    e->zone_count = count;
    return delta;
}

void vigild_energy_share_add(void *share, const struct vigild_tick_samples *samples,
                             const vigil_metric_catalog *catalog)
{
    struct vigild_energy_share *e = share;
    /* Every process's CPU time first: it is needed whatever the node did. */
    GPtrArray *accounts = e->tick_accounts;
    GArray *used_s = e->tick_used_s;
    g_ptr_array_set_size(accounts, 0);
    g_array_set_size(used_s, 0);
    for (guint i = 0; i < samples->process->len; i++) {
        const struct vigild_process_sample *ps =
            &g_array_index(samples->process, struct vigild_process_sample, i);
        if (metric_role(e, catalog, ps->sample.metric_id) != ROLE_PROCESS_CPU)
            continue;
        struct vigild_energy_account *a = g_hash_table_lookup(e->processes, &ps->process_id);
        if (a == NULL)
            continue;
        /* Registration is at the process's start: its CPU time before the
         * first sample is all its own. */
        double used = ps->sample.value - (isnan(a->cpu_s_last) ? 0 : a->cpu_s_last);
        /* Taken back after a restart of vigild: the CPU time of the gap
         * has no node energy beside it, so it is no share of this tick's. */
        if (a->rebase)
            used = 0, a->rebase = FALSE;
        a->cpu_s_last = a->cpu_s = ps->sample.value;
        g_ptr_array_add(accounts, a);
        g_array_append_val(used_s, used);
    }

    struct node_tick node;
    scan_node(e, samples, catalog, &node);
    const char *source = NULL;
    uint32_t flags = 0;
    int zone_kind;
    double energy = node_energy_j(&node, &source, &flags, &zone_kind);
    double energy_delta = node_energy_delta(e, &node, energy, source, zone_kind, samples->t_ns);
    double busy = node.busy_found == G_N_ELEMENTS(busy_fields) ? node.busy_s : NAN;
    double busy_delta = busy - e->node_cpu_busy_s;
    e->node_cpu_busy_s = busy;
    if (!isnan(energy)) {
        if (e->source == NULL || strcmp(e->source, source) != 0) {
            g_free(e->source);
            e->source = g_strdup(source);
        }
        e->flags = flags;
        vigild_energy_share_set_unavailable(e, NULL);
    }
    if (isnan(energy_delta) || accounts->len == 0)
        return;
    gboolean exclusive = node_is_exclusive(e);
    if (!exclusive && isnan(busy_delta))
        return;
    double *share_j = g_new(double, accounts->len);
    if (exclusive)
        split_whole(energy_delta, (const double *)(void *)used_s->data, accounts->len, share_j);
    else
        vigild_energy_split(energy_delta, busy_delta, (const double *)(void *)used_s->data,
                            accounts->len, share_j);
    for (guint i = 0; i < accounts->len; i++) {
        struct vigild_energy_account *a = g_ptr_array_index(accounts, i);
        a->energy_j += share_j[i];
        a->flags |= flags;
        a->shared = TRUE;
        if (a->segment_last != e->segments_total) {
            a->segment_last = e->segments_total;
            vigild_energy_sources_add(a->sources, sizeof a->sources, source);
        }
    }
    g_free(share_j);
}

/* Registered at the first figure, when the node's source is known, with
 * that source's name and label (measured or estimated), so the warehouse
 * can say where each stretch of the sum came from. The provider's chain
 * picks its source once, at its start, so the description holds for the
 * daemon's life; a vigild restarted on another source registers the name
 * again with the new description, a metric of its own in the warehouse. */
gboolean vigild_energy_share_node_sample(struct vigild_energy_share *e,
                                         vigil_metric_catalog *catalog, uint64_t t_ns,
                                         struct vigil_sample *out)
{
    if (isnan(e->node_energy_j) || e->source == NULL || e->node_metric_id == UINT32_MAX)
        return FALSE;
    if (e->node_metric_id == 0) {
        gboolean estimated = (e->flags & VIGIL_LOCAL_ENERGY_ESTIMATED) != 0;
        GError *error = NULL;
        e->node_metric_id = vigil_metric_register(
            catalog, "node.energy_j", "J", VIGIL_METRIC_COUNTER, e->source,
            estimated ? VIGIL_METRIC_ESTIMATED : VIGIL_METRIC_MEASURED, &error);
        if (e->node_metric_id == 0) {
            g_warning("node.energy_j: %s; the node's running energy is not recorded",
                      error->message);
            g_error_free(error);
            e->node_metric_id = UINT32_MAX;
            return FALSE;
        }
    }
    *out = (struct vigil_sample){
        .metric_id = e->node_metric_id,
        .flags = (e->flags & VIGIL_LOCAL_ENERGY_UNCERTAIN) ? VIGIL_SAMPLE_UNCERTAIN : 0,
        .t_ns = t_ns,
        .value = e->node_energy_j,
    };
    return TRUE;
}

void vigild_energy_share_clear(struct vigild_energy_share *e)
{
    if (e->processes != NULL)
        g_hash_table_destroy(e->processes);
    e->processes = NULL;
    g_clear_pointer(&e->source, g_free);
    g_clear_pointer(&e->unavailable, g_free);
    g_clear_pointer(&e->roles, g_array_unref);
    g_clear_pointer(&e->tick_accounts, g_ptr_array_unref);
    g_clear_pointer(&e->tick_used_s, g_array_unref);
    g_clear_pointer(&e->segments, g_array_unref);
    g_clear_pointer(&e->owners, g_hash_table_unref);
}
