/* vigild — the [daemon] section, as read (daemon.c). */
#ifndef VIGILD_SETTINGS_H
#define VIGILD_SETTINGS_H

#include <stdint.h>
#include <glib.h>

#include "vigil/config.h"

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
    guint refusal_log_interval_s; /* refusal_log.c */
    guint status_requests_per_s;
    guint status_requests_burst;
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

#endif
