/* A program whose regions span vigild's ticks, for test_region_energy.c.
 *
 * "whole" begins at once (before vigild has published any energy for the
 * process); then the program computes, watching its own ring's header, until
 * vigild has published a figure, begins "measured", computes until the next
 * figure is published, and ends both. So "measured" lies wholly after the
 * first figure and holds a tick of computing. Waiting is on what vigild
 * publishes, never on a clock; only a vigild that never publishes makes it
 * give up (after WAIT_LIMIT_S) and exit 1, so that the test fails rather
 * than hangs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

#include "vigil/ring.h"
#include "vigil/vigil.h"

#define WAIT_LIMIT_S 60

static volatile double sink;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Computes until the published figure is newer than `after_ns`; its time. */
static uint64_t compute_until_published(struct vigil_ring *ring, uint64_t after_ns)
{
    double give_up = now_s() + WAIT_LIMIT_S;
    for (;;) {
        for (int i = 0; i < 100000; i++)
            sink = sink + 1.0 / (i + 1);
        struct vigil_ring_energy e;
        if (vigil_ring_read_energy(ring, &e) && e.t_ns > after_ns)
            return e.t_ns;
        if (now_s() > give_up)
            return 0;
    }
}

int main(void)
{
    vigil_region_begin("whole");
    int (*ring_fd)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "vigil_preload_ring_fd");
    struct vigil_error err;
    struct vigil_ring *ring =
        ring_fd != NULL && ring_fd() >= 0 ? vigil_ring_attach(ring_fd(), &err) : NULL;
    if (ring == NULL) {
        fprintf(stderr, "regions-energy: not under vigil, or no ring\n");
        return 1;
    }
    uint64_t first = compute_until_published(ring, 0);
    if (first == 0) {
        fprintf(stderr, "regions-energy: vigild published no energy in %d s\n", WAIT_LIMIT_S);
        return 1;
    }
    vigil_region_begin("measured");
    uint64_t next = compute_until_published(ring, first);
    vigil_region_end("measured");
    vigil_region_end("whole");
    vigil_ring_close(ring);
    if (next == 0) {
        fprintf(stderr, "regions-energy: vigild stopped publishing\n");
        return 1;
    }
    printf("regions-energy: figures at %llu and %llu ns\n", (unsigned long long)first,
           (unsigned long long)next);
    return 0;
}
