/* vigild — what the daemon tells: the summary a process gets at exit and
 * the JSON `vigil status` prints, both from a snapshot (snapshot.h). */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <json-glib/json-glib.h>

#include "vigil-build.h"
#include "vigil/clock.h"
#include "vigil/wire.h"
#include "capture.h"
#include "client_limits.h"
#include "energy_share.h"
#include "vigil/json_members.h"
#include "outbox.h"
#include "processes.h"
#include "reasoning.h"
#include "rollup.h"
#include "sampler.h"
#include "snapshot.h"
#include "status.h"
#include "tick_costs.h"
#include "uplink.h"
#include "uplink_drops.h"
#include "verdicts.h"

/* A process's CPU time and energy: from its live account while it runs,
 * from the copy taken at its end afterwards. */
static void process_energy(const struct vigild_snapshot *snap, const struct vigild_process *p,
                           double *cpu_s, double *energy_j, uint32_t *flags, gboolean *shared,
                           const char **sources)
{
    const struct vigild_energy_account *a = p->state == VIGILD_PROCESS_RUNNING
                                                ? vigild_energy_share_account(snap->energy, p->id)
                                                : NULL;
    if (a != NULL) {
        *cpu_s = a->cpu_s;
        *energy_j = a->energy_j;
        *flags = a->flags;
        *shared = a->shared;
        *sources = a->sources;
    } else {
        *cpu_s = p->cpu_s;
        *energy_j = p->energy_j;
        *flags = p->energy_flags;
        *shared = p->energy_shared;
        *sources = p->energy_sources;
    }
    /* Taken back after a restart of vigild: the sources before it are
     * not kept, the node's is the best there is. */
    if ((*sources)[0] == '\0' && snap->energy->source != NULL)
        *sources = snap->energy->source;
}

/* Why a process has no energy figure. */
static char *energy_note(const struct vigild_snapshot *snap, double cpu_s)
{
    if (snap->energy->unavailable != NULL)
        return g_strdup(snap->energy->unavailable);
    const struct vigild_provider *process = vigild_sampler_find(snap->sampler, "process");
    if (isnan(cpu_s) && (process == NULL || !process->running))
        return g_strdup("its CPU time is unknown: the process provider is not running");
    return g_strdup_printf("it ended before a tick measured its share (a tick is every %" PRIu64
                           " ms)",
                           (uint64_t)(snap->tick_ns / VIGIL_NS_PER_MS));
}

/* A process's capture counts: capture's while it knows the process, the
 * copy made when it forgot it after. */
static void process_capture(const struct vigild_snapshot *snap, const struct vigild_process *p,
                            struct vigild_capture_counts *out)
{
    if (!vigild_capture_counts(snap->capture, p->id, out))
        *out = p->capture_final ? p->capture : (struct vigild_capture_counts){0};
}

void vigild_status_summary(const struct vigild_snapshot *snap, const struct vigild_process *p,
                           struct vigil_local_summary *out)
{
    memset(out, 0, sizeof *out);
    out->process_id = p->id;
    out->activities_drained = p->activities;
    out->names_drained = p->names;
    out->gaps = p->corrupt + p->torn;
    out->dropped = p->dropped;
    struct vigild_capture_counts capture;
    process_capture(snap, p, &capture);
    out->anomalies = capture.abnormal_cycles;
    out->cycles = capture.cycles;
    out->abnormal_cycles = capture.abnormal_cycles;
    out->activities_observed = capture.observed;
    out->activities_forwarded = capture.forwarded;
    out->activities_dropped = capture.dropped;
    out->activities_lost = capture.lost;
    out->activities_held = capture.held;
    g_strlcpy(out->capture_mode, vigild_capture_mode_name(snap->capture->mode),
              sizeof out->capture_mode);
    double energy_j;
    gboolean shared;
    const char *sources;
    process_energy(snap, p, &out->cpu_s, &energy_j, &out->energy_flags, &shared, &sources);
    if (shared) {
        out->energy_j = energy_j;
        vigild_energy_sources_compact(sources, out->energy_source, sizeof out->energy_source);
    } else {
        out->energy_j = NAN;
        out->energy_flags = 0;
        char *note = energy_note(snap, out->cpu_s);
        g_strlcpy(out->energy_note, note, sizeof out->energy_note);
        g_free(note);
    }
}

