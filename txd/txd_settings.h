/* vigil-txd — the [txd] section as a struct: each key fills the field of
 * its name (txd_keys.c); apart from txd.h so that the table needs no
 * libpq. */
#ifndef TXD_SETTINGS_H
#define TXD_SETTINGS_H

#include <stdint.h>
#include <glib.h>

#include "vigil/config.h"
#include "vigil/settings.h"

struct txd_settings {
    char *bind;
    guint cycle_ms;
    guint node_state_max_age_ms;
    char *curve_key_file;        /* "" for none */
    char *curve_authorized_keys; /* "" for none */
    uint64_t pending_max_bytes;
    guint receive_batches_per_node; /* the ROUTER's ZMQ_RCVHWM, per connection */
    guint retry_max_ms;
    guint levels_interval_s; /* building the roll-up levels (store_levels.c) */
};

/* Reads [txd]: its table's check (the CURVE key files), then that without
 * CURVE the endpoint is one only this machine can reach. */
gboolean txd_settings_load(const vigil_config *config, struct txd_settings *out, GError **error);
void txd_settings_clear(struct txd_settings *s);

#endif
