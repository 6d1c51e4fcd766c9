/* capture-eval-workload: a steady program with anomalies injected at known
 * moments, the ground truth against which bench/capture_eval.py scores
 * vigild's anomaly-driven capture.
 *
 *   capture-eval-workload [--seconds N] [--cycle-ms MS] [--warmup-s S] [--seed N]
 *                         [--anomaly-share F] [--dir DIR] [--truth FILE]
 *   capture-eval-workload --background [--seconds N] [--seed N] [--dir DIR]
 *
 * Time runs in steps of 100 ms of the program's own CLOCK_MONOTONIC,
 * grouped in workload cycles of --cycle-ms. Each step does the same I/O on
 * a file in DIR (one lseek back to its start, 20 writes of 4 KiB, 4 preads
 * of 4 KiB: 25 calls) and about 3 ms of arithmetic. After the first
 * --warmup-s seconds (the ADPIs' learning time), about --anomaly-share of
 * the cycles carry one anomaly for their whole length, never two cycles in
 * a row, the kinds dealt evenly (the seed decides which get one more):
 *
 *   write-latency    the 20 writes go to a pipe of one page that a helper
 *                    thread empties once per millisecond, so each write
 *                    waits for room: the same calls, each about 1 ms
 *                    instead of a few µs
 *   small-writes     100 writes of 64 bytes per step instead of 20 of 4 KiB
 *   bandwidth-burst  the 20 writes are of 256 KiB each: the same calls,
 *                    64 times the bytes
 *   cpu-only         each step makes its lseek and then computes until 90 ms
 *                    after it began (by the clock, not a fixed amount of
 *                    work: calibrated on a busy machine, 30 × 3 ms of work
 *                    took a fraction of a CPU-second)
 *                    instead of doing I/O
 *   stall            the first step reads a pipe that a helper writes
 *                    950 ms later; the step then runs and the cycle's other
 *                    steps are skipped
 *   metadata-storm   the 20 writes are replaced by 20 × (stat, open, close)
 *                    of 20 small files made at start
 *   random-read      the 4 preads become 64 preads of 4 KiB at random
 *                    offsets of a 16 MiB file made at start
 *
 * The truth (--truth, JSON lines) has one line per workload cycle: its
 * number, its CLOCK_MONOTONIC start and end, its anomaly (or null), and
 * the calls libvigil-preload.so intercepts that the cycle made. Cycles are
 * contiguous: a cycle ends where the next starts, and a cycle whose last
 * step overran ends when that step ended, so every call falls inside the
 * cycle that counted it.
 *
 * Only the workload's own I/O goes through the wrappers: the helpers'
 * pipe reads and writes and the truth log use raw system calls, so the
 * library sees exactly what "calls" counts (and, outside every cycle, the
 * set-up and clean-up of its files and pipes).
 *
 * --background is another program on the same node, run without vigil:
 * for --seconds it changes what it does every 1 to 5 s at random (seeded):
 * nothing, one thread spinning, or 4 MiB writes each followed by fsync. It
 * is the load that the node's ADPIs must not blame the workload for. */
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define STEP_NS           100000000ull
#define STEADY_WRITES     20u
#define STEADY_WRITE_SIZE 4096u
#define SMALL_WRITES      (5u * STEADY_WRITES)
#define SMALL_WRITE_SIZE  64u
#define READS             4u
#define READ_SIZE         4096u
#define COMPUTE_NS        3000000.0
#define PIPE_BYTES        4096 /* one page: the smallest a pipe can be */
#define DRAIN_PERIOD_NS   1000000L
#define BURST_WRITE_SIZE  (256u * 1024u)
#define CPU_ONLY_NS       90000000ull
#define STALL_NS          950000000ull
#define META_FILES        20u
#define RANDOM_READS      64u
#define RANDOM_FILE_BYTES (16u * 1024u * 1024u)
#define BACKGROUND_CHUNK  (4u * 1024u * 1024u)

enum anomaly {
    NONE,
    WRITE_LATENCY,
    SMALL_WRITES_ANOMALY,
    BANDWIDTH_BURST,
    CPU_ONLY,
    STALL,
    METADATA_STORM,
    RANDOM_READ,
    ANOMALY_KINDS
};
#define FIRST_KIND WRITE_LATENCY
#define N_KINDS    (ANOMALY_KINDS - FIRST_KIND)

