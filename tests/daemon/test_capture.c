/* vigild's capture buffer, replayed: synthetic activities and verdicts
 * with anomalies at known cycles must give exactly the expected windows in
 * the sink (pre and post cycles included, overlapping windows merged, no
 * cycle twice), and every activity must be counted once as forwarded,
 * dropped, lost or held. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "vigil/clock.h"
#include "vigil/ontology.h"
#include "capture.h"
#include "capture_json.h"
#include "capture_sink.h"
#include "verdicts.h"
#include "test_main.h"

#define CYCLE_NS     (1000 * VIGIL_NS_PER_MS)
#define MAX_CYCLES   32
#define MAX_SUBJECTS 4

/* A scripted run: per cycle, each subject's own state. */
struct script {
    enum vigil_health state[MAX_SUBJECTS][MAX_CYCLES]; /* [0]: the node */
    gboolean held[MAX_SUBJECTS][MAX_CYCLES];
    struct vigild_verdict verdicts[MAX_SUBJECTS];
    struct vigild_issue issue;
};

static const struct vigild_verdict *scripted(void *user, uint64_t process_id)
{
    struct script *s = user;
    return process_id < MAX_SUBJECTS ? &s->verdicts[process_id] : NULL;
}

struct fixture {
    char *dir, *sink;
    vigil_metric_catalog *catalog;
    struct vigild_capture capture;
    struct script script;
    uint64_t seq[MAX_SUBJECTS];
    gboolean final; /* the next close is the daemon's last */
};

static int setup(void **state)
{
    struct fixture *f = g_new0(struct fixture, 1);
    f->dir = g_dir_make_tmp("vigil-capture-XXXXXX", NULL);
    f->sink = g_build_filename(f->dir, "sink", "capture.jsonl", NULL);
    f->catalog = vigil_metric_catalog_new();
    vigild_capture_init(&f->capture, f->catalog);
    assert_true(vigild_capture_open_sink(&f->capture, f->sink, 1 << 30, 0, NULL));
    for (unsigned i = 0; i < MAX_SUBJECTS; i++) {
        f->script.verdicts[i].level = i == 0 ? VIGIL_LEVEL_NODE : VIGIL_LEVEL_PROCESS;
        f->script.verdicts[i].process_id = i;
        for (unsigned k = 0; k < MAX_CYCLES; k++)
            f->script.state[i][k] = VIGIL_HEALTH_OK;
    }
    f->script.issue.plugin = "latency-histogram";
    f->script.issue.issue.health = VIGIL_HEALTH_ABNORMAL_BAD;
    g_strlcpy(f->script.issue.issue.metric, "posix.write", sizeof f->script.issue.issue.metric);
    g_strlcpy(f->script.issue.issue.message, "slow", sizeof f->script.issue.issue.message);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    vigild_capture_clear(&f->capture);
    vigil_metric_catalog_free(f->catalog);
    char *command = g_strdup_printf("rm -rf '%s'", f->dir);
    assert_int_equal(system(command), 0);
    g_free(command);
    g_free(f->sink);
    g_free(f->dir);
    g_free(f);
    return 0;
}

/* `n` activities of process `id` in cycle `cycle`, timed inside it. */
static void add_activities(struct fixture *f, uint64_t id, uint64_t cycle, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        struct vigil_activity a = {
            .record_type = VIGIL_RECORD_ACTIVITY,
            .layer = VIGIL_LAYER_POSIX,
            .op = VIGIL_OP_POSIX_WRITE,
            .file_id = 1,
            .seq = f->seq[id]++,
            .start_ns = (cycle - 1) * CYCLE_NS + i,
            .end_ns = (cycle - 1) * CYCLE_NS + i + 1,
            .bytes_asked = 4096,
            .result = 4096,
        };
        vigild_capture_activity(&f->capture, id, &a);
    }
}

