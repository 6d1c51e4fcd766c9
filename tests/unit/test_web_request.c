/* Tests of vigil-web's parts that need no server: parameters, times,
 * settings and who is trusted (web/request.c, json_rows.c, web_settings.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "json_rows.h"
#include "request.h"
#include "web_settings.h"
#include "vigil/schema.h"
#include "test_main.h"

static struct web_settings settings = {.page_size = 50, .page_size_max = 1000};

/* A request with the query `pairs` ("a", "1", "b", "2", NULL). */
static struct web_request *request_new(const char *first, ...)
{
    struct web_request *req = g_new0(struct web_request, 1);
    req->path = g_strdup("/api/v1/test");
    req->query = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    req->consumed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    req->settings = &settings;
    va_list args;
    va_start(args, first);
    for (const char *name = first; name != NULL; name = va_arg(args, const char *))
        g_hash_table_insert(req->query, g_strdup(name), g_strdup(va_arg(args, const char *)));
    va_end(args);
    return req;
}

static void request_free(struct web_request *req)
{
    g_free(req->path);
    g_hash_table_unref(req->query);
    g_hash_table_unref(req->consumed);
    g_free(req->error_parameter);
    g_free(req);
}

static void test_int_parameter(void **state)
{
    (void)state;
    struct web_request *req = request_new("limit", "20", "points", "1e9", "n", "' OR 1=1 --", NULL);
    GError *error = NULL;
    gint64 v = 0;
    assert_true(web_param_int(req, "limit", 50, 1, 1000, &v, &error));
    assert_int_equal(v, 20);
    assert_true(web_param_int(req, "absent", 7, 1, 1000, &v, &error));
    assert_int_equal(v, 7);
    assert_false(web_param_int(req, "points", 600, 2, 5000, &v, &error));
    assert_int_equal(web_error_status(error), 400);
    assert_string_equal(req->error_parameter, "points");
    assert_non_null(strstr(error->message, "points: expected a whole number from 2 to 5000"));
    g_clear_error(&error);
    assert_false(web_param_int(req, "n", 1, 1, 10, &v, &error));
    assert_string_equal(req->error_parameter, "n");
    g_clear_error(&error);
    request_free(req);
}

static void test_text_parameter_refuses_control_characters_and_length(void **state)
{
    (void)state;
    struct web_request *req = request_new("a", "ok", "b", "x\ny", "c", "abcdef", NULL);
    GError *error = NULL;
    const char *text = NULL;
    assert_true(web_param_text(req, "a", 10, &text, &error));
    assert_string_equal(text, "ok");
    assert_false(web_param_text(req, "b", 10, &text, &error));
    assert_non_null(strstr(error->message, "control character"));
    g_clear_error(&error);
    assert_false(web_param_text(req, "c", 3, &text, &error));
    assert_non_null(strstr(error->message, "longer than 3 bytes"));
    g_clear_error(&error);
    request_free(req);
}

static void test_time_parameter(void **state)
{
    (void)state;
    struct web_request *req =
        request_new("iso", "2026-11-20T10:00:30.5Z", "epoch", "1795168830.5", "bad", "yesterday",
                    "minutes", "2026-11-20T11:00+01:00", NULL);
    GError *error = NULL;
    gint64 iso = 0, epoch = 0, v = 0;
    gboolean given = FALSE;
    assert_true(web_param_time(req, "iso", &iso, &given, &error));
    assert_true(given);
    assert_true(web_param_time(req, "epoch", &epoch, &given, &error));
    assert_int_equal(iso, epoch);
    assert_int_equal(iso, G_GINT64_CONSTANT(1795168830500000));
    assert_true(web_param_time(req, "minutes", &v, &given, &error)); /* no seconds, an offset */
    assert_int_equal(v, G_GINT64_CONSTANT(1795168800000000));
    assert_true(web_param_time(req, "none", &v, &given, &error));
    assert_false(given);
    assert_false(web_param_time(req, "bad", &v, &given, &error));
    assert_string_equal(req->error_parameter, "bad");
    g_clear_error(&error);
    request_free(req);
}

static void test_choice_and_unknown_parameters(void **state)
{
    (void)state;
    static const char *const choices[] = {"power", "energy", NULL};
    struct web_request *req = request_new("metric", "energy", "metirc", "power", NULL);
    GError *error = NULL;
    int i = -1;
    assert_true(web_param_choice(req, "metric", choices, 0, &i, &error));
    assert_int_equal(i, 1);
    /* A misspelt parameter is refused, not ignored. */
    assert_false(web_params_done(req, &error));
    assert_string_equal(req->error_parameter, "metirc");
    assert_non_null(strstr(error->message, "unknown parameter"));
    g_clear_error(&error);
    request_free(req);
}

static void test_path_id(void **state)
{
    (void)state;
    struct web_request *req = request_new(NULL);
    GError *error = NULL;
    gint64 id = 0;
    assert_true(web_path_id(req, "42", "run_id", &id, &error));
    assert_int_equal(id, 42);
    static const char *const bad[] = {"0", "-1", "1;DROP", "9223372036854775808", "", "4 2"};
    for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
        assert_false(web_path_id(req, bad[i], "run_id", &id, &error));
        assert_int_equal(web_error_status(error), 400);
        g_clear_error(&error);
    }
    request_free(req);
}

