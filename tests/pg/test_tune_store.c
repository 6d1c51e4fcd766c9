/* `vigil tune --store` (cli/tune_store.c) into a private warehouse: a live
 * vigild records a few cycles (a node ADPI that flags for sure), a
 * candidate with a higher node threshold and another ADPI setting is
 * replayed beside it and stored; the tune_comparisons view (warehouse/migrations/0009)
 * gives back exactly the figures `vigil tune --format json` printed, and
 * the changed keys with what they moved. Bad uses are refused, naming what
 * is wrong, and store nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>

#include <cmocka.h>

#include "test_daemon.h"
#include "test_pg.h"
#include "test_report.h"
#include "test_support.h"
#include "test_warehouse.h"

#define DEADLINE_US   (60 * G_USEC_PER_SEC) /* only failures wait this long */
#define CYCLES_WANTED 6

static char *dir;
static char *rec_path, *candidate_path, *warehouse_conf, *bare_conf;
static char *conninfo; /* migrated */

/* Short cycles; total memory never changes, so sensor-sanity flags it
 * stuck after 2 cycles and the node reasoner (threshold 1) is abnormal. */
static void record(void)
{
    struct test_daemon d;
    char *lines = g_strdup_printf("providers = meminfo\ntick_ms = 20\ncycle_ms = 100\n"
                                  "history_s = 2\nrecord = %s\n",
                                  rec_path);
    test_daemon_start(&d, dir, lines,
                      "[reasoner.node]\nadpis = sensor-sanity\n"
                      "[adpi.sensor-sanity]\nstuck_metrics = mem.total_bytes\nstuck_cycles = 2\n"
                      "[uplink]\nhostname = node-7\n");
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    for (;;) {
        JsonNode *status = test_daemon_status(&d, 0);
        gint64 cycles =
            test_daemon_json_int(json_node_get_object(status), "reasoning", "cycles", NULL);
        json_node_unref(status);
        if (cycles >= CYCLES_WANTED)
            break;
        if (g_get_monotonic_time() > deadline)
            fail_msg("vigild decided %" G_GINT64_FORMAT " cycles in a minute", cycles);
    }
    g_free(test_daemon_stop(&d));
    g_free(lines);
}

static char *write_file(const char *name, const char *text)
{
    char *path = g_build_filename(dir, name, NULL);
    if (!g_file_set_contents(path, text, -1, NULL))
        fail_msg("cannot write %s", path);
    return path;
}

static int setup(void **state)
{
    if (test_pg_group_setup(state) != 0)
        return -1;
    dir = g_dir_make_tmp("vigil-tune-store-XXXXXX", NULL);
    assert_non_null(dir);
    rec_path = g_build_filename(dir, "rec.bin", NULL);
    record();
    candidate_path =
        write_file("candidate.conf", "[daemon]\nproviders = meminfo\ntick_ms = 20\ncycle_ms = 100\n"
                                     "[capture]\npre_cycles = 7\n"
                                     "[reasoner.node]\nadpis = sensor-sanity\nthreshold = 1000\n"
                                     "[adpi.sensor-sanity]\nstuck_metrics = mem.total_bytes\n"
                                     "stuck_cycles = 3\n");
    conninfo = test_warehouse_new_migrated();
    char *text = g_strdup_printf("[warehouse]\nconninfo = %s\n", conninfo);
    warehouse_conf = write_file("warehouse.conf", text);
    g_free(text);
    /* A database without vigil's schema. */
    char *bare = test_pg_new_database(&test_pg_cluster);
    text = g_strdup_printf("[warehouse]\nconninfo = %s\n", bare);
    bare_conf = write_file("bare.conf", text);
    g_free(text);
    g_free(bare);
    return 0;
}

static int teardown(void **state)
{
    test_daemon_kill_all();
    if (dir != NULL)
        test_remove_tree(dir);
    g_free(dir);
    g_free(rec_path);
    g_free(candidate_path);
    g_free(warehouse_conf);
    g_free(bare_conf);
    g_free(conninfo);
    return test_pg_group_teardown(state);
}

static struct test_run tune(const char *const *args)
{
    return test_run_vigil(dir, "tune", args);
}

static guint64 trials(void)
{
    return test_pg_query_u64_in(conninfo, "SELECT count(*) FROM tune_trials");
}

/* A view's jsonb member, parsed. */
static JsonNode *view_json(const char *sql)
{
    char *text = test_pg_query_text_in(conninfo, sql);
    assert_non_null(text);
    GError *error = NULL;
    JsonNode *node = json_from_string(text, &error);
    if (node == NULL)
        fail_msg("not JSON: %s", text);
    g_free(text);
    return node;
}