static void close_cycle(struct fixture *f, uint64_t cycle)
{
    for (unsigned i = 0; i < MAX_SUBJECTS; i++) {
        struct vigild_verdict *v = &f->script.verdicts[i];
        v->decision.own = v->decision.upward = v->decision.state = f->script.state[i][cycle];
        v->decision.own_held = v->decision.upward_held = f->script.held[i][cycle];
        gboolean abnormal = vigil_health_is_abnormal(v->decision.own);
        v->issues = abnormal ? &f->script.issue : NULL;
        v->n_issues = abnormal ? 1 : 0;
    }
    struct vigild_cycle_verdicts verdicts = {
        .cycle = cycle,
        .start_ns = (cycle - 1) * CYCLE_NS,
        .end_ns = cycle * CYCLE_NS,
        .node = &f->script.verdicts[0],
        .process = scripted,
        .user = &f->script,
        .final = f->final,
    };
    vigild_capture_close_cycle(&f->capture, &verdicts);
}

/* What the sink says, per subject: the cycles whose activities it has
 * (each with its count) and the windows. */
struct sink_view {
    int activities[MAX_SUBJECTS][MAX_CYCLES]; /* -1: not forwarded */
    guint activity_lines[MAX_SUBJECTS][MAX_CYCLES];
    GString *windows[MAX_SUBJECTS]; /* "first-last " each */
    guint statistics_lines[MAX_CYCLES];
    guint cycle_lines;
    gboolean reasons_ok;
};

static void read_sink(const struct fixture *f, struct sink_view *view)
{
    memset(view, 0, sizeof *view);
    memset(view->activities, 0xff, sizeof view->activities);
    for (unsigned i = 0; i < MAX_SUBJECTS; i++)
        view->windows[i] = g_string_new(NULL);
    view->reasons_ok = TRUE;
    char *text = NULL;
    assert_true(g_file_get_contents(f->sink, &text, NULL, NULL));
    char **lines = g_strsplit(text, "\n", -1);
    JsonParser *parser = json_parser_new();
    for (char **line = lines; *line != NULL && **line != '\0'; line++) {
        assert_true(json_parser_load_from_data(parser, *line, -1, NULL));
        JsonObject *o = json_node_get_object(json_parser_get_root(parser));
        const char *type = json_object_get_string_member(o, "type");
        if (strcmp(type, "cycle") == 0) {
            view->cycle_lines++;
            continue;
        }
        uint64_t cycle = 0;
        if (json_object_has_member(o, "cycle"))
            cycle = (uint64_t)json_object_get_int_member(o, "cycle");
        assert_true(cycle < MAX_CYCLES);
        if (strcmp(type, "statistics") == 0) {
            view->statistics_lines[cycle]++;
            continue;
        }
        uint64_t id = (uint64_t)json_object_get_int_member(o, "process");
        assert_true(id < MAX_SUBJECTS);
        if (strcmp(type, "activities") == 0) {
            view->activity_lines[id][cycle]++;
            view->activities[id][cycle] =
                (int)json_array_get_length(json_object_get_array_member(o, "activities"));
        } else if (strcmp(type, "window") == 0) {
            g_string_append_printf(view->windows[id], "%" G_GINT64_FORMAT "-%" G_GINT64_FORMAT " ",
                                   json_object_get_int_member(o, "first_cycle"),
                                   json_object_get_int_member(o, "last_cycle"));
            if (json_array_get_length(json_object_get_array_member(o, "reasons")) == 0)
                view->reasons_ok = FALSE;
        }
    }
    g_object_unref(parser);
    g_strfreev(lines);
    g_free(text);
}

static void free_view(struct sink_view *view)
{
    for (unsigned i = 0; i < MAX_SUBJECTS; i++)
        g_string_free(view->windows[i], TRUE);
}