static void test_times_as_the_api_writes_them(void **state)
{
    (void)state;
    char *t = web_json_time_from_pg("2026-11-20 10:00:00+00");
    assert_string_equal(t, "2026-11-20T10:00:00.000000Z");
    g_free(t);
    t = web_json_time_from_pg("2026-11-20 10:00:00.5+00");
    assert_string_equal(t, "2026-11-20T10:00:00.500000Z");
    g_free(t);
    assert_null(web_json_time_from_pg("infinity"));
    t = web_time_text(G_GINT64_CONSTANT(1795168830000001));
    assert_string_equal(t, "2026-11-20T10:00:30.000001Z");
    g_free(t);
}

static vigil_config *config_with(const char *text)
{
    vigil_config *config = vigil_config_new();
    GError *error = NULL;
    assert_true(vigil_schema_declare(config, &error));
    char *dir = g_dir_make_tmp("vigil-web-XXXXXX", NULL);
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    assert_true(g_file_set_contents(path, text, -1, NULL));
    gboolean ok = vigil_config_load(config, path, &error);
    if (!ok)
        fail_msg("%s", error->message);
    g_unlink(path);
    g_rmdir(dir);
    g_free(path);
    g_free(dir);
    return config;
}

static void expect_settings_error(const char *text, const char *needle)
{
    vigil_config *config = config_with(text);
    struct web_settings s;
    GError *error = NULL;
    assert_false(web_settings_load(config, "/s", "/v", &s, &error));
    if (strstr(error->message, needle) == NULL)
        fail_msg("expected \"%s\" in: %s", needle, error->message);
    g_error_free(error);
    web_settings_clear(&s);
    vigil_config_free(config);
}

static void test_settings_refuse_what_would_expose_runs(void **state)
{
    (void)state;
    expect_settings_error("[web]\nlisten = 0.0.0.0:8470\n", "allow_none_on_network");
    expect_settings_error("[web]\nlisten = db1.example.org:8470\n", "numeric address");
    expect_settings_error("[web]\nlisten = 127.0.0.1\n", "ADDRESS:PORT");
    /* A port alone is [metrics]' loopback shorthand, not [web]'s. */
    expect_settings_error("[web]\nlisten = :8470\n", "ADDRESS:PORT");
    expect_settings_error("[web]\nlisten = 8470\n", "ADDRESS:PORT");
    expect_settings_error("[web]\nauth = remote-user\ntrusted_proxies =\n", "trusted_proxies");
    expect_settings_error("[web]\nauth = remote-user\ntrusted_proxies = proxy1\n",
                          "not a numeric IPv4 or IPv6 address");
    expect_settings_error("[web]\npage_size = 2000\npage_size_max = 1000\n", "page_size");

    vigil_config *config = config_with("[warehouse]\nconninfo = dbname=w\n[web]\nlisten = [::]:0\n"
                                       "allow_none_on_network = true\n");
    struct web_settings s;
    GError *error = NULL;
    assert_true(web_settings_load(config, "/s", "/v", &s, &error));
    assert_string_equal(s.listen_host, "::");
    assert_int_equal(s.listen_port, 0);
    assert_string_equal(s.conninfo, "dbname=w"); /* [warehouse]'s when [web] has none */
    assert_string_equal(s.static_dir, "/s");
    web_settings_clear(&s);
    vigil_config_free(config);
}

static void test_trusted_proxies(void **state)
{
    (void)state;
    vigil_config *config = config_with("[web]\nauth = remote-user\ntrusted_proxies = 10.0.0.5\n");
    struct web_settings s;
    GError *error = NULL;
    assert_true(web_settings_load(config, "/s", "/v", &s, &error));
    static const struct {
        const char *address;
        gboolean trusted;
    } cases[] = {
        {"10.0.0.5", TRUE},  {"::ffff:10.0.0.5", TRUE}, /* an IPv4 client on a dual-stack socket */
        {"10.0.0.6", FALSE}, {"127.0.0.1", FALSE},      {"::1", FALSE},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        GInetAddress *a = g_inet_address_new_from_string(cases[i].address);
        assert_int_equal(web_settings_trusts(&s, a), cases[i].trusted);
        g_object_unref(a);
    }
    web_settings_clear(&s);
    vigil_config_free(config);
}

TEST_MAIN(cmocka_unit_test(test_int_parameter),
          cmocka_unit_test(test_text_parameter_refuses_control_characters_and_length),
          cmocka_unit_test(test_time_parameter),
          cmocka_unit_test(test_choice_and_unknown_parameters), cmocka_unit_test(test_path_id),
          cmocka_unit_test(test_times_as_the_api_writes_them),
          cmocka_unit_test(test_settings_refuse_what_would_expose_runs),
          cmocka_unit_test(test_trusted_proxies))
