/* Workloads whose findings are known (tests/integration/test_findings.c):
 * each does one thing an I/O expert would point at, in a file of the
 * current folder, and prints its pid. Plain C: nothing of vigil in it.
 *
 *   small       2000 pwrites of 512 bytes, each on its own 4 KiB block
 *   misaligned  2000 pwrites of 1 KiB one after the other (IOR's 1 KiB transfers): 3 in
 *               4 do not start on a 4 KiB block
 *   random      2000 preads of 64 KiB at scattered 64 KiB blocks of a 64 MiB file
 *   reopen      one file opened and closed 1000 times
 *   fsync       200 writes of 4 KiB, each followed by fsync
 *   flushed     2000 fwrites of 16 bytes, each followed by fflush
 *   unbuffered  2000 fwrites of 16 bytes to a stream made unbuffered with setvbuf
 *   clean       64 MiB written in 1 MiB writes, in order */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buffer[1 << 20];

static int open_or_die(const char *path, int flags)
{
    int fd = open(path, flags, 0644);
    if (fd < 0) {
        perror(path);
        exit(1);
    }
    return fd;
}

static void must(int ok, const char *what)
{
    if (!ok) {
        perror(what);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: insight-workloads "
                        "small|misaligned|random|reopen|fsync|flushed|unbuffered|clean\n");
        return 2;
    }
    const char *mode = argv[1];
    memset(buffer, 'x', sizeof buffer);
    if (strcmp(mode, "small") == 0) {
        int fd = open_or_die("small.dat", O_WRONLY | O_CREAT | O_TRUNC);
        for (int i = 0; i < 2000; i++)
            must(pwrite(fd, buffer, 512, (off_t)i * 4096) == 512, "pwrite");
        close(fd);
    } else if (strcmp(mode, "misaligned") == 0) {
        int fd = open_or_die("misaligned.dat", O_WRONLY | O_CREAT | O_TRUNC);
        for (int i = 0; i < 2000; i++)
            must(pwrite(fd, buffer, 1024, (off_t)i * 1024) == 1024, "pwrite");
        close(fd);
    } else if (strcmp(mode, "random") == 0) {
        int fd = open_or_die("random.dat", O_RDWR | O_CREAT | O_TRUNC);
        must(ftruncate(fd, 64 << 20) == 0, "ftruncate");
        uint32_t x = 12345; /* a fixed LCG: the same offsets every run */
        for (int i = 0; i < 2000; i++) {
            x = x * 1103515245u + 12345u;
            off_t block = (off_t)((x >> 8) % 1024);
            must(pread(fd, buffer, 65536, block * 65536) == 65536, "pread");
        }
        close(fd);
    } else if (strcmp(mode, "reopen") == 0) {
        close(open_or_die("reopen.dat", O_WRONLY | O_CREAT | O_TRUNC));
        for (int i = 0; i < 999; i++)
            close(open_or_die("reopen.dat", O_RDONLY));
    } else if (strcmp(mode, "fsync") == 0) {
        int fd = open_or_die("fsync.dat", O_WRONLY | O_CREAT | O_TRUNC);
        for (int i = 0; i < 200; i++) {
            must(write(fd, buffer, 4096) == 4096, "write");
            must(fsync(fd) == 0, "fsync");
        }
        close(fd);
    } else if (strcmp(mode, "flushed") == 0) {
        FILE *f = fopen("flushed.dat", "w");
        must(f != NULL, "fopen");
        for (int i = 0; i < 2000; i++) {
            must(fwrite(buffer, 1, 16, f) == 16, "fwrite");
            must(fflush(f) == 0, "fflush");
        }
        fclose(f);
    } else if (strcmp(mode, "unbuffered") == 0) {
        FILE *f = fopen("unbuffered.dat", "w");
        must(f != NULL, "fopen");
        must(setvbuf(f, NULL, _IONBF, 0) == 0, "setvbuf");
        for (int i = 0; i < 2000; i++)
            must(fwrite(buffer, 1, 16, f) == 16, "fwrite");
        fclose(f);
    } else if (strcmp(mode, "clean") == 0) {
        int fd = open_or_die("clean.dat", O_WRONLY | O_CREAT | O_TRUNC);
        for (int i = 0; i < 64; i++)
            must(write(fd, buffer, sizeof buffer) == (ssize_t)sizeof buffer, "write");
        close(fd);
    } else {
        fprintf(stderr, "insight-workloads: unknown workload %s\n", mode);
        return 2;
    }
    printf("%ld\n", (long)getpid());
    return 0;
}
