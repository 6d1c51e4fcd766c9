/* vigil — /metrics' text from a snapshot, without a daemon: both formats,
 * counter naming, metadata, escaping, absent figures; and the jobs'
 * figures staying counters when processes end and jobs are folded. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "metrics.h"
#include "vigild_settings.h"
#include "test_support.h"
#include "test_main.h"

static void add_job(struct vigild_metrics_snapshot *s, const char *id, double energy_j)
{
    struct vigild_metrics_job job = {g_strdup(id), energy_j, 1024, 2048, 3};
    g_array_append_val(s->jobs, job);
}

static char *render(const struct vigild_metrics_snapshot *s, enum vigild_metrics_format format)
{
    GString *out = g_string_new(NULL);
    vigild_metrics_render(s, format, out);
    return g_string_free(out, FALSE);
}

/* cmocka setup: an empty snapshot as *state. */
static int empty_snapshot(void **state)
{
    struct vigild_metrics_snapshot *s = g_new(struct vigild_metrics_snapshot, 1);
    vigild_metrics_snapshot_init(s);
    *state = s;
    return 0;
}

/* cmocka setup: a snapshot with the node's energy and power as *state. */
static int snapshot_with_energy(void **state)
{
    empty_snapshot(state);
    struct vigild_metrics_snapshot *s = *state;
    s->version = "1.2.3";
    s->energy_j = 12.5;
    s->energy_source = "energy/powercap";
    s->power_w = 80;
    return 0;
}

static int snapshot_free(void **state)
{
    vigild_metrics_snapshot_clear(*state);
    g_free(*state);
    return 0;
}

static void test_openmetrics_counter_has_family_metadata_and_total_sample(void **state)
{
    struct vigild_metrics_snapshot *s = *state;
    char *text = render(s, VIGILD_METRICS_OPENMETRICS);
    test_assert_contains(text, "# TYPE vigil_node_energy_joules counter\n"
                               "# UNIT vigil_node_energy_joules joules\n"
                               "# HELP vigil_node_energy_joules ");
    test_assert_contains(
        text,
        "\nvigil_node_energy_joules_total{source=\"energy/powercap\",estimated=\"false\"} 12.5\n");
    test_assert_contains(text, "\nvigil_node_power_watts{source=\"energy/powercap\","
                               "estimated=\"false\"} 80\n");
    assert_true(g_str_has_suffix(text, "\n# EOF\n"));
    assert_ptr_equal(strstr(text, "# EOF"), text + strlen(text) - strlen("# EOF\n"));
    g_free(text);
}

/* Every sample of a counter family is FAMILY_total, of a gauge FAMILY;
 * every family has TYPE and HELP, every name the vigil_ prefix. */
static void test_every_sample_named_after_its_family(void **state)
{
    struct vigild_metrics_snapshot *s = *state;
    add_job(s, "7", 1.5);
    s->uplink = true;
    char *text = render(s, VIGILD_METRICS_OPENMETRICS);
    char **lines = g_strsplit(text, "\n", -1);
    char family[128] = "", type[16] = "";
    guint samples = 0, families = 0;
    gboolean help = FALSE;
    for (char **l = lines; *l != NULL && **l != '\0'; l++) {
        if (g_str_has_prefix(*l, "# TYPE ")) {
            assert_true(families == 0 || help);
            assert_int_equal(sscanf(*l, "# TYPE %127s %15s", family, type), 2);
            assert_true(g_str_has_prefix(family, "vigil_"));
            assert_false(g_str_has_suffix(family, "_total"));
            families++;
            help = FALSE;
        } else if (g_str_has_prefix(*l, "# HELP ")) {
            char *want = g_strconcat("# HELP ", family, " ", NULL);
            assert_true(g_str_has_prefix(*l, want));
            g_free(want);
            help = TRUE;
        } else if (**l != '#') {
            char *want = g_strconcat(family, strcmp(type, "counter") == 0 ? "_total" : "", NULL);
            size_t n = strlen(want);
            if (strncmp(*l, want, n) != 0 || ((*l)[n] != ' ' && (*l)[n] != '{'))
                fail_msg("sample \"%s\" in family %s (%s)", *l, family, type);
            g_free(want);
            samples++;
        }
    }
    assert_true(families >= 20);
    assert_true(samples >= 10);
    g_strfreev(lines);
    g_free(text);
}

static void test_prometheus_format_types_counters_by_sample(void **state)
{
    struct vigild_metrics_snapshot *s = *state;
    char *text = render(s, VIGILD_METRICS_PROMETHEUS);
    test_assert_contains(text, "# TYPE vigil_node_energy_joules_total counter\n"
                               "# HELP vigil_node_energy_joules_total ");
    test_assert_contains(text, "# TYPE vigil_node_power_watts gauge\n");
    assert_null(strstr(text, "# UNIT"));
    assert_null(strstr(text, "# EOF"));
    g_free(text);
}

