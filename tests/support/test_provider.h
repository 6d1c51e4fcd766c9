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
 * char * → struct test_sample *), or NULL with *error set. */
struct test_sample {
    double value;
    guint32 flags;
};
GHashTable *test_provider_read(struct test_provider *p, guint64 now_ns, GError **error);

/* The value of `metric` in `samples`; fails the test when it is missing. */
double test_sample_value(GHashTable *samples, const char *metric);
/* The metric's description, which must be registered. */
const struct vigil_metric_desc *test_metric(struct test_provider *p, const char *metric);

/* Writes `text` to DIR/relative, making folders as needed. */
void test_write_file(const char *dir, const char *relative, const char *text);

#endif
