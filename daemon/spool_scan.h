/* vigild — the pieces of a spool file: whole batches and damage
 * (spool_scan.c). Shared by the spool and `vigil spool check|replay`. */
#ifndef VIGILD_SPOOL_SCAN_H
#define VIGILD_SPOOL_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <glib.h>

/* One stretch of a file: a whole, intact BATCH message, or damage up to the
 * next one. */
struct vigild_spool_piece {
    uint64_t offset_bytes, length_bytes;
    gboolean damaged;
    uint64_t node_id, sequence; /* a batch's; 0 for damage */
    uint32_t messages;          /* a batch's inner messages */
    char *why;                  /* damage: what is wrong where it starts */
};

/* Every piece of `data`, in order, covering all of it. After damage the
 * walk goes on at the next offset where a BATCH message whose header and
 * CRC check begins (vigil_wire_peek_header), so only the damaged messages
 * are lost, not everything written after them. Free with
 * vigild_spool_scan_free. */
GArray *vigild_spool_scan(const uint8_t *data, size_t size);
void vigild_spool_scan_free(GArray *pieces);

#endif
