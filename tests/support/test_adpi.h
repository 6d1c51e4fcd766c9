/* vigil — running an anomaly-detection plugin in a test: load it through
 * the plugin registry from the build's plugin directory, create it from
 * its section's lines, register metrics in a catalogue of the helper's,
 * feed it samples and activities, end cycles and look at the issues each
 * one reported. Include after <cmocka.h>. */
#ifndef VIGIL_TEST_ADPI_H
#define VIGIL_TEST_ADPI_H

#include <glib.h>

#include "vigil/adpi.h"
#include "vigil/metric.h"
#include "vigil/node_load.h"
#include "vigil/plugin.h"

#include "test_support.h"

struct test_adpi {
    vigil_plugin_registry *registry;
    vigil_config *config;
    vigil_metric_catalog *catalog;
    const struct vigil_plugin *plugin;
    const struct vigil_adpi_ops *ops;
    void *instance;
    char *section; /* "adpi.NAME" */
    guint64 cycle;
    GArray *issues; /* struct vigil_issue: those of the last cycle */
};

/* Loads ADPI NAME with `section_lines` as the body of its [adpi.NAME]
 * section ("k = 2\n"; NULL for the defaults) and creates it; fails the test
 * on any error. */
void test_adpi_open(struct test_adpi *a, const char *name, const char *section_lines);
void test_adpi_close(struct test_adpi *a);

/* The message with which ADPI NAME refuses `section_lines`, from the
 * configuration's checks or from create(); fails the test when it takes
 * them. g_free it. */
char *test_adpi_open_error(const char *name, const char *section_lines);

/* ADPI NAME refuses `section_lines` with a message that holds `needle`
 * ("[adpi.NAME] key"): test_adpi_open_error and test_assert_contains. */
void test_adpi_assert_refused(const char *name, const char *section_lines, const char *needle);

/* The optional ops of struct vigil_adpi_ops, for test_adpi_assert_descriptor. */
enum test_adpi_op {
    TEST_ADPI_SAMPLES = 1 << 0,
    TEST_ADPI_ACTIVITY = 1 << 1,
    TEST_ADPI_RECONFIGURE = 1 << 2,
    TEST_ADPI_NODE_LOAD = 1 << 3,
};

/* ADPI NAME's descriptor, opened with its defaults: it is named NAME, its
 * settings are sound (test_adpi_assert_settings_sound), it has each of the
 * ops of `has` and none of those of `lacks` (TEST_ADPI_* bits). */
void test_adpi_assert_descriptor(const char *name, unsigned has, unsigned lacks);

/* Every ADPI test's test_the_descriptor: test_adpi_assert_descriptor as a
 * cmocka test of its own. Stands at file scope, without a semicolon. */
#define TEST_ADPI_DESCRIPTOR(name, has, lacks)                                                     \
    static void test_the_descriptor(void **state)                                                  \
    {                                                                                              \
        (void)state;                                                                               \
        test_adpi_assert_descriptor((name), (has), (lacks));                                       \
    }

/* What every ADPI's settings table must be, rather than a count that
 * would only repeat it: its defaults make an instance; every key is
 * described and fills a field of the plugin's settings; and a value its
 * type refuses (past its range, not a choice, not a bool) is refused with
 * the section, the key and the value named. */
void test_adpi_assert_settings_sound(const char *name);
/* The same for any table of keys in `section`: each key described and
 * filling a field, and, for a value its type refuses (past its range, not
 * a choice, not a bool), the message `refusal` returns for the section
 * holding `lines` ("key = value\n") names the section, key and value. */
void test_assert_settings_sound(const char *section, const struct vigil_settings_table *table,
                                char *(*refusal)(const char *lines, void *user), void *user);

/* reconfigure() with a section of `section_lines`: TRUE, or FALSE with
 * *error set (the configuration's checks or the plugin's). On success the
 * new configuration replaces the old one, as in vigild. */
gboolean test_adpi_reconfigure(struct test_adpi *a, const char *section_lines, GError **error);
void test_adpi_reconfigure_ok(struct test_adpi *a, const char *section_lines);

/* Registers a metric in the helper's catalogue (source "test"). */
guint32 test_adpi_metric(struct test_adpi *a, const char *name, const char *unit,
                         enum vigil_metric_kind kind, enum vigil_metric_origin origin);
guint32 test_adpi_counter(struct test_adpi *a, const char *name, const char *unit);
guint32 test_adpi_gauge(struct test_adpi *a, const char *name, const char *unit);

/* One tick of one sample; and of several. */
void test_adpi_sample(struct test_adpi *a, guint32 metric_id, guint64 t_ns, double value);
void test_adpi_samples(struct test_adpi *a, const struct vigil_sample *samples, size_t n);

/* One metric's sample in a tick of TEST_ADPI_TICK. */
struct test_adpi_value {
    guint32 metric_id;
    double value;
};
/* test_adpi_sample for each of `values` in turn, all at `t_ns`. */
void test_adpi_tick(struct test_adpi *a, guint64 t_ns, const struct test_adpi_value *values,
                    size_t n);
/* test_adpi_tick of the {metric_id, value} pairs after `t_ns`. */
#define TEST_ADPI_TICK(a, t_ns, ...)                                                               \
    test_adpi_tick((a), (t_ns), (const struct test_adpi_value[]){__VA_ARGS__},                     \
                   G_N_ELEMENTS(((const struct test_adpi_value[]){__VA_ARGS__})))

/* The node's load over the cycle about to close, for a process ADPI
 * (node_load). */
void test_adpi_node_load(struct test_adpi *a, const struct vigil_node_load *load);

/* `n` calls of LAYER/OP taking `duration_ns` each, starting at 1 s. */
void test_adpi_calls(struct test_adpi *a, unsigned layer, unsigned op, guint64 duration_ns,
                     guint n);

/* Ends the next cycle at `end_ns`; returns its issues, valid until the
 * next cycle. */
GArray *test_adpi_cycle(struct test_adpi *a, guint64 end_ns);
/* Ends a cycle that must report nothing. */
void test_adpi_cycle_quiet(struct test_adpi *a, guint64 end_ns);
/* Ends a cycle that must report exactly one issue, and returns it. */
const struct vigil_issue *test_adpi_cycle_one(struct test_adpi *a, guint64 end_ns);

/* Exactly, not within an epsilon: the test does the plugin's arithmetic. */
void test_assert_issue(const struct vigil_issue *issue, enum vigil_health health,
                       const char *metric, double value);
void test_assert_expected(const struct vigil_issue *issue, double min, double max);

/* Nanoseconds in a second: tests put ticks on whole seconds. */
#define TEST_S 1000000000ull

#endif
