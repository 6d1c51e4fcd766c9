/* capture-eval-workload: a steady program with anomalies injected at known
 * moments, the ground truth against which bench/capture_eval.py scores
 * vigild's anomaly-driven capture.
 *
 *   capture-eval-workload [--seconds N] [--cycle-ms MS] [--warmup-s S] [--seed N]
 *                         [--anomaly-share F] [--dir DIR] [--truth FILE]
 *
 * Time runs in steps of 100 ms of the program's own CLOCK_MONOTONIC,
 * grouped in workload cycles of --cycle-ms. Each step does the same I/O on
 * a file in DIR (one lseek back to its start, 20 writes of 4 KiB, 4 preads
 * of 4 KiB: 25 calls) and about 3 ms of arithmetic. After the first
 * --warmup-s seconds (the ADPIs' learning time), about --anomaly-share of
 * the cycles carry one anomaly for their whole length, never two cycles in
 * a row:
 *
 *   slow-io       the 20 writes go to a pipe of one page that a helper
 *                 thread empties once per millisecond, so each write waits
 *                 for room: the same calls, each about 1 ms instead of a
 *                 few µs
 *   cpu-burst     one thread per online CPU spins for the whole cycle,
 *                 beside the unchanged steps
 *   small-writes  400 writes of 64 bytes per step instead of 20 of 4 KiB
 *
 * The truth (--truth, JSON lines) has one line per workload cycle: its
 * number, its CLOCK_MONOTONIC start and end, its anomaly (or null), and
 * the calls libvigil-preload.so intercepts that the cycle made. Cycles are
 * contiguous: a cycle ends where the next starts, and a cycle whose last
 * step overran ends when that step ended, so every call falls inside the
 * cycle that counted it.
 *
 * Only the workload's own I/O goes through the wrappers: the pipe's helper
 * reads and the truth log are written with raw system calls, so the
 * library sees exactly what "calls" counts (and, outside every cycle, the
 * opening and closing of the file and the pipe's set-up). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STEP_NS           100000000ull
#define STEADY_WRITES     20u
#define STEADY_WRITE_SIZE 4096u
#define SMALL_WRITES      (20u * STEADY_WRITES)
#define SMALL_WRITE_SIZE  64u
#define READS             4u
#define READ_SIZE         4096u
#define COMPUTE_NS        3000000.0
#define PIPE_BYTES        4096 /* one page: the smallest a pipe can be */
#define DRAIN_PERIOD_NS   1000000L

enum anomaly { NONE, SLOW_IO, CPU_BURST, SMALL_WRITES_ANOMALY, ANOMALY_KINDS };

static const char *const anomaly_names[ANOMALY_KINDS] = {
    [NONE] = "null",
    [SLOW_IO] = "\"slow-io\"",
    [CPU_BURST] = "\"cpu-burst\"",
    [SMALL_WRITES_ANOMALY] = "\"small-writes\"",
};

struct options {
    uint64_t seconds, cycle_ms, warmup_s, seed;
    double anomaly_share;
    const char *dir, *truth;
};

struct cycle_truth {
    uint64_t start_ns, end_ns, calls;
    enum anomaly anomaly;
};

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("capture-eval-workload: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t deadline_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(deadline_ns / 1000000000ull),
                          .tv_nsec = (long)(deadline_ns % 1000000000ull)};
    int e;
    do
        e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    while (e == EINTR);
}

/* splitmix64: the same sequence for a seed on every libc, so a seed names
 * one schedule of anomalies wherever the benchmark runs. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t random_below(uint64_t *state, uint64_t n)
{
    return next_random(state) % n; /* the bias is below 2^-40 for these n */
}

static int compare_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Marks the anomalous cycles. Of the `candidates` cycles from `first` on,
 * n are chosen with no two adjacent: n distinct values y from
 * [0, candidates − n] in ascending order, spread as y_k + k, leave at
 * least one cycle between any two. The kinds are dealt round-robin from
 * a random one and shuffled, so each kind gets a third of them and the
 * seed decides which get one more. */
