/* vigil — the energy provider: the joules the node uses, measured by RAPL
 * through Linux's powercap interface, or estimated from CPU utilisation
 * where RAPL cannot be read.
 *
 * Sources (the `source` key):
 *   powercap  ROOT/sys/class/powercap/intel-rapl:N and its subzones
 *             intel-rapl:N:M (Intel, and AMD Zen through the same driver).
 *             The intel-rapl-mmio zones are left out: they count the same
 *             package again through another interface.
 *   estimate  a linear model of power against CPU utilisation from
 *             ROOT/proc/stat: sockets × (idle_w + (max_w − idle_w) × u).
 *   auto      powercap when every zone can be read, else the estimate.
 *             Why powercap could not be used is logged once by start()
 *             with g_message (domain vigil-provider-energy), which the
 *             daemon's log shows; the estimate's metric is ESTIMATED, so
 *             every output marks the figure anyway.
 * likwid's power API is planned as a third source, for nodes where the MSRs
 * are readable through likwid's access daemon but powercap is not. It is not
 * built: there is no "likwid" choice until it is.
 *
 * Metrics, all COUNTERs in joules, counted from the first read (which
 * emits 0; start() has no clock to begin from):
 *   energy.pkg0_j, energy.pkg1_j      the zones named "package-N"
 *   energy.pkg0.dram_j, .core, .uncore  a package's subzones
 *   energy.psys_j, energy.dram_j      other top-level zones, by their name
 *   energy.node_j                     the estimate
 * A zone name is lowercased and every character outside [a-z0-9_] becomes
 * '_' ("package-0-die-1" → "pkg0_die_1"). Zones are not summed: psys
 * already contains the packages. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "vigil/plugin.h"
#include "vigil/provider.h"

#define POWERCAP_SOURCE "energy/powercap"
#define ESTIMATE_SOURCE "energy/estimate"
#define POWERCAP_DIR    "sys/class/powercap"
#define ZONE_PREFIX     "intel-rapl:"
#define NO_SUBZONE      (-1)

#define UJ_PER_J 1e6
#define NS_PER_S 1e9

enum energy_source {
    SOURCE_AUTO,
    SOURCE_POWERCAP,
    SOURCE_ESTIMATE,
};

struct rapl_zone {
    int package;
    int subzone; /* NO_SUBZONE for a package-level zone */
    char *dir_path;
    char *energy_path;
    char *name; /* as the kernel gives it: "package-0", "dram" */
    char *stem; /* the metric name's middle: "pkg0", "pkg0.dram" */
    int fd;
    guint64 max_range_uj;
    uint32_t metric_id;

    gboolean primed; /* has a previous reading */
    guint64 prev_uj;
    guint64 prev_ns;
    guint64 total_uj;
};

/* The idle and busy ticks of /proc/stat's "cpu " line. */
struct cpu_ticks {
    guint64 idle; /* idle + iowait */
    guint64 busy; /* user nice system irq softirq steal */
};

struct energy {
    char *root;
    enum energy_source configured;
    enum energy_source active; /* POWERCAP or ESTIMATE once started */
    double idle_w, max_w, max_power_w;
    gint64 sockets;

    GPtrArray *zones; /* struct rapl_zone *, sorted by package then subzone */

    char *stat_path;
    int stat_fd;
    uint32_t node_metric_id;
    gboolean stat_primed;
    struct cpu_ticks prev_ticks;
    guint64 prev_ns;
    double utilisation; /* of the last interval that had ticks */
    double node_j;

    char *fallback_reason; /* why auto is not on powercap; NULL otherwise */
};

/* Errors ------------------------------------------------------------------------------------- */

static gboolean is_counter_file(const char *path)
{
    return g_str_has_suffix(path, "/energy_uj");
}

/* EACCES on energy_uj is the usual case on a node where vigild is not
 * root: the message says so, since the file's mode alone does not. */
