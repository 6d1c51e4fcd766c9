/* vigil — configuration files checked against declared keys, on GKeyFile. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_key.h"
#include "vigil-build.h"
#include "vigil/config.h"

GQuark vigil_config_error_quark(void)
{
    return g_quark_from_static_string("vigil-config-error-quark");
}

struct section {
    GPtrArray *keys;      /* struct key *, in declaration order */
    GHashTable *by_name;  /* name → struct key *, borrowed from keys */
    size_t settings_size; /* the struct its keys fill (vigil_settings_declare); 0: none */
};

struct vigil_config {
    GHashTable *sections; /* name → struct section * */
    vigil_config_section_resolver resolver;
    gpointer resolver_data;
    GPtrArray *files; /* char *, always ends with NULL for vigil_config_files */
};

static const char *const type_names[] = {
    [VIGIL_CONFIG_BOOL] = "BOOL",     [VIGIL_CONFIG_INT] = "INT",
    [VIGIL_CONFIG_DOUBLE] = "DOUBLE", [VIGIL_CONFIG_STRING] = "STRING",
    [VIGIL_CONFIG_ENUM] = "ENUM",     [VIGIL_CONFIG_LIST] = "LIST",
};

static gboolean type_is_valid(enum vigil_config_type type)
{
    return type >= VIGIL_CONFIG_BOOL && type <= VIGIL_CONFIG_LIST;
}

static void value_clear(struct value *value)
{
    g_free(value->s);
    g_strfreev(value->list);
    memset(value, 0, sizeof *value);
}

static void key_free(gpointer data)
{
    struct key *key = data;
    g_free(key->name);
    g_free(key->default_value);
    g_strfreev(key->choices);
    g_free(key->description);
    value_clear(&key->fallback);
    value_clear(&key->value);
    g_free(key->source);
    g_free(key);
}

static struct section *section_new(void)
{
    struct section *section = g_new0(struct section, 1);
    section->keys = g_ptr_array_new_with_free_func(key_free);
    section->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    return section;
}