static void schedule(struct cycle_truth *cycles, uint64_t first, uint64_t candidates, uint64_t n,
                     uint64_t seed)
{
    uint64_t state = seed;
    uint64_t range = candidates - n + 1;
    uint64_t *pool = malloc(range * sizeof *pool);
    enum anomaly *kinds = malloc((n > 0 ? n : 1) * sizeof *kinds);
    if (pool == NULL || kinds == NULL)
        die("out of memory");
    for (uint64_t i = 0; i < range; i++)
        pool[i] = i;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t j = k + random_below(&state, range - k);
        uint64_t t = pool[k];
        pool[k] = pool[j];
        pool[j] = t;
    }
    qsort(pool, n, sizeof *pool, compare_u64);
    uint64_t offset = random_below(&state, 3); /* which kinds get the odd ones */
    for (uint64_t k = 0; k < n; k++)
        kinds[k] = (enum anomaly)(SLOW_IO + (k + offset) % 3);
    for (uint64_t k = n; k > 1; k--) {
        uint64_t j = random_below(&state, k);
        enum anomaly t = kinds[k - 1];
        kinds[k - 1] = kinds[j];
        kinds[j] = t;
    }
    for (uint64_t k = 0; k < n; k++)
        cycles[first + pool[k] + k].anomaly = kinds[k];
    free(pool);
    free(kinds);
}

/* ---- the work ------------------------------------------------------------------- */

static volatile double compute_sink;

static void compute(uint64_t iterations)
{
    double x = 1.0;
    for (uint64_t i = 0; i < iterations; i++)
        x = x * 1.0000001 + 1e-9;
    compute_sink = x;
}

/* Iterations that take COMPUTE_NS on this machine, measured once at start:
 * a fixed amount of work per step, which a CPU burst then slows down as it
 * would a real program's. */
static uint64_t calibrate_compute(void)
{
    uint64_t iterations = 1u << 16;
    for (;;) {
        uint64_t t0 = now_ns();
        compute(iterations);
        uint64_t took = now_ns() - t0;
        if (took >= 20000000ull)
            return (uint64_t)((double)iterations * COMPUTE_NS / (double)took) + 1;
        iterations *= 2;
    }
}

struct workload {
    int data_fd;
    int pipe_write_fd, pipe_read_fd;
    uint64_t compute_iterations;
    char big[STEADY_WRITE_SIZE];
    char small[SMALL_WRITE_SIZE];
    char in[READ_SIZE];
};

static void write_all(int fd, const char *buffer, size_t size, const char *what)
{
    ssize_t n = write(fd, buffer, size);
    if (n != (ssize_t)size)
        die("a write of %zu bytes to %s returned %zd (%s)", size, what, n,
            n < 0 ? strerror(errno) : "short");
}

/* One step's calls; returns how many it made. */
static uint64_t step(struct workload *w, enum anomaly anomaly)
{
    uint64_t calls = 0;
    if (lseek(w->data_fd, 0, SEEK_SET) != 0)
        die("lseek: %s", strerror(errno));
    calls++;
    if (anomaly == SMALL_WRITES_ANOMALY) {
        for (unsigned i = 0; i < SMALL_WRITES; i++, calls++)
            write_all(w->data_fd, w->small, sizeof w->small, "the data file");
    } else {
        int fd = anomaly == SLOW_IO ? w->pipe_write_fd : w->data_fd;
        for (unsigned i = 0; i < STEADY_WRITES; i++, calls++)
            write_all(fd, w->big, sizeof w->big, anomaly == SLOW_IO ? "the pipe" : "the data file");
    }
    /* After small writes the file is shorter: reads then return less, which
     * is still one call each. */
    for (unsigned i = 0; i < READS; i++, calls++)
        if (pread(w->data_fd, w->in, sizeof w->in, (off_t)i * READ_SIZE) < 0)
            die("pread: %s", strerror(errno));
    compute(w->compute_iterations);
    return calls;
}

/* The slow path's far end: takes one page a period, with raw system calls
 * so that its reads are not the workload's activities. It ends at EOF,
 * when the write end is closed. */
static void *drain_pipe(void *arg)
{
    const struct workload *w = arg;
    char page[PIPE_BYTES];
    for (;;) {
        long n = syscall(SYS_read, w->pipe_read_fd, page, sizeof page);
        if (n == 0 || (n < 0 && errno != EINTR))
            return NULL;
        struct timespec period = {.tv_sec = 0, .tv_nsec = DRAIN_PERIOD_NS};
        int r;
        do
            r = nanosleep(&period, &period);
        while (r != 0 && errno == EINTR);
    }
}

struct burst {
    pthread_t *threads;
    long count;
    atomic_bool stop;
};

static void *spin(void *arg)
{
    struct burst *b = arg;
    double x = 1.0;
    while (!atomic_load_explicit(&b->stop, memory_order_relaxed))
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 1e-9;
    compute_sink = x;
    return NULL;
}

