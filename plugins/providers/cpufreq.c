/* vigil — the cpufreq provider: the CPUs' clock frequency every tick, and
 * the node's topology, for the energy model and its advice (issue 16).
 *
 * cpu.frequency_hz    GAUGE, the mean over the online CPUs of
 *                     sys/devices/system/cpu/cpuN/cpufreq/scaling_cur_freq
 *                     (kHz) when every online CPU has one, else of the
 *                     "cpu MHz" lines of proc/cpuinfo (VMs without a
 *                     cpufreq driver, like this project's build machine).
 * cpu.frequency_min_hz, cpu.frequency_max_hz
 *                     GAUGEs from cpu0's cpuinfo_min_freq/cpuinfo_max_freq
 *                     where the cpufreq driver gives them; otherwise left
 *                     out, and the provider's note says why.
 * node.sockets, node.cores, node.hw_threads, node.numa_domains
 *                     GAUGEs from sysfs: the online CPUs (cpu/online), their
 *                     topology/physical_package_id and core_id, and the
 *                     NUMA nodes (node/online; 1 where the kernel has no
 *                     NUMA). Read at start: a CPU taken offline shows at the
 *                     next start (a reload of the provider's section).
 * The facts are emitted every tick, so that any window of samples has them.
 * likwid's topology would give the same counts from the same sysfs (and
 * cpuid); sysfs is read directly so that the provider needs no likwid and
 * runs on fixture trees. Every file read each tick is kept open and pread. */
#include <string.h>

#include "vigil/plugin.h"
#include "vigil/provider.h"

#define SOURCE      "cpufreq"
#define CPU_DIR     "sys/devices/system/cpu"
#define NODE_ONLINE "sys/devices/system/node/online"
#define HZ_PER_KHZ  1000.0
#define HZ_PER_MHZ  1e6

/* A CPU list ("0-3,8"): at most this many CPUs, a sanity bound. */
#define MAX_CPUS 65536u

enum fact { SOCKETS, CORES, HW_THREADS, NUMA_DOMAINS, MIN_HZ, MAX_HZ, N_FACTS };

static const char *const fact_names[N_FACTS] = {
    "node.sockets",      "node.cores",           "node.hw_threads",
    "node.numa_domains", "cpu.frequency_min_hz", "cpu.frequency_max_hz",
};
static const char *const fact_units[N_FACTS] = {"count", "count", "count", "count", "Hz", "Hz"};

struct cpufreq {
    char *root;
    GArray *cpus;      /* guint: the online CPUs */
    GArray *cur_files; /* struct vigil_provider_file: scaling_cur_freq per CPU, or empty */
    struct vigil_provider_file cpuinfo; /* when cur_files is empty */
    gboolean from_cpuinfo;
    gboolean constant; /* cpuinfo's "cpu MHz" is the kernel's fixed cpu_khz: read once */
    double constant_hz;
    double facts[N_FACTS];
    gboolean has_fact[N_FACTS];
    uint32_t fact_ids[N_FACTS];
    uint32_t frequency_id;
    char *note;
};

/* Reading once --------------------------------------------------------------------------------- */

static char *read_once(const char *root, const char *relative, GError **error)
{
    struct vigil_provider_file file;
    vigil_provider_file_init(&file, root, relative, 256, 1 << 20);
    char *text = NULL;
    if (vigil_provider_file_open(&file, error))
        text = g_strstrip(g_strdup(file.buffer));
    vigil_provider_file_clear(&file);
    return text;
}

/* read_once, and `parse` of its text into `out`; else an error naming the
 * file and what it should hold ("does not hold a whole number"). */
static gboolean read_parsed_once(const char *root, const char *relative,
                                 gboolean (*parse)(const char *text, void *out), void *out,
                                 const char *expected, GError **error)
{
    char *text = read_once(root, relative, error);
    if (text == NULL)
        return FALSE;
    gboolean ok = parse(text, out);
    if (!ok) {
        char *path = vigil_provider_path(root, relative);
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "%s %s: \"%.40s\"", path, expected, text);
        g_free(path);
    }
    g_free(text);
    return ok;
}

static gboolean parse_u64(const char *text, void *value)
{
    return vigil_provider_parse_u64(text, value);
}

static gboolean read_u64_once(const char *root, const char *relative, guint64 *value,
                              GError **error)
{
    return read_parsed_once(root, relative, parse_u64, value, "does not hold a whole number",
                            error);
}

