/* vigil — the node's load in one cycle, from /proc/stat's CPU times and
 * runnable threads, as provider procstat names them. */
#include <math.h>

#include "vigil/node_load.h"

static const char *const cpu_fields[] = {
    "cpu.user_s",   "cpu.nice_s", "cpu.system_s",  "cpu.idle_s",
    "cpu.iowait_s", "cpu.irq_s",  "cpu.softirq_s", "cpu.steal_s",
};
enum { CPU_IDLE = 3, CPU_IOWAIT = 4, CPU_STEAL = 7 };

static const struct vigil_cycle_metric *
metric(const struct vigil_cycle_values *cv, const vigil_metric_catalog *catalog, const char *name)
{
    const struct vigil_metric_desc *m = vigil_metric_lookup(catalog, name);
    return m != NULL ? vigil_cycle_values_get(cv, m->id) : NULL;
}

static double value_of(const struct vigil_cycle_values *cv, const vigil_metric_catalog *catalog,
                       const char *name)
{
    const struct vigil_cycle_metric *m = metric(cv, catalog, name);
    double value;
    return m != NULL && vigil_cycle_metric_value(m, &value) ? value : NAN;
}

static void cpu_shares(const struct vigil_cycle_values *cv, const vigil_metric_catalog *catalog,
                       struct vigil_node_load *load)
{
    double rate[G_N_ELEMENTS(cpu_fields)], total = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(cpu_fields); i++) {
        rate[i] = value_of(cv, catalog, cpu_fields[i]);
        if (!isfinite(rate[i]))
            return;
        total += rate[i];
    }
    if (!(total > 0))
        return;
    load->cpus = total;
    load->cpu_busy = (total - rate[CPU_IDLE] - rate[CPU_IOWAIT]) / total;
    load->iowait = rate[CPU_IOWAIT] / total;
    load->steal = rate[CPU_STEAL] / total;
}

void vigil_node_load_of(const struct vigil_cycle_values *cv, const vigil_metric_catalog *catalog,
                        struct vigil_node_load *load)
{
    *load = (struct vigil_node_load){NAN, NAN, NAN, NAN, NAN};
    cpu_shares(cv, catalog, load);
    load->running = value_of(cv, catalog, "procs.running");
}

double vigil_node_load_run_queue(const struct vigil_node_load *load)
{
    return load->cpus > 0 && isfinite(load->running) ? load->running / load->cpus : NAN;
}
