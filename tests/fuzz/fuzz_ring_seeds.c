/* fuzz-ring-seeds DIR: writes rings a real producer filled to
 * DIR/seed-*.bin, in fuzz-ring's input form (a flags byte, a max-records
 * byte, the ring's image, then the producer's writes during the drain).
 * Starting from real rings puts the fuzzer among valid slot marks, names
 * spanning slots and laps past the first at once. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>

#include "../../record/ring_layout.h"
#include "vigil/ontology.h"
#include "vigil/ring.h"
#include "fuzz_seeds.h"

#define SLOTS      64u
#define RING_BYTES (RING_HEADER_BYTES + SLOTS * VIGIL_RING_SLOT_BYTES)

static void push_activities(struct vigil_ring *ring, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        const struct vigil_activity a = {
            .record_type = VIGIL_RECORD_ACTIVITY,
            .layer = VIGIL_LAYER_POSIX,
            .op = i % 2 ? VIGIL_OP_POSIX_PWRITE : VIGIL_OP_POSIX_READ,
            .file_id = 3,
            .start_ns = 1000 + 10 * (uint64_t)i,
            .end_ns = 1005 + 10 * (uint64_t)i,
            .offset_bytes = 4096 * (int64_t)i,
            .bytes_asked = 4096,
            .result = 4096,
            .thread_id = 4242,
        };
        vigil_ring_push(ring, &a);
    }
}

static void push_names(struct vigil_ring *ring)
{
    static char long_path[1000];
    memset(long_path, 'a', sizeof long_path);
    long_path[0] = '/';
    vigil_ring_push_name(ring, 3, "/scratch/out.dat", 16);
    vigil_ring_push_name(ring, 4, long_path, sizeof long_path); /* 13 slots */
}

static void ignore_record(const struct vigil_ring_record *record, void *user)
{
    (void)record;
    (void)user;
}

/* Drains `records` records as vigild would, so that the seed starts past
 * lap 0. */
static void consume(struct vigil_ring *ring, size_t records)
{
    struct vigil_error err = {{0}};
    struct vigil_ring *reader = vigil_ring_attach(vigil_ring_fd(ring), &err);
    if (reader == NULL)
        g_error("attaching the seed's ring: %s", err.message);
    struct vigil_ring_drain_report report;
    vigil_ring_drain(reader, records, 0, NULL, ignore_record, NULL, &report);
    vigil_ring_close(reader);
}

static void write_seed(const char *dir, const char *name, struct vigil_ring *ring,
                       unsigned char flags, unsigned char max_records, const void *writes,
                       size_t writes_bytes)
{
    static unsigned char input[2 + RING_BYTES + 64];
    input[0] = flags;
    input[1] = max_records;
    if (pread(vigil_ring_fd(ring), input + 2, RING_BYTES, 0) != (ssize_t)RING_BYTES)
        g_error("reading the seed's ring back");
    if (writes_bytes > 0)
        memcpy(input + 2 + RING_BYTES, writes, writes_bytes);
    char *file = g_strconcat(name, ".bin", NULL);
    write_seed_file(dir, file, input, 2 + RING_BYTES + writes_bytes);
    g_free(file);
}

static struct vigil_ring *new_ring(void)
{
    struct vigil_error err = {{0}};
    struct vigil_ring *ring = vigil_ring_create(SLOTS, VIGIL_TICKS_MONOTONIC_NS, &err);
    if (ring == NULL)
        g_error("%s", err.message);
    return ring;
}

int main(int argc, char **argv)
{
    const char *dir = seeds_dir(argc, argv);
    /* Two drains of everything, times left in ticks. */
    const unsigned char two_drains = 1u << 4;

    struct vigil_ring *ring = new_ring();
    write_seed(dir, "empty", ring, 0, 0, NULL, 0);
    push_activities(ring, 10);
    push_names(ring);
    push_activities(ring, 5);
    write_seed(dir, "activities-and-names", ring, two_drains, 0, NULL, 0);
    /* The same drained a few records at a time, the times through a
     * clock, while the producer rewrites the head and a slot's mark. */
    const unsigned char writes[] = {
        /* head = 40 */
        64,
        0,
        40,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
        /* slot 2's mark: free for lap 1 */
        (RING_HEADER_BYTES + 2 * VIGIL_RING_SLOT_BYTES) & 0xff,
        (RING_HEADER_BYTES + 2 * VIGIL_RING_SLOT_BYTES) >> 8,
        SLOTS,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    };
    write_seed(dir, "rewritten-while-drained", ring, (3u << 4) | 64u, 4, writes, sizeof writes);
    vigil_ring_close(ring);

    /* Past the first lap, and full: the producer dropped some. */
    ring = new_ring();
    push_activities(ring, 50);
    consume(ring, 40);
    push_activities(ring, 60);
    push_names(ring);
    write_seed(dir, "second-lap-full", ring, two_drains, 0, NULL, 0);
    vigil_ring_close(ring);

    /* Regression: ticks 2^63 from the clock's base (fuzz-ring's clock:
     * tick 2^40, 1 ns a tick) overflowed vigil_tick_clock_ns's cast. */
    struct vigil_error err = {{0}};
    ring = vigil_ring_create(SLOTS, VIGIL_TICKS_TSC, &err);
    if (ring == NULL)
        g_error("%s", err.message);
    const struct vigil_activity far = {
        .record_type = VIGIL_RECORD_ACTIVITY,
        .layer = VIGIL_LAYER_POSIX,
        .op = VIGIL_OP_POSIX_READ,
        .start_ns = (1ull << 40) + (1ull << 63) - 100,
        .end_ns = (1ull << 40) + (1ull << 63) - 50,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    vigil_ring_push(ring, &far);
    push_activities(ring, 1);
    write_seed(dir, "ticks-far-from-the-clock", ring, 64u | 1u, 0, NULL, 0);
    vigil_ring_close(ring);

    /* A claimed slot never written, by a producer that is gone. */
    ring = new_ring();
    push_activities(ring, 3);
    static unsigned char image[RING_BYTES];
    if (pread(vigil_ring_fd(ring), image, RING_BYTES, 0) != (ssize_t)RING_BYTES)
        g_error("reading the ring back");
    uint64_t head = 5;
    struct vigil_ring *claimed = new_ring();
    if (pwrite(vigil_ring_fd(claimed), image, RING_BYTES, 0) != (ssize_t)RING_BYTES ||
        pwrite(vigil_ring_fd(claimed), &head, sizeof head, offsetof(struct ring_header, head)) !=
            (ssize_t)sizeof head)
        g_error("writing the claimed ring");
    write_seed(dir, "claimed-producer-gone", claimed, 8u, 0, NULL, 0);
    vigil_ring_close(claimed);
    vigil_ring_close(ring);
    return 0;
}
