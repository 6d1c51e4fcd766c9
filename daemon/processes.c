/* vigild — the registered processes: each one's ring, drained every tick
 * and once more at its end, and what was found in it.
 *
 * The daemon keeps the ring's mapping, not the process: when the process
 * exits, or is killed with SIGKILL, the memory stays and its last records
 * are drained after the kernel says it has gone (its pidfd turns readable).
 * Nothing it wrote is lost. */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <glib-unix.h>

#include "vigil/run_key.h"
#include "process_state.h"
#include "processes.h"
#include "vigild_error.h"

/* Problems in one ring logged at most this many times; the rest counted. */
#define PROBLEMS_LOGGED_MAX 5
/* Run keys whose owners are remembered after their processes ended: a
 * node sees a few thousand runs a day at most; past this, the least
 * recently used are forgotten here (the warehouse keeps them all). */
#define RUN_OWNERS_MAX 16384
/* A process kept out of another user's run is logged at once, then at
 * most once in this many seconds, with the count since. */
#define APART_LOG_PERIOD_S 60
/* How long a process's activities are kept back for the file names asked
 * of it (it answers when it next does I/O, or at its exit); after that
 * they go on, their files unnamed. */
#define NAMES_WAIT_MAX_NS (10 * VIGIL_NS_PER_S)

const char *vigild_process_state_name(enum vigild_process_state state)
{
    static const char *const names[] = {[VIGILD_PROCESS_RUNNING] = "running",
                                        [VIGILD_PROCESS_ENDED] = "ended",
                                        [VIGILD_PROCESS_DROPPED] = "dropped"};
    return (unsigned)state < G_N_ELEMENTS(names) ? names[state] : "unknown";
}

void vigild_processes_calibrate(struct vigild_processes *ps)
{
    struct vigil_tick_anchor now;
    vigil_tick_anchor_now(VIGIL_TICKS_TSC, &now);
    if (now.ns > ps->tsc_first.ns && now.ticks > ps->tsc_first.ticks)
        vigil_tick_clock_init(&ps->tsc_clock, VIGIL_TICKS_TSC, &ps->tsc_first, &now);
}

void vigild_processes_init(struct vigild_processes *ps, guint keep_ended)
{
    ps->by_id = g_hash_table_new(g_int64_hash, g_int64_equal);
    ps->ended = g_queue_new();
    ps->next_id = 1;
    ps->keep_ended = keep_ended;
    ps->run_owners = vigild_owners_new(RUN_OWNERS_MAX, "run-owners");
    struct vigil_tick_anchor a, b;
    vigil_tick_anchor_now(VIGIL_TICKS_MONOTONIC_NS, &a);
    b = a;
    b.ticks += 1, b.ns += 1;
    vigil_tick_clock_init(&ps->ns_clock, VIGIL_TICKS_MONOTONIC_NS, &a, &b);
    /* The TSC's rate from two anchors 20 ms apart, at start-up: rings may
     * be drained before the first tick gives a second one. */
    vigil_tick_anchor_now(VIGIL_TICKS_TSC, &ps->tsc_first);
    nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
    vigild_processes_calibrate(ps);
}

static void process_free(struct vigild_process *p)
{
    if (p->pidfd_watch != 0)
        g_source_remove(p->pidfd_watch);
    if (p->pidfd >= 0)
        close(p->pidfd);
    vigil_ring_close(p->ring);
    g_free(p->program);
    g_free(p->cwd);
    g_free(p->job);
    g_free(p->dropped_reason);
    g_free(p->run_key);
    g_free(p->report_json);
    g_ptr_array_free(p->argv, TRUE);
    if (p->awaiting_names != NULL)
        g_array_free(p->awaiting_names, TRUE);
    g_free(p);
}

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t vigild_processes_start_of(pid_t pid, uint64_t claimed_ns, uint64_t connected_ns)
{
    /* /proc counts a start in clock ticks since boot, CLOCK_BOOTTIME's
     * origin, truncated: the start lies in the tick it names. BOOTTIME
     * runs on during a suspend and MONOTONIC does not: taking off the
     * whole time asleep until now gives MONOTONIC at the tick's start, or
     * earlier for a process that slept through a suspend, never later. */
    uint64_t ticks = vigild_proc_start_ticks(pid);
    long hz = sysconf(_SC_CLK_TCK);
    if (ticks == 0 || hz <= 0)
        return connected_ns;
    /* MONOTONIC read first: BOOTTIME read after it is never behind it, and
     * the few ns between the reads only lower the floor. */
    uint64_t monotonic_ns = clock_ns(CLOCK_MONOTONIC);
    uint64_t asleep_ns = clock_ns(CLOCK_BOOTTIME) - monotonic_ns;
    uint64_t boot_ns = ticks * (1000000000u / (uint64_t)hz);
    uint64_t floor_ns = boot_ns > asleep_ns ? boot_ns - asleep_ns : 1;
    /* A pid used again since it connected: another process's entry. */
    if (floor_ns > connected_ns)
        return connected_ns;
    return claimed_ns >= floor_ns && claimed_ns <= monotonic_ns ? claimed_ns : floor_ns;
}

