/* Tests of typed settings (vigil/settings.h): a table binds each key to a
 * field, one call fills the struct from defaults or files, the declaration
 * refuses a key its field cannot hold, and the table's check runs after the
 * fill. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "test_adpi.h"
#include "test_support.h"
#include "vigil/plugin.h"
#include "vigil/schema.h"
#include "vigil/settings.h"
#include "test_main.h"

enum colour { COLOUR_RED, COLOUR_GREEN, COLOUR_BLUE };

/* One field of every storage. */
struct sample_settings {
    bool verbose;
    gboolean quiet;
    guint tick_ms;
    gint offset;
    gint64 budget;
    uint64_t max_bytes;
    long long big;
    unsigned long long bigger;
    double ratio;
    char *path;
    enum colour colour;
    char *colour_name;
    char **names;
};

static const struct vigil_config_key sample_keys[] = {
    {VIGIL_SETTING(struct sample_settings, verbose), .type = VIGIL_CONFIG_BOOL,
     .default_value = "yes", .description = "a bool"},
    {VIGIL_SETTING(struct sample_settings, quiet), .type = VIGIL_CONFIG_BOOL,
     .default_value = "off", .description = "a gboolean"},
    {VIGIL_SETTING(struct sample_settings, tick_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "100", .min = 10, .max = 60000, .description = "a guint"},
    {VIGIL_SETTING(struct sample_settings, offset), .type = VIGIL_CONFIG_INT, .default_value = "-5",
     .min = -100, .max = 100, .description = "an int"},
    {VIGIL_SETTING(struct sample_settings, budget), .type = VIGIL_CONFIG_INT,
     .default_value = "-1000000000000", .min = -1e15, .max = 1e15, .description = "a gint64"},
    {VIGIL_SETTING(struct sample_settings, max_bytes), .type = VIGIL_CONFIG_INT,
     .default_value = "1099511627776", .min = 0, .max = 1e15, .description = "a uint64_t"},
    {VIGIL_SETTING(struct sample_settings, big), .type = VIGIL_CONFIG_INT, .default_value = "7",
     .min = -10, .max = 10, .description = "a long long"},
    {VIGIL_SETTING(struct sample_settings, bigger), .type = VIGIL_CONFIG_INT, .default_value = "8",
     .min = 0, .max = 10, .description = "an unsigned long long"},
    {VIGIL_SETTING(struct sample_settings, ratio), .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "0.95", .min = 0, .max = 1, .description = "a double"},
    {VIGIL_SETTING(struct sample_settings, path), .type = VIGIL_CONFIG_STRING,
     .default_value = "/var/lib/x", .description = "a string"},
    {VIGIL_SETTING(struct sample_settings, colour), .type = VIGIL_CONFIG_ENUM,
     .default_value = "green", .choices = "red|green|blue", .description = "an enum by index"},
    {VIGIL_SETTING(struct sample_settings, colour_name), .type = VIGIL_CONFIG_ENUM,
     .default_value = "blue", .choices = "red|green|blue", .description = "an enum by name"},
    {VIGIL_SETTING(struct sample_settings, names), .type = VIGIL_CONFIG_LIST,
     .default_value = "a;b", .description = "a list"},
    {.name = "unbound",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1",
     .min = 0,
     .max = 2,
     .description = "a key no field holds"},
};

static gboolean sample_check(const void *settings, const char *section, const vigil_config *config,
                             GError **error)
{
    (void)section;
    (void)config;
    const struct sample_settings *s = settings;
    if (s->tick_ms % 10 == 0)
        return TRUE;
    g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                "[sample] tick_ms = %u is not a multiple of 10", s->tick_ms);
    return FALSE;
}

static const struct vigil_settings_table sample_table =
    VIGIL_SETTINGS_TABLE("sample", struct sample_settings, sample_keys, sample_check);

struct fixture {
    char *dir;
    char *path;
    vigil_config *config;
};

static int setup(void **state)
{
    struct fixture *f = g_new0(struct fixture, 1);
    f->dir = g_dir_make_tmp("vigil-settings-XXXXXX", NULL);
    f->path = g_build_filename(f->dir, "vigil.conf", NULL);
    f->config = vigil_config_new();
    GError *error = NULL;
    if (!vigil_settings_declare(f->config, &sample_table, NULL, &error))
        fail_msg("declare: %s", error->message);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    vigil_config_free(f->config);
    test_remove_tree(f->dir);
    g_free(f->path);
    g_free(f->dir);
    g_free(f);
    return 0;
}

static void load_text(struct fixture *f, const char *text)
{
    assert_true(g_file_set_contents(f->path, text, -1, NULL));
    GError *error = NULL;
    if (!vigil_config_load(f->config, f->path, &error))
        fail_msg("load: %s", error->message);
}

