/* vigil — the diskstats provider: bytes, operations and busy time per block
 * device, from /proc/diskstats (Documentation/admin-guide/iostats.rst). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

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

static const struct {
    const char *suffix;
    const char *unit;
} disk_metrics[N_DISK_METRICS] = {
    [DISK_READ_BYTES] = {"read_bytes", "bytes"},
    [DISK_WRITE_BYTES] = {"write_bytes", "bytes"},
    [DISK_READS] = {"reads", "count"},
    [DISK_WRITES] = {"writes", "count"},
    [DISK_BUSY_S] = {"busy_s", "s"},
};

struct disk {
    /* Another device's name maps to the same metric names (the kernel's
     * name holds characters metric names cannot): only the first is
     * reported, so that no metric gets two values in one read. */
    gboolean ignored;
    guint64 last_scan; /* the scan that last saw it */
    uint32_t ids[N_DISK_METRICS];
};

struct diskstats {
    char *path;
    char **devices; /* NULL when every device is wanted */
    int fd;
    char *buffer;
    gsize buffer_size;
    GHashTable *disks;         /* kernel name → struct disk */
    GHashTable *metric_owners; /* metric segment → the kernel name that has it */
    guint64 scans;
};

struct scan {
    struct diskstats *d;
    vigil_metric_catalog *catalog;
    const struct vigil_sample_sink *sink; /* NULL in start(): register only */
    unsigned line;
};

static void *diskstats_create(const struct vigil_plugin_context *context, GError **error)
{
    (void)error;
    struct diskstats *d = g_new0(struct diskstats, 1);
    const char *root = vigil_config_get_string(context->config, context->section, "root");
    const char *const *devices =
        vigil_config_get_list(context->config, context->section, "devices");
    d->path = vigil_provider_path(root, RELATIVE_PATH);
    if (devices != NULL && devices[0] != NULL)
        d->devices = g_strdupv((char **)devices);
    d->fd = -1;
    d->buffer_size = BUFFER_INITIAL_BYTES;
    d->buffer = g_malloc(d->buffer_size);
    d->disks = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    d->metric_owners = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    return d;
}

static void diskstats_destroy(void *instance)
{
    struct diskstats *d = instance;
    if (d->fd >= 0)
        close(d->fd);
    g_hash_table_destroy(d->metric_owners);
    g_hash_table_destroy(d->disks);
    g_free(d->buffer);
    g_strfreev(d->devices);
    g_free(d->path);
    g_free(d);
}

/* Fills the buffer with the whole file, growing it when a read fills it:
 * a full buffer may have cut the file short. */
static gboolean load_file(struct diskstats *d, enum vigil_provider_error_code code, GError **error)
{
    for (;;) {
        gssize n = vigil_provider_pread_all(d->fd, d->buffer, d->buffer_size);
        if (n < 0) {
            g_set_error(error, VIGIL_PROVIDER_ERROR, code, "cannot read %s: %s", d->path,
                        g_strerror(errno));
            return FALSE;
        }
        if ((gsize)n + 1 < d->buffer_size)
            return TRUE;
        if (d->buffer_size >= BUFFER_MAX_BYTES) {
            g_set_error(error, VIGIL_PROVIDER_ERROR, code,
                        "%s is larger than %u bytes: not a diskstats file", d->path,
                        BUFFER_MAX_BYTES);
            return FALSE;
        }
        d->buffer_size *= 2;
        d->buffer = g_realloc(d->buffer, d->buffer_size);
    }
}

static G_GNUC_PRINTF(3, 4) void malformed(const struct scan *s, GError **error, const char *format,
                                          ...)
{
    va_list args;
    va_start(args, format);
    char *reason = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ, "%s, line %u: %s",
                s->d->path, s->line, reason);
    g_free(reason);
}

