/* Tests of the `vigil` program itself: runs the built binary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_support.h"
#include "test_main.h"

/* Runs `vigil ARGS…` (NULL-terminated) with our environment. */
static struct test_run run_vigil(const char *first, ...)
{
    const char *cli = test_env_or_fail("VIGIL_CLI");
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)cli);
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a != NULL; a = va_arg(ap, const char *))
        g_ptr_array_add(argv, (gpointer)a);
    va_end(ap);
    g_ptr_array_add(argv, NULL);
    struct test_run r = test_run_program(NULL, (const char *const *)argv->pdata, NULL);
    g_ptr_array_free(argv, TRUE);
    return r;
}

/* A folder with vigil.conf (and conf.d/ entries); removed by remove_tree. */
static char *make_config(const char *main_text, const char *dropin_name, const char *dropin)
{
    char *dir = g_dir_make_tmp("vigil-test-cli-XXXXXX", NULL);
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    assert_true(g_file_set_contents(path, main_text, -1, NULL));
    if (dropin_name != NULL) {
        char *confd = g_build_filename(dir, "conf.d", NULL);
        g_mkdir(confd, 0700);
        char *p = g_build_filename(confd, dropin_name, NULL);
        assert_true(g_file_set_contents(p, dropin, -1, NULL));
        g_free(p);
        g_free(confd);
    }
    g_free(dir);
    return path;
}

static void remove_tree(char *config_path)
{
    char *dir = g_path_get_dirname(config_path);
    test_remove_tree(dir);
    g_free(dir);
    g_free(config_path);
}

static void test_version(void **state)
{
    (void)state;
    struct test_run r = run_vigil("--version", NULL);
    assert_int_equal(r.status, 0);
    assert_true(g_str_has_prefix(r.out, "vigil "));
    test_run_clear(&r);
}

/* A subcommand's help names it as it is typed, "…" and all, whatever the
 * locale (the tests run in a clean, C-locale environment). */
static void test_subcommand_help_names_the_command(void **state)
{
    (void)state;
    struct test_run r = run_vigil("run", "--help", NULL);
    assert_int_equal(r.status, 0);
    test_assert_contains(r.out, "Usage:\n  vigil run [OPTION…] -- PROGRAM [ARGS…]\n");
    test_run_clear(&r);
    r = run_vigil("export", "--help", NULL);
    assert_int_equal(r.status, 0);
    test_assert_contains(r.out, "  vigil export [OPTION…]");
    test_run_clear(&r);
}

/* `vigil --help` lists each command with a summary: every option the
 * summary names is one the command's own --help knows. */
static void test_command_summaries_name_real_options(void **state)
{
    (void)state;
    struct test_run r = run_vigil("--help", NULL);
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
        struct test_run help = run_vigil(name, "--help", NULL);
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
    struct test_run r = run_vigil("frobnicate", NULL);
    assert_int_equal(r.status, 2);
    test_assert_contains(r.err, "unknown command 'frobnicate'");
    test_run_clear(&r);
    r = run_vigil("config", "chek", NULL);
    assert_int_equal(r.status, 2);
    test_assert_contains(r.err, "usage: vigil config check");
    test_run_clear(&r);
}

static void test_config_check_prints_the_effective_config(void **state)
{
    (void)state;
    char *path = make_config("[log]\nlevel = info\n", "50-debug.conf", "[log]\nlevel = debug\n");
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 0);
    test_assert_contains(r.out, "[log]");
    test_assert_contains(r.out, "level = debug");
    test_assert_contains(r.out, "50-debug.conf"); /* where the value came from */
    test_run_clear(&r);
    remove_tree(path);
}

/* A ring size that is not a power of two: vigil run calls it a problem,
 * and so does config check (it accepted it before). */
static void test_config_check_ring_slots(void **state)
{
    (void)state;
    char *path = make_config("[preload]\nring_slots = 100\n", NULL, NULL);
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "[preload] ring_slots: expected a power of two, got 100");
    test_run_clear(&r);
    remove_tree(path);
}

