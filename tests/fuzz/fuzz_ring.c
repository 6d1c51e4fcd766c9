/* libFuzzer target for the ring's consumer (record/ring.c): a ring whose
 * every byte a hostile process wrote, drained through the public API.
 *
 * Input: a flags byte, a max-records byte, then the ring's image (header
 * and 64 slots, RING_BYTES; zeros where the input stops), then 10-byte
 * writes (offset, 8 bytes) that the "producer" makes into the shared
 * memory while the consumer works: one before each drain and one each
 * time a record is handed out. Flags: bits 0-2 all set keep the header as
 * the input has it (otherwise magic, version and sizes are made valid, so
 * that most inputs get past attach); bit 3 the producer is gone; bits 4-5
 * one to four drains; bit 6 a TSC clock converts the times.
 *
 * The consumer's mapping is made here (the harness links ring.c itself and
 * wraps its mmap): right after the ring's last byte ASan poisons the rest
 * of the page, and a PROT_NONE page follows, so any read outside the ring
 * is caught. Promises checked: attach takes every well-formed header; every
 * record handed out passes vigil_activity_check or vigil_name_check; seqs
 * only go forward and records do not overlap; the report's counts add up
 * to the positions consumed, and the published position moves by exactly
 * that; the energy in the header is read as a figure only when it is one,
 * and a figure published is read back. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sanitizer/asan_interface.h>

#include "../../record/ring_layout.h"
#include "vigil/ring.h"
#include "fuzz_must.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SLOTS       64u
#define RING_BYTES  (RING_HEADER_BYTES + SLOTS * VIGIL_RING_SLOT_BYTES)
#define WRITE_BYTES 10u

/* ---- the consumer's mapping, with guards ------------------------------------------------------
 */

/* With 64-bit file offsets, glibc's headers call mmap mmap64. */
void *__real_mmap64(void *addr, size_t length, int prot, int flags, int fd, off_t offset);
int __real_munmap(void *addr, size_t length);
void *__wrap_mmap64(void *addr, size_t length, int prot, int flags, int fd, off_t offset);
int __wrap_munmap(void *addr, size_t length);

static int ring_fd = -1;
static unsigned char *producer;                  /* the hostile process's view */
static unsigned char *consumer;                  /* ring.c's, while attached */
static size_t consumer_bytes, consumer_reserved; /* mapped, and with the guards */

static size_t page_round(size_t bytes)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (bytes + page - 1) / page * page;
}

void *__wrap_mmap64(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
    if (fd != ring_fd || ring_fd < 0)
        return __real_mmap64(addr, length, prot, flags, fd, offset);
    must(consumer == NULL);
    size_t reserved = page_round(length) + (size_t)sysconf(_SC_PAGESIZE);
    void *area = __real_mmap64(NULL, reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED)
        return MAP_FAILED;
    void *map = __real_mmap64(area, length, prot, flags | MAP_FIXED, fd, offset);
    if (map == MAP_FAILED) {
        __real_munmap(area, reserved);
        return MAP_FAILED;
    }
    consumer = map;
    consumer_bytes = length;
    consumer_reserved = reserved;
    ASAN_POISON_MEMORY_REGION(consumer + length, page_round(length) - length);
    return map;
}

