/* vigil — configuration: GKeyFile (INI) files checked against declared keys.
 *
 * Each part of vigil declares the keys it reads (section, name, type,
 * default, range, one-line description). vigil_config_load reads
 * `vigil.conf`, then the `.conf` files in `conf.d/` beside it, in name order; a later
 * file wins. Every problem is reported, not just the first: an unknown
 * section or key (with the closest known name as a suggestion), a value of
 * the wrong type or out of range, a file GKeyFile cannot parse. Each message
 * names the file, the section and the key.
 *
 * Sections that belong to plugins ("[adpi.energy-efficiency]") are declared
 * on demand: for a section nobody declared, the loader asks the section
 * resolver (the plugin registry) to declare it or explain why it cannot. */
#ifndef VIGIL_CONFIG_H
#define VIGIL_CONFIG_H

#include <stddef.h>
#include <stdbool.h>
#include <glib.h>

enum vigil_config_type {
    VIGIL_CONFIG_BOOL = 1, /* true/false, yes/no, on/off, 1/0 */
    VIGIL_CONFIG_INT,      /* a whole number within [min, max] */
    VIGIL_CONFIG_DOUBLE,   /* a finite number within [min, max] */
    VIGIL_CONFIG_STRING,   /* any text */
    VIGIL_CONFIG_ENUM,     /* one of `choices` */
    VIGIL_CONFIG_LIST,     /* text items separated by ';'; with `choices`, one or more of them */
};

/* How a settings struct's field stores a key's value (vigil/settings.h).
 * VIGIL_SETTING picks it from the field's C type, so that a table cannot
 * say one type and the struct another. */
enum vigil_setting_storage {
    VIGIL_SETTING_UNBOUND = 0, /* the key fills no field */
    VIGIL_SETTING_BOOL,        /* bool: a BOOL */
    VIGIL_SETTING_INT,         /* int (gboolean): a BOOL, an INT, an ENUM's index */
    VIGIL_SETTING_UINT,        /* unsigned int (guint, a C enum): an INT, an ENUM's index */
    VIGIL_SETTING_LONG,        /* long (gint64): an INT */
    VIGIL_SETTING_ULONG,       /* unsigned long (uint64_t, guint64): an INT */
    VIGIL_SETTING_LLONG,       /* long long: an INT */
    VIGIL_SETTING_ULLONG,      /* unsigned long long: an INT */
    VIGIL_SETTING_DOUBLE,      /* double: a DOUBLE */
    VIGIL_SETTING_STRING,      /* char *, owned: a STRING, an ENUM's text */
    VIGIL_SETTING_STRV,        /* char **, owned, NULL-terminated: a LIST */
    VIGIL_SETTING_UNSUPPORTED, /* any other type: refused when the key is declared */
};

#define VIGIL_SETTING_STORAGE_OF(lvalue)                                                           \
    _Generic((lvalue),                                                                             \
        _Bool: VIGIL_SETTING_BOOL,                                                                 \
        int: VIGIL_SETTING_INT,                                                                    \
        unsigned int: VIGIL_SETTING_UINT,                                                          \
        long: VIGIL_SETTING_LONG,                                                                  \
        unsigned long: VIGIL_SETTING_ULONG,                                                        \
        long long: VIGIL_SETTING_LLONG,                                                            \
        unsigned long long: VIGIL_SETTING_ULLONG,                                                  \
        double: VIGIL_SETTING_DOUBLE,                                                              \
        char *: VIGIL_SETTING_STRING,                                                              \
        char **: VIGIL_SETTING_STRV,                                                               \
        default: VIGIL_SETTING_UNSUPPORTED)

/* A key bound to `member` of the settings struct `type`, and named as it:
 *     {VIGIL_SETTING(struct drift_settings, long_cycles), .type = VIGIL_CONFIG_INT, …}
 * The key's name is the field's, so neither can be renamed alone. */
#define VIGIL_SETTING(type, member) VIGIL_SETTING_NAMED(#member, type, member)
/* The same for a field whose name cannot be the key's (one in a nested
 * struct). `(type){}` (GNU C, and C23) names the member's type without an
 * object, for any struct, nested or not. */
#define VIGIL_SETTING_NAMED(key_name, type, member)                                                \
    .name = key_name, .offset = offsetof(type, member),                                            \
    .storage = VIGIL_SETTING_STORAGE_OF((type){}.member)

struct vigil_config_key {
    const char *section; /* NULL in a plugin's keys: its section is "kind.name" */
    const char *name;
    enum vigil_config_type type;
    const char *default_value; /* as it would be written in a file */
    double min;                /* INT and DOUBLE: the accepted range, inclusive */
    double max;
    /* ENUM: "off|stderr|file". LIST: optional, an order of preference
     * among them ("likwid|powercap|estimate"): at least one, each once. */
    const char *choices;
    const char *description;
    /* STRING: a connection string whose password (`password=…`, or the
     * `user:…@` of a URI) `vigil config check` must not print. */
    bool redact_password;
    /* The field it fills in its table's settings struct (VIGIL_SETTING);
     * last, so that a key written without names is written as before. */
    size_t offset;
    enum vigil_setting_storage storage;
};

typedef struct vigil_config vigil_config;

