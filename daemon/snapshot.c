/* vigild — the snapshot `vigil status` and /metrics read (snapshot.h): the
 * one place that reads struct vigild for them. */
#include <string.h>

#include "vigil/clock.h"
#include "capture_json.h"
#include "daemon.h"
#include "metrics.h"
#include "local_server.h"
#include "snapshot.h"

static void take_uplink(const struct vigild *d, struct vigild_snapshot *out)
{
    if (d->uplink == NULL)
        return;
    out->uplink = TRUE;
    out->uplink_settings = d->uplink_settings;
    vigild_uplink_stats(d->uplink, &out->uplink_stats);
    vigild_outbox_stats(d->outbox, &out->outbox_stats);
    out->have_system_state = vigild_uplink_system_state(d->uplink, &out->system_state);
    out->uplink_drops = vigild_uplink_drops(d->uplink);
    vigild_drops_totals(out->uplink_drops, &out->drops);
}

void vigild_snapshot_take(const struct vigild *d, struct vigild_snapshot *out)
{
    memset(out, 0, sizeof *out);
    out->config_path = d->config_path;
    out->socket_path = vigild_server_path(d->server);
    out->metrics_url = vigild_metrics_url(d->metrics);
    out->clients = vigild_server_clients(d->server);
    out->client_limits = vigild_server_limits(d->server);
    out->uptime_ns = vigil_clock_monotonic_ns() - d->started_ns;
    out->tick_ns = d->settings.tick_ns;
    out->cycle_ticks = d->settings.cycle_ticks;
    out->ticks = d->ticker.ticks;
    out->missed_ticks = d->ticker.missed;
    out->tick_cost_ns_last = d->tick_cost_ns_last;
    out->tick_cost_ns_max = d->tick_cost_ns_max;
    out->tick_cost_ns_total = d->tick_cost_ns_total;
    out->reloads = d->reloads;
    out->reload_failures = d->reload_failures;
    out->costs = &d->costs;
    out->statmux = &d->statmux;
    out->catalog = d->catalog;
    out->latest = d->latest;
    out->rollup = &d->rollup;
    out->sampler = &d->sampler;
    out->energy = &d->energy;
    out->reasoning = &d->reasoning;
    out->capture = &d->capture;
    out->processes = &d->processes;
    out->capture_sink_enabled = d->settings.capture.sink_enabled;
    out->capture_sink_max_bytes = d->settings.capture.sink_max_bytes;
    out->capture_sink_keep_files = d->settings.capture.sink_keep_files;
    out->capture_sink_path = vigild_capture_path(&d->capture);
    if (vigild_capture_sink(&d->capture) != NULL)
        vigild_capture_sink_stats(vigild_capture_sink(&d->capture), &out->capture_sink);
    vigild_capture_counts(&d->capture, 0, &out->capture_totals);
    take_uplink(d, out);
    out->metrics = d->metrics;
}
