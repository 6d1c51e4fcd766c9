/* bench-preload: what libvigil-preload.so adds to a program, measured side
 * by side with the same program running without it, in one run.
 *
 *   bench-preload [ROUNDS] [--darshan PREFIX]
 *
 * The benchmark runs itself again (/proc/self/exe) as a worker, once per
 * configuration and round, the configurations alternating so that the
 * machine's noise falls on all of them alike:
 *
 *   plain     no LD_PRELOAD
 *   recorded  LD_PRELOAD, VIGIL_EXCLUDE="" (nothing excluded): every call
 *             is counted and writes its record into the ring
 *   excluded  LD_PRELOAD, the default exclusions: a call on /dev/null is
 *             counted only
 *   darshan   LD_PRELOAD of Darshan's libdarshan.so (DARSHAN_ENABLE_NONMPI,
 *             DARSHAN_EXCLUDE_DIRS=none: every file recorded, as vigil's
 *             "recorded"; its log in a temporary directory), from
 *             --darshan PREFIX (default /opt/darshan-3.4.7); when
 *             PREFIX/lib/libdarshan.so is not there, a line says it is
 *             skipped
 *
 * Without a reader the ring fills up and the library drops records, which
 * is cheaper than writing them; so a worker that finds the library drains
 * its ring from a thread of its own, as vigild would, and reports what it
 * drained and what the library dropped. The plain worker runs an idle
 * thread at the same pace instead (see reader_start for why).
 *
 * Each worker also measures its cases in pairs within the one process:
 * batches through libc's own function (found with dlopen/dlsym, past the
 * interposer) alternating with batches through the program's usual calls
 * (the wrappers, when the library is loaded), so that the machine's noise
 * falls on both alike. In the plain worker both sides are libc's: that
 * null measurement shows how much noise alone makes of a difference.
 *
 * It also times starting /bin/true with and without the library.
 *
 * With VIGIL_PRELOAD_PARTS ("PART=PATH:…", meson sets it), it runs the
 * variants of the library that bench/meson.build builds without one part
 * of a call's bookkeeping as more configurations, recorded like the
 * library, and prints what each adds beside the library's figures, with
 * what two reads of the wrappers' clock cost here: the table of where a
 * call's added nanoseconds go.
 *
 * Rounds are timed with the calling thread's CPU time, not wall time. Each
 * figure across workers is the best of its rounds (default 7): the best is
 * the run least disturbed by the rest of the machine. The library is found with
 * VIGIL_PRELOAD_LIB (meson sets it), or else next to the benchmark in the
 * build tree (../instrument/libvigil-preload.so). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vigil/clock.h"
#include "vigil/ring.h"
#include "bench_clock.h"

extern char **environ;

/* A measured round lasts about this long, and must last at least the
 * minimum for its figure to mean something. */
#define ROUND_TARGET_NS  80000000.0
#define ROUND_MINIMUM_MS 50.0
#define DATA_FILE_BYTES  (1u << 20)
#define PREAD_BYTES      4096u
#define FWRITE_BYTES     16u
#define START_COUNT      300 /* starts of /bin/true, with and without */
#define START_BATCH      30
#define WORKER_ROUNDS    "2" /* measured rounds in one worker, per case */

/* ---- the cases -------------------------------------------------------------- */

enum bench_case { CASE_WRITE, CASE_PREAD, CASE_FWRITE, CASE_COUNT };

static const char *const case_names[CASE_COUNT] = {"write", "pread", "fwrite"};

/* The symbol a case's calls go to: dlsym tells whether the library has
 * it. Under _FILE_OFFSET_BITS=64 (meson's default) pread is pread64. */
#if defined(_FILE_OFFSET_BITS) && _FILE_OFFSET_BITS == 64
#define PREAD_SYMBOL "pread64"
#else
#define PREAD_SYMBOL "pread"
#endif
static const char *const case_symbols[CASE_COUNT] = {"write", PREAD_SYMBOL, "fwrite"};

/* The functions a case calls: as the program's own calls reach them (the
 * library's wrappers when it is preloaded), or libc's own, which the
 * paired measurement calls beside them in the same process. */
struct functions {
    ssize_t (*write)(int, const void *, size_t);
    ssize_t (*pread)(int, void *, size_t, off_t);
    size_t (*fwrite)(const void *, size_t, size_t, FILE *);
};

struct targets {
    const struct functions *fn;
    int null_fd;       /* /dev/null, for write */
    int data_fd;       /* the cached temporary file, for pread */
    FILE *null_file;   /* /dev/null, for fwrite */
    uint64_t checksum; /* what the calls returned: keeps them, and checks them */
};

static void run_calls(struct targets *t, enum bench_case c, uint64_t calls)
{
    static const char payload[] = "0123456789abcdef";
    char buffer[PREAD_BYTES];
    uint64_t sum = 0;
    switch (c) {
    case CASE_WRITE:
        for (uint64_t i = 0; i < calls; i++)
            sum += (uint64_t)t->fn->write(t->null_fd, payload, 1);
        break;
    case CASE_PREAD:
        for (uint64_t i = 0; i < calls; i++)
            sum += (uint64_t)t->fn->pread(t->data_fd, buffer, sizeof buffer, 0);
        break;
    case CASE_FWRITE:
        for (uint64_t i = 0; i < calls; i++)
            sum += t->fn->fwrite(payload, FWRITE_BYTES, 1, t->null_file);
        break;
    case CASE_COUNT:
        break;
    }
    static const uint64_t per_call[CASE_COUNT] = {1, PREAD_BYTES, 1};
    if (sum != calls * per_call[c]) {
        fprintf(stderr, "bench-preload: a %s call failed (%s)\n", case_names[c], strerror(errno));
        exit(1);
    }
    t->checksum += sum;
}

