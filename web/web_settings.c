/* vigil-web — its settings. */
#include <string.h>

#include "web_settings.h"
#include "vigil/schema.h"
#include "vigil/warehouse_settings.h"

/* An empty key takes another value: a copy of `instead`. */
static void replace_empty(char **value, const char *instead)
{
    if ((*value)[0] != '\0')
        return;
    g_free(*value);
    *value = g_strdup(instead);
}

gboolean web_settings_load(const vigil_config *config, const char *default_static_dir,
                           const char *default_vendor_dir, struct web_settings *out, GError **error)
{
    struct vigil_warehouse_settings warehouse;
    if (!vigil_settings_load(config, &web_keys, out, error))
        return FALSE;
    if (!vigil_settings_load(config, &vigil_warehouse_keys, &warehouse, error)) {
        web_settings_clear(out);
        return FALSE;
    }
    web_parse_listen(out->listen, &out->listen_host, &out->listen_port, NULL); /* checked */
    replace_empty(&out->conninfo, warehouse.conninfo);
    out->connect_timeout_s = warehouse.connect_timeout_s;
    vigil_settings_clear(&vigil_warehouse_keys, &warehouse);
    replace_empty(&out->static_dir, default_static_dir);
    replace_empty(&out->vendor_dir, default_vendor_dir);
    out->trusted_proxy_addresses = g_ptr_array_new_with_free_func(g_object_unref);
    for (guint i = 0; out->trusted_proxies[i] != NULL; i++) /* each checked */
        g_ptr_array_add(out->trusted_proxy_addresses,
                        g_inet_address_new_from_string(out->trusted_proxies[i]));
    return TRUE;
}

void web_settings_clear(struct web_settings *s)
{
    g_free(s->listen_host);
    if (s->trusted_proxy_addresses != NULL)
        g_ptr_array_unref(s->trusted_proxy_addresses);
    vigil_settings_clear(&web_keys, s);
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
    for (guint i = 0; i < s->trusted_proxy_addresses->len && !trusted; i++) {
        GInetAddress *proxy = g_ptr_array_index(s->trusted_proxy_addresses, i);
        trusted = g_inet_address_equal(proxy, address) ||
                  (plain != NULL && g_inet_address_equal(proxy, plain));
    }
    if (plain != NULL)
        g_object_unref(plain);
    return trusted;
}
