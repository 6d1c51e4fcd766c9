/* Tests of the netdev provider, on /proc/net/dev fixtures with known
 * numbers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_provider.h"
#include "test_support.h"
#include "test_main.h"

#define NETDEV "proc/net/dev"

#define HEADER                                                                                     \
    "Inter-|   Receive                                                |  Transmit\n"               \
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs "     \
    "drop fifo colls carrier compressed\n"

/* Every counter differs, so that a field taken from the wrong column shows;
 * ib0's are past 2^32. */
static const char fixture[] =
    HEADER "    lo:    5000      50    0    0    0     0          0         0     5000      50    "
           "0    0    0     0       0          0\n"
           "  eth0: 123456789    1000    1    2    3     4          5         6 987654321    2000 "
           "   7    8    9    10      11         12\n"
           "   ib0: 4000000000000 300000    0    0    0     0          0         0 5000000000000 "
           "400000    0    0    0     0       0          0\n";

static const char *const suffixes[] = {"rx_bytes", "tx_bytes", "rx_packets", "tx_packets", NULL};
static const char *const units[] = {"bytes", "bytes", "count", "count"};
static const struct test_devices interfaces = {"netdev", NETDEV, "net", suffixes, units};

static void assert_iface(GHashTable *samples, const char *iface, double rx_bytes, double tx_bytes,
                         double rx_packets, double tx_packets)
{
    test_devices_assert(&interfaces, samples, iface,
                        (const double[]){rx_bytes, tx_bytes, rx_packets, tx_packets});
}

static void test_values_from_a_known_fixture(void **state)
{
    struct test_provider p;
    test_devices_start(&p, &interfaces, *state, fixture);
    const struct test_device want[] = {
        {"eth0", (const double[]){123456789, 987654321, 1000, 2000}},
        {"ib0", (const double[]){4000000000000.0, 5000000000000.0, 300000, 400000}},
    };
    test_devices_assert_read(&p, &interfaces, want, G_N_ELEMENTS(want),
                             (const char *const[]){"lo", NULL});
    test_provider_close(&p);
}

/* start registers what is there, before any read. */
static void test_metrics_describe_themselves(void **state)
{
    test_devices_assert_registered(&interfaces, *state, fixture, "ib0", 2);
}

