/* The MPI parts of a report's files (report/report_files_mpi.c,
 * report/report_json_files_mpi.c): MPI-IO's counts per file and, in a job's
 * report, how the ranks shared each file, in the text and the JSON, and
 * read back strictly. The round trip of the figure sets that have them is
 * test_report_json's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "report_json.h"
#include "test_report_figures.h"
#include "test_support.h"

#include "report_refusals.h"
#include "test_main.h"

static void test_job_text(void **state)
{
    (void)state;
    char *text = report_text_of(test_report_mpi_joint);
    const char *const lines[] = {
        "\nMPI-IO files (reads/writes)          independent  collective       split nonblocking"
        "    mpiio_read mpiio_written    posix_read posix_written  most_posix (rank: bytes)\n",
        /* Both levels: rank 0 moved 2 MiB through POSIX for the 1 MiB asked. */
        "\n/scratch/shared.dat                          1/0        8/16         0/2         3/4"
        "        524288       1048576             0       2097152                0: 2097152\n",
        /* The record: opens, syncs, switches, the commonest size, the slowest calls. */
        "\nMPI-IO files (record)                  opens i/c  syncs rw_switches common_size"
        "         slowest read (s B)        slowest write (s B)\n"
        "/scratch/shared.dat                          0/4      4          12       65536"
        "         0.012346 s 65536 B       0.250000 s 5242880 B\n",
        "\nshared files (by rank)               ranks       fastest rank: time bytes       "
        "slowest rank: time bytes   time_var_s2     bytes_var\n",
        /* Variances to 7 significant digits; rank-2.log is nobody else's. */
        "\n/scratch/shared.dat                      4         3: 0.012346 s 262144 B        "
        "0: 0.456790 s 1048576 B  1.234568e-09  3.333333e+16\n\nactivities:",
    };
    test_assert_contains_all(text, lines, G_N_ELEMENTS(lines));
    g_free(text);
    char *json = report_json_of(test_report_mpi_joint);
    test_assert_contains(
        json, ",\"mpiio\":{\"indep_reads\":1,\"indep_writes\":0,\"coll_reads\":8,"
              "\"coll_writes\":16,\"split_reads\":0,\"split_writes\":2,\"nb_reads\":3,"
              "\"nb_writes\":4,\"read_bytes\":524288,\"written_bytes\":1048576,"
              "\"read_time_s\":0.123457,\"write_time_s\":0.333333,\"meta_time_s\":0.000000,"
              "\"indep_opens\":0,\"coll_opens\":4,\"syncs\":4,\"hints\":8,\"views\":4,"
              "\"rw_switches\":12,\"mode\":9,\"read_size_hist\":[0,0,0,0,12,0,0,0,0,0],"
              "\"write_size_hist\":[0,0,0,0,20,0,2,0,0,0],\"common_sizes\":[{\"size\":65536,"
              "\"count\":24,\"exact\":true},{\"size\":4096,\"count\":3,\"exact\":false}],"
              "\"max_read_time_s\":0.012346,\"max_read_time_size\":65536,"
              "\"max_write_time_s\":0.250000,\"max_write_time_size\":5242880},"
              "\"ranks\":{\"count\":4,\"shared\":true,\"fastest_rank\":3,\"fastest_s\":0.012346,"
              "\"fastest_bytes\":262144,\"slowest_rank\":0,\"slowest_s\":0.456790,"
              "\"slowest_bytes\":1048576,\"time_variance_s2\":1.234568e-09,"
              "\"bytes_variance\":3.333333e+16,\"most_posix_rank\":0,\"most_posix_bytes\":2097152,"
              "\"least_posix_rank\":2,\"least_posix_bytes\":0}");
    test_assert_contains(json, "\"mpiio\":null,\"ranks\":{\"count\":1,\"shared\":false,");
    g_free(json);
}

/* The shared table lists the shared files that moved bytes: the
 * configuration files every rank reads no byte of are left out. */
static void test_shared_table_skips_files_without_io(void **state)
{
    (void)state;
    static struct vigil_report f;
    const char *row = "\n/scratch/rank-2.log                      4 ";
    test_report_mpi_joint(&f);
    static struct vigil_report_file files[2];
    memcpy(files, f.files, sizeof files);
    files[1].ranks.count = 4;
    files[1].ranks.shared = true;
    files[1].written_bytes = 0;
    f.files = files;
    char *text = vigil_cli_report_text(&f);
    assert_null(strstr(text, row));
    files[1].written_bytes = 300;
    g_free(text);
    text = vigil_cli_report_text(&f);
    test_assert_contains(text, row);
    g_free(text);
}

/* A process's report without MPI-IO prints neither table; its files have
 * both members, null. */
static void test_plain_text_has_neither(void **state)
{
    (void)state;
    char *text = report_text_of(test_report_plain_run);
    assert_null(strstr(text, "MPI-IO files"));
    assert_null(strstr(text, "shared files"));
    g_free(text);
    char *json = report_json_of(test_report_files);
    test_assert_contains(json, "\"mpiio\":null,\"ranks\":null}");
    g_free(json);
}