static void test_config_check_names_a_misspelt_key(void **state)
{
    (void)state;
    char *path = make_config("[log]\nlevle = debug\n", NULL, NULL);
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, path);
    test_assert_contains(r.err, "[log] levle");
    test_assert_contains(r.err, "did you mean 'level'");
    assert_string_equal(r.out, "");
    test_run_clear(&r);
    remove_tree(path);
}

static void test_config_check_reports_every_problem(void **state)
{
    (void)state;
    char *path = make_config("[log]\nlevel = loud\n[lgo]\n", "10-x.conf", "[log]\nlevel = warn\n");
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "\"loud\"");
    test_assert_contains(r.err, "[lgo]");
    test_assert_contains(r.err, "10-x.conf");
    test_assert_contains(r.err, "\"warn\"");
    test_run_clear(&r);
    remove_tree(path);
}

static void test_config_check_of_a_missing_file(void **state)
{
    (void)state;
    struct test_run r = run_vigil("config", "check", "--config", "/nonexistent/vigil.conf", NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "/nonexistent/vigil.conf");
    test_run_clear(&r);
}

static void test_config_check_checks_plugin_sections(void **state)
{
    (void)state;
    const char *plugins = test_env_or_fail("VIGIL_TEST_PLUGIN_DIR");
    char *path = make_config("[provider.test-counter]\nsetp = 2\n", NULL, NULL);
    struct test_run r =
        run_vigil("config", "check", "--config", path, "--plugin-dir", plugins, NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "[provider.test-counter] setp");
    test_assert_contains(r.err, "did you mean 'step'");
    test_run_clear(&r);
    remove_tree(path);
}

/* Run from the build tree, vigil finds the providers next to it: their
 * sections are checked against their own keys with no --plugin-dir. */
static void test_config_check_finds_the_providers(void **state)
{
    (void)state;
    char *path = make_config("[provider.energy]\nsources = estimate\nidel_w = 40\n", NULL, NULL);
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 1);
    test_assert_contains(r.err, "[provider.energy] idel_w");
    test_assert_contains(r.err, "did you mean 'idle_w'");
    test_run_clear(&r);
    remove_tree(path);

    path = make_config("[provider.energy]\nsources = estimate\nidle_w = 40\n", NULL, NULL);
    r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 0);
    test_assert_contains(r.out, "[provider.energy]");
    test_assert_contains(r.out, "idle_w = 40");
    test_run_clear(&r);
    remove_tree(path);
}

/* A file of `text` with `mode` in `dir`; its path. */
static char *file_in(const char *dir, const char *name, const char *text, int mode)
{
    char *path = g_build_filename(dir, name, NULL);
    assert_true(g_file_set_contents(path, text, -1, NULL));
    assert_int_equal(g_chmod(path, mode), 0);
    return path;
}

/* `vigil config check` with `text` as vigil.conf: fails naming `a` and `b`. */
static void assert_check_refuses(const char *dir, const char *text, const char *a, const char *b)
{
    char *path = file_in(dir, "vigil.conf", text, 0644);
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    if (r.status != 1)
        fail_msg("config check accepted:\n%s\n(status %d, stderr: %s)", text, r.status, r.err);
    test_assert_contains(r.err, a);
    test_assert_contains(r.err, b);
    assert_string_equal(r.out, "");
    test_run_clear(&r);
    g_free(path);
}

/* The energy provider's `sources`: an order among known sources, at least
 * one, each once; the error names the section and the key. */
