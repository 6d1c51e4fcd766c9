/* bench-regions: the cost of a vigil_region_begin/end pair (vigil/vigil.h)
 * in a program run without vigil (the empty functions of
 * libvigil-region.so) and with it (libvigil-preload.so's, preloaded), side
 * by side in one run.
 *
 *   bench-regions [ROUNDS]
 *
 * The benchmark runs itself again (/proc/self/exe) as a worker, once per
 * configuration and round, the configurations alternating so that the
 * machine's noise falls on all of them alike:
 *
 *   noop     no LD_PRELOAD: the calls go to libvigil-region.so
 *   vigil    LD_PRELOAD, standalone: no vigild, so no energy to read
 *   energy   LD_PRELOAD, with an energy figure in the ring's header (the
 *            worker publishes one as vigild would), so that begin and end
 *            also read and extrapolate it
 *
 * Each worker times pairs of one region, and pairs of a region nested in
 * another (an inner pair while an outer region is open: the same work,
 * one level down). It also times an empty loop, which is subtracted. Each
 * figure is the best of its rounds (default 7). The library is found with
 * VIGIL_PRELOAD_LIB (meson sets it), or else next to the benchmark in the
 * build tree (../instrument/libvigil-preload.so). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vigil/ring.h"
#include "vigil/vigil.h"

extern char **environ;

#define PAIRS        200000
#define WORKER_TIMES 3 /* timed loops in one worker; its best is kept */

enum config { NOOP, VIGIL, ENERGY, CONFIG_COUNT };
static const char *const config_names[CONFIG_COUNT] = {"noop", "vigil", "energy"};

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- the worker -------------------------------------------------------------------------- */

static volatile unsigned sink;

static double time_empty(void)
{
    double start = now_ns();
    for (unsigned i = 0; i < PAIRS; i++)
        sink = i;
    return (now_ns() - start) / PAIRS;
}

static double time_pairs(void)
{
    double start = now_ns();
    for (unsigned i = 0; i < PAIRS; i++) {
        vigil_region_begin("bench");
        sink = i;
        vigil_region_end("bench");
    }
    return (now_ns() - start) / PAIRS;
}

/* What the pair is made of, for the reader: the thread's CPU clock (a
 * system call: no vDSO serves it), read twice a pair, and a plain system
 * call, for how dear system calls are on this machine. */
static double time_thread_clock(void)
{
    struct timespec ts;
    double start = now_ns();
    for (unsigned i = 0; i < PAIRS / 10; i++)
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (now_ns() - start) / (PAIRS / 10);
}

static double time_syscall(void)
{
    double start = now_ns();
    for (unsigned i = 0; i < PAIRS / 10; i++)
        sink = (unsigned)getppid();
    return (now_ns() - start) / (PAIRS / 10);
}

static double time_nested_pairs(void)
{
    vigil_region_begin("outer");
    double ns = time_pairs();
    vigil_region_end("outer");
    return ns;
}

/* As vigild does every tick: the process's energy into its ring. */
static bool publish_energy(void)
{
    int (*ring_fd)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "vigil_preload_ring_fd");
    if (ring_fd == NULL || ring_fd() < 0)
        return false;
    struct vigil_error err;
    struct vigil_ring *ring = vigil_ring_attach(ring_fd(), &err);
    if (ring == NULL)
        return false;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    vigil_ring_publish_energy(ring, 1.0, t_ns - 100000000, 0);
    vigil_ring_publish_energy(ring, 5.0, t_ns, 0); /* 40 W */
    vigil_ring_close(ring);
    return true;
}

static int worker(bool energy)
{
    if (energy && !publish_energy()) {
        fprintf(stderr, "bench-regions: no ring to publish energy into\n");
        return 1;
    }
    double empty = 1e18, flat = 1e18, nested = 1e18, clock = 1e18, syscall = 1e18;
    for (int i = 0; i < WORKER_TIMES; i++) {
        double e = time_empty(), f = time_pairs(), n = time_nested_pairs();
        double c = time_thread_clock(), s = time_syscall();
        empty = e < empty ? e : empty;
        flat = f < flat ? f : flat;
        nested = n < nested ? n : nested;
        clock = c < clock ? c : clock;
        syscall = s < syscall ? s : syscall;
    }
    Dl_info info;
    void *fn = dlsym(RTLD_DEFAULT, "vigil_region_begin");
    const char *from = fn != NULL && dladdr(fn, &info) != 0 ? info.dli_fname : "?";
    printf("%.3f %.3f %.3f %.3f %.3f %s\n", empty, flat - empty, nested - empty, clock, syscall,
           from);
    return 0;
}

