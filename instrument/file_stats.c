/* vigil — per-file statistics to Darshan's depth, and the process's
 * timeline of bytes (the hot part is inline in preload.h).
 *
 * Every interned file has a record here, in a table mapped at start-up
 * (one per file slot, touched only when used: bounded memory whatever the
 * program opens). A thread adds to the counters of the file it works on in
 * its own block (an entry of preload_thread_counters.pending, one for each
 * of the few files it used last), with plain stores; when a file's entry
 * is evicted (the thread moves to a file it holds no entry for) it is merged
 * into the file's record under the record's spin lock: the rare path. The
 * report merges what threads still hold. What must be one per file, not
 * per thread (where the last access ended and of which kind, for the
 * sequence and the read/write switches; its mode, block size and rare
 * counts), is in the record's shared part, which each access reads and
 * exchanges with single atomic instructions. */
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>

#include "preload.h"

struct file_record {
    _Atomic int lock;
    struct preload_layer_stats layer[PRELOAD_STATS_LAYERS];
    struct preload_file_shared shared[PRELOAD_STATS_LAYERS];
};

static struct file_record *records; /* by file id - 1 */

_Atomic uint32_t preload_timeline_shift;
static _Atomic uint64_t timeline_bytes[2][PRELOAD_TIMELINE_BINS];
static _Atomic int timeline_lock;

/* ---- records -------------------------------------------------------------------------------- */

/* Where the stats of a file without a record (the table full) order
 * their accesses: any thread's, all such files together. */
static struct preload_file_shared no_record = {.last_end = {1, 1}};

static void layer_clear(struct preload_layer_stats *l)
{
    struct preload_file_shared *shared = l->shared;
    memset(l, 0, sizeof *l);
    l->shared = shared;
}

static void shared_clear(struct preload_file_shared *f)
{
    memset(f, 0, sizeof *f);
    atomic_store_explicit(&f->last_end[0], 1, memory_order_relaxed);
    atomic_store_explicit(&f->last_end[1], 1, memory_order_relaxed);
}

static bool layer_used(const struct preload_layer_stats *l)
{
    for (int k = 0; k < PRELOAD_KIND_COUNT; k++)
        if (l->count[k] != 0)
            return true;
    /* A read or write (counted by its histogram), an fdatasync (counted
     * in the shared part). */
    return l->last_io != 0 || l->time[2] != 0;
}