static void test_defaults_fill_every_storage(void **state)
{
    struct fixture *f = *state;
    struct sample_settings s;
    memset(&s, 0xa5, sizeof s); /* the fill zeroes what it does not set */
    GError *error = NULL;
    assert_true(vigil_settings_load(f->config, &sample_table, &s, &error));
    assert_true(s.verbose);
    assert_false(s.quiet);
    assert_int_equal(s.tick_ms, 100);
    assert_int_equal(s.offset, -5);
    assert_true(s.budget == -1000000000000);
    assert_true(s.max_bytes == 1099511627776u);
    assert_true(s.big == 7 && s.bigger == 8);
    assert_true(s.ratio == 0.95);
    assert_string_equal(s.path, "/var/lib/x");
    assert_int_equal(s.colour, COLOUR_GREEN);
    assert_string_equal(s.colour_name, "blue");
    assert_string_equal(s.names[0], "a");
    assert_string_equal(s.names[1], "b");
    assert_null(s.names[2]);
    vigil_settings_clear(&sample_table, &s);
    assert_null(s.path);
    assert_null(s.names);
    assert_int_equal(s.tick_ms, 0);
}

/* The struct owns its copies: it outlives the configuration. */
static void test_file_values_are_copied(void **state)
{
    struct fixture *f = *state;
    load_text(f, "[sample]\nverbose = false\nquiet = true\ntick_ms = 250\noffset = 7\n"
                 "ratio = 0.5\npath = /tmp/y\ncolour = blue\ncolour_name = red\nnames = x\n");
    struct sample_settings s;
    assert_true(vigil_settings_load(f->config, &sample_table, &s, NULL));
    vigil_config_free(f->config);
    f->config = NULL;
    assert_false(s.verbose);
    assert_true(s.quiet);
    assert_int_equal(s.tick_ms, 250);
    assert_int_equal(s.offset, 7);
    assert_true(s.ratio == 0.5);
    assert_string_equal(s.path, "/tmp/y");
    assert_int_equal(s.colour, COLOUR_BLUE);
    assert_string_equal(s.colour_name, "red");
    assert_string_equal(s.names[0], "x");
    assert_null(s.names[1]);
    vigil_settings_clear(&sample_table, &s);
}

/* A bad value is the loader's to refuse, naming the file, section, key and
 * value; the settings never see it. */
static void test_bad_value_refused_by_name(void **state)
{
    struct fixture *f = *state;
    assert_true(g_file_set_contents(f->path, "[sample]\ntick_ms = 5\n", -1, NULL));
    GError *error = NULL;
    assert_false(vigil_config_load(f->config, f->path, &error));
    char *want = g_strdup_printf("%s: [sample] tick_ms: expected a whole number from 10 to 60000, "
                                 "got \"5\"",
                                 f->path);
    assert_string_equal(error->message, want);
    g_free(want);
    g_error_free(error);
}

static void test_check_runs_after_fill(void **state)
{
    struct fixture *f = *state;
    load_text(f, "[sample]\ntick_ms = 105\npath = kept\n");
    struct sample_settings s;
    GError *error = NULL;
    assert_false(vigil_settings_load(f->config, &sample_table, &s, &error));
    assert_string_equal(error->message, "[sample] tick_ms = 105 is not a multiple of 10");
    g_clear_error(&error);
    assert_null(s.path); /* cleared: nothing to free after a failure */
    /* Filling alone does not check. */
    assert_true(vigil_settings_fill(f->config, &sample_table, &s, &error));
    assert_int_equal(s.tick_ms, 105);
    assert_string_equal(s.path, "kept");
    vigil_settings_clear(&sample_table, &s);
}

static void test_copy_and_equal(void **state)
{
    struct fixture *f = *state;
    struct sample_settings a, b;
    assert_true(vigil_settings_load(f->config, &sample_table, &a, NULL));
    vigil_settings_copy(&sample_table, &b, &a);
    assert_true(b.path != a.path && b.names != a.names);
    assert_true(vigil_settings_equal(&sample_table, &a, &b));
    /* Each kind of field, changed alone, makes them differ. */
    b.tick_ms++;
    assert_false(vigil_settings_equal(&sample_table, &a, &b));
    b.tick_ms--;
    b.ratio = 0.25;
    assert_false(vigil_settings_equal(&sample_table, &a, &b));
    b.ratio = a.ratio;
    b.path[0] = 'X';
    assert_false(vigil_settings_equal(&sample_table, &a, &b));
    b.path[0] = a.path[0];
    g_free(b.names[1]);
    b.names[1] = NULL;
    assert_false(vigil_settings_equal(&sample_table, &a, &b));
    vigil_settings_clear(&sample_table, &a);
    vigil_settings_clear(&sample_table, &b);
}