static const char *const anomaly_names[ANOMALY_KINDS] = {
    [NONE] = "null",
    [WRITE_LATENCY] = "\"write-latency\"",
    [SMALL_WRITES_ANOMALY] = "\"small-writes\"",
    [BANDWIDTH_BURST] = "\"bandwidth-burst\"",
    [CPU_ONLY] = "\"cpu-only\"",
    [STALL] = "\"stall\"",
    [METADATA_STORM] = "\"metadata-storm\"",
    [RANDOM_READ] = "\"random-read\"",
};

struct options {
    uint64_t seconds, cycle_ms, warmup_s, seed;
    double anomaly_share;
    bool background;
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
 * a random one and shuffled, so each kind gets a seventh of them and the
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
    uint64_t offset = random_below(&state, N_KINDS); /* which kinds get the odd ones */
    for (uint64_t k = 0; k < n; k++)
        kinds[k] = (enum anomaly)(FIRST_KIND + (k + offset) % N_KINDS);
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
    int pipe_write_fd, pipe_read_fd;   /* write-latency: drained a page a millisecond */
    int stall_write_fd, stall_read_fd; /* stall: written once, STALL_NS after asked */
    int random_fd;
    uint64_t compute_iterations;
    uint64_t random_state; /* random-read offsets, seeded */
    char meta_paths[META_FILES][4096];
    char big[STEADY_WRITE_SIZE];
    char small[SMALL_WRITE_SIZE];
    char in[READ_SIZE];
    char burst[BURST_WRITE_SIZE];
};

static void write_all(int fd, const char *buffer, size_t size, const char *what)
{
    ssize_t n = write(fd, buffer, size);
    if (n != (ssize_t)size)
        die("a write of %zu bytes to %s returned %zd (%s)", size, what, n,
            n < 0 ? strerror(errno) : "short");
}

/* The stall's far end: one byte STALL_NS after it starts, with raw system
 * calls so that it is not the workload's activity. */
static void *wake_stall(void *arg)
{
    const struct workload *w = arg;
    sleep_until(now_ns() + STALL_NS);
    char byte = 'w';
    if (syscall(SYS_write, w->stall_write_fd, &byte, 1) != 1)
        die("cannot end a stall: %s", strerror(errno));
    return NULL;
}

/* Blocks in one intercepted read for STALL_NS: a program waiting on
 * something that does not answer. Returns the calls it made. */
static uint64_t stall(struct workload *w)
{
    pthread_t waker;
    int e = pthread_create(&waker, NULL, wake_stall, w);
    if (e != 0)
        die("cannot start the stall's waker: %s", strerror(e));
    char byte;
    if (read(w->stall_read_fd, &byte, 1) != 1)
        die("the stall's read failed: %s", strerror(errno));
    pthread_join(waker, NULL);
    return 1;
}

