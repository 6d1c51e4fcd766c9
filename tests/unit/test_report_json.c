/* Unit tests of the report's two forms (report/report_text.c) and of reading
 * the JSON back (report/report_json.c): for every kind of report, the text
 * made from the figures is the text made from their JSON read back, byte
 * for byte, and the JSON read back and written again is the same JSON.
 * That is what lets `vigil report` print a stored report exactly as the
 * console showed it. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report_json.h"
#include "vigil/local_protocol.h"
#include "test_report_figures.h"
#include "test_support.h"

#include "report_refusals.h"
#include "test_main.h"

/* The figure sets are tests/support/test_report_figures.c's. */

/* ---- the round trip ------------------------------------------------------------------------- */

/* The text and the JSON of `f` are the same made again from its JSON
 * read back, and the JSON is printable ASCII on one line. */
static void assert_round_trip(const char *name, const struct vigil_report *f)
{
    char *text = vigil_cli_report_text(f);
    char *json = vigil_cli_report_json(f);
    struct vigil_cli_report back;
    GError *error = NULL;
    if (!vigil_cli_report_parse(json, -1, &back, &error))
        fail_msg("%s: its own JSON is refused: %s\n%s", name, error->message, json);
    char *text_again = vigil_cli_report_text(&back.r);
    char *json_again = vigil_cli_report_json(&back.r);
    if (strcmp(text, text_again) != 0)
        fail_msg("%s: the text differs after the JSON\nbefore:\n%s\nafter:\n%s", name, text,
                 text_again);
    if (strcmp(json, json_again) != 0)
        fail_msg("%s: the JSON differs when read back\nbefore:\n%s\nafter:\n%s", name, json,
                 json_again);
    for (const char *p = json; *p != '\0'; p++)
        if ((unsigned char)*p >= 0x7f || (*p < 0x20 && p[1] != '\0'))
            fail_msg("%s: byte 0x%02x at %zu of the JSON", name, (unsigned char)*p,
                     (size_t)(p - json));
    vigil_cli_report_clear(&back);
    g_free(text);
    g_free(json);
    g_free(text_again);
    g_free(json_again);
}

static void test_text_and_json_survive_the_json(void **state)
{
    (void)state;
    for (size_t i = 0; i < G_N_ELEMENTS(test_report_figure_sets); i++) {
        static struct vigil_report f;
        test_report_figure_sets[i](&f);
        assert_round_trip(test_report_figure_set_names[i], &f);
    }
}

/* ---- what the forms say -----------------------------------------------------------------------
 */

static void test_plain_text(void **state)
{
    (void)state;
    char *text = report_text_of(test_report_plain_run);
    const char *const lines[] = {
        "\n== vigil report: /usr/bin/dd (pid 4242 on node17) ==\n",
        "RUN                        vm-4242-1700000000123456789\n",
        "CONSUMED_CPU_SECONDS       0.001\n",
        "CONSUMED_ENERGY_JOULE      12.346 (energy/estimate, estimated)\n",
        "ACCESSED_IO_BYTES          3079 (3.0 KiB: read 1.5 KiB, written 1.5 KiB)\n",
        "TRANSFERRED_NETWORK_BYTES  8589934592 (8.0 GiB)\n",
        "OBSERVED_RUNTIME_MS        1234.568\n",
        "VIGILD                     process 17: 1234 activities drained, 2 gaps, 1 dropped\n",
        "CAPTURE                    anomalies: 3 abnormal cycles of 12; 4210 of 52000 activities "
        "forwarded (8.1 %), 47088 dropped, 690 held at exit, 12 lost: vigild's capture memory "
        "bound was hit\n",
        "posix  write                           4             1543      987.654        1\n",
        "/tmp/out                                              7                0             "
        "1543\n",
        "\nactivities: 20 observed, 18 recorded, 1 dropped (ring full), 1 excluded (counted "
        "only)\n",
    };
    test_assert_contains_all(text, lines, G_N_ELEMENTS(lines));
    g_free(text);
}

