/* mpi-io-levels: a plain MPI program (nothing of vigil in it) that writes
 * a shared file and reads it back at one of the four levels of access of
 * the SIOX paper (Parabench, Table 1), so that what vigil reports about an
 * MPI-IO program can be compared with what the program knows it did.
 *
 *   mpi-io-levels [--level L] [--block-bytes B] [--blocks N] [--file PATH]
 *
 *   level 0  independent, contiguous       N x MPI_File_write_at / read_at
 *   level 1  collective, contiguous        N x MPI_File_write_at_all / read_at_all
 *   level 2  independent, non-contiguous   a strided view, 1 x MPI_File_write / read
 *   level 3  collective, non-contiguous    a strided view, 1 x MPI_File_write_all / read_all
 *
 * With P ranks, block i of rank r is at byte (i * P + r) * B: the ranks
 * interleave, so that the non-contiguous levels have something to merge.
 * Each rank reads back its own blocks and checks them.
 *
 * Rank 0 prints one JSON line: every MPI_File_* call made, counted as it
 * was made and summed over the ranks, the bytes of the data calls, and
 * the slowest rank's write and read times. MPI_File_set_errhandler is not
 * counted: it is set-up, not I/O, and is not among the operations that
 * are compared. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

enum op {
    OP_WRITE_AT,
    OP_WRITE_AT_ALL,
    OP_WRITE,
    OP_WRITE_ALL,
    OP_READ_AT,
    OP_READ_AT_ALL,
    OP_READ,
    OP_READ_ALL,
    OP_OPEN,
    OP_CLOSE,
    OP_DELETE,
    OP_SYNC,
    OP_SET_VIEW,
    OP_COUNT
};

/* Each op is reported as MPI_File_<name> without the prefix. */
static const char *const op_names[OP_COUNT] = {
    [OP_WRITE_AT] = "write_at", [OP_WRITE_AT_ALL] = "write_at_all",
    [OP_WRITE] = "write",       [OP_WRITE_ALL] = "write_all",
    [OP_READ_AT] = "read_at",   [OP_READ_AT_ALL] = "read_at_all",
    [OP_READ] = "read",         [OP_READ_ALL] = "read_all",
    [OP_OPEN] = "open",         [OP_CLOSE] = "close",
    [OP_DELETE] = "delete",     [OP_SYNC] = "sync",
    [OP_SET_VIEW] = "set_view",
};

struct level {
    enum op write, read;
    bool strided; /* one call through a file view instead of one per block */
};

static const struct level levels[] = {
    {OP_WRITE_AT, OP_READ_AT, false},
    {OP_WRITE_AT_ALL, OP_READ_AT_ALL, false},
    {OP_WRITE, OP_READ, true},
    {OP_WRITE_ALL, OP_READ_ALL, true},
};

struct options {
    int level;
    int block_bytes;
    int blocks;
    const char *path;
};

struct run {
    struct options opt;
    int rank, ranks;
    MPI_File fh;
    MPI_Datatype filetype; /* the strided levels' view; MPI_DATATYPE_NULL otherwise */
    unsigned char *written, *read_back;
    /* The calls of each op, then the bytes written and read, so that one
     * reduction sums them all. */
    long long totals[OP_COUNT + 2];
};

enum { BYTES_WRITTEN = OP_COUNT, BYTES_READ = OP_COUNT + 1 };

static int my_rank = -1;

/* One rank failing must not leave the others waiting in a collective call:
 * MPI_Abort takes them all down, and mpirun exits with its code. */
__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpi-io-levels: rank %d: ", my_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1); /* MPI_Abort does not return, but is not declared so */
}

static void check(int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "error code %d", rc);
    die("%s: %s", call, text);
}

static void check_file(int rc, enum op op)
{
    char call[64];
    snprintf(call, sizeof call, "MPI_File_%s", op_names[op]);
    check(rc, call);
}

/* ---- the data ----------------------------------------------------------- */

