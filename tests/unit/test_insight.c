/* Unit tests of the findings (report/insight.c) on hand-built reports, each
 * at its threshold's edge: raised at it, not one step short of it; of the
 * [insight] section (core/insight_keys.c): its defaults are the engine's,
 * and what it refuses is named by key; and of the findings' two forms. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report_json.h"
#include "vigil/insight.h"
#include "vigil/schema.h"
#include "test_report_figures.h"
#include "test_support.h"

#include "test_main.h"

/* ---- the engine ----------------------------------------------------------------------------- */

#define FILES 1000
static struct vigil_report_file files[FILES];
static struct vigil_report report;
static struct vigil_insight_thresholds t;
static struct vigil_insight_findings out;

/* A process's report with `count` quiet files (one read of 4 MiB each). */
static struct vigil_report *quiet_report(int count)
{
    test_report_plain_run(&report);
    report.runtime_ms = 100000;
    for (int i = 0; i < count; i++) {
        files[i] = (struct vigil_report_file){
            .path = "/scratch/f",
            .path_bytes = 10,
            .mount = "/scratch",
            .fs_type = "lustre",
            .calls = 3,
            .read_bytes = 4194304,
            .has_layers = true,
            .posix = test_report_layer_none(),
            .stdio = test_report_layer_none(),
        };
        files[i].posix.opens = 1;
        files[i].posix.reads = 1;
        files[i].posix.read_bytes = 4194304;
        files[i].posix.read_size_hist[5] = 1;
    }
    report.files = files;
    report.file_count = count;
    vigil_insight_defaults(&t);
    return &report;
}

/* The findings' ids, space-separated ("" for none). */
static const char *ids(void)
{
    vigil_insight_find(&report, &t, NULL, "defaults", &out);
    static char text[1024];
    text[0] = '\0';
    for (int i = 0; i < out.count; i++) {
        strcat(text, i > 0 ? " " : "");
        strcat(text, out.findings[i].id);
    }
    return text;
}

static void test_quiet_run_says_nothing(void **state)
{
    (void)state;
    quiet_report(12);
    assert_string_equal(ids(), "");
    assert_string_equal(report.findings_thresholds, "defaults");
    assert_int_equal(report.finding_count, 0);
    /* Nor the report tests' runs (their MPI figures are chosen to be hard
     * on the forms, not to be a job's). */
    void (*const runs[])(struct vigil_report *) = {test_report_plain_run, test_report_regions};
    for (size_t i = 0; i < G_N_ELEMENTS(runs); i++) {
        runs[i](&report);
        vigil_insight_find(&report, &t, NULL, "vigild", &out);
        if (out.count != 0)
            fail_msg("run %zu raises %s: %s", i, out.findings[0].id, out.evidence[0]);
    }
}

static void test_small_accesses(void **state)
{
    (void)state;
    quiet_report(1);
    struct vigil_report_file_layer *p = &files[0].posix;
    files[0].posix.reads = 0;
    files[0].posix.read_size_hist[5] = 0;
    p->writes = 1000;
    p->write_size_hist[0] = 200; /* at most 100 B */
    p->write_size_hist[1] = 300; /* 101 B to 1 KiB */
    p->write_size_hist[2] = 500; /* 1 KiB + 1 to 10 KiB: not small at 1024 */
    p->seq_writes = 999;
    assert_string_equal(ids(), "small_accesses");
    assert_string_equal(out.findings[0].evidence,
                        "500 of 1000 POSIX reads and writes (50.0 %) moved at most 1 KiB each");
    assert_memory_equal(out.findings[0].file, "/scratch/f", 10);
    assert_int_equal(out.findings[0].rank, -1);
    p->write_size_hist[1] = 299;
    p->write_size_hist[2] = 501;
    assert_string_equal(ids(), "");
    t.small_access_bytes = 10240;
    assert_string_equal(ids(), "small_accesses");
    /* Too few to matter. */
    p->writes = 999;
    assert_string_equal(ids(), "");
}

static void test_misaligned_accesses(void **state)
{
    (void)state;
    quiet_report(1);
    struct vigil_report_file_layer *p = &files[0].posix;
    p->reads = 1000;
    p->read_size_hist[5] = 1000;
    p->seq_reads = 1000;
    p->file_alignment_bytes = 4096;
    p->file_not_aligned = 500;
    assert_string_equal(ids(), "misaligned_accesses");
    assert_string_equal(out.findings[0].evidence,
                        "500 of 1000 POSIX reads and writes (50.0 %) did not start on a "
                        "multiple of the file system's 4096-byte block");
    p->file_not_aligned = 499;
    assert_string_equal(ids(), "");
    /* Without the file system's block, nothing is known. */
    p->file_not_aligned = 1000;
    p->file_alignment_bytes = 0;
    assert_string_equal(ids(), "");
}

