/* vigil — the files of an MPI job's report: every rank's files gathered on
 * rank 0 and merged by path. Counts and bytes are summed over the ranks,
 * and each file says how its ranks shared it: how many used it, the
 * fastest and the slowest (their time on the file and their bytes) and the
 * variance of both across those ranks (Darshan's F_FASTEST_RANK…,
 * F_VARIANCE_RANK_TIME/BYTES).
 *
 * Each rank packs the files of its own report as bytes (every rank runs this
 * library: one layout): the lengths of its strings, a struct
 * vigil_report_file with its pointers cleared, then the path, the mount
 * point and the file system type, each padded to 8 bytes. The sizes differ, so rank 0
 * gathers them first, says whether it has room for them all (else every
 * rank sends nothing and the job's report lists no file: the others must
 * not be left in a gather rank 0 skipped), then gathers the files. Called by
 * mpi_report.c on every rank, on its communicator. Buffers are mmapped:
 * nothing here keeps the heap's memory after MPI_Finalize.
 *
 * The job's timeline (Darshan's heatmap) is every rank's, summed by time. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpi_file_layers.h"
#include "mpi_file_mpiio.h"
#include "mpi_files.h"
#include "mpi_handles.h"

PRELOAD_REAL_EXTERN(PMPI_Gather);
PRELOAD_REAL_SLOT(PMPI_Gatherv);
PRELOAD_REAL_SLOT(PMPI_Bcast);
PRELOAD_REAL_EXTERN(PMPI_Reduce);

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
    /* Reserving nothing: the merge maps room for every rank's every file and
     * touches only what the distinct files take. */
    m->at = mmap(NULL, m->bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
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

/* What precedes a packed file: its strings' lengths. Each string follows
 * the file with its NUL, padded to 8 bytes. */
struct packed_head {
    uint32_t mount_bytes, fs_type_bytes;
};

static size_t strings_bytes(size_t path, size_t mount, size_t fs_type)
{
    return padded(path + 1) + padded(mount + 1) + padded(fs_type + 1);
}

static size_t packed_bytes(const struct vigil_report *r)
{
    size_t bytes = 0;
    for (int i = 0; i < r->file_count; i++) {
        const struct vigil_report_file *f = &r->files[i];
        bytes += sizeof(struct packed_head) + sizeof *f +
                 strings_bytes(f->path_bytes, strlen(f->mount), strlen(f->fs_type));
    }
    return bytes;
}

/* `length` bytes and a NUL, padded to 8 (the mapping is zeroed). */
static char *put(char *out, const void *bytes, size_t length)
{
    memcpy(out, bytes, length);
    return out + padded(length + 1);
}

static void pack(const struct vigil_report *r, char *out)
{
    for (int i = 0; i < r->file_count; i++) {
        struct vigil_report_file f = r->files[i];
        struct packed_head head = {(uint32_t)strlen(f.mount), (uint32_t)strlen(f.fs_type)};
        f.path = f.mount = f.fs_type = NULL;
        f.has_ranks = false;
        memcpy(out, &head, sizeof head);
        memcpy(out + sizeof head, &f, sizeof f);
        out += sizeof head + sizeof f;
        out = put(out, r->files[i].path, f.path_bytes);
        out = put(out, r->files[i].mount, head.mount_bytes);
        out = put(out, r->files[i].fs_type, head.fs_type_bytes);
    }
}

/* The next packed file in [*at, end) into `f`, its strings pointing into
 * the bytes; false at the end, or when the bytes do not parse (a rank of
 * another build: nothing more of it is taken). */
static bool unpack(char **at, const char *end, struct vigil_report_file *f)
{
    struct packed_head head;
    size_t left = (size_t)(end - *at);
    if (left < sizeof head + sizeof *f)
        return false;
    memcpy(&head, *at, sizeof head);
    memcpy(f, *at + sizeof head, sizeof *f);
    left -= sizeof head + sizeof *f;
    if (f->path_bytes > VIGIL_PATH_MAX || head.mount_bytes > VIGIL_PATH_MAX ||
        head.fs_type_bytes > VIGIL_PATH_MAX ||
        strings_bytes(f->path_bytes, head.mount_bytes, head.fs_type_bytes) > left)
        return false;
    char *path = *at + sizeof head + sizeof *f;
    char *mount = path + padded(f->path_bytes + 1);
    char *fs_type = mount + padded(head.mount_bytes + 1);
    if (mount[head.mount_bytes] != '\0' || fs_type[head.fs_type_bytes] != '\0')
        return false;
    f->path = path;
    f->mount = mount;
    f->fs_type = fs_type;
    *at = fs_type + padded(head.fs_type_bytes + 1);
    return true;
}

/* The rank's time on a file: MPI-IO's where it used MPI-IO there (its
 * POSIX calls ran inside those), else its POSIX and stdio time. */
static double rank_time_s(const struct vigil_report_file *f)
{
    if (f->has_mpiio)
        return f->mpiio.read_time_s + f->mpiio.write_time_s + f->mpiio.meta_time_s;
    double time_s = 0;
    if (f->has_layers)
        time_s += f->posix.read_time_s + f->posix.write_time_s + f->posix.meta_time_s;
    if (f->has_stdio)
        time_s += f->stdio.read_time_s + f->stdio.write_time_s + f->stdio.meta_time_s;
    return time_s;
}

/* ---- rank 0: the merge ---------------------------------------------------------------------- */

/* A file of the job while it is merged: the report's entry, and the running
 * mean and sum of squared deviations of its ranks' times and bytes
 * (Welford's: no cancellation when every rank did the same). */
struct merged {
    struct vigil_report_file f;
    double time_mean, time_m2, bytes_mean, bytes_m2;
    struct preload_job_layer posix, stdio;
    bool stdio_seen;
    struct preload_job_mpiio mpiio;
};

static struct {
    struct mapping gathered; /* every rank's packed files: the strings point here */
    struct mapping merged;   /* struct merged[], while merging */
    struct mapping files;    /* the job's struct vigil_report_file[] */
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

/* Adds one rank's entry for the file (ranks come in order: on equal times
 * the lower rank is the fastest and the slowest). */
static void add_rank(struct merged *m, const struct vigil_report_file *f, int rank)
{
    struct vigil_report_file *to = &m->f;
    struct vigil_report_file_ranks *k = &to->ranks;
    bool first = k->count == 0;
    to->calls += f->calls;
    to->read_bytes += f->read_bytes;
    to->written_bytes += f->written_bytes;
    if (f->has_layers) {
        preload_job_layer_add(&m->posix, &f->posix, !to->has_layers);
        to->has_layers = true;
        uint64_t posix_bytes = f->posix.read_bytes + f->posix.written_bytes;
        if (k->most_posix_rank < 0 || posix_bytes > k->most_posix_bytes) {
            k->most_posix_rank = rank;
            k->most_posix_bytes = posix_bytes;
        }
        if (k->least_posix_rank < 0 || posix_bytes < k->least_posix_bytes) {
            k->least_posix_rank = rank;
            k->least_posix_bytes = posix_bytes;
        }
    }
    if (f->has_stdio) {
        preload_job_layer_add(&m->stdio, &f->stdio, !m->stdio_seen);
        m->stdio_seen = true;
    }
    if (f->has_mpiio) {
        preload_job_mpiio_add(&m->mpiio, &f->mpiio, !to->has_mpiio);
        to->has_mpiio = true;
    }
    double time_s = rank_time_s(f);
    uint64_t bytes = f->read_bytes + f->written_bytes;
    if (first || time_s < k->fastest_s) {
        k->fastest_rank = rank;
        k->fastest_s = time_s;
        k->fastest_bytes = bytes;
    }
    if (first || time_s > k->slowest_s) {
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
        struct vigil_report_file f;
        while (unpack(&at, end, &f) && count < entries) {
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
                    .mount = f.mount,
                    .fs_type = f.fs_type,
                    .has_ranks = true,
                    .ranks = {.most_posix_rank = -1, .least_posix_rank = -1},
                };
            }
            add_rank(&files[table[slot] - 1], &f, rank);
        }
    }
    unmap(&table_map);
    for (uint32_t i = 0; i < count; i++) {
        struct merged *m = &files[i];
        struct vigil_report_file_ranks *k = &m->f.ranks;
        /* Each rank's <stdout> is its own stream, whatever its name. */
        k->shared = k->count > 1 && !(m->f.path_bytes > 0 && m->f.path[0] == '<');
        k->time_variance_s2 = m->time_m2 / k->count;
        k->bytes_variance = m->bytes_m2 / k->count;
        if (m->f.has_layers) {
            preload_job_layer_finish(&m->posix);
            m->f.posix = m->posix.layer;
        }
        if (m->f.has_mpiio) {
            preload_job_mpiio_finish(&m->mpiio);
            m->f.mpiio = m->mpiio.mpiio;
        }
        if (m->stdio_seen) {
            preload_job_layer_finish(&m->stdio);
            m->f.stdio = m->stdio.layer;
            m->f.has_stdio = true;
        }
    }
    qsort(files, count, sizeof *files, busiest_first);
    struct vigil_report_file *out = map(&kept.files, count * sizeof *out);
    if (out != NULL) {
        for (uint32_t i = 0; i < count; i++)
            out[i] = files[i].f;
        r->files = out;
        r->file_count = (int)count;
        r->files_total = count;
    }
    unmap(&kept.merged);
}

