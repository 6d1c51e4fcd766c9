/* vigild — the reasoner tree: ADPIs and a reasoner per process and for the
 * node, decided every cycle (reasoning.c); `vigil tune` links it too. */
#ifndef VIGILD_REASONING_H
#define VIGILD_REASONING_H

#include <stdint.h>
#include <glib.h>

#include "vigil/activity.h"
#include "vigil/adpi.h"
#include "vigil/config.h"
#include "vigil/health.h"
#include "vigil/metric.h"
#include "vigil/plugin.h"
#include "vigil/reasoner.h"
#include "tick_samples.h"
#include "verdicts.h"

struct vigild_adpi_cost;    /* tick_costs.h */
struct vigild_energy_share; /* energy_share.h */

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

#endif