static void set_file_error(GError **error, int code, const char *path, int errno_value)
{
    if ((errno_value == EACCES || errno_value == EPERM) && is_counter_file(path))
        g_set_error(error, VIGIL_PROVIDER_ERROR, code,
                    "permission denied on %s (Linux makes energy_uj root-only since 5.10, "
                    "against the PLATYPUS side channel)",
                    path);
    else
        g_set_error(error, VIGIL_PROVIDER_ERROR, code, "cannot read %s: %s", path,
                    g_strerror(errno_value));
}

/* Reading small files ------------------------------------------------------------------------ */

static int open_file(const char *path, int code, GError **error)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        set_file_error(error, code, path, errno);
    return fd;
}

static gboolean pread_text(int fd, const char *path, char *text, gsize size, int code,
                           GError **error)
{
    if (vigil_provider_pread_all(fd, text, size) < 0) {
        set_file_error(error, code, path, errno);
        return FALSE;
    }
    return TRUE;
}

/* For the files read once (a zone's name and range): open, read, close. */
static gboolean read_text_once(const char *path, char *text, gsize size, GError **error)
{
    int fd = open_file(path, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error);
    if (fd < 0)
        return FALSE;
    gboolean ok = pread_text(fd, path, text, size, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error);
    close(fd);
    if (ok)
        g_strstrip(text);
    return ok;
}

static gboolean parse_u64(const char *text, const char *path, int code, guint64 *value,
                          GError **error)
{
    if (!vigil_provider_parse_u64(text, value)) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, code, "%s does not hold a whole number: \"%.40s\"",
                    path, text);
        return FALSE;
    }
    return TRUE;
}

static gboolean read_counter_uj(const struct rapl_zone *zone, int code, guint64 *value_uj,
                                GError **error)
{
    char text[32];
    if (!pread_text(zone->fd, zone->energy_path, text, sizeof text, code, error))
        return FALSE;
    g_strstrip(text);
    return parse_u64(text, zone->energy_path, code, value_uj, error);
}

/* Powercap zones ----------------------------------------------------------------------------- */

static void zone_free(gpointer data)
{
    struct rapl_zone *zone = data;
    if (zone->fd >= 0)
        close(zone->fd);
    g_free(zone->dir_path);
    g_free(zone->energy_path);
    g_free(zone->name);
    g_free(zone->stem);
    g_free(zone);
}

/* Digits at *cursor, as an index no larger than a few thousand zones. */
static gboolean parse_index(const char **cursor, int *index)
{
    const char *p = *cursor;
    int value = 0;
    if (!g_ascii_isdigit(*p))
        return FALSE;
    for (; g_ascii_isdigit(*p); p++) {
        if (value > 99999)
            return FALSE;
        value = value * 10 + (*p - '0');
    }
    *cursor = p;
    *index = value;
    return TRUE;
}

/* "intel-rapl:N" or "intel-rapl:N:M"; FALSE for anything else, the
 * "intel-rapl" control type and "intel-rapl-mmio:N" among them. */
static gboolean parse_zone_dir_name(const char *name, int *package, int *subzone)
{
    if (!g_str_has_prefix(name, ZONE_PREFIX))
        return FALSE;
    const char *p = name + strlen(ZONE_PREFIX);
    if (!parse_index(&p, package))
        return FALSE;
    *subzone = NO_SUBZONE;
    if (*p == ':') {
        p++;
        if (!parse_index(&p, subzone))
            return FALSE;
    }
    return *p == '\0';
}

static gint compare_zones(gconstpointer a, gconstpointer b)
{
    const struct rapl_zone *za = *(const struct rapl_zone *const *)a;
    const struct rapl_zone *zb = *(const struct rapl_zone *const *)b;
    if (za->package != zb->package)
        return za->package < zb->package ? -1 : 1;
    return za->subzone < zb->subzone ? -1 : za->subzone > zb->subzone;
}

static gboolean read_zone_name(struct rapl_zone *zone, GError **error)
{
    char *path = g_build_filename(zone->dir_path, "name", NULL);
    char text[64];
    gboolean ok = read_text_once(path, text, sizeof text, error);
    if (ok)
        zone->name = g_strdup(text);
    g_free(path);
    return ok;
}