static void test_second_read_sees_new_values_and_interfaces(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    test_devices_start(&p, &interfaces, dir, fixture);
    g_hash_table_destroy(test_provider_read_ok(&p, 0));

    /* eth0 moved on, ib0 is gone, eth1 is new and printed the way old
     * kernels did, with no space after the colon. */
    test_rewrite_file(dir, NETDEV,
                      HEADER
                      "    lo:    6000      60    0    0    0     0          0         0     6000  "
                      "    60    0    0    0     0       0          0\n"
                      "  eth0: 123457789    1010    1    2    3     4          5         6 "
                      "987655321    2020    7    8    9    10      11         12\n"
                      "  eth1:77 7 0 0 0 0 0 0 88 8 0 0 0 0 0 0\n");
    GHashTable *samples = test_provider_read_ok(&p, 0);
    assert_iface(samples, "eth0", 123457789, 987655321, 1010, 2020);
    assert_iface(samples, "eth1", 77, 88, 7, 8);
    assert_false(g_hash_table_contains(samples, "net.ib0.rx_bytes"));
    test_devices_assert_count(&interfaces, samples, 2);
    assert_string_equal(test_metric(&p, "net.eth1.rx_packets")->unit, "count");
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void test_reads_the_file_it_opened(void **state)
{
    const char *dir = *state;
    struct test_provider p;
    test_devices_start(&p, &interfaces, dir, fixture);
    /* A new inode under the same name is not the file start() opened. */
    test_write_file(dir, NETDEV, HEADER "  eth0: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n");
    GHashTable *samples = test_provider_read_ok(&p, 0);
    assert_iface(samples, "eth0", 123456789, 987654321, 1000, 2000);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void test_interfaces_key_restricts_and_can_name_lo(void **state)
{
    const char *dir = *state;
    test_write_file(dir, NETDEV, fixture);
    struct test_provider p;
    test_provider_open_at(&p, "netdev", dir, "interfaces = lo;ib0;ib1\n");
    test_provider_start_ok(&p);
    const struct test_device named[] = {
        {"lo", (const double[]){5000, 5000, 50, 50}},
        {"ib0", (const double[]){4000000000000.0, 5000000000000.0, 300000, 400000}},
    };
    test_devices_assert_read(&p, &interfaces, named, G_N_ELEMENTS(named),
                             (const char *const[]){"eth0", NULL});

    /* A named interface that shows up later. */
    test_rewrite_file(dir, NETDEV,
                      HEADER "   ib1: 3 1 0 0 0 0 0 0 4 2 0 0 0 0 0 0\n"
                             "  eth2: 3 1 0 0 0 0 0 0 4 2 0 0 0 0 0 0\n");
    const struct test_device later[] = {{"ib1", (const double[]){3, 4, 1, 2}}};
    test_devices_assert_read(&p, &interfaces, later, 1, (const char *const[]){"eth2", NULL});
    test_provider_close(&p);
}

static void test_interface_names_become_metric_names(void **state)
{
    /* '.' separates metric segments and upper case is not allowed; the
     * VLAN "eth0.100" then takes the metrics of "eth0_100", which is not
     * reported. */
    struct test_provider p;
    test_devices_start(&p, &interfaces, *state,
                       HEADER "eth0.100: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n"
                              "enP2p1s0: 5 6 0 0 0 0 0 0 7 8 0 0 0 0 0 0\n"
                              "eth0_100: 9 9 0 0 0 0 0 0 9 9 0 0 0 0 0 0\n");
    const struct test_device want[] = {
        {"eth0_100", (const double[]){1, 3, 2, 4}},
        {"en_2p1s0", (const double[]){5, 7, 6, 8}},
    };
    test_devices_assert_read(&p, &interfaces, want, G_N_ELEMENTS(want), NULL);
    test_provider_close(&p);
}

static void test_a_file_larger_than_the_first_buffer(void **state)
{
    enum { N_IFACES = 2000 }; /* ~160 KB, well past the first buffer */
    GString *text = g_string_new(HEADER);
    for (int i = 0; i < N_IFACES; i++)
        g_string_append_printf(text, " veth%d: %d %d 0 0 0 0 0 0 %d %d 0 0 0 0 0 0\n", i, 1000 * i,
                               i, 2000 * i, 2 * i);
    struct test_provider p;
    test_devices_start(&p, &interfaces, *state, text->str);
    g_string_free(text, TRUE);
    GHashTable *samples = test_provider_read_ok(&p, 0);
    test_devices_assert_count(&interfaces, samples, N_IFACES);
    const int last = N_IFACES - 1;
    assert_iface(samples, "veth1999", 1000.0 * last, 2000.0 * last, last, 2 * last);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

/* With the file holding `text`, a read fails at line `line`. */
static void assert_read_fails_at(const char *dir, const char *text, unsigned line)
{
    test_devices_assert_bad_lines(&interfaces, dir, fixture, "", &text, 1, "", line);
}

static void test_malformed_line_is_a_read_error(void **state)
{
    const char *dir = *state;
    const char *last = "  eth9: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n";
    const char *bad_lines[] = {
        "  eth1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",                    /* no colon */
        "  eth1: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n",                      /* 15 counters */
        "  eth1: 1 2 3 4 5 6 7 8 x 10 11 12 13 14 15 16\n",                   /* a word */
        "  eth1: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 +16\n",                  /* a sign */
        "  eth1: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 99999999999999999999\n", /* > 2^64 */
        "    : 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",                     /* no name */
        " et h1: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",                   /* two names */
        "\n",                                                                 /* empty */
        "  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",                   /* eth0 again */
    };
    test_devices_assert_bad_lines(&interfaces, dir, fixture,
                                  HEADER "  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n",
                                  bad_lines, G_N_ELEMENTS(bad_lines), last, 4);
}

static void test_missing_header_is_a_read_error(void **state)
{
    const char *dir = *state;
    const char *line = "  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n";
    char *no_header = g_strconcat(line, line, line, NULL);
    assert_read_fails_at(dir, no_header, 1);
    char *one_header = g_strconcat("Inter-|   Receive |  Transmit\n", line, NULL);
    assert_read_fails_at(dir, one_header, 2);
    assert_read_fails_at(dir, "", 1);
    g_free(one_header);
    g_free(no_header);
}

static void test_missing_file_is_unavailable(void **state)
{
    test_provider_assert_unavailable("netdev", *state, NETDEV, ENOENT);
}

static void test_this_machine(void **state)
{
    (void)state;
    test_skip_unless(g_file_test("/proc/net/dev", G_FILE_TEST_EXISTS), "no /proc/net/dev");
    GHashTable *first = test_provider_assert_counters_grow("netdev", "net.");
    assert_false(g_hash_table_contains(first, "net.lo.rx_bytes"));
    g_hash_table_destroy(first);
}

TEST_MAIN(TEST_WITH_DIR(test_values_from_a_known_fixture),
          TEST_WITH_DIR(test_metrics_describe_themselves),

          TEST_WITH_DIR(test_second_read_sees_new_values_and_interfaces),
          TEST_WITH_DIR(test_reads_the_file_it_opened),
          TEST_WITH_DIR(test_interfaces_key_restricts_and_can_name_lo),
          TEST_WITH_DIR(test_interface_names_become_metric_names),
          TEST_WITH_DIR(test_a_file_larger_than_the_first_buffer),
          TEST_WITH_DIR(test_malformed_line_is_a_read_error),
          TEST_WITH_DIR(test_missing_header_is_a_read_error),
          TEST_WITH_DIR(test_missing_file_is_unavailable), cmocka_unit_test(test_this_machine))
