/* vigil-txd's system reasoner: the whole system's state counts every node
 * heard from recently; what each daemon is told leaves that daemon out, so
 * a node's own anomaly never comes back to it as the system's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "txd.h"
#include "vigil/health.h"
#include "test_main.h"

static const struct vigil_reasoner_rule default_rule = {
    .threshold = 0, .ratio = 2, .max_load = 0.95, .hold_cycles = 1};

#define SECOND_NS  INT64_C(1000000000)
#define MAX_AGE_MS 5000
#define START_NS   (1000 * SECOND_NS)

static enum vigil_health view_of(struct txd_system_reasoner *r, uint64_t node)
{
    struct vigil_wire_state out;
    txd_system_reasoner_decide_for(r, node, &out);
    assert_int_equal(out.level, VIGIL_LEVEL_SYSTEM);
    return out.health;
}

static enum vigil_health decide(struct txd_system_reasoner *r, int64_t now_ns)
{
    struct vigil_wire_state out;
    txd_system_reasoner_decide(r, now_ns, &out);
    return out.health;
}

/* Each test's reasoner, in *state. */
static int make_reasoner(void **state)
{
    *state = txd_system_reasoner_new(&default_rule, MAX_AGE_MS);
    return *state == NULL ? -1 : 0;
}

static int free_reasoner(void **state)
{
    txd_system_reasoner_free(*state);
    return 0;
}

#define WITH_REASONER(f) cmocka_unit_test_setup_teardown(f, make_reasoner, free_reasoner)

/* Nodes 1 and 2 say `one` and `two` at now_ns. */
static void hear_two(struct txd_system_reasoner *r, enum vigil_health one, enum vigil_health two,
                     int64_t now_ns)
{
    txd_system_reasoner_node_state(r, 1, one, now_ns);
    txd_system_reasoner_node_state(r, 2, two, now_ns);
}

/* The same, and the reasoner decides. */
static void decide_after_two(struct txd_system_reasoner *r, enum vigil_health one,
                             enum vigil_health two, int64_t now_ns)
{
    hear_two(r, one, two, now_ns);
    decide(r, now_ns);
}

/* One node alone, abnormal: the system is abnormal (stored, logged), but
 * the node is told the system without itself, which is nothing. Before,
 * it was told ABNORMAL_BAD: its own state, a cycle late. */
static void test_a_lone_node_does_not_hear_itself_back(void **state)
{
    struct txd_system_reasoner *r = *state;
    txd_system_reasoner_node_state(r, 1, VIGIL_HEALTH_ABNORMAL_BAD, START_NS);
    assert_int_equal(decide(r, START_NS), VIGIL_HEALTH_ABNORMAL_BAD);
    struct vigil_wire_state out;
    txd_system_reasoner_decide_for(r, 1, &out);
    assert_int_equal(out.health, VIGIL_HEALTH_OK);
    assert_int_equal(out.bad_issues, 0);
    assert_int_equal(out.good_issues, 0);
    assert_int_equal(out.other_issues, 0);
}

/* Three nodes, one abnormal: the others hear of it, it does not. */
static void test_each_node_hears_the_others(void **state)
{
    struct txd_system_reasoner *r = *state;
    hear_two(r, VIGIL_HEALTH_ABNORMAL_BAD, VIGIL_HEALTH_OK, START_NS);
    txd_system_reasoner_node_state(r, 3, VIGIL_HEALTH_GOOD, START_NS);
    /* All three: one bad against one good is not twice as many. */
    struct vigil_wire_state whole;
    txd_system_reasoner_decide(r, START_NS, &whole);
    assert_int_equal(whole.bad_issues, 1);
    assert_int_equal(whole.good_issues, 1);
    assert_int_equal(whole.health, VIGIL_HEALTH_ABNORMAL_OTHER);
    /* Node 1 sees only node 3's GOOD; node 3 only node 1's bad; node 2
     * both. */
    assert_int_equal(view_of(r, 1), VIGIL_HEALTH_ABNORMAL_GOOD);
    assert_int_equal(view_of(r, 2), VIGIL_HEALTH_ABNORMAL_OTHER);
    assert_int_equal(view_of(r, 3), VIGIL_HEALTH_ABNORMAL_BAD);
    /* A node the reasoner does not know sees every node. */
    assert_int_equal(view_of(r, 99), VIGIL_HEALTH_ABNORMAL_OTHER);
}

