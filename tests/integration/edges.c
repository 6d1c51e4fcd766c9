/* Calls at the edges of what the interposer must get right, each found by
 * review to go wrong once: bad path pointers that libc answers with an
 * error before reading them (the interposer must not read them either),
 * a descriptor number reused after close_range (it must not keep the old
 * file's name), and openat under an excluded directory. It prints each
 * result; the test compares the output with and without the library.
 *
 *   edges DIR */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void show(const char *what, long ret)
{
    printf("%s ret=%ld errno=%s\n", what, ret, ret < 0 ? strerrorname_np(errno) : "-");
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    const char *bad = (const char *)1; /* an address no program can read */
    show("access-bad-mode", access(bad, 0x100));
    show("open-tmpfile-no-write", open(bad, O_TMPFILE | O_RDONLY));
    show("unlinkat-bad-flags", unlinkat(AT_FDCWD, bad, 0x8000));
    errno = 0;
    FILE *stream = fopen(bad, "q");
    show("fopen-bad-mode", stream == NULL ? -1 : 0);
    if (stream != NULL)
        fclose(stream);

    /* A name of 4096 bytes with no NUL, ending where memory stops. */
    long page = sysconf(_SC_PAGESIZE);
    char *map =
        mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(map + page, (size_t)page, PROT_NONE);
    memset(map, 'a', (size_t)page);
    struct stat st;
    show("stat-unterminated", stat(map, &st));

    /* A file closed by close_range: its number, reused by a pipe, must
     * not carry the file's name (the report checks what the file read). */
    char path[4096];
    snprintf(path, sizeof path, "%s/closed-by-range", argv[1]);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    show("write-before-close-range", write(fd, "x", 1));
    show("close_range", close_range((unsigned)fd, (unsigned)fd, 0));
    int pipefd[2];
    show("pipe", pipe(pipefd));
    int reused = pipefd[0] == fd || pipefd[1] == fd;
    printf("reused-number %s\n", reused ? "yes" : "no");
    char buffer[100] = {0};
    show("pipe-write", write(pipefd[1], buffer, sizeof buffer));
    show("pipe-read", read(pipefd[0], buffer, sizeof buffer));

    /* Under an excluded directory (/proc by default), nothing is a file. */
    int dir = open("/proc/self", O_RDONLY | O_DIRECTORY);
    int status = openat(dir, "status", O_RDONLY);
    show("openat-excluded", status >= 0 ? 0 : -1);
    return 0;
}
