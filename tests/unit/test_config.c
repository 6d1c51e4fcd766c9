/* Tests of the configuration loader: defaults, drop-in order, every kind of
 * error, section resolvers, declarations, the INI dump and reloads. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "vigil/config.h"
#include "test_support.h"

/* What every key these tests declare has: its section, name, type, default
 * and description. */
#define SCHEMA_KEY(section_, name_, type_, default_, description_)                                 \
    .section = (section_), .name = (name_), .type = (type_), .default_value = (default_),          \
    .description = (description_)

static const struct vigil_config_key schema[] = {
    {SCHEMA_KEY("daemon", "tick_ms", VIGIL_CONFIG_INT, "100", "time between two samples"),
     .min = 10, .max = 10000},
    {SCHEMA_KEY("daemon", "socket_path", VIGIL_CONFIG_STRING, "/run/vigil/vigil.sock",
                "where clients connect")},
    {SCHEMA_KEY("daemon", "foreground", VIGIL_CONFIG_BOOL, "false",
                "stay attached to the terminal")},
    {SCHEMA_KEY("daemon", "plugins", VIGIL_CONFIG_LIST, "energy;cpu", "providers to load")},
    {SCHEMA_KEY("capture", "mode", VIGIL_CONFIG_ENUM, "anomalies", "which cycles are kept"),
     .choices = "anomalies|all|none"},
    {SCHEMA_KEY("capture", "pre_cycles", VIGIL_CONFIG_INT, "5", "cycles kept before an anomaly"),
     .min = 0, .max = 1000},
    {SCHEMA_KEY("energy", "idle_w", VIGIL_CONFIG_DOUBLE, "40", "idle power of one socket"),
     .min = 0, .max = 1000},
};

struct fixture {
    char *dir;
    char *main_path;
    vigil_config *config;
};

static guint criticals;

static GLogWriterOutput count_criticals(GLogLevelFlags flags, const GLogField *fields,
                                        gsize n_fields, gpointer user_data)
{
    (void)fields;
    (void)n_fields;
    (void)user_data;
    if (flags & G_LOG_LEVEL_CRITICAL)
        criticals++;
    return G_LOG_WRITER_HANDLED;
}

#define assert_not_contains(haystack, needle)                                                      \
    do {                                                                                           \
        const char *h_ = (haystack), *n_ = (needle);                                               \
        if (strstr(h_, n_) != NULL)                                                                \
            fail_msg("\"%s\" unexpectedly found in \"%s\"", n_, h_);                               \
    } while (0)

static vigil_config *new_config(void)
{
    vigil_config *config = vigil_config_new();
    GError *error = NULL;
    gboolean ok = vigil_config_declare(config, NULL, schema, G_N_ELEMENTS(schema), &error);
    if (!ok)
        fail_msg("schema: %s", error->message);
    return config;
}

static struct fixture *fixture_new(void)
{
    struct fixture *fx = g_new0(struct fixture, 1);
    fx->dir = g_dir_make_tmp("vigil-config-XXXXXX", NULL);
    assert_non_null(fx->dir);
    fx->main_path = g_build_filename(fx->dir, "vigil.conf", NULL);
    fx->config = new_config();
    return fx;
}

static void fixture_free(struct fixture *fx)
{
    test_remove_tree(fx->dir);
    vigil_config_free(fx->config);
    g_free(fx->main_path);
    g_free(fx->dir);
    g_free(fx);
}

static int setup(void **state)
{
    *state = fixture_new();
    return 0;
}

static int teardown(void **state)
{
    fixture_free(*state);
    return 0;
}

/* Writes `name` (relative to the fixture's folder) and returns its path. */
static char *write_file(const struct fixture *fx, const char *name, const char *text)
{
    test_write_file(fx->dir, name, text);
    return g_build_filename(fx->dir, name, NULL);
}

static void write_main(const struct fixture *fx, const char *text)
{
    g_free(write_file(fx, "vigil.conf", text));
}

static void load_ok(const struct fixture *fx)
{
    GError *error = NULL;
    gboolean ok = vigil_config_load(fx->config, fx->main_path, &error);
    if (!ok)
        fail_msg("load: %s", error->message);
}

/* Loads, expects failure with `code`, returns the message to free. */
static char *load_fails(const struct fixture *fx, int code)
{
    GError *error = NULL;
    assert_false(vigil_config_load(fx->config, fx->main_path, &error));
    assert_non_null(error);
    assert_true(error->domain == VIGIL_CONFIG_ERROR);
    assert_string_equal(g_quark_to_string(error->domain), "vigil-config-error-quark");
    assert_int_equal(error->code, code);
    char *message = g_strdup(error->message);
    g_error_free(error);
    return message;
}

