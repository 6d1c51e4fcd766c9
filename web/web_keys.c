/* vigil-web — the [web] section: the web UI and its JSON API, and the
 * checks of its values that a key's type cannot say (vigil-web and `vigil
 * config check` refuse the same files). */
#include <gio/gio.h>

#include "web_settings.h"
#include "vigil/schema.h"

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct web_settings, listen), .type = VIGIL_CONFIG_STRING,
     .default_value = "127.0.0.1:8470",
     .description = "HOST:PORT vigil-web serves HTTP on ([::1]:PORT for IPv6; port 0: any free "
                    "port, printed when it starts); with auth = none only a loopback address, "
                    "unless allow_none_on_network says otherwise"},
    {VIGIL_SETTING(struct web_settings, conninfo), .type = VIGIL_CONFIG_STRING, .default_value = "",
     .description = "the libpq connection string vigil-web reads the warehouse with; empty: "
                    "[warehouse] conninfo. A role that may only SELECT is enough, and best",
     .redact_password = true},
    {VIGIL_SETTING(struct web_settings, static_dir), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "the folder of the pages (web/static); empty: where they were installed"},
    {VIGIL_SETTING(struct web_settings, vendor_dir), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "the folder of uPlot's files (web/node_modules/uplot/dist, from `npm ci`); "
                    "empty: where they were installed"},
    {VIGIL_SETTING(struct web_settings, auth), .type = VIGIL_CONFIG_ENUM, .default_value = "none",
     .choices = "none|remote-user",
     .description = "none: everybody who reaches vigil-web sees everything; remote-user: the "
                    "site's reverse proxy logs users in and names them in user_header, users see "
                    "their own runs and admins everything"},
    {VIGIL_SETTING(struct web_settings, user_header), .type = VIGIL_CONFIG_STRING,
     .default_value = "X-Remote-User",
     .description = "with auth = remote-user: the request header that names the user, believed "
                    "only from trusted_proxies"},
    {VIGIL_SETTING(struct web_settings, trusted_proxies), .type = VIGIL_CONFIG_LIST,
     .default_value = "127.0.0.1;::1",
     .description = "with auth = remote-user: the addresses of the reverse proxies whose "
                    "user_header is believed; a request from any other address is refused"},
    {VIGIL_SETTING(struct web_settings, admins), .type = VIGIL_CONFIG_LIST, .default_value = "",
     .description = "with auth = remote-user: the users who see every run"},
    {VIGIL_SETTING(struct web_settings, allow_none_on_network), .type = VIGIL_CONFIG_BOOL,
     .default_value = "false",
     .description = "whether auth = none may listen on an address other machines reach (then "
                    "everybody on the network sees every run)"},
    {VIGIL_SETTING(struct web_settings, db_connections), .type = VIGIL_CONFIG_INT,
     .default_value = "4", .min = 1, .max = 64,
     .description = "connections to the warehouse, and so requests answered at once; more "
                    "requests wait their turn"},
    {VIGIL_SETTING(struct web_settings, statement_timeout_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "5000", .min = 10, .max = 600000,
     .description = "the longest one query of vigil-web may run (PostgreSQL's "
                    "statement_timeout); past it the request is answered 503"},
    {VIGIL_SETTING(struct web_settings, client_timeout_s), .type = VIGIL_CONFIG_INT,
     .default_value = "30", .min = 1, .max = 3600,
     .description = "a request's headers must arrive within this, a kept-alive connection idle "
                    "this long is closed, and so is a client that sends or reads nothing this long "
                    "while its answer is written"},
    {VIGIL_SETTING(struct web_settings, max_clients), .type = VIGIL_CONFIG_INT,
     .default_value = "256", .min = 1, .max = 65536,
     .description =
         "open client connections at most (and the listen backlog); past it a new one "
         "takes the place of the oldest idle one, else of the one waiting longest for "
         "its request's headers, and is closed at once only when all are being answered"},
    {VIGIL_SETTING(struct web_settings, page_size), .type = VIGIL_CONFIG_INT, .default_value = "50",
     .min = 1, .max = 100000,
     .description = "rows in a page of runs, anomalies or activities when the request does "
                    "not say (limit=)"},
    {VIGIL_SETTING(struct web_settings, page_size_max), .type = VIGIL_CONFIG_INT,
     .default_value = "1000", .min = 1, .max = 100000,
     .description = "the largest limit= a request may ask for"},
    {VIGIL_SETTING(struct web_settings, points_max), .type = VIGIL_CONFIG_INT,
     .default_value = "5000", .min = 2, .max = 100000,
     .description = "the most points a time series may be asked for (points=)"},
    {VIGIL_SETTING(struct web_settings, per_node_lines_max), .type = VIGIL_CONFIG_INT,
     .default_value = "64", .min = 1, .max = 10000,
     .description = "up to this many nodes a run's series has one line per node; beyond, the "
                    "median over the nodes with a min/max band"},
};

gboolean web_parse_listen(const char *text, char **host, guint16 *port, GError **error)
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

static gboolean check_proxies(char *const *proxies, GError **error)
{
    for (guint i = 0; proxies[i] != NULL; i++) {
        GInetAddress *address = g_inet_address_new_from_string(proxies[i]);
        if (address == NULL) {
            g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                        "[web] trusted_proxies: \"%s\" is not a numeric IPv4 or IPv6 address",
                        proxies[i]);
            return FALSE;
        }
        g_object_unref(address);
    }
    return TRUE;
}

static gboolean check_web(const void *settings, const char *section, const vigil_config *config,
                          GError **error)
{
    (void)section;
    (void)config;
    const struct web_settings *s = settings;
    char *host = NULL;
    guint16 port = 0;
    if (!web_parse_listen(s->listen, &host, &port, error) ||
        !check_proxies(s->trusted_proxies, error))
        goto refused;
    if (s->page_size > s->page_size_max) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] page_size = %u is larger than page_size_max = %u", s->page_size,
                    s->page_size_max);
    } else if (s->auth == WEB_AUTH_REMOTE_USER &&
               (s->user_header[0] == '\0' || s->trusted_proxies[0] == NULL)) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] auth = remote-user needs user_header and at least one address in "
                    "trusted_proxies (the reverse proxy that logs users in)");
    } else if (s->auth == WEB_AUTH_NONE && !address_is_loopback(host) &&
               !s->allow_none_on_network) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] listen = %s with auth = none would show every user's runs to "
                    "anyone on the network: listen on a loopback address behind the site's "
                    "reverse proxy (auth = remote-user), or set allow_none_on_network = true",
                    s->listen);
    } else {
        g_free(host);
        return TRUE;
    }
refused:
    g_free(host);
    return FALSE;
}

const struct vigil_settings_table web_keys =
    VIGIL_SETTINGS_TABLE("web", struct web_settings, keys, check_web);