/* Whose `key` is, when it is not `uid`'s: the owner, and why. */
static gboolean key_owner(struct vigild_processes *ps, uid_t uid, const char *key, uid_t *owner,
                          char **why)
{
    uint32_t named = 0;
    char job[VIGIL_RUN_KEY_MAX + 1];
    if (vigil_run_key_owner(key, &named)) {
        *owner = named;
        *why = g_strdup_printf("its name says it is uid %u's", (unsigned)named);
        return named != uid;
    }
    if (vigil_run_key_scheduler_job(key, job, sizeof job)) {
        if (ps->job_owner == NULL || !ps->job_owner(ps->user, job, owner)) {
            *owner = (uid_t)-1;
            *why = g_strdup_printf("root has not told vigild whose job %s is (the prolog or the "
                                   "SPANK plugin does), so no one may take its key",
                                   job);
            return TRUE;
        }
        *why = g_strdup_printf("root told vigild job %s is uid %u's", job, (unsigned)*owner);
        return *owner != uid;
    }
    /* A running process of another uid: always right, even for a key the
     * table forgot. */
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, ps->by_id);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        const struct vigild_process *p = value;
        if (p->uid != uid && strcmp(p->run_key, key) == 0) {
            *owner = p->uid;
            *why = g_strdup_printf("its processes are uid %u's", (unsigned)p->uid);
            return TRUE;
        }
    }
    if (vigild_owners_lookup(ps->run_owners, key, vigil_clock_monotonic_ns(), owner) &&
        *owner != uid) {
        *why = g_strdup_printf("its first process was uid %u's", (unsigned)*owner);
        return TRUE;
    }
    return FALSE;
}

/* One line at once, then one a period with the count since: a user who
 * keeps trying must not flood the log. */
static void log_placed_apart(struct vigild_processes *ps, pid_t pid, uid_t uid, const char *key,
                             const char *apart, const char *why)
{
    gint64 now_us = g_get_monotonic_time();
    if (ps->apart_logged_us != 0 &&
        now_us - ps->apart_logged_us < APART_LOG_PERIOD_S * G_USEC_PER_SEC) {
        ps->apart_unlogged++;
        return;
    }
    g_message("pid %d (uid %u) named run %s, which is not its user's (%s): it is kept in run %s "
              "(%" G_GUINT64_FORMAT " more kept apart since the last such line; logged at most "
              "once in %d s)",
              (int)pid, (unsigned)uid, key, why, apart, ps->apart_unlogged, APART_LOG_PERIOD_S);
    ps->apart_logged_us = now_us;
    ps->apart_unlogged = 0;
}

char *vigild_processes_place(struct vigild_processes *ps, pid_t pid, uid_t uid, const char *key,
                             char **why)
{
    *why = NULL;
    uid_t owner = 0;
    char *reason = NULL;
    if (!key_owner(ps, uid, key, &owner, &reason)) {
        g_free(reason);
        return g_strdup(key);
    }
    char apart[VIGIL_RUN_KEY_MAX + 1];
    vigil_run_key_apart(apart, key, (uint32_t)uid);
    ps->placed_apart_total++;
    log_placed_apart(ps, pid, uid, key, apart, reason);
    *why = g_strdup_printf("run %s is not uid %u's: %s", key, (unsigned)uid, reason);
    g_free(reason);
    return g_strdup(apart);
}