/* Every byte depends on the rank and the block as well as on its place, so
 * a block read from another rank's or another block's place is caught, not
 * only one that was never written. */
static unsigned char pattern_byte(int rank, int block, int j)
{
    uint32_t x =
        (uint32_t)rank * 0x9e3779b1u ^ (uint32_t)block * 0x85ebca6bu ^ (uint32_t)j * 0xc2b2ae35u;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return (unsigned char)(x >> 24);
}

static void fill(struct run *r)
{
    for (int i = 0; i < r->opt.blocks; i++)
        for (int j = 0; j < r->opt.block_bytes; j++)
            r->written[(size_t)i * (size_t)r->opt.block_bytes + (size_t)j] =
                pattern_byte(r->rank, i, j);
}

static void verify(const struct run *r)
{
    size_t b = (size_t)r->opt.block_bytes;
    for (int i = 0; i < r->opt.blocks; i++) {
        const unsigned char *got = r->read_back + (size_t)i * b;
        if (memcmp(got, r->written + (size_t)i * b, b) == 0)
            continue;
        size_t j = 0;
        while (got[j] == r->written[(size_t)i * b + j])
            j++;
        die("block %d read back wrong at its byte %zu (file offset %lld): 0x%02x, not 0x%02x", i, j,
            ((long long)i * r->ranks + r->rank) * r->opt.block_bytes + (long long)j, got[j],
            r->written[(size_t)i * b + j]);
    }
}

/* ---- the calls ---------------------------------------------------------- */

/* One data call of any kind; `at` is used by the explicit-offset ones. */
static void transfer(struct run *r, enum op op, MPI_Offset at, void *buf, int count)
{
    MPI_Status st;
    int rc = MPI_ERR_OTHER;
    switch (op) {
    case OP_WRITE_AT:
        rc = MPI_File_write_at(r->fh, at, buf, count, MPI_BYTE, &st);
        break;
    case OP_WRITE_AT_ALL:
        rc = MPI_File_write_at_all(r->fh, at, buf, count, MPI_BYTE, &st);
        break;
    case OP_WRITE:
        rc = MPI_File_write(r->fh, buf, count, MPI_BYTE, &st);
        break;
    case OP_WRITE_ALL:
        rc = MPI_File_write_all(r->fh, buf, count, MPI_BYTE, &st);
        break;
    case OP_READ_AT:
        rc = MPI_File_read_at(r->fh, at, buf, count, MPI_BYTE, &st);
        break;
    case OP_READ_AT_ALL:
        rc = MPI_File_read_at_all(r->fh, at, buf, count, MPI_BYTE, &st);
        break;
    case OP_READ:
        rc = MPI_File_read(r->fh, buf, count, MPI_BYTE, &st);
        break;
    case OP_READ_ALL:
        rc = MPI_File_read_all(r->fh, buf, count, MPI_BYTE, &st);
        break;
    default:
        die("transfer: %s is not a data call", op_names[op]);
    }
    r->totals[op]++;
    check_file(rc, op);

    /* A short transfer would make the totals claim bytes that never moved. */
    int done = 0, size = 0;
    check(MPI_Get_count(&st, MPI_BYTE, &done), "MPI_Get_count");
    if (done != count)
        die("MPI_File_%s moved %d of %d bytes", op_names[op], done, count);
    check(MPI_Type_size(MPI_BYTE, &size), "MPI_Type_size");
    bool is_write = op <= OP_WRITE_ALL;
    r->totals[is_write ? BYTES_WRITTEN : BYTES_READ] += (long long)count * size;
}