static void test_label_values_escaped(void **state)
{
    struct vigild_metrics_snapshot *s = *state;
    add_job(s, "a\"b\\c\nd", 2);
    add_job(s, "bad\xff", 3);
    char *text = render(s, VIGILD_METRICS_OPENMETRICS);
    test_assert_contains(text, "\nvigil_job_energy_joules_total{job_id=\"a\\\"b\\\\c\\nd\"} 2\n");
    /* Not UTF-8: the byte becomes U+FFFD. */
    test_assert_contains(text, "{job_id=\"bad\xef\xbf\xbd\"} 3\n");
    test_assert_contains(text, "\nvigil_job_processes{job_id=\"bad\xef\xbf\xbd\"} 3\n");
    g_free(text);
    GString *one = g_string_new(NULL);
    vigild_metrics_append_label_value(one, "\\\"\n");
    assert_string_equal(one->str, "\\\\\\\"\\n");
    g_string_free(one, TRUE);
}

/* A figure vigild does not have has no sample; its family is still
 * described. */
static void test_absent_figures_leave_metadata_only(void **state)
{
    struct vigild_metrics_snapshot *s = *state;
    char *text = render(s, VIGILD_METRICS_OPENMETRICS);
    test_assert_contains(text, "# TYPE vigil_node_energy_joules counter\n");
    assert_null(strstr(text, "vigil_node_energy_joules_total"));
    assert_null(strstr(text, "vigil_node_power_watts{"));
    test_assert_contains(text, "# TYPE vigil_daemon_spool_bytes gauge\n");
    assert_null(strstr(text, "\nvigil_daemon_spool_bytes "));
    assert_null(strstr(text, "NaN"));
    test_assert_contains(text, "\nvigil_daemon_ticks_total 0\n");
    g_free(text);
}

static void test_numbers_shortest_round_trip(void **state)
{
    struct vigild_metrics_snapshot *s = *state;
    s->energy_source = "energy/estimate";
    s->energy_estimated = true;
    s->energy_j = 0.1;
    s->power_w = 1e20;
    s->memory_total_bytes = 25276026880.0;
    char *text = render(s, VIGILD_METRICS_OPENMETRICS);
    test_assert_contains(text, "estimated=\"true\"} 0.1\n");
    test_assert_contains(text, "estimated=\"true\"} 1e+20\n");
    test_assert_contains(text, "\nvigil_node_memory_total_bytes 25276026880\n");
    g_free(text);
}

static void test_format_follows_accept(void **state)
{
    (void)state;
    assert_int_equal(vigild_metrics_format_for_accept(NULL), VIGILD_METRICS_PROMETHEUS);
    assert_int_equal(vigild_metrics_format_for_accept("text/plain;version=0.0.4"),
                     VIGILD_METRICS_PROMETHEUS);
    /* What Prometheus 2.42 sends. */
    assert_int_equal(vigild_metrics_format_for_accept(
                         "application/openmetrics-text;version=1.0.0,application/"
                         "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/"
                         "*;q=0.1"),
                     VIGILD_METRICS_OPENMETRICS);
    assert_string_equal(vigild_metrics_content_type(VIGILD_METRICS_OPENMETRICS),
                        "application/openmetrics-text; version=1.0.0; charset=utf-8");
}

static double energy_by_id(void *user, uint64_t process_id)
{
    const double *energy = user;
    return energy[process_id];
}

static const struct vigild_metrics_job *find(GArray *jobs, const char *id)
{
    for (guint i = 0; i < jobs->len; i++)
        if (strcmp(g_array_index(jobs, struct vigild_metrics_job, i).job, id) == 0)
            return &g_array_index(jobs, struct vigild_metrics_job, i);
    return NULL;
}

static void collect(struct vigild_metrics_jobs *j, double *energy,
                    struct vigild_metrics_snapshot *s)
{
    vigild_metrics_snapshot_clear(s);
    vigild_metrics_snapshot_init(s);
    vigild_metrics_jobs_collect(j, energy_by_id, energy, s->jobs, &s->jobs_running,
                                &s->jobs_folded);
}

/* max_jobs = 1: job A has its series, B and C are folded into _other.
 * A's energy does not fall when one of its processes ends, _other's not
 * when a folded job ends; each series goes with its job's last process. */