/* Declares the keys of `section` on demand, or explains why it cannot;
 * returns FALSE with error set for a section that cannot exist. */
typedef gboolean (*vigil_config_section_resolver)(vigil_config *config, const char *section,
                                                  gpointer user_data, GError **error);

#define VIGIL_CONFIG_ERROR (vigil_config_error_quark())
GQuark vigil_config_error_quark(void);

enum vigil_config_error_code {
    VIGIL_CONFIG_ERROR_IO,    /* a file that cannot be read */
    VIGIL_CONFIG_ERROR_PARSE, /* not INI syntax */
    VIGIL_CONFIG_ERROR_UNKNOWN_SECTION,
    VIGIL_CONFIG_ERROR_UNKNOWN_KEY,
    VIGIL_CONFIG_ERROR_BAD_VALUE,   /* wrong type or out of range */
    VIGIL_CONFIG_ERROR_DECLARATION, /* a part declared a key wrongly: a bug */
};

vigil_config *vigil_config_new(void);

/* The configuration file a program reads when its command line names none:
 * $VIGIL_CONFIG when set and not empty, else SYSCONFDIR/vigil/vigil.conf of
 * the install prefix. Settings have one order: command line, environment,
 * file, default. Free with g_free. */
char *vigil_config_default_path(void);
void vigil_config_free(vigil_config *config);

/* Declares keys. `section` overrides each key's own section (for plugins).
 * Fails on a bad declaration: a default that does not pass its own checks,
 * a key declared twice, an empty range. */
gboolean vigil_config_declare(vigil_config *config, const char *section,
                              const struct vigil_config_key *keys, size_t n_keys, GError **error);
gboolean vigil_config_has_section(const vigil_config *config, const char *section);

void vigil_config_set_section_resolver(vigil_config *config, vigil_config_section_resolver resolver,
                                       gpointer user_data);

/* Reads `path`, then the `.conf` files of `conf.d/` in its folder. Every problem found
 * is listed in error's message, one per line, "FILE: [section] key: …".
 * Values from files with problems are not applied. */
gboolean vigil_config_load(vigil_config *config, const char *path, GError **error);

/* The same checks and the same problems, but every value that passes its
 * own checks is applied, even from a file with problems elsewhere; the rest
 * keep their defaults. For a program that must go on with what it can read
 * and warn (vigil run: one typo must not stop a user's program), not for
 * the daemons or `vigil config check`. */
gboolean vigil_config_load_keeping_valid(vigil_config *config, const char *path, GError **error);

/* Getters by section and name, for tests and tools; a program reads its
 * settings through its table instead (vigil/settings.h), so that no key is
 * named in two places. Asking for an undeclared key or the wrong type is a
 * programming error (g_critical) and returns 0/NULL/FALSE. */
gboolean vigil_config_get_bool(const vigil_config *config, const char *section, const char *name);
gint64 vigil_config_get_int(const vigil_config *config, const char *section, const char *name);
double vigil_config_get_double(const vigil_config *config, const char *section, const char *name);
const char *vigil_config_get_string(const vigil_config *config, const char *section,
                                    const char *name); /* STRING and ENUM */
/* LIST: a NULL-terminated array owned by the config. */
const char *const *vigil_config_get_list(const vigil_config *config, const char *section,
                                         const char *name);

/* A key's value as text, for showing or storing every key of a section
 * alike (not for reading a setting: vigil/settings.h fills a struct):
 * true/false, whole numbers, doubles in the fewest digits that read back the
 * same (0.95), list items joined with ';'. NULL for an undeclared key
 * (g_critical). Free with g_free. */
char *vigil_config_value_text(const vigil_config *config, const char *section, const char *name);

/* The file a key's value came from, or NULL when it is the default. */
const char *vigil_config_source(const vigil_config *config, const char *section, const char *name);

/* The files read by the last load, in order. */
const char *const *vigil_config_files(const vigil_config *config);

/* The effective configuration as an INI text: every declared key with its
 * value, and comments giving its description and where the value came from. */
char *vigil_config_to_string(const vigil_config *config);

/* Every declared key as it was declared (its .section filled in), sections
 * in name order and keys in declaration order: what `vigil config example`
 * and the vigil.conf(5) manual are made from. The key is valid only during
 * the call. */
/* Reads a listen address: "HOST:PORT" or "[IPV6]:PORT" with a numeric host
 * ("localhost" is 127.0.0.1) and a port from 0 to 65535; with
 * `port_alone_is_loopback`, ":PORT" and "PORT" are 127.0.0.1:PORT. FALSE
 * when it is none of those (the caller says which key, and what it
 * expected). `host`: free with g_free. */
gboolean vigil_config_parse_listen(const char *text, gboolean port_alone_is_loopback, char **host,
                                   guint16 *port);

/* What `key` accepts, as errors say it: "a whole number from 1 to 60",
 * "one of: off, stderr, file". Free with g_free. */
char *vigil_config_key_accepts(const struct vigil_config_key *key);

typedef void (*vigil_config_key_visitor)(const struct vigil_config_key *key, gpointer user_data);
void vigil_config_foreach_key(const vigil_config *config, vigil_config_key_visitor visit,
                              gpointer user_data);

#endif