int __wrap_munmap(void *addr, size_t length)
{
    if (addr == NULL || addr != consumer)
        return __real_munmap(addr, length);
    must(length == consumer_bytes);
    ASAN_UNPOISON_MEMORY_REGION(consumer + length, page_round(length) - length);
    consumer = NULL;
    return __real_munmap(addr, consumer_reserved);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    ring_fd = memfd_create("fuzz-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    must(ring_fd >= 0);
    must(ftruncate(ring_fd, RING_BYTES) == 0);
    must(fcntl(ring_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0);
    producer = __real_mmap64(NULL, RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd, 0);
    must(producer != MAP_FAILED);
    return 0;
}

/* ---- the hostile producer ---------------------------------------------------------------------
 */

struct run {
    const uint8_t *writes, *writes_end;
    uint64_t next_seq; /* no record may start before this */
    uint64_t record_slots;
    bool converted; /* times went through a clock */
};

static void producer_writes(struct run *run)
{
    if (run->writes_end - run->writes < (ptrdiff_t)WRITE_BYTES)
        return;
    size_t offset = ((size_t)run->writes[0] | (size_t)run->writes[1] << 8) % (RING_BYTES - 7);
    memcpy(producer + offset, run->writes + 2, 8);
    run->writes += WRITE_BYTES;
}

static void record_handed_out(const struct vigil_ring_record *record, void *user)
{
    struct run *run = user;
    must(record->seq >= run->next_seq);
    must(record->slots >= 1 && record->slots <= SLOTS);
    if (record->type == VIGIL_RECORD_ACTIVITY) {
        must(record->slots == 1);
        must(record->activity.seq == record->seq);
        must(vigil_activity_check(&record->activity, NULL));
    } else {
        must(record->type == VIGIL_RECORD_NAME);
        const struct vigil_name *name = &record->name;
        must(vigil_name_check(name->file_id, name->path, name->length, NULL));
        must(name->path[name->length] == '\0');
    }
    run->next_seq = record->seq + record->slots;
    run->record_slots += record->slots;
    producer_writes(run);
}

static uint64_t header_counter(size_t offset)
{
    uint64_t value;
    memcpy(&value, producer + offset, sizeof value);
    return value;
}

static uint64_t published_position(void)
{
    return header_counter(offsetof(struct ring_header, consumed));
}

static void make_header_valid(unsigned tick_bit)
{
    struct ring_header h;
    memcpy(&h, producer, offsetof(struct ring_header, head));
    h.magic = RING_MAGIC;
    h.version = RING_VERSION;
    h.slot_bytes = VIGIL_RING_SLOT_BYTES;
    h.slot_count = SLOTS;
    h.total_bytes = RING_BYTES;
    h.tick_source = tick_bit ? VIGIL_TICKS_TSC : VIGIL_TICKS_MONOTONIC_NS;
    memcpy(producer, &h, offsetof(struct ring_header, head));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    unsigned flags = data[0];
    size_t max_records = data[1] != 0 ? data[1] : SIZE_MAX;
    size_t image = size - 2 < RING_BYTES ? size - 2 : RING_BYTES;
    memset(producer, 0, RING_BYTES);
    memcpy(producer, data + 2, image);
    bool raw_header = (flags & 7u) == 7u;
    if (!raw_header)
        make_header_valid(flags & 1u);

    struct vigil_error err = {{0}};
    struct vigil_ring *ring = vigil_ring_attach(ring_fd, &err);
    if (ring == NULL) {
        must(raw_header && err.message[0] != '\0');
        return 0;
    }
    must(consumer != NULL && consumer_bytes == RING_BYTES);
    /* The energy in the header, whatever its bytes: read as a figure only
     * when it is one; and once published, read back as published. */
    struct vigil_ring_energy e;
    if (vigil_ring_read_energy(ring, &e))
        must(isfinite(e.energy_j) && e.energy_j >= 0 && isfinite(e.power_w) && e.power_w >= 0 &&
             e.t_ns != 0);
    vigil_ring_publish_energy(ring, 2.5, 7, 1);
    must(vigil_ring_read_energy(ring, &e) && e.energy_j == 2.5 && e.power_w == 0 && e.t_ns == 7 &&
         e.flags == 1);

    /* The daemon's calibration: as vigil_tick_clock_init leaves it when
     * its anchors say nothing (1 ns a tick), from a base in the middle. */
    const struct vigil_tick_clock clock = {
        .source = VIGIL_TICKS_TSC,
        .base = {.ticks = 1ull << 40, .ns = 1ull << 41},
        .ns_per_tick = 1.0,
    };
    struct run run = {
        .writes = data + 2 + image,
        .writes_end = data + size,
        .next_seq = published_position(),
        .converted = (flags & 64u) != 0,
    };
    unsigned drain_flags = flags & 8u ? VIGIL_RING_PRODUCER_GONE : 0;
    unsigned drains = 1 + ((flags >> 4) & 3u);
    uint64_t position = published_position(), dropped = 0;
    for (unsigned i = 0; i < drains; i++) {
        producer_writes(&run);
        run.record_slots = 0;
        /* What drain will read: the producer writes again only once a
         * record is handed out. */
        uint64_t head = header_counter(offsetof(struct ring_header, head));
        uint64_t dropped_now = header_counter(offsetof(struct ring_header, dropped));
        bool header_sane = dropped_now >= dropped && head >= position && head - position <= SLOTS;
        struct vigil_ring_drain_report report;
        size_t taken =
            vigil_ring_drain(ring, max_records, drain_flags, run.converted ? &clock : NULL,
                             record_handed_out, &run, &report);
        must(taken == report.records && taken <= max_records);
        must(report.header_corrupt == !header_sane);
        if (report.header_corrupt) {
            must(taken == 0 && report.slots == 0 && report.first_problem.message[0] != '\0');
            continue;
        }
        /* The drop counter only goes forward, and every drop is reported once. */
        must(report.dropped == dropped_now - dropped);
        dropped = dropped_now;
        must(report.slots == run.record_slots + report.corrupt + report.torn);
        must((report.corrupt + report.torn == 0) == (report.first_problem.message[0] == '\0'));
        /* ring.c publishes its position after the last record: it moved by
         * what was consumed, whatever the producer wrote there before. */
        must(published_position() == position + report.slots);
        position += report.slots;
        /* Nothing after the consumer's own position was handed out twice. */
        must(run.next_seq <= position && position <= head);
    }
    vigil_ring_close(ring);
    must(consumer == NULL);
    return 0;
}
