/* vigil — the likwid source of a vigil built where likwid.h or liblikwid
 * was not found: always unavailable, saying so. */
#include "energy_source.h"

static void *absent_start(const struct energy_settings *settings, vigil_metric_catalog *catalog,
                          GError **error)
{
    (void)settings;
    (void)catalog;
    g_set_error_literal(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                        "vigil was built without likwid");
    return NULL;
}

static gboolean absent_read(void *state, uint64_t now_ns, const struct vigil_sample_sink *sink,
                            GError **error)
{
    (void)state;
    (void)now_ns;
    (void)sink;
    g_set_error_literal(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                        "vigil was built without likwid");
    return FALSE;
}

static void absent_stop(void *state)
{
    (void)state;
}

const struct energy_source energy_source_likwid =
    ENERGY_SOURCE("likwid", .start = absent_start, .read = absent_read, .stop = absent_stop);
