/* vigil — statistics providers: the plugins that read the node every tick.
 *
 * A provider is a plugin of kind VIGIL_PLUGIN_PROVIDER (plugin.h) whose
 * `ops` point to a struct vigil_provider_ops. vigild creates it from its
 * [provider.NAME] section, starts it once, then calls read() every tick
 * (100 ms by default):
 *
 *   start: registers its metrics in the catalogue (name, unit, counter or
 *          gauge, source, measured or estimated) and opens its files, which
 *          it keeps open and reads with pread. When the provider cannot work
 *          on this machine it fails with a message that says why (no RAPL,
 *          permission denied on energy_uj…): the daemon logs it once and
 *          runs on without it.
 *   read:  reads its files once and hands each value to the sink, with the
 *          metric id it registered. A metric that appears later (a disk
 *          plugged in) is registered when it is first seen.
 *
 * Every provider reads under a root directory from its configuration
 * (proc_root, sys_root…), "/" on a real node: the tests point it at
 * fixture trees whose files they write. */
#ifndef VIGIL_PROVIDER_H
#define VIGIL_PROVIDER_H

#include <glib.h>

#include "vigil/metric.h"

/* Where a provider's values go. */
struct vigil_sample_sink {
    void (*emit)(void *user, uint32_t metric_id, double value, uint32_t flags);
    void *user;
};

static inline void vigil_sample_emit(const struct vigil_sample_sink *sink, uint32_t metric_id,
                                     double value, uint32_t flags)
{
    sink->emit(sink->user, metric_id, value, flags);
}

struct vigil_provider_ops {
    gboolean (*start)(void *instance, vigil_metric_catalog *catalog, GError **error);
    /* `now_ns`: CLOCK_MONOTONIC of this tick, for providers that integrate
     * over time (an energy estimate, a wrap check). */
    gboolean (*read)(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                     const struct vigil_sample_sink *sink, GError **error);
};

#define VIGIL_PROVIDER_ERROR (vigil_provider_error_quark())
GQuark vigil_provider_error_quark(void);

enum vigil_provider_error_code {
    VIGIL_PROVIDER_ERROR_UNAVAILABLE, /* not on this machine: the message says why */
    VIGIL_PROVIDER_ERROR_READ,        /* a read or a parse failed */
};

/* Reads a whole small file (a /proc or /sys file) from an open descriptor
 * with pread at offset 0 into `buffer` (NUL-terminated); returns its length,
 * or -1 with errno set. Files that grow past `size` - 1 are cut short. */
gssize vigil_provider_pread_all(int fd, char *buffer, gsize size);

/* The path of `relative` under a provider's root ("/" + "proc/stat"). */
char *vigil_provider_path(const char *root, const char *relative);

#endif