static void test_random_access(void **state)
{
    (void)state;
    quiet_report(1);
    struct vigil_report_file_layer *p = &files[0].posix;
    p->reads = 1000;
    p->read_size_hist[5] = 1000;
    p->seq_reads = 699;
    p->consec_reads = 3;
    assert_string_equal(ids(), "random_access");
    assert_string_equal(out.findings[0].evidence,
                        "only 699 of 1000 POSIX reads and writes (69.9 %) began after the "
                        "previous one ended, 3 right at its end");
    p->seq_reads = 700;
    assert_string_equal(ids(), "");
}

static void test_metadata_heavy(void **state)
{
    (void)state;
    quiet_report(1);
    struct vigil_report_file_layer *p = &files[0].posix;
    p->opens = 500;
    p->stats = 499;
    p->reads = 999; /* 999 of 1998: not half, and under the minimum */
    p->read_size_hist[5] = 999;
    p->seq_reads = 999;
    assert_string_equal(ids(), "repeated_open");
    p->stats = 500;
    p->reads = 1000;
    p->read_size_hist[5] = 1000;
    assert_string_equal(ids(), "metadata_heavy repeated_open");
    assert_null(out.findings[0].file);
    p->reads = 1001;
    assert_string_equal(ids(), "repeated_open");
    /* In a job's report, the minimum is per rank. */
    p->reads = 1000;
    report.ranks = 2;
    assert_string_equal(ids(), "repeated_open");
    p->opens = 1000;
    p->stats = 1000;
    p->reads = 2000;
    p->read_size_hist[5] = 2000;
    p->seq_reads = 2000;
    assert_string_equal(ids(), "metadata_heavy repeated_open");
}

static void test_many_small_files(void **state)
{
    (void)state;
    quiet_report(FILES);
    for (int i = 0; i < FILES; i++)
        files[i].read_bytes = 1048575;
    /* An open for each read: metadata-heavy too. */
    assert_string_equal(ids(), "metadata_heavy many_small_files");
    assert_string_equal(out.findings[1].evidence,
                        "1000 files (1000 per rank) each had less than 1 MiB read and written, "
                        "1000.0 MiB in all");
    files[0].read_bytes = 1048576;
    assert_string_equal(ids(), "metadata_heavy");
}

static void test_unbuffered_stdio(void **state)
{
    (void)state;
    quiet_report(1);
    files[0].has_stdio = true;
    struct vigil_report_file_layer *s = &files[0].stdio;
    s->opens = 1;
    s->writes = 1000;
    s->written_bytes = 1024 * 1000;
    s->fsyncs = 500; /* its fflushes */
    assert_string_equal(ids(), "unbuffered_stdio");
    assert_string_equal(out.findings[0].evidence,
                        "1000 stdio writes of 1024 bytes on average, with 500 flushes and 0 "
                        "POSIX writes on the file");
    s->fsyncs = 499;
    assert_string_equal(ids(), "");
    /* A POSIX write under each one says the same. */
    files[0].posix.writes = 500;
    assert_string_equal(ids(), "unbuffered_stdio");
    s->written_bytes++;
    assert_string_equal(ids(), "");
}

/* A stream the process made unbuffered: every write went to the kernel,
 * though no counter shows it. */
static void test_made_unbuffered(void **state)
{
    (void)state;
    quiet_report(2);
    files[1].path = "/scratch/g";
    files[1].has_stdio = true;
    files[1].stdio.writes = 1000;
    files[1].stdio.written_bytes = 16000;
    struct vigil_insight_process process = {
        .unbuffered_count = 2,
        .unbuffered_paths = {"/scratch/h", "/scratch/g"},
        .unbuffered_bytes = {10, 10},
    };
    vigil_insight_find(&report, &t, NULL, "defaults", &out);
    assert_int_equal(out.count, 0);
    vigil_insight_find(&report, &t, &process, "defaults", &out);
    assert_int_equal(out.count, 1);
    assert_string_equal(out.findings[0].id, "unbuffered_stdio");
    assert_memory_equal(out.findings[0].file, "/scratch/g", 10);
    assert_string_equal(out.findings[0].evidence,
                        "1000 stdio writes of 16 bytes on average to a stream made unbuffered, "
                        "each a write to the kernel of its own");
    files[1].stdio.writes = 999; /* too few */
    files[1].stdio.written_bytes = 15984;
    vigil_insight_find(&report, &t, &process, "defaults", &out);
    assert_int_equal(out.count, 0);
}

