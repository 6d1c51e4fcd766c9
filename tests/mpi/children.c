/* mpi-children — the POSIX calls an MPI-IO call makes hang under it.
 *
 * usage: mpi-children DIR
 *
 * Every rank opens DIR/children.dat on MPI_COMM_WORLD, writes 64 KiB at
 * rank x 64 KiB with one MPI_File_write_at, closes it, and then, before
 * MPI_Finalize, reads its own ring (everything recorded since the process
 * started; times stay in the ring's ticks, which is enough to compare them)
 * and checks:
 *
 *   - there is exactly one MPI-IO write_at activity, and it says what the
 *     call did (bytes, offset, communicator size, a file, not collective);
 *   - at least one POSIX write or pwrite has that activity's start as its
 *     parent_start_ns, and every POSIX activity that does lies within it;
 *   - every POSIX activity claiming a parent lies within an MPI-IO call of
 *     its thread that started at that time, and every POSIX activity of
 *     that thread within an MPI-IO call claims it.
 *
 * Prints "children ok N (rank R)", N the POSIX activities under the
 * write_at, and exits 0; else prints what is wrong and exits 1. Exits 2,
 * printing "no vigil", when not run under libvigil-preload.so. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "vigil/ontology.h"
#include "vigil/ring.h"

#define WRITE_BYTES 65536

struct records {
    struct vigil_activity *a;
    size_t count, capacity;
    bool out_of_memory;
};

static void collect(const struct vigil_ring_record *record, void *user)
{
    struct records *r = user;
    if (record->type != VIGIL_RECORD_ACTIVITY)
        return;
    if (r->count == r->capacity) {
        size_t capacity = r->capacity ? 2 * r->capacity : 1024;
        struct vigil_activity *a = realloc(r->a, capacity * sizeof *a);
        if (a == NULL) {
            r->out_of_memory = true;
            return;
        }
        r->a = a;
        r->capacity = capacity;
    }
    r->a[r->count++] = record->activity;
}

static int rank = -1;
static int problems;

__attribute__((format(printf, 1, 2))) static void problem(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("mpi-children: rank %d: ", rank);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    problems++;
}

static bool is_mpiio(const struct vigil_activity *a)
{
    return a->layer == VIGIL_LAYER_MPIIO;
}

static bool is_posix(const struct vigil_activity *a)
{
    return a->layer == VIGIL_LAYER_POSIX;
}

static bool within(const struct vigil_activity *child, const struct vigil_activity *parent)
{
    return child->start_ns >= parent->start_ns && child->end_ns <= parent->end_ns;
}

static void describe(const char *what, const struct vigil_activity *a)
{
    problem("%s: %s %s, thread %" PRIu32 ", start %" PRIu64 ", end %" PRIu64 ", parent %" PRIu64,
            what, vigil_layer_name(a->layer), vigil_op_name(a->op), a->thread_id, a->start_ns,
            a->end_ns, a->parent_start_ns);
}

/* The MPI-IO activity of `thread` that started at `start`, or NULL. */
static const struct vigil_activity *mpiio_started_at(const struct records *r, uint32_t thread,
                                                     uint64_t start)
{
    for (size_t i = 0; i < r->count; i++)
        if (is_mpiio(&r->a[i]) && r->a[i].thread_id == thread && r->a[i].start_ns == start)
            return &r->a[i];
    return NULL;
}