/* The calling thread's CPU time (user and system), in ns. */
static uint64_t thread_cpu_ns(void)
{
    return bench_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Returns the ns of CPU the calls took. CPU time, not wall time: on a
 * shared machine, wall time also counts whatever ran while this thread
 * waited for a core, which no round escapes when the load is above the
 * number of cores; the thread's CPU time counts only its own work, in the
 * program and in the kernel. */
static double timed_calls(struct targets *t, enum bench_case c, uint64_t calls)
{
    uint64_t t0 = thread_cpu_ns();
    run_calls(t, c, calls);
    return (double)(thread_cpu_ns() - t0);
}

/* ---- the paired measurement ------------------------------------------------- */

/* Batches of about this much CPU time, alternating between libc's function
 * and the wrapped one, PAIRS pairs per case and worker. */
#define PAIR_BATCH_NS 1000000.0
#define PAIRS         64

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* In a worker under the library: the case's calls through libc directly
 * and through the wrapper, in alternating batches of the same process, so
 * that whatever else the machine does falls on both alike; prints
 * "paired CASE DIRECT_NS WRAPPED_NS ADDED_MEDIAN ADDED_Q1 ADDED_Q3", the
 * medians over the pairs of ns per call. */
static uint64_t paired(struct targets *t, const struct functions *direct, enum bench_case c,
                       uint64_t round_calls)
{
    const struct functions *wrapped = t->fn;
    uint64_t batch = (uint64_t)((double)round_calls * PAIR_BATCH_NS / ROUND_TARGET_NS);
    if (batch < 256)
        batch = 256;
    double added[PAIRS], plain[PAIRS], with[PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        double ns[2];
        for (int k = 0; k < 2; k++) {
            bool through_wrapper = (k + i) % 2 == 1; /* which goes first alternates */
            t->fn = through_wrapper ? wrapped : direct;
            ns[through_wrapper] = timed_calls(t, c, batch) / (double)batch;
        }
        plain[i] = ns[0];
        with[i] = ns[1];
        added[i] = ns[1] - ns[0];
    }
    t->fn = wrapped;
    qsort(added, PAIRS, sizeof added[0], compare_doubles);
    qsort(plain, PAIRS, sizeof plain[0], compare_doubles);
    qsort(with, PAIRS, sizeof with[0], compare_doubles);
    printf("paired %s %.3f %.3f %.3f %.3f %.3f\n", case_names[c], plain[PAIRS / 2], with[PAIRS / 2],
           added[PAIRS / 2], added[PAIRS / 4], added[3 * PAIRS / 4]);
    return PAIRS * batch; /* calls made through the wrapper */
}

/* libc's own functions, past any interposer. */
static void find_direct(struct functions *direct)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (libc == NULL) {
        fprintf(stderr, "bench-preload: cannot find libc.so.6: %s\n", dlerror());
        exit(1);
    }
    direct->write = (ssize_t(*)(int, const void *, size_t))dlsym(libc, "write");
    direct->pread = (ssize_t(*)(int, void *, size_t, off_t))dlsym(libc, PREAD_SYMBOL);
    direct->fwrite = (size_t(*)(const void *, size_t, size_t, FILE *))dlsym(libc, "fwrite");
    if (direct->write == NULL || direct->pread == NULL || direct->fwrite == NULL) {
        fprintf(stderr, "bench-preload: libc.so.6 lacks write, %s or fwrite\n", PREAD_SYMBOL);
        exit(1);
    }
}

/* Warms the case up (the ring's pages too: at least two laps of a default
 * ring are written before anything is measured) and returns how many calls
 * make a round of about ROUND_TARGET_NS. */
static uint64_t calibrate(struct targets *t, enum bench_case c, uint64_t *calls_made)
{
    uint64_t calls = 4096, total = 0;
    double ns;
    for (;;) {
        ns = timed_calls(t, c, calls);
        total += calls;
        if (ns >= 20e6 && total >= 2ull * VIGIL_RING_DEFAULT_SLOTS)
            break;
        calls *= 2;
    }
    *calls_made += total;
    uint64_t round_calls = (uint64_t)((double)calls * ROUND_TARGET_NS / ns);
    return round_calls < 4096 ? 4096 : round_calls;
}

/* ---- the worker's ring reader ------------------------------------------------ */

struct reader {
    struct vigil_ring *ring;
    pthread_t thread;
    atomic_bool stop;
    uint64_t records;  /* handed out by drain */
    uint64_t problems; /* positions skipped as torn or corrupt */
    bool header_corrupt;
};

static void ignore_record(const struct vigil_ring_record *record, void *user)
{
    (void)record;
    (void)user;
}

static void drain_everything(struct reader *r)
{
    struct vigil_ring_drain_report report;
    if (r->ring == NULL)
        return; /* the plain worker's thread: pacing only */
    for (;;) {
        size_t got = vigil_ring_drain(r->ring, 1u << 16, 0, NULL, ignore_record, NULL, &report);
        r->records += got;
        r->problems += report.corrupt + report.torn;
        if (report.header_corrupt)
            r->header_corrupt = true;
        if (report.slots == 0 || report.header_corrupt)
            return;
    }
}

static void *reader_loop(void *arg)
{
    struct reader *r = arg;
    while (!atomic_load(&r->stop)) {
        drain_everything(r);
        /* Pacing, not synchronisation: how often a reader comes by. */
        nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 1000000}, NULL);
    }
    drain_everything(r);
    return NULL;
}

/* Starts the worker's second thread: the ring's reader when this process
 * runs under the library, else one that only keeps the same pace. Every
 * worker has it because glibc makes the system calls (cancellation
 * points) and stdio of a multi-threaded process dearer, by tens of ns:
 * with a reader in the "with" workers only, that would pass for vigil's
 * cost. Returns whether it reads; prints "ring LOADED SLOTS". */