/* A plugin's section: the table names none, the registry gives it one. */
static void test_fill_a_named_section(void **state)
{
    (void)state;
    vigil_config *config = vigil_config_new();
    assert_true(vigil_settings_declare(config, &sample_table, "adpi.sample", NULL));
    struct sample_settings s;
    assert_true(vigil_settings_fill_section(config, "adpi.sample", &s, sizeof s, NULL));
    assert_int_equal(s.tick_ms, 100);
    vigil_settings_clear(&sample_table, &s);
    /* A struct of another size, or a section nobody declared: a bug. */
    GError *error = NULL;
    assert_false(vigil_settings_fill_section(config, "adpi.sample", &s, sizeof s - 8, &error));
    assert_int_equal(error->code, VIGIL_CONFIG_ERROR_DECLARATION);
    assert_string_equal(error->message, "[adpi.sample]: not declared for this struct");
    g_clear_error(&error);
    assert_false(vigil_settings_fill_section(config, "adpi.other", &s, sizeof s, &error));
    assert_string_equal(error->message, "[adpi.other]: not declared");
    g_clear_error(&error);
    /* Keys declared without a table fill no struct. */
    static const struct vigil_config_key plain[] = {
        {.name = "n", .type = VIGIL_CONFIG_INT, .default_value = "1", .max = 2}};
    assert_true(vigil_config_declare(config, "plain", plain, 1, NULL));
    assert_false(vigil_settings_fill_section(config, "plain", &s, sizeof s, &error));
    assert_string_equal(error->message, "[plain]: not declared for this struct");
    g_clear_error(&error);
    vigil_config_free(config);
}

struct narrow {
    guint count;
    double level;
    short small;
    char *text;
};