static void section_free(gpointer data)
{
    struct section *section = data;
    g_hash_table_destroy(section->by_name);
    g_ptr_array_free(section->keys, TRUE);
    g_free(section);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* ---- numbers and text ---------------------------------------------------- */

/* Without libm: every double of magnitude 2^52 or more is whole, and below
 * that the cast to gint64 is exact. */
static gboolean is_whole(double x)
{
    double magnitude = x < 0 ? -x : x;
    return magnitude >= 4503599627370496.0 || x == (double)(gint64)x;
}

/* The shortest text that reads back as the same double, so "0.1" is not
 * shown as "0.10000000000000001"; whole numbers without an exponent, so
 * 1000 is not shown as "1e+03". */
static const char *format_double(char buf[G_ASCII_DTOSTR_BUF_SIZE], double x)
{
    if (is_whole(x) && x > -1e15 && x < 1e15)
        return g_ascii_formatd(buf, G_ASCII_DTOSTR_BUF_SIZE, "%.0f", x);
    for (int precision = 1; precision <= 17; precision++) {
        char format[16];
        snprintf(format, sizeof format, "%%.%dg", precision);
        g_ascii_formatd(buf, G_ASCII_DTOSTR_BUF_SIZE, format, x);
        if (g_ascii_strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

/* Values are shown on one line of an error list, so control characters are
 * escaped; bytes above 0x7f are kept so UTF-8 stays readable. */
static char *quote(const char *text)
{
    char keep[129] = {0};
    for (int c = 0x80; c <= 0xff; c++)
        keep[c - 0x80] = (char)c;
    char *escaped = g_strescape(text, keep);
    char *quoted = g_strdup_printf("\"%s\"", escaped);
    g_free(escaped);
    return quoted;
}

/* What a key accepts, worded to follow "expected": the same words in an
 * error, in `vigil config example` and in vigil.conf(5). */
static char *describe_accepted(enum vigil_config_type type, double min, double max,
                               char *const *choices_list)
{
    char lo[G_ASCII_DTOSTR_BUF_SIZE], hi[G_ASCII_DTOSTR_BUF_SIZE];
    switch (type) {
    case VIGIL_CONFIG_BOOL:
        return g_strdup("true or false (yes/no, on/off, 1/0)");
    case VIGIL_CONFIG_INT:
        return g_strdup_printf("a whole number from %.0f to %.0f", min, max);
    case VIGIL_CONFIG_DOUBLE:
        return g_strdup_printf("a number from %s to %s", format_double(lo, min),
                               format_double(hi, max));
    case VIGIL_CONFIG_ENUM: {
        char *choices = g_strjoinv(", ", (char **)choices_list);
        char *text = g_strdup_printf("one of: %s", choices);
        g_free(choices);
        return text;
    }
    case VIGIL_CONFIG_LIST:
        if (choices_list != NULL) {
            char *choices = g_strjoinv(", ", (char **)choices_list);
            char *text = g_strdup_printf("a list separated by ';', in order of preference, of "
                                         "one or more of: %s, each once",
                                         choices);
            g_free(choices);
            return text;
        }
        return g_strdup("a list separated by ';'");
    case VIGIL_CONFIG_STRING:
    default:
        return g_strdup("text");
    }
}

static char *describe_expected(const struct key *key)
{
    return describe_accepted(key->type, key->min, key->max, key->choices);
}

char *vigil_config_key_accepts(const struct vigil_config_key *key)
{
    char **choices = key->choices != NULL ? g_strsplit(key->choices, "|", -1) : NULL;
    char *text = describe_accepted(key->type, key->min, key->max, choices);
    g_strfreev(choices);
    return text;
}

static gboolean parse_bool(const char *text, gboolean *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < G_N_ELEMENTS(yes); i++) {
        if (g_ascii_strcasecmp(text, yes[i]) == 0) {
            *out = TRUE;
            return TRUE;
        }
        if (g_ascii_strcasecmp(text, no[i]) == 0) {
            *out = FALSE;
            return TRUE;
        }
    }
    return FALSE;
}

/* An INT or a DOUBLE within the key's range. strtoll and strtod skip
 * leading blanks; a value that starts with one was written with an escape
 * on purpose and is not a number. */
static gboolean parse_number(const char *text, const struct key *key, struct value *out)
{
    if (text[0] == '\0' || g_ascii_isspace(text[0]))
        return FALSE;
    gboolean whole = key->type == VIGIL_CONFIG_INT;
    char *end;
    errno = 0;
    gint64 i = whole ? g_ascii_strtoll(text, &end, 10) : 0;
    double v = whole ? (double)i : g_ascii_strtod(text, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v) || v < key->min || v > key->max)
        return FALSE;
    if (whole)
        out->i = i;
    else
        out->d = v;
    return TRUE;
}

static gboolean parse_choice(const char *text, const struct key *key, char **out)
{
    if (!g_strv_contains((const char *const *)key->choices, text))
        return FALSE;
    *out = g_strdup(text);
    return TRUE;
}

/* A LIST with choices (an order of preference among them): at least one,
 * each a choice, none twice. */
static gboolean list_is_chosen(const struct key *key, char *const *list)
{
    if (key->choices == NULL)
        return TRUE;
    if (list[0] == NULL)
        return FALSE;
    for (guint i = 0; list[i] != NULL; i++) {
        if (!g_strv_contains((const char *const *)key->choices, list[i]))
            return FALSE;
        for (guint j = 0; j < i; j++)
            if (strcmp(list[i], list[j]) == 0)
                return FALSE;
    }
    return TRUE;
}

/* Text already unescaped by GKeyFile. */
static gboolean parse_text(const struct key *key, const char *text, struct value *out)
{
    switch (key->type) {
    case VIGIL_CONFIG_BOOL:
        return parse_bool(text, &out->b);
    case VIGIL_CONFIG_INT:
    case VIGIL_CONFIG_DOUBLE:
        return parse_number(text, key, out);
    case VIGIL_CONFIG_ENUM:
        return parse_choice(text, key, &out->s);
    case VIGIL_CONFIG_STRING:
    case VIGIL_CONFIG_LIST:
    default:
        out->s = g_strdup(text);
        return TRUE;
    }
}

/* A value `key` cannot take, `text` as written (NULL: empty): the error
 * says what it expected, `out` is cleared. */
static void bad_value(const struct key *key, const char *text, struct value *out, GError **error)
{
    char *expected = describe_expected(key), *got = quote(text != NULL ? text : "");
    g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE, "expected %s, got %s",
                expected, got);
    g_free(expected);
    g_free(got);
    value_clear(out);
}

/* Reads `group`/`name` of `file` as a value of `key`. The error message is
 * the part after "[section] key: ". */
static gboolean parse_value(const struct key *key, GKeyFile *file, const char *group,
                            const char *name, struct value *out, GError **error)
{
    memset(out, 0, sizeof *out);
    GError *glib_error = NULL;
    if (key->type == VIGIL_CONFIG_LIST) {
        out->list = g_key_file_get_string_list(file, group, name, NULL, &glib_error);
        if (out->list != NULL && !list_is_chosen(key, out->list)) {
            char *text = g_key_file_get_value(file, group, name, NULL);
            bad_value(key, text, out, error);
            g_free(text);
            return FALSE;
        }
    } else {
        char *text = g_key_file_get_string(file, group, name, &glib_error);
        /* Trailing blanks are invisible in an editor and GKeyFile keeps
         * them; only free text may mean them. */
        if (text != NULL && key->type != VIGIL_CONFIG_STRING)
            g_strchomp(text);
        if (text != NULL && !parse_text(key, text, out)) {
            bad_value(key, text, out, error);
            g_free(text);
            return FALSE;
        }
        g_free(text);
    }
    if (glib_error != NULL) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE, "%s",
                    glib_error->message);
        g_error_free(glib_error);
        value_clear(out);
        return FALSE;
    }
    return TRUE;
}

/* Defaults are written as in a file, so they go through the same parser. */
static gboolean parse_default(const struct key *key, struct value *out, GError **error)
{
    GKeyFile *scratch = g_key_file_new();
    g_key_file_set_value(scratch, "default", "value", key->default_value);
    gboolean ok = parse_value(key, scratch, "default", "value", out, error);
    g_key_file_free(scratch);
    return ok;
}

