/* vigil — the [metrics] section: vigild's /metrics endpoint for Prometheus,
 * and the check of its address that a key's type cannot say (vigild and
 * `vigil config check` refuse the same files). */
#include "vigild_settings.h"
#include "vigil/schema.h"

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct vigild_metrics_settings, listen), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "HOST:PORT vigild serves /metrics on, for Prometheus (OpenMetrics text); "
                    "[::1]:PORT for IPv6; :PORT or PORT alone: 127.0.0.1:PORT; the host is a "
                    "numeric address; port 0: any free port, logged when it starts; empty: no "
                    "endpoint. Read at the start only"},
    {VIGIL_SETTING(struct vigild_metrics_settings, max_jobs), .type = VIGIL_CONFIG_INT,
     .default_value = "64", .min = 0, .max = 100000,
     .description =
         "running jobs that get series of their own (job_id=\"ID\"), the oldest first; "
         "the others are folded into job_id=\"_other\" and counted in vigil_jobs_folded"},
};

gboolean vigil_metrics_parse_listen(const char *text, char **host, guint16 *port, GError **error)
{
    *host = NULL;
    *port = 0;
    if (text == NULL || text[0] == '\0')
        return TRUE;
    if (!vigil_config_parse_listen(text, TRUE, host, port)) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[metrics] listen = %s: expected HOST:PORT with a numeric address and a port "
                    "from 0 to 65535 (127.0.0.1:9470, [::1]:9470, :9470 or 9470 for loopback), "
                    "or empty for no endpoint",
                    text);
        return FALSE;
    }
    return TRUE;
}

static gboolean check_listen(const void *settings, const char *section, const vigil_config *config,
                             GError **error)
{
    (void)section;
    (void)config;
    const struct vigild_metrics_settings *s = settings;
    char *host = NULL;
    guint16 port = 0;
    gboolean ok = vigil_metrics_parse_listen(s->listen, &host, &port, error);
    g_free(host);
    return ok;
}

const struct vigil_settings_table vigild_metrics_keys =
    VIGIL_SETTINGS_TABLE("metrics", struct vigild_metrics_settings, keys, check_listen);
