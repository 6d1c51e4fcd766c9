/* vigil — clocks. clock_gettime goes through the vDSO: no system call. */
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* Whether `word` is one of the space-separated words of `list`. */
static bool has_word(const char *list, const char *word)
{
    size_t length = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += length) {
        bool starts = p == list || *(p - 1) == ' ' || *(p - 1) == '\t';
        char after = p[length];
        if (starts && (after == '\0' || after == ' ' || after == '\n' || after == '\t'))
            return true;
    }
    return false;
}

enum vigil_tick_source vigil_tick_source_choose(const char *clocksource, const char *cpu_flags)
{
#if defined(__x86_64__)
    /* The kernel only settles on "tsc" once it has found the counter
     * invariant and synchronised across CPUs; we take its word. */
    if (clocksource != NULL && strcmp(clocksource, "tsc") == 0)
        return VIGIL_TICKS_TSC;
    /* In a virtual machine the kernel prefers its paravirtual clock
     * (kvm-clock, itself computed from the TSC), and a platform may even
     * boot it with tsc=unstable; but when the CPU says the counter is
     * invariant (constant_tsc, nonstop_tsc) and the platform declares it
     * reliable (tsc_reliable: synchronised across CPUs, so the kernel skips
     * its own checks), the TSC is as good a clock for us. */
    if (cpu_flags != NULL && has_word(cpu_flags, "constant_tsc") &&
        has_word(cpu_flags, "nonstop_tsc") && has_word(cpu_flags, "tsc_reliable"))
        return VIGIL_TICKS_TSC;
#else
    (void)clocksource;
    (void)cpu_flags;
#endif
    return VIGIL_TICKS_MONOTONIC_NS;
}

/* Reads up to size - 1 bytes of a small file; "" when it cannot. */
static void read_small_file(const char *path, char *out, size_t size)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    size_t done = 0;
    while (done < size - 1) {
        ssize_t n = read(fd, out + done, size - 1 - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    close(fd);
    out[done] = '\0';
}

enum vigil_tick_source vigil_tick_source_detect(void)
{
#if defined(__x86_64__)
    char clocksource[32];
    read_small_file("/sys/devices/system/clocksource/clocksource0/current_clocksource", clocksource,
                    sizeof clocksource);
    clocksource[strcspn(clocksource, "\n")] = '\0';
    if (strcmp(clocksource, "tsc") == 0)
        return VIGIL_TICKS_TSC;
    /* The first CPU's flags line: every CPU of a machine has the same. */
    char cpuinfo[8192];
    read_small_file("/proc/cpuinfo", cpuinfo, sizeof cpuinfo);
    char *flags = strstr(cpuinfo, "\nflags");
    if (flags == NULL)
        return VIGIL_TICKS_MONOTONIC_NS;
    char *end = strchr(flags + 1, '\n');
    if (end == NULL)
        return VIGIL_TICKS_MONOTONIC_NS; /* cut short: not the whole line */
    *end = '\0';
    return vigil_tick_source_choose(clocksource, flags);
#else
    return VIGIL_TICKS_MONOTONIC_NS;
#endif
}

void vigil_tick_anchor_now(enum vigil_tick_source source, struct vigil_tick_anchor *out)
{
    /* Bracket one clock read between two tick reads and keep the
     * narrowest of a few tries: an interrupt in between shows as width. */
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t before = vigil_ticks(source);
        uint64_t ns = vigil_clock_monotonic_ns();
        uint64_t after = vigil_ticks(source);
        if (after - before < best_width) {
            best_width = after - before;
            out->ticks = before + (after - before) / 2;
            out->ns = ns;
        }
    }
    if (source == VIGIL_TICKS_MONOTONIC_NS)
        out->ticks = out->ns;
}

void vigil_tick_clock_init(struct vigil_tick_clock *clock, enum vigil_tick_source source,
                           const struct vigil_tick_anchor *earlier,
                           const struct vigil_tick_anchor *later)
{
    clock->source = source;
    clock->base = *later;
    clock->ns_per_tick = 1.0;
    if (source == VIGIL_TICKS_TSC && later->ticks > earlier->ticks && later->ns > earlier->ns)
        clock->ns_per_tick =
            (double)(later->ns - earlier->ns) / (double)(later->ticks - earlier->ticks);
}

uint64_t vigil_tick_clock_ns(const struct vigil_tick_clock *clock, uint64_t ticks)
{
    if (clock->source != VIGIL_TICKS_TSC)
        return ticks;
    double delta = (double)(int64_t)(ticks - clock->base.ticks) * clock->ns_per_tick;
    /* A ring's ticks come from its producer and may be anywhere: beyond
     * int64's range the cast would be undefined. 2^63 - 1024 is the
     * largest double below 2^63. */
    const double int64_end = 9223372036854775808.0; /* 2^63 */
    if (!(delta < int64_end))
        delta = 9223372036854774784.0;
    else if (delta < -int64_end)
        delta = -int64_end;
    return clock->base.ns + (uint64_t)(int64_t)delta;
}

double vigil_tick_clock_duration_ns(const struct vigil_tick_clock *clock, uint64_t ticks)
{
    return (double)ticks * (clock->source == VIGIL_TICKS_TSC ? clock->ns_per_tick : 1.0);
}
