/* vigild — the statistics providers: loaded, started, read each tick
 * (sampler.c). */
#ifndef VIGILD_SAMPLER_H
#define VIGILD_SAMPLER_H

#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

#include "vigil/config.h"
#include "vigil/metric.h"
#include "vigil/plugin.h"
#include "vigil/provider.h"
#include "tick_samples.h"

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

#endif
