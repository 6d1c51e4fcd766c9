/* mpi-insight-job: a plain MPI program (nothing of vigil in it) whose job
 * report must raise two findings across its ranks
 * (tests/mpi/test_mpi_findings.c):
 *
 *   mpi-insight-job DIR
 *
 * DIR/shared.dat: each of P ranks writes 300 blocks of 4 KiB with
 *   MPI_File_write_at (independent), block i of rank r at (i * P + r) * 4 KiB,
 *   where MPI_File_write_at_all would let MPI-IO aggregate them;
 * DIR/rank0.dat: rank 0 alone writes 272 MiB in 1 MiB writes (POSIX), the
 *   others nothing: rank 0 moves 4 times the mean.
 * Every call is checked; a failure exits with 1 and a message. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define B      4096
#define BLOCKS 300

static char buffer[1 << 20];

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "mpi-insight-job: %s failed\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check(argc == 2, "usage: mpi-insight-job DIR");
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    memset(buffer, 'x', sizeof buffer);
    char path[4096];

    snprintf(path, sizeof path, "%s/shared.dat", argv[1]);
    MPI_File fh;
    check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                        &fh) == MPI_SUCCESS,
          "MPI_File_open");
    for (int i = 0; i < BLOCKS; i++)
        check(MPI_File_write_at(fh, ((MPI_Offset)i * ranks + rank) * B, buffer, B, MPI_BYTE,
                                MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "MPI_File_write_at");
    check(MPI_File_close(&fh) == MPI_SUCCESS, "MPI_File_close");

    if (rank == 0) {
        snprintf(path, sizeof path, "%s/rank0.dat", argv[1]);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        check(fd >= 0, "open");
        for (int i = 0; i < 272; i++)
            check(write(fd, buffer, sizeof buffer) == (ssize_t)sizeof buffer, "write");
        check(close(fd) == 0, "close");
    }
    MPI_Finalize();
    return 0;
}