static bool reader_start(struct reader *r)
{
    int (*ring_fd)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "vigil_preload_ring_fd");
    int fd = ring_fd != NULL ? ring_fd() : -1;
    if (fd >= 0) {
        struct vigil_error err;
        r->ring = vigil_ring_attach(fd, &err);
        if (r->ring == NULL) {
            fprintf(stderr, "bench-preload: cannot read the library's ring: %s\n", err.message);
            exit(1);
        }
        printf("ring 1 %u\n", vigil_ring_slot_count(r->ring));
    } else {
        printf("ring %d 0\n", ring_fd != NULL ? -1 : 0); /* -1: loaded but inactive */
    }
    atomic_init(&r->stop, false);
    if (pthread_create(&r->thread, NULL, reader_loop, r) != 0) {
        fprintf(stderr, "bench-preload: cannot start the worker's second thread\n");
        exit(1);
    }
    return r->ring != NULL;
}

/* ---- the worker ------------------------------------------------------------- */

static int open_or_die(const char *path, int flags)
{
    int fd = open(path, flags);
    if (fd < 0) {
        fprintf(stderr, "bench-preload: %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return fd;
}

/* bench-preload --worker DATA_FILE ROUNDS CASES (CASES: letters of w, p, f)
 *
 * Prints, one a line:
 *   ring LOADED SLOTS
 *   wrapped CASE 0|1                 the library has the case's function
 *   case CASE BEST_NS SHORTEST_MS CALLS DROPPED
 *                                    best ns per call, shortest round, calls
 *                                    made, records dropped meanwhile
 *   reader DRAINED DROPPED PROBLEMS CALLS
 */
static int worker(int argc, char **argv)
{
    if (argc != 5)
        return 2;
    int rounds = atoi(argv[3]);
    const bool wanted[CASE_COUNT] = {
        strchr(argv[4], 'w') != NULL,
        strchr(argv[4], 'p') != NULL,
        strchr(argv[4], 'f') != NULL,
    };
    static const struct functions as_linked = {write, pread, fwrite};
    struct functions direct;
    find_direct(&direct);
    struct targets t = {
        .fn = &as_linked,
        .null_fd = open_or_die("/dev/null", O_WRONLY),
        .data_fd = open_or_die(argv[2], O_RDONLY),
        .null_file = fopen("/dev/null", "w"),
    };
    if (t.null_file == NULL) {
        fprintf(stderr, "bench-preload: /dev/null: %s\n", strerror(errno));
        return 1;
    }

    struct reader reader = {0};
    bool reading = reader_start(&reader);
    /* Darshan sets its core up in a constructor (DARSHAN_ENABLE_NONMPI):
     * the pointer is set once it runs. */
    void *const *darshan_core = dlsym(RTLD_DEFAULT, "__darshan_core");
    printf("darshan %d\n", darshan_core != NULL && *darshan_core != NULL);
    uint64_t calls_made[CASE_COUNT] = {0}, round_calls[CASE_COUNT] = {0};
    /* Drops are told apart by case: the fast ones fill the ring fastest. */
    uint64_t dropped_in[CASE_COUNT] = {0}, before;
    for (int c = 0; c < CASE_COUNT; c++) {
        if (!wanted[c])
            continue;
        before = reading ? vigil_ring_dropped(reader.ring) : 0;
        round_calls[c] = calibrate(&t, (enum bench_case)c, &calls_made[c]);
        dropped_in[c] += reading ? vigil_ring_dropped(reader.ring) - before : 0;
    }

    double best_ns[CASE_COUNT], shortest_ms[CASE_COUNT];
    for (int c = 0; c < CASE_COUNT; c++)
        best_ns[c] = shortest_ms[c] = 1e18;
    for (int r = 0; r < rounds; r++) {
        for (int c = 0; c < CASE_COUNT; c++) {
            if (!wanted[c])
                continue;
            double ns;
            for (int attempt = 0;; attempt++) {
                before = reading ? vigil_ring_dropped(reader.ring) : 0;
                ns = timed_calls(&t, (enum bench_case)c, round_calls[c]);
                dropped_in[c] += reading ? vigil_ring_dropped(reader.ring) - before : 0;
                calls_made[c] += round_calls[c];
                if (ns >= ROUND_MINIMUM_MS * 1e6 || attempt == 3)
                    break;
                /* Calibrated while the machine was busier: lengthen the
                 * rounds and measure this one again. */
                round_calls[c] = (uint64_t)((double)round_calls[c] * ROUND_TARGET_NS / ns);
            }
            if (ns / 1e6 < shortest_ms[c])
                shortest_ms[c] = ns / 1e6;
            if (ns / (double)round_calls[c] < best_ns[c])
                best_ns[c] = ns / (double)round_calls[c];
        }
    }
    for (int c = 0; c < CASE_COUNT; c++)
        if (wanted[c])
            calls_made[c] += paired(&t, &direct, (enum bench_case)c, round_calls[c]);
    fflush(t.null_file);

    uint64_t dropped = 0, expected = 0;
    atomic_store(&reader.stop, true);
    pthread_join(reader.thread, NULL);
    if (reading) {
        dropped = vigil_ring_dropped(reader.ring);
        if (reader.header_corrupt)
            fprintf(stderr, "bench-preload: the ring's header is corrupt\n");
    }
    for (int c = 0; c < CASE_COUNT; c++) {
        if (!wanted[c])
            continue;
        void *fn = dlsym(RTLD_DEFAULT, case_symbols[c]);
        Dl_info info;
        bool wrapped = fn != NULL && dladdr(fn, &info) != 0 && info.dli_fname != NULL &&
                       (strstr(info.dli_fname, "vigil-preload") != NULL ||
                        strstr(info.dli_fname, "libdarshan") != NULL);
        if (wrapped && reading)
            expected += calls_made[c];
        printf("wrapped %s %d\n", case_names[c], wrapped);
        printf("case %s %.3f %.3f %llu %llu\n", case_names[c], best_ns[c], shortest_ms[c],
               (unsigned long long)calls_made[c], (unsigned long long)dropped_in[c]);
    }
    printf("reader %llu %llu %llu %llu\n", (unsigned long long)reader.records,
           (unsigned long long)dropped, (unsigned long long)reader.problems,
           (unsigned long long)expected);
    fflush(stdout);
    if (reading)
        vigil_ring_close(reader.ring);
    fclose(t.null_file);
    close(t.data_fd);
    close(t.null_fd);
    return t.checksum == 0; /* keeps the loops from being optimised away */
}

/* ---- the parent: configurations and their results ------------------------------ */

enum config { PLAIN, RECORDED, EXCLUDED, BASE_CONFIGS };

/* The library's variants from VIGIL_PRELOAD_PARTS ("PART=PATH:…"), each
 * built without one part of a call's bookkeeping (bench/meson.build): run
 * as more configurations after the base ones, recorded like RECORDED. */
#define MAX_PARTS  6
#define CONFIG_MAX (BASE_CONFIGS + MAX_PARTS + 1)
static int config_count = BASE_CONFIGS;
/* Darshan, when installed: the last configuration; -1 when it is not. */
static int darshan_config = -1;
static char darshan_setting[PATH_MAX + 16];
static char darshan_log_setting[PATH_MAX + 32];
static char darshan_log_dir[PATH_MAX];
static char part_names[MAX_PARTS][32];
static char part_settings[MAX_PARTS][PATH_MAX + 16];

#define MAX_WORKERS 64 /* rounds of workers the paired figures keep */

static const char *const config_names[BASE_CONFIGS] = {"plain", "recorded", "excluded"};
static const char *const config_cases[BASE_CONFIGS] = {"wpf", "wpf", "w"};

static const char *config_name(int config)
{
    if (config == darshan_config)
        return "darshan";
    return config < BASE_CONFIGS ? config_names[config] : part_names[config - BASE_CONFIGS];
}

struct results {
    double best_ns[CASE_COUNT];
    double shortest_ms[CASE_COUNT];
    int wrapped[CASE_COUNT]; /* -1 until a worker said */
    uint64_t calls[CASE_COUNT], dropped_in[CASE_COUNT];
    uint64_t drained, dropped, problems, expected;
    /* The paired measurement, one entry per worker: medians of ns per call. */
    int pairs[CASE_COUNT];
    double pair_direct[CASE_COUNT][MAX_WORKERS], pair_wrapped[CASE_COUNT][MAX_WORKERS];
    double pair_added[CASE_COUNT][MAX_WORKERS], pair_q1[CASE_COUNT][MAX_WORKERS],
        pair_q3[CASE_COUNT][MAX_WORKERS];
};

static char self_path[PATH_MAX];
static char library_path[PATH_MAX];
static char data_path[PATH_MAX];
static char preload_setting[PATH_MAX + 16];

static void remove_data_file(void)
{
    if (data_path[0] != '\0')
        unlink(data_path);
}

static void die(const char *what)
{
    fprintf(stderr, "bench-preload: %s\n", what);
    exit(1);
}

/* The environment a child gets: ours without any of the settings below,
 * then those of `extra` (NULL-terminated). */
static char **child_environment(const char *const *extra)
{
    static const char *const ours[] = {
        "LD_PRELOAD=", "VIGIL_EXCLUDE=", "VIGIL_REPORT=", "DARSHAN_"};
    size_t count = 0, n = 0;
    while (environ[count] != NULL)
        count++;
    char **env = calloc(count + 8, sizeof *env);
    if (env == NULL)
        die("out of memory");
    for (size_t i = 0; i < count; i++) {
        bool skip = false;
        for (size_t k = 0; k < sizeof ours / sizeof ours[0]; k++)
            skip = skip || strncmp(environ[i], ours[k], strlen(ours[k])) == 0;
        if (!skip)
            env[n++] = environ[i];
    }
    for (size_t k = 0; k < 7 && extra[k] != NULL; k++)
        env[n++] = (char *)extra[k];
    env[n] = NULL;
    return env;
}

static char **config_environment(int config)
{
    static const char *const plain[] = {NULL};
    const char *recorded[] = {preload_setting, "VIGIL_EXCLUDE=", "VIGIL_REPORT=off", NULL};
    const char *excluded[] = {preload_setting, "VIGIL_REPORT=off", NULL};
    if (config == darshan_config) {
        const char *darshan[] = {darshan_setting, "DARSHAN_ENABLE_NONMPI=1",
                                 "DARSHAN_EXCLUDE_DIRS=none", darshan_log_setting, NULL};
        return child_environment(darshan);
    }
    if (config >= BASE_CONFIGS) {
        const char *part[] = {part_settings[config - BASE_CONFIGS],
                              "VIGIL_EXCLUDE=", "VIGIL_REPORT=off", NULL};
        return child_environment(part);
    }
    return child_environment(config == PLAIN ? plain : config == RECORDED ? recorded : excluded);
}

static void wait_for(pid_t pid, const char *what)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("waitpid failed");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench-preload: %s failed (status %d)\n", what, status);
        exit(1);
    }
}

