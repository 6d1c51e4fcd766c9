/* vigil-txd — the store on a thread of its own, so that PostgreSQL and the
 * main loop work at the same time: while the database takes a group
 * (COPY, COMMIT), the loop goes on receiving and decoding the next
 * batches, answering handshakes and sending acknowledgements.
 *
 * Once the thread runs, it alone uses the txd_store: every statement on
 * its connections (the groups, the system state, the maintenance step,
 * the roll-up levels, reconnecting) is made here, so that no connection
 * and no cache of the store is ever used by two threads and store.c stays
 * synchronous and lock-free. The connection at start is made before the
 * thread starts, the counts are read after it ends.
 *
 * One job at a time: the main loop posts one and posts no other until it
 * has taken this one back. The thread says it is done through an eventfd
 * that the loop's zmq_poll watches; the ZeroMQ sockets stay the loop's.
 * What a job points at (the group's batches) stays the loop's and
 * unchanged until the job is taken back. */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "txd.h"

struct txd_store_thread {
    struct txd_store *store;
    GThread *thread;
    int done_fd;
    GMutex lock;
    GCond posted;
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

static gpointer thread_main(gpointer data)
{
    struct txd_store_thread *t = data;
    g_mutex_lock(&t->lock);
    for (;;) {
        while (t->job == NULL && !t->stopping)
            g_cond_wait(&t->posted, &t->lock);
        struct txd_store_job *job = t->job;
        /* A job posted before the stop is finished first: its batches are
         * acknowledged if it commits. */
        if (job == NULL)
            break;
        g_mutex_unlock(&t->lock);
        run_job(t->store, job);
        g_mutex_lock(&t->lock);
        t->job = NULL;
        t->done = job;
        uint64_t one = 1;
        /* Only fails when the counter would overflow: it is read each time. */
        if (write(t->done_fd, &one, sizeof one) != sizeof one)
            g_warning("cannot wake the main loop: %s", g_strerror(errno));
    }
    g_mutex_unlock(&t->lock);
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
    g_mutex_init(&t->lock);
    g_cond_init(&t->posted);
    t->thread = g_thread_try_new("vigil-txd-store", thread_main, t, error);
    if (t->thread == NULL) {
        close(t->done_fd);
        g_mutex_clear(&t->lock);
        g_cond_clear(&t->posted);
        g_free(t);
        return NULL;
    }
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
    g_mutex_lock(&t->lock);
    g_assert(t->job == NULL && t->done == NULL);
    t->job = job;
    g_cond_signal(&t->posted);
    g_mutex_unlock(&t->lock);
}

struct txd_store_job *txd_store_thread_take(struct txd_store_thread *t)
{
    uint64_t count;
    /* EAGAIN: nothing was done since the last read. */
    while (read(t->done_fd, &count, sizeof count) < 0 && errno == EINTR)
        ;
    g_mutex_lock(&t->lock);
    struct txd_store_job *job = t->done;
    t->done = NULL;
    g_mutex_unlock(&t->lock);
    return job;
}

void txd_store_thread_stop(struct txd_store_thread *t)
{
    if (t->thread == NULL)
        return;
    g_mutex_lock(&t->lock);
    t->stopping = TRUE;
    g_cond_signal(&t->posted);
    g_mutex_unlock(&t->lock);
    g_thread_join(t->thread);
    t->thread = NULL;
}

void txd_store_thread_free(struct txd_store_thread *t)
{
    if (t == NULL)
        return;
    txd_store_thread_stop(t);
    close(t->done_fd);
    g_mutex_clear(&t->lock);
    g_cond_clear(&t->posted);
    g_free(t);
}
