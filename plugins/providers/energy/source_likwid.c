/* vigil — the energy provider's likwid source: RAPL read through likwid's
 * power API (power_init, the units per domain in its PowerInfo, power_read
 * of each domain's status register on one CPU of each socket).
 *
 * Metrics, COUNTERs in joules from the first read, with the powercap
 * source's names so that whatever uses them does not care which source
 * runs: energy.pkgN_j (PKG), energy.pkgN.core_j (PP0, AMD's CORE),
 * energy.pkgN.uncore_j (PP1), energy.pkgN.dram_j (DRAM), energy.psys_j
 * (PLATFORM, read once, on the first socket's CPU).
 *
 * likwid 5.2.2's traps, and what is done about each:
 * - power_init returns 0 (no RAPL) in perf_event access mode and on CPU
 *   models newer than the release; a negative value is no access. Each
 *   gives its own reason.
 * - On AMD, domain 0 is CORE, not PKG, and likwid still sets its type to
 *   PKG: domains are known by likwid's power_names, never by index or type.
 * - The registers are not in likwid.h: likwid_api.h has them.
 * - Debian's likwid-accessD is not setuid; and when the access daemon does
 *   not come up, likwid's client calls exit() after 10 s, which would end
 *   vigild. The source sets direct access (HPMmode), where a failure is a
 *   return value, and says when the daemon would not have helped anyway.
 * - Counters are 32 bits and wrap in about 1,500 s at 175 W: every read
 *   takes the difference modulo 2^32, and a gap long enough for a whole
 *   turn at max_power_w marks the sample uncertain. */
#include <errno.h>
#include <string.h>

#include "energy_source.h"
#include "likwid_api.h"

/* The AMD families whose RAPL likwid 5.2.2 knows (Zen to Zen 3). */
#define AMD_ZEN_FAMILY  0x17u
#define AMD_ZEN3_FAMILY 0x19u

#define COUNTER_TURN 4294967296.0 /* 2^32 */

/* A likwid domain and where its joules go. */
struct domain_kind {
    const char *likwid_name; /* in power_names */
    uint32_t reg;
    const char *part; /* after "pkgN": "" for the package, ".dram"; NULL: the node's psys */
};

static const struct domain_kind intel_domains[] = {
    {"PKG", LIKWID_MSR_PKG_ENERGY_STATUS, ""},
    {"PP0", LIKWID_MSR_PP0_ENERGY_STATUS, ".core"},
    {"PP1", LIKWID_MSR_PP1_ENERGY_STATUS, ".uncore"},
    {"DRAM", LIKWID_MSR_DRAM_ENERGY_STATUS, ".dram"},
    {"PLATFORM", LIKWID_MSR_PLATFORM_ENERGY, NULL},
};

static const struct domain_kind amd_domains[] = {
    {"CORE", LIKWID_MSR_AMD_CORE_ENERGY, ".core"},
    {"PKG", LIKWID_MSR_AMD_PKG_ENERGY, ""},
};

struct likwid_zone {
    int cpu;
    uint32_t reg;
    const char *domain; /* likwid's name, for messages */
    double unit_j;      /* from likwid's PowerInfo */
    double full_turn_ns;
    uint32_t metric_id;
    char *metric;

    gboolean primed;
    uint32_t prev;
    guint64 prev_ns;
    double total_j;
};

struct likwid {
    const struct likwid_api *api;
    gboolean topology_up, configuration_up, power_up;
    GArray *socket_cpus; /* int: one CPU of each socket, in likwid's socket order */
    GPtrArray *zones;    /* struct likwid_zone * */
    char *note;          /* the domains left out, or NULL */
};

static void zone_free(gpointer data)
{
    struct likwid_zone *zone = data;
    g_free(zone->metric);
    g_free(zone);
}

static void likwid_stop(void *state)
{
    struct likwid *l = state;
    if (l->power_up) {
        l->api->power_finalize();
        l->api->HPMfinalize();
    }
    if (l->topology_up)
        l->api->topology_finalize();
    if (l->configuration_up)
        l->api->destroy_configuration();
    if (l->socket_cpus != NULL)
        g_array_unref(l->socket_cpus);
    if (l->zones != NULL)
        g_ptr_array_unref(l->zones);
    g_free(l->note);
    g_free(l);
}

