/* vigil — the node reasoner, in vigild: its ADPIs see the node's
 * statistics and every process's activities; its children are the process
 * reasoners, its parent the system reasoner; its load categories are the
 * node's CPU, memory and disk utilisation. */
#include "vigil/reasoner.h"

static const struct vigil_config_key keys[] = {
    VIGIL_REASONER_RULE_KEYS,
    VIGIL_REASONER_ADPIS_KEY("sensor-sanity;statistics-range"),
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct vigil_reasoner_settings, keys, NULL);

static const struct vigil_reasoner_ops ops = {
    .level = VIGIL_LEVEL_NODE,
    .rule = vigil_reasoner_instance_rule,
    .reconfigure = vigil_reasoner_instance_reconfigure,
};

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_REASONER,
    .name = "node",
    .description = "the state of a node, from its ADPIs, its processes and the system's state",
    .settings = &settings_table,
    .create = vigil_reasoner_instance_create,
    .destroy = vigil_reasoner_instance_destroy,
    .ops = &ops,
};
