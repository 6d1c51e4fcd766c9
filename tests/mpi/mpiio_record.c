/* mpi-mpiio-record: a plain MPI program (nothing of vigil in it) whose
 * MPI-IO calls give each file's MPI-IO record (Darshan's MPIIO_* counters)
 * known values, for tests/mpi/test_mpi_mpiio_record.c:
 *
 *   mpi-mpiio-record DIR
 *
 * Rank r, in its own 64 KiB region of the shared DIR/record.dat:
 *   MPI_File_open on MPI_COMM_WORLD, MPI_MODE_CREATE | MPI_MODE_RDWR, with
 *     an info object (a collective open, a hint)
 *   MPI_File_set_info with it (a hint: vigil's, Darshan does not see it)
 *   MPI_File_set_view with it (a view, a hint), then with MPI_INFO_NULL (a
 *     view)
 *   MPI_File_write_at of 0, 100, 101, 1024, 1025, 10240, 10240, 10241 bytes
 *     (the bin edges: 0-100 holds 100, 100-1K 101 and 1024, 1K-10K 1025 and
 *     10240, 10K-100K 10241)
 *   2 x MPI_File_write_at_all of 4096 bytes
 *   MPI_File_sync
 *   MPI_File_read_at of 1024 (a switch), MPI_File_write_at of 100 (a
 *     switch), MPI_File_read_at_all of 4096 (a switch)
 * then DIR/self-R.dat of its own: MPI_File_open on MPI_COMM_SELF (an
 * independent open), MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, and
 * MPI_File_write_at of 1 MiB (the 100K-1M bin's edge) and of 1 MiB + 1 (in
 * 1M-4M). Every call is checked; a failure exits with 1 and a message. */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#define REGION 65536

static char buffer[(1 << 20) + 1];

static void check(int ret, const char *what)
{
    if (ret != MPI_SUCCESS) {
        fprintf(stderr, "mpi-mpiio-record: %s failed (%d)\n", what, ret);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

/* Writes `bytes` at `*at` independently, and moves `*at` past them. */
static void write_at(MPI_File fh, MPI_Offset *at, int bytes)
{
    check(MPI_File_write_at(fh, *at, buffer, bytes, MPI_BYTE, MPI_STATUS_IGNORE),
          "MPI_File_write_at");
    *at += bytes;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: mpi-mpiio-record DIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096];
    snprintf(path, sizeof path, "%s/record.dat", argv[1]);

    MPI_Info info;
    check(MPI_Info_create(&info), "MPI_Info_create");
    check(MPI_Info_set(info, "access_style", "read_mostly"), "MPI_Info_set");
    MPI_File fh;
    check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh), path);
    check(MPI_File_set_info(fh, info), "MPI_File_set_info");
    check(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info), "MPI_File_set_view");
    check(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
          "MPI_File_set_view");
    MPI_Offset base = (MPI_Offset)rank * REGION, at = base;
    static const int sizes[] = {0, 100, 101, 1024, 1025, 10240, 10240, 10241};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        write_at(fh, &at, sizes[i]);
    MPI_Offset collective = base + 40000;
    for (int i = 0; i < 2; i++)
        check(MPI_File_write_at_all(fh, collective + i * 4096, buffer, 4096, MPI_BYTE,
                                    MPI_STATUS_IGNORE),
              "MPI_File_write_at_all");
    check(MPI_File_sync(fh), "MPI_File_sync");
    check(MPI_File_read_at(fh, base, buffer, 1024, MPI_BYTE, MPI_STATUS_IGNORE),
          "MPI_File_read_at");
    at = base + 50000;
    write_at(fh, &at, 100);
    check(MPI_File_read_at_all(fh, collective, buffer, 4096, MPI_BYTE, MPI_STATUS_IGNORE),
          "MPI_File_read_at_all");
    check(MPI_File_close(&fh), "MPI_File_close");
    check(MPI_Info_free(&info), "MPI_Info_free");

    snprintf(path, sizeof path, "%s/self-%d.dat", argv[1], rank);
    check(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
          path);
    at = 0;
    write_at(fh, &at, 1 << 20);
    write_at(fh, &at, (1 << 20) + 1);
    check(MPI_File_close(&fh), "MPI_File_close");

    MPI_Finalize();
    return 0;
}
