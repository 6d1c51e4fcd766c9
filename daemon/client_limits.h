/* vigild — what one user may take of the socket: connections and processes
 * per uid, status requests per uid, the idle timeout, the descriptor
 * budget (client_limits.c). */
#ifndef VIGILD_CLIENT_LIMITS_H
#define VIGILD_CLIENT_LIMITS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

#include <json-glib/json-glib.h>

#include "refusal_log.h"

struct vigild_daemon_settings; /* vigild_settings.h */
struct vigild_processes;       /* processes.h */

/* The server's bookkeeping of who holds what; root (uid 0) is exempt from
 * the per-uid limits, not from the descriptors. */
struct vigild_client_limits {
    guint max_connections_per_uid, max_processes_per_uid, unregistered_timeout_ms;
    guint status_per_s, status_burst; /* a user's status requests */
    GHashTable *status_buckets;       /* uid → its tokens */
    uint64_t fd_limit;                /* RLIMIT_NOFILE when the server started */
    uint64_t fd_reserve;              /* leaves a budget of 128 at least */
    uint64_t fd_budget;               /* a user's connection past it is refused */
    uint64_t fd_budget_root;          /* root's: half the reserve below the limit */
    uint64_t fds_counted;             /* /proc/self/fd at the last count, once a second at most */
    gint64 fds_counted_us;
    int64_t opened_since_count;     /* connections opened less closed since */
    GHashTable *connections_by_uid; /* uid → count, as pointers */
    guint connections;
    GQueue idle; /* unregistered connections, oldest deadline first */
    guint idle_timer;
    void (*close_idle)(void *user, uint64_t key);
    void *user;
    uint64_t closed_idle;
    struct vigild_refusal_log refusals; /* the limits' and the server's */
};

/* `close_idle` closes the server's connection `key` when its timeout
 * passes; it must call vigild_client_limits_idle_stop on its link. */
void vigild_client_limits_init(struct vigild_client_limits *l,
                               void (*close_idle)(void *user, uint64_t key), void *user);
/* The [daemon] keys, at start and at each reload. */
void vigild_client_limits_configure(struct vigild_client_limits *l,
                                    const struct vigild_daemon_settings *s);
/* A new connection of `uid`: NULL when it is admitted (and counted), else
 * why not (g_free it), counted as a refusal and logged (refusal_log.c). */
char *vigild_client_limits_admit(struct vigild_client_limits *l, uid_t uid);
void vigild_client_limits_closed(struct vigild_client_limits *l, uid_t uid);
/* A REGISTER of `uid`: NULL, or why it is refused (too many processes).
 * Whose run it joins is processes.c's (vigild_processes_place): a run of
 * another user's is no reason to refuse a process, only to keep it apart. */
char *vigild_client_limits_check_register(struct vigild_client_limits *l, uid_t uid,
                                          const struct vigild_processes *processes);
/* A status request of `uid`: NULL when it may be answered, else why not
 * (g_free it), counted and logged. Root's are always answered. */
char *vigild_client_limits_check_status(struct vigild_client_limits *l, uid_t uid);
/* An unregistered connection's timeout: started at accept, stopped by its
 * registration or close, and restarted by nothing, status requests
 * included: a client that only asks would otherwise stay for ever. */
GList *vigild_client_limits_idle_start(struct vigild_client_limits *l, uint64_t key);
void vigild_client_limits_idle_stop(struct vigild_client_limits *l, GList *link);
/* Descriptors open, as counted at most a second ago plus connections since. */
uint64_t vigild_client_limits_fds_in_use(struct vigild_client_limits *l);
/* The "clients" member of the status. */
void vigild_client_limits_status(struct vigild_client_limits *l, JsonBuilder *b);
void vigild_client_limits_clear(struct vigild_client_limits *l);

#endif
