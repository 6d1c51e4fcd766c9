/* vigild — the daemon as a whole: its configuration, the parts it wires
 * together, a tick, a reload and a stop. */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <glib-unix.h>

#include "vigil/log.h"
#include "vigil/schema.h"
#include "vigil/wire.h"
#include "metrics.h"
#include "jobs.h"
#include "cycle_record.h"
#include "capture.h"
#include "capture_consumer.h"
#include "capture_json.h"
#include "daemon.h"
#include "energy_share.h"
#include "history.h"
#include "commits.h"
#include "outbox.h"
#include "process_state.h"
#include "processes.h"
#include "reasoning.h"
#include "region_energy.h"
#include "rollup.h"
#include "sampler.h"
#include "local_server.h"
#include "vigild_settings.h"
#include "signals.h"
#include "statmux.h"
#include "tick.h"
#include "tick_samples.h"
#include "uplink.h"
#include "verdicts.h"

/* [daemon] `key` = `ms`, a window, is whole ticks. */
static gboolean check_whole_ticks(const char *key, gint64 ms, gint64 tick_ms, GError **error)
{
    if (ms % tick_ms == 0)
        return TRUE;
    g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                "[daemon] %s = %" G_GINT64_FORMAT
                " is not a multiple of tick_ms = %" G_GINT64_FORMAT,
                key, ms, tick_ms);
    return FALSE;
}

/* What [daemon]'s and [capture]'s types cannot say: the windows are whole
 * ticks, and a window's statistics come from the history, which must reach
 * back to the first cycle a trigger forwards. */
static gboolean check_windows(const struct vigild_settings *s, GError **error)
{
    gint64 tick_ms = s->daemon.tick_ms, rollup_ms = s->daemon.rollup_ms;
    gint64 cycle_ms = s->daemon.cycle_ms, history_s = s->daemon.history_s;
    gint64 pre = s->capture.pre_cycles;
    if (!check_whole_ticks("rollup_ms", rollup_ms, tick_ms, error) ||
        !check_whole_ticks("cycle_ms", cycle_ms, tick_ms, error))
        return FALSE;
    if (history_s * 1000 < (pre + 2) * cycle_ms) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "[daemon] history_s = %" G_GINT64_FORMAT
                    " is too short for [capture] pre_cycles = %" G_GINT64_FORMAT
                    " of [daemon] cycle_ms = %" G_GINT64_FORMAT
                    " ms: it needs at least %" G_GINT64_FORMAT " s",
                    history_s, pre, cycle_ms, ((pre + 2) * cycle_ms + 999) / 1000);
        return FALSE;
    }
    return TRUE;
}

/* The sink is for a node without a transaction server: with an uplink it
 * would copy every forwarded activity to a local disk, so it is off unless
 * asked for. The recording names the node as the uplink does. */
static gboolean read_uplink_names(struct vigild_settings *s, const vigil_config *config,
                                  GError **error)
{
    struct vigild_uplink_settings uplink;
    if (!vigil_settings_fill(config, &vigild_uplink_keys, &uplink, error))
        return FALSE;
    const char *sink_enabled = s->capture.sink_enabled;
    s->sink_written = strcmp(sink_enabled, "yes") == 0 ||
                      (strcmp(sink_enabled, "auto") == 0 && uplink.endpoint[0] == '\0');
    s->hostname = g_strdup(vigild_uplink_hostname(uplink.hostname));
    vigil_settings_clear(&vigild_uplink_keys, &uplink);
    return TRUE;
}

gboolean vigild_settings_read(struct vigild_settings *s, const vigil_config *config, GError **error)
{
    memset(s, 0, sizeof *s);
    if (!vigil_settings_load(config, &vigild_daemon_keys, &s->daemon, error) ||
        !vigil_settings_load(config, &vigild_capture_keys, &s->capture, error) ||
        !vigil_settings_load(config, &vigil_insight_keys, &s->insight, error) ||
        !check_windows(s, error) || !read_uplink_names(s, config, error)) {
        vigild_settings_clear(s);
        return FALSE;
    }
    guint tick_ms = s->daemon.tick_ms;
    s->tick_ns = (uint64_t)tick_ms * VIGIL_NS_PER_MS;
    s->rollup_ticks = s->daemon.rollup_ms / tick_ms;
    s->history_ticks = (guint)((guint64)s->daemon.history_s * 1000 / tick_ms);
    s->cycle_ticks = s->daemon.cycle_ms / tick_ms;
    return TRUE;
}

