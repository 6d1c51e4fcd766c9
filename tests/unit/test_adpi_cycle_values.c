/* Tests of the helpers every ADPI shares (core/adpi.c): per-cycle values
 * of metrics, per-metric tables, name globs, issues and running
 * statistics. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "vigil/adpi.h"
#include "test_main.h"

#define S 1000000000ull

struct fixture {
    vigil_metric_catalog *catalog;
    struct vigil_cycle_values values;
    guint32 gauge, counter, other;
};

static int setup(void **state)
{
    struct fixture *f = g_new0(struct fixture, 1);
    f->catalog = vigil_metric_catalog_new();
    f->gauge = vigil_metric_register(f->catalog, "mem.free_bytes", "bytes", VIGIL_METRIC_GAUGE,
                                     "test", VIGIL_METRIC_MEASURED, NULL);
    f->counter = vigil_metric_register(f->catalog, "energy.pkg0_j", "J", VIGIL_METRIC_COUNTER,
                                       "test", VIGIL_METRIC_MEASURED, NULL);
    f->other = vigil_metric_register(f->catalog, "cpu.user_s", "s", VIGIL_METRIC_COUNTER, "test",
                                     VIGIL_METRIC_MEASURED, NULL);
    assert_true(f->gauge != 0 && f->counter != 0 && f->other != 0);
    vigil_cycle_values_init(&f->values);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    vigil_cycle_values_clear(&f->values);
    vigil_metric_catalog_free(f->catalog);
    g_free(f);
    return 0;
}

/* A test given a struct fixture in *state. */
#define WITH_VALUES(test) cmocka_unit_test_setup_teardown(test, setup, teardown)

static void add(struct fixture *f, guint32 id, guint64 t_ns, double value)
{
    struct vigil_sample s = {.metric_id = id, .t_ns = t_ns, .value = value};
    vigil_cycle_values_add(&f->values, f->catalog, &s, 1);
}

static const struct vigil_cycle_metric *get(struct fixture *f, guint32 id)
{
    const struct vigil_cycle_metric *m = vigil_cycle_values_get(&f->values, id);
    if (m == NULL)
        fail_msg("metric %u has no state", id);
    return m;
}

static double value_of(struct fixture *f, guint32 id)
{
    double value;
    if (!vigil_cycle_metric_value(get(f, id), &value))
        fail_msg("metric %u has no value this cycle", id);
    return value;
}

static double delta_of(struct fixture *f, guint32 id)
{
    double delta;
    if (!vigil_cycle_metric_delta(get(f, id), &delta))
        fail_msg("metric %u has no increase this cycle", id);
    return delta;
}

static void test_a_gauge_is_its_mean(void **state)
{
    struct fixture *f = *state;
    add(f, f->gauge, 1 * S, 1);
    add(f, f->gauge, 2 * S, 2);
    add(f, f->gauge, 3 * S, 6);
    const struct vigil_cycle_metric *m = get(f, f->gauge);
    assert_int_equal(m->metric_id, f->gauge);
    assert_int_equal(m->kind, VIGIL_METRIC_GAUGE);
    assert_int_equal(m->n, 3);
    assert_true(m->first == 1 && m->last == 6 && m->sum == 9);
    assert_true(m->first_t_ns == 1 * S && m->last_t_ns == 3 * S);
    assert_true(value_of(f, f->gauge) == 3.0);
    /* A gauge going down is no counter going back, and has no increase. */
    assert_false(m->went_back);
    double delta;
    assert_false(vigil_cycle_metric_delta(m, &delta));

    vigil_cycle_values_next(&f->values);
    add(f, f->gauge, 4 * S, 10);
    assert_true(value_of(f, f->gauge) == 10.0);
    assert_true(get(f, f->gauge)->has_before && get(f, f->gauge)->before == 6);
}

static void test_a_counter_is_its_rate_per_second(void **state)
{
    struct fixture *f = *state;
    /* No cycle before: from the first sample to the last. */
    add(f, f->counter, 10 * S, 100);
    add(f, f->counter, 10 * S + S / 2, 115);
    assert_true(value_of(f, f->counter) == 30.0);
    assert_true(delta_of(f, f->counter) == 15.0);
    vigil_cycle_values_next(&f->values);

    /* From the last sample of the cycle before: 45 J over 1.5 s. */
    add(f, f->counter, 11 * S, 120);
    add(f, f->counter, 12 * S, 160);
    const struct vigil_cycle_metric *m = get(f, f->counter);
    assert_true(m->has_before && m->before == 115 && m->before_t_ns == 10 * S + S / 2);
    assert_true(value_of(f, f->counter) == 30.0);
    assert_true(delta_of(f, f->counter) == 45.0);
}

