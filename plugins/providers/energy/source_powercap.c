/* vigil — the energy provider's powercap source: RAPL through Linux's
 * powercap interface, ROOT/sys/class/powercap/intel-rapl:N and its subzones
 * intel-rapl:N:M (Intel, and AMD Zen through the same driver). The
 * intel-rapl-mmio zones are left out: they count the same package again
 * through another interface.
 *
 * Metrics, COUNTERs in joules from the first read (which emits 0):
 *   energy.pkg0_j, energy.pkg1_j        the zones named "package-N"
 *   energy.pkg0.dram_j, .core, .uncore  a package's subzones
 *   energy.psys_j, energy.dram_j        other top-level zones, by name
 * A zone name is lowercased and every character outside [a-z0-9_] becomes
 * '_' ("package-0-die-1" → "pkg0_die_1"). Zones are not summed: psys
 * already contains the packages. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "energy_source.h"

#define POWERCAP_DIR "sys/class/powercap"
#define ZONE_PREFIX  "intel-rapl:"
#define NO_SUBZONE   (-1)

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

struct powercap {
    double max_power_w;
    GPtrArray *zones; /* struct rapl_zone *, sorted by package then subzone */
};

/* For the files read once (a zone's name and range): open, read, close. */
static gboolean read_text_once(const char *path, char *text, gsize size, GError **error)
{
    int fd = energy_open_file(path, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error);
    if (fd < 0)
        return FALSE;
    gboolean ok = energy_pread_text(fd, path, text, size, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error);
    close(fd);
    if (ok)
        g_strstrip(text);
    return ok;
}

static gboolean read_counter_uj(const struct rapl_zone *zone, int code, guint64 *value_uj,
                                GError **error)
{
    char text[32];
    if (!energy_pread_text(zone->fd, zone->energy_path, text, sizeof text, code, error))
        return FALSE;
    g_strstrip(text);
    return energy_parse_u64(text, zone->energy_path, code, value_uj, error);
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
        energy_parse_u64(text, path, VIGIL_PROVIDER_ERROR_UNAVAILABLE, &zone->max_range_uj, error);
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
    zone->fd = energy_open_file(zone->energy_path, VIGIL_PROVIDER_ERROR_UNAVAILABLE, error);
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
            g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE, "%s absent",
                        powercap_path);
        else
            g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                        "cannot list %s: %s", powercap_path, dir_error->message);
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
                    "%s has no intel-rapl:N zone", powercap_path);
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
        zone->metric_id =
            vigil_metric_register(catalog, metric, "J", VIGIL_METRIC_COUNTER,
                                  energy_source_powercap.origin, VIGIL_METRIC_MEASURED, error);
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
static gboolean wrap_may_hide(const struct powercap *e, const struct rapl_zone *zone,
                              guint64 gap_ns)
{
    double full_turn_ns =
        (double)zone->max_range_uj / (e->max_power_w * ENERGY_UJ_PER_J) * ENERGY_NS_PER_S;
    return (double)gap_ns > full_turn_ns;
}

static gboolean read_zone(void *state, void *zone_ptr, uint64_t now_ns,
                          const struct vigil_sample_sink *sink, GError **error)
{
    const struct powercap *e = state;
    struct rapl_zone *zone = zone_ptr;
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
    vigil_sample_emit(sink, zone->metric_id, (double)zone->total_uj / ENERGY_UJ_PER_J, flags);
    return TRUE;
}

static void powercap_stop(void *state)
{
    struct powercap *e = state;
    if (e->zones != NULL)
        g_ptr_array_unref(e->zones);
    g_free(e);
}

static void *powercap_start(const struct energy_settings *settings, vigil_metric_catalog *catalog,
                            GError **error)
{
    char *powercap_path = vigil_provider_path(settings->root, POWERCAP_DIR);
    GPtrArray *zones = open_zones(powercap_path, error);
    g_free(powercap_path);
    if (zones == NULL)
        return NULL;
    name_zones(zones);
    if (!register_zones(zones, catalog, error)) {
        g_ptr_array_unref(zones);
        return NULL;
    }
    struct powercap *e = g_new0(struct powercap, 1);
    e->max_power_w = settings->max_power_w;
    e->zones = zones;
    return e;
}

/* Every zone is read even when one fails; the error names the first that
 * did. A zone keeps its own previous reading, so the one that failed
 * counts its energy at its next good read. */
static gboolean powercap_read(void *state, uint64_t now_ns, const struct vigil_sample_sink *sink,
                              GError **error)
{
    const struct powercap *e = state;
    return energy_read_zones(state, e->zones, read_zone, now_ns, sink, error);
}

const struct energy_source energy_source_powercap = ENERGY_SOURCE(
    "powercap", .start = powercap_start, .read = powercap_read, .stop = powercap_stop);
