/* vigil — typed settings: a table of configuration keys, each bound to a
 * field of one settings struct, fills that struct in one call.
 *
 *     struct drift_settings {
 *         guint long_cycles;
 *         char **metrics;
 *     };
 *     static const struct vigil_config_key drift_keys[] = {
 *         {VIGIL_SETTING(struct drift_settings, long_cycles), .type = VIGIL_CONFIG_INT,
 *          .default_value = "60", .min = 2, .max = 100000, .description = "…"},
 *         {VIGIL_SETTING(struct drift_settings, metrics), .type = VIGIL_CONFIG_LIST, …},
 *     };
 *     static const struct vigil_settings_table drift_table =
 *         VIGIL_SETTINGS_TABLE(NULL, struct drift_settings, drift_keys, NULL);
 *
 * The table is both the keys' declaration (name, type, default, range,
 * description) and where each value goes: a default is written once, in the
 * table; a reader names a field, never a key's string; and VIGIL_SETTING
 * names the key after its field, so neither can be renamed alone. Declaring
 * a table checks that each key's type and range fit its field's C type, so
 * a mismatch stops the program at its first declaration, not at a read. */
#ifndef VIGIL_SETTINGS_H
#define VIGIL_SETTINGS_H

#include <stddef.h>
#include <glib.h>

#include "vigil/config.h"

struct vigil_settings_table {
    const char *section;                 /* NULL for a plugin's: its section is "KIND.NAME" */
    const struct vigil_config_key *keys; /* their .section is ignored */
    size_t n_keys;
    size_t size; /* of the settings struct */
    /* What the keys' types cannot say (a rule between two keys, a file a key
     * names), on the filled struct of `section`; the error names the
     * section and key as a bad value's does. Run by vigil_settings_load,
     * vigil_plugin_settings_load and `vigil config check`. NULL: nothing
     * more to check. */
    gboolean (*check)(const void *settings, const char *section, const vigil_config *config,
                      GError **error);
};

#define VIGIL_SETTINGS_TABLE(section_name, settings_type, key_array, check_function)               \
    {                                                                                              \
        .section = (section_name), .keys = (key_array), .n_keys = G_N_ELEMENTS(key_array),         \
        .size = sizeof(settings_type), .check = (check_function)                                   \
    }

/* Declares the table's keys in `section`, or in table->section when it is
 * NULL; fails, as vigil_config_declare does, on a bad declaration or a key
 * that cannot fill its field. */
gboolean vigil_settings_declare(vigil_config *config, const struct vigil_settings_table *table,
                                const char *section, GError **error);

/* Fills `settings` (zeroed first) from the table's section and runs the
 * table's check; on failure nothing is left to clear. Strings and lists are
 * copies: vigil_settings_clear frees them. */
gboolean vigil_settings_load(const vigil_config *config, const struct vigil_settings_table *table,
                             void *settings, GError **error);
/* The same without the check: for a program that warns about what the
 * check refuses and goes on (vigil run). */
gboolean vigil_settings_fill(const vigil_config *config, const struct vigil_settings_table *table,
                             void *settings, GError **error);
/* Fills a struct of `size` bytes from `section`, declared from a table of
 * that size (a plugin's: vigil_plugin_settings_load). */
gboolean vigil_settings_fill_section(const vigil_config *config, const char *section,
                                     void *settings, size_t size, GError **error);

/* Whether the table's section passes the table's check, the struct
 * thrown away after: for a program that checks a section another part
 * reads (vigil config check, vigild's [metrics] at a reload). */
gboolean vigil_settings_check(const vigil_config *config, const struct vigil_settings_table *table,
                              GError **error);

/* The file the value of the key that fills the field at `offset` came
 * from, or NULL when it is the default: for a check's error, which names
 * it as the loader's do. */
const char *vigil_settings_source(const vigil_config *config,
                                  const struct vigil_settings_table *table, size_t offset);

/* Frees the strings and lists of a filled struct, and zeroes it. */
void vigil_settings_clear(const struct vigil_settings_table *table, void *settings);
/* `to` (not filled, or cleared) becomes a copy of `from`. */
void vigil_settings_copy(const struct vigil_settings_table *table, void *to, const void *from);
/* Whether every bound field is equal. */
gboolean vigil_settings_equal(const struct vigil_settings_table *table, const void *a,
                              const void *b);

#endif
