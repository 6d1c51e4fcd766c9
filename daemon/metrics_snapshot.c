/* vigild — /metrics in the daemon: a scrape's figures, made from the
 * daemon's snapshot (snapshot.h), and the endpoint's start, reload and
 * stop with the daemon, given only the parts of it they use. A scrape reads
 * what the last tick left (the node's newest samples, the last roll-up
 * window, the energy accounts), never a provider, so it costs a rendering
 * only. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "vigil-build.h"
#include "vigil/schema.h"
#include "energy_share.h"
#include "vigild_settings.h"
#include "processes.h"
#include "rollup.h"
#include "snapshot.h"
#include "statmux.h"

struct vigild_metrics {
    struct vigild_metrics_jobs jobs;
    struct vigild_metrics_http *http;
};

/* The newest sample of the node metric `name`, NaN when there is none. */
static double latest(const struct vigild_snapshot *snap, const char *name)
{
    const struct vigil_metric_desc *m = vigil_metric_lookup(snap->catalog, name);
    if (m == NULL || m->id >= snap->latest->len)
        return NAN;
    const struct vigil_sample *s = &g_array_index(snap->latest, struct vigil_sample, m->id);
    return s->metric_id == m->id ? s->value : NAN;
}

/* disk.NAME.read_bytes, net.NAME.rx_bytes: one row per NAME, in the
 * catalogue's order. */
static void add_device(GArray *devices, const char *metric, const char *prefix,
                       const char *in_suffix, const char *out_suffix, double value)
{
    size_t prefix_len = strlen(prefix);
    if (strncmp(metric, prefix, prefix_len) != 0)
        return;
    const char *name = metric + prefix_len;
    gboolean in = g_str_has_suffix(name, in_suffix);
    if (!in && !g_str_has_suffix(name, out_suffix))
        return;
    size_t name_len = strlen(name) - strlen(in ? in_suffix : out_suffix);
    if (name_len == 0)
        return;
    struct vigild_metrics_device *row = NULL;
    for (guint i = 0; i < devices->len && row == NULL; i++) {
        struct vigild_metrics_device *r = &g_array_index(devices, struct vigild_metrics_device, i);
        if (strlen(r->name) == name_len && strncmp(r->name, name, name_len) == 0)
            row = r;
    }
    if (row == NULL) {
        struct vigild_metrics_device fresh = {g_strndup(name, name_len), NAN, NAN};
        g_array_append_val(devices, fresh);
        row = &g_array_index(devices, struct vigild_metrics_device, devices->len - 1);
    }
    if (in)
        row->in_bytes = value;
    else
        row->out_bytes = value;
}

static double process_energy(void *user, uint64_t process_id)
{
    const struct vigild_snapshot *snap = user;
    const struct vigild_energy_account *a = vigild_energy_share_account(snap->energy, process_id);
    return a != NULL && a->shared ? a->energy_j : NAN;
}

void vigild_metrics_fill(void *daemon, struct vigild_metrics_snapshot *s)
{
    struct vigild_snapshot snap;
    vigild_snapshot_take(daemon, &snap);
    s->version = VIGIL_VERSION;
    s->energy_source = snap.energy->source;
    s->energy_estimated = (snap.energy->flags & VIGIL_LOCAL_ENERGY_ESTIMATED) != 0;
    s->energy_j = snap.energy->node_energy_j;
    const struct vigil_metric_desc *energy = vigil_metric_lookup(snap.catalog, "node.energy_j");
    const struct vigild_rollup_window *w =
        energy != NULL ? vigild_rollup_latest(snap.rollup, energy->id) : NULL;
    if (w != NULL && w->end_ns > w->start_ns && !isnan(w->delta))
        s->power_w = w->delta / ((double)(w->end_ns - w->start_ns) / 1e9);
    for (int m = 0; m < VIGILD_CPU_MODES; m++) {
        char name[32];
        g_snprintf(name, sizeof name, "cpu.%s_s", vigild_metrics_cpu_mode_name(m));
        s->cpu_s[m] = latest(&snap, name);
    }
    s->memory_total_bytes = latest(&snap, "mem.total_bytes");
    s->memory_available_bytes = latest(&snap, "mem.available_bytes");
    s->memory_used_bytes = latest(&snap, "mem.used_bytes");
    for (uint32_t id = 1; id <= vigil_metric_count(snap.catalog); id++) {
        const struct vigil_metric_desc *m = vigil_metric_get(snap.catalog, id);
        if (id >= snap.latest->len ||
            g_array_index(snap.latest, struct vigil_sample, id).metric_id != id)
            continue;
        double value = g_array_index(snap.latest, struct vigil_sample, id).value;
        add_device(s->disks, m->name, "disk.", ".read_bytes", ".write_bytes", value);
        add_device(s->networks, m->name, "net.", ".rx_bytes", ".tx_bytes", value);
    }
    s->ticks = snap.ticks;
    s->ticks_missed = snap.missed_ticks;
    s->tick_s = snap.tick_cost_ns_total / 1e9;
    struct timespec cpu;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0)
        s->cpu_self_s = (double)cpu.tv_sec + cpu.tv_nsec / 1e9;
    s->processes = vigild_processes_running(snap.processes);
    if (snap.metrics != NULL) {
        vigild_metrics_jobs_collect(&snap.metrics->jobs, process_energy, &snap, s->jobs,
                                    &s->jobs_running, &s->jobs_folded);
        s->ring_records_dropped = snap.metrics->jobs.ended_ring_dropped;
    }
    GPtrArray *running = vigild_processes_list(snap.processes);
    for (guint i = 0; i < running->len; i++)
        s->ring_records_dropped +=
            ((const struct vigild_process *)g_ptr_array_index(running, i))->dropped;
    g_ptr_array_free(running, TRUE);
    if (snap.uplink) {
        s->uplink = true;
        s->spool_bytes = snap.uplink_stats.spool_bytes;
        s->batches_unacked = snap.uplink_stats.unacked;
    }
}

