/* vigil — typed settings: a section's values copied into the fields their
 * keys are bound to. */
#include <limits.h>
#include <stdbool.h>
#include <string.h>

#include "config_key.h"
#include "vigil/settings.h"

/* What each storage is, in C: its size, the whole numbers it holds, and the
 * key types whose values it takes. */
struct storage_kind {
    size_t bytes;
    double min, max; /* for whole numbers */
    unsigned takes;  /* 1 << enum vigil_config_type */
};

#define TAKES(type) (1u << (type))
#define WHOLE       (TAKES(VIGIL_CONFIG_INT) | TAKES(VIGIL_CONFIG_ENUM))

static const struct storage_kind kinds[] = {
    [VIGIL_SETTING_BOOL] = {sizeof(bool), 0, 1, TAKES(VIGIL_CONFIG_BOOL)},
    [VIGIL_SETTING_INT] = {sizeof(int), INT_MIN, INT_MAX, WHOLE | TAKES(VIGIL_CONFIG_BOOL)},
    [VIGIL_SETTING_UINT] = {sizeof(unsigned), 0, UINT_MAX, WHOLE},
    [VIGIL_SETTING_LONG] = {sizeof(long), (double)LONG_MIN, (double)LONG_MAX, WHOLE},
    [VIGIL_SETTING_ULONG] = {sizeof(unsigned long), 0, (double)ULONG_MAX, WHOLE},
    [VIGIL_SETTING_LLONG] = {sizeof(long long), (double)LLONG_MIN, (double)LLONG_MAX, WHOLE},
    [VIGIL_SETTING_ULLONG] = {sizeof(unsigned long long), 0, (double)ULLONG_MAX, WHOLE},
    [VIGIL_SETTING_DOUBLE] = {sizeof(double), 0, 0, TAKES(VIGIL_CONFIG_DOUBLE)},
    [VIGIL_SETTING_STRING] = {sizeof(char *), 0, 0,
                              TAKES(VIGIL_CONFIG_STRING) | TAKES(VIGIL_CONFIG_ENUM)},
    [VIGIL_SETTING_STRV] = {sizeof(char **), 0, 0, TAKES(VIGIL_CONFIG_LIST)},
};

static gboolean is_bound(enum vigil_setting_storage storage)
{
    return storage > VIGIL_SETTING_UNBOUND && storage < VIGIL_SETTING_UNSUPPORTED;
}

static gboolean is_whole(enum vigil_setting_storage storage)
{
    return storage >= VIGIL_SETTING_INT && storage <= VIGIL_SETTING_ULLONG;
}

static size_t count_choices(const char *choices)
{
    size_t n = 1;
    for (const char *c = choices; *c != '\0'; c++)
        n += *c == '|';
    return n;
}

const char *vigil_setting_binding_problem(const struct vigil_config_key *decl, size_t settings_size)
{
    if (decl->storage == VIGIL_SETTING_UNBOUND)
        return NULL;
    if (!is_bound(decl->storage))
        return "its field's C type cannot hold a setting";
    const struct storage_kind *kind = &kinds[decl->storage];
    if ((kind->takes & TAKES(decl->type)) == 0)
        return "its field's C type cannot hold a value of its type";
    if (settings_size > 0 && decl->offset + kind->bytes > settings_size)
        return "its field lies outside the settings struct";
    if (!is_whole(decl->storage))
        return NULL;
    double min = decl->min, max = decl->max;
    if (decl->type == VIGIL_CONFIG_BOOL)
        min = 0, max = 1;
    else if (decl->type == VIGIL_CONFIG_ENUM)
        min = 0, max = (double)count_choices(decl->choices) - 1;
    /* (double)LONG_MAX rounds up to 2^63, but values are read as gint64:
     * none is above LONG_MAX. */
    if (min < kind->min || max > kind->max)
        return "its range does not fit its field's C type";
    return NULL;
}

gboolean vigil_settings_declare(vigil_config *config, const struct vigil_settings_table *table,
                                const char *section, GError **error)
{
    g_return_val_if_fail(table != NULL && table->size > 0, FALSE);
    return vigil_config_declare_sized(config, section != NULL ? section : table->section,
                                      table->keys, table->n_keys, table->size, error);
}

/* A whole number as the key's type gives it: an ENUM's by its index. */
static gint64 whole_value(const struct key *key)
{
    if (key->type == VIGIL_CONFIG_BOOL)
        return key->value.b ? 1 : 0;
    if (key->type == VIGIL_CONFIG_ENUM) {
        gint64 index = 0;
        while (key->choices[index] != NULL && strcmp(key->choices[index], key->value.s) != 0)
            index++;
        return index;
    }
    return key->value.i;
}