static void add_cost(JsonBuilder *b, const char *name, uint64_t last_ns, uint64_t total_ns,
                     uint64_t count, uint64_t max_ns)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_object(b);
    vigil_json_number(b, "last", last_ns / 1e3);
    vigil_json_number(b, "mean", count > 0 ? total_ns / 1e3 / (double)count : NAN);
    vigil_json_number(b, "max", max_ns / 1e3);
    json_builder_end_object(b);
}

static void add_daemon(JsonBuilder *b, const struct vigild_snapshot *snap)
{
    json_builder_set_member_name(b, "daemon");
    json_builder_begin_object(b);
    vigil_json_string(b, "version", VIGIL_VERSION);
    vigil_json_int(b, "pid", getpid());
    vigil_json_string(b, "socket", snap->socket_path);
    vigil_json_string(b, "config", snap->config_path);
    vigil_json_string(b, "metrics", snap->metrics_url); /* null: no endpoint */
    vigil_json_number(b, "uptime_s", snap->uptime_ns / 1e9);
    vigil_json_int(b, "tick_ms", (gint64)(snap->tick_ns / VIGIL_NS_PER_MS));
    vigil_json_int(b, "ticks", (gint64)snap->ticks);
    vigil_json_int(b, "missed_ticks", (gint64)snap->missed_ticks);
    add_cost(b, "tick_cost_us", snap->tick_cost_ns_last, snap->tick_cost_ns_total, snap->ticks,
             snap->tick_cost_ns_max);
    vigil_json_int(b, "reloads", (gint64)snap->reloads);
    vigil_json_int(b, "reload_failures", (gint64)snap->reload_failures);
    vigil_json_int(b, "clients", snap->clients);
    json_builder_end_object(b);
    vigild_client_limits_status(snap->client_limits, b);
}