/* The first process of an ordinary key makes it its uid's; a key named
 * after its owner or a scheduler's job needs no entry. */
static void claim_run_key(struct vigild_processes *ps, const struct vigild_process *p)
{
    uint32_t named;
    char job[VIGIL_RUN_KEY_MAX + 1];
    uid_t owner;
    if (vigil_run_key_owner(p->run_key, &named) ||
        vigil_run_key_scheduler_job(p->run_key, job, sizeof job))
        return;
    if (!vigild_owners_lookup(ps->run_owners, p->run_key, vigil_clock_monotonic_ns(), &owner))
        vigild_owners_set(ps->run_owners, p->run_key, p->uid, 0);
}

/* This vigild lacks file names a vigild before it read from the ring: asks
 * the process for all of them again, and keeps its activities back until
 * they are in. */
static void want_names(struct vigild_process *p)
{
    if (vigil_ring_want_names(p->ring) == 0) {
        g_message("process %d (%s): the file names a vigild before this one read are not known "
                  "here, and its library cannot send them again: activities of those files "
                  "go without one",
                  (int)p->pid, p->program);
        return;
    }
    g_message("process %d (%s): asked for its file names again (the ones a vigild before this "
              "one read are not known here)",
              (int)p->pid, p->program);
    p->names_wanted_ns = vigil_clock_monotonic_ns();
    p->awaiting_names = g_array_new(FALSE, FALSE, sizeof(struct vigil_activity));
}

static gboolean on_pid_exit(gint fd, GIOCondition condition, gpointer user_data);

struct pid_watch {
    struct vigild_processes *ps;
    uint64_t id;
};

/* A process's job is its own word (SLURM_JOB_ID in its environment): one
 * root told vigild is another uid's does not count, or a user could be
 * counted in another's job (its /metrics series, its energy, its
 * warehouse job). Root's processes are believed. */
static void forget_anothers_job(struct vigild_processes *ps, struct vigild_process *p)
{
    uid_t owner;
    if (p->job[0] == '\0' || p->uid == 0 || ps->job_owner == NULL ||
        !ps->job_owner(ps->user, p->job, &owner) || owner == p->uid)
        return;
    g_message("pid %d (uid %u) says it is in job %s, which root told vigild is uid %u's: it is "
              "watched as in no job",
              (int)p->pid, (unsigned)p->uid, p->job, (unsigned)owner);
    p->job[0] = '\0';
}

/* A process as its registration describes it, not yet in the table. */
static struct vigild_process *process_new(struct vigild_processes *ps,
                                          const struct vigil_local_process_info *info, pid_t pid,
                                          uid_t uid)
{
    struct vigild_process *p = g_new0(struct vigild_process, 1);
    p->id = ps->next_id++;
    p->pid = pid;
    p->uid = uid;
    p->state = VIGILD_PROCESS_RUNNING;
    /* Paths and arguments are bytes, not text: a Latin-1 file name would
     * make the status's JSON invalid for everyone. Invalid sequences
     * become U+FFFD in what the daemon keeps. */
    p->program = g_utf8_make_valid(info->program, info->fixed.program_bytes);
    p->cwd = g_utf8_make_valid(info->cwd, info->fixed.cwd_bytes);
    p->job = g_utf8_make_valid(info->job, info->fixed.job_bytes);
    p->argv = g_ptr_array_new_with_free_func(g_free);
    for (const char *arg = info->argv; arg < info->argv + info->fixed.argv_bytes;
         arg += strlen(arg) + 1)
        g_ptr_array_add(p->argv, g_utf8_make_valid(arg, -1));
    p->argv_truncated = (info->fixed.flags & VIGIL_LOCAL_ARGV_TRUNCATED) != 0;
    p->mpi_rank = info->fixed.mpi_rank;
    p->mpi_size = -1;
    p->start_realtime_ns = info->fixed.start_realtime_ns;
    p->start_monotonic_ns = info->fixed.start_monotonic_ns;
    p->registered_ns = vigil_clock_monotonic_ns();
    p->ring_slots = info->fixed.ring_slots;
    p->tick_source = info->fixed.tick_source;
    p->cpu_s = p->energy_j = NAN;
    p->run_key = g_strndup(info->run_key, info->fixed.run_bytes); /* checked: printable ASCII */
    p->exit_code = -1;
    p->pidfd = -1;
    forget_anothers_job(ps, p);
    return p;
}

