/* vigil — a job's energy across its nodes from its processes' figures
 * (struct vigil_report_job_energy, vigil/report.h): grouped by host, summed
 * per node, then the sum over the nodes and the per-node min, mean and max.
 * GLib-free and heap-free: the preload library computes it at
 * MPI_Finalize. */
#ifndef VIGIL_REPORT_JOB_ENERGY_H
#define VIGIL_REPORT_JOB_ENERGY_H

#include <stdint.h>

#include "vigil/report.h"

/* One process's figure: its host, its energy (NaN: none), its
 * VIGIL_LOCAL_ENERGY_* flags and "+"-joined sources. */
struct vigil_report_process_energy {
    const char *host;
    double energy_j;
    uint32_t flags;
    const char *source;
};

/* `order` is room for `count` ints. A node none of whose processes has a
 * figure counts in no min, mean or max; out->nodes is 0 when no process
 * has one (the report then shows none). */
void vigil_report_job_energy_from_processes(const struct vigil_report_process_energy *processes,
                                            int count, int *order,
                                            struct vigil_report_job_energy *out);

/* Its line of the report's text ("JOB_ENERGY_JOULE …\n"), and its JSON
 * member ("job_energy":{…}, no comma before it): report/report_text.c. */
void vigil_report_write_job_energy_text(struct vigil_report_sink *s,
                                        const struct vigil_report_job_energy *j);
void vigil_report_write_job_energy_json(struct vigil_report_sink *s,
                                        const struct vigil_report_job_energy *j);

#endif