/* A leftover file from an earlier run would hide blocks never written. */
static void delete_old_file(struct run *r)
{
    if (r->rank == 0) {
        int rc = MPI_File_delete(r->opt.path, MPI_INFO_NULL);
        r->totals[OP_DELETE]++;
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            check(MPI_Error_class(rc, &cls), "MPI_Error_class");
        if (cls != MPI_ERR_NO_SUCH_FILE)
            check_file(rc, OP_DELETE);
    }
    /* Opening with MPI_MODE_CREATE elsewhere must not race the delete. */
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

static void open_file(struct run *r)
{
    int rc = MPI_File_open(MPI_COMM_WORLD, r->opt.path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                           MPI_INFO_NULL, &r->fh);
    r->totals[OP_OPEN]++;
    check_file(rc, OP_OPEN);
}

static void close_file(struct run *r)
{
    int rc = MPI_File_close(&r->fh);
    r->totals[OP_CLOSE]++;
    check_file(rc, OP_CLOSE);
}

static void sync_file(struct run *r)
{
    int rc = MPI_File_sync(r->fh);
    r->totals[OP_SYNC]++;
    check_file(rc, OP_SYNC);
}

/* Rank r sees blocks of B bytes, P * B apart, starting at r * B. The
 * vector ends after its last block; resized to the whole file, a second
 * tile of the view would start where the next round of blocks would. */
static void make_filetype(struct run *r)
{
    MPI_Datatype vector;
    int b = r->opt.block_bytes;
    check(MPI_Type_vector(r->opt.blocks, b, r->ranks * b, MPI_BYTE, &vector), "MPI_Type_vector");
    MPI_Aint extent = (MPI_Aint)r->opt.blocks * r->ranks * b;
    check(MPI_Type_create_resized(vector, 0, extent, &r->filetype), "MPI_Type_create_resized");
    check(MPI_Type_commit(&r->filetype), "MPI_Type_commit");
    check(MPI_Type_free(&vector), "MPI_Type_free");
}

/* Setting the view also puts the file pointer back at its start, which is
 * what lets the read begin where the write did. */
static void set_view(struct run *r)
{
    MPI_Offset disp = (MPI_Offset)r->rank * r->opt.block_bytes;
    int rc = MPI_File_set_view(r->fh, disp, MPI_BYTE, r->filetype, "native", MPI_INFO_NULL);
    r->totals[OP_SET_VIEW]++;
    check_file(rc, OP_SET_VIEW);
}

/* Writes or reads all of this rank's blocks the way the level does. */
static void access_blocks(struct run *r, enum op op, unsigned char *buf)
{
    const struct level *lv = &levels[r->opt.level];
    int b = r->opt.block_bytes;
    if (lv->strided) {
        set_view(r);
        transfer(r, op, 0, buf, r->opt.blocks * b);
        return;
    }
    for (int i = 0; i < r->opt.blocks; i++) {
        MPI_Offset at = ((MPI_Offset)i * r->ranks + r->rank) * b;
        transfer(r, op, at, buf + (size_t)i * (size_t)b, b);
    }
}

/* ---- the command line --------------------------------------------------- */

static bool parse_int(const char *s, int min, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > INT_MAX)
        return false;
    *out = (int)v;
    return true;
}

/* Every rank parses the same arguments, so all of them agree on failing;
 * rank 0 alone says why. */
static bool parse_args(int argc, char **argv, int rank, struct options *o)
{
    *o = (struct options){0, 65536, 64, "./mpi-io-levels.dat"};
    for (int i = 1; i < argc; i += 2) {
        const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = value != NULL;
        if (ok && strcmp(name, "--level") == 0)
            ok = parse_int(value, 0, &o->level) && o->level <= 3;
        else if (ok && strcmp(name, "--block-bytes") == 0)
            ok = parse_int(value, 1, &o->block_bytes);
        else if (ok && strcmp(name, "--blocks") == 0)
            ok = parse_int(value, 1, &o->blocks);
        else if (ok && strcmp(name, "--file") == 0)
            o->path = value;
        else
            ok = false;
        if (!ok) {
            if (rank == 0)
                fprintf(stderr,
                        "usage: mpi-io-levels [--level 0-3] [--block-bytes B] [--blocks N] "
                        "[--file PATH]\n(bad or missing value at '%s')\n",
                        name);
            return false;
        }
    }
    return true;
}

/* MPI counts and strides are ints: a rank's share and the distance between
 * two of its blocks must fit in one. */