/* Loads, expects failure with `code` and exactly the message `expected`,
 * which it frees. */
static void expect_message(const struct fixture *fx, int code, char *expected)
{
    char *message = load_fails(fx, code);
    assert_string_equal(message, expected);
    g_free(expected);
    g_free(message);
}

static guint count_lines(const char *text)
{
    guint n = 1;
    for (const char *p = text; *p != '\0'; p++)
        n += *p == '\n';
    return n;
}

/* The schema's seven values as a test expects them, in its order;
 * `plugins` ends with NULL. */
struct schema_values {
    gint64 tick_ms;
    const char *socket_path;
    gboolean foreground;
    const char *const *plugins;
    const char *mode;
    gint64 pre_cycles;
    double idle_w;
};

static void check_values(const vigil_config *c, const struct schema_values *want)
{
    assert_int_equal(vigil_config_get_int(c, "daemon", "tick_ms"), want->tick_ms);
    assert_string_equal(vigil_config_get_string(c, "daemon", "socket_path"), want->socket_path);
    assert_int_equal(vigil_config_get_bool(c, "daemon", "foreground"), want->foreground);
    const char *const *plugins = vigil_config_get_list(c, "daemon", "plugins");
    assert_non_null(plugins);
    size_t i = 0;
    for (; want->plugins[i] != NULL; i++)
        assert_string_equal(plugins[i], want->plugins[i]);
    assert_null(plugins[i]);
    assert_string_equal(vigil_config_get_string(c, "capture", "mode"), want->mode);
    assert_int_equal(vigil_config_get_int(c, "capture", "pre_cycles"), want->pre_cycles);
    double idle_w = vigil_config_get_double(c, "energy", "idle_w");
    if (idle_w != want->idle_w)
        fail_msg("[energy] idle_w is %g, not %g", idle_w, want->idle_w);
}

static void test_defaults_when_empty(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "");
    load_ok(fx);
    const vigil_config *c = fx->config;
    static const char *const plugins[] = {"energy", "cpu", NULL};
    static const struct schema_values defaults = {
        100, "/run/vigil/vigil.sock", FALSE, plugins, "anomalies", 5, 40.0};
    check_values(c, &defaults);
    assert_null(vigil_config_source(c, "daemon", "tick_ms"));
    const char *const *files = vigil_config_files(c);
    assert_string_equal(files[0], fx->main_path);
    assert_null(files[1]);
}

static void test_values_applied(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "# comment\n"
                   "[daemon]\n"
                   "tick_ms = 250  \n"
                   "socket_path = \\s/tmp/a b\\n\n"
                   "foreground = Yes\n"
                   "plugins = a;b\\;c;d\n"
                   "[capture]\n"
                   "mode = all\n"
                   "pre_cycles = 0\n"
                   "[energy]\n"
                   "idle_w = 12.5\n");
    load_ok(fx);
    const vigil_config *c = fx->config;
    static const char *const plugins[] = {"a", "b;c", "d", NULL};
    static const struct schema_values applied = {250, " /tmp/a b\n", TRUE, plugins, "all", 0, 12.5};
    check_values(c, &applied);
    assert_string_equal(vigil_config_source(c, "daemon", "tick_ms"), fx->main_path);
    assert_string_equal(vigil_config_source(c, "energy", "idle_w"), fx->main_path);
}

static void test_bool_spellings(void **state)
{
    struct fixture *fx = *state;
    static const struct {
        const char *text;
        gboolean value;
    } cases[] = {{"true", TRUE}, {"FALSE", FALSE}, {"yes", TRUE}, {"No", FALSE},
                 {"on", TRUE},   {"OFF", FALSE},   {"1", TRUE},   {"0", FALSE}};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        char *text = g_strdup_printf("[daemon]\nforeground = %s\n", cases[i].text);
        write_main(fx, text);
        g_free(text);
        load_ok(fx);
        assert_int_equal(vigil_config_get_bool(fx->config, "daemon", "foreground"), cases[i].value);
    }
}