struct vigild_process *vigild_processes_add_ended(struct vigild_processes *ps,
                                                  const struct vigil_local_process_info *info,
                                                  pid_t pid, uid_t uid, uint64_t seen_running_ns)
{
    struct vigild_process *p = process_new(ps, info, pid, uid);
    p->restarts = 1;
    p->end_earliest_ns = MAX(seen_running_ns, p->start_monotonic_ns);
    g_hash_table_insert(ps->by_id, &p->id, p);
    if (ps->on_start != NULL)
        ps->on_start(ps->user, p);
    vigild_processes_end(ps, p);
    return p;
}

/* The running process that reads the ring of (device, inode) already. */
static const struct vigild_process *ring_reader(const struct vigild_processes *ps,
                                                const struct stat *ring_stat)
{
    if (ring_stat->st_ino == 0)
        return NULL;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, ps->by_id);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        const struct vigild_process *p = value;
        if (p->ring != NULL && p->ring_device == ring_stat->st_dev &&
            p->ring_inode == ring_stat->st_ino)
            return p;
    }
    return NULL;
}

struct vigild_process *vigild_processes_add(struct vigild_processes *ps,
                                            const struct vigil_local_process_info *info, pid_t pid,
                                            uid_t uid, int ring_fd, GError **error)
{
    struct vigil_error err = {{0}};
    struct stat ring_stat = {0};
    (void)fstat(ring_fd, &ring_stat); /* what finds the ring again after a restart */
    /* Two readers of one ring would each take records from the other and
     * read torn slots: a registration that is not matched as a reattach
     * (another start, another uid) must not become one. */
    const struct vigild_process *reader = ring_reader(ps, &ring_stat);
    if (reader != NULL) {
        close(ring_fd);
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "its ring is read already as process %" G_GUINT64_FORMAT " (pid %d)",
                    reader->id, (int)reader->pid);
        return NULL;
    }
    struct vigil_ring *ring = vigil_ring_attach(ring_fd, &err);
    close(ring_fd); /* the mapping is all the daemon needs */
    if (ring == NULL) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED, "its ring is refused: %s",
                    err.message);
        return NULL;
    }
    if (vigil_ring_slot_count(ring) != info->fixed.ring_slots) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "it says its ring has %u slots, the ring has %u", info->fixed.ring_slots,
                    vigil_ring_slot_count(ring));
        vigil_ring_close(ring);
        return NULL;
    }
    struct vigild_process *p = process_new(ps, info, pid, uid);
    p->ring = ring;
    p->skip_below = ps->adopt_skip_below; /* before anything drains it */
    ps->adopt_skip_below = 0;
    vigil_ring_hold(ring, ps->hold_records);
    p->ring_device = ring_stat.st_dev;
    p->ring_inode = ring_stat.st_ino;
    p->ring_slots = vigil_ring_slot_count(ring);
    p->tick_source = (uint32_t)vigil_ring_tick_source(ring);
    p->proc_start_ticks = vigild_proc_start_ticks(pid);
    /* A ring a vigild before this one consumed from: it resumes where that
     * one stopped, and what that one freed without storing is lost. */
    uint64_t resumed_at, lost;
    vigil_ring_resumed(ring, &resumed_at, &lost);
    if (resumed_at > 0) {
        p->next_seq = resumed_at;
        p->seq_started = TRUE;
        p->restarts = 1;
        p->restart_lost = lost;
        /* The name records are in what that one read. */
        if (!ps->adopt_names_known)
            want_names(p);
    }
    claim_run_key(ps, p);
    ps->adopt_names_known = FALSE;
    p->pidfd = pidfd_open(pid, 0);
    int pidfd_errno = errno; /* the start callbacks below may change errno */
    g_hash_table_insert(ps->by_id, &p->id, p);
    ps->registered_total++;
    if (ps->on_start != NULL)
        ps->on_start(ps->user, p);
    if (p->pidfd >= 0) {
        struct pid_watch *w = g_new(struct pid_watch, 1);
        w->ps = ps;
        w->id = p->id;
        p->pidfd_watch =
            g_unix_fd_add_full(G_PRIORITY_DEFAULT, p->pidfd, G_IO_IN, on_pid_exit, w, g_free);
    } else if (pidfd_errno == ESRCH) {
        /* Gone before its registration was read: only the ring is left. */
        vigild_processes_end(ps, p);
    } else {
        g_message("process %d (%s): cannot watch it (pidfd_open: %s); its end is taken from "
                  "its connection's",
                  (int)pid, p->program, g_strerror(pidfd_errno));
    }
    return p;
}

