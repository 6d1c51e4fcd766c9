/* vigil-txd — its settings: [txd] and [warehouse]. */
#include <string.h>

#include "txd.h"
#include "vigil/curve.h"

/* Without CURVE anyone who can reach the socket could write into the
 * warehouse, so it must be one only this machine can reach. */
static gboolean endpoint_is_local(const char *endpoint)
{
    if (g_str_has_prefix(endpoint, "ipc://") || g_str_has_prefix(endpoint, "inproc://"))
        return TRUE;
    if (!g_str_has_prefix(endpoint, "tcp://"))
        return FALSE;
    const char *host = endpoint + strlen("tcp://");
    return g_str_has_prefix(host, "127.") || g_str_has_prefix(host, "localhost:") ||
           g_str_has_prefix(host, "[::1]:");
}

gboolean txd_settings_load(const vigil_config *config, struct txd_settings *out, GError **error)
{
    memset(out, 0, sizeof *out);
    out->bind = g_strdup(vigil_config_get_string(config, "txd", "bind"));
    out->cycle_ms = (guint)vigil_config_get_int(config, "txd", "cycle_ms");
    out->node_state_max_age_ms =
        (guint)vigil_config_get_int(config, "txd", "node_state_max_age_ms");
    out->curve_key_file = g_strdup(vigil_config_get_string(config, "txd", "curve_key_file"));
    out->curve_authorized_keys =
        g_strdup(vigil_config_get_string(config, "txd", "curve_authorized_keys"));
    out->pending_max_bytes = (uint64_t)vigil_config_get_int(config, "txd", "pending_max_bytes");
    out->retry_max_ms = (guint)vigil_config_get_int(config, "txd", "retry_max_ms");
    out->conninfo = g_strdup(vigil_config_get_string(config, "warehouse", "conninfo"));
    out->migrate = vigil_config_get_bool(config, "warehouse", "migrate");
    out->connect_timeout_s = (guint)vigil_config_get_int(config, "warehouse", "connect_timeout_s");
    out->statement_timeout_ms =
        (guint)vigil_config_get_int(config, "warehouse", "statement_timeout_ms");
    out->lock_timeout_ms = (guint)vigil_config_get_int(config, "warehouse", "lock_timeout_ms");
    out->partitions_ahead_days =
        (guint)vigil_config_get_int(config, "warehouse", "partitions_ahead_days");
    out->maintain_interval_s =
        (guint)vigil_config_get_int(config, "warehouse", "maintain_interval_s");

    /* The key files checked as `vigil config check` checks them. */
    if (!vigil_curve_check_settings(config, "txd", error))
        return FALSE;
    gboolean curve = out->curve_key_file[0] != '\0';
    if (!curve && !endpoint_is_local(out->bind)) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[txd] bind = %s: without CURVE keys ([txd] curve_key_file and "
                    "curve_authorized_keys; `vigil keygen` makes a pair) vigil-txd serves only "
                    "loopback (tcp://127.0.0.1:PORT) or ipc:// endpoints",
                    out->bind);
        return FALSE;
    }
    return TRUE;
}

void txd_settings_clear(struct txd_settings *s)
{
    g_free(s->bind);
    g_free(s->curve_key_file);
    g_free(s->curve_authorized_keys);
    g_free(s->conninfo);
    memset(s, 0, sizeof *s);
}
