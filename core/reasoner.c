/* vigil — the reasoners' rule (the SIOX paper's Listing 2), shared by every
 * level; reasoner.h says what it decides and why. */
#include "vigil/reasoner.h"

enum vigil_health vigil_reasoner_rule_apply(const struct vigil_reasoner_rule *rule, uint32_t bad,
                                            uint32_t good, uint32_t other)
{
    if (bad > rule->threshold && bad > rule->ratio * good)
        return VIGIL_HEALTH_ABNORMAL_BAD;
    if (good > rule->threshold && good > rule->ratio * bad)
        return VIGIL_HEALTH_ABNORMAL_GOOD;
    if ((double)bad + good + other > rule->threshold)
        return VIGIL_HEALTH_ABNORMAL_OTHER;
    if (bad > good)
        return VIGIL_HEALTH_BAD;
    if (good > bad)
        return VIGIL_HEALTH_GOOD;
    return VIGIL_HEALTH_OK;
}

/* Adds one state to the counts: OK and unknown values add nothing. */
static void count_state(enum vigil_health health, uint32_t weight, uint32_t *bad, uint32_t *good,
                        uint32_t *other)
{
    switch (health) {
    case VIGIL_HEALTH_BAD:
    case VIGIL_HEALTH_ABNORMAL_BAD:
        *bad += weight;
        break;
    case VIGIL_HEALTH_GOOD:
    case VIGIL_HEALTH_ABNORMAL_GOOD:
        *good += weight;
        break;
    case VIGIL_HEALTH_ABNORMAL_OTHER:
        *other += weight;
        break;
    case VIGIL_HEALTH_OK:
        break;
    }
}

/* `decided` this cycle, or the abnormal state still held. */
static enum vigil_health hold(const struct vigil_reasoner_rule *rule, enum vigil_health decided,
                              enum vigil_health *held, guint *left, gboolean *was_held)
{
    *was_held = FALSE;
    if (vigil_health_is_abnormal(decided)) {
        *held = decided;
        *left = rule->hold_cycles;
        return decided;
    }
    if (*left > 0) {
        (*left)--;
        *was_held = TRUE;
        return *held;
    }
    return decided;
}

void vigil_reasoner_decide(const struct vigil_reasoner_rule *rule,
                           struct vigil_reasoner_memory *memory,
                           const struct vigil_reasoner_input *input,
                           struct vigil_reasoner_decision *out)
{
    *out = (struct vigil_reasoner_decision){0};
    for (unsigned h = 1; h <= VIGIL_HEALTH_COUNT; h++)
        count_state(h, input->issues[h], &out->bad, &out->good, &out->other);
    /* A busy node is what an HPC node is for: Overloaded counts in the
     * tree's states but is not, alone, a reason to capture. */
    enum vigil_health own = vigil_reasoner_rule_apply(rule, out->bad, out->good, out->other);
    for (size_t i = 0; i < input->n_load; i++) {
        if (input->load[i].utilisation <= rule->max_load)
            continue;
        out->other++;
        if (out->n_overloaded < VIGIL_REASONER_OVERLOADED_MAX)
            out->overloaded[out->n_overloaded++] = input->load[i].category;
    }
    for (size_t i = 0; i < input->n_children; i++)
        count_state(input->children[i], 1, &out->bad, &out->good, &out->other);
    enum vigil_health upward = vigil_reasoner_rule_apply(rule, out->bad, out->good, out->other);
    uint32_t bad = out->bad, good = out->good, other = out->other;
    count_state(input->parent, 1, &bad, &good, &other);
    enum vigil_health state = vigil_reasoner_rule_apply(rule, bad, good, other);
    out->own = hold(rule, own, &memory->held_own, &memory->own_left, &out->own_held);
    out->own_raw = own;
    out->upward_raw = upward;
    out->upward = hold(rule, upward, &memory->held_upward, &memory->upward_left, &out->upward_held);
    out->state = hold(rule, state, &memory->held_state, &memory->state_left, &out->held);
    memory->cycles++;
    if (vigil_health_is_abnormal(out->state))
        memory->abnormal_cycles++;
}

gboolean vigil_reasoner_settings_load(const vigil_config *config, const char *section,
                                      struct vigil_reasoner_settings *out, GError **error)
{
    return vigil_settings_fill_section(config, section, out, sizeof *out, error);
}

void vigil_reasoner_settings_clear(struct vigil_reasoner_settings *s)
{
    g_clear_pointer(&s->adpis, g_strfreev);
}

/* A reasoner plugin's instance is its settings: the three levels differ in
 * their keys and in who feeds them, not in what the instance does. */
void *vigil_reasoner_instance_create(const struct vigil_plugin_context *context, GError **error)
{
    struct vigil_reasoner_settings *s = g_new0(struct vigil_reasoner_settings, 1);
    if (!vigil_reasoner_settings_load(context->config, context->section, s, error)) {
        g_free(s);
        return NULL;
    }
    return s;
}

void vigil_reasoner_instance_destroy(void *instance)
{
    vigil_reasoner_settings_clear(instance);
    g_free(instance);
}

const struct vigil_reasoner_rule *vigil_reasoner_instance_rule(void *instance)
{
    return &((const struct vigil_reasoner_settings *)instance)->rule;
}

gboolean vigil_reasoner_instance_reconfigure(void *instance,
                                             const struct vigil_plugin_context *context,
                                             GError **error)
{
    struct vigil_reasoner_settings fresh;
    if (!vigil_reasoner_settings_load(context->config, context->section, &fresh, error))
        return FALSE;
    vigil_reasoner_settings_clear(instance);
    *(struct vigil_reasoner_settings *)instance = fresh;
    return TRUE;
}
