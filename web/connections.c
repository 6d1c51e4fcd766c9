/* vigil-web — its clients' connections.
 *
 * libsoup 3.2 bounds no connection: no deadline for a request's headers
 * (a client sending a byte now and then keeps its connection for ever),
 * no limit on clients, a body read whole before any handler can refuse
 * it, and between two requests of a kept-alive connection it reads with
 * no one to clean up after it: when that read ends in the client's EOF or
 * a timeout, libsoup drops its part without closing the socket
 * (CLOSE-WAIT for ever, the connection leaked). Its listener also leaks
 * every accepted GSocket (about 350 bytes a connection). So vigil-web
 * accepts connections itself, on a socket it listens on with a backlog of
 * max_clients (GLib's 10 drops bursts), many at each turn of the main
 * loop, and holds each in one of four phases; libsoup has it only
 * while a request is read or answered:
 *
 *   REQUEST  given to libsoup (soup_server_accept_iostream), which reads a
 *            request's headers; a deadline of client_timeout_s runs (a
 *            slowloris is closed when it fires, whatever it trickles).
 *   ANSWER   libsoup has the headers and answers; a request announcing a
 *            body is refused here instead (REFUSING), before a byte of it
 *            is read.
 *   IDLE     after an answer on a kept-alive connection, vigil-web takes
 *            it back from libsoup (soup_server_message_steal_connection,
 *            from "wrote-body", where libsoup allows it), reads out what
 *            libsoup's buffer and the socket already hold (a next request
 *            sent early or pipelined: libsoup cannot say) and watches it:
 *            readable (that, the next request, or the client's EOF), it is
 *            given to libsoup again with those bytes in front
 *            (replay_stream.c), and libsoup reads either with a request
 *            under way, so closes it cleanly on EOF; silent for
 *            client_timeout_s (the socket's timeout fires the watch),
 *            vigil-web closes it.
 *   REFUSING the 413 (or 405) answer written by vigil-web on the taken
 *            connection, its write side shut, what the client still sends
 *            read and dropped (at most REFUSED_BODY_DRAIN_MAX_BYTES, so
 *            that it can read the answer before a reset), then closed.
 *
 * Every socket also has client_timeout_s as its GSocket timeout, so a
 * client that stops reading its answer is dropped by libsoup's failed
 * write. The open count is these connections; past max_clients the
 * newcomer takes the place of the oldest IDLE connection, else of the
 * REQUEST one waiting longest for its headers (slow clients cannot starve
 * others: a legitimate client sends its headers at once), and only when
 * every connection is being answered (or came in this turn) is it closed
 * unanswered. libsoup
 * itself listens on nothing, so it never keeps a connection alive on its
 * own: after an answer it either closes the connection or vigil-web has
 * taken it back. */
#include <string.h>
#include <gio/gnetworking.h>

#include "answer.h"
#include "connections.h"
#include "replay_stream.h"
#include "request.h"

/* What a client may have sent beyond its answered request when vigil-web
 * takes the connection back (its next requests, pipelined), at most; more
 * and the connection is closed. */
enum { PIPELINED_BYTES_MAX = 128 * 1024 };
/* After refusing a body: what is read of it and dropped, at most. */
enum { REFUSED_BODY_DRAIN_MAX_BYTES = 256 * 1024, DRAIN_CHUNK_BYTES = 8192 };

/* Connections accepted in one turn of the main loop: at most this
 * fraction of max_clients. Each may take the place of the one waiting
 * longest for its headers (never one that came in the same turn), so with
 * max_clients waiting a newcomer has ACCEPT_TURNS_BEFORE_REPLACED turns
 * for libsoup to read its headers, however many a flood brings. */
enum { ACCEPT_TURNS_BEFORE_REPLACED = 4 };
/* Accepting fails (out of descriptors): how long until it is tried again. */
enum { ACCEPT_PAUSE_MS = 100 };
/* How often, at most, a full house or failures to accept are logged (a
 * flood would log a line for each connection). */
#define LOG_EVERY_US (60 * G_USEC_PER_SEC)

enum phase { PHASE_REQUEST, PHASE_ANSWER, PHASE_IDLE, PHASE_REFUSING };

