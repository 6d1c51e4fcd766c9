/* libFuzzer target for the configuration loader (core/config.c) with the
 * real declared keys (vigil_schema_declare) and a section resolver like the
 * plugin registry's.
 *
 * The input is vigil.conf; after a NUL byte, if there is one, comes a
 * drop-in, conf.d/50-fuzz.conf (GKeyFile stops at a NUL anyway). Promises
 * checked: a refusal is a VIGIL_CONFIG_ERROR whose every line names the
 * file it is about; an accepted configuration, written out with
 * vigil_config_to_string, loads back to the same value for every key
 * (passwords excepted: they are written as ***) and is written again the
 * same, plugin sections included. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>

#include "vigil/config.h"
#include "vigil/schema.h"
#include "fuzz_must.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *main_path, *drop_in_dir, *drop_in_path;

static void remove_files(void)
{
    g_unlink(drop_in_path);
    g_rmdir(drop_in_dir);
    g_unlink(main_path);
    char *dir = g_path_get_dirname(main_path);
    g_rmdir(dir);
    g_free(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char *dir = g_dir_make_tmp("fuzz-config-XXXXXX", NULL);
    must(dir != NULL);
    main_path = g_build_filename(dir, "vigil.conf", NULL);
    drop_in_dir = g_build_filename(dir, "conf.d", NULL);
    drop_in_path = g_build_filename(drop_in_dir, "50-fuzz.conf", NULL);
    must(g_mkdir(drop_in_dir, 0700) == 0);
    /* GLib's criticals are programming errors: a finding, not noise. */
    g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
    g_free(dir);
    atexit(remove_files);
    return 0;
}

/* A plugin's keys, as the registry declares them for [adpi.NAME],
 * [provider.NAME] and [reasoner.NAME]; any other unknown section is
 * refused with a reason. */
static const struct vigil_config_key plugin_keys[] = {
    {NULL, "enabled", VIGIL_CONFIG_BOOL, "true", 0, 0, NULL, "Whether it runs.", false, 0, 0},
    {NULL, "window", VIGIL_CONFIG_INT, "10", 1, 3600, NULL, "Cycles it looks back.", false, 0, 0},
    {NULL, "threshold", VIGIL_CONFIG_DOUBLE, "0.5", 0, 1, NULL, "Share that is abnormal.", false, 0,
     0},
    {NULL, "mode", VIGIL_CONFIG_ENUM, "mean", 0, 0, "mean|max|p99", "How it sums up.", false, 0, 0},
    {NULL, "metrics", VIGIL_CONFIG_LIST, "", 0, 0, NULL, "Metrics it reads.", false, 0, 0},
};

static gboolean resolve_plugin_section(vigil_config *config, const char *section,
                                       gpointer user_data, GError **error)
{
    (void)user_data;
    if (!g_str_has_prefix(section, "adpi.") && !g_str_has_prefix(section, "provider.") &&
        !g_str_has_prefix(section, "reasoner.")) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_UNKNOWN_SECTION,
                    "no plugin is called that");
        return FALSE;
    }
    return vigil_config_declare(config, section, plugin_keys, G_N_ELEMENTS(plugin_keys), error);
}

static vigil_config *new_config(void)
{
    vigil_config *config = vigil_config_new();
    must(vigil_schema_declare(config, NULL));
    vigil_config_set_section_resolver(config, resolve_plugin_section, NULL);
    return config;
}

/* Plain stdio: g_file_set_contents syncs to disk, a thousand times too slow. */
static void write_file(const char *path, const char *data, size_t size)
{
    FILE *f = fopen(path, "w");
    must(f != NULL);
    must(fwrite(data, 1, size, f) == size || size == 0);
    must(fclose(f) == 0);
}

/* Every line of a refusal names the file it is about. */
static void check_refusal(const GError *error)
{
    must(error != NULL && error->domain == VIGIL_CONFIG_ERROR && error->message[0] != '\0');
    char **lines = g_strsplit(error->message, "\n", -1);
    for (char **line = lines; *line != NULL; line++)
        must(g_str_has_prefix(*line, main_path) || g_str_has_prefix(*line, drop_in_path) ||
             g_str_has_prefix(*line, "cannot "));
    g_strfreev(lines);
}

/* Every built-in key has the same value in both, compared as text (which
 * reads back exactly, doubles included); a password is shown redacted. */
static void check_same_values(const vigil_config *a, const vigil_config *b)
{
    for (size_t t = 0; vigil_schema_tables[t] != NULL; t++) {
        const struct vigil_settings_table *table = vigil_schema_tables[t];
        for (size_t i = 0; i < table->n_keys; i++) {
            if (table->keys[i].redact_password)
                continue;
            char *x = vigil_config_value_text(a, table->section, table->keys[i].name);
            char *y = vigil_config_value_text(b, table->section, table->keys[i].name);
            must(x != NULL && y != NULL && strcmp(x, y) == 0);
            g_free(y);
            g_free(x);
        }
    }
}

/* The text without its comments (descriptions, and where values came
 * from, which differs once the text itself is the file). */
static char *without_comments(const char *text)
{
    GString *out = g_string_new(NULL);
    char **lines = g_strsplit(text, "\n", -1);
    for (char **line = lines; *line != NULL; line++)
        if ((*line)[0] != '#')
            g_string_append_printf(out, "%s\n", *line);
    g_strfreev(lines);
    return g_string_free(out, FALSE);
}

static void check_written_form_loads_back(const vigil_config *config)
{
    char *text = vigil_config_to_string(config);
    write_file(main_path, text, strlen(text));
    g_unlink(drop_in_path);
    vigil_config *again = new_config();
    GError *error = NULL;
    if (!vigil_config_load(again, main_path, &error))
        abort(); /* its own written form is refused */
    check_same_values(config, again);
    /* Plugin sections and redacted passwords too: written again, the same
     * sections, keys and values. */
    char *text_again = vigil_config_to_string(again);
    char *values = without_comments(text), *values_again = without_comments(text_again);
    must(strcmp(values, values_again) == 0);
    g_free(values_again);
    g_free(values);
    g_free(text_again);
    vigil_config_free(again);
    g_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t main_bytes = nul != NULL ? (size_t)(nul - text) : size;
    write_file(main_path, text, main_bytes);
    if (nul != NULL)
        write_file(drop_in_path, nul + 1, size - main_bytes - 1);
    else
        g_unlink(drop_in_path);

    vigil_config *config = new_config();
    GError *error = NULL;
    if (vigil_config_load(config, main_path, &error))
        check_written_form_loads_back(config);
    else
        check_refusal(error);
    g_clear_error(&error);
    vigil_config_free(config);
    return 0;
}