static void value_copy(struct value *to, const struct value *from)
{
    *to = *from;
    to->s = g_strdup(from->s);
    to->list = g_strdupv(from->list);
}

static void key_reset(struct key *key)
{
    value_clear(&key->value);
    value_copy(&key->value, &key->fallback);
    g_clear_pointer(&key->source, g_free);
}

/* ---- declaration ---------------------------------------------------------- */

/* Names must survive a trip through vigil_config_to_string and back. */
static gboolean name_is_writable(const char *name, const char *forbidden)
{
    if (name == NULL || name[0] == '\0' || name[0] == '#' || g_ascii_isspace(name[0]) ||
        g_ascii_isspace(name[strlen(name) - 1]))
        return FALSE;
    for (const char *p = name; *p != '\0'; p++)
        if (g_ascii_iscntrl(*p) || strchr(forbidden, *p) != NULL)
            return FALSE;
    return TRUE;
}

static const char *check_range(const struct vigil_config_key *decl)
{
    if (decl->type != VIGIL_CONFIG_INT && decl->type != VIGIL_CONFIG_DOUBLE)
        return NULL;
    if (!(decl->min <= decl->max))
        return "empty range: min is above max";
    if (decl->type == VIGIL_CONFIG_INT && (!is_whole(decl->min) || !is_whole(decl->max)))
        return "the range of an INT must be whole numbers";
    return NULL;
}

static const char *check_choices(const struct vigil_config_key *decl)
{
    if (decl->type == VIGIL_CONFIG_LIST && decl->choices == NULL)
        return NULL;
    if (decl->type != VIGIL_CONFIG_ENUM && decl->type != VIGIL_CONFIG_LIST)
        return NULL;
    if (decl->choices == NULL || decl->choices[0] == '\0')
        return "an ENUM needs choices";
    if (strstr(decl->choices, "||") != NULL || decl->choices[0] == '|' ||
        g_str_has_suffix(decl->choices, "|"))
        return "empty choice in the list of choices";
    return NULL;
}

static struct key *key_from_declaration(const struct vigil_config_key *decl)
{
    struct key *key = g_new0(struct key, 1);
    key->name = g_strdup(decl->name);
    key->type = decl->type;
    key->default_value = g_strdup(decl->default_value ? decl->default_value : "");
    key->redact_password = decl->redact_password;
    key->min = decl->min;
    key->max = decl->max;
    if (decl->type == VIGIL_CONFIG_ENUM ||
        (decl->type == VIGIL_CONFIG_LIST && decl->choices != NULL))
        key->choices = g_strsplit(decl->choices, "|", -1);
    key->description = g_strdup(decl->description);
    key->offset = decl->offset;
    key->storage = decl->storage;
    return key;
}

/* Returns the checked key, or NULL with error set. */
static struct key *declare_one(const char *section, const struct vigil_config_key *decl,
                               size_t settings_size, GError **error)
{
    const char *problem = NULL;
    if (!name_is_writable(decl->name, "=[]"))
        problem = "the key name is empty or cannot be written in a file";
    else if (!type_is_valid(decl->type))
        problem = "invalid type";
    else if ((problem = check_range(decl)) == NULL && (problem = check_choices(decl)) == NULL)
        problem = vigil_setting_binding_problem(decl, settings_size);
    if (problem != NULL) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_DECLARATION, "[%s] %s: %s",
                    section, decl->name ? decl->name : "(null)", problem);
        return NULL;
    }
    struct key *key = key_from_declaration(decl);
    GError *bad = NULL;
    if (!parse_default(key, &key->fallback, &bad)) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_DECLARATION,
                    "[%s] %s: bad default: %s", section, key->name, bad->message);
        g_error_free(bad);
        key_free(key);
        return NULL;
    }
    value_copy(&key->value, &key->fallback);
    return key;
}

static struct section *find_section(const vigil_config *config, const char *name)
{
    return g_hash_table_lookup(config->sections, name);
}

static struct key *find_key(const vigil_config *config, const char *section, const char *name)
{
    struct section *s = find_section(config, section);
    return s ? g_hash_table_lookup(s->by_name, name) : NULL;
}

static struct section *section_get(vigil_config *config, const char *name)
{
    struct section *section = find_section(config, name);
    if (section == NULL) {
        section = section_new();
        g_hash_table_insert(config->sections, g_strdup(name), section);
    }
    return section;
}

static gboolean check_section_name(const char *section, const char *key, GError **error)
{
    if (name_is_writable(section, "[]"))
        return TRUE;
    g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_DECLARATION,
                "[%s]%s%s: the section name is empty or cannot be written in a file",
                section ? section : "(null)", key ? " " : "", key ? key : "");
    return FALSE;
}

/* Keys are staged with their sections, in parallel arrays, until all of
 * them have passed. */
