/* vigild's reasoner tree with capture, replayed with the real plugins: a
 * process whose write calls slow down at known cycles gets exactly the
 * windows around them, and a reload with a new threshold changes the
 * decision from the next cycle on without the ADPIs learning again. Time
 * is the test's: ticks are fed, not waited for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "vigil/clock.h"
#include "vigil/ontology.h"
#include "vigil/schema.h"
#include "capture.h"
#include "capture_json.h"
#include "energy_share.h"
#include "reasoning.h"
#include "tick_samples.h"
#include "verdicts.h"

#include "test_daemon.h"
#include "test_support.h"
#include "test_main.h"

#define TICK_NS         (100 * VIGIL_NS_PER_MS)
#define TICKS_PER_CYCLE 10
#define CALLS_PER_TICK  10

struct fixture {
    char *dir;
    vigil_plugin_registry *registry;
    vigil_metric_catalog *catalog;
    vigil_config *config;
    struct vigild_energy_share energy;
    struct vigild_reasoning reasoning;
    struct vigild_capture capture;
    struct vigild_tick_samples samples;
    uint64_t tick, seq, seq2;
    gboolean second;      /* process 2 runs too, always at the normal speed */
    double node_running;  /* > 0: the node's samples, 2 busy CPUs with this many threads */
    uint32_t node_ids[9]; /* procstat's 8 CPU times, then procs.running */
};

static vigil_config *load_config(struct fixture *f, const char *text)
{
    char *path = g_build_filename(f->dir, "vigil.conf", NULL);
    assert_true(g_file_set_contents(path, text, -1, NULL));
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, f->registry);
    GError *error = NULL;
    if (!vigil_schema_declare(config, &error) || !vigil_config_load(config, path, &error) ||
        !vigild_reasoning_check(&f->reasoning, config, &error))
        fail_msg("%s", error->message);
    g_free(path);
    return config;
}

/* One process reasoner fed by latency-histogram alone, learning from its
 * first 100 calls; a node reasoner with no ADPIs. */
static const char *config_text(const char *process_threshold, const char *max_outer_share)
{
    static char text[1024];
    g_snprintf(text, sizeof text,
               "[reasoner.process]\nadpis = latency-histogram\nthreshold = %s\n"
               "[reasoner.node]\nadpis =\n"
               "[adpi.latency-histogram]\nlearn_calls = 100\nmin_calls = 20\n"
               "max_outer_share = %s\n",
               process_threshold, max_outer_share);
    return text;
}

static int setup(void **state)
{
    struct fixture *f = g_new0(struct fixture, 1);
    f->dir = g_dir_make_tmp("vigil-reasoning-XXXXXX", NULL);
    f->registry = vigil_plugin_registry_new(test_env_or_fail("VIGIL_TEST_PROVIDER_DIR"));
    f->catalog = vigil_metric_catalog_new();
    vigild_energy_share_init(&f->energy);
    vigild_reasoning_init(&f->reasoning, f->registry, f->catalog, &f->energy);
    f->config = load_config(f, config_text("0", "0.25"));
    vigild_reasoning_configure(&f->reasoning, f->config, TICKS_PER_CYCLE);
    vigild_capture_init(&f->capture, f->catalog);
    char *sink = g_build_filename(f->dir, "capture.jsonl", NULL);
    assert_true(vigild_capture_open_sink(&f->capture, sink, 1 << 30, 0, NULL));
    g_free(sink);
    f->samples.node = g_array_new(FALSE, FALSE, sizeof(struct vigil_sample));
    f->samples.process = g_array_new(FALSE, FALSE, sizeof(struct vigild_process_sample));
    vigild_reasoning_add_process(&f->reasoning, 1);
    vigild_capture_add_process(&f->capture, 1, 4242, "writer", -1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    vigild_reasoning_clear(&f->reasoning);
    vigild_capture_clear(&f->capture);
    vigild_energy_share_clear(&f->energy);
    vigil_config_free(f->config);
    vigil_metric_catalog_free(f->catalog);
    vigil_plugin_registry_free(f->registry);
    g_array_free(f->samples.node, TRUE);
    g_array_free(f->samples.process, TRUE);
    test_remove_tree(f->dir);
    g_free(f->dir);
    g_free(f);
    return 0;
}

/* The node's samples of one tick as procstat gives them: 2 CPUs, all busy,
 * and f->node_running threads wanting them. */
static void node_samples(struct fixture *f, uint64_t t_ns)
{
    static const char *const names[] = {
        "cpu.user_s", "cpu.nice_s",    "cpu.system_s", "cpu.idle_s",    "cpu.iowait_s",
        "cpu.irq_s",  "cpu.softirq_s", "cpu.steal_s",  "procs.running",
    };
    g_array_set_size(f->samples.node, 0);
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        gboolean running = i == G_N_ELEMENTS(names) - 1;
        if (f->node_ids[i] == 0)
            f->node_ids[i] =
                vigil_metric_register(f->catalog, names[i], running ? "count" : "s",
                                      running ? VIGIL_METRIC_GAUGE : VIGIL_METRIC_COUNTER,
                                      "procstat", VIGIL_METRIC_MEASURED, NULL);
        assert_int_not_equal(f->node_ids[i], 0);
        double value = running ? f->node_running : i == 0 ? 2e-9 * (double)t_ns : 0;
        struct vigil_sample sample = {.metric_id = f->node_ids[i], .t_ns = t_ns, .value = value};
        g_array_append_val(f->samples.node, sample);
    }
}

