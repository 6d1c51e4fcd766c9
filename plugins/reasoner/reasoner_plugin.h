/* vigil — what the three reasoner plugins (process, node, system) share:
 * their instance is a struct vigil_reasoner_settings, filled from their
 * keys, and their rule is the library's. Each plugin's file is its data:
 * its keys, its level, its name and its description. */
#ifndef VIGIL_REASONER_PLUGIN_H
#define VIGIL_REASONER_PLUGIN_H

#include "vigil/reasoner.h"

/* The settings table, the ops and the descriptor of the reasoner plugin
 * of `level_`, whose keys are the array `keys_`. */
#define VIGIL_REASONER_PLUGIN(level_, name_, description_, keys_)                                  \
    static const struct vigil_settings_table settings_table =                                      \
        VIGIL_SETTINGS_TABLE(NULL, struct vigil_reasoner_settings, keys_, NULL);                   \
    static const struct vigil_reasoner_ops ops = {                                                 \
        .level = (level_),                                                                         \
        .rule = vigil_reasoner_instance_rule,                                                      \
        .reconfigure = vigil_reasoner_instance_reconfigure,                                        \
    };                                                                                             \
    VIGIL_PLUGIN(VIGIL_PLUGIN_REASONER, .name = (name_), .description = (description_),            \
                 .settings = &settings_table, .create = vigil_reasoner_instance_create,            \
                 .destroy = vigil_reasoner_instance_destroy, .ops = &ops)

#endif
