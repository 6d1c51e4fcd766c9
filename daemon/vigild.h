/* vigild — the node daemon's internal interface, shared by its files.
 *
 *   tick.c       the 100 ms tick on absolute deadlines
 *   sampler.c    the statistics providers: loaded, started, read each tick
 *   statmux.c    the statistics multiplexer: each tick's samples to its subscribers
 *   tick_costs.c where a tick's time goes, part by part: tick_costs.h
 *   rollup.c     subscriber: 1 s roll-ups (min, mean, max, counter deltas)
 *   history.c    subscriber: the last history_s seconds at full resolution
 *   energy_share.c  subscriber: the node's energy shared among processes
 *   reasoning.c  the reasoner tree: ADPIs and a reasoner per process and
 *                for the node, decided every cycle; `vigil tune` links it too
 *   cycle_record.c, cycle_record_read.c  [daemon] record: what reasoning.c
 *                was fed and decided, for `vigil tune` to replay (cycle_record.h)
 *   capture.c    the capture buffer: each process's activities per cycle,
 *                forwarded around abnormal cycles, dropped otherwise
 *   capture_sink.c  where forwarded windows go: a JSON-lines file
 *   processes.c  registered processes: their rings, drains and ends
 *   server.c     the Unix socket: registration, summaries, status requests
 *   jobs.c       scheduler jobs the prolog/epilog/SPANK plugin tell of: jobs.h
 *   client_limits.c  what one user may take of the socket: connections and
 *                processes per uid, the idle timeout, the descriptor budget
 *   signals.c    SIGTERM, SIGINT and SIGHUP through a signalfd
 *   status.c     what `vigil status` is told, as JSON
 *   json_members.c  JSON members as status and the capture sink write them
 *   metrics_*.c  /metrics for Prometheus ([metrics] listen): metrics.h
 *   daemon.c     the whole: configuration, reload, the main loop's sources
 *   main.c       the command line, daemonising, signals
 *
 * Everything runs in one thread, on GLib's main loop: a tick, a message and
 * a process's end are handled one after the other, so no state is locked. */
#ifndef VIGILD_H
#define VIGILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

#include <json-glib/json-glib.h>

#include "vigil/adpi.h"
#include "vigil/clock.h"
#include "vigil/config.h"
#include "vigil/local_protocol.h"
#include "vigil/metric.h"
#include "vigil/plugin.h"
#include "vigil/provider.h"
#include "vigil/reasoner.h"
#include "vigil/ring.h"
#include "tick_costs.h"

/* Errors of the daemon's own making; the message says what is wrong. */
#define VIGILD_ERROR (g_quark_from_static_string("vigild-error"))
enum vigild_error_code {
    VIGILD_ERROR_REFUSED, /* a client's registration or message */
};

/* ---- settings: the [daemon] section, as read -------------------------- */

struct vigild_settings {
    char *socket_path;
    uint64_t tick_ns;
    char **providers; /* names */
    guint rollup_ticks;
    guint history_ticks;
    guint max_processes;
    guint keep_ended;
    guint cycle_ticks; /* a reasoner cycle */
    /* [capture] */
    int capture_mode; /* enum vigild_capture_mode */
    guint capture_pre, capture_post;
    uint64_t capture_max_held;
    char *capture_sink; /* NULL: no sink ([capture] sink_enabled, or an uplink) */
    uint64_t capture_sink_max_bytes;
    guint capture_sink_keep_files;
    /* [daemon]: the socket's clients (client_limits.c) */
    guint max_connections_per_uid;
    guint max_processes_per_uid;
    guint unregistered_timeout_ms;
    guint fd_reserve;
    char *state_dir; /* [daemon] state_dir as written */
    /* [daemon] record (NULL: none) and record_max_bytes: cycle_record.c */
    char *record_path;
    uint64_t record_max_bytes;
};

/* Reads [daemon]; a roll-up window that is not a multiple of the tick is
 * an error that names both keys. */
gboolean vigild_settings_read(struct vigild_settings *s, const vigil_config *config,
                              GError **error);
void vigild_settings_clear(struct vigild_settings *s);

/* ---- tick.c ------------------------------------------------------------- */

/* A timerfd armed on absolute CLOCK_MONOTONIC deadlines, period apart: a
 * late tick does not move the next one, so there is no drift, and the
 * deadlines that passed while the daemon could not run are counted as
 * missed rather than run in a burst. */
struct vigild_ticker {
    int fd;
    uint64_t period_ns;
    uint64_t ticks;  /* ticks run */
    uint64_t missed; /* deadlines that passed without a tick */
};

gboolean vigild_ticker_start(struct vigild_ticker *t, uint64_t period_ns, GError **error);
/* After the fd polled readable: how many deadlines passed (≥ 1; 0 on a
 * spurious wake-up). One tick runs; the rest are counted as missed. */
uint64_t vigild_ticker_take(struct vigild_ticker *t);
void vigild_ticker_stop(struct vigild_ticker *t);

/* ---- samples of one tick ----------------------------------------------- */

struct vigild_process_sample {
    uint64_t process_id;
    struct vigil_sample sample;
};

struct vigild_tick_samples {
    uint64_t tick;
    uint64_t t_ns;
    GArray *node;    /* struct vigil_sample */
    GArray *process; /* struct vigild_process_sample */
};

/* ---- sampler.c ---------------------------------------------------------- */

struct vigild_provider {
    char *name;
    const struct vigil_plugin *plugin;
    const struct vigil_provider_ops *ops;
    void *instance;
    gboolean running;
    char *unavailable; /* why it is not running, or NULL */
    uint64_t reads, read_errors;
    uint64_t cost_ns_last, cost_ns_max, cost_ns_total;
    char *last_error;  /* the latest failed read's message */
    char *config_text; /* its section's values, to tell a changed one on reload */
};

struct vigild_sampler {
    vigil_plugin_registry *registry;
    vigil_metric_catalog *catalog;
    GPtrArray *providers; /* struct vigild_provider *, in the config's order */
};

void vigild_sampler_init(struct vigild_sampler *s, vigil_plugin_registry *registry,
                         vigil_metric_catalog *catalog);
/* Makes the providers `names` say, from `config`: those already running
 * whose section did not change are kept as they are (their counters and
 * baselines with them); the others are created and started. A provider
 * that cannot run here is kept, not running, with the reason (logged
 * once). `processes` (uint64 id → pid as GINT_TO_POINTER) are tracked by
 * every new provider that tracks processes. */
void vigild_sampler_configure(struct vigild_sampler *s, const vigil_config *config,
                              char *const *names, GHashTable *processes);
/* Reads every running provider into `out`. */
void vigild_sampler_read(struct vigild_sampler *s, uint64_t now_ns,
                         struct vigild_tick_samples *out);