/* ---- the timeline --------------------------------------------------------------------------- */

/* Rank 0: the job's timeline, every rank's bytes summed by time: at the
 * widest rank's bin width (the widths double as a run goes on, so the
 * longest rank's is the widest), each rank's bins folded into the bin where
 * they begin (times since each rank's own start). */
static void merge_timelines(const struct vigil_report_timeline *all, int ranks,
                            struct vigil_report_timeline *out)
{
    memset(out, 0, sizeof *out);
    for (int rank = 0; rank < ranks; rank++)
        if (all[rank].bin_s > out->bin_s)
            out->bin_s = all[rank].bin_s;
    if (!(out->bin_s > 0))
        return;
    for (int rank = 0; rank < ranks; rank++) {
        const struct vigil_report_timeline *t = &all[rank];
        for (int i = 0; i < t->bins && i < VIGIL_REPORT_TIMELINE_BINS; i++) {
            /* A little below the division: a begin on a border is the next bin's. */
            double at = (double)i * t->bin_s / out->bin_s;
            int bin = (int)(at + 1e-9);
            if (bin >= VIGIL_REPORT_TIMELINE_BINS)
                bin = VIGIL_REPORT_TIMELINE_BINS - 1;
            out->read_bytes[bin] += t->read_bytes[i];
            out->written_bytes[bin] += t->written_bytes[i];
            if ((t->read_bytes[i] != 0 || t->written_bytes[i] != 0) && bin + 1 > out->bins)
                out->bins = bin + 1;
        }
    }
}

