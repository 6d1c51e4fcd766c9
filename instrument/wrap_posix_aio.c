/* vigil — POSIX asynchronous I/O: aio_read, aio_write, lio_listio and
 * aio_return (the 64-bit variants count as their base call).
 *
 * glibc's helper threads do a request's I/O with its internal pread and
 * pwrite, which no wrapper sees; so a request is remembered at its
 * submission and counted, as Darshan counts it, when the program collects
 * its result with aio_return: one call of aio_read or aio_write, timed from
 * its submission to that return, at the request's offset, with the bytes
 * aio_return gives. A request whose result is never collected is not
 * counted. Open MPI's OMPIO does its nonblocking MPI-IO through these, and
 * completes it inside MPI_Wait: a request submitted inside an MPI-IO call is
 * counted under that call (its POSIX level), whenever it is collected.
 *
 * The requests in flight are in a small lock-free table keyed by the
 * aiocb's address (a signal handler may call aio_return; a lock could
 * deadlock it). A table full of requests nobody collected leaves the next
 * ones uncounted; aio is not a hot path, and a miss scans the table. The
 * table's size is a guess, not a bound taken from OMPIO or glibc: a
 * program with more requests in flight has the extra ones uncounted, and
 * is told so once on stderr. */
#include <aio.h>
#include <unistd.h>

#include "preload.h"

PRELOAD_REAL_SLOT(aio_read);
PRELOAD_REAL_SLOT(aio_read64);
PRELOAD_REAL_SLOT(aio_write);
PRELOAD_REAL_SLOT(aio_write64);
PRELOAD_REAL_SLOT(lio_listio);
PRELOAD_REAL_SLOT(lio_listio64);
PRELOAD_REAL_SLOT(aio_return);
PRELOAD_REAL_SLOT(aio_return64);

/* aiocb64 is aiocb on the 64-bit systems the library is built for: one
 * table serves both. */
_Static_assert(sizeof(struct aiocb) == sizeof(struct aiocb64), "aiocb64 differs from aiocb");

#define AIO_SLOTS   4096u /* a power of two: requests in flight at once */
#define AIO_FILLING 1u    /* a key while its slot is being written or read */

_Static_assert(AIO_SLOTS == 4096, "remember()'s message names the table's size");

struct aio_request {
    _Atomic uintptr_t key; /* the aiocb's address; 0: free */
    uint64_t start_ticks;
    uint64_t parent_start_ticks; /* the MPI-IO call it was submitted in; 0: none */
    int64_t offset;
    uint64_t bytes_asked;
    int fd;
    unsigned op;
};

static struct aio_request requests[AIO_SLOTS];
static _Atomic uint32_t requests_held;

static uint32_t slot_of(uintptr_t key)
{
    /* aiocbs are 8-aligned and often neighbours in an array. */
    return (uint32_t)((key >> 3) * 0x9E3779B97F4A7C15ull >> 40) & (AIO_SLOTS - 1);
}

/* The slot holding `key`, claimed (its key AIO_FILLING), or NULL. */
static struct aio_request *claim(uintptr_t key)
{
    if (atomic_load_explicit(&requests_held, memory_order_acquire) == 0)
        return NULL;
    uint32_t first = slot_of(key);
    for (uint32_t i = 0; i < AIO_SLOTS; i++) {
        struct aio_request *r = &requests[(first + i) & (AIO_SLOTS - 1)];
        uintptr_t expected = key;
        if (atomic_load_explicit(&r->key, memory_order_relaxed) == key &&
            atomic_compare_exchange_strong_explicit(&r->key, &expected, AIO_FILLING,
                                                    memory_order_acquire, memory_order_relaxed))
            return r;
    }
    return NULL;
}

static void release(struct aio_request *r)
{
    atomic_store_explicit(&r->key, 0, memory_order_release);
    atomic_fetch_sub_explicit(&requests_held, 1, memory_order_relaxed);
}

/* A request submitted now. An aiocb submitted again without its result
 * collected replaces its earlier request, which is then never counted. */
static void remember(const struct aiocb *cb, unsigned op, uint64_t start_ticks)
{
    uintptr_t key = (uintptr_t)cb;
    struct aio_request *r = claim(key);
    if (r != NULL)
        release(r);
    r = NULL;
    uint32_t first = slot_of(key);
    for (uint32_t i = 0; i < AIO_SLOTS && r == NULL; i++) {
        struct aio_request *free_slot = &requests[(first + i) & (AIO_SLOTS - 1)];
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong_explicit(&free_slot->key, &expected, AIO_FILLING,
                                                    memory_order_acquire, memory_order_relaxed))
            r = free_slot;
    }
    if (r == NULL) {
        static atomic_flag told = ATOMIC_FLAG_INIT;
        static const char message[] = "vigil: more POSIX aio requests in flight than the "
                                      "4096 it follows: the others are not counted\n";
        if (!atomic_flag_test_and_set(&told)) {
            int saved_errno = errno;
            ssize_t written = write(2, message, sizeof message - 1);
            (void)written; /* with stderr gone there is nowhere to say it */
            errno = saved_errno;
        }
        return;
    }
    r->start_ticks = start_ticks;
    r->parent_start_ticks = PRELOAD_SELF.parent_start_ticks;
    r->offset = (int64_t)cb->aio_offset;
    r->bytes_asked = cb->aio_nbytes;
    r->fd = cb->aio_fildes;
    r->op = op;
    atomic_fetch_add_explicit(&requests_held, 1, memory_order_relaxed);
    atomic_store_explicit(&r->key, key, memory_order_release);
}