void vigild_settings_clear(struct vigild_settings *s)
{
    vigil_settings_clear(&vigild_daemon_keys, &s->daemon);
    vigil_settings_clear(&vigild_capture_keys, &s->capture);
    g_clear_pointer(&s->hostname, g_free);
}

/* A fresh configuration from the file, checked whole: a reload applies all
 * of it or none. */
static vigil_config *load_config(struct vigild *d, const char *path,
                                 struct vigild_settings *settings, GError **error)
{
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, d->registry);
    if (!vigil_schema_declare(config, error) || !vigil_config_load(config, path, error) ||
        !vigild_settings_read(settings, config, error) ||
        !vigild_reasoning_check(&d->reasoning, config, error) ||
        !vigil_settings_check(config, &vigild_metrics_keys, error)) {
        vigild_settings_clear(settings);
        vigil_config_free(config);
        return NULL;
    }
    return config;
}

static void apply_log_level(const vigil_config *config)
{
    vigil_log_setup_from_config("vigild", config);
}

/* Why processes get no energy figure, from the providers it depends on. */
static void explain_energy(struct vigild *d)
{
    const struct vigild_provider *energy = vigild_sampler_find(&d->sampler, "energy");
    const struct vigild_provider *procstat = vigild_sampler_find(&d->sampler, "procstat");
    char *why = NULL;
    if (energy == NULL)
        why = g_strdup("the energy provider is not in [daemon] providers");
    else if (!energy->running)
        why = g_strdup_printf("no energy source: %s", energy->unavailable);
    else if (procstat == NULL || !procstat->running)
        why = g_strdup("the node's CPU time is unknown: the procstat provider is not running");
    if (why != NULL)
        vigild_energy_share_set_unavailable(&d->energy, why);
    else if (d->energy.source == NULL)
        vigild_energy_share_set_unavailable(
            &d->energy,
            "vigild has not sampled the node's energy yet (it started less than a tick ago)");
    g_free(why);
}

static GHashTable *running_pids(const struct vigild *d)
{
    GHashTable *pids = g_hash_table_new(g_int64_hash, g_int64_equal);
    GPtrArray *running = vigild_processes_list(&d->processes);
    for (guint i = 0; i < running->len; i++) {
        struct vigild_process *p = g_ptr_array_index(running, i);
        g_hash_table_insert(pids, &p->id, GINT_TO_POINTER(p->pid));
    }
    g_ptr_array_free(running, TRUE);
    return pids;
}

static void configure_providers(struct vigild *d)
{
    GHashTable *pids = running_pids(d);
    vigild_sampler_configure(&d->sampler, d->config, d->settings.daemon.providers, pids);
    g_hash_table_destroy(pids);
    explain_energy(d);
}

/* Root's word on a Slurm job's uid (jobs.c), for whose its run keys are. */
static gboolean job_owner(void *user, const char *job, uid_t *uid)
{
    struct vigild *d = user;
    return vigild_jobs_owner(d->jobs, job, vigil_clock_monotonic_ns(), uid);
}

/* Whose run keys and jobs are, for a restart: written when changed. */
static void keep_owners(struct vigild *d)
{
    if (d->state_dir == NULL)
        return;
    if (d->processes.run_owners != NULL)
        vigild_owners_save(d->processes.run_owners, d->state_dir);
    vigild_jobs_save(d->jobs, d->state_dir);
}

static void on_process_start(void *user, const struct vigild_process *p)
{
    struct vigild *d = user;
    vigild_energy_share_add_process(&d->energy, p->id);
    vigild_energy_share_set_owner(&d->energy, p->id, p->job, p->run_key);
    vigild_sampler_track(&d->sampler, p->id, p->pid);
    vigild_reasoning_add_process(&d->reasoning, p->id);
    vigild_capture_add_process(&d->capture, p->id, p->pid, p->program, p->mpi_rank);
    vigild_metrics_process_started(d->metrics, p);
    if (d->outbox != NULL)
        vigild_outbox_process_started(d->outbox, p);
    if (d->state_dir != NULL && p->ring != NULL) {
        struct vigild_capture_counts none = {0};
        vigild_process_state_register(d->state_dir, p);
        vigild_process_state_save(d->state_dir, p, &none, vigil_ring_read_position(p->ring), 0, 0);
    }
}