static void test_odd_bytes_read_as_latin1(void **state)
{
    (void)state;
    char *text = report_text_of(test_report_odd_bytes);
    char *json = report_json_of(test_report_odd_bytes);
    /* A stray byte is its Latin-1 character in both forms: the two names
     * of the same café read the same. */
    test_assert_contains(text, "== vigil report: /opt/caf\xc3\xa9/run (pid 4242 on h\xc3\xb6st)");
    test_assert_contains(json, "\"program\":\"/opt/caf\\u00e9/run\"");
    const char *first = strstr(text, "\n/data/caf\xc3\xa9.dat ");
    assert_non_null(first);
    assert_non_null(strstr(first + 1, "\n/data/caf\xc3\xa9.dat "));
    test_assert_contains(json, "{\"path\":\"/data/caf\\u00e9.dat\",\"calls\":9");
    test_assert_contains(json, "{\"path\":\"/data/caf\\u00e9.dat\",\"calls\":8");
    /* Controls are \xNN on one line in the text, \u escapes in the JSON. */
    test_assert_contains(text, "/data/line\\x0abreak\\x1b[31m");
    test_assert_contains(json, "\"/data/line\\u000abreak\\u001b[31m\"");
    test_assert_contains(json, "\"\\u0001\\u007f\\u0009\"");
    /* Outside the BMP: a surrogate pair; a cut sequence: its bytes. */
    test_assert_contains(json, "\"\\ud83d\\ude00 smile\"");
    test_assert_contains(json, "\"/data/\\u00e2\\u0082\"");
    test_assert_contains(text, "/data/\xc3\xa2\\x82 ");
    /* Overlong forms and surrogates are not characters: their bytes. */
    test_assert_contains(json, "\"\\u00c0\\u00af\\u00ed\\u00a0\\u0080\\u00f5\"");
    test_assert_contains(json, "\"--name=\\\"a\\\\b\\\"\"");
    g_free(text);
    g_free(json);
}

/* A figure vigild took from two sources (the node's changed while the
 * process ran) says so; a round trip through the JSON keeps it. */
static void test_energy_from_two_sources(void **state)
{
    (void)state;
    static struct vigil_report f;
    test_report_plain_run(&f);
    f.link.energy_source = "energy/powercap+energy/estimate";
    char *text = vigil_cli_report_text(&f);
    test_assert_contains(text, "CONSUMED_ENERGY_JOULE      12.346 (energy from two sources: "
                               "energy/powercap, energy/estimate, estimated)\n");
    f.link.energy_source = "energy/likwid+powercap+estimate";
    char *three = vigil_cli_report_text(&f);
    test_assert_contains(three, "(energy from three sources: energy/likwid, powercap, estimate, "
                                "estimated)\n");
    g_free(three);
    g_free(text);
}

/* A job's energy across its nodes: printed in both forms, and the JSON
 * read back prints the same; a bad member is named. */
static void test_job_energy(void **state)
{
    (void)state;
    static struct vigil_report f;
    test_report_mpi_joint(&f);
    f.job_energy = (struct vigil_report_job_energy){
        .nodes = 2,
        .processes = 4,
        .processes_with_energy = 3,
        .energy_j = 4.75025,
        .node_min_j = 1.25,
        .node_mean_j = 2.375125,
        .node_max_j = 3.50025,
        .flags = VIGIL_LOCAL_ENERGY_ESTIMATED,
        .min_host = "node-a",
        .max_host = "node-b",
        .sources = "energy/powercap+energy/estimate",
    };
    char *text = vigil_cli_report_text(&f);
    test_assert_contains(text, "JOB_ENERGY_JOULE           4.750 on 2 nodes (energy from two "
                               "sources: energy/powercap, energy/estimate, estimated); per node: "
                               "min 1.250 (node-a), mean 2.375, max 3.500 (node-b); 1 of 4 "
                               "processes without a figure\n");
    char *json = vigil_cli_report_json(&f);
    test_assert_contains(json, ",\"job_energy\":{\"nodes\":2,\"processes\":4,"
                               "\"processes_with_energy\":3,\"energy_joule\":4.750250,"
                               "\"node_min_joule\":1.250000,\"node_min_host\":\"node-a\","
                               "\"node_mean_joule\":2.375125,\"node_max_joule\":3.500250,"
                               "\"node_max_host\":\"node-b\",\"sources\":\"energy/powercap+"
                               "energy/estimate\",\"estimated\":true,\"uncertain\":false}}");
    assert_round_trip("a job's energy", &f);

    char *bad = edited(json, "\"nodes\":2", "\"nodes\":0");
    expect_refused(bad, "job_energy");
    expect_refused(bad, "nodes: 0");
    g_free(bad);
    g_free(text);
    g_free(json);
}