/* Cycles 1..last with 10·k + id activities in cycle k. */
static void replay(struct fixture *f, unsigned processes, uint64_t last)
{
    for (uint64_t id = 1; id <= processes; id++)
        vigild_capture_add_process(&f->capture, id, (pid_t)(1000 + id), "app", -1);
    for (uint64_t k = 1; k <= last; k++) {
        for (uint64_t id = 1; id <= processes; id++)
            add_activities(f, id, k, (unsigned)(10 * k + id));
        close_cycle(f, k);
    }
}

static void assert_forwarded(const struct sink_view *view, uint64_t id, const char *cycles,
                             uint64_t last)
{
    /* `cycles` lists the forwarded ones: "3 4 5 ". */
    GString *got = g_string_new(NULL);
    for (uint64_t k = 1; k <= last; k++) {
        if (view->activities[id][k] < 0)
            continue;
        assert_int_equal(view->activities[id][k], 10 * k + id);
        assert_int_equal(view->activity_lines[id][k], 1);
        g_string_append_printf(got, "%" G_GUINT64_FORMAT " ", k);
    }
    assert_string_equal(got->str, cycles);
    g_string_free(got, TRUE);
}

/* The sink holds process 1's cycles `cycles` of 1 to `last` (as
 * assert_forwarded) and, unless `windows` is NULL, those windows. */
static void assert_sink_has(struct fixture *f, const char *cycles, uint64_t last,
                            const char *windows)
{
    struct sink_view view;
    read_sink(f, &view);
    assert_forwarded(&view, 1, cycles, last);
    if (windows != NULL)
        assert_string_equal(view.windows[1]->str, windows);
    free_view(&view);
}

static void set_abnormal(struct fixture *f, unsigned subject, unsigned cycle, gboolean held)
{
    f->script.state[subject][cycle] = VIGIL_HEALTH_ABNORMAL_BAD;
    f->script.held[subject][cycle] = held;
}

static void test_windows_pre_post_and_merge(void **state)
{
    struct fixture *f = *state;
    /* Process 1: evidence at 4, held at 5: a window 3..5 (post overlaps
     * the held cycle). Evidence at 9 and 11 with 10 normal: one merged
     * window 8..12. Process 2: never abnormal itself. The node: evidence
     * at 15, held at 16: every subject forwards 14..16. */
    set_abnormal(f, 1, 4, FALSE);
    set_abnormal(f, 1, 5, TRUE);
    set_abnormal(f, 1, 9, FALSE);
    set_abnormal(f, 1, 11, FALSE);
    set_abnormal(f, 0, 15, FALSE);
    set_abnormal(f, 0, 16, TRUE);
    replay(f, 2, 20);
    struct sink_view view;
    read_sink(f, &view);
    assert_forwarded(&view, 1, "3 4 5 8 9 10 11 12 14 15 16 ", 20);
    assert_forwarded(&view, 2, "14 15 16 ", 20);
    assert_string_equal(view.windows[1]->str, "3-5 8-12 14-16 ");
    assert_string_equal(view.windows[2]->str, "14-16 ");
    assert_string_equal(view.windows[0]->str, "14-16 ");
    assert_true(view.reasons_ok);
    assert_int_equal(view.cycle_lines, 20);
    /* No statistics source here: no statistics lines. */
    for (uint64_t k = 1; k <= 20; k++)
        assert_int_equal(view.statistics_lines[k], 0);
    free_view(&view);

    struct vigild_capture_counts c1, node;
    assert_true(vigild_capture_counts(&f->capture, 1, &c1));
    uint64_t observed = 0, forwarded = 0;
    for (uint64_t k = 1; k <= 20; k++) {
        observed += 10 * k + 1;
        if ((k >= 3 && k <= 5) || (k >= 8 && k <= 12) || (k >= 14 && k <= 16))
            forwarded += 10 * k + 1;
    }
    assert_int_equal(c1.observed, observed);
    assert_int_equal(c1.forwarded, forwarded);
    assert_int_equal(c1.lost, 0);
    /* Cycle 20 is the newest held one: pre = 1 keeps it. */
    assert_int_equal(c1.held, 10 * 20 + 1);
    assert_int_equal(c1.dropped, observed - forwarded - c1.held);
    assert_int_equal(c1.windows, 3);
    assert_int_equal(c1.cycles, 20);
    assert_int_equal(c1.abnormal_cycles, 4 + 2); /* its own 4, the node's 2 */
    assert_true(vigild_capture_counts(&f->capture, 0, &node));
    assert_int_equal(node.observed, node.forwarded + node.dropped + node.lost + node.held);
}

