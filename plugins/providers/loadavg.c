/* vigil — the loadavg provider: load averages and task counts from
 * /proc/loadavg ("0.52 0.58 0.59 2/1234 56789").
 *
 * The fourth field counts scheduling entities, threads included:
 * runnable ones, then all of them. Its metrics are procs.runnable and
 * procs.total, not procs.running, which procstat reports from its own
 * (differently counted) procs_running line. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "vigil/plugin.h"
#include "vigil/provider.h"

#define SOURCE "loadavg"

/* One line of five short fields. */
#define BUFFER_BYTES 256u

enum { LOAD_1M, LOAD_5M, LOAD_15M, N_LOADS };

static const char *const load_names[N_LOADS] = {"load.1m", "load.5m", "load.15m"};

struct loadavg {
    char *path;
    int fd;
    uint32_t load_ids[N_LOADS];
    uint32_t runnable_id, total_id;
    double loads[N_LOADS];
    guint64 runnable, total;
};

static void *loadavg_create(const struct vigil_plugin_context *ctx, GError **error)
{
    (void)error;
    struct loadavg *l = g_new0(struct loadavg, 1);
    l->path = vigil_provider_path(vigil_config_get_string(ctx->config, ctx->section, "root"),
                                  "proc/loadavg");
    l->fd = -1;
    return l;
}

static void loadavg_destroy(void *instance)
{
    struct loadavg *l = instance;
    if (l->fd >= 0)
        close(l->fd);
    g_free(l->path);
    g_free(l);
}

static gboolean is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *p)
{
    while (is_blank(*p))
        p++;
    return p;
}

/* A load average as the kernel writes it, digits and a point: strtod alone
 * would also take "nan", "-1" or "0x10". */
static gboolean next_load(const char **cursor, double *value)
{
    const char *start = skip_blanks(*cursor);
    const char *p = start;
    gboolean digits = FALSE;
    for (; g_ascii_isdigit(*p) || *p == '.'; p++)
        digits = digits || g_ascii_isdigit(*p);
    if (!digits || !is_blank(*p))
        return FALSE;
    char *end = NULL;
    *value = g_ascii_strtod(start, &end);
    *cursor = p;
    return end == p && isfinite(*value);
}

/* A whole number starting right at the cursor. */
static gboolean next_u64(const char **cursor, guint64 *value)
{
    const char *p = *cursor;
    if (!g_ascii_isdigit(*p))
        return FALSE;
    guint64 v = 0;
    for (; g_ascii_isdigit(*p); p++) {
        guint digit = (guint)(*p - '0');
        if (v > (G_MAXUINT64 - digit) / 10)
            return FALSE;
        v = v * 10 + digit;
    }
    *cursor = p;
    *value = v;
    return TRUE;
}

static gboolean expect_char(const char **cursor, char c)
{
    if (**cursor != c)
        return FALSE;
    (*cursor)++;
    return TRUE;
}

/* The whole file: one line, and perhaps its newline. */
static gboolean parse_file(struct loadavg *l, const char *text, GError **error)
{
    const char *p = text;
    guint64 last_pid;
    gboolean ok = TRUE;
    for (guint i = 0; i < N_LOADS && ok; i++)
        ok = next_load(&p, &l->loads[i]);
    if (ok) {
        p = skip_blanks(p);
        ok = next_u64(&p, &l->runnable) && expect_char(&p, '/') && next_u64(&p, &l->total) &&
             is_blank(*p);
    }
    if (ok) {
        p = skip_blanks(p);
        ok = next_u64(&p, &last_pid);
        p = skip_blanks(p);
        ok = ok && (*p == '\0' || (expect_char(&p, '\n') && *p == '\0'));
    }
    if (!ok) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                    "%s, line 1: expected \"LOAD1 LOAD5 LOAD15 RUNNABLE/TOTAL LASTPID\": "
                    "\"%.*s\"",
                    l->path, (int)strcspn(text, "\n"), text);
        return FALSE;
    }
    return TRUE;
}

static gboolean read_file(struct loadavg *l, int error_code, GError **error)
{
    char buffer[BUFFER_BYTES];
    gssize n = vigil_provider_pread_all(l->fd, buffer, sizeof buffer);
    if (n < 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, error_code, "cannot read %s: %s", l->path,
                    g_strerror(errno));
        return FALSE;
    }
    if ((gsize)n + 1 >= sizeof buffer) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                    "%s is larger than %u bytes", l->path, BUFFER_BYTES - 1);
        return FALSE;
    }
    return parse_file(l, buffer, error);
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
    if (l->fd >= 0)
        close(l->fd);
    l->fd = open(l->path, O_RDONLY | O_CLOEXEC);
    if (l->fd < 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "cannot open %s: %s", l->path, g_strerror(errno));
        return FALSE;
    }
    return read_file(l, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error) &&
           register_metrics(l, catalog, error);
}

static gboolean loadavg_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                             const struct vigil_sample_sink *sink, GError **error)
{
    (void)catalog;
    (void)now_ns;
    struct loadavg *l = instance;
    if (!read_file(l, VIGIL_PROVIDER_ERROR_READ, error))
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

static const struct vigil_config_key keys[] = {
    {.name = "root",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "/",
     .description = "directory under which proc/ is read; / on a real node"},
};

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_PROVIDER,
    .name = "loadavg",
    .description = "load averages and task counts from /proc/loadavg",
    .config_keys = keys,
    .n_config_keys = G_N_ELEMENTS(keys),
    .create = loadavg_create,
    .destroy = loadavg_destroy,
    .ops = &loadavg_ops,
};