static void test_conf_d_order(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[daemon]\ntick_ms = 200\n");
    char *b = write_file(fx, "conf.d/20-b.conf", "[daemon]\ntick_ms = 400\n");
    char *a =
        write_file(fx, "conf.d/10-a.conf", "[daemon]\ntick_ms = 300\n[capture]\nmode = all\n");
    g_free(write_file(fx, "conf.d/30-c.conf.bak", "[daemon]\ntick_ms = 1\nnot ini\n"));
    g_free(write_file(fx, "conf.d/README", "not ini at all\n"));
    g_free(write_file(fx, "conf.d/.hidden.conf", "[daemon]\ntick_ms = 1\n"));
    char *folder = g_build_filename(fx->dir, "conf.d", "40-dir.conf", NULL);
    assert_int_equal(g_mkdir(folder, 0700), 0);
    load_ok(fx);
    assert_int_equal(vigil_config_get_int(fx->config, "daemon", "tick_ms"), 400);
    assert_string_equal(vigil_config_source(fx->config, "daemon", "tick_ms"), b);
    assert_string_equal(vigil_config_get_string(fx->config, "capture", "mode"), "all");
    assert_string_equal(vigil_config_source(fx->config, "capture", "mode"), a);
    const char *const *files = vigil_config_files(fx->config);
    assert_string_equal(files[0], fx->main_path);
    assert_string_equal(files[1], a);
    assert_string_equal(files[2], b);
    assert_null(files[3]);
    g_free(folder);
    g_free(a);
    g_free(b);
}

static void test_unknown_section(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[deamon]\ntick_ms = 200\n[zzzzzzzzzz]\n");
    expect_message(fx, VIGIL_CONFIG_ERROR_UNKNOWN_SECTION,
                   g_strdup_printf("%s: [deamon]: unknown section; did you mean [daemon]?\n"
                                   "%s: [zzzzzzzzzz]: unknown section",
                                   fx->main_path, fx->main_path));
}

static void test_unknown_key(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[daemon]\ntick_sm = 200\nzzzzzzzz = 1\n");
    expect_message(fx, VIGIL_CONFIG_ERROR_UNKNOWN_KEY,
                   g_strdup_printf("%s: [daemon] tick_sm: unknown key; did you mean 'tick_ms'?\n"
                                   "%s: [daemon] zzzzzzzz: unknown key",
                                   fx->main_path, fx->main_path));
    assert_int_equal(vigil_config_get_int(fx->config, "daemon", "tick_ms"), 100);
}

static void test_key_in_wrong_section(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[daemon]\nidle_w = 3\n");
    expect_message(fx, VIGIL_CONFIG_ERROR_UNKNOWN_KEY,
                   g_strdup_printf("%s: [daemon] idle_w: unknown key (it belongs in [energy])",
                                   fx->main_path));
}

/* Loads one bad `key = value` line of `section` and checks the one-line
 * message, exactly. */
static void check_bad_value(struct fixture *fx, const char *section, const char *key,
                            const char *value, const char *complaint)
{
    char *text = g_strdup_printf("[%s]\n%s = %s\n", section, key, value);
    write_main(fx, text);
    g_free(text);
    expect_message(fx, VIGIL_CONFIG_ERROR_BAD_VALUE,
                   g_strdup_printf("%s: [%s] %s: %s", fx->main_path, section, key, complaint));
}

/* Loads each of the `count` bad `values` of `key` in `section` in turn
 * and checks the one-line message, exactly: `expected`, then the value. */
static void check_bad_values(struct fixture *fx, const char *section, const char *key,
                             const char *expected, const char *const *values, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        char *complaint = g_strdup_printf("%s, got \"%s\"", expected, values[i]);
        check_bad_value(fx, section, key, values[i], complaint);
        g_free(complaint);
    }
}

static void test_bad_int(void **state)
{
    struct fixture *fx = *state;
    static const char *const values[] = {"fast", "12.5", "", "99999999999999999999"};
    check_bad_values(fx, "daemon", "tick_ms", "expected a whole number from 10 to 10000", values,
                     G_N_ELEMENTS(values));
}

static void test_int_range(void **state)
{
    struct fixture *fx = *state;
    static const char *const ticks[] = {"9", "10001"}, *const cycles[] = {"-1"};
    check_bad_values(fx, "daemon", "tick_ms", "expected a whole number from 10 to 10000", ticks,
                     G_N_ELEMENTS(ticks));
    check_bad_values(fx, "capture", "pre_cycles", "expected a whole number from 0 to 1000", cycles,
                     G_N_ELEMENTS(cycles));
    write_main(fx, "[daemon]\ntick_ms = 10\n");
    load_ok(fx);
    assert_int_equal(vigil_config_get_int(fx->config, "daemon", "tick_ms"), 10);
    write_main(fx, "[daemon]\ntick_ms = 10000\n");
    load_ok(fx);
    assert_int_equal(vigil_config_get_int(fx->config, "daemon", "tick_ms"), 10000);
}