struct connection {
    struct web_connections *owner;
    enum phase phase;
    GSocket *socket;
    GSocketAddress *local, *remote;
    GIOStream *root; /* the GSocketConnection accepted */
    GList link;      /* in owner->waiting (REQUEST) or owner->idle (IDLE) */
    GQueue *queue;   /* which, or NULL */

    /* REQUEST and ANSWER: libsoup's. */
    SoupServerMessage *msg; /* the request under way */
    gulong got_headers_handler, wrote_body_handler, disconnected_handler;
    gboolean stealing; /* libsoup says "disconnected" as it lets go */
    GSource *headers_deadline;
    guint64 waiting_since_turn; /* owner->turn when it began waiting for headers */

    /* IDLE and REFUSING: ours. */
    GIOStream *stream; /* IDLE: what libsoup is given next; REFUSING: libsoup's */
    GSource *idle_watch;
    GCancellable *cancellable;
    GBytes *refusal;
    guint8 *drain_buffer;
    gsize drained_bytes;
};

struct web_connections {
    SoupServer *soup;
    const struct web_settings *settings;
    GMainContext *main_context;
    GSocket *listener;
    GSource *accepting;    /* the listener readable */
    GSource *accept_pause; /* out of descriptors: accepting again after it */
    gulong request_started_handler;
    GHashTable *all; /* struct connection * */
    GQueue waiting;  /* REQUEST, oldest first */
    GQueue idle;     /* IDLE, oldest first */
    struct connection *handing_back;
    guint64 turn; /* accepting turns of the main loop */
    /* Connections that made room or were refused at max_clients, said at
     * most once a LOG_EVERY_US. */
    guint made_room, refused;
    gint64 full_said_us;
    gint64 accept_failed_said_us; /* likewise for failures to accept */
};

static void say_open(struct web_connections *owner)
{
    g_info("connections: %u open", g_hash_table_size(owner->all));
}

static void source_clear(GSource **source)
{
    if (*source == NULL)
        return;
    g_source_destroy(*source);
    g_source_unref(*source);
    *source = NULL;
}

static void queue_enter(struct connection *c, GQueue *queue)
{
    c->link.data = c;
    g_queue_push_tail_link(queue, &c->link);
    c->queue = queue;
}

static void queue_leave(struct connection *c)
{
    if (c->queue == NULL)
        return;
    g_queue_unlink(c->queue, &c->link);
    c->queue = NULL;
}

static void detach_msg(struct connection *c)
{
    if (c->msg == NULL)
        return;
    g_signal_handler_disconnect(c->msg, c->got_headers_handler);
    g_signal_handler_disconnect(c->msg, c->wrote_body_handler);
    g_signal_handler_disconnect(c->msg, c->disconnected_handler);
    g_clear_object(&c->msg);
}

static void connection_free(struct connection *c)
{
    struct web_connections *owner = c->owner;
    queue_leave(c);
    source_clear(&c->headers_deadline);
    source_clear(&c->idle_watch);
    detach_msg(c);
    if (c->stream != NULL) {
        g_io_stream_close(c->stream, NULL, NULL);
        g_object_unref(c->stream);
    }
    g_clear_object(&c->cancellable);
    if (c->refusal != NULL)
        g_bytes_unref(c->refusal);
    g_free(c->drain_buffer);
    /* What libsoup was given never closes the socket (replay_stream.h). */
    g_io_stream_close(c->root, NULL, NULL);
    g_clear_object(&c->root);
    g_clear_object(&c->socket);
    g_clear_object(&c->local);
    g_clear_object(&c->remote);
    g_hash_table_remove(owner->all, c);
    g_free(c);
    say_open(owner);
}

/* The connection back from libsoup, whatever it was doing (NULL when
 * libsoup had already let it go). Only where libsoup has a request under
 * way: it dereferences it. */
static GIOStream *take_back(struct connection *c)
{
    c->stealing = TRUE;
    GIOStream *stream = soup_server_message_steal_connection(c->msg);
    c->stealing = FALSE;
    detach_msg(c);
    return stream;
}

/* Closes a connection libsoup holds (REQUEST). */
static void drop_from_libsoup(struct connection *c)
{
    GIOStream *stream = take_back(c);
    if (stream != NULL) {
        g_io_stream_close(stream, NULL, NULL);
        g_object_unref(stream);
    }
    connection_free(c);
}