static gboolean check_unique(const vigil_config *config, GPtrArray *staged,
                             GPtrArray *staged_sections, const char *section, const char *name,
                             GError **error)
{
    gboolean twice = find_key(config, section, name) != NULL;
    for (guint i = 0; !twice && i < staged->len; i++)
        twice = strcmp(staged_sections->pdata[i], section) == 0 &&
                strcmp(((const struct key *)staged->pdata[i])->name, name) == 0;
    if (twice)
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_DECLARATION,
                    "[%s] %s: declared twice", section, name);
    return !twice;
}

/* All or nothing, so a plugin that declares one bad key leaves no half of
 * its section behind. */
gboolean vigil_config_declare(vigil_config *config, const char *section,
                              const struct vigil_config_key *keys, size_t n_keys, GError **error)
{
    return vigil_config_declare_sized(config, section, keys, n_keys, 0, error);
}

gboolean vigil_config_declare_sized(vigil_config *config, const char *section,
                                    const struct vigil_config_key *keys, size_t n_keys,
                                    size_t settings_size, GError **error)
{
    g_return_val_if_fail(config != NULL, FALSE);
    g_return_val_if_fail(keys != NULL || n_keys == 0, FALSE);
    /* A settings struct is filled from one section. */
    g_return_val_if_fail(settings_size == 0 || section != NULL, FALSE);
    GPtrArray *staged = g_ptr_array_new_with_free_func(key_free);
    GPtrArray *staged_sections = g_ptr_array_new();
    gboolean ok = section == NULL || check_section_name(section, NULL, error);
    for (size_t i = 0; ok && i < n_keys; i++) {
        const char *name = section ? section : keys[i].section;
        struct key *key = NULL;
        ok = check_section_name(name, keys[i].name, error) &&
             (key = declare_one(name, &keys[i], settings_size, error)) != NULL &&
             check_unique(config, staged, staged_sections, name, key->name, error);
        if (ok) {
            g_ptr_array_add(staged, key);
            g_ptr_array_add(staged_sections, (gpointer)name);
        } else if (key != NULL) {
            key_free(key);
        }
    }
    if (ok) {
        /* A plugin without keys still needs its section to exist. */
        if (section != NULL) {
            struct section *s = section_get(config, section);
            if (settings_size > 0)
                s->settings_size = settings_size;
        }
        for (guint i = 0; i < staged->len; i++) {
            struct section *s = section_get(config, staged_sections->pdata[i]);
            struct key *key = staged->pdata[i];
            g_ptr_array_add(s->keys, key);
            g_hash_table_insert(s->by_name, key->name, key);
        }
        g_ptr_array_set_free_func(staged, NULL);
    }
    g_ptr_array_free(staged_sections, TRUE);
    g_ptr_array_free(staged, TRUE);
    return ok;
}

const GPtrArray *vigil_config_section_keys(const vigil_config *config, const char *section,
                                           size_t *settings_size)
{
    const struct section *s = find_section(config, section);
    if (s == NULL)
        return NULL;
    *settings_size = s->settings_size;
    return s->keys;
}

gboolean vigil_config_has_section(const vigil_config *config, const char *section)
{
    g_return_val_if_fail(config != NULL && section != NULL, FALSE);
    return find_section(config, section) != NULL;
}

void vigil_config_set_section_resolver(vigil_config *config, vigil_config_section_resolver resolver,
                                       gpointer user_data)
{
    g_return_if_fail(config != NULL);
    config->resolver = resolver;
    config->resolver_data = user_data;
}

char *vigil_config_default_path(void)
{
    const char *from_env = g_getenv("VIGIL_CONFIG");
    return g_strdup(from_env != NULL && from_env[0] != '\0' ? from_env
                                                            : VIGIL_SYSCONF_DIR "/vigil.conf");
}

vigil_config *vigil_config_new(void)
{
    vigil_config *config = g_new0(vigil_config, 1);
    config->sections = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, section_free);
    config->files = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(config->files, NULL);
    return config;
}

void vigil_config_free(vigil_config *config)
{
    if (config == NULL)
        return;
    g_hash_table_destroy(config->sections);
    g_ptr_array_free(config->files, TRUE);
    g_free(config);
}

/* ---- suggestions ---------------------------------------------------------- */

/* Damerau–Levenshtein distance (optimal string alignment): a swapped pair
 * of letters, the commonest typo, counts as one edit. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *prev2 = g_new(size_t, lb + 1), *prev = g_new(size_t, lb + 1);
    size_t *row = g_new(size_t, lb + 1);
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t best = MIN(prev[j] + 1, MIN(row[j - 1] + 1, prev[j - 1] + cost));
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                best = MIN(best, prev2[j - 2] + 1);
            row[j] = best;
        }
        size_t *recycled = prev2;
        prev2 = prev;
        prev = row;
        row = recycled;
    }
    size_t distance = prev[lb];
    g_free(prev2);
    g_free(prev);
    g_free(row);
    return distance;
}

/* The candidate closest to `typed`, if it is close enough to be what was
 * meant; ties go to the first candidate, so callers pass them sorted. */
static const char *closest(const char *typed, const char *const *candidates, guint n)
{
    size_t len = strlen(typed);
    size_t limit = MAX(2, len / 3);
    const char *best = NULL;
    size_t best_distance = G_MAXSIZE;
    for (guint i = 0; i < n; i++) {
        size_t d = edit_distance(typed, candidates[i]);
        if (d < best_distance && d <= limit && d < MAX(len, strlen(candidates[i]))) {
            best = candidates[i];
            best_distance = d;
        }
    }
    return best;
}

