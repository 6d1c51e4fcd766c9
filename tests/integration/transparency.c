/* transparency — a fixed battery of I/O calls, each outcome logged, so that
 * a run under libvigil-preload.so can be compared byte for byte with a run
 * without it: the library must not change what any call returns, nor errno,
 * nor which descriptor numbers a program gets.
 *
 * usage: transparency DIR    (an existing, empty directory)
 *
 * Temporary files go into DIR; the log is DIR/log, opened first and moved
 * to fd 100 so that fds 0-2 can be closed and reused at the end. The log
 * holds no pids, times or paths: two runs give the same bytes.
 *
 * Log lines are written with syscall(SYS_write), which no wrapper sees, so
 * the counts below are exactly the program's own calls. test_preload.c
 * asserts them (keep both in step):
 *
 *     read()    10 calls, 3 failing (EBADF, EISDIR, EINTR), 33 bytes
 *     write()   10 calls, 1 failing (EBADF), 33 bytes
 *     open()    13 calls, 1 failing (ENOENT)
 *     lseek()    7 calls, 1 failing (EINVAL)
 *     pread()    3 calls, 1 failing (EINVAL), 8 bytes
 *     pwrite()   2 calls, 10 bytes
 *     readv()    1 call, 11 bytes;  writev() 1 call, 11 bytes
 *     dup() 1, dup2() 2, fcntl() 1, close() 20, stat() 1 (in a handler)
 *     stdio: fopen, fprintf, fwrite, fgets, fread, fclose: 1 each; rewind 2;
 *            getline (getdelim) 1, 9 bytes; fread_unlocked (fread) 1, 4 bytes;
 *            fwrite_unlocked (fwrite) 1, 3 bytes
 *
 * Built twice: -O0, and -O2 -D_FORTIFY_SOURCE=2, where read, pread, fgets,
 * fread and fread_unlocked become __read_chk, __pread64_chk, __fgets_chk,
 * __fread_chk and __fread_unlocked_chk (their lengths are not
 * compile-time constants: see runtime_size; with a constant one,
 * fwrite_unlocked would be inlined as putc_unlocked, which no wrapper
 * sees), getline glibc's inline call of __getdelim, and fprintf
 * __fprintf_chk. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>

#define LOG_FD 100
#define BAD_FD 77 /* never opened */

static const char *dir;

/* ---- the log ---------------------------------------------------------------- */

