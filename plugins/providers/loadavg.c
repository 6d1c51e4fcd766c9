/* vigil — the loadavg provider: load averages and task counts from
 * /proc/loadavg ("0.52 0.58 0.59 2/1234 56789").
 *
 * The fourth field counts scheduling entities, threads included:
 * runnable ones, then all of them. Its metrics are procs.runnable and
 * procs.total, not procs.running, which procstat reports from its own
 * (differently counted) procs_running line. */
#include <string.h>

#include "proc_file_provider.h"

#define SOURCE "loadavg"

/* One line of five short fields. */
#define BUFFER_BYTES 256u

enum { LOAD_1M, LOAD_5M, LOAD_15M, N_LOADS };

static const char *const load_names[N_LOADS] = {"load.1m", "load.5m", "load.15m"};

struct loadavg {
    struct proc_file_provider base; /* first: PROC_FILE_PROVIDER */
    uint32_t load_ids[N_LOADS];
    uint32_t runnable_id, total_id;
    double loads[N_LOADS];
    guint64 runnable, total;
};

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
static gboolean parse_file(void *instance, GError **error)
{
    struct loadavg *l = instance;
    const char *text = l->base.file.buffer;
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
        vigil_provider_line_error(error, l->base.file.path, 1,
                                  "expected \"LOAD1 LOAD5 LOAD15 RUNNABLE/TOTAL LASTPID\": "
                                  "\"%.*s\"",
                                  (int)strcspn(text, "\n"), text);
    return ok;
}

static gboolean register_metrics(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct loadavg *l = instance;
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

static void emit(void *instance, const struct vigil_sample_sink *sink)
{
    const struct loadavg *l = instance;
    for (guint i = 0; i < N_LOADS; i++)
        vigil_sample_emit(sink, l->load_ids[i], l->loads[i], 0);
    vigil_sample_emit(sink, l->runnable_id, (double)l->runnable, 0);
    vigil_sample_emit(sink, l->total_id, (double)l->total, 0);
}

PROC_FILE_PROVIDER_PLUGIN(struct loadavg, "loadavg",
                          "load averages and task counts from /proc/loadavg", "proc/loadavg",
                          BUFFER_BYTES, BUFFER_BYTES, parse_file, register_metrics, emit);