static void *fail(struct likwid *l, GError **error, const char *format, ...) G_GNUC_PRINTF(3, 4);

static void *fail(struct likwid *l, GError **error, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *reason = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error_literal(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE, reason);
    g_free(reason);
    likwid_stop(l);
    return NULL;
}

/* The first CPU likwid lists in each socket, sockets in the order their
 * first CPU comes. */
static GArray *socket_cpus(CpuTopology_t topology)
{
    GArray *cpus = g_array_new(FALSE, FALSE, sizeof(int));
    GArray *packages = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    for (uint32_t i = 0; topology != NULL && i < topology->numHWThreads; i++) {
        const HWThread *thread = &topology->threadPool[i];
        gboolean seen = FALSE;
        for (guint j = 0; j < packages->len && !seen; j++)
            seen = g_array_index(packages, uint32_t, j) == thread->packageId;
        if (seen)
            continue;
        int cpu = (int)thread->apicId;
        g_array_append_val(packages, thread->packageId);
        g_array_append_val(cpus, cpu);
    }
    g_array_unref(packages);
    return cpus;
}

static gboolean is_amd_family_known(CpuInfo_t info)
{
    return info->family == AMD_ZEN_FAMILY || info->family == AMD_ZEN3_FAMILY;
}

/* Why power_init found no access: the MSR device, likwid's access daemon,
 * and a CPU likwid would not know even with access. */
static char *no_access_reason(const struct likwid *l, CpuInfo_t info, Configuration_t config,
                              int cpu, int result)
{
    const struct likwid_api *api = l->api;
    uint32_t unit_reg = info->isIntel ? LIKWID_MSR_RAPL_POWER_UNIT : LIKWID_MSR_AMD_RAPL_POWER_UNIT;
    GString *reason = g_string_new(NULL);
    g_string_printf(reason, "cannot read MSR 0x%x: no access (power_init returned %d; ", unit_reg,
                    result);
    int msr_errno = api->msr_device_errno(cpu);
    if (msr_errno == ENOENT || msr_errno == ENXIO || msr_errno == ENODEV)
        g_string_append_printf(reason,
                               "/dev/cpu/%d/msr absent: the msr kernel module is not loaded", cpu);
    else if (msr_errno == EACCES || msr_errno == EPERM)
        g_string_append_printf(reason,
                               "/dev/cpu/%d/msr: permission denied, it needs root and "
                               "CAP_SYS_RAWIO",
                               cpu);
    else if (msr_errno != 0)
        g_string_append_printf(reason, "/dev/cpu/%d/msr: %s", cpu, g_strerror(msr_errno));
    else
        g_string_append_printf(reason, "/dev/cpu/%d/msr opens, yet likwid could not read it", cpu);
    const char *daemon = config != NULL ? config->daemonPath : NULL;
    if (api->euid() != 0 && daemon != NULL && api->file_exists(daemon) && !api->setuid_root(daemon))
        g_string_append_printf(reason,
                               "; %s is not setuid root, so likwid's access daemon gives no "
                               "access either",
                               daemon);
    if (!info->isIntel && !is_amd_family_known(info))
        g_string_append_printf(reason,
                               "; likwid 5.2.2 knows RAPL on AMD families 0x%x and 0x%x only, "
                               "this CPU is family 0x%x: power_init would find no RAPL with "
                               "access either",
                               AMD_ZEN_FAMILY, AMD_ZEN3_FAMILY, info->family);
    g_string_append_c(reason, ')');
    return g_string_free(reason, FALSE);
}

static const struct domain_kind *find_kind(gboolean is_intel, const char *likwid_name)
{
    const struct domain_kind *kinds = is_intel ? intel_domains : amd_domains;
    size_t n = is_intel ? G_N_ELEMENTS(intel_domains) : G_N_ELEMENTS(amd_domains);
    for (size_t i = 0; likwid_name != NULL && i < n; i++)
        if (strcmp(kinds[i].likwid_name, likwid_name) == 0)
            return &kinds[i];
    return NULL;
}

