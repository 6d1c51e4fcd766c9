/* vigil — what the ADPIs that judge I/O operations share (call-rate,
 * latency-histogram): their settings, loaded from their table and reloaded
 * by reconfigure(), whose `operations` globs choose the operations judged.
 *
 * Such an ADPI's instance starts with a struct adpi_op_instance
 * (ADPI_OP_INSTANCE checks it), so that its ops and descriptor can point
 * at the shared functions below. */
#ifndef VIGIL_ADPI_OP_INSTANCE_H
#define VIGIL_ADPI_OP_INSTANCE_H

#include "vigil/adpi.h"
#include "vigil/ontology.h"
#include "vigil/plugin.h"

#include "adpi_settings.h"

struct adpi_op_instance {
    struct adpi_settings settings;
    char ***operations;                   /* its `operations` key's field */
    gboolean judged[VIGIL_OP_MAX_ID + 1]; /* matches `operations` */
};

/* Fails the build when `type` does not start with its adpi_op_instance. */
#define ADPI_OP_INSTANCE(type) G_STATIC_ASSERT(G_STRUCT_OFFSET(type, base) == 0)

/* Loads the settings into `settings`, whose field `operations` chooses the
 * operations judged. Returns the instance that starts with `base`, or
 * frees it (a g_new0 one) and returns NULL with `error` set when the
 * settings do not load. */
void *adpi_op_instance_init(struct adpi_op_instance *base, const struct vigil_settings_table *table,
                            void *settings, char ***operations,
                            const struct vigil_plugin_context *ctx, GError **error);

/* The descriptor's destroy: clears the settings, frees the instance. */
void adpi_op_instance_destroy(void *instance);

/* The ops' reconfigure: the new settings and the operations they choose;
 * FALSE with `error` set keeps the old ones. */
gboolean adpi_op_instance_reconfigure(void *instance, const struct vigil_plugin_context *ctx,
                                      GError **error);

#endif
