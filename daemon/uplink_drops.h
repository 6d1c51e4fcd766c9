/* vigild — what the uplink and the spool dropped of what the outbox gave
 * them, per process (uplink_drops.c). */
#ifndef VIGILD_UPLINK_DROPS_H
#define VIGILD_UPLINK_DROPS_H

#include <stddef.h>
#include <stdint.h>
#include <glib.h>

/* One process's forwarded activities dropped after the ring, named as the
 * warehouse keys it: pid and monotonic start (its PROCESSES item's). */
struct vigild_drop_count {
    int32_t pid;
    uint64_t start_ns;
    uint64_t activities;
    uint64_t batches; /* dropped batches that held some of them */
};

struct vigild_drops_totals {
    uint64_t activities, batches;
    uint64_t unknown_batches; /* lost with their bytes: whose they were is not known */
};

struct vigild_drops;

struct vigild_drops *vigild_drops_new(void);
void vigild_drops_free(struct vigild_drops *d);
/* The name of these counts in the warehouse: the first sequence of the
 * vigild that keeps them, so that a restarted vigild's counts add to its
 * predecessor's instead of replacing them. */
void vigild_drops_set_counter(struct vigild_drops *d, uint64_t counter);
uint64_t vigild_drops_counter(const struct vigild_drops *d);

/* The calls below may come from any thread. */
/* Counts what a dropped BATCH message carried: its ACTIVITIES, per process
 * its PROCESSES items describe. */
void vigild_drops_count_batch(struct vigild_drops *d, const uint8_t *batch, size_t length);
/* A batch dropped whose bytes are gone (its spool file lost). */
void vigild_drops_count_unknown(struct vigild_drops *d);
/* Moves at every count: the outbox sends the counts again when it moved
 * (a batch that carried them may be among those dropped). */
uint64_t vigild_drops_generation(struct vigild_drops *d);
/* Every process's count (struct vigild_drop_count), in no order. */
GArray *vigild_drops_list(struct vigild_drops *d);
void vigild_drops_totals(struct vigild_drops *d, struct vigild_drops_totals *out);
/* The count of one process; FALSE when nothing of it was dropped. */
gboolean vigild_drops_of(struct vigild_drops *d, int32_t pid, uint64_t start_ns,
                         struct vigild_drop_count *out);

#endif
