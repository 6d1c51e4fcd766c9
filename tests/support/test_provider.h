/* vigil — running a statistics provider in a test: load it through the
 * plugin registry from the build's plugin directory, create it from a
 * configuration text, start it, and collect what one read emits, by metric
 * name. Include after <cmocka.h>. */
#ifndef VIGIL_TEST_PROVIDER_H
#define VIGIL_TEST_PROVIDER_H

#include <glib.h>

#include "vigil/metric.h"
#include "vigil/plugin.h"
#include "vigil/provider.h"

#include "test_support.h"

struct test_provider {
    vigil_plugin_registry *registry;
    vigil_config *config;
    vigil_metric_catalog *catalog;
    const struct vigil_plugin *plugin;
    const struct vigil_provider_ops *ops;
    void *instance;
    char *config_dir;
};

/* Loads provider NAME with `config_text` (the whole vigil.conf, e.g.
 * "[provider.procstat]\nroot = /tmp/x\n") and creates it; fails the
 * test on any error. */
void test_provider_open(struct test_provider *p, const char *name, const char *config_text);
void test_provider_close(struct test_provider *p);

/* start(): TRUE, or FALSE with *error set (the test checks the message). */
gboolean test_provider_start(struct test_provider *p, GError **error);

/* One read at `now_ns`. Returns the samples by metric name (a GHashTable of
 * char * → struct test_sample *), a process's as "NAME@PROCESS_ID", or
 * NULL with *error set. */
struct test_sample {
    double value;
    guint32 flags;
};
GHashTable *test_provider_read(struct test_provider *p, guint64 now_ns, GError **error);

/* The value of `metric` in `samples`; fails the test when it is missing. */
double test_sample_value(GHashTable *samples, const char *metric);
/* The metric's description, which must be registered. */
const struct vigil_metric_desc *test_metric(struct test_provider *p, const char *metric);

/* A cmocka test given a fresh folder in *state for its fixture tree. */
#define TEST_WITH_DIR(f) cmocka_unit_test_setup_teardown(f, test_make_dir, test_remove_dir)

/* test_provider_open with [provider.NAME] root = ROOT, then the lines of
 * `extra_config` (or NULL). */
void test_provider_open_at(struct test_provider *p, const char *name, const char *root,
                           const char *extra_config);

/* Opens provider NAME on ROOT and starts it; fails the test on any error.
 * The second writes `text` to ROOT/relative first. */
void test_provider_start_at(struct test_provider *p, const char *name, const char *root);
void test_provider_start_on_fixture(struct test_provider *p, const char *name, const char *root,
                                    const char *relative, const char *text);

/* start() and read(), failing the test on an error. */
void test_provider_start_ok(struct test_provider *p);
GHashTable *test_provider_read_ok(struct test_provider *p, guint64 now_ns);

/* start() must fail with `code`: returns the message (g_free it). */
char *test_provider_start_error(struct test_provider *p, enum vigil_provider_error_code code);

/* Provider NAME on ROOT, with the lines of `extra_config` (or NULL),
 * cannot start: error `code`, with a message holding each of the needles
 * (NULL-terminated). */
void test_provider_assert_cannot_start(const char *name, const char *root, const char *extra_config,
                                       enum vigil_provider_error_code code,
                                       ...) G_GNUC_NULL_TERMINATED;

/* Provider NAME on ROOT cannot start: UNAVAILABLE, with a message naming
 * ROOT/relative and strerror(errno_value). */
void test_provider_assert_unavailable(const char *name, const char *root, const char *relative,
                                      int errno_value);

/* With ROOT/relative holding `text`, provider NAME cannot start:
 * VIGIL_PROVIDER_ERROR_READ, with a message holding `in_message`. */
void test_provider_assert_start_fails(const char *name, const char *root, const char *relative,
                                      const char *text, const char *in_message);

/* Provider NAME starts on ROOT/relative holding `good`; once the file holds
 * `bad`, a read must fail with VIGIL_PROVIDER_ERROR_READ, naming the file
 * and holding `in_message`. */