/* Without the range a wrap cannot be unwrapped: the zone is unusable. */
static gboolean read_zone_range(struct rapl_zone *zone, GError **error)
{
    char *path = g_build_filename(zone->dir_path, "max_energy_range_uj", NULL);
    char text[32];
    gboolean ok =
        read_text_once(path, text, sizeof text, error) &&
        parse_u64(text, path, VIGIL_PROVIDER_ERROR_UNAVAILABLE, &zone->max_range_uj, error);
    if (ok && zone->max_range_uj == 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "%s is 0: the counter's wrap cannot be known", path);
        ok = FALSE;
    }
    g_free(path);
    return ok;
}

/* Opens energy_uj and reads it once, so that a counter only root can read
 * fails here, with its reason, instead of at every tick. */
static gboolean open_zone_counter(struct rapl_zone *zone, GError **error)
{
    zone->energy_path = g_build_filename(zone->dir_path, "energy_uj", NULL);
    zone->fd = open_file(zone->energy_path, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error);
    guint64 value_uj;
    return zone->fd >= 0 &&
           read_counter_uj(zone, VIGIL_PROVIDER_ERROR_UNAVAILABLE, &value_uj, error);
}

static struct rapl_zone *zone_open(const char *powercap_path, const char *dir_name, int package,
                                   int subzone, GError **error)
{
    struct rapl_zone *zone = g_new0(struct rapl_zone, 1);
    zone->package = package;
    zone->subzone = subzone;
    zone->fd = -1;
    zone->dir_path = g_build_filename(powercap_path, dir_name, NULL);
    if (read_zone_name(zone, error) && read_zone_range(zone, error) &&
        open_zone_counter(zone, error))
        return zone;
    zone_free(zone);
    return NULL;
}

/* Lists and opens every zone. Any zone that cannot be read makes the whole
 * source unusable: a node total missing its DRAM, say, would under-report
 * without anyone noticing. */
static GPtrArray *open_zones(const char *powercap_path, GError **error)
{
    GError *dir_error = NULL;
    GDir *dir = g_dir_open(powercap_path, 0, &dir_error);
    if (dir == NULL) {
        if (g_error_matches(dir_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
            g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                        "no RAPL: %s does not exist", powercap_path);
        else
            g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                        "no RAPL: cannot list %s: %s", powercap_path, dir_error->message);
        g_error_free(dir_error);
        return NULL;
    }
    GPtrArray *zones = g_ptr_array_new_with_free_func(zone_free);
    const char *dir_name;
    int package, subzone;
    while ((dir_name = g_dir_read_name(dir)) != NULL) {
        if (!parse_zone_dir_name(dir_name, &package, &subzone))
            continue;
        struct rapl_zone *zone = zone_open(powercap_path, dir_name, package, subzone, error);
        if (zone == NULL) {
            g_ptr_array_unref(zones);
            g_dir_close(dir);
            return NULL;
        }
        g_ptr_array_add(zones, zone);
    }
    g_dir_close(dir);
    if (zones->len == 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "no RAPL: %s has no intel-rapl:N zone", powercap_path);
        g_ptr_array_unref(zones);
        return NULL;
    }
    g_ptr_array_sort(zones, compare_zones);
    return zones;
}

/* Metric names -------------------------------------------------------------------------------- */

/* "package-0" → "pkg0", "DRAM" → "dram", "package-0-die-1" → "pkg0_die_1". */
static char *name_stem(const char *zone_name, int fallback_index)
{
    if (zone_name[0] == '\0')
        return g_strdup_printf("zone%d", fallback_index);
    char *lower = g_ascii_strdown(zone_name, -1);
    const char *rest = g_str_has_prefix(lower, "package-") ? lower + strlen("package-") : NULL;
    char *stem = rest != NULL ? g_strconcat("pkg", rest, NULL) : g_strdup(lower);
    g_free(lower);
    vigil_provider_sanitize_name_part(stem, "");
    return stem;
}

