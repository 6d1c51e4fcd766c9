/* vigil — the plugin registry: finds "KIND-NAME.so" in the plugin
 * directory, loads it with GModule and checks its descriptor before anything
 * in it is used. */
#include <string.h>

#include "name_table.h"
#include "vigil-build.h"
#include "vigil/plugin.h"

GQuark vigil_plugin_error_quark(void)
{
    return g_quark_from_static_string("vigil-plugin-error-quark");
}

static const char *const kind_names[VIGIL_PLUGIN_KIND_COUNT + 1] = {
    [VIGIL_PLUGIN_PROVIDER] = "provider",
    [VIGIL_PLUGIN_ADPI] = "adpi",
    [VIGIL_PLUGIN_REASONER] = "reasoner",
    [VIGIL_PLUGIN_REPORTER] = "reporter",
};

struct loaded_plugin {
    struct vigil_plugin plugin; /* first: handed out as a struct vigil_plugin * */
    GModule *module;
};

struct vigil_plugin_registry {
    char *directory;
    GHashTable *loaded; /* "KIND-NAME" → struct loaded_plugin * */
};

const char *vigil_plugin_kind_name(unsigned kind)
{
    return kind <= VIGIL_PLUGIN_KIND_COUNT ? kind_names[kind] : NULL;
}

unsigned vigil_plugin_kind_from_name(const char *name)
{
    return name_table_find(kind_names, VIGIL_PLUGIN_KIND_COUNT, name);
}

static void loaded_plugin_free(gpointer data)
{
    struct loaded_plugin *lp = data;
    g_module_close(lp->module);
    g_free(lp->plugin.path);
    g_free(lp);
}

vigil_plugin_registry *vigil_plugin_registry_new(const char *directory)
{
    vigil_plugin_registry *r = g_new0(vigil_plugin_registry, 1);
    r->directory = g_strdup(directory);
    r->loaded = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, loaded_plugin_free);
    return r;
}

void vigil_plugin_registry_free(vigil_plugin_registry *r)
{
    if (r == NULL)
        return;
    g_hash_table_destroy(r->loaded);
    g_free(r->directory);
    g_free(r);
}

/* Plugin names become file names: keep them to [a-z0-9-] so that no name
 * can reach outside the plugin directory. */
static gboolean name_is_valid(const char *name)
{
    if (name == NULL || name[0] == '\0' || strlen(name) > 64)
        return FALSE;
    for (const char *p = name; *p; p++)
        if (!g_ascii_islower(*p) && !g_ascii_isdigit(*p) && *p != '-')
            return FALSE;
    return TRUE;
}

