/* The reasoners' rule (Listing 2 of the SIOX paper), its hold, the split
 * between the state capture acts on and the one told upward, Overloaded,
 * and the reasoner plugins' configuration and reload. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "vigil/reasoner.h"
#include "vigil/schema.h"

#include "test_support.h"
#include "test_main.h"

static const struct vigil_reasoner_rule default_rule = {
    .threshold = 0, .ratio = 2, .max_load = 0.95, .hold_cycles = 1};

/* Under `rule`, a cycle with one issue of `health` and then a quiet one:
 * what each decided. */
static void decide_issue_then_quiet(const struct vigil_reasoner_rule *rule,
                                    struct vigil_reasoner_memory *memory, enum vigil_health health,
                                    struct vigil_reasoner_decision *after_issue,
                                    struct vigil_reasoner_decision *after_quiet)
{
    struct vigil_reasoner_input issue = {0}, quiet = {0};
    issue.issues[health] = 1;
    vigil_reasoner_decide(rule, memory, &issue, after_issue);
    vigil_reasoner_decide(rule, memory, &quiet, after_quiet);
}

static void test_truth_table(void **state)
{
    (void)state;
    const struct vigil_reasoner_rule rule = {.threshold = 2, .ratio = 2, .hold_cycles = 1};
    const struct {
        uint32_t bad, good, other;
        enum vigil_health want;
    } rows[] = {
        {0, 0, 0, VIGIL_HEALTH_OK},
        /* At or under the threshold: the milder states. */
        {2, 0, 0, VIGIL_HEALTH_BAD},
        {0, 2, 0, VIGIL_HEALTH_GOOD},
        {1, 1, 0, VIGIL_HEALTH_OK},
        {1, 0, 1, VIGIL_HEALTH_BAD},
        {0, 0, 2, VIGIL_HEALTH_OK},
        /* Over it: whichever side outweighs the other ratio times. */
        {3, 0, 0, VIGIL_HEALTH_ABNORMAL_BAD},
        {3, 1, 0, VIGIL_HEALTH_ABNORMAL_BAD},
        {0, 3, 0, VIGIL_HEALTH_ABNORMAL_GOOD},
        {1, 3, 0, VIGIL_HEALTH_ABNORMAL_GOOD},
        /* Neither outweighs: ABNORMAL_OTHER. */
        {4, 2, 0, VIGIL_HEALTH_ABNORMAL_OTHER},
        {3, 3, 0, VIGIL_HEALTH_ABNORMAL_OTHER},
        {2, 3, 0, VIGIL_HEALTH_ABNORMAL_OTHER},
        {0, 0, 3, VIGIL_HEALTH_ABNORMAL_OTHER},
        {1, 1, 1, VIGIL_HEALTH_ABNORMAL_OTHER},
        {5, 2, 0, VIGIL_HEALTH_ABNORMAL_BAD},
        /* "Other" issues do not count for either side. */
        {3, 0, 9, VIGIL_HEALTH_ABNORMAL_BAD},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
        enum vigil_health got =
            vigil_reasoner_rule_apply(&rule, rows[i].bad, rows[i].good, rows[i].other);
        if (got != rows[i].want)
            fail_msg("bad %u good %u other %u: got %s, want %s", rows[i].bad, rows[i].good,
                     rows[i].other, vigil_health_name(got), vigil_health_name(rows[i].want));
    }
}

static void test_issues_children_and_parent_are_counted(void **state)
{
    (void)state;
    struct vigil_reasoner_memory memory = {0};
    struct vigil_reasoner_decision d;
    enum vigil_health children[] = {VIGIL_HEALTH_ABNORMAL_BAD, VIGIL_HEALTH_OK, VIGIL_HEALTH_GOOD};
    struct vigil_reasoner_input in = {.children = children, .n_children = 3};
    in.issues[VIGIL_HEALTH_BAD] = 2;
    in.issues[VIGIL_HEALTH_ABNORMAL_OTHER] = 1;
    in.issues[VIGIL_HEALTH_OK] = 7; /* OK issues count for nothing */
    vigil_reasoner_decide(&default_rule, &memory, &in, &d);
    assert_int_equal(d.bad, 3);
    assert_int_equal(d.good, 1);
    assert_int_equal(d.other, 1);
    assert_int_equal(d.state, VIGIL_HEALTH_ABNORMAL_BAD);
    assert_int_equal(d.upward, VIGIL_HEALTH_ABNORMAL_BAD);
    assert_false(d.held);
}