gboolean vigild_metrics_start(const vigil_config *config, struct vigild_statmux *statmux,
                              const struct vigild_processes *processes, vigild_metrics_fill_fn fill,
                              void *user, struct vigild_metrics **out, GError **error)
{
    struct vigild_metrics_settings settings;
    char *host = NULL;
    guint16 port = 0;
    *out = NULL;
    if (!vigil_settings_load(config, &vigild_metrics_keys, &settings, error))
        return FALSE;
    vigil_metrics_parse_listen(settings.listen, &host, &port, NULL); /* checked by the load */
    guint max_jobs = settings.max_jobs;
    vigil_settings_clear(&vigild_metrics_keys, &settings);
    if (host == NULL)
        return TRUE; /* listen is empty: no endpoint, nothing kept for it */
    struct vigild_metrics *m = g_new0(struct vigild_metrics, 1);
    vigild_metrics_jobs_init(&m->jobs, max_jobs);
    m->http = vigild_metrics_http_new(host, port, fill, user, error);
    g_free(host);
    if (m->http == NULL) {
        vigild_metrics_jobs_clear(&m->jobs);
        g_free(m);
        return FALSE;
    }
    *out = m;
    vigild_statmux_subscribe(statmux, vigild_metrics_jobs_samples, &m->jobs);
    /* Processes that registered before: taken back after a restart. */
    GPtrArray *running = vigild_processes_list(processes);
    for (guint i = 0; i < running->len; i++) {
        const struct vigild_process *p = g_ptr_array_index(running, i);
        vigild_metrics_jobs_process_started(&m->jobs, p->id, p->job);
    }
    g_ptr_array_free(running, TRUE);
    g_message("metrics on %s", vigild_metrics_http_url(m->http));
    return TRUE;
}

void vigild_metrics_process_started(struct vigild_metrics *m, const struct vigild_process *p)
{
    if (m != NULL)
        vigild_metrics_jobs_process_started(&m->jobs, p->id, p->job);
}

void vigild_metrics_process_ended(struct vigild_metrics *m, const struct vigild_process *p)
{
    if (m != NULL)
        vigild_metrics_jobs_process_ended(&m->jobs, p->id, p->energy_shared ? p->energy_j : NAN,
                                          p->dropped);
}

void vigild_metrics_reload(struct vigild_metrics *m, const vigil_config *was,
                           const vigil_config *now)
{
    /* Both checked when they were loaded. */
    struct vigild_metrics_settings settings_now, settings_was;
    vigil_settings_load(now, &vigild_metrics_keys, &settings_now, NULL);
    vigil_settings_load(was, &vigild_metrics_keys, &settings_was, NULL);
    if (g_strcmp0(settings_now.listen, settings_was.listen) != 0)
        g_warning("reload: [metrics] listen changed to \"%s\"; it applies at the next start, the "
                  "endpoint stays %s",
                  settings_now.listen, m != NULL ? vigild_metrics_http_url(m->http) : "off");
    if (m != NULL)
        vigild_metrics_jobs_set_max(&m->jobs, settings_now.max_jobs);
    vigil_settings_clear(&vigild_metrics_keys, &settings_now);
    vigil_settings_clear(&vigild_metrics_keys, &settings_was);
}

void vigild_metrics_stop(struct vigild_metrics *m)
{
    if (m == NULL)
        return;
    vigild_metrics_http_free(m->http);
    vigild_metrics_jobs_clear(&m->jobs);
    g_free(m);
}

const char *vigild_metrics_url(const struct vigild_metrics *m)
{
    return m != NULL ? vigild_metrics_http_url(m->http) : NULL;
}
