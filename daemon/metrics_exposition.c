/* vigild — a snapshot of the figures as the text Prometheus scrapes:
 * OpenMetrics 1.0.0, or Prometheus's text format 0.0.4 for a scraper that
 * does not ask for OpenMetrics. The two differ in three things only: a
 * counter's TYPE line names its family (OpenMetrics) or its sample
 * (`…_total`), UNIT lines and the closing `# EOF` are OpenMetrics' alone.
 *
 * Names follow Prometheus's conventions: the `vigil_` prefix, base units
 * (joules, watts, seconds, bytes) at the end of the family's name, and
 * `_total` on every counter's sample. Every family's metadata is written
 * even when it has no sample now (no job running, no uplink), so that a
 * dashboard's queries name metrics the endpoint always describes. */
#include <inttypes.h>
#include <stdarg.h>
#include <math.h>
#include <string.h>

#include "metrics.h"

static const char *const cpu_mode_names[VIGILD_CPU_MODES] = {
    [VIGILD_CPU_USER] = "user",       [VIGILD_CPU_NICE] = "nice",
    [VIGILD_CPU_SYSTEM] = "system",   [VIGILD_CPU_IDLE] = "idle",
    [VIGILD_CPU_IOWAIT] = "iowait",   [VIGILD_CPU_IRQ] = "irq",
    [VIGILD_CPU_SOFTIRQ] = "softirq", [VIGILD_CPU_STEAL] = "steal",
};

const char *vigild_metrics_cpu_mode_name(enum vigild_metrics_cpu_mode mode)
{
    return mode < VIGILD_CPU_MODES ? cpu_mode_names[mode] : NULL;
}

void vigild_metrics_snapshot_init(struct vigild_metrics_snapshot *s)
{
    memset(s, 0, sizeof *s);
    s->energy_j = NAN;
    s->power_w = NAN;
    for (int i = 0; i < VIGILD_CPU_MODES; i++)
        s->cpu_s[i] = NAN;
    s->memory_total_bytes = s->memory_available_bytes = s->memory_used_bytes = NAN;
    s->tick_s = NAN;
    s->cpu_self_s = NAN;
    s->disks = g_array_new(FALSE, TRUE, sizeof(struct vigild_metrics_device));
    s->networks = g_array_new(FALSE, TRUE, sizeof(struct vigild_metrics_device));
    s->jobs = g_array_new(FALSE, TRUE, sizeof(struct vigild_metrics_job));
}

static void free_devices(GArray *devices)
{
    for (guint i = 0; devices != NULL && i < devices->len; i++)
        g_free(g_array_index(devices, struct vigild_metrics_device, i).name);
    if (devices != NULL)
        g_array_free(devices, TRUE);
}

void vigild_metrics_snapshot_clear(struct vigild_metrics_snapshot *s)
{
    free_devices(s->disks);
    free_devices(s->networks);
    for (guint i = 0; s->jobs != NULL && i < s->jobs->len; i++)
        g_free(g_array_index(s->jobs, struct vigild_metrics_job, i).job);
    if (s->jobs != NULL)
        g_array_free(s->jobs, TRUE);
    s->disks = s->networks = s->jobs = NULL;
}

const char *vigild_metrics_content_type(enum vigild_metrics_format format)
{
    return format == VIGILD_METRICS_OPENMETRICS
               ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
               : "text/plain; version=0.0.4; charset=utf-8";
}

enum vigild_metrics_format vigild_metrics_format_for_accept(const char *accept)
{
    /* Prometheus asks for both, OpenMetrics preferred; a scraper that
     * names it at all reads it. */
    return accept != NULL && strstr(accept, "application/openmetrics-text") != NULL
               ? VIGILD_METRICS_OPENMETRICS
               : VIGILD_METRICS_PROMETHEUS;
}

