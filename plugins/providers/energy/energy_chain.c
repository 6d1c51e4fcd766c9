/* vigil — the energy provider's chain of sources: the `sources` key's
 * names tried in order, the first that starts kept, and why each one
 * before it could not, for the log and `vigil status`. */
#include <string.h>

#include "energy_source.h"

static const struct energy_source *const all_sources[] = {
    &energy_source_likwid,
    &energy_source_powercap,
    &energy_source_estimate,
};

const struct energy_source *energy_source_find(const char *name)
{
    for (size_t i = 0; i < G_N_ELEMENTS(all_sources); i++)
        if (g_strcmp0(all_sources[i]->name, name) == 0)
            return all_sources[i];
    return NULL;
}

static void make_note(struct energy_chain *chain)
{
    GString *note = g_string_new(chain->active->origin);
    if (chain->active == &energy_source_estimate)
        g_string_append(note, " (estimated)");
    const char *own = chain->active->note != NULL ? chain->active->note(chain->state) : NULL;
    if (own != NULL)
        g_string_append_printf(note, ", %s", own);
    for (guint i = 0; i < chain->reasons->len; i++)
        g_string_append_printf(note, "%s%s", i == 0 ? "; not used: " : "; ",
                               (const char *)g_ptr_array_index(chain->reasons, i));
    g_free(chain->note);
    chain->note = g_string_free(note, FALSE);
}

gboolean energy_chain_start(struct energy_chain *chain, const char *const *names,
                            const struct energy_settings *settings, vigil_metric_catalog *catalog,
                            GError **error)
{
    memset(chain, 0, sizeof *chain);
    chain->reasons = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; names != NULL && names[i] != NULL; i++) {
        const struct energy_source *source = energy_source_find(names[i]);
        GError *source_error = NULL;
        void *state = NULL;
        if (source == NULL)
            g_set_error(&source_error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                        "no such energy source");
        else
            state = source->start(settings, catalog, &source_error);
        if (state != NULL) {
            chain->active = source;
            chain->state = state;
            make_note(chain);
            g_message("energy from %s", chain->note);
            return TRUE;
        }
        char *reason = g_strdup_printf("%s: %s", names[i], source_error->message);
        g_message("energy source %s", reason);
        g_ptr_array_add(chain->reasons, reason);
        g_error_free(source_error);
    }
    GString *all = g_string_new("no energy source can run here");
    for (guint i = 0; i < chain->reasons->len; i++)
        g_string_append_printf(all, "; %s", (const char *)g_ptr_array_index(chain->reasons, i));
    g_set_error_literal(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE, all->str);
    g_string_free(all, TRUE);
    return FALSE;
}

gboolean energy_chain_read(struct energy_chain *chain, uint64_t now_ns,
                           const struct vigil_sample_sink *sink, GError **error)
{
    if (chain->active == NULL) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                    "the energy provider was read before it started");
        return FALSE;
    }
    return chain->active->read(chain->state, now_ns, sink, error);
}

const char *energy_chain_note(const struct energy_chain *chain)
{
    return chain->note;
}

void energy_chain_clear(struct energy_chain *chain)
{
    if (chain->active != NULL)
        chain->active->stop(chain->state);
    if (chain->reasons != NULL)
        g_ptr_array_unref(chain->reasons);
    g_free(chain->note);
    memset(chain, 0, sizeof *chain);
}

gboolean energy_read_zones(void *state, const GPtrArray *zones, energy_zone_read_fn read_zone,
                           uint64_t now_ns, const struct vigil_sample_sink *sink, GError **error)
{
    GError *first_error = NULL;
    for (guint i = 0; i < zones->len; i++) {
        GError *zone_error = NULL;
        if (!read_zone(state, g_ptr_array_index(zones, i), now_ns, sink, &zone_error)) {
            if (first_error == NULL)
                first_error = zone_error;
            else
                g_error_free(zone_error);
        }
    }
    if (first_error == NULL)
        return TRUE;
    g_propagate_error(error, first_error);
    return FALSE;
}