/* ---- the parent -------------------------------------------------------------------------- */

struct figures {
    double flat, nested, clock, syscall;
};

static void run_worker(const char *self, const char *library, enum config config, struct figures *f,
                       char *from, size_t from_size)
{
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) {
        perror("pipe");
        exit(1);
    }
    char preload[PATH_MAX + 128];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", library);
    char *env[] = {config == NOOP ? "VIGIL_BENCH_NOOP=1" : preload, "VIGIL_SOCKET=off",
                   "VIGIL_REPORT=off", NULL};
    char *argv[] = {(char *)self, "--worker", config == ENERGY ? "energy" : "plain", NULL};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    pid_t pid;
    if (posix_spawn(&pid, self, &actions, NULL, argv, env) != 0) {
        perror("posix_spawn");
        exit(1);
    }
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_fds[1]);
    FILE *out = fdopen(pipe_fds[0], "r");
    double empty;
    char path[PATH_MAX] = "";
    if (out == NULL || fscanf(out, "%lf %lf %lf %lf %lf %4095s", &empty, &f->flat, &f->nested,
                              &f->clock, &f->syscall, path) != 6) {
        fprintf(stderr, "bench-regions: the %s worker said nothing\n", config_names[config]);
        exit(1);
    }
    fclose(out);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench-regions: the %s worker failed\n", config_names[config]);
        exit(1);
    }
    snprintf(from, from_size, "%s", path);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--worker") == 0)
        return worker(strcmp(argv[2], "energy") == 0);
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0 || rounds < 1) {
        fprintf(stderr, "usage: bench-regions [ROUNDS]\n");
        return 2;
    }
    self[n] = '\0';
    /* VIGIL_PRELOAD_LIB, else the library in the build tree beside us. */
    char beside[PATH_MAX + 64];
    const char *library = getenv("VIGIL_PRELOAD_LIB");
    if (library == NULL) {
        snprintf(beside, sizeof beside, "%s", self);
        char *slash = strrchr(beside, '/');
        snprintf(slash != NULL ? slash : beside, sizeof beside - (size_t)(slash - beside),
                 "/../instrument/libvigil-preload.so");
        library = beside;
    }

    struct figures best[CONFIG_COUNT];
    char from[CONFIG_COUNT][PATH_MAX];
    for (int c = 0; c < CONFIG_COUNT; c++)
        best[c] = (struct figures){1e18, 1e18, 1e18, 1e18};
    for (int r = 0; r < rounds; r++) {
        for (int c = 0; c < CONFIG_COUNT; c++) {
            struct figures f;
            run_worker(self, library, (enum config)c, &f, from[c], sizeof from[c]);
            best[c].flat = f.flat < best[c].flat ? f.flat : best[c].flat;
            best[c].nested = f.nested < best[c].nested ? f.nested : best[c].nested;
            best[c].clock = f.clock < best[c].clock ? f.clock : best[c].clock;
            best[c].syscall = f.syscall < best[c].syscall ? f.syscall : best[c].syscall;
        }
    }
    printf("bench-regions: a vigil_region_begin/end pair, ns (best of %d rounds of %d pairs; an "
           "empty loop subtracted)\n\n",
           rounds, PAIRS);
    printf("%-8s %12s %12s %10s  %s\n", "config", "pair_ns", "nested_ns", "x noop",
           "functions from");
    for (int c = 0; c < CONFIG_COUNT; c++)
        printf("%-8s %12.1f %12.1f %10.1f  %s\n", config_names[c], best[c].flat, best[c].nested,
               best[NOOP].flat > 0 ? best[c].flat / best[NOOP].flat : 0.0, from[c]);
    printf("\nof which, on this machine: the thread's CPU clock (read at begin and at end) "
           "%.1f ns a read; a plain system call (getppid) %.1f ns\n",
           best[NOOP].clock, best[NOOP].syscall);
    return 0;
}