static void test_own_leaves_children_out(void **state)
{
    (void)state;
    struct vigil_reasoner_memory memory = {0};
    struct vigil_reasoner_decision d;
    enum vigil_health children[] = {VIGIL_HEALTH_ABNORMAL_BAD};
    struct vigil_reasoner_input in = {.children = children, .n_children = 1};
    vigil_reasoner_decide(&default_rule, &memory, &in, &d);
    assert_int_equal(d.own, VIGIL_HEALTH_OK);
    assert_int_equal(d.upward, VIGIL_HEALTH_ABNORMAL_BAD);
    assert_int_equal(d.state, VIGIL_HEALTH_ABNORMAL_BAD);
    /* Its own issues and load make `own` abnormal, and it is held. */
    struct vigil_reasoner_decision quiet;
    decide_issue_then_quiet(&default_rule, &memory, VIGIL_HEALTH_ABNORMAL_GOOD, &d, &quiet);
    assert_int_equal(d.own, VIGIL_HEALTH_ABNORMAL_GOOD);
    assert_false(d.own_held);
    assert_int_equal(quiet.own, VIGIL_HEALTH_ABNORMAL_GOOD);
    assert_true(quiet.own_held);
    assert_int_equal(quiet.own_raw, VIGIL_HEALTH_OK);
}

static void test_parent_counts_in_state_not_upward(void **state)
{
    (void)state;
    struct vigil_reasoner_memory memory = {0};
    struct vigil_reasoner_decision d;
    struct vigil_reasoner_input in = {.parent = VIGIL_HEALTH_ABNORMAL_BAD};
    vigil_reasoner_decide(&default_rule, &memory, &in, &d);
    /* Told upward, the parent's own state would come back to it and keep
     * it abnormal for ever. */
    assert_int_equal(d.state, VIGIL_HEALTH_ABNORMAL_BAD);
    assert_int_equal(d.upward, VIGIL_HEALTH_OK);
}

static void test_abnormal_state_is_held_one_cycle(void **state)
{
    (void)state;
    struct vigil_reasoner_memory memory = {0};
    struct vigil_reasoner_decision bad, d;
    decide_issue_then_quiet(&default_rule, &memory, VIGIL_HEALTH_ABNORMAL_BAD, &bad, &d);
    assert_int_equal(bad.state, VIGIL_HEALTH_ABNORMAL_BAD);
    assert_false(bad.held);
    assert_int_equal(d.state, VIGIL_HEALTH_ABNORMAL_BAD);
    assert_int_equal(d.upward, VIGIL_HEALTH_ABNORMAL_BAD);
    assert_true(d.held);
    assert_true(d.upward_held);
    const struct vigil_reasoner_input quiet = {0};
    vigil_reasoner_decide(&default_rule, &memory, &quiet, &d);
    assert_int_equal(d.state, VIGIL_HEALTH_OK);
    assert_false(d.held);
    assert_int_equal(memory.cycles, 3);
    assert_int_equal(memory.abnormal_cycles, 2);
    /* With hold_cycles 0, nothing is held. */
    struct vigil_reasoner_rule no_hold = default_rule;
    no_hold.hold_cycles = 0;
    struct vigil_reasoner_memory fresh = {0};
    decide_issue_then_quiet(&no_hold, &fresh, VIGIL_HEALTH_ABNORMAL_BAD, &bad, &d);
    assert_int_equal(d.state, VIGIL_HEALTH_OK);
}

static void test_overloaded(void **state)
{
    (void)state;
    struct vigil_reasoner_memory memory = {0};
    struct vigil_reasoner_decision d;
    const struct vigil_load load[] = {{"cpu", 0.99}, {"memory", 0.5}, {"io", 0.95}};
    struct vigil_reasoner_input in = {.load = load, .n_load = 3};
    vigil_reasoner_decide(&default_rule, &memory, &in, &d);
    /* Only above max_load, not at it. */
    assert_int_equal(d.n_overloaded, 1);
    assert_string_equal(d.overloaded[0], "cpu");
    assert_int_equal(d.other, 1);
    assert_int_equal(d.state, VIGIL_HEALTH_ABNORMAL_OTHER);
    /* A busy node alone is no reason to capture. */
    assert_int_equal(d.own, VIGIL_HEALTH_OK);
}

/* The plugins ---------------------------------------------------------------------------------- */

struct reasoner_plugin {
    vigil_plugin_registry *registry;
    vigil_config *config;
    const struct vigil_plugin *plugin;
    const struct vigil_reasoner_ops *ops;
    void *instance;
    char *dir;
};

static vigil_config *load_text(struct reasoner_plugin *r, const char *text, GError **error)
{
    char *path = g_build_filename(r->dir, "vigil.conf", NULL);
    assert_true(g_file_set_contents(path, text, -1, NULL));
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, r->registry);
    assert_true(vigil_schema_declare(config, NULL));
    if (!vigil_config_load(config, path, error)) {
        vigil_config_free(config);
        config = NULL;
    }
    g_free(path);
    return config;
}

