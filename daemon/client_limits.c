/* vigild — what one local user may take of the daemon through its socket.
 *
 * The socket is open to every user of the node, so each is bounded:
 * connections per uid, registered processes per uid, an idle timeout for a
 * connection that has not registered, status requests per uid (a token
 * bucket: each answer builds the whole status, about a millisecond and
 * 24 KB, and a loop of them had cost 88 % of a CPU), and every user's
 * connections
 * together kept under a descriptor budget (the limit less a reserve) so
 * that the daemon can always open its own files.
 *
 * Root is exempt from the per-uid limits and the status rate: root can
 * stop or trace the daemon anyway, so limiting it protects nothing, and
 * `vigil status` run by an admin on a flooded node must still be answered.
 * Root's connections do stop at a higher budget, half the reserve below the
 * limit, so that even root cannot take the daemon's last descriptors.
 *
 * A refusal is counted and logged through refusal_log.c: at once, then at
 * most once a period per user with the counts since, never once per
 * connection: a flood must not become a flood of log lines. */
#include <dirent.h>
#include <string.h>
#include <sys/resource.h>

#include "client_limits.h"
#include "vigil/json_members.h"
#include "processes.h"
#include "vigild_settings.h"

#define RECOUNT_EVERY_US G_USEC_PER_SEC
#define MIN_BUDGET       128 /* descriptors a budget leaves users at least */

struct idle_client {
    uint64_t key;
    gint64 deadline_us; /* g_get_monotonic_time */
};

/* Descriptors open now, read from /proc/self/fd (less the one reading it). */
static uint64_t count_open_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (dir == NULL)
        return 0;
    uint64_t n = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(dir);
    return n > 0 ? n - 1 : 0;
}

void vigild_client_limits_init(struct vigild_client_limits *l,
                               void (*close_idle)(void *user, uint64_t key), void *user)
{
    memset(l, 0, sizeof *l);
    l->connections_by_uid = g_hash_table_new(g_direct_hash, g_direct_equal);
    l->status_buckets = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    g_queue_init(&l->idle);
    l->close_idle = close_idle;
    l->user = user;
    struct rlimit limit;
    l->fd_limit = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                      ? (uint64_t)limit.rlim_cur
                      : 1024;
    l->fds_counted = count_open_fds();
    l->fds_counted_us = g_get_monotonic_time();
    vigild_refusal_log_init(&l->refusals, 60);
}

static void arm_idle_timer(struct vigild_client_limits *l);

void vigild_client_limits_configure(struct vigild_client_limits *l,
                                    const struct vigild_daemon_settings *s)
{
    l->max_connections_per_uid = s->max_connections_per_uid;
    l->max_processes_per_uid = s->max_processes_per_uid;
    /* A budget of a few descriptors would refuse everyone: keep one. */
    uint64_t most = l->fd_limit > 2 * MIN_BUDGET ? l->fd_limit - MIN_BUDGET : l->fd_limit / 2;
    l->fd_reserve = MIN((uint64_t)s->fd_reserve, most);
    if (l->fd_reserve < s->fd_reserve)
        g_warning("[daemon] fd_reserve = %u leaves less than %d of the descriptor limit of "
                  "%" G_GUINT64_FORMAT ": %" G_GUINT64_FORMAT " are reserved",
                  s->fd_reserve, MIN_BUDGET, l->fd_limit, l->fd_reserve);
    l->fd_budget = l->fd_limit - l->fd_reserve;
    l->fd_budget_root = l->fd_limit - l->fd_reserve / 2;
    /* A new timeout applies to the clients waiting from now on. */
    l->unregistered_timeout_ms = s->unregistered_timeout_ms;
    arm_idle_timer(l);
    vigild_refusal_log_set_interval(&l->refusals, s->refusal_log_interval_s);
    l->status_per_s = s->status_requests_per_s;
    l->status_burst = s->status_requests_burst;
}

uint64_t vigild_client_limits_fds_in_use(struct vigild_client_limits *l)
{
    gint64 now = g_get_monotonic_time();
    if (now - l->fds_counted_us >= RECOUNT_EVERY_US) {
        l->fds_counted = count_open_fds();
        l->fds_counted_us = now;
        l->opened_since_count = 0;
    }
    int64_t n = (int64_t)l->fds_counted + l->opened_since_count;
    return n > 0 ? (uint64_t)n : 0;
}

