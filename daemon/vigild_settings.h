/* vigild — its settings: [daemon], [capture] and [metrics], each a struct
 * filled by its key table (daemon_keys.c, capture_keys.c, metrics_keys.c:
 * each key fills the field of its name), and what vigild derives from them
 * (daemon.c). [uplink] is uplink.h's. */
#ifndef VIGILD_SETTINGS_H
#define VIGILD_SETTINGS_H

#include <stdint.h>
#include <glib.h>

#include "vigil/config.h"
#include "vigil/insight.h"
#include "vigil/settings.h"
#include "capture.h"

/* [daemon] */
struct vigild_daemon_settings {
    char *socket;
    guint tick_ms;
    char **providers; /* names */
    guint cycle_ms;   /* a reasoner cycle */
    guint rollup_ms;
    guint history_s;
    guint max_processes;
    char *state_dir; /* as written: "" beside the socket, "none" */
    guint keep_ended;
    /* the socket's clients (client_limits.c) */
    guint max_connections_per_uid;
    guint max_processes_per_uid;
    guint unregistered_timeout_ms;
    guint fd_reserve;
    guint status_requests_per_s;
    guint status_requests_burst;
    guint refusal_log_interval_s; /* refusal_log.c */
    char *record;                 /* cycle_record.c; "" for none */
    uint64_t record_max_bytes;
};

/* [capture] */
struct vigild_capture_settings {
    enum vigild_capture_mode mode;
    guint pre_cycles;
    guint post_cycles;
    uint64_t max_held;
    char *sink;
    char *sink_enabled; /* "auto", "yes" or "no" */
    uint64_t sink_max_bytes;
    guint sink_keep_files;
};

/* [metrics]: read by the endpoint (metrics_snapshot.c). */
struct vigild_metrics_settings {
    char *listen; /* as written; vigil_metrics_parse_listen reads it */
    guint max_jobs;
};
/* [metrics] listen: "" (no endpoint, host NULL), HOST:PORT, [V6]:PORT,
 * :PORT or PORT (127.0.0.1); the host a numeric address. g_free the host. */
gboolean vigil_metrics_parse_listen(const char *text, char **host, guint16 *port, GError **error);

/* vigild as configured. */
struct vigild_settings {
    struct vigild_daemon_settings daemon;
    struct vigild_capture_settings capture;
    struct vigil_insight_thresholds insight; /* [insight]: sent to each process at its exit */
    /* derived */
    uint64_t tick_ns;
    guint rollup_ticks;
    guint history_ticks;
    guint cycle_ticks;
    /* The sink is written: [capture] sink_enabled = yes, or auto on a node
     * without [uplink] endpoint. */
    gboolean sink_written;
    char *hostname; /* [uplink] hostname, else the machine's: the recording's */
};

/* Reads [daemon] and [capture] (and [uplink]'s endpoint and hostname); a
 * roll-up window or a cycle that is not a multiple of the tick, or a history
 * too short for the capture's window, is an error that names the keys. */
gboolean vigild_settings_read(struct vigild_settings *s, const vigil_config *config,
                              GError **error);
void vigild_settings_clear(struct vigild_settings *s);

#endif