static void test_mpi_text(void **state)
{
    (void)state;
    char *text = report_text_of(test_report_mpi_joint);
    test_assert_contains(text, "\n== vigil MPI report: ./mpi-io-levels, 4 ranks (rank 0: pid 4242 "
                               "on node17) ==\n");
    test_assert_contains(text, "VIGILD                     3 of 4 ranks: 1234 activities drained, "
                               "2 gaps, 1 dropped; rank 2: vigild did not answer within 100 ms\n");
    test_assert_contains(text, "held at MPI_Finalize");
    test_assert_contains(text, "rank 0                   1.000 (energy/estimate, estimated); "
                               "0 forwarded\n");
    test_assert_contains(text, "rank 2                   n/a (vigild did not answer within 100 "
                               "ms)\n");
    test_assert_contains(text, "rank 3                   4.000 (energy/estimate, uncertain); "
                               "30 forwarded\n");
    g_free(text);
}

/* ---- reading refuses what it cannot print ---------------------------------------------------- */

static void test_bad_reports_are_refused(void **state)
{
    (void)state;
    static const struct report_edit edits[] = {
        {"\"runtime_ms\":", "\"runtime\":", "report: runtime_ms: missing"},
        {"\"pid\":4242", "\"pid\":\"4242\"",
         "report: pid: expected a 32-bit integer, found a "
         "string"},
        {"\"calls\":3,", "\"calls\":-3,", "report: layers.posix.read.calls: expected a count"},
        {"\"read\":{", "\"reed\":{", "report: layers.posix.reed: no such operation"},
        {"\"posix\":{", "\"posixx\":{", "report: layers.posixx: no such layer"},
        {"\"vigil_report\":1", "\"vigil_report\":2",
         "report: vigil_report: version 2 comes from a newer vigil; this one reads 1"},
        {"\"state\":\"summary\"", "\"state\":\"fine\"",
         "report: vigild.state: \"fine\" is none of standalone, connected and summary"},
        {"\"mode\":\"anomalies\"", "\"mode\":7",
         "report: vigild.capture.mode: expected a string or null, found an integer"},
        {"\"files\":[", "\"files\":{\"x\":[", "report: not JSON"},
        {"\"run_key\":", "\"run_keys\":", "report: run_key: missing"},
    };
    expect_edits_refused(test_report_plain_run, edits, G_N_ELEMENTS(edits));
    expect_refused("[1, 2]", "report: its top: expected an object, found an array");
}

/* ---- files ------------------------------------------------------------------------------------
 */

static void test_files_text_and_json(void **state)
{
    (void)state;
    static struct vigil_report f;
    test_report_files(&f);
    char *text = vigil_cli_report_text(&f);
    const char *const lines[] = {
        "\ntop files                                         calls       read_bytes    "
        "written_bytes  seq_%  common_size\n",
        "/scratch/ior.00                                     100                0         "
        "12582912     93        65536\n",
        "/scratch/ior.09                                      91                0          "
        "3145728     93        65536\n",
        "(2 more files in the JSON report)\n",
        "(and 7 times a path found the file table full: those calls are in the totals, under "
        "no file)\n",
    };
    test_assert_contains_all(text, lines, G_N_ELEMENTS(lines));
    assert_null(strstr(text, "ior.10")); /* the text lists ten */
    char *json = vigil_cli_report_json(&f);
    test_assert_contains(json, "{\"path\":\"/scratch/ior.11\",\"mount\":\"/scratch\","
                               "\"fs_type\":\"lustre\",\"calls\":89,\"read_bytes\":0,"
                               "\"written_bytes\":1048576,\"bytes_read\":0,"
                               "\"bytes_written\":1048576,\"posix\":{\"reads\":0,");
    test_assert_contains(json, "\"stdio\":{\"reads\":3,\"writes\":0,");
    test_assert_contains(json, "\"common_sizes\":[{\"size\":65536,\"count\":16,\"exact\":true}]");
    test_assert_contains(json, "\"common_strides\":[{\"stride\":0,\"count\":13,\"exact\":false},"
                               "{\"stride\":-131072,\"count\":1,\"exact\":false}]");
    /* Issue 33's members, at the end of a layer. */
    test_assert_contains(json, "\"mode\":0,\"file_alignment_bytes\":0,");
    test_assert_contains(json, "\"first_open_s\":0.000000,\"last_close_s\":2.500000,"
                               "\"first_io_s\":0.001000,\"last_io_s\":2.499999,\"rw_switches\":0,");
    test_assert_contains(json, "\"time_variance_s2\":1.000000e-07");
    test_assert_contains(
        json, ",\"files_total\":12,\"files_untracked\":7,\"timeline\":{\"bin_s\":0.134218,"
              "\"read_bytes\":[0,0,300],\"written_bytes\":[1099511627776,0,0]}}");
    /* A path wider than its column ends its line, whole, and the row's
     * figures go on under it in their columns, as df(1) does. */
    static const char long_path[] = "/scratch/project/run-0042/output/checkpoint.00017.h5";
    static struct vigil_report_file renamed[12];
    assert_true((size_t)f.file_count <= G_N_ELEMENTS(renamed));
    memcpy(renamed, f.files, (size_t)f.file_count * sizeof *renamed);
    renamed[1].path = long_path;
    renamed[1].path_bytes = strlen(long_path);
    const struct vigil_report_file *files = f.files;
    f.files = renamed;
    char *wrapped = vigil_cli_report_text(&f);
    f.files = files;
    test_assert_contains(wrapped, "\n/scratch/project/run-0042/output/checkpoint.00017.h5\n"
                                  "                                                     99     "
                                  "           0         11534336     93        65536\n");
    g_free(wrapped);
    /* The JSON kept for vigild may list fewer: the text still counts all. */
    f.files_total = 40;
    f.file_count = 11;
    char *fewer = vigil_cli_report_text(&f);
    test_assert_contains(fewer, "(30 more files in the JSON report)\n");
    g_free(fewer);
    g_free(json);
    g_free(text);
}

