/* vigil-web — a series at a coarser level (migration 15), bucketed here:
 * the level's blocks (a metric of a node over 120 or 60 slots, an array a
 * column) and the 1 s roll-ups of the edges the level does not serve are
 * read as they are stored, in binary, and cut into buckets in one pass
 * over them, where SQL unnested every slot, then sorted and grouped the
 * rows (bench/web: most of the series' time). Same answer as that SQL
 * (docs/web-api.md), but for the order of floating sums. */
#ifndef VIGIL_WEB_SERIES_LEVELS_H
#define VIGIL_WEB_SERIES_LEVELS_H

#include <glib.h>

#include "request.h"

/* How a metric's roll-ups become one value per roll-up. */
enum series_how {
    SERIES_RATE,        /* counters: sum of deltas / seconds */
    SERIES_GAUGE,       /* gauges: their min, mean and max, summed over matching metrics */
    SERIES_RUNNING_SUM, /* counters: the sum of deltas since the interval's start */
    SERIES_CPU_BUSY,    /* cpu.*_s: % of the time not idle nor waiting for I/O */
};

/* One line of an answer: a node's values of one label per bucket. */
struct series_line {
    gint64 node_id;
    const char *hostname;
    guint part;            /* the label's index */
    double *lo, *mid, *hi; /* NAN: no roll-up in the bucket */
};

struct series_level_ask {
    enum series_how how;
    const char *node_ids;           /* PostgreSQL array literals: the nodes, */
    const char *labels, *patterns;  /* the labels and their metrics' LIKE patterns */
    const char *const *part_labels; /* the labels, as C strings */
    guint n_parts;
    gint64 from_us, to_us; /* the interval, cut into `points` buckets */
    guint points;
    gint64 level_s;                      /* the level read, */
    gint64 served_from_us, served_to_us; /* for this part of the interval (on its slots) */
};

/* Fills `lines` (node place × n_parts + part; `node_index` maps a node id
 * to its place + 1) with the buckets' min, mean and max. FALSE with
 * `error` set when a query fails or a value is not what was read. */
gboolean web_series_level_fill(struct web_request *req, const struct series_level_ask *ask,
                               GPtrArray *lines, GHashTable *node_index, GError **error);

#endif
