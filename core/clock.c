/* vigil — clocks. clock_gettime goes through the vDSO: no system call. */
#include <time.h>

#include "vigil/clock.h"

static uint64_t read_clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * VIGIL_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t vigil_clock_monotonic_ns(void)
{
    return read_clock_ns(CLOCK_MONOTONIC);
}

uint64_t vigil_clock_realtime_ns(void)
{
    return read_clock_ns(CLOCK_REALTIME);
}

void vigil_clock_offset_measure(struct vigil_clock_offset *out)
{
    /* A few tries are enough to dodge an interrupt or a preemption between
     * the reads; the narrowest bracket is the best estimate. */
    enum { TRIES = 5 };
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < TRIES; i++) {
        uint64_t before = vigil_clock_monotonic_ns();
        uint64_t real = vigil_clock_realtime_ns();
        uint64_t after = vigil_clock_monotonic_ns();
        uint64_t width = after - before;
        if (width < best_width) {
            best_width = width;
            uint64_t middle = before + width / 2;
            out->realtime_minus_monotonic_ns = (int64_t)(real - middle);
            out->uncertainty_ns = width / 2 + 1;
        }
    }
}

uint64_t vigil_clock_to_realtime_ns(const struct vigil_clock_offset *offset, uint64_t monotonic_ns)
{
    return monotonic_ns + (uint64_t)offset->realtime_minus_monotonic_ns;
}

uint64_t vigil_clock_to_monotonic_ns(const struct vigil_clock_offset *offset, uint64_t realtime_ns)
{
    return realtime_ns - (uint64_t)offset->realtime_minus_monotonic_ns;
}