static struct likwid_zone *zone_new(const struct domain_kind *kind, const PowerDomain *domain,
                                    int cpu, guint socket, double max_power_w)
{
    struct likwid_zone *zone = g_new0(struct likwid_zone, 1);
    zone->cpu = cpu;
    zone->reg = kind->reg;
    zone->domain = kind->likwid_name;
    zone->unit_j = domain->energyUnit;
    zone->full_turn_ns = COUNTER_TURN * zone->unit_j / max_power_w * ENERGY_NS_PER_S;
    zone->metric = kind->part == NULL ? g_strdup("energy.psys_j")
                                      : g_strdup_printf("energy.pkg%u%s_j", socket, kind->part);
    return zone;
}

/* One zone per supported domain and socket (PLATFORM once). A domain
 * likwid does not support, or one vigil has no name for, is left out and
 * said in the note. A supported one that cannot be read fails the source,
 * as a powercap zone does: a total missing its DRAM would under-report
 * without anyone noticing. */
static gboolean add_zones(struct likwid *l, CpuInfo_t info, PowerInfo_t power, double max_power_w,
                          GError **error)
{
    GString *left_out = g_string_new(NULL);
    for (int d = 0; d < NUM_POWER_DOMAINS; d++) {
        const PowerDomain *domain = &power->domains[d];
        const char *name = l->api->power_names[d] != NULL ? l->api->power_names[d] : "?";
        const struct domain_kind *kind = find_kind(info->isIntel, name);
        const char *why = NULL;
        if (!(domain->supportFlags & POWER_DOMAIN_SUPPORT_STATUS))
            why = "not supported";
        else if (!(domain->energyUnit > 0))
            why = "no energy unit";
        else if (kind == NULL)
            why = "no metric for it";
        if (why != NULL) {
            g_string_append_printf(left_out, "%s%s %s", left_out->len ? ", " : "", name, why);
            continue;
        }
        for (guint s = 0; s < l->socket_cpus->len && (s == 0 || kind->part != NULL); s++) {
            int cpu = g_array_index(l->socket_cpus, int, s);
            struct likwid_zone *zone = zone_new(kind, domain, cpu, s, max_power_w);
            g_ptr_array_add(l->zones, zone);
            uint32_t value;
            int result = l->api->power_read(cpu, zone->reg, &value);
            if (result != 0) {
                g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                            "cannot read MSR 0x%x (%s) on CPU %d: power_read returned %d",
                            zone->reg, name, cpu, result);
                g_string_free(left_out, TRUE);
                return FALSE;
            }
        }
    }
    if (left_out->len > 0)
        l->note = g_strdup_printf("likwid domains left out: %s", left_out->str);
    g_string_free(left_out, TRUE);
    if (l->zones->len == 0) {
        g_set_error_literal(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                            "power_init found RAPL but no domain vigil can read");
        return FALSE;
    }
    return TRUE;
}

static gboolean register_zones(struct likwid *l, vigil_metric_catalog *catalog, GError **error)
{
    for (guint i = 0; i < l->zones->len; i++) {
        struct likwid_zone *zone = g_ptr_array_index(l->zones, i);
        zone->metric_id =
            vigil_metric_register(catalog, zone->metric, "J", VIGIL_METRIC_COUNTER,
                                  energy_source_likwid.origin, VIGIL_METRIC_MEASURED, error);
        if (zone->metric_id == 0)
            return FALSE;
    }
    return TRUE;
}

/* The other sockets' CPUs: power_init added the first one's. */
static gboolean add_socket_threads(struct likwid *l, uint32_t unit_reg, GError **error)
{
    for (guint s = 1; s < l->socket_cpus->len; s++) {
        int cpu = g_array_index(l->socket_cpus, int, s);
        int result = l->api->HPMaddThread(cpu);
        if (result != 0) {
            g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                        "cannot read MSR 0x%x on CPU %d: no access (HPMaddThread returned %d)",
                        unit_reg, cpu, result);
            return FALSE;
        }
    }
    return TRUE;
}

