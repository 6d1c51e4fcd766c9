/* vigil — a declared key as the configuration keeps it: shared by config.c,
 * which declares, loads and checks keys, and settings.c, which copies their
 * values into settings structs. Private to the core. */
#ifndef VIGIL_CONFIG_KEY_H
#define VIGIL_CONFIG_KEY_H

#include <stdbool.h>
#include <glib.h>

#include "vigil/config.h"

/* A parsed value; only the field of the key's type is used. Keeping all
 * of them lets values be freed without looking at the type. */
struct value {
    gboolean b;
    gint64 i;
    double d;
    char *s;     /* STRING and ENUM */
    char **list; /* LIST */
};

/* Everything is copied from the declaration so that a plugin module that
 * declared keys can be unloaded. */
struct key {
    char *name;
    enum vigil_config_type type;
    char *default_value;
    double min;
    double max;
    char **choices; /* ENUM */
    char *description;
    struct value fallback; /* the default, parsed once */
    struct value value;
    char *source; /* NULL while the value is the default */
    bool redact_password;
    size_t offset; /* the field it fills, when storage is not UNBOUND */
    enum vigil_setting_storage storage;
};

/* Declares keys as vigil_config_declare does; with a settings_size, the
 * section's values can fill a settings struct of that size, and every bound
 * field must lie within it. */
gboolean vigil_config_declare_sized(vigil_config *config, const char *section,
                                    const struct vigil_config_key *keys, size_t n_keys,
                                    size_t settings_size, GError **error);

/* The keys of `section` (struct key *, in declaration order) and the size of
 * the settings struct they fill (0: none); NULL when it is not declared. */
const GPtrArray *vigil_config_section_keys(const vigil_config *config, const char *section,
                                           size_t *settings_size);

/* Why `decl` cannot fill its field (a type the key's cannot go into, a
 * range the field cannot hold, a field past `settings_size` when that is not
 * 0), or NULL when it can or is not bound (settings.c). */
const char *vigil_setting_binding_problem(const struct vigil_config_key *decl,
                                          size_t settings_size);

#endif
