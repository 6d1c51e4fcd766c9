/* vigild's cycle recording ([daemon] record) replayed by `vigil tune`: a
 * replay with the recorded configuration gives exactly the decisions the
 * live vigild made (every cycle, field by field, and the same activities
 * forwarded as its capture sink says), a candidate with a higher reasoner
 * threshold flags fewer cycles and forwards fewer activities, a recording
 * cut inside a record (vigild killed while writing it) is replayed up to
 * the cut, and a corrupt one is refused naming the offset. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <zlib.h>

#include <cmocka.h>

#include "test_daemon.h"
#include "test_support.h"
#include "test_main.h"

/* Only failures wait this long: cycles that do not come. */
#define DEADLINE_US   (60 * G_USEC_PER_SEC)
#define CYCLES_WANTED 8
/* The shell and more dd than the latency ADPI's learn_calls (100). */
#define LEARNED_PROCESSES 150

/* Short cycles, so that a few seconds make many; a node ADPI that flags
 * for sure (total memory never changes, flagged a few cycles in) and the
 * process ADPI that judges activities' durations. The [capture] section is
 * open where this goes: 10 cycles before a trigger are forwarded, dd's
 * among them. */
#define REASONERS                                                                                  \
    "pre_cycles = 10\n"                                                                            \
    "[reasoner.node]\nadpis = sensor-sanity\n"                                                     \
    "[adpi.sensor-sanity]\nstuck_metrics = mem.total_bytes\nstuck_cycles = 2\n"                    \
    "[reasoner.process]\nadpis = latency-histogram\n"                                              \
    "[adpi.latency-histogram]\nlearn_calls = 100\nmin_calls = 10\n"

static char *daemon_lines(const char *dir)
{
    return g_strdup_printf("providers = procstat;meminfo;process\ntick_ms = 20\ncycle_ms = 100\n"
                           "history_s = 2\nrecord = %s/rec.bin\n",
                           dir);
}

static JsonObject *parse_object(const char *text, JsonNode **root)
{
    GError *error = NULL;
    *root = json_from_string(text, &error);
    if (*root == NULL || !JSON_NODE_HOLDS_OBJECT(*root))
        fail_msg("not a JSON object: %s\n%s", error != NULL ? error->message : "", text);
    return json_node_get_object(*root);
}

static gint64 member_int(JsonObject *o, const char *outer, const char *name)
{
    return json_object_get_int_member(json_object_get_object_member(o, outer), name);
}

static struct test_run run_tune(const char *dir, const char *const *extra)
{
    return test_run_vigil(dir, "tune", extra);
}

/* A live vigild records while a shell under the preload library runs dd
 * after dd, until vigild has decided CYCLES_WANTED cycles from the first
 * that began after LEARNED_PROCESSES had registered; that cycle's number
 * is `*learned_cycle`. Each dd is a process of its own, with too few calls
 * for the latency ADPI to learn; the shell's `[ -e stop ]`, 20 stats in a
 * row before each dd, is what it learns (from the first 100) and then
 * judges. In a row, so that a cycle in which the shell gets to run at all
 * has the ADPI's min_calls (10) however slow the machine: with one stat
 * per dd, a loaded machine ran fewer than 10 dd a cycle, no cycle was
 * judged, and the what-if below had no slow cycles to find. Then the
 * shell is told to stop (a file) and vigild stops cleanly (END). The shell
 * lives through every cycle, so the node's flag finds activities to
 * forward. */
