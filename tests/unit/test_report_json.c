/* Unit tests of the report's two forms (core/report_text.c) and of reading
 * the JSON back (cli/report_json.c): for every kind of report, the text
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
#include "test_support.h"
#include "vigil/local_protocol.h"

/* ---- figure sets ---------------------------------------------------------------------------- */

static const char *const plain_argv[] = {"/usr/bin/dd", "if=/dev/zero", "of=out", "count=3"};

static struct vigil_report_link summary_link(void)
{
    return (struct vigil_report_link){
        .state = VIGIL_REPORT_SUMMARY,
        .ranks_with_summary = 1,
        .process_id = 17,
        .activities_drained = 1234,
        .names_drained = 5,
        .gaps = 2,
        .dropped = 1,
        .anomalies = 3,
        .cpu_s = 0.123456789,
        .energy_j = 12.3456789,
        .energy_flags = VIGIL_LOCAL_ENERGY_ESTIMATED,
        .energy_source = "energy/estimate",
        .energy_note = "",
        .reason = "",
        .cycles = 12,
        .abnormal_cycles = 3,
        .capture_observed = 52000,
        .capture_forwarded = 4210,
        .capture_dropped = 47088,
        .capture_lost = 12,
        .capture_held = 690,
        .capture_mode = "anomalies",
    };
}

static struct vigil_report_link standalone_link(const char *why)
{
    return (struct vigil_report_link){
        .state = VIGIL_REPORT_STANDALONE,
        .cpu_s = NAN,
        .energy_j = NAN,
        .energy_source = "",
        .energy_note = why,
        .reason = why,
        .capture_mode = "",
    };
}

static void add_op(struct vigil_report *r, unsigned op, uint64_t calls, uint64_t bytes,
                   uint64_t time_ns, uint64_t errors)
{
    r->ops[op] = (struct vigil_report_op){calls, bytes, time_ns, errors};
}

static void add_file(struct vigil_report *r, const char *path, uint64_t calls, uint64_t read_bytes,
                     uint64_t written_bytes)
{
    r->files[r->file_count++] = (struct vigil_report_file){
        .path = path,
        .path_bytes = strlen(path),
        .calls = calls,
        .read_bytes = read_bytes,
        .written_bytes = written_bytes,
    };
}

/* dd under vigild, with its summary. */
static void plain_run(struct vigil_report *r)
{
    memset(r, 0, sizeof *r);
    r->run_key = "vm-4242-1700000000123456789";
    r->program = plain_argv[0];
    r->argc = 4;
    r->argv = plain_argv;
    r->pid = 4242;
    r->rank = -1;
    r->host = "node17";
    r->runtime_ms = 1234.5678;
    r->cpu_seconds = 0.0004996; /* rounds up to 0.0005 first, then to 0.001 */
    r->link = summary_link();
    r->io_read_bytes = 3 * 512;
    r->io_written_bytes = 3 * 512 + 7;
    r->network_bytes = 1ull << 33;
    r->observed = 20;
    r->recorded = 18;
    r->dropped = 1;
    r->excluded = 1;
    add_op(r, VIGIL_OP_POSIX_OPEN, 2, 0, 12345, 0);
    add_op(r, VIGIL_OP_POSIX_READ, 3, 1536, 1500,
           0); /* 0.0015 ms: a tie at the text's 3 decimals */
    add_op(r, VIGIL_OP_POSIX_WRITE, 4, 1543, 987654321, 1);
    add_op(r, VIGIL_OP_STDIO_FWRITE, 1, 7, 999, 0);
    add_file(r, "/tmp/out", 7, 0, 1543);
    add_file(r, "/dev/zero", 3, 1536, 0);
}

/* No vigild: the reason stands in for the energy and vigild's figures. */
static void no_daemon(struct vigil_report *r)
{
    plain_run(r);
    r->link = standalone_link("no vigild at /run/vigil/vigild.sock (No such file or directory)");
    r->dropped = 65536;
}

/* vigild answered, but has no energy for the process and says why; its
 * capture is off. */
static void energy_unavailable(struct vigil_report *r)
{
    plain_run(r);
    r->link.energy_j = NAN;
    r->link.energy_flags = 0;
    r->link.energy_note = "the process ended before vigild's first tick";
    r->link.capture_mode = "none";
    r->link.capture_forwarded = r->link.capture_lost = r->link.capture_held = 0;
    r->link.capture_dropped = r->link.capture_observed;
    r->cpu_seconds = 2.5;
}