static void on_process_end(void *user, const struct vigild_process *p)
{
    struct vigild *d = user;
    const struct vigild_energy_account *a = vigild_energy_share_account(&d->energy, p->id);
    struct vigild_process *ended = (struct vigild_process *)p;
    if (a != NULL) {
        ended->cpu_s = a->cpu_s;
        ended->energy_j = a->energy_j;
        ended->energy_flags = a->flags;
        ended->energy_shared = a->shared;
        g_strlcpy(ended->energy_sources, a->sources, sizeof ended->energy_sources);
    }
    vigild_energy_share_remove_process(&d->energy, p->id);
    vigild_sampler_untrack(&d->sampler, p->id);
    vigild_reasoning_end_process(&d->reasoning, p->id);
    vigild_capture_end_process(&d->capture, p->id);
    vigild_metrics_process_ended(d->metrics, p);
    if (d->outbox != NULL)
        vigild_outbox_process_ended(d->outbox, p);
    /* Its ring is closed: nothing is left for a restarted vigild to take. */
    if (d->state_dir != NULL)
        vigild_process_state_remove(d->state_dir, p->pid, p->start_monotonic_ns);
}

static void on_process_record(void *user, const struct vigild_process *p,
                              const struct vigil_ring_record *record)
{
    struct vigild *d = user;
    if (record->type == VIGIL_RECORD_ACTIVITY) {
        vigild_reasoning_activity(&d->reasoning, p->id, &record->activity);
        vigild_capture_activity(&d->capture, p->id, &record->activity);
    } else {
        vigild_capture_name(&d->capture, p->id, record->name.file_id, record->name.path);
        if (d->state_dir != NULL)
            vigild_process_state_add_name(d->state_dir, p, record->name.file_id, record->name.path,
                                          record->name.length);
    }
}

/* A forgotten process's capture counts go to its entry in the ended list,
 * for `vigil status`. */
static void on_capture_finished(void *user, uint64_t process_id,
                                const struct vigild_capture_counts *counts)
{
    struct vigild *d = user;
    /* A running one too: the stop's last cycle forgets every process. */
    struct vigild_process *running = vigild_processes_get(&d->processes, process_id);
    if (running != NULL) {
        running->capture = *counts;
        running->capture_final = TRUE;
        return;
    }
    for (GList *l = d->processes.ended->head; l != NULL; l = l->next) {
        struct vigild_process *p = l->data;
        if (p->id == process_id) {
            p->capture = *counts;
            p->capture_final = TRUE;
            return;
        }
    }
}

static void window_statistics(void *user, uint64_t start_ns, uint64_t end_ns, GArray *out)
{
    struct vigild *d = user;
    vigild_history_span(&d->history, start_ns, end_ns, out);
}

/* Capture's settings and sink from the settings; FALSE with error when the
 * sink cannot be opened. */
static gboolean configure_capture(struct vigild *d, const struct vigild_settings *s, GError **error)
{
    /* Mode none writes nothing: no file is kept open for it. */
    const struct vigild_capture_settings *c = &s->capture;
    if (!vigild_capture_open_sink(
            &d->capture, c->mode != VIGILD_CAPTURE_NONE && s->sink_written ? c->sink : NULL,
            c->sink_max_bytes, c->sink_keep_files, error))
        return FALSE;
    vigild_capture_configure(&d->capture, c->mode, c->pre_cycles, c->post_cycles, c->max_held);
    return TRUE;
}

/* The system's state as vigil-txd last sent it: the node reasoner's
 * parent. None while the uplink is not connected: a state from a server
 * that has gone would be held for ever. */
static enum vigil_health system_state(struct vigild *d)
{
    struct vigil_wire_state state;
    struct vigild_uplink_stats stats;
    if (d->uplink == NULL || !vigild_uplink_system_state(d->uplink, &state))
        return 0;
    vigild_uplink_stats(d->uplink, &stats);
    return stats.connected ? (enum vigil_health)state.health : 0;
}

/* The end of a cycle: the reasoners decide, then capture acts on it and the
 * outbox sends it. */