static void record_live(const char *dir, gint64 *learned_cycle)
{
    struct test_daemon d;
    char *lines = daemon_lines(dir);
    test_daemon_start(&d, dir, lines, REASONERS);
    g_free(lines);
    /* No report: thousands of dd would print theirs into the test's log. */
    const char *vars[] = {"VIGIL_REPORT=off", NULL};
    char **env = test_daemon_preload_env(&d, vars);
    const char *argv[] = {"/bin/sh", "-c",
                          "i=0; while [ $i -lt 100000 ]; do "
                          "j=0; while [ $j -lt 20 ]; do [ -e stop ] && exit 0; j=$((j + 1)); "
                          "done; "
                          "dd if=/dev/zero of=out bs=512 count=50 status=none || exit 1; "
                          "i=$((i + 1)); done",
                          NULL};
    GPid shell;
    GError *error = NULL;
    if (!g_spawn_async(dir, (char **)argv, env, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &shell,
                       &error))
        fail_msg("cannot run the shell: %s", error->message);
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    *learned_cycle = 0;
    for (;;) {
        JsonNode *status = test_daemon_status(&d, 0);
        JsonObject *o = json_node_get_object(status);
        gint64 cycles = test_daemon_json_int(o, "reasoning", "cycles", NULL);
        /* Cycle cycles + 1 is open now: the next begins after. */
        if (*learned_cycle == 0 &&
            test_daemon_json_int(o, "processes", "registered_total", NULL) >= LEARNED_PROCESSES)
            *learned_cycle = cycles + 2;
        json_node_unref(status);
        if (*learned_cycle > 0 && cycles >= *learned_cycle + CYCLES_WANTED)
            break;
        if (g_get_monotonic_time() > deadline)
            fail_msg("vigild decided %" G_GINT64_FORMAT " cycles in a minute", cycles);
    }
    char *stop = g_build_filename(dir, "stop", NULL);
    assert_true(g_file_set_contents(stop, "", 0, NULL));
    int wait_status;
    assert_int_equal(waitpid(shell, &wait_status, 0), shell);
    assert_true(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
    g_free(test_daemon_stop(&d));
    g_free(stop);
    g_strfreev(env);
}

/* The live capture's totals: its sink's last "cycle" line. */
static void sink_totals(const char *dir, gint64 *observed, gint64 *forwarded)
{
    char *path = g_build_filename(dir, "capture.jsonl", NULL);
    char *text = test_read_file(path);
    char **lines = g_strsplit(text, "\n", -1);
    *observed = *forwarded = -1;
    for (char **line = lines; *line != NULL; line++) {
        if (strstr(*line, "\"type\":\"cycle\"") == NULL)
            continue;
        JsonNode *root;
        JsonObject *o = parse_object(*line, &root);
        *observed = json_object_get_int_member(o, "observed");
        *forwarded = json_object_get_int_member(o, "forwarded");
        json_node_unref(root);
    }
    assert_true(*observed >= 0);
    g_strfreev(lines);
    g_free(text);
    g_free(path);
}

/* The recording rewritten as format 1, whose START record has neither the
 * node nor the wall-clock offset: still replayed, with the same decisions,
 * and said not to name them. */
static void format_1_is_still_read(const char *dir, const char *rec, gint64 cycles)
{
    gchar *data;
    gsize size;
    assert_true(g_file_get_contents(rec, &data, &size, NULL));
    guint8 *d = (guint8 *)data;
    assert_int_equal(d[8], 2);
    assert_int_equal(d[16], 1); /* START first */
    uint32_t length =
        (uint32_t)d[17] | (uint32_t)d[18] << 8 | (uint32_t)d[19] << 16 | (uint32_t)d[20] << 24;
    /* The first cycle's start (a varint), then the version (a length and
     * its bytes): format 1's START ends there. */
    const guint8 *payload = d + 21;
    gsize at = 0;
    while (payload[at++] & 0x80)
        ;
    assert_true(payload[at] < 0x80);
    at += 1 + payload[at];
    assert_true(at < length);
    GByteArray *v1 = g_byte_array_new();
    g_byte_array_append(v1, d, 16);
    v1->data[8] = 1;
    guint8 frame[5] = {1, (guint8)at, (guint8)(at >> 8), 0, 0};
    g_byte_array_append(v1, frame, 5);
    g_byte_array_append(v1, payload, (guint)at);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), v1->data + 16, 5 + (uInt)at);
    guint8 crc_bytes[4] = {(guint8)crc, (guint8)(crc >> 8), (guint8)(crc >> 16),
                           (guint8)(crc >> 24)};
    g_byte_array_append(v1, crc_bytes, 4);
    gsize rest = 16 + 9 + length;
    g_byte_array_append(v1, d + rest, (guint)(size - rest));
    char *old = g_build_filename(dir, "rec-v1.bin", NULL);
    assert_true(g_file_set_contents(old, (const char *)v1->data, v1->len, NULL));
    const char *args[] = {"--replay", old, "--format", "json", NULL};
    struct test_run run = run_tune(dir, args);
    test_assert_status(&run, 0, "vigil tune with a format 1 recording");
    JsonNode *root;
    JsonObject *o = parse_object(run.out, &root);
    assert_int_equal(member_int(o, "recorded", "decisions_matched"), cycles);
    JsonObject *recording = json_object_get_object_member(o, "recording");
    assert_true(json_node_is_null(json_object_get_member(recording, "node")));
    assert_true(json_node_is_null(json_object_get_member(recording, "first_cycle_at")));
    json_node_unref(root);
    test_run_clear(&run);
    const char *text_args[] = {"--replay", old, NULL};
    run = run_tune(dir, text_args);
    test_assert_status(&run, 0, "vigil tune with a format 1 recording, text");
    test_assert_contains(run.out, "(format 1) names neither its node nor its wall-clock time");
    test_run_clear(&run);
    /* A format this vigil does not know is refused, naming the ones it
     * reads. */
    v1->data[8] = 9;
    assert_true(g_file_set_contents(old, (const char *)v1->data, v1->len, NULL));
    run = run_tune(dir, args);
    test_assert_status(&run, 1, "vigil tune with a format 9 recording");
    test_assert_contains(run.err, "recording format version 9 at offset 8; this vigil reads "
                                  "versions 1 to 2");
    test_run_clear(&run);
    g_byte_array_free(v1, TRUE);
    g_free(old);
    g_free(data);
}