/* One tick: CALLS_PER_TICK writes of `duration_ns` each (with a small
 * spread, so that the learned quantiles are not all one bucket). Returns
 * the verdicts when the tick ended a cycle. */
static gboolean run_tick(struct fixture *f, uint64_t duration_ns,
                         struct vigild_cycle_verdicts *verdicts)
{
    f->tick++;
    uint64_t t_ns = f->tick * TICK_NS;
    f->samples.tick = f->tick;
    f->samples.t_ns = t_ns;
    if (f->node_running > 0)
        node_samples(f, t_ns);
    vigild_reasoning_samples(&f->reasoning, &f->samples, f->catalog);
    for (unsigned i = 0; i < CALLS_PER_TICK; i++) {
        uint64_t start_ns = t_ns - TICK_NS + i * 1000;
        struct vigil_activity a = {
            .record_type = VIGIL_RECORD_ACTIVITY,
            .layer = VIGIL_LAYER_POSIX,
            .op = VIGIL_OP_POSIX_WRITE,
            .seq = f->seq++,
            .start_ns = start_ns,
            .end_ns = start_ns + duration_ns + (i % 5) * duration_ns / 10,
            .bytes_asked = 4096,
            .result = 4096,
        };
        vigild_reasoning_activity(&f->reasoning, 1, &a);
        vigild_capture_activity(&f->capture, 1, &a);
        if (f->second) {
            a.seq = f->seq2++;
            a.end_ns = start_ns + 10000 + (i % 5) * 1000;
            vigild_reasoning_activity(&f->reasoning, 2, &a);
            vigild_capture_activity(&f->capture, 2, &a);
        }
    }
    if (!vigild_reasoning_tick(&f->reasoning))
        return FALSE;
    vigild_reasoning_close_cycle(&f->reasoning, t_ns, TRUE, verdicts);
    vigild_capture_close_cycle(&f->capture, verdicts);
    return TRUE;
}

/* Runs cycles first..last; slow[k] makes cycle k's writes 100 times
 * slower. Returns the process's states, one letter a cycle: '.' OK, 'b'
 * BAD, 'B' ABNORMAL_BAD, 'G' ABNORMAL_GOOD, 'O' ABNORMAL_OTHER. */
static void run_cycles(struct fixture *f, unsigned first, unsigned last, const gboolean *slow,
                       GString *states)
{
    for (unsigned k = first; k <= last; k++) {
        struct vigild_cycle_verdicts v;
        gboolean closed = FALSE;
        for (unsigned t = 0; t < TICKS_PER_CYCLE; t++)
            closed = run_tick(f, slow[k] ? 1000000 : 10000, &v);
        assert_true(closed);
        assert_int_equal(v.cycle, k);
        const struct vigild_verdict *p = v.process(v.user, 1);
        assert_non_null(p);
        /* A letter for the states the tests tell apart, '.' for the others. */
        static const char letters[VIGIL_HEALTH_COUNT + 1] = {
            [VIGIL_HEALTH_ABNORMAL_BAD] = 'B',
            [VIGIL_HEALTH_ABNORMAL_GOOD] = 'G',
            [VIGIL_HEALTH_ABNORMAL_OTHER] = 'O',
            [VIGIL_HEALTH_BAD] = 'b',
        };
        unsigned upward = p->decision.upward;
        char letter = upward < G_N_ELEMENTS(letters) ? letters[upward] : 0;
        g_string_append_c(states, letter != 0 ? letter : '.');
    }
}