static void test_bad_double(void **state)
{
    struct fixture *fx = *state;
    static const char *const values[] = {"lots", "nan", "1e999", "-0.5", "1000.5"};
    check_bad_values(fx, "energy", "idle_w", "expected a number from 0 to 1000", values,
                     G_N_ELEMENTS(values));
    write_main(fx, "[energy]\nidle_w = 1000\n");
    load_ok(fx);
    assert_true(vigil_config_get_double(fx->config, "energy", "idle_w") == 1000.0);
}

static void test_bad_bool(void **state)
{
    struct fixture *fx = *state;
    static const char *const values[] = {"maybe"};
    check_bad_values(fx, "daemon", "foreground", "expected true or false (yes/no, on/off, 1/0)",
                     values, G_N_ELEMENTS(values));
}

static void test_bad_enum(void **state)
{
    struct fixture *fx = *state;
    static const char *const values[] = {"verbose", "ALL"};
    check_bad_values(fx, "capture", "mode", "expected one of: anomalies, all, none", values,
                     G_N_ELEMENTS(values));
}

static void check_bad_declaration(const struct vigil_config_key *key, const char *complaint);

/* A LIST with choices: an order among them, at least one, each once. */
static void test_list_with_choices(void **state)
{
    struct fixture *fx = *state;
    const struct vigil_config_key order = {.section = "energy",
                                           .name = "sources",
                                           .type = VIGIL_CONFIG_LIST,
                                           .default_value = "a;b",
                                           .choices = "a|b|c",
                                           .description = "tried in order"};
    assert_true(vigil_config_declare(fx->config, NULL, &order, 1, NULL));
    write_main(fx, "[energy]\nsources = c;a\n");
    load_ok(fx);
    const char *const *list = vigil_config_get_list(fx->config, "energy", "sources");
    assert_string_equal(list[0], "c");
    assert_string_equal(list[1], "a");
    assert_null(list[2]);
    const char *bad[] = {"a;d", "", "b;b"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        char *text = g_strdup_printf("[energy]\nsources = %s\n", bad[i]);
        write_main(fx, text);
        char *message = load_fails(fx, VIGIL_CONFIG_ERROR_BAD_VALUE);
        char *want = g_strdup_printf("[energy] sources: expected a list separated by ';', in "
                                     "order of preference, of one or more of: a, b, c, each "
                                     "once, got \"%s\"",
                                     bad[i]);
        test_assert_contains(message, want);
        g_free(want);
        g_free(message);
        g_free(text);
    }
    char *written = vigil_config_to_string(fx->config);
    test_assert_contains(written, "# in order, one or more of: a, b, c\n");
    g_free(written);
    const struct vigil_config_key bad_default = {
        .name = "l", .type = VIGIL_CONFIG_LIST, .default_value = "a;z", .choices = "a|b"};
    check_bad_declaration(&bad_default, "bad default");
}

static void test_malformed_file(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[daemon]\ntick_ms = 200\nthis is not a pair\n");
    char *message = load_fails(fx, VIGIL_CONFIG_ERROR_PARSE);
    char *prefix = g_strconcat(fx->main_path, ": ", NULL);
    assert_true(g_str_has_prefix(message, prefix));
    test_assert_contains(message, "this is not a pair");
    assert_int_equal(count_lines(message), 1);
    assert_int_equal(vigil_config_get_int(fx->config, "daemon", "tick_ms"), 100);
    g_free(prefix);
    g_free(message);
}

static void test_missing_main_file(void **state)
{
    struct fixture *fx = *state;
    expect_message(fx, VIGIL_CONFIG_ERROR_IO,
                   g_strdup_printf("cannot read the configuration: Failed to open file “%s”: %s",
                                   fx->main_path, g_strerror(ENOENT)));
    assert_null(vigil_config_files(fx->config)[0]);
}

static void test_all_errors_reported(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[daemon]\n"
                   "tick_ms = fast\n"
                   "tick_sm = 5\n"
                   "[capture]\n"
                   "mode = verbose\n"
                   "[nope]\n");
    char *drop_in = write_file(fx, "conf.d/10-a.conf", "[energy]\nidle_w = -1\n");
    char *message = load_fails(fx, VIGIL_CONFIG_ERROR_BAD_VALUE);
    assert_int_equal(count_lines(message), 5);
    char **lines = g_strsplit(message, "\n", -1);
    test_assert_contains(lines[0], "[daemon] tick_ms: expected a whole number");
    test_assert_contains(lines[1], "[daemon] tick_sm: unknown key");
    test_assert_contains(lines[2], "[capture] mode: expected one of");
    test_assert_contains(lines[3], "[nope]: unknown section");
    for (int i = 0; i < 4; i++)
        assert_true(g_str_has_prefix(lines[i], fx->main_path));
    assert_true(g_str_has_prefix(lines[4], drop_in));
    test_assert_contains(lines[4], "[energy] idle_w: expected a number from 0 to 1000, got \"-1\"");
    g_strfreev(lines);
    g_free(message);
    g_free(drop_in);
}

