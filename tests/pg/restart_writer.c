/* restart_writer — writes in two phases with a pause between them that the
 * test controls, so that it can restart vigild in the middle of a program.
 *
 * usage: restart_writer FILE FIRST SECOND
 *
 * Writes FIRST one-byte write() calls to FILE, prints "paused" and its pid
 * on stdout, waits for one byte on stdin, then writes SECOND more and exits
 * 0 when every write was complete. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int write_n(int fd, long n)
{
    for (long i = 0; i < n; i++)
        if (write(fd, "x", 1) != 1)
            return -1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write_n(fd, strtol(argv[2], NULL, 10)) != 0)
        return 1;
    printf("paused %d\n", (int)getpid());
    fflush(stdout);
    char go;
    if (read(0, &go, 1) != 1)
        return 1;
    if (write_n(fd, strtol(argv[3], NULL, 10)) != 0)
        return 1;
    return close(fd) == 0 ? 0 : 1;
}