/* ---- refusals ------------------------------------------------------------- */

/* Counts and logs a refusal of `uid` (refusal_log.c); returns `reason`. */
static char *note_refusal(struct vigild_client_limits *l, uid_t uid, enum vigild_refusal kind,
                          char *reason)
{
    vigild_refusal_log_note(&l->refusals, uid, kind, reason);
    return reason;
}

/* ---- connections ---------------------------------------------------------- */

char *vigild_client_limits_admit(struct vigild_client_limits *l, uid_t uid)
{
    uint64_t in_use = vigild_client_limits_fds_in_use(l);
    uint64_t budget = uid == 0 ? l->fd_budget_root : l->fd_budget;
    if (in_use > budget)
        return note_refusal(
            l, uid, VIGILD_REFUSED_FD_BUDGET,
            g_strdup_printf("uid %u: vigild has %" G_GUINT64_FORMAT
                            " descriptors open, over its budget of %" G_GUINT64_FORMAT
                            " (the limit %" G_GUINT64_FORMAT " less [daemon] fd_reserve)",
                            (unsigned)uid, in_use, budget, l->fd_limit));
    guint held =
        GPOINTER_TO_UINT(g_hash_table_lookup(l->connections_by_uid, GUINT_TO_POINTER(uid)));
    if (uid != 0 && held >= l->max_connections_per_uid)
        return note_refusal(l, uid, VIGILD_REFUSED_UID_CONNECTIONS,
                            g_strdup_printf("uid %u holds %u connections already "
                                            "([daemon] max_connections_per_uid)",
                                            (unsigned)uid, held));
    g_hash_table_insert(l->connections_by_uid, GUINT_TO_POINTER(uid), GUINT_TO_POINTER(held + 1));
    l->connections++;
    l->opened_since_count++;
    return NULL;
}

void vigild_client_limits_closed(struct vigild_client_limits *l, uid_t uid)
{
    guint held =
        GPOINTER_TO_UINT(g_hash_table_lookup(l->connections_by_uid, GUINT_TO_POINTER(uid)));
    if (held <= 1)
        g_hash_table_remove(l->connections_by_uid, GUINT_TO_POINTER(uid));
    else
        g_hash_table_insert(l->connections_by_uid, GUINT_TO_POINTER(uid),
                            GUINT_TO_POINTER(held - 1));
    l->connections--;
    l->opened_since_count--;
}

/* ---- registrations ---------------------------------------------------------- */

char *vigild_client_limits_check_register(struct vigild_client_limits *l, uid_t uid,
                                          const struct vigild_processes *processes)
{
    if (uid == 0)
        return NULL;
    guint own = 0;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, processes->by_id);
    while (g_hash_table_iter_next(&it, NULL, &value))
        own += ((const struct vigild_process *)value)->uid == uid;
    if (own >= l->max_processes_per_uid)
        return note_refusal(l, uid, VIGILD_REFUSED_UID_PROCESSES,
                            g_strdup_printf("uid %u has %u processes registered already "
                                            "([daemon] max_processes_per_uid)",
                                            (unsigned)uid, own));
    return NULL;
}

/* ---- status requests -------------------------------------------------------- */

/* A user's tokens: one per answer, refilled at status_per_s up to the
 * burst. One per uid that asked (users are few), none for root. */
struct status_bucket {
    double tokens;
    gint64 refilled_us;
};

char *vigild_client_limits_check_status(struct vigild_client_limits *l, uid_t uid)
{
    if (uid == 0)
        return NULL;
    gint64 now_us = g_get_monotonic_time();
    struct status_bucket *b = g_hash_table_lookup(l->status_buckets, GUINT_TO_POINTER(uid));
    if (b == NULL) {
        b = g_new(struct status_bucket, 1);
        b->tokens = l->status_burst;
        b->refilled_us = now_us;
        g_hash_table_insert(l->status_buckets, GUINT_TO_POINTER(uid), b);
    }
    b->tokens = MIN((double)l->status_burst,
                    b->tokens + (double)(now_us - b->refilled_us) * l->status_per_s / 1e6);
    b->refilled_us = now_us;
    if (b->tokens >= 1) {
        b->tokens -= 1;
        return NULL;
    }
    return note_refusal(l, uid, VIGILD_REFUSED_STATUS_RATE,
                        g_strdup_printf("uid %u asks for the status more than %u times a second "
                                        "after a burst of %u ([daemon] status_requests_per_s, "
                                        "status_requests_burst); root's are always answered",
                                        (unsigned)uid, l->status_per_s, l->status_burst));
}

