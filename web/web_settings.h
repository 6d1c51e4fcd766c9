/* vigil-web — its settings: [web], each key filling the field of its name
 * (web_keys.c), and what vigil-web derives from them and from
 * [warehouse]. Read once at start; a change needs a restart. */
#ifndef VIGIL_WEB_SETTINGS_H
#define VIGIL_WEB_SETTINGS_H

#include <glib.h>
#include <gio/gio.h>

#include "vigil/config.h"
#include "vigil/settings.h"

/* In the order of [web] auth's choices. */
enum web_auth_mode {
    WEB_AUTH_NONE,
    WEB_AUTH_REMOTE_USER,
};

struct web_settings {
    /* [web] */
    char *listen;
    char *conninfo; /* [warehouse]'s when [web]'s is empty */
    char *static_dir;
    char *vendor_dir;
    enum web_auth_mode auth;
    char *user_header;
    char **trusted_proxies;
    char **admins;
    gboolean allow_none_on_network;
    guint db_connections;
    guint statement_timeout_ms;
    guint client_timeout_s;
    guint max_clients;
    guint page_size;
    guint page_size_max;
    guint points_max;
    guint per_node_lines_max;
    /* derived */
    char *listen_host; /* numeric address */
    guint16 listen_port;
    GPtrArray *trusted_proxy_addresses; /* GInetAddress */
    guint connect_timeout_s;            /* [warehouse]'s */
};

/* Reads and checks the settings; the error names the key and what is
 * wrong (an address that is not one, auth = none on the network…).
 * `default_static_dir` and `default_vendor_dir` apply when the keys are
 * empty. */
gboolean web_settings_load(const vigil_config *config, const char *default_static_dir,
                           const char *default_vendor_dir, struct web_settings *out,
                           GError **error);
void web_settings_clear(struct web_settings *s);

/* Whether `address` is one of trusted_proxies (an IPv4 address mapped into
 * IPv6, ::ffff:127.0.0.1, counts as the IPv4 address). */
gboolean web_settings_trusts(const struct web_settings *s, GInetAddress *address);

/* [web] listen: ADDRESS:PORT or [V6]:PORT with a numeric address; the error
 * names the key. g_free the host. */
gboolean web_parse_listen(const char *text, char **host, guint16 *port, GError **error);

#endif