/* "0-3,8,10-11" → the numbers it names, in order. */
static gboolean parse_cpu_list(const char *text, void *list)
{
    GArray *out = list;
    const char *p = text;
    while (*p != '\0') {
        guint64 first, last;
        if (!vigil_provider_scan_u64(&p, &first))
            return FALSE;
        last = first;
        if (*p == '-') {
            p++;
            if (!vigil_provider_scan_u64(&p, &last) || last < first)
                return FALSE;
        }
        if (last >= MAX_CPUS)
            return FALSE;
        for (guint64 n = first; n <= last; n++) {
            guint value = (guint)n;
            g_array_append_val(out, value);
        }
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return FALSE;
    }
    return out->len > 0;
}

static gboolean read_list_once(const char *root, const char *relative, GArray *out, GError **error)
{
    return read_parsed_once(root, relative, parse_cpu_list, out,
                            "is not a list of numbers like \"0-3,8\"", error);
}

/* Topology ------------------------------------------------------------------------------------- */

static gboolean count_cores(struct cpufreq *c, GError **error)
{
    GHashTable *packages = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTable *cores = g_hash_table_new(g_int64_hash, g_int64_equal);
    GArray *core_keys = g_array_sized_new(FALSE, FALSE, sizeof(gint64), c->cpus->len);
    gboolean ok = TRUE;
    for (guint i = 0; i < c->cpus->len && ok; i++) {
        guint cpu = g_array_index(c->cpus, guint, i);
        char *package_file = g_strdup_printf(CPU_DIR "/cpu%u/topology/physical_package_id", cpu);
        char *core_file = g_strdup_printf(CPU_DIR "/cpu%u/topology/core_id", cpu);
        guint64 package, core;
        ok = read_u64_once(c->root, package_file, &package, error) &&
             read_u64_once(c->root, core_file, &core, error);
        if (ok) {
            g_hash_table_add(packages, GSIZE_TO_POINTER(package + 1));
            gint64 key = (gint64)((package << 32) | (core & 0xffffffffu));
            g_array_append_val(core_keys, key);
        }
        g_free(core_file);
        g_free(package_file);
    }
    for (guint i = 0; i < core_keys->len; i++)
        g_hash_table_add(cores, &g_array_index(core_keys, gint64, i));
    c->facts[SOCKETS] = g_hash_table_size(packages);
    c->facts[CORES] = g_hash_table_size(cores);
    c->facts[HW_THREADS] = c->cpus->len;
    c->has_fact[SOCKETS] = c->has_fact[CORES] = c->has_fact[HW_THREADS] = ok;
    g_hash_table_destroy(cores);
    g_array_unref(core_keys);
    g_hash_table_destroy(packages);
    return ok;
}

/* A kernel without NUMA has no node directory: one domain. */
static void count_numa_domains(struct cpufreq *c, GString *note)
{
    GArray *nodes = g_array_new(FALSE, FALSE, sizeof(guint));
    GError *error = NULL;
    if (read_list_once(c->root, NODE_ONLINE, nodes, &error)) {
        c->facts[NUMA_DOMAINS] = nodes->len;
    } else {
        c->facts[NUMA_DOMAINS] = 1;
        g_string_append_printf(note, "; node.numa_domains is 1: %s", error->message);
        g_error_free(error);
    }
    c->has_fact[NUMA_DOMAINS] = TRUE;
    g_array_unref(nodes);
}

/* Frequencies ---------------------------------------------------------------------------------- */

static void read_limits(struct cpufreq *c, GString *note)
{
    guint cpu = g_array_index(c->cpus, guint, 0);
    static const char *const files[] = {"cpuinfo_min_freq", "cpuinfo_max_freq"};
    for (guint i = 0; i < G_N_ELEMENTS(files); i++) {
        char *relative = g_strdup_printf(CPU_DIR "/cpu%u/cpufreq/%s", cpu, files[i]);
        guint64 khz;
        GError *error = NULL;
        if (read_u64_once(c->root, relative, &khz, &error)) {
            c->facts[MIN_HZ + i] = (double)khz * HZ_PER_KHZ;
            c->has_fact[MIN_HZ + i] = TRUE;
        } else {
            g_string_append_printf(note, "; %s left out: %s", fact_names[MIN_HZ + i],
                                   error->message);
            g_error_free(error);
        }
        g_free(relative);
    }
}

/* scaling_cur_freq of every online CPU, or none: a mean over some CPUs from
 * sysfs and others from cpuinfo would mix two clocks. */