static void test_repeated_open(void **state)
{
    (void)state;
    quiet_report(1);
    files[0].posix.opens = 99;
    assert_string_equal(ids(), "");
    files[0].has_stdio = true;
    files[0].stdio.opens = 1;
    assert_string_equal(ids(), "repeated_open");
    assert_string_equal(out.findings[0].evidence, "opened 100 times, for 1 reads and writes");
    /* In a job's report, per rank. */
    files[0].has_ranks = true;
    files[0].ranks.count = 4;
    files[0].posix.opens = 399;
    assert_string_equal(ids(), "repeated_open");
    assert_string_equal(out.findings[0].evidence,
                        "opened 400 times by 4 ranks (100 each on average)");
    files[0].posix.opens = 398;
    assert_string_equal(ids(), "");
}

static void test_fsync_per_write(void **state)
{
    (void)state;
    quiet_report(1);
    struct vigil_report_file_layer *p = &files[0].posix;
    p->writes = 200;
    p->write_size_hist[5] = 200;
    p->fsyncs = 50;
    p->fdatasyncs = 50;
    assert_string_equal(ids(), "fsync_per_write");
    assert_string_equal(out.findings[0].evidence,
                        "100 fsync and fdatasync calls for 200 writes (one every 2.0 writes)");
    p->writes = 201;
    assert_string_equal(ids(), "");
    p->writes = 99;
    p->fsyncs = 49; /* one each, but too few */
    assert_string_equal(ids(), "");
}

static void test_independent_mpiio(void **state)
{
    (void)state;
    quiet_report(1);
    files[0].has_mpiio = true;
    files[0].has_ranks = true;
    files[0].ranks.count = 2;
    files[0].mpiio.indep_writes = 1000;
    files[0].mpiio.written_bytes = 1000 * (uint64_t)1048575;
    assert_string_equal(ids(), "independent_mpiio");
    assert_string_equal(out.findings[0].evidence,
                        "2 ranks made 1000 independent MPI-IO reads and writes of 1024.0 KiB on "
                        "average, and no collective one");
    files[0].mpiio.written_bytes = 1000 * (uint64_t)1048576;
    assert_string_equal(ids(), "");
    files[0].mpiio.written_bytes = 1000;
    files[0].mpiio.coll_writes = 1;
    assert_string_equal(ids(), "");
    files[0].mpiio.coll_writes = 0;
    files[0].ranks.count = 1; /* not shared: nothing to aggregate */
    assert_string_equal(ids(), "");
}

static void test_rank_imbalance(void **state)
{
    (void)state;
    quiet_report(0);
    report.ranks = 4;
    struct vigil_report_rank_stats *w = &report.per_rank[VIGIL_REPORT_RANK_IO_BYTES_WRITTEN];
    *w = (struct vigil_report_rank_stats){
        .min = 0, .mean = 67108864, .max = 134217728, .sum = 268435456, .max_rank = 2};
    assert_string_equal(ids(), "rank_imbalance");
    assert_int_equal(out.findings[0].rank, 2);
    assert_null(out.findings[0].file);
    assert_string_equal(out.findings[0].evidence,
                        "rank 2 wrote 128 MiB, 2.0 times the mean of 64 MiB over 4 ranks");
    w->max = 134217727;
    assert_string_equal(ids(), "");
    w->max = 134217728;
    w->sum = 268435455;
    assert_string_equal(ids(), "");
    struct vigil_report_rank_stats *io = &report.per_rank[VIGIL_REPORT_RANK_IO_TIME_SECONDS];
    *io = (struct vigil_report_rank_stats){.mean = 5, .max = 10, .sum = 20, .max_rank = 1};
    report.per_rank[VIGIL_REPORT_RANK_RUNTIME_MS].max = 100000;
    assert_string_equal(ids(), "rank_imbalance");
    assert_int_equal(out.findings[0].rank, 1);
    io->mean = 5.01;
    assert_string_equal(ids(), "");
}