static const char **sorted_section_names(const vigil_config *config, guint *n)
{
    const char **names = (const char **)g_hash_table_get_keys_as_array(config->sections, n);
    qsort(names, *n, sizeof *names, compare_strings);
    return names;
}

static const char *closest_section(const vigil_config *config, const char *typed)
{
    guint n;
    const char **names = sorted_section_names(config, &n);
    const char *best = closest(typed, names, n);
    g_free(names);
    return best;
}

static const char *closest_key(const struct section *section, const char *typed)
{
    guint n = section->keys->len;
    const char **names = g_new(const char *, n + 1);
    for (guint i = 0; i < n; i++)
        names[i] = ((const struct key *)section->keys->pdata[i])->name;
    const char *best = closest(typed, names, n);
    g_free(names);
    return best;
}

/* A section that declares `name`, for a key put in the wrong section. */
static const char *section_with_key(const vigil_config *config, const char *name)
{
    guint n;
    const char **names = sorted_section_names(config, &n);
    const char *found = NULL;
    for (guint i = 0; found == NULL && i < n; i++)
        if (find_key(config, names[i], name) != NULL)
            found = names[i];
    g_free(names);
    return found;
}

/* ---- loading -------------------------------------------------------------- */

struct load {
    vigil_config *config;
    GString *problems; /* one per line */
    guint n_problems;
    int first_code;
    gboolean keep_valid; /* vigil_config_load_keeping_valid */
};

struct assignment {
    struct key *key;
    struct value value;
};

static void assignment_clear(gpointer data)
{
    value_clear(&((struct assignment *)data)->value);
}

static void add_problem(struct load *load, int code, const char *format, ...) G_GNUC_PRINTF(3, 4);

static void add_problem(struct load *load, int code, const char *format, ...)
{
    if (load->n_problems++ == 0)
        load->first_code = code;
    else
        g_string_append_c(load->problems, '\n');
    va_list args;
    va_start(args, format);
    g_string_append_vprintf(load->problems, format, args);
    va_end(args);
}

static void add_file(vigil_config *config, const char *path)
{
    GPtrArray *files = config->files;
    files->pdata[files->len - 1] = g_strdup(path);
    g_ptr_array_add(files, NULL);
}

static GKeyFile *read_key_file(struct load *load, const char *path)
{
    char *text = NULL;
    GError *error = NULL;
    if (!g_file_get_contents(path, &text, NULL, &error)) {
        /* GLib's message names the file: "Failed to open file “…”: …". */
        add_problem(load, VIGIL_CONFIG_ERROR_IO, "cannot read the configuration: %s",
                    error->message);
        g_error_free(error);
        return NULL;
    }
    add_file(load->config, path);
    GKeyFile *file = g_key_file_new();
    if (!g_key_file_load_from_data(file, text, (gsize)-1, G_KEY_FILE_NONE, &error)) {
        add_problem(load, VIGIL_CONFIG_ERROR_PARSE, "%s: %s", path, error->message);
        g_error_free(error);
        g_key_file_free(file);
        file = NULL;
    }
    g_free(text);
    return file;
}

static void report_unknown_section(struct load *load, const char *path, const char *group,
                                   const GError *why)
{
    const char *suggestion = closest_section(load->config, group);
    GString *line = g_string_new(NULL);
    g_string_printf(line, "%s: [%s]: unknown section", path, group);
    if (why != NULL)
        g_string_append_printf(line, ": %s", why->message);
    if (suggestion != NULL)
        g_string_append_printf(line, "; did you mean [%s]?", suggestion);
    add_problem(load, VIGIL_CONFIG_ERROR_UNKNOWN_SECTION, "%s", line->str);
    g_string_free(line, TRUE);
}

/* The declared section, after asking the resolver if need be; NULL once the
 * problem is reported. */
static struct section *resolve_section(struct load *load, const char *path, const char *group)
{
    vigil_config *config = load->config;
    struct section *section = find_section(config, group);
    if (section != NULL)
        return section;
    GError *why = NULL;
    if (config->resolver != NULL && config->resolver(config, group, config->resolver_data, &why) &&
        (section = find_section(config, group)) != NULL)
        return section;
    report_unknown_section(load, path, group, why);
    g_clear_error(&why);
    return NULL;
}

static void report_unknown_key(struct load *load, const char *path, const char *group,
                               const struct section *section, const char *name)
{
    const char *suggestion = closest_key(section, name);
    const char *elsewhere = suggestion ? NULL : section_with_key(load->config, name);
    if (suggestion != NULL)
        add_problem(load, VIGIL_CONFIG_ERROR_UNKNOWN_KEY,
                    "%s: [%s] %s: unknown key; did you mean '%s'?", path, group, name, suggestion);
    else if (elsewhere != NULL)
        add_problem(load, VIGIL_CONFIG_ERROR_UNKNOWN_KEY,
                    "%s: [%s] %s: unknown key (it belongs in [%s])", path, group, name, elsewhere);
    else
        add_problem(load, VIGIL_CONFIG_ERROR_UNKNOWN_KEY, "%s: [%s] %s: unknown key", path, group,
                    name);
}