/* Registered, but vigild never answered the summary request. */
static void no_summary(struct vigil_report *r)
{
    plain_run(r);
    r->link = standalone_link("vigild did not answer within 100 ms");
    r->link.state = VIGIL_REPORT_CONNECTED;
    r->link.process_id = 99;
}

/* Bytes that are not UTF-8, control characters, quotes and characters
 * outside the BMP, in the program, argv, the host and the paths. */
static const char *const odd_argv[] = {"/opt/caf\xe9/run", "--name=\"a\\b\"", "\x01\x7f\t",
                                       "\xf0\x9f\x98\x80 smile", "\xc0\xaf\xed\xa0\x80\xf5"};

static void odd_bytes(struct vigil_report *r)
{
    plain_run(r);
    r->program = odd_argv[0];
    r->argc = 5;
    r->argv = odd_argv;
    r->host = "h\xf6st";
    r->link.energy_source = "energy/\xe9";
    r->file_count = 0;
    add_file(r, "/data/caf\xe9.dat", 9, 90, 0);
    add_file(r, "/data/caf\xc3\xa9.dat", 8, 80, 0); /* the same name, in UTF-8 */
    add_file(r, "/data/line\nbreak\x1b[31m", 7, 0, 70);
    add_file(r, "/data/\xe2\x82", 6, 60, 0); /* a sequence cut short */
    add_file(r, "/data/\xf0\x9f\x98\x80\x80\x9f", 5, 0, 50);
    add_file(r, "/data/\"quoted\"\\back", 4, 40, 0);
}

/* An MPI job's report on rank 0: four ranks, figures with many decimals,
 * one rank without energy. */
static struct vigil_report_link rank_links[4];

static void mpi_joint(struct vigil_report *r)
{
    plain_run(r);
    r->program = "./mpi-io-levels";
    r->argc = 1;
    r->ranks = 4;
    r->rank = -1;
    r->file_count = 0;
    r->link.process_id = 0;
    r->link.ranks_with_summary = 3;
    r->link.state = VIGIL_REPORT_CONNECTED;
    r->link.reason = "rank 2: vigild did not answer within 100 ms";
    r->link.capture_mode = "mixed";
    r->link.energy_j = NAN;
    r->link.energy_note = "rank 2: vigild did not answer within 100 ms";
    add_op(r, VIGIL_OP_MPIIO_WRITE_AT_ALL, 16, 1 << 20, 55555555, 0);
    for (int m = 0; m < VIGIL_REPORT_RANK_METRIC_COUNT; m++)
        r->per_rank[m] = (struct vigil_report_rank_stats){
            .min = m / 3.0,
            .mean = (m + 1) / 7.0 * 1e6,
            .max = 5e9 + 1.0 / 3, /* past 2^32: a double's last decimals */
            .sum = 1e17 / 3,      /* past 2^53 */
            .max_rank = m % 4,
        };
    for (int i = 0; i < 4; i++) {
        rank_links[i] = summary_link();
        rank_links[i].process_id = 100 + (uint64_t)i;
        rank_links[i].energy_j = 1.0000005 * (i + 1);
        rank_links[i].capture_forwarded = 10 * (uint64_t)i;
    }
    rank_links[2] = standalone_link("vigild did not answer within 100 ms");
    rank_links[2].state = VIGIL_REPORT_CONNECTED;
    rank_links[2].process_id = 102;
    rank_links[3].energy_flags = VIGIL_LOCAL_ENERGY_UNCERTAIN;
    r->rank_links = rank_links;
}

/* A rank's own report (VIGIL_REPORT_PER_RANK=1, or a rank that never
 * reached MPI_Finalize), with lost activities. */
static void own_rank(struct vigil_report *r)
{
    plain_run(r);
    r->rank = 3;
    r->in_job_report = true;
    r->link.capture_lost = 12;
    r->link.energy_flags = VIGIL_LOCAL_ENERGY_ESTIMATED | VIGIL_LOCAL_ENERGY_UNCERTAIN;
    r->link.energy_j = 1.0000005;
}