static const struct rapl_zone *find_package_zone(const GPtrArray *zones, int package)
{
    for (guint i = 0; i < zones->len; i++) {
        const struct rapl_zone *zone = g_ptr_array_index(zones, i);
        if (zone->package == package && zone->subzone == NO_SUBZONE)
            return zone;
    }
    return NULL;
}

static gboolean stem_taken(const GPtrArray *zones, guint before, const char *stem)
{
    for (guint i = 0; i < before; i++)
        if (strcmp(((const struct rapl_zone *)g_ptr_array_index(zones, i))->stem, stem) == 0)
            return TRUE;
    return FALSE;
}

/* Package zones come first in the sorted array, so a subzone's parent has
 * its stem already. Two zones with one name (firmware that names every
 * package "package-0") keep apart by their directory's number. */
static void name_zones(GPtrArray *zones)
{
    for (guint i = 0; i < zones->len; i++) {
        struct rapl_zone *zone = g_ptr_array_index(zones, i);
        char *own =
            name_stem(zone->name, zone->subzone == NO_SUBZONE ? zone->package : zone->subzone);
        const struct rapl_zone *parent =
            zone->subzone == NO_SUBZONE ? NULL : find_package_zone(zones, zone->package);
        if (zone->subzone == NO_SUBZONE)
            zone->stem = g_steal_pointer(&own);
        else if (parent != NULL)
            zone->stem = g_strconcat(parent->stem, ".", own, NULL);
        else
            zone->stem = g_strdup_printf("rapl%d.%s", zone->package, own);
        g_free(own);
        if (stem_taken(zones, i, zone->stem)) {
            char *unique = g_strdup_printf(
                "%s_%d", zone->stem, zone->subzone == NO_SUBZONE ? zone->package : zone->subzone);
            g_free(zone->stem);
            zone->stem = unique;
        }
    }
}

static gboolean register_zones(GPtrArray *zones, vigil_metric_catalog *catalog, GError **error)
{
    for (guint i = 0; i < zones->len; i++) {
        struct rapl_zone *zone = g_ptr_array_index(zones, i);
        char *metric = g_strdup_printf("energy.%s_j", zone->stem);
        zone->metric_id = vigil_metric_register(catalog, metric, "J", VIGIL_METRIC_COUNTER,
                                                POWERCAP_SOURCE, VIGIL_METRIC_MEASURED, error);
        g_free(metric);
        if (zone->metric_id == 0)
            return FALSE;
    }
    return TRUE;
}

/* Reading the counters ------------------------------------------------------------------------ */

/* The energy_uj counter runs from 0 to max_energy_range_uj and starts
 * again from 0. A reading below the previous one is one wrap. */
static guint64 unwrapped_delta_uj(const struct rapl_zone *zone, guint64 now_uj)
{
    if (now_uj >= zone->prev_uj)
        return now_uj - zone->prev_uj;
    if (zone->prev_uj > zone->max_range_uj) /* a counter beyond its range: it was reset */
        return now_uj;
    return (zone->max_range_uj - zone->prev_uj) + now_uj + 1;
}

/* At max_power_w the counter goes round once in range / power; a longer
 * gap could hold two wraps, or one that carried it past its previous
 * value, and neither shows in the reading. */
static gboolean wrap_may_hide(const struct energy *e, const struct rapl_zone *zone, guint64 gap_ns)
{
    double full_turn_ns = (double)zone->max_range_uj / (e->max_power_w * UJ_PER_J) * NS_PER_S;
    return (double)gap_ns > full_turn_ns;
}

