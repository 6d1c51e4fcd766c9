/* vigil — the ring's producer side, inline: ring.c's pushes use it, and so
 * do the preload library's wrappers, which write each activity straight
 * into its slot. Out of line, the push cost every intercepted call a call,
 * a copy of the record from the stack, and a page of code of its own (a
 * page walk after every system call on a kernel with page-table
 * isolation). Private to ring.c and the preload library; the layout it
 * writes is ring_layout.h's. */
#ifndef VIGIL_RING_PRODUCER_H
#define VIGIL_RING_PRODUCER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ring_layout.h"
#include "vigil/activity.h"
#include "vigil/ring.h"

/* A producer gives up (and counts a drop) rather than spin when a slot's
 * mark makes no sense; a well-formed ring never gets near this. */
#define RING_PUSH_MAX_ATTEMPTS 1024

/* For bench-preload only (bench/meson.build): 1 claims with a plain store
 * where the compare-and-swap is, which is right for one producer only. It
 * measures what per-thread lanes (a single producer each) would save. */
#ifndef RING_CLAIM_WITHOUT_CAS
#define RING_CLAIM_WITHOUT_CAS 0
#endif

/* Claims positions [*position, *position + count) or returns false (and
 * counts one dropped record) when the ring has no room. The geometry is
 * passed in registers: read through a handle, the compiler would reload it
 * after every atomic operation. */
static inline bool ring_claim(struct ring_header *h, const struct ring_slot *slots, uint64_t mask,
                              uint32_t count, uint64_t *position)
{
    uint64_t pos = atomic_load_explicit(&h->head, memory_order_relaxed);
    for (int attempt = 0; attempt < RING_PUSH_MAX_ATTEMPTS; attempt++) {
        uint64_t last = pos + count - 1;
        uint64_t mark = atomic_load_explicit(&slots[last & mask].mark, memory_order_acquire);
        int64_t lead = (int64_t)(mark - (last & ~mask));
        if (__builtin_expect(lead == 0, 1)) {
            if (RING_CLAIM_WITHOUT_CAS) {
                atomic_store_explicit(&h->head, pos + count, memory_order_relaxed);
                *position = pos;
                return true;
            }
            /* On failure the CAS reloads pos: another producer got in first. */
            if (atomic_compare_exchange_weak_explicit(&h->head, &pos, pos + count,
                                                      memory_order_relaxed, memory_order_relaxed)) {
                *position = pos;
                return true;
            }
        } else if (lead < 0) {
            break; /* the slot still holds a record of the previous lap: full */
        } else {
            uint64_t now = atomic_load_explicit(&h->head, memory_order_relaxed);
            if (now == pos)
                break; /* nobody moved the head, so the mark is garbage */
            pos = now;
        }
    }
    atomic_fetch_add_explicit(&h->dropped, 1, memory_order_relaxed);
    return false;
}

static inline void ring_publish(struct ring_slot *slot, uint64_t position, uint64_t mask)
{
    atomic_store_explicit(&slot->mark, (position & ~mask) + 1, memory_order_release);
}

/* ring_activity_claim's loop, out of line: another producer got in
 * first, or the ring is full. The geometry comes by value: had the
 * caller's copy escaped, it would live on the stack on every call. */
static __attribute__((noinline, cold)) struct vigil_activity *
ring_activity_claim_contended(struct ring_header *header, struct ring_slot *slots, uint64_t mask,
                              uint64_t *position)
{
    if (!ring_claim(header, slots, mask, 1, position))
        return NULL;
    return &slots[*position & mask].payload.activity;
}

/* One slot for an activity, claimed: the caller fills the record in place
 * and hands it to ring_activity_publish. NULL (one drop counted) when the
 * ring is full. Nothing reads the slot before its publication. The first
 * attempt is ring_claim's, inline and with the slot's address worked out
 * once (the loop's counter and recomputed address cost every call some
 * ten instructions); any other goes to the loop. */
static inline struct vigil_activity *ring_activity_claim(const struct vigil_ring_producer *p,
                                                         uint64_t *position)
{
    struct ring_header *header = p->header;
    struct ring_slot *slot_array = p->slots;
    uint64_t mask = p->mask;
    uint64_t pos = atomic_load_explicit(&header->head, memory_order_relaxed);
    struct ring_slot *slot = &slot_array[pos & mask];
    uint64_t mark = atomic_load_explicit(&slot->mark, memory_order_acquire);
    if (__builtin_expect(mark == (pos & ~mask), 1)) {
        if (RING_CLAIM_WITHOUT_CAS) {
            atomic_store_explicit(&header->head, pos + 1, memory_order_relaxed);
            *position = pos;
            return &slot->payload.activity;
        }
        uint64_t expected = pos;
        if (__builtin_expect(atomic_compare_exchange_strong_explicit(&header->head, &expected,
                                                                     pos + 1, memory_order_relaxed,
                                                                     memory_order_relaxed),
                             1)) {
            *position = pos;
            return &slot->payload.activity;
        }
    }
    uint64_t contended_position;
    struct vigil_activity *activity =
        ring_activity_claim_contended(header, slot_array, mask, &contended_position);
    *position = contended_position;
    return activity;
}

/* The claimed activity at `position`, filled: its seq set, then made
 * visible to the consumer. Its slot is the one that holds it. */
static inline void ring_activity_publish(const struct vigil_ring_producer *p,
                                         struct vigil_activity *activity, uint64_t position)
{
    activity->seq = position;
    struct ring_slot *slot =
        (struct ring_slot *)((char *)activity - offsetof(struct ring_slot, payload.activity));
    ring_publish(slot, position, p->mask);
}

#endif
