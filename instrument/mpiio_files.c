/* vigil — what MPI-IO did to each file.
 *
 * A table indexed by file id, mapped at MPI_Init (a program without MPI
 * never maps it; MPI_Init runs before the program's threads use MPI) without
 * reserving memory: a file's entry is touched only when MPI-IO uses it.
 * MPI-IO calls cost microseconds and may come from several threads: atomic
 * adds, no per-thread pending counts.
 *
 * A forked child inherits the parent's table, whose ids name the parent's
 * files (the child's file table starts again), and may not use MPI: the
 * table remembers the process it belongs to and is nobody's in a child. */
#include <sys/mman.h>

#include "mpiio_files.h"

/* File ids go up to files.c's table size (1 << 16). */
#define MPIIO_FILES (1u << 16)

/* Kinds of MPI-IO data calls, as Darshan's MPI-IO module counts them. */
enum mpiio_kind { KIND_NONE, KIND_INDEP, KIND_COLL, KIND_SPLIT, KIND_NB };

struct mpiio_file {
    _Atomic uint64_t reads[KIND_NB + 1], writes[KIND_NB + 1];
    _Atomic uint64_t read_bytes, written_bytes;
    _Atomic uint64_t read_ticks, write_ticks, meta_ticks;
    _Atomic uint32_t used;
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

void preload_mpiio_file_count(uint32_t file_id, unsigned op, bool failed, uint64_t bytes_moved,
                              uint64_t ticks)
{
    if (file_id == VIGIL_FILE_NONE || file_id > MPIIO_FILES || failed)
        return;
    struct mpiio_file *t = table_get();
    if (t == NULL)
        return;
    struct mpiio_file *f = &t[file_id - 1];
    atomic_store_explicit(&f->used, 1, memory_order_relaxed);
    enum mpiio_kind kind = kind_of(op);
    switch (vigil_op_class(op)) {
    case VIGIL_OP_READS:
        if (kind != KIND_NONE)
            add(&f->reads[kind], 1);
        add(&f->read_bytes, bytes_moved);
        add(&f->read_ticks, ticks);
        break;
    case VIGIL_OP_WRITES:
        if (kind != KIND_NONE)
            add(&f->writes[kind], 1);
        add(&f->written_bytes, bytes_moved);
        add(&f->write_ticks, ticks);
        break;
    default:
        add(&f->meta_ticks, ticks);
        break;
    }
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
    };
    return true;
}
