/* Tests of the netdev provider, on /proc/net/dev fixtures with known
 * numbers. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_provider.h"
#include "test_support.h"

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

static const char *const suffixes[] = {"rx_bytes", "tx_bytes", "rx_packets", "tx_packets"};

static char *open_provider(struct test_provider *p, const char *dir, const char *extra_config)
{
    char *config = g_strdup_printf("[provider.netdev]\nroot = %s\n%s", dir, extra_config);
    test_provider_open(p, "netdev", config);
    g_free(config);
    return g_build_filename(dir, NETDEV, NULL);
}

static void start_ok(struct test_provider *p)
{
    GError *error = NULL;
    if (!test_provider_start(p, &error))
        fail_msg("start: %s", error->message);
}

static GHashTable *read_ok(struct test_provider *p)
{
    GError *error = NULL;
    GHashTable *samples = test_provider_read(p, 0, &error);
    if (samples == NULL)
        fail_msg("read: %s", error->message);
    return samples;
}

static void assert_value(GHashTable *samples, const char *metric, double want)
{
    double got = test_sample_value(samples, metric);
    if (got != want)
        fail_msg("%s is %.17g, expected %.17g", metric, got, want);
}

static void assert_iface(GHashTable *samples, const char *iface, double rx_bytes, double tx_bytes,
                         double rx_packets, double tx_packets)
{
    const double want[] = {rx_bytes, tx_bytes, rx_packets, tx_packets};
    for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        char *name = g_strdup_printf("net.%s.%s", iface, suffixes[i]);
        assert_value(samples, name, want[i]);
        g_free(name);
    }
}

/* Neither registered nor emitted. */
static void assert_no_iface(struct test_provider *p, GHashTable *samples, const char *iface)
{
    for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        char *name = g_strdup_printf("net.%s.%s", iface, suffixes[i]);
        if (g_hash_table_contains(samples, name))
            fail_msg("%s was emitted", name);
        if (vigil_metric_lookup(p->catalog, name) != NULL)
            fail_msg("%s was registered", name);
        g_free(name);
    }
}

/* The provider keeps its descriptor: the new text must go into the same
 * inode, as the kernel's does (g_file_set_contents would make a new one). */
static void rewrite_in_place(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        fail_msg("opening %s: %s", path, g_strerror(errno));
    size_t length = strlen(text);
    assert_int_equal(write(fd, text, length), (ssize_t)length);
    assert_int_equal(close(fd), 0);
}