static void *likwid_start(const struct energy_settings *settings, vigil_metric_catalog *catalog,
                          GError **error)
{
    const struct likwid_api *api = settings->likwid;
    if (api == NULL) {
        g_set_error_literal(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                            "vigil was built without likwid");
        return NULL;
    }
    if (settings->root != NULL && strcmp(settings->root, "/") != 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "root is %s, and likwid reads this machine's registers, not a fixture tree",
                    settings->root);
        return NULL;
    }
    struct likwid *l = g_new0(struct likwid, 1);
    l->api = api;
    l->zones = g_ptr_array_new_with_free_func(zone_free);
    if (api->topology_init() != 0)
        return fail(l, error, "topology_init failed");
    l->topology_up = TRUE;
    CpuInfo_t info = api->get_cpuInfo();
    l->socket_cpus = socket_cpus(api->get_cpuTopology());
    if (info == NULL || l->socket_cpus->len == 0)
        return fail(l, error, "likwid's topology has no hardware thread");
    api->init_configuration();
    l->configuration_up = TRUE;
    Configuration_t config = api->get_configuration();
    if (config != NULL && config->daemonMode == ACCESSMODE_PERF)
        return fail(l, error,
                    "likwid is configured for perf_event access, where power_init returns 0: "
                    "no RAPL through likwid");
    /* Not the access daemon: see the header. */
    api->HPMmode(ACCESSMODE_DIRECT);
    int cpu = g_array_index(l->socket_cpus, int, 0);
    int result = api->power_init(cpu);
    l->power_up = TRUE;
    if (result < 0) {
        char *reason = no_access_reason(l, info, config, cpu, result);
        fail(l, error, "%s", reason);
        g_free(reason);
        return NULL;
    }
    PowerInfo_t power = api->get_powerInfo();
    if (result == 0 || power == NULL || !power->hasRAPL)
        return fail(l, error,
                    "power_init found no RAPL on CPU family 0x%x model 0x%x: likwid returns 0 "
                    "for CPU models newer than its release",
                    info->family, info->model);
    uint32_t unit_reg = info->isIntel ? LIKWID_MSR_RAPL_POWER_UNIT : LIKWID_MSR_AMD_RAPL_POWER_UNIT;
    if (!add_socket_threads(l, unit_reg, error) ||
        !add_zones(l, info, power, settings->max_power_w, error) ||
        !register_zones(l, catalog, error)) {
        likwid_stop(l);
        return NULL;
    }
    return l;
}

/* A 32-bit counter: the difference modulo 2^32 is right across one wrap. */
static gboolean read_zone(void *state, void *zone_ptr, uint64_t now_ns,
                          const struct vigil_sample_sink *sink, GError **error)
{
    const struct likwid *l = state;
    struct likwid_zone *zone = zone_ptr;
    uint32_t value;
    int result = l->api->power_read(zone->cpu, zone->reg, &value);
    if (result != 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                    "likwid: power_read of MSR 0x%x (%s) on CPU %d returned %d", zone->reg,
                    zone->domain, zone->cpu, result);
        return FALSE;
    }
    uint32_t flags = 0;
    if (zone->primed) {
        uint32_t delta = value - zone->prev;
        zone->total_j += (double)delta * zone->unit_j;
        guint64 gap_ns = now_ns > zone->prev_ns ? now_ns - zone->prev_ns : 0;
        if ((double)gap_ns > zone->full_turn_ns)
            flags |= VIGIL_SAMPLE_UNCERTAIN;
    }
    zone->primed = TRUE;
    zone->prev = value;
    zone->prev_ns = now_ns;
    vigil_sample_emit(sink, zone->metric_id, zone->total_j, flags);
    return TRUE;
}

/* Every zone is read even when one fails; the error names the first. A
 * zone keeps its previous reading, so one that failed counts its energy at
 * its next good read (unless a whole turn went by meanwhile). */
static gboolean likwid_read(void *state, uint64_t now_ns, const struct vigil_sample_sink *sink,
                            GError **error)
{
    const struct likwid *l = state;
    return energy_read_zones(state, l->zones, read_zone, now_ns, sink, error);
}

static const char *likwid_note(void *state)
{
    return ((const struct likwid *)state)->note;
}

const struct energy_source energy_source_likwid = ENERGY_SOURCE(
    "likwid", .start = likwid_start, .read = likwid_read, .stop = likwid_stop, .note = likwid_note);
