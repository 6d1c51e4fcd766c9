/* vigil — the process provider: CPU time, resident memory and I/O of each
 * process vigild registered, from ROOT/proc/PID/stat, statm and io.
 *
 * Metrics, all measured, each emitted per process with emit_process:
 *   process.cpu_s               counter  utime + stime of stat, in seconds
 *   process.rss_bytes           gauge    resident pages of statm × page size
 *   process.read_bytes          counter  rchar of io
 *   process.written_bytes       counter  wchar of io
 *   process.disk_read_bytes     counter  read_bytes of io
 *   process.disk_written_bytes  counter  write_bytes of io
 * rchar and wchar count what the process's read and write calls moved,
 * whether from the page cache, a pipe or a socket; read_bytes and
 * write_bytes what it made storage move. The gap between them is what the
 * cache absorbed.
 *
 * track() opens the three files once; every read() reads them again with
 * pread. A descriptor of /proc/PID/... stays bound to the process it was
 * opened for, even when its pid is given to another one, so the files of
 * one process are never another's. The start time (field 22 of stat) is
 * kept too: a change in it, or a stat or statm that can no longer be read
 * (ESRCH once the process has been reaped), means the process has ended.
 * That is logged once with g_info, and nothing more is read or emitted for
 * it until untrack() forgets it.
 *
 * A process whose io cannot be opened (EACCES: vigild is not root and the
 * process is another user's, or a kernel without task I/O accounting), or
 * can no longer be read (it ran a setuid program), is measured without the
 * four io metrics, which g_message says once.
 *
 * read() fails only before start(). A malformed file concerns its process
 * only: that process is left out of the read, whole (no partial samples,
 * as elsewhere), with a g_warning naming the file and what is wrong, not
 * repeated at every tick while the file stays wrong. Failing the read would
 * make the daemon drop the tick of every other process for one bad file. */
#include <string.h>
#include <unistd.h>

#include "proc_file_provider.h"

#define SOURCE "process"

/* /proc/PID/stat is some 300 bytes, of which the comm is at most 64 on
 * recent kernels; statm and io are shorter still. The maxima refuse files
 * that are plainly not these. */
#define STAT_INITIAL_BYTES  1024u
#define STAT_MAX_BYTES      (64u * 1024u)
#define SMALL_INITIAL_BYTES 512u
#define SMALL_MAX_BYTES     (16u * 1024u)

enum metric {
    CPU_S,
    RSS_BYTES,
    /* From io, present only when it could be opened: keep them last. */
    READ_BYTES,
    WRITTEN_BYTES,
    DISK_READ_BYTES,
    DISK_WRITTEN_BYTES,
    N_METRICS,
};
#define FIRST_IO_METRIC READ_BYTES

static const struct {
    const char *name;
    const char *unit;
    enum vigil_metric_kind kind;
} metrics[N_METRICS] = {
    [CPU_S] = {"process.cpu_s", "s", VIGIL_METRIC_COUNTER},
    [RSS_BYTES] = {"process.rss_bytes", "bytes", VIGIL_METRIC_GAUGE},
    [READ_BYTES] = {"process.read_bytes", "bytes", VIGIL_METRIC_COUNTER},
    [WRITTEN_BYTES] = {"process.written_bytes", "bytes", VIGIL_METRIC_COUNTER},
    [DISK_READ_BYTES] = {"process.disk_read_bytes", "bytes", VIGIL_METRIC_COUNTER},
    [DISK_WRITTEN_BYTES] = {"process.disk_written_bytes", "bytes", VIGIL_METRIC_COUNTER},
};

/* The lines of io that are kept, in the order of the metrics they feed. */
static const char *const io_keys[] = {"rchar", "wchar", "read_bytes", "write_bytes"};
G_STATIC_ASSERT(G_N_ELEMENTS(io_keys) == N_METRICS - FIRST_IO_METRIC);

/* The fields of stat used, numbered as in proc(5). */
#define STAT_UTIME     14u
#define STAT_STIME     15u
#define STAT_STARTTIME 22u

/* Resident pages: the second number of statm, of seven. */
#define STATM_RESIDENT 1u
#define STATM_FIELDS   7u

struct tracked {
    guint64 process_id; /* the key of the table: it lives here */
    pid_t pid;
    guint64 start_ticks; /* field 22 of stat when tracked */
    struct vigil_provider_file stat, statm, io;
    gboolean has_io;
    gboolean ended;  /* logged; nothing more is read or emitted */
    gboolean broken; /* the last read failed and was logged */
};

struct process_provider {
    char *root;
    double ticks_per_s;
    double page_bytes;
    uint32_t ids[N_METRICS]; /* 0 until start() */
    GHashTable *tracked;     /* &process_id → struct tracked */
};

