/* vigil — what MPI-IO did to each file.
 *
 * A table indexed by file id, mapped at MPI_Init (a program without MPI
 * never maps it; MPI_Init runs before the program's threads use MPI) without
 * reserving memory: a file's entry is touched only when MPI-IO uses it.
 * MPI-IO calls cost microseconds and may come from several threads: atomic
 * adds, no per-thread pending counts, no lock but the slowest call's, taken
 * only by a call slower than every one before it.
 *
 * The common access sizes are Darshan's: the first MPIIO_SIZES distinct
 * sizes a file sees are counted, every call of each (their counts are
 * exact), and a size first seen after them never is (a lower bound of 0).
 *
 * A forked child inherits the parent's table, whose ids name the parent's
 * files (the child's file table starts again), and may not use MPI: the
 * table remembers the process it belongs to and is nobody's in a child. */
#include <sys/mman.h>

#include "mpiio_files.h"

/* File ids go up to files.c's table size (1 << 16). */
#define MPIIO_FILES (1u << 16)

/* Distinct access sizes counted per file (Darshan's
 * DARSHAN_COMMON_VAL_MAX_RUNTIME_COUNT). */
#define MPIIO_SIZES 32

/* Kinds of MPI-IO data calls, as Darshan's MPI-IO module counts them. */
enum mpiio_kind { KIND_NONE, KIND_INDEP, KIND_COLL, KIND_SPLIT, KIND_NB };

/* The last data call, for the read/write switches. */
enum mpiio_io { IO_NONE, IO_READ, IO_WRITE };

/* The slowest call of a direction: its ticks and size change together,
 * under `busy`. */
struct mpiio_slowest {
    _Atomic uint64_t ticks, size;
    atomic_flag busy;
};

struct mpiio_file {
    _Atomic uint64_t reads[KIND_NB + 1], writes[KIND_NB + 1];
    _Atomic uint64_t read_bytes, written_bytes;
    _Atomic uint64_t read_ticks, write_ticks, meta_ticks;
    _Atomic uint64_t indep_opens, coll_opens, syncs, hints, views, rw_switches;
    _Atomic uint64_t size_hist[2][VIGIL_REPORT_SIZE_BINS]; /* [0] reads, [1] writes */
    _Atomic uint64_t size_key[MPIIO_SIZES];                /* size + 1; 0: a free slot */
    _Atomic uint64_t size_count[MPIIO_SIZES];
    struct mpiio_slowest slowest[2]; /* [0] reads, [1] writes */
    _Atomic int32_t mode;
    _Atomic uint32_t mode_known, last_io, used;
};

static _Atomic(struct mpiio_file *) table;
static _Atomic pid_t table_pid; /* the process the table belongs to */

static enum mpiio_kind kind_of(unsigned op)
{
    switch (op) {
    case VIGIL_OP_MPIIO_READ:
    case VIGIL_OP_MPIIO_READ_AT:
    case VIGIL_OP_MPIIO_READ_SHARED:
    case VIGIL_OP_MPIIO_WRITE:
    case VIGIL_OP_MPIIO_WRITE_AT:
    case VIGIL_OP_MPIIO_WRITE_SHARED:
        return KIND_INDEP;
    case VIGIL_OP_MPIIO_READ_ALL:
    case VIGIL_OP_MPIIO_READ_AT_ALL:
    case VIGIL_OP_MPIIO_READ_ORDERED:
    case VIGIL_OP_MPIIO_WRITE_ALL:
    case VIGIL_OP_MPIIO_WRITE_AT_ALL:
    case VIGIL_OP_MPIIO_WRITE_ORDERED:
        return KIND_COLL;
    case VIGIL_OP_MPIIO_READ_ALL_BEGIN:
    case VIGIL_OP_MPIIO_READ_AT_ALL_BEGIN:
    case VIGIL_OP_MPIIO_READ_ORDERED_BEGIN:
    case VIGIL_OP_MPIIO_WRITE_ALL_BEGIN:
    case VIGIL_OP_MPIIO_WRITE_AT_ALL_BEGIN:
    case VIGIL_OP_MPIIO_WRITE_ORDERED_BEGIN:
        return KIND_SPLIT;
    case VIGIL_OP_MPIIO_IREAD:
    case VIGIL_OP_MPIIO_IREAD_AT:
    case VIGIL_OP_MPIIO_IREAD_ALL:
    case VIGIL_OP_MPIIO_IREAD_AT_ALL:
    case VIGIL_OP_MPIIO_IWRITE:
    case VIGIL_OP_MPIIO_IWRITE_AT:
    case VIGIL_OP_MPIIO_IWRITE_ALL:
    case VIGIL_OP_MPIIO_IWRITE_AT_ALL:
        return KIND_NB;
    default:
        return KIND_NONE; /* open, close, sync, set_view, the split ends… */
    }
}