static void check_sizes(const struct run *r)
{
    long long b = r->opt.block_bytes;
    if (b * r->opt.blocks > INT_MAX || b * r->ranks > INT_MAX)
        die("--blocks x --block-bytes and ranks x --block-bytes must be at most %d", INT_MAX);
}

/* ---- the report --------------------------------------------------------- */

static void print_report(const struct run *r, const long long *totals, const double *seconds)
{
    printf("{\"level\":%d,\"ranks\":%d,\"block_bytes\":%d,\"blocks\":%d,"
           "\"bytes_written\":%lld,\"bytes_read\":%lld,\"calls\":{",
           r->opt.level, r->ranks, r->opt.block_bytes, r->opt.blocks, totals[BYTES_WRITTEN],
           totals[BYTES_READ]);
    const char *sep = "";
    for (int op = 0; op < OP_COUNT; op++) {
        if (totals[op] == 0)
            continue; /* only the calls that were made */
        printf("%s\"%s\":%lld", sep, op_names[op], totals[op]);
        sep = ",";
    }
    printf("},\"write_seconds\":%.6f,\"read_seconds\":%.6f}\n", seconds[0], seconds[1]);
    fflush(stdout);
}

static void report(const struct run *r, const double *mine)
{
    long long totals[OP_COUNT + 2];
    double slowest[2];
    check(MPI_Reduce(r->totals, totals, OP_COUNT + 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD),
          "MPI_Reduce");
    check(MPI_Reduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
    if (r->rank == 0)
        print_report(r, totals, slowest);
}

/* ---- main --------------------------------------------------------------- */

static void setup(struct run *r)
{
    /* Files opened after this inherit it from MPI_FILE_NULL, as do delete
     * and open themselves. */
    check(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), "MPI_File_set_errhandler");
    check_sizes(r);
    size_t share = (size_t)r->opt.blocks * (size_t)r->opt.block_bytes;
    r->written = malloc(share);
    r->read_back = calloc(share, 1);
    if (r->written == NULL || r->read_back == NULL)
        die("cannot allocate 2 x %zu bytes", share);
    fill(r);
    r->filetype = MPI_DATATYPE_NULL;
    if (levels[r->opt.level].strided)
        make_filetype(r);
}

/* Both phases start together and end with the data where the next phase
 * can see it, so the slowest rank's time is the time of the phase. The
 * sync is part of the write: without it the write may not have happened. */
static void run_phases(struct run *r, double *seconds)
{
    const struct level *lv = &levels[r->opt.level];
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    double t0 = MPI_Wtime();
    access_blocks(r, lv->write, r->written);
    sync_file(r);
    seconds[0] = MPI_Wtime() - t0;
    check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    t0 = MPI_Wtime();
    access_blocks(r, lv->read, r->read_back);
    seconds[1] = MPI_Wtime() - t0;
}

/* After MPI_Finalize there is no MPI_Abort to call. */
static int finalize(int code)
{
    if (MPI_Finalize() == MPI_SUCCESS)
        return code;
    fprintf(stderr, "mpi-io-levels: rank %d: MPI_Finalize failed\n", my_rank);
    return 1;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "mpi-io-levels: MPI_Init failed\n");
        return 1;
    }
    /* Return codes are checked, so errors must come back as codes, not
     * end the program where they happen. */
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    struct run r = {0};
    check(MPI_Comm_rank(MPI_COMM_WORLD, &r.rank), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &r.ranks), "MPI_Comm_size");
    my_rank = r.rank;
    if (!parse_args(argc, argv, r.rank, &r.opt)) {
        return finalize(2);
    }
    setup(&r);

    double seconds[2];
    delete_old_file(&r);
    open_file(&r);
    run_phases(&r, seconds);
    close_file(&r);
    verify(&r);
    report(&r, seconds);

    if (r.filetype != MPI_DATATYPE_NULL)
        check(MPI_Type_free(&r.filetype), "MPI_Type_free");
    free(r.written);
    free(r.read_back);
    return finalize(0);
}