static gboolean read_zone(struct energy *e, struct rapl_zone *zone, guint64 now_ns,
                          const struct vigil_sample_sink *sink, GError **error)
{
    guint64 value_uj;
    if (!read_counter_uj(zone, VIGIL_PROVIDER_ERROR_READ, &value_uj, error))
        return FALSE;
    uint32_t flags = 0;
    if (zone->primed) {
        zone->total_uj += unwrapped_delta_uj(zone, value_uj);
        guint64 gap_ns = now_ns > zone->prev_ns ? now_ns - zone->prev_ns : 0;
        if (wrap_may_hide(e, zone, gap_ns))
            flags |= VIGIL_SAMPLE_UNCERTAIN;
    }
    zone->primed = TRUE;
    zone->prev_uj = value_uj;
    zone->prev_ns = now_ns;
    vigil_sample_emit(sink, zone->metric_id, (double)zone->total_uj / UJ_PER_J, flags);
    return TRUE;
}

/* Every zone is read even when one fails; the error names the first that
 * did. A zone keeps its own previous reading, so the one that failed
 * counts its energy at its next good read. */
static gboolean read_powercap(struct energy *e, guint64 now_ns,
                              const struct vigil_sample_sink *sink, GError **error)
{
    GError *first_error = NULL;
    for (guint i = 0; i < e->zones->len; i++) {
        GError *zone_error = NULL;
        if (!read_zone(e, g_ptr_array_index(e->zones, i), now_ns, sink, &zone_error)) {
            if (first_error == NULL)
                first_error = zone_error;
            else
                g_error_free(zone_error);
        }
    }
    if (first_error == NULL)
        return TRUE;
    g_propagate_error(error, first_error);
    return FALSE;
}

static gboolean start_powercap(struct energy *e, vigil_metric_catalog *catalog, GError **error)
{
    char *powercap_path = vigil_provider_path(e->root, POWERCAP_DIR);
    GPtrArray *zones = open_zones(powercap_path, error);
    g_free(powercap_path);
    if (zones == NULL)
        return FALSE;
    name_zones(zones);
    if (!register_zones(zones, catalog, error)) {
        g_ptr_array_unref(zones);
        return FALSE;
    }
    e->zones = zones;
    e->active = SOURCE_POWERCAP;
    return TRUE;
}

/* The estimate -------------------------------------------------------------------------------- */

/* The fields of the "cpu " line, in the kernel's order; guest and
 * guest_nice, which follow, are already counted in user and nice. */
enum { CPU_USER, CPU_NICE, CPU_SYSTEM, CPU_IDLE, CPU_IOWAIT, N_CPU_FIELDS = 8 };
/* Kernels before 2.6.11 have no steal, before 2.6.0 no iowait, irq or
 * softirq: absent, they are 0. */
#define MIN_CPU_FIELDS 4

/* The first line is the node's: a small buffer suffices whatever the CPU
 * count, and pread_all cuts the rest off. */
#define STAT_HEAD_BYTES 512

static gboolean parse_cpu_line(const char *text, struct cpu_ticks *ticks)
{
    if (!g_str_has_prefix(text, "cpu "))
        return FALSE;
    guint64 fields[N_CPU_FIELDS] = {0};
    const char *p = text + strlen("cpu ");
    int n = 0;
    while (n < N_CPU_FIELDS) {
        while (*p == ' ')
            p++;
        if (!g_ascii_isdigit(*p))
            break;
        char *end;
        fields[n++] = g_ascii_strtoull(p, &end, 10);
        p = end;
    }
    if (n < MIN_CPU_FIELDS)
        return FALSE;
    ticks->idle = fields[CPU_IDLE] + fields[CPU_IOWAIT];
    ticks->busy = 0;
    for (int i = 0; i < N_CPU_FIELDS; i++)
        if (i != CPU_IDLE && i != CPU_IOWAIT)
            ticks->busy += fields[i];
    return TRUE;
}

static gboolean read_cpu_ticks(struct energy *e, int code, struct cpu_ticks *ticks, GError **error)
{
    char text[STAT_HEAD_BYTES];
    if (!pread_text(e->stat_fd, e->stat_path, text, sizeof text, code, error))
        return FALSE;
    if (!parse_cpu_line(text, ticks)) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, code,
                    "%s does not start with a \"cpu \" line of at least %d numbers: \"%.60s\"",
                    e->stat_path, MIN_CPU_FIELDS, text);
        return FALSE;
    }
    return TRUE;
}