static void close_cycle(struct vigild *d, uint64_t end_ns, gboolean judge)
{
    struct vigild_cycle_verdicts verdicts;
    uint64_t t_ns = vigil_clock_monotonic_ns();
    d->reasoning.system_state = system_state(d);
    vigild_reasoning_close_cycle(&d->reasoning, end_ns, judge, &verdicts);
    t_ns = vigild_tick_costs_mark(&d->costs, VIGILD_PART_REASONERS, t_ns);
    /* A cycle the stop cuts short is the last: windows end with it. */
    verdicts.final = !judge;
    vigild_capture_close_cycle(&d->capture, &verdicts);
    t_ns = vigild_tick_costs_mark(&d->costs, VIGILD_PART_CAPTURE, t_ns);
    if (d->outbox != NULL)
        vigild_outbox_close_cycle(
            d->outbox, &verdicts, &d->reasoning,
            (uint32_t)(d->settings.cycle_ticks * d->settings.tick_ns / VIGIL_NS_PER_MS));
    t_ns = vigild_tick_costs_mark(&d->costs, VIGILD_PART_OUTBOX, t_ns);
    /* What the cycle's batch carries and what was dropped may leave the
     * rings once the batch is durable: in the spool (written ahead) or
     * acknowledged (commits.c), or in the sink. */
    vigild_commit_cycle(d);
    keep_owners(d);
    vigild_tick_costs_mark(&d->costs, VIGILD_PART_COMMIT, t_ns);
}

/* What the vigild before this one counted of `p`, on top of what this one
 * counted since. */
static void restore_counts(struct vigild *d, struct vigild_process *p,
                           const struct vigild_recovered *r)
{
    p->registered_ns = r->registered_ns;
    p->mpi_size = r->mpi_size;
    p->activities += r->activities;
    p->names += r->names;
    p->corrupt += r->corrupt;
    p->torn += r->torn;
    p->dropped += r->dropped;
    p->seq_gaps += r->seq_gaps;
    p->restarts = r->restarts + 1;
    p->restart_lost += r->restart_lost;
    p->proc_start_ticks = r->proc_start_ticks;
    vigild_capture_restore(&d->capture, p->id, &r->capture);
}

/* A process that ended while no vigild ran: its end goes to the warehouse
 * as a bound, from when the last vigild saw it running to now, with what
 * that vigild had counted of it. Its ring went with it (nobody held the
 * memfd), and so did its report. */
static void end_unwatched_process(struct vigild *d, const struct vigild_recovered *r,
                                  const struct vigil_local_process_info *info)
{
    uint64_t seen_running_ns = r->saved_ns != 0 ? r->saved_ns : r->registered_ns;
    struct vigild_process *p =
        vigild_processes_add_ended(&d->processes, info, r->pid, r->uid, seen_running_ns);
    restore_counts(d, p, r);
    /* Its figures as the last commit left them: the gap is not counted. */
    p->cpu_s = r->cpu_s;
    p->energy_j = r->energy_j;
    p->energy_flags = r->energy_flags | VIGIL_LOCAL_ENERGY_UNCERTAIN;
    p->energy_shared = r->energy_shared;
    d->processes.recovered_total++;
    g_message("restart: process %d (%s) ended while no vigild ran, within the %.1f s since a "
              "vigild last saw it running; its end is stored as that bound, with the %" PRIu64
              " activities counted of it (what it wrote after went with it, and so did its "
              "report)",
              (int)p->pid, p->program, (double)(p->ended_ns - p->end_earliest_ns) / 1e9,
              p->activities);
}

/* The processes the vigild before this one served, taken back with their
 * rings and counts (daemon/process_state.c). */
