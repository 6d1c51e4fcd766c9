/* bench — reading the clocks the benchmarks time with: CLOCK_MONOTONIC for
 * wall time, CLOCK_THREAD_CPUTIME_ID and CLOCK_PROCESS_CPUTIME_ID for CPU. */
#ifndef VIGIL_BENCH_CLOCK_H
#define VIGIL_BENCH_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The clock's reading, in ns. */
static inline uint64_t bench_clock_ns(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The process's CPU time (user and system), in seconds. */
static inline double bench_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#endif