static void test_a_single_sample_ever_gives_no_rate(void **state)
{
    struct fixture *f = *state;
    add(f, f->counter, 1 * S, 100);
    double x;
    assert_false(vigil_cycle_metric_value(get(f, f->counter), &x));
    assert_false(vigil_cycle_metric_delta(get(f, f->counter), &x));
    /* Nor do two samples at one time. */
    add(f, f->counter, 1 * S, 100);
    assert_false(vigil_cycle_metric_value(get(f, f->counter), &x));
    assert_true(delta_of(f, f->counter) == 0.0);
}

static void test_a_counter_that_goes_back_is_flagged(void **state)
{
    struct fixture *f = *state;
    add(f, f->counter, 1 * S, 100);
    vigil_cycle_values_next(&f->values);
    /* Lower than the cycle before's last, then growing again. */
    add(f, f->counter, 2 * S, 40);
    add(f, f->counter, 3 * S, 50);
    assert_true(get(f, f->counter)->went_back);
    double x;
    assert_false(vigil_cycle_metric_value(get(f, f->counter), &x));
    assert_false(vigil_cycle_metric_delta(get(f, f->counter), &x));
    vigil_cycle_values_next(&f->values);

    /* The next cycle's rate starts from where it went back to. */
    add(f, f->counter, 4 * S, 60);
    assert_false(get(f, f->counter)->went_back);
    assert_true(value_of(f, f->counter) == 10.0);
    vigil_cycle_values_next(&f->values);

    /* Within one cycle too. */
    add(f, f->counter, 5 * S, 70);
    add(f, f->counter, 6 * S, 65);
    assert_true(get(f, f->counter)->went_back);
}

static void test_the_uncertain_flag_is_kept_for_the_cycle(void **state)
{
    struct fixture *f = *state;
    struct vigil_sample s[] = {
        {.metric_id = f->counter, .t_ns = 1 * S, .value = 1},
        {.metric_id = f->counter, .t_ns = 2 * S, .value = 2, .flags = VIGIL_SAMPLE_UNCERTAIN},
        {.metric_id = f->counter, .t_ns = 3 * S, .value = 3},
    };
    vigil_cycle_values_add(&f->values, f->catalog, s, G_N_ELEMENTS(s));
    assert_int_equal(get(f, f->counter)->flags, VIGIL_SAMPLE_UNCERTAIN);
    vigil_cycle_values_next(&f->values);
    add(f, f->counter, 4 * S, 4);
    assert_int_equal(get(f, f->counter)->flags, 0);
}

static void test_unchanged_cycles_are_counted(void **state)
{
    struct fixture *f = *state;
    /* The first cycle has nothing to be unchanged from. */
    add(f, f->gauge, 1 * S, 7);
    add(f, f->gauge, 1 * S + 1, 7);
    vigil_cycle_values_next(&f->values);
    assert_int_equal(get(f, f->gauge)->cycles_unchanged, 0);
    for (guint32 i = 1; i <= 3; i++) {
        add(f, f->gauge, (1 + i) * S, 7);
        assert_false(get(f, f->gauge)->changed);
        vigil_cycle_values_next(&f->values);
        assert_int_equal(get(f, f->gauge)->cycles_unchanged, i);
    }
    /* A change in the middle of a cycle ends the run, though it ends where
     * it began. */
    add(f, f->gauge, 10 * S, 8);
    add(f, f->gauge, 11 * S, 7);
    assert_true(get(f, f->gauge)->changed);
    vigil_cycle_values_next(&f->values);
    assert_int_equal(get(f, f->gauge)->cycles_unchanged, 0);
    add(f, f->gauge, 12 * S, 7);
    vigil_cycle_values_next(&f->values);
    assert_int_equal(get(f, f->gauge)->cycles_unchanged, 1);
    /* So does a cycle without a sample. */
    vigil_cycle_values_next(&f->values);
    assert_int_equal(get(f, f->gauge)->cycles_unchanged, 0);
}

