/* vigil — the configuration keys of every built-in part.
 *
 * Each program declares all of them, not only its own, so that one
 * vigil.conf serves every program and `vigil config check` checks all of
 * it. A part adds its key table here when it is built. */
#ifndef VIGIL_SCHEMA_H
#define VIGIL_SCHEMA_H

#include <glib.h>

#include "vigil/config.h"

gboolean vigil_schema_declare(vigil_config *config, GError **error);

/* [preload]: read by `vigil run`, passed to the library as environment. */
extern const struct vigil_config_key vigil_preload_config_keys[];
extern const size_t vigil_preload_config_key_count;
/* What [preload]'s types cannot say: ring_slots is a power of two. Checked
 * by `vigil config check` and by `vigil run` (which warns and uses the
 * default), by this one function. */
gboolean vigil_preload_check_config(const vigil_config *config, GError **error);

/* [daemon]: vigild's own keys. */
extern const struct vigil_config_key vigil_daemon_config_keys[];
extern const size_t vigil_daemon_config_key_count;

/* [capture]: what vigild forwards of the activities it drains. */
extern const struct vigil_config_key vigil_capture_config_keys[];
extern const size_t vigil_capture_config_key_count;

/* [uplink]: vigild's link to vigil-txd and its disk spool. */
extern const struct vigil_config_key vigil_uplink_config_keys[];
extern const size_t vigil_uplink_config_key_count;

/* [warehouse]: how vigil-txd and `vigil db` reach PostgreSQL. */
extern const struct vigil_config_key vigil_warehouse_config_keys[];
extern const size_t vigil_warehouse_config_key_count;

/* [txd]: vigil-txd, the transaction server. */
extern const struct vigil_config_key vigil_txd_config_keys[];
extern const size_t vigil_txd_config_key_count;

/* [advise]: `vigil advise`, frequency advice from the Fluid model. */
extern const struct vigil_config_key vigil_advise_config_keys[];
extern const size_t vigil_advise_config_key_count;

/* [web]: vigil-web, the web UI and its JSON API. */
extern const struct vigil_config_key vigil_web_config_keys[];
extern const size_t vigil_web_config_key_count;
/* What [web]'s types cannot say: a numeric listen address, trusted proxies
 * that are addresses, auth = none only on loopback unless allowed,
 * remote-user with a header and proxies. The listen address is returned
 * when the pointers are not NULL (g_free the host). */
gboolean vigil_web_check_config(const vigil_config *config, char **listen_host,
                                guint16 *listen_port, GError **error);

/* [metrics]: vigild's /metrics endpoint for Prometheus. */
extern const struct vigil_config_key vigil_metrics_config_keys[];
extern const size_t vigil_metrics_config_key_count;
/* [metrics] listen: "" (no endpoint, host NULL), HOST:PORT, [V6]:PORT,
 * :PORT or PORT (127.0.0.1); the host a numeric address. g_free the host. */
gboolean vigil_metrics_parse_listen(const char *text, char **host, guint16 *port, GError **error);
gboolean vigil_metrics_check_config(const vigil_config *config, GError **error);

#endif