/* Runs one worker and folds what it printed into `res`. */
static void run_worker(int config, struct results *res)
{
    int out[2];
    if (pipe(out) != 0)
        die("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addclose(&actions, out[1]);
    char *cases = config < BASE_CONFIGS ? (char *)config_cases[config] : "wpf";
    char *argv[] = {self_path, "--worker", data_path, WORKER_ROUNDS, cases, NULL};
    char **env = config_environment(config);
    pid_t pid;
    int err = posix_spawn(&pid, self_path, &actions, NULL, argv, env);
    posix_spawn_file_actions_destroy(&actions);
    free(env);
    close(out[1]);
    if (err != 0) {
        fprintf(stderr, "bench-preload: cannot run %s: %s\n", self_path, strerror(err));
        exit(1);
    }

    FILE *in = fdopen(out[0], "r");
    if (in == NULL)
        die("fdopen failed");
    char line[256], name[32];
    int loaded = -2, darshan_active = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        double ns, ms, direct, wrapped, added, q1, q3;
        int flag, slots;
        unsigned long long drained, dropped, problems, expected, calls;
        if (sscanf(line, "ring %d %d", &flag, &slots) == 2) {
            loaded = flag;
        } else if (sscanf(line, "darshan %d", &flag) == 1) {
            darshan_active = flag;
        } else if (sscanf(line, "wrapped %31s %d", name, &flag) == 2) {
            for (int c = 0; c < CASE_COUNT; c++)
                if (strcmp(name, case_names[c]) == 0)
                    res->wrapped[c] = flag;
        } else if (sscanf(line, "case %31s %lf %lf %llu %llu", name, &ns, &ms, &calls, &dropped) ==
                   5) {
            for (int c = 0; c < CASE_COUNT; c++) {
                if (strcmp(name, case_names[c]) != 0)
                    continue;
                res->calls[c] += calls;
                res->dropped_in[c] += dropped;
                if (ns < res->best_ns[c])
                    res->best_ns[c] = ns;
                if (ms < res->shortest_ms[c])
                    res->shortest_ms[c] = ms;
            }
        } else if (sscanf(line, "paired %31s %lf %lf %lf %lf %lf", name, &direct, &wrapped, &added,
                          &q1, &q3) == 6) {
            for (int c = 0; c < CASE_COUNT; c++) {
                if (strcmp(name, case_names[c]) != 0 || res->pairs[c] >= MAX_WORKERS)
                    continue;
                int n = res->pairs[c]++;
                res->pair_direct[c][n] = direct;
                res->pair_wrapped[c][n] = wrapped;
                res->pair_added[c][n] = added;
                res->pair_q1[c][n] = q1;
                res->pair_q3[c][n] = q3;
            }
        } else if (sscanf(line, "reader %llu %llu %llu %llu", &drained, &dropped, &problems,
                          &expected) == 4) {
            res->drained += drained;
            res->dropped += dropped;
            res->problems += problems;
            res->expected += expected;
        }
    }
    fclose(in);
    char what[64];
    snprintf(what, sizeof what, "the %s worker", config_name(config));
    wait_for(pid, what);

    if ((config == PLAIN || config == darshan_config) && loaded != 0)
        die("the plain or Darshan worker runs under vigil: is LD_PRELOAD set some other way?");
    if (config == PLAIN && darshan_active)
        die("the plain worker runs under Darshan: is LD_PRELOAD set some other way?");
    if (config == darshan_config && !darshan_active) {
        fprintf(stderr,
                "bench-preload: the darshan worker does not run under an active Darshan: "
                "%s did not load or did not set itself up\n",
                darshan_setting);
        exit(1);
    }
    if (config != PLAIN && config != darshan_config && loaded != 1) {
        fprintf(stderr,
                "bench-preload: the %s worker does not run under an active vigil (%s): "
                "LD_PRELOAD=%s did not load, is not vigil's, or disabled itself\n",
                config_name(config), loaded == -1 ? "inactive" : "not loaded",
                config < BASE_CONFIGS ? library_path : part_settings[config - BASE_CONFIGS]);
        exit(1);
    }
}