static void test_missing_cycles_are_counted(void **state)
{
    struct fixture *f = *state;
    /* Never sampled: no state at all. */
    assert_null(vigil_cycle_values_get(&f->values, f->other));
    assert_null(vigil_cycle_values_get(&f->values, 999));
    assert_null(vigil_cycle_values_get(&f->values, 0));
    vigil_cycle_values_next(&f->values);
    assert_null(vigil_cycle_values_get(&f->values, f->other));

    add(f, f->other, 1 * S, 5);
    vigil_cycle_values_next(&f->values);
    assert_int_equal(get(f, f->other)->cycles_missing, 0);
    double x;
    assert_false(vigil_cycle_metric_value(get(f, f->other), &x));
    assert_int_equal(get(f, f->other)->n, 0);
    vigil_cycle_values_next(&f->values);
    assert_int_equal(get(f, f->other)->cycles_missing, 1);
    vigil_cycle_values_next(&f->values);
    assert_int_equal(get(f, f->other)->cycles_missing, 2);
    /* Back: the count starts again, and the rate spans the gap. */
    add(f, f->other, 5 * S, 9);
    assert_true(value_of(f, f->other) == 1.0);
    vigil_cycle_values_next(&f->values);
    assert_int_equal(get(f, f->other)->cycles_missing, 0);
}

static void test_a_sample_of_an_unknown_metric_is_ignored(void **state)
{
    struct fixture *f = *state;
    add(f, 77, 1 * S, 5);
    assert_null(vigil_cycle_values_get(&f->values, 77));
    add(f, 0, 1 * S, 5);
    assert_null(vigil_cycle_values_get(&f->values, 0));
}

/* A per-metric table ------------------------------------------------------------------------ */

struct entry {
    const struct vigil_metric_desc *desc;
    guint described; /* times the match function had it */
    gboolean matches;
    int kept; /* what the ADPI keeps: the table must leave it alone */
};
VIGIL_ADPI_METRICS_ENTRY(struct entry);

/* A metric table under test, and its match function's state. */
struct matcher {
    const char *const *patterns;
    GArray *ids;                     /* uint32_t, in the order the match function had them */
    struct vigil_adpi_metrics table; /* of struct entry */
};

static void matcher_init(struct matcher *m, const char *const *patterns)
{
    m->patterns = patterns;
    m->ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    vigil_adpi_metrics_init(&m->table, sizeof(struct entry));
}

static void matcher_clear(struct matcher *m)
{
    vigil_adpi_metrics_clear(&m->table);
    g_array_free(m->ids, TRUE);
}

static void match_entry(void *entry, uint32_t metric_id, void *user)
{
    struct entry *e = entry;
    struct matcher *m = user;
    assert_non_null(e->desc);
    e->described++;
    e->matches = vigil_metric_name_matches(e->desc->name, m->patterns);
    g_array_append_val(m->ids, metric_id);
}

static void see(struct fixture *f, struct matcher *m, const guint32 *ids, size_t n)
{
    struct vigil_sample samples[8] = {0};
    assert_true(n <= G_N_ELEMENTS(samples));
    for (size_t i = 0; i < n; i++)
        samples[i].metric_id = ids[i];
    vigil_adpi_metrics_see(&m->table, f->catalog, samples, n, match_entry, m);
}

static void test_a_metric_table_describes_each_id_once(void **state)
{
    struct fixture *f = *state;
    const char *const patterns[] = {"energy.*", NULL};
    struct matcher m;
    matcher_init(&m, patterns);
    assert_null(vigil_adpi_metrics_get(&m.table, f->gauge));

    const guint32 first[] = {f->counter, 0, f->counter, 4000000, f->gauge};
    see(f, &m, first, G_N_ELEMENTS(first));
    assert_int_equal(m.ids->len, 2);
    assert_int_equal(g_array_index(m.ids, uint32_t, 0), f->counter);
    assert_int_equal(g_array_index(m.ids, uint32_t, 1), f->gauge);
    struct entry *counter = vigil_adpi_metrics_get(&m.table, f->counter);
    assert_non_null(counter);
    assert_ptr_equal(counter->desc, vigil_metric_get(f->catalog, f->counter));
    assert_true(counter->matches);
    struct entry *gauge = vigil_adpi_metrics_get(&m.table, f->gauge);
    assert_non_null(gauge);
    assert_false(gauge->matches);
    /* Ids the catalogue does not know have no entry and take no room. */
    assert_null(vigil_adpi_metrics_get(&m.table, 0));
    assert_null(vigil_adpi_metrics_get(&m.table, 4000000));
    assert_null(vigil_adpi_metrics_get(&m.table, f->other));
    assert_int_equal(vigil_adpi_metrics_end(&m.table), MAX(f->counter, f->gauge) + 1);

    /* Seen again, and the table grown for another: each is described once
     * and keeps what the ADPI wrote in it. */
    counter->kept = 7;
    const guint32 second[] = {f->other, f->counter};
    see(f, &m, second, G_N_ELEMENTS(second));
    assert_int_equal(m.ids->len, 3);
    assert_int_equal(g_array_index(m.ids, uint32_t, 2), f->other);
    counter = vigil_adpi_metrics_get(&m.table, f->counter);
    assert_int_equal(counter->described, 1);
    assert_int_equal(counter->kept, 7);
    assert_int_equal(((struct entry *)vigil_adpi_metrics_get(&m.table, f->gauge))->described, 1);

    vigil_adpi_metrics_clear(&m.table);
    assert_null(vigil_adpi_metrics_get(&m.table, f->counter));
    assert_int_equal(vigil_adpi_metrics_end(&m.table), 0);
    matcher_clear(&m);
}

