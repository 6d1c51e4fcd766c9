/* bench/node_batch: a cycle's batch as vigild makes it (node_batch.h). */
#define _GNU_SOURCE
#include "node_batch.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *program_name = "bench";

void bench_set_program_name(const char *name)
{
    program_name = name;
}

void bench_die(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    char *text = g_strdup_vprintf(format, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", program_name, text);
    g_free(text);
    exit(1);
}

int64_t bench_monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

struct bench_batch {
    vigil_wire_writer *batch;
    uint64_t node_id, sequence;
};

void bench_check(gboolean ok, GError *error)
{
    if (!ok)
        bench_die("a batch's item was refused: %s", error->message);
}

bench_batch *bench_batch_new(uint64_t node_id, uint64_t sequence,
                             const struct vigil_wire_node *node)
{
    bench_batch *b = g_new(bench_batch, 1);
    b->node_id = node_id;
    b->sequence = sequence;
    b->batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, node_id, sequence, 0);
    vigil_wire_writer *w = bench_batch_message(b, VIGIL_WIRE_NODE, 0);
    GError *error = NULL;
    bench_check(vigil_wire_add_node(w, node, &error), error);
    bench_batch_add(b, w);
    return b;
}

vigil_wire_writer *bench_batch_message(bench_batch *b, enum vigil_wire_type type,
                                       uint64_t process_id)
{
    return vigil_wire_writer_new(type, b->node_id, b->sequence, process_id);
}

void bench_batch_add(bench_batch *b, vigil_wire_writer *message)
{
    GError *error = NULL;
    /* As vigild's outbox adds them: as writers (which frees them), the
     * items already checked. */
    if (!vigil_wire_add_writer(b->batch, message, &error))
        bench_die("a batch's message was refused: %s", error->message);
}

GBytes *bench_batch_finish(bench_batch *b)
{
    GBytes *bytes = vigil_wire_writer_finish(b->batch);
    if (bytes == NULL)
        bench_die("batch %" G_GUINT64_FORMAT " could not be finished", b->sequence);
    g_free(b);
    return bytes;
}

void bench_batch_add_processes(bench_batch *b, const struct vigil_wire_process *processes,
                               unsigned count)
{
    GError *error = NULL;
    vigil_wire_writer *w = bench_batch_message(b, VIGIL_WIRE_PROCESSES, 0);
    for (unsigned i = 0; i < count; i++)
        bench_check(vigil_wire_add_process(w, &processes[i], &error), error);
    bench_batch_add(b, w);
}

void bench_batch_add_metrics(bench_batch *b, const struct vigil_metric_desc *metrics,
                             unsigned count)
{
    GError *error = NULL;
    vigil_wire_writer *w = bench_batch_message(b, VIGIL_WIRE_METRICS, 0);
    for (unsigned i = 0; i < count; i++)
        bench_check(vigil_wire_add_metric(w, &metrics[i], &error), error);
    bench_batch_add(b, w);
}

/* A value that varies by metric and time, so that the rows are not all
 * alike (PostgreSQL compresses nothing, but indexes and TOAST see them). */
static double value_at(uint32_t metric_id, uint64_t t_ns)
{
    return (double)((metric_id * 2654435761u) % 1000) + (double)(t_ns / 1000000 % 997) / 10.0;
}

void bench_batch_add_rollups(bench_batch *b, const struct vigil_metric_desc *metrics,
                             unsigned count, uint64_t start_ns, uint64_t end_ns, uint32_t samples)
{
    GError *error = NULL;
    vigil_wire_writer *w = bench_batch_message(b, VIGIL_WIRE_ROLLUPS, 0);
    for (unsigned i = 0; i < count; i++) {
        double v = value_at(metrics[i].id, start_ns);
        struct vigil_wire_rollup r = {
            .metric_id = metrics[i].id,
            .start_ns = start_ns,
            .end_ns = end_ns,
            .count = samples,
            .min = v / 2,
            .mean = v,
            .max = v * 2,
            .delta = metrics[i].kind == VIGIL_METRIC_COUNTER ? v * samples : NAN,
        };
        bench_check(vigil_wire_add_rollup(w, &r, &error), error);
    }
    bench_batch_add(b, w);
}

