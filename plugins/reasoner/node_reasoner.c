/* vigil — the node reasoner, in vigild: its ADPIs see the node's
 * statistics and every process's activities; its children are the process
 * reasoners, its parent the system reasoner; its load categories are the
 * node's CPU, memory and disk utilisation. */
#include "reasoner_plugin.h"

static const struct vigil_config_key keys[] = {
    VIGIL_REASONER_RULE_KEYS,
    VIGIL_REASONER_ADPIS_KEY("sensor-sanity;statistics-range"),
};

VIGIL_REASONER_PLUGIN(VIGIL_LEVEL_NODE, "node",
                      "the state of a node, from its ADPIs, its processes and the system's state",
                      keys);
