/* vigil — the preload library's life: set-up before main (the run key,
 * registration with vigild), a fresh start in every forked child, and the
 * report at exit.
 *
 * If anything needed at set-up is missing (no memory for the ring, say),
 * the library stays inactive and every call goes straight through: it never
 * makes the program fail. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "regions.h"
#include "exit_report.h"

struct preload_state preload;
PRELOAD_TLS struct preload_thread preload_thread;
#if defined(__x86_64__) && defined(__SEG_FS)
intptr_t preload_thread_offset;
#endif

/* Reads VIGIL_RING_SLOTS: a power of two within the ring's limits. */
static uint32_t ring_slots_wanted(void)
{
    const char *text = getenv("VIGIL_RING_SLOTS");
    if (text == NULL || text[0] == '\0')
        return VIGIL_RING_DEFAULT_SLOTS;
    char *end;
    unsigned long value = strtoul(text, &end, 10);
    if (*end != '\0' || value < VIGIL_RING_MIN_SLOTS || value > VIGIL_RING_MAX_SLOTS ||
        (value & (value - 1)) != 0) {
        dprintf(2, "vigil: VIGIL_RING_SLOTS=%s is not a power of two from %u to %u; using %u\n",
                text, VIGIL_RING_MIN_SLOTS, VIGIL_RING_MAX_SLOTS, VIGIL_RING_DEFAULT_SLOTS);
        return VIGIL_RING_DEFAULT_SLOTS;
    }
    return (uint32_t)value;
}

/* Near the top of the soft descriptor limit: programs count up from 3. */
static int private_fd_floor(void)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return 1000;
    if (limit.rlim_cur >= 1088)
        return limit.rlim_cur > 1064 + 1000 ? 1000 : (int)limit.rlim_cur - 64;
    return limit.rlim_cur > 16 ? (int)limit.rlim_cur / 2 : 3;
}

static bool start_ring(struct vigil_error *err)
{
    struct vigil_ring *ring = vigil_ring_create(ring_slots_wanted(), preload.tick_source, err);
    if (ring == NULL)
        return false;
    vigil_ring_move_fd(ring, preload.private_fd_floor); /* where it was is fine too */
    preload.ring = ring;
    vigil_ring_producer_view(ring, &preload.ring_producer);
    atomic_fetch_add_explicit(&preload.ring_generation, 1, memory_order_relaxed);
    return true;
}

static void start_clock(void)
{
    preload.pid = getpid();
    vigil_tick_anchor_now(preload.tick_source, &preload.start);
    preload.start_realtime_ns = vigil_clock_realtime_ns();
}

/* The run this process belongs to: from the environment, else a fresh
 * one exported as VIGIL_RUN_ID, so that children and exec'd programs join
 * it. setenv is safe here: a constructor runs in normal context before
 * main, so the heap is free to use and, unless another library's
 * constructor started one, no other thread exists yet to read environ
 * while it changes. main's envp is taken from environ after this, so a
 * program that passes envp on to exec passes the key too. */
static void find_run_key(void)
{
    struct vigil_error problem;
    enum vigil_run_key_origin origin = vigil_run_key_from_environment(preload.run_key, &problem);
    if (problem.message[0] != '\0')
        dprintf(2, "vigil: %s: ignored\n", problem.message);
    if (origin != VIGIL_RUN_KEY_NONE)
        return;
    char host[256];
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    vigil_run_key_fresh(preload.run_key, host, (int)preload.pid, preload.start_realtime_ns);
    setenv("VIGIL_RUN_ID", preload.run_key, 1);
}

static void after_fork_in_child(void)
{
    if (!atomic_load(&preload.active))
        return;
    preload_thread.in_call = 1;
    /* The run stays the parent's; the exit status and the report are the
     * child's own. */
    atomic_store(&preload.exit_code, -1);
    preload_report_reset_after_fork();
    /* The parent's ring stays the parent's: the child gets its own ring,
     * counts and report. */
    vigil_ring_producer_view(NULL, &preload.ring_producer);
    vigil_ring_close(preload.ring);
    preload.ring = NULL;
    preload_counters_reset_after_fork();
    preload_files_reset_after_fork();
    preload_names_reset_after_fork();
    preload_regions_reset_after_fork();
    preload_aio_reset_after_fork();
    start_clock();
    struct vigil_error err;
    bool ring_ok = start_ring(&err);
    preload_link_after_fork(ring_ok); /* a process of its own for vigild too */
    if (!ring_ok) {
        atomic_store(&preload.active, 0);
        dprintf(2, "vigil: disabled in child %d: %s\n", (int)getpid(), err.message);
    }
    preload_thread.in_call = 0;
}