/* Each key a field cannot hold is refused when it is declared, naming it. */
static void test_declaration_refuses_what_a_field_cannot_hold(void **state)
{
    (void)state;
    static const struct {
        struct vigil_config_key key;
        const char *why;
    } cases[] = {
        {{VIGIL_SETTING(struct narrow, count), .type = VIGIL_CONFIG_DOUBLE, .default_value = "1",
          .max = 2},
         "[t] count: its field's C type cannot hold a value of its type"},
        {{VIGIL_SETTING(struct narrow, level), .type = VIGIL_CONFIG_INT, .default_value = "1",
          .max = 2},
         "[t] level: its field's C type cannot hold a value of its type"},
        {{VIGIL_SETTING(struct narrow, text), .type = VIGIL_CONFIG_LIST, .default_value = "a"},
         "[t] text: its field's C type cannot hold a value of its type"},
        {{VIGIL_SETTING(struct narrow, count), .type = VIGIL_CONFIG_INT, .default_value = "1",
          .min = -1, .max = 2},
         "[t] count: its range does not fit its field's C type"},
        {{VIGIL_SETTING(struct narrow, count), .type = VIGIL_CONFIG_INT, .default_value = "1",
          .max = 1e10},
         "[t] count: its range does not fit its field's C type"},
        {{VIGIL_SETTING(struct narrow, small), .type = VIGIL_CONFIG_INT, .default_value = "1",
          .max = 2},
         "[t] small: its field's C type cannot hold a setting"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        vigil_config *config = vigil_config_new();
        const struct vigil_settings_table table = {
            .section = "t", .keys = &cases[i].key, .n_keys = 1, .size = sizeof(struct narrow)};
        GError *error = NULL;
        assert_false(vigil_settings_declare(config, &table, NULL, &error));
        assert_int_equal(error->code, VIGIL_CONFIG_ERROR_DECLARATION);
        assert_string_equal(error->message, cases[i].why);
        g_error_free(error);
        assert_false(vigil_config_has_section(config, "t"));
        vigil_config_free(config);
    }
    /* A struct smaller than a field's place in it. */
    vigil_config *config = vigil_config_new();
    const struct vigil_settings_table short_table = {
        .section = "t", .keys = &cases[0].key, .n_keys = 1, .size = 2};
    struct vigil_config_key late = {VIGIL_SETTING(struct narrow, text),
                                    .type = VIGIL_CONFIG_STRING};
    const struct vigil_settings_table late_table = {
        .section = "t", .keys = &late, .n_keys = 1, .size = offsetof(struct narrow, text)};
    GError *error = NULL;
    assert_false(vigil_settings_declare(config, &short_table, NULL, &error));
    g_clear_error(&error);
    assert_false(vigil_settings_declare(config, &late_table, NULL, &error));
    assert_string_equal(error->message, "[t] text: its field lies outside the settings struct");
    g_clear_error(&error);
    vigil_config_free(config);
}

static void test_value_text(void **state)
{
    struct fixture *f = *state;
    load_text(f, "[sample]\nratio = 0.1\nnames = x;y\n");
    static const struct {
        const char *name, *text;
    } want[] = {
        {"verbose", "true"}, {"offset", "-5"},       {"max_bytes", "1099511627776"},
        {"ratio", "0.1"},    {"path", "/var/lib/x"}, {"colour", "green"},
        {"names", "x;y"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++) {
        char *text = vigil_config_value_text(f->config, "sample", want[i].name);
        assert_string_equal(text, want[i].text);
        g_free(text);
    }
}

/* A configuration with every built-in table and the plugins of
 * VIGIL_TEST_PROVIDER_DIR, loaded from `text`; NULL with *error set when
 * it is refused. */
static vigil_config *load_every_table(vigil_plugin_registry *registry, const char *dir,
                                      const char *text, GError **error)
{
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry);
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    assert_true(g_file_set_contents(path, text, -1, NULL));
    assert_true(vigil_schema_declare(config, NULL));
    gboolean ok = vigil_config_load(config, path, error);
    g_free(path);
    if (!ok)
        g_clear_pointer(&config, vigil_config_free);
    return config;
}

struct refusal {
    vigil_plugin_registry *registry;
    const char *dir;
    const char *section;
};

/* The loader's message for `lines` in the section. */
static char *load_refusal(const char *lines, void *user)
{
    const struct refusal *r = user;
    char *text = g_strdup_printf("[%s]\n%s", r->section, lines);
    GError *error = NULL;
    assert_null(load_every_table(r->registry, r->dir, text, &error));
    char *message = g_strdup(error->message);
    g_error_free(error);
    g_free(text);
    return message;
}

/* The defaults fill the struct and pass the table's check; and
 * test_assert_settings_sound's rules for each key. */
static void assert_table_sound(vigil_plugin_registry *registry, const char *dir,
                               const char *section, const struct vigil_settings_table *table)
{
    char *header = g_strdup_printf("[%s]\n", section);
    GError *error = NULL;
    vigil_config *config = load_every_table(registry, dir, header, &error);
    if (config == NULL)
        fail_msg("[%s] with its defaults: %s", section, error->message);
    void *settings = g_malloc0(table->size);
    if (!vigil_settings_fill_section(config, section, settings, table->size, &error) ||
        (table->check != NULL && !table->check(settings, section, config, &error)))
        fail_msg("[%s] with its defaults: %s", section, error->message);
    vigil_settings_clear(table, settings);
    g_free(settings);
    vigil_config_free(config);
    g_free(header);
    struct refusal refusal = {registry, dir, section};
    test_assert_settings_sound(section, table, load_refusal, &refusal);
}

/* What every table of the tree must be, built-in or a plugin's, rather
 * than a count of its keys that would only repeat it. */
static void test_every_table_is_sound(void **state)
{
    struct fixture *f = *state;
    vigil_plugin_registry *registry =
        vigil_plugin_registry_new(test_env_or_fail("VIGIL_TEST_PROVIDER_DIR"));
    for (size_t t = 0; vigil_schema_tables[t] != NULL; t++)
        assert_table_sound(registry, f->dir, vigil_schema_tables[t]->section,
                           vigil_schema_tables[t]);
    guint plugins = 0;
    for (unsigned kind = 1; kind <= VIGIL_PLUGIN_KIND_COUNT; kind++) {
        char **names = vigil_plugin_registry_list(registry, kind);
        for (guint i = 0; names[i] != NULL; i++) {
            const struct vigil_plugin *plugin =
                vigil_plugin_registry_load(registry, kind, names[i], NULL);
            assert_non_null(plugin);
            char *section = g_strdup_printf("%s.%s", vigil_plugin_kind_name(kind), names[i]);
            if (plugin->descriptor->settings != NULL)
                assert_table_sound(registry, f->dir, section, plugin->descriptor->settings);
            g_free(section);
            plugins++;
        }
        g_strfreev(names);
    }
    assert_true(plugins > 0); /* the plugins were found, not skipped */
    vigil_plugin_registry_free(registry);
}

#define WITH_FILE(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

TEST_MAIN(WITH_FILE(test_defaults_fill_every_storage), WITH_FILE(test_file_values_are_copied),
          WITH_FILE(test_bad_value_refused_by_name), WITH_FILE(test_check_runs_after_fill),
          WITH_FILE(test_copy_and_equal), cmocka_unit_test(test_fill_a_named_section),
          cmocka_unit_test(test_declaration_refuses_what_a_field_cannot_hold),
          WITH_FILE(test_value_text), WITH_FILE(test_every_table_is_sound))
