/* vigil — the loadavg provider: load averages and task counts from
 * /proc/loadavg ("0.52 0.58 0.59 2/1234 56789").
 *
 * The fourth field counts scheduling entities, threads included:
 * runnable ones, then all of them. Its metrics are procs.runnable and
 * procs.total, not procs.running, which procstat reports from its own
 * (differently counted) procs_running line. */
#include <string.h>

#include "vigil/plugin.h"
#include "vigil/provider.h"

#define SOURCE "loadavg"

/* One line of five short fields. */
#define BUFFER_BYTES 256u

enum { LOAD_1M, LOAD_5M, LOAD_15M, N_LOADS };

static const char *const load_names[N_LOADS] = {"load.1m", "load.5m", "load.15m"};

struct loadavg {
    struct vigil_provider_file file;
    uint32_t load_ids[N_LOADS];
    uint32_t runnable_id, total_id;
    double loads[N_LOADS];
    guint64 runnable, total;
};

static void *loadavg_create(const struct vigil_plugin_context *ctx, GError **error)
{
    char *root = vigil_provider_root(ctx, error);
    if (root == NULL)
        return NULL;
    struct loadavg *l = g_new0(struct loadavg, 1);
    vigil_provider_file_init(&l->file, root, "proc/loadavg", BUFFER_BYTES, BUFFER_BYTES);
    g_free(root);
    return l;
}

static void loadavg_destroy(void *instance)
{
    struct loadavg *l = instance;
    vigil_provider_file_clear(&l->file);
    g_free(l);
}

static gboolean next_load(const char **cursor, double *value)
{
    *cursor = vigil_provider_skip_blanks(*cursor);
    return vigil_provider_scan_double(cursor, value) && vigil_provider_is_blank(**cursor);
}

static gboolean expect_char(const char **cursor, char c)
{
    if (**cursor != c)
        return FALSE;
    (*cursor)++;
    return TRUE;
}

/* The whole file: one line, and perhaps its newline. */
static gboolean parse_file(struct loadavg *l, GError **error)
{
    const char *text = l->file.buffer;
    const char *p = text;
    guint64 last_pid;
    gboolean ok = TRUE;
    for (guint i = 0; i < N_LOADS && ok; i++)
        ok = next_load(&p, &l->loads[i]);
    if (ok) {
        p = vigil_provider_skip_blanks(p);
        ok = vigil_provider_scan_u64(&p, &l->runnable) && expect_char(&p, '/') &&
             vigil_provider_scan_u64(&p, &l->total) && vigil_provider_is_blank(*p);
    }
    if (ok) {
        p = vigil_provider_skip_blanks(p);
        ok = vigil_provider_scan_u64(&p, &last_pid);
        p = vigil_provider_skip_blanks(p);
        ok = ok && (*p == '\0' || (expect_char(&p, '\n') && *p == '\0'));
    }
    if (!ok)
        vigil_provider_line_error(error, l->file.path, 1,
                                  "expected \"LOAD1 LOAD5 LOAD15 RUNNABLE/TOTAL LASTPID\": "
                                  "\"%.*s\"",
                                  (int)strcspn(text, "\n"), text);
    return ok;
}

static gboolean register_metrics(struct loadavg *l, vigil_metric_catalog *catalog, GError **error)
{
    for (guint i = 0; i < N_LOADS; i++) {
        l->load_ids[i] = vigil_metric_register(catalog, load_names[i], "load", VIGIL_METRIC_GAUGE,
                                               SOURCE, VIGIL_METRIC_MEASURED, error);
        if (l->load_ids[i] == 0)
            return FALSE;
    }
    l->runnable_id = vigil_metric_register(catalog, "procs.runnable", "count", VIGIL_METRIC_GAUGE,
                                           SOURCE, VIGIL_METRIC_MEASURED, error);
    if (l->runnable_id == 0)
        return FALSE;
    l->total_id = vigil_metric_register(catalog, "procs.total", "count", VIGIL_METRIC_GAUGE, SOURCE,
                                        VIGIL_METRIC_MEASURED, error);
    return l->total_id != 0;
}

static gboolean loadavg_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct loadavg *l = instance;
    return vigil_provider_file_open(&l->file, error) && parse_file(l, error) &&
           register_metrics(l, catalog, error);
}

static gboolean loadavg_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                             const struct vigil_sample_sink *sink, GError **error)
{
    (void)catalog;
    (void)now_ns;
    struct loadavg *l = instance;
    if (!vigil_provider_file_read(&l->file, error) || !parse_file(l, error))
        return FALSE;
    for (guint i = 0; i < N_LOADS; i++)
        vigil_sample_emit(sink, l->load_ids[i], l->loads[i], 0);
    vigil_sample_emit(sink, l->runnable_id, (double)l->runnable, 0);
    vigil_sample_emit(sink, l->total_id, (double)l->total, 0);
    return TRUE;
}

static const struct vigil_provider_ops loadavg_ops = {
    .start = loadavg_start,
    .read = loadavg_read,
};

VIGIL_PLUGIN(VIGIL_PLUGIN_PROVIDER, .name = "loadavg",
             .description = "load averages and task counts from /proc/loadavg",
             .settings = &vigil_provider_root_settings, .create = loadavg_create,
             .destroy = loadavg_destroy, .ops = &loadavg_ops);