static uint64_t min_set(uint64_t a, uint64_t b)
{
    return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

void preload_layer_merge(struct preload_layer_stats *into, const struct preload_layer_stats *from)
{
    for (int k = 0; k < PRELOAD_KIND_COUNT; k++)
        into->count[k] += from->count[k];
    for (int rw = 0; rw < 2; rw++) {
        into->bytes[rw] += from->bytes[rw];
        if (from->max_end[rw] > into->max_end[rw])
            into->max_end[rw] = from->max_end[rw];
        if (from->max_time[rw] > into->max_time[rw]) {
            into->max_time[rw] = from->max_time[rw];
            into->max_time_size[rw] = from->max_time_size[rw];
        }
        into->forward[rw] += from->forward[rw];
        into->consec[rw] += from->consec[rw];
        for (int b = 0; b < PRELOAD_SIZE_BINS; b++)
            into->hist[rw][b] += from->hist[rw][b];
    }
    for (int t = 0; t < 3; t++)
        into->time[t] += from->time[t];
    into->first_open = min_set(into->first_open, from->first_open);
    into->first_io = min_set(into->first_io, from->first_io);
    into->last_close = max_u64(into->last_close, from->last_close);
    into->last_io = max_u64(into->last_io, from->last_io);
    into->file_not_aligned += from->file_not_aligned;
    into->mem_not_aligned += from->mem_not_aligned;
    preload_common_merge(&into->sizes, &from->sizes);
    preload_common_merge(&into->strides, &from->strides);
}

static struct file_record *record_of(uint32_t file_id)
{
    if (records == NULL || file_id == VIGIL_FILE_NONE || file_id > PRELOAD_FILE_SLOTS)
        return NULL;
    return &records[file_id - 1];
}

static void record_lock(struct file_record *r)
{
    while (atomic_exchange_explicit(&r->lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&r->lock, memory_order_relaxed))
            __builtin_ia32_pause();
}

static void record_unlock(struct file_record *r)
{
    atomic_store_explicit(&r->lock, 0, memory_order_release);
}

void preload_file_stats_flush(struct preload_pending *p)
{
    struct file_record *r = record_of(p->file);
    bool any = false;
    for (int layer = 0; layer < PRELOAD_STATS_LAYERS; layer++)
        any |= layer_used(&p->stats[layer]);
    if (!any)
        return;
    if (r != NULL) {
        record_lock(r);
        for (int layer = 0; layer < PRELOAD_STATS_LAYERS; layer++)
            if (layer_used(&p->stats[layer]))
                preload_layer_merge(&r->layer[layer], &p->stats[layer]);
        record_unlock(r);
    }
    for (int layer = 0; layer < PRELOAD_STATS_LAYERS; layer++)
        layer_clear(&p->stats[layer]);
}

void preload_file_stats_take(struct preload_pending *p, uint32_t file_id)
{
    /* Sequential access is judged against where the file's previous
     * access ended, whichever thread made it: in the record's shared part. */
    struct file_record *r = record_of(file_id);
    for (int layer = 0; layer < PRELOAD_STATS_LAYERS; layer++) {
        struct preload_layer_stats *l = &p->stats[layer];
        if (layer_used(l))
            layer_clear(l);
        l->shared = r != NULL ? &r->shared[layer] : &no_record;
    }
}

void preload_file_stats_note_shared(uint32_t file_id, const struct preload_outcome *o,
                                    uint64_t start_ticks, uint64_t end_ticks)
{
    struct file_record *r = record_of(file_id);
    unsigned layer = preload_stats_layer(o->op);
    if (r == NULL || layer >= PRELOAD_STATS_LAYERS || o->failed)
        return;
    record_lock(r);
    r->layer[layer].shared = &r->shared[layer];
    preload_stats_note(&r->layer[layer], preload_stats_kind(o->op), o, start_ticks, end_ticks);
    record_unlock(r);
    unsigned kind = preload_stats_kind(o->op);
    if (kind == PRELOAD_KIND_READ || kind == PRELOAD_KIND_WRITE)
        preload_timeline_note_shared(kind == PRELOAD_KIND_WRITE, o->bytes_moved, end_ticks);
}

void preload_file_stats_clear(uint32_t file_id)
{
    struct file_record *r = record_of(file_id);
    if (r == NULL)
        return;
    for (int layer = 0; layer < PRELOAD_STATS_LAYERS; layer++) {
        layer_clear(&r->layer[layer]);
        shared_clear(&r->shared[layer]);
        r->layer[layer].shared = &r->shared[layer];
    }
}

/* Darshan takes the block size of the file's mount (statfs), 1 MiB on
 * Lustre, whose f_bsize says 4 KiB. */
#define LUSTRE_SUPER_MAGIC 0x0BD00BD0

uint64_t preload_block_bytes(long fs_type, long block_size)
{
    if (fs_type == LUSTRE_SUPER_MAGIC)
        return UINT64_C(1) << 20;
    return block_size > 0 ? (uint64_t)block_size : 0;
}

/* The file's block size, at its first open (or fileno): one fstatfs. */
static void take_alignment(struct preload_file_shared *f, int fd)
{
    if (atomic_load_explicit(&f->alignment_bytes, memory_order_relaxed) != 0)
        return;
    struct statfs fs;
    if (fd < 0 || fstatfs(fd, &fs) != 0)
        return;
    uint64_t bytes = preload_block_bytes((long)fs.f_type, (long)fs.f_bsize);
    /* A block size that is not a power of two (none seen) is reported
     * but not checked: the hot path has a mask, not a division. */
    atomic_store_explicit(&f->alignment_mask,
                          bytes != 0 && (bytes & (bytes - 1)) == 0 ? bytes - 1 : 0,
                          memory_order_relaxed);
    atomic_store_explicit(&f->alignment_bytes, bytes, memory_order_relaxed);
}

void preload_file_opened(uint32_t file_id, int fd, int64_t mode)
{
    struct file_record *r = record_of(file_id);
    if (r == NULL)
        return;
    if (mode != 0) /* as Darshan: an open without a mode leaves the last */
        atomic_store_explicit(&r->shared[0].mode, mode, memory_order_relaxed);
    take_alignment(&r->shared[0], fd);
}

void preload_file_fileno(uint32_t file_id, int fd)
{
    struct file_record *r = record_of(file_id);
    if (r == NULL)
        return;
    atomic_fetch_add_explicit(&r->shared[0].filenos, 1, memory_order_relaxed);
    take_alignment(&r->shared[0], fd);
}

void preload_file_dup(uint32_t file_id)
{
    struct file_record *r = record_of(file_id);
    if (r != NULL)
        atomic_fetch_add_explicit(&r->shared[0].dups, 1, memory_order_relaxed);
}

void preload_file_stats_get(uint32_t file_id, struct preload_layer_stats out[PRELOAD_STATS_LAYERS])
{
    struct file_record *r = record_of(file_id);
    for (int layer = 0; layer < PRELOAD_STATS_LAYERS; layer++) {
        out[layer].shared = &no_record;
        layer_clear(&out[layer]);
    }
    if (r == NULL)
        return;
    for (int layer = 0; layer < PRELOAD_STATS_LAYERS; layer++)
        out[layer].shared = &r->shared[layer];
    record_lock(r);
    for (int layer = 0; layer < PRELOAD_STATS_LAYERS; layer++)
        preload_layer_merge(&out[layer], &r->layer[layer]);
    record_unlock(r);
}

/* ---- the timeline -----------------------------------------------------------------------------
 */

/* Halves the timeline's resolution until `bin` (at `shift`) fits. Two
 * threads adding while it folds may put a few bytes one bin off. */
static uint32_t timeline_fit(uint64_t bin, uint32_t shift)
{
    while (atomic_exchange_explicit(&timeline_lock, 1, memory_order_acquire))
        __builtin_ia32_pause();
    uint32_t now = atomic_load_explicit(&preload_timeline_shift, memory_order_relaxed);
    if (now > shift)
        bin >>= now - shift;
    while (bin >= PRELOAD_TIMELINE_BINS) {
        for (int rw = 0; rw < 2; rw++) {
            for (int i = 0; i < PRELOAD_TIMELINE_BINS; i++) {
                uint64_t v =
                    atomic_exchange_explicit(&timeline_bytes[rw][i], 0, memory_order_relaxed);
                atomic_fetch_add_explicit(&timeline_bytes[rw][i / 2], v, memory_order_relaxed);
            }
        }
        now++;
        bin >>= 1;
    }
    atomic_store_explicit(&preload_timeline_shift, now, memory_order_relaxed);
    atomic_store_explicit(&timeline_lock, 0, memory_order_release);
    return now;
}

static void timeline_add(uint64_t bin, uint32_t shift, const uint64_t bytes[2])
{
    if (bytes[0] == 0 && bytes[1] == 0)
        return;
    uint32_t now = atomic_load_explicit(&preload_timeline_shift, memory_order_relaxed);
    if (now > shift) {
        bin >>= now - shift;
        shift = now;
    }
    if (bin >= PRELOAD_TIMELINE_BINS) {
        shift = timeline_fit(bin, shift);
        bin >>= shift - now;
        if (bin >= PRELOAD_TIMELINE_BINS)
            bin = PRELOAD_TIMELINE_BINS - 1;
    }
    for (int rw = 0; rw < 2; rw++)
        if (bytes[rw] != 0)
            atomic_fetch_add_explicit(&timeline_bytes[rw][bin], bytes[rw], memory_order_relaxed);
}

void preload_timeline_move(struct preload_thread_counters *c, uint64_t bin, uint32_t shift)
{
    timeline_add(c->timeline_bin, c->timeline_shift, c->timeline_bytes);
    c->timeline_bytes[0] = c->timeline_bytes[1] = 0;
    c->timeline_bin = bin;
    c->timeline_shift = shift;
    /* A moment off the hot path that comes back while the program does
     * I/O: has vigild asked for the names again? */
    preload_names_check();
}

void preload_timeline_note_shared(unsigned rw, uint64_t bytes, uint64_t end_ticks)
{
    uint32_t shift = atomic_load_explicit(&preload_timeline_shift, memory_order_relaxed);
    uint64_t moved[2] = {0, 0};
    moved[rw] = bytes;
    timeline_add((end_ticks - preload.start.ticks) >> shift, shift, moved);
}

uint32_t preload_timeline_get(uint64_t read_bytes[PRELOAD_TIMELINE_BINS],
                              uint64_t written_bytes[PRELOAD_TIMELINE_BINS], int *bins)
{
    uint32_t shift = atomic_load_explicit(&preload_timeline_shift, memory_order_relaxed);
    int last = 0;
    for (int i = 0; i < PRELOAD_TIMELINE_BINS; i++) {
        read_bytes[i] = atomic_load_explicit(&timeline_bytes[0][i], memory_order_relaxed);
        written_bytes[i] = atomic_load_explicit(&timeline_bytes[1][i], memory_order_relaxed);
        if (read_bytes[i] != 0 || written_bytes[i] != 0)
            last = i + 1;
    }
    *bins = last;
    return shift;
}

/* ---- set-up --------------------------------------------------------------------------------- */

/* The first bins are about 0.1 s wide: 2^27 ns, or 2^28 TSC ticks (1.3 to
 * 4 GHz). The report gives the width in seconds, measured. */
static uint32_t first_shift(void)
{
    return preload.tick_source == VIGIL_TICKS_TSC ? 28 : 27;
}

bool preload_file_stats_init(void)
{
    void *map = mmap(NULL, PRELOAD_FILE_SLOTS * sizeof *records, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
        return false;
    records = map;
    atomic_store_explicit(&preload_timeline_shift, first_shift(), memory_order_relaxed);
    return true;
}

void preload_file_stats_reset_after_fork(void)
{
    /* The child starts its own figures, and its own clock. */
    uint32_t used = preload_file_count_used();
    for (uint32_t i = 0; i < used; i++) {
        struct file_record *r = record_of(preload_file_used_id(i));
        if (r != NULL) {
            /* What the parent knew of the file itself (its mode, its block
             * size) stays; its accesses were the parent's. */
            atomic_store_explicit(&r->lock, 0, memory_order_relaxed);
            for (int layer = 0; layer < PRELOAD_STATS_LAYERS; layer++) {
                layer_clear(&r->layer[layer]);
                atomic_store_explicit(&r->shared[layer].last_end[0], 1, memory_order_relaxed);
                atomic_store_explicit(&r->shared[layer].last_end[1], 1, memory_order_relaxed);
                atomic_store_explicit(&r->shared[layer].last_rw, 0, memory_order_relaxed);
                atomic_store_explicit(&r->shared[layer].filenos, 0, memory_order_relaxed);
                atomic_store_explicit(&r->shared[layer].dups, 0, memory_order_relaxed);
                atomic_store_explicit(&r->shared[layer].fdatasyncs, 0, memory_order_relaxed);
                atomic_store_explicit(&r->shared[layer].rw_switches, 0, memory_order_relaxed);
            }
        }
    }
    memset((void *)timeline_bytes, 0, sizeof timeline_bytes);
    atomic_store_explicit(&timeline_lock, 0, memory_order_relaxed);
    atomic_store_explicit(&preload_timeline_shift, first_shift(), memory_order_relaxed);
}
