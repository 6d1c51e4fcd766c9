/* vigil-txd — its [txd] settings, and what their table cannot check. */
#include <string.h>

#include "txd_settings.h"
#include "vigil/schema.h"

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
    if (!vigil_settings_load(config, &txd_keys, out, error))
        return FALSE;
    if (out->curve_key_file[0] == '\0' && !endpoint_is_local(out->bind)) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[txd] bind = %s: without CURVE keys ([txd] curve_key_file and "
                    "curve_authorized_keys; `vigil keygen` makes a pair) vigil-txd serves only "
                    "loopback (tcp://127.0.0.1:PORT) or ipc:// endpoints",
                    out->bind);
        txd_settings_clear(out);
        return FALSE;
    }
    return TRUE;
}

void txd_settings_clear(struct txd_settings *s)
{
    vigil_settings_clear(&txd_keys, s);
}
