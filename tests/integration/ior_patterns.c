/* ior-patterns: IOR-like access patterns whose Darshan counters are known
 * exactly, for test_file_stats.c. Plain C: nothing of vigil in it.
 *
 *   ior-patterns DIR     every pattern below, each on its own file in DIR;
 *                        prints its pid
 *   ior-patterns --fd3   three 10-byte writes to descriptor 3, which the
 *                        caller opened (an inherited descriptor)
 *   ior-patterns --append FILE N
 *                        N 100-byte writes to FILE through two descriptions
 *                        in append mode, in turn; prints its pid
 *
 * Every call is checked: a pattern that did not happen as written would
 * make the test's counts meaningless. */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Page-aligned: buffer + 1 is the one misaligned buffer (meta_counters). */
static char buffer[1 << 16] __attribute__((aligned(4096)));

static void check(int ok, const char *what)
{
    if (!ok) {
        perror(what);
        exit(1);
    }
}

static int open_in(const char *dir, const char *name, int flags)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, flags, 0644);
    check(fd >= 0, path);
    return fd;
}

static void put(int fd, size_t n)
{
    check(write(fd, buffer, n) == (ssize_t)n, "write");
}

/* Opens `name` in `dir` with `flags`, writes `bytes` at its start and
 * seeks back to 0. */
static int written_and_rewound(const char *dir, const char *name, int flags, size_t bytes)
{
    int fd = open_in(dir, name, flags);
    put(fd, bytes);
    check(lseek(fd, 0, SEEK_SET) == 0, "lseek");
    return fd;
}

/* Waits for `child`, which must exit with 0. */
static void wait_for_child(pid_t child)
{
    int status;
    check(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "child");
}

/* Four files, each eight sequential 64 KiB writes. */
static void file_per_process(const char *dir)
{
    for (int f = 0; f < 4; f++) {
        char name[32];
        snprintf(name, sizeof name, "fpp.%d", f);
        int fd = open_in(dir, name, O_CREAT | O_WRONLY | O_TRUNC);
        for (int i = 0; i < 8; i++)
            put(fd, 65536);
        check(close(fd) == 0, "close");
    }
}

/* Eight 4 KiB blocks 16 KiB apart: lseek, then write. */
static void strided(const char *dir)
{
    int fd = open_in(dir, "strided", O_CREAT | O_WRONLY | O_TRUNC);
    for (int i = 0; i < 8; i++) {
        check(lseek(fd, (off_t)i * 16384, SEEK_SET) == (off_t)i * 16384, "lseek");
        put(fd, 4096);
    }
    check(close(fd) == 0, "close");
}

/* Eight 1000-byte blocks written with pwrite in a shuffled order, then
 * read back in order. */
static void random_access(const char *dir)
{
    static const int order[8] = {3, 0, 7, 1, 6, 2, 5, 4};
    int fd = open_in(dir, "random", O_CREAT | O_RDWR | O_TRUNC);
    for (int i = 0; i < 8; i++)
        check(pwrite(fd, buffer, 1000, (off_t)order[i] * 1000) == 1000, "pwrite");
    for (int i = 0; i < 8; i++)
        check(pread(fd, buffer, 1000, (off_t)i * 1000) == 1000, "pread");
    check(close(fd) == 0, "close");
}

/* 50 bytes written plainly, then ten 100-byte writes in append mode: they
 * land at 50, 150, ... 950. */
static void append(const char *dir)
{
    int fd = open_in(dir, "append", O_CREAT | O_WRONLY | O_TRUNC);
    put(fd, 50);
    check(close(fd) == 0, "close");
    fd = open_in(dir, "append", O_WRONLY | O_APPEND);
    for (int i = 0; i < 10; i++)
        put(fd, 100);
    check(close(fd) == 0, "close");
}

/* Two descriptions appending to one file in turn, five 100-byte writes
 * each: one end between them, so they land at 0, 100, ... 900. */
static void appenders(const char *dir)
{
    int a = open_in(dir, "appenders", O_CREAT | O_WRONLY | O_TRUNC | O_APPEND);
    int b = open_in(dir, "appenders", O_WRONLY | O_APPEND);
    for (int i = 0; i < 5; i++) {
        put(a, 100);
        put(b, 100);
    }
    check(close(a) == 0 && close(b) == 0, "close");
}

static void *append_thousand(void *fd)
{
    for (int i = 0; i < 1000; i++)
        put(*(int *)fd, 100);
    return NULL;
}