static gboolean on_headers_late(gpointer data)
{
    struct connection *c = data;
    g_debug("a request's headers not whole after client_timeout_s = %u s: closed",
            c->owner->settings->client_timeout_s);
    drop_from_libsoup(c);
    return G_SOURCE_REMOVE;
}

/* ---- refusing a body ---------------------------------------------------------------------- */

static gboolean has_body(SoupServerMessage *msg)
{
    SoupMessageHeaders *h = soup_server_message_get_request_headers(msg);
    switch (soup_message_headers_get_encoding(h)) {
    case SOUP_ENCODING_NONE:
        return FALSE;
    case SOUP_ENCODING_CONTENT_LENGTH:
        return soup_message_headers_get_content_length(h) > 0;
    default: /* chunked (libsoup answers an encoding it does not know itself) */
        return TRUE;
    }
}

/* The whole answer refusing `msg`'s body, as bytes for the wire: libsoup
 * would read the body before writing anything. */
static GBytes *refusal_bytes(SoupServerMessage *msg)
{
    const char *method = soup_server_message_get_method(msg);
    gboolean reads = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    SoupMessageHeaders *request = soup_server_message_get_request_headers(msg);
    char *size = soup_message_headers_get_encoding(request) == SOUP_ENCODING_CHUNKED
                     ? g_strdup("a chunked body")
                     : g_strdup_printf("a body of %" G_GINT64_FORMAT " bytes",
                                       soup_message_headers_get_content_length(request));
    GError *error =
        reads ? g_error_new(WEB_ERROR, WEB_ERROR_BODY,
                            "%s with %s: vigil-web reads no request body (parameters go in the "
                            "query string)",
                            method, size)
              : g_error_new(WEB_ERROR, WEB_ERROR_METHOD, "%s: vigil-web only reads (GET, HEAD)",
                            method);
    g_free(size);
    GBytes *body = web_answer_error_json(error, NULL);
    SoupMessageHeaders *h = soup_server_message_get_response_headers(msg);
    web_answer_common_headers(h);
    soup_message_headers_replace(h, "Connection", "close");
    soup_message_headers_replace(h, "Content-Type", "application/json; charset=utf-8");
    soup_message_headers_set_content_length(h, (goffset)g_bytes_get_size(body));
    if (!reads)
        soup_message_headers_replace(h, "Allow", "GET, HEAD");
    guint status = web_error_status(error);
    GString *text = g_string_new(NULL);
    g_string_append_printf(text, "HTTP/1.%c %u %s\r\n",
                           soup_server_message_get_http_version(msg) == SOUP_HTTP_1_0 ? '0' : '1',
                           status, soup_status_get_phrase(status));
    SoupMessageHeadersIter it;
    const char *name, *value;
    soup_message_headers_iter_init(&it, h);
    while (soup_message_headers_iter_next(&it, &name, &value))
        g_string_append_printf(text, "%s: %s\r\n", name, value);
    g_string_append(text, "\r\n");
    if (strcmp(method, "HEAD") != 0)
        g_string_append_len(text, g_bytes_get_data(body, NULL), (gssize)g_bytes_get_size(body));
    g_bytes_unref(body);
    g_error_free(error);
    return g_string_free_to_bytes(text);
}

static void drain_next(struct connection *c);

static void on_drained(GObject *in, GAsyncResult *result, gpointer data)
{
    struct connection *c = data;
    gssize n = g_input_stream_read_finish(G_INPUT_STREAM(in), result, NULL);
    /* EOF, an error, the socket's timeout, cancelled, or enough. */
    if (n <= 0 || (c->drained_bytes += (gsize)n) >= REFUSED_BODY_DRAIN_MAX_BYTES) {
        connection_free(c);
        return;
    }
    drain_next(c);
}

static void drain_next(struct connection *c)
{
    g_input_stream_read_async(g_io_stream_get_input_stream(c->stream), c->drain_buffer,
                              DRAIN_CHUNK_BYTES, G_PRIORITY_DEFAULT, c->cancellable, on_drained, c);
}

static void on_refusal_written(GObject *out, GAsyncResult *result, gpointer data)
{
    struct connection *c = data;
    if (!g_output_stream_write_all_finish(G_OUTPUT_STREAM(out), result, NULL, NULL)) {
        connection_free(c);
        return;
    }
    /* The answer ends here for the client, which may still be sending. */
    g_socket_shutdown(c->socket, FALSE, TRUE, NULL);
    c->drain_buffer = g_malloc(DRAIN_CHUNK_BYTES);
    drain_next(c);
}