static bool timelines_joint(MPI_Comm comm, int rank, int ranks, struct vigil_report *r)
{
    struct mapping all_map = {0};
    struct vigil_report_timeline *all = NULL;
    if (rank == 0)
        all = map(&all_map, (size_t)ranks * sizeof *all);
    /* Without room rank 0 still takes part, in a gather of nothing. */
    int accept = all != NULL;
    bool ok = REAL(PMPI_Bcast)(&accept, 1, PRELOAD_MPI_INT, 0, comm) == MPI_SUCCESS;
    int bytes = accept ? (int)sizeof r->timeline : 0;
    ok = ok && REAL(PMPI_Gather)(&r->timeline, bytes, PRELOAD_MPI_BYTE, all, bytes,
                                 PRELOAD_MPI_BYTE, 0, comm) == MPI_SUCCESS;
    if (rank == 0 && ok && all != NULL)
        merge_timelines(all, ranks, &r->timeline);
    unmap(&all_map);
    return ok;
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
    /* Every rank's paths that found no room in its file table. Called by
     * every rank whatever happened above: a collective skipped by some
     * would leave the others waiting. */
    uint64_t untracked = r->files_untracked, job_untracked = 0;
    bool reduced = REAL(PMPI_Reduce)(&untracked, &job_untracked, 1, PRELOAD_MPI_UINT64_T,
                                     PRELOAD_MPI_SUM, 0, comm) == MPI_SUCCESS;
    ok = ok && reduced;
    if (rank == 0) {
        r->file_count = 0;
        r->files_total = 0;
        r->files_untracked = job_untracked;
        r->files = NULL;
        if (ok && accept)
            merge(gathered, sizes, offsets, ranks, r);
    }
    unmap(&mine_map);
    unmap(&sizes_map);
    return ok && timelines_joint(comm, rank, ranks, r);
}

void preload_mpi_files_release(void)
{
    unmap(&kept.files);
    unmap(&kept.gathered);
}
