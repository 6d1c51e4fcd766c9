/* vigil — the rare paths after an intercepted call; the common one is
 * preload_call_end, inlined into every wrapper (preload.h). */
#include "preload.h"

/* A call on an excluded file is counted in the operation table like any
 * other, its time too (the report's totals hold it, as the README
 * promises: 64 MiB read from /dev/urandom in 0 ms would be a lie); it is
 * only not recorded, and has no file. */
void preload_count_excluded(struct preload_thread_counters *c, const struct preload_outcome *o,
                            uint64_t ticks)
{
    struct preload_op_counter *op = &c->ops[o->op];
    preload_count(c, &op->calls, 1);
    preload_count(c, &op->bytes, o->bytes_moved);
    preload_count(c, &op->ticks, ticks);
    if (o->failed)
        preload_count(c, &op->errors, 1);
    preload_count(c, &c->excluded, 1);
}

struct preload_pending *preload_count_file_change(struct preload_thread_counters *c,
                                                  uint32_t file_id)
{
    /* The first of equally old entries: free ones are taken in order, so
     * a thread's first two files get the entries on its first page. */
    struct preload_pending *p = NULL, *victim = preload_pending_entry(c, 0);
    for (int i = 0; i < PRELOAD_PENDING_FILES; i++) {
        struct preload_pending *e = preload_pending_entry(c, i);
        if (e->file == file_id) {
            p = e;
            break;
        }
        if (e->used_stamp < victim->used_stamp)
            victim = e;
    }
    if (p == NULL) {
        p = victim;
        preload_pending_flush(p);
        preload_file_stats_take(p, file_id);
        __atomic_store_n(&p->file, file_id, __ATOMIC_RELAXED);
    }
    p->used_stamp = ++c->pending_stamp;
    c->current = p;
    return p;
}

void preload_count_nested(struct preload_thread_counters *c, const struct preload_outcome *o,
                          uint32_t file_id, uint64_t start_ticks, uint64_t end_ticks)
{
    /* Only file bytes: the totals they are taken from hold no socket bytes
     * (those are the network's). */
    if (preload_op_is_network(o->op))
        return;
    /* The file's POSIX counters hold them: the bytes POSIX really moved. */
    unsigned layer = preload_stats_layer(o->op);
    if (file_id != VIGIL_FILE_NONE && layer < PRELOAD_STATS_LAYERS && !o->failed) {
        if (c->shared) {
            preload_file_stats_note_shared(file_id, o, start_ticks, end_ticks);
        } else {
            struct preload_pending *p = c->current;
            if (p->file != file_id)
                p = preload_count_file_change(c, file_id);
            unsigned kind = preload_stats_kind(o->op);
            preload_stats_note(&p->stats[layer], kind, o, start_ticks, end_ticks);
            /* The timeline holds the bytes POSIX moved: an MPI-IO call's
             * are these. */
            if (kind <= PRELOAD_KIND_WRITE)
                preload_timeline_note(c, kind == PRELOAD_KIND_WRITE, o->bytes_moved, end_ticks);
        }
    }
    enum vigil_op_class cls = vigil_op_class(o->op);
    if (cls == VIGIL_OP_READS)
        preload_count(c, &c->nested_read_bytes, o->bytes_moved);
    else if (cls == VIGIL_OP_WRITES)
        preload_count(c, &c->nested_written_bytes, o->bytes_moved);
}

void preload_timeline_enter(struct preload_thread_counters *c, uint64_t end_ticks)
{
    uint32_t shift = atomic_load_explicit(&preload_timeline_shift, memory_order_relaxed);
    uint64_t bin = (end_ticks - preload.start.ticks) >> shift;
    preload_timeline_move(c, bin, shift);
    c->timeline_bin_end = preload.start.ticks + ((bin + 1) << shift);
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
                          uint32_t file_id, uint64_t start_ticks, uint64_t end_ticks)
{
    uint64_t ticks = end_ticks - start_ticks;
    struct preload_op_counter *op = &c->ops[o->op];
    __atomic_fetch_add(&op->calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&op->bytes, o->bytes_moved, __ATOMIC_RELAXED);
    __atomic_fetch_add(&op->ticks, ticks, __ATOMIC_RELAXED);
    if (o->failed)
        __atomic_fetch_add(&op->errors, 1, __ATOMIC_RELAXED);
    enum vigil_op_class cls = vigil_op_class(o->op);
    if (preload_thread.parent_start_ticks != 0) {
        preload_count_nested(c, o, file_id, start_ticks, end_ticks);
        return;
    }
    if (file_id != VIGIL_FILE_NONE) {
        preload_file_count(file_id, 1, cls == VIGIL_OP_READS ? o->bytes_moved : 0,
                           cls == VIGIL_OP_WRITES ? o->bytes_moved : 0);
        preload_file_stats_note_shared(file_id, o, start_ticks, end_ticks);
    }
}

/* A kernel copy's activity, and its operation's counts, are its
 * destination's: one record names one descriptor. Its source was read all
 * the same, so the source file's counts and Darshan counters get the read
 * that read(2) would have given them: `cp` reads its input whether coreutils
 * copies through read(2) or copy_file_range. The totals stay the operation
 * table's (a copy is a write there). */
void preload_count_copy_source(int fd_in, int64_t offset, int64_t moved, uint64_t start_ticks)
{
    /* The call at the end of the source (0 bytes) read it as much as the
     * read(2) returning 0 it replaces (strace shows one call, on both
     * descriptors): a 0-byte read of the source, as Darshan counts that
     * read. */
    if (moved < 0 || fd_in < 0 || preload_thread.parent_start_ticks != 0)
        return;
    uint32_t file_id = preload_fd_get(fd_in);
    if (file_id == VIGIL_FILE_NONE || file_id == PRELOAD_FILE_EXCLUDED)
        return;
    int saved_errno = errno;
    struct preload_thread_counters *c = preload_thread.counters;
    if (c == NULL)
        c = preload_counters_claim();
    uint64_t end_ticks = vigil_ticks(preload.tick_source);
    /* Noted as the pread it amounts to: a POSIX read at `offset`. */
    const struct preload_outcome read = {
        .op = VIGIL_OP_POSIX_PREAD,
        .fd = fd_in,
        .result = moved,
        .bytes_asked = (uint64_t)moved,
        .bytes_moved = (uint64_t)moved,
        .offset_bytes = offset,
    };
    if (c->shared) {
        preload_file_count(file_id, 1, (uint64_t)moved, 0);
        preload_file_stats_note_shared(file_id, &read, start_ticks, end_ticks);
    } else {
        struct preload_pending *p = c->current;
        if (p->file != file_id)
            p = preload_count_file_change(c, file_id);
        preload_add(&p->calls, 1);
        preload_add(&p->read_bytes, (uint64_t)moved);
        preload_stats_note(&p->stats[0], PRELOAD_KIND_READ, &read, start_ticks, end_ticks);
        preload_timeline_note(c, 0, (uint64_t)moved, end_ticks);
    }
    errno = saved_errno;
}
