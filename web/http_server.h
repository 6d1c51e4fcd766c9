/* vigil-web — the HTTP server: libsoup accepting clients (their
 * connections bounded and counted by connections.c), and dispatching each
 * request: only GET and HEAD, static files on the
 * main loop, API requests to a pool of worker threads, one warehouse
 * connection each, the answer sent back from the main loop. */
#ifndef VIGIL_WEB_SERVER_H
#define VIGIL_WEB_SERVER_H

#include <glib.h>

#include "request.h"

struct web_server;

/* Binds the listening address and starts serving on the thread-default
 * main context. The address actually bound (port 0: the kernel's choice)
 * is in *url ("http://127.0.0.1:8470/"). */
struct web_server *web_server_start(const struct web_context *context, char **url, GError **error);
/* Stops accepting, waits for the requests being answered, frees it. */
void web_server_stop(struct web_server *server);

#endif