void preload_mpiio_files_start(void)
{
    if (atomic_load_explicit(&table, memory_order_acquire) != NULL)
        return;
    void *map = mmap(NULL, MPIIO_FILES * sizeof(struct mpiio_file), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
        return; /* MPI-IO's per-file figures are missing; the rest is counted */
    atomic_store_explicit(&table_pid, preload.pid, memory_order_relaxed);
    atomic_store_explicit(&table, map, memory_order_release);
}

/* This process's table; NULL before MPI_Init, and in a forked child. */
static struct mpiio_file *table_get(void)
{
    struct mpiio_file *t = atomic_load_explicit(&table, memory_order_acquire);
    if (t == NULL || atomic_load_explicit(&table_pid, memory_order_relaxed) != preload.pid)
        return NULL;
    return t;
}

static void add(_Atomic uint64_t *counter, uint64_t value)
{
    if (value != 0)
        atomic_fetch_add_explicit(counter, value, memory_order_relaxed);
}

/* The file's entry, marked used; NULL for no file, or before MPI_Init. */
static struct mpiio_file *file_get(uint32_t file_id)
{
    if (file_id == VIGIL_FILE_NONE || file_id > MPIIO_FILES)
        return NULL;
    struct mpiio_file *t = table_get();
    if (t == NULL)
        return NULL;
    struct mpiio_file *f = &t[file_id - 1];
    atomic_store_explicit(&f->used, 1, memory_order_relaxed);
    return f;
}

/* Darshan's bins (DARSHAN_BUCKET_INC): each includes its upper bound. */
static unsigned size_bin(uint64_t size)
{
    static const uint64_t upper[VIGIL_REPORT_SIZE_BINS - 1] = {
        100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600, 1073741824};
    unsigned bin = 0;
    while (bin < VIGIL_REPORT_SIZE_BINS - 1 && size > upper[bin])
        bin++;
    return bin;
}

/* Slots fill in order and a size takes the first free one by a compare and
 * swap, so two threads seeing a new size at once agree on its slot. */
static void count_size(struct mpiio_file *f, uint64_t size)
{
    uint64_t key = size + 1;
    for (int i = 0; i < MPIIO_SIZES; i++) {
        uint64_t seen = atomic_load_explicit(&f->size_key[i], memory_order_acquire);
        /* On failure `seen` is the size another thread put there. */
        if (seen == 0 && atomic_compare_exchange_strong(&f->size_key[i], &seen, key))
            seen = key;
        if (seen == key) {
            add(&f->size_count[i], 1);
            return;
        }
    }
}

static void note_slowest(struct mpiio_slowest *s, uint64_t ticks, uint64_t size)
{
    if (ticks <= atomic_load_explicit(&s->ticks, memory_order_relaxed))
        return;
    while (atomic_flag_test_and_set_explicit(&s->busy, memory_order_acquire))
        ; /* held for two stores */
    if (ticks > atomic_load_explicit(&s->ticks, memory_order_relaxed)) {
        atomic_store_explicit(&s->ticks, ticks, memory_order_relaxed);
        atomic_store_explicit(&s->size, size, memory_order_relaxed);
    }
    atomic_flag_clear_explicit(&s->busy, memory_order_release);
}

/* What a data call adds besides its count, bytes and time. */
static void count_access(struct mpiio_file *f, enum mpiio_io io, uint64_t size, uint64_t ticks)
{
    int rw = io == IO_WRITE;
    add(&f->size_hist[rw][size_bin(size)], 1);
    count_size(f, size);
    enum mpiio_io last = atomic_exchange_explicit(&f->last_io, io, memory_order_relaxed);
    if (last != IO_NONE && last != io)
        add(&f->rw_switches, 1);
    note_slowest(&f->slowest[rw], ticks, size);
}

void preload_mpiio_file_count(const struct preload_outcome *o, uint64_t ticks)
{
    struct mpiio_file *f = o->failed ? NULL : file_get(o->file_id);
    if (f == NULL)
        return;
    enum mpiio_kind kind = kind_of(o->op);
    switch (vigil_op_class(o->op)) {
    case VIGIL_OP_READS:
        if (kind != KIND_NONE)
            add(&f->reads[kind], 1);
        add(&f->read_bytes, o->bytes_moved);
        add(&f->read_ticks, ticks);
        count_access(f, IO_READ, o->bytes_asked, ticks);
        break;
    case VIGIL_OP_WRITES:
        if (kind != KIND_NONE)
            add(&f->writes[kind], 1);
        add(&f->written_bytes, o->bytes_moved);
        add(&f->write_ticks, ticks);
        count_access(f, IO_WRITE, o->bytes_asked, ticks);
        break;
    default:
        add(&f->meta_ticks, ticks);
        if (o->op == VIGIL_OP_MPIIO_SYNC)
            add(&f->syncs, 1);
        else if (o->op == VIGIL_OP_MPIIO_SET_VIEW)
            add(&f->views, 1);
        break;
    }
}

void preload_mpiio_file_opened(uint32_t file_id, int amode, bool collective, bool hinted)
{
    struct mpiio_file *f = file_get(file_id);
    if (f == NULL)
        return;
    add(collective ? &f->coll_opens : &f->indep_opens, 1);
    add(&f->hints, hinted);
    atomic_store_explicit(&f->mode, amode, memory_order_relaxed);
    atomic_store_explicit(&f->mode_known, 1, memory_order_release);
}

void preload_mpiio_file_hinted(uint32_t file_id)
{
    struct mpiio_file *f = file_get(file_id);
    if (f != NULL)
        add(&f->hints, 1);
}

static uint64_t load(_Atomic uint64_t *counter)
{
    return atomic_load_explicit(counter, memory_order_relaxed);
}

static double seconds(const struct vigil_tick_clock *clock, uint64_t ticks)
{
    double ns = vigil_tick_clock_duration_ns(clock, ticks);
    return ns > 0 ? ns / 1e9 : 0;
}

int preload_mpiio_common_top(const uint64_t *values, const uint64_t *counts, int count,
                             struct vigil_report_common *out)
{
    int n = 0;
    for (; n < VIGIL_REPORT_COMMON; n++) {
        int best = -1;
        for (int i = 0; i < count; i++) {
            bool taken = false;
            for (int j = 0; j < n; j++)
                taken |= out[j].value == (int64_t)values[i];
            if (taken || values[i] == 0 || counts[i] == 0)
                continue;
            if (best < 0 || counts[i] > counts[best] ||
                (counts[i] == counts[best] && values[i] > values[best]))
                best = i;
        }
        if (best < 0)
            break;
        out[n] = (struct vigil_report_common){
            .value = (int64_t)values[best], .count = counts[best], .exact = true};
    }
    return n;
}

static void slowest(const struct vigil_tick_clock *clock, struct mpiio_slowest *s, double *time_s,
                    uint64_t *size)
{
    *time_s = seconds(clock, load(&s->ticks));
    *size = load(&s->size);
}

bool preload_mpiio_file_figures(uint32_t file_id, const struct vigil_tick_clock *clock,
                                struct vigil_report_file_mpiio *out)
{
    struct mpiio_file *t = table_get();
    if (t == NULL || file_id == VIGIL_FILE_NONE || file_id > MPIIO_FILES)
        return false;
    struct mpiio_file *f = &t[file_id - 1];
    if (!atomic_load_explicit(&f->used, memory_order_relaxed))
        return false;
    *out = (struct vigil_report_file_mpiio){
        .indep_reads = load(&f->reads[KIND_INDEP]),
        .indep_writes = load(&f->writes[KIND_INDEP]),
        .coll_reads = load(&f->reads[KIND_COLL]),
        .coll_writes = load(&f->writes[KIND_COLL]),
        .split_reads = load(&f->reads[KIND_SPLIT]),
        .split_writes = load(&f->writes[KIND_SPLIT]),
        .nb_reads = load(&f->reads[KIND_NB]),
        .nb_writes = load(&f->writes[KIND_NB]),
        .read_bytes = load(&f->read_bytes),
        .written_bytes = load(&f->written_bytes),
        .read_time_s = seconds(clock, load(&f->read_ticks)),
        .write_time_s = seconds(clock, load(&f->write_ticks)),
        .meta_time_s = seconds(clock, load(&f->meta_ticks)),
        .indep_opens = load(&f->indep_opens),
        .coll_opens = load(&f->coll_opens),
        .syncs = load(&f->syncs),
        .hints = load(&f->hints),
        .views = load(&f->views),
        .rw_switches = load(&f->rw_switches),
        .mode = atomic_load_explicit(&f->mode_known, memory_order_acquire)
                    ? atomic_load_explicit(&f->mode, memory_order_relaxed)
                    : -1,
    };
    for (int i = 0; i < VIGIL_REPORT_SIZE_BINS; i++) {
        out->read_size_hist[i] = load(&f->size_hist[0][i]);
        out->write_size_hist[i] = load(&f->size_hist[1][i]);
    }
    uint64_t sizes[MPIIO_SIZES], counts[MPIIO_SIZES];
    int distinct = 0;
    for (; distinct < MPIIO_SIZES; distinct++) {
        uint64_t key = load(&f->size_key[distinct]);
        if (key == 0)
            break;
        sizes[distinct] = key - 1;
        counts[distinct] = load(&f->size_count[distinct]);
    }
    out->common_size_count = preload_mpiio_common_top(sizes, counts, distinct, out->common_sizes);
    slowest(clock, &f->slowest[0], &out->max_read_time_s, &out->max_read_time_size);
    slowest(clock, &f->slowest[1], &out->max_write_time_s, &out->max_write_time_size);
    return true;
}
