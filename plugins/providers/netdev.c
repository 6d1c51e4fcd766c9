/* vigil — the netdev provider: bytes and packets per network interface,
 * from /proc/net/dev. */
#include <string.h>

#include "vigil/metric.h"

#include "device_file_provider.h"

#define SOURCE        "netdev"
#define RELATIVE_PATH "proc/net/dev"

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

static gboolean is_wanted(const struct device_file_provider *n, const char *name)
{
    /* Loopback traffic never leaves the node. */
    return device_file_named(n, name, strcmp(name, "lo") != 0);
}

/* Old kernels print "eth0:123" with no space: the name ends at the colon,
 * which interface names cannot hold. */
static char *split_name(const struct device_file_scan *s, char *line, char **cursor, GError **error)
{
    char *colon = strchr(line, ':');
    if (colon == NULL) {
        vigil_provider_line_error(error, s->p->file.path, s->line,
                                  "no \"interface:\" at the start of the line");
        return NULL;
    }
    *colon = '\0';
    *cursor = colon + 1;
    char *name = vigil_provider_next_field(&line);
    if (name == NULL || vigil_provider_next_field(&line) != NULL) {
        vigil_provider_line_error(error, s->p->file.path, s->line,
                                  "expected one interface name before the ':'");
        return NULL;
    }
    return name;
}

static gboolean scan_line(struct device_file_scan *s, char *line, GError **error)
{
    if (s->line <= HEADER_LINES) {
        /* The two header lines split their columns with '|': a file
         * without them is not laid out as this parser expects. */
        if (strchr(line, '|') == NULL) {
            vigil_provider_line_error(error, s->p->file.path, s->line,
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
    if (!is_wanted(s->p, name))
        return TRUE;
    guint64 stats[N_STAT_FIELDS];
    const uint32_t *ids = NULL;
    if (!vigil_provider_devices_parse_stats(&s->p->devices, &cursor, s->line, stats, NULL, error) ||
        !vigil_provider_devices_see(&s->p->devices, s->catalog, s->line, name, TRUE, &ids, error))
        return FALSE;
    if (ids == NULL || s->sink == NULL)
        return TRUE;
    for (int m = 0; m < N_IFACE_METRICS; m++)
        vigil_sample_emit(s->sink, ids[m], (double)stats[iface_fields[m]], 0);
    return TRUE;
}

/* A file without its header lines is not laid out as this parser expects. */
static gboolean scan_end(const struct device_file_scan *s, GError **error)
{
    if (s->line >= HEADER_LINES)
        return TRUE;
    vigil_provider_line_error(error, s->p->file.path, s->line + 1,
                              "the file ends before its %d header lines", HEADER_LINES);
    return FALSE;
}

static const struct vigil_config_key keys[] = {
    VIGIL_PROVIDER_PROC_ROOT_KEY(struct device_file_settings),
    {VIGIL_SETTING_NAMED("interfaces", struct device_file_settings, names),
     .type = VIGIL_CONFIG_LIST, .default_value = "",
     .description = "network interfaces to report (eth0;ib0); empty: all but lo"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct device_file_settings, keys, NULL);

static const struct device_file_kind kind = {
    .settings = &settings_table,
    .relative_path = RELATIVE_PATH,
    .devices = &iface_kind,
    .scan_line = scan_line,
    .scan_end = scan_end,
};

DEVICE_FILE_PROVIDER_PLUGIN("netdev", "bytes and packets per network interface, from /proc/net/dev",
                            &settings_table, kind);