static void test_values_from_a_known_fixture(void **state)
{
    const char *dir = *state;
    test_write_file(dir, NETDEV, fixture);
    struct test_provider p;
    g_free(open_provider(&p, dir, ""));
    start_ok(&p);
    GHashTable *samples = read_ok(&p);
    assert_iface(samples, "eth0", 123456789, 987654321, 1000, 2000);
    assert_iface(samples, "ib0", 4000000000000.0, 5000000000000.0, 300000, 400000);
    assert_no_iface(&p, samples, "lo");
    assert_int_equal(g_hash_table_size(samples), 2 * G_N_ELEMENTS(suffixes));
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void test_metrics_describe_themselves(void **state)
{
    const char *dir = *state;
    test_write_file(dir, NETDEV, fixture);
    struct test_provider p;
    g_free(open_provider(&p, dir, ""));
    start_ok(&p);
    /* start registers what is there, before any read. */
    assert_int_equal(vigil_metric_count(p.catalog), 2 * G_N_ELEMENTS(suffixes));
    const char *const units[] = {"bytes", "bytes", "count", "count"};
    for (size_t i = 0; i < G_N_ELEMENTS(suffixes); i++) {
        char *name = g_strdup_printf("net.ib0.%s", suffixes[i]);
        const struct vigil_metric_desc *m = test_metric(&p, name);
        assert_string_equal(m->unit, units[i]);
        assert_int_equal(m->kind, VIGIL_METRIC_COUNTER);
        assert_int_equal(m->origin, VIGIL_METRIC_MEASURED);
        assert_string_equal(m->source, "netdev");
        g_free(name);
    }
    test_provider_close(&p);
}

static void test_second_read_sees_new_values_and_interfaces(void **state)
{
    const char *dir = *state;
    test_write_file(dir, NETDEV, fixture);
    struct test_provider p;
    char *path = open_provider(&p, dir, "");
    start_ok(&p);
    g_hash_table_destroy(read_ok(&p));

    /* eth0 moved on, ib0 is gone, eth1 is new and printed the way old
     * kernels did, with no space after the colon. */
    rewrite_in_place(path, HEADER
                     "    lo:    6000      60    0    0    0     0          0         0     6000  "
                     "    60    0    0    0     0       0          0\n"
                     "  eth0: 123457789    1010    1    2    3     4          5         6 "
                     "987655321    2020    7    8    9    10      11         12\n"
                     "  eth1:77 7 0 0 0 0 0 0 88 8 0 0 0 0 0 0\n");
    GHashTable *samples = read_ok(&p);
    assert_iface(samples, "eth0", 123457789, 987655321, 1010, 2020);
    assert_iface(samples, "eth1", 77, 88, 7, 8);
    assert_false(g_hash_table_contains(samples, "net.ib0.rx_bytes"));
    assert_int_equal(g_hash_table_size(samples), 2 * G_N_ELEMENTS(suffixes));
    assert_string_equal(test_metric(&p, "net.eth1.rx_packets")->unit, "count");
    g_hash_table_destroy(samples);
    g_free(path);
    test_provider_close(&p);
}

static void test_reads_the_file_it_opened(void **state)
{
    const char *dir = *state;
    test_write_file(dir, NETDEV, fixture);
    struct test_provider p;
    g_free(open_provider(&p, dir, ""));
    start_ok(&p);
    /* A new inode under the same name is not the file start() opened. */
    test_write_file(dir, NETDEV, HEADER "  eth0: 1 1 0 0 0 0 0 0 1 1 0 0 0 0 0 0\n");
    GHashTable *samples = read_ok(&p);
    assert_iface(samples, "eth0", 123456789, 987654321, 1000, 2000);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void test_interfaces_key_restricts_and_can_name_lo(void **state)
{
    const char *dir = *state;
    test_write_file(dir, NETDEV, fixture);
    struct test_provider p;
    char *path = open_provider(&p, dir, "interfaces = lo;ib0;ib1\n");
    start_ok(&p);
    GHashTable *samples = read_ok(&p);
    assert_iface(samples, "lo", 5000, 5000, 50, 50);
    assert_iface(samples, "ib0", 4000000000000.0, 5000000000000.0, 300000, 400000);
    assert_no_iface(&p, samples, "eth0");
    assert_int_equal(g_hash_table_size(samples), 2 * G_N_ELEMENTS(suffixes));
    g_hash_table_destroy(samples);

    /* A named interface that shows up later. */
    rewrite_in_place(path, HEADER "   ib1: 3 1 0 0 0 0 0 0 4 2 0 0 0 0 0 0\n"
                                  "  eth2: 3 1 0 0 0 0 0 0 4 2 0 0 0 0 0 0\n");
    samples = read_ok(&p);
    assert_iface(samples, "ib1", 3, 4, 1, 2);
    assert_no_iface(&p, samples, "eth2");
    assert_int_equal(g_hash_table_size(samples), G_N_ELEMENTS(suffixes));
    g_hash_table_destroy(samples);
    g_free(path);
    test_provider_close(&p);
}

static void test_interface_names_become_metric_names(void **state)
{
    const char *dir = *state;
    /* '.' separates metric segments and upper case is not allowed; the
     * VLAN "eth0.100" then takes the metrics of "eth0_100", which is not
     * reported. */
    test_write_file(dir, NETDEV,
                    HEADER "eth0.100: 1 2 0 0 0 0 0 0 3 4 0 0 0 0 0 0\n"
                           "enP2p1s0: 5 6 0 0 0 0 0 0 7 8 0 0 0 0 0 0\n"
                           "eth0_100: 9 9 0 0 0 0 0 0 9 9 0 0 0 0 0 0\n");
    struct test_provider p;
    g_free(open_provider(&p, dir, ""));
    start_ok(&p);
    GHashTable *samples = read_ok(&p);
    assert_iface(samples, "eth0_100", 1, 3, 2, 4);
    assert_iface(samples, "en_2p1s0", 5, 7, 6, 8);
    assert_int_equal(g_hash_table_size(samples), 2 * G_N_ELEMENTS(suffixes));
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void test_a_file_larger_than_the_first_buffer(void **state)
{
    const char *dir = *state;
    enum { N_IFACES = 2000 }; /* ~160 KB, well past the first buffer */
    GString *text = g_string_new(HEADER);
    for (int i = 0; i < N_IFACES; i++)
        g_string_append_printf(text, " veth%d: %d %d 0 0 0 0 0 0 %d %d 0 0 0 0 0 0\n", i, 1000 * i,
                               i, 2000 * i, 2 * i);
    test_write_file(dir, NETDEV, text->str);
    g_string_free(text, TRUE);
    struct test_provider p;
    g_free(open_provider(&p, dir, ""));
    start_ok(&p);
    GHashTable *samples = read_ok(&p);
    assert_int_equal(g_hash_table_size(samples), N_IFACES * G_N_ELEMENTS(suffixes));
    const int last = N_IFACES - 1;
    assert_iface(samples, "veth1999", 1000.0 * last, 2000.0 * last, last, 2 * last);
    g_hash_table_destroy(samples);
    test_provider_close(&p);
}

static void assert_read_fails_at(const char *dir, const char *text, unsigned line)
{
    test_write_file(dir, NETDEV, fixture);
    struct test_provider p;
    char *path = open_provider(&p, dir, "");
    start_ok(&p);
    rewrite_in_place(path, text);
    GError *error = NULL;
    GHashTable *samples = test_provider_read(&p, 0, &error);
    if (samples != NULL)
        fail_msg("accepted:\n%s", text);
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_READ));
    char *where = g_strdup_printf("%s, line %u:", path, line);
    test_assert_contains(error->message, where);
    g_free(where);
    g_error_free(error);
    g_free(path);
    test_provider_close(&p);
}

static void test_malformed_line_is_a_read_error(void **state)
{
    const char *dir = *state;
    const char *good = "  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n";
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
    for (size_t i = 0; i < G_N_ELEMENTS(bad_lines); i++) {
        char *text = g_strconcat(HEADER, good, bad_lines[i], last, NULL);
        assert_read_fails_at(dir, text, 4);
        g_free(text);
    }
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
    const char *dir = *state;
    struct test_provider p;
    char *path = open_provider(&p, dir, "");
    GError *error = NULL;
    assert_false(test_provider_start(&p, &error));
    assert_true(g_error_matches(error, VIGIL_PROVIDER_ERROR, VIGIL_PROVIDER_ERROR_UNAVAILABLE));
    test_assert_contains(error->message, path);
    test_assert_contains(error->message, g_strerror(ENOENT));
    g_error_free(error);
    g_free(path);
    test_provider_close(&p);
}

static void test_this_machine(void **state)
{
    (void)state;
    if (!g_file_test("/proc/net/dev", G_FILE_TEST_EXISTS))
        skip();
    struct test_provider p;
    test_provider_open(&p, "netdev", "[provider.netdev]\nroot = /\n");
    start_ok(&p);
    GHashTable *first = read_ok(&p);
    GHashTable *second = read_ok(&p);
    assert_false(g_hash_table_contains(first, "net.lo.rx_bytes"));
    /* Counters never go back between two reads. */
    GHashTableIter it;
    gpointer name;
    g_hash_table_iter_init(&it, first);
    while (g_hash_table_iter_next(&it, &name, NULL)) {
        assert_true(g_str_has_prefix(name, "net."));
        double before = test_sample_value(first, name);
        double after = test_sample_value(second, name);
        if (before < 0 || after < before)
            fail_msg("%s went from %g to %g", (const char *)name, before, after);
    }
    g_hash_table_destroy(second);
    g_hash_table_destroy(first);
    test_provider_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_values_from_a_known_fixture, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_metrics_describe_themselves, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_second_read_sees_new_values_and_interfaces,
                                        test_make_dir, test_remove_dir),
        cmocka_unit_test_setup_teardown(test_reads_the_file_it_opened, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_interfaces_key_restricts_and_can_name_lo,
                                        test_make_dir, test_remove_dir),
        cmocka_unit_test_setup_teardown(test_interface_names_become_metric_names, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_a_file_larger_than_the_first_buffer, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_malformed_line_is_a_read_error, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_missing_header_is_a_read_error, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test_setup_teardown(test_missing_file_is_unavailable, test_make_dir,
                                        test_remove_dir),
        cmocka_unit_test(test_this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