static double model_power_w(const struct energy *e, double utilisation)
{
    return (double)e->sockets * (e->idle_w + (e->max_w - e->idle_w) * utilisation);
}

/* With no tick between two reads (two reads in one jiffy) the node is
 * taken to be doing what it did before. Ticks going backwards (CPUs taken
 * offline drop out of the sums) give no utilisation either: the previous
 * one is used, and the sample is marked. */
static double interval_utilisation(struct energy *e, const struct cpu_ticks *now, uint32_t *flags)
{
    if (now->idle < e->prev_ticks.idle || now->busy < e->prev_ticks.busy) {
        *flags |= VIGIL_SAMPLE_UNCERTAIN;
        return e->utilisation;
    }
    guint64 idle = now->idle - e->prev_ticks.idle;
    guint64 total = idle + (now->busy - e->prev_ticks.busy);
    if (total > 0)
        e->utilisation = 1.0 - (double)idle / (double)total;
    return e->utilisation;
}

static gboolean read_estimate(struct energy *e, guint64 now_ns,
                              const struct vigil_sample_sink *sink, GError **error)
{
    struct cpu_ticks ticks;
    if (!read_cpu_ticks(e, VIGIL_PROVIDER_ERROR_READ, &ticks, error))
        return FALSE;
    uint32_t flags = 0;
    if (e->stat_primed) {
        double utilisation = interval_utilisation(e, &ticks, &flags);
        double interval_s = now_ns > e->prev_ns ? (double)(now_ns - e->prev_ns) / NS_PER_S : 0;
        e->node_j += model_power_w(e, utilisation) * interval_s;
    }
    e->stat_primed = TRUE;
    e->prev_ticks = ticks;
    if (now_ns > e->prev_ns)
        e->prev_ns = now_ns;
    vigil_sample_emit(sink, e->node_metric_id, e->node_j, flags);
    return TRUE;
}

static gboolean start_estimate(struct energy *e, vigil_metric_catalog *catalog, GError **error)
{
    e->stat_fd = open_file(e->stat_path, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error);
    struct cpu_ticks ticks;
    if (e->stat_fd < 0 || !read_cpu_ticks(e, VIGIL_PROVIDER_ERROR_UNAVAILABLE, &ticks, error))
        return FALSE;
    e->node_metric_id = vigil_metric_register(catalog, "energy.node_j", "J", VIGIL_METRIC_COUNTER,
                                              ESTIMATE_SOURCE, VIGIL_METRIC_ESTIMATED, error);
    if (e->node_metric_id == 0)
        return FALSE;
    e->active = SOURCE_ESTIMATE;
    return TRUE;
}

/* The provider -------------------------------------------------------------------------------- */

static enum energy_source source_from_name(const char *name)
{
    if (g_strcmp0(name, "powercap") == 0)
        return SOURCE_POWERCAP;
    if (g_strcmp0(name, "estimate") == 0)
        return SOURCE_ESTIMATE;
    return SOURCE_AUTO;
}

static void *energy_create(const struct vigil_plugin_context *ctx, GError **error)
{
    const vigil_config *config = ctx->config;
    double idle_w = vigil_config_get_double(config, ctx->section, "idle_w");
    double max_w = vigil_config_get_double(config, ctx->section, "max_w");
    /* Above max_w, idle_w would make a busy node draw less than an idle one. */
    if (idle_w > max_w) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "[%s] idle_w (%g W) is above max_w (%g W)", ctx->section, idle_w, max_w);
        return NULL;
    }
    struct energy *e = g_new0(struct energy, 1);
    e->root = g_strdup(vigil_config_get_string(config, ctx->section, "root"));
    e->configured = source_from_name(vigil_config_get_string(config, ctx->section, "source"));
    e->idle_w = idle_w;
    e->max_w = max_w;
    e->max_power_w = vigil_config_get_double(config, ctx->section, "max_power_w");
    e->sockets = vigil_config_get_int(config, ctx->section, "sockets");
    e->stat_path = vigil_provider_path(e->root, "proc/stat");
    e->stat_fd = -1;
    return e;
}