void bench_batch_add_samples(bench_batch *b, const struct vigil_metric_desc *metrics,
                             unsigned count, uint64_t start_ns, uint64_t end_ns, uint64_t tick_ns)
{
    GError *error = NULL;
    vigil_wire_writer *w = bench_batch_message(b, VIGIL_WIRE_SAMPLES, 0);
    for (uint64_t t = start_ns; t < end_ns; t += tick_ns)
        for (unsigned i = 0; i < count; i++) {
            struct vigil_sample s = {
                .metric_id = metrics[i].id, .t_ns = t, .value = value_at(metrics[i].id, t)};
            bench_check(vigil_wire_add_sample(w, &s, &error), error);
        }
    bench_batch_add(b, w);
}

/* ---- the metric set ---------------------------------------------------------------------- */

static void add_metric(GArray *a, enum vigil_metric_kind kind, const char *source, const char *unit,
                       const char *format, ...) G_GNUC_PRINTF(5, 6);
static void add_metric(GArray *a, enum vigil_metric_kind kind, const char *source, const char *unit,
                       const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    char *name = g_strdup_vprintf(format, ap);
    va_end(ap);
    struct vigil_metric_desc d = {.id = a->len + 1,
                                  .kind = kind,
                                  .origin = VIGIL_METRIC_MEASURED,
                                  .name = (char *)g_intern_string(name),
                                  .unit = (char *)unit,
                                  .source = (char *)source};
    g_free(name);
    g_array_append_val(a, d);
}

struct vigil_metric_desc *bench_node_metrics(unsigned cores, unsigned disks, unsigned nets,
                                             unsigned *count)
{
    static const char *const cpu_times[] = {"user",   "nice", "system",  "idle",
                                            "iowait", "irq",  "softirq", "steal"};
    static const char *const memory[] = {"total",  "free",       "available", "buffers",
                                         "cached", "swap_total", "swap_free", "used"};
    static const char *const disk[] = {"read_bytes", "write_bytes", "reads", "writes"};
    static const char *const net[] = {"rx_bytes", "tx_bytes", "rx_packets", "tx_packets"};
    static const char *const process_counters[] = {"cpu_s", "read_bytes", "written_bytes",
                                                   "disk_read_bytes", "disk_written_bytes"};
    const enum vigil_metric_kind C = VIGIL_METRIC_COUNTER, G = VIGIL_METRIC_GAUGE;
    GArray *a = g_array_new(FALSE, FALSE, sizeof(struct vigil_metric_desc));
    for (unsigned i = 0; i < G_N_ELEMENTS(cpu_times); i++)
        add_metric(a, C, "procstat", "s", "cpu.%s_s", cpu_times[i]);
    add_metric(a, C, "procstat", "1", "cpu.context_switches");
    add_metric(a, G, "procstat", "1", "procs.running");
    add_metric(a, G, "procstat", "1", "procs.blocked");
    for (unsigned cpu = 0; cpu < cores; cpu++)
        for (unsigned i = 0; i < G_N_ELEMENTS(cpu_times); i++)
            add_metric(a, C, "procstat", "s", "cpu%u.%s_s", cpu, cpu_times[i]);
    for (unsigned i = 0; i < G_N_ELEMENTS(memory); i++)
        add_metric(a, G, "meminfo", "bytes", "mem.%s_bytes", memory[i]);
    add_metric(a, G, "loadavg", "1", "load.1m");
    add_metric(a, G, "loadavg", "1", "load.5m");
    add_metric(a, G, "loadavg", "1", "load.15m");
    add_metric(a, G, "loadavg", "1", "procs.runnable");
    add_metric(a, G, "loadavg", "1", "procs.total");
    for (unsigned d = 0; d < disks; d++) {
        for (unsigned i = 0; i < G_N_ELEMENTS(disk); i++)
            add_metric(a, C, "diskstats", "1", "disk.nvme%un1.%s", d, disk[i]);
        add_metric(a, C, "diskstats", "s", "disk.nvme%un1.busy_s", d);
    }
    /* An InfiniBand port, then Ethernet ones. */
    for (unsigned n = 0; n < nets; n++)
        for (unsigned i = 0; i < G_N_ELEMENTS(net); i++)
            add_metric(a, C, "netdev", "1", "net.%s%u.%s", n == 0 ? "ib" : "eth",
                       n == 0 ? 0 : n - 1, net[i]);
    for (unsigned i = 0; i < G_N_ELEMENTS(process_counters); i++)
        add_metric(a, C, "process", "1", "process.%s", process_counters[i]);
    add_metric(a, G, "process", "bytes", "process.rss_bytes");
    add_metric(a, C, "energy/powercap", "J", "energy.node_j");
    add_metric(a, C, "energy", "J", "node.energy_j");
    *count = a->len;
    return (struct vigil_metric_desc *)g_array_free(a, FALSE);
}
