/* vigil — the [web] section: vigil-web, the web UI and its JSON API, and
 * the checks of its values that a key's type cannot say (vigil-web and
 * `vigil config check` refuse the same files). */
#include <string.h>
#include <gio/gio.h>

#include "vigil/schema.h"

const struct vigil_config_key vigil_web_config_keys[] = {
    {.section = "web",
     .name = "listen",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "127.0.0.1:8470",
     .description = "HOST:PORT vigil-web serves HTTP on ([::1]:PORT for IPv6; port 0: any free "
                    "port, printed when it starts); with auth = none only a loopback address, "
                    "unless allow_none_on_network says otherwise"},
    {.section = "web",
     .name = "conninfo",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "the libpq connection string vigil-web reads the warehouse with; empty: "
                    "[warehouse] conninfo. A role that may only SELECT is enough, and best",
     .redact_password = true},
    {.section = "web",
     .name = "static_dir",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "the folder of the pages (web/static); empty: where they were installed"},
    {.section = "web",
     .name = "vendor_dir",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "the folder of uPlot's files (web/node_modules/uplot/dist, from `npm ci`); "
                    "empty: where they were installed"},
    {.section = "web",
     .name = "auth",
     .type = VIGIL_CONFIG_ENUM,
     .default_value = "none",
     .choices = "none|remote-user",
     .description = "none: everybody who reaches vigil-web sees everything; remote-user: the "
                    "site's reverse proxy logs users in and names them in user_header, users see "
                    "their own runs and admins everything"},
    {.section = "web",
     .name = "user_header",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "X-Remote-User",
     .description = "with auth = remote-user: the request header that names the user, believed "
                    "only from trusted_proxies"},
    {.section = "web",
     .name = "trusted_proxies",
     .type = VIGIL_CONFIG_LIST,
     .default_value = "127.0.0.1;::1",
     .description = "with auth = remote-user: the addresses of the reverse proxies whose "
                    "user_header is believed; a request from any other address is refused"},
    {.section = "web",
     .name = "admins",
     .type = VIGIL_CONFIG_LIST,
     .default_value = "",
     .description = "with auth = remote-user: the users who see every run"},
    {.section = "web",
     .name = "allow_none_on_network",
     .type = VIGIL_CONFIG_BOOL,
     .default_value = "false",
     .description = "whether auth = none may listen on an address other machines reach (then "
                    "everybody on the network sees every run)"},
    {.section = "web",
     .name = "db_connections",
     .type = VIGIL_CONFIG_INT,
     .default_value = "4",
     .min = 1,
     .max = 64,
     .description = "connections to the warehouse, and so requests answered at once; more "
                    "requests wait their turn"},
    {.section = "web",
     .name = "statement_timeout_ms",
     .type = VIGIL_CONFIG_INT,
     .default_value = "5000",
     .min = 10,
     .max = 600000,
     .description = "the longest one query of vigil-web may run (PostgreSQL's "
                    "statement_timeout); past it the request is answered 503"},
    {.section = "web",
     .name = "client_timeout_s",
     .type = VIGIL_CONFIG_INT,
     .default_value = "30",
     .min = 1,
     .max = 3600,
     .description = "a request's headers must arrive within this, a kept-alive connection idle "
                    "this long is closed, and so is a client that sends or reads nothing this long "
                    "while its answer is written"},
    {.section = "web",
     .name = "max_clients",
     .type = VIGIL_CONFIG_INT,
     .default_value = "256",
     .min = 1,
     .max = 65536,
     .description =
         "open client connections at most (and the listen backlog); past it a new one "
         "takes the place of the oldest idle one, else of the one waiting longest for "
         "its request's headers, and is closed at once only when all are being answered"},
    {.section = "web",
     .name = "page_size",
     .type = VIGIL_CONFIG_INT,
     .default_value = "50",
     .min = 1,
     .max = 100000,
     .description = "rows in a page of runs, anomalies or activities when the request does "
                    "not say (limit=)"},
    {.section = "web",
     .name = "page_size_max",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1000",
     .min = 1,
     .max = 100000,
     .description = "the largest limit= a request may ask for"},
    {.section = "web",
     .name = "points_max",
     .type = VIGIL_CONFIG_INT,
     .default_value = "5000",
     .min = 2,
     .max = 100000,
     .description = "the most points a time series may be asked for (points=)"},
    {.section = "web",
     .name = "per_node_lines_max",
     .type = VIGIL_CONFIG_INT,
     .default_value = "64",
     .min = 1,
     .max = 10000,
     .description = "up to this many nodes a run's series has one line per node; beyond, the "
                    "median over the nodes with a min/max band"},
};
const size_t vigil_web_config_key_count =
    sizeof vigil_web_config_keys / sizeof vigil_web_config_keys[0];

static gboolean parse_listen(const char *text, char **host, guint16 *port, GError **error)
{
    if (!vigil_config_parse_listen(text, FALSE, host, port)) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] listen = %s: expected ADDRESS:PORT with a numeric address "
                    "(127.0.0.1:8470, [::1]:8470, 0.0.0.0:8470)",
                    text);
        return FALSE;
    }
    return TRUE;
}

static gboolean address_is_loopback(const char *host)
{
    GInetAddress *address = g_inet_address_new_from_string(host);
    gboolean loopback = address != NULL && g_inet_address_get_is_loopback(address);
    if (address != NULL)
        g_object_unref(address);
    return loopback;
}

gboolean vigil_web_check_config(const vigil_config *config, char **listen_host,
                                guint16 *listen_port, GError **error)
{
    char *host = NULL;
    guint16 port = 0;
    const char *listen = vigil_config_get_string(config, "web", "listen");
    if (!parse_listen(listen, &host, &port, error))
        return FALSE;
    gboolean ok = FALSE;
    const char *const *proxies = vigil_config_get_list(config, "web", "trusted_proxies");
    guint n_proxies = 0;
    for (; proxies != NULL && proxies[n_proxies] != NULL; n_proxies++) {
        GInetAddress *address = g_inet_address_new_from_string(proxies[n_proxies]);
        if (address == NULL) {
            g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                        "[web] trusted_proxies: \"%s\" is not a numeric IPv4 or IPv6 address",
                        proxies[n_proxies]);
            goto out;
        }
        g_object_unref(address);
    }
    gint64 page_size = vigil_config_get_int(config, "web", "page_size");
    gint64 page_size_max = vigil_config_get_int(config, "web", "page_size_max");
    gboolean remote_user =
        strcmp(vigil_config_get_string(config, "web", "auth"), "remote-user") == 0;
    if (page_size > page_size_max) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] page_size = %" G_GINT64_FORMAT
                    " is larger than page_size_max = %" G_GINT64_FORMAT,
                    page_size, page_size_max);
    } else if (remote_user && (vigil_config_get_string(config, "web", "user_header")[0] == '\0' ||
                               n_proxies == 0)) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] auth = remote-user needs user_header and at least one address in "
                    "trusted_proxies (the reverse proxy that logs users in)");
    } else if (!remote_user && !address_is_loopback(host) &&
               !vigil_config_get_bool(config, "web", "allow_none_on_network")) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] listen = %s with auth = none would show every user's runs to "
                    "anyone on the network: listen on a loopback address behind the site's "
                    "reverse proxy (auth = remote-user), or set allow_none_on_network = true",
                    listen);
    } else {
        ok = TRUE;
    }
out:
    if (ok && listen_host != NULL) {
        *listen_host = host;
        host = NULL;
    }
    if (ok && listen_port != NULL)
        *listen_port = port;
    g_free(host);
    return ok;
}
