/* linkprobe — a plain program for the tests of the preload library's link
 * to vigild: it shows which descriptor number its first open() got, and
 * exits with the status it is given.
 *
 * usage: linkprobe DIR STATUS [closeall]
 *   opens DIR/probe (created), prints "fd=N", writes 3 bytes to it, closes
 *   it; with closeall, then closes every descriptor above 2 (as daemons
 *   do); exits with STATUS. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3)
        return 100;
    char path[4096];
    snprintf(path, sizeof path, "%s/probe", argv[1]);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 101;
    printf("fd=%d\n", fd);
    fflush(stdout);
    if (write(fd, "abc", 3) != 3 || close(fd) != 0)
        return 102;
    if (argc > 3 && strcmp(argv[3], "closeall") == 0)
        closefrom(3);
    return atoi(argv[2]);
}