static void test_io_time_share(void **state)
{
    (void)state;
    quiet_report(2);
    report.runtime_ms = 20000;
    files[0].posix.read_time_s = 6;
    files[1].posix.write_time_s = 4;
    assert_string_equal(ids(), "io_time_share");
    assert_string_equal(out.findings[0].severity, "info");
    assert_string_equal(out.findings[0].evidence,
                        "10.0 s of the 20.0 s run (50 %) went to I/O calls");
    report.runtime_ms = 20001;
    assert_string_equal(ids(), "");
    report.runtime_ms = 10000;
    files[1].posix.write_time_s = 3.99; /* half the run, but not 10 s */
    assert_string_equal(ids(), "");
}

/* Each kind names the busiest files only; the storage is never overrun. */
static void test_bounded(void **state)
{
    (void)state;
    quiet_report(FILES);
    for (int i = 0; i < FILES; i++) {
        struct vigil_report_file_layer *p = &files[i].posix;
        p->opens = 1000;
        p->reads = 1000;
        p->read_size_hist[0] = 1000;
        p->read_size_hist[5] = 0;
        p->fsyncs = 1000;
        p->writes = 1000;
        p->write_size_hist[0] = 1000;
        p->file_alignment_bytes = 4096;
        p->file_not_aligned = 2000;
    }
    report.rank = 5;
    vigil_insight_find(&report, &t, NULL, "vigild", &out);
    /* small, misaligned, random, repeated open, fsync: three files each. */
    assert_int_equal(out.count, 5 * VIGIL_INSIGHT_PER_KIND);
    assert_true(out.count <= VIGIL_INSIGHT_MAX);
    assert_int_equal(out.findings[0].rank, 5); /* a rank's own report names it */
    assert_string_equal(report.findings_thresholds, "vigild");
}

/* ---- [insight] ------------------------------------------------------------------------------ */

static vigil_config *config_of(const char *text, GError **error)
{
    char *dir = g_dir_make_tmp("vigil-insight-XXXXXX", NULL);
    assert_non_null(dir);
    char *path = g_build_filename(dir, "vigil.conf", NULL);
    assert_true(g_file_set_contents(path, text, -1, NULL));
    vigil_config *config = vigil_config_new();
    assert_true(vigil_schema_declare(config, NULL));
    if (!vigil_config_load(config, path, error))
        g_clear_pointer(&config, vigil_config_free);
    test_remove_tree(dir);
    g_free(path);
    g_free(dir);
    return config;
}

static void test_defaults_are_the_engines(void **state)
{
    (void)state;
    vigil_config *config = config_of("", NULL);
    struct vigil_insight_thresholds loaded, defaults;
    assert_true(vigil_settings_load(config, &vigil_insight_keys, &loaded, NULL));
    vigil_insight_defaults(&defaults);
    assert_memory_equal(&loaded, &defaults, sizeof loaded);
    char why[200];
    assert_null(vigil_insight_check(&defaults, why, sizeof why));
    vigil_config_free(config);
}