static void test_bad_parts_are_refused(void **state)
{
    (void)state;
    static const struct report_edit edits[] = {
        {"\"mpiio\":{\"indep_reads\"", "\"mpiio\":[{\"indep_reads\"", "report: not JSON"},
        {"\"mpiio\":{\"indep_reads\"", "\"mpiio\":7,\"x\":{\"indep_reads\"",
         "report: files.0.mpiio: expected an object or null"},
        {"\"coll_writes\":16", "\"coll_writes\":-16",
         "report: files.0.mpiio.coll_writes: expected a count"},
        {"\"nb_writes\":4,", "", "report: files.0.mpiio.nb_writes: missing"},
        {"\"meta_time_s\":0.000000,\"indep_opens\"", "\"meta_time_s\":\"0\",\"indep_opens\"",
         "report: files.0.mpiio.meta_time_s: expected a number"},
        {"\"views\":4,", "", "report: files.0.mpiio.views: missing"},
        {"\"mode\":9", "\"mode\":-2",
         "report: files.0.mpiio.mode: expected an MPI-IO amode, or -1 (not known)"},
        {"\"read_size_hist\":[0,0,0,0,12,0,0,0,0,0]", "\"read_size_hist\":[0,0,0,0,12]",
         "report: files.0.mpiio.read_size_hist"},
        {"\"count\":24,\"exact\":true", "\"count\":24,\"exact\":1",
         "report: files.0.mpiio.common_sizes.0.exact: expected true or false"},
        {"\"common_sizes\":[{", "\"common_sizes\":[{},{},{},{},{",
         "report: files.0.mpiio.common_sizes: 6 entries, more than 4"},
        {"\"max_write_time_s\":0.250000", "\"max_write_time_s\":-1",
         "report: files.0.mpiio.max_write_time_s: expected a number of 0 or more"},
        {"\"shared\":true", "\"shared\":false", "report: files.0.ranks.shared: false for 4 ranks"},
        {"\"fastest_rank\":3", "\"fastest_rank\":-3",
         "report: files.0.ranks.fastest_rank: expected a rank"},
        {"\"time_variance_s2\":1.234568e-09", "\"time_variance_s2\":-1",
         "report: files.0.ranks.time_variance_s2: expected a number of 0 or more"},
        {"\"shared\":true", "\"shared\":1", "report: files.0.ranks.shared: expected true or false"},
    };
    expect_edits_refused(test_report_mpi_joint, edits, G_N_ELEMENTS(edits));
}

/* A report of an earlier vigil has neither member: none is read. */
static void test_absent_parts_are_none(void **state)
{
    (void)state;
    struct vigil_cli_report back;
    /* Its second file has neither. */
    char *old = read_back_without(test_report_files, ",\"mpiio\":null,\"ranks\":null", &back);
    assert_true(back.r.files[0].has_mpiio);
    assert_false(back.r.files[1].has_mpiio);
    assert_false(back.r.files[1].has_ranks);
    vigil_cli_report_clear(&back);
    g_free(old);
}

/* An "mpiio" written before the per-file record (opens, hints… the
 * slowest calls): read as none of them, the mode unknown, and no record
 * table in the text. */
static void test_mpiio_without_record(void **state)
{
    (void)state;
    struct vigil_cli_report back;
    char *old = read_back_without(
        test_report_mpi_joint,
        ",\"indep_opens\":0,\"coll_opens\":4,\"syncs\":4,\"hints\":8,\"views\":4,"
        "\"rw_switches\":12,\"mode\":9,\"read_size_hist\":[0,0,0,0,12,0,0,0,0,0],"
        "\"write_size_hist\":[0,0,0,0,20,0,2,0,0,0],\"common_sizes\":[{\"size\":65536,"
        "\"count\":24,\"exact\":true},{\"size\":4096,\"count\":3,\"exact\":false}],"
        "\"max_read_time_s\":0.012346,\"max_read_time_size\":65536,"
        "\"max_write_time_s\":0.250000,\"max_write_time_size\":5242880",
        &back);
    const struct vigil_report_file_mpiio *m = &back.r.files[0].mpiio;
    assert_true(back.r.files[0].has_mpiio);
    assert_int_equal(m->coll_reads, 8); /* the members it has */
    assert_int_equal(m->coll_opens + m->hints + m->views + m->rw_switches, 0);
    assert_int_equal(m->mode, -1);
    assert_int_equal(m->common_size_count, 0);
    assert_int_equal(m->write_size_hist[4], 0);
    assert_true(m->max_write_time_s == 0);
    char *text = vigil_cli_report_text(&back.r);
    assert_null(strstr(text, "MPI-IO files (record)"));
    test_assert_contains(text, "MPI-IO files (reads/writes)");
    g_free(text);
    vigil_cli_report_clear(&back);
    g_free(old);
}

/* A "ranks" without the POSIX extremes (written before them): unknown,
 * and written back without them. */
static void test_ranks_without_posix_extremes(void **state)
{
    (void)state;
    struct vigil_cli_report back;
    char *old = read_back_without(test_report_mpi_joint,
                                  ",\"most_posix_rank\":0,\"most_posix_bytes\":2097152,"
                                  "\"least_posix_rank\":2,\"least_posix_bytes\":0",
                                  &back);
    assert_int_equal(back.r.files[0].ranks.most_posix_rank, -1);
    char *again = vigil_cli_report_json(&back.r);
    assert_string_equal(again, old);
    char *text = vigil_cli_report_text(&back.r);
    test_assert_contains(text,
                         "       1048576             0       2097152                         -\n");
    g_free(text);
    g_free(again);
    vigil_cli_report_clear(&back);
    g_free(old);
}

TEST_MAIN(cmocka_unit_test(test_job_text),
          cmocka_unit_test(test_shared_table_skips_files_without_io),
          cmocka_unit_test(test_plain_text_has_neither),
          cmocka_unit_test(test_bad_parts_are_refused),
          cmocka_unit_test(test_absent_parts_are_none), cmocka_unit_test(test_mpiio_without_record),
          cmocka_unit_test(test_ranks_without_posix_extremes))