static gboolean open_cur_files(struct cpufreq *c)
{
    for (guint i = 0; i < c->cpus->len; i++) {
        guint cpu = g_array_index(c->cpus, guint, i);
        char *relative = g_strdup_printf(CPU_DIR "/cpu%u/cpufreq/scaling_cur_freq", cpu);
        struct vigil_provider_file file;
        vigil_provider_file_init(&file, c->root, relative, 32, 32);
        g_free(relative);
        g_array_append_val(c->cur_files, file);
        if (!vigil_provider_file_open(&g_array_index(c->cur_files, struct vigil_provider_file, i),
                                      NULL))
            return FALSE;
    }
    return TRUE;
}

static void clear_cur_files(struct cpufreq *c)
{
    for (guint i = 0; i < c->cur_files->len; i++)
        vigil_provider_file_clear(&g_array_index(c->cur_files, struct vigil_provider_file, i));
    g_array_set_size(c->cur_files, 0);
}

static gboolean mean_from_sysfs(struct cpufreq *c, double *hz, GError **error)
{
    double sum = 0;
    for (guint i = 0; i < c->cur_files->len; i++) {
        struct vigil_provider_file *file =
            &g_array_index(c->cur_files, struct vigil_provider_file, i);
        guint64 khz;
        if (!vigil_provider_file_read(file, error))
            return FALSE;
        if (!vigil_provider_parse_u64(g_strstrip(file->buffer), &khz)) {
            vigil_provider_line_error(error, file->path, 1, "not a whole number of kHz: \"%.40s\"",
                                      file->buffer);
            return FALSE;
        }
        sum += (double)khz * HZ_PER_KHZ;
    }
    *hz = sum / c->cur_files->len;
    return TRUE;
}

/* The "cpu MHz : 2096.043" lines, one per online CPU. */
static gboolean mean_from_cpuinfo(struct cpufreq *c, double *hz, GError **error)
{
    if (!vigil_provider_file_read(&c->cpuinfo, error))
        return FALSE;
    char *cursor = c->cpuinfo.buffer;
    char *line;
    guint n = 0, line_number = 0;
    double sum = 0;
    while ((line = vigil_provider_next_line(&cursor)) != NULL) {
        line_number++;
        if (!g_str_has_prefix(line, "cpu MHz"))
            continue;
        const char *p = strchr(line, ':');
        double mhz;
        if (p == NULL ||
            (p = vigil_provider_skip_blanks(p + 1), !vigil_provider_scan_double(&p, &mhz)) ||
            *vigil_provider_skip_blanks(p) != '\0') {
            vigil_provider_line_error(error, c->cpuinfo.path, line_number,
                                      "expected \"cpu MHz : NUMBER\": \"%.60s\"", line);
            return FALSE;
        }
        sum += mhz * HZ_PER_MHZ;
        n++;
    }
    if (n == 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                    "%s has no \"cpu MHz\" line", c->cpuinfo.path);
        return FALSE;
    }
    *hz = sum / n;
    return TRUE;
}

static gboolean read_frequency(struct cpufreq *c, double *hz, GError **error)
{
    if (c->constant) {
        *hz = c->constant_hz;
        return TRUE;
    }
    return c->from_cpuinfo ? mean_from_cpuinfo(c, hz, error) : mean_from_sysfs(c, hz, error);
}

/* Without a cpufreq driver, the kernel's "cpu MHz" is measured from the
 * APERF/MPERF counters where the CPU has them ("aperfmperf" among its
 * flags) and is otherwise cpu_khz, fixed at boot (arch/x86 show_cpuinfo:
 * arch_freq_get_on_cpu, else cpufreq_quick_get, else cpu_khz). Then the
 * file, the costliest a tick read (the kernel formats every CPU's flags),
 * says the same thing every time. A flags line is required: a file
 * without one says nothing either way and is read every tick. */
static gboolean frequency_is_fixed(const char *cpuinfo)
{
    const char *flags = strstr(cpuinfo, "\nflags");
    if (flags == NULL)
        return FALSE;
    const char *end = strchr(flags + 1, '\n');
    gsize length = end != NULL ? (gsize)(end - flags) : strlen(flags);
    char *line = g_strndup(flags, length);
    char *padded = g_strconcat(line, " ", NULL);
    gboolean measured = strstr(padded, " aperfmperf ") != NULL;
    g_free(padded);
    g_free(line);
    return !measured;
}

/* The provider --------------------------------------------------------------------------------- */

/* Its keys (the table at the end): unlike the proc/ providers' root, this one
 * is where sys/ is read too. */
struct cpufreq_settings {
    char *root;
};
static const struct vigil_settings_table settings_table;

