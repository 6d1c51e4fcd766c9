/* vigil config example: every section and key vigil knows (the built-in
 * key tables and every plugin in the plugin directory), each key commented
 * out with its default, what it accepts and its description. The same
 * declarations give the per-key part of the vigil.conf(5) manual
 * (--format scdoc), so the file, the manual and `vigil config check`
 * cannot disagree. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "config_example.h"
#include "vigil/config.h"
#include "vigil/plugin.h"
#include "vigil/schema.h"

/* What the built-in sections are for; a plugin's section says it with
 * its descriptor's description. */
static const struct {
    const char *section;
    const char *about;
} core_sections[] = {
    {"log", "How every vigil program logs."},
    {"preload", "What `vigil run` tells the I/O interposer (libvigil-preload.so)."},
    {"daemon", "vigild, the node daemon."},
    {"capture", "What vigild forwards of the activities it drains from the processes."},
    {"uplink", "vigild's link to vigil-txd, and its disk spool while vigil-txd cannot be reached."},
    {"txd", "vigil-txd, the transaction server that stores what the nodes send."},
    {"warehouse", "How vigil-txd, vigil-web and the `vigil` command reach PostgreSQL."},
    {"web", "vigil-web, the web UI and its JSON API."},
    {"advise", "`vigil advise`: CPU frequency advice from the Fluid model."},
    {"metrics", "vigild's Prometheus endpoint, /metrics."},
};

static const char *const file_header =
    "# vigil.conf: every section and key vigil knows, each with its default.\n"
    "#\n"
    "# Made by `vigil config example`. Every key is commented out, so this file\n"
    "# changes nothing as it is: remove the '#' in front of a key to set it,\n"
    "# and in front of its section's header for a plugin's key (a plugin's\n"
    "# section, when present, is loaded by every program that reads the file).\n"
    "# Each key says what it accepts; the default is the value shown.\n"
    "#\n"
    "# Every vigil program reads this file ($VIGIL_CONFIG, else vigil/vigil.conf\n"
    "# in the install's etc folder), then the *.conf files of conf.d/ beside it\n"
    "# in name order (a later file wins). Every key is checked: an unknown\n"
    "# section or key, a wrong type or a value out of range is an error that\n"
    "# names the file, the section and the key. `vigil config check` shows the\n"
    "# effective configuration. See vigil.conf(5).\n";

struct example {
    vigil_config *config;
    GHashTable *plugin_about; /* section → what the plugin is */
    GString *out;
    const char *only; /* the section whose keys are written now; NULL: none */
    GPtrArray *order; /* the sections, in the order they are written */
    enum vigil_config_example_format format;
};

static const char *section_about(const struct example *example, const char *section)
{
    for (size_t i = 0; i < G_N_ELEMENTS(core_sections); i++)
        if (strcmp(core_sections[i].section, section) == 0)
            return core_sections[i].about;
    return g_hash_table_lookup(example->plugin_about, section);
}

/* The built-in sections in the order of core_sections, then other
 * built-in ones, then the plugins' ("KIND.NAME"), each group by name. */
static int section_rank(const char *section)
{
    for (size_t i = 0; i < G_N_ELEMENTS(core_sections); i++)
        if (strcmp(core_sections[i].section, section) == 0)
            return (int)i;
    return strchr(section, '.') == NULL ? (int)G_N_ELEMENTS(core_sections)
                                        : (int)G_N_ELEMENTS(core_sections) + 1;
}

static int compare_sections(gconstpointer a, gconstpointer b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int rank_x = section_rank(x), rank_y = section_rank(y);
    return rank_x != rank_y ? rank_x - rank_y : strcmp(x, y);
}

/* ---- the commented configuration file ------------------------------------ */

/* Comment lines of 78 columns at most, broken between words (a word
 * longer than that stays whole). */
