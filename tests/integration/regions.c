/* A program annotated with code regions, for tests/integration/
 * test_regions.c: "main" holds "io" (writes then reads back a file of
 * known size, with a known number of calls) and "compute" (a loop that
 * does no I/O). Built three ways from this one source: with vigil's API
 * (vigil/vigil.h, linked to libvigil-region.so), with likwid's markers
 * (-DUSE_LIKWID -DLIKWID_PERFMON, linked to liblikwid), and with MPI
 * (-DUSE_MPI: each rank does the same in a file of its own).
 *
 * stdout gets what the program did, the same with or without vigil; stderr
 * gets the times it measured itself inside each region ("time REGION
 * WALL_NS CPU_NS"): the regions as vigil sees them begin before and end
 * after those, so they must be at least as long. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef USE_LIKWID
#include <likwid-marker.h>
#define REGION_BEGIN(name) LIKWID_MARKER_START(name)
#define REGION_END(name)   LIKWID_MARKER_STOP(name)
#else
#include <vigil/vigil.h>
#define REGION_BEGIN(name) vigil_region_begin(name)
#define REGION_END(name)   vigil_region_end(name)
#endif
#ifdef USE_MPI
#include <mpi.h>
#endif

#define BLOCKS      16
#define BLOCK_BYTES 4096

static uint64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Printed after the regions: stderr inside one would be I/O of its own. */
struct interval {
    uint64_t wall_ns, cpu_ns;
    uint64_t took_wall_ns, took_cpu_ns;
};

static void start(struct interval *i)
{
    i->wall_ns = now_ns(CLOCK_MONOTONIC);
    i->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void stop(struct interval *i)
{
    uint64_t cpu = now_ns(CLOCK_THREAD_CPUTIME_ID), wall = now_ns(CLOCK_MONOTONIC);
    i->took_wall_ns = wall - i->wall_ns;
    i->took_cpu_ns = cpu - i->cpu_ns;
}

static void print_time(const struct interval *i, const char *name)
{
    fprintf(stderr, "time %s %llu %llu\n", name, (unsigned long long)i->took_wall_ns,
            (unsigned long long)i->took_cpu_ns);
}

/* open, BLOCKS writes, BLOCKS preads, close: 2 + 2 * BLOCKS calls. */
static long do_io(const char *path)
{
    static char block[BLOCK_BYTES];
    memset(block, 'v', sizeof block);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    long moved = 0;
    for (int i = 0; i < BLOCKS; i++)
        moved += write(fd, block, sizeof block);
    for (int i = 0; i < BLOCKS; i++)
        moved += pread(fd, block, sizeof block, (off_t)i * BLOCK_BYTES);
    close(fd);
    return moved;
}

static double do_compute(long n)
{
    volatile double sum = 0;
    for (long i = 1; i <= n; i++)
        sum += 1.0 / ((double)i * (double)i);
    return sum;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    long n = argc > 2 ? atol(argv[2]) : 20000000;
    int rank = 0;
#ifdef USE_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
#ifdef USE_LIKWID
    LIKWID_MARKER_INIT;
#endif
    char path[4096];
    snprintf(path, sizeof path, "%s/regions-%d.dat", dir, rank);
    struct interval whole, io, compute;

    REGION_BEGIN("main");
    start(&whole);
    REGION_BEGIN("io");
    start(&io);
    long moved = do_io(path);
    stop(&io);
    REGION_END("io");
    REGION_BEGIN("compute");
    start(&compute);
    double sum = do_compute(n);
    stop(&compute);
    REGION_END("compute");
    stop(&whole);
    REGION_END("main");
    print_time(&io, "io");
    print_time(&compute, "compute");
    print_time(&whole, "main");

#ifdef USE_LIKWID
    LIKWID_MARKER_CLOSE;
#endif
    printf("rank %d: io moved %ld bytes in %d calls; compute sum %.6f\n", rank, moved,
           2 + 2 * BLOCKS, sum);
#ifdef USE_MPI
    MPI_Finalize();
#endif
    return 0;
}