void vigild_processes_hold_records(struct vigild_processes *ps, gboolean hold)
{
    ps->hold_records = hold;
}

void vigild_processes_commit(struct vigild_processes *ps, struct vigild_process *p,
                             uint64_t position)
{
    (void)ps;
    if (p->ring != NULL)
        vigil_ring_release(p->ring, position, position);
}

struct vigild_process *vigild_processes_find(const struct vigild_processes *ps, pid_t pid,
                                             uint64_t start_monotonic_ns)
{
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, ps->by_id);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct vigild_process *p = value;
        if (p->pid == pid && p->start_monotonic_ns == start_monotonic_ns)
            return p;
    }
    /* Its end may have been seen before a message it sent just before it
     * (a REGISTER to a vigild that took it back): that is the process
     * still, not a new one reading its ring again. */
    for (GList *l = ps->ended->tail; l != NULL; l = l->prev) {
        struct vigild_process *p = l->data;
        if (p->pid == pid && p->start_monotonic_ns == start_monotonic_ns)
            return p;
    }
    return NULL;
}

struct vigild_process *vigild_processes_get(const struct vigild_processes *ps, uint64_t id)
{
    return g_hash_table_lookup(ps->by_id, &id);
}

guint vigild_processes_running(const struct vigild_processes *ps)
{
    return g_hash_table_size(ps->by_id);
}

static gint compare_ids(gconstpointer a, gconstpointer b)
{
    uint64_t x = (*(const struct vigild_process *const *)a)->id;
    uint64_t y = (*(const struct vigild_process *const *)b)->id;
    return x < y ? -1 : x > y;
}

/* The running processes in no order: what the tick needs. */
static GPtrArray *collect_running(const struct vigild_processes *ps)
{
    GPtrArray *all = g_ptr_array_sized_new(g_hash_table_size(ps->by_id));
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, ps->by_id);
    while (g_hash_table_iter_next(&it, NULL, &value))
        g_ptr_array_add(all, value);
    return all;
}

GPtrArray *vigild_processes_list(const struct vigild_processes *ps)
{
    GPtrArray *all = collect_running(ps);
    g_ptr_array_sort(all, compare_ids);
    return all;
}

struct drain_target {
    struct vigild_processes *ps;
    struct vigild_process *p;
};

static void on_record(const struct vigil_ring_record *record, void *user)
{
    const struct drain_target *t = user;
    struct vigild_process *p = t->p;
    /* Stored by the vigild before this one, which died before it freed
     * them from the ring: counted and sent already. */
    if (record->seq < p->skip_below) {
        p->next_seq = record->seq + record->slots;
        p->seq_started = TRUE;
        return;
    }
    if (p->seq_started && record->seq > p->next_seq)
        p->seq_gaps += record->seq - p->next_seq;
    p->seq_started = TRUE;
    p->next_seq = record->seq + record->slots;
    if (record->type == VIGIL_RECORD_ACTIVITY)
        p->activities++;
    else
        p->names++;
    if (p->awaiting_names != NULL && record->type == VIGIL_RECORD_ACTIVITY) {
        g_array_append_val(p->awaiting_names, record->activity);
        return;
    }
    if (t->ps->on_record != NULL)
        t->ps->on_record(t->ps->user, p, record);
}

/* The activities kept back for their names go on, in their order. */
static void release_awaiting(struct vigild_processes *ps, struct vigild_process *p, const char *why)
{
    GArray *kept = p->awaiting_names;
    p->awaiting_names = NULL;
    g_message("process %d (%s): %s; its %u activities kept back for them go on", (int)p->pid,
              p->program, why, kept->len);
    for (guint i = 0; i < kept->len && ps->on_record != NULL; i++) {
        struct vigil_ring_record record = {.type = VIGIL_RECORD_ACTIVITY, .slots = 1};
        record.activity = g_array_index(kept, struct vigil_activity, i);
        record.seq = record.activity.seq;
        ps->on_record(ps->user, p, &record);
    }
    g_array_free(kept, TRUE);
}

