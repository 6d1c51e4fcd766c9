/* vigil — the rare paths after an intercepted call; the common one is
 * preload_call_end, inlined into every wrapper (preload.h). */
#include "preload.h"

void preload_count_excluded(struct preload_thread_counters *c)
{
    preload_count(c, &c->excluded, 1);
}

void preload_count_file_change(struct preload_thread_counters *c, uint32_t file_id)
{
    preload_counters_flush_pending(c);
    __atomic_store_n(&c->pending_file, file_id, __ATOMIC_RELAXED);
}

void preload_count_nested(struct preload_thread_counters *c, const struct preload_outcome *o)
{
    /* Only file bytes: the totals they are taken from hold no socket bytes
     * (those are the network's). */
    if (preload_op_is_network(o->op))
        return;
    enum vigil_op_class cls = vigil_op_class(o->op);
    if (cls == VIGIL_OP_READS)
        preload_count(c, &c->nested_read_bytes, o->bytes_moved);
    else if (cls == VIGIL_OP_WRITES)
        preload_count(c, &c->nested_written_bytes, o->bytes_moved);
}

void preload_announce(struct preload_thread_counters *c, uint32_t file_id)
{
    /* Remembered per thread only once it is in the ring; the shared block
     * remembers nothing (its threads would race on it). */
    if (preload_file_announce(file_id) && !c->shared)
        c->announced_file = file_id;
}

/* The block many threads share once the pool is used up: atomic adds, and
 * straight to the file's counters. */
void preload_count_shared(struct preload_thread_counters *c, const struct preload_outcome *o,
                          uint32_t file_id, uint64_t ticks)
{
    struct preload_op_counter *op = &c->ops[o->op];
    __atomic_fetch_add(&op->calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&op->bytes, o->bytes_moved, __ATOMIC_RELAXED);
    __atomic_fetch_add(&op->ticks, ticks, __ATOMIC_RELAXED);
    if (o->failed)
        __atomic_fetch_add(&op->errors, 1, __ATOMIC_RELAXED);
    enum vigil_op_class cls = vigil_op_class(o->op);
    if (file_id != VIGIL_FILE_NONE)
        preload_file_count(file_id, 1, cls == VIGIL_OP_READS ? o->bytes_moved : 0,
                           cls == VIGIL_OP_WRITES ? o->bytes_moved : 0);
}