/* Windows that touch are one: with post 0, abnormal cycles 5 and 7 share
 * cycle 6 (7's pre), so 4..7 is one window, not 4..5 and 6..7. */
static void test_windows_that_touch_are_one(void **state)
{
    struct fixture *f = *state;
    vigild_capture_configure(&f->capture, VIGILD_CAPTURE_ANOMALIES, 1, 0, UINT64_MAX);
    set_abnormal(f, 1, 5, FALSE);
    set_abnormal(f, 1, 7, FALSE);
    replay(f, 1, 10);
    assert_sink_has(f, "4 5 6 7 ", 10, "4-7 ");
}

/* The daemon's stop: every open window is written and nothing stays
 * held. */
static void test_the_final_cycle_ends_every_window(void **state)
{
    struct fixture *f = *state;
    set_abnormal(f, 1, 3, FALSE);
    replay(f, 2, 2);
    add_activities(f, 1, 3, 31);
    add_activities(f, 2, 3, 32);
    f->final = TRUE;
    close_cycle(f, 3);
    struct sink_view view;
    read_sink(f, &view);
    assert_string_equal(view.windows[1]->str, "2-3 ");
    free_view(&view);
    struct vigild_capture_counts node;
    assert_true(vigild_capture_counts(&f->capture, 0, &node));
    assert_int_equal(node.held, 0);
    assert_int_equal(node.observed, node.forwarded + node.dropped);
}

static void count_statistics(void *user, uint64_t start_ns, uint64_t end_ns, GArray *out)
{
    guint *calls = user;
    (*calls)++;
    struct vigil_sample s = {.metric_id = 1, .t_ns = end_ns, .value = (double)start_ns};
    g_array_append_val(out, s);
}

/* A window that stays open for long keeps the reasons of its first 64
 * abnormal cycles and counts the others. */
static void test_a_long_window_keeps_its_first_reasons(void **state)
{
    struct fixture *f = *state;
    for (unsigned k = 2; k <= 29; k++)
        set_abnormal(f, 1, k, FALSE);
    vigild_capture_add_process(&f->capture, 1, 1001, "app", -1);
    /* The script's 29 cycles thrice: cycle 1 of each round is normal but
     * forwarded as post, so one window spans 84 abnormal cycles. */
    for (unsigned round = 0; round < 3; round++)
        for (unsigned k = 1; k <= 29; k++) {
            add_activities(f, 1, k, 1);
            close_cycle(f, k);
        }
    vigild_capture_end_process(&f->capture, 1);
    close_cycle(f, 30);
    char *text = NULL;
    assert_true(g_file_get_contents(f->sink, &text, NULL, NULL));
    const char *window = strstr(text, "\"type\":\"window\"");
    assert_non_null(window);
    assert_non_null(strstr(window, "\"reasons_left_out\":20"));
    g_free(text);
}