/* The windows the sink has for process `id`: "first-last " each. */
static char *sink_windows_of(struct fixture *f, gint64 id)
{
    char *path = g_build_filename(f->dir, "capture.jsonl", NULL);
    GPtrArray *lines = test_daemon_sink_lines(path, "window");
    GString *windows = g_string_new(NULL);
    for (guint l = 0; l < lines->len; l++) {
        JsonObject *o = g_ptr_array_index(lines, l);
        if (json_object_get_int_member(o, "process") != id)
            continue;
        g_string_append_printf(windows, "%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT " ",
                               json_object_get_int_member(o, "first_cycle"),
                               json_object_get_int_member(o, "last_cycle"));
        /* The window says why: the process reasoner, latency-histogram. */
        JsonArray *reasons = json_object_get_array_member(o, "reasons");
        assert_true(json_array_get_length(reasons) > 0);
        JsonObject *level = json_array_get_object_element(
            json_object_get_array_member(json_array_get_object_element(reasons, 0), "levels"), 0);
        assert_string_equal(json_object_get_string_member(level, "level"), "process");
        JsonObject *issue =
            json_array_get_object_element(json_object_get_array_member(level, "issues"), 0);
        assert_string_equal(json_object_get_string_member(issue, "plugin"), "latency-histogram");
        assert_string_equal(json_object_get_string_member(issue, "metric"), "posix.write");
    }
    g_ptr_array_unref(lines);
    g_free(path);
    return g_string_free(windows, FALSE);
}

static char *sink_windows(struct fixture *f)
{
    return sink_windows_of(f, 1);
}

static void test_slow_cycles_give_their_windows(void **state)
{
    struct fixture *f = *state;
    /* Cycle 1 learns (100 calls); 5 and 9..10 are slow. */
    gboolean slow[16] = {FALSE};
    slow[5] = slow[9] = slow[10] = TRUE;
    GString *states = g_string_new(NULL);
    run_cycles(f, 1, 14, slow, states);
    /* The state is held one cycle after each slow run. */
    assert_string_equal(states->str, "....BB..BBB...");
    /* Windows: pre 1, the held cycle, post overlapping it. */
    char *windows = sink_windows(f);
    assert_string_equal(windows, "4-6 8-11 ");
    g_free(windows);
    struct vigild_capture_counts c;
    assert_true(vigild_capture_counts(&f->capture, 1, &c));
    uint64_t per_cycle = TICKS_PER_CYCLE * CALLS_PER_TICK;
    assert_int_equal(c.observed, 14 * per_cycle);
    assert_int_equal(c.forwarded, 7 * per_cycle);
    assert_int_equal(c.held, per_cycle);
    assert_int_equal(c.dropped, 6 * per_cycle);
    assert_int_equal(c.lost, 0);
    g_string_free(states, TRUE);
}

/* One process's anomaly makes the node's reasoner abnormal too (its child
 * is), but capture acts on what each level saw itself: the quiet process
 * next to it is not forwarded. */
static void test_one_process_anomaly_forwards_that_process_only(void **state)
{
    struct fixture *f = *state;
    f->second = TRUE;
    vigild_reasoning_add_process(&f->reasoning, 2);
    vigild_capture_add_process(&f->capture, 2, 4343, "quiet", -1);
    gboolean slow[16] = {FALSE};
    slow[5] = TRUE;
    GString *states = g_string_new(NULL);
    run_cycles(f, 1, 8, slow, states);
    assert_string_equal(states->str, "....BB..");
    const struct vigild_verdict *node = vigild_reasoning_verdict(&f->reasoning, 0);
    assert_non_null(node);
    char *windows = sink_windows(f);
    assert_string_equal(windows, "4-6 ");
    g_free(windows);
    windows = sink_windows_of(f, 2);
    assert_string_equal(windows, "");
    g_free(windows);
    struct vigild_capture_counts quiet;
    assert_true(vigild_capture_counts(&f->capture, 2, &quiet));
    assert_int_equal(quiet.forwarded, 0);
    g_string_free(states, TRUE);
}

/* A stop decides the cycle it cuts short without asking the ADPIs: slow
 * calls in that part-cycle are not judged, and a state held from the
 * cycle before carries on. */
