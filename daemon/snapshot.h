/* vigild — what `vigil status` (status.c) and /metrics (metrics_snapshot.c)
 * read of the daemon, taken at one place (snapshot.c) when they are asked,
 * so that neither reads struct vigild: what it holds changes without them.
 *
 * Figures are copied. The parts that hold one entry per process, provider,
 * metric or reasoner are lent read-only: a snapshot is valid until the main
 * loop runs again (everything runs in its one thread), and is not kept. */
#ifndef VIGILD_SNAPSHOT_H
#define VIGILD_SNAPSHOT_H

#include <stdint.h>
#include <glib.h>

/* The headers of what it lends: its readers use them all. */
#include "vigil/metric.h"
#include "vigil/wire.h"
#include "capture.h"
#include "capture_sink.h"
#include "client_limits.h"
#include "energy_share.h"
#include "metrics.h"
#include "outbox.h"
#include "processes.h"
#include "reasoning.h"
#include "rollup.h"
#include "sampler.h"
#include "statmux.h"
#include "tick_costs.h"
#include "uplink.h"
#include "uplink_drops.h"

struct vigild; /* daemon.h */

struct vigild_snapshot {
    /* vigild itself */
    const char *config_path;
    const char *socket_path;
    const char *metrics_url; /* NULL: no endpoint */
    guint clients;
    struct vigild_client_limits *client_limits; /* not const: it counts descriptors when asked */
    uint64_t uptime_ns;
    uint64_t tick_ns;
    guint cycle_ticks;
    uint64_t ticks, missed_ticks;
    uint64_t tick_cost_ns_last, tick_cost_ns_max, tick_cost_ns_total;
    uint64_t reloads, reload_failures;
    const struct vigild_tick_costs *costs;
    const struct vigild_statmux *statmux;
    /* The parts, lent. */
    const vigil_metric_catalog *catalog;
    const GArray *latest; /* struct vigil_sample by metric id: the newest */
    const struct vigild_rollup *rollup;
    const struct vigild_sampler *sampler;
    const struct vigild_energy_share *energy;
    const struct vigild_reasoning *reasoning;
    const struct vigild_capture *capture;
    const struct vigild_processes *processes;
    /* The capture sink: its settings, its path and figures (NULL, zeros:
     * no sink). */
    const char *capture_sink_enabled; /* [capture] sink_enabled as set */
    uint64_t capture_sink_max_bytes;
    guint capture_sink_keep_files;
    const char *capture_sink_path;
    struct vigild_capture_sink_stats capture_sink;
    struct vigild_capture_counts capture_totals;
    /* The uplink to vigil-txd and its outbox: the rest is zeros and NULL
     * when `uplink` is FALSE. */
    gboolean uplink;
    const struct vigild_uplink_settings *uplink_settings;
    struct vigild_uplink_stats uplink_stats;
    struct vigild_outbox_stats outbox_stats;
    gboolean have_system_state;
    struct vigil_wire_state system_state; /* as vigil-txd last sent it */
    struct vigild_drops_totals drops;
    struct vigild_drops *uplink_drops; /* each process's */
    /* /metrics: NULL without an endpoint. */
    struct vigild_metrics *metrics;
};

void vigild_snapshot_take(const struct vigild *d, struct vigild_snapshot *out);

#endif