/* Two threads appending at once through a description each (each has
 * appended once before, so both know the end): whatever order the kernel
 * takes them in, the last of the 2002 appends is at 200100. */
static void threads_appending(const char *dir)
{
    int fd[2];
    pthread_t thread[2];
    for (int i = 0; i < 2; i++) {
        fd[i] = open_in(dir, "threads.append", O_CREAT | O_WRONLY | O_APPEND);
        put(fd[i], 100);
    }
    for (int i = 0; i < 2; i++)
        check(pthread_create(&thread[i], NULL, append_thousand, &fd[i]) == 0, "pthread_create");
    for (int i = 0; i < 2; i++)
        check(pthread_join(thread[i], NULL) == 0 && close(fd[i]) == 0, "thread");
}

/* Two threads writing one file strictly in turn (a turn word handed over,
 * no sleep), 100 bytes each at 0, 100, ... 99900: every write but the
 * first begins where the file's previous one ended, whichever thread made
 * it (GNU sort's output, written by two threads). */
static _Atomic int turn;
static int in_order_fd;

static void *write_in_turn(void *me)
{
    int self = *(int *)me;
    for (int i = self; i < 1000; i += 2) {
        while (atomic_load(&turn) != i)
            ;
        check(pwrite(in_order_fd, buffer, 100, (off_t)i * 100) == 100, "pwrite");
        atomic_store(&turn, i + 1);
    }
    return NULL;
}

static void threads_in_order(const char *dir)
{
    static int ids[2] = {0, 1};
    pthread_t thread[2];
    in_order_fd = open_in(dir, "threads.order", O_CREAT | O_WRONLY | O_TRUNC);
    for (int i = 0; i < 2; i++)
        check(pthread_create(&thread[i], NULL, write_in_turn, &ids[i]) == 0, "pthread_create");
    for (int i = 0; i < 2; i++)
        check(pthread_join(thread[i], NULL) == 0, "pthread_join");
    check(close(in_order_fd) == 0, "close");
}

/* Darshan's rarer counters on "meta", opened with mode 0644: writes of 100
 * at 0 (from buffer + 1), 100 and 200 with a pread of 50 at 0 between the
 * second and the third (two read/write switches; offsets 100 and 200 off
 * the block size; one misaligned buffer), an fsync, two fdatasyncs, a dup;
 * then fileno twice on a stream of it. */
static void meta_counters(const char *dir)
{
    int fd = open_in(dir, "meta", O_CREAT | O_RDWR | O_TRUNC);
    check(write(fd, buffer + 1, 100) == 100, "write");
    put(fd, 100);
    check(pread(fd, buffer, 50, 0) == 50, "pread");
    put(fd, 100);
    check(fsync(fd) == 0 && fdatasync(fd) == 0 && fdatasync(fd) == 0, "sync");
    int copy = dup(fd);
    check(copy >= 0 && close(copy) == 0 && close(fd) == 0, "dup");
    char path[4096];
    snprintf(path, sizeof path, "%s/meta", dir);
    FILE *fp = fopen(path, "r");
    check(fp != NULL && fileno(fp) >= 0 && fileno(fp) >= 0 && fclose(fp) == 0, "fileno");
}

/* The parent appends at 0; a forked child appends at 100 through the
 * parent's description and at 200 through its own; the parent's next
 * append lands at 300, after both of the child's. */
static void forked_append(const char *dir)
{
    int fd = open_in(dir, "fork.append", O_CREAT | O_WRONLY | O_TRUNC | O_APPEND);
    put(fd, 100);
    pid_t child = fork();
    check(child >= 0, "fork");
    if (child == 0) {
        put(fd, 100);
        int own = open_in(dir, "fork.append", O_WRONLY | O_APPEND);
        put(own, 100);
        _exit(close(own) == 0 ? 0 : 1);
    }
    wait_for_child(child);
    put(fd, 100);
    check(close(fd) == 0, "close");
}

/* Append mode switched on and off by fcntl(F_SETFL): a write at 0, a seek
 * back to 0, then in append mode a write at the end (100), then without
 * it a write where that one left the position (200). */
static void append_switched(const char *dir)
{
    int fd = written_and_rewound(dir, "setfl", O_CREAT | O_WRONLY | O_TRUNC, 100);
    check(fcntl(fd, F_SETFL, O_APPEND) == 0, "fcntl");
    put(fd, 100);
    check(fcntl(fd, F_SETFL, 0) == 0, "fcntl");
    put(fd, 100);
    check(close(fd) == 0, "close");
}

