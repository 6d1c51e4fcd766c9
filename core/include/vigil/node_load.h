/* vigil — the node's load in one cycle, from its samples: what a process
 * ADPI weighs before it blames a process for calls that other programs
 * slowed down (vigil/adpi.h, node_load). */
#ifndef VIGIL_NODE_LOAD_H
#define VIGIL_NODE_LOAD_H

#include <glib.h>

#include "vigil/adpi.h"
#include "vigil/metric.h"

/* Each figure is NAN when the samples do not give it (a provider off, the
 * first cycle of a counter). */
struct vigil_node_load {
    double cpus;     /* CPU seconds per second in /proc/stat: the node's CPUs */
    double cpu_busy; /* busy share of all CPU time (idle and iowait are not busy) */
    double iowait;   /* share of all CPU time idle with I/O outstanding */
    double steal;    /* share of all CPU time the hypervisor gave to others */
    double running;  /* threads running or runnable (procs.running), the cycle's mean */
};

/* The load of the cycle whose samples `cv` holds (before
 * vigil_cycle_values_next). */
void vigil_node_load_of(const struct vigil_cycle_values *cv, const vigil_metric_catalog *catalog,
                        struct vigil_node_load *load);

/* Threads wanting a CPU per CPU, above 1 when some wait for one: running
 * over CPUs; NAN when either is unknown. */
double vigil_node_load_run_queue(const struct vigil_node_load *load);

#endif
