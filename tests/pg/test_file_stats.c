/* vigil-txd fills file_stats and process_io_timelines (warehouse/migrations/0008) from
 * the reports it stores: every member of a file from hand-written reports
 * (tests/pg/fixtures/report_files*.json, the report's JSON contract), the
 * reports from before issue 18 with what they had, an MPI job's report
 * counted once, and a report whose files part is malformed: that part
 * left out with the reason logged, the rest of the batch stored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "test_pg.h"
#include "test_report.h"
#include "test_support.h"
#include "test_txd.h"
#include "vigil/clock.h"
#include "vigil/health.h"

static guint64 count(struct test_txd_fixture *f, const char *sql)
{
    return test_pg_query_u64_in(f->conninfo, sql);
}

static void assert_query(struct test_txd_fixture *f, const char *sql, const char *want)
{
    char *got = test_pg_query_text_in(f->conninfo, sql);
    if (strcmp(got, want) != 0)
        fail_msg("%s\n gave: %s\n want: %s", sql, got, want);
    g_free(got);
}

static char *fixture(const char *name)
{
    char *path = g_build_filename(test_env_or_fail("VIGIL_FILE_STATS_FIXTURES"), name, NULL);
    char *text = test_read_file(path);
    g_free(path);
    return text;
}

/* `text` with its first `from` made `to` (which must be there). */
static char *replaced(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    if (at == NULL)
        fail_msg("the fixture has no \"%s\"", from);
    return g_strdup_printf("%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

/* A batch of node 1: process i (daemon id i + 1, pid 2000 + i, rank
 * ranks[i] or -1) of run "files-run" with reports[i] as its summary. */
static GBytes *batch_of_reports(uint64_t sequence, guint n, const char *const *reports,
                                const int32_t *ranks)
{
    GError *error = NULL;
    vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, 1, sequence, 0);
    test_txd_add_node(batch, 1, sequence, "files-node", vigil_clock_monotonic_ns() - 1000000000u,
                      0);
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, 1, sequence, 0);
    char *argv[] = {"ior", NULL};
    for (guint i = 0; i < n; i++) {
        struct vigil_wire_process p = {.process_id = i + 1,
                                       .pid = (int32_t)(2000 + i),
                                       .rank = ranks != NULL ? ranks[i] : -1,
                                       .exit_code = 0,
                                       .start_ns = 1000000000u + i,
                                       .end_ns = 3000000000u + i,
                                       .run_key = "files-run",
                                       .job = "",
                                       .program = "/usr/bin/ior",
                                       .cwd = "/tmp",
                                       .argc = 1,
                                       .argv = argv};
        test_txd_check_item(vigil_wire_add_process(w, &p, &error), &error);
    }
    test_txd_add_message(batch, w);
    w = vigil_wire_writer_new(VIGIL_WIRE_SUMMARIES, 1, sequence, 0);
    for (guint i = 0; i < n; i++) {
        struct vigil_wire_summary s = {.process_id = i + 1, .report_json = (char *)reports[i]};
        test_txd_check_item(vigil_wire_add_summary(w, &s, &error), &error);
    }
    test_txd_add_message(batch, w);
    return vigil_wire_writer_finish(batch);
}

static void send_and_expect_ack(struct test_txd_fixture *f, GBytes *batch, uint64_t sequence)
{
    struct test_sender s;
    test_sender_open(&s, f->txd.endpoint, 1, NULL, NULL, NULL);
    test_sender_send_acked(&s, batch, sequence);
    test_sender_close(&s);
    g_bytes_unref(batch);
}

/* SELECT … FROM file_stats of pid `pid`'s report, at `position`. */
static char *file_sql(const char *columns, int pid, int position)
{
    return g_strdup_printf("SELECT %s FROM file_stats f JOIN processes p USING (process_id) "
                           "WHERE p.pid = %d AND f.position = %d",
                           columns, pid, position);
}