/* GKeyFile keeps the last of repeated lines; each key is reported once. */
static void test_repeated_keys(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[daemon]\ntick_ms = 1\ntick_ms = 300\n[capture]\n[daemon]\ntick_ms = 400\n");
    load_ok(fx);
    assert_int_equal(vigil_config_get_int(fx->config, "daemon", "tick_ms"), 400);
    write_main(fx, "[daemon]\ntick_sm = 1\ntick_sm = 2\n[daemon]\ntick_sm = 3\n");
    char *message = load_fails(fx, VIGIL_CONFIG_ERROR_UNKNOWN_KEY);
    assert_int_equal(count_lines(message), 1);
    g_free(message);
}

static void test_bad_file_not_applied(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[daemon]\ntick_ms = 200\n");
    char *a = write_file(fx, "conf.d/10-a.conf", "[capture]\nmode = all\n[daemon]\ntick_sm = 5\n");
    char *b = write_file(fx, "conf.d/20-b.conf", "[capture]\npre_cycles = 7\n");
    char *c = write_file(fx, "conf.d/30-c.conf", "[energy]\nidle_w = 5\n[daemon\n");
    char *message = load_fails(fx, VIGIL_CONFIG_ERROR_UNKNOWN_KEY);
    assert_int_equal(count_lines(message), 2);
    char **lines = g_strsplit(message, "\n", -1);
    assert_true(g_str_has_prefix(lines[0], a));
    test_assert_contains(lines[0], "[daemon] tick_sm: unknown key; did you mean 'tick_ms'?");
    assert_true(g_str_has_prefix(lines[1], c));
    g_strfreev(lines);
    const vigil_config *config = fx->config;
    assert_int_equal(vigil_config_get_int(config, "daemon", "tick_ms"), 200);
    assert_string_equal(vigil_config_source(config, "daemon", "tick_ms"), fx->main_path);
    assert_string_equal(vigil_config_get_string(config, "capture", "mode"), "anomalies");
    assert_null(vigil_config_source(config, "capture", "mode"));
    assert_int_equal(vigil_config_get_int(config, "capture", "pre_cycles"), 7);
    assert_string_equal(vigil_config_source(config, "capture", "pre_cycles"), b);
    assert_true(vigil_config_get_double(config, "energy", "idle_w") == 40.0);
    const char *const *files = vigil_config_files(config);
    assert_string_equal(files[3], c);
    assert_null(files[4]);
    g_free(message);
    g_free(a);
    g_free(b);
    g_free(c);
}

struct resolver_log {
    guint calls;
};

/* Declares "plugin.*" sections, as the plugin registry would; refuses the
 * rest. */
static gboolean resolve_plugins(vigil_config *config, const char *section, gpointer user_data,
                                GError **error)
{
    static const struct vigil_config_key keys[] = {
        {SCHEMA_KEY(NULL, "threshold", VIGIL_CONFIG_INT, "1", "how far is too far"), .min = 0,
         .max = 9},
    };
    struct resolver_log *log = user_data;
    log->calls++;
    if (!g_str_has_prefix(section, "plugin.")) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_UNKNOWN_SECTION,
                    "no plugin named \"%s\"", section);
        return FALSE;
    }
    return vigil_config_declare(config, section, keys, G_N_ELEMENTS(keys), error);
}

/* For vigil run: the same problems, but the valid values of a file with
 * problems are kept; the others keep their defaults. */
static void test_keeping_valid_values(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[daemon]\ntick_ms = 200\ntick_sm = 5\nforeground = maybe\n"
                   "[capture]\nmode = all\n[nonsense]\nx = 1\n");
    GError *error = NULL;
    assert_false(vigil_config_load_keeping_valid(fx->config, fx->main_path, &error));
    assert_non_null(error);
    assert_int_equal(count_lines(error->message), 3);
    test_assert_contains(error->message, "[daemon] tick_sm: unknown key; did you mean 'tick_ms'?");
    test_assert_contains(error->message, "[daemon] foreground: expected");
    test_assert_contains(error->message, "[nonsense]: unknown section");
    g_error_free(error);
    const vigil_config *config = fx->config;
    assert_int_equal(vigil_config_get_int(config, "daemon", "tick_ms"), 200);
    assert_string_equal(vigil_config_source(config, "daemon", "tick_ms"), fx->main_path);
    assert_string_equal(vigil_config_get_string(config, "capture", "mode"), "all");
    assert_false(vigil_config_get_bool(config, "daemon", "foreground"));
    assert_null(vigil_config_source(config, "daemon", "foreground"));
    /* The strict load of the same file applies none of it. */
    char *message = load_fails(fx, VIGIL_CONFIG_ERROR_UNKNOWN_KEY);
    assert_int_equal(vigil_config_get_int(config, "daemon", "tick_ms"), 100);
    g_free(message);
}