static void take_back_processes(struct vigild *d)
{
    GPtrArray *found = vigild_process_state_recover(d->state_dir);
    for (guint i = 0; i < found->len; i++) {
        struct vigild_recovered *r = g_ptr_array_index(found, i);
        GString *argv = g_string_new(NULL);
        for (char **a = r->argv; *a != NULL; a++)
            g_string_append_len(argv, *a, (gssize)strlen(*a) + 1);
        struct vigil_local_process_info info = {
            .fixed =
                {
                    .ring_slots = r->ring_slots,
                    .tick_source = r->tick_source,
                    .start_monotonic_ns = r->start_monotonic_ns,
                    .start_realtime_ns = r->start_realtime_ns,
                    .mpi_rank = r->mpi_rank,
                    .argc = g_strv_length(r->argv),
                    .program_bytes = (uint16_t)strlen(r->program),
                    .cwd_bytes = (uint16_t)strlen(r->cwd),
                    .job_bytes = (uint16_t)strlen(r->job),
                    .argv_bytes = (uint16_t)argv->len,
                    .flags = r->argv_truncated ? VIGIL_LOCAL_ARGV_TRUNCATED : 0,
                    .run_bytes = (uint16_t)strlen(r->run_key),
                },
            .program = r->program,
            .cwd = r->cwd,
            .job = r->job,
            .run_key = r->run_key,
            .argv = argv->str,
        };
        if (r->ended) {
            end_unwatched_process(d, r, &info);
            g_string_free(argv, TRUE);
            continue;
        }
        GError *error = NULL;
        int ring_fd = r->ring_fd;
        r->ring_fd = -1; /* vigild_processes_add closes it */
        d->processes.adopt_skip_below = r->committed;
        d->processes.adopt_names_known = r->names_complete;
        struct vigild_process *p =
            vigild_processes_add(&d->processes, &info, r->pid, r->uid, ring_fd, &error);
        d->processes.adopt_skip_below = 0;
        g_string_free(argv, TRUE);
        if (p == NULL) {
            g_warning("restart: process %d (%s) cannot be taken back: %s", (int)r->pid, r->program,
                      error->message);
            g_error_free(error);
            vigild_process_state_remove(d->state_dir, r->pid, r->start_monotonic_ns);
            continue;
        }
        for (guint n = 0; n < r->name_ids->len; n++)
            vigild_capture_name(&d->capture, p->id, g_array_index(r->name_ids, uint32_t, n),
                                g_ptr_array_index(r->name_paths, n));
        uint64_t lost_now = p->restart_lost;
        restore_counts(d, p, r);
        vigild_energy_share_restore(&d->energy, p->id, r->cpu_s, r->energy_j, r->energy_flags,
                                    r->energy_shared);
        vigild_process_state_register(d->state_dir, p); /* its first registration's time */
        d->processes.recovered_total++;
        g_message("restart: took back process %d (%s) with its ring at position %" G_GUINT64_FORMAT
                  " (%" G_GUINT64_FORMAT " positions lost: freed early and not stored)",
                  (int)p->pid, p->program, vigil_ring_read_position(p->ring), lost_now);
        vigild_commit_process(d, p);
    }
    g_ptr_array_free(found, TRUE);
}

/* [daemon] state_dir: "" is beside the socket, "none" is none. */
static gboolean open_state_dir(struct vigild *d, GError **error)
{
    const char *dir = d->settings.daemon.state_dir;
    if (strcmp(dir, "none") == 0)
        return TRUE;
    d->state_dir =
        dir[0] != '\0' ? g_strdup(dir) : g_strconcat(d->settings.daemon.socket, ".state", NULL);
    if (!vigild_process_state_open_dir(d->state_dir, error))
        return FALSE;
    vigild_processes_hold_records(&d->processes, TRUE);
    /* Before the processes: theirs are claimed again as they are taken. */
    vigild_owners_load(d->processes.run_owners, d->state_dir);
    take_back_processes(d);
    return TRUE;
}

/* The uplink and its outbox, when [uplink] endpoint is set: nothing of
 * either is made otherwise. */
static gboolean start_uplink(struct vigild *d, GError **error)
{
    struct vigild_uplink_settings *s = g_new0(struct vigild_uplink_settings, 1);
    d->uplink_settings = s;
    if (!vigild_uplink_settings_load(d->config, s, error))
        return FALSE;
    if (s->endpoint[0] == '\0')
        return TRUE;
    d->uplink = vigild_uplink_new(s, error);
    if (d->uplink == NULL) {
        if (strstr((*error)->message, "[uplink]") == NULL)
            g_prefix_error(error, "[uplink] endpoint = %s, spool_dir = %s: ", s->endpoint,
                           s->spool_dir);
        return FALSE;
    }
    d->outbox = vigild_outbox_new(d->uplink, s->node_id, s->hostname, d->catalog, &d->processes,
                                  &d->rollup);
    struct vigild_capture_consumer outbox;
    vigild_outbox_consumer(d->outbox, &outbox);
    vigild_capture_set_consumer(&d->capture, outbox.name, &outbox);
    /* After the roll-ups: it takes the windows they close. */
    vigild_statmux_subscribe_named(&d->statmux, "outbox", vigild_outbox_take_rollups, d->outbox);
    g_message("uplink to %s as node %" G_GUINT64_FORMAT " (%s), spooling to %s", s->endpoint,
              (guint64)s->node_id, s->hostname, s->spool_dir);
    return TRUE;
}