static void assert_file(struct test_txd_fixture *f, int pid, int position, const char *columns,
                        const char *want)
{
    char *sql = file_sql(columns, pid, position);
    assert_query(f, sql, want);
    g_free(sql);
}

static void test_every_member_of_every_file_is_stored(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    char *report = fixture("report_files.json");
    /* A report from before issue 18: its files as they were then. */
    const char *old = "{\"version\": 1, \"files\": [{\"path\": \"/old/a\", \"calls\": 5, "
                      "\"bytes_read\": 100, \"bytes_written\": 7}]}";
    /* Cut to fit its bound: 40 files, the 3 busiest listed. */
    char *cut = replaced(report, "\"files_total\": 3", "\"files_total\": 40");
    const char *reports[] = {report, old, cut};
    send_and_expect_ack(f, batch_of_reports(1, 3, reports, NULL), 1);

    assert_int_equal(count(f, "SELECT count(*) FROM file_stats"), 3 + 1 + 3);
    assert_int_equal(count(f, "SELECT files_unlisted FROM run_files_unlisted"), 37);
    assert_file(f, 2000, 0,
                "concat_ws(' ', path, mount, fs_type, calls, read_bytes, written_bytes, "
                "in_job_report)",
                "/scratch/ior/testFile /scratch lustre 132 33554432 67108864 f");
    assert_file(f, 2000, 0,
                "concat_ws(' ', posix_reads, posix_writes, posix_opens, posix_seeks, posix_stats, "
                "posix_fsyncs, posix_other, posix_read_bytes, posix_written_bytes, "
                "max_read_offset, max_written_offset)",
                "32 64 2 32 1 1 0 33554432 67108864 33554431 67108863");
    assert_file(f, 2000, 0,
                "concat_ws(' ', seq_reads, seq_writes, consec_reads, consec_writes, "
                "read_size_hist, write_size_hist, common_sizes, common_strides)",
                "31 63 31 63 {0,0,0,0,0,32,0,0,0,0} {0,0,0,0,0,64,0,0,0,0} "
                "[{\"size\": 1048576, \"count\": 96}] "
                "[{\"count\": 94, \"stride\": 0}, {\"count\": 1, \"stride\": -1048576}]");
    assert_file(f, 2000, 0,
                "concat_ws(' ', read_time_s, write_time_s, meta_time_s, first_open_s, "
                "last_close_s, first_io_s, last_io_s)",
                "0.0125 0.25 0.001 0.01 1.9 0.011 1.85");
    assert_file(f, 2000, 0,
                "concat_ws(' ', mpiio_coll_writes IS NULL, rank_count IS NULL, shared IS NULL)",
                "t t t");
    /* -1: never opened (a descriptor inherited), no offset. */
    assert_file(f, 2000, 2, "concat_ws(' ', path, first_open_s IS NULL, max_written_offset)",
                "<stdout> t -1");
    assert_file(f, 2001, 0,
                "concat_ws(' ', path, mount, fs_type, calls, read_bytes, written_bytes, "
                "posix_reads IS NULL, read_size_hist IS NULL)",
                "/old/a /  5 100 7 t t");
    assert_query(f,
                 "SELECT concat_ws(' ', bin_s, read_bytes, written_bytes) FROM "
                 "run_io_timelines WHERE pid = 2000",
                 "0.5 {1568,33554432,0,0} {0,16777216,33554432,16777258}");
    assert_int_equal(count(f, "SELECT count(*) FROM process_io_timelines"), 2);
    /* The run's files: every process's counted, each path once. */
    assert_int_equal(count(f, "SELECT count(*) FROM run_files"), 4);
    assert_query(f,
                 "SELECT string_agg(path || ':' || reports || ':' || (read_bytes + "
                 "written_bytes), ' ' ORDER BY read_bytes + written_bytes DESC) FROM run_files",
                 "/scratch/ior/testFile:2:201326592 /etc/passwd:2:3136 /old/a:1:107 "
                 "<stdout>:2:84");
    assert_query(f,
                 "SELECT concat_ws(' ', read_size_hist, seq_writes, max_written_offset, "
                 "common_sizes, first_open_s, last_close_s) FROM run_files WHERE path = "
                 "'/scratch/ior/testFile'",
                 "{0,0,0,0,0,64,0,0,0,0} 126 67108863 [{\"size\": 1048576, \"count\": 192}] "
                 "0.01 1.9");
    char *log = test_txd_stop(&f->txd);
    assert_null(strstr(log, "not stored"));
    g_free(log);
    g_free(report);
    g_free(cut);
}