static void test_resolver_declares(void **state)
{
    struct fixture *fx = *state;
    struct resolver_log log = {0};
    vigil_config_set_section_resolver(fx->config, resolve_plugins, &log);
    write_main(fx, "[plugin.x]\nthreshold = 3\n");
    g_free(write_file(fx, "conf.d/10-a.conf", "[plugin.x]\n[plugin.y]\n"));
    assert_false(vigil_config_has_section(fx->config, "plugin.x"));
    load_ok(fx);
    assert_int_equal(log.calls, 2);
    assert_true(vigil_config_has_section(fx->config, "plugin.x"));
    assert_int_equal(vigil_config_get_int(fx->config, "plugin.x", "threshold"), 3);
    assert_int_equal(vigil_config_get_int(fx->config, "plugin.y", "threshold"), 1);
    /* Already declared: the resolver is not asked again. */
    load_ok(fx);
    assert_int_equal(log.calls, 2);
}

static void test_resolver_refuses(void **state)
{
    struct fixture *fx = *state;
    struct resolver_log log = {0};
    vigil_config_set_section_resolver(fx->config, resolve_plugins, &log);
    write_main(fx, "[other.y]\nthreshold = 3\n[plugin.z]\nthreshold = 10\n");
    expect_message(
        fx, VIGIL_CONFIG_ERROR_UNKNOWN_SECTION,
        g_strdup_printf("%s: [other.y]: unknown section: no plugin named \"other.y\"\n"
                        "%s: [plugin.z] threshold: expected a whole number from 0 to 9, got \"10\"",
                        fx->main_path, fx->main_path));
    assert_false(vigil_config_has_section(fx->config, "other.y"));
}

/* Declares one key in [t] and expects it refused with a message naming
 * the section and the key. */
static void check_bad_declaration(const struct vigil_config_key *key, const char *complaint)
{
    vigil_config *config = vigil_config_new();
    GError *error = NULL;
    assert_false(vigil_config_declare(config, "t", key, 1, &error));
    assert_non_null(error);
    assert_int_equal(error->code, VIGIL_CONFIG_ERROR_DECLARATION);
    char *start = g_strdup_printf("[t] %s: ", key->name ? key->name : "(null)");
    assert_true(g_str_has_prefix(error->message, start));
    test_assert_contains(error->message, complaint);
    assert_false(vigil_config_has_section(config, "t"));
    g_free(start);
    g_error_free(error);
    vigil_config_free(config);
}

static void test_bad_declarations(void **state)
{
    (void)state;
    const struct vigil_config_key out_of_range = {
        .name = "n", .type = VIGIL_CONFIG_INT, .default_value = "11", .min = 0, .max = 10};
    check_bad_declaration(&out_of_range, "bad default: expected a whole number from 0 to 10");
    const struct vigil_config_key empty_range = {
        .name = "n", .type = VIGIL_CONFIG_DOUBLE, .default_value = "1", .min = 2, .max = 1};
    check_bad_declaration(&empty_range, "min is above max");
    const struct vigil_config_key no_choices = {
        .name = "e", .type = VIGIL_CONFIG_ENUM, .default_value = "a"};
    check_bad_declaration(&no_choices, "choices");
    const struct vigil_config_key not_a_choice = {
        .name = "e", .type = VIGIL_CONFIG_ENUM, .default_value = "c", .choices = "a|b"};
    check_bad_declaration(&not_a_choice, "bad default");
    const struct vigil_config_key bad_type = {.name = "x", .type = 99, .default_value = "1"};
    check_bad_declaration(&bad_type, "invalid type");
    const struct vigil_config_key no_name = {.name = "", .type = VIGIL_CONFIG_STRING};
    check_bad_declaration(&no_name, "key name");
    const struct vigil_config_key bad_bool = {
        .name = "b", .type = VIGIL_CONFIG_BOOL, .default_value = "maybe"};
    check_bad_declaration(&bad_bool, "bad default");
}