void vigild_sampler_track(struct vigild_sampler *s, uint64_t process_id, pid_t pid);
void vigild_sampler_untrack(struct vigild_sampler *s, uint64_t process_id);
/* The provider `name`, or NULL. */
const struct vigild_provider *vigild_sampler_find(const struct vigild_sampler *s, const char *name);
void vigild_sampler_clear(struct vigild_sampler *s);

/* ---- statmux.c ---------------------------------------------------------- */

typedef void (*vigild_samples_fn)(void *user, const struct vigild_tick_samples *samples,
                                  const vigil_metric_catalog *catalog);

struct vigild_statmux {
    GArray *subscribers; /* struct { fn, user } */
};

void vigild_statmux_init(struct vigild_statmux *m);
void vigild_statmux_subscribe(struct vigild_statmux *m, vigild_samples_fn fn, void *user);
/* `name` (static) is the subscriber's in `vigil status`'s tick costs. */
void vigild_statmux_subscribe_named(struct vigild_statmux *m, const char *name,
                                    vigild_samples_fn fn, void *user);
void vigild_statmux_json(JsonBuilder *b, const struct vigild_statmux *m);
void vigild_statmux_publish(const struct vigild_statmux *m,
                            const struct vigild_tick_samples *samples,
                            const vigil_metric_catalog *catalog);
void vigild_statmux_clear(struct vigild_statmux *m);

/* ---- rollup.c ----------------------------------------------------------- */

/* One metric over one window. A gauge's min, mean and max are of its
 * values; a counter's are of its rate per second between consecutive
 * samples, and `delta` is exactly its last value of this window minus its
 * last value of the window before (or its first value in this one). */
struct vigild_rollup_window {
    uint32_t metric_id;
    uint32_t flags; /* VIGIL_SAMPLE_UNCERTAIN when a sample in it was */
    uint64_t start_ns, end_ns;
    uint32_t count;
    double min, mean, max;
    double delta; /* counters only; NaN for gauges */
};

struct vigild_rollup {
    guint window_ticks;
    guint ticks_in_window;
    uint64_t window_start_ns;
    uint64_t last_close_ns; /* the tick that closed the last window; 0 before one */
    GArray *metrics;        /* struct rollup_acc by metric id */
    GArray *latest;         /* struct vigild_rollup_window by metric id: the last closed window */
    uint64_t windows_closed;
};

void vigild_rollup_init(struct vigild_rollup *r, guint window_ticks);
void vigild_rollup_set_window(struct vigild_rollup *r, guint window_ticks);
void vigild_rollup_add(void *rollup, const struct vigild_tick_samples *samples,
                       const vigil_metric_catalog *catalog);
/* The last closed window of `metric_id`, or NULL when none has closed. */
const struct vigild_rollup_window *vigild_rollup_latest(const struct vigild_rollup *r,
                                                        uint32_t metric_id);
void vigild_rollup_clear(struct vigild_rollup *r);

/* ---- history.c ---------------------------------------------------------- */

/* The node's samples of the last `length` ticks, for a captured window
 * to carry at full resolution. */
struct vigild_history {
    guint length;      /* ticks kept */
    GPtrArray *frames; /* GArray of struct vigil_sample per tick, circular */
    guint count;       /* frames filled */
    guint next;        /* the frame the next tick goes in */
};

void vigild_history_init(struct vigild_history *h, guint length);
/* Keeps the newest samples when the length shrinks. */
void vigild_history_resize(struct vigild_history *h, guint length);
void vigild_history_add(void *history, const struct vigild_tick_samples *samples,
                        const vigil_metric_catalog *catalog);
/* The kept samples of `metric_id` from `since_ns` on, oldest first, into
 * `out` (struct vigil_sample); returns how many. */
guint vigild_history_get(const struct vigild_history *h, uint32_t metric_id, uint64_t since_ns,
                         GArray *out);
/* Every kept sample taken after `after_ns` and up to `until_ns`, oldest
 * first, into `out`; returns how many. */
guint vigild_history_span(const struct vigild_history *h, uint64_t after_ns, uint64_t until_ns,
                          GArray *out);
void vigild_history_clear(struct vigild_history *h);

/* ---- energy_share.c ----------------------------------------------------- */

/* Room for the "+"-joined sources of a process's figure (the local
 * protocol's summary carries 32 bytes of them, compacted), and for one. */
#define VIGILD_ENERGY_SOURCES_BYTES 128
#define VIGILD_ENERGY_SOURCE_BYTES  32
#define VIGILD_ENERGY_SEGMENTS_KEPT 16

/* A stretch of the node's energy from one source and one set of zones:
 * the running sum goes on across segments, never jumping (energy_segments.c). */
struct vigild_energy_segment {
    char source[VIGILD_ENERGY_SOURCE_BYTES];
    int zone_kind;
    guint zone_count;
    uint64_t start_ns; /* the tick that started it (adds nothing) */
    double start_j;    /* the running sum then */
    uint64_t number;   /* 1 for the daemon's first */
};

/* Each tick, the node's energy delta is shared among the registered
 * processes by their share of the CPU time the node was busy for. */
struct vigild_energy_share {
    GHashTable *processes;  /* uint64 id → struct vigild_energy_account * */
    double node_cpu_busy_s; /* last total; NaN before the first */
    /* The node's energy: one running sum of the deltas of every segment
     * (energy_segments.c), NaN before the first sample. */
    double node_energy_j;
    double zone_total_j; /* the zones' last total; NaN: the next sample starts a segment */
    int zone_kind;       /* which zones that total is of: psys, packages, estimate */
    guint zone_count;    /* and how many */
    GArray *segments;    /* struct vigild_energy_segment, the newest last, at most a few */
    uint64_t segments_total;
    GHashTable *owners;       /* job or run key → how many registered processes it has */
    char *source;             /* the energy metric's source, or NULL */
    uint32_t flags;           /* VIGIL_LOCAL_ENERGY_* of the node's energy */
    char *unavailable;        /* why there is no figure, or NULL */
    GArray *roles;            /* guint8 by metric id: what a metric is to the sharing */
    GPtrArray *tick_accounts; /* reused every tick */
    GArray *tick_used_s;
    uint32_t node_metric_id; /* node.energy_j; 0 until registered, UINT32_MAX if it cannot be */
};

struct vigild_energy_account {
    double cpu_s_last; /* NaN before its first sample */
    double cpu_s;
    double energy_j;
    uint32_t flags;  /* VIGIL_LOCAL_ENERGY_* */
    gboolean shared; /* had a share at least once */
    gboolean rebase; /* the next CPU sample is a new baseline, not used time */
    char *owner;     /* its job ("job:ID") or run ("run:KEY"); NULL: its own */
    /* The sources of the segments it had shares in, "+"-joined in the
     * order met; the number of the last such segment. */
    char sources[VIGILD_ENERGY_SOURCES_BYTES];
    uint64_t segment_last;
};