static void test_a_malformed_files_part_is_left_out_and_said(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    /* The good report, then 5 made from it, each with one thing wrong. */
    static const struct {
        const char *from, *to;
    } wrong[] = {
        /* The second file's read histogram one bin short. */
        {"\"read_size_hist\": [0, 0, 2, 0, 0, 0, 0, 0, 0, 0]",
         "\"read_size_hist\": [0, 0, 2, 0, 0, 0, 0, 0, 0]"},
        {"\"calls\": 132", "\"calls\": -132"},
        {"\"files\": [", "\"files\": \"none\", \"x\": ["},
        {"\"files_total\": 3", "\"files_total\": 2"},
        /* Only the timeline is wrong: the files are kept. */
        {"\"written_bytes\": [0, 16777216, 33554432, 16777258]",
         "\"written_bytes\": [0, 16777216]"},
    };
    char *reports[1 + G_N_ELEMENTS(wrong)];
    reports[0] = fixture("report_files.json");
    for (size_t i = 0; i < G_N_ELEMENTS(wrong); i++)
        reports[1 + i] = replaced(reports[0], wrong[i].from, wrong[i].to);
    send_and_expect_ack(
        f, batch_of_reports(1, G_N_ELEMENTS(reports), (const char *const *)reports, NULL), 1);

    assert_int_equal(count(f, "SELECT count(*) FROM run_summaries"), 6);
    assert_query(f,
                 "SELECT string_agg(p.pid || ':' || (SELECT count(*) FROM file_stats f WHERE "
                 "f.process_id = p.process_id), ' ' ORDER BY p.pid) FROM processes p",
                 "2000:3 2001:0 2002:0 2003:0 2004:0 2005:3");
    assert_query(f, "SELECT string_agg(pid::text, ' ' ORDER BY pid) FROM run_io_timelines",
                 "2000 2001 2002 2003 2004");
    char *log = test_txd_stop(&f->txd);
    test_assert_contains(log, "batch 1:1, process 2 (");
    test_assert_contains(log, "files[1] (\"/etc/passwd\").posix.read_size_hist: 9 entries, 10 "
                              "expected); the report and the rest of the batch are");
    test_assert_contains(log, "files[0] (\"/scratch/ior/testFile\").calls: -132 is out of range");
    test_assert_contains(log, "the report's files are not stored (files: expected an array, "
                              "found a string)");
    test_assert_contains(log, "files_total: 2 files, but \"files\" lists 3");
    test_assert_contains(log, "the report's timeline are not stored (timeline: 4 bins of "
                              "read_bytes but 2 of written_bytes)");
    g_free(log);
    for (size_t i = 0; i < G_N_ELEMENTS(reports); i++)
        g_free(reports[i]);
}

