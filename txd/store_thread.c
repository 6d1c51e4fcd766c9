/* vigil-txd — the store on a thread of its own, so that PostgreSQL and the
 * main loop work at the same time: while the database takes a group
 * (COPY, COMMIT), the loop goes on receiving and decoding the next
 * batches, answering handshakes and sending acknowledgements.
 *
 * Once the thread runs, it alone uses the txd_store: every statement on
 * its connection (the groups, the system state, the maintenance step,
 * reconnecting) is made here, and the roll-up levels' pass, which has a
 * thread and connection of its own (store_levels.c), is started from here. Why not a lock around
 * the store instead: the loop would then wait for it whenever a group is
 * on its way, which is what this thread is for, and every cache of the
 * store would need it too. With one owner, store.c stays synchronous and
 * lock-free, and the system state and the timers wait at most one group.
 * The connection at start is made before the thread starts (a schema of
 * another version stops vigil-txd there), the counts are read after it
 * ends.
 *
 * One job at a time: the main loop posts one and posts no other until it
 * has taken this one back. The thread says it is done through an eventfd
 * that the loop's zmq_poll watches; the ZeroMQ sockets stay the loop's.
 * What a job points at (the group's batches) stays the loop's and
 * unchanged until the job is taken back. The lock and condition are
 * pthread's, not GLib's (futexes of its own), so that ThreadSanitizer
 * sees the hand-over. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "txd.h"

struct txd_store_thread {
    struct txd_store *store;
    pthread_t thread;
    gboolean running;
    int done_fd;
    pthread_mutex_t lock;
    pthread_cond_t posted;
    /* Under lock: */
    struct txd_store_job *job; /* posted, not yet done */
    struct txd_store_job *done;
    gboolean stopping;
};

static void run_job(struct txd_store *store, struct txd_store_job *job)
{
    if (job->n > 0)
        job->result = txd_store_group(store, job->items, job->n, &job->error);
    if (job->has_state)
        job->state_stored =
            txd_store_system_state(store, &job->state, job->state_realtime_ns, &job->state_error);
    /* The store's timers, as the loop ran them at each of its turns: the
     * loop posts a job at least once a cycle. */
    txd_store_maintain_when_due(store);
    txd_store_levels_when_due(store);
}

static void *thread_main(void *data)
{
    struct txd_store_thread *t = data;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (t->job == NULL && !t->stopping)
            pthread_cond_wait(&t->posted, &t->lock);
        struct txd_store_job *job = t->job;
        /* A job posted before the stop is finished first: its batches are
         * acknowledged if it commits. */
        if (job == NULL)
            break;
        pthread_mutex_unlock(&t->lock);
        run_job(t->store, job);
        pthread_mutex_lock(&t->lock);
        t->job = NULL;
        t->done = job;
        uint64_t one = 1;
        /* Only fails when the counter would overflow: it is read each time. */
        if (write(t->done_fd, &one, sizeof one) != sizeof one)
            g_warning("cannot wake the main loop: %s", g_strerror(errno));
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

struct txd_store_thread *txd_store_thread_new(struct txd_store *store, GError **error)
{
    struct txd_store_thread *t = g_new0(struct txd_store_thread, 1);
    t->store = store;
    t->done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (t->done_fd < 0) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_REFUSE, "cannot make an eventfd: %s",
                    g_strerror(errno));
        g_free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->posted, NULL);
    int failed = pthread_create(&t->thread, NULL, thread_main, t);
    if (failed != 0) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_REFUSE, "cannot start the store's thread: %s",
                    g_strerror(failed));
        close(t->done_fd);
        pthread_mutex_destroy(&t->lock);
        pthread_cond_destroy(&t->posted);
        g_free(t);
        return NULL;
    }
    t->running = TRUE;
    return t;
}

int txd_store_thread_fd(const struct txd_store_thread *t)
{
    return t->done_fd;
}

void txd_store_thread_post(struct txd_store_thread *t, struct txd_store_job *job)
{
    job->result = TXD_STORED;
    job->error = NULL;
    job->state_stored = FALSE;
    job->state_error = NULL;
    pthread_mutex_lock(&t->lock);
    g_assert(t->job == NULL && t->done == NULL);
    t->job = job;
    pthread_cond_signal(&t->posted);
    pthread_mutex_unlock(&t->lock);
}

struct txd_store_job *txd_store_thread_take(struct txd_store_thread *t)
{
    uint64_t count;
    /* EAGAIN: nothing was done since the last read. */
    while (read(t->done_fd, &count, sizeof count) < 0 && errno == EINTR)
        ;
    pthread_mutex_lock(&t->lock);
    struct txd_store_job *job = t->done;
    t->done = NULL;
    pthread_mutex_unlock(&t->lock);
    return job;
}

void txd_store_thread_stop(struct txd_store_thread *t)
{
    if (!t->running)
        return;
    pthread_mutex_lock(&t->lock);
    t->stopping = TRUE;
    pthread_cond_signal(&t->posted);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    t->running = FALSE;
}

void txd_store_thread_free(struct txd_store_thread *t)
{
    if (t == NULL)
        return;
    txd_store_thread_stop(t);
    close(t->done_fd);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->posted);
    g_free(t);
}