/* The pure rule, for the tests: `n` processes that used cpu_s[i] of the
 * node's busy_s seconds of CPU get share_j[i] of energy_j. A process's
 * share of CPU is capped at 1, and the shares at 1 in total (samples of a
 * process and of the node are not taken at the same instant). */
void vigild_energy_split(double energy_j, double busy_s, const double *cpu_s, size_t n,
                         double *share_j);

void vigild_energy_share_init(struct vigild_energy_share *e);
void vigild_energy_share_add_process(struct vigild_energy_share *e, uint64_t process_id);
/* Whose the process is: its scheduler job when it has one, else its run.
 * A tick in which every registered process has one owner gives that owner
 * the node's whole delta (an exclusive node), split among its processes by
 * CPU time; else each gets its share of the node's busy CPU time. */
void vigild_energy_share_set_owner(struct vigild_energy_share *e, uint64_t process_id,
                                   const char *job, const char *run_key);
void vigild_energy_share_remove_process(struct vigild_energy_share *e, uint64_t process_id);
/* A process taken back after a restart of vigild: its figures go on from
 * what the last vigild had, marked uncertain for the gap. */
void vigild_energy_share_restore(struct vigild_energy_share *e, uint64_t process_id, double cpu_s,
                                 double energy_j, uint32_t flags, gboolean shared);
const struct vigild_energy_account *vigild_energy_share_account(const struct vigild_energy_share *e,
                                                                uint64_t process_id);
/* Why there is no energy figure when no energy metric is sampled: set by
 * the daemon from the energy provider's state. */
void vigild_energy_share_set_unavailable(struct vigild_energy_share *e, const char *why);
void vigild_energy_share_add(void *share, const struct vigild_tick_samples *samples,
                             const vigil_metric_catalog *catalog);
/* node.energy_j at `t_ns`, as a node sample of its own: the daemon appends
 * it to the tick's samples before they are published, so the roll-ups,
 * the history, the warehouse and the ADPIs all see the one running sum.
 * FALSE before the node's first energy figure. */
gboolean vigild_energy_share_node_sample(struct vigild_energy_share *e,
                                         vigil_metric_catalog *catalog, uint64_t t_ns,
                                         struct vigil_sample *out);
void vigild_energy_share_clear(struct vigild_energy_share *e);

/* ---- energy_segments.c -------------------------------------------------- */

/* Appends `source` to the "+"-joined `sources` unless it is there (or
 * there is no room for it). */
void vigild_energy_sources_add(char *sources, size_t size, const char *source);
/* `sources` in `size` bytes: whole when it fits, else every name after the
 * first without its "energy/" ("energy/likwid+powercap+estimate"), else
 * the names that fit and "+…". */
void vigild_energy_sources_compact(const char *sources, char *out, size_t size);
/* A new segment from the tick at t_ns on: `source` with `zone_count`
 * zones of `zone_kind`. Keeps the last VIGILD_ENERGY_SEGMENTS_KEPT. */
void vigild_energy_segment_start(struct vigild_energy_share *e, const char *source, int zone_kind,
                                 guint zone_count, uint64_t t_ns);
/* The status's "energy" members: the running total and its segments. */
void vigild_energy_segments_json(const struct vigild_energy_share *e, JsonBuilder *b);
/* ---- region_energy.c ---------------------------------------------------- */

/* A statistics subscriber, after the energy sharing: each running
 * process's energy into its ring's header, for its code regions.
 * `user` is the struct vigild. */
void vigild_region_energy_publish(void *user, const struct vigild_tick_samples *samples,
                                  const vigil_metric_catalog *catalog);

/* ---- verdicts: what reasoning.c decides and capture.c acts on ---------- */

/* One issue of a cycle, with the ADPI that reported it. */
struct vigild_issue {
    const char *plugin; /* the ADPI's name; lives as long as the daemon's registry */
    struct vigil_issue issue;
};

/* One reasoner's decision in one cycle, as capture and status read it. */
struct vigild_verdict {
    enum vigil_level level;
    uint64_t process_id; /* 0 for the node and the system */
    struct vigil_reasoner_decision decision;
    const struct vigild_issue *issues;
    guint n_issues;
};

/* What a cycle's end hands capture. */
struct vigild_cycle_verdicts {
    uint64_t cycle;
    uint64_t start_ns, end_ns;
    const struct vigild_verdict *node;
    enum vigil_health system_state; /* from upstream; 0 when there is none */
    gboolean final;                 /* the daemon stops: every window ends, nothing stays held */
    /* The verdict of a process, or NULL when it has none this cycle. */
    const struct vigild_verdict *(*process)(void *user, uint64_t process_id);
    void *user;
};

/* ---- reasoning.c ---------------------------------------------------------- */

struct vigild_cycle_record; /* cycle_record.h */

/* One ADPI instance of one reasoner. */
struct vigild_adpi {
    char *name;
    const struct vigil_plugin *plugin;
    const struct vigil_adpi_ops *ops;
    void *instance;
    char *config_text;             /* its section's values, to tell a changed one on reload */
    struct vigild_adpi_cost *cost; /* the reasoning's, shared by its name and level */
};

/* A process's reasoner, or the node's: its ADPIs and its memory. */
struct vigild_reasoner {
    enum vigil_level level;
    uint64_t process_id; /* 0 for the node */
    GPtrArray *adpis;    /* struct vigild_adpi * */
    struct vigil_reasoner_memory memory;
    GArray *issues;                /* struct vigild_issue, of the cycle being decided */
    struct vigild_verdict verdict; /* the last cycle's */
    gboolean decided;              /* it has a verdict */
    gboolean ended;                /* its process ended: forgotten after its last cycle */
    gboolean decided_after_end;
};

struct vigild_reasoning {
    vigil_plugin_registry *registry;
    vigil_metric_catalog *catalog;
    vigil_config *config; /* the daemon's: new processes' ADPIs are made from it */
    /* The reasoner plugins, by level (process and node here). */
    const struct vigil_plugin *plugins[VIGIL_LEVEL_COUNT + 1];
    void *instances[VIGIL_LEVEL_COUNT + 1];
    char **adpi_names[VIGIL_LEVEL_COUNT + 1];
    struct vigild_reasoner *node;
    GHashTable *processes;          /* uint64 id → struct vigild_reasoner * */
    enum vigil_health system_state; /* from upstream; 0 while there is none */
    /* [daemon] record: what is fed and decided goes there; NULL: none */
    struct vigild_cycle_record *record;
    guint cycle_ticks, ticks_in_cycle;
    uint64_t cycle; /* the cycle being filled, from 1 */
    uint64_t cycle_start_ns;
    struct vigil_cycle_values node_values; /* for the node's load categories */
    uint32_t process_energy_id;            /* the metric it derives */
    const struct vigild_energy_share *energy;
    GArray *feed;          /* struct vigil_sample: a scope's samples of one tick */
    GArray *children;      /* enum vigil_health, reused every cycle */
    GPtrArray *adpi_costs; /* struct vigild_adpi_cost *: tick_costs.h */
};