static void test_a_cycle_cut_short_is_not_judged(void **state)
{
    struct fixture *f = *state;
    gboolean slow[16] = {FALSE};
    slow[3] = TRUE;
    GString *states = g_string_new(NULL);
    run_cycles(f, 1, 3, slow, states);
    assert_string_equal(states->str, "..B");
    struct vigild_cycle_verdicts v;
    assert_false(run_tick(f, 1000000, &v)); /* a tick of slow calls, then the stop */
    vigild_reasoning_close_cycle(&f->reasoning, f->tick * TICK_NS, FALSE, &v);
    const struct vigild_verdict *p = v.process(v.user, 1);
    assert_int_equal(p->decision.own, VIGIL_HEALTH_ABNORMAL_BAD);
    assert_true(p->decision.own_held);
    assert_int_equal(p->n_issues, 0);
    vigild_capture_close_cycle(&f->capture, &v);
    f->reasoning.ticks_in_cycle = 0;
    assert_false(run_tick(f, 1000000, &v));
    vigild_reasoning_close_cycle(&f->reasoning, f->tick * TICK_NS, FALSE, &v);
    p = v.process(v.user, 1);
    assert_int_equal(p->decision.own, VIGIL_HEALTH_OK);
    g_string_free(states, TRUE);
}

/* The process ADPIs see the node's load: writes 3 times slower than
 * learned are the process's anomaly on a node as loaded as in learning (1
 * thread per CPU), not on one where 8 threads want each CPU. */
static void test_process_adpis_weigh_the_node_load(void **state)
{
    struct fixture *f = *state;
    f->node_running = 2;
    GString *states = g_string_new(NULL);
    gboolean slow[16] = {FALSE};
    run_cycles(f, 1, 3, slow, states);
    for (unsigned k = 4; k <= 7; k++) {
        f->node_running = k <= 5 ? 16 : 2;
        struct vigild_cycle_verdicts v;
        gboolean closed = FALSE;
        for (unsigned t = 0; t < TICKS_PER_CYCLE; t++)
            closed = run_tick(f, 30000, &v);
        assert_true(closed);
        const struct vigild_verdict *p = v.process(v.user, 1);
        g_string_append_c(states, p->decision.own == VIGIL_HEALTH_ABNORMAL_BAD ? 'B' : '.');
    }
    assert_string_equal(states->str, ".....BB");
    g_string_free(states, TRUE);
}

static void test_reload_threshold_applies_from_next_cycle(void **state)
{
    struct fixture *f = *state;
    gboolean slow[16] = {FALSE};
    slow[3] = slow[5] = TRUE;
    GString *states = g_string_new(NULL);
    run_cycles(f, 1, 3, slow, states);
    /* SIGHUP with threshold 1: one issue is no longer abnormal. The
     * histogram's own section changed too, and it keeps what it learned:
     * cycle 5 is judged at once rather than learned from. Cycle 4 is
     * cycle 3's state held. */
    vigil_config *raised = load_config(f, config_text("1", "0.3"));
    vigild_reasoning_configure(&f->reasoning, raised, TICKS_PER_CYCLE);
    vigil_config_free(f->config);
    f->config = raised;
    run_cycles(f, 4, 6, slow, states);
    assert_string_equal(states->str, "..BBb.");
    g_string_free(states, TRUE);
}

static void test_reload_refuses_a_bad_adpi_config(void **state)
{
    struct fixture *f = *state;
    char *path = g_build_filename(f->dir, "bad.conf", NULL);
    assert_true(g_file_set_contents(
        path,
        /* The processes' default list has drift too: only the node's here. */
        "[reasoner.process]\nadpis = latency-histogram\n[reasoner.node]\nadpis = drift\n"
        "[adpi.drift]\nshort_cycles = 50\nlong_cycles = 40\n",
        -1, NULL));
    vigil_config *config = vigil_config_new();
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, f->registry);
    GError *error = NULL;
    assert_true(vigil_schema_declare(config, NULL));
    assert_true(vigil_config_load(config, path, NULL));
    assert_false(vigild_reasoning_check(&f->reasoning, config, &error));
    assert_non_null(strstr(error->message, "[reasoner.node] adpis: drift"));
    assert_non_null(strstr(error->message, "long_cycles"));
    g_error_free(error);
    vigil_config_free(config);
    g_free(path);
}

#define WITH_FIXTURE(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

TEST_MAIN(WITH_FIXTURE(test_slow_cycles_give_their_windows),
          WITH_FIXTURE(test_one_process_anomaly_forwards_that_process_only),
          WITH_FIXTURE(test_a_cycle_cut_short_is_not_judged),
          WITH_FIXTURE(test_process_adpis_weigh_the_node_load),
          WITH_FIXTURE(test_reload_threshold_applies_from_next_cycle),
          WITH_FIXTURE(test_reload_refuses_a_bad_adpi_config))