/* After a drain: the names asked for are in, or waiting has lasted too
 * long, or the process is gone. */
static void check_awaiting(struct vigild_processes *ps, struct vigild_process *p, unsigned flags)
{
    if (p->awaiting_names == NULL)
        return;
    if (vigil_ring_names_arrived(p->ring))
        release_awaiting(ps, p, "its file names came again");
    else if (flags & VIGIL_RING_PRODUCER_GONE)
        release_awaiting(ps, p, "it ended without sending its file names again");
    else if (vigil_clock_monotonic_ns() - p->names_wanted_ns > NAMES_WAIT_MAX_NS ||
             p->awaiting_names->len >= vigil_ring_slot_count(p->ring))
        release_awaiting(ps, p, "its file names have not come again");
}

gboolean vigild_processes_oldest_kept(const struct vigild_process *p, uint64_t *seq)
{
    if (p->awaiting_names == NULL || p->awaiting_names->len == 0)
        return FALSE;
    *seq = g_array_index(p->awaiting_names, struct vigil_activity, 0).seq;
    return TRUE;
}

static void drop(struct vigild_processes *ps, struct vigild_process *p, const char *why);

static void drain(struct vigild_processes *ps, struct vigild_process *p, unsigned flags)
{
    if (p->ring == NULL)
        return;
    const struct vigil_tick_clock *clock =
        vigil_ring_tick_source(p->ring) == VIGIL_TICKS_TSC ? &ps->tsc_clock : &ps->ns_clock;
    struct vigil_ring_drain_report report;
    struct drain_target target = {.ps = ps, .p = p};
    vigil_ring_drain(p->ring, SIZE_MAX, flags, clock, on_record, &target, &report);
    /* Held slots are ones the program cannot use: past half the ring, free
     * the oldest quarter's worth although they are not stored yet. The
     * program never drops for the sake of a restart that may not come; if
     * one comes now, those positions are what it loses, and it counts them. */
    uint64_t read = vigil_ring_read_position(p->ring);
    uint64_t released = vigil_ring_released_position(p->ring);
    uint32_t slots = vigil_ring_slot_count(p->ring);
    if (read - released > slots / 2) {
        uint64_t upto = read - slots / 4;
        p->released_early += upto - released;
        vigil_ring_release(p->ring, upto, 0);
    }
    p->corrupt += report.corrupt;
    p->torn += report.torn;
    p->dropped += report.dropped;
    if (report.header_corrupt) {
        drop(ps, p, report.first_problem.message);
        return;
    }
    check_awaiting(ps, p, flags);
    if (report.first_problem.message[0] != '\0' && p->problems_logged++ < PROBLEMS_LOGGED_MAX)
        g_warning("process %d (%s): ring: %s (%" G_GUINT64_FORMAT " corrupt and %" G_GUINT64_FORMAT
                  " torn positions skipped so far)",
                  (int)p->pid, p->program, report.first_problem.message, p->corrupt, p->torn);
}

void vigild_processes_drain(struct vigild_processes *ps, struct vigild_process *p)
{
    drain(ps, p, 0);
}

void vigild_processes_drain_all(struct vigild_processes *ps)
{
    /* A dropped process leaves the table: collect first. */
    GPtrArray *all = collect_running(ps);
    for (guint i = 0; i < all->len; i++)
        drain(ps, g_ptr_array_index(all, i), 0);
    g_ptr_array_free(all, TRUE);
}