static void append_comment(GString *out, const char *text)
{
    enum { width = 78 - 2 };
    char **lines = g_strsplit(text, "\n", -1);
    for (char **line = lines; *line != NULL; line++) {
        char **words = g_strsplit(*line, " ", -1);
        size_t used = 0;
        g_string_append(out, "#");
        for (char **word = words; *word != NULL; word++) {
            size_t length = g_utf8_strlen(*word, -1);
            if (used > 0 && used + 1 + length > width) {
                g_string_append(out, "\n#");
                used = 0;
            }
            g_string_append_printf(out, " %s", *word);
            used += (used > 0) + length;
        }
        g_string_append_c(out, '\n');
        g_strfreev(words);
    }
    g_strfreev(lines);
}

/* A plugin's section header is commented out too: a section that is present
 * makes every program that reads the file (each `vigil run` among them)
 * load the plugin to check its keys, which costs a user's run a fifth of a
 * second with all of them. Remove the '#' of the header with its keys'. */
static void ini_section(struct example *example, const char *section)
{
    bool is_plugin = g_hash_table_contains(example->plugin_about, section);
    g_string_append_printf(example->out, "\n%s[%s]\n", is_plugin ? "#" : "", section);
    const char *about = section_about(example, section);
    if (about != NULL)
        append_comment(example->out, about);
}

static void ini_key(struct example *example, const struct vigil_config_key *key)
{
    GString *out = example->out;
    g_string_append_c(out, '\n');
    if (key->description != NULL)
        append_comment(out, key->description);
    char *accepted = vigil_config_key_accepts(key);
    append_comment(out, accepted);
    g_free(accepted);
    /* The default as a file holds it; no blank after '=' when it is empty,
     * which GKeyFile reads as the empty text. */
    if (key->default_value[0] == '\0')
        g_string_append_printf(out, "#%s =\n", key->name);
    else
        g_string_append_printf(out, "#%s = %s\n", key->name, key->default_value);
}

/* ---- the per-key part of vigil.conf(5) ------------------------------------ */

/* scdoc's inline markup (*bold*, _underline_, \) taken literally, and
 * `quoted commands` in bold; one line, so that none begins with what
 * scdoc reads as a table, a list or a literal block. */
static void scdoc_append(GString *out, const char *text)
{
    for (const char *p = text; *p != '\0'; p++) {
        if (*p == '\n') {
            g_string_append_c(out, ' ');
            continue;
        }
        if (*p == '`') {
            g_string_append_c(out, '*');
            continue;
        }
        if (*p == '*' || *p == '_' || *p == '\\')
            g_string_append_c(out, '\\');
        g_string_append_c(out, *p);
    }
}

static void scdoc_section(struct example *example, const char *section)
{
    g_string_append_printf(example->out, "## [%s]\n\n", section);
    const char *about = section_about(example, section);
    if (about != NULL) {
        scdoc_append(example->out, about);
        g_string_append(example->out, "\n\n");
    }
}

static void scdoc_key(struct example *example, const struct vigil_config_key *key)
{
    GString *out = example->out;
    g_string_append(out, "*");
    scdoc_append(out, key->name);
    g_string_append(out, "* = ");
    if (key->default_value[0] == '\0')
        g_string_append(out, "(empty)");
    else {
        g_string_append(out, "_");
        scdoc_append(out, key->default_value);
        g_string_append(out, "_");
    }
    g_string_append(out, "\n\t");
    if (key->description != NULL && key->description[0] != '\0') {
        /* Capitalised: it begins a sentence here. */
        char *sentence = g_strdup(key->description);
        sentence[0] = g_ascii_toupper(sentence[0]);
        scdoc_append(out, sentence);
        g_string_append(out, ". ");
        g_free(sentence);
    }
    char *accepted = vigil_config_key_accepts(key);
    accepted[0] = g_ascii_toupper(accepted[0]);
    scdoc_append(out, accepted);
    g_string_append(out, ".\n\n");
    g_free(accepted);
}