static void test_a_job_counts_once_and_a_report_again_replaces_its_rows(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    char *job = fixture("report_files_job.json");
    /* Rank 1's own report, counted in the job's. */
    const char *rank1 = "{\"version\": 1, \"in_job_report\": true, \"files_total\": 1, "
                        "\"files\": [{\"path\": \"/scratch/shared.dat\", \"mount\": \"/scratch\", "
                        "\"fs_type\": \"lustre\", \"calls\": 6, \"read_bytes\": 0, "
                        "\"written_bytes\": 16777216, \"posix\": null, \"mpiio\": null, "
                        "\"ranks\": null}], \"timeline\": {\"bin_s\": 1.0, \"read_bytes\": [0], "
                        "\"written_bytes\": [16777216]}}";
    const char *reports[] = {job, rank1};
    const int32_t ranks[] = {0, 1};
    send_and_expect_ack(f, batch_of_reports(1, 2, reports, ranks), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM file_stats WHERE in_job_report"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM run_files"), 1);
    assert_query(f,
                 "SELECT concat_ws(' ', reports, calls, written_bytes, mpiio_coll_writes, "
                 "mpiio_written_bytes, rank_count, shared, fastest_rank, fastest_s, "
                 "fastest_bytes, slowest_rank, slowest_s, time_variance_s2, most_posix_rank, "
                 "most_posix_bytes, least_posix_rank, least_posix_bytes, write_size_hist, "
                 "common_sizes) FROM run_files",
                 "1 24 67108864 4 67108864 4 t 3 0.15 16777216 0 0.25 0.00125 0 67108864 1 0 "
                 "{0,0,0,0,0,0,0,4,0,0} [{\"size\": 16777216, \"count\": 4}]");
    assert_query(f, "SELECT string_agg(rank::text, ' ') FROM run_io_timelines", "0");

    /* The same reports in a later batch: the rows are replaced, not added. */
    send_and_expect_ack(f, batch_of_reports(2, 2, reports, ranks), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM file_stats"), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM process_io_timelines"), 2);
    g_free(job);
}

/* Issue 33's members (warehouse/migrations/0017): every one stored, a
 * row marked as binned the Darshan way, and run_files merging three
 * reports of one path: counts summed, the slowest call the max with its
 * size, the smallest alignment, the first known mode, common values'
 * counts summed and exact only where every report listed them exact. */
