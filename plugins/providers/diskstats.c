/* vigil — the diskstats provider: bytes, operations and busy time per block
 * device, from /proc/diskstats (Documentation/admin-guide/iostats.rst). */
#include "vigil/metric.h"

#include "device_file_provider.h"

#define SOURCE        "diskstats"
#define RELATIVE_PATH "proc/diskstats"

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

/* Whether a device may be reported, by its name alone. Loop and RAM disks
 * are scratch space: their lines (eight loop devices on a bare machine,
 * most of the file) are not parsed past the name, which was a fifth of
 * the daemon's instructions per tick. */
static gboolean is_named(const struct device_file_provider *d, const char *name)
{
    return device_file_named(d, name,
                             !VIGIL_PROVIDER_HAS_PREFIX(name, "loop") &&
                                 !VIGIL_PROVIDER_HAS_PREFIX(name, "ram"));
}

/* A device that never did any I/O (an empty slot, an unused zram) only
 * adds noise, unless it is named in the devices key. */
static gboolean is_wanted(const struct device_file_provider *d, gboolean all_zero)
{
    return d->names != NULL || !all_zero;
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

static gboolean scan_line(struct device_file_scan *s, char *line, GError **error)
{
    const char *path = s->p->file.path;
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
    if (!is_named(s->p, name))
        return TRUE;
    guint64 stats[N_STAT_FIELDS];
    gboolean all_zero = TRUE;
    const uint32_t *ids = NULL;
    if (!vigil_provider_devices_parse_stats(&s->p->devices, &cursor, s->line, stats, &all_zero,
                                            error) ||
        !vigil_provider_devices_see(&s->p->devices, s->catalog, s->line, name,
                                    is_wanted(s->p, all_zero), &ids, error))
        return FALSE;
    if (ids != NULL && s->sink != NULL)
        emit_disk(s->sink, ids, stats);
    return TRUE;
}

static const struct vigil_config_key keys[] = {
    VIGIL_PROVIDER_PROC_ROOT_KEY(struct device_file_settings),
    {VIGIL_SETTING_NAMED("devices", struct device_file_settings, names), .type = VIGIL_CONFIG_LIST,
     .default_value = "",
     .description = "block devices to report, as /proc/diskstats names them (sda;nvme0n1); "
                    "empty: all but loop*, ram* and those that never did any I/O"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct device_file_settings, keys, NULL);

static const struct device_file_kind kind = {
    .settings = &settings_table,
    .relative_path = RELATIVE_PATH,
    .devices = &disk_kind,
    .scan_line = scan_line,
};

DEVICE_FILE_PROVIDER_PLUGIN(
    "diskstats", "bytes, operations and busy time per block device, from /proc/diskstats",
    &settings_table, kind);
