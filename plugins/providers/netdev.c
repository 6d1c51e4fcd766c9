/* vigil — the netdev provider: bytes and packets per network interface,
 * from /proc/net/dev. */
#include <string.h>

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

static const struct vigil_provider_device_metric iface_metrics[N_IFACE_METRICS] = {
    [IFACE_RX_BYTES] = {"rx_bytes", "bytes"},
    [IFACE_TX_BYTES] = {"tx_bytes", "bytes"},
    [IFACE_RX_PACKETS] = {"rx_packets", "count"},
    [IFACE_TX_PACKETS] = {"tx_packets", "count"},
};

static const enum stat_field iface_fields[N_IFACE_METRICS] = {
    [IFACE_RX_BYTES] = STAT_RX_BYTES,
    [IFACE_TX_BYTES] = STAT_TX_BYTES,
    [IFACE_RX_PACKETS] = STAT_RX_PACKETS,
    [IFACE_TX_PACKETS] = STAT_TX_PACKETS,
};

/* VLANs are "eth0.100": the '.' becomes '_', and "eth0_100" would then
 * have the same metrics. */
static const struct vigil_provider_device_kind iface_kind = {
    .noun = "interface",
    .stat_noun = "counter",
    .n_stats = N_STAT_FIELDS,
    .group = "net",
    .source = SOURCE,
    .log_domain = G_LOG_DOMAIN,
    .metrics = iface_metrics,
    .n_metrics = N_IFACE_METRICS,
};

struct netdev_settings {
    char *root;
    char **interfaces; /* empty: the default choice */
};
static const struct vigil_settings_table settings_table;

struct netdev {
    struct vigil_provider_file file;
    char **interfaces; /* NULL when every interface but lo is wanted */
    struct vigil_provider_devices ifaces;
};

struct scan {
    struct netdev *n;
    vigil_metric_catalog *catalog;
    const struct vigil_sample_sink *sink; /* NULL in start(): register only */
    guint line;
};

static void *netdev_create(const struct vigil_plugin_context *context, GError **error)
{
    struct netdev_settings settings;
    if (!vigil_plugin_settings_load(context, &settings_table, &settings, error))
        return NULL;
    struct netdev *n = g_new0(struct netdev, 1);
    vigil_provider_file_init(&n->file, settings.root, RELATIVE_PATH, BUFFER_INITIAL_BYTES,
                             BUFFER_MAX_BYTES);
    if (settings.interfaces[0] != NULL)
        n->interfaces = g_steal_pointer(&settings.interfaces);
    vigil_settings_clear(&settings_table, &settings);
    vigil_provider_devices_init(&n->ifaces, &iface_kind, n->file.path);
    return n;
}

static void netdev_destroy(void *instance)
{
    struct netdev *n = instance;
    vigil_provider_devices_clear(&n->ifaces);
    g_strfreev(n->interfaces);
    vigil_provider_file_clear(&n->file);
    g_free(n);
}

static gboolean is_wanted(const struct netdev *n, const char *name)
{
    if (n->interfaces != NULL)
        return g_strv_contains((const char *const *)n->interfaces, name);
    /* Loopback traffic never leaves the node. */
    return strcmp(name, "lo") != 0;
}

/* Old kernels print "eth0:123" with no space: the name ends at the colon,
 * which interface names cannot hold. */
static char *split_name(const struct scan *s, char *line, char **cursor, GError **error)
{
    char *colon = strchr(line, ':');
    if (colon == NULL) {
        vigil_provider_line_error(error, s->n->file.path, s->line,
                                  "no \"interface:\" at the start of the line");
        return NULL;
    }
    *colon = '\0';
    *cursor = colon + 1;
    char *name = vigil_provider_next_field(&line);
    if (name == NULL || vigil_provider_next_field(&line) != NULL) {
        vigil_provider_line_error(error, s->n->file.path, s->line,
                                  "expected one interface name before the ':'");
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
            vigil_provider_line_error(error, s->n->file.path, s->line,
                                      "expected a header line (with '|' between column groups)");
            return FALSE;
        }
        return TRUE;
    }
    char *cursor = NULL;
    const char *name = split_name(s, line, &cursor, error);
    if (name == NULL)
        return FALSE;
    /* An interface not reported is not parsed past its name, as in
     * diskstats.c: a tick's work is for what it emits. */
    if (!is_wanted(s->n, name))
        return TRUE;
    guint64 stats[N_STAT_FIELDS];
    const uint32_t *ids = NULL;
    if (!vigil_provider_devices_parse_stats(&s->n->ifaces, &cursor, s->line, stats, NULL, error) ||
        !vigil_provider_devices_see(&s->n->ifaces, s->catalog, s->line, name, TRUE, &ids, error))
        return FALSE;
    if (ids == NULL || s->sink == NULL)
        return TRUE;
    for (int m = 0; m < N_IFACE_METRICS; m++)
        vigil_sample_emit(s->sink, ids[m], (double)stats[iface_fields[m]], 0);
    return TRUE;
}

static gboolean scan_file(struct netdev *n, vigil_metric_catalog *catalog,
                          const struct vigil_sample_sink *sink, GError **error)
{
    struct scan s = {n, catalog, sink, 0};
    vigil_provider_devices_begin_scan(&n->ifaces);
    char *cursor = n->file.buffer;
    for (char *line; (line = vigil_provider_next_line(&cursor)) != NULL;) {
        s.line++;
        if (!scan_line(&s, line, error))
            return FALSE;
    }
    if (s.line < HEADER_LINES) {
        vigil_provider_line_error(error, n->file.path, s.line + 1,
                                  "the file ends before its %d header lines", HEADER_LINES);
        return FALSE;
    }
    return TRUE;
}

static gboolean netdev_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct netdev *n = instance;
    return vigil_provider_file_open(&n->file, error) && scan_file(n, catalog, NULL, error);
}

static gboolean netdev_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                            const struct vigil_sample_sink *sink, GError **error)
{
    (void)now_ns;
    struct netdev *n = instance;
    return vigil_provider_file_read(&n->file, error) && scan_file(n, catalog, sink, error);
}

static const struct vigil_provider_ops netdev_ops = {
    .start = netdev_start,
    .read = netdev_read,
};

static const struct vigil_config_key keys[] = {
    VIGIL_PROVIDER_PROC_ROOT_KEY(struct netdev_settings),
    {VIGIL_SETTING(struct netdev_settings, interfaces), .type = VIGIL_CONFIG_LIST,
     .default_value = "",
     .description = "network interfaces to report (eth0;ib0); empty: all but lo"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct netdev_settings, keys, NULL);

VIGIL_PLUGIN(VIGIL_PLUGIN_PROVIDER, .name = "netdev",
             .description = "bytes and packets per network interface, from /proc/net/dev",
             .settings = &settings_table, .create = netdev_create, .destroy = netdev_destroy,
             .ops = &netdev_ops);
