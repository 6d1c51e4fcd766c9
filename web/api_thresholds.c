/* vigil-web — GET /api/v1/thresholds: the ADPI and reasoner settings of
 * the configuration vigil-web was started with (the file the site's
 * vigild read, when they share it), and how often each plugin fired, so
 * admins see what their tuning does. The plugins' sections are declared
 * once at start (web_thresholds_prepare); the config is read-only after. */
#include <string.h>

#include "api.h"
#include "db_pool.h"
#include "json_rows.h"
#include "vigil/config.h"
#include "vigil/plugin.h"
#include "vigil/reasoner.h"

static const char *const reasoner_levels[] = {"process", "node", "system"};

gboolean web_thresholds_prepare(void *config_ptr, void *registry_ptr, GError **error)
{
    vigil_config *config = config_ptr;
    vigil_plugin_registry *registry = registry_ptr;
    static const enum vigil_plugin_kind kinds[] = {VIGIL_PLUGIN_REASONER, VIGIL_PLUGIN_ADPI};
    for (gsize k = 0; k < G_N_ELEMENTS(kinds); k++) {
        char **names = vigil_plugin_registry_list(registry, kinds[k]);
        for (guint i = 0; names != NULL && names[i] != NULL; i++) {
            char *section = g_strdup_printf("%s.%s", vigil_plugin_kind_name(kinds[k]), names[i]);
            gboolean ok = vigil_config_has_section(config, section) ||
                          vigil_plugin_registry_resolve_section(config, section, registry, error);
            g_free(section);
            if (!ok) {
                g_strfreev(names);
                return FALSE;
            }
        }
        g_strfreev(names);
    }
    return TRUE;
}

static JsonObject *plugin_object(const vigil_config *config, const struct vigil_plugin *plugin,
                                 const char *section, gboolean enabled)
{
    JsonObject *o = json_object_new();
    json_object_set_string_member(o, "section", section);
    json_object_set_string_member(o, "description", plugin->descriptor->description);
    json_object_set_boolean_member(o, "enabled", enabled);
    JsonArray *keys = json_array_new();
    const struct vigil_settings_table *table = plugin->descriptor->settings;
    for (size_t i = 0; table != NULL && i < table->n_keys; i++) {
        const struct vigil_config_key *k = &table->keys[i];
        JsonObject *key = json_object_new();
        json_object_set_string_member(key, "name", k->name);
        char *value = vigil_config_value_text(config, section, k->name);
        json_object_set_string_member(key, "value", value);
        g_free(value);
        json_object_set_string_member(key, "default", k->default_value);
        const char *source = vigil_config_source(config, section, k->name);
        if (source != NULL)
            json_object_set_string_member(key, "source", source);
        else
            json_object_set_null_member(key, "source");
        json_object_set_string_member(key, "description", k->description);
        json_array_add_object_element(keys, key);
    }
    json_object_set_array_member(o, "keys", keys);
    json_object_set_int_member(o, "fired", 0);
    json_object_set_array_member(o, "fired_by_metric", json_array_new());
    return o;
}