static void test_bad_settings_are_named(void **state)
{
    (void)state;
    static const struct {
        const char *text, *message;
    } bad[] = {
        {"[insight]\nsmall_access_bytes = 1000\n",
         "[insight] small_access_bytes: 1000 is not one of Darshan's size-bin edges (100, 1024"},
        {"[insight]\nsmall_access_share = 0\n",
         "[insight] small_access_share: 0 is not a share above 0 and at most 1"},
        {"[insight]\nimbalance_ratio = 1\n", "[insight] imbalance_ratio: 1 is not a ratio above 1"},
        {"[insight]\nio_time_min_s = 0\n", "[insight] io_time_min_s: 0 is not above 0"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        GError *error = NULL;
        vigil_config *config = config_of(bad[i].text, &error);
        assert_non_null(config);
        struct vigil_insight_thresholds loaded;
        if (vigil_settings_load(config, &vigil_insight_keys, &loaded, &error))
            fail_msg("accepted: %s", bad[i].text);
        test_assert_contains(error->message, "vigil.conf: ");
        test_assert_contains(error->message, bad[i].message);
        g_error_free(error);
        vigil_config_free(config);
    }
    /* What the key's type and range say, the loader says. */
    static const struct {
        const char *text, *message;
    } refused[] = {
        {"[insight]\nsmall_access_share = 2\n", "small_access_share"},
        {"[insight]\nmin_accesses = -1\n", "min_accesses"},
        {"[insight]\nsmall_acess_bytes = 1024\n", "small_acess_bytes"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
        GError *error = NULL;
        if (config_of(refused[i].text, &error) != NULL)
            fail_msg("loaded: %s", refused[i].text);
        test_assert_contains(error->message, "[insight]");
        test_assert_contains(error->message, refused[i].message);
        g_error_free(error);
    }
}

/* ---- the forms ------------------------------------------------------------------------------ */

static void test_text_and_json(void **state)
{
    (void)state;
    quiet_report(1);
    files[0].posix.opens = 100;
    report.rank = 3;
    vigil_insight_find(&report, &t, NULL, "vigild", &out);
    char *text = vigil_cli_report_text(&report);
    test_assert_contains(text, "\nfindings (thresholds: vigild)\nwarning repeated_open: "
                               "/scratch/f (rank 3)\n  opened 100 times, for 1 reads and "
                               "writes\n  what to change: Open the file once");
    char *json = vigil_cli_report_json(&report);
    test_assert_contains(json, ",\"findings\":[{\"id\":\"repeated_open\",\"severity\":\"warning\","
                               "\"file\":\"/scratch/f\",\"rank\":3,\"evidence\":\"opened 100 "
                               "times, for 1 reads and writes\",\"advice\":\"Open the file once");
    test_assert_contains(json, "],\"findings_thresholds\":\"vigild\"}");
    g_free(text);
    g_free(json);
    quiet_report(1);
    vigil_insight_find(&report, &t, NULL, "defaults", &out);
    text = vigil_cli_report_text(&report);
    test_assert_contains(text, "\nfindings (thresholds: defaults): none\n");
    json = vigil_cli_report_json(&report);
    test_assert_contains(json, ",\"findings\":[],\"findings_thresholds\":\"defaults\"}");
    g_free(text);
    g_free(json);
}

static void test_bad_findings_are_refused(void **state)
{
    (void)state;
    quiet_report(1);
    files[0].posix.opens = 100;
    vigil_insight_find(&report, &t, NULL, "vigild", &out);
    char *json = vigil_cli_report_json(&report);
    static const struct {
        const char *from, *to, *message;
    } edits[] = {
        {"\"severity\":\"warning\"", "\"severity\":\"urgent\"",
         "report: findings.0: severity: \"urgent\" is neither warning nor info"},
        {"\"id\":\"repeated_open\"", "\"id\":\"\"", "report: findings.0: id: empty"},
        {"\"rank\":null", "\"rank\":-1", "report: findings.0.rank: expected a rank"},
        {"\"file\":\"/scratch/f\"", "\"file\":7",
         "report: findings.0.file: expected a string, found an integer"},
        {",\"findings_thresholds\":\"vigild\"", "", "report: findings_thresholds: missing"},
        {"\"findings\":[", "\"findings\":7,\"x\":[", "report: findings: expected an array"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(edits); i++) {
        const char *at = strstr(json, edits[i].from);
        assert_non_null(at);
        char *bad = g_strdup_printf("%.*s%s%s", (int)(at - json), json, edits[i].to,
                                    at + strlen(edits[i].from));
        struct vigil_cli_report back;
        GError *error = NULL;
        if (vigil_cli_report_parse(bad, -1, &back, &error))
            fail_msg("accepted, though %s:\n%s", edits[i].message, bad);
        test_assert_contains(error->message, edits[i].message);
        g_error_free(error);
        g_free(bad);
    }
    g_free(json);
}

TEST_MAIN(cmocka_unit_test(test_quiet_run_says_nothing), cmocka_unit_test(test_small_accesses),
          cmocka_unit_test(test_misaligned_accesses), cmocka_unit_test(test_random_access),
          cmocka_unit_test(test_metadata_heavy), cmocka_unit_test(test_many_small_files),
          cmocka_unit_test(test_unbuffered_stdio), cmocka_unit_test(test_made_unbuffered),
          cmocka_unit_test(test_repeated_open), cmocka_unit_test(test_fsync_per_write),
          cmocka_unit_test(test_independent_mpiio), cmocka_unit_test(test_rank_imbalance),
          cmocka_unit_test(test_io_time_share), cmocka_unit_test(test_bounded),
          cmocka_unit_test(test_defaults_are_the_engines),
          cmocka_unit_test(test_bad_settings_are_named), cmocka_unit_test(test_text_and_json),
          cmocka_unit_test(test_bad_findings_are_refused))