void vigild_metrics_append_label_value(GString *out, const char *value)
{
    /* A label value is UTF-8: a job id from a process's environment may
     * not be. */
    if (value == NULL)
        value = "";
    char *made_valid = g_utf8_validate(value, -1, NULL) ? NULL : g_utf8_make_valid(value, -1);
    for (const char *c = made_valid != NULL ? made_valid : value; *c != '\0'; c++) {
        if (*c == '\\')
            g_string_append(out, "\\\\");
        else if (*c == '"')
            g_string_append(out, "\\\"");
        else if (*c == '\n')
            g_string_append(out, "\\n");
        else
            g_string_append_c(out, *c);
    }
    g_free(made_valid);
}

/* HELP text: backslash and newline escaped, as both formats want. */
static void append_help_text(GString *out, const char *text)
{
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '\\')
            g_string_append(out, "\\\\");
        else if (*c == '\n')
            g_string_append(out, "\\n");
        else
            g_string_append_c(out, *c);
    }
}

enum family_type { FAMILY_COUNTER, FAMILY_GAUGE };

struct family {
    const char *name; /* without _total; ends in its unit when it has one */
    enum family_type type;
    const char *unit; /* NULL: none */
    const char *help;
};

struct writer {
    GString *out;
    enum vigild_metrics_format format;
    const struct family *family;
};

static void begin_family(struct writer *w, const struct family *f)
{
    w->family = f;
    gboolean om = w->format == VIGILD_METRICS_OPENMETRICS;
    /* 0.0.4 names a counter by its sample. */
    const char *suffix = !om && f->type == FAMILY_COUNTER ? "_total" : "";
    const char *type = f->type == FAMILY_COUNTER ? "counter" : "gauge";
    g_string_append_printf(w->out, "# TYPE %s%s %s\n", f->name, suffix, type);
    if (om && f->unit != NULL)
        g_string_append_printf(w->out, "# UNIT %s %s\n", f->name, f->unit);
    g_string_append_printf(w->out, "# HELP %s%s ", f->name, suffix);
    append_help_text(w->out, f->help);
    g_string_append_c(w->out, '\n');
}

static void append_number(GString *out, double value)
{
    if (isnan(value)) {
        g_string_append(out, "NaN");
    } else if (isinf(value)) {
        g_string_append(out, value > 0 ? "+Inf" : "-Inf");
    } else if (value == floor(value) && fabs(value) < 9007199254740992.0) {
        g_string_append_printf(out, "%" PRId64, (int64_t)value);
    } else {
        /* The shortest text that reads back as the same double. */
        char text[G_ASCII_DTOSTR_BUF_SIZE];
        for (const char *const *f = (const char *const[]){"%.15g", "%.16g", "%.17g", NULL};
             *f != NULL; f++) {
            g_ascii_formatd(text, sizeof text, *f, value);
            if (g_ascii_strtod(text, NULL) == value)
                break;
        }
        g_string_append(out, text);
    }
}

/* A sample of the current family: `labels` are name, value pairs ending in
 * NULL. NaN is a figure not known: no sample. */
static void sample(struct writer *w, double value, ...) G_GNUC_NULL_TERMINATED;
static void sample(struct writer *w, double value, ...)
{
    if (isnan(value))
        return;
    const struct family *f = w->family;
    g_string_append(w->out, f->name);
    if (f->type == FAMILY_COUNTER)
        g_string_append(w->out, "_total");
    va_list labels;
    va_start(labels, value);
    const char *name = va_arg(labels, const char *);
    if (name != NULL) {
        g_string_append_c(w->out, '{');
        for (gboolean first = TRUE; name != NULL; name = va_arg(labels, const char *)) {
            const char *label_value = va_arg(labels, const char *);
            g_string_append_printf(w->out, "%s%s=\"", first ? "" : ",", name);
            vigild_metrics_append_label_value(w->out, label_value);
            g_string_append_c(w->out, '"');
            first = FALSE;
        }
        g_string_append_c(w->out, '}');
    }
    va_end(labels);
    g_string_append_c(w->out, ' ');
    append_number(w->out, value);
    g_string_append_c(w->out, '\n');
}

/* A family of one sample, without labels. */
static void unlabelled(struct writer *w, const struct family *f, double value)
{
    begin_family(w, f);
    sample(w, value, NULL);
}

