/* vigil tune — a cycle recording ([daemon] record) replayed through the
 * daemon's own reasoning (daemon/reasoning.c) and capture
 * (daemon/capture.c), with the recorded configuration or a candidate, and
 * what they decided, counted. */
#ifndef VIGIL_CLI_TUNE_REPLAY_H
#define VIGIL_CLI_TUNE_REPLAY_H

#include <stdint.h>
#include <glib.h>

#include "vigil/config.h"
#include "vigil/health.h"

/* One ADPI at one level: the cycles in which it reported, and why. */
struct tune_adpi_stats {
    char *plugin;
    enum vigil_level level;
    uint64_t cycles;                            /* cycles with an issue from it */
    uint64_t issues;                            /* issues, every reasoner of the level */
    uint64_t by_health[VIGIL_HEALTH_COUNT + 1]; /* issues by health */
    GHashTable *reasons;                        /* "metric HEALTH" → struct tune_reason * */
    uint64_t last_cycle;                        /* the last cycle counted in `cycles` */
};

struct tune_reason {
    uint64_t issues;
    char *example; /* the first issue's message */
};

/* A replayed cycle, for scoring against ground truth. */
struct tune_cycle {
    uint64_t cycle;
    uint64_t start_ns, end_ns;
    gboolean flagged; /* a level's own state (or the system's) was abnormal: capture triggers */
};

struct tune_result {
    uint64_t cycles, judged_cycles;
    uint64_t processes, activities, samples_ticks;
    uint64_t reloads;
    uint64_t first_ns, last_ns; /* recorded time span */
    gboolean limited;           /* the recording stopped at record_max_bytes */
    gboolean ended;             /* it has vigild's clean END */
    /* Where the file ends inside a record (vigild killed while writing it,
     * or still recording), -1 when it does not: the replay stops there. */
    gint64 cut_at_offset;
    char *vigil_version; /* of the vigild that recorded */
    /* From format 2 on: the node's name, as vigild gives it to the
     * warehouse, and wall-clock time less the file's monotonic times. NULL
     * and FALSE for a format 1 file, which does not say. */
    char *node;
    gboolean has_wall_clock;
    int64_t realtime_minus_monotonic_ns;
    char *recorded_config; /* the first CONFIG record's text, as vigild wrote it */
    /* Reasoners: decisions made and their own states (what capture acts
     * on), by level. */
    uint64_t decisions[VIGIL_LEVEL_COUNT + 1];
    uint64_t own_states[VIGIL_LEVEL_COUNT + 1][VIGIL_HEALTH_COUNT + 1];
    uint64_t abnormal_cycles[VIGIL_LEVEL_COUNT + 1]; /* cycles a reasoner of the level was */
    uint64_t flagged_cycles;                         /* cycles capture triggered on */
    GPtrArray *adpis; /* struct tune_adpi_stats *, first seen first */
    /* Capture: activities observed, forwarded, dropped, lost. */
    uint64_t observed, forwarded, dropped, lost, windows;
    guint pre_cycles, post_cycles;
    /* Replayed decisions against the recorded ones. */
    uint64_t compared, matched;
    char *first_mismatch; /* NULL when every decision matched */
    GArray *cycle_list;   /* struct tune_cycle */
    double replay_s;      /* wall-clock time the replay took */
};

/* A what-if: every activity filed in cycle `from_cycle` or later took
 * `factor` times as long as recorded, as if the node had become slower
 * (above 1) or faster (below 1): a virtual machine's host getting busy, a
 * CPU changing its clock. The recorded decisions are compared before
 * `from_cycle` only, where the inputs are still the recorded ones. */
struct tune_durations {
    double factor;
    uint64_t from_cycle;
};

/* Replays `path`. `candidate` NULL: with the recorded configuration (and
 * its reloads, where they happened); else with `candidate` throughout.
 * `durations` NULL: the activities as recorded.
 * A recording cut inside its last record is replayed up to that record
 * (cut_at_offset says where). FALSE with error set when the recording is
 * unreadable or damaged (the error names the offset), has no complete
 * cycle, or a configuration cannot be used. */
gboolean tune_replay(const char *path, vigil_config *candidate,
                     const struct tune_durations *durations, struct tune_result *out,
                     GError **error);
void tune_result_clear(struct tune_result *r);
/* A recorded monotonic time as wall-clock µs since the epoch; -1 when the
 * recording does not say (format 1). */
gint64 tune_result_wall_us(const struct tune_result *r, uint64_t monotonic_ns);
/* An ADPI's reasons (keys of a->reasons, not copied), most issues first,
 * then by name; free with g_ptr_array_free(keys, TRUE). */
GPtrArray *tune_sorted_reasons(const struct tune_adpi_stats *a);

/* A configuration file, checked as vigild checks it (schema, plugins'
 * sections, [daemon] and the reasoners' ADPIs). NULL with error set. */
vigil_config *tune_config_load(const char *path, GError **error);
/* The same for a configuration's text (a recording's CONFIG record). */
vigil_config *tune_config_from_text(const char *text, GError **error);

#endif
