/* vigil — the activity ring: many producer threads in one process, one
 * consumer (vigild) in another, sharing a sealed memfd.
 *
 * A producer never blocks, never allocates and makes no system call: a push
 * is one compare-and-swap on the head and a few stores. When the ring is
 * full the record is dropped and counted, so a slow or absent daemon can
 * never slow the program down.
 *
 * The consumer trusts nothing in the mapping: the producer is an arbitrary
 * program that may scribble over its memory. attach() checks the header
 * against the file's real size and seals; drain() copies each record out,
 * checks it did not change while being copied, validates every field, and
 * skips and reports what is torn or corrupt. No content of the mapping can
 * make the consumer crash, loop or read outside it. */
#ifndef VIGIL_RING_H
#define VIGIL_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/activity.h"
#include "vigil/clock.h"
#include "vigil/error.h"

#define VIGIL_RING_SLOT_BYTES 96u
#define VIGIL_RING_MIN_SLOTS  64u        /* a longest name record (52 slots) must fit */
#define VIGIL_RING_MAX_SLOTS  (1u << 24) /* 1.5 GiB of mapping */
/* A process's ring unless configured otherwise: 6 MiB, about 65,000
 * records, or 650 ms of a program doing 100,000 calls a second between two
 * drains of the daemon's 100 ms tick. It also fits in a cache, which keeps a
 * push at its cheapest (bench-ring shows the cost of a larger one). */
#define VIGIL_RING_DEFAULT_SLOTS ((uint32_t)VIGIL_RING_DEFAULT_SLOTS_NUMBER)
/* The same, 1 << 16, as a plain number that [preload]'s table can spell as
 * its default (G_STRINGIFY), so that it is written once. */
#define VIGIL_RING_DEFAULT_SLOTS_NUMBER 65536
/* The path prefixes whose calls are counted but not recorded in the ring
 * unless VIGIL_EXCLUDE says otherwise ([preload] exclude's default). */
#define VIGIL_EXCLUDE_DEFAULT "/proc;/sys;/dev"

struct vigil_ring;
struct ring_header; /* the mapping's layout: record/ring_layout.h */
struct ring_slot;

/* Producer side: a fresh ring of slot_count slots (a power of two) in a
 * sealed memfd. Creating it touches no page of the slot area: a zero-filled
 * slot already means "free". The activities' times will be in `ticks`
 * (see clock.h); drain converts them. Returns NULL and fills err on
 * failure. */
struct vigil_ring *vigil_ring_create(uint32_t slot_count, enum vigil_tick_source ticks,
                                     struct vigil_error *err);

/* Consumer side: maps a ring received as a file descriptor and validates it
 * (magic, version, slot size, slot count, the file's real size, and seals
 * that stop the producer from shrinking it under the consumer's feet). The
 * fd stays the caller's. Returns NULL and fills err when the ring is bad. */
struct vigil_ring *vigil_ring_attach(int fd, struct vigil_error *err);

/* Moves the memfd of a ring made by vigil_ring_create to the lowest free
 * descriptor at or above `min_fd`, so that it does not take a number the
 * host program expects to get from its next open(). */
bool vigil_ring_move_fd(struct vigil_ring *ring, int min_fd);

/* The memfd of a ring made by vigil_ring_create (to pass to vigild), or -1. */
int vigil_ring_fd(const struct vigil_ring *ring);
uint32_t vigil_ring_slot_count(const struct vigil_ring *ring);
enum vigil_tick_source vigil_ring_tick_source(const struct vigil_ring *ring);
/* Unmaps the ring and closes its memfd, if the descriptor still refers to
 * it: the host program may have closed it and reused the number. */
void vigil_ring_close(struct vigil_ring *ring);

/* Writes one activity, its times in the ring's ticks; its seq is set to
 * the ring position it takes.
 * Returns false when the ring was full and the record was dropped (and
 * counted). Safe from any thread and from signal handlers. */
bool vigil_ring_push(struct vigil_ring *ring, const struct vigil_activity *activity);

/* What a producer needs to push, copied out of the handle so that a hot
 * path can keep it beside its own state (the preload library does) and
 * push without touching the handle's memory: the mapping's header, its
 * slots, slot_count - 1. All NULL/0 for NULL. */
struct vigil_ring_producer {
    struct ring_header *header;
    struct ring_slot *slots;
    uint64_t mask;
};
void vigil_ring_producer_view(const struct vigil_ring *ring, struct vigil_ring_producer *out);
/* vigil_ring_push through such a view. The preload library's wrappers
 * use record/ring_producer.h instead, inline, writing each record in its
 * slot (docs/architecture.md: one page of code and the record's copy less
 * per call). */
bool vigil_ring_push_view(const struct vigil_ring_producer *p,
                          const struct vigil_activity *activity);

/* Writes a name record (it spans 1 + ceil((length - 72) / 80) slots).
 * Returns false when it was dropped (counted) or is invalid. */
bool vigil_ring_push_name(struct vigil_ring *ring, uint32_t file_id, const char *path,
                          size_t length);

/* Records dropped by producers because the ring was full, since creation. */
uint64_t vigil_ring_dropped(const struct vigil_ring *ring);

/* What drain hands out: a private, validated copy. */
struct vigil_ring_record {
    enum vigil_record_type type;
    uint64_t seq;   /* ring position of the record's first slot */
    uint32_t slots; /* positions it takes: the next record's seq is seq + slots */
    union {
        struct vigil_activity activity; /* VIGIL_RECORD_ACTIVITY */
        struct vigil_name name;         /* VIGIL_RECORD_NAME */
    };
};

typedef void (*vigil_ring_record_fn)(const struct vigil_ring_record *record, void *user);