static void refuse_body(struct connection *c)
{
    c->refusal = refusal_bytes(c->msg);
    c->stream = take_back(c);
    if (c->stream == NULL) {
        connection_free(c);
        return;
    }
    c->phase = PHASE_REFUSING;
    c->cancellable = g_cancellable_new();
    g_output_stream_write_all_async(
        g_io_stream_get_output_stream(c->stream), g_bytes_get_data(c->refusal, NULL),
        g_bytes_get_size(c->refusal), G_PRIORITY_DEFAULT, c->cancellable, on_refusal_written, c);
}

/* ---- between requests --------------------------------------------------------------------- */

/* libsoup's own rule (soup_server_message_is_keepalive, private): it
 * keeps exactly these connections for another request. */
static gboolean is_kept_alive(SoupServerMessage *msg)
{
    SoupMessageHeaders *request = soup_server_message_get_request_headers(msg);
    SoupMessageHeaders *response = soup_server_message_get_response_headers(msg);
    if (soup_message_headers_get_encoding(response) == SOUP_ENCODING_EOF)
        return FALSE;
    if (soup_server_message_get_http_version(msg) == SOUP_HTTP_1_0)
        return soup_message_headers_header_contains(response, "Connection", "Keep-Alive");
    return !soup_message_headers_header_contains(request, "Connection", "close") &&
           !soup_message_headers_header_contains(response, "Connection", "close");
}

/* Gives the connection to libsoup for a request (`stream`, taken: the
 * socket's with what was already read of it in front): libsoup says
 * "request-started" (on_request_started) before it returns, and may have
 * read, answered and closed it by then, so `c` may be gone after. */
static void hand_over(struct connection *c, GIOStream *stream)
{
    struct web_connections *owner = c->owner;
    owner->handing_back = c;
    GError *error = NULL;
    gboolean accepted =
        soup_server_accept_iostream(owner->soup, stream, c->local, c->remote, &error);
    g_object_unref(stream);
    if (owner->handing_back == c) {
        owner->handing_back = NULL;
        g_warning("libsoup did not take a connection (%s): closed",
                  accepted ? "no request started" : error->message);
        connection_free(c);
    }
    g_clear_error(&error);
}

static gboolean on_idle_ready(GObject *pollable, gpointer data)
{
    struct connection *c = data;
    queue_leave(c);
    source_clear(&c->idle_watch);
    if (!g_pollable_input_stream_is_readable(G_POLLABLE_INPUT_STREAM(pollable))) {
        /* Nothing to read: the socket's timeout fired the watch. */
        g_debug("a kept-alive connection idle for client_timeout_s = %u s: closed",
                c->owner->settings->client_timeout_s);
        connection_free(c);
        return G_SOURCE_REMOVE;
    }
    /* A request, or the client's EOF: libsoup reads either with a request
     * under way, and closes the connection after it. */
    hand_over(c, g_steal_pointer(&c->stream));
    return G_SOURCE_REMOVE;
}

/* What libsoup read of the connection beyond the request it answered
 * (its buffer) and what the socket holds now, read out without blocking:
 * the next request, whole or begun, for libsoup to read again. NULL when
 * the client closed (or reset) its side, or sent more than
 * PIPELINED_BYTES_MAX. */
static GBytes *read_ahead(GIOStream *stream, gboolean *closed)
{
    GInputStream *in = g_io_stream_get_input_stream(stream);
    GByteArray *ahead = g_byte_array_new();
    *closed = FALSE;
    if (!G_IS_POLLABLE_INPUT_STREAM(in) ||
        !g_pollable_input_stream_can_poll(G_POLLABLE_INPUT_STREAM(in))) {
        *closed = TRUE;
        return g_byte_array_free_to_bytes(ahead);
    }
    guint8 chunk[8192];
    while (ahead->len <= PIPELINED_BYTES_MAX) {
        GError *error = NULL;
        gssize n = g_pollable_input_stream_read_nonblocking(G_POLLABLE_INPUT_STREAM(in), chunk,
                                                            sizeof chunk, NULL, &error);
        if (n > 0) {
            g_byte_array_append(ahead, chunk, (guint)n);
            continue;
        }
        *closed = n == 0 || !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
        g_clear_error(&error);
        break;
    }
    if (ahead->len > PIPELINED_BYTES_MAX)
        *closed = TRUE;
    return g_byte_array_free_to_bytes(ahead);
}

