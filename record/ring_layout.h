/* vigil — the ring's layout in shared memory. Private to ring.c and to the
 * tests that scribble on it; nothing else may depend on it.
 *
 *   [ header: 256 bytes ][ slot 0 ][ slot 1 ] … [ slot N-1 ]     N = 2^k
 *
 * Each 96-byte slot is an 8-byte mark and an 88-byte payload. The mark of
 * the slot for ring position p (slot p & (N-1)) says where that slot is:
 *
 *   mark == base(p)       free: waiting for the record of position p
 *   mark == base(p) + 1   holds the record of position p
 *
 * where base(p) = p & ~(N-1), the first position of p's lap. The consumer,
 * done with position p, stores base(p) + N: free for the next lap. Marks
 * start at 0, which is "free, lap 0" for every slot, so a new memfd needs no
 * initialisation beyond its header. (This is Dmitry Vyukov's bounded queue
 * with the slot index subtracted from the mark.) */
#ifndef VIGIL_RING_LAYOUT_H
#define VIGIL_RING_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/activity.h"
#include "vigil/ring.h"

#define RING_MAGIC        0x4E524756u /* "VGRN" */
#define RING_VERSION      1u
#define RING_HEADER_BYTES 256u

#define RING_PAYLOAD_BYTES (VIGIL_RING_SLOT_BYTES - 8u)

/* What a producer can do beyond version 1's ring (ring_header's
 * producer_features). */
#define RING_PRODUCER_RESENDS_NAMES 0x1u /* answers names_wanted */

/* A name record: a first slot, then continuation slots, claimed together. */
#define RING_RECORD_NAME_CONTINUATION 0xB3
#define RING_NAME_FIRST_HEADER_BYTES  16u
#define RING_NAME_FIRST_PATH_BYTES    (RING_PAYLOAD_BYTES - RING_NAME_FIRST_HEADER_BYTES) /* 72 */
#define RING_NAME_NEXT_HEADER_BYTES   8u
#define RING_NAME_NEXT_PATH_BYTES     (RING_PAYLOAD_BYTES - RING_NAME_NEXT_HEADER_BYTES) /* 80 */
#define RING_NAME_MAX_SLOTS                                                                        \
    (1u + (VIGIL_PATH_MAX - RING_NAME_FIRST_PATH_BYTES + RING_NAME_NEXT_PATH_BYTES - 1) /          \
              RING_NAME_NEXT_PATH_BYTES)

struct ring_name_first {
    uint8_t record_type; /* VIGIL_RECORD_NAME */
    uint8_t slots;       /* slots the record takes, this one included */
    uint16_t length;     /* path bytes */
    uint32_t file_id;
    uint64_t seq;
    char path[RING_NAME_FIRST_PATH_BYTES];
};

struct ring_name_next {
    uint8_t record_type; /* RING_RECORD_NAME_CONTINUATION */
    uint8_t index;       /* 1 for the first continuation */
    uint16_t reserved;
    uint32_t file_id; /* the same as in the first slot */
    char path[RING_NAME_NEXT_PATH_BYTES];
};

union ring_payload {
    uint8_t record_type; /* first byte of every record */
    struct vigil_activity activity;
    struct ring_name_first name_first;
    struct ring_name_next name_next;
    unsigned char bytes[RING_PAYLOAD_BYTES];
};

struct ring_slot {
    _Atomic uint64_t mark;
    union ring_payload payload;
};

/* Producer and consumer counters sit on separate cache lines. */
struct ring_header {
    uint32_t magic;
    uint32_t version;
    uint32_t slot_bytes;
    uint32_t slot_count;
    uint64_t total_bytes;
    uint32_t producer_pid; /* for people reading a core dump; never trusted */
    uint32_t tick_source;  /* enum vigil_tick_source of the activities' times */
    /* Written by the producer, in what was reserved space: zero in the
     * ring of an older library, which is then never asked (the version
     * stays 1, and an older consumer never reads them). */
    uint32_t producer_features; /* RING_PRODUCER_*, set at creation */
    uint32_t reserved0;
    /* The last names_wanted the producer answered: every name record it
     * holds was in the ring before this was stored (release). */
    _Atomic uint64_t names_given;
    unsigned char pad0[16];
    _Atomic uint64_t head; /* next position to claim */
    unsigned char pad1[56];
    _Atomic uint64_t dropped; /* records dropped because the ring was full */
    unsigned char pad2[56];
    _Atomic uint64_t consumed; /* the consumer's position, published for readers */
    /* Written by the consumer only: positions below it are safe with the
     * consumer (stored, or decided). A consumer that holds records
     * (vigil_ring_hold) frees slots up to it, and a restarted one resumes
     * there; consumed only passes it when the consumer had to free slots
     * early, and the difference is what a restart lost. */
    _Atomic uint64_t committed;
    /* The process's energy as the consumer (vigild) last published it, once
     * a tick, for the producer's code regions (vigil_ring_publish_energy).
     * A seqlock: odd while the consumer writes. The doubles are stored as
     * their bits in atomic words, so that a reader racing the writer reads
     * old or new bits, never undefined behaviour; the sequence tells which.
     * All zero (a ring nobody published into, or an older vigild): no
     * energy. */
    _Atomic uint64_t energy_seq;
    _Atomic uint64_t energy_j_bits; /* the process's energy since it registered */
    _Atomic uint64_t energy_w_bits; /* its power over the last tick */
    _Atomic uint64_t energy_t_ns;   /* CLOCK_MONOTONIC of the tick; 0: none */
    _Atomic uint64_t energy_flags;  /* VIGIL_RING_ENERGY_* */
    /* Written by the consumer, in what was reserved space: a consumer that
     * lacks the file names (a vigild restarted without them) asks for every
     * name record again by moving it on; the producer looks at it off its
     * hot path and answers in names_given. 0: never asked. */
    _Atomic uint64_t names_wanted;
};

_Static_assert(sizeof(union ring_payload) == RING_PAYLOAD_BYTES, "payload size");
_Static_assert(sizeof(struct ring_slot) == VIGIL_RING_SLOT_BYTES, "slot size");
_Static_assert(sizeof(struct ring_header) == RING_HEADER_BYTES, "header size");
_Static_assert(offsetof(struct ring_header, names_given) == 40, "names_given in reserved space");
_Static_assert(offsetof(struct ring_header, head) == 64, "head on its own cache line");
_Static_assert(offsetof(struct ring_header, dropped) == 128, "dropped on its own cache line");
_Static_assert(offsetof(struct ring_header, consumed) == 192, "consumed on its own cache line");
_Static_assert(offsetof(struct ring_header, committed) == 200, "committed beside consumed");
_Static_assert(offsetof(struct ring_header, energy_seq) == 208, "energy beside the consumer's");
_Static_assert(offsetof(struct ring_header, names_wanted) == 248, "names_wanted in reserved space");
_Static_assert(RING_NAME_MAX_SLOTS <= VIGIL_RING_MIN_SLOTS, "a longest name must fit a ring");
_Static_assert(RING_NAME_MAX_SLOTS <= UINT8_MAX, "slot count of a name fits its field");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free in shared memory");

#endif
