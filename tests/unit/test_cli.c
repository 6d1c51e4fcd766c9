/* Tests of the `vigil` program itself: runs the built binary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_support.h"
#include "test_main.h"

/* A test given a fresh folder in *state. */
#define IN_DIR(f) cmocka_unit_test_setup_teardown(f, test_make_dir, test_remove_dir)

/* `vigil COMMAND ARGS…` exits with `status`, saying `needle` on stdout
 * (status 0) or on stderr. */
static void assert_says(const char *command, const char *const *args, int status,
                        const char *needle)
{
    struct test_run r = test_run_vigil(NULL, command, args);
    test_assert_status(&r, status, command);
    test_assert_contains(status == 0 ? r.out : r.err, needle);
    test_run_clear(&r);
}

/* A file of `text` with `mode` in `dir`; its path. */
static char *file_in(const char *dir, const char *name, const char *text, int mode)
{
    char *path = g_build_filename(dir, name, NULL);
    assert_true(g_file_set_contents(path, text, -1, NULL));
    assert_int_equal(g_chmod(path, mode), 0);
    return path;
}

/* `vigil config check` on DIR/vigil.conf holding `text`, with
 * `--plugin-dir plugin_dir` unless that is NULL, and what it says: each of
 * the needles on stdout when it accepts it (status 0), on stderr and
 * nothing on stdout when it refuses it (1). */
static void check_config(const char *dir, const char *plugin_dir, const char *text, int status,
                         va_list needles)
{
    char *path = file_in(dir, "vigil.conf", text, 0644);
    struct test_run r = test_vigil("config", "check", "--config", path,
                                   plugin_dir != NULL ? "--plugin-dir" : NULL, plugin_dir, NULL);
    if (r.status != status)
        fail_msg("config check of:\n%s\nexited with %d, not %d\nstdout: %s\nstderr: %s", text,
                 r.status, status, r.out, r.err);
    if (status != 0)
        assert_string_equal(r.out, "");
    for (const char *needle = va_arg(needles, const char *); needle != NULL;
         needle = va_arg(needles, const char *))
        test_assert_contains(status == 0 ? r.out : r.err, needle);
    test_run_clear(&r);
    g_free(path);
}

/* check_config without --plugin-dir; the needles NULL-terminated. */
static void assert_check(const char *dir, const char *text, int status, ...) G_GNUC_NULL_TERMINATED;

static void assert_check(const char *dir, const char *text, int status, ...)
{
    va_list ap;
    va_start(ap, status);
    check_config(dir, NULL, text, status, ap);
    va_end(ap);
}

static void test_version(void **state)
{
    (void)state;
    struct test_run r = test_vigil("--version", NULL);
    assert_int_equal(r.status, 0);
    assert_true(g_str_has_prefix(r.out, "vigil "));
    test_run_clear(&r);
}

/* A subcommand's help names it as it is typed, "…" and all, whatever the
 * locale (the tests run in a clean, C-locale environment). */
static void test_subcommand_help_names_the_command(void **state)
{
    (void)state;
    const char *const help[] = {"--help", NULL};
    assert_says("run", help, 0, "Usage:\n  vigil run [OPTION…] -- PROGRAM [ARGS…]\n");
    assert_says("export", help, 0, "  vigil export [OPTION…]");
}

/* `vigil --help` lists each command with a summary: every option the
 * summary names is one the command's own --help knows. */
static void test_command_summaries_name_real_options(void **state)
{
    (void)state;
    struct test_run r = test_vigil("--help", NULL);
    assert_int_equal(r.status, 0);
    test_assert_contains(r.out, "  runs [--limit N]");
    GRegex *option = g_regex_new("--[a-z][a-z-]*", 0, 0, NULL);
    char **lines = g_strsplit(r.out, "\n", -1);
    int checked = 0;
    for (char **line = lines; *line != NULL; line++) {
        if (!g_str_has_prefix(*line, "  ") || strchr(*line, ':') == NULL)
            continue;
        char *name = g_strndup(*line + 2, strcspn(*line + 2, " :"));
        char *synopsis = g_strndup(*line, (gsize)(strchr(*line, ':') - *line));
        struct test_run help = test_vigil(name, "--help", NULL);
        assert_int_equal(help.status, 0);
        /* "db migrate|version|…": the same actions as the command's usage. */
        char **words = g_strsplit(synopsis + 2, " ", 3);
        if (words[1] != NULL && strchr(words[1], '|') != NULL && words[1][0] != '[') {
            char *usage = g_strdup_printf("[OPTION…] %s\n", words[1]);
            if (strstr(help.out, usage) == NULL)
                fail_msg("vigil --help says '%s' for %s; `vigil %s --help` says:\n%s", words[1],
                         name, name, help.out);
            g_free(usage);
        }
        g_strfreev(words);
        GMatchInfo *match;
        g_regex_match(option, synopsis, 0, &match);
        for (; g_match_info_matches(match); g_match_info_next(match, NULL)) {
            char *found = g_match_info_fetch(match, 0);
            char *with_space = g_strconcat(found, "=", NULL);
            if (strstr(help.out, with_space) == NULL) {
                char *as_flag = g_strconcat(found, " ", NULL);
                if (strstr(help.out, as_flag) == NULL)
                    fail_msg("vigil --help says '%s' for %s, which `vigil %s --help` does not "
                             "know:\n%s",
                             found, name, name, help.out);
                g_free(as_flag);
            }
            g_free(with_space);
            g_free(found);
            checked++;
        }
        g_match_info_free(match);
        test_run_clear(&help);
        g_free(synopsis);
        g_free(name);
    }
    assert_true(checked > 10);
    g_strfreev(lines);
    g_regex_unref(option);
    test_run_clear(&r);
}

