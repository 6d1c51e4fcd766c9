/* vigild — the Unix socket: registration, summaries, status requests
 * (server.c). */
#ifndef VIGILD_SERVER_H
#define VIGILD_SERVER_H

#include <stdint.h>
#include <glib.h>

struct vigild;               /* daemon.h */
struct vigild_settings;      /* settings.h */
struct vigild_process;       /* processes.h */
struct vigild_client_limits; /* client_limits.h */

struct vigild_server;
struct vigild_jobs;

/* Listens on `path` (its folder made if missing); refuses to take over a
 * socket another daemon is serving. */
struct vigild_server *vigild_server_new(struct vigild *d, const char *path, GError **error);
/* Accepts what is waiting and reads every message already sent, so that a
 * status answer covers everything a client did before it asked. */
void vigild_server_catch_up(struct vigild_server *server);
guint vigild_server_clients(const struct vigild_server *server);
/* The limits of [daemon] again, after a reload. */
void vigild_server_configure(struct vigild_server *server, const struct vigild_settings *s);
struct vigild_client_limits *vigild_server_limits(struct vigild_server *server);
const char *vigild_server_path(const struct vigild_server *server);
void vigild_server_free(struct vigild_server *server); /* removes the socket file */
/* Takes a REPORT's JSON (json_bytes of `json_fd`, a sealed memfd) and exit
 * code into `p`, or refuses it with error saying why. */
gboolean vigild_process_take_report(struct vigild_process *p, int32_t exit_code, int json_fd,
                                    uint64_t json_bytes, GError **error);

#endif