/* g_ptr_array_sort hands the comparator pointers to the elements. */
static gint compare_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char **vigil_plugin_registry_list(const vigil_plugin_registry *r, enum vigil_plugin_kind kind)
{
    GPtrArray *names = g_ptr_array_new();
    const char *kind_name = vigil_plugin_kind_name(kind);
    GDir *dir = kind_name ? g_dir_open(r->directory, 0, NULL) : NULL;
    if (dir != NULL) {
        char *prefix = g_strconcat(kind_name, "-", NULL);
        const char *file;
        while ((file = g_dir_read_name(dir)) != NULL) {
            if (g_str_has_prefix(file, prefix) && g_str_has_suffix(file, ".so")) {
                size_t len = strlen(file) - strlen(prefix) - strlen(".so");
                if (len > 0)
                    g_ptr_array_add(names, g_strndup(file + strlen(prefix), len));
            }
        }
        g_free(prefix);
        g_dir_close(dir);
    }
    g_ptr_array_sort(names, compare_names);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

static void set_not_found(const vigil_plugin_registry *r, enum vigil_plugin_kind kind,
                          const char *name, const char *path, GError **error)
{
    char **available = vigil_plugin_registry_list(r, kind);
    char *list = g_strjoinv(", ", available);
    g_set_error(error, VIGIL_PLUGIN_ERROR, VIGIL_PLUGIN_ERROR_NOT_FOUND,
                "no %s plugin '%s': %s does not exist (%s plugins in %s: %s)",
                vigil_plugin_kind_name(kind), name, path, vigil_plugin_kind_name(kind),
                r->directory, available[0] ? list : "none");
    g_free(list);
    g_strfreev(available);
}

/* Checks what the module says about itself against what its file name says
 * and against what the registry needs to call it. */
static gboolean descriptor_is_valid(const struct vigil_plugin_descriptor *d,
                                    enum vigil_plugin_kind kind, const char *name, const char *path,
                                    GError **error)
{
    if (d->abi_version != VIGIL_PLUGIN_ABI_VERSION) {
        g_set_error(error, VIGIL_PLUGIN_ERROR, VIGIL_PLUGIN_ERROR_ABI,
                    "%s was built for plugin ABI %u, and this vigil loads ABI %u: rebuild it "
                    "against this vigil's headers",
                    path, d->abi_version, VIGIL_PLUGIN_ABI_VERSION);
        return FALSE;
    }
    if (d->kind != kind || d->name == NULL || strcmp(d->name, name) != 0) {
        g_set_error(error, VIGIL_PLUGIN_ERROR, VIGIL_PLUGIN_ERROR_DESCRIPTOR,
                    "%s says it is the %s plugin '%s', but its file name says %s '%s'", path,
                    vigil_plugin_kind_name(d->kind) ? vigil_plugin_kind_name(d->kind)
                                                    : "unknown-kind",
                    d->name ? d->name : "(none)", vigil_plugin_kind_name(kind), name);
        return FALSE;
    }
    if (d->create == NULL || d->destroy == NULL ||
        (d->settings != NULL &&
         ((d->settings->n_keys > 0 && d->settings->keys == NULL) || d->settings->size == 0))) {
        g_set_error(error, VIGIL_PLUGIN_ERROR, VIGIL_PLUGIN_ERROR_DESCRIPTOR,
                    "%s: its descriptor lacks create, destroy or its settings' keys", path);
        return FALSE;
    }
    return TRUE;
}

const struct vigil_plugin *vigil_plugin_registry_load(vigil_plugin_registry *r,
                                                      enum vigil_plugin_kind kind, const char *name,
                                                      GError **error)
{
    const char *kind_name = vigil_plugin_kind_name(kind);
    if (kind_name == NULL || !name_is_valid(name)) {
        g_set_error(error, VIGIL_PLUGIN_ERROR, VIGIL_PLUGIN_ERROR_NOT_FOUND,
                    "'%s' is not a plugin name: names use a-z, 0-9 and '-'",
                    name ? name : "(null)");
        return NULL;
    }
    char *key = g_strconcat(kind_name, "-", name, NULL);
    struct loaded_plugin *lp = g_hash_table_lookup(r->loaded, key);
    if (lp != NULL) {
        g_free(key);
        return &lp->plugin;
    }
    char *file = g_strconcat(key, ".so", NULL);
    char *path = g_build_filename(r->directory, file, NULL);
    g_free(file);
    GModule *module = NULL;
    gpointer symbol = NULL;

    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        set_not_found(r, kind, name, path, error);
        goto fail;
    }
    /* Bind every symbol now, so a plugin with an unresolved symbol fails
     * here with a message rather than later with a crash; keep its symbols
     * local so that two plugins cannot clash. */
    module = g_module_open(path, G_MODULE_BIND_LOCAL);
    if (module == NULL) {
        g_set_error(error, VIGIL_PLUGIN_ERROR, VIGIL_PLUGIN_ERROR_LOAD, "cannot load %s: %s", path,
                    g_module_error());
        goto fail;
    }
    if (!g_module_symbol(module, VIGIL_PLUGIN_SYMBOL, &symbol) || symbol == NULL) {
        g_set_error(error, VIGIL_PLUGIN_ERROR, VIGIL_PLUGIN_ERROR_NO_SYMBOL,
                    "%s does not export %s: it is not a vigil plugin", path, VIGIL_PLUGIN_SYMBOL);
        goto fail;
    }
    if (!descriptor_is_valid(symbol, kind, name, path, error))
        goto fail;

    lp = g_new0(struct loaded_plugin, 1);
    lp->plugin.descriptor = symbol;
    lp->plugin.path = path;
    lp->module = module;
    g_hash_table_insert(r->loaded, key, lp);
    return &lp->plugin;

fail:
    if (module != NULL)
        g_module_close(module);
    g_free(path);
    g_free(key);
    return NULL;
}

