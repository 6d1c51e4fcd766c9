/* vigil — "HOST:PORT" listen addresses of the config ([web] listen,
 * [metrics] listen): one reading for every server vigil runs. */
#include <string.h>
#include <gio/gio.h>

#include "vigil/config.h"

gboolean vigil_config_parse_listen(const char *text, gboolean port_alone_is_loopback, char **host,
                                   guint16 *port)
{
    *host = NULL;
    *port = 0;
    char *h = NULL;
    const char *port_text = NULL;
    if (text[0] == '[') {
        const char *close = strchr(text, ']');
        if (close != NULL && close[1] == ':') {
            h = g_strndup(text + 1, (gsize)(close - text - 1));
            port_text = close + 2;
        }
    } else {
        const char *colon = strrchr(text, ':');
        if (colon == NULL) {
            if (port_alone_is_loopback) {
                h = g_strdup("127.0.0.1");
                port_text = text;
            }
        } else if (memchr(text, ':', (size_t)(colon - text)) == NULL) {
            /* One colon: not an IPv6 address without its brackets. */
            if (colon > text)
                h = g_strndup(text, (gsize)(colon - text));
            else if (port_alone_is_loopback)
                h = g_strdup("127.0.0.1");
            port_text = colon + 1;
        }
    }
    guint64 p = 0;
    gboolean ok = h != NULL && port_text != NULL && port_text[0] != '\0' &&
                  g_ascii_string_to_unsigned(port_text, 10, 0, 65535, &p, NULL);
    if (ok && strcmp(h, "localhost") == 0) {
        g_free(h);
        h = g_strdup("127.0.0.1");
    }
    /* Numeric only: what a server binds to is what the config says, not
     * what a resolver answers today. */
    GInetAddress *address = ok ? g_inet_address_new_from_string(h) : NULL;
    if (address == NULL) {
        g_free(h);
        return FALSE;
    }
    g_object_unref(address);
    *host = h;
    *port = (guint16)p;
    return TRUE;
}