/* latency-histogram's issues of `health` in a column of tune's JSON. */
static gint64 latency_issues(JsonObject *o, const char *column, const char *health)
{
    JsonArray *adpis =
        json_object_get_array_member(json_object_get_object_member(o, column), "adpis");
    gint64 issues = 0;
    for (guint i = 0; i < json_array_get_length(adpis); i++) {
        JsonObject *a = json_array_get_object_element(adpis, i);
        if (strcmp(json_object_get_string_member(a, "plugin"), "latency-histogram") != 0)
            continue;
        JsonArray *reasons = json_object_get_array_member(a, "reasons");
        for (guint k = 0; k < json_array_get_length(reasons); k++) {
            JsonObject *r = json_array_get_object_element(reasons, k);
            if (g_str_has_suffix(json_object_get_string_member(r, "reason"), health))
                issues += json_object_get_int_member(r, "issues");
        }
    }
    return issues;
}

/* --scale-durations: the same recording as if every call from the cycle
 * after the latency ADPI had learned (`from`) on had taken 1000 times as
 * long. The cycles before it are still compared with vigild's decisions
 * and match; after it the ADPI finds the calls slow, which it did not (as
 * often) in the live run. */
static void what_if_slower_calls_are_replayed(const char *dir, const char *rec, gint64 from)
{
    const char *as_run[] = {"--replay", rec, "--format", "json", NULL};
    struct test_run run = run_tune(dir, as_run);
    test_assert_status(&run, 0, "vigil tune as recorded");
    JsonNode *root;
    JsonObject *o = parse_object(run.out, &root);
    assert_true(json_node_is_null(json_object_get_member(o, "scale_durations")));
    gint64 slow_as_run = latency_issues(o, "recorded", "ABNORMAL_BAD");
    json_node_unref(root);
    test_run_clear(&run);

    char *factor = g_strdup_printf("1000@%" G_GINT64_FORMAT, from);
    const char *scaled[] = {"--replay", rec, "--scale-durations", factor, "--format", "json", NULL};
    run = run_tune(dir, scaled);
    test_assert_status(&run, 0, factor);
    o = parse_object(run.out, &root);
    JsonObject *what_if = json_object_get_object_member(o, "scale_durations");
    assert_true(json_object_get_double_member(what_if, "factor") == 1000.0);
    assert_int_equal(json_object_get_int_member(what_if, "from_cycle"), from);
    assert_int_equal(member_int(o, "recorded", "decisions_compared"), from - 1);
    assert_int_equal(member_int(o, "recorded", "decisions_matched"), from - 1);
    assert_true(latency_issues(o, "recorded", "ABNORMAL_BAD") > slow_as_run);
    json_node_unref(root);
    test_run_clear(&run);
    g_free(factor);

    const char *text[] = {"--replay", rec, "--scale-durations", "0.5", NULL};
    run = run_tune(dir, text);
    test_assert_status(&run, 0, "vigil tune --scale-durations 0.5");
    test_assert_contains(run.out, "what if: every call from cycle 1 on took 0.5 times as long as "
                                  "recorded (a node 2 times as fast); the recorded decisions are "
                                  "compared before it only");
    test_assert_contains(run.out, "recorded decisions reproduced: 0 of 0 cycles identical");
    test_run_clear(&run);

    /* Bad values are refused, naming what is expected. */
    const char *const bad[] = {"0", "-1", "nan", "2000", "0.8@0", "0.8@", "0.8@x", "0.8x"};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *args[] = {"--replay", rec, "--scale-durations", bad[i], NULL};
        run = run_tune(dir, args);
        test_assert_status(&run, 2, bad[i]);
        char *expected = g_strdup_printf("--scale-durations %s: expected FACTOR[@CYCLE], a "
                                         "factor from 0.001 to 1000 and a cycle from 1",
                                         bad[i]);
        test_assert_contains(run.err, expected);
        g_free(expected);
        test_run_clear(&run);
    }
    const char *stored[] = {"--replay", rec, "--scale-durations", "2", "--store", NULL};
    run = run_tune(dir, stored);
    test_assert_status(&run, 2, "--scale-durations with --store");
    test_assert_contains(run.err, "--scale-durations is a what-if, not what the node did: it is "
                                  "not stored (--store)");
    test_run_clear(&run);
}

