/* vigil — per-thread counters of the preload library.
 *
 * A thread's first intercepted call claims a block from a pool mapped at
 * start-up; from then on its counts are plain stores into its own block,
 * with no atomic operation and no false sharing. Blocks outlive their
 * threads, so the counts of a thread that has exited are still there for the
 * report. When the pool runs out (a program that has created thousands of
 * threads), later threads share one block with atomic adds: slower, still
 * exact. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload.h"

#define POOL_BLOCKS 4096u /* 64 MiB of address space, touched only as used */

static struct preload_thread_counters *pool; /* POOL_BLOCKS, then the shared block */
static _Atomic uint32_t pool_claimed;

bool preload_counters_init(void)
{
    size_t bytes = (POOL_BLOCKS + 1) * sizeof *pool;
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
        return false;
    pool = map;
    pool[POOL_BLOCKS].shared = true;
    return true;
}

static uint32_t blocks_in_use(void)
{
    uint32_t claimed = atomic_load_explicit(&pool_claimed, memory_order_acquire);
    return claimed < POOL_BLOCKS ? claimed : POOL_BLOCKS;
}

struct preload_thread_counters *preload_counters_claim(void)
{
    uint32_t index = atomic_fetch_add_explicit(&pool_claimed, 1, memory_order_acq_rel);
    struct preload_thread_counters *c = index < POOL_BLOCKS ? &pool[index] : &pool[POOL_BLOCKS];
    if (!c->shared) /* the shared block holds no pending file */
        c->current = preload_pending_entry(c, 0);
    preload_thread.counters = c;
    /* Once per thread: the records carry it. */
    int saved_errno = errno;
    preload_thread.thread_id = (uint32_t)gettid();
    preload_thread.errno_at = &errno;
    errno = saved_errno;
    return c;
}

void preload_pending_flush(struct preload_pending *p)
{
    if (p->file != VIGIL_FILE_NONE) {
        if (p->calls > 0)
            preload_file_count(p->file, p->calls, p->read_bytes, p->written_bytes);
        preload_file_stats_flush(p);
    }
    __atomic_store_n(&p->file, VIGIL_FILE_NONE, __ATOMIC_RELAXED);
    p->used_stamp = 0;
    p->calls = p->read_bytes = p->written_bytes = 0;
}

static uint64_t load(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

static void add_block(struct preload_totals *out, const struct preload_thread_counters *c)
{
    /* Every counted call not excluded writes its record or counts a drop
     * (preload_call_end): the records are what is left. */
    uint64_t calls = 0;
    for (unsigned op = 0; op <= VIGIL_OP_MAX_ID; op++) {
        calls += load(&c->ops[op].calls);
        out->ops[op].calls += load(&c->ops[op].calls);
        out->ops[op].bytes += load(&c->ops[op].bytes);
        out->ops[op].ticks += load(&c->ops[op].ticks);
        out->ops[op].errors += load(&c->ops[op].errors);
    }
    out->recorded += calls - load(&c->excluded) - load(&c->dropped);
    out->dropped += load(&c->dropped);
    out->excluded += load(&c->excluded);
    out->nested_read_bytes += load(&c->nested_read_bytes);
    out->nested_written_bytes += load(&c->nested_written_bytes);
}

void preload_counters_sum(struct preload_totals *out)
{
    memset(out, 0, sizeof *out);
    uint32_t used = blocks_in_use();
    for (uint32_t i = 0; i < used; i++)
        add_block(out, &pool[i]);
    add_block(out, &pool[POOL_BLOCKS]);
}

void preload_counters_visit_pending(preload_pending_fn file_fn, preload_block_fn thread_fn,
                                    void *user)
{
    uint32_t used = blocks_in_use();
    for (uint32_t i = 0; i < used; i++) {
        struct preload_thread_counters *c = &pool[i];
        for (int e = 0; e < PRELOAD_PENDING_FILES; e++) {
            const struct preload_pending *p = preload_pending_entry(c, e);
            uint32_t file_id = __atomic_load_n(&p->file, __ATOMIC_RELAXED);
            if (file_id != VIGIL_FILE_NONE)
                file_fn(file_id, p, user);
        }
        thread_fn(c, user);
    }
}

void preload_counters_reset_after_fork(void)
{
    /* The child starts its own counts; the parent's threads do not exist
     * here, and neither do their claims on the pool. */
    uint32_t used = blocks_in_use();
    memset(pool, 0, used * sizeof *pool);
    memset(&pool[POOL_BLOCKS], 0, sizeof pool[POOL_BLOCKS]);
    pool[POOL_BLOCKS].shared = true;
    atomic_store_explicit(&pool_claimed, 0, memory_order_release);
    preload_thread.counters = NULL;
    preload_thread.thread_id = 0;
}
