/* vigild — the /metrics endpoint: libsoup 3's server on vigild's main loop.
 * A scrape is answered inside one main-loop iteration, between ticks, from
 * the figures vigild already holds: it never waits on a provider, and a
 * tick never waits on it for longer than one rendering. */
#include <string.h>
#include <libsoup/soup.h>

#include "metrics.h"

struct vigild_metrics_http {
    SoupServer *soup;
    vigild_metrics_fill_fn fill;
    void *user;
    char *url;
};

static void on_metrics(SoupServer *server, SoupServerMessage *msg, const char *path,
                       GHashTable *query, gpointer data)
{
    (void)server;
    (void)query;
    struct vigild_metrics_http *h = data;
    if (strcmp(path, "/metrics") != 0) {
        soup_server_message_set_status(msg, SOUP_STATUS_NOT_FOUND, NULL);
        soup_server_message_set_response(msg, "text/plain; charset=utf-8", SOUP_MEMORY_STATIC,
                                         "vigild serves /metrics only\n", 28);
        return;
    }
    const char *method = soup_server_message_get_method(msg);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Allow",
                                     "GET, HEAD");
        soup_server_message_set_status(msg, SOUP_STATUS_METHOD_NOT_ALLOWED, NULL);
        return;
    }
    const char *accept =
        soup_message_headers_get_one(soup_server_message_get_request_headers(msg), "Accept");
    enum vigild_metrics_format format = vigild_metrics_format_for_accept(accept);
    struct vigild_metrics_snapshot snapshot;
    vigild_metrics_snapshot_init(&snapshot);
    h->fill(h->user, &snapshot);
    GString *text = g_string_sized_new(8192);
    vigild_metrics_render(&snapshot, format, text);
    vigild_metrics_snapshot_clear(&snapshot);
    soup_server_message_set_status(msg, SOUP_STATUS_OK, NULL);
    gsize length = text->len;
    soup_server_message_set_response(msg, vigild_metrics_content_type(format), SOUP_MEMORY_TAKE,
                                     g_string_free(text, FALSE), length);
}

struct vigild_metrics_http *vigild_metrics_http_new(const char *host, guint16 port,
                                                    vigild_metrics_fill_fn fill, void *user,
                                                    GError **error)
{
    struct vigild_metrics_http *h = g_new0(struct vigild_metrics_http, 1);
    h->fill = fill;
    h->user = user;
    h->soup = soup_server_new("server-header", "vigild", NULL);
    soup_server_add_handler(h->soup, NULL, on_metrics, h, NULL);
    GInetAddress *address = g_inet_address_new_from_string(host);
    GSocketAddress *wanted = g_inet_socket_address_new(address, port);
    GError *bind_error = NULL;
    gboolean ok = soup_server_listen(h->soup, wanted, 0, &bind_error);
    g_object_unref(wanted);
    g_object_unref(address);
    gboolean v6 = strchr(host, ':') != NULL;
    if (!ok) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "[metrics] listen = %s%s%s:%u: %s",
                    v6 ? "[" : "", host, v6 ? "]" : "", port, bind_error->message);
        g_error_free(bind_error);
        vigild_metrics_http_free(h);
        return NULL;
    }
    /* The port bound: the kernel's choice for port 0. */
    GSList *uris = soup_server_get_uris(h->soup);
    gint bound = uris != NULL ? g_uri_get_port(uris->data) : port;
    g_slist_free_full(uris, (GDestroyNotify)g_uri_unref);
    h->url = g_strdup_printf("http://%s%s%s:%d/metrics", v6 ? "[" : "", host, v6 ? "]" : "", bound);
    return h;
}

const char *vigild_metrics_http_url(const struct vigild_metrics_http *h)
{
    return h->url;
}

void vigild_metrics_http_free(struct vigild_metrics_http *h)
{
    if (h == NULL)
        return;
    soup_server_disconnect(h->soup);
    g_object_unref(h->soup);
    g_free(h->url);
    g_free(h);
}