void vigild_reasoning_init(struct vigild_reasoning *r, vigil_plugin_registry *registry,
                           vigil_metric_catalog *catalog, const struct vigild_energy_share *energy);
/* Checks that every ADPI and reasoner `config` names can be made from it,
 * without touching the running ones: a reload is refused otherwise. */
gboolean vigild_reasoning_check(struct vigild_reasoning *r, vigil_config *config, GError **error);
/* Takes `config` (checked): new ADPIs are made, removed ones destroyed,
 * changed ones reconfigured keeping what they learned, from the next
 * cycle on. */
void vigild_reasoning_configure(struct vigild_reasoning *r, vigil_config *config,
                                guint cycle_ticks);
void vigild_reasoning_add_process(struct vigild_reasoning *r, uint64_t process_id);
void vigild_reasoning_end_process(struct vigild_reasoning *r, uint64_t process_id);
/* A statmux subscriber: a tick's samples to the ADPIs. */
void vigild_reasoning_samples(void *reasoning, const struct vigild_tick_samples *samples,
                              const vigil_metric_catalog *catalog);
void vigild_reasoning_activity(struct vigild_reasoning *r, uint64_t process_id,
                               const struct vigil_activity *activity);
/* Counts a tick; TRUE when it ends a cycle. */
gboolean vigild_reasoning_tick(struct vigild_reasoning *r);
/* Ends the cycle at `end_ns`: every reasoner decides, processes first.
 * Without `judge` (a cycle cut short by a stop) the ADPIs are not asked,
 * since a fraction of a cycle would read as an anomaly: only held states
 * carry on. `out` is valid until the next call. */
void vigild_reasoning_close_cycle(struct vigild_reasoning *r, uint64_t end_ns, gboolean judge,
                                  struct vigild_cycle_verdicts *out);
/* A process's last verdict, or NULL. */
const struct vigild_verdict *vigild_reasoning_verdict(const struct vigild_reasoning *r,
                                                      uint64_t process_id);
void vigild_reasoning_clear(struct vigild_reasoning *r);

/* ---- capture.c ------------------------------------------------------------ */

enum vigild_capture_mode {
    VIGILD_CAPTURE_ANOMALIES, /* cycles around an abnormal one */
    VIGILD_CAPTURE_ALL,
    VIGILD_CAPTURE_NONE,
};

/* Counts of one process's activities, or the node's totals. */
struct vigild_capture_counts {
    uint64_t observed;  /* drained into the capture buffer */
    uint64_t forwarded; /* sent on in a window */
    uint64_t dropped;   /* dropped by policy: in no window */
    uint64_t lost;      /* not kept: the memory bound was hit */
    uint64_t held;      /* waiting for their cycle's decision */
    uint64_t cycles, abnormal_cycles, windows;
};

struct vigild_capture_sink;

struct vigild_capture {
    enum vigild_capture_mode mode;
    guint pre, post;
    uint64_t max_held;    /* activities held on the node at most */
    GHashTable *subjects; /* uint64 process id → struct capture_subject * (0: the node) */
    uint64_t held;        /* activities held now, every process */
    uint64_t next_window;
    struct vigild_capture_counts total;
    struct vigild_capture_sink *sink;
    uint64_t sink_rotations; /* the sink's rotations when names were last sent */
    uint64_t cycle;          /* the cycle being filled */
    uint64_t cycle_start_ns;
    GHashTable *statistics_sent;     /* cycles whose statistics the sink has */
    struct vigild_outbox *outbox;    /* NULL without an uplink */
    GHashTable *statistics_uplinked; /* cycles whose statistics the outbox has */
    /* The node's samples of a cycle, for a window's statistics. */
    void (*statistics)(void *user, uint64_t start_ns, uint64_t end_ns, GArray *out);
    void *statistics_user;
    /* Told a process's final counts when it is forgotten. */
    void (*finished)(void *user, uint64_t process_id, const struct vigild_capture_counts *counts);
    void *finished_user;
    const vigil_metric_catalog *catalog;
};

void vigild_capture_init(struct vigild_capture *c, const vigil_metric_catalog *catalog);
/* Mode, pre and post cycles, the memory bound; from the next cycle on. */
void vigild_capture_configure(struct vigild_capture *c, enum vigild_capture_mode mode, guint pre,
                              guint post, uint64_t max_held);
/* Where windows go; replaces the sink (NULL: none, windows are counted
 * but written nowhere), or only sets the bounds of the same file. FALSE
 * with error when the file cannot be opened. */
gboolean vigild_capture_open_sink(struct vigild_capture *c, const char *path, uint64_t max_bytes,
                                  guint keep_files, GError **error);
void vigild_capture_add_process(struct vigild_capture *c, uint64_t process_id, pid_t pid,
                                const char *program, int32_t mpi_rank);
void vigild_capture_activity(struct vigild_capture *c, uint64_t process_id,
                             const struct vigil_activity *activity);
void vigild_capture_name(struct vigild_capture *c, uint64_t process_id, uint32_t file_id,
                         const char *path);
void vigild_capture_set_rank(struct vigild_capture *c, uint64_t process_id, int32_t mpi_rank);
/* The process has ended: its last cycle is decided at the next cycle's
 * end, then it is forgotten. */
void vigild_capture_end_process(struct vigild_capture *c, uint64_t process_id);
/* A cycle's end: forwards or drops each process's cycle. */
void vigild_capture_close_cycle(struct vigild_capture *c, const struct vigild_cycle_verdicts *v);
/* The ring position of the oldest activity of the process still held for
 * a decision, and how many are held; FALSE when none is. */
gboolean vigild_capture_oldest_held(const struct vigild_capture *c, uint64_t process_id,
                                    uint64_t *seq, uint64_t *held);
/* A process taken back after a restart of vigild: its counts go on. */
void vigild_capture_restore(struct vigild_capture *c, uint64_t process_id,
                            const struct vigild_capture_counts *counts);
/* A process's counts (FALSE when it is not known), or the node's. */
gboolean vigild_capture_counts(const struct vigild_capture *c, uint64_t process_id,
                               struct vigild_capture_counts *out);
