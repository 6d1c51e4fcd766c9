/* vigil-web — its clients' connections: how many are open, and the
 * bounds that keep any client from holding one: a request's headers must
 * arrive within client_timeout_s, a kept-alive connection is closed after
 * client_timeout_s idle or as soon as its client closes it, a request
 * body is refused before it is read, and past max_clients a new
 * connection takes the place of the oldest idle one, else of the one
 * waiting longest for its headers. */
#ifndef VIGIL_WEB_CONNECTIONS_H
#define VIGIL_WEB_CONNECTIONS_H

#include <libsoup/soup.h>

#include "web_settings.h"

struct web_connections;

/* Will accept connections for `soup` and hold them (logging "connections:
 * N open" at level info as each opens and closes), on the thread-default
 * main context, with `settings`' client_timeout_s and max_clients. */
struct web_connections *web_connections_new(SoupServer *soup, const struct web_settings *settings);
/* Listens on settings' listen address with a listen backlog of
 * max_clients, and gives each connection accepted to `soup`; the port
 * bound (the kernel's choice for port 0) in *port. */
gboolean web_connections_listen(struct web_connections *connections, guint16 *port, GError **error);
/* Closes the connections it holds itself (idle ones, refused bodies);
 * those libsoup holds are closed by soup_server_disconnect after. */
void web_connections_close_own(struct web_connections *connections);
/* Before `soup` is freed. */
void web_connections_free(struct web_connections *connections);

#endif
