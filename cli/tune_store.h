/* vigil tune --store: a trial (the recorded configuration's replay and a
 * candidate's, side by side) into the warehouse's tune_trials
 * (warehouse/migrations/0009_tune_trials.sql), for the web UI's thresholds page. */
#ifndef VIGIL_CLI_TUNE_STORE_H
#define VIGIL_CLI_TUNE_STORE_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <libpq-fe.h>

#include "tune_replay.h"
#include "tune_truth.h"

/* One replayed configuration: "recorded" or "candidate". */
struct tune_column {
    const char *name;
    struct tune_result result;
    gboolean scored;
    struct tune_truth_score score;
};

struct tune_trial {
    const char *recording;      /* the path, for a format 1 file's modification time */
    const char *recording_name; /* as stored: absolute, in UTF-8 */
    const char *node;           /* where it was recorded */
    const char *candidate_file; /* NULL: no candidate; absolute, UTF-8 */
    const char *truth_file;     /* NULL: no ground truth; absolute, UTF-8 */
    const struct tune_column *columns;
    guint n_columns; /* 1 or 2: recorded, then the candidate */
    const vigil_config *candidate;
};

/* Every declared key of the recorded configuration `recorded_text` and
 * `candidate` whose effective value differs ([{"section", "key",
 * "recorded", "candidate"}], null where a side has no such key), by
 * section and key; only the keys a replay applies (every [adpi.*] and
 * [reasoner.*] key, and [capture]'s mode, pre_cycles, post_cycles and
 * max_held). NULL with error set when the recorded text does not load. */
JsonArray *tune_config_changes(const char *recorded_text, const vigil_config *candidate,
                               GError **error);

/* Stores `trial` in one transaction; its trial_id in `trial_id`. FALSE with
 * error set (a database without migration 9 is told to run `vigil db
 * migrate`). A trial whose recorded replay did not reproduce vigild's
 * decisions is refused: its figures are not what vigild does. */
gboolean tune_store(PGconn *db, const struct tune_trial *trial, gint64 *trial_id, GError **error);

#endif
