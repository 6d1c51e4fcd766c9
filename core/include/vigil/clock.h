/* vigil — clocks.
 *
 * Every timestamp in vigil is CLOCK_MONOTONIC nanoseconds: it never jumps,
 * and every process on a node shares it, so the daemon can line up
 * activities from many processes with its own statistics. Wall-clock time is
 * derived at the edges (reports, warehouse) through a per-process offset. */
#ifndef VIGIL_CLOCK_H
#define VIGIL_CLOCK_H

#include <stdint.h>

#define VIGIL_NS_PER_S  1000000000ull
#define VIGIL_NS_PER_MS 1000000ull

uint64_t vigil_clock_monotonic_ns(void);
uint64_t vigil_clock_realtime_ns(void);

/* realtime = monotonic + realtime_minus_monotonic_ns, good to within
 * uncertainty_ns (half the width of the tightest bracketing read). */
struct vigil_clock_offset {
    int64_t realtime_minus_monotonic_ns;
    uint64_t uncertainty_ns;
};

/* Takes the best of a few bracketing reads: a monotonic read, a realtime
 * read, a monotonic read; the narrowest bracket wins. */
void vigil_clock_offset_measure(struct vigil_clock_offset *out);

uint64_t vigil_clock_to_realtime_ns(const struct vigil_clock_offset *offset, uint64_t monotonic_ns);
uint64_t vigil_clock_to_monotonic_ns(const struct vigil_clock_offset *offset, uint64_t realtime_ns);

/* ---- ticks: the hot path's clock -----------------------------------------
 * An intercepted call takes two timestamps. Through the vDSO,
 * clock_gettime costs about 20 ns on the machines we measured, the TSC
 * about 9, and the interposer's whole budget is 50 ns. So the hot path
 * reads ticks: the CPU's time-stamp counter where the kernel itself uses it
 * as its clocksource (it then checked that it is invariant and in step
 * across CPUs), else CLOCK_MONOTONIC ns. Ticks become ns off the hot path,
 * through a vigil_tick_clock made from two (tick, ns) anchors. */

enum vigil_tick_source {
    VIGIL_TICKS_MONOTONIC_NS = 1, /* ticks are CLOCK_MONOTONIC ns */
    VIGIL_TICKS_TSC = 2,          /* ticks are TSC counts */
};

/* TSC when it can be trusted here, else monotonic ns: on x86-64, when the
 * kernel's clocksource is "tsc", or when the CPU's flags (/proc/cpuinfo)
 * say the counter is invariant (constant_tsc, nonstop_tsc) and the
 * platform declares it reliable across CPUs (tsc_reliable), as virtual
 * machines whose kernel runs on kvm-clock do. Reads sysfs and procfs:
 * call it at set-up, not per call. */
enum vigil_tick_source vigil_tick_source_detect(void);
/* The decision itself, from the clocksource's name and a CPU's flags line
 * (either may be NULL). */
enum vigil_tick_source vigil_tick_source_choose(const char *clocksource, const char *cpu_flags);

static inline uint64_t vigil_ticks(enum vigil_tick_source source)
{
#if defined(__x86_64__)
    if (source == VIGIL_TICKS_TSC)
        return __builtin_ia32_rdtsc();
#endif
    (void)source;
    return vigil_clock_monotonic_ns();
}

/* A (ticks, ns) pair read as close together as possible. */
struct vigil_tick_anchor {
    uint64_t ticks;
    uint64_t ns;
};

void vigil_tick_anchor_now(enum vigil_tick_source source, struct vigil_tick_anchor *out);

/* A linear map from ticks to CLOCK_MONOTONIC ns through two anchors; the
 * further apart they are, the better the rate. */
struct vigil_tick_clock {
    enum vigil_tick_source source;
    struct vigil_tick_anchor base;
    double ns_per_tick;
};

/* From two anchors of the same source; `later` must be after `earlier`
 * (for monotonic ns the rate is exactly 1 whatever the anchors). */
void vigil_tick_clock_init(struct vigil_tick_clock *clock, enum vigil_tick_source source,
                           const struct vigil_tick_anchor *earlier,
                           const struct vigil_tick_anchor *later);
uint64_t vigil_tick_clock_ns(const struct vigil_tick_clock *clock, uint64_t ticks);
/* A duration: a difference of ticks, or a sum of such differences. */
double vigil_tick_clock_duration_ns(const struct vigil_tick_clock *clock, uint64_t ticks);

#endif
