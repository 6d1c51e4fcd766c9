/* vigild's sampler: every sample each provider emits in a read reaches
 * the tick's array, in the order emitted, stamped with the tick's time,
 * however many one provider emits (they are gathered in batches). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sampler.h"
#include "test_provider.h"
#include "test_support.h"
#include "tick_samples.h"
#include "test_main.h"

/* Many times the sampler's batch: 8 times for the node's line and each
 * CPU's, and 3 counts. */
#define N_CPUS      40
#define N_PROCSTAT  (8 * (N_CPUS + 1) + 3)
#define N_LOADAVG   5
#define CPU_USER(n) (1000u + (n))

static char *proc_stat_fixture(void)
{
    GString *text = g_string_new("cpu  1 2 3 4 5 6 7 8 0 0\n");
    for (guint n = 0; n < N_CPUS; n++)
        g_string_append_printf(text, "cpu%u %u 0 0 0 0 0 0 0 0 0\n", n, CPU_USER(n));
    g_string_append(text, "intr 0\nctxt 77\nprocs_running 2\nprocs_blocked 1\n");
    return g_string_free(text, FALSE);
}

static void test_every_sample_reaches_the_tick_in_order(void **state)
{
    const char *dir = *state;
    char *stat = proc_stat_fixture();
    test_write_file(dir, "proc/stat", stat);
    test_write_file(dir, "proc/loadavg", "0.52 1.58 12.25 3/1234 56789\n");
    g_free(stat);

    vigil_plugin_registry *registry =
        vigil_plugin_registry_new(test_env_or_fail("VIGIL_TEST_PROVIDER_DIR"));
    vigil_metric_catalog *catalog = vigil_metric_catalog_new();
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry);
    char *text = g_strdup_printf("[provider.procstat]\nroot = %s\n[provider.loadavg]\nroot = %s\n",
                                 dir, dir);
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    g_file_set_contents(path, text, -1, NULL);
    GError *error = NULL;
    if (!vigil_config_load(config, path, &error))
        fail_msg("configuration: %s", error->message);
    g_free(path);
    g_free(text);

    struct vigild_sampler sampler;
    vigild_sampler_init(&sampler, registry, catalog);
    char *names[] = {"procstat", "loadavg", NULL};
    vigild_sampler_configure(&sampler, config, names, NULL);
    assert_true(vigild_sampler_find(&sampler, "procstat")->running);
    assert_true(vigild_sampler_find(&sampler, "loadavg")->running);

    struct vigild_tick_samples out = {
        .node = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample)),
        .process = g_array_new(FALSE, FALSE, sizeof(struct vigild_process_sample)),
    };
    /* Twice: the second read adds to what the first left, as the tick
     * clears the array itself. */
    for (int read = 1; read <= 2; read++) {
        uint64_t now_ns = 1000u * (uint64_t)read;
        guint base = out.node->len;
        vigild_sampler_read(&sampler, now_ns, &out);
        assert_int_equal(out.node->len - base, N_PROCSTAT + N_LOADAVG);
        GHashTable *seen = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (guint i = base; i < out.node->len; i++) {
            const struct vigil_sample *s = &g_array_index(out.node, struct vigil_sample, i);
            const struct vigil_metric_desc *d = vigil_metric_get(catalog, s->metric_id);
            assert_non_null(d);
            assert_true(g_hash_table_add(seen, GUINT_TO_POINTER(s->metric_id)));
            assert_int_equal(s->t_ns, now_ns);
            /* procstat's, then loadavg's: the providers' order. */
            assert_string_equal(d->source, i - base < N_PROCSTAT ? "procstat" : "loadavg");
            guint cpu;
            char field[16];
            if (sscanf(d->name, "cpu%u.%15[a-z]_s", &cpu, field) == 2 && strcmp(field, "user") == 0)
                assert_true(s->value == (double)CPU_USER(cpu) / (double)sysconf(_SC_CLK_TCK));
            if (strcmp(d->name, "load.15m") == 0)
                assert_true(s->value == 12.25);
            if (strcmp(d->name, "cpu.context_switches") == 0)
                assert_true(s->value == 77);
        }
        g_hash_table_destroy(seen);
    }
    assert_int_equal(out.process->len, 0);

    g_array_free(out.node, TRUE);
    g_array_free(out.process, TRUE);
    vigild_sampler_clear(&sampler);
    vigil_config_free(config);
    vigil_metric_catalog_free(catalog);
    vigil_plugin_registry_free(registry);
}

TEST_MAIN(TEST_WITH_DIR(test_every_sample_reaches_the_tick_in_order))