/* Splits the line in place, so that reading allocates nothing. */
static char *next_field(char **cursor)
{
    char *p = *cursor;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0') {
        *cursor = p;
        return NULL;
    }
    char *start = p;
    while (*p != '\0' && *p != ' ' && *p != '\t')
        p++;
    if (*p != '\0')
        *p++ = '\0';
    *cursor = p;
    return start;
}

static gboolean parse_u64(const char *text, guint64 *value)
{
    /* strtoull takes signs and spaces, which the kernel never prints. */
    if (!g_ascii_isdigit(text[0]))
        return FALSE;
    char *end = NULL;
    errno = 0;
    guint64 v = g_ascii_strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0')
        return FALSE;
    *value = v;
    return TRUE;
}

/* The device's name as one segment of a metric name: '.' separates
 * segments, and upper case is not allowed. */
static char *metric_segment(const char *name)
{
    char *segment = g_strdup(name);
    for (char *c = segment; *c != '\0'; c++) {
        if (!g_ascii_islower(*c) && !g_ascii_isdigit(*c) && *c != '_' && *c != '-')
            *c = '_';
    }
    return segment;
}

static gboolean register_metrics(struct diskstats *d, vigil_metric_catalog *catalog,
                                 const char *segment, struct disk *disk, GError **error)
{
    for (int m = 0; m < N_DISK_METRICS; m++) {
        char *name = g_strdup_printf("disk.%s.%s", segment, disk_metrics[m].suffix);
        disk->ids[m] =
            vigil_metric_register(catalog, name, disk_metrics[m].unit, VIGIL_METRIC_COUNTER, SOURCE,
                                  VIGIL_METRIC_MEASURED, error);
        g_free(name);
        if (disk->ids[m] == 0) {
            g_prefix_error(error, "%s: ", d->path);
            return FALSE;
        }
    }
    return TRUE;
}

static struct disk *add_disk(struct diskstats *d, vigil_metric_catalog *catalog, const char *name,
                             GError **error)
{
    struct disk *disk = g_new0(struct disk, 1);
    char *segment = metric_segment(name);
    const char *owner = g_hash_table_lookup(d->metric_owners, segment);
    if (owner != NULL) {
        g_warning("%s: devices %s and %s both map to metrics disk.%s.*: %s is not reported",
                  d->path, owner, name, segment, name);
        disk->ignored = TRUE;
        g_free(segment);
    } else if (!register_metrics(d, catalog, segment, disk, error)) {
        g_free(segment);
        g_free(disk);
        return NULL;
    } else {
        g_hash_table_insert(d->metric_owners, segment, g_strdup(name));
    }
    g_hash_table_insert(d->disks, g_strdup(name), disk);
    return disk;
}

static gboolean is_wanted(const struct diskstats *d, const char *name, gboolean all_zero)
{
    if (d->devices != NULL)
        return g_strv_contains((const char *const *)d->devices, name);
    /* Loop and RAM disks are scratch space, and a device that never did
     * any I/O (an empty slot, an unused zram) only adds noise. */
    return !g_str_has_prefix(name, "loop") && !g_str_has_prefix(name, "ram") && !all_zero;
}

static void emit_disk(const struct vigil_sample_sink *sink, const struct disk *disk,
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
        vigil_sample_emit(sink, disk->ids[m], values[m], 0);
}

/* Reads every number after the name, so that a line with a stray word is
 * refused rather than half-read; keeps the first N_STAT_FIELDS. */
static gboolean parse_stats(const struct scan *s, char **cursor, guint64 *stats, gboolean *all_zero,
                            GError **error)
{
    unsigned count = 0;
    *all_zero = TRUE;
    for (char *field; (field = next_field(cursor)) != NULL; count++) {
        guint64 value = 0;
        if (!parse_u64(field, &value)) {
            malformed(s, error, "statistic %u is \"%s\", not a whole number", count + 1, field);
            return FALSE;
        }
        if (value != 0)
            *all_zero = FALSE;
        if (count < N_STAT_FIELDS)
            stats[count] = value;
    }
    if (count < N_STAT_FIELDS) {
        malformed(s, error, "%u statistics after the device name, expected at least %d", count,
                  N_STAT_FIELDS);
        return FALSE;
    }
    return TRUE;
}