enum vigil_ring_drain_flags {
    /* The producer has exited: a record it claimed but never finished will
     * never be, so skip it as torn instead of waiting for it. */
    VIGIL_RING_PRODUCER_GONE = 1u << 0,
};

struct vigil_ring_drain_report {
    uint64_t records; /* handed to the callback */
    uint64_t slots;   /* ring positions consumed, skipped ones included */
    /* Positions skipped because their content failed validation. */
    uint64_t corrupt;
    /* Positions skipped because they changed while being read, or were
     * claimed by a producer that is gone and never finished. */
    uint64_t torn;
    uint64_t dropped; /* drops by the producer since the previous drain */
    /* Set when the shared header itself is inconsistent; drain then stops
     * and the ring should be given up. */
    bool header_corrupt;
    struct vigil_error first_problem; /* empty when there was none */
};

/* Hands out up to max_records records in order, then returns how many it
 * handed out. The activities' times (start, end, parent) are converted
 * from the ring's ticks to CLOCK_MONOTONIC ns with `clock`, the reader's
 * calibration; with NULL they stay in ticks. Every position skipped as
 * corrupt or torn leaves a gap in the seq numbers and is counted in the
 * report. */
size_t vigil_ring_drain(struct vigil_ring *ring, size_t max_records, unsigned flags,
                        const struct vigil_tick_clock *clock, vigil_ring_record_fn fn, void *user,
                        struct vigil_ring_drain_report *report);

/* Holding records across a consumer's restart (vigild's). By default a
 * drain frees every slot it read. A consumer that holds records keeps the
 * slots it read taken until it calls vigil_ring_release, so that a
 * consumer started after it died (and that attaches the same memfd again)
 * reads them once more: nothing the first one had read but not yet stored
 * is lost. The cost is room: a held slot is one a producer cannot use. */
void vigil_ring_hold(struct vigil_ring *ring, bool hold);
/* The next position drain reads, and the first still held. */
uint64_t vigil_ring_read_position(const struct vigil_ring *ring);
uint64_t vigil_ring_released_position(const struct vigil_ring *ring);
/* Frees the slots below `upto` (at most the read position) and records
 * `committed` (at most what is freed), the position below which everything
 * is stored or decided, in the ring for a later consumer. Releasing beyond
 * the committed position (to give producers room) is allowed: what lies
 * between the two is lost if this consumer dies, and the next one counts
 * it (vigil_ring_resumed). */
void vigil_ring_release(struct vigil_ring *ring, uint64_t upto, uint64_t committed);
/* Where attach found the previous consumer's position, and how many
 * positions that consumer had freed without committing them (0 for a new
 * ring). */
void vigil_ring_resumed(const struct vigil_ring *ring, uint64_t *position, uint64_t *lost);

/* Names again. A consumer that has lost a ring's name records (a vigild
 * restarted with another state folder, or without its names file) asks the
 * producer for every one of them again; the producer, which looks off its
 * hot path, writes them and says so. Its activities may reach the consumer
 * before their names: the consumer keeps them back until the names are in
 * (daemon/processes.c). */

/* Consumer: asks for every name record again. Returns the request's
 * generation, or 0 when the producer cannot answer (a ring of an older
 * library, which says nothing of it). */
uint64_t vigil_ring_want_names(struct vigil_ring *ring);
/* Consumer, after each drain: true when no request is open, or once every
 * name record the producer wrote for the last one has been read. */
bool vigil_ring_names_arrived(struct vigil_ring *ring);

/* Producer: the generation of the last request, and of the last answered
 * (0: none). */
uint64_t vigil_ring_names_wanted(const struct vigil_ring *ring);
uint64_t vigil_ring_names_answered(const struct vigil_ring *ring);
/* Producer: every name record of request `generation` is in the ring. */
void vigil_ring_names_given(struct vigil_ring *ring, uint64_t generation);
/* Producer: slots free for records now. */
uint32_t vigil_ring_room(const struct vigil_ring *ring);

/* The process's energy, as vigild shares the node's among its processes
 * (daemon/energy_share.c), published into the ring's header once a tick so
 * that the process can tell the energy of its code regions without asking.
 * Published by the consumer, read by the producer. */
enum vigil_ring_energy_flags {
    VIGIL_RING_ENERGY_ESTIMATED = 1u << 0, /* the node's energy is an estimate */
    VIGIL_RING_ENERGY_UNCERTAIN = 1u << 1, /* a gap in it (a restart of vigild) */
};

struct vigil_ring_energy {
    double energy_j; /* the process's share of the node's energy since it registered */
    double power_w;  /* that share's rate over the last tick (0 at the first) */
    uint64_t t_ns;   /* CLOCK_MONOTONIC of the tick the figures are of */
    uint32_t flags;  /* VIGIL_RING_ENERGY_* */
};

/* Consumer: publishes the process's energy at tick time `t_ns`; the power
 * is the rate since the previous publication into this ring (0 for the
 * first, and when time did not advance). A seqlock write: no producer ever
 * waits for it. Ignores a NaN or negative energy. */
void vigil_ring_publish_energy(struct vigil_ring *ring, double energy_j, uint64_t t_ns,
                               uint32_t flags);

/* Producer: the last published energy. False when none was published (no
 * vigild, an older one, or no energy on the node), or when every one of a
 * bounded number of tries raced a write (a consumer that died mid-write):
 * the reader never spins for long. */
bool vigil_ring_read_energy(const struct vigil_ring *ring, struct vigil_ring_energy *out);

/* The energy the process will have reached at `now_ns`, from a published
 * figure: energy_j + power_w × (now_ns − t_ns), not before t_ns. */
double vigil_ring_energy_at(const struct vigil_ring_energy *e, uint64_t now_ns);

#endif
