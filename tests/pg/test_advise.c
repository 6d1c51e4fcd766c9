/* `vigil advise` against a warehouse holding synthetic runs whose roll-ups
 * were made from known Fluid-model parameters: it prints those parameters
 * back and the frequency of least energy; with one run, with runs of two
 * programs, at one frequency, with estimated energy or without a frequency
 * it says what is missing.
 *
 * Node 1: ior, runs 1 (2.4 GHz) and 2 (1.5 GHz), and 5 (2.4 GHz again),
 *   made from F_max 3 GHz, D(F_max) 100 s, α 0.8, P_static 100 W, P_dyn
 *   200 W, c 3: each run at one frequency, so c cannot be fitted.
 * Node 2: stream, runs 3 (1.8/2.2 GHz alternating each second, 2.0 on
 *   average) and 4 (2.3/2.7, 2.5 on average), made from D(F_max) 80 s, α
 *   0.5, P_static 80 W, P_dyn 150 W, c 2.5: four frequencies, c fitted.
 * Node 3: ior, run 6, whose energy is an estimate and which has no
 *   cpu.frequency_hz.
 * Nodes 4 and 5: lulesh, runs 7 and 8, runs 3 and 4 on two nodes.
 * Around each run: 5 s of idle windows (40 W at 1.2 GHz) that must not
 * count. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_warehouse.h"
#include "vigil/warehouse.h"

#define F_MAX_HZ 3e9

struct truth {
    double duration_at_max_s, alpha, static_power_w, dynamic_power_w, exponent;
};

static const struct truth ior = {100, 0.8, 100, 200, 3};
static const struct truth stream = {80, 0.5, 80, 150, 2.5};

static double duration_s(const struct truth *t, double f)
{
    return ((1 - t->alpha) + t->alpha * F_MAX_HZ / f) * t->duration_at_max_s;
}

static const char *conninfo(void)
{
    return test_pg_conninfo(&test_pg_cluster);
}

/* A run of `program` on `nodes` nodes from `first_node` on, from `start`
 * for `seconds`, each second at frequency a or b in turn, its power shared
 * evenly by its nodes, with its energy in metric `energy_metric`;
 * cpu.frequency_hz only when `with_frequency`. */
static void add_run(int run_id, const char *program, int first_node, int nodes, const char *start,
                    int seconds, double a_hz, double b_hz, const struct truth *t, int energy_metric,
                    gboolean with_frequency)
{
    char *sql = g_strdup_printf(
        "INSERT INTO runs (run_id, run_key, program, argv, uid, start_time, end_time,"
        " exit_status) VALUES (%d, 'advise-%d', '%s', ARRAY['%s', '-x'], 0, '%s',"
        " timestamptz '%s' + %d * interval '1 s', 0);"
        "INSERT INTO processes (run_id, node_id, pid, uid, program, argv, cwd, start_time,"
        " start_monotonic_ns, end_time, exit_status) SELECT run_id, n, 1000 + 10 * run_id + n,"
        " 0, program, argv, '/tmp', start_time, run_id, end_time, 0"
        "   FROM runs, generate_series(%d, %d) n WHERE run_id = %d;"
        "INSERT INTO statistics_rollups (node_id, metric_id, start_time, end_time, samples, min,"
        " mean, max, delta, uncertain)"
        " SELECT n, metric_id, t, t + interval '1 s', 10, v, v, v,"
        "        CASE WHEN metric_id = %d THEN v END, false"
        "   FROM (SELECT t, inside, CASE WHEN NOT inside THEN 1.2e9 WHEN i %% 2 = 0 THEN %.17g"
        "                ELSE %.17g END AS f"
        "           FROM generate_series(-5, %d + 4) i,"
        "                LATERAL (SELECT timestamptz '%s' + i * interval '1 s' AS t,"
        "                                i >= 0 AND i < %d AS inside) x) w,"
        "        generate_series(%d, %d) n,"
        "        LATERAL (VALUES (%d, CASE WHEN inside THEN (%.17g + %.17g"
        "                                  * power(f / %.17g, %.17g)) / %d ELSE 40 END),"
        "                        (3, f), (4, 1.2e9), (5, %.17g)) AS m (metric_id, v)"
        "  WHERE metric_id <> 3 OR %s",
        run_id, run_id, program, program, start, start, seconds, first_node, first_node + nodes - 1,
        run_id, energy_metric, a_hz, b_hz, seconds, start, seconds, first_node,
        first_node + nodes - 1, energy_metric, t->static_power_w, t->dynamic_power_w, F_MAX_HZ,
        t->exponent, nodes, F_MAX_HZ, with_frequency ? "true" : "false");
    test_pg_exec_in(conninfo(), sql);
    g_free(sql);
}