static void tracked_free(gpointer data)
{
    struct tracked *t = data;
    vigil_provider_file_clear(&t->stat);
    vigil_provider_file_clear(&t->statm);
    vigil_provider_file_clear(&t->io);
    g_free(t);
}

static void *process_create(const struct vigil_plugin_context *ctx, GError **error)
{
    long hz, page;
    if (!proc_sysconf(_SC_CLK_TCK, "_SC_CLK_TCK", "tick rate", &hz, error) ||
        !proc_sysconf(_SC_PAGESIZE, "_SC_PAGESIZE", "page size", &page, error))
        return NULL;
    char *root = vigil_provider_root(ctx, error);
    if (root == NULL)
        return NULL;
    struct process_provider *pp = g_new0(struct process_provider, 1);
    pp->root = root;
    pp->ticks_per_s = (double)hz;
    pp->page_bytes = (double)page;
    pp->tracked = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, tracked_free);
    return pp;
}

static void process_destroy(void *instance)
{
    struct process_provider *pp = instance;
    g_hash_table_destroy(pp->tracked);
    g_free(pp->root);
    g_free(pp);
}

/* Parsing ------------------------------------------------------------------------------------ */

struct process_values {
    guint64 utime, stime, start_ticks;
    guint64 resident_pages;
    guint64 io[N_METRICS - FIRST_IO_METRIC];
};

static gboolean ends_field(char c)
{
    return c == '\0' || c == '\n' || vigil_provider_is_blank(c);
}

/* One number of stat after the comm. Fields the provider does not use may
 * be negative (tpgid is -1 without a terminal, priority and nice of
 * real-time tasks are below 0); those it uses may not. */
static gboolean next_stat_field(const char **cursor, gboolean may_be_negative, guint64 *value)
{
    const char *p = vigil_provider_skip_blanks(*cursor);
    if (may_be_negative && *p == '-')
        p++;
    if (!vigil_provider_scan_u64(&p, value) || !ends_field(*p))
        return FALSE;
    *cursor = p;
    return TRUE;
}

/* "PID (COMM) STATE F4 … F22 …". COMM is whatever the process named itself,
 * spaces, parentheses and newlines included, but no field after it holds a
 * ')': the last one in the file closes it. */
static gboolean parse_stat(const struct tracked *t, struct process_values *v, GError **error)
{
    const char *text = t->stat.buffer;
    const char *p = text;
    guint64 pid = 0;
    if (!vigil_provider_scan_u64(&p, &pid) || pid != (guint64)t->pid || strncmp(p, " (", 2) != 0) {
        vigil_provider_line_error(error, t->stat.path, 1, "does not start with \"%d (\": \"%.40s\"",
                                  (int)t->pid, text);
        return FALSE;
    }
    const char *comm = p + 2;
    const char *comm_end = strrchr(comm, ')');
    if (comm_end == NULL) {
        vigil_provider_line_error(error, t->stat.path, 1, "the command name has no ')'");
        return FALSE;
    }
    p = comm_end + 1;
    /* The state: one letter. */
    if (!vigil_provider_is_blank(p[0]) || !g_ascii_isalpha(p[1]) ||
        !vigil_provider_is_blank(p[2])) {
        vigil_provider_line_error(error, t->stat.path, 1,
                                  "no one-letter state after the command name: \"%.80s\"", p);
        return FALSE;
    }
    p += 2;
    for (guint field = 4; field <= STAT_STARTTIME; field++) {
        guint64 value = 0;
        gboolean used = field == STAT_UTIME || field == STAT_STIME || field == STAT_STARTTIME;
        if (!next_stat_field(&p, !used, &value)) {
            vigil_provider_line_error(error, t->stat.path, 1,
                                      "field %u is missing or not a%s whole number: \"%.80s\"",
                                      field, used ? " non-negative" : "", comm_end + 1);
            return FALSE;
        }
        if (field == STAT_UTIME)
            v->utime = value;
        else if (field == STAT_STIME)
            v->stime = value;
        else if (field == STAT_STARTTIME)
            v->start_ticks = value;
    }
    return TRUE; /* the fields after starttime are not ours */
}

/* "SIZE RESIDENT SHARED TEXT LIB DATA DT": all numbers, on one line. */
static gboolean parse_statm(const struct tracked *t, struct process_values *v, GError **error)
{
    const char *p = t->statm.buffer;
    guint n = 0;
    guint64 value = 0;
    for (; next_stat_field(&p, FALSE, &value); n++) {
        if (n == STATM_RESIDENT)
            v->resident_pages = value;
    }
    p = vigil_provider_skip_blanks(p);
    if (*p == '\n')
        p++;
    if (n < STATM_FIELDS || *p != '\0') {
        vigil_provider_line_error(error, t->statm.path, 1,
                                  "expected %u whole numbers on one line: \"%.80s\"", STATM_FIELDS,
                                  t->statm.buffer);
        return FALSE;
    }
    return TRUE;
}

