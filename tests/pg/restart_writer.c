/* restart_writer — writes in two phases with a pause between them that the
 * test controls, so that it can restart vigild in the middle of a program.
 *
 * usage: restart_writer FILE FIRST SECOND [PACE_US]
 *
 * Writes FIRST one-byte write() calls to FILE, prints "paused" and its pid
 * on stdout, waits for one byte on stdin, then writes SECOND more and exits
 * 0 when every write was complete. With PACE_US, the first writes go in
 * chunks of 1,000 with PACE_US µs between them: a workload spread over
 * several of vigild's cycles, so over several batches. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 1000

static int write_n(int fd, long n, long pace_us)
{
    struct timespec pause = {.tv_sec = pace_us / 1000000, .tv_nsec = pace_us % 1000000 * 1000};
    for (long i = 0; i < n; i++) {
        if (write(fd, "x", 1) != 1)
            return -1;
        if (pace_us > 0 && (i + 1) % CHUNK == 0)
            nanosleep(&pause, NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5)
        return 2;
    long pace_us = argc == 5 ? strtol(argv[4], NULL, 10) : 0;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write_n(fd, strtol(argv[2], NULL, 10), pace_us) != 0)
        return 1;
    printf("paused %d\n", (int)getpid());
    fflush(stdout);
    char go;
    if (read(0, &go, 1) != 1)
        return 1;
    if (write_n(fd, strtol(argv[3], NULL, 10), 0) != 0)
        return 1;
    return close(fd) == 0 ? 0 : 1;
}
