/* vigil status: the node's energy segments in the text form. */
#ifndef VIGIL_CLI_STATUS_ENERGY_H
#define VIGIL_CLI_STATUS_ENERGY_H

#include <json-glib/json-glib.h>

/* Prints the running total and each kept segment, indented under the
 * "energy:" line; nothing when vigild has no total yet. */
void vigil_cli_status_energy_segments(JsonObject *energy);

#endif