static void keep_ended(struct vigild_processes *ps, struct vigild_process *p)
{
    g_hash_table_remove(ps->by_id, &p->id);
    g_clear_handle_id(&p->pidfd_watch, g_source_remove);
    if (p->pidfd >= 0)
        close(p->pidfd);
    p->pidfd = -1;
    /* Everything is read: a consumer that attaches the ring after this one
     * (its memfd sent again in a late REGISTER) has nothing to read twice. */
    if (p->ring != NULL)
        vigil_ring_release(p->ring, vigil_ring_read_position(p->ring),
                           vigil_ring_read_position(p->ring));
    vigil_ring_close(p->ring);
    p->ring = NULL;
    p->ended_ns = vigil_clock_monotonic_ns();
    if (ps->on_end != NULL)
        ps->on_end(ps->user, p);
    g_queue_push_tail(ps->ended, p);
    while (g_queue_get_length(ps->ended) > ps->keep_ended)
        process_free(g_queue_pop_head(ps->ended));
}

static void drop(struct vigild_processes *ps, struct vigild_process *p, const char *why)
{
    g_warning("process %d (%s): dropped, its ring is corrupt: %s", (int)p->pid, p->program, why);
    p->state = VIGILD_PROCESS_DROPPED;
    p->dropped_reason = g_strdup(why);
    ps->dropped_total++;
    keep_ended(ps, p);
}

void vigild_processes_end(struct vigild_processes *ps, struct vigild_process *p)
{
    if (p->state != VIGILD_PROCESS_RUNNING)
        return;
    drain(ps, p, VIGIL_RING_PRODUCER_GONE);
    if (p->state != VIGILD_PROCESS_RUNNING)
        return; /* dropped by that drain */
    p->state = VIGILD_PROCESS_ENDED;
    ps->ended_total++;
    g_info("process %d (%s) ended: %" G_GUINT64_FORMAT " activities drained, %" G_GUINT64_FORMAT
           " positions skipped, %" G_GUINT64_FORMAT " dropped by its ring",
           (int)p->pid, p->program, p->activities, p->corrupt + p->torn, p->dropped);
    keep_ended(ps, p);
}

static gboolean on_pid_exit(gint fd, GIOCondition condition, gpointer user_data)
{
    (void)fd;
    (void)condition;
    struct pid_watch *w = user_data;
    struct vigild_process *p = vigild_processes_get(w->ps, w->id);
    if (p != NULL) {
        p->pidfd_watch = 0; /* removed by returning G_SOURCE_REMOVE */
        vigild_processes_end(w->ps, p);
    }
    return G_SOURCE_REMOVE;
}

void vigild_processes_sweep(struct vigild_processes *ps)
{
    guint n = g_hash_table_size(ps->by_id);
    struct pollfd *fds = g_new(struct pollfd, n);
    struct vigild_process **procs = g_new(struct vigild_process *, n);
    guint watched = 0;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, ps->by_id);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct vigild_process *p = value;
        if (p->pidfd < 0)
            continue;
        fds[watched] = (struct pollfd){.fd = p->pidfd, .events = POLLIN};
        procs[watched++] = p;
    }
    if (watched > 0 && poll(fds, watched, 0) > 0) {
        for (guint i = 0; i < watched; i++)
            if (fds[i].revents & POLLIN)
                vigild_processes_end(ps, procs[i]);
    }
    g_free(fds);
    g_free(procs);
}

void vigild_processes_set_keep_ended(struct vigild_processes *ps, guint keep_ended_count)
{
    ps->keep_ended = keep_ended_count;
    while (g_queue_get_length(ps->ended) > ps->keep_ended)
        process_free(g_queue_pop_head(ps->ended));
}

void vigild_processes_clear(struct vigild_processes *ps)
{
    if (ps->by_id == NULL)
        return;
    /* A last drain may drop a process, which takes it out of the table:
     * collect first. */
    GPtrArray *running = collect_running(ps);
    for (guint i = 0; i < running->len; i++) {
        struct vigild_process *p = g_ptr_array_index(running, i);
        /* Records read now would go nowhere; held ones stay in the ring
         * for the next vigild. */
        if (!ps->hold_records)
            drain(ps, p, 0);
        if (p->state == VIGILD_PROCESS_RUNNING) {
            g_hash_table_remove(ps->by_id, &p->id);
            process_free(p);
        }
    }
    g_ptr_array_free(running, TRUE);
    g_hash_table_destroy(ps->by_id);
    ps->by_id = NULL;
    while (!g_queue_is_empty(ps->ended))
        process_free(g_queue_pop_head(ps->ended));
    g_queue_free(ps->ended);
    g_clear_pointer(&ps->run_owners, vigild_owners_free);
}
