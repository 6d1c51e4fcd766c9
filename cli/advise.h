/* vigil advise's parts: a run's figures read from the warehouse
 * (advise_warehouse.c), the advice printed (advise_output.c), the command
 * and the fit (advise.c). */
#ifndef VIGIL_CLI_ADVISE_H
#define VIGIL_CLI_ADVISE_H

#include <glib.h>
#include <libpq-fe.h>

#include "fluid_model.h"

#include "warehouse_query.h" /* HOW_TO_LIST_RUNS */

/* One run as the model needs it. */
struct run_facts {
    char *given; /* as on the command line */
    char *run_id;
    char *run_key;
    char *program;
    char *argv; /* the array as text */
    double duration_s;
    int nodes;
    const char *energy_metric; /* energy_metrics[].name, or NULL */
    double energy_j;
    double power_w;
    double covered_s; /* node-seconds the energy roll-ups cover */
    int energy_nodes;
    long energy_windows, estimated_windows, uncertain_windows;
    double attributed_energy_j; /* run_overview.energy_j; NAN when none */
    double frequency_hz, min_frequency_hz, max_frequency_hz; /* NAN when absent */
    long frequency_windows;
    GArray *points;     /* struct vigil_fluid_point, scaled to the run's nodes */
    GPtrArray *notes;   /* what to know about its figures */
    GPtrArray *missing; /* what keeps them from the model */
};

/* Reads run `given` (a run number, else a run key) into `f`: what is
 * missing for the model goes to f->missing, not to error, which is set
 * only when the warehouse cannot be read or has no such run. */
gboolean advise_read_run(PGconn *db, const char *given, struct run_facts *f, GError **error);
void advise_run_facts_clear(struct run_facts *f);
/* The program's other ended runs with their frequency, as lines to print
 * (g_free it); NULL with error set when the warehouse cannot be read. */
char *advise_other_runs(PGconn *db, const struct run_facts *f, GError **error);

/* The advice: the runs, and the model with its predictions when fitted. */
struct advice {
    struct run_facts runs[2];
    int n_runs;
    GPtrArray *notes;
    GPtrArray *missing;
    gboolean fitted;
    struct vigil_fluid_model model;
    double exponent_default;
    double step_hz;
    double min_frequency_hz;
    GArray *predictions; /* struct vigil_fluid_prediction */
    size_t least_energy, least_energy_delay;
    char *others; /* other runs of the program, for one run only */
};

void advise_print_text(const struct advice *a);
void advise_print_json(const struct advice *a);

#endif