/* ---- the idle timeout ---------------------------------------------------- */

static gboolean on_idle_timer(gpointer user_data)
{
    struct vigild_client_limits *l = user_data;
    l->idle_timer = 0;
    gint64 now = g_get_monotonic_time();
    GList *head;
    while ((head = g_queue_peek_head_link(&l->idle)) != NULL &&
           ((struct idle_client *)head->data)->deadline_us <= now) {
        l->closed_idle++;
        l->close_idle(l->user, ((struct idle_client *)head->data)->key);
        /* The close takes it off the queue; make sure, so this cannot spin. */
        if (g_queue_peek_head_link(&l->idle) == head)
            vigild_client_limits_idle_stop(l, head);
    }
    arm_idle_timer(l);
    return G_SOURCE_REMOVE;
}

/* The timer for the oldest deadline: every client has the same timeout, so
 * the queue is in deadline order and one timer serves them all. */
static void arm_idle_timer(struct vigild_client_limits *l)
{
    g_clear_handle_id(&l->idle_timer, g_source_remove);
    struct idle_client *head = g_queue_peek_head(&l->idle);
    if (head == NULL)
        return;
    gint64 wait_us = head->deadline_us - g_get_monotonic_time();
    guint wait_ms = wait_us > 0 ? (guint)((wait_us + 999) / 1000) : 0;
    l->idle_timer = g_timeout_add(wait_ms, on_idle_timer, l);
}

GList *vigild_client_limits_idle_start(struct vigild_client_limits *l, uint64_t key)
{
    struct idle_client *c = g_new(struct idle_client, 1);
    c->key = key;
    c->deadline_us = g_get_monotonic_time() + (gint64)l->unregistered_timeout_ms * 1000;
    g_queue_push_tail(&l->idle, c);
    if (l->idle_timer == 0)
        arm_idle_timer(l);
    return g_queue_peek_tail_link(&l->idle);
}

void vigild_client_limits_idle_stop(struct vigild_client_limits *l, GList *link)
{
    g_queue_unlink(&l->idle, link);
    g_free(link->data);
    g_list_free_1(link);
}

/* ---- status ---------------------------------------------------------------- */

void vigild_client_limits_status(struct vigild_client_limits *l, JsonBuilder *b)
{
    json_builder_set_member_name(b, "clients");
    json_builder_begin_object(b);
    vigil_json_int(b, "connections", l->connections);
    vigil_json_int(b, "unregistered", g_queue_get_length(&l->idle));
    vigil_json_int(b, "fds_in_use", (int64_t)vigild_client_limits_fds_in_use(l));
    vigil_json_int(b, "fd_limit", (int64_t)l->fd_limit);
    vigil_json_int(b, "fd_reserve", (int64_t)l->fd_reserve);
    vigil_json_int(b, "fd_budget", (int64_t)l->fd_budget);
    vigil_json_int(b, "fd_budget_root", (int64_t)l->fd_budget_root);
    vigil_json_int(b, "max_connections_per_uid", l->max_connections_per_uid);
    vigil_json_int(b, "max_processes_per_uid", l->max_processes_per_uid);
    vigil_json_int(b, "unregistered_timeout_ms", l->unregistered_timeout_ms);
    vigil_json_int(b, "status_requests_per_s", l->status_per_s);
    vigil_json_int(b, "status_requests_burst", l->status_burst);
    vigild_refusal_log_status(&l->refusals, b);
    vigil_json_int(b, "closed_idle", (int64_t)l->closed_idle);
    json_builder_end_object(b);
}

void vigild_client_limits_clear(struct vigild_client_limits *l)
{
    if (l->idle_timer != 0)
        g_source_remove(l->idle_timer);
    vigild_refusal_log_clear(&l->refusals);
    g_queue_clear_full(&l->idle, g_free);
    g_clear_pointer(&l->connections_by_uid, g_hash_table_destroy);
    g_clear_pointer(&l->status_buckets, g_hash_table_destroy);
}
