/* vigil — reasoners: the process, node and system levels of the tree.
 *
 * Each cycle a reasoner takes the issues its ADPIs reported, the states
 * its children decided and its parent's last state, and decides its own
 * state with the rule of the SIOX paper (its Listing 2):
 *
 *   bad   = BAD and ABNORMAL_BAD issues, children and parent in those states
 *   good  = GOOD and ABNORMAL_GOOD ones
 *   other = ABNORMAL_OTHER ones, and each utilisation category above
 *           max_load ("Overloaded")
 *
 *   bad  > threshold and bad  > ratio × good   → ABNORMAL_BAD
 *   good > threshold and good > ratio × bad    → ABNORMAL_GOOD
 *   bad + good + other > threshold             → ABNORMAL_OTHER
 *   otherwise BAD, GOOD or OK, whichever of bad and good is larger
 *
 * An abnormal state is held for hold_cycles more cycles (1 by default)
 * after its cause is gone, so that a window does not flicker.
 *
 * Three states come out. `own` counts only the reasoner's own ADPIs (not
 * Overloaded: a saturated node is the normal state of an HPC node, and
 * would make every cycle a capture): it is what capture acts on, since capture already looks at
 * every level, and a node that echoed one process's state would forward every process's activities.
 * `upward` adds the children and is what the parent is told. `state` adds the parent's last state
 * and is what `vigil status` shows. A child that counted its parent and reported that back up would
 * keep the parent abnormal for ever after one abnormal cycle; so the
 * parent's part never goes up.
 *
 * vigild hosts the process reasoners (one per registered process, each
 * with its own memory, all sharing the reasoner-process plugin's rule) and
 * the node reasoner; vigil-txd hosts the system reasoner. The rule is a
 * library function so that every level applies the same one. */
#ifndef VIGIL_REASONER_H
#define VIGIL_REASONER_H

#include <stddef.h>
#include <stdint.h>
#include <glib.h>

#include "vigil/health.h"
#include "vigil/plugin.h"

struct vigil_reasoner_rule {
    double threshold;  /* issues an abnormal state needs: more than this many */
    double ratio;      /* how many times the other side one side must outweigh */
    double max_load;   /* a utilisation above this (0..1) is Overloaded */
    guint hold_cycles; /* cycles an abnormal state outlives its cause */
};

/* One utilisation category: "cpu", "memory", "io". */
struct vigil_load {
    const char *category;
    double utilisation; /* 0..1 */
};

struct vigil_reasoner_input {
    uint32_t issues[VIGIL_HEALTH_COUNT + 1]; /* its ADPIs' issues of this cycle, by health */
    const enum vigil_health *children;       /* their `upward` states of this cycle */
    size_t n_children;
    enum vigil_health parent; /* the parent's last state; 0 when there is none */
    const struct vigil_load *load;
    size_t n_load;
};

/* What a reasoner keeps from one cycle to the next. Zero it to start. */
struct vigil_reasoner_memory {
    enum vigil_health held_state, held_upward, held_own;
    guint state_left, upward_left, own_left; /* cycles the held states still have */
    uint64_t cycles, abnormal_cycles;
};

#define VIGIL_REASONER_OVERLOADED_MAX 8

struct vigil_reasoner_decision {
    enum vigil_health state;  /* own + children + parent: what status shows */
    enum vigil_health upward; /* own + children: what the parent is told */
    enum vigil_health own;    /* its ADPIs and load alone: what capture acts on */
    uint32_t bad, good, other;
    gboolean held;             /* `state` is an abnormal one held past its cause */
    gboolean upward_held;      /* and `upward` */
    gboolean own_held;         /* and `own` */
    enum vigil_health own_raw; /* `own` before the hold */
    /* `upward` as this cycle's evidence decides it, before the hold: what
     * a parent counts, so that a hold does not grow by a cycle with every
     * level it goes up. */
    enum vigil_health upward_raw;
    /* The input's categories above max_load (pointers into the input). */
    const char *overloaded[VIGIL_REASONER_OVERLOADED_MAX];
    size_t n_overloaded;
};

/* The rule alone, on counts. */
enum vigil_health vigil_reasoner_rule_apply(const struct vigil_reasoner_rule *rule, uint32_t bad,
                                            uint32_t good, uint32_t other);

