/* vigil — what the ADPIs that judge metrics cycle by cycle share
 * (sensor-sanity, statistics-range, energy-efficiency, drift): their
 * settings, loaded from their table and reloaded by reconfigure(), the
 * per-cycle values of their scope's metrics, and their own entry per
 * metric, which `match` derives from the settings (again after a
 * reconfiguration).
 *
 * Such an ADPI's instance starts with a struct adpi_metric_instance
 * (ADPI_METRIC_INSTANCE checks it), so that its ops and descriptor can
 * point at the shared functions below. One that judges each metric on its
 * own gives a `check`, which the shared cycle hands every described metric
 * with its values in the cycle. */
#ifndef VIGIL_ADPI_METRIC_INSTANCE_H
#define VIGIL_ADPI_METRIC_INSTANCE_H

#include "vigil/adpi.h"
#include "vigil/plugin.h"

#include "adpi_settings.h"

/* Judges one described metric of the scope at the end of a cycle: `entry`
 * is the ADPI's own, `values` the metric's in the cycle (NULL while it has
 * had no sample). */
typedef void (*adpi_metric_check_fn)(void *instance, void *entry,
                                     const struct vigil_cycle_metric *values,
                                     const struct vigil_issue_sink *sink);

struct adpi_metric_instance {
    struct adpi_settings settings;
    vigil_adpi_metric_fn match; /* its `user` is the instance */
    adpi_metric_check_fn check; /* NULL: the ADPI closes its cycles itself */
    struct vigil_cycle_values values;
    struct vigil_adpi_metrics metrics; /* the ADPI's entries */
};

/* Fails the build when `type` does not start with its adpi_metric_instance,
 * which the shared functions find at the start of the instance. */
#define ADPI_METRIC_INSTANCE(type) G_STATIC_ASSERT(G_STRUCT_OFFSET(type, base) == 0)

/* Loads the settings into `settings` and makes the tables, with entries of
 * `entry_size` bytes. Returns the instance that starts with `base`, or frees
 * it (a g_new0 one) and returns NULL with `error` set when the settings do
 * not load. */
void *adpi_metric_instance_init(struct adpi_metric_instance *base,
                                const struct vigil_settings_table *table, void *settings,
                                size_t entry_size, vigil_adpi_metric_fn match,
                                adpi_metric_check_fn check, const struct vigil_plugin_context *ctx,
                                GError **error);

/* The descriptor's destroy: clears the settings and the tables, frees the
 * instance. */
void adpi_metric_instance_destroy(void *instance);

/* The ops' samples: describes the samples' metrics not seen before (each
 * entry then goes to `match`) and adds the samples to the cycle's values. */
void adpi_metric_instance_samples(void *instance, const vigil_metric_catalog *catalog,
                                  const struct vigil_sample *samples, size_t n_samples);

/* The ops' reconfigure: the new settings, and every entry matched again
 * against them; FALSE with `error` set keeps the old ones. */
gboolean adpi_metric_instance_reconfigure(void *instance, const struct vigil_plugin_context *ctx,
                                          GError **error);

/* The ops' cycle, for an instance with a `check`: hands it each described
 * metric in id order, then starts the next cycle's values. */
void adpi_metric_instance_cycle(void *instance, uint64_t cycle, uint64_t end_ns,
                                const struct vigil_issue_sink *sink);

/* The ops of an ADPI that needs no more than the functions above. */
extern const struct vigil_adpi_ops adpi_metric_instance_ops;

#endif
