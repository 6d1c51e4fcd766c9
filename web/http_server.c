/* vigil-web — the HTTP server. */
#include <string.h>
#include <libsoup/soup.h>

#include "answer.h"
#include "api.h"
#include "auth.h"
#include "connections.h"
#include "db_pool.h"
#include "http_server.h"
#include "static_files.h"

/* Query strings longer than this are refused: no parameter needs it. */
enum { QUERY_MAX_BYTES = 8192 };

struct web_server {
    const struct web_context *context;
    SoupServer *soup;
    struct web_connections *connections;
    GThreadPool *workers;
    GMainContext *main_context;
};

/* One API request on its way: made on the main loop, answered by a
 * worker, sent from the main loop. */
struct job {
    struct web_server *server;
    SoupServerMessage *msg;
    gulong finished_handler;
    gint gone; /* the client went away meanwhile (atomic: set on the main loop) */
    struct web_request req;
    guint status;
    GBytes *body;
    char *content_type;
};

static void request_clear(struct web_request *req)
{
    g_free(req->path);
    g_strfreev(req->segments);
    g_clear_pointer(&req->query, g_hash_table_unref);
    g_hash_table_unref(req->consumed);
    web_viewer_clear(&req->viewer);
    g_clear_pointer(&req->body, json_node_unref);
    g_clear_pointer(&req->raw_body, g_bytes_unref);
    g_free(req->raw_content_type);
    g_free(req->raw_filename);
    g_free(req->error_parameter);
}

static void job_free(struct job *job)
{
    if (job->finished_handler != 0)
        g_signal_handler_disconnect(job->msg, job->finished_handler);
    g_object_unref(job->msg);
    request_clear(&job->req);
    if (job->body != NULL)
        g_bytes_unref(job->body);
    g_free(job->content_type);
    g_free(job);
}

static void on_finished(SoupServerMessage *msg, gpointer data)
{
    (void)msg;
    g_atomic_int_set(&((struct job *)data)->gone, 1);
}

/* On the main loop: send what the worker made. */
static gboolean job_deliver(gpointer data)
{
    struct job *job = data;
    if (!g_atomic_int_get(&job->gone)) {
        SoupServerMessage *msg = job->msg;
        soup_server_message_set_status(msg, job->status, NULL);
        soup_server_message_set_response(msg, job->content_type, SOUP_MEMORY_COPY,
                                         g_bytes_get_data(job->body, NULL),
                                         g_bytes_get_size(job->body));
        SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
        soup_message_headers_replace(h, "Cache-Control", "no-store");
        if (job->req.raw_filename != NULL) {
            char *disposition =
                g_strdup_printf("attachment; filename=\"%s\"", job->req.raw_filename);
            soup_message_headers_replace(h, "Content-Disposition", disposition);
            g_free(disposition);
        }
        soup_server_message_unpause(msg);
    }
    job_free(job);
    return G_SOURCE_REMOVE;
}

/* On a worker thread. */
static void job_run(gpointer data, gpointer user_data)
{
    struct job *job = data;
    (void)user_data;
    struct web_request *req = &job->req;
    GError *error = NULL;
    web_api_handler handler = web_api_route(req->segments);
    gboolean ok = FALSE;
    if (g_atomic_int_get(&job->gone)) {
        /* Its client left while it waited for a worker (a burst of clients
         * that gave up): no query for nobody. */
        g_main_context_invoke(job->server->main_context, job_deliver, job);
        return;
    }
    if (handler == NULL) {
        g_set_error(&error, WEB_ERROR, WEB_ERROR_NOT_FOUND, "no API at %s (see docs/web-api.md)",
                    req->path);
    } else {
        req->db = web_db_pool_take(job->server->context->pool, &error);
        if (req->db != NULL) {
            ok = handler(req, &error);
            web_db_pool_give(job->server->context->pool, req->db);
            req->db = NULL;
        }
    }
    if (ok && req->raw_body != NULL) {
        job->status = SOUP_STATUS_OK;
        job->body = g_bytes_ref(req->raw_body);
        job->content_type = g_strdup(req->raw_content_type);
    } else if (ok && req->body != NULL) {
        char *text = json_to_string(req->body, FALSE);
        gsize n = strlen(text);
        job->status = SOUP_STATUS_OK;
        job->body = g_bytes_new_take(text, n);
        job->content_type = g_strdup("application/json; charset=utf-8");
    } else {
        if (ok || error == NULL) /* a handler that answered nothing, or failed silently: a bug */
            g_set_error(&error, WEB_ERROR, WEB_ERROR_INTERNAL, "%s %s", req->path,
                        ok ? "answered nothing" : "failed without saying why");
        if (web_error_status(error) >= 500)
            g_message("%s: %s", req->path, error->message);
        job->status = web_error_status(error);
        job->body = web_answer_error_json(
            error, web_error_status(error) == 400 ? req->error_parameter : NULL);
        job->content_type = g_strdup("application/json; charset=utf-8");
        g_error_free(error);
    }
    g_main_context_invoke(job->server->main_context, job_deliver, job);
}

