/* vigil — what the ADPIs that judge metrics cycle by cycle share
 * (adpi_metric_instance.h). */
#include "adpi_metric_instance.h"

void *adpi_metric_instance_init(struct adpi_metric_instance *base,
                                const struct vigil_settings_table *table, void *settings,
                                size_t entry_size, vigil_adpi_metric_fn match,
                                adpi_metric_check_fn check, const struct vigil_plugin_context *ctx,
                                GError **error)
{
    if (!adpi_settings_load(&base->settings, table, settings, ctx, error)) {
        g_free(base);
        return NULL;
    }
    base->match = match;
    base->check = check;
    vigil_cycle_values_init(&base->values);
    vigil_adpi_metrics_init(&base->metrics, entry_size);
    return base;
}

void adpi_metric_instance_destroy(void *instance)
{
    struct adpi_metric_instance *base = instance;
    adpi_settings_clear(&base->settings);
    vigil_cycle_values_clear(&base->values);
    vigil_adpi_metrics_clear(&base->metrics);
    g_free(base);
}

void adpi_metric_instance_samples(void *instance, const vigil_metric_catalog *catalog,
                                  const struct vigil_sample *samples, size_t n_samples)
{
    struct adpi_metric_instance *base = instance;
    vigil_adpi_metrics_see(&base->metrics, catalog, samples, n_samples, base->match, instance);
    vigil_cycle_values_add(&base->values, catalog, samples, n_samples);
}

gboolean adpi_metric_instance_reconfigure(void *instance, const struct vigil_plugin_context *ctx,
                                          GError **error)
{
    struct adpi_metric_instance *base = instance;
    if (!adpi_settings_reload(&base->settings, ctx, error))
        return FALSE;
    vigil_adpi_metrics_rematch(&base->metrics, base->match, instance);
    return TRUE;
}

void adpi_metric_instance_cycle(void *instance, uint64_t cycle, uint64_t end_ns,
                                const struct vigil_issue_sink *sink)
{
    (void)cycle;
    (void)end_ns;
    struct adpi_metric_instance *base = instance;
    for (uint32_t id = 1; id < vigil_adpi_metrics_end(&base->metrics); id++) {
        void *entry = vigil_adpi_metrics_get(&base->metrics, id);
        if (entry != NULL)
            base->check(instance, entry, vigil_cycle_values_get(&base->values, id), sink);
    }
    vigil_cycle_values_next(&base->values);
}

const struct vigil_adpi_ops adpi_metric_instance_ops = {
    .samples = adpi_metric_instance_samples,
    .cycle = adpi_metric_instance_cycle,
    .reconfigure = adpi_metric_instance_reconfigure,
};