/* After aio_read or aio_write: the request, if the call took it. The
 * call itself counts nothing; errno is left as the call set it. */
static void submitted(int ret, const struct aiocb *cb, unsigned op, const struct preload_call *call)
{
    if (ret == 0)
        remember(cb, op, call->start_ticks);
    PRELOAD_SELF.in_call = 0;
}

/* After lio_listio: each read and write of the list the call submitted,
 * all when it succeeded. It may have submitted some or all when it failed
 * with EAGAIN or EIO (aio_error tells which), and all of them when a
 * signal interrupted its wait (EINTR); those are remembered too: one that
 * was not submitted is never collected, and only holds a slot until its
 * aiocb is used again. EINVAL submitted none. */
static void listed(int ret, struct aiocb *const list[], int count, const struct preload_call *call)
{
    int saved_errno = errno;
    bool some_submitted =
        ret == 0 || saved_errno == EAGAIN || saved_errno == EIO || saved_errno == EINTR;
    if (list != NULL && some_submitted) {
        for (int i = 0; i < count; i++) {
            if (list[i] == NULL)
                continue;
            if (list[i]->aio_lio_opcode == LIO_READ)
                remember(list[i], VIGIL_OP_POSIX_AIO_READ, call->start_ticks);
            else if (list[i]->aio_lio_opcode == LIO_WRITE)
                remember(list[i], VIGIL_OP_POSIX_AIO_WRITE, call->start_ticks);
        }
    }
    PRELOAD_SELF.in_call = 0;
    errno = saved_errno;
}

/* After aio_return: the request's result, counted now as the call it was,
 * under the MPI-IO call that submitted it, if any. */
static void collected(ssize_t ret, const struct aiocb *cb, struct preload_call *call)
{
    struct aio_request *r = claim((uintptr_t)cb);
    if (r == NULL) {
        PRELOAD_SELF.in_call = 0;
        return;
    }
    unsigned op = r->op;
    int fd = r->fd;
    int64_t offset = r->offset;
    uint64_t bytes_asked = r->bytes_asked, parent = r->parent_start_ticks;
    call->start_ticks = r->start_ticks;
    release(r);
    /* Through PRELOAD_SELF, as preload_call_end reads it: the compiler
     * need not take a store through preload_thread for the same memory. */
    uint64_t outer_parent = PRELOAD_SELF.parent_start_ticks;
    PRELOAD_SELF.parent_start_ticks = parent;
    preload_end_data(call, op, fd, ret, bytes_asked, offset);
    PRELOAD_SELF.parent_start_ticks = outer_parent;
}

PRELOAD_WRAP(int, aio_read, (struct aiocb * cb), (cb),
             submitted(ret, cb, VIGIL_OP_POSIX_AIO_READ, &call))

PRELOAD_WRAP(int, aio_read64, (struct aiocb64 * cb), (cb),
             submitted(ret, (const struct aiocb *)cb, VIGIL_OP_POSIX_AIO_READ, &call))

PRELOAD_WRAP(int, aio_write, (struct aiocb * cb), (cb),
             submitted(ret, cb, VIGIL_OP_POSIX_AIO_WRITE, &call))

PRELOAD_WRAP(int, aio_write64, (struct aiocb64 * cb), (cb),
             submitted(ret, (const struct aiocb *)cb, VIGIL_OP_POSIX_AIO_WRITE, &call))

PRELOAD_WRAP(int, lio_listio,
             (int mode, struct aiocb *const list[], int count, struct sigevent *sig),
             (mode, list, count, sig), listed(ret, list, count, &call))

PRELOAD_WRAP(int, lio_listio64,
             (int mode, struct aiocb64 *const list[], int count, struct sigevent *sig),
             (mode, list, count, sig), listed(ret, (struct aiocb *const *)list, count, &call))

PRELOAD_WRAP(ssize_t, aio_return, (struct aiocb * cb), (cb), collected(ret, cb, &call))

PRELOAD_WRAP(ssize_t, aio_return64, (struct aiocb64 * cb), (cb),
             collected(ret, (const struct aiocb *)cb, &call))

void preload_aio_reset_after_fork(void)
{
    /* A child inherits no request in flight (POSIX). */
    for (uint32_t i = 0; i < AIO_SLOTS; i++)
        atomic_store_explicit(&requests[i].key, 0, memory_order_relaxed);
    atomic_store_explicit(&requests_held, 0, memory_order_relaxed);
}