static void burst_start(struct burst *b)
{
    atomic_store(&b->stop, false);
    for (long i = 0; i < b->count; i++) {
        int e = pthread_create(&b->threads[i], NULL, spin, b);
        if (e != 0)
            die("cannot start a spinning thread: %s", strerror(e));
    }
}

static void burst_stop(struct burst *b)
{
    atomic_store(&b->stop, true);
    for (long i = 0; i < b->count; i++)
        pthread_join(b->threads[i], NULL);
}

/* ---- the truth log ----------------------------------------------------------------- */

/* Raw system calls: the library must not see the log as the workload's
 * I/O. Written once, after the last cycle. */
static void write_truth(const char *path, const struct cycle_truth *cycles, uint64_t n,
                        uint64_t warmup_cycles)
{
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("cannot open %s: %s", path, strerror(errno));
    for (uint64_t i = 0; i < n; i++) {
        char line[256];
        int length =
            snprintf(line, sizeof line,
                     "{\"cycle\": %" PRIu64 ", \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64
                     ", \"anomaly\": %s, \"calls\": %" PRIu64 ", \"warmup\": %s}\n",
                     i, cycles[i].start_ns, cycles[i].end_ns, anomaly_names[cycles[i].anomaly],
                     cycles[i].calls, i < warmup_cycles ? "true" : "false");
        for (int done = 0; done < length;) {
            long w = syscall(SYS_write, fd, line + done, (size_t)(length - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                die("cannot write %s: %s", path, strerror(errno));
            done += (int)w;
        }
    }
    if (syscall(SYS_close, fd) != 0)
        die("cannot close %s: %s", path, strerror(errno));
}

/* ---- options ----------------------------------------------------------------------- */

static uint64_t parse_u64(const char *text, const char *option, uint64_t min, uint64_t max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || v < min || v > max)
        die("%s: expected an integer from %" PRIu64 " to %" PRIu64 ", got '%s'", option, min, max,
            text);
    return v;
}

static void usage(void)
{
    fputs("usage: capture-eval-workload [--seconds N] [--cycle-ms MS] [--warmup-s S] [--seed N]\n"
          "                             [--anomaly-share F] [--dir DIR] [--truth FILE]\n",
          stderr);
    exit(2);
}

static struct options parse_options(int argc, char **argv)
{
    struct options o = {.seconds = 120,
                        .cycle_ms = 1000,
                        .warmup_s = 40,
                        .seed = 1,
                        .anomaly_share = 0.05,
                        .dir = ".",
                        .truth = "capture-eval-truth.jsonl"};
    static const struct option long_options[] = {
        {"seconds", required_argument, NULL, 's'},
        {"cycle-ms", required_argument, NULL, 'c'},
        {"warmup-s", required_argument, NULL, 'w'},
        {"seed", required_argument, NULL, 'r'},
        {"anomaly-share", required_argument, NULL, 'a'},
        {"dir", required_argument, NULL, 'd'},
        {"truth", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        switch (c) {
        case 's':
            o.seconds = parse_u64(optarg, "--seconds", 1, 1000000);
            break;
        case 'c':
            o.cycle_ms = parse_u64(optarg, "--cycle-ms", 100, 3600000);
            break;
        case 'w':
            o.warmup_s = parse_u64(optarg, "--warmup-s", 0, 1000000);
            break;
        case 'r':
            o.seed = parse_u64(optarg, "--seed", 0, UINT64_MAX);
            break;
        case 'a': {
            char *end;
            errno = 0;
            o.anomaly_share = strtod(optarg, &end);
            if (errno != 0 || end == optarg || *end != '\0' || !(o.anomaly_share >= 0) ||
                o.anomaly_share > 0.5)
                die("--anomaly-share: expected a number from 0 to 0.5 (no two anomalous cycles "
                    "in a row), got '%s'",
                    optarg);
            break;
        }
        case 'd':
            o.dir = optarg;
            break;
        case 't':
            o.truth = optarg;
            break;
        default:
            usage();
        }
    }
    if (optind != argc)
        usage();
    if (o.cycle_ms % (STEP_NS / 1000000) != 0)
        die("--cycle-ms: %" PRIu64 " is not a multiple of the 100 ms step", o.cycle_ms);
    if (o.warmup_s >= o.seconds)
        die("--warmup-s (%" PRIu64 ") must be shorter than --seconds (%" PRIu64 ")", o.warmup_s,
            o.seconds);
    return o;
}

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
    uint64_t cycle_ns = o.cycle_ms * 1000000ull;
    uint64_t steps_per_cycle = cycle_ns / STEP_NS;
    uint64_t n_cycles = o.seconds * 1000000000ull / cycle_ns;
    uint64_t warmup_cycles = (o.warmup_s * 1000000000ull + cycle_ns - 1) / cycle_ns;
    if (n_cycles < warmup_cycles + 2)
        die("%" PRIu64 " cycles of %" PRIu64 " ms leave fewer than 2 after %" PRIu64
            " s of warm-up",
            n_cycles, o.cycle_ms, o.warmup_s);

    struct cycle_truth *cycles = calloc(n_cycles, sizeof *cycles);
    if (cycles == NULL)
        die("out of memory");
    /* The last cycle stays normal: its anomaly would have no cycle after it
     * for vigild to follow it with. */
    uint64_t candidates = n_cycles - warmup_cycles - 1;
    uint64_t wanted = (uint64_t)(o.anomaly_share * (double)(n_cycles - warmup_cycles) + 0.5);
    uint64_t most = (candidates + 1) / 2;
    if (wanted > most)
        wanted = most;
    schedule(cycles, warmup_cycles, candidates, wanted, o.seed);

    static struct workload w;
    memset(w.big, 'v', sizeof w.big);
    memset(w.small, 's', sizeof w.small);
    char path[4096];
    snprintf(path, sizeof path, "%s/capture-eval-%ld.dat", o.dir, (long)getpid());
    w.data_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w.data_fd < 0)
        die("cannot open %s: %s", path, strerror(errno));
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        die("pipe2: %s", strerror(errno));
    w.pipe_read_fd = pipe_fds[0];
    w.pipe_write_fd = pipe_fds[1];
    if (fcntl(w.pipe_write_fd, F_SETPIPE_SZ, PIPE_BYTES) < 0)
        die("F_SETPIPE_SZ: %s", strerror(errno));
    pthread_t drainer;
    int e = pthread_create(&drainer, NULL, drain_pipe, &w);
    if (e != 0)
        die("cannot start the pipe's reader: %s", strerror(e));
    w.compute_iterations = calibrate_compute();

    struct burst burst = {.count = sysconf(_SC_NPROCESSORS_ONLN)};
    if (burst.count < 1)
        burst.count = 1;
    burst.threads = calloc((size_t)burst.count, sizeof *burst.threads);
    if (burst.threads == NULL)
        die("out of memory");

    uint64_t t0 = now_ns();
    uint64_t previous_end = t0;
    for (uint64_t i = 0; i < n_cycles; i++) {
        struct cycle_truth *c = &cycles[i];
        uint64_t scheduled = t0 + i * cycle_ns;
        sleep_until(scheduled);
        /* The previous cycle ended at its schedule or, overrun, later. */
        c->start_ns = previous_end;
        if (c->anomaly == CPU_BURST)
            burst_start(&burst);
        for (uint64_t s = 0; s < steps_per_cycle; s++) {
            sleep_until(scheduled + s * STEP_NS);
            c->calls += step(&w, c->anomaly);
        }
        uint64_t scheduled_end = scheduled + cycle_ns;
        sleep_until(scheduled_end);
        if (c->anomaly == CPU_BURST)
            burst_stop(&burst);
        uint64_t t = now_ns();
        c->end_ns = t > scheduled_end ? t : scheduled_end;
        previous_end = c->end_ns;
    }

    close(w.pipe_write_fd);
    pthread_join(drainer, NULL);
    close(w.pipe_read_fd);
    close(w.data_fd);
    unlink(path);
    write_truth(o.truth, cycles, n_cycles, warmup_cycles);

    unsigned counts[ANOMALY_KINDS] = {0};
    for (uint64_t i = 0; i < n_cycles; i++)
        counts[cycles[i].anomaly]++;
    fprintf(stderr,
            "capture-eval-workload: %" PRIu64 " cycles of %" PRIu64 " ms (%" PRIu64
            " of warm-up), seed %" PRIu64 ": %u slow-io, %u cpu-burst, %u small-writes; "
            "truth in %s\n",
            n_cycles, o.cycle_ms, warmup_cycles, o.seed, counts[SLOW_IO], counts[CPU_BURST],
            counts[SMALL_WRITES_ANOMALY], o.truth);
    free(burst.threads);
    free(cycles);
    return 0;
}
