/* vigild — what the socket refused its clients: counted by kind, and
 * logged per user at most once a period (refusal_log.c). */
#ifndef VIGILD_REFUSAL_LOG_H
#define VIGILD_REFUSAL_LOG_H

#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

#include <json-glib/json-glib.h>

enum vigild_refusal {
    VIGILD_REFUSED_FD_BUDGET,       /* the daemon's descriptors are at the budget */
    VIGILD_REFUSED_UID_CONNECTIONS, /* max_connections_per_uid */
    VIGILD_REFUSED_UID_PROCESSES,   /* max_processes_per_uid */
    VIGILD_REFUSED_MAX_PROCESSES,   /* max_processes: the daemon serves all it may */
    VIGILD_REFUSED_MALFORMED,       /* a message, ring or report that does not decode */
    VIGILD_REFUSED_OUT_OF_TURN,     /* a message the connection's state does not allow */
    VIGILD_REFUSED_JOB_NOTICE,      /* a job notice its user may not give */
    VIGILD_REFUSED_STATUS_RATE,     /* status requests over status_requests_per_s */
    VIGILD_REFUSED_SPOOL_REQUEST,   /* a spool request its user may not make */
    VIGILD_REFUSED_KINDS,
};

/* The kind's name in the status and the log ("uid_connections"). */
const char *vigild_refusal_name(enum vigild_refusal kind);

struct vigild_refusal_log {
    gint64 interval_us; /* [daemon] refusal_log_interval_s */
    GHashTable *by_uid; /* uid (as a pointer) → its lines and held counts */
    uint64_t total[VIGILD_REFUSED_KINDS];
    guint timer; /* for the earliest held line */
    gint64 timer_due_us;
};

void vigild_refusal_log_init(struct vigild_refusal_log *log, guint interval_s);
/* A new period applies from each user's next line on. */
void vigild_refusal_log_set_interval(struct vigild_refusal_log *log, guint interval_s);
/* Counts a refusal of a client of `uid` and logs it, with `reason`, when
 * nothing was logged of that user for a period; else holds it for the
 * line at the period's end ("refused N more of uid U in S s (counts by
 * kind); the last: reason"). */
void vigild_refusal_log_note(struct vigild_refusal_log *log, uid_t uid, enum vigild_refusal kind,
                             const char *reason);
/* The same at `now_us` (g_get_monotonic_time's clock), for tests. */
void vigild_refusal_log_note_at(struct vigild_refusal_log *log, uid_t uid, enum vigild_refusal kind,
                                const char *reason, gint64 now_us);
/* Logs what is held of each user whose period has passed at `now_us` and
 * forgets users with nothing held and no line within a period; returns
 * when the next held line is due, or 0 when nothing is held. */
gint64 vigild_refusal_log_flush_at(struct vigild_refusal_log *log, gint64 now_us);
/* The "refused" object of the status: each kind's count. */
void vigild_refusal_log_status(const struct vigild_refusal_log *log, JsonBuilder *b);
/* Logs everything held, then frees. */
void vigild_refusal_log_clear(struct vigild_refusal_log *log);

#endif