static void visit_key(const struct vigil_config_key *key, gpointer user_data)
{
    struct example *example = user_data;
    if (example->only == NULL) {
        if (example->order->len == 0 ||
            strcmp(g_ptr_array_index(example->order, example->order->len - 1), key->section) != 0)
            g_ptr_array_add(example->order, g_strdup(key->section));
        return;
    }
    if (strcmp(key->section, example->only) != 0)
        return;
    (example->format == VIGIL_CONFIG_EXAMPLE_SCDOC ? scdoc_key : ini_key)(example, key);
}

/* The sections in the order they are written: every one with keys, and
 * the plugins' without any (their header still says the plugin is there). */
static void order_sections(struct example *example)
{
    vigil_config_foreach_key(example->config, visit_key, example);
    GHashTableIter iter;
    gpointer section;
    g_hash_table_iter_init(&iter, example->plugin_about);
    while (g_hash_table_iter_next(&iter, &section, NULL)) {
        gboolean listed = FALSE;
        for (guint i = 0; i < example->order->len && !listed; i++)
            listed = strcmp(g_ptr_array_index(example->order, i), section) == 0;
        if (!listed)
            g_ptr_array_add(example->order, g_strdup(section));
    }
    g_ptr_array_sort(example->order, compare_sections);
}

/* Declares every plugin's section, as `vigil config check` would on
 * meeting it; a plugin that cannot be loaded is an error. */
static gboolean declare_plugins(struct example *example, vigil_plugin_registry *registry,
                                const char *plugin_dir, GError **error)
{
    guint found = 0;
    for (unsigned kind = 1; kind <= VIGIL_PLUGIN_KIND_COUNT; kind++) {
        char **names = vigil_plugin_registry_list(registry, kind);
        for (char **name = names; *name != NULL; name++) {
            char *section = g_strdup_printf("%s.%s", vigil_plugin_kind_name(kind), *name);
            const struct vigil_plugin *plugin =
                vigil_plugin_registry_load(registry, kind, *name, error);
            if (plugin == NULL ||
                !vigil_plugin_registry_resolve_section(example->config, section, registry, error)) {
                g_free(section);
                g_strfreev(names);
                return FALSE;
            }
            const char *description = plugin->descriptor->description;
            g_hash_table_insert(example->plugin_about, section,
                                g_strdup_printf("The %s plugin '%s': %s.",
                                                vigil_plugin_kind_name(kind), *name,
                                                description ? description : "no description"));
        }
        found += g_strv_length(names);
        g_strfreev(names);
    }
    /* Without them the example would lack every plugin's section: a wrong
     * folder, not an example to install. */
    if (found == 0) {
        g_set_error(error, VIGIL_PLUGIN_ERROR, VIGIL_PLUGIN_ERROR_NOT_FOUND,
                    "no plugin in %s (--plugin-dir, $VIGIL_PLUGIN_DIR)", plugin_dir);
        return FALSE;
    }
    return TRUE;
}

char *vigil_config_example(const char *plugin_dir, enum vigil_config_example_format format,
                           GError **error)
{
    vigil_plugin_registry *registry = vigil_plugin_registry_new(plugin_dir);
    struct example example = {
        .config = vigil_config_new(),
        .plugin_about = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
        .out = g_string_new(format == VIGIL_CONFIG_EXAMPLE_INI ? file_header : NULL),
        .format = format,
        .order = g_ptr_array_new_with_free_func(g_free),
    };
    char *text = NULL;
    if (vigil_schema_declare(example.config, error) &&
        declare_plugins(&example, registry, plugin_dir, error)) {
        order_sections(&example);
        for (guint i = 0; i < example.order->len; i++) {
            example.only = g_ptr_array_index(example.order, i);
            (format == VIGIL_CONFIG_EXAMPLE_SCDOC ? scdoc_section : ini_section)(&example,
                                                                                 example.only);
            vigil_config_foreach_key(example.config, visit_key, &example);
        }
        text = g_string_free(example.out, FALSE);
        example.out = NULL;
    }
    if (example.out != NULL)
        g_string_free(example.out, TRUE);
    g_ptr_array_free(example.order, TRUE);
    g_hash_table_destroy(example.plugin_about);
    vigil_config_free(example.config);
    vigil_plugin_registry_free(registry);
    return text;
}