static void check_key(struct load *load, const char *path, GKeyFile *file, const char *group,
                      const struct section *section, const char *name, GArray *pending)
{
    struct key *key = g_hash_table_lookup(section->by_name, name);
    if (key == NULL) {
        report_unknown_key(load, path, group, section, name);
        return;
    }
    struct assignment assignment = {.key = key};
    GError *error = NULL;
    if (parse_value(key, file, group, name, &assignment.value, &error)) {
        g_array_append_val(pending, assignment);
        return;
    }
    add_problem(load, error->code, "%s: [%s] %s: %s", path, group, name, error->message);
    g_error_free(error);
}

/* GKeyFile lists a key once per line that sets it, and its value is the
 * last one: each key is checked once. */
static void check_group(struct load *load, const char *path, GKeyFile *file, const char *group,
                        GArray *pending)
{
    struct section *section = resolve_section(load, path, group);
    if (section == NULL)
        return;
    char **names = g_key_file_get_keys(file, group, NULL, NULL);
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (char **name = names; name != NULL && *name != NULL; name++)
        if (g_hash_table_add(seen, *name))
            check_key(load, path, file, group, section, *name, pending);
    g_hash_table_destroy(seen);
    g_strfreev(names);
}

static void apply(GArray *pending, const char *path)
{
    for (guint i = 0; i < pending->len; i++) {
        struct assignment *a = &g_array_index(pending, struct assignment, i);
        value_clear(&a->key->value);
        a->key->value = a->value;
        memset(&a->value, 0, sizeof a->value);
        g_free(a->key->source);
        a->key->source = g_strdup(path);
    }
}

/* A file is applied only when all of it is right, so a typo cannot leave
 * half of an intended change in effect; unless the caller keeps the valid
 * values anyway (vigil_config_load_keeping_valid). */
static void load_file(struct load *load, const char *path)
{
    GKeyFile *file = read_key_file(load, path);
    if (file == NULL)
        return;
    guint problems_before = load->n_problems;
    GArray *pending = g_array_new(FALSE, FALSE, sizeof(struct assignment));
    g_array_set_clear_func(pending, assignment_clear);
    /* Unlike keys, a repeated group is merged into one by GKeyFile. */
    char **groups = g_key_file_get_groups(file, NULL);
    for (char **group = groups; *group != NULL; group++)
        check_group(load, path, file, *group, pending);
    g_strfreev(groups);
    if (load->n_problems == problems_before || load->keep_valid)
        apply(pending, path);
    g_array_free(pending, TRUE);
    g_key_file_free(file);
}

static gboolean is_drop_in(const char *directory, const char *name)
{
    /* Like the shell's *.conf, which skips hidden files. */
    if (name[0] == '.' || !g_str_has_suffix(name, ".conf"))
        return FALSE;
    char *path = g_build_filename(directory, name, NULL);
    gboolean regular = g_file_test(path, G_FILE_TEST_IS_REGULAR);
    g_free(path);
    return regular;
}

