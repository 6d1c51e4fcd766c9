/* vigil-txd — the system reasoner: the top of the tree.
 *
 * Its children are the nodes' reasoners. Each batch brings its node's state
 * for the cycle it closes; once a cycle of its own, the system reasoner
 * applies the same rule as every level (core/reasoner.c) to the states of
 * the nodes heard from recently. A node that has not been heard from for
 * max_age is left out rather than counted with a stale state: it is down,
 * or its batches are old ones replayed from a spool.
 *
 * What a daemon is sent is the system without itself: the same rule over
 * the other nodes' states, each daemon's view held with its own memory. A
 * node counted in the system state it is then told would hear its own
 * anomaly back a cycle later as the system's, and count it again as its
 * parent's (a single node would see "system ABNORMAL" after each of its
 * own abnormal cycles). The whole system's state, stored and logged, still
 * counts every node. One pass makes the counts by state; each view takes
 * its node's own out, so N nodes cost O(N) a cycle, not O(N²). */
#include <string.h>

#include "txd.h"

struct node_state {
    enum vigil_health state;
    int64_t realtime_ns; /* the end of the cycle it was decided for */
    gboolean counted;    /* in the last decision, as `counted_state` */
    enum vigil_health counted_state;
    struct vigil_reasoner_memory others_memory; /* its view of the others */
};

struct txd_system_reasoner {
    struct vigil_reasoner_rule rule;
    int64_t max_age_ns;
    GHashTable *nodes; /* node id (boxed u64) → struct node_state */
    struct vigil_reasoner_memory memory;
    uint64_t cycle;
    uint32_t counted[VIGIL_HEALTH_COUNT + 1]; /* the last decision's nodes, by state */
    guint counted_nodes;                      /* how many: a change is logged */
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
    memset(r->counted, 0, sizeof r->counted);
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, r->nodes);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct node_state *n = value;
        if (now_realtime_ns - n->realtime_ns <= r->max_age_ns) {
            g_array_append_val(children, n->state);
            n->counted = TRUE;
            n->counted_state = n->state;
            if (n->state >= 1 && n->state <= VIGIL_HEALTH_COUNT)
                r->counted[n->state]++;
        } else {
            g_hash_table_iter_remove(&it);
        }
    }
    struct vigil_reasoner_input input = {
        .children = (const enum vigil_health *)children->data,
        .n_children = children->len,
    };
    struct vigil_reasoner_decision decision;
    vigil_reasoner_decide(&r->rule, &r->memory, &input, &decision);
    /* How many nodes the system's state stands for, whatever that state:
     * a node that joins or goes quiet is seen in the log. */
    if (children->len != r->counted_nodes)
        g_message("system reasoner: %u node%s counted (was %u)", children->len,
                  children->len == 1 ? "" : "s", r->counted_nodes);
    r->counted_nodes = children->len;
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

void txd_system_reasoner_decide_for(struct txd_system_reasoner *r, uint64_t node_id,
                                    struct vigil_wire_state *out)
{
    /* The counts go in as issues rather than as children: the rule counts
     * both alike, and the counts are already made. */
    struct vigil_reasoner_input input = {0};
    memcpy(input.issues, r->counted, sizeof input.issues);
    struct node_state *n = g_hash_table_lookup(r->nodes, &node_id);
    struct vigil_reasoner_memory scratch = {0};
    if (n != NULL && n->counted && n->counted_state >= 1 && n->counted_state <= VIGIL_HEALTH_COUNT)
        input.issues[n->counted_state]--;
    struct vigil_reasoner_decision decision;
    vigil_reasoner_decide(&r->rule, n != NULL ? &n->others_memory : &scratch, &input, &decision);
    *out = (struct vigil_wire_state){
        .cycle = r->cycle,
        .level = VIGIL_LEVEL_SYSTEM,
        .health = decision.state,
        .bad_issues = decision.bad,
        .good_issues = decision.good,
        .other_issues = decision.other,
    };
}

guint txd_system_reasoner_nodes(const struct txd_system_reasoner *r)
{
    return g_hash_table_size(r->nodes);
}