static void go_idle(struct connection *c)
{
    GIOStream *stream = take_back(c);
    if (stream == NULL) {
        connection_free(c);
        return;
    }
    gboolean closed = FALSE;
    GBytes *ahead = read_ahead(stream, &closed);
    /* libsoup's wrapper goes; the socket stays. */
    g_object_unref(stream);
    if (closed && g_bytes_get_size(ahead) == 0) {
        g_bytes_unref(ahead);
        connection_free(c);
        return;
    }
    if (g_bytes_get_size(ahead) > PIPELINED_BYTES_MAX) {
        g_debug("a client sent more than %d bytes ahead of its answer: closed",
                PIPELINED_BYTES_MAX);
        g_bytes_unref(ahead);
        connection_free(c);
        return;
    }
    /* What was read ahead is replayed first: with some, or with the
     * client's EOF behind it, the watch is ready at once. */
    c->stream = web_replay_stream_new(c->root, ahead);
    g_bytes_unref(ahead);
    GInputStream *in = g_io_stream_get_input_stream(c->stream);
    c->phase = PHASE_IDLE;
    c->idle_watch = g_pollable_input_stream_create_source(G_POLLABLE_INPUT_STREAM(in), NULL);
    g_source_set_callback(c->idle_watch, G_SOURCE_FUNC(on_idle_ready), c, NULL);
    g_source_attach(c->idle_watch, c->owner->main_context);
    queue_enter(c, &c->owner->idle);
}

/* ---- libsoup's signals -------------------------------------------------------------------- */

static void on_got_headers(SoupServerMessage *msg, gpointer data)
{
    struct connection *c = data;
    queue_leave(c);
    source_clear(&c->headers_deadline);
    c->phase = PHASE_ANSWER;
    if (has_body(msg))
        refuse_body(c);
}

static void on_wrote_body(SoupServerMessage *msg, gpointer data)
{
    /* Otherwise libsoup closes it, and says "disconnected". */
    if (is_kept_alive(msg))
        go_idle(data);
}

static void on_disconnected(SoupServerMessage *msg, gpointer data)
{
    (void)msg;
    struct connection *c = data;
    if (!c->stealing)
        connection_free(c);
}

static void attach(struct connection *c, SoupServerMessage *msg)
{
    c->msg = g_object_ref(msg);
    c->phase = PHASE_REQUEST;
    c->got_headers_handler = g_signal_connect(msg, "got-headers", G_CALLBACK(on_got_headers), c);
    c->wrote_body_handler = g_signal_connect(msg, "wrote-body", G_CALLBACK(on_wrote_body), c);
    c->disconnected_handler = g_signal_connect(msg, "disconnected", G_CALLBACK(on_disconnected), c);
    c->headers_deadline = g_timeout_source_new(c->owner->settings->client_timeout_s * 1000u);
    g_source_set_callback(c->headers_deadline, on_headers_late, c, NULL);
    g_source_attach(c->headers_deadline, c->owner->main_context);
    c->waiting_since_turn = c->owner->turn;
    queue_enter(c, &c->owner->waiting);
}

/* Makes room for one more: the oldest idle connection, else the one
 * waiting longest for its headers, is closed. FALSE when every one is
 * being answered, or waiting since this turn. */
static gboolean make_room(struct web_connections *owner)
{
    GList *oldest = g_queue_peek_head_link(&owner->idle);
    if (oldest != NULL) {
        connection_free(oldest->data);
        return TRUE;
    }
    oldest = g_queue_peek_head_link(&owner->waiting);
    /* Not one that came in this turn: libsoup has not had a turn to read it. */
    if (oldest != NULL && ((struct connection *)oldest->data)->waiting_since_turn != owner->turn) {
        drop_from_libsoup(oldest->data);
        return TRUE;
    }
    return FALSE;
}

/* libsoup emits it as it takes a connection (hand_over), before reading. */
static void on_request_started(SoupServer *soup, SoupServerMessage *msg, gpointer data)
{
    (void)soup;
    struct web_connections *owner = data;
    if (owner->handing_back != NULL)
        attach(g_steal_pointer(&owner->handing_back), msg);
}