static void test_store_gives_back_the_printed_comparison(void **state)
{
    (void)state;
    const char *args[] = {
        "--replay", rec_path, "--config", candidate_path,       "--format",     "json",
        "--store",  "--node", "node-7",   "--warehouse-config", warehouse_conf, NULL};
    struct test_run run = tune(args);
    test_assert_err(&run, 0, "vigil tune --store", "stored as trial 1", NULL);
    GError *error = NULL;
    JsonNode *printed = json_from_string(run.out, &error);
    if (printed == NULL)
        fail_msg("vigil tune printed no JSON: %s", run.out);
    const char *where = "vigil tune's JSON";
    gint64 cycles = test_json_int(printed, where, "recording.cycles");
    assert_true(cycles >= CYCLES_WANTED);
    gint64 flagged = test_json_int(printed, where, "recorded.flagged_cycles");
    assert_true(flagged >= 1);
    assert_int_equal(test_json_int(printed, where, "candidate.flagged_cycles"), 0);
    assert_int_equal(trials(), 1);

    JsonNode *view = view_json("SELECT to_jsonb(c) FROM tune_comparisons c");
    where = "tune_comparisons";
    assert_string_equal(test_json_string(view, where, "node"), "node-7");
    assert_string_equal(test_json_string(view, where, "recording"), rec_path);
    assert_string_equal(test_json_string(view, where, "candidate_file"), candidate_path);
    assert_true(json_node_is_null(test_json_node(view, "truth_file")));
    assert_int_equal(test_json_int(view, where, "cycles"), cycles);
    assert_int_equal(test_json_int(view, where, "decisions_matched"), cycles);
    assert_true(json_node_get_boolean(test_json_node(view, "ended")));
    /* The figures, as printed, on each side. */
    static const char *const figures[] = {
        "flagged_cycles", "node_abnormal_cycles", "process_abnormal_cycles", "windows", "observed",
        "forwarded"};
    for (gsize i = 0; i < G_N_ELEMENTS(figures); i++)
        for (const char *const *side = (const char *const[]){"recorded", "candidate", NULL};
             *side != NULL; side++) {
            char *path = g_strdup_printf("%s.%s", *side, figures[i]);
            if (test_json_int(view, where, path) != test_json_int(printed, "printed", path))
                fail_msg("%s: stored %" G_GINT64_FORMAT ", printed %" G_GINT64_FORMAT, path,
                         test_json_int(view, where, path), test_json_int(printed, "printed", path));
            g_free(path);
        }
    assert_true(json_node_is_null(test_json_node(view, "recorded.recall")));
    /* sensor-sanity's cycles and why, on both sides. */
    gint64 adpi_cycles = test_json_int(printed, "printed", "recorded.adpis.0.cycles");
    assert_true(adpi_cycles >= 1);
    assert_string_equal(test_json_string(view, where, "adpis.0.plugin"), "sensor-sanity");
    assert_int_equal(test_json_int(view, where, "adpis.0.recorded.cycles"), adpi_cycles);
    assert_string_equal(test_json_string(view, where, "adpis.0.recorded.reasons.0.reason"),
                        test_json_string(printed, "printed", "recorded.adpis.0.reasons.0.reason"));
    /* The changed keys, in order, with what they moved. Nothing else: not
     * the keys a replay does not apply, which differ too (the recording's
     * [daemon] socket, record and history_s, its [capture] sink). */
    JsonArray *changes = json_node_get_array(test_json_node(view, "changes"));
    assert_int_equal(json_array_get_length(changes), 3);
    assert_string_equal(test_json_string(view, where, "changes.0.section"), "adpi.sensor-sanity");
    assert_string_equal(test_json_string(view, where, "changes.0.key"), "stuck_cycles");
    assert_string_equal(test_json_string(view, where, "changes.0.recorded"), "2");
    assert_string_equal(test_json_string(view, where, "changes.0.candidate"), "3");
    assert_int_equal(test_json_int(view, where, "changes.0.measured_recorded"), adpi_cycles);
    assert_int_equal(test_json_int(view, where, "changes.0.measured_candidate"),
                     test_json_int(printed, "printed", "candidate.adpis.0.cycles"));
    assert_string_equal(test_json_string(view, where, "changes.1.section"), "capture");
    assert_string_equal(test_json_string(view, where, "changes.1.key"), "pre_cycles");
    assert_string_equal(test_json_string(view, where, "changes.1.recorded"), "1");
    assert_string_equal(test_json_string(view, where, "changes.1.candidate"), "7");
    assert_string_equal(test_json_string(view, where, "changes.1.measure"), "activities forwarded");
    assert_string_equal(test_json_string(view, where, "changes.2.section"), "reasoner.node");
    assert_string_equal(test_json_string(view, where, "changes.2.key"), "threshold");
    assert_string_equal(test_json_string(view, where, "changes.2.candidate"), "1000");
    assert_int_equal(test_json_int(view, where, "changes.2.measured_recorded"),
                     test_json_int(printed, "printed", "recorded.node_abnormal_cycles"));
    assert_int_equal(test_json_int(view, where, "changes.2.measured_candidate"), 0);
    json_node_unref(view);
    json_node_unref(printed);
    test_run_clear(&run);

    /* Without a candidate: one side, no changes; the recording named
     * relative to where vigil tune ran is stored by its absolute name. */
    const char *alone[] = {"--replay",           "rec.bin",      "--store",
                           "--warehouse-config", warehouse_conf, NULL};
    run = tune(alone);
    test_assert_status(&run, 0, "vigil tune --store without a candidate");
    test_run_clear(&run);
    view = view_json("SELECT to_jsonb(c) FROM tune_comparisons c WHERE trial_id = 2");
    assert_true(json_node_is_null(test_json_node(view, "candidate")));
    assert_int_equal(json_array_get_length(json_node_get_array(test_json_node(view, "changes"))),
                     0);
    /* The node and the end's wall-clock time are the recording's own. */
    assert_string_equal(test_json_string(view, "trial 2", "node"), "node-7");
    assert_string_equal(test_json_string(view, "trial 2", "recording"), rec_path);
    char *until = g_strdup(test_json_string(view, "trial 2", "recorded_until"));
    json_node_unref(view);

    /* A copy of it, whose modification time a copy changed, is stored with
     * the same end, not the copy's time. */
    gchar *bytes;
    gsize size;
    assert_true(g_file_get_contents(rec_path, &bytes, &size, NULL));
    char *copy = write_file("copy.bin", "");
    assert_true(g_file_set_contents(copy, bytes, (gssize)size, NULL));
    struct timeval old_times[2] = {{978307200, 0}, {978307200, 0}}; /* 2001-01-01 */
    assert_int_equal(utimes(copy, old_times), 0);
    const char *copied[] = {"--replay",           copy,           "--store",
                            "--warehouse-config", warehouse_conf, NULL};
    run = tune(copied);
    test_assert_status(&run, 0, "vigil tune --store of a copy");
    test_run_clear(&run);
    view = view_json("SELECT to_jsonb(c) FROM tune_comparisons c WHERE trial_id = 3");
    assert_string_equal(test_json_string(view, "trial 3", "recorded_until"), until);
    json_node_unref(view);
    g_free(until);
    g_free(copy);
    g_free(bytes);
    test_pg_exec_in(conninfo, "DELETE FROM tune_trials");
}