static void test_config_check_checks_energy_sources(void **state)
{
    (void)state;
    char *dir = g_dir_make_tmp("vigil-test-cli-XXXXXX", NULL);
    const char *expected =
        "expected a list separated by ';', in order of preference, of one or more of: likwid, "
        "powercap, estimate, each once";
    assert_check_refuses(dir, "[provider.energy]\nsources = likwid;rapl\n",
                         "[provider.energy] sources", "got \"likwid;rapl\"");
    assert_check_refuses(dir, "[provider.energy]\nsources = likwid;rapl\n",
                         "[provider.energy] sources", expected);
    assert_check_refuses(dir, "[provider.energy]\nsources =\n", "[provider.energy] sources",
                         expected);
    assert_check_refuses(dir, "[provider.energy]\nsources = estimate;estimate\n",
                         "[provider.energy] sources", expected);
    assert_check_refuses(dir, "[provider.energy]\nsource = estimate\n", "[provider.energy] source",
                         "did you mean 'sources'");
    char *path = file_in(dir, "vigil.conf", "[provider.energy]\nsources = estimate;likwid\n", 0644);
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    assert_int_equal(r.status, 0);
    test_assert_contains(r.out, "sources = estimate;likwid;\n");
    test_run_clear(&r);
    g_free(path);
    test_remove_tree(dir);
    g_free(dir);
}

/* [web] is checked as vigil-web checks it at start, by the same function. */
static void test_config_check_checks_web(void **state)
{
    (void)state;
    char *dir = g_dir_make_tmp("vigil-test-cli-XXXXXX", NULL);
    assert_check_refuses(dir, "[web]\nlisten = 0.0.0.0:8470\n", "[web] listen = 0.0.0.0:8470",
                         "allow_none_on_network");
    assert_check_refuses(dir, "[web]\nlisten = webhost:8470\n", "[web] listen", "numeric address");
    assert_check_refuses(dir, "[web]\nauth = remote-user\ntrusted_proxies = proxy.example\n",
                         "trusted_proxies", "proxy.example");
    assert_check_refuses(dir, "[web]\nauth = remote-user\ntrusted_proxies =\n",
                         "auth = remote-user", "trusted_proxies");
    char *path = file_in(dir, "vigil.conf",
                         "[web]\nlisten = 10.1.2.3:8470\nauth = remote-user\n"
                         "trusted_proxies = 10.1.2.1\nadmins = alice;bob\n",
                         0644);
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    test_assert_status(&r, 0, "vigil config check of a good [web]");
    test_assert_contains(r.out, "admins = alice;bob");
    test_run_clear(&r);
    g_free(path);
    test_remove_tree(dir);
    g_free(dir);
}

/* [advise]: `vigil advise`'s defaults, typed and bounded. */
static void test_config_check_checks_advise(void **state)
{
    (void)state;
    char *dir = g_dir_make_tmp("vigil-test-cli-XXXXXX", NULL);
    assert_check_refuses(dir, "[advise]\npower_exponent = 9\nfrequency_step_mhz = 0\n",
                         "[advise] power_exponent: expected a number from 0.5 to 6",
                         "[advise] frequency_step_mhz: expected a whole number from 1 to 1000");
    char *path = file_in(dir, "vigil.conf", "[advise]\npower_exponent = 2.5\n", 0644);
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    test_assert_status(&r, 0, "vigil config check of a good [advise]");
    test_assert_contains(r.out, "power_exponent = 2.5");
    test_assert_contains(r.out, "frequency_step_mhz = 100");
    test_run_clear(&r);
    g_free(path);
    test_remove_tree(dir);
    g_free(dir);
}

/* The CURVE key files are checked as vigild and vigil-txd check them at
 * start, by the same function: each way a file can be wrong is refused
 * with its reason, and a good configuration passes. */