const char *vigild_capture_path(const struct vigild_capture *c); /* the sink's, or NULL */
void vigild_capture_clear(struct vigild_capture *c);
const char *vigild_capture_mode_name(enum vigild_capture_mode mode);

/* ---- capture_sink.c ------------------------------------------------------- */

/* A JSON-lines file: one object per line, flushed at every cycle's end so
 * that a reader sees whole cycles. docs/architecture.md lists the lines.
 * At most max_bytes a file: a line that would pass it goes to a new file,
 * the full one renamed PATH.1 (PATH.1 to PATH.2, ...), and files past
 * keep_files deleted, logged and counted. Files 0600, a new folder 0700. */
struct vigild_capture_sink_stats {
    uint64_t lines, bytes; /* written */
    uint64_t file_bytes;   /* in the current file */
    uint64_t rotations;
    uint64_t files_dropped; /* full files deleted to keep the bound */
    uint64_t lines_dropped; /* lines longer than max_bytes, never written */
    uint64_t bytes_dropped; /* of both */
    uint64_t errors;        /* failed writes */
};

struct vigild_capture_sink *vigild_capture_sink_open(const char *path, uint64_t max_bytes,
                                                     guint keep_files, GError **error);
void vigild_capture_sink_set_bounds(struct vigild_capture_sink *sink, uint64_t max_bytes,
                                    guint keep_files);
const char *vigild_capture_sink_path(const struct vigild_capture_sink *sink);
/* Writes one line made by the builder, starting a new file first when it
 * would pass max_bytes; a failed write is logged once and counted. */
void vigild_capture_sink_write(struct vigild_capture_sink *sink, JsonBuilder *builder);
/* The same, except that when the line needs a new file it starts one and
 * returns FALSE without writing: a line that refers to earlier lines of its
 * file (names sent before) must be built again for the new file. */
gboolean vigild_capture_sink_write_or_rotate(struct vigild_capture_sink *sink,
                                             JsonBuilder *builder);
void vigild_capture_sink_rotate(struct vigild_capture_sink *sink);
void vigild_capture_sink_flush(struct vigild_capture_sink *sink);
uint64_t vigild_capture_sink_errors(const struct vigild_capture_sink *sink);
void vigild_capture_sink_stats(const struct vigild_capture_sink *sink,
                               struct vigild_capture_sink_stats *out);
void vigild_capture_sink_close(struct vigild_capture_sink *sink);

/* ---- processes.c -------------------------------------------------------- */

enum vigild_process_state {
    VIGILD_PROCESS_RUNNING,
    VIGILD_PROCESS_ENDED,   /* exited; its ring drained to the end */
    VIGILD_PROCESS_DROPPED, /* given up on: a corrupt ring */
};

struct vigild_process {
    uint64_t id;
    pid_t pid;
    uid_t uid;
    enum vigild_process_state state;
    char *program, *cwd, *job;
    GPtrArray *argv; /* char * */
    gboolean argv_truncated;
    int32_t mpi_rank, mpi_size; /* -1 until known */
    uint64_t start_realtime_ns;
    uint64_t start_monotonic_ns;      /* as the process said (REGISTER) */
    uint64_t registered_ns, ended_ns; /* CLOCK_MONOTONIC */
    char *dropped_reason;

    struct vigil_ring *ring; /* NULL once ended or dropped */
    /* What finds it again after a restart (process_state.c): the ring's
     * memfd, and the process's start time in /proc (0: unknown). */
    dev_t ring_device;
    ino_t ring_inode;
    uint32_t ring_slots, tick_source;
    uint64_t proc_start_ticks;
    int pidfd; /* -1 when it could not be opened, or once ended */
    guint pidfd_watch;

    uint64_t activities, names; /* records drained */
    uint64_t corrupt, torn;     /* ring positions skipped */
    uint64_t dropped;           /* records its ring had no room for */
    uint64_t next_seq;          /* the position the next record should have */
    uint64_t seq_gaps;          /* positions missing between records */
    gboolean seq_started;
    /* Restarts of vigild it lived through, and ring positions one of them
     * lost: freed early (the ring was filling) and not yet stored. */
    uint64_t restarts, restart_lost;
    uint64_t released_early; /* positions freed before they were committed */
    /* Taken back after a restart: records below it were committed by the
     * last vigild, which died before it freed them; they are skipped. */
    uint64_t skip_below;
    uint64_t problems_logged;

    /* Its capture counts, copied when capture forgets it. */
    struct vigild_capture_counts capture;
    gboolean capture_final;
    /* Its energy account's figures, copied when it ends. */
    double cpu_s, energy_j;
    uint32_t energy_flags;
    gboolean energy_shared;
    char energy_sources[VIGILD_ENERGY_SOURCES_BYTES];

    /* From REGISTER: the run it belongs to (vigil/run_key.h). */
    char *run_key;
    /* From REPORT, sent at its exit: its report's JSON (NULL when none
     * came, or it had none) and its exit status (-1 unknown; else as
     * WEXITSTATUS gives it). */
    char *report_json;
    int32_t exit_code;
};

struct vigild_processes {
    GHashTable *by_id; /* uint64 → struct vigild_process * (running ones) */
    GQueue *ended;     /* struct vigild_process *, newest last */
    uint64_t next_id;
    /* Ticks → ns for rings in TSC ticks (recalibrated every tick against a
     * first anchor), and the identity for rings in monotonic ns. */
    struct vigil_tick_clock tsc_clock, ns_clock;
    struct vigil_tick_anchor tsc_first;
    uint64_t registered_total, ended_total, dropped_total, refused_total;
    uint64_t recovered_total;  /* taken back from a vigild before this one */
    uint64_t adopt_skip_below; /* for the next add: a process taken back */
    guint keep_ended;
    gboolean hold_records;
    /* Told about every process that starts or ends (sampler, energy). */
    void (*on_start)(void *user, const struct vigild_process *p);
    void (*on_end)(void *user, const struct vigild_process *p);
    /* Told every record drained from a ring. */
    void (*on_record)(void *user, const struct vigild_process *p,
                      const struct vigil_ring_record *record);
    void *user;
};

void vigild_processes_init(struct vigild_processes *ps, guint keep_ended);
/* Rings keep the slots they were read from until vigild_processes_commit
 * (set when vigild keeps state for a restart). */
void vigild_processes_hold_records(struct vigild_processes *ps, gboolean hold);
/* Everything of `p` before `position` is stored or decided: its ring may
 * free it, and a restarted vigild resumes there. */
void vigild_processes_commit(struct vigild_processes *ps, struct vigild_process *p,
                             uint64_t position);