/* Sorted names of the drop-ins; a missing conf.d simply has none. */
static GPtrArray *list_drop_ins(struct load *load, const char *directory)
{
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    GError *error = NULL;
    GDir *dir = g_dir_open(directory, 0, &error);
    if (dir == NULL) {
        if (!g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
            add_problem(load, VIGIL_CONFIG_ERROR_IO, "cannot list the drop-in folder: %s",
                        error->message);
        g_error_free(error);
        return names;
    }
    const char *name;
    while ((name = g_dir_read_name(dir)) != NULL)
        if (is_drop_in(directory, name))
            g_ptr_array_add(names, g_strdup(name));
    g_dir_close(dir);
    g_ptr_array_sort(names, compare_strings);
    return names;
}

static void reset(vigil_config *config)
{
    GHashTableIter iter;
    gpointer value;
    g_hash_table_iter_init(&iter, config->sections);
    while (g_hash_table_iter_next(&iter, NULL, &value)) {
        const struct section *section = value;
        for (guint i = 0; i < section->keys->len; i++)
            key_reset(section->keys->pdata[i]);
    }
    g_ptr_array_set_size(config->files, 0);
    g_ptr_array_add(config->files, NULL);
}

/* A missing main file does not stop the drop-ins from being checked: the
 * point is to list every problem in one go. */
static gboolean load_all(vigil_config *config, const char *path, gboolean keep_valid,
                         GError **error)
{
    g_return_val_if_fail(config != NULL && path != NULL, FALSE);
    reset(config);
    struct load load = {.config = config, .problems = g_string_new(NULL), .keep_valid = keep_valid};
    load_file(&load, path);
    char *base = g_path_get_dirname(path);
    char *directory = g_build_filename(base, "conf.d", NULL);
    GPtrArray *names = list_drop_ins(&load, directory);
    for (guint i = 0; i < names->len; i++) {
        char *drop_in = g_build_filename(directory, names->pdata[i], NULL);
        load_file(&load, drop_in);
        g_free(drop_in);
    }
    g_ptr_array_free(names, TRUE);
    g_free(directory);
    g_free(base);
    if (load.n_problems > 0)
        g_set_error_literal(error, VIGIL_CONFIG_ERROR, load.first_code, load.problems->str);
    g_string_free(load.problems, TRUE);
    return load.n_problems == 0;
}

gboolean vigil_config_load(vigil_config *config, const char *path, GError **error)
{
    return load_all(config, path, FALSE, error);
}

gboolean vigil_config_load_keeping_valid(vigil_config *config, const char *path, GError **error)
{
    return load_all(config, path, TRUE, error);
}

/* ---- reading values ------------------------------------------------------- */

static const struct key *lookup(const vigil_config *config, const char *section, const char *name,
                                enum vigil_config_type type, enum vigil_config_type other_type,
                                const char *getter)
{
    g_return_val_if_fail(config != NULL && section != NULL && name != NULL, NULL);
    const struct key *key = find_key(config, section, name);
    if (key == NULL) {
        g_critical("%s: [%s] %s is not declared", getter, section, name);
        return NULL;
    }
    if (key->type != type && key->type != other_type) {
        g_critical("%s: [%s] %s is a %s, not a %s", getter, section, name, type_names[key->type],
                   type_names[type]);
        return NULL;
    }
    return key;
}

gboolean vigil_config_get_bool(const vigil_config *config, const char *section, const char *name)
{
    const struct key *key =
        lookup(config, section, name, VIGIL_CONFIG_BOOL, VIGIL_CONFIG_BOOL, G_STRFUNC);
    return key ? key->value.b : FALSE;
}

gint64 vigil_config_get_int(const vigil_config *config, const char *section, const char *name)
{
    const struct key *key =
        lookup(config, section, name, VIGIL_CONFIG_INT, VIGIL_CONFIG_INT, G_STRFUNC);
    return key ? key->value.i : 0;
}

double vigil_config_get_double(const vigil_config *config, const char *section, const char *name)
{
    const struct key *key =
        lookup(config, section, name, VIGIL_CONFIG_DOUBLE, VIGIL_CONFIG_DOUBLE, G_STRFUNC);
    return key ? key->value.d : 0.0;
}

const char *vigil_config_get_string(const vigil_config *config, const char *section,
                                    const char *name)
{
    const struct key *key =
        lookup(config, section, name, VIGIL_CONFIG_STRING, VIGIL_CONFIG_ENUM, G_STRFUNC);
    return key ? key->value.s : NULL;
}

const char *const *vigil_config_get_list(const vigil_config *config, const char *section,
                                         const char *name)
{
    const struct key *key =
        lookup(config, section, name, VIGIL_CONFIG_LIST, VIGIL_CONFIG_LIST, G_STRFUNC);
    return key ? (const char *const *)key->value.list : NULL;
}

/* A declared key, or NULL after a g_critical naming `caller`. */
static const struct key *declared_key(const vigil_config *config, const char *section,
                                      const char *name, const char *caller)
{
    g_return_val_if_fail(config != NULL && section != NULL && name != NULL, NULL);
    const struct key *key = find_key(config, section, name);
    if (key == NULL)
        g_critical("%s: [%s] %s is not declared", caller, section, name);
    return key;
}

static char *value_text(const struct key *key)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    switch (key->type) {
    case VIGIL_CONFIG_BOOL:
        return g_strdup(key->value.b ? "true" : "false");
    case VIGIL_CONFIG_INT:
        return g_strdup_printf("%" G_GINT64_FORMAT, key->value.i);
    case VIGIL_CONFIG_DOUBLE:
        return g_strdup(format_double(buf, key->value.d));
    case VIGIL_CONFIG_LIST:
        return g_strjoinv(";", key->value.list);
    case VIGIL_CONFIG_STRING:
    case VIGIL_CONFIG_ENUM:
    default:
        return g_strdup(key->value.s);
    }
}

char *vigil_config_value_text(const vigil_config *config, const char *section, const char *name)
{
    const struct key *key = declared_key(config, section, name, G_STRFUNC);
    return key ? value_text(key) : NULL;
}

const char *vigil_config_source(const vigil_config *config, const char *section, const char *name)
{
    const struct key *key = declared_key(config, section, name, G_STRFUNC);
    return key ? key->source : NULL;
}

const char *const *vigil_config_files(const vigil_config *config)
{
    g_return_val_if_fail(config != NULL, NULL);
    return (const char *const *)config->files->pdata;
}

/* ---- writing -------------------------------------------------------------- */

/* A multi-line description must stay a comment on every line. */
static void append_comment(GString *out, const char *text)
{
    char **lines = g_strsplit(text, "\n", -1);
    for (char **line = lines; *line != NULL; line++)
        g_string_append_printf(out, "# %s\n", *line);
    g_strfreev(lines);
}