static uint64_t metadata_storm(struct workload *w)
{
    struct stat st;
    for (unsigned i = 0; i < META_FILES; i++) {
        if (stat(w->meta_paths[i], &st) != 0)
            die("stat %s: %s", w->meta_paths[i], strerror(errno));
        int fd = open(w->meta_paths[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            die("open %s: %s", w->meta_paths[i], strerror(errno));
        if (close(fd) != 0)
            die("close %s: %s", w->meta_paths[i], strerror(errno));
    }
    return 3u * META_FILES;
}

/* One step's calls; returns how many it made. */
static uint64_t step(struct workload *w, enum anomaly anomaly)
{
    uint64_t calls = 0;
    if (lseek(w->data_fd, 0, SEEK_SET) != 0)
        die("lseek: %s", strerror(errno));
    calls++;
    if (anomaly == CPU_ONLY) {
        for (uint64_t until = now_ns() + CPU_ONLY_NS; now_ns() < until;)
            compute(w->compute_iterations / 16 + 1);
        return calls;
    }
    switch (anomaly) {
    case SMALL_WRITES_ANOMALY:
        for (unsigned i = 0; i < SMALL_WRITES; i++, calls++)
            write_all(w->data_fd, w->small, sizeof w->small, "the data file");
        break;
    case BANDWIDTH_BURST:
        for (unsigned i = 0; i < STEADY_WRITES; i++, calls++)
            write_all(w->data_fd, w->burst, sizeof w->burst, "the data file");
        break;
    case METADATA_STORM:
        calls += metadata_storm(w);
        break;
    default: {
        int fd = anomaly == WRITE_LATENCY ? w->pipe_write_fd : w->data_fd;
        for (unsigned i = 0; i < STEADY_WRITES; i++, calls++)
            write_all(fd, w->big, sizeof w->big,
                      anomaly == WRITE_LATENCY ? "the pipe" : "the data file");
    }
    }
    /* After small writes the file is shorter: reads then return less, which
     * is still one call each. */
    if (anomaly == RANDOM_READ) {
        for (unsigned i = 0; i < RANDOM_READS; i++, calls++) {
            off_t at =
                (off_t)random_below(&w->random_state, RANDOM_FILE_BYTES / READ_SIZE) * READ_SIZE;
            if (pread(w->random_fd, w->in, sizeof w->in, at) < 0)
                die("pread: %s", strerror(errno));
        }
    } else {
        for (unsigned i = 0; i < READS; i++, calls++)
            if (pread(w->data_fd, w->in, sizeof w->in, (off_t)i * READ_SIZE) < 0)
                die("pread: %s", strerror(errno));
    }
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
          "                             [--anomaly-share F] [--dir DIR] [--truth FILE]\n"
          "       capture-eval-workload --background [--seconds N] [--seed N] [--dir DIR]\n",
          stderr);
    exit(2);
}

static struct options parse_options(int argc, char **argv)
{
    struct options o = {.seconds = 600,
                        .cycle_ms = 1000,
                        .warmup_s = 40,
                        .seed = 1,
                        .anomaly_share = 0.04,
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
        {"background", no_argument, NULL, 'b'},
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
        case 'b':
            o.background = true;
            break;
        default:
            usage();
        }
    }
    if (optind != argc)
        usage();
    if (o.cycle_ms % (STEP_NS / 1000000) != 0)
        die("--cycle-ms: %" PRIu64 " is not a multiple of the 100 ms step", o.cycle_ms);
    if (!o.background && o.warmup_s >= o.seconds)
        die("--warmup-s (%" PRIu64 ") must be shorter than --seconds (%" PRIu64 ")", o.warmup_s,
            o.seconds);
    return o;
}

/* ---- the other program ------------------------------------------------------------- */

struct spinner {
    pthread_t thread;
    atomic_bool stop;
    bool running;
};

static void *spin(void *arg)
{
    struct spinner *sp = arg;
    double x = 1.0;
    while (!atomic_load_explicit(&sp->stop, memory_order_relaxed))
        for (int i = 0; i < 100000; i++)
            x = x * 1.0000001 + 1e-9;
    compute_sink = x;
    return NULL;
}

static void spinner_set(struct spinner *sp, bool on)
{
    if (on == sp->running)
        return;
    if (on) {
        atomic_store(&sp->stop, false);
        int e = pthread_create(&sp->thread, NULL, spin, sp);
        if (e != 0)
            die("cannot start a spinning thread: %s", strerror(e));
    } else {
        atomic_store(&sp->stop, true);
        pthread_join(sp->thread, NULL);
    }
    sp->running = on;
}

/* Phases of 1 to 5 s, each idle, one spinning thread or 4 MiB writes with
 * fsync, until --seconds have passed. */
static int background(const struct options *o)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/capture-eval-background-%ld.dat", o->dir, (long)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("cannot open %s: %s", path, strerror(errno));
    char *chunk = malloc(BACKGROUND_CHUNK);
    if (chunk == NULL)
        die("out of memory");
    memset(chunk, 'b', BACKGROUND_CHUNK);
    uint64_t state = o->seed ^ 0x6261636b67726f75ull;
    struct spinner sp = {.running = false};
    uint64_t end = now_ns() + o->seconds * 1000000000ull;
    unsigned phases[3] = {0};
    while (now_ns() < end) {
        unsigned phase = (unsigned)random_below(&state, 3);
        uint64_t phase_end = now_ns() + (1 + random_below(&state, 5)) * 1000000000ull;
        if (phase_end > end)
            phase_end = end;
        phases[phase]++;
        spinner_set(&sp, phase == 1);
        if (phase == 2) {
            for (int round = 0; now_ns() < phase_end; round = (round + 1) % 16) {
                if (round == 0 && lseek(fd, 0, SEEK_SET) != 0)
                    die("lseek: %s", strerror(errno));
                write_all(fd, chunk, BACKGROUND_CHUNK, path);
                if (fsync(fd) != 0)
                    die("fsync %s: %s", path, strerror(errno));
            }
        } else {
            sleep_until(phase_end);
        }
    }
    spinner_set(&sp, false);
    close(fd);
    unlink(path);
    free(chunk);
    fprintf(stderr,
            "capture-eval-workload --background: %" PRIu64 " s, seed %" PRIu64
            ": %u idle, %u spinning, %u writing phases\n",
            o->seconds, o->seed, phases[0], phases[1], phases[2]);
    return 0;
}