static void test_replay_gives_the_live_decisions(void **state)
{
    const char *dir = *state;
    gint64 learned_cycle;
    record_live(dir, &learned_cycle);
    char *rec = g_build_filename(dir, "rec.bin", NULL);
    const char *same[] = {"--replay", rec, "--format", "json", NULL};
    struct test_run run = run_tune(dir, same);
    test_assert_status(&run, 0, "vigil tune with the recorded configuration");
    JsonNode *root;
    JsonObject *o = parse_object(run.out, &root);
    gint64 cycles = member_int(o, "recording", "cycles");
    assert_true(cycles >= CYCLES_WANTED);
    assert_true(
        json_object_get_boolean_member(json_object_get_object_member(o, "recording"), "ended"));
    assert_true(member_int(o, "recording", "activities") >= 100);
    /* Every cycle's decisions, as vigild made them. */
    assert_int_equal(member_int(o, "recorded", "decisions_compared"), cycles);
    assert_int_equal(member_int(o, "recorded", "decisions_matched"), cycles);
    assert_true(json_node_is_null(
        json_object_get_member(json_object_get_object_member(o, "recorded"), "first_mismatch")));
    /* And the same activities forwarded as the live capture. */
    gint64 observed, forwarded;
    sink_totals(dir, &observed, &forwarded);
    assert_int_equal(member_int(o, "recorded", "observed"), observed);
    assert_int_equal(member_int(o, "recorded", "forwarded"), forwarded);
    gint64 flagged = member_int(o, "recorded", "flagged_cycles");
    assert_true(flagged >= 1); /* the stuck total memory, at least */
    assert_true(forwarded > 0);
    /* Where and when: vigild's node name (no [uplink] hostname: the
     * machine's) and its cycles in wall-clock time. */
    JsonObject *recording = json_object_get_object_member(o, "recording");
    assert_string_equal(json_object_get_string_member(recording, "node"), g_get_host_name());
    const char *first_at = json_object_get_string_member(recording, "first_cycle_at");
    const char *last_at = json_object_get_string_member(recording, "last_cycle_at");
    assert_non_null(first_at);
    assert_non_null(last_at);
    assert_true(g_regex_match_simple("^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$", first_at, 0, 0));
    assert_true(strcmp(first_at, last_at) <= 0);
    json_node_unref(root);
    test_run_clear(&run);
    format_1_is_still_read(dir, rec, cycles);
    what_if_slower_calls_are_replayed(dir, rec, learned_cycle);

    /* A candidate whose reasoners need more than 1000 issues: fewer
     * cycles flagged, fewer activities forwarded; the ADPIs still speak. */
    char *lines = daemon_lines(dir);
    char *cand_path = g_build_filename(dir, "candidate.conf", NULL);
    char *merged =
        g_strdup_printf("[daemon]\n%s[capture]\npre_cycles = 10\n[reasoner.node]\nadpis = "
                        "sensor-sanity\nthreshold = 1000\n"
                        "[adpi.sensor-sanity]\nstuck_metrics = mem.total_bytes\nstuck_cycles = 2\n"
                        "[reasoner.process]\nadpis = latency-histogram\nthreshold = 1000\n"
                        "[adpi.latency-histogram]\nlearn_calls = 100\nmin_calls = 10\n",
                        lines);
    assert_true(g_file_set_contents(cand_path, merged, -1, NULL));
    const char *with_candidate[] = {"--replay", rec,    "--config", cand_path,
                                    "--format", "json", NULL};
    run = run_tune(dir, with_candidate);
    test_assert_status(&run, 0, "vigil tune with a candidate");
    o = parse_object(run.out, &root);
    assert_int_equal(member_int(o, "candidate", "cycles"), cycles);
    assert_true(member_int(o, "candidate", "flagged_cycles") < flagged);
    assert_int_equal(member_int(o, "candidate", "flagged_cycles"), 0);
    assert_true(member_int(o, "candidate", "forwarded") < forwarded);
    JsonArray *adpis =
        json_object_get_array_member(json_object_get_object_member(o, "candidate"), "adpis");
    assert_true(json_array_get_length(adpis) >= 1);
    json_node_unref(root);
    test_run_clear(&run);

    /* The text says the same, side by side. */
    const char *text_args[] = {"--replay", rec, "--config", cand_path, NULL};
    run = run_tune(dir, text_args);
    test_assert_status(&run, 0, "vigil tune, text");
    char *on_node = g_strdup_printf("recorded on node %s, from 20", g_get_host_name());
    const char *const text_says[] = {"recorded decisions reproduced: ", on_node,
                                     "cycles flagged (capture triggers)", "node sensor-sanity",
                                     "mem.total_bytes"};
    test_assert_contains_all(run.out, text_says, G_N_ELEMENTS(text_says));
    g_free(on_node);
    test_run_clear(&run);
    g_free(merged);
    g_free(cand_path);
    g_free(lines);
    g_free(rec);
}