static gboolean scan_line(struct scan *s, char *line, GError **error)
{
    char *cursor = line;
    const char *major = next_field(&cursor);
    const char *minor = next_field(&cursor);
    const char *name = next_field(&cursor);
    guint64 number = 0;
    if (name == NULL) {
        malformed(s, error, "expected \"major minor name\" and statistics");
        return FALSE;
    }
    if (!parse_u64(major, &number) || !parse_u64(minor, &number)) {
        malformed(s, error, "device numbers \"%s %s\" are not whole numbers", major, minor);
        return FALSE;
    }
    guint64 stats[N_STAT_FIELDS];
    gboolean all_zero = TRUE;
    if (!parse_stats(s, &cursor, stats, &all_zero, error))
        return FALSE;
    struct disk *disk = g_hash_table_lookup(s->d->disks, name);
    if (disk == NULL) {
        if (!is_wanted(s->d, name, all_zero))
            return TRUE;
        disk = add_disk(s->d, s->catalog, name, error);
        if (disk == NULL)
            return FALSE;
    }
    if (disk->last_scan == s->d->scans) {
        malformed(s, error, "device %s appears twice", name);
        return FALSE;
    }
    disk->last_scan = s->d->scans;
    if (!disk->ignored && s->sink != NULL)
        emit_disk(s->sink, disk, stats);
    return TRUE;
}

static gboolean scan_buffer(struct scan *s, GError **error)
{
    /* Numbered so that a name seen twice in one file is caught without
     * clearing a mark on every entry first. */
    s->d->scans++;
    char *line = s->d->buffer;
    while (*line != '\0') {
        char *end = strchr(line, '\n');
        if (end != NULL)
            *end = '\0';
        s->line++;
        if (!scan_line(s, line, error))
            return FALSE;
        if (end == NULL)
            break;
        line = end + 1;
    }
    return TRUE;
}

static gboolean diskstats_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct diskstats *d = instance;
    if (d->fd >= 0)
        close(d->fd);
    d->fd = open(d->path, O_RDONLY | O_CLOEXEC);
    if (d->fd < 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "cannot open %s: %s", d->path, g_strerror(errno));
        return FALSE;
    }
    if (!load_file(d, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error))
        return FALSE;
    struct scan s = {d, catalog, NULL, 0};
    return scan_buffer(&s, error);
}

static gboolean diskstats_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                               const struct vigil_sample_sink *sink, GError **error)
{
    (void)now_ns;
    struct diskstats *d = instance;
    if (d->fd < 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                    "%s: read before a successful start", d->path);
        return FALSE;
    }
    if (!load_file(d, VIGIL_PROVIDER_ERROR_READ, error))
        return FALSE;
    struct scan s = {d, catalog, sink, 0};
    return scan_buffer(&s, error);
}

static const struct vigil_provider_ops diskstats_ops = {
    .start = diskstats_start,
    .read = diskstats_read,
};

static const struct vigil_config_key keys[] = {
    {.name = "root",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "/",
     .description = "directory under which proc/ is read; / on a real node"},
    {.name = "devices",
     .type = VIGIL_CONFIG_LIST,
     .default_value = "",
     .description = "block devices to report, as /proc/diskstats names them (sda;nvme0n1); "
                    "empty: all but loop*, ram* and those that never did any I/O"},
};

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_PROVIDER,
    .name = "diskstats",
    .description = "bytes, operations and busy time per block device, from /proc/diskstats",
    .config_keys = keys,
    .n_config_keys = G_N_ELEMENTS(keys),
    .create = diskstats_create,
    .destroy = diskstats_destroy,
    .ops = &diskstats_ops,
};