static void test_every_darshan_counter_is_stored_and_merged(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    char *first = fixture("report_files_darshan.json");
    char *a = replaced(first, "\"mode\": 420", "\"mode\": -1");
    char *b = replaced(a, "\"max_write_time_s\": 0.125, \"max_write_time_size\": 1024",
                       "\"max_write_time_s\": 0.5, \"max_write_time_size\": 2048");
    char *second = replaced(b, "\"file_alignment_bytes\": 4096", "\"file_alignment_bytes\": 512");
    /* The third lists another common size: 1024's sum is a lower bound. */
    char *third = replaced(first, "{\"size\": 1024, \"count\": 3072, \"exact\": true}",
                           "{\"size\": 2048, \"count\": 1, \"exact\": true}");
    const char *reports[] = {first, second, third};
    send_and_expect_ack(f, batch_of_reports(1, 3, reports, NULL), 1);

    assert_file(f, 2000, 0,
                "concat_ws(' ', size_bins_upper_inclusive, posix_rw_switches, posix_fdatasyncs, "
                "posix_fsyncs, posix_filenos, posix_dups, posix_mode, posix_file_alignment_bytes, "
                "posix_file_not_aligned, posix_mem_alignment_bytes, posix_mem_not_aligned, "
                "posix_max_read_time_s, posix_max_read_time_size, posix_max_write_time_s, "
                "posix_max_write_time_size, common_sizes, common_strides)",
                "t 3 2 1 1 4 420 4096 2304 8 5 0.0625 1024 0.125 1024 "
                "[{\"size\": 1024, \"count\": 3072, \"exact\": true}] "
                "[{\"count\": 2, \"exact\": false, \"stride\": 1024}]");
    assert_file(f, 2000, 0,
                "concat_ws(' ', mpiio_indep_opens, mpiio_coll_opens, mpiio_syncs, mpiio_hints, "
                "mpiio_views, mpiio_rw_switches, mpiio_mode, mpiio_read_size_hist, "
                "mpiio_write_size_hist, mpiio_common_sizes, mpiio_max_read_time_s, "
                "mpiio_max_read_time_size, mpiio_max_write_time_s, mpiio_max_write_time_size)",
                "0 2 1 3 2 1 37 {0,0,0,0,2,0,0,0,0,0} {0,0,0,0,4,0,0,0,0,0} "
                "[{\"size\": 524288, \"count\": 6, \"exact\": true}] 0.25 524288 0.375 524288");
    /* -1: the mode not known. */
    assert_file(f, 2001, 0, "coalesce(posix_mode::text, 'NULL')", "NULL");

    assert_query(f,
                 "SELECT concat_ws(' ', reports, size_bins_upper_inclusive, posix_rw_switches, "
                 "posix_fdatasyncs, posix_filenos, posix_dups, posix_mode, "
                 "posix_file_alignment_bytes, posix_file_not_aligned, posix_mem_alignment_bytes, "
                 "posix_mem_not_aligned, posix_max_read_time_s, posix_max_read_time_size, "
                 "posix_max_write_time_s, posix_max_write_time_size, common_sizes, "
                 "common_strides) FROM run_files",
                 "3 t 9 6 3 12 420 512 6912 8 15 0.0625 1024 0.5 2048 "
                 "[{\"size\": 1024, \"count\": 6144, \"exact\": false}, "
                 "{\"size\": 2048, \"count\": 1, \"exact\": false}] "
                 "[{\"count\": 6, \"exact\": false, \"stride\": 1024}]");
    assert_query(f,
                 "SELECT concat_ws(' ', mpiio_indep_opens, mpiio_coll_opens, mpiio_syncs, "
                 "mpiio_hints, mpiio_views, mpiio_rw_switches, mpiio_mode, mpiio_read_size_hist, "
                 "mpiio_write_size_hist, mpiio_common_sizes, mpiio_max_read_time_s, "
                 "mpiio_max_read_time_size, mpiio_max_write_time_s, mpiio_max_write_time_size) "
                 "FROM run_files",
                 "0 6 3 9 6 3 37 {0,0,0,0,6,0,0,0,0,0} {0,0,0,0,12,0,0,0,0,0} "
                 "[{\"size\": 524288, \"count\": 18, \"exact\": true}] 0.25 524288 0.375 524288");
    /* The report's findings are kept whole with it. */
    assert_query(f,
                 "SELECT string_agg(s.report -> 'findings' -> 0 ->> 'id', ' ' ORDER BY p.pid) "
                 "FROM run_summaries s JOIN processes p USING (process_id)",
                 "misaligned_accesses misaligned_accesses misaligned_accesses");
    char *log = test_txd_stop(&f->txd);
    assert_null(strstr(log, "not stored"));
    g_free(log);
    g_free(first);
    g_free(a);
    g_free(b);
    g_free(second);
    g_free(third);
}

/* `vigil report RUN --format json` on this fixture's warehouse. */
static JsonNode *vigil_report_json(struct test_txd_fixture *f, const char *run, JsonParser **parser)
{
    char *config = g_build_filename(f->dir, "vigil-report.conf", NULL);
    char *text = g_strdup_printf("[warehouse]\nconninfo = %s\n", f->conninfo);
    assert_true(g_file_set_contents(config, text, -1, NULL));
    char *var = g_strdup_printf("VIGIL_CONFIG=%s", config);
    const char *vars[] = {var, NULL};
    struct test_run r = test_run_vigil_words(vars, "report", run, "--format", "json", NULL);
    test_assert_status(&r, 0, "vigil report --format json");
    *parser = json_parser_new();
    GError *error = NULL;
    if (!json_parser_load_from_data(*parser, r.out, -1, &error))
        fail_msg("vigil report printed no JSON (%s): %s", error->message, r.out);
    test_run_clear(&r);
    g_free(var);
    g_free(text);
    g_free(config);
    return json_parser_get_root(*parser);
}

/* `vigil report` of a stored report with issue 33's members prints them
 * back (report/report_json.c reads a layer by the table in
 * report/report_files.c). The stored report's members are the truth. */