/* "KEY: NUMBER" lines; those of io_keys must each be there once, others
 * (syscr, cancelled_write_bytes…) are not ours. */
static gboolean parse_io(const struct tracked *t, struct process_values *v, GError **error)
{
    gboolean seen[G_N_ELEMENTS(io_keys)] = {FALSE};
    char *cursor = t->io.buffer;
    guint line_no = 0;
    for (char *line; (line = vigil_provider_next_line(&cursor)) != NULL;) {
        line_no++;
        char *colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        guint k = 0;
        while (k < G_N_ELEMENTS(io_keys) &&
               (strlen(io_keys[k]) != (size_t)(colon - line) ||
                strncmp(line, io_keys[k], (size_t)(colon - line)) != 0))
            k++;
        if (k == G_N_ELEMENTS(io_keys))
            continue;
        const char *value = vigil_provider_skip_blanks(colon + 1);
        if (seen[k] || !vigil_provider_parse_u64(value, &v->io[k])) {
            vigil_provider_line_error(error, t->io.path, line_no, "%s: \"%.80s\"",
                                      seen[k] ? "this line appears twice"
                                              : "expected one whole number after the colon",
                                      line);
            return FALSE;
        }
        seen[k] = TRUE;
    }
    for (guint k = 0; k < G_N_ELEMENTS(io_keys); k++) {
        if (!seen[k]) {
            g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                        "%s has no \"%s\" line", t->io.path, io_keys[k]);
            return FALSE;
        }
    }
    return TRUE;
}

/* Tracking ----------------------------------------------------------------------------------- */

static void init_file(struct vigil_provider_file *file, const char *root, pid_t pid,
                      const char *name, gsize initial_size, gsize max_size)
{
    char relative[64];
    g_snprintf(relative, sizeof relative, "proc/%d/%s", (int)pid, name);
    vigil_provider_file_init(file, root, relative, initial_size, max_size);
}

static gboolean process_track(void *instance, uint64_t process_id, pid_t pid, GError **error)
{
    struct process_provider *pp = instance;
    if (pid <= 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "process %" G_GUINT64_FORMAT ": %d is not a process id", process_id, (int)pid);
        return FALSE;
    }
    const struct tracked *already = g_hash_table_lookup(pp->tracked, &process_id);
    if (already != NULL) {
        /* Replacing it would hide the daemon's mistake and mix two
         * processes' counters under one id. */
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE,
                    "process %" G_GUINT64_FORMAT " is tracked already (pid %d)", process_id,
                    (int)already->pid);
        return FALSE;
    }

    struct tracked *t = g_new0(struct tracked, 1);
    t->process_id = process_id;
    t->pid = pid;
    init_file(&t->stat, pp->root, pid, "stat", STAT_INITIAL_BYTES, STAT_MAX_BYTES);
    init_file(&t->statm, pp->root, pid, "statm", SMALL_INITIAL_BYTES, SMALL_MAX_BYTES);
    init_file(&t->io, pp->root, pid, "io", SMALL_INITIAL_BYTES, SMALL_MAX_BYTES);

    struct process_values v = {0};
    if (!vigil_provider_file_open(&t->stat, error) || !parse_stat(t, &v, error) ||
        !vigil_provider_file_open(&t->statm, error) || !parse_statm(t, &v, error)) {
        tracked_free(t);
        return FALSE;
    }
    t->start_ticks = v.start_ticks;

    GError *io_error = NULL;
    t->has_io = vigil_provider_file_open(&t->io, &io_error);
    if (!t->has_io) {
        g_message("process %" G_GUINT64_FORMAT " (pid %d) is measured without its I/O: %s",
                  process_id, (int)pid, io_error->message);
        g_error_free(io_error);
        vigil_provider_file_clear(&t->io);
    } else if (!parse_io(t, &v, error)) {
        tracked_free(t);
        return FALSE;
    }

    g_hash_table_insert(pp->tracked, &t->process_id, t);
    return TRUE;
}

static void process_untrack(void *instance, uint64_t process_id)
{
    struct process_provider *pp = instance;
    g_hash_table_remove(pp->tracked, &process_id);
}

/* Reading ------------------------------------------------------------------------------------ */

enum outcome {
    MEASURED,
    ENDED,  /* *error says how it was seen */
    BROKEN, /* *error says what is wrong, for this process only */
};

/* Any failure to read stat is taken for the process's end: the descriptor
 * is bound to the process, so the kernel refuses it only once the process
 * is gone (ESRCH); a fixture file cannot fail this way. */