/* The value as GKeyFile would write it, so that it reads back the same. */
static char *written_value(const struct key *key)
{
    /* Numbers and bools are written as they are shown; text is escaped. */
    if (key->type == VIGIL_CONFIG_BOOL || key->type == VIGIL_CONFIG_INT ||
        key->type == VIGIL_CONFIG_DOUBLE)
        return value_text(key);
    GKeyFile *scratch = g_key_file_new();
    if (key->type == VIGIL_CONFIG_LIST)
        g_key_file_set_string_list(scratch, "g", "k", (const char *const *)key->value.list,
                                   g_strv_length(key->value.list));
    else
        g_key_file_set_string(scratch, "g", "k", key->value.s);
    char *text = g_key_file_get_value(scratch, "g", "k", NULL);
    g_key_file_free(scratch);
    return text;
}

static GRegex **redactions(void)
{
    static GRegex *patterns[2];
    if (g_once_init_enter(&patterns[0])) {
        patterns[1] = g_regex_new("(://[^:/@]*:)[^@]*@", 0, 0, NULL);
        /* A quoted password with more glued to it, or left unclosed, is
         * hidden up to where the value ends: what libpq would refuse may
         * still be a password, and the written form must redact the same
         * way when it is read back. */
        GRegex *password = g_regex_new("(password\\s*=\\s*)('(?:\\\\+.|[^'\\\\])*(?:'\\S*|$)|\\S+)",
                                       G_REGEX_CASELESS, 0, NULL);
        g_once_init_leave(&patterns[0], password);
        /* Kept for the process's life; gtk.cfg thinks g_once forgets it. */
        // cppcheck-suppress memleak
    }
    return patterns;
}

static void append_key(GString *out, const struct key *key)
{
    char lo[G_ASCII_DTOSTR_BUF_SIZE], hi[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append_c(out, '\n');
    if (key->description != NULL)
        append_comment(out, key->description);
    if (key->type == VIGIL_CONFIG_LIST && key->choices != NULL) {
        char *choices = g_strjoinv(", ", key->choices);
        g_string_append_printf(out, "# in order, one or more of: %s\n", choices);
        g_free(choices);
    } else if (key->type == VIGIL_CONFIG_ENUM) {
        char *choices = g_strjoinv(", ", key->choices);
        g_string_append_printf(out, "# one of: %s\n", choices);
        g_free(choices);
    } else if (key->type == VIGIL_CONFIG_INT) {
        g_string_append_printf(out, "# from %.0f to %.0f\n", key->min, key->max);
    } else if (key->type == VIGIL_CONFIG_DOUBLE) {
        g_string_append_printf(out, "# from %s to %s\n", format_double(lo, key->min),
                               format_double(hi, key->max));
    }
    char *value = written_value(key);
    if (key->redact_password) {
        /* key=value form (quoted or not), then a URI's user:password@. */
        char *shown = g_regex_replace(redactions()[0], value, -1, 0, "\\1***", 0, NULL);
        char *uri = g_regex_replace(redactions()[1], shown, -1, 0, "\\1***@", 0, NULL);
        g_free(value);
        g_free(shown);
        value = uri;
    }
    g_string_append_printf(out, "%s = %s\n", key->name, value);
    g_free(value);
    /* On a line of its own: GKeyFile would read a comment after the value
     * as part of the value. */
    if (key->source != NULL) {
        char *from = g_strdup_printf("from %s", key->source);
        append_comment(out, from);
        g_free(from);
    } else
        g_string_append(out, "# default\n");
}

static void append_files(GString *out, const vigil_config *config)
{
    const char *const *files = vigil_config_files(config);
    if (files[0] == NULL) {
        g_string_append(out, "# vigil configuration: defaults only, no file read\n");
        return;
    }
    char *list = g_strjoinv(", ", (char **)files);
    g_string_append_printf(out, "# vigil configuration read from: %s\n", list);
    g_free(list);
}

char *vigil_config_to_string(const vigil_config *config)
{
    g_return_val_if_fail(config != NULL, NULL);
    GString *out = g_string_new(NULL);
    append_files(out, config);
    guint n;
    const char **names = sorted_section_names(config, &n);
    for (guint i = 0; i < n; i++) {
        const struct section *section = find_section(config, names[i]);
        g_string_append_printf(out, "\n[%s]\n", names[i]);
        for (guint k = 0; k < section->keys->len; k++)
            append_key(out, section->keys->pdata[k]);
    }
    g_free(names);
    return g_string_free(out, FALSE);
}

/* ---- every key, for manuals ----------------------------------------------- */

void vigil_config_foreach_key(const vigil_config *config, vigil_config_key_visitor visit,
                              gpointer user_data)
{
    g_return_if_fail(config != NULL && visit != NULL);
    guint n;
    const char **names = sorted_section_names(config, &n);
    for (guint i = 0; i < n; i++) {
        const struct section *section = find_section(config, names[i]);
        for (guint k = 0; k < section->keys->len; k++) {
            const struct key *key = section->keys->pdata[k];
            char *choices = key->choices ? g_strjoinv("|", key->choices) : NULL;
            const struct vigil_config_key declared = {
                .section = names[i],
                .name = key->name,
                .type = key->type,
                .default_value = key->default_value,
                .min = key->min,
                .max = key->max,
                .choices = choices,
                .description = key->description,
                .redact_password = key->redact_password,
            };
            visit(&declared, user_data);
            g_free(choices);
        }
    }
    g_free(names);
}