/* One cycle's decision, holding abnormal states in `memory`. */
void vigil_reasoner_decide(const struct vigil_reasoner_rule *rule,
                           struct vigil_reasoner_memory *memory,
                           const struct vigil_reasoner_input *input,
                           struct vigil_reasoner_decision *out);

/* A reasoner plugin's settings: its rule and, for the process and node
 * reasoners, the ADPIs that feed it. Each plugin's table binds its keys to
 * this struct: the rule's keys first, then its `adpis`. */
struct vigil_reasoner_settings {
    struct vigil_reasoner_rule rule;
    char **adpis; /* NULL for the system reasoner, which has no ADPIs */
};

#define VIGIL_REASONER_RULE_KEYS                                                                   \
    {VIGIL_SETTING_NAMED("threshold", struct vigil_reasoner_settings, rule.threshold),             \
     .type = VIGIL_CONFIG_DOUBLE,                                                                  \
     .default_value = "0",                                                                         \
     .min = 0,                                                                                     \
     .max = 1e6,                                                                                   \
     .description = "issues an abnormal state needs: more than this many"},                        \
        {VIGIL_SETTING_NAMED("ratio", struct vigil_reasoner_settings, rule.ratio),                 \
         .type = VIGIL_CONFIG_DOUBLE,                                                              \
         .default_value = "2",                                                                     \
         .min = 1,                                                                                 \
         .max = 1e6,                                                                               \
         .description = "bad issues must outnumber good ones this many times for ABNORMAL_BAD, "   \
                        "and the other way round for ABNORMAL_GOOD"},                              \
        {VIGIL_SETTING_NAMED("max_load", struct vigil_reasoner_settings, rule.max_load),           \
         .type = VIGIL_CONFIG_DOUBLE,                                                              \
         .default_value = "0.95",                                                                  \
         .min = 0,                                                                                 \
         .max = 1,                                                                                 \
         .description = "a utilisation (CPU, memory, I/O) above this fraction is Overloaded, an "  \
                        "ABNORMAL_OTHER issue"},                                                   \
    {                                                                                              \
        VIGIL_SETTING_NAMED("hold_cycles", struct vigil_reasoner_settings, rule.hold_cycles),      \
            .type = VIGIL_CONFIG_INT, .default_value = "1", .min = 0, .max = 1000,                 \
            .description = "cycles an abnormal state is held after its cause is gone"              \
    }

/* The settings of the reasoner whose section is `section` (declared by its
 * plugin): clear them with vigil_reasoner_settings_clear. */
gboolean vigil_reasoner_settings_load(const vigil_config *config, const char *section,
                                      struct vigil_reasoner_settings *out, GError **error);
void vigil_reasoner_settings_clear(struct vigil_reasoner_settings *s);

/* A reasoner plugin (kind VIGIL_PLUGIN_REASONER): "process", "node" and
 * "system", one per level, each configured in [reasoner.LEVEL]. Its
 * instance holds the rule; each reasoner of that level holds its memory. */
struct vigil_reasoner_ops {
    enum vigil_level level;
    const struct vigil_reasoner_rule *(*rule)(void *instance);
    /* New values from the next cycle on; the memories are the callers'
     * and stay. */
    gboolean (*reconfigure)(void *instance, const struct vigil_plugin_context *context,
                            GError **error);
};

/* What every reasoner plugin's descriptor and ops point to: the instance
 * is its struct vigil_reasoner_settings. */
void *vigil_reasoner_instance_create(const struct vigil_plugin_context *context, GError **error);
void vigil_reasoner_instance_destroy(void *instance);
const struct vigil_reasoner_rule *vigil_reasoner_instance_rule(void *instance);
gboolean vigil_reasoner_instance_reconfigure(void *instance,
                                             const struct vigil_plugin_context *context,
                                             GError **error);

/* The key that names which ADPIs feed a process or node reasoner. */
#define VIGIL_REASONER_ADPIS_KEY(defaults)                                                         \
    {                                                                                              \
        VIGIL_SETTING(struct vigil_reasoner_settings, adpis),                                      \
            .type = VIGIL_CONFIG_LIST, .default_value = defaults,                                  \
            .description =                                                                         \
                "the anomaly-detection plugins that feed this reasoner, each configured "          \
                "in [adpi.NAME]"                                                                   \
    }

#endif