/* ---- process start-up -------------------------------------------------------------- */

/* Starts /bin/true `count` times; returns the ns it took. */
static double timed_starts(char **env, int count)
{
    char *argv[] = {"true", NULL};
    uint64_t t0 = vigil_clock_monotonic_ns();
    for (int i = 0; i < count; i++) {
        pid_t pid;
        int err = posix_spawn(&pid, "/bin/true", NULL, NULL, argv, env);
        if (err != 0) {
            fprintf(stderr, "bench-preload: cannot run /bin/true: %s\n", strerror(err));
            exit(1);
        }
        wait_for(pid, "/bin/true");
    }
    return (double)(vigil_clock_monotonic_ns() - t0);
}

/* ms per start of the best batch, without and with the library; `report`
 * is its VIGIL_REPORT setting ("VIGIL_REPORT=off": start-up alone; a file:
 * the report at exit too, which gathers every file's figures). */
static void time_starts(const char *report, double *plain_ms, double *vigil_ms)
{
    static const char *const none[] = {NULL};
    const char *with[] = {preload_setting, report, NULL};
    char **plain_env = child_environment(none), **vigil_env = child_environment(with);
    timed_starts(plain_env, 5); /* warms the page cache, both ways */
    timed_starts(vigil_env, 5);
    *plain_ms = *vigil_ms = 1e18;
    for (int batch = 0; batch < START_COUNT / START_BATCH; batch++) {
        /* Alternating which goes first, too. */
        for (int k = 0; k < 2; k++) {
            bool with_vigil = (k + batch) % 2 == 1;
            double ms =
                timed_starts(with_vigil ? vigil_env : plain_env, START_BATCH) / 1e6 / START_BATCH;
            double *best = with_vigil ? vigil_ms : plain_ms;
            if (ms < *best)
                *best = ms;
        }
    }
    free(plain_env);
    free(vigil_env);
}

/* ---- set-up ---------------------------------------------------------------------------- */