static void *cpufreq_create(const struct vigil_plugin_context *ctx, GError **error)
{
    struct cpufreq_settings settings;
    if (!vigil_plugin_settings_load(ctx, &settings_table, &settings, error))
        return NULL;
    struct cpufreq *c = g_new0(struct cpufreq, 1);
    c->root = settings.root;
    c->cpus = g_array_new(FALSE, FALSE, sizeof(guint));
    c->cur_files = g_array_new(FALSE, FALSE, sizeof(struct vigil_provider_file));
    vigil_provider_file_init(&c->cpuinfo, c->root, "proc/cpuinfo", 4096, 64u << 20);
    return c;
}

static void cpufreq_destroy(void *instance)
{
    struct cpufreq *c = instance;
    clear_cur_files(c);
    g_array_unref(c->cur_files);
    g_array_unref(c->cpus);
    vigil_provider_file_clear(&c->cpuinfo);
    g_free(c->note);
    g_free(c->root);
    g_free(c);
}

static gboolean open_frequency(struct cpufreq *c, GString *note, GError **error)
{
    if (open_cur_files(c)) {
        g_string_append(note, "frequency from sysfs cpufreq scaling_cur_freq");
        return TRUE;
    }
    clear_cur_files(c);
    c->from_cpuinfo = TRUE;
    double hz;
    if (!vigil_provider_file_open(&c->cpuinfo, error))
        return FALSE;
    gboolean fixed = frequency_is_fixed(c->cpuinfo.buffer);
    if (!mean_from_cpuinfo(c, &hz, error))
        return FALSE;
    g_string_append_printf(note,
                           "frequency from %s \"cpu MHz\": not every online CPU has "
                           "cpufreq/scaling_cur_freq",
                           c->cpuinfo.path);
    if (fixed) {
        c->constant = TRUE;
        c->constant_hz = hz;
        /* Closed: nothing reads it again. */
        vigil_provider_file_clear(&c->cpuinfo);
        g_string_append(note, "; read once: without a cpufreq driver or APERF/MPERF (no "
                              "\"aperfmperf\" flag) the kernel gives its fixed cpu_khz");
    }
    return TRUE;
}

static gboolean register_metrics(struct cpufreq *c, vigil_metric_catalog *catalog, GError **error)
{
    c->frequency_id = vigil_metric_register(catalog, "cpu.frequency_hz", "Hz", VIGIL_METRIC_GAUGE,
                                            SOURCE, VIGIL_METRIC_MEASURED, error);
    if (c->frequency_id == 0)
        return FALSE;
    for (guint i = 0; i < N_FACTS; i++) {
        if (!c->has_fact[i])
            continue;
        c->fact_ids[i] =
            vigil_metric_register(catalog, fact_names[i], fact_units[i], VIGIL_METRIC_GAUGE, SOURCE,
                                  VIGIL_METRIC_MEASURED, error);
        if (c->fact_ids[i] == 0)
            return FALSE;
    }
    return TRUE;
}

static gboolean cpufreq_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct cpufreq *c = instance;
    if (!read_list_once(c->root, CPU_DIR "/online", c->cpus, error) || !count_cores(c, error))
        return FALSE;
    GString *note = g_string_new(NULL);
    gboolean ok = open_frequency(c, note, error);
    if (ok) {
        read_limits(c, note);
        count_numa_domains(c, note);
        ok = register_metrics(c, catalog, error);
    }
    g_free(c->note);
    c->note = g_string_free(note, !ok);
    return ok;
}

static gboolean cpufreq_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                             const struct vigil_sample_sink *sink, GError **error)
{
    (void)catalog;
    (void)now_ns;
    struct cpufreq *c = instance;
    double hz;
    if (!read_frequency(c, &hz, error))
        return FALSE;
    vigil_sample_emit(sink, c->frequency_id, hz, 0);
    for (guint i = 0; i < N_FACTS; i++)
        if (c->has_fact[i])
            vigil_sample_emit(sink, c->fact_ids[i], c->facts[i], 0);
    return TRUE;
}

static const char *cpufreq_note(void *instance)
{
    return ((const struct cpufreq *)instance)->note;
}

static const struct vigil_provider_ops cpufreq_ops = {
    .start = cpufreq_start,
    .read = cpufreq_read,
    .note = cpufreq_note,
};

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct cpufreq_settings, root), .type = VIGIL_CONFIG_STRING,
     .default_value = "/",
     .description = "directory under which sys/ and proc/ are read; / on a real node"},
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct cpufreq_settings, keys, NULL);

VIGIL_PLUGIN(VIGIL_PLUGIN_PROVIDER, .name = "cpufreq",
             .description =
                 "CPU frequency per tick, and the node's sockets, cores, threads and NUMA "
                 "domains",
             .settings = &settings_table, .create = cpufreq_create, .destroy = cpufreq_destroy,
             .ops = &cpufreq_ops);