/* The query's parameters; NULL with error set for a malformed or
 * ambiguous query string (*parameter then names what the 400 is about). */
static GHashTable *parse_query(const char *query, char **parameter, GError **error)
{
    if (query == NULL || query[0] == '\0')
        return NULL;
    if (strlen(query) > QUERY_MAX_BYTES) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_BAD_PARAMETER, "query string: longer than %d bytes",
                    QUERY_MAX_BYTES);
        return NULL;
    }
    GError *parse_error = NULL;
    GHashTable *params = g_uri_parse_params(query, -1, "&", G_URI_PARAMS_NONE, &parse_error);
    /* g_uri_parse_params keeps the last of a repeated name; a repeated
     * parameter is ambiguous (which filter did the user mean?): refused. */
    if (params != NULL) {
        char **pairs = g_strsplit(query, "&", -1);
        guint n = 0;
        for (guint i = 0; pairs[i] != NULL; i++)
            n += pairs[i][0] != '\0'; /* "a=1&&b=2": empty pairs are skipped */
        if (n != g_hash_table_size(params)) {
            GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
            for (guint i = 0; pairs[i] != NULL; i++) {
                if (pairs[i][0] == '\0')
                    continue;
                char *eq = strchr(pairs[i], '=');
                char *raw =
                    eq != NULL ? g_strndup(pairs[i], (gsize)(eq - pairs[i])) : g_strdup(pairs[i]);
                for (char *p = raw; *p != '\0'; p++)
                    if (*p == '+')
                        *p = ' ';
                char *name = g_uri_unescape_string(raw, NULL);
                g_free(raw);
                if (name != NULL && !g_hash_table_add(seen, name)) {
                    g_set_error(error, WEB_ERROR, WEB_ERROR_BAD_PARAMETER,
                                "%s: given more than once", name);
                    *parameter = g_strdup(name);
                    break;
                } else if (name == NULL) {
                    g_set_error(error, WEB_ERROR, WEB_ERROR_BAD_PARAMETER,
                                "query string: a malformed parameter name");
                    break;
                }
            }
            g_hash_table_unref(seen);
            if (error != NULL && *error != NULL)
                g_clear_pointer(&params, g_hash_table_unref);
        }
        g_strfreev(pairs);
    }
    if (parse_error != NULL) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_BAD_PARAMETER, "query string: %s",
                    parse_error->message);
        g_error_free(parse_error);
    }
    return params;
}

