/* vigil-web — its settings. */
#include <string.h>

#include "web_settings.h"
#include "vigil/schema.h"

gboolean web_settings_load(const vigil_config *config, const char *default_static_dir,
                           const char *default_vendor_dir, struct web_settings *out, GError **error)
{
    memset(out, 0, sizeof *out);
    out->trusted_proxies = g_ptr_array_new_with_free_func(g_object_unref);
    if (!vigil_web_check_config(config, &out->listen_host, &out->listen_port, error))
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
        /* Each one checked by vigil_web_check_config. */
        g_ptr_array_add(out->trusted_proxies, g_inet_address_new_from_string(proxies[i]));
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