static void add_providers(JsonBuilder *b, const struct vigild_snapshot *snap)
{
    json_builder_set_member_name(b, "providers");
    json_builder_begin_array(b);
    for (guint i = 0; i < snap->sampler->providers->len; i++) {
        const struct vigild_provider *p = g_ptr_array_index(snap->sampler->providers, i);
        json_builder_begin_object(b);
        vigil_json_string(b, "name", p->name);
        vigil_json_bool(b, "running", p->running);
        vigil_json_string(b, "unavailable", p->unavailable);
        vigil_json_string(b, "note",
                          p->running && p->ops->note != NULL ? p->ops->note(p->instance) : NULL);
        vigil_json_int(b, "reads", (gint64)p->reads);
        vigil_json_int(b, "read_errors", (gint64)p->read_errors);
        vigil_json_string(b, "last_error", p->last_error);
        add_cost(b, "cost_us", p->cost_ns_last, p->cost_ns_total, p->reads, p->cost_ns_max);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

static void add_metrics(JsonBuilder *b, const struct vigild_snapshot *snap)
{
    json_builder_set_member_name(b, "metrics");
    json_builder_begin_array(b);
    for (uint32_t id = 1; id <= vigil_metric_count(snap->catalog); id++) {
        const struct vigil_metric_desc *m = vigil_metric_get(snap->catalog, id);
        const struct vigil_sample *s =
            id < snap->latest->len ? &g_array_index(snap->latest, struct vigil_sample, id) : NULL;
        json_builder_begin_object(b);
        vigil_json_string(b, "name", m->name);
        vigil_json_string(b, "unit", m->unit);
        vigil_json_string(b, "kind", vigil_metric_kind_name(m->kind));
        vigil_json_string(b, "origin", vigil_metric_origin_name(m->origin));
        vigil_json_string(b, "source", m->source);
        gboolean sampled = s != NULL && s->metric_id == id;
        vigil_json_number(b, "value", sampled ? s->value : NAN);
        vigil_json_bool(b, "uncertain", sampled && (s->flags & VIGIL_SAMPLE_UNCERTAIN));
        const struct vigild_rollup_window *w = vigild_rollup_latest(snap->rollup, id);
        json_builder_set_member_name(b, "rollup");
        if (w == NULL) {
            json_builder_add_null_value(b);
        } else {
            json_builder_begin_object(b);
            vigil_json_number(b, "window_s", (w->end_ns - w->start_ns) / 1e9);
            vigil_json_number(b, "min", w->min);
            vigil_json_number(b, "mean", w->mean);
            vigil_json_number(b, "max", w->max);
            vigil_json_number(b, "delta", w->delta);
            vigil_json_bool(b, "uncertain", (w->flags & VIGIL_SAMPLE_UNCERTAIN) != 0);
            json_builder_end_object(b);
        }
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
}

static void add_capture_counts(JsonBuilder *b, const char *name,
                               const struct vigild_capture_counts *c)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_object(b);
    vigil_json_int(b, "cycles", (gint64)c->cycles);
    vigil_json_int(b, "abnormal_cycles", (gint64)c->abnormal_cycles);
    vigil_json_int(b, "windows", (gint64)c->windows);
    vigil_json_int(b, "observed", (gint64)c->observed);
    vigil_json_int(b, "forwarded", (gint64)c->forwarded);
    vigil_json_int(b, "dropped", (gint64)c->dropped);
    vigil_json_int(b, "lost", (gint64)c->lost);
    vigil_json_int(b, "held", (gint64)c->held);
    json_builder_end_object(b);
}

/* The node's reasoner and capture: their settings, the last cycle's
 * verdict and the node's totals. */
static void add_reasoning(JsonBuilder *b, const struct vigild_snapshot *snap)
{
    json_builder_set_member_name(b, "reasoning");
    json_builder_begin_object(b);
    vigil_json_int(b, "cycle_ms", (gint64)(snap->cycle_ticks * snap->tick_ns / VIGIL_NS_PER_MS));
    vigil_json_int(b, "cycles", (gint64)(snap->reasoning->cycle - 1));
    const struct vigild_verdict *node = vigild_reasoning_verdict(snap->reasoning, 0);
    vigil_json_string(b, "node_health",
                      node != NULL ? vigil_health_name(node->decision.state) : NULL);
    vigil_json_int(b, "node_abnormal_cycles",
                   (gint64)snap->reasoning->node->memory.abnormal_cycles);
    /* The node reasoner's parent, as the last cycle took it from vigil-txd. */
    vigil_json_string(b, "system_state",
                      snap->reasoning->system_state != 0
                          ? vigil_health_name(snap->reasoning->system_state)
                          : NULL);
    json_builder_set_member_name(b, "node_issues");
    json_builder_begin_array(b);
    for (guint i = 0; node != NULL && i < node->n_issues; i++) {
        json_builder_begin_object(b);
        vigil_json_string(b, "plugin", node->issues[i].plugin);
        vigil_json_string(b, "health", vigil_health_name(node->issues[i].issue.health));
        vigil_json_string(b, "metric", node->issues[i].issue.metric);
        vigil_json_string(b, "message", node->issues[i].issue.message);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "adpis");
    json_builder_begin_array(b);
    const GPtrArray *adpis = snap->reasoning->node->adpis;
    for (guint i = 0; i < adpis->len; i++)
        json_builder_add_string_value(
            b, ((const struct vigild_adpi *)g_ptr_array_index(adpis, i))->name);
    json_builder_end_array(b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "capture");
    json_builder_begin_object(b);
    vigil_json_string(b, "mode", vigild_capture_mode_name(snap->capture->mode));
    vigil_json_int(b, "pre_cycles", snap->capture->pre);
    vigil_json_int(b, "post_cycles", snap->capture->post);
    vigil_json_string(b, "sink", snap->capture_sink_path);
    vigil_json_string(b, "sink_enabled", snap->capture_sink_enabled);
    vigil_json_int(b, "sink_max_bytes", (int64_t)snap->capture_sink_max_bytes);
    vigil_json_int(b, "sink_keep_files", snap->capture_sink_keep_files);
    const struct vigild_capture_sink_stats *sink = &snap->capture_sink;
    vigil_json_int(b, "sink_bytes", (int64_t)sink->file_bytes);
    vigil_json_int(b, "sink_lines", (int64_t)sink->lines);
    vigil_json_int(b, "sink_rotations", (int64_t)sink->rotations);
    /* Windows thrown away to keep the bound: full files deleted, lines
     * longer than a file. */
    vigil_json_int(b, "sink_files_dropped", (int64_t)sink->files_dropped);
    vigil_json_int(b, "sink_lines_dropped", (int64_t)sink->lines_dropped);
    vigil_json_int(b, "sink_bytes_dropped", (int64_t)sink->bytes_dropped);
    /* Writes that failed (a full disk): windows counted as forwarded that
     * the sink may not hold whole. */
    vigil_json_int(b, "sink_errors", (int64_t)sink->errors);
    add_capture_counts(b, "totals", &snap->capture_totals);
    json_builder_end_object(b);
}

/* The uplink's figures in `vigil status`, in their order: a count of the
 * uplink's, the outbox's or the drops' stats, or a text of the uplink's
 * ("" shown as null). */
struct uplink_member {
    const char *name;
    enum { OF_UPLINK, OF_UPLINK_TEXT, OF_OUTBOX, OF_DROPS } of;
    size_t offset;
};
/* The offset of a field that add_uplink() reads as a uint64_t count (or,
 * for OF_UPLINK_TEXT, as a char array): a field of another type fails the
 * build here rather than being misread. */
#define OF_TYPED(type, field)                                                                      \
    (offsetof(type, field) + 0 * sizeof(_Generic(((type *)0)->field, uint64_t : 0, char * : 0)))
#define OF_U(field) OF_TYPED(struct vigild_uplink_stats, field)
#define OF_O(field) OF_TYPED(struct vigild_outbox_stats, field)
#define OF_D(field) OF_TYPED(struct vigild_drops_totals, field)
static const struct uplink_member uplink_members[] = {
    {"batches", OF_OUTBOX, OF_O(batches)},
    {"batch_bytes", OF_OUTBOX, OF_O(bytes)},
    {"sent", OF_UPLINK, OF_U(sent)},
    {"resent", OF_UPLINK, OF_U(resent)},
    {"acked", OF_UPLINK, OF_U(acked)},
    {"in_flight", OF_UPLINK, OF_U(in_flight)},
    {"unacked", OF_UPLINK, OF_U(unacked)},
    {"memory_batches", OF_UPLINK, OF_U(memory_batches)},
    {"memory_bytes", OF_UPLINK, OF_U(memory_bytes)},
    {"spooled_batches", OF_UPLINK, OF_U(spooled_batches)},
    {"spool_bytes", OF_UPLINK, OF_U(spool_bytes)},
    {"replayed", OF_UPLINK, OF_U(replayed)},
    {"dropped_full_batches", OF_UPLINK, OF_U(dropped_full_batches)},
    {"dropped_full_bytes", OF_UPLINK, OF_U(dropped_full_bytes)},
    {"dropped_memory_batches", OF_UPLINK, OF_U(dropped_memory_batches)},
    {"dropped_memory_bytes", OF_UPLINK, OF_U(dropped_memory_bytes)},
    {"dropped_activities", OF_DROPS, OF_D(activities)},
    {"dropped_batches", OF_DROPS, OF_D(batches)},
    {"dropped_unknown_batches", OF_DROPS, OF_D(unknown_batches)},
    {"in_flight_bytes", OF_UPLINK, OF_U(in_flight_bytes)},
    {"refused", OF_UPLINK, OF_U(refused)},
    {"refused_deleted", OF_UPLINK, OF_U(refused_deleted)},
    {"refused_kept", OF_UPLINK, OF_U(refused_kept)},
    {"resent_refused", OF_UPLINK, OF_U(resent_refused)},
    {"last_refusal", OF_UPLINK_TEXT, OF_U(last_refusal)},
    {"spool_corrupt", OF_UPLINK, OF_U(spool_corrupt)},
    {"spool_corrupt_bytes", OF_UPLINK, OF_U(spool_corrupt_bytes)},
    {"spool_errors", OF_UPLINK, OF_U(spool_errors)},
    {"unexpected", OF_UPLINK, OF_U(unexpected)},
    {"items_skipped", OF_OUTBOX, OF_O(items_skipped)},
    {"names_missing", OF_OUTBOX, OF_O(names_missing)},
    {"last_error", OF_UPLINK_TEXT, OF_U(last_error)},
};
#undef OF_U
#undef OF_O
#undef OF_D
#undef OF_TYPED

/* The uplink to vigil-txd and the outbox that feeds it; null without one. */
static void add_uplink(JsonBuilder *b, const struct vigild_snapshot *snap)
{
    json_builder_set_member_name(b, "uplink");
    if (!snap->uplink) {
        json_builder_add_null_value(b);
        return;
    }
    const struct vigild_uplink_stats *u = &snap->uplink_stats;
    const struct vigild_outbox_stats *o = &snap->outbox_stats;
    const struct vigild_uplink_settings *settings = snap->uplink_settings;
    json_builder_begin_object(b);
    vigil_json_string(b, "endpoint", settings->endpoint);
    vigil_json_int(b, "node_id", (gint64)settings->node_id);
    vigil_json_string(b, "hostname", settings->hostname);
    vigil_json_string(b, "spool_dir", settings->spool_dir);
    vigil_json_bool(b, "connected", u->connected);
    for (size_t i = 0; i < G_N_ELEMENTS(uplink_members); i++) {
        const struct uplink_member *m = &uplink_members[i];
        const char *at = (m->of == OF_OUTBOX  ? (const char *)o
                          : m->of == OF_DROPS ? (const char *)&snap->drops
                                              : (const char *)u) +
                         m->offset;
        if (m->of == OF_UPLINK_TEXT) {
            vigil_json_string(b, m->name, at[0] != '\0' ? at : NULL);
        } else {
            uint64_t count;
            memcpy(&count, at, sizeof count);
            vigil_json_int(b, m->name, (gint64)count);
        }
    }
    vigil_json_string(b, "system_state",
                      snap->have_system_state ? vigil_health_name(snap->system_state.health)
                                              : NULL);
    vigil_json_int(b, "system_cycle",
                   snap->have_system_state ? (gint64)snap->system_state.cycle : -1);
    json_builder_end_object(b);
}

static void add_process(JsonBuilder *b, const struct vigild_snapshot *snap,
                        const struct vigild_process *p)
{
    json_builder_begin_object(b);
    vigil_json_int(b, "id", (gint64)p->id);
    vigil_json_int(b, "pid", p->pid);
    vigil_json_int(b, "uid", p->uid);
    vigil_json_string(b, "state", vigild_process_state_name(p->state));
    vigil_json_string(b, "program", p->program);
    json_builder_set_member_name(b, "argv");
    json_builder_begin_array(b);
    for (guint i = 0; i < p->argv->len; i++)
        json_builder_add_string_value(b, g_ptr_array_index(p->argv, i));
    json_builder_end_array(b);
    vigil_json_bool(b, "argv_truncated", p->argv_truncated);
    vigil_json_string(b, "cwd", p->cwd);
    vigil_json_string(b, "job", p->job);
    vigil_json_string(b, "run_key", p->run_key);
    vigil_json_int(b, "start_monotonic_ns", (gint64)p->start_monotonic_ns);
    vigil_json_int(b, "mpi_rank", p->mpi_rank);
    vigil_json_int(b, "mpi_size", p->mpi_size);
    uint64_t end_ns = p->state == VIGILD_PROCESS_RUNNING ? vigil_clock_monotonic_ns() : p->ended_ns;
    vigil_json_number(b, "registered_s", (end_ns - p->registered_ns) / 1e9);
    vigil_json_int(b, "activities", (gint64)p->activities);
    vigil_json_int(b, "names", (gint64)p->names);
    vigil_json_int(b, "corrupt", (gint64)p->corrupt);
    vigil_json_int(b, "torn", (gint64)p->torn);
    vigil_json_int(b, "seq_gaps", (gint64)p->seq_gaps);
    vigil_json_int(b, "dropped", (gint64)p->dropped);
    vigil_json_int(b, "restarts", (gint64)p->restarts);
    vigil_json_int(b, "restart_lost", (gint64)p->restart_lost);
    vigil_json_int(b, "released_early", (gint64)p->released_early);
    vigil_json_string(b, "dropped_reason", p->dropped_reason);
    struct vigild_capture_counts capture;
    process_capture(snap, p, &capture);
    add_capture_counts(b, "capture", &capture);
    /* Of what capture forwarded, what the uplink or the spool dropped. */
    struct vigild_drop_count dropped = {0};
    if (snap->uplink_drops != NULL)
        vigild_drops_of(snap->uplink_drops, p->pid, vigild_outbox_process_start_ns(p), &dropped);
    vigil_json_int(b, "uplink_dropped_activities", (gint64)dropped.activities);
    const struct vigild_verdict *v = vigild_reasoning_verdict(snap->reasoning, p->id);
    vigil_json_string(b, "health", v != NULL ? vigil_health_name(v->decision.state) : NULL);
    double cpu_s, energy_j;
    uint32_t flags;
    gboolean shared;
    const char *sources;
    process_energy(snap, p, &cpu_s, &energy_j, &flags, &shared, &sources);
    vigil_json_number(b, "cpu_s", cpu_s);
    vigil_json_number(b, "energy_j", shared ? energy_j : NAN);
    vigil_json_string(b, "energy_source", shared ? sources : NULL);
    vigil_json_bool(b, "energy_estimated", shared && (flags & VIGIL_LOCAL_ENERGY_ESTIMATED));
    vigil_json_bool(b, "energy_uncertain", shared && (flags & VIGIL_LOCAL_ENERGY_UNCERTAIN));
    if (!shared) {
        char *note = energy_note(snap, cpu_s);
        vigil_json_string(b, "energy_note", note);
        g_free(note);
    }
    json_builder_end_object(b);
}

/* Another user's process is not listed: its program, arguments, folder
 * and run key are theirs, and a node mounted with hidepid hides them from
 * `ps` too. The node-wide counts stay. */
static void add_processes(JsonBuilder *b, const struct vigild_snapshot *snap, uid_t viewer_uid,
                          int32_t finished_pid)
{
    gboolean sees_all = viewer_uid == 0 || viewer_uid == geteuid();
    const struct vigild_processes *ps = snap->processes;
    json_builder_set_member_name(b, "processes");
    json_builder_begin_object(b);
    vigil_json_int(b, "registered_total", (gint64)ps->registered_total);
    vigil_json_int(b, "running", vigild_processes_running(ps));
    vigil_json_int(b, "ended_total", (gint64)ps->ended_total);
    vigil_json_int(b, "dropped_total", (gint64)ps->dropped_total);
    vigil_json_int(b, "refused_total", (gint64)ps->refused_total);
    vigil_json_int(b, "recovered_total", (gint64)ps->recovered_total);
    vigil_json_int(b, "placed_apart_total", (gint64)ps->placed_apart_total);
    if (finished_pid > 0) {
        gboolean found = FALSE;
        for (GList *l = ps->ended->head; l != NULL && !found; l = l->next) {
            const struct vigild_process *p = l->data;
            found = p->pid == finished_pid && (sees_all || p->uid == viewer_uid);
        }
        vigil_json_bool(b, "finished_pid_found", found);
    }
    GPtrArray *listed = g_ptr_array_new();
    for (GList *l = ps->ended->head; l != NULL; l = l->next)
        g_ptr_array_add(listed, l->data);
    GPtrArray *running = vigild_processes_list(ps);
    for (guint i = 0; i < running->len; i++)
        g_ptr_array_add(listed, g_ptr_array_index(running, i));
    g_ptr_array_free(running, TRUE);
    gint64 not_listed = 0;
    json_builder_set_member_name(b, "list");
    json_builder_begin_array(b);
    for (guint i = 0; i < listed->len; i++) {
        const struct vigild_process *p = g_ptr_array_index(listed, i);
        if (sees_all || p->uid == viewer_uid)
            add_process(b, snap, p);
        else
            not_listed++;
    }
    json_builder_end_array(b);
    vigil_json_int(b, "not_listed_other_users", not_listed);
    g_ptr_array_free(listed, TRUE);
    json_builder_end_object(b);
}

char *vigild_status_json(const struct vigild_snapshot *snap, uid_t viewer_uid, int32_t finished_pid)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    add_daemon(b, snap);
    add_providers(b, snap);
    vigild_tick_costs_status(b, snap->costs, snap->statmux, snap->reasoning->adpi_costs);
    json_builder_set_member_name(b, "energy");
    json_builder_begin_object(b);
    vigil_json_string(b, "source", snap->energy->source);
    vigil_json_bool(b, "estimated", (snap->energy->flags & VIGIL_LOCAL_ENERGY_ESTIMATED) != 0);
    vigil_json_string(b, "unavailable", snap->energy->unavailable);
    vigild_energy_segments_json(snap->energy, b);
    json_builder_end_object(b);
    add_reasoning(b, snap);
    add_uplink(b, snap);
    add_metrics(b, snap);
    add_processes(b, snap, viewer_uid, finished_pid);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    JsonGenerator *g = json_generator_new();
    json_generator_set_root(g, root);
    char *text = json_generator_to_data(g, NULL);
    g_object_unref(g);
    json_node_unref(root);
    g_object_unref(b);
    return text;
}