static void test_a_metric_registered_late_is_described_when_next_seen(void **state)
{
    struct fixture *f = *state;
    struct matcher m;
    matcher_init(&m, NULL);
    uint32_t late = vigil_metric_count(f->catalog) + 1;
    assert_null(vigil_adpi_metrics_see_id(&m.table, f->catalog, late, match_entry, &m));
    assert_int_equal(m.ids->len, 0);

    assert_int_equal(vigil_metric_register(f->catalog, "disk.sda.busy_s", "s", VIGIL_METRIC_COUNTER,
                                           "test", VIGIL_METRIC_MEASURED, NULL),
                     late);
    struct entry *e = vigil_adpi_metrics_see_id(&m.table, f->catalog, late, match_entry, &m);
    assert_non_null(e);
    assert_ptr_equal(e, vigil_adpi_metrics_get(&m.table, late));
    assert_string_equal(e->desc->name, "disk.sda.busy_s");
    assert_int_equal(e->described, 1);
    /* Without a match function the entry is only described. */
    e = vigil_adpi_metrics_see_id(&m.table, f->catalog, f->gauge, NULL, NULL);
    assert_non_null(e);
    assert_int_equal(e->described, 0);
    matcher_clear(&m);
}

static void test_rematching_hands_over_every_described_entry(void **state)
{
    struct fixture *f = *state;
    const char *const energy[] = {"energy.*", NULL};
    struct matcher m;
    matcher_init(&m, energy);
    const guint32 ids[] = {f->other, f->counter, 4000000};
    see(f, &m, ids, G_N_ELEMENTS(ids));
    assert_true(((struct entry *)vigil_adpi_metrics_get(&m.table, f->counter))->matches);

    const char *const cpu[] = {"cpu.*", NULL};
    m.patterns = cpu;
    g_array_set_size(m.ids, 0);
    vigil_adpi_metrics_rematch(&m.table, match_entry, &m);
    /* In id order, and never for an id the table has no description of. */
    assert_int_equal(m.ids->len, 2);
    assert_int_equal(g_array_index(m.ids, uint32_t, 0), MIN(f->other, f->counter));
    assert_int_equal(g_array_index(m.ids, uint32_t, 1), MAX(f->other, f->counter));
    struct entry *counter = vigil_adpi_metrics_get(&m.table, f->counter);
    assert_false(counter->matches);
    assert_int_equal(counter->described, 2);
    assert_true(((struct entry *)vigil_adpi_metrics_get(&m.table, f->other))->matches);
    assert_null(vigil_adpi_metrics_get(&m.table, f->gauge));
    matcher_clear(&m);
}

static void test_names_match_globs(void **state)
{
    (void)state;
    const char *const patterns[] = {"energy.*", "disk.*.busy_s", "mem.free_bytes", NULL};
    assert_true(vigil_metric_name_matches("energy.pkg0_j", patterns));
    assert_true(vigil_metric_name_matches("disk.sda.busy_s", patterns));
    assert_true(vigil_metric_name_matches("mem.free_bytes", patterns));
    assert_false(vigil_metric_name_matches("mem.free_bytes2", patterns));
    assert_false(vigil_metric_name_matches("disk.sda.read_bytes", patterns));
    assert_false(vigil_metric_name_matches("node.energy_j", patterns));
    const char *const none[] = {NULL};
    assert_false(vigil_metric_name_matches("energy.pkg0_j", none));
    assert_false(vigil_metric_name_matches("energy.pkg0_j", NULL));
    assert_false(vigil_metric_name_matches(NULL, patterns));
}

static void keep_issue(void *user, const struct vigil_issue *issue)
{
    GArray *issues = user;
    g_array_append_val(issues, *issue);
}

