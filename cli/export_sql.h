/* vigil export — the query of each kind of export. */
#ifndef VIGIL_CLI_EXPORT_SQL_H
#define VIGIL_CLI_EXPORT_SQL_H

#include <glib.h>

#include "export_lookup.h"

enum export_what {
    EXPORT_POWER,      /* each energy metric's power and running energy per roll-up */
    EXPORT_STATISTICS, /* every metric's roll-ups */
    EXPORT_ACTIVITIES, /* the captured activities */
};

/* The SELECT that gives `what` of run `r`, on its node `node_id` only
 * (0: on all of them), in the order it is written out. Only integers and
 * the ontology's fixed names are put into its text, so the same text
 * serves COPY, which takes no parameters. g_free it. */
char *export_select_sql(enum export_what what, const struct export_run *r, gint64 node_id);

#endif