gboolean vigil_plugin_registry_resolve_section(vigil_config *config, const char *section,
                                               gpointer user_data, GError **error)
{
    vigil_plugin_registry *r = user_data;
    const char *dot = strchr(section, '.');
    if (dot == NULL)
        return FALSE; /* not a plugin's section: the loader reports it as unknown */
    char *kind_name = g_strndup(section, (gsize)(dot - section));
    unsigned kind = vigil_plugin_kind_from_name(kind_name);
    g_free(kind_name);
    if (kind == 0)
        return FALSE;
    const struct vigil_plugin *plugin = vigil_plugin_registry_load(r, kind, dot + 1, error);
    if (plugin == NULL)
        return FALSE;
    const struct vigil_plugin_descriptor *d = plugin->descriptor;
    if (d->settings == NULL)
        return vigil_config_declare(config, section, NULL, 0, error);
    return vigil_settings_declare(config, d->settings, section, error);
}

gboolean vigil_plugin_settings_load(const struct vigil_plugin_context *context,
                                    const struct vigil_settings_table *table, void *settings,
                                    GError **error)
{
    if (!vigil_settings_fill_section(context->config, context->section, settings, table->size,
                                     error))
        return FALSE;
    if (table->check == NULL || table->check(settings, context->section, context->config, error))
        return TRUE;
    vigil_settings_clear(table, settings);
    return FALSE;
}

gboolean vigil_plugin_settings_reload(const struct vigil_plugin_context *context,
                                      const struct vigil_settings_table *table, void *settings,
                                      GError **error)
{
    void *fresh = g_malloc0(table->size);
    gboolean ok = vigil_plugin_settings_load(context, table, fresh, error);
    if (ok) {
        vigil_settings_clear(table, settings);
        memcpy(settings, fresh, table->size);
    }
    g_free(fresh);
    return ok;
}

char *vigil_program_directory(void)
{
    char *exe = g_file_read_link("/proc/self/exe", NULL);
    char *dir = exe ? g_path_get_dirname(exe) : g_strdup(".");
    g_free(exe);
    return dir;
}

char *vigil_plugin_default_directory(void)
{
    const char *from_env = g_getenv("VIGIL_PLUGIN_DIR");
    if (from_env != NULL && from_env[0] != '\0')
        return g_strdup(from_env);
    char *dir = vigil_program_directory();
    char *candidates[] = {
        g_build_filename(dir, "..", "plugins", NULL),
        g_build_filename(dir, VIGIL_PLUGINS_FROM_BINDIR, NULL),
    };
    char *found = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(candidates); i++) {
        if (found == NULL && g_file_test(candidates[i], G_FILE_TEST_IS_DIR))
            found = g_canonicalize_filename(candidates[i], NULL);
        g_free(candidates[i]);
    }
    g_free(dir);
    return found != NULL ? found : g_strdup(VIGIL_PLUGIN_DIR);
}

char *vigil_plugin_config_text(const vigil_config *config, const struct vigil_plugin *plugin,
                               const char *section)
{
    GString *text = g_string_new(NULL);
    const struct vigil_settings_table *table = plugin->descriptor->settings;
    for (size_t i = 0; table != NULL && i < table->n_keys; i++) {
        char *value = vigil_config_value_text(config, section, table->keys[i].name);
        g_string_append_printf(text, "%s=%s\n", table->keys[i].name, value);
        g_free(value);
    }
    return g_string_free(text, FALSE);
}