static void load_runs(void)
{
    PGconn *db = test_pg_connect(&test_pg_cluster);
    GError *error = NULL;
    if (!vigil_warehouse_migrate(db, NULL, &error))
        fail_msg("migrating: %s", error->message);
    PQfinish(db);
    test_pg_exec_in(conninfo(),
                    "DO $$ BEGIN PERFORM vigil_day_partition('statistics_rollups',"
                    " DATE '2026-11-20'); END $$;"
                    "INSERT INTO nodes (node_id, hostname) VALUES (1, 'n1'), (2, 'n2'),"
                    " (3, 'n3'), (4, 'n4'), (5, 'n5');"
                    "INSERT INTO metrics (metric_id, name, unit, kind, source, origin) VALUES"
                    " (1, 'node.energy_j', 'J', 'counter', 'vigild/energy-share', 'measured'),"
                    " (2, 'node.energy_j', 'J', 'counter', 'vigild/energy-share', 'estimated'),"
                    " (3, 'cpu.frequency_hz', 'Hz', 'gauge', 'cpufreq', 'measured'),"
                    " (4, 'cpu.frequency_min_hz', 'Hz', 'gauge', 'cpufreq', 'measured'),"
                    " (5, 'cpu.frequency_max_hz', 'Hz', 'gauge', 'cpufreq', 'measured');");
    /* Whole seconds by design: D(2.4 GHz) = 120 s, D(1.5 GHz) = 180 s;
     * D(2.0 GHz) = 100 s, D(2.5 GHz) = 88 s. */
    assert_true(duration_s(&ior, 2.4e9) == 120 && duration_s(&ior, 1.5e9) == 180);
    assert_true(fabs(duration_s(&stream, 2.0e9) - 100) < 1e-9 &&
                fabs(duration_s(&stream, 2.5e9) - 88) < 1e-9);
    add_run(1, "ior", 1, 1, "2026-11-20 10:00:00Z", 120, 2.4e9, 2.4e9, &ior, 1, TRUE);
    add_run(2, "ior", 1, 1, "2026-11-20 11:00:00Z", 180, 1.5e9, 1.5e9, &ior, 1, TRUE);
    add_run(3, "stream", 2, 1, "2026-11-20 10:00:00Z", 100, 1.8e9, 2.2e9, &stream, 1, TRUE);
    add_run(4, "stream", 2, 1, "2026-11-20 11:00:00Z", 88, 2.3e9, 2.7e9, &stream, 1, TRUE);
    add_run(5, "ior", 1, 1, "2026-11-20 12:00:00Z", 120, 2.4e9, 2.4e9, &ior, 1, TRUE);
    add_run(6, "ior", 3, 1, "2026-11-20 10:00:00Z", 120, 2.4e9, 2.4e9, &ior, 2, FALSE);
    add_run(7, "lulesh", 4, 2, "2026-11-20 10:00:00Z", 100, 1.8e9, 2.2e9, &stream, 1, TRUE);
    add_run(8, "lulesh", 4, 2, "2026-11-20 11:00:00Z", 88, 2.3e9, 2.7e9, &stream, 1, TRUE);
}

/* The frequency of least energy of `t` among 1.2 … 3.0 GHz in 100 MHz
 * steps, found here independently of the model's code. */
static double least_energy_hz(const struct truth *t)
{
    double best = INFINITY, best_hz = 0;
    for (int k = 12; k <= 30; k++) {
        double f = k * 1e8;
        double energy = (t->static_power_w + t->dynamic_power_w * pow(f / F_MAX_HZ, t->exponent)) *
                        duration_s(t, f);
        if (energy < best) {
            best = energy;
            best_hz = f;
        }
    }
    return best_hz;
}

/* `vigil advise WORDS…` (up to a NULL), the status it must exit with, and
 * what its stdout (its stderr, when `on_err`) must hold. */
struct advice {
    const char *words[8];
    int status;
    gboolean on_err;
    const char *holds[16];
};

static struct test_run advise(const struct advice *a)
{
    const char *const *w = a->words;
    struct test_run r = test_run_vigil_on_warehouse(conninfo(), "advise", w[0], w[1], w[2], w[3],
                                                    w[4], w[5], w[6], NULL);
    char *words = g_strjoinv(" ", (char **)w);
    char *what = g_strdup_printf("vigil advise %s", words);
    test_assert_status(&r, a->status, what);
    for (const char *const *h = a->holds; *h != NULL; h++)
        test_assert_contains(a->on_err ? r.err : r.out, *h);
    g_free(what);
    g_free(words);
    return r;
}

/* The model's parameters `out` prints are those the runs were made from. */
static void assert_prints_truth(const char *out, const struct truth *t)
{
    char *lines[] = {
        g_strdup_printf("D(F_max)  %.3f s", t->duration_at_max_s),
        g_strdup_printf("α         %.4f", t->alpha),
        g_strdup_printf("P_static  %.2f W", t->static_power_w),
        g_strdup_printf("P_dyn     %.2f W", t->dynamic_power_w),
    };
    for (size_t i = 0; i < G_N_ELEMENTS(lines); i++) {
        test_assert_contains(out, lines[i]);
        g_free(lines[i]);
    }
}

static void advise_each(const struct advice *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct test_run r = advise(&cases[i]);
        test_run_clear(&r);
    }
}

