/* vigild — unacknowledged batches on disk (spool.c). */
#ifndef VIGILD_SPOOL_H
#define VIGILD_SPOOL_H

#include <stdint.h>
#include <glib.h>

struct vigild_spool;
struct vigild_drops; /* uplink_drops.h */

/* Segment files SPOOL_DIR/<first sequence, 20 digits>.spool, each whole
 * BATCH messages one after another. Used by the uplink's thread only. */

struct vigild_spool_stats {
    uint64_t batches; /* kept, not acknowledged */
    uint64_t bytes;   /* the segments' size on disk */
    uint64_t segments;
    uint64_t dropped_batches, dropped_bytes; /* to stay under max_bytes */
    uint64_t corrupt, corrupt_bytes;         /* damaged stretches found at open */
    uint64_t errors;                         /* writes and reads that failed */
};

/* Locks the folder (made if missing) against a second vigild and reads
 * every segment back; damaged stretches go to NAME.damaged. */
struct vigild_spool *vigild_spool_open(const char *dir, uint64_t max_bytes, GError **error);
/* What the bound drops from now on is counted there, per process. */
void vigild_spool_set_drops(struct vigild_spool *spool, struct vigild_drops *drops);
/* The sequences it holds, ascending (uint64_t). */
GArray *vigild_spool_sequences(const struct vigild_spool *spool);
/* Appends a batch; to stay under max_bytes it first drops the oldest
 * segments, appending their unacknowledged sequences to `dropped` (and the
 * batch's own when it alone is too big). FALSE with error set when the
 * batch could not be written: it is not in the spool then. */
gboolean vigild_spool_append(struct vigild_spool *spool, uint64_t sequence, GBytes *batch,
                             GArray *dropped, GError **error);
gboolean vigild_spool_has(const struct vigild_spool *spool, uint64_t sequence);
GBytes *vigild_spool_read(struct vigild_spool *spool, uint64_t sequence, GError **error);
/* Forgets a batch (acknowledged or refused); a segment goes when the last
 * of its batches does. */
void vigild_spool_remove(struct vigild_spool *spool, uint64_t sequence);
void vigild_spool_sync(struct vigild_spool *spool);
void vigild_spool_stats(const struct vigild_spool *spool, struct vigild_spool_stats *out);
void vigild_spool_close(struct vigild_spool *spool); /* syncs first */

/* The sequence numbers: SPOOL_DIR/sequence holds a number above every one
 * handed out, reserved ahead so that the file is written once in a while. */
struct vigild_sequence {
    char *path;
    uint64_t next;
    uint64_t reserved_to; /* the file says this: numbers below it may be in use */
    uint64_t write_errors;
};

/* `floor`: the lowest number allowed (above every spooled sequence). */
gboolean vigild_sequence_open(struct vigild_sequence *s, const char *dir, uint64_t floor,
                              GError **error);
uint64_t vigild_sequence_take(struct vigild_sequence *s);
void vigild_sequence_close(struct vigild_sequence *s); /* writes the exact next */

#endif