/* Returns the number of POSIX children of the write_at. */
static size_t check(const struct records *r, int ranks)
{
    const struct vigil_activity *write_at = NULL;
    size_t write_ats = 0;
    for (size_t i = 0; i < r->count; i++)
        if (is_mpiio(&r->a[i]) && r->a[i].op == VIGIL_OP_MPIIO_WRITE_AT) {
            write_at = &r->a[i];
            write_ats++;
        }
    if (write_ats != 1) {
        problem("%zu MPI-IO write_at activities in the ring, not 1", write_ats);
        return 0;
    }
    if (write_at->bytes_asked != WRITE_BYTES || write_at->result != MPI_SUCCESS ||
        write_at->offset_bytes != (int64_t)rank * WRITE_BYTES ||
        write_at->comm_size != (uint32_t)ranks || write_at->file_id == VIGIL_FILE_NONE ||
        (write_at->flags & VIGIL_ACTIVITY_COLLECTIVE) != 0)
        problem("the write_at activity says bytes %" PRIu64 ", result %" PRId64 ", offset %" PRId64
                ", comm_size %" PRIu32 ", file %" PRIu32 ", flags %#" PRIx32
                "; the call was %d bytes at %d, %d ranks, independent",
                write_at->bytes_asked, write_at->result, write_at->offset_bytes,
                write_at->comm_size, write_at->file_id, write_at->flags, WRITE_BYTES,
                rank * WRITE_BYTES, ranks);

    size_t children = 0, data_children = 0;
    for (size_t i = 0; i < r->count; i++) {
        const struct vigil_activity *a = &r->a[i];
        if (!is_posix(a) || a->parent_start_ns != write_at->start_ns ||
            a->thread_id != write_at->thread_id)
            continue;
        children++;
        if (a->op == VIGIL_OP_POSIX_PWRITE || a->op == VIGIL_OP_POSIX_WRITE)
            data_children++;
        if (!within(a, write_at))
            describe("a child of the write_at lies outside it", a);
    }
    if (data_children == 0)
        problem("none of the %zu POSIX activities under the write_at is a write or pwrite",
                children);

    for (size_t i = 0; i < r->count; i++) {
        const struct vigil_activity *a = &r->a[i];
        if (!is_posix(a))
            continue;
        if (a->parent_start_ns != 0) {
            const struct vigil_activity *parent =
                mpiio_started_at(r, a->thread_id, a->parent_start_ns);
            if (parent == NULL)
                describe("a POSIX activity claims a parent that is no MPI-IO call", a);
            else if (!within(a, parent))
                describe("a POSIX activity lies outside the MPI-IO call it claims", a);
            continue;
        }
        for (size_t j = 0; j < r->count; j++) {
            const struct vigil_activity *m = &r->a[j];
            if (is_mpiio(m) && m->thread_id == a->thread_id && within(a, m))
                describe("a POSIX activity within an MPI-IO call does not claim it", a);
        }
    }
    return children;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "mpi-children: MPI_Init failed\n");
        return 1;
    }
    int ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi-children DIR\n");
        MPI_Finalize();
        return 2;
    }
    int (*ring_fd)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "vigil_preload_ring_fd");
    int fd = ring_fd != NULL ? ring_fd() : -1;
    if (fd < 0) {
        printf("no vigil (rank %d)\n", rank);
        MPI_Finalize();
        return 2;
    }

    char path[4096];
    snprintf(path, sizeof path, "%s/children.dat", argv[1]);
    static char data[WRITE_BYTES];
    memset(data, 'a' + rank % 26, sizeof data);
    MPI_File fh;
    MPI_Status status;
    int rc =
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        problem("MPI_File_open %s failed: %d", path, rc);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    rc =
        MPI_File_write_at(fh, (MPI_Offset)rank * WRITE_BYTES, data, WRITE_BYTES, MPI_BYTE, &status);
    int done = 0;
    if (rc != MPI_SUCCESS || MPI_Get_count(&status, MPI_BYTE, &done) != MPI_SUCCESS ||
        done != WRITE_BYTES)
        problem("MPI_File_write_at: rc %d, %d of %d bytes", rc, done, WRITE_BYTES);
    if (MPI_File_close(&fh) != MPI_SUCCESS)
        problem("MPI_File_close failed");

    struct vigil_error err;
    struct vigil_ring *ring = vigil_ring_attach(fd, &err);
    size_t children = 0;
    if (ring == NULL) {
        problem("cannot read the library's ring: %s", err.message);
    } else {
        struct records records = {0};
        struct vigil_ring_drain_report report;
        vigil_ring_drain(ring, SIZE_MAX, 0, NULL, collect, &records, &report);
        if (records.out_of_memory)
            problem("out of memory reading the ring");
        /* A gap would make "exactly one" and "none outside" meaningless. */
        if (report.corrupt || report.torn || report.dropped || report.header_corrupt)
            problem("the ring lost records: %" PRIu64 " corrupt, %" PRIu64 " torn, %" PRIu64
                    " dropped%s %s",
                    report.corrupt, report.torn, report.dropped,
                    report.header_corrupt ? ", header corrupt:" : "", report.first_problem.message);
        children = check(&records, ranks);
        free(records.a);
        /* Left mapped: the descriptor is the library's, still in use. */
    }
    if (problems == 0)
        printf("children ok %zu (rank %d)\n", children, rank);
    fflush(stdout);
    MPI_Finalize();
    return problems == 0 ? 0 : 1;
}