/* A report stored before issue 33's counters (none of them, no "exact")
 * reads back with them 0, the mode not known and no count exact; its text
 * is the same. */
static void test_files_before_issue_33(void **state)
{
    (void)state;
    static struct vigil_report f;
    test_report_files(&f);
    f.files = memcpy(g_new(struct vigil_report_file, f.file_count), f.files,
                     (size_t)f.file_count * sizeof *f.files);
    for (int i = 0; i < f.file_count; i++) {
        struct vigil_report_file *file = (struct vigil_report_file *)&f.files[i];
        file->posix.mode = file->stdio.mode = -1;
        file->posix.common_sizes[0].exact = false;
        /* Nor the MPI-IO record's members of issue 33. */
        size_t from = offsetof(struct vigil_report_file_mpiio, indep_opens);
        memset((char *)&file->mpiio + from, 0, sizeof file->mpiio - from);
        file->mpiio.mode = -1;
    }
    char *json = vigil_cli_report_json(&f);
    GRegex *added = g_regex_new(",\"indep_opens\":.*?\"max_write_time_size\":[0-9]+|"
                                ",\"rw_switches\":[^}]*max_write_time_size\":[0-9]+|,\"exact\":"
                                "(true|false)",
                                0, 0, NULL);
    char *old = g_regex_replace_literal(added, json, -1, 0, "", 0, NULL);
    assert_null(strstr(old, "rw_switches"));
    struct vigil_cli_report back;
    GError *error = NULL;
    if (!vigil_cli_report_parse(old, -1, &back, &error))
        fail_msg("refused: %s", error->message);
    const struct vigil_report_file_layer *l = &back.r.files[0].posix;
    assert_int_equal(l->mode, -1);
    assert_int_equal(l->rw_switches + l->fdatasyncs + l->file_alignment_bytes, 0);
    assert_true(l->max_write_time_s == 0 && !l->common_sizes[0].exact);
    char *text = vigil_cli_report_text(&f), *text_again = vigil_cli_report_text(&back.r);
    assert_string_equal(text, text_again);
    char *json_again = vigil_cli_report_json(&back.r);
    assert_string_equal(json, json_again); /* the members written again, as they were */
    vigil_cli_report_clear(&back);
    g_regex_unref(added);
    g_free((void *)f.files);
    g_free(json);
    g_free(old);
    g_free(text);
    g_free(text_again);
    g_free(json_again);
}

