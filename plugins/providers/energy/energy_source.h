/* vigil — the energy provider's sources, private to it (and to its tests
 * and benchmark): each is a way to know the node's joules, tried in the
 * order of the `sources` key until one starts.
 *
 * start() opens what the source reads and registers its metrics, only once
 * everything it needs has been checked, so that a source that cannot run
 * leaves nothing in the catalogue. When it cannot run here it fails with a
 * reason without its name ("/sys/class/powercap absent"): the chain puts
 * "powercap: " before it. */
#ifndef VIGIL_ENERGY_SOURCE_H
#define VIGIL_ENERGY_SOURCE_H

#include <glib.h>

#include "vigil/metric.h"
#include "vigil/provider.h"

#define ENERGY_UJ_PER_J 1e6
#define ENERGY_NS_PER_S 1e9

struct likwid_api; /* likwid_api.h; NULL when vigil was built without likwid */

/* What the sources are given: the provider's keys. */
/* The provider's keys fill all but `likwid` (energy.c's table). */
struct energy_settings {
    char *root;
    char **sources;       /* their names, in order */
    double idle_w, max_w; /* estimate: one socket's power idle and busy */
    gint64 sockets;       /* estimate */
    double max_power_w;   /* powercap, likwid: the most one zone can draw */
    const struct likwid_api *likwid;
};

struct energy_source {
    const char *name;   /* in the `sources` key: "likwid" */
    const char *origin; /* the metrics' source: "energy/likwid" */
    void *(*start)(const struct energy_settings *settings, vigil_metric_catalog *catalog,
                   GError **error);
    gboolean (*read)(void *state, uint64_t now_ns, const struct vigil_sample_sink *sink,
                     GError **error);
    void (*stop)(void *state);
    /* Optional: what the running source wants said in `vigil status` (a
     * domain likwid does not support), or NULL. */
    const char *(*note)(void *state);
};

/* A source's definition: its metrics' origin is "energy/" and its name. */
#define ENERGY_SOURCE(name_, ...)                                                                  \
    {                                                                                              \
        .name = name_, .origin = "energy/" name_, __VA_ARGS__                                      \
    }

extern const struct energy_source energy_source_likwid;
extern const struct energy_source energy_source_powercap;
extern const struct energy_source energy_source_estimate;

/* The source called `name`, or NULL. */
const struct energy_source *energy_source_find(const char *name);

/* The sources of a `sources` list, tried in its order. */
struct energy_chain {
    const struct energy_source *active;
    void *state;
    GPtrArray *reasons; /* char *: why each source before the active one is not used */
    char *note;         /* for `vigil status` */
};

/* Tries `names` in order; the first that starts is active. Each one that
 * cannot is logged with g_message, its reason kept for the note. FALSE
 * (VIGIL_PROVIDER_ERROR_UNAVAILABLE, every reason) when none starts. */
gboolean energy_chain_start(struct energy_chain *chain, const char *const *names,
                            const struct energy_settings *settings, vigil_metric_catalog *catalog,
                            GError **error);
gboolean energy_chain_read(struct energy_chain *chain, uint64_t now_ns,
                           const struct vigil_sample_sink *sink, GError **error);
/* "energy/estimate (estimated); not used: likwid: …; powercap: …". */
const char *energy_chain_note(const struct energy_chain *chain);
void energy_chain_clear(struct energy_chain *chain);

/* One source's zones (RAPL's packages and their domains), each read on its
 * own by `read_zone`, whose `state` is the source's. */
typedef gboolean (*energy_zone_read_fn)(void *state, void *zone, uint64_t now_ns,
                                        const struct vigil_sample_sink *sink, GError **error);
/* Every zone is read even when one fails; FALSE with the error of the
 * first that did. */
gboolean energy_read_zones(void *state, const GPtrArray *zones, energy_zone_read_fn read_zone,
                           uint64_t now_ns, const struct vigil_sample_sink *sink, GError **error);

/* Small files (energy_files.c) ---------------------------------------------------------------- */

/* open(O_RDONLY); -1 with `error` (code) naming the path and why. EACCES on
 * a powercap energy_uj says that Linux made it root-only. */
int energy_open_file(const char *path, int code, GError **error);
/* pread from offset 0 into `text`, NUL-terminated. */
gboolean energy_pread_text(int fd, const char *path, char *text, gsize size, int code,
                           GError **error);
/* The whole of `text` as a whole number, or an error naming `path`. */
gboolean energy_parse_u64(const char *text, const char *path, int code, guint64 *value,
                          GError **error);

#endif