static void test_statistics_once_per_cycle(void **state)
{
    struct fixture *f = *state;
    guint calls = 0;
    assert_int_not_equal(vigil_metric_register(f->catalog, "cpu.user_s", "s", VIGIL_METRIC_COUNTER,
                                               "test", VIGIL_METRIC_MEASURED, NULL),
                         0);
    f->capture.statistics = count_statistics;
    f->capture.statistics_user = &calls;
    /* Both processes abnormal at 3: cycles 2..4 forwarded by each, their
     * statistics written once. */
    set_abnormal(f, 1, 3, FALSE);
    set_abnormal(f, 2, 3, FALSE);
    replay(f, 2, 6);
    struct sink_view view;
    read_sink(f, &view);
    for (uint64_t k = 1; k <= 6; k++)
        assert_int_equal(view.statistics_lines[k], k >= 2 && k <= 4 ? 1 : 0);
    assert_int_equal(calls, 3);
    free_view(&view);
}

/* A path that is not UTF-8 still makes a valid line, with U+FFFD for the
 * bytes that are not. */
static void test_a_latin1_path_gives_valid_json(void **state)
{
    struct fixture *f = *state;
    vigild_capture_configure(&f->capture, VIGILD_CAPTURE_ALL, 1, 1, UINT64_MAX);
    vigild_capture_add_process(&f->capture, 1, 1001, "app", -1);
    vigild_capture_name(&f->capture, 1, 1, "/data/caf\xe9.dat");
    add_activities(f, 1, 1, 2);
    close_cycle(f, 1);
    struct sink_view view;
    read_sink(f, &view); /* fails on a line that is not JSON */
    assert_int_equal(view.activities[1][1], 2);
    free_view(&view);
    char *text = NULL;
    assert_true(g_file_get_contents(f->sink, &text, NULL, NULL));
    assert_true(g_utf8_validate(text, -1, NULL));
    assert_non_null(strstr(text, "/data/caf\xef\xbf\xbd.dat"));
    g_free(text);
}

static void test_process_end_closes_its_window(void **state)
{
    struct fixture *f = *state;
    /* Process 1 is abnormal in the cycle it ends in: forwarded with the
     * cycle before, its window closed although post is 1. */
    set_abnormal(f, 1, 3, FALSE);
    vigild_capture_add_process(&f->capture, 1, 1001, "app", 0);
    for (uint64_t k = 1; k <= 3; k++) {
        add_activities(f, 1, k, (unsigned)(10 * k + 1));
        if (k == 3)
            vigild_capture_end_process(&f->capture, 1);
        close_cycle(f, k);
    }
    struct vigild_capture_counts counts;
    assert_false(vigild_capture_counts(&f->capture, 1, &counts)); /* forgotten */
    assert_sink_has(f, "2 3 ", 3, "2-3 ");
}

static void test_modes(void **state)
{
    struct fixture *f = *state;
    vigild_capture_configure(&f->capture, VIGILD_CAPTURE_ALL, 1, 1, UINT64_MAX);
    replay(f, 1, 3);
    assert_sink_has(f, "1 2 3 ", 3, NULL);
    /* none: every activity counted as dropped at once, nothing written. */
    vigild_capture_configure(&f->capture, VIGILD_CAPTURE_NONE, 1, 1, UINT64_MAX);
    set_abnormal(f, 1, 4, FALSE);
    for (uint64_t k = 4; k <= 5; k++) {
        add_activities(f, 1, k, 7);
        close_cycle(f, k);
    }
    struct vigild_capture_counts c;
    assert_true(vigild_capture_counts(&f->capture, 1, &c));
    assert_int_equal(c.observed, 11 + 21 + 31 + 14);
    assert_int_equal(c.forwarded, 11 + 21 + 31);
    assert_int_equal(c.dropped, 14);
    assert_int_equal(c.held, 0);
}

/* A reload to another mode takes the cycles held under the old one along:
 * none stays held for ever. */