/* ---- set-up ------------------------------------------------------------------------- */

static int open_data(const char *dir, const char *what, char *path, size_t size)
{
    snprintf(path, size, "%s/capture-eval-%ld-%s", dir, (long)getpid(), what);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("cannot open %s: %s", path, strerror(errno));
    return fd;
}

static void make_pipe(int *read_fd, int *write_fd)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        die("pipe2: %s", strerror(errno));
    *read_fd = fds[0];
    *write_fd = fds[1];
}

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
    if (o.background)
        return background(&o);
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
    memset(w.burst, 'B', sizeof w.burst);
    w.random_state = o.seed ^ 0x72616e646f6dull;
    char path[4096], random_path[4096];
    w.data_fd = open_data(o.dir, "data", path, sizeof path);
    w.random_fd = open_data(o.dir, "random", random_path, sizeof random_path);
    for (unsigned done = 0; done < RANDOM_FILE_BYTES; done += sizeof w.burst)
        write_all(w.random_fd, w.burst, sizeof w.burst, random_path);
    for (unsigned i = 0; i < META_FILES; i++) {
        char what[32];
        snprintf(what, sizeof what, "meta%u", i);
        close(open_data(o.dir, what, w.meta_paths[i], sizeof w.meta_paths[i]));
    }
    make_pipe(&w.pipe_read_fd, &w.pipe_write_fd);
    if (fcntl(w.pipe_write_fd, F_SETPIPE_SZ, PIPE_BYTES) < 0)
        die("F_SETPIPE_SZ: %s", strerror(errno));
    make_pipe(&w.stall_read_fd, &w.stall_write_fd);
    pthread_t drainer;
    int e = pthread_create(&drainer, NULL, drain_pipe, &w);
    if (e != 0)
        die("cannot start the pipe's reader: %s", strerror(e));
    w.compute_iterations = calibrate_compute();

    uint64_t t0 = now_ns();
    uint64_t previous_end = t0;
    for (uint64_t i = 0; i < n_cycles; i++) {
        struct cycle_truth *c = &cycles[i];
        uint64_t scheduled = t0 + i * cycle_ns;
        sleep_until(scheduled);
        /* The previous cycle ended at its schedule or, overrun, later. */
        c->start_ns = previous_end;
        if (c->anomaly == STALL) {
            c->calls += stall(&w);
            c->calls += step(&w, NONE);
        } else {
            for (uint64_t s = 0; s < steps_per_cycle; s++) {
                sleep_until(scheduled + s * STEP_NS);
                c->calls += step(&w, c->anomaly);
            }
        }
        uint64_t scheduled_end = scheduled + cycle_ns;
        sleep_until(scheduled_end);
        uint64_t t = now_ns();
        c->end_ns = t > scheduled_end ? t : scheduled_end;
        previous_end = c->end_ns;
    }

    close(w.pipe_write_fd);
    pthread_join(drainer, NULL);
    close(w.pipe_read_fd);
    close(w.stall_read_fd);
    close(w.stall_write_fd);
    close(w.data_fd);
    close(w.random_fd);
    unlink(path);
    unlink(random_path);
    for (unsigned i = 0; i < META_FILES; i++)
        unlink(w.meta_paths[i]);
    write_truth(o.truth, cycles, n_cycles, warmup_cycles);

    unsigned counts[ANOMALY_KINDS] = {0};
    for (uint64_t i = 0; i < n_cycles; i++)
        counts[cycles[i].anomaly]++;
    fprintf(stderr,
            "capture-eval-workload: %" PRIu64 " cycles of %" PRIu64 " ms (%" PRIu64
            " of warm-up), seed %" PRIu64 ":",
            n_cycles, o.cycle_ms, warmup_cycles, o.seed);
    for (int k = FIRST_KIND; k < ANOMALY_KINDS; k++)
        fprintf(stderr, " %u %.*s%s", counts[k], (int)strlen(anomaly_names[k]) - 2,
                anomaly_names[k] + 1, k + 1 < ANOMALY_KINDS ? "," : ";");
    fprintf(stderr, " truth in %s\n", o.truth);
    free(cycles);
    return 0;
}
