/* vigil status: where vigild's tick goes, in the text form. */
#ifndef VIGIL_CLI_STATUS_COSTS_H
#define VIGIL_CLI_STATUS_COSTS_H

#include <json-glib/json-glib.h>

/* Prints the tick's parts, the statistics' subscribers and the ADPIs as
 * mean µs per tick since vigild started (a cycle's parts are spread over
 * the ticks of the cycle); nothing for a vigild that does not tell. */
void vigil_cli_status_tick_costs(JsonObject *root);

#endif