static void test_mode_change_releases_held_cycles(void **state)
{
    struct fixture *f = *state;
    replay(f, 1, 2); /* cycle 2 is held (pre = 1), cycle 1 dropped */
    vigild_capture_configure(&f->capture, VIGILD_CAPTURE_ALL, 1, 1, UINT64_MAX);
    add_activities(f, 1, 3, 31);
    close_cycle(f, 3);
    struct vigild_capture_counts c;
    assert_true(vigild_capture_counts(&f->capture, 1, &c));
    assert_int_equal(c.forwarded, 21 + 31);
    assert_int_equal(c.dropped, 11);
    assert_int_equal(c.held, 0);
    assert_sink_has(f, "2 3 ", 3, NULL);
}

static void test_memory_bound_counts_lost(void **state)
{
    struct fixture *f = *state;
    vigild_capture_configure(&f->capture, VIGILD_CAPTURE_ANOMALIES, 1, 1, 25);
    /* Cycle 1: 11 held; cycle 2: 21 more, of which 14 fit; cycle 1 is then
     * dropped (pre = 1), so cycle 3's 31 find 11 places free... */
    set_abnormal(f, 1, 3, FALSE);
    replay(f, 1, 3);
    struct vigild_capture_counts c;
    assert_true(vigild_capture_counts(&f->capture, 1, &c));
    assert_int_equal(c.observed, 11 + 21 + 31);
    assert_int_equal(c.lost, (21 - 14) + (31 - 11));
    assert_int_equal(c.dropped, 11);
    assert_int_equal(c.forwarded, 14 + 11);
    assert_int_equal(c.held, 0);
    struct sink_view view;
    read_sink(f, &view);
    /* The cycles forwarded carry what was kept of them. */
    assert_int_equal(view.activities[1][2], 14);
    assert_int_equal(view.activities[1][3], 11);
    free_view(&view);
}

/* A sink whose writes fail (a full disk) counts every failure, for
 * `vigil status` to show, rather than losing windows without a trace. */
static void test_a_full_sink_counts_its_failures(void **state)
{
    struct fixture *f = *state;
    assert_true(vigild_capture_open_sink(&f->capture, "/dev/full", 1 << 20, 0, NULL));
    vigild_capture_configure(&f->capture, VIGILD_CAPTURE_ALL, 1, 1, UINT64_MAX);
    replay(f, 1, 2);
    assert_true(vigild_capture_sink_errors(vigild_capture_sink(&f->capture)) > 0);
}

static void test_sink_that_cannot_open(void **state)
{
    struct fixture *f = *state;
    char *blocker = g_build_filename(f->dir, "file", NULL);
    assert_true(g_file_set_contents(blocker, "", 0, NULL));
    char *path = g_build_filename(blocker, "capture.jsonl", NULL);
    GError *error = NULL;
    assert_false(vigild_capture_open_sink(&f->capture, path, 1 << 20, 0, &error));
    assert_non_null(strstr(error->message, blocker));
    g_error_free(error);
    /* The old sink stays. */
    assert_string_equal(vigild_capture_path(&f->capture), f->sink);
    g_free(path);
    g_free(blocker);
}

/* The first "activities" line of a sink file names file 1: each file
 * names the paths of its own lines. Returns the file's size. */
static uint64_t check_sink_file(const char *path, uint64_t max_bytes)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_true((uint64_t)st.st_size <= max_bytes);
    char *text = NULL;
    assert_true(g_file_get_contents(path, &text, NULL, NULL));
    const char *first = strstr(text, "\"type\":\"activities\"");
    if (first != NULL) {
        const char *end = strchr(first, '\n');
        char *line = g_strndup(first, (gsize)(end - first));
        if (strstr(line, "\"1\":\"/data/input.dat\"") == NULL)
            fail_msg("%s: its first activities line does not name file 1: %.200s", path, line);
        g_free(line);
    }
    g_free(text);
    return (uint64_t)st.st_size;
}

/* A sink bounded to 8 KiB a file and two full files kept: it starts new
 * files, deletes the older ones and counts what they held; what is left
 * on disk is exactly what was written less what was deleted. Every file
 * is private (0600) in a private new folder (0700) and names its own
 * paths. A line longer than a whole file is dropped and counted. */
