/* vigil — the netdev provider: bytes and packets per network interface,
 * from /proc/net/dev. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "vigil/metric.h"
#include "vigil/plugin.h"
#include "vigil/provider.h"

#define SOURCE        "netdev"
#define RELATIVE_PATH "proc/net/dev"

/* Room for a few hundred interfaces; a bigger file only costs a regrowth. */
#define BUFFER_INITIAL_BYTES (64u * 1024u)
/* Past this the file is not /proc/net/dev, and growing for it would only
 * eat the node's memory. */
#define BUFFER_MAX_BYTES (64u * 1024u * 1024u)

#define HEADER_LINES 2

/* The numbers after "IFACE:", in the order the kernel prints them: eight
 * receive counters, then eight transmit counters. */
enum stat_field {
    STAT_RX_BYTES = 0,
    STAT_RX_PACKETS = 1,
    STAT_TX_BYTES = 8,
    STAT_TX_PACKETS = 9,
    N_STAT_FIELDS = 16,
};

enum iface_metric {
    IFACE_RX_BYTES,
    IFACE_TX_BYTES,
    IFACE_RX_PACKETS,
    IFACE_TX_PACKETS,
    N_IFACE_METRICS,
};

static const struct {
    const char *suffix;
    const char *unit;
    enum stat_field field;
} iface_metrics[N_IFACE_METRICS] = {
    [IFACE_RX_BYTES] = {"rx_bytes", "bytes", STAT_RX_BYTES},
    [IFACE_TX_BYTES] = {"tx_bytes", "bytes", STAT_TX_BYTES},
    [IFACE_RX_PACKETS] = {"rx_packets", "count", STAT_RX_PACKETS},
    [IFACE_TX_PACKETS] = {"tx_packets", "count", STAT_TX_PACKETS},
};

struct iface {
    /* Another interface's name maps to the same metric names ("eth0.100"
     * and "eth0_100"): only the first is reported, so that no metric gets
     * two values in one read. */
    gboolean ignored;
    guint64 last_scan; /* the scan that last saw it */
    uint32_t ids[N_IFACE_METRICS];
};

struct netdev {
    char *path;
    char **interfaces; /* NULL when every interface but lo is wanted */
    int fd;
    char *buffer;
    gsize buffer_size;
    GHashTable *ifaces;        /* kernel name → struct iface */
    GHashTable *metric_owners; /* metric segment → the kernel name that has it */
    guint64 scans;
};

struct scan {
    struct netdev *n;
    vigil_metric_catalog *catalog;
    const struct vigil_sample_sink *sink; /* NULL in start(): register only */
    unsigned line;
};

static void *netdev_create(const struct vigil_plugin_context *context, GError **error)
{
    (void)error;
    struct netdev *n = g_new0(struct netdev, 1);
    const char *root = vigil_config_get_string(context->config, context->section, "root");
    const char *const *interfaces =
        vigil_config_get_list(context->config, context->section, "interfaces");
    n->path = vigil_provider_path(root, RELATIVE_PATH);
    if (interfaces != NULL && interfaces[0] != NULL)
        n->interfaces = g_strdupv((char **)interfaces);
    n->fd = -1;
    n->buffer_size = BUFFER_INITIAL_BYTES;
    n->buffer = g_malloc(n->buffer_size);
    n->ifaces = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    n->metric_owners = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    return n;
}

static void netdev_destroy(void *instance)
{
    struct netdev *n = instance;
    if (n->fd >= 0)
        close(n->fd);
    g_hash_table_destroy(n->metric_owners);
    g_hash_table_destroy(n->ifaces);
    g_free(n->buffer);
    g_strfreev(n->interfaces);
    g_free(n->path);
    g_free(n);
}

/* Fills the buffer with the whole file, growing it when a read fills it:
 * a full buffer may have cut the file short. */