/* A job whose rank 0 could not gather the ranks' vigild figures. */
static void mpi_without_rank_links(struct vigil_report *r)
{
    mpi_joint(r);
    r->rank_links = NULL;
}

static void (*const figure_sets[])(struct vigil_report *) = {
    plain_run, no_daemon, energy_unavailable, no_summary,
    odd_bytes, mpi_joint, own_rank,           mpi_without_rank_links,
};
static const char *const figure_set_names[] = {
    "plain run", "no daemon", "energy unavailable", "no summary",
    "odd bytes", "MPI job",   "own rank",           "MPI job without rank figures",
};

/* ---- the round trip ------------------------------------------------------------------------- */

static void test_text_and_json_survive_the_json(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof figure_sets / sizeof figure_sets[0]; i++) {
        static struct vigil_report f;
        figure_sets[i](&f);
        char *text = vigil_cli_report_text(&f);
        char *json = vigil_cli_report_json(&f);
        struct vigil_cli_report back;
        GError *error = NULL;
        if (!vigil_cli_report_parse(json, -1, &back, &error))
            fail_msg("%s: its own JSON is refused: %s\n%s", figure_set_names[i], error->message,
                     json);
        char *text_again = vigil_cli_report_text(&back.r);
        char *json_again = vigil_cli_report_json(&back.r);
        if (strcmp(text, text_again) != 0)
            fail_msg("%s: the text differs after the JSON\nbefore:\n%s\nafter:\n%s",
                     figure_set_names[i], text, text_again);
        if (strcmp(json, json_again) != 0)
            fail_msg("%s: the JSON differs when read back\nbefore:\n%s\nafter:\n%s",
                     figure_set_names[i], json, json_again);
        /* Printable ASCII, one line. */
        for (const char *p = json; *p != '\0'; p++)
            if ((unsigned char)*p >= 0x7f || (*p < 0x20 && p[1] != '\0'))
                fail_msg("%s: byte 0x%02x at %zu of the JSON", figure_set_names[i],
                         (unsigned char)*p, (size_t)(p - json));
        vigil_cli_report_clear(&back);
        g_free(text);
        g_free(json);
        g_free(text_again);
        g_free(json_again);
    }
}

/* ---- what the forms say -----------------------------------------------------------------------
 */

static void test_plain_text(void **state)
{
    (void)state;
    static struct vigil_report f;
    plain_run(&f);
    char *text = vigil_cli_report_text(&f);
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
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        test_assert_contains(text, lines[i]);
    g_free(text);
}

static void test_odd_bytes_read_as_latin1(void **state)
{
    (void)state;
    static struct vigil_report f;
    odd_bytes(&f);
    char *text = vigil_cli_report_text(&f);
    char *json = vigil_cli_report_json(&f);
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

static void test_mpi_text(void **state)
{
    (void)state;
    static struct vigil_report f;
    mpi_joint(&f);
    char *text = vigil_cli_report_text(&f);
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

static void expect_refused(const char *json, const char *message)
{
    struct vigil_cli_report back;
    GError *error = NULL;
    if (vigil_cli_report_parse(json, -1, &back, &error))
        fail_msg("accepted, though %s:\n%s", message, json);
    test_assert_contains(error->message, message);
    g_error_free(error);
}

/* `json` with the first `from` replaced by `to`. */
static char *edited(const char *json, const char *from, const char *to)
{
    const char *at = strstr(json, from);
    assert_non_null(at); /* the report has the text to edit */
    return g_strdup_printf("%.*s%s%s", (int)(at - json), json, to, at + strlen(from));
}

static void test_bad_reports_are_refused(void **state)
{
    (void)state;
    static struct vigil_report f;
    plain_run(&f);
    char *json = vigil_cli_report_json(&f);
    static const struct {
        const char *from, *to, *message;
    } edits[] = {
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
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *bad = edited(json, edits[i].from, edits[i].to);
        expect_refused(bad, edits[i].message);
        g_free(bad);
    }
    expect_refused("[1, 2]", "report: its top: expected an object, found an array");
    g_free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_and_json_survive_the_json), cmocka_unit_test(test_plain_text),
        cmocka_unit_test(test_odd_bytes_read_as_latin1),       cmocka_unit_test(test_mpi_text),
        cmocka_unit_test(test_bad_reports_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