static void open_plugin(struct reasoner_plugin *r, const char *level, const char *text)
{
    r->dir = g_dir_make_tmp("vigil-reasoner-XXXXXX", NULL);
    r->registry = vigil_plugin_registry_new(g_getenv("VIGIL_TEST_PROVIDER_DIR"));
    GError *error = NULL;
    r->config = load_text(r, text, &error);
    assert_non_null(r->config);
    r->plugin = vigil_plugin_registry_load(r->registry, VIGIL_PLUGIN_REASONER, level, &error);
    assert_non_null(r->plugin);
    char *section = g_strconcat("reasoner.", level, NULL);
    if (!vigil_config_has_section(r->config, section))
        assert_true(vigil_plugin_registry_resolve_section(r->config, section, r->registry, NULL));
    struct vigil_plugin_context context = {.config = r->config, .section = section};
    r->instance = r->plugin->descriptor->create(&context, &error);
    assert_non_null(r->instance);
    r->ops = r->plugin->descriptor->ops;
    g_free(section);
}

static void close_plugin(struct reasoner_plugin *r)
{
    r->plugin->descriptor->destroy(r->instance);
    vigil_config_free(r->config);
    vigil_plugin_registry_free(r->registry);
    test_remove_tree(r->dir);
    g_free(r->dir);
}

static void test_plugins_levels_and_defaults(void **state)
{
    (void)state;
    const char *levels[] = {"process", "node", "system"};
    const enum vigil_level want[] = {VIGIL_LEVEL_PROCESS, VIGIL_LEVEL_NODE, VIGIL_LEVEL_SYSTEM};
    for (size_t i = 0; i < 3; i++) {
        struct reasoner_plugin r;
        open_plugin(&r, levels[i], "");
        assert_int_equal(r.ops->level, want[i]);
        const struct vigil_reasoner_rule *rule = r.ops->rule(r.instance);
        assert_true(rule->threshold == 0 && rule->ratio == 2 && rule->max_load == 0.95);
        assert_int_equal(rule->hold_cycles, 1);
        close_plugin(&r);
    }
}

static void test_reload_changes_the_decision_from_the_next_cycle(void **state)
{
    (void)state;
    struct reasoner_plugin r;
    open_plugin(&r, "node", "[reasoner.node]\nthreshold = 0\nhold_cycles = 0\n");
    struct vigil_reasoner_memory memory = {0};
    struct vigil_reasoner_decision d;
    struct vigil_reasoner_input two_bad = {0};
    two_bad.issues[VIGIL_HEALTH_BAD] = 2;
    vigil_reasoner_decide(r.ops->rule(r.instance), &memory, &two_bad, &d);
    assert_int_equal(d.state, VIGIL_HEALTH_ABNORMAL_BAD);
    /* The admin raises the threshold: the same issues are no longer
     * abnormal, and the memory (cycles counted) stays. */
    GError *error = NULL;
    vigil_config *raised =
        load_text(&r, "[reasoner.node]\nthreshold = 2\nhold_cycles = 0\n", &error);
    assert_non_null(raised);
    struct vigil_plugin_context context = {.config = raised, .section = "reasoner.node"};
    assert_true(r.ops->reconfigure(r.instance, &context, &error));
    vigil_reasoner_decide(r.ops->rule(r.instance), &memory, &two_bad, &d);
    assert_int_equal(d.state, VIGIL_HEALTH_BAD);
    assert_int_equal(memory.cycles, 2);
    assert_int_equal(memory.abnormal_cycles, 1);
    vigil_config_free(raised);
    close_plugin(&r);
}

static void test_bad_values_are_refused_by_name(void **state)
{
    (void)state;
    struct reasoner_plugin r;
    open_plugin(&r, "process", "");
    GError *error = NULL;
    assert_null(load_text(&r, "[reasoner.process]\nratio = 0.5\n", &error));
    assert_non_null(strstr(error->message, "[reasoner.process] ratio"));
    g_clear_error(&error);
    assert_null(load_text(&r, "[reasoner.system]\nadpis = drift\n", &error));
    assert_non_null(strstr(error->message, "adpis"));
    g_clear_error(&error);
    assert_null(load_text(&r, "[reasoner.node]\nmax_load = lots\n", &error));
    assert_non_null(strstr(error->message, "max_load"));
    g_clear_error(&error);
    close_plugin(&r);
}

TEST_MAIN(cmocka_unit_test(test_truth_table),
          cmocka_unit_test(test_issues_children_and_parent_are_counted),
          cmocka_unit_test(test_own_leaves_children_out),
          cmocka_unit_test(test_parent_counts_in_state_not_upward),
          cmocka_unit_test(test_abnormal_state_is_held_one_cycle),
          cmocka_unit_test(test_overloaded), cmocka_unit_test(test_plugins_levels_and_defaults),
          cmocka_unit_test(test_reload_changes_the_decision_from_the_next_cycle),
          cmocka_unit_test(test_bad_values_are_refused_by_name))
