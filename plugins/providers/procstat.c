/* vigil — the procstat provider: CPU time, context switches and process
 * counts from /proc/stat.
 *
 * CPU times come as ticks of USER_HZ; they are reported in seconds so that
 * a consumer needs no knowledge of the node's tick rate. The node's "cpu"
 * line and every "cpuN" line give the same eight times (guest and
 * guest_nice, which follow, are already counted in user and nice). */
#include <string.h>
#include <unistd.h>

#include "proc_file_provider.h"

#define SOURCE "procstat"

/* The fields of a cpu line, in the kernel's order. */
enum cpu_field {
    CPU_USER,
    CPU_NICE,
    CPU_SYSTEM,
    CPU_IDLE,
    CPU_IOWAIT,
    CPU_IRQ,
    CPU_SOFTIRQ,
    CPU_STEAL,
    N_CPU_FIELDS,
};

static const char *const cpu_field_names[N_CPU_FIELDS] = {
    "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
};

/* Kernels before 2.6.11 have no steal field: there is nothing to steal
 * without a hypervisor that reports it, so 0 is its true value there. Any
 * other field missing means the line is broken. */
#define MIN_CPU_FIELDS     CPU_STEAL
#define CPU_FIELDS_PROBLEM "a field is missing or not a whole number (7 or more expected)"

/* A bound on the CPU number, so that a corrupt "cpu4000000000" line cannot
 * make us allocate gigabytes; far above any kernel's NR_CPUS. */
#define MAX_CPU_NUMBER 65535u

/* Enough for a few hundred CPUs; beyond that it doubles until the file
 * fits, at start, and then stays. */
#define INITIAL_BUFFER_BYTES (64u * 1024u)
/* /proc/stat of a 1024-CPU node with thousands of interrupts is some
 * hundreds of KiB: a file larger than this is not /proc/stat. */
#define MAX_BUFFER_BYTES (64u * 1024u * 1024u)

struct cpu_times {
    guint64 ticks[N_CPU_FIELDS];
};

struct cpu_slot {
    uint32_t ids[N_CPU_FIELDS]; /* 0 until the CPU is registered */
    struct cpu_times times;
    gboolean seen; /* in the last parse */
};

struct procstat {
    struct proc_file_provider base; /* first: PROC_FILE_PROVIDER */
    double ticks_per_s;

    uint32_t node_ids[N_CPU_FIELDS];
    struct cpu_times node;
    gboolean node_seen;

    struct cpu_slot *cpus; /* indexed by CPU number */
    guint n_cpu_slots;

    uint32_t ctxt_id, running_id, blocked_id;
    guint64 ctxt, running, blocked;
    gboolean ctxt_seen, running_seen, blocked_seen;
};
PROC_FILE_PROVIDER(struct procstat);

static void set_line_error(GError **error, const struct procstat *ps, guint line_no,
                           const char *line, const char *what)
{
    vigil_provider_line_error(error, ps->base.file.path, line_no, "%s: \"%.80s\"", what, line);
}

/* The next blank-separated field as a whole number that fits in 64 bits;
 * FALSE at the end of the line or on anything else ("12x", "-3", "1e5"). */
static gboolean next_u64(const char **cursor, guint64 *value)
{
    const char *p = vigil_provider_skip_blanks(*cursor);
    guint64 v = 0;
    if (!vigil_provider_scan_u64(&p, &v) || (*p != '\0' && !vigil_provider_is_blank(*p)))
        return FALSE;
    *cursor = p;
    *value = v;
    return TRUE;
}

static gboolean only_blanks_left(const char *p)
{
    return *vigil_provider_skip_blanks(p) == '\0';
}

/* The rest of a cpu line after its name. Fields past steal are checked
 * but not kept. */
static gboolean parse_cpu_times(const char *fields, struct cpu_times *times)
{
    memset(times, 0, sizeof *times);
    const char *p = fields;
    guint n = 0;
    guint64 value;
    while (next_u64(&p, &value)) {
        if (n < N_CPU_FIELDS)
            times->ticks[n] = value;
        n++;
    }
    return n >= MIN_CPU_FIELDS && only_blanks_left(p);
}

/* The part of `line` after its first word when that is `key` (a string
 * literal), or NULL when the line is about something else. Compared in
 * place: strncmp's call and strlen were a fifth of the parse, for the four
 * keys tried on each line. */
#define AFTER_KEY(line, key) after_key(line, key, sizeof key - 1)
static inline const char *after_key(const char *line, const char *key, size_t len)
{
    if (!vigil_provider_has_prefix(line, key, len) ||
        (line[len] != '\0' && !vigil_provider_is_blank(line[len])))
        return NULL;
    return line + len;
}