static void test_the_sink_rotates_within_its_bound(void **state)
{
    struct fixture *f = *state;
    char *folder = g_build_filename(f->dir, "bounded", NULL);
    char *path = g_build_filename(folder, "capture.jsonl", NULL);
    const uint64_t max_bytes = 8192;
    assert_true(vigild_capture_open_sink(&f->capture, path, max_bytes, 2, NULL));
    vigild_capture_configure(&f->capture, VIGILD_CAPTURE_ALL, 1, 1, UINT64_MAX);
    vigild_capture_add_process(&f->capture, 1, 1001, "app", -1);
    vigild_capture_name(&f->capture, 1, 1, "/data/input.dat");
    for (uint64_t k = 1; k < MAX_CYCLES - 1; k++) {
        add_activities(f, 1, k, 20);
        close_cycle(f, k);
    }
    struct vigild_capture_sink_stats st;
    vigild_capture_sink_stats(vigild_capture_sink(&f->capture), &st);
    assert_true(st.rotations >= 4);
    assert_int_equal(st.files_dropped, st.rotations - 2);
    assert_int_equal(st.lines_dropped, 0);
    assert_int_equal(st.errors, 0);
    uint64_t kept = check_sink_file(path, max_bytes);
    for (int n = 1; n <= 2; n++) {
        char *rotated = g_strdup_printf("%s.%d", path, n);
        kept += check_sink_file(rotated, max_bytes);
        g_free(rotated);
    }
    char *third = g_strdup_printf("%s.3", path);
    assert_false(g_file_test(third, G_FILE_TEST_EXISTS));
    g_free(third);
    assert_int_equal(st.bytes - st.bytes_dropped, kept);
    struct stat folder_st;
    assert_int_equal(stat(folder, &folder_st), 0);
    assert_int_equal(folder_st.st_mode & 0777, 0700);

    /* The same file with a bound shorter than a line. */
    assert_true(vigild_capture_open_sink(&f->capture, path, 64, 2, NULL));
    add_activities(f, 1, MAX_CYCLES - 1, 5);
    f->final = TRUE;
    close_cycle(f, MAX_CYCLES - 1);
    vigild_capture_sink_stats(vigild_capture_sink(&f->capture), &st);
    assert_true(st.lines_dropped > 0);
    g_free(path);
    g_free(folder);
}

/* A sink file others could read, left by an older vigild, is made private. */
static void test_an_open_sink_file_is_made_private(void **state)
{
    struct fixture *f = *state;
    char *path = g_build_filename(f->dir, "old.jsonl", NULL);
    assert_true(g_file_set_contents(path, "", 0, NULL));
    assert_int_equal(chmod(path, 0644), 0);
    assert_true(vigild_capture_open_sink(&f->capture, path, 1 << 20, 0, NULL));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    g_free(path);
}

#define WITH_FIXTURE(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

TEST_MAIN(WITH_FIXTURE(test_windows_pre_post_and_merge),
          WITH_FIXTURE(test_a_long_window_keeps_its_first_reasons),
          WITH_FIXTURE(test_windows_that_touch_are_one),
          WITH_FIXTURE(test_the_final_cycle_ends_every_window),
          WITH_FIXTURE(test_statistics_once_per_cycle),
          WITH_FIXTURE(test_a_latin1_path_gives_valid_json),
          WITH_FIXTURE(test_process_end_closes_its_window), WITH_FIXTURE(test_modes),
          WITH_FIXTURE(test_mode_change_releases_held_cycles),
          WITH_FIXTURE(test_memory_bound_counts_lost),
          WITH_FIXTURE(test_a_full_sink_counts_its_failures),
          WITH_FIXTURE(test_sink_that_cannot_open),
          WITH_FIXTURE(test_the_sink_rotates_within_its_bound),
          WITH_FIXTURE(test_an_open_sink_file_is_made_private))