/* [uplink] is read at the start only: a reload that changes it is told so. */
static void check_uplink_unchanged(struct vigild *d, const vigil_config *config)
{
    struct vigild_uplink_settings now;
    GError *error = NULL;
    if (!vigild_uplink_settings_load(config, &now, &error)) {
        g_warning("reload: %s; [uplink] is read at the start only, the running uplink stays",
                  error->message);
        g_error_free(error);
        return;
    }
    if (!vigild_uplink_settings_equal(&now, d->uplink_settings))
        g_warning("reload: [uplink] changed; it applies at the next start, the running uplink "
                  "(%s) keeps its settings",
                  d->uplink != NULL ? d->uplink_settings->endpoint : "none");
    vigild_uplink_settings_clear(&now);
}

static gboolean on_tick(gint fd, GIOCondition condition, gpointer user_data)
{
    (void)fd;
    (void)condition;
    struct vigild *d = user_data;
    if (vigild_ticker_take(&d->ticker) > 0)
        vigild_tick(d);
    return G_SOURCE_CONTINUE;
}

static gboolean start_ticker(struct vigild *d, GError **error)
{
    if (!vigild_ticker_start(&d->ticker, d->settings.tick_ns, error))
        return FALSE;
    d->ticker_watch = g_unix_fd_add(d->ticker.fd, G_IO_IN, on_tick, d);
    /* GLib blocks a source that cannot recurse while it runs, which for an
     * fd source means taking its fd out of the poll set and putting it
     * back, and waking the loop for another pass: twice per tick, for
     * nothing. The tick never runs the main loop itself. */
    g_source_set_can_recurse(g_main_context_find_source_by_id(NULL, d->ticker_watch), TRUE);
    return TRUE;
}

gboolean vigild_start(struct vigild *d, const char *config_path, const char *socket_override,
                      GError **error)
{
    memset(d, 0, sizeof *d);
    d->ticker.fd = -1;
    d->signals.fd = -1;
    d->config_path = g_strdup(config_path);
    d->socket_override = g_strdup(socket_override);
    char *plugin_dir = vigil_plugin_default_directory();
    d->registry = vigil_plugin_registry_new(plugin_dir);
    g_free(plugin_dir);
    d->catalog = vigil_metric_catalog_new();
    vigild_energy_share_init(&d->energy);
    vigild_reasoning_init(&d->reasoning, d->registry, d->catalog, &d->energy);
    vigild_capture_init(&d->capture, d->catalog);
    d->config = load_config(d, config_path, &d->settings, error);
    if (d->config == NULL)
        return FALSE;
    /* Before the reasoning is configured: the recording starts with it. */
    if (d->settings.daemon.record[0] != '\0' &&
        (d->reasoning.record = vigild_cycle_record_open(
             d->settings.daemon.record, d->settings.daemon.record_max_bytes,
             d->reasoning.cycle_start_ns, d->settings.hostname, error)) == NULL)
        return FALSE;
    apply_log_level(d->config);
    if (socket_override != NULL) {
        g_free(d->settings.daemon.socket);
        d->settings.daemon.socket = g_strdup(socket_override);
    }
    d->started_ns = vigil_clock_monotonic_ns();
    d->latest = g_array_new(FALSE, TRUE, sizeof(struct vigil_sample));
    d->samples.node = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
    d->samples.process = g_array_new(FALSE, FALSE, sizeof(struct vigild_process_sample));
    vigild_sampler_init(&d->sampler, d->registry, d->catalog);
    vigild_rollup_init(&d->rollup, d->settings.rollup_ticks);
    vigild_history_init(&d->history, d->settings.history_ticks);
    vigild_statmux_init(&d->statmux);
    vigild_statmux_subscribe_named(&d->statmux, "rollup", vigild_rollup_add, &d->rollup);
    vigild_statmux_subscribe_named(&d->statmux, "history", vigild_history_add, &d->history);
    vigild_statmux_subscribe_named(&d->statmux, "region_energy", vigild_region_energy_publish, d);
    /* After the energy sharing: the ADPIs see each process's share. */
    vigild_statmux_subscribe_named(&d->statmux, "reasoning", vigild_reasoning_samples,
                                   &d->reasoning);
    vigild_reasoning_configure(&d->reasoning, d->config, d->settings.cycle_ticks);
    d->capture.statistics = window_statistics;
    d->capture.statistics_user = d;
    d->capture.finished = on_capture_finished;
    d->capture.finished_user = d;
    if (!configure_capture(d, &d->settings, error))
        return FALSE;
    vigild_processes_init(&d->processes, d->settings.daemon.keep_ended);
    d->processes.on_start = on_process_start;
    d->processes.on_end = on_process_end;
    d->processes.on_record = on_process_record;
    d->processes.job_owner = job_owner;
    d->processes.user = d;
    configure_providers(d);
    d->server = vigild_serve(d, error);
    /* The uplink's thread after the signals are blocked: it would take
     * SIGTERM's default action otherwise. */
    if (d->server == NULL || !start_ticker(d, error) || !vigild_listen_signals(d, error) ||
        !start_uplink(d, error) ||
        !vigild_metrics_start(d->config, &d->statmux, &d->processes, vigild_metrics_fill, d,
                              &d->metrics, error) ||
        !open_state_dir(d, error))
        return FALSE;
    d->jobs = vigild_jobs_new(d->outbox != NULL);
    if (d->state_dir != NULL)
        vigild_jobs_load(d->jobs, d->state_dir);
    if (d->outbox != NULL)
        vigild_outbox_set_jobs(d->outbox, d->jobs);
    g_message("serving %s, a tick every %" G_GUINT64_FORMAT " ms, providers: %s",
              d->settings.daemon.socket, (guint64)(d->settings.tick_ns / VIGIL_NS_PER_MS),
              d->settings.daemon.providers[0] != NULL ? "see `vigil status`" : "none");
    return TRUE;
}