/* The declaration checked the type and the range against the field. */
static void store(void *settings, const struct key *key)
{
    void *field = (char *)settings + key->offset;
    gint64 whole = is_whole(key->storage) ? whole_value(key) : 0;
    switch (key->storage) {
    case VIGIL_SETTING_BOOL:
        *(bool *)field = key->value.b;
        break;
    case VIGIL_SETTING_INT:
        *(int *)field = (int)whole;
        break;
    case VIGIL_SETTING_UINT:
        *(unsigned *)field = (unsigned)whole;
        break;
    case VIGIL_SETTING_LONG:
        *(long *)field = (long)whole;
        break;
    case VIGIL_SETTING_ULONG:
        *(unsigned long *)field = (unsigned long)whole;
        break;
    case VIGIL_SETTING_LLONG:
        *(long long *)field = (long long)whole;
        break;
    case VIGIL_SETTING_ULLONG:
        *(unsigned long long *)field = (unsigned long long)whole;
        break;
    case VIGIL_SETTING_DOUBLE:
        *(double *)field = key->value.d;
        break;
    case VIGIL_SETTING_STRING:
        *(char **)field = g_strdup(key->value.s);
        break;
    case VIGIL_SETTING_STRV:
        *(char ***)field = g_strdupv(key->value.list);
        break;
    default:
        break;
    }
}

gboolean vigil_settings_fill_section(const vigil_config *config, const char *section,
                                     void *settings, size_t size, GError **error)
{
    g_return_val_if_fail(config != NULL && section != NULL && settings != NULL, FALSE);
    size_t declared_size = 0;
    const GPtrArray *keys = vigil_config_section_keys(config, section, &declared_size);
    if (keys == NULL || declared_size != size) {
        /* A program's bug, not the admin's: said as a declaration error. */
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_DECLARATION,
                    keys == NULL ? "[%s]: not declared" : "[%s]: not declared for this struct",
                    section);
        return FALSE;
    }
    memset(settings, 0, size);
    for (guint i = 0; i < keys->len; i++) {
        const struct key *key = keys->pdata[i];
        if (is_bound(key->storage))
            store(settings, key);
    }
    return TRUE;
}

gboolean vigil_settings_fill(const vigil_config *config, const struct vigil_settings_table *table,
                             void *settings, GError **error)
{
    g_return_val_if_fail(table != NULL && table->section != NULL, FALSE);
    return vigil_settings_fill_section(config, table->section, settings, table->size, error);
}

gboolean vigil_settings_load(const vigil_config *config, const struct vigil_settings_table *table,
                             void *settings, GError **error)
{
    if (!vigil_settings_fill(config, table, settings, error))
        return FALSE;
    if (table->check == NULL || table->check(settings, table->section, config, error))
        return TRUE;
    vigil_settings_clear(table, settings);
    return FALSE;
}

gboolean vigil_settings_check(const vigil_config *config, const struct vigil_settings_table *table,
                              GError **error)
{
    void *settings = g_malloc0(table->size);
    gboolean ok = vigil_settings_load(config, table, settings, error);
    if (ok)
        vigil_settings_clear(table, settings);
    g_free(settings);
    return ok;
}

const char *vigil_settings_source(const vigil_config *config,
                                  const struct vigil_settings_table *table, size_t offset)
{
    for (size_t i = 0; i < table->n_keys; i++)
        if (is_bound(table->keys[i].storage) && table->keys[i].offset == offset)
            return vigil_config_source(config, table->section, table->keys[i].name);
    g_critical("%s: [%s]: no key fills the field at %zu", G_STRFUNC, table->section, offset);
    return NULL;
}

void vigil_settings_clear(const struct vigil_settings_table *table, void *settings)
{
    for (size_t i = 0; i < table->n_keys; i++) {
        void *field = (char *)settings + table->keys[i].offset;
        if (table->keys[i].storage == VIGIL_SETTING_STRING)
            g_clear_pointer((char **)field, g_free);
        else if (table->keys[i].storage == VIGIL_SETTING_STRV)
            g_clear_pointer((char ***)field, g_strfreev);
    }
    memset(settings, 0, table->size);
}

void vigil_settings_copy(const struct vigil_settings_table *table, void *to, const void *from)
{
    memcpy(to, from, table->size);
    for (size_t i = 0; i < table->n_keys; i++) {
        size_t offset = table->keys[i].offset;
        void *field = (char *)to + offset;
        const void *source = (const char *)from + offset;
        if (table->keys[i].storage == VIGIL_SETTING_STRING)
            *(char **)field = g_strdup(*(char *const *)source);
        else if (table->keys[i].storage == VIGIL_SETTING_STRV)
            *(char ***)field = g_strdupv(*(char **const *)source);
    }
}

static gboolean lists_equal(char *const *a, char *const *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    guint i = 0;
    for (; a[i] != NULL && b[i] != NULL; i++)
        if (strcmp(a[i], b[i]) != 0)
            return FALSE;
    return a[i] == b[i];
}

gboolean vigil_settings_equal(const struct vigil_settings_table *table, const void *a,
                              const void *b)
{
    for (size_t i = 0; i < table->n_keys; i++) {
        const struct vigil_config_key *key = &table->keys[i];
        if (!is_bound(key->storage))
            continue;
        const void *fa = (const char *)a + key->offset, *fb = (const char *)b + key->offset;
        gboolean same;
        if (key->storage == VIGIL_SETTING_STRING)
            same = g_strcmp0(*(char *const *)fa, *(char *const *)fb) == 0;
        else if (key->storage == VIGIL_SETTING_STRV)
            same = lists_equal(*(char **const *)fa, *(char **const *)fb);
        else if (key->storage == VIGIL_SETTING_DOUBLE)
            same = *(const double *)fa == *(const double *)fb;
        else
            same = memcmp(fa, fb, kinds[key->storage].bytes) == 0;
        if (!same)
            return FALSE;
    }
    return TRUE;
}
