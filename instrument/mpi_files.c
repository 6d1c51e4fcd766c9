/* vigil — the files of an MPI job's report: every rank's files gathered on
 * rank 0 and merged by path. Counts and bytes are summed over the ranks,
 * and each file says how its ranks shared it: how many used it, the
 * fastest and the slowest (their time on the file and their bytes) and the
 * variance of both across those ranks (Darshan's F_FASTEST_RANK…,
 * F_VARIANCE_RANK_TIME/BYTES).
 *
 * Each rank packs the files of its own report as bytes (every rank runs this
 * library: one layout): a struct vigil_report_file with its pointer
 * cleared, then the path, padded to 8 bytes. The sizes differ, so rank 0
 * gathers them first, says whether it has room for them all (else every
 * rank sends nothing and the job's report lists no file: the others must
 * not be left in a gather rank 0 skipped), then gathers the files. Called by
 * mpi_report.c on every rank, on its communicator. Buffers are mmapped:
 * nothing here keeps the heap's memory after MPI_Finalize. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpi_files.h"
#include "mpi_handles.h"

PRELOAD_REAL_EXTERN(PMPI_Gather);
PRELOAD_REAL_SLOT(PMPI_Gatherv);
PRELOAD_REAL_SLOT(PMPI_Bcast);

/* The most rank 0 takes in: MPI counts in int, and a job's files beyond
 * this are not worth the memory at MPI_Finalize. */
#define GATHER_MAX_BYTES (INT_MAX / 2)

struct mapping {
    void *at;
    size_t bytes;
};

static void *map(struct mapping *m, size_t bytes)
{
    m->bytes = bytes > 0 ? bytes : 1;
    m->at = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m->at == MAP_FAILED)
        m->at = NULL;
    return m->at;
}

static void unmap(struct mapping *m)
{
    if (m->at != NULL)
        munmap(m->at, m->bytes);
    m->at = NULL;
}

static size_t padded(size_t bytes)
{
    return (bytes + 7) & ~(size_t)7;
}

/* ---- one rank ------------------------------------------------------------------------------ */

static size_t packed_bytes(const struct vigil_report *r)
{
    size_t bytes = 0;
    for (int i = 0; i < r->file_count; i++)
        bytes += sizeof(struct vigil_report_file) + padded(r->files[i].path_bytes);
    return bytes;
}

static void pack(const struct vigil_report *r, char *out)
{
    for (int i = 0; i < r->file_count; i++) {
        struct vigil_report_file f = r->files[i];
        f.path = NULL;
        f.has_ranks = false;
        memcpy(out, &f, sizeof f);
        out += sizeof f;
        memcpy(out, r->files[i].path, f.path_bytes);
        out += padded(f.path_bytes);
    }
}

/* The rank's time on a file: MPI-IO's where it used MPI-IO there (its
 * POSIX calls ran inside those), else nothing known yet. */
static double rank_time_s(const struct vigil_report_file *f)
{
    if (f->has_mpiio)
        return f->mpiio.read_time_s + f->mpiio.write_time_s + f->mpiio.meta_time_s;
    return 0;
}

/* ---- rank 0: the merge ---------------------------------------------------------------------- */

/* A file of the job while it is merged: the report's entry, and the running
 * mean and sum of squared deviations of its ranks' times and bytes
 * (Welford's: no cancellation when every rank did the same). */
struct merged {
    struct vigil_report_file f;
    double time_mean, time_m2, bytes_mean, bytes_m2;
};

static struct {
    struct mapping gathered; /* every rank's packed files: the paths point here */
    struct mapping merged;   /* struct merged[] */
} kept;

