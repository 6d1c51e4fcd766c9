/* vigil — the diskstats provider: bytes, operations and busy time per block
 * device, from /proc/diskstats (Documentation/admin-guide/iostats.rst). */
#include "vigil/metric.h"
#include "vigil/plugin.h"
#include "vigil/provider.h"

#define SOURCE        "diskstats"
#define RELATIVE_PATH "proc/diskstats"

/* Room for a few hundred devices; a bigger file only costs a regrowth. */
#define BUFFER_INITIAL_BYTES (64u * 1024u)
/* Past this the file is not a diskstats file, and growing for it would
 * only eat the node's memory. */
#define BUFFER_MAX_BYTES (64u * 1024u * 1024u)

/* The kernel counts sectors of 512 bytes whatever the device's own block
 * size. */
#define SECTOR_BYTES 512.0
#define MS_PER_S     1000.0

/* The fields after "major minor name", in the order the kernel prints them.
 * Kernels since 4.18 and 5.5 append discard and flush fields, which are
 * checked but not reported. */
enum stat_field {
    STAT_READS,
    STAT_READS_MERGED,
    STAT_SECTORS_READ,
    STAT_MS_READING,
    STAT_WRITES,
    STAT_WRITES_MERGED,
    STAT_SECTORS_WRITTEN,
    STAT_MS_WRITING,
    STAT_IOS_IN_PROGRESS,
    STAT_MS_IO,
    STAT_WEIGHTED_MS,
    N_STAT_FIELDS,
};

enum disk_metric {
    DISK_READ_BYTES,
    DISK_WRITE_BYTES,
    DISK_READS,
    DISK_WRITES,
    DISK_BUSY_S,
    N_DISK_METRICS,
};

static const struct vigil_provider_device_metric disk_metrics[N_DISK_METRICS] = {
    [DISK_READ_BYTES] = {"read_bytes", "bytes"},
    [DISK_WRITE_BYTES] = {"write_bytes", "bytes"},
    [DISK_READS] = {"reads", "count"},
    [DISK_WRITES] = {"writes", "count"},
    [DISK_BUSY_S] = {"busy_s", "s"},
};

static const struct vigil_provider_device_kind disk_kind = {
    .noun = "device",
    .stat_noun = "statistic",
    .n_stats = N_STAT_FIELDS,
    .group = "disk",
    .source = SOURCE,
    .log_domain = G_LOG_DOMAIN,
    .metrics = disk_metrics,
    .n_metrics = N_DISK_METRICS,
};

struct diskstats_settings {
    char *root;
    char **devices; /* empty: the default choice */
};
static const struct vigil_settings_table settings_table;

struct diskstats {
    struct vigil_provider_file file;
    char **devices; /* NULL when every device is wanted */
    struct vigil_provider_devices disks;
};

struct scan {
    struct diskstats *d;
    vigil_metric_catalog *catalog;
    const struct vigil_sample_sink *sink; /* NULL in start(): register only */
    guint line;
};

static void *diskstats_create(const struct vigil_plugin_context *context, GError **error)
{
    struct diskstats_settings settings;
    if (!vigil_plugin_settings_load(context, &settings_table, &settings, error))
        return NULL;
    struct diskstats *d = g_new0(struct diskstats, 1);
    vigil_provider_file_init(&d->file, settings.root, RELATIVE_PATH, BUFFER_INITIAL_BYTES,
                             BUFFER_MAX_BYTES);
    if (settings.devices[0] != NULL)
        d->devices = g_steal_pointer(&settings.devices);
    vigil_settings_clear(&settings_table, &settings);
    vigil_provider_devices_init(&d->disks, &disk_kind, d->file.path);
    return d;
}

static void diskstats_destroy(void *instance)
{
    struct diskstats *d = instance;
    vigil_provider_devices_clear(&d->disks);
    g_strfreev(d->devices);
    vigil_provider_file_clear(&d->file);
    g_free(d);
}

/* Whether a device may be reported, by its name alone. Loop and RAM disks
 * are scratch space: their lines (eight loop devices on a bare machine,
 * most of the file) are not parsed past the name, which was a fifth of
 * the daemon's instructions per tick. */
static gboolean is_named(const struct diskstats *d, const char *name)
{
    if (d->devices != NULL)
        return g_strv_contains((const char *const *)d->devices, name);
    return !VIGIL_PROVIDER_HAS_PREFIX(name, "loop") && !VIGIL_PROVIDER_HAS_PREFIX(name, "ram");
}

