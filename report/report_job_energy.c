/* vigil — a job's energy across its nodes (vigil/report.h).
 *
 * vigild gives a job that has a node to itself the node's whole energy,
 * split among its processes; on a shared node, each process's share of
 * the busy CPU time. Either way the sum of a job's processes' figures on a
 * node is the job's energy there, so grouping by host is all it takes. */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vigil/local_protocol.h"
#include "vigil/report.h"

static int by_host(const void *a, const void *b, void *context)
{
    const struct vigil_report_process_energy *p = context;
    return strcmp(p[*(const int *)a].host, p[*(const int *)b].host);
}

/* Appends each of the "+"-joined names in `source` to `sources` unless it
 * is there; names that do not fit are left out. */
static void add_sources(char *sources, size_t size, const char *source)
{
    for (const char *p = source; *p != '\0';) {
        const char *end = strchr(p, '+');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        bool found = false;
        for (const char *q = sources; *q != '\0' && !found;) {
            const char *q_end = strchr(q, '+');
            size_t m = q_end != NULL ? (size_t)(q_end - q) : strlen(q);
            found = m == n && memcmp(p, q, n) == 0;
            q += m + (q_end != NULL);
        }
        size_t used = strlen(sources);
        if (!found && n > 0 && used + (used > 0) + n < size) {
            if (used > 0)
                sources[used++] = '+';
            memcpy(sources + used, p, n);
            sources[used + n] = '\0';
        }
        p += n + (end != NULL);
    }
}

static void copy_host(char *out, const char *host)
{
    size_t n = strlen(host);
    if (n >= VIGIL_REPORT_HOST_BYTES)
        n = VIGIL_REPORT_HOST_BYTES - 1;
    memcpy(out, host, n);
    out[n] = '\0';
}

void vigil_report_job_energy_from_processes(const struct vigil_report_process_energy *processes,
                                            int count, int *order,
                                            struct vigil_report_job_energy *out)
{
    memset(out, 0, sizeof *out);
    out->energy_j = out->node_min_j = out->node_mean_j = out->node_max_j = NAN;
    for (int i = 0; i < count; i++)
        order[i] = i;
    qsort_r(order, (size_t)count, sizeof *order, by_host, (void *)processes);
    int nodes = 0, measured_nodes = 0;
    double total_j = 0;
    for (int i = 0; i < count;) {
        const char *host = processes[order[i]].host;
        double node_j = 0;
        int with_energy = 0;
        for (; i < count && strcmp(processes[order[i]].host, host) == 0; i++) {
            const struct vigil_report_process_energy *p = &processes[order[i]];
            out->processes++;
            if (isnan(p->energy_j))
                continue;
            with_energy++;
            node_j += p->energy_j;
            out->flags |= p->flags;
            add_sources(out->sources, sizeof out->sources, p->source != NULL ? p->source : "");
        }
        nodes++;
        out->processes_with_energy += with_energy;
        if (with_energy == 0)
            continue;
        measured_nodes++;
        total_j += node_j;
        if (measured_nodes == 1 || node_j < out->node_min_j) {
            out->node_min_j = node_j;
            copy_host(out->min_host, host);
        }
        if (measured_nodes == 1 || node_j > out->node_max_j) {
            out->node_max_j = node_j;
            copy_host(out->max_host, host);
        }
    }
    if (measured_nodes == 0) {
        memset(out, 0, sizeof *out);
        return;
    }
    out->nodes = nodes;
    out->energy_j = total_j;
    out->node_mean_j = total_j / measured_nodes;
}