static void test_duplicate_declarations(void **state)
{
    struct fixture *fx = *state;
    GError *error = NULL;
    assert_false(vigil_config_declare(fx->config, NULL, &schema[0], 1, &error));
    assert_int_equal(error->code, VIGIL_CONFIG_ERROR_DECLARATION);
    assert_string_equal(error->message, "[daemon] tick_ms: declared twice");
    g_clear_error(&error);

    /* Twice in one call, and nothing of that call is kept. */
    const struct vigil_config_key twice[] = {
        {.section = "new", .name = "a", .type = VIGIL_CONFIG_STRING},
        {.section = "new", .name = "a", .type = VIGIL_CONFIG_STRING},
    };
    assert_false(vigil_config_declare(fx->config, NULL, twice, 2, &error));
    assert_string_equal(error->message, "[new] a: declared twice");
    assert_false(vigil_config_has_section(fx->config, "new"));
    g_clear_error(&error);

    /* The same name in another section is a different key. */
    assert_true(vigil_config_declare(fx->config, "other", &schema[0], 1, &error));
    assert_int_equal(vigil_config_get_int(fx->config, "other", "tick_ms"), 100);

    /* A plugin without keys still has a section. */
    assert_true(vigil_config_declare(fx->config, "plugin.empty", NULL, 0, &error));
    assert_true(vigil_config_has_section(fx->config, "plugin.empty"));
    write_main(fx, "[plugin.empty]\n");
    load_ok(fx);
}

static void test_to_string_round_trip(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[daemon]\n"
                   "tick_ms = 250\n"
                   "socket_path = \\s/tmp/x # not a comment;\\\\\\n\\tend \n"
                   "plugins = a;b\\;c;\n"
                   "foreground = on\n"
                   "[energy]\n"
                   "idle_w = 0.1\n");
    load_ok(fx);
    char *text = vigil_config_to_string(fx->config);
    assert_true(g_str_has_prefix(text, "# "));
    char *first_line = g_strndup(text, strcspn(text, "\n"));
    test_assert_contains(first_line, fx->main_path);
    g_free(first_line);
    test_assert_contains(text, "# default\n");
    char *from = g_strdup_printf("# from %s\n", fx->main_path);
    test_assert_contains(text, from);
    g_free(from);
    test_assert_contains(text, "# time between two samples\n# from 10 to 10000\ntick_ms = 250\n");
    test_assert_contains(text, "# one of: anomalies, all, none\n");
    /* Sections sorted, keys in declaration order. */
    const char *capture = strstr(text, "[capture]"), *daemon = strstr(text, "[daemon]");
    const char *energy = strstr(text, "[energy]");
    assert_true(capture != NULL && daemon != NULL && energy != NULL);
    assert_true(capture < daemon && daemon < energy);
    assert_true(strstr(text, "tick_ms =") < strstr(text, "plugins ="));

    struct fixture *again = fixture_new();
    write_main(again, text);
    load_ok(again);
    static const char *const plugins[] = {"a", "b;c", NULL};
    static const struct schema_values read_back = {
        250, " /tmp/x # not a comment;\\\n\tend ", TRUE, plugins, "anomalies", 5, 0.1};
    check_values(again->config, &read_back);
    g_free(text);
    fixture_free(again);
}

static void test_to_string_hides_passwords(void **state)
{
    struct fixture *fx = *state;
    static const struct vigil_config_key keys[] = {
        {SCHEMA_KEY("warehouse", "conninfo", VIGIL_CONFIG_STRING, "", NULL),
         .redact_password = true},
        {SCHEMA_KEY("warehouse", "uri", VIGIL_CONFIG_STRING, "", NULL), .redact_password = true},
        {SCHEMA_KEY("warehouse", "glued", VIGIL_CONFIG_STRING, "", NULL), .redact_password = true},
        {SCHEMA_KEY("warehouse", "unclosed", VIGIL_CONFIG_STRING, "", NULL),
         .redact_password = true},
    };
    GError *error = NULL;
    assert_true(vigil_config_declare(fx->config, NULL, keys, G_N_ELEMENTS(keys), &error));
    write_main(fx, "[warehouse]\n"
                   "conninfo = host=db1 password='s3 cr\\\\'et' dbname=vigil PASSWORD=zq9x\n"
                   "glued = password='gl ue'd0 host=db1\n"
                   "unclosed = host=db1 password='un closed\n"
                   "uri = postgresql://vigil:hunter2@db1:5432/vigil\n");
    load_ok(fx);
    char *text = vigil_config_to_string(fx->config);
    test_assert_contains(text, "conninfo = host=db1 password=*** dbname=vigil PASSWORD=***\n");
    test_assert_contains(text, "uri = postgresql://vigil:***@db1:5432/vigil\n");
    /* Found by fuzz-config: text glued to a closing quote, which was left
     * shown and then redacted away on the next writing. */
    test_assert_contains(text, "glued = password=*** host=db1\n");
    test_assert_contains(text, "unclosed = host=db1 password=***\n");
    assert_not_contains(text, "ue'd0");
    assert_not_contains(text, "un closed");
    assert_not_contains(text, "s3");
    assert_not_contains(text, "zq9x");
    assert_not_contains(text, "hunter2");
    /* The values themselves are untouched. */
    assert_string_equal(vigil_config_get_string(fx->config, "warehouse", "uri"),
                        "postgresql://vigil:hunter2@db1:5432/vigil");
    g_free(text);
}