/* A device that never did any I/O (an empty slot, an unused zram) only
 * adds noise, unless it is named in the devices key. */
static gboolean is_wanted(const struct diskstats *d, gboolean all_zero)
{
    return d->devices != NULL || !all_zero;
}

static void emit_disk(const struct vigil_sample_sink *sink, const uint32_t *ids,
                      const guint64 *stats)
{
    double values[N_DISK_METRICS] = {
        [DISK_READ_BYTES] = (double)stats[STAT_SECTORS_READ] * SECTOR_BYTES,
        [DISK_WRITE_BYTES] = (double)stats[STAT_SECTORS_WRITTEN] * SECTOR_BYTES,
        [DISK_READS] = (double)stats[STAT_READS],
        [DISK_WRITES] = (double)stats[STAT_WRITES],
        /* The kernel prints io_ticks as 32-bit milliseconds: it wraps
         * after 49.7 days of busy time. */
        [DISK_BUSY_S] = (double)stats[STAT_MS_IO] / MS_PER_S,
    };
    for (int m = 0; m < N_DISK_METRICS; m++)
        vigil_sample_emit(sink, ids[m], values[m], 0);
}

static gboolean scan_line(struct scan *s, char *line, GError **error)
{
    const char *path = s->d->file.path;
    char *cursor = line;
    const char *major = vigil_provider_next_field(&cursor);
    const char *minor = vigil_provider_next_field(&cursor);
    const char *name = vigil_provider_next_field(&cursor);
    guint64 number = 0;
    if (name == NULL) {
        vigil_provider_line_error(error, path, s->line,
                                  "expected \"major minor name\" and statistics");
        return FALSE;
    }
    if (!vigil_provider_parse_u64(major, &number) || !vigil_provider_parse_u64(minor, &number)) {
        vigil_provider_line_error(error, path, s->line,
                                  "device numbers \"%s %s\" are not whole numbers", major, minor);
        return FALSE;
    }
    if (!is_named(s->d, name))
        return TRUE;
    guint64 stats[N_STAT_FIELDS];
    gboolean all_zero = TRUE;
    const uint32_t *ids = NULL;
    if (!vigil_provider_devices_parse_stats(&s->d->disks, &cursor, s->line, stats, &all_zero,
                                            error) ||
        !vigil_provider_devices_see(&s->d->disks, s->catalog, s->line, name,
                                    is_wanted(s->d, all_zero), &ids, error))
        return FALSE;
    if (ids != NULL && s->sink != NULL)
        emit_disk(s->sink, ids, stats);
    return TRUE;
}

static gboolean scan_file(struct diskstats *d, vigil_metric_catalog *catalog,
                          const struct vigil_sample_sink *sink, GError **error)
{
    struct scan s = {d, catalog, sink, 0};
    vigil_provider_devices_begin_scan(&d->disks);
    char *cursor = d->file.buffer;
    for (char *line; (line = vigil_provider_next_line(&cursor)) != NULL;) {
        s.line++;
        if (!scan_line(&s, line, error))
            return FALSE;
    }
    return TRUE;
}

static gboolean diskstats_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct diskstats *d = instance;
    return vigil_provider_file_open(&d->file, error) && scan_file(d, catalog, NULL, error);
}

static gboolean diskstats_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                               const struct vigil_sample_sink *sink, GError **error)
{
    (void)now_ns;
    struct diskstats *d = instance;
    return vigil_provider_file_read(&d->file, error) && scan_file(d, catalog, sink, error);
}

static const struct vigil_provider_ops diskstats_ops = {
    .start = diskstats_start,
    .read = diskstats_read,
};

static const struct vigil_config_key keys[] = {
    VIGIL_PROVIDER_PROC_ROOT_KEY(struct diskstats_settings),
    {VIGIL_SETTING(struct diskstats_settings, devices), .type = VIGIL_CONFIG_LIST,
     .default_value = "",
     .description = "block devices to report, as /proc/diskstats names them (sda;nvme0n1); "
                    "empty: all but loop*, ram* and those that never did any I/O"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct diskstats_settings, keys, NULL);

VIGIL_PLUGIN(
    VIGIL_PLUGIN_PROVIDER, .name = "diskstats",
    .description = "bytes, operations and busy time per block device, from /proc/diskstats",
    .settings = &settings_table, .create = diskstats_create, .destroy = diskstats_destroy,
    .ops = &diskstats_ops);
