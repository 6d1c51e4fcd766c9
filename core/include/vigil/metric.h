/* vigil — the metric catalogue and the sample record.
 *
 * Every statistic vigil collects describes itself: a name such as
 * "energy.pkg0_j", its unit, whether it is a cumulative counter or a gauge,
 * which provider it comes from, and whether it is measured or estimated. A
 * sample carries only the metric's id; the catalogue gives the rest. */
#ifndef VIGIL_METRIC_H
#define VIGIL_METRIC_H

#include <stdbool.h>
#include <stdint.h>
#include <glib.h>

enum vigil_metric_kind {
    VIGIL_METRIC_COUNTER = 1, /* cumulative: only deltas between samples mean something */
    VIGIL_METRIC_GAUGE = 2,   /* a level at the time of the sample */
};

enum vigil_metric_origin {
    VIGIL_METRIC_MEASURED = 1,
    VIGIL_METRIC_ESTIMATED = 2, /* a model's figure: shown as estimated everywhere */
};

#define VIGIL_METRIC_NAME_MAX 127
#define VIGIL_METRIC_TEXT_MAX 255 /* unit and source */

struct vigil_metric_desc {
    uint32_t id; /* 1..n in registration order; 0 is never a metric */
    enum vigil_metric_kind kind;
    enum vigil_metric_origin origin;
    char *name;   /* [a-z0-9_.-]+, starting with a letter */
    char *unit;   /* "J", "bytes", "s", "percent"… */
    char *source; /* the provider: "energy/powercap", "procstat" */
};

enum vigil_sample_flags {
    /* The value may be wrong: a counter may have wrapped more than once
     * since the last read, say. */
    VIGIL_SAMPLE_UNCERTAIN = 1u << 0,
};
#define VIGIL_SAMPLE_KNOWN_FLAGS VIGIL_SAMPLE_UNCERTAIN

/* A double holds every integer up to 2^53 exactly: byte counters up to
 * 8 PiB and energy counters in µJ for centuries, which covers what a node
 * reports. */
struct vigil_sample {
    uint32_t metric_id;
    uint32_t flags; /* enum vigil_sample_flags */
    uint64_t t_ns;  /* CLOCK_MONOTONIC */
    double value;
};

typedef struct vigil_metric_catalog vigil_metric_catalog;

#define VIGIL_METRIC_ERROR (vigil_metric_error_quark())
GQuark vigil_metric_error_quark(void);

enum vigil_metric_error_code {
    VIGIL_METRIC_ERROR_INVALID,  /* a malformed name, unit, source, kind or origin */
    VIGIL_METRIC_ERROR_CONFLICT, /* a name registered before with another description */
};

vigil_metric_catalog *vigil_metric_catalog_new(void);
void vigil_metric_catalog_free(vigil_metric_catalog *catalog);

/* Registers a metric, or returns the id it already has when registered
 * again with the same description. A name registered again with another
 * unit, kind, source or origin is an error, as is a malformed name.
 * Returns 0 and sets error on failure. */
uint32_t vigil_metric_register(vigil_metric_catalog *catalog, const char *name, const char *unit,
                               enum vigil_metric_kind kind, const char *source,
                               enum vigil_metric_origin origin, GError **error);

const struct vigil_metric_desc *vigil_metric_get(const vigil_metric_catalog *catalog, uint32_t id);
const struct vigil_metric_desc *vigil_metric_lookup(const vigil_metric_catalog *catalog,
                                                    const char *name);
uint32_t vigil_metric_count(const vigil_metric_catalog *catalog);

bool vigil_metric_name_is_valid(const char *name);
const char *vigil_metric_kind_name(enum vigil_metric_kind kind);       /* "counter", "gauge" */
const char *vigil_metric_origin_name(enum vigil_metric_origin origin); /* "measured", "estimated" */

#endif