/* Appends at 0 and 100, ftruncate to 0, an append at 0; then another
 * description opened with O_TRUNC empties the file again, and the next
 * append is at 0 once more. */
static void append_truncated(const char *dir)
{
    int fd = open_in(dir, "truncated", O_CREAT | O_WRONLY | O_TRUNC | O_APPEND);
    put(fd, 100);
    put(fd, 100);
    check(ftruncate(fd, 0) == 0, "ftruncate");
    put(fd, 100);
    int other = open_in(dir, "truncated", O_WRONLY | O_TRUNC);
    check(close(other) == 0, "close");
    put(fd, 100);
    check(close(fd) == 0, "close");
}

/* Reads and seeks in append mode use the position; writes go to the end:
 * a write at 0, a read at 0 (after a seek), a write at the end (100), a
 * read at 50 (after a seek). */
static void append_read(const char *dir)
{
    int fd = written_and_rewound(dir, "append.rw", O_CREAT | O_RDWR | O_TRUNC | O_APPEND, 100);
    check(read(fd, buffer, 50) == 50, "read");
    put(fd, 100);
    check(lseek(fd, 50, SEEK_SET) == 50, "lseek");
    check(read(fd, buffer, 100) == 100, "read");
    check(close(fd) == 0, "close");
}

/* The kernel copying from kcopy.src (4000 bytes) to kcopy.dst through
 * both descriptors' offsets: a write at 0; copy_file_range at 100 and
 * sendfile at 1100, each 1000 bytes; splice through a pipe, 1000 bytes to
 * 2100; a write at 3100. The source's offset moved with them: its read is
 * at 3000. */
static void kernel_copies(const char *dir)
{
    int src = written_and_rewound(dir, "kcopy.src", O_CREAT | O_RDWR | O_TRUNC, 4000);
    int dst = open_in(dir, "kcopy.dst", O_CREAT | O_WRONLY | O_TRUNC);
    put(dst, 100);
    check(copy_file_range(src, NULL, dst, NULL, 1000, 0) == 1000, "copy_file_range");
    check(sendfile(dst, src, NULL, 1000) == 1000, "sendfile");
    int pipe_fds[2];
    check(pipe(pipe_fds) == 0, "pipe");
    check(splice(src, NULL, pipe_fds[1], NULL, 1000, 0) == 1000, "splice");
    check(splice(pipe_fds[0], NULL, dst, NULL, 1000, 0) == 1000, "splice");
    put(dst, 100);
    check(read(src, buffer, 1000) == 1000, "read");
    /* At the source's end: one call, 0 bytes (as cp's last, per strace). */
    check(copy_file_range(src, NULL, dst, NULL, 1000, 0) == 0, "copy_file_range at the end");
    check(close(pipe_fds[0]) == 0 && close(pipe_fds[1]) == 0, "close");
    check(close(src) == 0 && close(dst) == 0, "close");
}

/* Waits for one aio request and collects its result (or, with `collect`
 * false, only waits: a result nobody collects). */
static ssize_t aio_finish(struct aiocb *cb, bool collect)
{
    const struct aiocb *list[1] = {cb};
    while (aio_error(cb) == EINPROGRESS)
        check(aio_suspend(list, 1, NULL) == 0 || errno == EINTR, "aio_suspend");
    check(aio_error(cb) == 0, "aio request");
    return collect ? aio_return(cb) : 0;
}

/* POSIX aio on aio.dat: aio_write 1000 bytes at 0; lio_listio with a write
 * of 1000 at 1000 and a read of 500 at 0; a write of 100 at 5000 whose
 * result is never collected (not counted, as Darshan does not count it). */
static void aio_requests(const char *dir)
{
    int fd = open_in(dir, "aio.dat", O_CREAT | O_RDWR | O_TRUNC);
    struct aiocb first = {.aio_fildes = fd, .aio_buf = buffer, .aio_nbytes = 1000};
    check(aio_write(&first) == 0, "aio_write");
    check(aio_finish(&first, true) == 1000, "aio_return");
    struct aiocb listed_write = {.aio_fildes = fd,
                                 .aio_buf = buffer,
                                 .aio_nbytes = 1000,
                                 .aio_offset = 1000,
                                 .aio_lio_opcode = LIO_WRITE};
    struct aiocb listed_read = {
        .aio_fildes = fd, .aio_buf = buffer + 4096, .aio_nbytes = 500, .aio_lio_opcode = LIO_READ};
    struct aiocb *const list[] = {&listed_write, NULL, &listed_read};
    check(lio_listio(LIO_WAIT, list, 3, NULL) == 0, "lio_listio");
    check(aio_return(&listed_write) == 1000 && aio_return(&listed_read) == 500, "aio_return");
    struct aiocb forgotten = {
        .aio_fildes = fd, .aio_buf = buffer, .aio_nbytes = 100, .aio_offset = 5000};
    check(aio_write(&forgotten) == 0, "aio_write");
    aio_finish(&forgotten, false);
    check(close(fd) == 0, "close");
}