static void find_paths(void)
{
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n <= 0)
        die("cannot read /proc/self/exe");
    self_path[n] = '\0';

    const char *setting = getenv("VIGIL_PRELOAD_LIB");
    char guess[PATH_MAX + 64];
    if (setting == NULL || setting[0] == '\0') {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", self_path);
        char *slash = strrchr(dir, '/');
        if (slash != NULL)
            *slash = '\0';
        snprintf(guess, sizeof guess, "%s/../instrument/libvigil-preload.so", dir);
        setting = guess;
    }
    if (realpath(setting, library_path) == NULL || access(library_path, R_OK) != 0) {
        fprintf(stderr,
                "bench-preload: libvigil-preload.so not found at %s (%s); set "
                "VIGIL_PRELOAD_LIB to its path\n",
                setting, strerror(errno));
        exit(1);
    }
    snprintf(preload_setting, sizeof preload_setting, "LD_PRELOAD=%s", library_path);
}

/* VIGIL_PRELOAD_PARTS: "PART=PATH" items separated by ':' (meson sets it). */
static void find_parts(void)
{
    const char *setting = getenv("VIGIL_PRELOAD_PARTS");
    if (setting == NULL || setting[0] == '\0')
        return;
    char *list = strdup(setting), *saved = NULL;
    if (list == NULL)
        die("out of memory");
    for (char *item = strtok_r(list, ":", &saved); item != NULL;
         item = strtok_r(NULL, ":", &saved)) {
        char *equals = strchr(item, '=');
        int n = config_count - BASE_CONFIGS;
        if (equals == NULL || equals == item || (size_t)(equals - item) >= sizeof part_names[0]) {
            fprintf(stderr, "bench-preload: VIGIL_PRELOAD_PARTS: \"%s\" is not PART=PATH\n", item);
            exit(1);
        }
        if (n == MAX_PARTS) {
            fprintf(stderr, "bench-preload: VIGIL_PRELOAD_PARTS names more than %d variants\n",
                    MAX_PARTS);
            exit(1);
        }
        if (access(equals + 1, R_OK) != 0) {
            fprintf(stderr, "bench-preload: VIGIL_PRELOAD_PARTS: %s: %s\n", equals + 1,
                    strerror(errno));
            exit(1);
        }
        snprintf(part_names[n], sizeof part_names[n], "%.*s", (int)(equals - item), item);
        snprintf(part_settings[n], sizeof part_settings[n], "LD_PRELOAD=%s", equals + 1);
        config_count++;
    }
    free(list);
}

static void remove_darshan_logs(void)
{
    DIR *dir = opendir(darshan_log_dir);
    if (dir == NULL)
        return;
    for (struct dirent *e; (e = readdir(dir)) != NULL;)
        if (e->d_name[0] != '.')
            unlinkat(dirfd(dir), e->d_name, 0);
    closedir(dir);
    rmdir(darshan_log_dir);
}

/* Darshan under `prefix`, as one more configuration, when it is there;
 * its logs go to a temporary directory, removed at exit. */
