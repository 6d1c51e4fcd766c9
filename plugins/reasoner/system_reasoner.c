/* vigil — the system reasoner, in vigil-txd: its children are the nodes'
 * reasoners; it has no ADPIs and no parent. Its state goes back down to
 * every vigild, which counts it in the node's state and in capture. */
#include "vigil/reasoner.h"

static const struct vigil_config_key keys[] = {VIGIL_REASONER_RULE_KEYS};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct vigil_reasoner_settings, keys, NULL);

static const struct vigil_reasoner_ops ops = {
    .level = VIGIL_LEVEL_SYSTEM,
    .rule = vigil_reasoner_instance_rule,
    .reconfigure = vigil_reasoner_instance_reconfigure,
};

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_REASONER,
    .name = "system",
    .description = "the state of the system, from its nodes' states",
    .settings = &settings_table,
    .create = vigil_reasoner_instance_create,
    .destroy = vigil_reasoner_instance_destroy,
    .ops = &ops,
};
