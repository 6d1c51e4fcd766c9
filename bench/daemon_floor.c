/* vigil — the floor for vigild's tick: a program that does nothing but
 * read the files vigild reads, at the same interval, the cheapest way the
 * kernel offers (kept open, one pread of the whole file), and parses
 * nothing. What vigild spends above it is its own work; what this spends
 * is the kernel's, making the files' text.
 *
 *   daemon-floor INTERVAL_MS FILE...
 *
 * It runs until SIGTERM or SIGINT, then prints the reads it made on
 * stdout ("ticks N missed N files N read_ns N": read_ns is the wall time
 * of the ticks' reads, from the timer's read to the last file's, the part
 * of its CPU time that vigild's tick cost is comparable with; the rest is
 * the wake-up itself) and exits 0. A file that cannot be
 * opened or read is an error naming it (exit 1): a floor that silently
 * read less would flatter vigild's ratio. The ticks are a timerfd on
 * absolute CLOCK_MONOTONIC deadlines at multiples of the interval, as
 * vigild's are (daemon/tick.c). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S        1000000000ull
#define NS_PER_MS       1000000ull
#define FIRST_BUFFER    4096u
#define MAX_BUFFER      (64u << 20)
#define MAX_INTERVAL_MS 3600000ul

struct floor_file {
    const char *path;
    int fd;
    char *buffer;
    size_t size;
};

static volatile sig_atomic_t stopping;

static void on_stop(int signo)
{
    (void)signo;
    stopping = 1;
}

/* The whole file, growing the buffer until it fits: a short read is the
 * end of a /proc or /sys file (reading on to 0 would make the kernel
 * generate it once more), as in core/provider.c. */
static int read_whole(struct floor_file *f)
{
    for (;;) {
        ssize_t n = pread(f->fd, f->buffer, f->size, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if ((size_t)n < f->size)
            return 0;
        if (f->size >= MAX_BUFFER) {
            errno = EFBIG;
            return -1;
        }
        f->size *= 2;
        char *bigger = realloc(f->buffer, f->size);
        if (bigger == NULL)
            return -1;
        f->buffer = bigger;
    }
}

static uint64_t monotonic_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * NS_PER_S + (uint64_t)now.tv_nsec;
}

static int start_timer(uint64_t interval_ns)
{
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (fd < 0)
        return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t now_ns = (uint64_t)now.tv_sec * NS_PER_S + (uint64_t)now.tv_nsec;
    uint64_t first_ns = (now_ns / interval_ns + 1) * interval_ns;
    struct itimerspec spec = {
        .it_value = {.tv_sec = (time_t)(first_ns / NS_PER_S),
                     .tv_nsec = (long)(first_ns % NS_PER_S)},
        .it_interval = {.tv_sec = (time_t)(interval_ns / NS_PER_S),
                        .tv_nsec = (long)(interval_ns % NS_PER_S)},
    };
    if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: daemon-floor INTERVAL_MS FILE...\n");
        return 2;
    }
    char *end = NULL;
    errno = 0;
    unsigned long interval_ms = strtoul(argv[1], &end, 10);
    if (errno != 0 || end == argv[1] || *end != '\0' || interval_ms == 0 ||
        interval_ms > MAX_INTERVAL_MS) {
        fprintf(stderr, "daemon-floor: INTERVAL_MS must be a whole number from 1 to %lu, not %s\n",
                MAX_INTERVAL_MS, argv[1]);
        return 2;
    }
    int n_files = argc - 2;
    struct floor_file *files = calloc((size_t)n_files, sizeof *files);
    if (files == NULL) {
        perror("daemon-floor");
        return 1;
    }
    for (int i = 0; i < n_files; i++) {
        struct floor_file *f = &files[i];
        f->path = argv[i + 2];
        f->size = FIRST_BUFFER;
        f->buffer = malloc(f->size);
        f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
        if (f->buffer == NULL || f->fd < 0 || read_whole(f) != 0) {
            fprintf(stderr, "daemon-floor: cannot read %s: %s\n", f->path, strerror(errno));
            return 1;
        }
    }

    /* No SA_RESTART: the signal ends the timer's read. */
    struct sigaction stop = {.sa_handler = on_stop};
    sigemptyset(&stop.sa_mask);
    sigaction(SIGTERM, &stop, NULL);
    sigaction(SIGINT, &stop, NULL);
    int timer = start_timer(interval_ms * NS_PER_MS);
    if (timer < 0) {
        perror("daemon-floor: the interval's timer");
        return 1;
    }
    uint64_t ticks = 0, missed = 0, read_ns = 0;
    while (!stopping) {
        uint64_t expirations;
        if (read(timer, &expirations, sizeof expirations) != (ssize_t)sizeof expirations) {
            if (errno == EINTR)
                continue;
            perror("daemon-floor: the interval's timer");
            return 1;
        }
        ticks++;
        missed += expirations - 1;
        uint64_t begin_ns = monotonic_ns();
        for (int i = 0; i < n_files; i++) {
            if (read_whole(&files[i]) != 0) {
                fprintf(stderr, "daemon-floor: cannot read %s: %s\n", files[i].path,
                        strerror(errno));
                return 1;
            }
        }
        read_ns += monotonic_ns() - begin_ns;
    }
    printf("ticks %llu missed %llu files %d read_ns %llu\n", (unsigned long long)ticks,
           (unsigned long long)missed, n_files, (unsigned long long)read_ns);
    for (int i = 0; i < n_files; i++) {
        close(files[i].fd);
        free(files[i].buffer);
    }
    free(files);
    close(timer);
    return 0;
}
