/* vigild — the Unix socket: registration, summaries, status requests
 * (local_server.c). */
#ifndef VIGILD_SERVER_H
#define VIGILD_SERVER_H

#include <stdint.h>
#include <glib.h>

#include <sys/types.h>

#include "vigil/insight.h"
#include "vigil/local_protocol.h"

struct vigild_daemon_settings; /* vigild_settings.h */
struct vigild_process;         /* processes.h */
struct vigild_processes;       /* processes.h */
struct vigild_client_limits;   /* client_limits.h */

struct vigild_server;

/* What the server needs of the rest of the daemon, beyond the processes
 * table it registers clients into: called with `user`, on the main loop,
 * while a client's message is handled. */
struct vigild_server_ops {
    /* Handles the signals pending now: a client that sent SIGHUP before
     * asking for the status sees the reload done. */
    void (*take_signals)(void *user);
    /* What `vigil status` shows a client of `viewer_uid`, as a JSON text
     * (g_free it). */
    char *(*status_json)(void *user, uid_t viewer_uid, int32_t finished_pid);
    /* The summary process `p` asks for at its exit. */
    void (*summary)(void *user, const struct vigild_process *p, struct vigil_local_summary *out);
    /* The findings' thresholds sent after it (INSIGHT); NULL: none sent. */
    void (*insight)(void *user, struct vigil_insight_thresholds *out);
    /* A job notice from a client of `uid`: FALSE when it is refused, with
     * error saying why (none: the daemon takes no notices yet). */
    gboolean (*note_job)(void *user, const struct vigil_local_job_info *info, uid_t uid,
                         GError **error);
    /* Process `p` told its MPI rank (p->mpi_rank, p->mpi_size). */
    void (*rank_known)(void *user, const struct vigild_process *p);
    /* `vigil spool resend|replay` from a client of `uid`: fills the
     * answer's counts, or FALSE with error saying why not. */
    gboolean (*spool)(void *user, const struct vigil_local_spool *request, uid_t uid,
                      struct vigil_local_spool *answer, GError **error);
};

/* Listens on `path` (its folder made if missing); refuses to take over a
 * socket another daemon is serving. Registrations go into `processes`;
 * the limits are those of `s` (vigild_server_configure). */
struct vigild_server *vigild_server_new(const char *path, const struct vigild_daemon_settings *s,
                                        struct vigild_processes *processes,
                                        const struct vigild_server_ops *ops, void *user,
                                        GError **error);
/* Accepts what is waiting and reads every message already sent, so that a
 * status answer covers everything a client did before it asked. */
void vigild_server_catch_up(struct vigild_server *server);
guint vigild_server_clients(const struct vigild_server *server);
/* The limits of [daemon] (max_processes and client_limits.c's keys)
 * again, after a reload. */
void vigild_server_configure(struct vigild_server *server, const struct vigild_daemon_settings *s);
struct vigild_client_limits *vigild_server_limits(struct vigild_server *server);
const char *vigild_server_path(const struct vigild_server *server);
void vigild_server_free(struct vigild_server *server); /* removes the socket file */
/* Takes a REPORT's JSON (json_bytes of `json_fd`, a sealed memfd) and exit
 * code into `p`, or refuses it with error saying why. */
gboolean vigild_process_take_report(struct vigild_process *p, int32_t exit_code, int json_fd,
                                    uint64_t json_bytes, GError **error);

#endif