/* A running process by its pid and the start it gave at REGISTER; NULL. */
struct vigild_process *vigild_processes_find(const struct vigild_processes *ps, pid_t pid,
                                             uint64_t start_monotonic_ns);
/* Takes a registration: attaches the ring from `ring_fd` (which it closes)
 * and watches the pid for its end. NULL with error set when the ring is
 * refused. */
struct vigild_process *vigild_processes_add(struct vigild_processes *ps,
                                            const struct vigil_local_process_info *info, pid_t pid,
                                            uid_t uid, int ring_fd, GError **error);
struct vigild_process *vigild_processes_get(const struct vigild_processes *ps, uint64_t id);
/* Drains every running process's ring (each tick). */
void vigild_processes_drain_all(struct vigild_processes *ps);
/* Drains one; a corrupt ring header drops the process. */
void vigild_processes_drain(struct vigild_processes *ps, struct vigild_process *p);
/* Ends every process whose pid has exited (a last drain, then it moves to
 * the ended list), without waiting for the main loop to notice. */
void vigild_processes_sweep(struct vigild_processes *ps);
/* The end of one process: the last drain, untracked, kept in the ended
 * list. */
void vigild_processes_end(struct vigild_processes *ps, struct vigild_process *p);
void vigild_processes_set_keep_ended(struct vigild_processes *ps, guint keep_ended);
/* A later anchor for the TSC clock (every tick): the rate gets better as
 * the anchors get further apart. */
void vigild_processes_calibrate(struct vigild_processes *ps);
guint vigild_processes_running(const struct vigild_processes *ps);
/* The running processes in registration order; g_ptr_array_free it (the
 * processes stay the table's). */
GPtrArray *vigild_processes_list(const struct vigild_processes *ps);
/* Drains every ring a last time, for a clean stop. */
void vigild_processes_clear(struct vigild_processes *ps);

const char *vigild_process_state_name(enum vigild_process_state state);

/* ---- process_state.c: the processes across a restart of vigild ------------- */

/* A process the last vigild served, found running with its ring. */
struct vigild_recovered {
    pid_t pid;
    uid_t uid;
    int ring_fd;
    uint32_t ring_slots, tick_source;
    uint64_t proc_start_ticks, start_monotonic_ns, start_realtime_ns, registered_ns;
    char *program, *cwd, *job, *run_key;
    char **argv;
    gboolean argv_truncated;
    int32_t mpi_rank, mpi_size;
    uint64_t committed;
    uint64_t activities, names, corrupt, torn, dropped, seq_gaps, restart_lost, restarts;
    struct vigild_capture_counts capture;
    double cpu_s, energy_j;
    uint32_t energy_flags;
    gboolean energy_shared;
    GArray *name_ids;      /* uint32_t */
    GPtrArray *name_paths; /* char *, bytes as drained */
};

/* The process's start time in /proc/PID/stat (clock ticks since boot); 0
 * when it is gone. */
uint64_t vigild_proc_start_ticks(pid_t pid);
/* Makes the folder, private to vigild's user. */
gboolean vigild_process_state_open_dir(const char *dir, GError **error);
/* Writes the registration of a new process. */
void vigild_process_state_register(const char *dir, const struct vigild_process *p);
/* Rewrites the process's counts as of `committed`, its capture
 * counts less the `held_activities` the next vigild would read again. */
void vigild_process_state_save(const char *dir, const struct vigild_process *p,
                               const struct vigild_capture_counts *capture, uint64_t committed,
                               uint64_t held_activities);
void vigild_process_state_add_name(const char *dir, const struct vigild_process *p,
                                   uint32_t file_id, const char *path, size_t length);
void vigild_process_state_remove(const char *dir, pid_t pid, uint64_t start_monotonic_ns);
/* Every process of the folder that still runs and whose ring can be
 * reached (struct vigild_recovered *); the others' files are removed. */
GPtrArray *vigild_process_state_recover(const char *dir);
void vigild_recovered_free(struct vigild_recovered *r);

/* ---- the daemon (daemon.c) ---------------------------------------------- */

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
    uint64_t started_ns;
    uint64_t reloads, reload_failures;
    uint64_t tick_cost_ns_last, tick_cost_ns_max, tick_cost_ns_total;
    struct vigild_tick_costs costs; /* the tick part by part */
    int signal_fd;
    guint signal_watch;
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

/* ---- signals.c ---------------------------------------------------------- */

/* Blocks SIGTERM, SIGINT and SIGHUP and takes them from a signalfd on the
 * main loop. */
gboolean vigild_signals_start(struct vigild *d, GError **error);
/* Handles the signals pending now: a reload, or the main loop told to
 * quit. */
void vigild_signals_take(struct vigild *d);
void vigild_signals_stop(struct vigild *d);

/* ---- server.c ----------------------------------------------------------- */

struct vigild_server;
struct vigild_jobs;

/* Listens on `path` (its folder made if missing); refuses to take over a
 * socket another daemon is serving. */
struct vigild_server *vigild_server_new(struct vigild *d, const char *path, GError **error);
/* Accepts what is waiting and reads every message already sent, so that a
 * status answer covers everything a client did before it asked. */
void vigild_server_catch_up(struct vigild_server *server);
guint vigild_server_clients(const struct vigild_server *server);
/* The limits of [daemon] again, after a reload. */
void vigild_server_configure(struct vigild_server *server, const struct vigild_settings *s);
struct vigild_client_limits *vigild_server_limits(struct vigild_server *server);
const char *vigild_server_path(const struct vigild_server *server);
void vigild_server_free(struct vigild_server *server); /* removes the socket file */
/* Takes a REPORT's JSON (json_bytes of `json_fd`, a sealed memfd) and exit
 * code into `p`, or refuses it with error saying why. */
gboolean vigild_process_take_report(struct vigild_process *p, int32_t exit_code, int json_fd,
                                    uint64_t json_bytes, GError **error);

/* ---- client_limits.c ------------------------------------------------------ */

enum vigild_refusal {
    VIGILD_REFUSED_FD_BUDGET,       /* the daemon's descriptors are at the budget */
    VIGILD_REFUSED_UID_CONNECTIONS, /* max_connections_per_uid */
    VIGILD_REFUSED_UID_PROCESSES,   /* max_processes_per_uid */
    VIGILD_REFUSED_RUN_KEY,         /* a run of another user's processes */
    VIGILD_REFUSED_KINDS,
};

/* The server's bookkeeping of who holds what; root (uid 0) is exempt from
 * the per-uid limits and the run-key rule, not from the descriptors. */