static void test_vigil_report_prints_the_stored_darshan_counters(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    char *report = fixture("report_files_darshan.json");
    const char *reports[] = {report};
    send_and_expect_ack(f, batch_of_reports(1, 1, reports, NULL), 1);
    char *log = test_txd_stop(&f->txd);
    g_free(log);
    JsonParser *parser = NULL;
    JsonNode *root = vigil_report_json(f, "files-run", &parser);
    /* What every vigil since issue 18 prints back. */
    static const struct {
        const char *path;
        int64_t value;
    } before[] = {
        {"files.0.posix.reads", 1024},
        {"files.0.posix.write_size_hist.1", 2048},
        {"files.0.mpiio.coll_writes", 4},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(before); i++)
        assert_int_equal(test_json_int(root, "vigil report", before[i].path), before[i].value);
    /* Issue 33's: the stored values, each. */
    static const struct {
        const char *path;
        int64_t value;
    } counters[] = {
        {"files.0.posix.rw_switches", 3},
        {"files.0.posix.fdatasyncs", 2},
        {"files.0.posix.fsyncs", 1},
        {"files.0.posix.filenos", 1},
        {"files.0.posix.dups", 4},
        {"files.0.posix.mode", 420},
        {"files.0.posix.file_alignment_bytes", 4096},
        {"files.0.posix.file_not_aligned", 2304},
        {"files.0.posix.mem_alignment_bytes", 8},
        {"files.0.posix.mem_not_aligned", 5},
        {"files.0.posix.max_read_time_size", 1024},
        {"files.0.posix.max_write_time_size", 1024},
        {"files.0.mpiio.indep_opens", 0},
        {"files.0.mpiio.coll_opens", 2},
        {"files.0.mpiio.syncs", 1},
        {"files.0.mpiio.hints", 3},
        {"files.0.mpiio.views", 2},
        {"files.0.mpiio.rw_switches", 1},
        {"files.0.mpiio.mode", 37},
        {"files.0.mpiio.read_size_hist.4", 2},
        {"files.0.mpiio.write_size_hist.4", 4},
        {"files.0.mpiio.common_sizes.0.size", 524288},
        {"files.0.mpiio.common_sizes.0.count", 6},
        {"files.0.mpiio.max_read_time_size", 524288},
        {"files.0.mpiio.max_write_time_size", 524288},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(counters); i++)
        assert_int_equal(test_json_int(root, "vigil report", counters[i].path), counters[i].value);
    static const struct {
        const char *path;
        double value;
    } times[] = {
        {"files.0.posix.max_read_time_s", 0.0625},
        {"files.0.posix.max_write_time_s", 0.125},
        {"files.0.mpiio.max_read_time_s", 0.25},
        {"files.0.mpiio.max_write_time_s", 0.375},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(times); i++)
        assert_true(test_json_number(root, "vigil report", times[i].path) == times[i].value);
    assert_true(json_node_get_boolean(test_json_node(root, "files.0.posix.common_sizes.0.exact")));
    assert_false(
        json_node_get_boolean(test_json_node(root, "files.0.posix.common_strides.0.exact")));
    g_object_unref(parser);
    g_free(report);
}

/* Reports from before issue 33: its columns NULL, and run_files says the
 * path's histograms follow the old bins. */
static void test_reports_before_darshan_counters_store_null(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    char *report = fixture("report_files.json");
    char *job = fixture("report_files_job.json");
    const char *reports[] = {report, job};
    send_and_expect_ack(f, batch_of_reports(1, 2, reports, NULL), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM file_stats WHERE size_bins_upper_inclusive "
                              "IS NULL AND posix_rw_switches IS NULL AND posix_mode IS NULL AND "
                              "posix_max_write_time_s IS NULL AND mpiio_coll_opens IS NULL AND "
                              "mpiio_read_size_hist IS NULL AND mpiio_common_sizes IS NULL"),
                     4);
    assert_query(f,
                 "SELECT string_agg(path || ':' || size_bins_upper_inclusive, ' ' ORDER BY path) "
                 "FROM run_files",
                 "/etc/passwd:false /scratch/ior/testFile:false /scratch/shared.dat:false "
                 "<stdout>:false");
    char *log = test_txd_stop(&f->txd);
    assert_null(strstr(log, "not stored"));
    g_free(log);
    g_free(report);
    g_free(job);
}

