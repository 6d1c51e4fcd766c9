/* vigil — the meminfo provider: memory and swap from /proc/meminfo.
 *
 * The kernel gives kB (KiB, in fact); values are reported in bytes. Used
 * memory is total minus available, the memory that could not be given to
 * a new job without swapping: MemFree alone counts the page cache as used. */
#include <string.h>

#include "proc_file_provider.h"

#define SOURCE "meminfo"

/* /proc/meminfo is about 1.5 KiB; a file that fills this is not it. */
#define BUFFER_BYTES (16u * 1024u)

/* Every one is required: MemAvailable came with Linux 3.14, and without it
 * mem.used_bytes would have to be guessed. */
#define FIELD(key, metric)                                                                         \
    {                                                                                              \
        key, sizeof key - 1, metric                                                                \
    }
static const struct {
    const char *key;
    size_t key_len;
    const char *metric;
} fields[] = {
    FIELD("MemTotal", "mem.total_bytes"),         FIELD("MemFree", "mem.free_bytes"),
    FIELD("MemAvailable", "mem.available_bytes"), FIELD("Buffers", "mem.buffers_bytes"),
    FIELD("Cached", "mem.cached_bytes"),          FIELD("SwapTotal", "mem.swap_total_bytes"),
    FIELD("SwapFree", "mem.swap_free_bytes"),
};
#undef FIELD
enum { FIELD_TOTAL = 0, FIELD_AVAILABLE = 2, N_FIELDS = G_N_ELEMENTS(fields) };

struct meminfo {
    struct proc_file_provider base; /* first: PROC_FILE_PROVIDER */
    uint32_t ids[N_FIELDS];
    uint32_t used_id;
    guint64 kib[N_FIELDS];
    gboolean seen[N_FIELDS];
    guint n_seen;
};

static void set_line_error(GError **error, const struct meminfo *m, guint line_no, const char *line,
                           const char *what)
{
    vigil_provider_line_error(error, m->base.file.path, line_no, "%s: \"%.80s\"", what, line);
}

/* "  12345 kB" exactly: a number without the unit would be in another
 * unit (the HugePages_ lines are counts). */
static gboolean parse_kib(const char *p, guint64 *value)
{
    guint64 v = 0;
    p = vigil_provider_skip_blanks(p);
    if (!vigil_provider_scan_u64(&p, &v) || !vigil_provider_is_blank(*p))
        return FALSE;
    p = vigil_provider_skip_blanks(p);
    if (strncmp(p, "kB", 2) != 0 || *vigil_provider_skip_blanks(p + 2) != '\0')
        return FALSE;
    *value = v;
    return TRUE;
}

/* Most of the file's 55 lines are keys we do not report: a key's length
 * and first letter turn nearly all of them away before any comparison,
 * which took a strlen and a strncmp per key and line every tick. */
static int field_index(const char *key, size_t key_len)
{
    for (guint i = 0; i < N_FIELDS; i++)
        if (fields[i].key[0] == key[0] && fields[i].key_len == key_len &&
            memcmp(fields[i].key, key, key_len) == 0)
            return (int)i;
    return -1;
}

static gboolean parse_line(struct meminfo *m, const char *line, guint line_no, GError **error)
{
    const char *colon = strchr(line, ':');
    if (colon == NULL) {
        set_line_error(error, m, line_no, line, "expected \"Key: value\"");
        return FALSE;
    }
    int i = field_index(line, (size_t)(colon - line));
    if (i < 0)
        return TRUE; /* one of the many we do not report */
    if (m->seen[i]) {
        set_line_error(error, m, line_no, line, "this key appears twice");
        return FALSE;
    }
    if (!parse_kib(colon + 1, &m->kib[i])) {
        set_line_error(error, m, line_no, line, "expected a whole number of kB");
        return FALSE;
    }
    m->seen[i] = TRUE;
    m->n_seen++;
    return TRUE;
}

/* The kernel writes our seven keys among the first sixteen of its ~55
 * lines, each once: the parse stops at the last of them (the whole file
 * cost 9,300 instructions a read, its first sixteen lines 3,800). A key
 * repeated before then is still an error; the lines after it, whatever
 * they hold, are not read, as diskstats does not read a loop device's. */
static gboolean parse_file(void *instance, GError **error)
{
    struct meminfo *m = instance;
    memset(m->seen, 0, sizeof m->seen);
    m->n_seen = 0;
    char *cursor = m->base.file.buffer;
    guint line_no = 0;
    for (char *line; m->n_seen < N_FIELDS && (line = vigil_provider_next_line(&cursor)) != NULL;) {
        if (!parse_line(m, line, ++line_no, error))
            return FALSE;
    }
    for (guint i = 0; i < N_FIELDS; i++) {
        if (!m->seen[i]) {
            g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                        "%s has no \"%s\" line", m->base.file.path, fields[i].key);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean register_metrics(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct meminfo *m = instance;
    for (guint i = 0; i < N_FIELDS; i++) {
        m->ids[i] = vigil_metric_register(catalog, fields[i].metric, "bytes", VIGIL_METRIC_GAUGE,
                                          SOURCE, VIGIL_METRIC_MEASURED, error);
        if (m->ids[i] == 0)
            return FALSE;
    }
    m->used_id = vigil_metric_register(catalog, "mem.used_bytes", "bytes", VIGIL_METRIC_GAUGE,
                                       SOURCE, VIGIL_METRIC_MEASURED, error);
    return m->used_id != 0;
}

static double kib_to_bytes(guint64 kib)
{
    return (double)kib * 1024.0;
}

static void emit(void *instance, const struct vigil_sample_sink *sink)
{
    const struct meminfo *m = instance;
    for (guint i = 0; i < N_FIELDS; i++)
        vigil_sample_emit(sink, m->ids[i], kib_to_bytes(m->kib[i]), 0);
    /* The kernel's estimate of available memory is not bounded by the total
     * by construction; a negative "used" would only be noise. */
    guint64 total = m->kib[FIELD_TOTAL], available = m->kib[FIELD_AVAILABLE];
    vigil_sample_emit(sink, m->used_id, kib_to_bytes(total > available ? total - available : 0), 0);
}

/* A kernel without one of our keys is told at start (the shared start
 * parses the file), not every tick. */
PROC_FILE_PROVIDER_PLUGIN(struct meminfo, "meminfo", "memory and swap from /proc/meminfo",
                          "proc/meminfo", BUFFER_BYTES, BUFFER_BYTES, parse_file, register_metrics,
                          emit);