/* What is left out is the node's state as it was counted, even when the
 * node has said something new since the decision. */
static void test_a_new_state_after_the_decision_leaves_the_counted_one_out(void **state)
{
    struct txd_system_reasoner *r = *state;
    decide_after_two(r, VIGIL_HEALTH_ABNORMAL_BAD, VIGIL_HEALTH_OK, START_NS);
    txd_system_reasoner_node_state(r, 1, VIGIL_HEALTH_OK, START_NS + SECOND_NS);
    txd_system_reasoner_node_state(r, 3, VIGIL_HEALTH_ABNORMAL_BAD, START_NS + SECOND_NS);
    /* Node 1's counted ABNORMAL_BAD is out; node 3 was not counted yet. */
    assert_int_equal(view_of(r, 1), VIGIL_HEALTH_OK);
    assert_int_equal(view_of(r, 3), VIGIL_HEALTH_ABNORMAL_BAD);
}

/* Each node's view is held like any reasoner's state: one cycle after its
 * cause (hold_cycles 1), in that node's own memory. */
static void test_each_view_is_held_in_its_own_memory(void **state)
{
    struct txd_system_reasoner *r = *state;
    int64_t now = START_NS;
    decide_after_two(r, VIGIL_HEALTH_ABNORMAL_BAD, VIGIL_HEALTH_OK, now);
    assert_int_equal(view_of(r, 2), VIGIL_HEALTH_ABNORMAL_BAD);
    assert_int_equal(view_of(r, 1), VIGIL_HEALTH_OK);
    /* Node 1 is OK again: node 2 still hears ABNORMAL_BAD for one cycle,
     * node 1 never did. */
    now += SECOND_NS;
    decide_after_two(r, VIGIL_HEALTH_OK, VIGIL_HEALTH_OK, now);
    assert_int_equal(view_of(r, 2), VIGIL_HEALTH_ABNORMAL_BAD);
    assert_int_equal(view_of(r, 1), VIGIL_HEALTH_OK);
    now += SECOND_NS;
    decide_after_two(r, VIGIL_HEALTH_OK, VIGIL_HEALTH_OK, now);
    assert_int_equal(view_of(r, 2), VIGIL_HEALTH_OK);
}

/* A node not heard from within max_age counts in nobody's view. */
static void test_a_silent_node_is_left_out_of_every_view(void **state)
{
    struct txd_system_reasoner *r = *state;
    txd_system_reasoner_node_state(r, 1, VIGIL_HEALTH_ABNORMAL_BAD, START_NS);
    txd_system_reasoner_node_state(r, 2, VIGIL_HEALTH_OK, START_NS + 10 * SECOND_NS);
    assert_int_equal(decide(r, START_NS + 10 * SECOND_NS), VIGIL_HEALTH_OK);
    assert_int_equal(txd_system_reasoner_nodes(r), 1);
    assert_int_equal(view_of(r, 2), VIGIL_HEALTH_OK);
}

TEST_MAIN(WITH_REASONER(test_a_lone_node_does_not_hear_itself_back),
          WITH_REASONER(test_each_node_hears_the_others),
          WITH_REASONER(test_a_new_state_after_the_decision_leaves_the_counted_one_out),
          WITH_REASONER(test_each_view_is_held_in_its_own_memory),
          WITH_REASONER(test_a_silent_node_is_left_out_of_every_view))