static gboolean load_file(struct netdev *n, enum vigil_provider_error_code code, GError **error)
{
    for (;;) {
        gssize length = vigil_provider_pread_all(n->fd, n->buffer, n->buffer_size);
        if (length < 0) {
            g_set_error(error, VIGIL_PROVIDER_ERROR, code, "cannot read %s: %s", n->path,
                        g_strerror(errno));
            return FALSE;
        }
        if ((gsize)length + 1 < n->buffer_size)
            return TRUE;
        if (n->buffer_size >= BUFFER_MAX_BYTES) {
            g_set_error(error, VIGIL_PROVIDER_ERROR, code,
                        "%s is larger than %u bytes: not a net/dev file", n->path,
                        BUFFER_MAX_BYTES);
            return FALSE;
        }
        n->buffer_size *= 2;
        n->buffer = g_realloc(n->buffer, n->buffer_size);
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
                s->n->path, s->line, reason);
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

/* The interface's name as one segment of a metric name: '.' separates
 * segments (VLANs are "eth0.100"), and upper case is not allowed. */
static char *metric_segment(const char *name)
{
    char *segment = g_strdup(name);
    for (char *c = segment; *c != '\0'; c++) {
        if (!g_ascii_islower(*c) && !g_ascii_isdigit(*c) && *c != '_' && *c != '-')
            *c = '_';
    }
    return segment;
}

static gboolean register_metrics(struct netdev *n, vigil_metric_catalog *catalog,
                                 const char *segment, struct iface *iface, GError **error)
{
    for (int m = 0; m < N_IFACE_METRICS; m++) {
        char *name = g_strdup_printf("net.%s.%s", segment, iface_metrics[m].suffix);
        iface->ids[m] =
            vigil_metric_register(catalog, name, iface_metrics[m].unit, VIGIL_METRIC_COUNTER,
                                  SOURCE, VIGIL_METRIC_MEASURED, error);
        g_free(name);
        if (iface->ids[m] == 0) {
            g_prefix_error(error, "%s: ", n->path);
            return FALSE;
        }
    }
    return TRUE;
}

static struct iface *add_iface(struct netdev *n, vigil_metric_catalog *catalog, const char *name,
                               GError **error)
{
    struct iface *iface = g_new0(struct iface, 1);
    char *segment = metric_segment(name);
    const char *owner = g_hash_table_lookup(n->metric_owners, segment);
    if (owner != NULL) {
        g_warning("%s: interfaces %s and %s both map to metrics net.%s.*: %s is not reported",
                  n->path, owner, name, segment, name);
        iface->ignored = TRUE;
        g_free(segment);
    } else if (!register_metrics(n, catalog, segment, iface, error)) {
        g_free(segment);
        g_free(iface);
        return NULL;
    } else {
        g_hash_table_insert(n->metric_owners, segment, g_strdup(name));
    }
    g_hash_table_insert(n->ifaces, g_strdup(name), iface);
    return iface;
}

static gboolean is_wanted(const struct netdev *n, const char *name)
{
    if (n->interfaces != NULL)
        return g_strv_contains((const char *const *)n->interfaces, name);
    /* Loopback traffic never leaves the node. */
    return strcmp(name, "lo") != 0;
}

/* Reads every number after the name, so that a line with a stray word is
 * refused rather than half-read. */
static gboolean parse_stats(const struct scan *s, char **cursor, guint64 *stats, GError **error)
{
    unsigned count = 0;
    for (char *field; (field = next_field(cursor)) != NULL; count++) {
        guint64 value = 0;
        if (!parse_u64(field, &value)) {
            malformed(s, error, "counter %u is \"%s\", not a whole number", count + 1, field);
            return FALSE;
        }
        if (count < N_STAT_FIELDS)
            stats[count] = value;
    }
    if (count < N_STAT_FIELDS) {
        malformed(s, error, "%u counters after the interface name, expected %d", count,
                  N_STAT_FIELDS);
        return FALSE;
    }
    return TRUE;
}

/* Old kernels print "eth0:123" with no space: the name ends at the colon,
 * which interface names cannot hold. */
static char *split_name(const struct scan *s, char *line, char **cursor, GError **error)
{
    char *colon = strchr(line, ':');
    if (colon == NULL) {
        malformed(s, error, "no \"interface:\" at the start of the line");
        return NULL;
    }
    *colon = '\0';
    *cursor = colon + 1;
    char *name = next_field(&line);
    if (name == NULL || next_field(&line) != NULL) {
        malformed(s, error, "expected one interface name before the ':'");
        return NULL;
    }
    return name;
}

static gboolean scan_line(struct scan *s, char *line, GError **error)
{
    if (s->line <= HEADER_LINES) {
        /* The two header lines split their columns with '|': a file
         * without them is not laid out as this parser expects. */
        if (strchr(line, '|') == NULL) {
            malformed(s, error, "expected a header line (with '|' between column groups)");
            return FALSE;
        }
        return TRUE;
    }
    char *cursor = NULL;
    const char *name = split_name(s, line, &cursor, error);
    if (name == NULL)
        return FALSE;
    guint64 stats[N_STAT_FIELDS];
    if (!parse_stats(s, &cursor, stats, error))
        return FALSE;
    struct iface *iface = g_hash_table_lookup(s->n->ifaces, name);
    if (iface == NULL) {
        if (!is_wanted(s->n, name))
            return TRUE;
        iface = add_iface(s->n, s->catalog, name, error);
        if (iface == NULL)
            return FALSE;
    }
    if (iface->last_scan == s->n->scans) {
        malformed(s, error, "interface %s appears twice", name);
        return FALSE;
    }
    iface->last_scan = s->n->scans;
    if (iface->ignored || s->sink == NULL)
        return TRUE;
    for (int m = 0; m < N_IFACE_METRICS; m++)
        vigil_sample_emit(s->sink, iface->ids[m], (double)stats[iface_metrics[m].field], 0);
    return TRUE;
}

static gboolean scan_buffer(struct scan *s, GError **error)
{
    /* Numbered so that a name seen twice in one file is caught without
     * clearing a mark on every entry first. */
    s->n->scans++;
    char *line = s->n->buffer;
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
    if (s->line < HEADER_LINES) {
        s->line++;
        malformed(s, error, "the file ends before its %d header lines", HEADER_LINES);
        return FALSE;
    }
    return TRUE;
}

static gboolean netdev_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct netdev *n = instance;
    if (n->fd >= 0)
        close(n->fd);
    n->fd = open(n->path, O_RDONLY | O_CLOEXEC);
    if (n->fd < 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "cannot open %s: %s", n->path, g_strerror(errno));
        return FALSE;
    }
    if (!load_file(n, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error))
        return FALSE;
    struct scan s = {n, catalog, NULL, 0};
    return scan_buffer(&s, error);
}

static gboolean netdev_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                            const struct vigil_sample_sink *sink, GError **error)
{
    (void)now_ns;
    struct netdev *n = instance;
    if (n->fd < 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                    "%s: read before a successful start", n->path);
        return FALSE;
    }
    if (!load_file(n, VIGIL_PROVIDER_ERROR_READ, error))
        return FALSE;
    struct scan s = {n, catalog, sink, 0};
    return scan_buffer(&s, error);
}

static const struct vigil_provider_ops netdev_ops = {
    .start = netdev_start,
    .read = netdev_read,
};

static const struct vigil_config_key keys[] = {
    {.name = "root",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "/",
     .description = "directory under which proc/ is read; / on a real node"},
    {.name = "interfaces",
     .type = VIGIL_CONFIG_LIST,
     .default_value = "",
     .description = "network interfaces to report (eth0;ib0); empty: all but lo"},
};

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_PROVIDER,
    .name = "netdev",
    .description = "bytes and packets per network interface, from /proc/net/dev",
    .config_keys = keys,
    .n_config_keys = G_N_ELEMENTS(keys),
    .create = netdev_create,
    .destroy = netdev_destroy,
    .ops = &netdev_ops,
};