static void test_unknown_command_is_a_usage_error(void **state)
{
    (void)state;
    assert_says("frobnicate", (const char *const[]){NULL}, 2, "unknown command 'frobnicate'");
    assert_says("config", (const char *const[]){"chek", NULL}, 2, "usage: vigil config check");
}

static void test_config_check_prints_the_effective_config(void **state)
{
    const char *dir = *state;
    test_write_file(dir, "conf.d/50-debug.conf", "[log]\nlevel = debug\n");
    /* With where the value came from. */
    assert_check(dir, "[log]\nlevel = info\n", 0, "[log]", "level = debug", "50-debug.conf", NULL);
}

/* A ring size that is not a power of two: vigil run calls it a problem,
 * and so does config check (it accepted it before). */
static void test_config_check_ring_slots(void **state)
{
    assert_check(*state, "[preload]\nring_slots = 100\n", 1,
                 "[preload] ring_slots: expected a power of two, got 100", NULL);
}

/* [insight]: what a key's range cannot say (a size-bin edge), refused by
 * the check vigild and the local protocol use too, naming the file and key. */
static void test_config_check_insight(void **state)
{
    assert_check(*state, "[insight]\nsmall_access_bytes = 4096\n", 1,
                 "vigil.conf: [insight] small_access_bytes: 4096 is not one of Darshan's size-bin "
                 "edges",
                 NULL);
    assert_check(*state, "[insight]\nsmall_access_bytes = 10240\nrepeated_opens = 20\n", 0,
                 "[insight]", "small_access_bytes = 10240", "repeated_opens = 20", NULL);
}

static void test_config_check_names_a_misspelt_key(void **state)
{
    const char *dir = *state;
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    assert_check(dir, "[log]\nlevle = debug\n", 1, path, "[log] levle", "did you mean 'level'",
                 NULL);
    g_free(path);
}

static void test_config_check_reports_every_problem(void **state)
{
    const char *dir = *state;
    test_write_file(dir, "conf.d/10-x.conf", "[log]\nlevel = warn\n");
    assert_check(dir, "[log]\nlevel = loud\n[lgo]\n", 1, "\"loud\"", "[lgo]", "10-x.conf",
                 "\"warn\"", NULL);
}

static void test_config_check_of_a_missing_file(void **state)
{
    (void)state;
    assert_says("config",
                (const char *const[]){"check", "--config", "/nonexistent/vigil.conf", NULL}, 1,
                "/nonexistent/vigil.conf");
}

/* check_config with the test plugins' folder (VIGIL_TEST_PLUGIN_DIR). */
static void assert_check_with_plugins(const char *dir, const char *text, int status,
                                      ...) G_GNUC_NULL_TERMINATED;

static void assert_check_with_plugins(const char *dir, const char *text, int status, ...)
{
    va_list ap;
    va_start(ap, status);
    check_config(dir, test_env_or_fail("VIGIL_TEST_PLUGIN_DIR"), text, status, ap);
    va_end(ap);
}

static void test_config_check_checks_plugin_sections(void **state)
{
    const char *dir = *state;
    assert_check_with_plugins(dir, "[provider.test-counter]\nsetp = 2\n", 1,
                              "[provider.test-counter] setp", "did you mean 'step'", NULL);
}

/* Run from the build tree, vigil finds the providers next to it: their
 * sections are checked against their own keys with no --plugin-dir. */