static void test_bad_files_are_refused(void **state)
{
    (void)state;
    static const struct report_edit edits[] = {
        {"\"files_total\":12", "\"files_total\":11",
         "report: files_total: 11 files, but \"files\" lists 12"},
        {"\"write_size_hist\":[0,0,0,0,16,0,0,0,0,0]", "\"write_size_hist\":[0,0,0,0,16,0,0,0,0]",
         "report: files.0.posix.write_size_hist: 9 entries, not 10"},
        {"\"max_written_offset\":12582911", "\"max_written_offset\":\"x\"",
         "report: files.0.posix.max_written_offset: expected an integer, found a string"},
        {"\"common_sizes\":[{\"size\":65536,\"count\":16,\"exact\":true}]",
         "\"common_sizes\":[1,2,3,4,5]",
         "report: files.0.posix.common_sizes: 5 entries, more than 4"},
        {"\"stdio\":null", "\"stdio\":7",
         "report: files.0.stdio: expected an object or null, found an integer"},
        {"\"mpiio\":{\"indep_reads\":1,", "\"mpiio\":{\"indep_read\":1,",
         "report: files.0.mpiio.indep_reads: missing"},
        {"\"mount\":\"/scratch\",", "", "report: files.0.mount: missing"},
        {"\"written_bytes\":[1099511627776,0,0]", "\"written_bytes\":[1099511627776,0]",
         "report: timeline.written_bytes: 2 bins, where read_bytes has 3"},
        {"\"bin_s\":0.134218", "\"bin_s\":0", "report: timeline.bin_s: 0: not a width"},
    };
    expect_edits_refused(test_report_files, edits, G_N_ELEMENTS(edits));
}

static void test_regions_text(void **state)
{
    (void)state;
    char *text = report_text_of(test_report_regions);
    const char *const lines[] = {
        "\nregions (inclusive)       entered      calls     bytes_read  bytes_written       wall_s"
        "        cpu_s     energy_j\n",
        "main                            1         12           4096 18014398509481984        "
        "2.000        2.000       12.346*\n",
        "solver \"x\"\\x09\xc3\xa9"
        "              1000          0              0              0        "
        "0.333        0.667          n/a\n",
        "region energy: none for 1001 of 1004 entries",
        "region energy: * estimated",
        "region energy: uncertain",
        "regions: 2 entries still open at the report, not counted\n",
        "regions not followed: 1 begins past 64 names, 2 ends without their begin, 3 closed by an "
        "outer end, 4 too deep, 5 calls dropped\n",
    };
    test_assert_contains_all(text, lines, G_N_ELEMENTS(lines));
    g_free(text);
    char *json = report_json_of(test_report_regions);
    test_assert_contains(json, ",\"regions\":[{\"name\":\"main\",\"entered\":1,\"calls\":12,"
                               "\"bytes_read\":4096,\"bytes_written\":18014398509481984,"
                               "\"wall_seconds\":2.000001,\"cpu_seconds\":1.999999,"
                               "\"energy_joule\":12.345678,\"energy_missing\":0,"
                               "\"energy_estimated\":true,\"energy_uncertain\":false,\"open\":0}");
    test_assert_contains(json, "\"name\":\"solver \\\"x\\\"\\u0009\\u00e9\"");
    g_free(json);
    /* A report without regions says nothing of them. */
    json = report_json_of(test_report_plain_run);
    assert_null(strstr(json, "region"));
    g_free(json);
}

static void test_bad_regions_are_refused(void **state)
{
    (void)state;
    static const struct report_edit edits[] = {
        {"\"entered\":1,", "\"entered\":-1,", "report: regions.0.entered: expected a count"},
        {"\"name\":\"main\"", "\"name\":7", "report: regions.0.name: expected a string"},
        {"\"wall_seconds\":2.000001", "\"wall_seconds\":\"2\"",
         "report: regions.0.wall_seconds: expected a number or null"},
        {"\"open\":0}", "\"opened\":0}", "report: regions.0.open: missing"},
        {"\"region_notes\":", "\"region_note\":", "report: region_notes: missing beside regions"},
        {"\"too_deep\":4", "\"too_deep\":true", "report: region_notes.too_deep: expected a count"},
        {"\"regions\":[{", "\"regions\":[7,{", "report: regions.0: expected an object"},
    };
    expect_edits_refused(test_report_regions, edits, G_N_ELEMENTS(edits));
}

TEST_MAIN(cmocka_unit_test(test_text_and_json_survive_the_json), cmocka_unit_test(test_plain_text),
          cmocka_unit_test(test_odd_bytes_read_as_latin1), cmocka_unit_test(test_mpi_text),
          cmocka_unit_test(test_energy_from_two_sources), cmocka_unit_test(test_job_energy),
          cmocka_unit_test(test_bad_reports_are_refused), cmocka_unit_test(test_regions_text),
          cmocka_unit_test(test_bad_regions_are_refused),
          cmocka_unit_test(test_files_text_and_json), cmocka_unit_test(test_files_before_issue_33),
          cmocka_unit_test(test_bad_files_are_refused))