static void test_reload_starts_from_defaults(void **state)
{
    struct fixture *fx = *state;
    write_main(fx, "[daemon]\ntick_ms = 200\n");
    char *a = write_file(fx, "conf.d/10-a.conf", "[capture]\nmode = none\n");
    load_ok(fx);
    assert_int_equal(vigil_config_get_int(fx->config, "daemon", "tick_ms"), 200);
    assert_string_equal(vigil_config_get_string(fx->config, "capture", "mode"), "none");
    assert_int_equal(g_remove(a), 0);
    write_main(fx, "[capture]\npre_cycles = 9\n");
    load_ok(fx);
    assert_int_equal(vigil_config_get_int(fx->config, "daemon", "tick_ms"), 100);
    assert_null(vigil_config_source(fx->config, "daemon", "tick_ms"));
    assert_string_equal(vigil_config_get_string(fx->config, "capture", "mode"), "anomalies");
    assert_int_equal(vigil_config_get_int(fx->config, "capture", "pre_cycles"), 9);
    const char *const *files = vigil_config_files(fx->config);
    assert_string_equal(files[0], fx->main_path);
    assert_null(files[1]);
    g_free(a);
}

static void test_wrong_getter_is_critical(void **state)
{
    struct fixture *fx = *state;
    guint before = criticals;
    assert_int_equal(vigil_config_get_int(fx->config, "daemon", "socket_path"), 0);
    assert_int_equal(criticals, before + 1);
    assert_null(vigil_config_get_string(fx->config, "daemon", "nothing"));
    assert_int_equal(criticals, before + 2);
    assert_false(vigil_config_get_bool(fx->config, "nowhere", "foreground"));
    assert_null(vigil_config_get_list(fx->config, "capture", "mode"));
    assert_true(vigil_config_get_double(fx->config, "daemon", "tick_ms") == 0.0);
    assert_int_equal(criticals, before + 5);
    /* ENUM values are read as strings. */
    assert_string_equal(vigil_config_get_string(fx->config, "capture", "mode"), "anomalies");
    assert_int_equal(criticals, before + 5);
}

#define FIXTURE_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    g_log_set_writer_func(count_criticals, NULL, NULL);
    const struct CMUnitTest tests[] = {
        FIXTURE_TEST(test_defaults_when_empty),
        FIXTURE_TEST(test_values_applied),
        FIXTURE_TEST(test_bool_spellings),
        FIXTURE_TEST(test_conf_d_order),
        FIXTURE_TEST(test_unknown_section),
        FIXTURE_TEST(test_unknown_key),
        FIXTURE_TEST(test_key_in_wrong_section),
        FIXTURE_TEST(test_bad_int),
        FIXTURE_TEST(test_int_range),
        FIXTURE_TEST(test_bad_double),
        FIXTURE_TEST(test_bad_bool),
        FIXTURE_TEST(test_bad_enum),
        FIXTURE_TEST(test_list_with_choices),
        FIXTURE_TEST(test_malformed_file),
        FIXTURE_TEST(test_missing_main_file),
        FIXTURE_TEST(test_all_errors_reported),
        FIXTURE_TEST(test_repeated_keys),
        FIXTURE_TEST(test_bad_file_not_applied),
        FIXTURE_TEST(test_keeping_valid_values),
        FIXTURE_TEST(test_resolver_declares),
        FIXTURE_TEST(test_resolver_refuses),
        cmocka_unit_test(test_bad_declarations),
        cmocka_unit_test_setup_teardown(test_to_string_hides_passwords, setup, teardown),
        FIXTURE_TEST(test_duplicate_declarations),
        FIXTURE_TEST(test_to_string_round_trip),
        FIXTURE_TEST(test_reload_starts_from_defaults),
        FIXTURE_TEST(test_wrong_getter_is_critical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