/* A wrong new member is refused like the others: the files part left out,
 * the member named. */
static void test_a_wrong_darshan_counter_is_refused_and_named(void **state)
{
    struct test_txd_fixture *f = *state;
    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    static const struct {
        const char *from, *to, *said;
    } wrong[] = {
        {"\"rw_switches\": 3", "\"rw_switches\": -3",
         "files[0] (\"/scratch/aligned.dat\").posix.rw_switches: -3 is out of range"},
        {"\"mode\": 420", "\"mode\": \"rw-r--r--\"",
         "files[0] (\"/scratch/aligned.dat\").posix.mode: expected an integer, found a string"},
        {"\"mode\": 37", "\"mode\": -2",
         "files[0] (\"/scratch/aligned.dat\").mpiio.mode: -2 is out of range -1…2147483647"},
        {"\"count\": 3072, \"exact\": true", "\"count\": 3072, \"exact\": 1",
         "files[0] (\"/scratch/aligned.dat\").posix.common_sizes[0].exact: expected true or "
         "false, found an integer"},
        {"\"read_size_hist\": [0, 0, 0, 0, 2, 0, 0, 0, 0, 0]",
         "\"read_size_hist\": [0, 0, 0, 0, 2, 0, 0, 0, 0]",
         "files[0] (\"/scratch/aligned.dat\").mpiio.read_size_hist: 9 entries, 10 expected"},
        {"\"max_write_time_s\": 0.375", "\"max_write_time_s\": -0.375",
         "files[0] (\"/scratch/aligned.dat\").mpiio.max_write_time_s: -0.375 is out of range "
         "(0 or more)"},
        {"\"file_not_aligned\": 2304", "\"file_not_aligned\": null",
         "files[0] (\"/scratch/aligned.dat\").posix.file_not_aligned: expected an integer, "
         "found null"},
    };
    char *good = fixture("report_files_darshan.json");
    char *reports[G_N_ELEMENTS(wrong)];
    for (size_t i = 0; i < G_N_ELEMENTS(wrong); i++)
        reports[i] = replaced(good, wrong[i].from, wrong[i].to);
    send_and_expect_ack(
        f, batch_of_reports(1, G_N_ELEMENTS(reports), (const char *const *)reports, NULL), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM run_summaries"), G_N_ELEMENTS(wrong));
    assert_int_equal(count(f, "SELECT count(*) FROM file_stats"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM process_io_timelines"), G_N_ELEMENTS(wrong));
    char *log = test_txd_stop(&f->txd);
    for (size_t i = 0; i < G_N_ELEMENTS(wrong); i++)
        test_assert_contains(log, wrong[i].said);
    g_free(log);
    for (size_t i = 0; i < G_N_ELEMENTS(reports); i++)
        g_free(reports[i]);
    g_free(good);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_every_member_of_every_file_is_stored),
             TEST_WITH_TXD_FIXTURE(test_a_malformed_files_part_is_left_out_and_said),
             TEST_WITH_TXD_FIXTURE(test_a_job_counts_once_and_a_report_again_replaces_its_rows),
             TEST_WITH_TXD_FIXTURE(test_every_darshan_counter_is_stored_and_merged),
             TEST_WITH_TXD_FIXTURE(test_reports_before_darshan_counters_store_null),
             TEST_WITH_TXD_FIXTURE(test_a_wrong_darshan_counter_is_refused_and_named),
             TEST_WITH_TXD_FIXTURE(test_vigil_report_prints_the_stored_darshan_counters))