void vigild_tick(struct vigild *d)
{
    uint64_t begin_ns = vigil_clock_monotonic_ns();
    g_array_set_size(d->samples.node, 0);
    g_array_set_size(d->samples.process, 0);
    d->samples.tick = d->ticker.ticks;
    d->samples.t_ns = begin_ns;
    vigild_sampler_read(&d->sampler, begin_ns, &d->samples);
    uint64_t t_ns = vigild_tick_costs_mark(&d->costs, VIGILD_PART_PROVIDERS, begin_ns);
    /* The energy sharing comes first: node.energy_j, the one running sum it
     * keeps, is a node sample like the providers' for everything after. */
    vigild_energy_share_add(&d->energy, &d->samples, d->catalog);
    struct vigil_sample node_energy;
    if (vigild_energy_share_node_sample(&d->energy, d->catalog, begin_ns, &node_energy))
        g_array_append_val(d->samples.node, node_energy);
    for (guint i = 0; i < d->samples.node->len; i++) {
        const struct vigil_sample *s = &g_array_index(d->samples.node, struct vigil_sample, i);
        if (s->metric_id >= d->latest->len)
            g_array_set_size(d->latest, s->metric_id + 1);
        g_array_index(d->latest, struct vigil_sample, s->metric_id) = *s;
    }
    t_ns = vigild_tick_costs_mark(&d->costs, VIGILD_PART_ENERGY_SHARE, t_ns);
    vigild_statmux_publish(&d->statmux, &d->samples, d->catalog);
    t_ns = vigild_tick_costs_mark(&d->costs, VIGILD_PART_PUBLISH, t_ns);
    vigild_processes_calibrate(&d->processes);
    vigild_processes_drain_all(&d->processes);
    t_ns = vigild_tick_costs_mark(&d->costs, VIGILD_PART_DRAIN, t_ns);
    if (vigild_reasoning_tick(&d->reasoning))
        close_cycle(d, begin_ns, TRUE);
    else if (vigild_commit_tick(d))
        vigild_tick_costs_mark(&d->costs, VIGILD_PART_COMMIT, t_ns);
    uint64_t cost_ns = vigil_clock_monotonic_ns() - begin_ns;
    d->tick_cost_ns_last = cost_ns;
    d->tick_cost_ns_total += cost_ns;
    if (cost_ns > d->tick_cost_ns_max)
        d->tick_cost_ns_max = cost_ns;
}