static void test_config_check_checks_curve_key_files(void **state)
{
    (void)state;
    char *dir = g_dir_make_tmp("vigil-test-cli-XXXXXX", NULL);
    char *good = g_build_filename(dir, "good.key", NULL);
    char *other = g_build_filename(dir, "other.key", NULL);
    const char *keys[] = {good, other};
    for (int i = 0; i < 2; i++) {
        struct test_run r = run_vigil("keygen", keys[i], NULL);
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

    struct {
        const char *file, *a, *b;
    } uplink_cases[] = {
        {"missing.key", "[uplink] curve_key_file", "missing.key: No such file"},
        {open_to_all, "[uplink] curve_key_file", "may be read by others (mode 0644)"},
        {garbage, "[uplink] curve_key_file", "garbage.key"},
        {mismatched, "mismatched.key", "[curve] public is not the public key of [curve] secret"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(uplink_cases); i++) {
        char *file = g_path_is_absolute(uplink_cases[i].file)
                         ? g_strdup(uplink_cases[i].file)
                         : g_build_filename(dir, uplink_cases[i].file, NULL);
        text = g_strdup_printf("[uplink]\ncurve_server_key = %s\ncurve_key_file = %s\n",
                               other_public, file);
        assert_check_refuses(dir, text, uplink_cases[i].a, uplink_cases[i].b);
        g_free(text);
        g_free(file);
    }
    text = g_strdup_printf("[uplink]\ncurve_server_key = %s\n", other_public);
    assert_check_refuses(dir, text, "[uplink] curve_server_key and curve_key_file go together",
                         "curve_key_file is empty");
    g_free(text);
    text = g_strdup_printf("[uplink]\ncurve_server_key = %.39s~\ncurve_key_file = %s\n",
                           other_public, good);
    assert_check_refuses(dir, text, "[uplink] curve_server_key", "not in the Z85 alphabet");
    g_free(text);
    /* vigil-txd's pair and list; both sections wrong: both named. */
    text = g_strdup_printf("[txd]\ncurve_key_file = %s\ncurve_authorized_keys = %s\n", other,
                           bad_list);
    assert_check_refuses(dir, text, "[txd] curve_authorized_keys",
                         "daemons.txt:2: not a CURVE public key");
    g_free(text);
    text = g_strdup_printf("[txd]\ncurve_key_file = %s\ncurve_authorized_keys = %s\n"
                           "[uplink]\ncurve_server_key = %s\ncurve_key_file = %s\n",
                           open_to_all, good_list, other_public, garbage);
    assert_check_refuses(dir, text, "[txd] curve_key_file: CURVE key file",
                         "[uplink] curve_key_file");
    g_free(text);
    text = g_strdup_printf("[txd]\ncurve_key_file = %s\n", other);
    assert_check_refuses(dir, text, "[txd] curve_key_file and curve_authorized_keys go together",
                         "would admit any key");
    g_free(text);

    text = g_strdup_printf("[txd]\ncurve_key_file = %s\ncurve_authorized_keys = %s\n"
                           "[uplink]\ncurve_server_key = %s\ncurve_key_file = %s\n",
                           other, good_list, other_public, good);
    char *path = file_in(dir, "vigil.conf", text, 0644);
    struct test_run r = run_vigil("config", "check", "--config", path, NULL);
    test_assert_status(&r, 0, "config check of good CURVE keys");
    test_run_clear(&r);
    g_free(path);
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
    g_free(good);
    g_free(other);
    test_remove_tree(dir);
    g_free(dir);
}

TEST_MAIN(cmocka_unit_test(test_version), cmocka_unit_test(test_unknown_command_is_a_usage_error),
          cmocka_unit_test(test_subcommand_help_names_the_command),
          cmocka_unit_test(test_command_summaries_name_real_options),
          cmocka_unit_test(test_config_check_ring_slots),
          cmocka_unit_test(test_config_check_prints_the_effective_config),
          cmocka_unit_test(test_config_check_names_a_misspelt_key),
          cmocka_unit_test(test_config_check_checks_curve_key_files),
          cmocka_unit_test(test_config_check_checks_web),
          cmocka_unit_test(test_config_check_checks_advise),
          cmocka_unit_test(test_config_check_reports_every_problem),
          cmocka_unit_test(test_config_check_of_a_missing_file),
          cmocka_unit_test(test_config_check_checks_plugin_sections),
          cmocka_unit_test(test_config_check_finds_the_providers),
          cmocka_unit_test(test_config_check_checks_energy_sources))