/* More aio requests in flight (submitted, not yet collected) than the
 * library follows: 4100 one-byte writes to aio.many, then each collected. */
static void aio_many(const char *dir)
{
    enum { requests = 4100 };
    static struct aiocb cbs[requests];
    int fd = open_in(dir, "aio.many", O_CREAT | O_WRONLY | O_TRUNC);
    for (int i = 0; i < requests; i++) {
        cbs[i] =
            (struct aiocb){.aio_fildes = fd, .aio_buf = buffer, .aio_nbytes = 1, .aio_offset = i};
        check(aio_write(&cbs[i]) == 0, "aio_write");
    }
    for (int i = 0; i < requests; i++)
        check(aio_finish(&cbs[i], true) == 1, "aio_return");
    check(close(fd) == 0, "close");
}

/* --many-paths DIR N: stat N paths that do not exist, each a file name
 * the library interns: more than its file table holds. */
static void many_paths(const char *dir, int n)
{
    char path[4096];
    struct stat st;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/missing.%d", dir, i);
        check(stat(path, &st) == -1 && errno == ENOENT, path);
    }
}

/* --append FILE N: what a program logging through open(O_APPEND) does. */
static int append_only(const char *path, int n)
{
    int fd[2];
    for (int i = 0; i < 2; i++) {
        fd[i] = open(path, O_WRONLY | O_APPEND);
        check(fd[i] >= 0, path);
    }
    for (int i = 0; i < n; i++)
        put(fd[i % 2], 100);
    check(close(fd[0]) == 0 && close(fd[1]) == 0, "close");
    printf("%d\n", (int)getpid());
    return 0;
}

/* One offset through dup and F_DUPFD: writes at 0, 100, 200 and 300. */
static void duplicated(const char *dir)
{
    int fd = open_in(dir, "dup", O_CREAT | O_WRONLY | O_TRUNC);
    put(fd, 100);
    int copy = dup(fd);
    check(copy >= 0, "dup");
    put(copy, 100);
    check(close(fd) == 0, "close");
    put(copy, 100);
    int third = fcntl(copy, F_DUPFD, 50);
    check(third >= 50, "fcntl");
    put(third, 100);
    check(close(copy) == 0 && close(third) == 0, "close");
}

/* Write 4 KiB, seek back, read it, seek to the end, write 10 bytes. */
static void seeks(const char *dir)
{
    int fd = written_and_rewound(dir, "lseek", O_CREAT | O_RDWR | O_TRUNC, 4096);
    check(read(fd, buffer, 4096) == 4096, "read");
    check(lseek(fd, 0, SEEK_END) == 4096, "lseek");
    put(fd, 10);
    check(close(fd) == 0, "close");
}

/* The parent writes at 0, a child at 100 through the same description,
 * then the parent at 200: the offset the child moved is the parent's. */
static void forked(const char *dir)
{
    int fd = open_in(dir, "fork", O_CREAT | O_WRONLY | O_TRUNC);
    put(fd, 100);
    pid_t child = fork();
    check(child >= 0, "fork");
    if (child == 0) {
        put(fd, 100);
        _exit(0);
    }
    wait_for_child(child);
    put(fd, 100);
    check(close(fd) == 0, "close");
}

/* A copy: 8000 bytes written to copy.in, then eight 1000-byte reads of
 * it, each followed by a write of copy.out (a thread alternating between
 * two files, both held in its pending entries). */
static void alternating(const char *dir)
{
    int in = written_and_rewound(dir, "copy.in", O_CREAT | O_RDWR | O_TRUNC, 8000);
    int out = open_in(dir, "copy.out", O_CREAT | O_WRONLY | O_TRUNC);
    for (int i = 0; i < 8; i++) {
        check(read(in, buffer, 1000) == 1000, "read");
        put(out, 1000);
    }
    check(close(in) == 0 && close(out) == 0, "close");
}

/* Six files written in turn, four 100-byte writes each: more files than a
 * thread holds entries for, so each move evicts one. */