void vigild_reload(struct vigild *d)
{
    struct vigild_settings settings = {0};
    GError *error = NULL;
    vigil_config *config = load_config(d, d->config_path, &settings, &error);
    if (config == NULL) {
        d->reload_failures++;
        g_warning("reload: %s: the running configuration stays", error->message);
        g_error_free(error);
        return;
    }
    if (!configure_capture(d, &settings, &error)) {
        d->reload_failures++;
        g_warning("reload: %s: the running configuration stays", error->message);
        g_error_free(error);
        vigild_settings_clear(&settings);
        vigil_config_free(config);
        return;
    }
    if (d->socket_override != NULL) {
        g_free(settings.daemon.socket);
        settings.daemon.socket = g_strdup(d->socket_override);
    }
    if (strcmp(settings.daemon.socket, d->settings.daemon.socket) != 0)
        g_warning("reload: [daemon] socket changed to %s; it applies at the next start, the "
                  "daemon keeps serving %s",
                  settings.daemon.socket, d->settings.daemon.socket);
    g_free(settings.daemon.socket);
    settings.daemon.socket = g_strdup(d->settings.daemon.socket);
    check_uplink_unchanged(d, config);
    vigild_metrics_reload(d->metrics, d->config, config);
    vigil_config *old = d->config;
    d->config = config;
    gboolean tick_changed = settings.tick_ns != d->settings.tick_ns;
    vigild_settings_clear(&d->settings);
    d->settings = settings;
    apply_log_level(config);
    configure_providers(d);
    vigild_reasoning_configure(&d->reasoning, config, settings.cycle_ticks);
    vigil_config_free(old);
    vigild_rollup_set_window(&d->rollup, settings.rollup_ticks);
    vigild_history_resize(&d->history, settings.history_ticks);
    vigild_processes_set_keep_ended(&d->processes, settings.daemon.keep_ended);
    vigild_server_configure(d->server, &d->settings.daemon);
    if (tick_changed) {
        g_source_remove(d->ticker_watch);
        d->ticker_watch = 0;
        vigild_ticker_stop(&d->ticker);
        uint64_t ticks = d->ticker.ticks, missed = d->ticker.missed;
        GError *tick_error = NULL;
        if (!start_ticker(d, &tick_error)) {
            g_critical("reload: %s", tick_error->message);
            g_error_free(tick_error);
        }
        d->ticker.ticks = ticks, d->ticker.missed = missed;
    }
    d->reloads++;
    g_message("reloaded %s", d->config_path);
}

void vigild_stop(struct vigild *d)
{
    vigild_signals_stop(&d->signals);
    if (d->ticker_watch != 0)
        g_source_remove(d->ticker_watch);
    vigild_ticker_stop(&d->ticker);
    vigild_server_free(d->server);
    d->server = NULL;
    g_clear_pointer(&d->metrics, vigild_metrics_stop);
    if (d->processes.by_id != NULL) {
        g_message("stopping: last drain of %u processes", vigild_processes_running(&d->processes));
        vigild_processes_drain_all(&d->processes);
        /* The cycle cut short is decided, so that what it holds is
         * forwarded or dropped, not lost; its ADPIs are not asked, since a
         * part of a cycle would look like an anomaly. */
        if (d->reasoning.processes != NULL)
            close_cycle(d, vigil_clock_monotonic_ns(), FALSE);
        keep_owners(d);
        vigild_commit_stop(d);
        vigild_commits_clear(d);
        /* What the rings hold beyond that stays there: the next vigild
         * takes the processes back and reads it. */
        vigild_processes_clear(&d->processes);
    }
    /* After the last cycle's batch: the uplink spools whatever vigil-txd
     * has not acknowledged, so a stop loses nothing. */
    vigild_capture_set_consumer(&d->capture, "outbox", NULL);
    vigild_outbox_free(d->outbox);
    d->outbox = NULL;
    vigild_jobs_free(d->jobs);
    d->jobs = NULL;
    vigild_uplink_free(d->uplink);
    d->uplink = NULL;
    if (d->uplink_settings != NULL) {
        vigild_uplink_settings_clear(d->uplink_settings);
        g_free(d->uplink_settings);
        d->uplink_settings = NULL;
    }
    vigild_reasoning_clear(&d->reasoning);
    vigild_capture_clear(&d->capture);
    vigild_sampler_clear(&d->sampler);
    vigild_statmux_clear(&d->statmux);
    vigild_rollup_clear(&d->rollup);
    vigild_history_clear(&d->history);
    vigild_energy_share_clear(&d->energy);
    if (d->samples.node != NULL)
        g_array_free(d->samples.node, TRUE);
    if (d->samples.process != NULL)
        g_array_free(d->samples.process, TRUE);
    if (d->latest != NULL)
        g_array_free(d->latest, TRUE);
    if (d->catalog != NULL)
        vigil_metric_catalog_free(d->catalog);
    if (d->config != NULL)
        vigil_config_free(d->config);
    vigild_settings_clear(&d->settings);
    vigil_plugin_registry_free(d->registry);
    g_free(d->config_path);
    g_free(d->state_dir);
    g_free(d->socket_override);
}
