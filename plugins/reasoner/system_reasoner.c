/* vigil — the system reasoner, in vigil-txd: its children are the nodes'
 * reasoners; it has no ADPIs and no parent. Its state goes back down to
 * every vigild, which counts it in the node's state and in capture. */
#include "reasoner_plugin.h"

static const struct vigil_config_key keys[] = {VIGIL_REASONER_RULE_KEYS};

VIGIL_REASONER_PLUGIN(VIGIL_LEVEL_SYSTEM, "system",
                      "the state of the system, from its nodes' states", keys);