static void accept_connection(struct web_connections *owner, GSocketConnection *connection)
{
    guint max = owner->settings->max_clients;
    if (g_hash_table_size(owner->all) >= max) {
        gboolean room = make_room(owner);
        if (room)
            owner->made_room++;
        else
            owner->refused++;
        gint64 now_us = g_get_monotonic_time();
        if (owner->full_said_us == 0 || now_us - owner->full_said_us >= LOG_EVERY_US) {
            g_message("connections: [web] max_clients = %u open: %u new ones took the place of the "
                      "oldest idle one or of the one waiting longest for its headers, %u were "
                      "closed unanswered (all being answered), since the last such line",
                      max, owner->made_room, owner->refused);
            owner->made_room = owner->refused = 0;
            owner->full_said_us = now_us;
        }
        if (!room) {
            /* Closed unanswered, cheaper than an answer nobody reads in a flood. */
            g_io_stream_close(G_IO_STREAM(connection), NULL, NULL);
            return;
        }
    }
    GSocket *socket = g_socket_connection_get_socket(connection);
    GSocketAddress *local = g_socket_connection_get_local_address(connection, NULL);
    GSocketAddress *remote = g_socket_connection_get_remote_address(connection, NULL);
    if (local == NULL || remote == NULL) {
        /* Gone before we could look. */
        g_io_stream_close(G_IO_STREAM(connection), NULL, NULL);
        g_clear_object(&local);
        g_clear_object(&remote);
        return;
    }
    struct connection *c = g_new0(struct connection, 1);
    c->owner = owner;
    c->root = G_IO_STREAM(g_object_ref(connection));
    c->socket = g_object_ref(socket);
    c->local = local;
    c->remote = remote;
    /* As libsoup's own listener does: answers go out as written. */
    g_socket_set_option(socket, IPPROTO_TCP, TCP_NODELAY, TRUE, NULL);
    /* A client that sends or reads nothing this long is dropped by the
     * failing read or write; the idle watch fires on it too. */
    g_socket_set_timeout(socket, owner->settings->client_timeout_s);
    g_hash_table_add(owner->all, c);
    say_open(owner);
    hand_over(c, web_replay_stream_new(c->root, NULL));
}

static void accept_start(struct web_connections *owner);

static gboolean on_accept_pause_over(gpointer data)
{
    struct web_connections *owner = data;
    source_clear(&owner->accept_pause);
    accept_start(owner);
    return G_SOURCE_REMOVE;
}

/* Many connections waiting at a turn, not one per turn of the main loop
 * (as GSocketService does): with hundreds of connections to serve, a turn
 * is long, and a legitimate client would wait behind a flood's backlog. */
static gboolean on_listener_ready(GSocket *listener, GIOCondition condition, gpointer data)
{
    (void)condition;
    struct web_connections *owner = data;
    owner->turn++;
    guint accepts_max = MAX(1u, owner->settings->max_clients / ACCEPT_TURNS_BEFORE_REPLACED);
    for (guint i = 0; i < accepts_max; i++) {
        GError *error = NULL;
        GSocket *socket = g_socket_accept(listener, NULL, &error);
        if (socket == NULL) {
            gboolean drained = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
            if (!drained && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED)) {
                /* Out of descriptors, most likely: the listener stays
                 * readable, so a pause rather than a busy loop. */
                gint64 now_us = g_get_monotonic_time();
                if (owner->accept_failed_said_us == 0 ||
                    now_us - owner->accept_failed_said_us >= LOG_EVERY_US) {
                    g_warning("connections: cannot accept (%s): trying again every %d ms",
                              error->message, ACCEPT_PAUSE_MS);
                    owner->accept_failed_said_us = now_us;
                }
                g_error_free(error);
                source_clear(&owner->accepting);
                owner->accept_pause = g_timeout_source_new(ACCEPT_PAUSE_MS);
                g_source_set_callback(owner->accept_pause, on_accept_pause_over, owner, NULL);
                g_source_attach(owner->accept_pause, owner->main_context);
                return G_SOURCE_REMOVE;
            }
            g_error_free(error);
            if (drained)
                break;
            continue;
        }
        GSocketConnection *connection = g_socket_connection_factory_create_connection(socket);
        g_object_unref(socket);
        accept_connection(owner, connection);
        g_object_unref(connection);
    }
    return G_SOURCE_CONTINUE;
}

