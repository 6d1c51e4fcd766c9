/* vigild — where a tick's time goes: every part of vigild_tick() timed
 * (wall-clock ns on CLOCK_MONOTONIC, which on one thread that is not
 * preempted is its CPU time), for `vigil status` and bench/daemon.
 *
 * The parts, in the order a tick runs them; the providers are timed one by
 * one in sampler.c, the statistics' subscribers in statmux.c and the ADPIs
 * in reasoning.c, and each is also a part here as a whole. A cycle's parts
 * (reasoners, capture, outbox, commit) run every cycle_ms, once in
 * cycle_ticks ticks: their mean per tick is their total over the ticks. */
#ifndef VIGILD_TICK_COSTS_H
#define VIGILD_TICK_COSTS_H

#include <stdint.h>
#include <glib.h>

#include <json-glib/json-glib.h>

/* One measured thing: how often, and its last, largest and summed cost. */
struct vigild_cost {
    uint64_t count;
    uint64_t last_ns, max_ns, total_ns;
};

static inline void vigild_cost_add(struct vigild_cost *c, uint64_t ns)
{
    c->count++;
    c->last_ns = ns;
    c->total_ns += ns;
    if (ns > c->max_ns)
        c->max_ns = ns;
}

/* {"count", "last", "mean", "max", "total"} in µs (mean per count). */
void vigild_cost_json(JsonBuilder *b, const char *name, const struct vigild_cost *c);

enum vigild_tick_part {
    VIGILD_PART_PROVIDERS,    /* every provider's read (sampler.c) */
    VIGILD_PART_ENERGY_SHARE, /* the node's energy shared among processes */
    VIGILD_PART_PUBLISH,      /* the samples to each subscriber (statmux.c) */
    VIGILD_PART_DRAIN,        /* the rings drained: activities to the ADPIs and capture */
    VIGILD_PART_REASONERS,    /* a cycle's close: each ADPI's verdict, each reasoner's rule */
    VIGILD_PART_CAPTURE,      /* a cycle's close: windows forwarded or dropped, the sink */
    VIGILD_PART_OUTBOX,       /* a cycle's close: the batch for vigil-txd */
    VIGILD_PART_COMMIT,       /* a cycle's close: the processes' state for a restart */
    VIGILD_PART_COUNT,
};

struct vigild_tick_costs {
    struct vigild_cost part[VIGILD_PART_COUNT];
};

/* Adds the time since `since_ns` to `part` and returns now, the start of
 * the next part: one clock read between two parts. */
uint64_t vigild_tick_costs_mark(struct vigild_tick_costs *costs, enum vigild_tick_part part,
                                uint64_t since_ns);

/* An ADPI's costs, summed over every instance of one name at one level
 * (each process reasoner has its own instances), for the daemon's life.
 * Activities come one at a time and an ADPI's work on one is some tens of
 * ns, as much as two clock reads: one in VIGILD_ACTIVITY_SAMPLE_EVERY is
 * timed and counts for that many (an estimate, said so in the status). */
#define VIGILD_ACTIVITY_SAMPLE_EVERY 16u

struct vigild_adpi_cost {
    unsigned level; /* enum vigil_level */
    char *name;
    struct vigild_cost samples, activities, cycle;
};

/* The entry of `name` at `level` in `costs` (struct vigild_adpi_cost *),
 * made at first use; it lives until the array is freed. */
struct vigild_adpi_cost *vigild_adpi_costs_for(GPtrArray *costs, unsigned level, const char *name);
void vigild_adpi_cost_free(struct vigild_adpi_cost *c);

struct vigild_statmux; /* statmux.h */

/* "tick_costs": {"parts": [{"name", "cost_us"}...] in the order above,
 * "subscribers": [...] (statmux.c), "adpis": [{"level", "name", "samples",
 * "activities", "cycle"}...] (`adpi_costs`, the reasoning's)}; the
 * providers' costs are in "providers". */
void vigild_tick_costs_status(JsonBuilder *b, const struct vigild_tick_costs *costs,
                              const struct vigild_statmux *statmux, const GPtrArray *adpi_costs);

#endif
