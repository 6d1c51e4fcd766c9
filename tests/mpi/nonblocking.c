/* mpi-nonblocking — nonblocking MPI-IO, completed every way MPI offers.
 *
 * usage: mpi-nonblocking DIR K
 *
 * Every rank writes K blocks of 4 KiB to DIR/nonblocking.dat (opened on
 * MPI_COMM_WORLD) with K MPI_File_iwrite_at, block i of rank r at
 * (i x ranks + r) x 4 KiB, and completes them with one MPI_Waitall. Then it
 * reads them back with K MPI_File_iread_at and completes those with a mix:
 * the first half with one MPI_Waitall; of the rest, one with MPI_Test in a
 * loop, one with MPI_Waitany, one with MPI_Wait, and the others with
 * MPI_Testsome in a loop (with K = 8: one each). Every request is completed
 * exactly once. Checks each transfer's count and the data read, and exits
 * 0; else says what is wrong and exits 1. Plain MPI: nothing of vigil. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define BLOCK 4096

static int rank = -1;

__attribute__((noreturn)) static void die(const char *what, int rc)
{
    fprintf(stderr, "mpi-nonblocking: rank %d: %s failed (%d)\n", rank, what, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS)
        die(what, rc);
}

static void check_count(const MPI_Status *status, const char *what)
{
    int count = 0;
    check(MPI_Get_count(status, MPI_BYTE, &count), "MPI_Get_count");
    if (count != BLOCK) {
        fprintf(stderr, "mpi-nonblocking: rank %d: %s moved %d bytes, not %d\n", rank, what, count,
                BLOCK);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static unsigned char pattern(int r, int block, int j)
{
    return (unsigned char)(r * 131 + block * 17 + j * 7 + (j >> 8));
}

/* Whether any of requests[from..to) is still active. */
static int pending(const MPI_Request *requests, int from, int to)
{
    for (int i = from; i < to; i++)
        if (requests[i] != MPI_REQUEST_NULL)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    int ranks = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    int k = argc == 3 ? atoi(argv[2]) : 0;
    if (k < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi-nonblocking DIR K (K >= 1)\n");
        MPI_Finalize();
        return 2;
    }
    check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), "MPI_File_set_errhandler");

    unsigned char *out = malloc((size_t)k * BLOCK), *in = calloc((size_t)k, BLOCK);
    MPI_Request *requests = malloc((size_t)k * sizeof *requests);
    MPI_Status *statuses = malloc((size_t)k * sizeof *statuses);
    int *indices = malloc((size_t)k * sizeof *indices);
    if (out == NULL || in == NULL || requests == NULL || statuses == NULL || indices == NULL)
        die("malloc", 0);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < BLOCK; j++)
            out[(size_t)i * BLOCK + (size_t)j] = pattern(rank, i, j);

    char path[4096];
    snprintf(path, sizeof path, "%s/nonblocking.dat", argv[1]);
    MPI_File fh;
    check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
          "MPI_File_open");

    for (int i = 0; i < k; i++)
        check(MPI_File_iwrite_at(fh, ((MPI_Offset)i * ranks + rank) * BLOCK,
                                 out + (size_t)i * BLOCK, BLOCK, MPI_BYTE, &requests[i]),
              "MPI_File_iwrite_at");
    check(MPI_Waitall(k, requests, statuses), "MPI_Waitall (writes)");
    for (int i = 0; i < k; i++)
        check_count(&statuses[i], "MPI_File_iwrite_at");

    for (int i = 0; i < k; i++)
        check(MPI_File_iread_at(fh, ((MPI_Offset)i * ranks + rank) * BLOCK, in + (size_t)i * BLOCK,
                                BLOCK, MPI_BYTE, &requests[i]),
              "MPI_File_iread_at");
    int half = k / 2;
    check(MPI_Waitall(half, requests, statuses), "MPI_Waitall (reads)");
    for (int i = 0; i < half; i++)
        check_count(&statuses[i], "MPI_File_iread_at (MPI_Waitall)");
    int next = half;
    MPI_Status status;
    if (next < k) { /* one with MPI_Test, until it is done */
        int flag = 0;
        while (!flag)
            check(MPI_Test(&requests[next], &flag, &status), "MPI_Test");
        check_count(&status, "MPI_File_iread_at (MPI_Test)");
        next++;
    }
    if (next < k) { /* one with MPI_Waitany, whichever of the rest it is */
        int index = MPI_UNDEFINED;
        check(MPI_Waitany(k - next, &requests[next], &index, &status), "MPI_Waitany");
        if (index == MPI_UNDEFINED)
            die("MPI_Waitany (it found nothing to complete)", 0);
        check_count(&status, "MPI_File_iread_at (MPI_Waitany)");
    }
    while (next < k && requests[next] == MPI_REQUEST_NULL)
        next++;
    if (next < k) { /* one with MPI_Wait */
        check(MPI_Wait(&requests[next], &status), "MPI_Wait");
        check_count(&status, "MPI_File_iread_at (MPI_Wait)");
        next++;
    }
    while (pending(requests, next, k)) { /* the others with MPI_Testsome */
        int outcount = 0;
        check(MPI_Testsome(k - next, &requests[next], &outcount, indices, statuses),
              "MPI_Testsome");
        for (int i = 0; outcount != MPI_UNDEFINED && i < outcount; i++)
            check_count(&statuses[i], "MPI_File_iread_at (MPI_Testsome)");
    }

    check(MPI_File_close(&fh), "MPI_File_close");
    for (int i = 0; i < k; i++)
        for (int j = 0; j < BLOCK; j++)
            if (in[(size_t)i * BLOCK + (size_t)j] != out[(size_t)i * BLOCK + (size_t)j]) {
                fprintf(stderr, "mpi-nonblocking: rank %d: block %d wrong at its byte %d\n", rank,
                        i, j);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    free(out);
    free(in);
    free(requests);
    free(statuses);
    free(indices);
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