void test_provider_assert_read_fails(const char *name, const char *root, const char *relative,
                                     const char *good, const char *bad, const char *in_message);

/* track() and untrack(), for a provider that measures processes: they
 * must be in its ops. The second fails the test on an error. */
gboolean test_provider_track(struct test_provider *p, guint64 process_id, pid_t pid,
                             GError **error);
void test_provider_track_ok(struct test_provider *p, guint64 process_id, pid_t pid);
void test_provider_untrack(struct test_provider *p, guint64 process_id);

/* Exactly, not within an epsilon: the provider and the test do the same
 * arithmetic on the same numbers. */
void test_assert_sample(GHashTable *samples, const char *metric, double want);

/* One read at `now_ns` gives exactly `metrics`, with the values want[]. */
void test_provider_assert_read(struct test_provider *p, guint64 now_ns, const char *const *metrics,
                               const double *want, gsize n);

/* A version of a provider's file, and the values of its metrics from it. */
struct test_file_version {
    const char *text;
    const double *values;
};

/* Provider NAME started on ROOT/relative holding versions[0].text, and
 * the file then rewritten with each next version: each read gives exactly
 * `metrics`, with that version's values. */
void test_provider_assert_versions(const char *name, const char *root, const char *relative,
                                   const char *const *metrics, gsize n_metrics,
                                   const struct test_file_version *versions, gsize n_versions);

/* `metric` is registered with this description. */
void test_assert_metric(struct test_provider *p, const char *metric, const char *unit,
                        enum vigil_metric_kind kind, enum vigil_metric_origin origin,
                        const char *source);

/* A provider of counters per device from one file under its root
 * (diskstats, netdev): metrics GROUP.DEVICE.SUFFIX for each of `suffixes`
 * (NULL-terminated), measured counters in units[], one per suffix. */
struct test_devices {
    const char *provider;
    const char *relative;
    const char *group;
    const char *const *suffixes;
    const char *const *units;
};

/* The provider started on ROOT/relative holding `text`. */
void test_devices_start(struct test_provider *p, const struct test_devices *d, const char *root,
                        const char *text);
/* DEVICE's values in `samples` are want[], one per suffix. */
void test_devices_assert(const struct test_devices *d, GHashTable *samples, const char *device,
                         const double *want);
/* DEVICE's metrics are neither in `samples` nor registered. */
void test_devices_assert_none(const struct test_devices *d, struct test_provider *p,
                              GHashTable *samples, const char *device);
/* A device, and the values it must read, one per suffix. */
struct test_device {
    const char *name;
    const double *values;
};
/* One read (at 0 ns) gives exactly the n devices of `present`, with their
 * values; none of `absent` (NULL-terminated, or NULL) is emitted or
 * registered. */
void test_devices_assert_read(struct test_provider *p, const struct test_devices *d,
                              const struct test_device *present, gsize n,
                              const char *const *absent);
/* `samples` are the metrics of n_devices devices. */
void test_devices_assert_count(const struct test_devices *d, GHashTable *samples, gsize n_devices);
/* Started on ROOT/relative holding `text`, before any read, the provider
 * has registered the metrics of n_devices devices, DEVICE's among them. */
void test_devices_assert_registered(const struct test_devices *d, const char *root,
                                    const char *text, const char *device, gsize n_devices);
/* Started on `good`, once the file holds `before`, then one of bad_lines[],
 * then `after`, the provider's read fails naming the file and line `line`. */
void test_devices_assert_bad_lines(const struct test_devices *d, const char *root, const char *good,
                                   const char *before, const char *const *bad_lines, gsize n,
                                   const char *after, unsigned line);

/* Provider NAME on this machine (root "/"): one read, at 1 ns. */
GHashTable *test_provider_read_this_machine(const char *name);

/* Provider NAME on this machine: two reads, and every sample of the first
 * is a counter named PREFIX… that the second does not see go back. Returns
 * the first read. */
GHashTable *test_provider_assert_counters_grow(const char *name, const char *prefix);

#endif
