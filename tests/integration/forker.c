/* forker — a process that forks, or one that execs itself, each writing a
 * known number of times to known files.
 *
 * usage: forker fork DIR    20 writes to DIR/parent, then fork: the child
 *                           makes 10 writes to DIR/child and exits 0; the
 *                           parent waits for it and exits 0 if it did
 *        forker exec DIR    5 writes to DIR/before, then exec of itself as
 *                           `forker after DIR`
 *        forker after DIR   7 writes to DIR/after, exit 0
 *
 * Every write is one byte, into a file opened (O_TRUNC) just before and
 * closed just after. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* `count` one-byte writes to DIR/name; false if any fails. */
static int write_times(const char *dir, const char *name, int count)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 0;
    int ok = 1;
    for (int i = 0; i < count; i++)
        if (write(fd, "w", 1) != 1)
            ok = 0;
    return close(fd) == 0 && ok;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    const char *mode = argv[1], *dir = argv[2];
    if (strcmp(mode, "fork") == 0) {
        if (!write_times(dir, "parent", 20))
            return 1;
        pid_t child = fork();
        if (child < 0)
            return 1;
        if (child == 0)
            exit(write_times(dir, "child", 10) ? 0 : 1); /* exit(): its report is written */
        int status;
        if (waitpid(child, &status, 0) != child)
            return 1;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
    }
    if (strcmp(mode, "exec") == 0) {
        if (!write_times(dir, "before", 5))
            return 1;
        char *args[] = {argv[0], "after", (char *)dir, NULL};
        execv("/proc/self/exe", args); /* replaces this image: no exit handlers run */
        return 1;
    }
    if (strcmp(mode, "after") == 0)
        return write_times(dir, "after", 7) ? 0 : 1;
    return 2;
}
