/* vigild — what the socket refused its clients, counted and logged.
 *
 * Every refusal (a limit, a malformed or out-of-turn message, a job notice
 * its user may not give) is counted by kind for the status. The log gets a
 * user's first refusal at once, with its reason, and then at most one line
 * a period for that user with the counts by kind since and the last
 * reason: one user sending garbage as fast as it can costs the log a line
 * a minute, not a line per message (which had written 8,000 lines a second
 * and tripped journald's rate limit, so that the daemon's own messages
 * were dropped), and it does not hide another user's first refusal. */
#include <string.h>

#include "vigil/json_members.h"
#include "refusal_log.h"

static const char *const refusal_names[VIGILD_REFUSED_KINDS] = {
    [VIGILD_REFUSED_FD_BUDGET] = "fd_budget",
    [VIGILD_REFUSED_UID_CONNECTIONS] = "uid_connections",
    [VIGILD_REFUSED_UID_PROCESSES] = "uid_processes",
    [VIGILD_REFUSED_MAX_PROCESSES] = "max_processes",
    [VIGILD_REFUSED_MALFORMED] = "malformed",
    [VIGILD_REFUSED_OUT_OF_TURN] = "out_of_turn",
    [VIGILD_REFUSED_JOB_NOTICE] = "job_notice",
    [VIGILD_REFUSED_STATUS_RATE] = "status_rate",
    [VIGILD_REFUSED_SPOOL_REQUEST] = "spool_request",
};

/* One user's: when its last line was, and what was refused since. */
struct uid_refusals {
    gint64 logged_us;
    uint64_t held[VIGILD_REFUSED_KINDS];
    uint64_t held_total;
    char last_reason[256];
};

const char *vigild_refusal_name(enum vigild_refusal kind)
{
    return refusal_names[kind];
}

void vigild_refusal_log_init(struct vigild_refusal_log *log, guint interval_s)
{
    memset(log, 0, sizeof *log);
    log->by_uid = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    vigild_refusal_log_set_interval(log, interval_s);
}

void vigild_refusal_log_set_interval(struct vigild_refusal_log *log, guint interval_s)
{
    log->interval_us = (gint64)MAX(interval_s, 1u) * G_USEC_PER_SEC;
}

/* "3 malformed, 1 out_of_turn", and the held counts cleared. */
static void log_held(uid_t uid, struct uid_refusals *u, gint64 now_us)
{
    if (u->held_total == 0)
        return;
    GString *counts = g_string_new(NULL);
    for (int k = 0; k < VIGILD_REFUSED_KINDS; k++)
        if (u->held[k] > 0)
            g_string_append_printf(counts, "%s%" G_GUINT64_FORMAT " %s",
                                   counts->len > 0 ? ", " : "", u->held[k], refusal_names[k]);
    gint64 since_s = (now_us - u->logged_us + G_USEC_PER_SEC / 2) / G_USEC_PER_SEC;
    g_warning("refused %" G_GUINT64_FORMAT " more of uid %u in %" G_GINT64_FORMAT
              " s (%s); the last: %s",
              u->held_total, (unsigned)uid, since_s, counts->str, u->last_reason);
    g_string_free(counts, TRUE);
    memset(u->held, 0, sizeof u->held);
    u->held_total = 0;
    u->logged_us = now_us;
}

static gboolean on_timer(gpointer user_data);

static void arm_timer(struct vigild_refusal_log *log, gint64 due_us, gint64 now_us)
{
    g_clear_handle_id(&log->timer, g_source_remove);
    log->timer_due_us = due_us;
    if (due_us == 0)
        return;
    gint64 wait_ms = due_us > now_us ? (due_us - now_us + 999) / 1000 : 0;
    log->timer = g_timeout_add((guint)wait_ms, on_timer, log);
}

static gboolean on_timer(gpointer user_data)
{
    struct vigild_refusal_log *log = user_data;
    log->timer = 0;
    gint64 now_us = g_get_monotonic_time();
    arm_timer(log, vigild_refusal_log_flush_at(log, now_us), now_us);
    return G_SOURCE_REMOVE;
}

void vigild_refusal_log_note_at(struct vigild_refusal_log *log, uid_t uid, enum vigild_refusal kind,
                                const char *reason, gint64 now_us)
{
    log->total[kind]++;
    struct uid_refusals *u = g_hash_table_lookup(log->by_uid, GUINT_TO_POINTER(uid));
    if (u == NULL) {
        u = g_new0(struct uid_refusals, 1);
        g_hash_table_insert(log->by_uid, GUINT_TO_POINTER(uid), u);
    } else if (now_us - u->logged_us < log->interval_us) {
        u->held[kind]++;
        u->held_total++;
        g_strlcpy(u->last_reason, reason, sizeof u->last_reason);
        gint64 due_us = u->logged_us + log->interval_us;
        if (log->timer == 0 || due_us < log->timer_due_us)
            arm_timer(log, due_us, now_us);
        return;
    }
    /* Its first, or the first after a quiet period: counts the timer
     * has not logged yet (the loop was busy) go first. */
    log_held(uid, u, now_us);
    g_warning("refused a client of uid %u (%s): %s (a user's refusals are counted in `vigil "
              "status` and logged at most once in %" G_GINT64_FORMAT " s)",
              (unsigned)uid, refusal_names[kind], reason, log->interval_us / G_USEC_PER_SEC);
    u->logged_us = now_us;
}

void vigild_refusal_log_note(struct vigild_refusal_log *log, uid_t uid, enum vigild_refusal kind,
                             const char *reason)
{
    vigild_refusal_log_note_at(log, uid, kind, reason, g_get_monotonic_time());
}

gint64 vigild_refusal_log_flush_at(struct vigild_refusal_log *log, gint64 now_us)
{
    gint64 next_us = 0;
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, log->by_uid);
    while (g_hash_table_iter_next(&it, &key, &value)) {
        struct uid_refusals *u = value;
        gint64 due_us = u->logged_us + log->interval_us;
        if (u->held_total == 0) {
            if (due_us <= now_us) /* its next refusal is logged at once anyway */
                g_hash_table_iter_remove(&it);
            continue;
        }
        if (due_us <= now_us) {
            log_held((uid_t)GPOINTER_TO_UINT(key), u, now_us);
            continue;
        }
        if (next_us == 0 || due_us < next_us)
            next_us = due_us;
    }
    return next_us;
}

void vigild_refusal_log_status(const struct vigild_refusal_log *log, JsonBuilder *b)
{
    json_builder_set_member_name(b, "refused");
    json_builder_begin_object(b);
    for (int k = 0; k < VIGILD_REFUSED_KINDS; k++)
        vigil_json_int(b, refusal_names[k], (int64_t)log->total[k]);
    json_builder_end_object(b);
}

void vigild_refusal_log_clear(struct vigild_refusal_log *log)
{
    if (log->by_uid == NULL)
        return;
    g_clear_handle_id(&log->timer, g_source_remove);
    gint64 now_us = g_get_monotonic_time();
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, log->by_uid);
    while (g_hash_table_iter_next(&it, &key, &value))
        log_held((uid_t)GPOINTER_TO_UINT(key), value, now_us);
    g_clear_pointer(&log->by_uid, g_hash_table_destroy);
}