static void test_an_issue_is_filled_and_handed_over(void **state)
{
    (void)state;
    GArray *issues = g_array_new(FALSE, TRUE, sizeof(struct vigil_issue));
    struct vigil_issue_sink sink = {keep_issue, issues};
    vigil_issue_report(&sink, VIGIL_HEALTH_ABNORMAL_BAD, "posix.write", 0.5, 0, NAN, "%d %% of %s",
                       50, "calls");
    assert_int_equal(issues->len, 1);
    const struct vigil_issue *issue = &g_array_index(issues, struct vigil_issue, 0);
    assert_int_equal(issue->health, VIGIL_HEALTH_ABNORMAL_BAD);
    assert_string_equal(issue->metric, "posix.write");
    assert_true(issue->value == 0.5 && issue->expected_min == 0);
    assert_true(isnan(issue->expected_max));
    assert_string_equal(issue->message, "50 % of calls");

    /* No sink, or one without a function: nothing happens. */
    vigil_issue_report(NULL, VIGIL_HEALTH_ABNORMAL_BAD, "x", 0, 0, 0, "x");
    struct vigil_issue_sink empty = {NULL, issues};
    vigil_issue_report(&empty, VIGIL_HEALTH_ABNORMAL_BAD, "x", 0, 0, 0, "x");
    assert_int_equal(issues->len, 1);
    g_array_free(issues, TRUE);
}

static void test_long_texts_are_cut_on_a_character(void **state)
{
    (void)state;
    GArray *issues = g_array_new(FALSE, TRUE, sizeof(struct vigil_issue));
    struct vigil_issue_sink sink = {keep_issue, issues};
    char metric[300];
    memset(metric, 'm', sizeof metric - 1);
    metric[sizeof metric - 1] = '\0';
    /* 254 ASCII bytes, then µ (2 bytes) cannot fit whole in 255. */
    char *head = g_strnfill(VIGIL_ISSUE_MESSAGE_MAX - 1, 'a');
    vigil_issue_report(&sink, VIGIL_HEALTH_ABNORMAL_OTHER, metric, 1, 0, 2, "%sµs and more", head);
    const struct vigil_issue *issue = &g_array_index(issues, struct vigil_issue, 0);
    assert_int_equal(strlen(issue->metric), VIGIL_ISSUE_METRIC_MAX);
    assert_int_equal(strlen(issue->message), VIGIL_ISSUE_MESSAGE_MAX - 1);
    assert_string_equal(issue->message, head);
    assert_true(g_utf8_validate(issue->message, -1, NULL));

    /* One byte more of room: µ fits, and the cut falls after it. */
    g_free(head);
    head = g_strnfill(VIGIL_ISSUE_MESSAGE_MAX - 2, 'a');
    vigil_issue_report(&sink, VIGIL_HEALTH_ABNORMAL_OTHER, NULL, 1, 0, 2, "%sµs", head);
    issue = &g_array_index(issues, struct vigil_issue, 1);
    assert_string_equal(issue->metric, "");
    assert_int_equal(strlen(issue->message), VIGIL_ISSUE_MESSAGE_MAX);
    assert_true(g_str_has_suffix(issue->message, "µ"));
    g_free(head);
    g_array_free(issues, TRUE);
}

static void test_running_statistics(void **state)
{
    (void)state;
    struct vigil_running_stats s = {0};
    assert_true(vigil_running_stats_stddev(&s) == 0);
    vigil_running_stats_add(&s, 1);
    assert_true(s.mean == 1 && vigil_running_stats_stddev(&s) == 0);
    for (int i = 0; i < 9; i++)
        vigil_running_stats_add(&s, i % 2 == 0 ? 3 : 1);
    /* 1, 3, 1, 3…: mean 2, each 1 away, sample σ sqrt(10 / 9). */
    assert_int_equal(s.n, 10);
    assert_true(s.mean == 2);
    assert_true(s.m2 == 10);
    assert_true(vigil_running_stats_stddev(&s) == sqrt(10.0 / 9.0));
}

TEST_MAIN(WITH_VALUES(test_a_gauge_is_its_mean), WITH_VALUES(test_a_counter_is_its_rate_per_second),
          WITH_VALUES(test_a_single_sample_ever_gives_no_rate),
          WITH_VALUES(test_a_counter_that_goes_back_is_flagged),
          WITH_VALUES(test_the_uncertain_flag_is_kept_for_the_cycle),
          WITH_VALUES(test_unchanged_cycles_are_counted),
          WITH_VALUES(test_missing_cycles_are_counted),
          WITH_VALUES(test_a_sample_of_an_unknown_metric_is_ignored),
          WITH_VALUES(test_a_metric_table_describes_each_id_once),
          WITH_VALUES(test_a_metric_registered_late_is_described_when_next_seen),
          WITH_VALUES(test_rematching_hands_over_every_described_entry),
          cmocka_unit_test(test_names_match_globs),
          cmocka_unit_test(test_an_issue_is_filled_and_handed_over),
          cmocka_unit_test(test_long_texts_are_cut_on_a_character),
          cmocka_unit_test(test_running_statistics))