static void energy_destroy(void *instance)
{
    struct energy *e = instance;
    if (e->zones != NULL)
        g_ptr_array_unref(e->zones);
    if (e->stat_fd >= 0)
        close(e->stat_fd);
    g_free(e->stat_path);
    g_free(e->root);
    g_free(e->fallback_reason);
    g_free(e);
}

/* auto: powercap, or the estimate with the reason powercap failed logged.
 * When the estimate fails too, both reasons are given. */
static gboolean start_auto(struct energy *e, vigil_metric_catalog *catalog, GError **error)
{
    GError *powercap_error = NULL;
    if (start_powercap(e, catalog, &powercap_error))
        return TRUE;
    GError *estimate_error = NULL;
    if (!start_estimate(e, catalog, &estimate_error)) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "%s; and no estimate either: %s", powercap_error->message,
                    estimate_error->message);
        g_error_free(estimate_error);
        g_error_free(powercap_error);
        return FALSE;
    }
    e->fallback_reason = g_strdup(powercap_error->message);
    g_error_free(powercap_error);
    g_message("energy is estimated from %s (%" G_GINT64_FORMAT
              " socket(s), %g W idle to %g W busy each), not measured: %s",
              e->stat_path, e->sockets, e->idle_w, e->max_w, e->fallback_reason);
    return TRUE;
}

static gboolean energy_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct energy *e = instance;
    switch (e->configured) {
    case SOURCE_POWERCAP:
        return start_powercap(e, catalog, error);
    case SOURCE_ESTIMATE:
        return start_estimate(e, catalog, error);
    case SOURCE_AUTO:
    default:
        return start_auto(e, catalog, error);
    }
}

static gboolean energy_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                            const struct vigil_sample_sink *sink, GError **error)
{
    (void)catalog;
    struct energy *e = instance;
    if (e->active == SOURCE_POWERCAP)
        return read_powercap(e, now_ns, sink, error);
    if (e->active == SOURCE_ESTIMATE)
        return read_estimate(e, now_ns, sink, error);
    g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                "the energy provider was read before it started");
    return FALSE;
}

static const struct vigil_provider_ops energy_provider_ops = {
    .start = energy_start,
    .read = energy_read,
};

static const struct vigil_config_key keys[] = {
    {.name = "root",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "/",
     .description = "directory under which sys/ and proc/ are read"},
    {.name = "source",
     .type = VIGIL_CONFIG_ENUM,
     .default_value = "auto",
     .choices = "auto|powercap|estimate",
     .description = "RAPL through powercap, a utilisation estimate, or powercap when readable"},
    {.name = "idle_w",
     .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "50",
     .min = 0,
     .max = 2000,
     .description = "estimate: power of one idle socket, in watts"},
    {.name = "max_w",
     .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "150",
     .min = 0,
     .max = 2000,
     .description = "estimate: power of one fully busy socket, in watts"},
    {.name = "sockets",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1",
     .min = 1,
     .max = 64,
     .description = "estimate: number of sockets"},
    {.name = "max_power_w",
     .type = VIGIL_CONFIG_DOUBLE,
     .default_value = "1000",
     .min = 1,
     .max = 100000,
     .description = "powercap: the most one zone can draw, in watts; a longer gap between "
                    "reads than its counter's range at this power is marked uncertain"},
};

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_PROVIDER,
    .name = "energy",
    .description = "energy in joules: RAPL through powercap, or estimated from CPU utilisation",
    .config_keys = keys,
    .n_config_keys = G_N_ELEMENTS(keys),
    .create = energy_create,
    .destroy = energy_destroy,
    .ops = &energy_provider_ops,
};