static void serve_api(struct web_server *server, SoupServerMessage *msg, const char *path)
{
    GError *error = NULL;
    GUri *uri = soup_server_message_get_uri(msg);
    struct job *job = g_new0(struct job, 1);
    job->server = server;
    job->msg = g_object_ref(msg);
    struct web_request *req = &job->req;
    req->path = g_strdup(path);
    req->consumed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    req->settings = server->context->settings;
    req->context = server->context;
    req->viewer.uid = -1;

    /* Segments are compared decoded, and an id with an encoded '/' inside
     * is then simply not an id. */
    char **raw = g_strsplit(path + strlen("/api/v1/"), "/", -1);
    guint n = g_strv_length(raw);
    req->segments = g_new0(char *, n + 1);
    for (guint i = 0; i < n; i++) {
        req->segments[i] = g_uri_unescape_string(raw[i], NULL);
        if (req->segments[i] == NULL)
            req->segments[i] = g_strdup("");
    }
    g_strfreev(raw);
    /* A trailing slash is the same path. */
    if (n > 0 && req->segments[n - 1][0] == '\0') {
        g_free(req->segments[n - 1]);
        req->segments[n - 1] = NULL;
    }

    GSocketAddress *remote = soup_server_message_get_remote_address(msg);
    GInetAddress *remote_ip = remote != NULL && G_IS_INET_SOCKET_ADDRESS(remote)
                                  ? g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(remote))
                                  : NULL;
    /* Every copy of the header, joined with ", ": a proxy that appends
     * instead of replacing must not let a client pick the user (a joined
     * list is no user name, and is refused). */
    const char *user_header = soup_message_headers_get_list(
        soup_server_message_get_request_headers(msg), server->context->settings->user_header);
    if (!web_viewer_identify(server->context->settings, remote_ip, user_header, &req->viewer,
                             &error) ||
        (req->query = parse_query(g_uri_get_query(uri), &req->error_parameter, &error),
         error != NULL)) {
        web_answer_error(msg, error,
                         error->code != WEB_ERROR_BAD_PARAMETER ? NULL
                         : req->error_parameter != NULL         ? req->error_parameter
                                                                : "query");
        g_error_free(error);
        job_free(job);
        return;
    }
    soup_server_message_pause(msg);
    job->finished_handler = g_signal_connect(msg, "finished", G_CALLBACK(on_finished), job);
    g_thread_pool_push(server->workers, job, NULL);
}

static void on_request(SoupServer *soup, SoupServerMessage *msg, const char *path,
                       GHashTable *query, gpointer data)
{
    (void)soup;
    (void)query;
    struct web_server *server = data;
    web_answer_common_headers(soup_server_message_get_response_headers(msg));
    const char *method = soup_server_message_get_method(msg);
    gboolean api = g_str_has_prefix(path, "/api/");
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        GError *error = g_error_new(WEB_ERROR, WEB_ERROR_METHOD,
                                    "%s: vigil-web only reads (GET, HEAD)", method);
        web_answer_error(msg, error, NULL);
        soup_message_headers_replace(soup_server_message_get_response_headers(msg), "Allow",
                                     "GET, HEAD");
        g_error_free(error);
        return;
    }
    if (api && g_str_has_prefix(path, "/api/v1/")) {
        serve_api(server, msg, path);
    } else if (api) {
        GError *error = g_error_new(WEB_ERROR, WEB_ERROR_NOT_FOUND,
                                    "%s: this vigil-web serves the API under /api/v1/", path);
        web_answer_error(msg, error, NULL);
        g_error_free(error);
    } else {
        web_static_serve(server->context->settings, msg, path);
    }
}

struct web_server *web_server_start(const struct web_context *context, char **url, GError **error)
{
    const struct web_settings *s = context->settings;
    struct web_server *server = g_new0(struct web_server, 1);
    server->context = context;
    server->main_context = g_main_context_ref_thread_default();
    server->soup = soup_server_new("server-header", "vigil-web", NULL);
    soup_server_add_handler(server->soup, NULL, on_request, server, NULL);
    server->connections = web_connections_new(server->soup, s);
    server->workers = g_thread_pool_new(job_run, server, (gint)s->db_connections, FALSE, error);
    if (server->workers == NULL) {
        web_server_stop(server);
        return NULL;
    }
    GError *bind_error = NULL;
    guint16 port = 0;
    if (!web_connections_listen(server->connections, &port, &bind_error)) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_INTERNAL, "[web] listen = %s:%u: %s",
                    s->listen_host, s->listen_port, bind_error->message);
        g_error_free(bind_error);
        web_server_stop(server);
        return NULL;
    }
    gboolean v6 = strchr(s->listen_host, ':') != NULL;
    *url = g_strdup_printf("http://%s%s%s:%u/", v6 ? "[" : "", s->listen_host, v6 ? "]" : "", port);
    return server;
}

void web_server_stop(struct web_server *server)
{
    if (server == NULL)
        return;
    /* The workers finish what they have; their answers are then
     * delivered by the main context's last iterations. */
    if (server->workers != NULL)
        g_thread_pool_free(server->workers, FALSE, TRUE);
    while (g_main_context_iteration(server->main_context, FALSE))
        ;
    /* Its own connections first: libsoup knows nothing of them. */
    web_connections_close_own(server->connections);
    soup_server_disconnect(server->soup);
    web_connections_free(server->connections);
    g_object_unref(server->soup);
    g_main_context_unref(server->main_context);
    g_free(server);
}
