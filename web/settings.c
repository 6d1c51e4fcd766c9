/* vigil-web — its settings. */
#include <string.h>

#include "settings.h"

/* "HOST:PORT", "[V6]:PORT"; the host must be a numeric address, so that
 * what vigil-web binds to is what the config says, not what a resolver
 * answers today. "localhost" is taken as 127.0.0.1. */
static gboolean parse_listen(const char *text, char **host, guint16 *port, GError **error)
{
    const char *colon = NULL;
    char *h = NULL;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close != NULL && close[1] == ':') {
            h = g_strndup(text + 1, (gsize)(close - text - 1));
            colon = close + 1;
        }
    } else {
        colon = strrchr(text, ':');
        if (colon != NULL && memchr(text, ':', (size_t)(colon - text)) == NULL)
            h = g_strndup(text, (gsize)(colon - text));
    }
    guint64 p = 0;
    gboolean ok = h != NULL && colon != NULL && colon[1] != '\0' &&
                  g_ascii_string_to_unsigned(colon + 1, 10, 0, 65535, &p, NULL);
    if (ok && strcmp(h, "localhost") == 0) {
        g_free(h);
        h = g_strdup("127.0.0.1");
    }
    GInetAddress *address = ok ? g_inet_address_new_from_string(h) : NULL;
    if (address == NULL) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] listen = %s: expected ADDRESS:PORT with a numeric address "
                    "(127.0.0.1:8470, [::1]:8470, 0.0.0.0:8470)",
                    text);
        g_free(h);
        return FALSE;
    }
    g_object_unref(address);
    *host = h;
    *port = (guint16)p;
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

gboolean web_settings_load(const vigil_config *config, const char *default_static_dir,
                           const char *default_vendor_dir, struct web_settings *out, GError **error)
{
    memset(out, 0, sizeof *out);
    out->trusted_proxies = g_ptr_array_new_with_free_func(g_object_unref);
    if (!parse_listen(vigil_config_get_string(config, "web", "listen"), &out->listen_host,
                      &out->listen_port, error))
        return FALSE;
    const char *conninfo = vigil_config_get_string(config, "web", "conninfo");
    if (conninfo[0] == '\0')
        conninfo = vigil_config_get_string(config, "warehouse", "conninfo");
    out->conninfo = g_strdup(conninfo);
    out->connect_timeout_s = (guint)vigil_config_get_int(config, "warehouse", "connect_timeout_s");
    const char *dir = vigil_config_get_string(config, "web", "static_dir");
    out->static_dir = g_strdup(dir[0] != '\0' ? dir : default_static_dir);
    dir = vigil_config_get_string(config, "web", "vendor_dir");
    out->vendor_dir = g_strdup(dir[0] != '\0' ? dir : default_vendor_dir);
    out->auth = strcmp(vigil_config_get_string(config, "web", "auth"), "remote-user") == 0
                    ? WEB_AUTH_REMOTE_USER
                    : WEB_AUTH_NONE;
    out->user_header = g_strdup(vigil_config_get_string(config, "web", "user_header"));
    out->admins = g_strdupv((char **)vigil_config_get_list(config, "web", "admins"));
    out->db_connections = (guint)vigil_config_get_int(config, "web", "db_connections");
    out->statement_timeout_ms = (guint)vigil_config_get_int(config, "web", "statement_timeout_ms");
    out->client_timeout_s = (guint)vigil_config_get_int(config, "web", "client_timeout_s");
    out->max_clients = (guint)vigil_config_get_int(config, "web", "max_clients");
    out->page_size = (guint)vigil_config_get_int(config, "web", "page_size");
    out->page_size_max = (guint)vigil_config_get_int(config, "web", "page_size_max");
    out->points_max = (guint)vigil_config_get_int(config, "web", "points_max");
    out->per_node_lines_max = (guint)vigil_config_get_int(config, "web", "per_node_lines_max");

    const char *const *proxies = vigil_config_get_list(config, "web", "trusted_proxies");
    for (guint i = 0; proxies != NULL && proxies[i] != NULL; i++) {
        GInetAddress *address = g_inet_address_new_from_string(proxies[i]);
        if (address == NULL) {
            g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                        "[web] trusted_proxies: \"%s\" is not a numeric IPv4 or IPv6 address",
                        proxies[i]);
            return FALSE;
        }
        g_ptr_array_add(out->trusted_proxies, address);
    }
    if (out->page_size > out->page_size_max) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] page_size = %u is larger than page_size_max = %u", out->page_size,
                    out->page_size_max);
        return FALSE;
    }
    if (out->auth == WEB_AUTH_REMOTE_USER &&
        (out->user_header[0] == '\0' || out->trusted_proxies->len == 0)) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] auth = remote-user needs user_header and at least one address in "
                    "trusted_proxies (the reverse proxy that logs users in)");
        return FALSE;
    }
    if (out->auth == WEB_AUTH_NONE && !address_is_loopback(out->listen_host) &&
        !vigil_config_get_bool(config, "web", "allow_none_on_network")) {
        g_set_error(error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_INVALID_VALUE,
                    "[web] listen = %s with auth = none would show every user's runs to "
                    "anyone on the network: listen on a loopback address behind the site's "
                    "reverse proxy (auth = remote-user), or set allow_none_on_network = true",
                    vigil_config_get_string(config, "web", "listen"));
        return FALSE;
    }
    return TRUE;
}

void web_settings_clear(struct web_settings *s)
{
    g_free(s->listen_host);
    g_free(s->conninfo);
    g_free(s->static_dir);
    g_free(s->vendor_dir);
    g_free(s->user_header);
    if (s->trusted_proxies != NULL)
        g_ptr_array_unref(s->trusted_proxies);
    g_strfreev(s->admins);
    memset(s, 0, sizeof *s);
}

gboolean web_settings_trusts(const struct web_settings *s, GInetAddress *address)
{
    GInetAddress *plain = NULL;
    /* ::ffff:a.b.c.d is how a dual-stack socket shows an IPv4 client. */
    if (g_inet_address_get_family(address) == G_SOCKET_FAMILY_IPV6) {
        const guint8 *b = g_inet_address_to_bytes(address);
        static const guint8 mapped_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(b, mapped_prefix, sizeof mapped_prefix) == 0)
            plain = g_inet_address_new_from_bytes(b + 12, G_SOCKET_FAMILY_IPV4);
    }
    gboolean trusted = FALSE;
    for (guint i = 0; i < s->trusted_proxies->len && !trusted; i++) {
        GInetAddress *proxy = g_ptr_array_index(s->trusted_proxies, i);
        trusted = g_inet_address_equal(proxy, address) ||
                  (plain != NULL && g_inet_address_equal(proxy, plain));
    }
    if (plain != NULL)
        g_object_unref(plain);
    return trusted;
}
