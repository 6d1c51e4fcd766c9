/* mpi-early-exit — a rank that leaves without MPI_Finalize.
 *
 * usage: mpi-early-exit DIR
 *
 * Every rank opens its own DIR/early-RANK.dat on MPI_COMM_SELF (so that no
 * rank waits for another in a collective file call) and writes 4 KiB to it
 * with one MPI_File_write_at. Rank 1 then writes its pid to DIR/rank-1.pid
 * and calls exit(0) without MPI_Finalize. The others close their file and
 * call MPI_Finalize, which cannot complete without rank 1: mpirun sees
 * rank 1 leave without finalizing and ends the job. Plain MPI: nothing of
 * vigil. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define BLOCK 4096

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2) {
        fprintf(stderr, "usage: mpi-early-exit DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/early-%d.dat", argv[1], rank);
    static char data[BLOCK];
    memset(data, 'e', sizeof data);
    MPI_File fh;
    MPI_Status status;
    if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) !=
            MPI_SUCCESS ||
        MPI_File_write_at(fh, 0, data, BLOCK, MPI_BYTE, &status) != MPI_SUCCESS) {
        fprintf(stderr, "mpi-early-exit: rank %d: cannot write %s\n", rank, path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 1) {
        snprintf(path, sizeof path, "%s/rank-1.pid", argv[1]);
        FILE *f = fopen(path, "w");
        if (f == NULL || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
            fprintf(stderr, "mpi-early-exit: rank 1: cannot write %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        exit(0);
    }
    MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