static void test_config_check_finds_the_providers(void **state)
{
    const char *dir = *state;
    assert_check(dir, "[provider.energy]\nsources = estimate\nidel_w = 40\n", 1,
                 "[provider.energy] idel_w", "did you mean 'idle_w'", NULL);
    assert_check(dir, "[provider.energy]\nsources = estimate\nidle_w = 40\n", 0,
                 "[provider.energy]", "idle_w = 40", NULL);
}

/* The energy provider's `sources`: an order among known sources, at least
 * one, each once; the error names the section and the key. */
static void test_config_check_checks_energy_sources(void **state)
{
    const char *dir = *state;
    const char *expected =
        "expected a list separated by ';', in order of preference, of one or more of: likwid, "
        "powercap, estimate, each once";
    assert_check(dir, "[provider.energy]\nsources = likwid;rapl\n", 1, "[provider.energy] sources",
                 "got \"likwid;rapl\"", expected, NULL);
    assert_check(dir, "[provider.energy]\nsources =\n", 1, "[provider.energy] sources", expected,
                 NULL);
    assert_check(dir, "[provider.energy]\nsources = estimate;estimate\n", 1,
                 "[provider.energy] sources", expected, NULL);
    assert_check(dir, "[provider.energy]\nsource = estimate\n", 1, "[provider.energy] source",
                 "did you mean 'sources'", NULL);
    assert_check(dir, "[provider.energy]\nsources = estimate;likwid\n", 0,
                 "sources = estimate;likwid;\n", NULL);
}

/* [web] is checked as vigil-web checks it at start, by the same function. */
static void test_config_check_checks_web(void **state)
{
    const char *dir = *state;
    assert_check(dir, "[web]\nlisten = 0.0.0.0:8470\n", 1, "[web] listen = 0.0.0.0:8470",
                 "allow_none_on_network", NULL);
    assert_check(dir, "[web]\nlisten = webhost:8470\n", 1, "[web] listen", "numeric address", NULL);
    assert_check(dir, "[web]\nauth = remote-user\ntrusted_proxies = proxy.example\n", 1,
                 "trusted_proxies", "proxy.example", NULL);
    assert_check(dir, "[web]\nauth = remote-user\ntrusted_proxies =\n", 1, "auth = remote-user",
                 "trusted_proxies", NULL);
    assert_check(dir,
                 "[web]\nlisten = 10.1.2.3:8470\nauth = remote-user\n"
                 "trusted_proxies = 10.1.2.1\nadmins = alice;bob\n",
                 0, "admins = alice;bob", NULL);
}

/* [advise]: `vigil advise`'s defaults, typed and bounded. */
static void test_config_check_checks_advise(void **state)
{
    const char *dir = *state;
    assert_check(dir, "[advise]\npower_exponent = 9\nfrequency_step_mhz = 0\n", 1,
                 "[advise] power_exponent: expected a number from 0.5 to 6",
                 "[advise] frequency_step_mhz: expected a whole number from 1 to 1000", NULL);
    assert_check(dir, "[advise]\npower_exponent = 2.5\n", 0, "power_exponent = 2.5",
                 "frequency_step_mhz = 100", NULL);
}

/* A vigil.conf of vigil-txd's CURVE key file and list of daemons' keys,
 * and the uplink's server key and key file: a NULL one is left out, and
 * so is a section left with none. */
static char *curve_config(const char *txd_key, const char *txd_list, const char *server_key,
                          const char *uplink_key)
{
    const struct {
        const char *section, *key, *value;
    } settings[] = {
        {"txd", "curve_key_file", txd_key},
        {"txd", "curve_authorized_keys", txd_list},
        {"uplink", "curve_server_key", server_key},
        {"uplink", "curve_key_file", uplink_key},
    };
    GString *text = g_string_new(NULL);
    const char *section = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(settings); i++) {
        if (settings[i].value == NULL)
            continue;
        if (section == NULL || strcmp(section, settings[i].section) != 0)
            g_string_append_printf(text, "[%s]\n", settings[i].section);
        section = settings[i].section;
        g_string_append_printf(text, "%s = %s\n", settings[i].key, settings[i].value);
    }
    return g_string_free(text, FALSE);
}

/* The CURVE key files are checked as vigild and vigil-txd check them at
 * start, by the same function: each way a file can be wrong is refused
 * with its reason, and a good configuration passes. */