static const struct family node_energy = {
    "vigil_node_energy_joules", FAMILY_COUNTER, "joules",
    "The node's energy since vigild started, one running sum across its energy sources "
    "(source: the one in use; estimated: from CPU utilisation, not measured)"};
static const struct family node_power = {
    "vigil_node_power_watts", FAMILY_GAUGE, "watts",
    "The node's mean power over the last roll-up window (node energy delta / window)"};
static const struct family node_cpu = {"vigil_node_cpu_seconds", FAMILY_COUNTER, "seconds",
                                       "CPU time of all the node's CPUs, by mode (/proc/stat)"};
static const struct family memory_total = {"vigil_node_memory_total_bytes", FAMILY_GAUGE, "bytes",
                                           "The node's memory (MemTotal)"};
static const struct family memory_available = {
    "vigil_node_memory_available_bytes", FAMILY_GAUGE, "bytes",
    "Memory available to new programs without swapping (MemAvailable)"};
static const struct family memory_used = {"vigil_node_memory_used_bytes", FAMILY_GAUGE, "bytes",
                                          "Memory in use: total less free, buffers and cache"};
static const struct family disk_read = {"vigil_node_disk_read_bytes", FAMILY_COUNTER, "bytes",
                                        "Bytes read from a disk (/proc/diskstats)"};
static const struct family disk_written = {"vigil_node_disk_written_bytes", FAMILY_COUNTER, "bytes",
                                           "Bytes written to a disk (/proc/diskstats)"};
static const struct family net_received = {"vigil_node_network_received_bytes", FAMILY_COUNTER,
                                           "bytes",
                                           "Bytes received by a network interface (/proc/net/dev)"};
static const struct family net_sent = {"vigil_node_network_transmitted_bytes", FAMILY_COUNTER,
                                       "bytes",
                                       "Bytes sent by a network interface (/proc/net/dev)"};
static const struct family job_energy = {
    "vigil_job_energy_joules", FAMILY_COUNTER, "joules",
    "A running job's share of the node's energy (its processes here, ended ones included); "
    "job_id=\"_other\": the jobs past [metrics] max_jobs"};
static const struct family job_read = {
    "vigil_job_read_bytes", FAMILY_COUNTER, "bytes",
    "Bytes a running job's processes here read (files, pipes, sockets: rchar)"};
static const struct family job_written = {
    "vigil_job_written_bytes", FAMILY_COUNTER, "bytes",
    "Bytes a running job's processes here wrote (files, pipes, sockets: wchar)"};
static const struct family job_processes = {"vigil_job_processes", FAMILY_GAUGE, NULL,
                                            "A running job's registered processes here"};
static const struct family jobs_running = {"vigil_jobs_running", FAMILY_GAUGE, NULL,
                                           "Jobs with registered processes running here"};
static const struct family jobs_folded = {
    "vigil_jobs_folded", FAMILY_GAUGE, NULL,
    "Running jobs without series of their own ([metrics] max_jobs), counted in job_id=\"_other\""};
/* A gauge, not OpenMetrics' info type: promtool's linter and Prometheus's
 * text format know gauges only. */
static const struct family daemon_info = {"vigil_daemon_build_info", FAMILY_GAUGE, NULL,
                                          "vigild's version, in its label; always 1"};
static const struct family ticks = {"vigil_daemon_ticks", FAMILY_COUNTER, NULL,
                                    "Ticks run (providers read, rings drained)"};
static const struct family ticks_late = {
    "vigil_daemon_ticks_late", FAMILY_COUNTER, NULL,
    "Tick deadlines that passed while vigild could not run: skipped, not run late"};
static const struct family tick_time = {"vigil_daemon_tick_seconds", FAMILY_COUNTER, "seconds",
                                        "Time spent inside ticks (wall clock)"};
static const struct family cpu_self = {"vigil_daemon_cpu_seconds", FAMILY_COUNTER, "seconds",
                                       "vigild's own CPU time, all its threads"};
static const struct family processes = {"vigil_daemon_processes", FAMILY_GAUGE, NULL,
                                        "Registered processes running"};