static enum outcome read_stat(struct tracked *t, struct process_values *v, GError **error)
{
    if (!vigil_provider_file_read(&t->stat, error))
        return ENDED;
    if (!parse_stat(t, v, error))
        return BROKEN;
    if (v->start_ticks != t->start_ticks) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                    "%s gives start time %" G_GUINT64_FORMAT ", not %" G_GUINT64_FORMAT
                    ": the pid is another process's now",
                    t->stat.path, v->start_ticks, t->start_ticks);
        return ENDED;
    }
    return MEASURED;
}

/* stat first, so that a process that has ended is known as such before
 * the others are read. */
static enum outcome read_process(struct tracked *t, struct process_values *v, GError **error)
{
    enum outcome outcome = read_stat(t, v, error);
    if (outcome != MEASURED)
        return outcome;
    /* Like stat, statm can be read by anyone for as long as the process
     * exists: failing now, it has ended between the two reads. */
    if (!vigil_provider_file_read(&t->statm, error))
        return ENDED;
    if (!parse_statm(t, v, error))
        return BROKEN;
    if (!t->has_io)
        return MEASURED;
    GError *io_error = NULL;
    if (!vigil_provider_file_read(&t->io, &io_error)) {
        /* The process may have ended since stat was read, or have become
         * unreadable to us (it ran a setuid program): stat tells which. */
        outcome = read_stat(t, v, error);
        if (outcome == MEASURED) {
            g_message("process %" G_GUINT64_FORMAT " (pid %d) is measured without its I/O "
                      "from now on: %s",
                      t->process_id, (int)t->pid, io_error->message);
            t->has_io = FALSE;
            vigil_provider_file_clear(&t->io);
        }
        g_error_free(io_error);
        return outcome;
    }
    return parse_io(t, v, error) ? MEASURED : BROKEN;
}

static void emit_values(const struct process_provider *pp, const struct tracked *t,
                        const struct process_values *v, const struct vigil_sample_sink *sink)
{
    double values[N_METRICS];
    values[CPU_S] = (double)(v->utime + v->stime) / pp->ticks_per_s;
    values[RSS_BYTES] = (double)v->resident_pages * pp->page_bytes;
    for (guint k = 0; k < G_N_ELEMENTS(io_keys); k++)
        values[FIRST_IO_METRIC + k] = (double)v->io[k];
    guint n = t->has_io ? N_METRICS : FIRST_IO_METRIC;
    for (guint m = 0; m < n; m++)
        vigil_sample_emit_process(sink, t->process_id, pp->ids[m], values[m], 0);
}

static void read_one(const struct process_provider *pp, struct tracked *t,
                     const struct vigil_sample_sink *sink)
{
    struct process_values v = {0};
    GError *error = NULL;
    switch (read_process(t, &v, &error)) {
    case MEASURED:
        t->broken = FALSE;
        emit_values(pp, t, &v, sink);
        return;
    case ENDED:
        g_info("process %" G_GUINT64_FORMAT " (pid %d) has ended (%s): it is no longer measured",
               t->process_id, (int)t->pid, error->message);
        t->ended = TRUE;
        break;
    case BROKEN:
    default:
        if (!t->broken)
            g_warning("process %" G_GUINT64_FORMAT " (pid %d) is not measured while its files "
                      "read wrong: %s",
                      t->process_id, (int)t->pid, error->message);
        t->broken = TRUE;
        break;
    }
    g_error_free(error);
}

static gboolean process_start(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct process_provider *pp = instance;
    for (guint m = 0; m < N_METRICS; m++) {
        pp->ids[m] = vigil_metric_register(catalog, metrics[m].name, metrics[m].unit,
                                           metrics[m].kind, SOURCE, VIGIL_METRIC_MEASURED, error);
        if (pp->ids[m] == 0)
            return FALSE;
    }
    return TRUE;
}

static gboolean process_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                             const struct vigil_sample_sink *sink, GError **error)
{
    (void)catalog;
    (void)now_ns;
    struct process_provider *pp = instance;
    if (pp->ids[0] == 0) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ,
                    "process provider read before a successful start");
        return FALSE;
    }
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, pp->tracked);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct tracked *t = value;
        if (!t->ended)
            read_one(pp, t, sink);
    }
    return TRUE;
}

static const struct vigil_provider_ops process_ops = {
    .start = process_start,
    .read = process_read,
    .track = process_track,
    .untrack = process_untrack,
};

VIGIL_PLUGIN(VIGIL_PLUGIN_PROVIDER, .name = "process",
             .description = "CPU time, resident memory and I/O of each registered process from "
                            "/proc/PID/stat, statm and io",
             .settings = &vigil_provider_root_settings, .create = process_create,
             .destroy = process_destroy, .ops = &process_ops);
