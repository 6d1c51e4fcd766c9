/* vigil — a real Prometheus (Debian's) scrapes a real vigild's /metrics
 * every second, and answers a PromQL query for the node's energy with the
 * labels vigild gave it. Prometheus asks for OpenMetrics first, so this is
 * its parser reading vigild's OpenMetrics text. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include <cmocka.h>

#include "metrics_fetch.h"
#include "test_daemon.h"
#include "test_support.h"

/* Only a failure waits this long: Prometheus starts in a few seconds. */
#define DEADLINE_US (45 * G_USEC_PER_SEC)
#define POLL_US     (200 * 1000)

static GPid prometheus_pid;

static void stop_prometheus(void)
{
    if (prometheus_pid <= 0)
        return;
    kill(prometheus_pid, SIGTERM);
    int status;
    waitpid(prometheus_pid, &status, 0);
    g_spawn_close_pid(prometheus_pid);
    prometheus_pid = 0;
}

static int teardown(void **state)
{
    stop_prometheus();
    return test_daemon_teardown(state);
}

static char *read_log(const char *path)
{
    char *log = NULL;
    g_file_get_contents(path, &log, NULL, NULL);
    return log != NULL ? log : g_strdup("(no log)");
}

static void test_prometheus_scrapes_node_energy(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    char *url = metrics_daemon_start(&d, dir, NULL);
    /* host:port of the target, from http://host:port/metrics */
    const char *host_port = url + strlen("http://");
    char *target = g_strndup(host_port, strcspn(host_port, "/"));

    char *config_path = g_build_filename(dir, "prometheus.yml", NULL);
    char *config = g_strdup_printf("global:\n"
                                   "  scrape_interval: 1s\n"
                                   "  scrape_timeout: 1s\n"
                                   "scrape_configs:\n"
                                   "  - job_name: vigild\n"
                                   "    static_configs:\n"
                                   "      - targets: ['%s']\n",
                                   target);
    assert_true(g_file_set_contents(config_path, config, -1, NULL));
    guint16 port = metrics_free_port();
    char *config_arg = g_strconcat("--config.file=", config_path, NULL);
    char *tsdb_arg = g_strdup_printf("--storage.tsdb.path=%s/tsdb", dir);
    char *listen_arg = g_strdup_printf("--web.listen-address=127.0.0.1:%u", port);
    char *log_path = g_build_filename(dir, "prometheus.log", NULL);
    const char *argv[] = {"/bin/sh",  "-c",       "exec prometheus \"$@\" >\"$0\" 2>&1",
                          log_path,   config_arg, tsdb_arg,
                          listen_arg, NULL};
    GError *error = NULL;
    if (!g_spawn_async(dir, (char **)argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL,
                       &prometheus_pid, &error))
        fail_msg("cannot start prometheus: %s", error->message);

    /* Asks Prometheus until the query has a sample: it must start, scrape
     * and store one first. */
    char *query = g_strdup_printf(
        "http://127.0.0.1:%u/api/v1/query?query=vigil_node_energy_joules_total", port);
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    JsonParser *parser = json_parser_new();
    JsonArray *result = NULL;
    for (;;) {
        int status;
        if (waitpid(prometheus_pid, &status, WNOHANG) == prometheus_pid) {
            prometheus_pid = 0;
            fail_msg("prometheus exited (status %d):\n%s", status, read_log(log_path));
        }
        /* Nothing listens before it is up: only an answer is parsed. */
        guint code = 0;
        char *body = metrics_try_get(query, &code);
        if (body != NULL && code == 200 && json_parser_load_from_data(parser, body, -1, NULL)) {
            JsonObject *root = json_node_get_object(json_parser_get_root(parser));
            assert_string_equal(json_object_get_string_member(root, "status"), "success");
            result =
                json_object_get_array_member(json_object_get_object_member(root, "data"), "result");
            if (json_array_get_length(result) > 0) {
                g_free(body);
                break;
            }
        }
        g_free(body);
        if (g_get_monotonic_time() > deadline)
            fail_msg("prometheus has no sample of vigil_node_energy_joules_total after %d s:\n%s",
                     (int)(DEADLINE_US / G_USEC_PER_SEC), read_log(log_path));
        g_usleep(POLL_US); /* between two polls of a bounded loop */
    }
    assert_int_equal(json_array_get_length(result), 1);
    JsonObject *series = json_array_get_object_element(result, 0);
    JsonObject *labels = json_object_get_object_member(series, "metric");
    JsonNode *status_node = test_daemon_status(&d, 0);
    JsonObject *energy = json_object_get_object_member(json_node_get_object(status_node), "energy");
    assert_string_equal(json_object_get_string_member(labels, "__name__"),
                        "vigil_node_energy_joules_total");
    assert_string_equal(json_object_get_string_member(labels, "source"),
                        json_object_get_string_member(energy, "source"));
    assert_string_equal(json_object_get_string_member(labels, "estimated"),
                        json_object_get_boolean_member(energy, "estimated") ? "true" : "false");
    assert_string_equal(json_object_get_string_member(labels, "job"), "vigild");
    assert_string_equal(json_object_get_string_member(labels, "instance"), target);
    /* [time, "value"]: a number, not below 0. */
    JsonArray *value = json_object_get_array_member(series, "value");
    const char *text = json_array_get_string_element(value, 1);
    char *end = NULL;
    double joules = g_ascii_strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(joules) || joules < 0)
        fail_msg("the energy's value is \"%s\", not a number >= 0", text);

    /* It read the OpenMetrics text: only that one gives a family its unit. */
    char *metadata_url = g_strdup_printf(
        "http://127.0.0.1:%u/api/v1/targets/metadata?metric=vigil_node_energy_joules", port);
    char *metadata = metrics_get(metadata_url, NULL, NULL, NULL);
    if (!json_parser_load_from_data(parser, metadata, -1, NULL))
        fail_msg("prometheus's metadata is not JSON: %s", metadata);
    JsonArray *families =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "data");
    if (json_array_get_length(families) != 1)
        fail_msg("prometheus has no metadata of vigil_node_energy_joules: %s", metadata);
    JsonObject *family = json_array_get_object_element(families, 0);
    assert_string_equal(json_object_get_string_member(family, "type"), "counter");
    assert_string_equal(json_object_get_string_member(family, "unit"), "joules");
    g_free(metadata);
    g_free(metadata_url);

    stop_prometheus();
    g_free(test_daemon_stop(&d));
    json_node_unref(status_node);
    g_object_unref(parser);
    g_free(query);
    g_free(log_path);
    g_free(listen_arg);
    g_free(tsdb_arg);
    g_free(config_arg);
    g_free(config);
    g_free(config_path);
    g_free(target);
    g_free(url);
}

int main(void)
{
    metrics_require_tool("prometheus", "the test starts a real Prometheus to scrape vigild");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_prometheus_scrapes_node_energy, test_make_dir,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