/* The offset of each record, walking the frames (u8 type, u32 length,
 * payload, u32 CRC) after the 16-byte header. */
static GArray *record_offsets(const guint8 *data, gsize size)
{
    GArray *offsets = g_array_new(FALSE, FALSE, sizeof(gsize));
    for (gsize at = 16; at + 9 <= size;) {
        uint32_t length = (uint32_t)data[at + 1] | (uint32_t)data[at + 2] << 8 |
                          (uint32_t)data[at + 3] << 16 | (uint32_t)data[at + 4] << 24;
        g_array_append_val(offsets, at);
        at += 9 + length;
    }
    return offsets;
}

/* The offset of the n-th (from 1) CYCLE record, 0 when there are fewer. */
static gsize nth_cycle_record(const char *data, const GArray *offsets, guint n)
{
    for (guint i = 0; i < offsets->len; i++)
        if (data[g_array_index(offsets, gsize, i)] == 8 /* CYCLE */ && --n == 0)
            return g_array_index(offsets, gsize, i);
    return 0;
}

/* `vigil tune ARGS` (`what` names the run) must exit 1 saying on stderr
 * "`damage` at offset OFFSET: " and `detail`. */
static void assert_refused_at(const char *dir, const char *const *args, const char *what,
                              const char *damage, gsize offset, const char *detail)
{
    struct test_run run = run_tune(dir, args);
    test_assert_status(&run, 1, what);
    char *want = g_strdup_printf("%s at offset %" G_GSIZE_FORMAT ": ", damage, offset);
    test_assert_contains(run.err, want);
    test_assert_contains(run.err, detail);
    g_free(want);
    test_run_clear(&run);
}