static const struct family ring_dropped = {
    "vigil_daemon_ring_records_dropped", FAMILY_COUNTER, NULL,
    "Records processes could not put in their rings (full): activities vigild never saw"};
static const struct family spool_bytes = {
    "vigil_daemon_spool_bytes", FAMILY_GAUGE, "bytes",
    "Disk the uplink's spool of unacknowledged batches uses (no sample without an uplink)"};
static const struct family unacked = {
    "vigil_daemon_batches_unacknowledged", FAMILY_GAUGE, NULL,
    "Batches vigil-txd has not acknowledged yet, in memory or spooled (no sample without an "
    "uplink)"};

static void devices(struct writer *w, const struct family *in, const struct family *out,
                    const GArray *list)
{
    begin_family(w, in);
    for (guint i = 0; i < list->len; i++) {
        const struct vigild_metrics_device *d =
            &g_array_index(list, struct vigild_metrics_device, i);
        sample(w, d->in_bytes, "device", d->name, NULL);
    }
    begin_family(w, out);
    for (guint i = 0; i < list->len; i++) {
        const struct vigild_metrics_device *d =
            &g_array_index(list, struct vigild_metrics_device, i);
        sample(w, d->out_bytes, "device", d->name, NULL);
    }
}

static void jobs(struct writer *w, const struct vigild_metrics_snapshot *s)
{
    static const struct family *const families[] = {&job_energy, &job_read, &job_written,
                                                    &job_processes};
    for (size_t f = 0; f < G_N_ELEMENTS(families); f++) {
        begin_family(w, families[f]);
        for (guint i = 0; i < s->jobs->len; i++) {
            const struct vigild_metrics_job *j =
                &g_array_index(s->jobs, struct vigild_metrics_job, i);
            double value = f == 0   ? j->energy_j
                           : f == 1 ? j->read_bytes
                           : f == 2 ? j->written_bytes
                                    : (double)j->processes;
            sample(w, value, "job_id", j->job, NULL);
        }
    }
    unlabelled(w, &jobs_running, s->jobs_running);
    unlabelled(w, &jobs_folded, s->jobs_folded);
}

void vigild_metrics_render(const struct vigild_metrics_snapshot *s,
                           enum vigild_metrics_format format, GString *out)
{
    struct writer w = {.out = out, .format = format};
    const char *estimated = s->energy_estimated ? "true" : "false";
    begin_family(&w, &node_energy);
    if (s->energy_source != NULL)
        sample(&w, s->energy_j, "source", s->energy_source, "estimated", estimated, NULL);
    begin_family(&w, &node_power);
    if (s->energy_source != NULL)
        sample(&w, s->power_w, "source", s->energy_source, "estimated", estimated, NULL);
    begin_family(&w, &node_cpu);
    for (int m = 0; m < VIGILD_CPU_MODES; m++)
        sample(&w, s->cpu_s[m], "mode", cpu_mode_names[m], NULL);
    unlabelled(&w, &memory_total, s->memory_total_bytes);
    unlabelled(&w, &memory_available, s->memory_available_bytes);
    unlabelled(&w, &memory_used, s->memory_used_bytes);
    devices(&w, &disk_read, &disk_written, s->disks);
    devices(&w, &net_received, &net_sent, s->networks);
    jobs(&w, s);
    begin_family(&w, &daemon_info);
    sample(&w, 1, "version", s->version != NULL ? s->version : "", NULL);
    unlabelled(&w, &ticks, (double)s->ticks);
    unlabelled(&w, &ticks_late, (double)s->ticks_missed);
    unlabelled(&w, &tick_time, s->tick_s);
    unlabelled(&w, &cpu_self, s->cpu_self_s);
    unlabelled(&w, &processes, (double)s->processes);
    unlabelled(&w, &ring_dropped, (double)s->ring_records_dropped);
    unlabelled(&w, &spool_bytes, s->uplink ? (double)s->spool_bytes : NAN);
    unlabelled(&w, &unacked, s->uplink ? (double)s->batches_unacked : NAN);
    if (format == VIGILD_METRICS_OPENMETRICS)
        g_string_append(out, "# EOF\n");
}