static void test_bad_uses_store_nothing(void **state)
{
    (void)state;
    static const struct {
        const char *args[10];
        int status;
        const char *says;
    } cases[] = {
        {{"--replay", "REC", "--node", "n1", NULL}, 2, "--node is for --store"},
        {{"--replay", "REC", "--warehouse-config", "WH", NULL}, 2, "--warehouse-config is for"},
        {{"--replay", "REC", "--store", "--node", "", "--warehouse-config", "WH", NULL},
         2,
         "--node: expected a node name"},
        {{"--replay", "REC", "--store", "--node", "n1", "--warehouse-config", "WH", NULL},
         1,
         "--node n1: the recording was made on node node-7 (its START record); leave --node "
         "out to store it as node-7's"},
        {{"--replay", "REC", "--store", "--warehouse-config", "BARE", NULL},
         1,
         "has no vigil schema: run `vigil db migrate`"},
        {{"--replay", "REC", "--store", "--warehouse-config", "/nonexistent/vigil.conf", NULL},
         1,
         "/nonexistent/vigil.conf"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *args[10] = {NULL};
        for (gsize a = 0; cases[i].args[a] != NULL; a++)
            args[a] = strcmp(cases[i].args[a], "REC") == 0    ? rec_path
                      : strcmp(cases[i].args[a], "WH") == 0   ? warehouse_conf
                      : strcmp(cases[i].args[a], "BARE") == 0 ? bare_conf
                                                              : cases[i].args[a];
        struct test_run run = tune(args);
        test_assert_err(&run, cases[i].status, cases[i].says, cases[i].says, NULL);
        test_run_clear(&run);
    }
    assert_int_equal(trials(), 0);
}

TEST_PG_MAIN(setup, teardown, cmocka_unit_test(test_store_gives_back_the_printed_comparison),
             cmocka_unit_test(test_bad_uses_store_nothing))