static uint64_t path_hash(const char *path, size_t length)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < length; i++) {
        h ^= (unsigned char)path[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void add_mpiio(struct vigil_report_file_mpiio *to, const struct vigil_report_file_mpiio *m)
{
    to->indep_reads += m->indep_reads;
    to->indep_writes += m->indep_writes;
    to->coll_reads += m->coll_reads;
    to->coll_writes += m->coll_writes;
    to->split_reads += m->split_reads;
    to->split_writes += m->split_writes;
    to->nb_reads += m->nb_reads;
    to->nb_writes += m->nb_writes;
    to->read_bytes += m->read_bytes;
    to->written_bytes += m->written_bytes;
    to->read_time_s += m->read_time_s;
    to->write_time_s += m->write_time_s;
    to->meta_time_s += m->meta_time_s;
}

/* Adds one rank's entry for the file (ranks come in order: on equal times
 * the lower rank is the fastest and the slowest). */
static void add_rank(struct merged *m, const struct vigil_report_file *f, int rank)
{
    struct vigil_report_file *to = &m->f;
    to->calls += f->calls;
    to->read_bytes += f->read_bytes;
    to->written_bytes += f->written_bytes;
    if (f->has_mpiio) {
        add_mpiio(&to->mpiio, &f->mpiio);
        to->has_mpiio = true;
    }
    double time_s = rank_time_s(f);
    uint64_t bytes = f->read_bytes + f->written_bytes;
    struct vigil_report_file_ranks *k = &to->ranks;
    if (k->count == 0 || time_s < k->fastest_s) {
        k->fastest_rank = rank;
        k->fastest_s = time_s;
        k->fastest_bytes = bytes;
    }
    if (k->count == 0 || time_s > k->slowest_s) {
        k->slowest_rank = rank;
        k->slowest_s = time_s;
        k->slowest_bytes = bytes;
    }
    k->count++;
    double n = k->count, dt = time_s - m->time_mean, db = (double)bytes - m->bytes_mean;
    m->time_mean += dt / n;
    m->time_m2 += dt * (time_s - m->time_mean);
    m->bytes_mean += db / n;
    m->bytes_m2 += db * ((double)bytes - m->bytes_mean);
}

static int busiest_first(const void *a, const void *b)
{
    const struct vigil_report_file *x = &((const struct merged *)a)->f;
    const struct vigil_report_file *y = &((const struct merged *)b)->f;
    uint64_t bytes_x = x->read_bytes + x->written_bytes, bytes_y = y->read_bytes + y->written_bytes;
    if (bytes_x != bytes_y)
        return bytes_x > bytes_y ? -1 : 1;
    if (x->calls != y->calls)
        return x->calls > y->calls ? -1 : 1;
    size_t n = x->path_bytes < y->path_bytes ? x->path_bytes : y->path_bytes;
    int c = memcmp(x->path, y->path, n);
    return c != 0 ? c : (x->path_bytes > y->path_bytes) - (x->path_bytes < y->path_bytes);
}

/* Walks rank `rank`'s packed files in [at, end); false when they do not
 * parse (a rank of another build: nothing of it is taken). */
static bool valid_rank_files(const char *at, const char *end)
{
    while (at < end) {
        struct vigil_report_file f;
        if ((size_t)(end - at) < sizeof f)
            return false;
        memcpy(&f, at, sizeof f);
        if (f.path_bytes > VIGIL_PATH_MAX || padded(f.path_bytes) > (size_t)(end - at) - sizeof f)
            return false;
        at += sizeof f + padded(f.path_bytes);
    }
    return true;
}

static void merge(char *gathered, const int *sizes, const int *offsets, int ranks,
                  struct vigil_report *r)
{
    size_t entries = 0;
    for (int rank = 0; rank < ranks; rank++)
        entries += (size_t)sizes[rank] / sizeof(struct vigil_report_file);
    size_t slots = 16;
    while (slots < 2 * entries)
        slots *= 2;
    struct mapping table_map;
    uint32_t *table = map(&table_map, slots * sizeof *table); /* merged index + 1; 0: empty */
    struct merged *files = map(&kept.merged, entries * sizeof *files);
    if (table == NULL || files == NULL) {
        unmap(&table_map);
        return;
    }
    uint32_t count = 0;
    for (int rank = 0; rank < ranks; rank++) {
        char *at = gathered + offsets[rank], *end = at + sizes[rank];
        if (!valid_rank_files(at, end))
            continue;
        while (at < end) {
            struct vigil_report_file f;
            memcpy(&f, at, sizeof f);
            f.path = at + sizeof f;
            at += sizeof f + padded(f.path_bytes);
            size_t slot = path_hash(f.path, f.path_bytes) & (slots - 1);
            while (table[slot] != 0) {
                const struct vigil_report_file *g = &files[table[slot] - 1].f;
                if (g->path_bytes == f.path_bytes && memcmp(g->path, f.path, f.path_bytes) == 0)
                    break;
                slot = (slot + 1) & (slots - 1);
            }
            if (table[slot] == 0) {
                table[slot] = ++count;
                files[count - 1].f = (struct vigil_report_file){
                    .path = f.path,
                    .path_bytes = f.path_bytes,
                    .has_ranks = true,
                };
            }
            add_rank(&files[table[slot] - 1], &f, rank);
        }
    }
    unmap(&table_map);
    for (uint32_t i = 0; i < count; i++) {
        struct merged *m = &files[i];
        struct vigil_report_file_ranks *k = &m->f.ranks;
        k->shared = k->count > 1;
        k->time_variance_s2 = m->time_m2 / k->count;
        k->bytes_variance = m->bytes_m2 / k->count;
    }
    qsort(files, count, sizeof *files, busiest_first);
    int listed = count < VIGIL_REPORT_TOP_FILES ? (int)count : VIGIL_REPORT_TOP_FILES;
    for (int i = 0; i < listed; i++)
        r->files[i] = files[i].f;
    r->file_count = listed;
}

/* ---- all ranks ------------------------------------------------------------------------------- */

bool preload_mpi_files_joint(MPI_Comm comm, int rank, int ranks, struct vigil_report *r)
{
    struct mapping mine_map = {0}, sizes_map = {0};
    size_t bytes = packed_bytes(r);
    int size = bytes <= GATHER_MAX_BYTES ? (int)bytes : 0;
    char *mine = map(&mine_map, bytes);
    if (mine == NULL)
        size = 0;
    else
        pack(r, mine);
    int *sizes = NULL, *offsets = NULL, accept = 0;
    if (rank == 0) {
        sizes = map(&sizes_map, 2 * (size_t)ranks * sizeof *sizes);
        offsets = sizes != NULL ? sizes + ranks : NULL;
    }
    static int discard;
    bool ok = REAL(PMPI_Gather)(&size, 1, PRELOAD_MPI_INT, sizes != NULL ? sizes : &discard,
                                sizes != NULL ? 1 : 0, PRELOAD_MPI_INT, 0, comm) == MPI_SUCCESS;
    char *gathered = NULL;
    if (ok && rank == 0 && sizes != NULL) {
        size_t total = 0;
        for (int i = 0; i < ranks; i++) {
            offsets[i] = (int)total;
            total += (size_t)sizes[i];
            if (total > GATHER_MAX_BYTES)
                break;
        }
        if (total <= GATHER_MAX_BYTES)
            gathered = map(&kept.gathered, total);
        accept = gathered != NULL;
    }
    ok = ok && REAL(PMPI_Bcast)(&accept, 1, PRELOAD_MPI_INT, 0, comm) == MPI_SUCCESS;
    if (ok && accept)
        ok = REAL(PMPI_Gatherv)(mine, size, PRELOAD_MPI_BYTE, gathered, sizes, offsets,
                                PRELOAD_MPI_BYTE, 0, comm) == MPI_SUCCESS;
    if (rank == 0) {
        r->file_count = 0;
        if (ok && accept)
            merge(gathered, sizes, offsets, ranks, r);
    }
    unmap(&mine_map);
    unmap(&sizes_map);
    return ok;
}

void preload_mpi_files_release(void)
{
    unmap(&kept.merged);
    unmap(&kept.gathered);
}