static void test_config_check_checks_curve_key_files(void **state)
{
    const char *dir = *state;
    char *good = g_build_filename(dir, "good.key", NULL);
    char *other = g_build_filename(dir, "other.key", NULL);
    const char *keys[] = {good, other};
    for (int i = 0; i < 2; i++) {
        struct test_run r = test_vigil("keygen", keys[i], NULL);
        test_assert_status(&r, 0, "vigil keygen");
        test_run_clear(&r);
    }
    char *text = NULL;
    GKeyFile *good_file = g_key_file_new(), *other_file = g_key_file_new();
    assert_true(g_key_file_load_from_file(good_file, good, G_KEY_FILE_NONE, NULL));
    assert_true(g_key_file_load_from_file(other_file, other, G_KEY_FILE_NONE, NULL));
    char *good_public = g_key_file_get_string(good_file, "curve", "public", NULL);
    char *other_public = g_key_file_get_string(other_file, "curve", "public", NULL);
    char *other_secret = g_key_file_get_string(other_file, "curve", "secret", NULL);
    assert_true(g_file_get_contents(good, &text, NULL, NULL));
    char *open_to_all = file_in(dir, "open.key", text, 0644);
    g_free(text);
    char *garbage = file_in(dir, "garbage.key", "this is no key file\n", 0600);
    text = g_strdup_printf("[curve]\npublic = %s\nsecret = %s\n", good_public, other_secret);
    char *mismatched = file_in(dir, "mismatched.key", text, 0600);
    g_free(text);
    char *bad_list = file_in(dir, "daemons.txt", "# daemons\nnot-a-key\n", 0644);
    char *good_list = g_strconcat(good, ".pub", NULL);
    char *missing = g_build_filename(dir, "missing.key", NULL);
    char *bad_server_key = g_strdup_printf("%.39s~", other_public);

    /* Refused, naming a and b: the uplink's, vigil-txd's pair and list,
     * and both sections wrong, both named. */
    const struct {
        const char *txd_key, *txd_list, *server_key, *uplink_key;
        const char *a, *b;
    } refused[] = {
        {NULL, NULL, other_public, missing, "[uplink] curve_key_file", "missing.key: No such file"},
        {NULL, NULL, other_public, open_to_all, "[uplink] curve_key_file",
         "may be read by others (mode 0644)"},
        {NULL, NULL, other_public, garbage, "[uplink] curve_key_file", "garbage.key"},
        {NULL, NULL, other_public, mismatched, "mismatched.key",
         "[curve] public is not the public key of [curve] secret"},
        {NULL, NULL, other_public, NULL, "[uplink] curve_server_key and curve_key_file go together",
         "curve_key_file is empty"},
        {NULL, NULL, bad_server_key, good, "[uplink] curve_server_key", "not in the Z85 alphabet"},
        {other, bad_list, NULL, NULL, "[txd] curve_authorized_keys",
         "daemons.txt:2: not a CURVE public key"},
        {open_to_all, good_list, other_public, garbage, "[txd] curve_key_file: CURVE key file",
         "[uplink] curve_key_file"},
        {other, NULL, NULL, NULL, "[txd] curve_key_file and curve_authorized_keys go together",
         "would admit any key"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        text = curve_config(refused[i].txd_key, refused[i].txd_list, refused[i].server_key,
                            refused[i].uplink_key);
        assert_check(dir, text, 1, refused[i].a, refused[i].b, NULL);
        g_free(text);
    }
    text = curve_config(other, good_list, other_public, good);
    assert_check(dir, text, 0, NULL);
    g_free(text);

    g_key_file_free(good_file);
    g_key_file_free(other_file);
    g_free(good_public);
    g_free(other_public);
    g_free(other_secret);
    g_free(open_to_all);
    g_free(garbage);
    g_free(mismatched);
    g_free(bad_list);
    g_free(good_list);
    g_free(missing);
    g_free(bad_server_key);
    g_free(good);
    g_free(other);
}

TEST_MAIN(cmocka_unit_test(test_version), cmocka_unit_test(test_unknown_command_is_a_usage_error),
          cmocka_unit_test(test_subcommand_help_names_the_command),
          cmocka_unit_test(test_command_summaries_name_real_options),
          IN_DIR(test_config_check_ring_slots), IN_DIR(test_config_check_insight),
          IN_DIR(test_config_check_prints_the_effective_config),
          IN_DIR(test_config_check_names_a_misspelt_key),
          IN_DIR(test_config_check_checks_curve_key_files), IN_DIR(test_config_check_checks_web),
          IN_DIR(test_config_check_checks_advise), IN_DIR(test_config_check_reports_every_problem),
          cmocka_unit_test(test_config_check_of_a_missing_file),
          IN_DIR(test_config_check_checks_plugin_sections),
          IN_DIR(test_config_check_finds_the_providers),
          IN_DIR(test_config_check_checks_energy_sources))