static void test_jobs_stay_counters(void **state)
{
    (void)state;
    struct vigild_metrics_jobs j;
    vigild_metrics_jobs_init(&j, 1);
    double energy[6] = {0, 10, 20, 5, 7, 0};
    vigild_metrics_jobs_process_started(&j, 1, "A");
    vigild_metrics_jobs_process_started(&j, 2, "A");
    vigild_metrics_jobs_process_started(&j, 3, "B");
    vigild_metrics_jobs_process_started(&j, 4, "C");
    vigild_metrics_jobs_process_started(&j, 5, NULL);
    struct vigild_metrics_snapshot s;
    vigild_metrics_snapshot_init(&s);
    collect(&j, energy, &s);
    assert_int_equal(s.jobs_running, 3);
    assert_int_equal(s.jobs_folded, 2);
    assert_true(find(s.jobs, "A")->energy_j == 30);
    assert_int_equal(find(s.jobs, "A")->processes, 2);
    assert_true(find(s.jobs, VIGILD_METRICS_OTHER_JOBS)->energy_j == 12);
    assert_null(find(s.jobs, "B"));

    /* Process 1 ends at 11 J, 3 at 6 J: their accounts go. */
    vigild_metrics_jobs_process_ended(&j, 1, 11, 4);
    energy[1] = NAN;
    vigild_metrics_jobs_process_ended(&j, 3, 6, 1);
    energy[3] = NAN;
    collect(&j, energy, &s);
    assert_true(find(s.jobs, "A")->energy_j == 31);
    assert_int_equal(find(s.jobs, "A")->processes, 1);
    assert_true(find(s.jobs, VIGILD_METRICS_OTHER_JOBS)->energy_j == 13);
    assert_int_equal(s.jobs_running, 2);
    assert_int_equal(s.jobs_folded, 1);
    assert_int_equal(j.ended_ring_dropped, 5);

    /* A new job while A holds the one series: folded too. */
    vigild_metrics_jobs_process_started(&j, 1, "D");
    energy[1] = 0;
    vigild_metrics_jobs_process_ended(&j, 2, 20, 0);
    vigild_metrics_jobs_process_ended(&j, 4, 8, 0);
    collect(&j, energy, &s);
    assert_null(find(s.jobs, "A"));
    assert_int_equal(s.jobs_running, 1);
    assert_int_equal(s.jobs_folded, 1);
    assert_true(find(s.jobs, VIGILD_METRICS_OTHER_JOBS)->energy_j == 14);
    vigild_metrics_snapshot_clear(&s);
    vigild_metrics_jobs_clear(&j);
}

static void assert_listen(const char *text, const char *host, guint16 port)
{
    char *h = NULL;
    guint16 p = 1;
    GError *error = NULL;
    if (!vigil_metrics_parse_listen(text, &h, &p, &error))
        fail_msg("listen = %s refused: %s", text, error->message);
    assert_string_equal(h, host);
    assert_int_equal(p, port);
    g_free(h);
}

static void test_listen_forms(void **state)
{
    (void)state;
    char *host = NULL;
    guint16 port = 1;
    assert_true(vigil_metrics_parse_listen("", &host, &port, NULL));
    assert_null(host); /* off */
    assert_listen("9470", "127.0.0.1", 9470);
    assert_listen(":9470", "127.0.0.1", 9470);
    assert_listen("localhost:9470", "127.0.0.1", 9470);
    assert_listen("0.0.0.0:9470", "0.0.0.0", 9470);
    assert_listen("[::1]:9470", "::1", 9470);
    assert_listen(":0", "127.0.0.1", 0);
    const char *bad[] = {"node1:9470", "127.0.0.1", "127.0.0.1:", "127.0.0.1:70000",
                         "::1:9470",   "[::1]",     "9470x",      "-1"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        GError *error = NULL;
        if (vigil_metrics_parse_listen(bad[i], &host, &port, &error))
            fail_msg("listen = %s accepted", bad[i]);
        char *want = g_strdup_printf("[metrics] listen = %s:", bad[i]);
        test_assert_contains(error->message, want);
        g_free(want);
        g_error_free(error);
    }
}

#define WITH_ENERGY(f) cmocka_unit_test_setup_teardown(f, snapshot_with_energy, snapshot_free)
#define EMPTY(f)       cmocka_unit_test_setup_teardown(f, empty_snapshot, snapshot_free)

TEST_MAIN(WITH_ENERGY(test_openmetrics_counter_has_family_metadata_and_total_sample),
          WITH_ENERGY(test_every_sample_named_after_its_family),
          WITH_ENERGY(test_prometheus_format_types_counters_by_sample),
          WITH_ENERGY(test_label_values_escaped), EMPTY(test_absent_figures_leave_metadata_only),
          EMPTY(test_numbers_shortest_round_trip), cmocka_unit_test(test_format_follows_accept),
          cmocka_unit_test(test_jobs_stay_counters), cmocka_unit_test(test_listen_forms))