struct vigild_client_limits {
    guint max_connections_per_uid, max_processes_per_uid, unregistered_timeout_ms;
    uint64_t fd_limit;       /* RLIMIT_NOFILE when the server started */
    uint64_t fd_reserve;     /* leaves a budget of 128 at least */
    uint64_t fd_budget;      /* a user's connection past it is refused */
    uint64_t fd_budget_root; /* root's: half the reserve below the limit */
    uint64_t fds_counted;    /* /proc/self/fd at the last count, once a second at most */
    gint64 fds_counted_us;
    int64_t opened_since_count;     /* connections opened less closed since */
    GHashTable *connections_by_uid; /* uid → count, as pointers */
    guint connections;
    GQueue idle; /* unregistered connections, oldest deadline first */
    guint idle_timer;
    void (*close_idle)(void *user, uint64_t key);
    void *user;
    uint64_t refused[VIGILD_REFUSED_KINDS];
    uint64_t closed_idle;
    uint64_t pending[VIGILD_REFUSED_KINDS]; /* refused since the last log line */
    gint64 last_log_us;
    guint log_timer;
    char last_reason[256];
};

/* `close_idle` closes the server's connection `key` when its timeout
 * passes; it must call vigild_client_limits_idle_stop on its link. */
void vigild_client_limits_init(struct vigild_client_limits *l,
                               void (*close_idle)(void *user, uint64_t key), void *user);
/* The [daemon] keys, at start and at each reload. */
void vigild_client_limits_configure(struct vigild_client_limits *l,
                                    const struct vigild_settings *s);
/* A new connection of `uid`: NULL when it is admitted (and counted), else
 * why not (g_free it), counted as a refusal and logged once a period. */
char *vigild_client_limits_admit(struct vigild_client_limits *l, uid_t uid);
void vigild_client_limits_closed(struct vigild_client_limits *l, uid_t uid);
/* A REGISTER of `uid` into run `run_key`: NULL, or why it is refused (a
 * run another user's live processes belong to, or too many processes). */
char *vigild_client_limits_check_register(struct vigild_client_limits *l, uid_t uid,
                                          const char *run_key, size_t run_key_bytes,
                                          const struct vigild_processes *processes);
/* An unregistered connection's timeout: started at accept, restarted by
 * each message, stopped by its registration or close. */
GList *vigild_client_limits_idle_start(struct vigild_client_limits *l, uint64_t key);
void vigild_client_limits_idle_touch(struct vigild_client_limits *l, GList *link);
void vigild_client_limits_idle_stop(struct vigild_client_limits *l, GList *link);
/* Descriptors open, as counted at most a second ago plus connections since. */
uint64_t vigild_client_limits_fds_in_use(struct vigild_client_limits *l);
/* The "clients" member of the status. */
void vigild_client_limits_status(struct vigild_client_limits *l, JsonBuilder *b);
void vigild_client_limits_clear(struct vigild_client_limits *l);

/* ---- json_members.c -------------------------------------------------------- */

/* A member of the object being built; a NaN or infinite number and a NULL
 * text are written as null. */
void vigild_json_int(JsonBuilder *b, const char *name, int64_t value);
void vigild_json_number(JsonBuilder *b, const char *name, double value);
void vigild_json_string(JsonBuilder *b, const char *name, const char *value);
void vigild_json_bool(JsonBuilder *b, const char *name, gboolean value);

/* ---- status.c ----------------------------------------------------------- */

/* What `vigil status` shows, as a JSON text (g_free it). */
char *vigild_status_json(const struct vigild *d, int32_t finished_pid);
/* The summary a process asks for at exit. */
void vigild_status_summary(const struct vigild *d, const struct vigild_process *p,
                           struct vigil_local_summary *out);

/* ---- uplink.c: batches to vigil-txd ------------------------------------ */

/* The uplink runs its own thread, which owns the ZeroMQ sockets and the
 * spool; the functions below are called from the main thread only. A batch
 * is kept (in memory, then on disk) until vigil-txd acknowledges it, and
 * sent again until it does: vigil-txd ignores a (node, sequence) it has. */

struct vigil_wire_state;

/* [uplink], as read. Strings are owned; the CURVE keys are Z85 text, all
 * three NULL when CURVE is off. */
struct vigild_uplink_settings {
    char *endpoint; /* "" or NULL: no uplink */
    uint64_t node_id;
    char *hostname; /* [uplink] hostname, else the machine's; never empty */
    char *spool_dir;
    uint64_t spool_max_bytes;
    guint spool_after_ms;
    guint resend_after_ms;
    uint64_t memory_max_bytes;
    uint64_t in_flight_max_bytes;
    uint64_t refused_max_bytes;
    char *curve_server_key;
    char *curve_public_key;
    char *curve_secret_key;
};

/* Reads [uplink]: derives node_id when it is 0, reads the key pair from
 * curve_key_file. Every refusal names the key. */
gboolean vigild_uplink_settings_load(const vigil_config *config, struct vigild_uplink_settings *out,
                                     GError **error);
void vigild_uplink_settings_clear(struct vigild_uplink_settings *s);
/* /etc/machine-id's first 16 hex digits, else a hash of the host name; 63
 * bits (the warehouse keys nodes by a bigint), never 0. */
uint64_t vigild_uplink_derive_node_id(const char *machine_id_path, const char *hostname);

struct vigild_uplink_stats {
    uint64_t sent;   /* sends handed to ZeroMQ, resends included */
    uint64_t resent; /* of those, a batch sent before */
    uint64_t acked;
    uint64_t in_flight; /* sent and not acknowledged yet */
    uint64_t in_flight_bytes;
    uint64_t unacked;        /* every batch kept: in memory or in the spool */
    uint64_t memory_batches; /* kept in memory only, not spooled yet */
    uint64_t memory_bytes;
    uint64_t spooled_batches; /* in the spool, not acknowledged */
    uint64_t spool_bytes;     /* disk the spool's segments use */
    uint64_t replayed;        /* found in the spool at start, queued again */
    uint64_t dropped_full_batches, dropped_full_bytes; /* spool_max_bytes reached */
    /* The spool could not take them and memory_max_bytes was reached. */
    uint64_t dropped_memory_batches, dropped_memory_bytes;
    uint64_t refused_deleted;     /* kept refused batches deleted for refused_max_bytes */
    uint64_t refused;             /* by vigil-txd, or malformed here: kept in refused/ */
    uint64_t spool_corrupt;       /* damaged stretches of spool files, kept aside */
    uint64_t spool_corrupt_bytes; /* their bytes */
    uint64_t spool_errors;        /* spool files that could not be written or read */
    uint64_t unexpected;          /* messages from vigil-txd that were not understood */
    gboolean connected;           /* a handshake with vigil-txd succeeded and holds */
    char last_error[256];         /* "" when none */
};