gboolean web_api_thresholds(struct web_request *req, GError **error)
{
    gint64 from_us = 0, to_us = 0;
    gboolean from_given = FALSE, to_given = FALSE;
    if (!web_param_time(req, "from", &from_us, &from_given, error) ||
        !web_param_time(req, "to", &to_us, &to_given, error) || !web_params_done(req, error))
        return FALSE;
    if (!to_given)
        to_us = g_get_real_time();
    if (!from_given)
        from_us = to_us - 7 * G_TIME_SPAN_DAY;
    const vigil_config *config = req->context->config;
    JsonArray *plugins = json_array_new();
    GHashTable *by_section = g_hash_table_new(g_str_hash, g_str_equal);

    g_mutex_lock(req->context->registry_lock);
    vigil_plugin_registry *registry = req->context->registry;
    GHashTable *enabled = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (gsize l = 0; l < G_N_ELEMENTS(reasoner_levels); l++) {
        char *section = g_strdup_printf("reasoner.%s", reasoner_levels[l]);
        const struct vigil_plugin *plugin =
            vigil_config_has_section(config, section)
                ? vigil_plugin_registry_load(registry, VIGIL_PLUGIN_REASONER, reasoner_levels[l],
                                             NULL)
                : NULL;
        if (plugin != NULL) {
            JsonObject *o = plugin_object(config, plugin, section, TRUE);
            json_array_add_object_element(plugins, o);
            struct vigil_reasoner_settings settings;
            if (vigil_reasoner_settings_load(config, section, &settings, NULL)) {
                for (guint n = 0; settings.adpis != NULL && settings.adpis[n] != NULL; n++)
                    g_hash_table_add(enabled, g_strdup(settings.adpis[n]));
                vigil_reasoner_settings_clear(&settings);
            }
        }
        g_free(section);
    }
    char **adpis = vigil_plugin_registry_list(registry, VIGIL_PLUGIN_ADPI);
    for (guint i = 0; adpis != NULL && adpis[i] != NULL; i++) {
        char *section = g_strdup_printf("adpi.%s", adpis[i]);
        const struct vigil_plugin *plugin =
            vigil_config_has_section(config, section)
                ? vigil_plugin_registry_load(registry, VIGIL_PLUGIN_ADPI, adpis[i], NULL)
                : NULL;
        if (plugin != NULL) {
            JsonObject *o =
                plugin_object(config, plugin, section, g_hash_table_contains(enabled, adpis[i]));
            json_array_add_object_element(plugins, o);
            /* Anomalies name the ADPI by its plugin name. */
            g_hash_table_insert(
                by_section,
                (gpointer)(json_object_get_string_member(o, "section") + strlen("adpi.")), o);
        }
        g_free(section);
    }
    g_mutex_unlock(req->context->registry_lock);
    g_hash_table_unref(enabled);

    char from_buf[24], to_buf[24];
    g_snprintf(from_buf, sizeof from_buf, "%" G_GINT64_FORMAT, from_us);
    g_snprintf(to_buf, sizeof to_buf, "%" G_GINT64_FORMAT, to_us);
    const char *params[] = {from_buf, to_buf};
    PGresult *r = web_db_query(req,
                               "SELECT plugin, metric, count(*) FROM anomalies"
                               " WHERE time >= timestamptz 'epoch' + $1::bigint * interval '1 us'"
                               "   AND time <= timestamptz 'epoch' + $2::bigint * interval '1 us'"
                               " GROUP BY plugin, metric ORDER BY plugin, count(*) DESC, metric",
                               2, params, error);
    gboolean ok = r != NULL;
    for (int i = 0; ok && i < PQntuples(r); i++) {
        JsonObject *o = g_hash_table_lookup(by_section, PQgetvalue(r, i, 0));
        if (o == NULL)
            continue;
        gint64 count = g_ascii_strtoll(PQgetvalue(r, i, 2), NULL, 10);
        json_object_set_int_member(o, "fired", json_object_get_int_member(o, "fired") + count);
        JsonObject *m = json_object_new();
        json_object_set_string_member(m, "metric", PQgetvalue(r, i, 1));
        json_object_set_int_member(m, "count", count);
        json_array_add_object_element(json_object_get_array_member(o, "fired_by_metric"), m);
    }
    if (r != NULL)
        PQclear(r);
    g_hash_table_unref(by_section);
    g_strfreev(adpis);
    if (!ok) {
        json_array_unref(plugins);
        return FALSE;
    }
    JsonObject *out = json_object_new();
    JsonArray *files = json_array_new();
    for (const char *const *f = vigil_config_files(config); f != NULL && *f != NULL; f++)
        json_array_add_string_element(files, *f);
    json_object_set_array_member(out, "config_files", files);
    web_json_set_span(out, from_us, to_us);
    json_object_set_array_member(out, "plugins", plugins);
    web_answer_object(req, out);
    return TRUE;
}
