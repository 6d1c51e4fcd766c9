/* Tests of the diskstats provider, on /proc/diskstats fixtures with known
 * numbers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_provider.h"
#include "test_support.h"
#include "test_main.h"

#define DISKSTATS "proc/diskstats"

/* sda and its partition sda1 with the 11 fields of old kernels, nvme0n1
 * with the 17 of kernels since 5.5; loop0 did I/O but is a loop device,
 * zram0 never did any. */
static const char fixture[] =
    "   8       0 sda 1000 10 20000 500 2000 20 40000 800 0 1500 1300\n"
    "   8       1 sda1 900 5 18000 450 1900 15 38000 700 0 1400 1150\n"
    "   7       0 loop0 50 0 400 10 0 0 0 0 0 20 10\n"
    " 259       0 nvme0n1 3000 0 60000 900 4000 0 80000 1200 1 2500 2100 0 0 0 0 10 5\n"
    " 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n";

static const char *const suffixes[] = {"read_bytes", "write_bytes", "reads",
                                       "writes",     "busy_s",      NULL};
static const char *const units[] = {"bytes", "bytes", "count", "count", "s"};
static const struct test_devices disks = {"diskstats", DISKSTATS, "disk", suffixes, units};

static void assert_disk(GHashTable *samples, const char *dev, double read_bytes, double write_bytes,
                        double reads, double writes, double busy_s)
{
    test_devices_assert(&disks, samples, dev,
                        (const double[]){read_bytes, write_bytes, reads, writes, busy_s});
}

static void test_values_from_a_known_fixture(void **state)
{
    struct test_provider p;
    test_devices_start(&p, &disks, *state, fixture);
    const struct test_device want[] = {
        {"sda", (const double[]){20000.0 * 512, 40000.0 * 512, 1000, 2000, 1.5}},
        {"sda1", (const double[]){18000.0 * 512, 38000.0 * 512, 900, 1900, 1.4}},
        {"nvme0n1", (const double[]){60000.0 * 512, 80000.0 * 512, 3000, 4000, 2.5}},
    };
    test_devices_assert_read(&p, &disks, want, G_N_ELEMENTS(want),
                             (const char *const[]){"loop0", "zram0", NULL});
    test_provider_close(&p);
}

/* start registers what is there, before any read. */
static void test_metrics_describe_themselves(void **state)
{
    test_devices_assert_registered(&disks, *state, fixture, "nvme0n1", 3);
}

static void test_second_read_sees_new_values_and_devices(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    test_devices_start(&p, &disks, dir, fixture);
    g_hash_table_destroy(test_provider_read_ok(&p, 0));

    /* sda moved on, sda1 is gone, sdb is new, zram0 did its first I/O. */
    test_rewrite_file(dir, DISKSTATS,
                      "   8       0 sda 1001 10 20008 500 2003 20 40016 800 0 1750 1300\n"
                      " 259       0 nvme0n1 3000 0 60000 900 4000 0 80000 1200 0 2500 2100 0 0 0 "
                      "0 10 5\n"
                      " 253       0 zram0 7 0 56 1 0 0 0 0 0 3 1 0 0 0 0 0 0\n"
                      "   8      16 sdb 1 0 8 1 2 0 16 1 0 2 2\n");
    GHashTable *samples = test_provider_read_ok(&p, 0);
    assert_disk(samples, "sda", 20008.0 * 512, 40016.0 * 512, 1001, 2003, 1.75);
    assert_disk(samples, "nvme0n1", 60000.0 * 512, 80000.0 * 512, 3000, 4000, 2.5);
    assert_disk(samples, "zram0", 56.0 * 512, 0, 7, 0, 0.003);
    assert_disk(samples, "sdb", 8.0 * 512, 16.0 * 512, 1, 2, 0.002);
    assert_false(g_hash_table_contains(samples, "disk.sda1.reads"));
    test_devices_assert_count(&disks, samples, 4);
    assert_string_equal(test_metric(&p, "disk.sdb.busy_s")->unit, "s");
    g_hash_table_destroy(samples);

    /* Back to zero (a device replaced under the same name): still reported,
     * since the drop is what a consumer must see. */
    test_rewrite_file(dir, DISKSTATS, "   8      16 sdb 0 0 0 0 0 0 0 0 0 0 0\n");
    const struct test_device zero[] = {{"sdb", (const double[]){0, 0, 0, 0, 0}}};
    test_devices_assert_read(&p, &disks, zero, 1, NULL);

    test_provider_close(&p);
}