static void test_two_runs_at_one_frequency_each(void **state)
{
    (void)state;
    assert_true(least_energy_hz(&ior) == 1.8e9);
    static const struct advice cases[] = {
        {{"1", "--against", "2"},
         0,
         FALSE,
         {"MODEL ESTIMATE", "Run 1 (advise-1): ior -x",
          "time 120.000 s on 1 node, mean power 202.40 W, energy 24288.0 J "
          "(node.energy_j, measured)",
          "mean CPU frequency 2.400 GHz (cpu.frequency_hz, 120 roll-ups)",
          "mean CPU frequency 1.500 GHz (cpu.frequency_hz, 180 roll-ups)", "F_max     3.000 GHz",
          "c         3.000 (fixed, not fitted: the runs' per-second frequency took 2 values",
          "1.200 to 3.000 GHz in 100 MHz steps, assumed",
          "Least energy (model estimate): 1.800 GHz"}},
        /* The same as JSON; --exponent changes the fixed c. */
        {{"advise-2", "--against", "advise-1", "--format", "json", "--exponent", "2"},
         0,
         FALSE,
         {"\"alpha\":0.8", "\"duration_at_max_s\":100", "\"exponent\":2",
          "\"exponent_fitted\":false", "\"estimate\":\"model"}},
    };
    struct test_run r = advise(&cases[0]);
    assert_prints_truth(r.out, &ior);
    test_run_clear(&r);
    advise_each(&cases[1], 1);
}

static void test_runs_whose_frequency_varied_give_the_exponent(void **state)
{
    (void)state;
    static const struct advice varied = {
        {"3", "--against", "4"},
        0,
        FALSE,
        {"mean CPU frequency 2.000 GHz", "mean CPU frequency 2.500 GHz",
         "c         2.500 (fitted to 188 per-second points at 4 frequencies, rms 0.00 W)"}};
    struct test_run r = advise(&varied);
    assert_prints_truth(r.out, &stream);
    char *want =
        g_strdup_printf("Least energy (model estimate): %.3f GHz", least_energy_hz(&stream) / 1e9);
    test_assert_contains(r.out, want);
    g_free(want);
    test_run_clear(&r);
}

/* Runs 7 and 8 are runs 3 and 4 spread over two nodes, each drawing half
 * the power: the nodes' energy adds up, and each node's per-second power
 * counts for both. */
static void test_a_run_on_two_nodes_is_their_sum(void **state)
{
    (void)state;
    static const struct advice spread = {
        {"7", "--against", "8"},
        0,
        FALSE,
        {"time 100.000 s on 2 nodes, mean power 135.45 W",
         "c         2.500 (fitted to 376 per-second points at 4 frequencies, rms 0.00 W)"}};
    struct test_run r = advise(&spread);
    assert_prints_truth(r.out, &stream);
    test_run_clear(&r);
}

static void test_what_is_missing_is_said(void **state)
{
    (void)state;
    static const struct advice cases[] = {
        /* One run: the second is missing, and the program's other runs named. */
        {{"1"},
         1,
         FALSE,
         {"mean power 202.40 W",
          "Missing:", "a second run of ior at another CPU frequency (--against RUN2)",
          "Other runs of ior", "  2 (advise-2), 180.000 s at 1.500 GHz",
          "  6 (advise-6), 120.000 s, no cpu.frequency_hz"}},
        {{"1", "--format", "json"}, 1, FALSE, {"\"model\":null", "a second run of ior"}},
        /* Two programs. */
        {{"1", "--against", "3"}, 1, FALSE, {"run 1 is ior and run 3 is stream"}},
        /* One frequency. */
        {{"1", "--against", "5"}, 1, FALSE, {"the two runs ran at the same frequency"}},
        /* An estimated energy and no frequency. */
        {{"6", "--against", "2"},
         1,
         FALSE,
         {"(node.energy_j, ESTIMATED)",
          "run 6: its energy (node.energy_j) is estimated in 120 of 120 roll-ups",
          "run 6: no cpu.frequency_hz roll-ups"}},
        /* No such run; a bad option. */
        {{"99"}, 1, TRUE, {"the warehouse has no run 99"}},
        {{"1", "--format", "xml"}, 2, TRUE, {"--format xml: expected text or json"}},
        {{NULL}, 2, TRUE, {"usage: vigil advise RUN [--against RUN2]"}},
        {{"1", "--exponent", "7"}, 2, TRUE, {"--exponent 7: expected a number in [0.5, 6]"}},
    };
    advise_each(cases, G_N_ELEMENTS(cases));
}

static int setup(void **state)
{
    return test_pg_group_setup_and(state, load_runs);
}

TEST_PG_MAIN(setup, test_pg_group_teardown, cmocka_unit_test(test_two_runs_at_one_frequency_each),
             cmocka_unit_test(test_runs_whose_frequency_varied_give_the_exponent),
             cmocka_unit_test(test_a_run_on_two_nodes_is_their_sum),
             cmocka_unit_test(test_what_is_missing_is_said))