static void test_damaged_recordings_are_refused_naming_the_offset(void **state)
{
    const char *dir = *state;
    gint64 learned_cycle;
    record_live(dir, &learned_cycle);
    char *rec = g_build_filename(dir, "rec.bin", NULL), *data = NULL;
    gsize size;
    assert_true(g_file_get_contents(rec, &data, &size, NULL));
    GArray *offsets = record_offsets((const guint8 *)data, size);
    assert_true(offsets->len > 20);
    char *bad = g_build_filename(dir, "bad.bin", NULL);
    const char *args[] = {"--replay", bad, NULL};

    /* Cut inside the record after the third cycle's: the three cycles
     * are replayed, and the output says where the file ends. */
    gsize third = nth_cycle_record(data, offsets, 3);
    assert_true(third > 0);
    const guint8 *frame = (const guint8 *)data + third;
    gsize after_third = third + 9 +
                        ((uint32_t)frame[1] | (uint32_t)frame[2] << 8 | (uint32_t)frame[3] << 16 |
                         (uint32_t)frame[4] << 24);
    assert_true(g_file_set_contents(bad, data, (gssize)(after_third + 7), NULL));
    const char *json_args[] = {"--replay", bad, "--format", "json", NULL};
    struct test_run run = run_tune(dir, json_args);
    test_assert_status(&run, 0, "vigil tune with a recording cut inside a record");
    JsonNode *root;
    JsonObject *o = parse_object(run.out, &root);
    assert_int_equal(member_int(o, "recording", "cycles"), 3);
    assert_int_equal(member_int(o, "recording", "cut_at_offset"), after_third);
    assert_int_equal(member_int(o, "recorded", "decisions_matched"), 3);
    json_node_unref(root);
    test_run_clear(&run);
    run = run_tune(dir, args);
    test_assert_status(&run, 0, "vigil tune with a recording cut inside a record");
    char *want = g_strdup_printf("ends inside a record at offset %" G_GSIZE_FORMAT, after_third);
    test_assert_contains(run.out, want);
    g_free(want);
    test_run_clear(&run);

    /* Cut before the first cycle is whole: nothing to replay. */
    gsize first = nth_cycle_record(data, offsets, 1);
    assert_true(g_file_set_contents(bad, data, (gssize)(first + 7), NULL));
    assert_refused_at(dir, args, "vigil tune with a recording cut before its first cycle",
                      "truncated", first, "before the recording's first complete cycle");

    /* A flipped bit in the twentieth record. */
    gsize twentieth = g_array_index(offsets, gsize, 19);
    data[twentieth + 5] ^= 0x10;
    assert_true(g_file_set_contents(bad, data, (gssize)size, NULL));
    assert_refused_at(dir, args, "vigil tune with a corrupt recording", "corrupt", twentieth,
                      "checksum");

    /* A recorded decision changed, its checksum made good again: the
     * replay must notice, name the cycle and exit 1. */
    data[twentieth + 5] ^= 0x10;
    gsize cycle_at = nth_cycle_record(data, offsets, 1);
    assert_true(cycle_at > 0);
    guint8 *payload = (guint8 *)data + cycle_at + 5;
    uint32_t length = (uint32_t)payload[-4] | (uint32_t)payload[-3] << 8 |
                      (uint32_t)payload[-2] << 16 | (uint32_t)payload[-1] << 24;
    /* Cycle, end (varints), judged, system state, count (a varint), the
     * node's process id 0, then its state. */
    gsize at = 0;
    for (int varint = 0; varint < 2; varint++)
        while (payload[at++] & 0x80)
            ;
    at += 2;
    while (payload[at++] & 0x80)
        ;
    assert_int_equal(payload[at++], 0);
    payload[at] = payload[at] == 5 ? 3 : 5; /* ABNORMAL_BAD for OK, or OK for it */
    uLong crc = crc32(crc32(0L, Z_NULL, 0), payload - 5, 5 + length);
    for (int i = 0; i < 4; i++)
        payload[length + i] = (guint8)(crc >> (8 * i));
    assert_true(g_file_set_contents(bad, data, (gssize)size, NULL));
    run = run_tune(dir, args);
    test_assert_status(&run, 1, "vigil tune with a recorded decision changed");
    test_assert_contains(run.out, "recorded decisions NOT reproduced: ");
    test_assert_contains(run.out, "first difference: cycle 1: node 0: recorded ");
    test_run_clear(&run);

    /* Not a recording at all. */
    assert_true(g_file_set_contents(bad, "[daemon]\n", -1, NULL));
    run = run_tune(dir, args);
    test_assert_status(&run, 1, "vigil tune with a text file");
    test_assert_contains(run.err, "not a vigild recording");
    test_run_clear(&run);

    /* A truth file with a bad line names it. */
    char *truth = g_build_filename(dir, "truth.jsonl", NULL);
    assert_true(g_file_set_contents(
        truth,
        "{\"cycle\": 0, \"start_ns\": 1, \"end_ns\": 2, \"anomaly\": null}\n{\"cycle\": 1}\n", -1,
        NULL));
    const char *with_truth[] = {"--replay", rec, "--truth", truth, NULL};
    run = run_tune(dir, with_truth);
    test_assert_status(&run, 1, "vigil tune with a bad truth file");
    test_assert_contains(run.err, "truth.jsonl: line 2: ");
    test_run_clear(&run);
    g_free(truth);
    g_array_free(offsets, TRUE);
    g_free(bad);
    g_free(data);
    g_free(rec);
}

TEST_MAIN(TEST_WITH_DIR(test_replay_gives_the_live_decisions),
          TEST_WITH_DIR(test_damaged_recordings_are_refused_naming_the_offset))
