/* mpi-file-patterns: a plain MPI program (nothing of vigil in it) that uses
 * files in patterns whose per-file counts are known exactly, for the files
 * of an MPI job's report (tests/mpi/test_mpi_files.c):
 *
 *   mpi-file-patterns DIR
 *
 * With P ranks and blocks of B = 4096 bytes, rank r:
 *   DIR/coll.dat   (shared) 2 x MPI_File_write_at_all of a block at
 *                  (i * P + r) * B, then 1 x MPI_File_read_at_all of block r
 *   DIR/indep.dat  (shared) r + 1 x MPI_File_write_at of a block, each rank
 *                  in its own range, then 1 x MPI_File_read_at of its first
 *   DIR/split.dat  (shared) MPI_File_write_at_all_begin/end of block r, then
 *                  MPI_File_read_all_begin/end of one block (the file pointer)
 *   DIR/nb.dat     (shared) 2 x MPI_File_iwrite_at (blocks 2r, 2r + 1) and
 *                  MPI_Waitall, then 1 x MPI_File_iread_at of block 2r and
 *                  MPI_Wait
 * and then a file of its own: ranks r < P / 2
 *   DIR/own-R.dat  (MPI_COMM_SELF) 3 x MPI_File_write_at of a block
 * the others
 *   DIR/posix-R.dat (POSIX) 2 x write of a block
 * Every call is checked; a failure exits with 1 and a message. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define B 4096

static char block[B];

static void check(int ret, const char *what)
{
    if (ret != MPI_SUCCESS) {
        fprintf(stderr, "mpi-file-patterns: %s failed (%d)\n", what, ret);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static MPI_File open_file(MPI_Comm comm, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    MPI_File fh;
    check(MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh), path);
    return fh;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: mpi-file-patterns DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *dir = argv[1];
    int rank, ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    memset(block, 'a' + rank % 26, sizeof block);
    MPI_Offset b = B;

    MPI_File fh = open_file(MPI_COMM_WORLD, dir, "coll.dat");
    for (int i = 0; i < 2; i++)
        check(MPI_File_write_at_all(fh, ((MPI_Offset)i * ranks + rank) * b, block, B, MPI_BYTE,
                                    MPI_STATUS_IGNORE),
              "coll.dat: MPI_File_write_at_all");
    check(MPI_File_read_at_all(fh, rank * b, block, B, MPI_BYTE, MPI_STATUS_IGNORE),
          "coll.dat: MPI_File_read_at_all");
    check(MPI_File_close(&fh), "coll.dat: MPI_File_close");

    fh = open_file(MPI_COMM_WORLD, dir, "indep.dat");
    MPI_Offset first = (MPI_Offset)rank * (rank + 1) / 2; /* rank r's range starts here */
    for (int i = 0; i <= rank; i++)
        check(MPI_File_write_at(fh, (first + i) * b, block, B, MPI_BYTE, MPI_STATUS_IGNORE),
              "indep.dat: MPI_File_write_at");
    check(MPI_File_read_at(fh, first * b, block, B, MPI_BYTE, MPI_STATUS_IGNORE),
          "indep.dat: MPI_File_read_at");
    check(MPI_File_close(&fh), "indep.dat: MPI_File_close");

    fh = open_file(MPI_COMM_WORLD, dir, "split.dat");
    check(MPI_File_write_at_all_begin(fh, rank * b, block, B, MPI_BYTE),
          "split.dat: MPI_File_write_at_all_begin");
    check(MPI_File_write_at_all_end(fh, block, MPI_STATUS_IGNORE),
          "split.dat: MPI_File_write_at_all_end");
    check(MPI_File_read_all_begin(fh, block, B, MPI_BYTE), "split.dat: MPI_File_read_all_begin");
    check(MPI_File_read_all_end(fh, block, MPI_STATUS_IGNORE), "split.dat: MPI_File_read_all_end");
    check(MPI_File_close(&fh), "split.dat: MPI_File_close");

    fh = open_file(MPI_COMM_WORLD, dir, "nb.dat");
    static char second[B];
    MPI_Request requests[2];
    check(MPI_File_iwrite_at(fh, 2 * rank * b, block, B, MPI_BYTE, &requests[0]),
          "nb.dat: MPI_File_iwrite_at");
    check(MPI_File_iwrite_at(fh, (2 * rank + 1) * b, second, B, MPI_BYTE, &requests[1]),
          "nb.dat: MPI_File_iwrite_at");
    check(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), "nb.dat: MPI_Waitall");
    check(MPI_File_iread_at(fh, 2 * rank * b, block, B, MPI_BYTE, &requests[0]),
          "nb.dat: MPI_File_iread_at");
    check(MPI_Wait(&requests[0], MPI_STATUS_IGNORE), "nb.dat: MPI_Wait");
    check(MPI_File_close(&fh), "nb.dat: MPI_File_close");

    if (rank < ranks / 2) {
        char name[64];
        snprintf(name, sizeof name, "own-%d.dat", rank);
        fh = open_file(MPI_COMM_SELF, dir, name);
        for (int i = 0; i < 3; i++)
            check(MPI_File_write_at(fh, i * b, block, B, MPI_BYTE, MPI_STATUS_IGNORE),
                  "own: MPI_File_write_at");
        check(MPI_File_close(&fh), "own: MPI_File_close");
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s/posix-%d.dat", dir, rank);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, block, B) != B || write(fd, block, B) != B || close(fd) != 0) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }

    /* Every rank's line on its own standard output: one name, four streams. */
    char line[32];
    int length = snprintf(line, sizeof line, "rank %d done\n", rank);
    if (write(1, line, (size_t)length) != length)
        MPI_Abort(MPI_COMM_WORLD, 1);

    MPI_Finalize();
    return 0;
}
