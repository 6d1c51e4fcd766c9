/* vigil tune --truth: scoring a replay against a workload's ground truth. */
#ifndef VIGIL_CLI_TUNE_TRUTH_H
#define VIGIL_CLI_TUNE_TRUTH_H

#include <stdint.h>
#include <glib.h>

#include "tune_replay.h"

struct tune_truth_cycle {
    uint64_t start_ns, end_ns;
    gboolean anomalous;
};

/* The truth file's cycles (struct tune_truth_cycle); NULL with error set
 * naming the line that is wrong. */
GArray *tune_truth_read(const char *path, GError **error);

/* Cycle-level scoring: an anomalous workload cycle is caught when a
 * replayed cycle it overlaps, or the one after, was flagged; a flagged
 * replayed cycle within the truth's span is a false flag unless it lies
 * within `pre` cycles before to `post` + 1 after an anomalous one (what
 * capture forwards around a trigger). */
struct tune_truth_score {
    uint64_t anomalous, caught;
    uint64_t clean_cycles, false_flags;
};

void tune_truth_score(const GArray *truth, const GArray *replayed, guint pre, guint post,
                      struct tune_truth_score *out);

#endif
