/* filler — writes a known text with one write() per line.
 *
 * usage: filler FILE N
 *
 * FILE (created or truncated) gets "line 1\n" … "line N\n", each line one
 * write() call. Exits 0 when every write was complete. Prints nothing. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long lines = strtol(argv[2], NULL, 10);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || lines < 0)
        return 1;
    for (long i = 1; i <= lines; i++) {
        char line[32];
        int n = snprintf(line, sizeof line, "line %ld\n", i);
        if (write(fd, line, (size_t)n) != n)
            return 1;
    }
    return close(fd) == 0 ? 0 : 1;
}
