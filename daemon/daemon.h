/* vigild — the daemon as a whole (daemon.c), and its files, each with
 * a header of its own (NAME.c: NAME.h):
 *
 *   tick.c       the 100 ms tick on absolute deadlines
 *   sampler.c    the statistics providers: loaded, started, read each tick
 *   statmux.c    the statistics multiplexer: each tick's samples to its subscribers
 *   tick_costs.c where a tick's time goes, part by part: tick_costs.h
 *   rollup.c     subscriber: 1 s roll-ups (min, mean, max, counter deltas)
 *   history.c    subscriber: the last history_s seconds at full resolution
 *   energy_share.c  subscriber: the node's energy shared among processes
 *   energy_segments.c  the node's running energy sum across sources and zones
 *   region_energy.c  subscriber: each process's energy into its ring's header
 *   reasoning.c  the reasoner tree: ADPIs and a reasoner per process and
 *                for the node, decided every cycle; `vigil tune` links it too
 *   cycle_record.c, cycle_record_read.c  [daemon] record: what reasoning.c
 *                was fed and decided, for `vigil tune` to replay (cycle_record.h)
 *   capture.c    the capture buffer: each process's activities per cycle,
 *                forwarded around abnormal cycles, dropped otherwise, to its
 *                consumers (capture_consumer.h): the sink and the outbox
 *   capture_json.c  the consumer "sink": each window as JSON lines
 *   capture_sink.c  the sink's file: JSON lines, bounded and rotated
 *   processes.c  registered processes: their rings, drains and ends
 *   process_state.c  what a restarted vigild needs of them ([daemon] state_dir)
 *   owners.c     whose a run key or a Slurm job is
 *   commits.c    what the rings may free at a cycle's end: what is durable
 *   local_server.c  the Unix socket: registration, summaries, status requests;
 *                it sees the daemon only through struct vigild_server_ops,
 *                which daemon_ops.c implements
 *   jobs.c       scheduler jobs the prolog/epilog/SPANK plugin tell of: jobs.h
 *   client_limits.c  what one user may take of the socket: connections and
 *                processes per uid, the idle timeout, the descriptor budget
 *   refusal_log.c  every refusal of a client counted by kind, logged per
 *                uid at most once a period
 *   signals.c    SIGTERM, SIGINT and SIGHUP through a signalfd, handed to
 *                callbacks (daemon_ops.c's)
 *   snapshot.c   what status and /metrics read of the daemon, taken when
 *                asked: the one place they read struct vigild (snapshot.h)
 *   status.c     what `vigil status` is told, as JSON, from a snapshot
 *   json_members.c  JSON members as status and the capture sink write them
 *   metrics_*.c  /metrics for Prometheus ([metrics] listen): metrics.h;
 *                metrics_http.c serves, metrics_snapshot.c reads the
 *                snapshot, metrics_exposition.c writes the text,
 *                metrics_jobs.c keeps jobs' counters across processes' ends
 *   outbox.c     the consumer "outbox": each cycle's batch for vigil-txd
 *   uplink.c     the batches to vigil-txd, on a thread of its own, kept
 *                until acknowledged; spool.c, spool_scan.c: on disk;
 *                uplink_drops.c: what the uplink and the spool dropped
 *   daemon.c     the whole: configuration, reload, the main loop's sources
 *   vigild_main.c  the command line, daemonising, signals
 *
 * Everything but the uplink runs in one thread, on GLib's main loop: a
 * tick, a message and a process's end are handled one after the other, so
 * no state is locked. The uplink's thread owns its ZeroMQ socket, its spool
 * and its pending batches; it takes batches from a queue and publishes its
 * figures under a mutex (uplink.h). */
#ifndef VIGILD_DAEMON_H
#define VIGILD_DAEMON_H

#include <stdint.h>
#include <glib.h>

#include "vigil/config.h"
#include "vigil/metric.h"
#include "vigil/plugin.h"
#include "capture.h"
#include "energy_share.h"
#include "history.h"
#include "processes.h"
#include "reasoning.h"
#include "rollup.h"
#include "sampler.h"
#include "vigild_settings.h"
#include "signals.h"
#include "statmux.h"
#include "tick.h"
#include "tick_costs.h"
#include "tick_samples.h"

struct vigild_server;          /* server.h */
struct vigild_jobs;            /* jobs.h */
struct vigild_uplink;          /* uplink.h */
struct vigild_outbox;          /* outbox.h */
struct vigild_uplink_settings; /* uplink.h */
struct vigild_metrics;         /* metrics.h */

struct vigild {
    char *config_path;
    char *state_dir;       /* the processes' state for a restart; NULL: none kept */
    char *socket_override; /* VIGIL_SOCKET or --socket */
    vigil_config *config;
    struct vigild_settings settings;
    vigil_plugin_registry *registry;
    vigil_metric_catalog *catalog;
    struct vigild_sampler sampler;
    struct vigild_statmux statmux;
    struct vigild_rollup rollup;
    struct vigild_history history;
    struct vigild_energy_share energy;
    struct vigild_reasoning reasoning;
    struct vigild_capture capture;
    struct vigild_processes processes;
    struct vigild_ticker ticker;
    guint ticker_watch;
    struct vigild_tick_samples samples; /* reused every tick */
    GArray *latest;                     /* struct vigil_sample by metric id: the newest */
    struct vigild_server *server;
    struct vigild_jobs *jobs;                       /* jobs.h */
    struct vigild_uplink *uplink;                   /* NULL: no [uplink] endpoint */
    struct vigild_outbox *outbox;                   /* with the uplink */
    struct vigild_uplink_settings *uplink_settings; /* as started: a reload does not change them */
    struct vigild_metrics *metrics;                 /* NULL: no [metrics] endpoint (metrics.h) */
    /* Cycles' positions waiting for their batches to be durable before the
     * rings free them (commits.c); commits_held: some are waiting. */
    GQueue commit_points;
    gboolean commits_held;
    uint64_t started_ns;
    uint64_t reloads, reload_failures;
    uint64_t tick_cost_ns_last, tick_cost_ns_max, tick_cost_ns_total;
    struct vigild_tick_costs costs; /* the tick part by part */
    struct vigild_signals signals;
    gboolean stopping;
    GMainLoop *loop;
};

/* Loads the configuration and builds the daemon; FALSE with error set when
 * the configuration is wrong or the socket cannot be served. */
gboolean vigild_start(struct vigild *d, const char *config_path, const char *socket_override,
                      GError **error);
/* SIGHUP: reads the configuration again; a wrong one is logged and the
 * running one kept. */
void vigild_reload(struct vigild *d);
/* One tick: read the providers, hand the samples on, drain the rings. */
void vigild_tick(struct vigild *d);
/* SIGTERM: drains every ring and frees everything. */
void vigild_stop(struct vigild *d);

/* The daemon behind the interfaces of its parts (daemon_ops.c): serves
 * [daemon] socket_path (server.h), NULL with error set when it cannot; and
 * takes SIGHUP as a reload, SIGTERM and SIGINT as a stop (signals.h). */
struct vigild_server *vigild_serve(struct vigild *d, GError **error);
gboolean vigild_listen_signals(struct vigild *d, GError **error);

#endif