static void find_darshan(const char *prefix)
{
    char library[PATH_MAX];
    snprintf(library, sizeof library, "%s/lib/libdarshan.so", prefix);
    if (access(library, R_OK) != 0) {
        printf("darshan: skipped, %s is not there (%s; --darshan PREFIX)\n", library,
               strerror(errno));
        return;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(darshan_log_dir, sizeof darshan_log_dir, "%s/vigil-bench-darshan-XXXXXX",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(darshan_log_dir) == NULL)
        die("cannot create a temporary directory for Darshan's logs");
    atexit(remove_darshan_logs);
    snprintf(darshan_setting, sizeof darshan_setting, "LD_PRELOAD=%s", library);
    snprintf(darshan_log_setting, sizeof darshan_log_setting, "DARSHAN_LOGPATH=%s",
             darshan_log_dir);
    darshan_config = config_count++;
}

static volatile uint64_t clock_sink; /* keeps the reads' differences */

/* What two reads of the wrappers' clock cost here, back to back in a
 * loop, best of a few rounds of the thread's CPU time: the part of a
 * call's cost no bookkeeping can shed while calls are timed. */
static double clock_pair_ns(enum vigil_tick_source source)
{
    enum { READS = 1 << 20 };
    double best = 1e18;
    for (int round = 0; round < 5; round++) {
        uint64_t t0 = thread_cpu_ns();
        for (int i = 0; i < READS; i++) {
            uint64_t start = vigil_ticks(source);
            clock_sink += vigil_ticks(source) - start;
        }
        double ns = (double)(thread_cpu_ns() - t0) / READS;
        if (ns < best)
            best = ns;
    }
    return best;
}

/* A 1 MiB file for pread, in the page cache since it was just written. */
static void make_data_file(void)
{
    const char *dir = getenv("TMPDIR");
    snprintf(data_path, sizeof data_path, "%s/vigil-bench-preload-XXXXXX",
             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    int fd = mkstemp(data_path);
    if (fd < 0) {
        data_path[0] = '\0';
        die("cannot create a temporary file");
    }
    atexit(remove_data_file);
    static char block[64 * 1024];
    memset(block, 'v', sizeof block);
    for (unsigned done = 0; done < DATA_FILE_BYTES; done += sizeof block)
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block)
            die("cannot write the temporary file");
    close(fd);
}

/* ---- the report ------------------------------------------------------------------------ */

static void print_row(const char *label, double without, double with, const char *unit,
                      const char *note)
{
    printf("%-34s %9.*f %s %9.*f %s %8.*f %s %6.2fx%s\n", label, unit[0] == 'n' ? 1 : 3, without,
           unit, unit[0] == 'n' ? 1 : 3, with, unit, unit[0] == 'n' ? 1 : 3, with - without, unit,
           with / without, note);
}

/* The median over a configuration's workers of the ns its paired
 * measurement added; 1e18 when there were none. */
static double paired_median(const struct results *res, enum bench_case c)
{
    int n = res->pairs[c];
    if (n == 0)
        return 1e18;
    double added[MAX_WORKERS];
    memcpy(added, res->pair_added[c], (size_t)n * sizeof added[0]);
    qsort(added, (size_t)n, sizeof added[0], compare_doubles);
    return added[n / 2];
}

/* Prints one case's paired figures over the workers of a configuration;
 * returns the median of the added ns, or 1e18 when there were none. */
static double print_paired(const struct results *res, enum bench_case c, const char *label)
{
    int n = res->pairs[c];
    if (n == 0)
        return 1e18;
    double direct[MAX_WORKERS] = {0}, wrapped[MAX_WORKERS] = {0}, added[MAX_WORKERS] = {0};
    double low_q1 = res->pair_q1[c][0], high_q3 = res->pair_q3[c][0];
    for (int i = 0; i < n; i++) {
        direct[i] = res->pair_direct[c][i];
        wrapped[i] = res->pair_wrapped[c][i];
        added[i] = res->pair_added[c][i];
        if (res->pair_q1[c][i] < low_q1)
            low_q1 = res->pair_q1[c][i];
        if (res->pair_q3[c][i] > high_q3)
            high_q3 = res->pair_q3[c][i];
    }
    qsort(direct, (size_t)n, sizeof direct[0], compare_doubles);
    qsort(wrapped, (size_t)n, sizeof wrapped[0], compare_doubles);
    qsort(added, (size_t)n, sizeof added[0], compare_doubles);
    printf("%-34s %9.1f ns %9.1f ns %8.1f ns [%.1f..%.1f] (q1..q3 %.1f..%.1f)\n", label,
           direct[n / 2], wrapped[n / 2], added[n / 2], added[0], added[n - 1], low_q1, high_q3);
    return added[n / 2];
}

/* The variants' figures beside the library's, and the clock's share. */
static void print_parts(const struct results *res, const struct results *plain)
{
    enum vigil_tick_source source = vigil_tick_source_detect();
    double clock_ns = clock_pair_ns(source);
    if (config_count == BASE_CONFIGS + (darshan_config >= 0)) {
        printf("note: VIGIL_PRELOAD_PARTS is not set: no variants of the library to show what "
               "each part of a call costs\n");
    } else {
        printf("what each part of a call's bookkeeping costs: the library built without it "
               "(bench/meson.build), run in the same rounds; ns added per call, separate "
               "processes (best) / same process (median)\n");
        printf("%-34s %15s %15s %15s\n", "", "write", "pread", "fwrite");
        int rows[1 + MAX_PARTS], n = 0;
        rows[n++] = RECORDED;
        for (int k = BASE_CONFIGS; k < config_count; k++)
            if (k != darshan_config)
                rows[n++] = k;
        for (int i = 0; i < n; i++) {
            char label[64];
            if (rows[i] == RECORDED)
                snprintf(label, sizeof label, "the library");
            else
                snprintf(label, sizeof label, "without %s", config_name(rows[i]));
            printf("%-34s", label);
            for (int c = 0; c < CASE_COUNT; c++)
                printf(" %6.1f / %6.1f", res[rows[i]].best_ns[c] - plain->best_ns[c],
                       paired_median(&res[rows[i]], (enum bench_case)c));
            printf("\n");
        }
    }
    printf("two reads of the wrappers' clock (%s), back to back in a loop: %.1f ns; what the "
           "30 ns goal leaves for the rest of a call: %.1f ns\n",
           source == VIGIL_TICKS_TSC ? "the TSC" : "CLOCK_MONOTONIC", clock_ns, 30.0 - clock_ns);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--worker") == 0)
        return worker(argc, argv);
    int rounds = 7;
    const char *darshan_prefix = "/opt/darshan-3.4.7";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--darshan") == 0 && i + 1 < argc) {
            darshan_prefix = argv[++i];
        } else {
            char *end;
            long n = strtol(argv[i], &end, 10);
            if (*end != '\0' || n < 1 || n > MAX_WORKERS) {
                fprintf(stderr,
                        "usage: bench-preload [ROUNDS (1..%d)] [--darshan PREFIX]: not '%s'\n",
                        MAX_WORKERS, argv[i]);
                return 2;
            }
            rounds = (int)n;
        }
    }
    find_paths();
    find_parts();
    find_darshan(darshan_prefix);
    make_data_file();

    struct results res[CONFIG_MAX];
    for (int k = 0; k < config_count; k++) {
        res[k] = (struct results){0};
        for (int c = 0; c < CASE_COUNT; c++) {
            res[k].best_ns[c] = res[k].shortest_ms[c] = 1e18;
            res[k].wrapped[c] = -1;
        }
    }
    /* Round r runs every configuration once, starting with a different one
     * each time. */
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < config_count; k++) {
            int config = (r + k) % config_count;
            run_worker(config, &res[config]);
        }
    double start_plain, start_vigil, exit_plain, exit_vigil;
    time_starts("VIGIL_REPORT=off", &start_plain, &start_vigil);
    time_starts("VIGIL_REPORT=/dev/null", &exit_plain, &exit_vigil);

    const struct results *plain = &res[PLAIN], *rec = &res[RECORDED], *exc = &res[EXCLUDED];
    printf("bench-preload: %s\n", library_path);
    printf("calls: best of %d workers x %s rounds of ~%.0f ms of the calling thread's CPU time "
           "each; starts: best batch of %d, "
           "%d starts each way\n",
           rounds, WORKER_ROUNDS, ROUND_TARGET_NS / 1e6, START_BATCH, START_COUNT);
    printf("%-34s %12s %15s %11s %7s\n", "", "without", "with vigil", "added", "ratio");
    static const char *const labels[CASE_COUNT] = {
        "write 1 B, /dev/null",
        "pread 4 KiB, cached file",
        "fwrite 16 B, stdio, /dev/null",
    };
    for (int c = 0; c < CASE_COUNT; c++)
        print_row(labels[c], plain->best_ns[c], rec->best_ns[c], "ns",
                  rec->wrapped[c] == 0 ? "  (not intercepted)" : "");
    print_row("write 1 B, /dev/null, excluded", plain->best_ns[CASE_WRITE],
              exc->best_ns[CASE_WRITE], "ns", "  (counted, no record)");
    if (darshan_config >= 0) {
        const struct results *dar = &res[darshan_config];
        printf("%-34s %12s %15s %11s %7s\n", "", "without", "with darshan", "added", "ratio");
        for (int c = 0; c < CASE_COUNT; c++)
            print_row(labels[c], plain->best_ns[c], dar->best_ns[c], "ns",
                      dar->wrapped[c] == 0 ? "  (not intercepted)" : "");
        printf("added ns, vigil / darshan (separate processes, best): write %.2f, pread %.2f, "
               "fwrite %.2f\n",
               (rec->best_ns[CASE_WRITE] - plain->best_ns[CASE_WRITE]) /
                   (dar->best_ns[CASE_WRITE] - plain->best_ns[CASE_WRITE]),
               (rec->best_ns[CASE_PREAD] - plain->best_ns[CASE_PREAD]) /
                   (dar->best_ns[CASE_PREAD] - plain->best_ns[CASE_PREAD]),
               (rec->best_ns[CASE_FWRITE] - plain->best_ns[CASE_FWRITE]) /
                   (dar->best_ns[CASE_FWRITE] - plain->best_ns[CASE_FWRITE]));
    }
    print_row("process start, /bin/true", start_plain, start_vigil, "ms", "");
    print_row("  the same, with its report at exit", exit_plain, exit_vigil, "ms", "");

    printf("same process, libc's function and the wrapper in alternating batches of ~%.0f ms of "
           "CPU, %d pairs per worker: median ns per call, added as median [min..max over workers] "
           "and the widest quartiles of the pairs' differences in any worker; the null rows "
           "pair libc with itself in the workers without vigil: what this machine's noise "
           "alone makes of it\n",
           PAIR_BATCH_NS / 1e6, PAIRS);
    double paired_added[CASE_COUNT], null_added[CASE_COUNT];
    for (int c = 0; c < CASE_COUNT; c++) {
        paired_added[c] = print_paired(rec, (enum bench_case)c, labels[c]);
        null_added[c] = print_paired(plain, (enum bench_case)c, "  the same, without vigil (null)");
        if (darshan_config >= 0)
            print_paired(&res[darshan_config], (enum bench_case)c, "  the same, Darshan instead");
    }
    printf("records: %llu drained by the worker's reader for %llu intercepted calls; "
           "%llu dropped by the library",
           (unsigned long long)rec->drained, (unsigned long long)rec->expected,
           (unsigned long long)rec->dropped);
    if (rec->problems != 0)
        printf("; %llu torn or corrupt", (unsigned long long)rec->problems);
    printf("\n");
    for (int c = 0; c < CASE_COUNT; c++)
        if (rec->dropped_in[c] != 0)
            printf("warning: %llu %s records of %llu (%.3f%%) were dropped, the reader being "
                   "late: a drop costs less than a record, so that row is flattered a little\n",
                   (unsigned long long)rec->dropped_in[c], case_names[c],
                   (unsigned long long)rec->calls[c],
                   100.0 * (double)rec->dropped_in[c] / (double)rec->calls[c]);
    if (rec->problems != 0)
        printf("warning: the reader skipped torn or corrupt positions\n");
    printf("note: every worker runs a second thread (the ring's reader, an idle one without "
           "vigil): glibc's calls cost more in a multi-threaded process, the same both ways\n");
    if (rec->wrapped[CASE_FWRITE] == 0)
        printf("note: the library has no fwrite wrapper yet: the fwrite row measures nothing "
               "of vigil's\n");
    for (int k = 0; k < config_count; k++)
        for (int c = 0; c < CASE_COUNT; c++)
            if (res[k].shortest_ms[c] < ROUND_MINIMUM_MS)
                printf("warning: a %s round of the %s worker took only %.1f ms (< %.0f ms)\n",
                       case_names[c], config_name(k), res[k].shortest_ms[c], ROUND_MINIMUM_MS);
    print_parts(res, plain);

    double added_write = rec->best_ns[CASE_WRITE] - plain->best_ns[CASE_WRITE];
    double added_pread = rec->best_ns[CASE_PREAD] - plain->best_ns[CASE_PREAD];
    printf("goal: <= 30 ns added per POSIX call with its record written, separate processes: %s "
           "(write: %.1f ns, "
           "pread: %.1f ns)\n",
           added_write <= 30.0 && added_pread <= 30.0 ? "met" : "NOT met", added_write,
           added_pread);
    printf("goal: <= 30 ns added per POSIX call with its record written, same process: %s "
           "(write: %.1f ns, pread: %.1f ns)\n",
           paired_added[CASE_WRITE] <= 30.0 && paired_added[CASE_PREAD] <= 30.0 ? "met" : "NOT met",
           paired_added[CASE_WRITE], paired_added[CASE_PREAD]);
    printf("noise: the null rows' medians, libc against itself: write %.1f ns, pread %.1f ns, "
           "fwrite %.1f ns\n",
           null_added[CASE_WRITE], null_added[CASE_PREAD], null_added[CASE_FWRITE]);
    printf("goal: <= 1 ms added per process start: %s (%.3f ms)\n",
           start_vigil - start_plain <= 1.0 ? "met" : "NOT met", start_vigil - start_plain);
    return 0;
}