static struct cpu_slot *cpu_slot(struct procstat *ps, guint cpu)
{
    if (cpu >= ps->n_cpu_slots) {
        guint n = MAX(cpu + 1, ps->n_cpu_slots * 2);
        ps->cpus = g_renew(struct cpu_slot, ps->cpus, n);
        memset(ps->cpus + ps->n_cpu_slots, 0, (n - ps->n_cpu_slots) * sizeof *ps->cpus);
        ps->n_cpu_slots = n;
    }
    return &ps->cpus[cpu];
}

/* A cpu line's times into `times`, the first time its line is seen
 * (`twice` says it is not). */
static gboolean parse_times_once(struct procstat *ps, const char *fields, struct cpu_times *times,
                                 gboolean *seen, const char *twice, guint line_no, const char *line,
                                 GError **error)
{
    if (*seen) {
        set_line_error(error, ps, line_no, line, twice);
        return FALSE;
    }
    if (!parse_cpu_times(fields, times)) {
        set_line_error(error, ps, line_no, line, CPU_FIELDS_PROBLEM);
        return FALSE;
    }
    *seen = TRUE;
    return TRUE;
}

/* A "cpuN ..." line; `rest` points just after "cpu". */
static gboolean parse_cpu_n_line(struct procstat *ps, const char *rest, guint line_no,
                                 const char *line, GError **error)
{
    guint64 cpu = 0;
    const char *p = rest;
    if (!vigil_provider_scan_u64(&p, &cpu) || cpu > MAX_CPU_NUMBER ||
        (*p != '\0' && !vigil_provider_is_blank(*p))) {
        set_line_error(error, ps, line_no, line, "not a CPU number");
        return FALSE;
    }
    struct cpu_slot *slot = cpu_slot(ps, (guint)cpu);
    return parse_times_once(ps, p, &slot->times, &slot->seen, "this CPU appears twice", line_no,
                            line, error);
}

/* A "KEY N" line holding one number. */
static gboolean parse_single(struct procstat *ps, const char *fields, guint64 *value,
                             gboolean *seen, guint line_no, const char *line, GError **error)
{
    if (*seen) {
        set_line_error(error, ps, line_no, line, "this line appears twice");
        return FALSE;
    }
    const char *p = fields;
    if (!next_u64(&p, value) || !only_blanks_left(p)) {
        set_line_error(error, ps, line_no, line, "expected one whole number");
        return FALSE;
    }
    *seen = TRUE;
    return TRUE;
}

static gboolean parse_line(struct procstat *ps, const char *line, guint line_no, GError **error)
{
    const char *fields;
    if ((fields = AFTER_KEY(line, "cpu")) != NULL) {
        return parse_times_once(ps, fields, &ps->node, &ps->node_seen, "this line appears twice",
                                line_no, line, error);
    }
    if (VIGIL_PROVIDER_HAS_PREFIX(line, "cpu") && g_ascii_isdigit(line[3]))
        return parse_cpu_n_line(ps, line + 3, line_no, line, error);
    if ((fields = AFTER_KEY(line, "ctxt")) != NULL)
        return parse_single(ps, fields, &ps->ctxt, &ps->ctxt_seen, line_no, line, error);
    if ((fields = AFTER_KEY(line, "procs_running")) != NULL)
        return parse_single(ps, fields, &ps->running, &ps->running_seen, line_no, line, error);
    if ((fields = AFTER_KEY(line, "procs_blocked")) != NULL)
        return parse_single(ps, fields, &ps->blocked, &ps->blocked_seen, line_no, line, error);
    return TRUE; /* intr, softirq, btime…: not ours */
}

static gboolean require_line(const struct procstat *ps, gboolean seen, const char *key,
                             GError **error)
{
    if (!seen)
        g_set_error(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ, "%s has no \"%s\" line",
                    ps->base.file.path, key);
    return seen;
}

/* Parses the whole buffer before anything is emitted or registered, so
 * that a broken file yields no half-read tick. */
static gboolean parse_file(void *instance, GError **error)
{
    struct procstat *ps = instance;
    ps->node_seen = ps->ctxt_seen = ps->running_seen = ps->blocked_seen = FALSE;
    for (guint i = 0; i < ps->n_cpu_slots; i++)
        ps->cpus[i].seen = FALSE;

    char *cursor = ps->base.file.buffer;
    guint line_no = 0;
    for (char *line; (line = vigil_provider_next_line(&cursor)) != NULL;) {
        if (!parse_line(ps, line, ++line_no, error))
            return FALSE;
    }
    return require_line(ps, ps->node_seen, "cpu", error) &&
           require_line(ps, ps->ctxt_seen, "ctxt", error) &&
           require_line(ps, ps->running_seen, "procs_running", error) &&
           require_line(ps, ps->blocked_seen, "procs_blocked", error);
}

