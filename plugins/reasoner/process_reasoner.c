/* vigil — the process reasoner: one per registered process, in vigild.
 * Its ADPIs see that process's statistics and activities; its parent is
 * the node reasoner. */
#include "reasoner_plugin.h"

static const struct vigil_config_key keys[] = {
    VIGIL_REASONER_RULE_KEYS,
    VIGIL_REASONER_ADPIS_KEY(
        "latency-histogram;call-rate;statistics-range;energy-efficiency;drift"),
};

VIGIL_REASONER_PLUGIN(VIGIL_LEVEL_PROCESS, "process",
                      "the state of one process, from its ADPIs and its node's state", keys);