static void test_reads_the_file_it_opened(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    test_devices_start(&p, &disks, dir, fixture);
    /* A new inode under the same name is not the file start() opened. */
    test_write_file(dir, DISKSTATS, "   8       0 sda 1 0 1 0 1 0 1 0 0 1 0\n");
    GHashTable *samples = test_provider_read_ok(&p, 0);
    assert_disk(samples, "sda", 20000.0 * 512, 40000.0 * 512, 1000, 2000, 1.5);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void test_devices_key_restricts_and_overrides_the_skips(void **state)
{
    const char *dir = *state;
    test_write_file(dir, DISKSTATS, fixture);
    struct test_provider p;
    test_provider_open_at(&p, "diskstats", dir, "devices = sda1;loop0;zram0;sdc\n");
    test_provider_start_ok(&p);
    /* Named, so reported although loop* and all-zero devices are not by
     * default. */
    const struct test_device named[] = {
        {"sda1", (const double[]){18000.0 * 512, 38000.0 * 512, 900, 1900, 1.4}},
        {"loop0", (const double[]){400.0 * 512, 0, 50, 0, 0.02}},
        {"zram0", (const double[]){0, 0, 0, 0, 0}},
    };
    test_devices_assert_read(&p, &disks, named, G_N_ELEMENTS(named),
                             (const char *const[]){"sda", "nvme0n1", NULL});

    /* A named device that shows up later. */
    test_rewrite_file(dir, DISKSTATS,
                      "   8      32 sdc 4 0 32 1 0 0 0 0 0 5 1\n"
                      "   8      48 sdd 4 0 32 1 0 0 0 0 0 5 1\n");
    const struct test_device later[] = {{"sdc", (const double[]){32.0 * 512, 0, 4, 0, 0.005}}};
    test_devices_assert_read(&p, &disks, later, 1, (const char *const[]){"sdd", NULL});
    test_provider_close(&p);
}

/* Started on `text` (other devices, then sda: 9 reads of 72 sectors, 1 ms
 * busy), the provider reports sda alone and none of `skipped`. */
static void assert_sda_alone(const char *dir, const char *text, const char *const *skipped)
{
    struct test_provider p;
    test_devices_start(&p, &disks, dir, text);
    const struct test_device want[] = {{"sda", (const double[]){72.0 * 512, 0, 9, 0, 0.001}}};
    test_devices_assert_read(&p, &disks, want, 1, skipped);
    test_provider_close(&p);
}

static void test_default_skips_ram_disks(void **state)
{
    assert_sda_alone(*state,
                     "   1       0 ram0 9 0 72 0 0 0 0 0 0 1 0\n"
                     "   7       1 loop1 9 0 72 0 0 0 0 0 0 1 0\n"
                     "   8       0 sda 9 0 72 0 0 0 0 0 0 1 0\n",
                     (const char *const[]){"ram0", "loop1", NULL});
}

/* A scratch device's line is not parsed past its name (the parse was most
 * of the provider's cost per tick): its statistics may be anything. */
static void test_scratch_devices_are_not_parsed(void **state)
{
    assert_sda_alone(*state,
                     "   7       0 loop0 not numbers at all\n"
                     "   8       0 sda 9 0 72 0 0 0 0 0 0 1 0\n",
                     (const char *const[]){"loop0", NULL});
}

/* The statistics are read in one pass where they stand: a bad one is
 * still named whole, with its place. */
static void test_bad_statistic_is_named(void **state)
{
    const char *dir = *state;
    const char *good = "   8       0 sda 1000 10 20000 500 2000 20 40000 800 0 1500 1300\n";
    char *path = g_build_filename(dir, DISKSTATS, NULL);
    char *where = g_strdup_printf("%s, line 1: statistic 6 is \"2x0\", not a whole number", path);
    test_provider_assert_read_fails("diskstats", dir, DISKSTATS, good,
                                    "   8       0 sda 1000 10 20000 500 2000 2x0 40000 800 0 1500 "
                                    "1300\n",
                                    where);
    g_free(where);
    g_free(path);
}

static void test_device_names_become_metric_names(void **state)
{
    /* '!' (cciss), upper case and '.' cannot be in a metric name's
     * segment; "dm.x" and "dm_x" then map to the same metrics, and only
     * the first is reported. */
    struct test_provider p;
    test_devices_start(&p, &disks, *state,
                       " 104       0 cciss!c0d0 1 0 2 0 3 0 4 0 0 5 0\n"
                       " 200       0 Vol-A 1 0 2 0 3 0 4 0 0 6 0\n"
                       " 253       1 dm.x 1 0 2 0 3 0 4 0 0 7 0\n"
                       " 253       2 dm_x 1 0 2 0 3 0 4 0 0 8 0\n");
    const struct test_device want[] = {
        {"cciss_c0d0", (const double[]){1024, 2048, 1, 3, 0.005}},
        {"_ol-_", (const double[]){1024, 2048, 1, 3, 0.006}},
        {"dm_x", (const double[]){1024, 2048, 1, 3, 0.007}},
    };
    test_devices_assert_read(&p, &disks, want, G_N_ELEMENTS(want), NULL);
    test_provider_close(&p);
}

static void test_a_file_larger_than_the_first_buffer(void **state)
{
    enum { N_DEVICES = 3000 }; /* ~170 KB, well past the first buffer */
    GString *text = g_string_new(NULL);
    for (int i = 0; i < N_DEVICES; i++)
        g_string_append_printf(text, " 259 %6d dev%d %d 0 %d 0 %d 0 %d 0 0 %d 0\n", i, i, i + 1,
                               2 * i, 3 * i, 4 * i, 5 * i);
    struct test_provider p;
    test_devices_start(&p, &disks, *state, text->str);
    g_string_free(text, TRUE);
    GHashTable *samples = test_provider_read_ok(&p, 0);
    test_devices_assert_count(&disks, samples, N_DEVICES);
    const int last = N_DEVICES - 1;
    assert_disk(samples, "dev2999", 2.0 * last * 512, 4.0 * last * 512, last + 1, 3 * last,
                5 * last / 1000.0);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void test_malformed_line_is_a_read_error(void **state)
{
    const char *dir = *state;
    const char *good = "   8       0 sda 1000 10 20000 500 2000 20 40000 800 0 1500 1300\n";
    const char *other = "   8      32 sdc 1000 10 20000 500 2000 20 40000 800 0 1500 1300\n";
    const char *last = "   8      48 sdd 1000 10 20000 500 2000 20 40000 800 0 1500 1300\n";
    const char *bad_lines[] = {
        "   8      16 sdb 1 2 3 4 5 6 7 8 9 10\n",                      /* 10 statistics */
        "   8      16 sdb 1 2 3 4 5 x 7 8 9 10 11\n",                   /* a word */
        "   8      16 sdb 1 2 3 4 5 6 7 8 9 10 -11\n",                  /* a sign */
        "   8      16 sdb 1 2 3 4 5 6 7 8 9 10 11 12x\n",               /* a trailing letter */
        "   8      16 sdb 1 2 3 4 5 6 7 8 9 10 99999999999999999999\n", /* > 2^64 */
        "   a      16 sdb 1 2 3 4 5 6 7 8 9 10 11\n",                   /* device number */
        "   8      16\n",                                               /* no name */
        "\n",                                                           /* empty */
        "   8      32 sdc 1 2 3 4 5 6 7 8 9 10 11\n",                   /* sdc again */
    };
    /* Another device after the bad line: it is the line, not the end of the
     * file, that is refused. */
    char *before = g_strconcat(good, other, NULL);
    test_devices_assert_bad_lines(&disks, dir, good, before, bad_lines, G_N_ELEMENTS(bad_lines),
                                  last, 3);
    g_free(before);
}

static void test_malformed_file_fails_start(void **state)
{
    const char *dir = *state;
    char *path = g_build_filename(dir, DISKSTATS, NULL);
    char *where = g_strdup_printf("%s, line 1:", path);
    test_provider_assert_start_fails("diskstats", dir, DISKSTATS, "   8       0 sda 1 2 3\n",
                                     where);
    g_free(where);
    g_free(path);
}

static void test_missing_file_is_unavailable(void **state)
{
    test_provider_assert_unavailable("diskstats", *state, DISKSTATS, ENOENT);
}

static void test_unreadable_file_is_unavailable(void **state)
{
    const char *dir = *state;
    /* A directory opens, but cannot be read. */
    char *as_dir = g_build_filename(dir, DISKSTATS, NULL);
    assert_int_equal(g_mkdir_with_parents(as_dir, 0755), 0);
    test_provider_assert_unavailable("diskstats", dir, DISKSTATS, EISDIR);
    g_free(as_dir);
}

static void test_this_machine(void **state)
{
    (void)state;
    test_skip_unless(g_file_test("/proc/diskstats", G_FILE_TEST_EXISTS), "no /proc/diskstats");
    g_hash_table_destroy(test_provider_assert_counters_grow("diskstats", "disk."));
}

TEST_MAIN(TEST_WITH_DIR(test_values_from_a_known_fixture),
          TEST_WITH_DIR(test_metrics_describe_themselves),

          TEST_WITH_DIR(test_second_read_sees_new_values_and_devices),
          TEST_WITH_DIR(test_reads_the_file_it_opened),
          TEST_WITH_DIR(test_devices_key_restricts_and_overrides_the_skips),
          TEST_WITH_DIR(test_default_skips_ram_disks),
          TEST_WITH_DIR(test_device_names_become_metric_names),
          TEST_WITH_DIR(test_a_file_larger_than_the_first_buffer),
          TEST_WITH_DIR(test_malformed_line_is_a_read_error),
          TEST_WITH_DIR(test_scratch_devices_are_not_parsed),
          TEST_WITH_DIR(test_bad_statistic_is_named),
          TEST_WITH_DIR(test_malformed_file_fails_start),
          TEST_WITH_DIR(test_missing_file_is_unavailable),
          TEST_WITH_DIR(test_unreadable_file_is_unavailable), cmocka_unit_test(test_this_machine))
