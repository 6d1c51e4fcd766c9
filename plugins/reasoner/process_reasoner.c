/* vigil — the process reasoner: one per registered process, in vigild.
 * Its ADPIs see that process's statistics and activities; its parent is
 * the node reasoner. */
#include "vigil/reasoner.h"

static const struct vigil_config_key keys[] = {
    VIGIL_REASONER_RULE_KEYS,
    VIGIL_REASONER_ADPIS_KEY(
        "latency-histogram;call-rate;statistics-range;energy-efficiency;drift"),
};
static const struct vigil_settings_table settings_table =
    VIGIL_SETTINGS_TABLE(NULL, struct vigil_reasoner_settings, keys, NULL);

static const struct vigil_reasoner_ops ops = {
    .level = VIGIL_LEVEL_PROCESS,
    .rule = vigil_reasoner_instance_rule,
    .reconfigure = vigil_reasoner_instance_reconfigure,
};

VIGIL_PLUGIN_EXPORT = {
    .abi_version = VIGIL_PLUGIN_ABI_VERSION,
    .kind = VIGIL_PLUGIN_REASONER,
    .name = "process",
    .description = "the state of one process, from its ADPIs and its node's state",
    .settings = &settings_table,
    .create = vigil_reasoner_instance_create,
    .destroy = vigil_reasoner_instance_destroy,
    .ops = &ops,
};
