/* vigil — the roll-up levels' blocks aggregated in C (levels_blocks.c),
 * for warehouse_levels.c. Private to the warehouse library. */
#ifndef VIGIL_LEVELS_BLOCKS_H
#define VIGIL_LEVELS_BLOCKS_H

#include <stdint.h>
#include <glib.h>

#include "copy_binary.h"

/* Every metric set: metric_set_id → struct levels_metric_set. */
struct levels_metric_set {
    uint32_t n;
    int32_t metric_ids[];
};

/* One read's blocks of one level: [from_us, from_us + blocks × block
 * length) of some nodes. */
struct levels_blocks;

struct levels_blocks *levels_blocks_new(GHashTable *metric_sets, int level_s, int block_slots,
                                        int64_t from_us, uint32_t blocks);
void levels_blocks_free(struct levels_blocks *l);

/* A row of statistics_rollup_arrays (node_id, metric_set_id, start_time,
 * end_time, samples, min, mean, max, delta, as read by binary COPY) added
 * into its slot. An error names a set the warehouse lacks, arrays of
 * another length than their set, or a slot's samples past an integer. */
gboolean levels_blocks_add(struct levels_blocks *l, const struct vigil_copy_field *fields,
                           GError **error);

/* Every block with a roll-up as a row of statistics_level_blocks (the
 * columns in order); *rows gets how many. */
gboolean levels_blocks_encode(struct levels_blocks *l, struct vigil_copy *out, guint64 *rows,
                              GError **error);

/* The columns levels_blocks_add reads, and the ones encode writes. */
#define LEVELS_ROLLUP_COLUMNS                                                                      \
    "node_id, metric_set_id, start_time, end_time, samples, min, mean, max, delta"
#define LEVELS_ROLLUP_FIELDS 9
#define LEVELS_BLOCK_COLUMNS                                                                       \
    "node_id, metric_id, level_s, block_start, samples, seconds, min, mean, max, delta, "          \
    "rate_min, rate_max"
#define LEVELS_BLOCK_FIELDS 12

#endif