/* `prefix` is "cpu" or "cpuN". */
static gboolean register_cpu_times(vigil_metric_catalog *catalog, const char *prefix,
                                   uint32_t ids[N_CPU_FIELDS], GError **error)
{
    for (guint f = 0; f < N_CPU_FIELDS; f++) {
        char name[VIGIL_METRIC_NAME_MAX + 1];
        g_snprintf(name, sizeof name, "%s.%s_s", prefix, cpu_field_names[f]);
        ids[f] = vigil_metric_register(catalog, name, "s", VIGIL_METRIC_COUNTER, SOURCE,
                                       VIGIL_METRIC_MEASURED, error);
        if (ids[f] == 0)
            return FALSE;
    }
    return TRUE;
}

static gboolean register_count(vigil_metric_catalog *catalog, const char *name,
                               enum vigil_metric_kind kind, uint32_t *id, GError **error)
{
    *id = vigil_metric_register(catalog, name, "count", kind, SOURCE, VIGIL_METRIC_MEASURED, error);
    return *id != 0;
}

/* Registers what is not registered yet: everything at start, a CPU that
 * came online since then at a later read. */
static gboolean register_new_metrics(void *instance, vigil_metric_catalog *catalog, GError **error)
{
    struct procstat *ps = instance;
    if (ps->node_ids[0] == 0) {
        if (!register_cpu_times(catalog, "cpu", ps->node_ids, error) ||
            !register_count(catalog, "cpu.context_switches", VIGIL_METRIC_COUNTER, &ps->ctxt_id,
                            error) ||
            !register_count(catalog, "procs.running", VIGIL_METRIC_GAUGE, &ps->running_id, error) ||
            !register_count(catalog, "procs.blocked", VIGIL_METRIC_GAUGE, &ps->blocked_id, error))
            return FALSE;
    }
    for (guint cpu = 0; cpu < ps->n_cpu_slots; cpu++) {
        struct cpu_slot *slot = &ps->cpus[cpu];
        if (!slot->seen || slot->ids[0] != 0)
            continue;
        char prefix[32];
        g_snprintf(prefix, sizeof prefix, "cpu%u", cpu);
        if (!register_cpu_times(catalog, prefix, slot->ids, error))
            return FALSE;
    }
    return TRUE;
}

static void emit_cpu_times(const struct procstat *ps, const uint32_t ids[N_CPU_FIELDS],
                           const struct cpu_times *times, const struct vigil_sample_sink *sink)
{
    for (guint f = 0; f < N_CPU_FIELDS; f++)
        vigil_sample_emit(sink, ids[f], (double)times->ticks[f] / ps->ticks_per_s, 0);
}

static void emit(void *instance, const struct vigil_sample_sink *sink)
{
    const struct procstat *ps = instance;
    emit_cpu_times(ps, ps->node_ids, &ps->node, sink);
    for (guint cpu = 0; cpu < ps->n_cpu_slots; cpu++) {
        const struct cpu_slot *slot = &ps->cpus[cpu];
        if (slot->seen)
            emit_cpu_times(ps, slot->ids, &slot->times, sink);
    }
    vigil_sample_emit(sink, ps->ctxt_id, (double)ps->ctxt, 0);
    vigil_sample_emit(sink, ps->running_id, (double)ps->running, 0);
    vigil_sample_emit(sink, ps->blocked_id, (double)ps->blocked, 0);
}

/* The shared start's first read sizes the buffer and finds the CPUs to
 * register. */
static const struct proc_file_kind kind = {"proc/stat", INITIAL_BUFFER_BYTES, MAX_BUFFER_BYTES,
                                           parse_file,  register_new_metrics, emit};

static void *procstat_create(const struct vigil_plugin_context *ctx, GError **error)
{
    long hz;
    if (!proc_sysconf(_SC_CLK_TCK, "_SC_CLK_TCK", "tick rate", &hz, error))
        return NULL;
    struct procstat *ps = proc_file_provider_new(ctx, sizeof(struct procstat), &kind, error);
    if (ps != NULL)
        ps->ticks_per_s = (double)hz;
    return ps;
}

static void procstat_destroy(void *instance)
{
    struct procstat *ps = instance;
    g_free(ps->cpus);
    proc_file_provider_destroy(ps);
}

static gboolean procstat_read(void *instance, vigil_metric_catalog *catalog, uint64_t now_ns,
                              const struct vigil_sample_sink *sink, GError **error)
{
    struct procstat *ps = instance;
    if (!vigil_provider_file_read_at(&ps->base.file, now_ns, error) || !parse_file(ps, error) ||
        !register_new_metrics(ps, catalog, error))
        return FALSE;
    emit(ps, sink);
    return TRUE;
}

static const struct vigil_provider_ops procstat_ops = {
    .start = proc_file_provider_start,
    .read = procstat_read,
};

VIGIL_PLUGIN(VIGIL_PLUGIN_PROVIDER, .name = "procstat",
             .description = "CPU time, context switches and process counts from /proc/stat",
             .settings = &vigil_provider_root_settings, .create = procstat_create,
             .destroy = procstat_destroy, .ops = &procstat_ops);
