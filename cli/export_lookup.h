/* vigil export — what RUN and --node name in the warehouse. */
#ifndef VIGIL_CLI_EXPORT_LOOKUP_H
#define VIGIL_CLI_EXPORT_LOOKUP_H

#include <glib.h>
#include <libpq-fe.h>

/* A stored run: its number and its processes' interval, in µs since the
 * epoch, as the database has them (integers, so that they go into SQL
 * text without quoting). */
struct export_run {
    gint64 run_id;
    gint64 start_us;
    gint64 end_us;    /* meaningful only when ended */
    gboolean ended;   /* FALSE while a process of it runs */
    gboolean has_any; /* FALSE: the run has no process (yet) */
};

/* The run RUN names: a run number (runs.run_id), else a run key, as `vigil
 * report` takes them. FALSE with error set when there is none. */
gboolean export_find_run(PGconn *db, const char *run, struct export_run *out, GError **error);

/* The node of the run that `node` names: a node id, else a host name. FALSE
 * with error set when it names no node of the run (saying whether the
 * warehouse knows it at all, and which nodes the run was on) or several. */
gboolean export_find_node(PGconn *db, const char *run, const struct export_run *r, const char *node,
                          gint64 *node_id, GError **error);

#endif
