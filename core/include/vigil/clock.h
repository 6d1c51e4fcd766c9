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

#endif
