/* vigild — statistics subscriber: the node's energy shared among processes
 * (energy_share.c), and its segments (energy_segments.c). */
#ifndef VIGILD_ENERGY_SHARE_H
#define VIGILD_ENERGY_SHARE_H

#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#include <json-glib/json-glib.h>

#include "vigil/metric.h"
#include "tick_samples.h"

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

#endif
