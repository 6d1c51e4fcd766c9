/* vigil — what happens after every intercepted call: counters, the file's
 * counts, and one activity record into the ring. */
#include "preload.h"

static void count_file(struct preload_thread_counters *c, uint32_t file_id,
                       const struct preload_outcome *o)
{
    enum vigil_op_class cls = vigil_op_class(o->op);
    uint64_t read_bytes = cls == VIGIL_OP_READS ? o->bytes_moved : 0;
    uint64_t written_bytes = cls == VIGIL_OP_WRITES ? o->bytes_moved : 0;
    if (c->shared) {
        preload_file_count(file_id, 1, read_bytes, written_bytes);
        return;
    }
    if (c->pending_file != file_id) {
        preload_counters_flush_pending(c);
        __atomic_store_n(&c->pending_file, file_id, __ATOMIC_RELAXED);
    }
    preload_count(c, &c->pending_calls, 1);
    preload_count(c, &c->pending_read_bytes, read_bytes);
    preload_count(c, &c->pending_written_bytes, written_bytes);
}

static void record(struct preload_thread_counters *c, const struct preload_call *call,
                   const struct preload_outcome *o, uint32_t file_id, uint64_t end_ticks,
                   int errno_value)
{
    struct vigil_ring *ring = preload.ring;
    if (file_id != VIGIL_FILE_NONE)
        preload_file_announce(file_id);
    struct vigil_activity a = {
        .record_type = VIGIL_RECORD_ACTIVITY,
        .layer = (uint8_t)vigil_op_layer(o->op),
        .op = (uint16_t)o->op,
        .file_id = file_id,
        .start_ns = call->start_ticks, /* ticks: the ring's reader converts them */
        .end_ns = end_ticks,
        .offset_bytes = o->offset_bytes,
        .bytes_asked = o->bytes_asked,
        .result = o->result,
        .errno_value = o->failed ? errno_value : 0,
        .thread_id = preload_thread.thread_id,
    };
    if (vigil_ring_push(ring, &a))
        preload_count(c, &c->recorded, 1);
    else
        preload_count(c, &c->dropped, 1);
}

void preload_call_end(const struct preload_call *call, const struct preload_outcome *o)
{
    int errno_value = errno;
    uint64_t end_ticks = vigil_ticks(preload.tick_source);
    struct preload_thread_counters *c = preload_thread.counters;
    if (PRELOAD_UNLIKELY(c == NULL))
        c = preload_counters_claim();

    uint32_t file_id = o->fd >= 0 ? preload_fd_get(o->fd) : o->file_id;
    if (file_id == PRELOAD_FILE_EXCLUDED) {
        preload_count(c, &c->excluded, 1);
    } else {
        struct preload_op_counter *op = &c->ops[o->op];
        preload_count(c, &op->calls, 1);
        preload_count(c, &op->bytes, o->bytes_moved);
        preload_count(c, &op->ticks, end_ticks - call->start_ticks);
        if (o->failed)
            preload_count(c, &op->errors, 1);
        if (file_id != VIGIL_FILE_NONE)
            count_file(c, file_id, o);
        record(c, call, o, file_id, end_ticks, errno_value);
    }
    preload_thread.in_call = 0;
    errno = errno_value;
}