/* glibc passes argc, argv and envp to constructors of preloaded libraries. */
__attribute__((constructor)) static void preload_init(int argc, char **argv, char **envp)
{
    (void)envp;
#if defined(__x86_64__) && defined(__SEG_FS)
    preload_thread_offset =
        (intptr_t)((char *)&preload_thread - (char *)__builtin_thread_pointer());
#endif
    preload_thread.in_call = 1; /* our own set-up goes straight through */
    preload_real_resolve_all();
    preload.argc = argc;
    preload.mpi_rank = -1;
    preload.argv = argv;
    atomic_store(&preload.exit_code, -1);
    preload.tick_source = vigil_tick_source_detect();
    const char *ticks = getenv("VIGIL_TICKS");
    if (ticks != NULL && strcmp(ticks, "monotonic") == 0)
        preload.tick_source = VIGIL_TICKS_MONOTONIC_NS;
    start_clock();
    find_run_key();
    preload.private_fd_floor = private_fd_floor();
    /* Programs close stderr at exit (coreutils do, in an atexit handler)
     * before our report is written: keep a copy to fall back on. */
    preload.saved_stderr = fcntl(2, F_DUPFD_CLOEXEC, preload.private_fd_floor);

    struct vigil_error err = {{0}};
    if (!preload_counters_init() || !preload_files_init()) {
        vigil_error_set(&err, "no memory for its tables");
    } else if (start_ring(&err)) {
        pthread_atfork(NULL, NULL, after_fork_in_child);
        preload_report_init();
        preload_regions_init();
        preload_link_start();
        atomic_store(&preload.active, 1);
    }
    if (!atomic_load(&preload.active))
        dprintf(2, "vigil: disabled, the program runs uninstrumented: %s\n", err.message);
    preload_thread.in_call = 0;
}

/* The report, once, from whichever way out comes first: printed (unless
 * it was the job's, at MPI_Finalize) and, in JSON, sent to vigild with the
 * exit status. */
static void finish(void)
{
    /* A vfork child (or a clone without the atfork handlers) shares or
     * copies our memory but is another process: the figures are not its
     * own, and switching them off would take the parent's report away. */
    if (getpid() != preload.pid)
        return;
    if (!atomic_exchange(&preload.active, 0))
        return; /* never started, or already reported */
    /* Anything after this (other libraries' destructors) is not ours, and
     * the report's own writes are not counted. */
    preload_thread.in_call = 1;
    /* An MPI job's report was written at MPI_Finalize: each rank's own is
     * printed only when asked for, but vigild gets it all the same (rank 0
     * sends the job's, kept then). VIGIL_REPORT=off prints nothing; the
     * warehouse still gets the figures through vigild. */
    bool print_own =
        (!preload.joint_reported || preload_report_per_rank()) && !preload_report_off();
    if (print_own || preload_link_connected()) {
        /* Recording has stopped: vigild's summary covers every record the
         * report counts. */
        preload_link_summary();
        static struct preload_report own; /* not on the stack of whatever thread exits */
        preload_report_gather(&own);
        if (print_own)
            preload_report_emit(&own.r);
        if (preload_link_connected())
            preload_report_keep_json(&own.r); /* unless the job's report is kept */
    }
    uint64_t json_bytes;
    int json_fd = preload_report_kept_json(&json_bytes);
    preload_link_report(atomic_load(&preload.exit_code), json_fd, json_bytes);
    preload_link_leave();
}

__attribute__((destructor)) static void preload_fini(void)
{
    finish();
}

PRELOAD_REAL_SLOT(_exit);
PRELOAD_REAL_SLOT(_Exit);

/* _exit skips destructors, and some programs always leave through it
 * (dash, Debian's /bin/sh, does). */
void _exit(int status)
{
    preload_exit_status_note(status);
    finish();
    REAL(_exit)(status);
    __builtin_unreachable();
}

void _Exit(int status)
{
    preload_exit_status_note(status);
    finish();
    REAL(_Exit)(status);
    __builtin_unreachable();
}

/* For tests and benchmarks that read their own ring: the fd of this
 * process's ring, or -1 when vigil is not active here. */
PRELOAD_EXPORT int vigil_preload_ring_fd(void);
int vigil_preload_ring_fd(void)
{
    return atomic_load(&preload.active) ? vigil_ring_fd(preload.ring) : -1;
}

/* Aligns the vigil_hot section (preload.h's PRELOAD_HOT) to a page. Defined
 * last: GCC emits a file's variables last to first, so this one opens the
 * section and nothing before it pads it onto a second page (the section's
 * size in `size -A` shows it: below 4096). */
static char preload_hot_page[1] __attribute__((section("vigil_hot"), aligned(4096), used));