static void accept_start(struct web_connections *owner)
{
    owner->accepting = g_socket_create_source(owner->listener, G_IO_IN, NULL);
    g_source_set_callback(owner->accepting, G_SOURCE_FUNC(on_listener_ready), owner, NULL);
    g_source_attach(owner->accepting, owner->main_context);
}

/* ---- the whole -------------------------------------------------------------------------- */

struct web_connections *web_connections_new(SoupServer *soup, const struct web_settings *settings)
{
    struct web_connections *owner = g_new0(struct web_connections, 1);
    owner->soup = soup;
    owner->settings = settings;
    owner->main_context = g_main_context_ref_thread_default();
    owner->all = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_queue_init(&owner->waiting);
    g_queue_init(&owner->idle);
    owner->request_started_handler =
        g_signal_connect(soup, "request-started", G_CALLBACK(on_request_started), owner);
    return owner;
}

gboolean web_connections_listen(struct web_connections *owner, guint16 *port, GError **error)
{
    const struct web_settings *s = owner->settings;
    GInetAddress *address = g_inet_address_new_from_string(s->listen_host);
    GSocketAddress *wanted = g_inet_socket_address_new(address, s->listen_port);
    g_object_unref(address);
    GSocket *socket = g_socket_new(g_socket_address_get_family(wanted), G_SOCKET_TYPE_STREAM,
                                   G_SOCKET_PROTOCOL_DEFAULT, error);
    gboolean ok = socket != NULL;
    /* [::]:PORT is IPv6 only, as with libsoup's listener. */
    if (ok && g_socket_address_get_family(wanted) == G_SOCKET_FAMILY_IPV6)
        g_socket_set_option(socket, IPPROTO_IPV6, IPV6_V6ONLY, TRUE, NULL);
    if (ok)
        g_socket_set_listen_backlog(socket, (gint)MIN(s->max_clients, (guint)G_MAXINT));
    ok = ok && g_socket_bind(socket, wanted, TRUE, error) && g_socket_listen(socket, error);
    GSocketAddress *bound = ok ? g_socket_get_local_address(socket, error) : NULL;
    ok = bound != NULL;
    if (ok) {
        *port = g_inet_socket_address_get_port(G_INET_SOCKET_ADDRESS(bound));
        g_socket_set_blocking(socket, FALSE);
        owner->listener = g_object_ref(socket);
        accept_start(owner);
    }
    g_clear_object(&bound);
    g_clear_object(&socket);
    g_object_unref(wanted);
    return ok;
}

void web_connections_close_own(struct web_connections *owner)
{
    source_clear(&owner->accepting);
    source_clear(&owner->accept_pause);
    if (owner->listener != NULL)
        g_socket_close(owner->listener, NULL);
    GList *all = g_hash_table_get_keys(owner->all);
    guint refusing = 0;
    for (GList *l = all; l != NULL; l = l->next) {
        struct connection *c = l->data;
        if (c->phase == PHASE_IDLE) {
            connection_free(c);
        } else if (c->phase == PHASE_REFUSING) {
            g_cancellable_cancel(c->cancellable);
            refusing++;
        }
    }
    g_list_free(all);
    /* The cancelled writes and reads end (and free theirs) on the loop. */
    while (refusing > 0) {
        g_main_context_iteration(owner->main_context, TRUE);
        refusing = 0;
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, owner->all);
        while (g_hash_table_iter_next(&it, &key, NULL))
            refusing += ((struct connection *)key)->phase == PHASE_REFUSING;
    }
}

void web_connections_free(struct web_connections *owner)
{
    if (owner == NULL)
        return;
    g_signal_handler_disconnect(owner->soup, owner->request_started_handler);
    /* What libsoup still held after soup_server_disconnect (nothing, as it
     * says "disconnected" for each). */
    GList *all = g_hash_table_get_keys(owner->all);
    for (GList *l = all; l != NULL; l = l->next)
        connection_free(l->data);
    g_list_free(all);
    g_hash_table_unref(owner->all);
    source_clear(&owner->accepting);
    source_clear(&owner->accept_pause);
    g_clear_object(&owner->listener);
    g_main_context_unref(owner->main_context);
    g_free(owner);
}
