/* vigil-txd — the system reasoner: the top of the tree.
 *
 * Its children are the nodes' reasoners. Each batch brings its node's state
 * for the cycle it closes; once a cycle of its own, the system reasoner
 * applies the same rule as every level (core/reasoner.c) to the states of
 * the nodes heard from recently. A node that has not been heard from for
 * max_age is left out rather than counted with a stale state: it is down,
 * or its batches are old ones replayed from a spool. */
#include "txd.h"

struct node_state {
    enum vigil_health state;
    int64_t realtime_ns; /* the end of the cycle it was decided for */
};

struct txd_system_reasoner {
    struct vigil_reasoner_rule rule;
    int64_t max_age_ns;
    GHashTable *nodes; /* node id (boxed u64) → struct node_state */
    struct vigil_reasoner_memory memory;
    uint64_t cycle;
    guint counted; /* nodes the last decision counted: a change is logged */
};

struct txd_system_reasoner *txd_system_reasoner_new(const struct vigil_reasoner_rule *rule,
                                                    guint max_age_ms)
{
    struct txd_system_reasoner *r = g_new0(struct txd_system_reasoner, 1);
    r->nodes = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    txd_system_reasoner_set_rule(r, rule, max_age_ms);
    return r;
}

void txd_system_reasoner_free(struct txd_system_reasoner *r)
{
    if (r == NULL)
        return;
    g_hash_table_destroy(r->nodes);
    g_free(r);
}

void txd_system_reasoner_set_rule(struct txd_system_reasoner *r,
                                  const struct vigil_reasoner_rule *rule, guint max_age_ms)
{
    r->rule = *rule;
    r->max_age_ns = (int64_t)max_age_ms * 1000000;
}

void txd_system_reasoner_node_state(struct txd_system_reasoner *r, uint64_t node_id,
                                    enum vigil_health state, int64_t realtime_ns)
{
    struct node_state *known = g_hash_table_lookup(r->nodes, &node_id);
    if (known == NULL) {
        uint64_t *key = g_new(uint64_t, 1);
        *key = node_id;
        known = g_new0(struct node_state, 1);
        known->realtime_ns = INT64_MIN;
        g_hash_table_insert(r->nodes, key, known);
    }
    if (realtime_ns < known->realtime_ns)
        return; /* a replayed batch: older news */
    known->state = state;
    known->realtime_ns = realtime_ns;
}

void txd_system_reasoner_decide(struct txd_system_reasoner *r, int64_t now_realtime_ns,
                                struct vigil_wire_state *out)
{
    GArray *children = g_array_new(FALSE, FALSE, sizeof(enum vigil_health));
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, r->nodes);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        const struct node_state *n = value;
        if (now_realtime_ns - n->realtime_ns <= r->max_age_ns)
            g_array_append_val(children, n->state);
        else
            g_hash_table_iter_remove(&it);
    }
    struct vigil_reasoner_input input = {
        .children = (const enum vigil_health *)children->data,
        .n_children = children->len,
    };
    struct vigil_reasoner_decision decision;
    vigil_reasoner_decide(&r->rule, &r->memory, &input, &decision);
    /* How many nodes the system's state stands for, whatever that state:
     * a node that joins or goes quiet is seen in the log. */
    if (children->len != r->counted)
        g_message("system reasoner: %u node%s counted (was %u)", children->len,
                  children->len == 1 ? "" : "s", r->counted);
    r->counted = children->len;
    *out = (struct vigil_wire_state){
        .cycle = ++r->cycle,
        .level = VIGIL_LEVEL_SYSTEM,
        .health = decision.state,
        .bad_issues = decision.bad,
        .good_issues = decision.good,
        .other_issues = decision.other,
    };
    g_array_free(children, TRUE);
}

guint txd_system_reasoner_nodes(const struct txd_system_reasoner *r)
{
    return g_hash_table_size(r->nodes);
}