/* Opens the spool (replaying what it holds) and starts the thread; NULL
 * with error set when the spool or the endpoint cannot be used. */
struct vigild_uplink *vigild_uplink_new(const struct vigild_uplink_settings *s, GError **error);
/* The next batch's sequence: never one handed out before, even by an
 * earlier vigild on the same spool_dir. */
uint64_t vigild_uplink_next_sequence(struct vigild_uplink *u);
/* Takes a reference to a finished BATCH message. With spool_after_ms = 0
 * it first writes it to the spool; TRUE when it is there, i.e. survives a
 * SIGKILL of vigild. */
gboolean vigild_uplink_send(struct vigild_uplink *u, uint64_t sequence, GBytes *batch);
/* The last system state vigil-txd sent; FALSE when none came yet. */
gboolean vigild_uplink_system_state(struct vigild_uplink *u, struct vigil_wire_state *out);
void vigild_uplink_stats(struct vigild_uplink *u, struct vigild_uplink_stats *out);
/* Spools every unacknowledged batch still in memory, then stops. */
void vigild_uplink_free(struct vigild_uplink *u);

/* ---- spool.c: unacknowledged batches on disk ----------------------------- */

/* Segment files SPOOL_DIR/<first sequence, 20 digits>.spool, each whole
 * BATCH messages one after another. Used by the uplink's thread only. */

struct vigild_spool_stats {
    uint64_t batches; /* kept, not acknowledged */
    uint64_t bytes;   /* the segments' size on disk */
    uint64_t segments;
    uint64_t dropped_batches, dropped_bytes; /* to stay under max_bytes */
    uint64_t corrupt, corrupt_bytes;         /* damaged stretches found at open */
    uint64_t errors;                         /* writes and reads that failed */
};

/* Locks the folder (made if missing) against a second vigild and reads
 * every segment back; damaged stretches go to NAME.damaged. */
struct vigild_spool *vigild_spool_open(const char *dir, uint64_t max_bytes, GError **error);
/* The sequences it holds, ascending (uint64_t). */
GArray *vigild_spool_sequences(const struct vigild_spool *spool);
/* Appends a batch; to stay under max_bytes it first drops the oldest
 * segments, appending their unacknowledged sequences to `dropped` (and the
 * batch's own when it alone is too big). FALSE with error set when the
 * batch could not be written: it is not in the spool then. */
gboolean vigild_spool_append(struct vigild_spool *spool, uint64_t sequence, GBytes *batch,
                             GArray *dropped, GError **error);
gboolean vigild_spool_has(const struct vigild_spool *spool, uint64_t sequence);
GBytes *vigild_spool_read(struct vigild_spool *spool, uint64_t sequence, GError **error);
/* Forgets a batch (acknowledged or refused); a segment goes when the last
 * of its batches does. */
void vigild_spool_remove(struct vigild_spool *spool, uint64_t sequence);
void vigild_spool_sync(struct vigild_spool *spool);
void vigild_spool_stats(const struct vigild_spool *spool, struct vigild_spool_stats *out);
void vigild_spool_close(struct vigild_spool *spool); /* syncs first */

/* The sequence numbers: SPOOL_DIR/sequence holds a number above every one
 * handed out, reserved ahead so that the file is written once in a while. */
struct vigild_sequence {
    char *path;
    uint64_t next;
    uint64_t reserved_to; /* the file says this: numbers below it may be in use */
    uint64_t write_errors;
};

/* `floor`: the lowest number allowed (above every spooled sequence). */
gboolean vigild_sequence_open(struct vigild_sequence *s, const char *dir, uint64_t floor,
                              GError **error);
uint64_t vigild_sequence_take(struct vigild_sequence *s);
void vigild_sequence_close(struct vigild_sequence *s); /* writes the exact next */

/* ---- outbox.c: each cycle's batch for vigil-txd ---------------------------- */

/* Built only when [uplink] endpoint is set. Through a cycle it gathers what
 * the warehouse keeps (the activities capture forwards with their files'
 * names, the forwarded cycles' statistics, closed windows and roll-ups);
 * at the cycle's end it adds the reasoners' states and issues and the
 * processes, and hands the uplink one BATCH, or several of about 16 MiB
 * each, every one self-contained: it describes every process, metric and
 * file its items name. */

struct vigild_outbox;
struct vigil_wire_window;

struct vigild_outbox_stats {
    uint64_t batches; /* handed to the uplink */
    uint64_t bytes;
    uint64_t items_skipped; /* items the wire cannot carry, left out (logged) */
    uint64_t names_missing; /* activities whose file's name never came: sent without a file */
};

/* The jobs whose notices go in each cycle's batch (jobs.h). */
void vigild_outbox_set_jobs(struct vigild_outbox *o, struct vigild_jobs *jobs);
/* `hostname`: the node's name in its batches and fresh run keys (NULL: the
 * machine's). */
struct vigild_outbox *vigild_outbox_new(struct vigild_uplink *uplink, uint64_t node_id,
                                        const char *hostname, const vigil_metric_catalog *catalog,
                                        const struct vigild_processes *processes,
                                        const struct vigild_rollup *rollup);
void vigild_outbox_free(struct vigild_outbox *o);
/* A process registered, or ended: it is described in this cycle's batch. */
void vigild_outbox_process_started(struct vigild_outbox *o, const struct vigild_process *p);
void vigild_outbox_process_ended(struct vigild_outbox *o, const struct vigild_process *p);
/* From capture: a forwarded cycle's activities (the array is taken) and
 * the process's file names (file id → path bytes, read now); a forwarded
 * cycle's node samples (copied); a window that closed. */
void vigild_outbox_activities(struct vigild_outbox *o, uint64_t process_id, GArray *activities,
                              GHashTable *names);
void vigild_outbox_samples(struct vigild_outbox *o, const GArray *samples);
void vigild_outbox_window(struct vigild_outbox *o, const struct vigil_wire_window *window);
/* One line of a window's reasons: the levels abnormal in cycle v->cycle. */
char *vigild_outbox_reason_line(const struct vigild_cycle_verdicts *v,
                                const struct vigild_verdict *process);
/* A statmux subscriber after the roll-ups: takes each window they close. */
void vigild_outbox_take_rollups(void *outbox, const struct vigild_tick_samples *samples,
                                const vigil_metric_catalog *catalog);
/* The cycle's end, after capture has acted on it: builds and sends. */
void vigild_outbox_close_cycle(struct vigild_outbox *o, const struct vigild_cycle_verdicts *v,
                               const struct vigild_reasoning *reasoning, uint32_t cycle_ms);
void vigild_outbox_stats(const struct vigild_outbox *o, struct vigild_outbox_stats *out);

#endif