static void cycling(const char *dir)
{
    int fd[6];
    for (int f = 0; f < 6; f++) {
        char name[32];
        snprintf(name, sizeof name, "cycle.%d", f);
        fd[f] = open_in(dir, name, O_CREAT | O_WRONLY | O_TRUNC);
    }
    for (int i = 0; i < 4; i++)
        for (int f = 0; f < 6; f++)
            put(fd[f], 100);
    for (int f = 0; f < 6; f++)
        check(close(fd[f]) == 0, "close");
}

/* The parent writes pend.a and pend.b in turn (both pending when it forks);
 * the child writes pend.b and pend.c, writes its pid to child.pid and
 * exits with its report; then the parent writes pend.a once more. The
 * child's report holds only its own calls. */
static void forked_pending(const char *dir)
{
    int a = open_in(dir, "pend.a", O_CREAT | O_WRONLY | O_TRUNC);
    int b = open_in(dir, "pend.b", O_CREAT | O_WRONLY | O_TRUNC);
    for (int i = 0; i < 3; i++) {
        check(pwrite(a, buffer, 100, i * 100) == 100, "pwrite");
        if (i < 2)
            check(pwrite(b, buffer, 100, i * 100) == 100, "pwrite");
    }
    pid_t child = fork();
    check(child >= 0, "fork");
    if (child == 0) {
        check(pwrite(b, buffer, 100, 200) == 100, "pwrite");
        int c = open_in(dir, "pend.c", O_CREAT | O_WRONLY | O_TRUNC);
        check(pwrite(c, buffer, 100, 0) == 100, "pwrite");
        char path[4096];
        snprintf(path, sizeof path, "%s/child.pid", dir);
        FILE *fp = fopen(path, "w");
        check(fp != NULL && fprintf(fp, "%d\n", (int)getpid()) > 0 && fclose(fp) == 0, path);
        exit(0);
    }
    wait_for_child(child);
    check(pwrite(a, buffer, 100, 300) == 100, "pwrite");
    check(close(a) == 0 && close(b) == 0, "close");
}

/* Ten 1000-byte fwrites: the stdio layer's counters. */
static void streams(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/stdio", dir);
    FILE *fp = fopen(path, "w");
    check(fp != NULL, path);
    for (int i = 0; i < 10; i++)
        check(fwrite(buffer, 1, 1000, fp) == 1000, "fwrite");
    check(fclose(fp) == 0, "fclose");
}

/* 1000 one-byte writes to /dev/null, excluded by default. */
static void excluded(void)
{
    int fd = open("/dev/null", O_WRONLY);
    check(fd >= 0, "/dev/null");
    for (int i = 0; i < 1000; i++)
        put(fd, 1);
    check(close(fd) == 0, "close");
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--fd3") == 0) {
        for (int i = 0; i < 3; i++)
            put(3, 10);
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "--append") == 0) {
        memset(buffer, 'x', sizeof buffer);
        return append_only(argv[2], atoi(argv[3]));
    }
    if (argc == 4 && strcmp(argv[1], "--many-paths") == 0) {
        many_paths(argv[2], atoi(argv[3]));
        printf("%d\n", (int)getpid());
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "--aio") == 0) {
        memset(buffer, 'x', sizeof buffer);
        aio_many(argv[2]); /* first: aio_requests leaves a request in the table */
        aio_requests(argv[2]);
        printf("%d\n", (int)getpid());
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "--kernel-copies") == 0) {
        memset(buffer, 'x', sizeof buffer);
        kernel_copies(argv[2]);
        printf("%d\n", (int)getpid());
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: ior-patterns DIR | --fd3 | --append FILE N | --kernel-copies DIR | "
                        "--aio DIR | --many-paths DIR N\n");
        return 2;
    }
    memset(buffer, 'x', sizeof buffer);
    file_per_process(argv[1]);
    strided(argv[1]);
    random_access(argv[1]);
    append(argv[1]);
    appenders(argv[1]);
    threads_appending(argv[1]);
    threads_in_order(argv[1]);
    meta_counters(argv[1]);
    forked_append(argv[1]);
    append_switched(argv[1]);
    append_truncated(argv[1]);
    append_read(argv[1]);
    kernel_copies(argv[1]);
    duplicated(argv[1]);
    seeks(argv[1]);
    forked(argv[1]);
    streams(argv[1]);
    alternating(argv[1]);
    cycling(argv[1]);
    forked_pending(argv[1]);
    excluded();
    printf("%d\n", (int)getpid());
    return 0;
}