__attribute__((format(printf, 1, 2))) static void logline(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        syscall(SYS_write, LOG_FD, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static const char *errname(int e)
{
    switch (e) {
    case EBADF:
        return "EBADF";
    case ENOENT:
        return "ENOENT";
    case EISDIR:
        return "EISDIR";
    case EINVAL:
        return "EINVAL";
    case EINTR:
        return "EINTR";
    default:
        return "other";
    }
}

/* One line per call: its name, what it returned, errno if it failed. */
static void logcall(const char *name, long ret, int err)
{
    if (ret < 0)
        logline("%s ret=%ld errno=%s(%d)\n", name, ret, errname(err), err);
    else
        logline("%s ret=%ld\n", name, ret);
}

/* FNV-1a of the bytes a read returned. */
static unsigned checksum(const void *buf, long n)
{
    const unsigned char *p = buf;
    unsigned h = 2166136261u;
    for (long i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* A read: its result, errno if it failed, the checksum of what it read. */
static void logread(const char *name, long ret, int err, const void *buf)
{
    if (ret < 0)
        logcall(name, ret, err);
    else
        logline("%s ret=%ld sum=%08x\n", name, ret, checksum(buf, ret));
}

/* A length the compiler cannot see: under _FORTIFY_SOURCE, a call with a
 * known buffer size and an unknown length goes to the __*_chk variant. */
static size_t runtime_size(size_t n)
{
    volatile size_t v = n;
    return v;
}

static void path_of(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s/%s", dir, name);
}

/* Opens DIR/`name` (its path put in `path`) with `flags`, mode 0644, and
 * logs the call as `label`. */
static int open_logged(char *path, size_t size, const char *name, int flags, const char *label)
{
    path_of(path, size, name);
    int fd = open(path, flags, 0644);
    logcall(label, fd, errno);
    return fd;
}

/* ---- the cases -------------------------------------------------------------- */

/* read 1 (EBADF), write 1 (EBADF). */
static void bad_descriptor(void)
{
    char buf[16];
    errno = 0;
    long r = read(BAD_FD, buf, runtime_size(sizeof buf));
    logread("read-bad-fd", r, errno, buf);
    r = write(BAD_FD, "x", 1);
    logcall("write-bad-fd", r, errno);
}

/* open 2 (ENOENT), open 3, read 2 (EISDIR), close. */
static void missing_and_directory(void)
{
    char path[4096], buf[16];
    path_of(path, sizeof path, "missing");
    long r = open(path, O_RDONLY);
    logcall("open-missing", r, errno);

    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    logcall("open-directory", fd, errno);
    r = read(fd, buf, runtime_size(sizeof buf));
    logread("read-directory", r, errno, buf);
    logcall("close-directory", close(fd), errno);
}

/* open 4, write 2, close; open 5, lseek (EINVAL), read 3 (short), read 4
 * (EOF), close. */
static void short_read_and_eof(void)
{
    char path[4096], buf[128];
    int fd = open_logged(path, sizeof path, "ten", O_WRONLY | O_CREAT | O_TRUNC, "open-ten-w");
    logcall("write-ten", write(fd, "0123456789", 10), errno);
    logcall("close-ten-w", close(fd), errno);

    fd = open(path, O_RDONLY);
    logcall("open-ten-r", fd, errno);
    logcall("lseek-whence-99", (long)lseek(fd, 0, 99), errno);
    long r = read(fd, buf, runtime_size(100)); /* 100 asked, 10 there */
    logread("read-short", r, errno, buf);
    r = read(fd, buf, runtime_size(100));
    logread("read-eof", r, errno, buf);
    logcall("close-ten-r", close(fd), errno);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++; /* not logged: how many fire is up to the clock */
}

/* read 5 (EINTR): a pipe nobody writes to, a timer without SA_RESTART. The
 * timer repeats, so a tick that comes before read() blocks is followed by
 * another; it is stopped as soon as read() returns. close 2×. */
static void interrupted_read(void)
{
    int p[2];
    char buf[16];
    logcall("pipe", pipe(p), errno);
    struct sigaction sa = {.sa_handler = on_alarm}; /* sa_flags 0: no SA_RESTART */
    sigemptyset(&sa.sa_mask);
    logcall("sigaction-alrm", sigaction(SIGALRM, &sa, NULL), errno);
    struct itimerval every_20ms = {{0, 20000}, {0, 20000}}, stop = {{0, 0}, {0, 0}};
    logcall("setitimer", setitimer(ITIMER_REAL, &every_20ms, NULL), errno);
    long r = read(p[0], buf, runtime_size(sizeof buf));
    int err = errno;
    setitimer(ITIMER_REAL, &stop, NULL);
    logread("read-interrupted", r, err, buf);
    logcall("close-pipe-r", close(p[0]), errno);
    logcall("close-pipe-w", close(p[1]), errno);
}

/* What the SIGUSR1 handler did, logged after it returns. */
static char handler_path[4096];
static volatile long h_open = -100, h_write = -100, h_seek = -100, h_read = -100, h_close = -100,
                     h_stat = -100, h_size = -100;
static volatile unsigned h_sum;

/* open 6, write 3, lseek, read 6, close, stat: inside a signal handler. */
static void on_usr1(int sig)
{
    (void)sig;
    int saved_errno = errno;
    char buf[64];
    int fd = open(handler_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    h_open = fd;
    h_write = write(fd, "signal", 6);
    h_seek = (long)lseek(fd, 0, SEEK_SET);
    h_read = read(fd, buf, runtime_size(sizeof buf));
    h_sum = checksum(buf, h_read);
    h_close = close(fd);
    struct stat st;
    h_stat = stat(handler_path, &st);
    h_size = h_stat == 0 ? (long)st.st_size : -1;
    errno = saved_errno;
}

static void calls_in_a_signal_handler(void)
{
    path_of(handler_path, sizeof handler_path, "sig");
    struct sigaction sa = {.sa_handler = on_usr1};
    sigemptyset(&sa.sa_mask);
    logcall("sigaction-usr1", sigaction(SIGUSR1, &sa, NULL), errno);
    logcall("raise", raise(SIGUSR1), errno); /* the handler has run when it returns */
    logline("handler open=%ld write=%ld lseek=%ld read=%ld sum=%08x close=%ld stat=%ld "
            "size=%ld\n",
            h_open, h_write, h_seek, h_read, h_sum, h_close, h_stat, h_size);
}

/* fopen, fprintf, fwrite, rewind, fgets, fread, rewind, getline,
 * fread_unlocked, fwrite_unlocked, fclose. */
static void stdio_calls(void)
{
    char path[4096], line[64], buf[64];
    path_of(path, sizeof path, "stdio");
    FILE *f = fopen(path, "w+");
    logcall("fopen", f != NULL ? fileno(f) : -1, errno);
    if (f == NULL)
        return;
    logcall("fprintf", fprintf(f, "hello %d\n", 42), errno);
    logcall("fwrite", (long)fwrite("abc\n", 1, 4, f), errno);
    rewind(f);
    char *s = fgets(line, (int)runtime_size(sizeof line), f);
    logread("fgets", s != NULL ? (long)strlen(line) : -1, errno, line);
    size_t n = fread(buf, 1, runtime_size(sizeof buf), f);
    logread("fread", (long)n, errno, buf);
    /* GNU's: getline, and the unlocked calls (wrap_stdio_unlocked.c). */
    rewind(f);
    char *got = NULL;
    size_t got_size = 0;
    long length = (long)getline(&got, &got_size, f);
    logread("getline", length, errno, got != NULL ? got : "");
    free(got);
    n = fread_unlocked(buf, 1, runtime_size(sizeof buf), f);
    logread("fread_unlocked", (long)n, errno, buf);
    logcall("fwrite_unlocked", (long)fwrite_unlocked("de\n", 1, runtime_size(3), f), errno);
    logcall("fclose", fclose(f), errno);
}

/* open 7, pwrite 2×, pread 3× (one at EOF, one EINVAL), lseek, close. */
static void positioned_calls(void)
{
    char path[4096], buf[32];
    int fd = open_logged(path, sizeof path, "pos", O_RDWR | O_CREAT | O_TRUNC, "open-pos");
    logcall("pwrite-100", pwrite(fd, "ABCDEFGH", 8, 100), errno);
    logcall("pwrite-0", pwrite(fd, "xy", 2, 0), errno);
    long r = pread(fd, buf, runtime_size(8), 100);
    logread("pread-100", r, errno, buf);
    r = pread(fd, buf, runtime_size(16), 200);
    logread("pread-past-eof", r, errno, buf);
    r = pread(fd, buf, runtime_size(4), -1);
    logread("pread-negative", r, errno, buf);
    logcall("lseek-end", (long)lseek(fd, 0, SEEK_END), errno);
    logcall("close-pos", close(fd), errno);
}

/* open 8, writev, lseek, readv, close. */
static void vector_calls(void)
{
    char path[4096], a[4], b[16];
    int fd = open_logged(path, sizeof path, "vec", O_RDWR | O_CREAT | O_TRUNC, "open-vec");
    struct iovec out[3] = {{"one", 3}, {"two", 3}, {"three", 5}};
    logcall("writev", writev(fd, out, 3), errno);
    logcall("lseek-vec", (long)lseek(fd, 0, SEEK_SET), errno);
    struct iovec in[2] = {{a, sizeof a}, {b, sizeof b}};
    long r = readv(fd, in, 2);
    logline("readv ret=%ld sum=%08x,%08x\n", r, checksum(a, sizeof a),
            checksum(b, r > (long)sizeof a ? r - (long)sizeof a : 0));
    logcall("close-vec", close(fd), errno);
}

/* open 9, then one byte written through each of four descriptors of one
 * file (write 4-7) made by dup, dup2 and fcntl(F_DUPFD), close 4×; open 10,
 * read 7, close: the file holds "ABCD". */
static void duplicated_descriptors(void)
{
    char path[4096], buf[16];
    int fd = open_logged(path, sizeof path, "dup", O_RDWR | O_CREAT | O_TRUNC, "open-dup");
    logcall("write-fd", write(fd, "A", 1), errno);
    int d = dup(fd);
    logcall("dup", d, errno);
    logcall("write-dup", write(d, "B", 1), errno);
    logcall("dup2-50", dup2(fd, 50), errno);
    logcall("write-50", write(50, "C", 1), errno);
    int f = fcntl(fd, F_DUPFD, 60);
    logcall("fcntl-dupfd-60", f, errno);
    logcall("write-dupfd", write(f, "D", 1), errno);
    logcall("close-fd", close(fd), errno);
    logcall("close-dup", close(d), errno);
    logcall("close-50", close(50), errno);
    logcall("close-dupfd", close(f), errno);

    fd = open(path, O_RDONLY);
    logcall("open-dup-r", fd, errno);
    long r = read(fd, buf, runtime_size(sizeof buf));
    logread("read-dup", r, errno, buf);
    logcall("close-dup-r", close(fd), errno);
}

/* close 0, 1, 2; open 11-13 get them back; write 8-10, lseek 3×, read
 * 8-10, close 3×. */
static void standard_descriptors_reused(void)
{
    static const char *const names[3] = {"f0", "f1", "f2"};
    static const char *const text[3] = {"zero\n", "one\n", "two\n"};
    for (int i = 0; i < 3; i++)
        logcall("close-std", close(i), errno);
    for (int i = 0; i < 3; i++) {
        char path[4096];
        path_of(path, sizeof path, names[i]);
        logcall("open-std", open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), errno);
    }
    for (int i = 0; i < 3; i++)
        logcall("write-std", write(i, text[i], strlen(text[i])), errno);
    for (int i = 0; i < 3; i++) {
        char buf[16];
        logcall("lseek-std", (long)lseek(i, 0, SEEK_SET), errno);
        long r = read(i, buf, runtime_size(sizeof buf));
        logread("read-std", r, errno, buf);
    }
    for (int i = 0; i < 3; i++)
        logcall("close-std", close(i), errno);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    dir = argv[1];
    char path[4096];
    path_of(path, sizeof path, "log");
    /* open 1, dup2, close. */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, LOG_FD) != LOG_FD || close(fd) != 0)
        return 3;
    logline("transparency log\n");

    bad_descriptor();
    missing_and_directory();
    short_read_and_eof();
    interrupted_read();
    calls_in_a_signal_handler();
    stdio_calls();
    positioned_calls();
    vector_calls();
    duplicated_descriptors();
    standard_descriptors_reused();

    logline("done\n");
    return 0;
}
