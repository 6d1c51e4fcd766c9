/* vigil-web — a connection as vigil-web gives it to libsoup for a request:
 * the socket connection's own streams, with the bytes vigil-web already
 * read from it (the next request, read out of libsoup's buffer when the
 * connection was taken back) put back in front of its input. Closing it
 * leaves the socket open: vigil-web closes the socket connection when it
 * is done with it. */
#ifndef VIGIL_WEB_REPLAY_STREAM_H
#define VIGIL_WEB_REPLAY_STREAM_H

#include <gio/gio.h>

/* `connection`'s input must be pollable (a GSocketConnection's is);
 * `already_read` may be NULL or empty. */
GIOStream *web_replay_stream_new(GIOStream *connection, GBytes *already_read);

#endif
