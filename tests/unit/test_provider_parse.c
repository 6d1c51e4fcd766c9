/* Tests of the providers' shared parsing helpers (vigil/provider.h) where
 * a fast path stands in for a general one: it must give what the general
 * one gives, bit for bit (strtod, g_str_has_prefix, a number's digits). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "vigil/provider.h"
#include "test_main.h"

/* What scan_double must give for `text`: g_ascii_strtod's value when it
 * reads exactly the digits and points at the start, else a refusal. */
static void assert_scan_double_as_strtod(const char *text)
{
    size_t span = strspn(text, "0123456789.");
    char *end = NULL;
    double want = g_ascii_strtod(text, &end);
    gboolean want_ok =
        span > 0 && strcspn(text, "0123456789") < span && end == text + span && isfinite(want);

    const char *cursor = text;
    double got = -1.0;
    gboolean ok = vigil_provider_scan_double(&cursor, &got);
    if (ok != want_ok)
        fail_msg("\"%s\": scan_double says %d, strtod %d", text, ok, want_ok);
    if (!ok) {
        assert_ptr_equal(cursor, text);
        return;
    }
    assert_ptr_equal(cursor, text + span);
    if (memcmp(&got, &want, sizeof got) != 0)
        fail_msg("\"%s\": scan_double gives %.17g, strtod %.17g", text, got, want);
}

static void test_scan_double_is_strtod_on_edge_cases(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "0.52",
        "1.58",
        "12.25",
        "0.00",
        "0",
        "7",
        "5.",
        ".5",
        "000.125",
        "0.1",
        "0.3",
        "123456.789",
        "3 ",
        "0.52 1.58",
        "0.52\n",
        /* The fast path's limits: 2^53 - 1, 2^53 and past it, in digits. */
        "9007199254740991",
        "9007199254740992",
        "9007199254740993",
        "900719925474099.3",
        "90071992547409.93",
        "18446744073709551616",
        /* 22 and 23 digits after the point. */
        "0.1234567890123456789012",
        "0.12345678901234567890123",
        "1.0000000000000000000001",
        "0.0000000000000000000001",
        "0.00000000000000000000001",
        /* What strtod reads on, or stops short of. */
        "1e5",
        "1E5",
        "0x1",
        "0x1p3",
        "1.2.3",
        "..5",
        ".",
        "",
        "-1",
        "+1",
        "nan",
        "inf",
        "1.5e",
        "2x",
        "1.5abc",
        /* Past double: refused, as strtod's infinity was. */
        "1000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000000000000000000",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(texts); i++)
        assert_scan_double_as_strtod(texts[i]);
}

/* /proc/loadavg's shape ("%lu.%02lu") over its whole range, and longer
 * decimals at random. */
static void test_scan_double_is_strtod_on_many_decimals(void **state)
{
    (void)state;
    char text[64];
    for (guint whole = 0; whole < 1100; whole += 7) {
        for (guint hundredths = 0; hundredths < 100; hundredths++) {
            g_snprintf(text, sizeof text, "%u.%02u", whole, hundredths);
            assert_scan_double_as_strtod(text);
        }
    }
    GRand *rand = g_rand_new_with_seed(20240607);
    for (int i = 0; i < 20000; i++) {
        guint64 digits =
            ((guint64)g_rand_int(rand) << 32 | g_rand_int(rand)) >> g_rand_int_range(rand, 0, 64);
        g_snprintf(text, sizeof text, "%" G_GUINT64_FORMAT, digits);
        size_t length = strlen(text);
        size_t point = (size_t)g_rand_int_range(rand, 0, (gint32)length + 1);
        memmove(text + point + 1, text + point, length - point + 1);
        text[point] = '.';
        assert_scan_double_as_strtod(text);
    }
    g_rand_free(rand);
}

/* The digits at the start, as g_ascii_string_to_unsigned reads them whole,
 * or a refusal when there are none or they pass 64 bits. */
static void test_scan_u64_reads_the_leading_digits(void **state)
{
    (void)state;
    static const char *const texts[] = {
        "0",
        "7",
        "42",
        "00012",
        "18446744073709551615",
        "18446744073709551616",
        "99999999999999999999",
        "184467440737095516150",
        "",
        "x",
        "-1",
        "+1",
        " 1",
        "12x",
        "12 34",
        "1/",
        "1:",
        "/1",
        ":1",
        "\xb0",
        "1\xb0",
        "9\xff",
        "12\n",
    };
    for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) {
        const char *text = texts[i];
        size_t span = strspn(text, "0123456789");
        char *digits = g_strndup(text, span);
        guint64 want = 0;
        gboolean want_ok =
            span > 0 && g_ascii_string_to_unsigned(digits, 10, 0, G_MAXUINT64, &want, NULL);
        g_free(digits);
        const char *cursor = text;
        guint64 got = 0;
        gboolean ok = vigil_provider_scan_u64(&cursor, &got);
        if (ok != want_ok)
            fail_msg("\"%s\": scan_u64 says %d, expected %d", text, ok, want_ok);
        assert_ptr_equal(cursor, ok ? text + span : text);
        if (ok)
            assert_true(got == want);
    }
}

static void test_has_prefix_is_g_str_has_prefix(void **state)
{
    (void)state;
    static const char *const texts[] = {"",      "l",     "lo",    "loo",  "loop",
                                        "loop0", "lop0",  "Loop0", "ram",  "ra",
                                        "ram0",  "xloop", "cpu",   "cpu0", "cp"};
    for (size_t i = 0; i < G_N_ELEMENTS(texts); i++) {
        /* A copy of its own length, so that a read past its end is one
         * for the sanitizers. */
        char *text = g_strdup(texts[i]);
        assert_int_equal(VIGIL_PROVIDER_HAS_PREFIX(text, "loop"), g_str_has_prefix(text, "loop"));
        assert_int_equal(VIGIL_PROVIDER_HAS_PREFIX(text, "ram"), g_str_has_prefix(text, "ram"));
        assert_int_equal(VIGIL_PROVIDER_HAS_PREFIX(text, "cpu"), g_str_has_prefix(text, "cpu"));
        assert_int_equal(VIGIL_PROVIDER_HAS_PREFIX(text, ""), TRUE);
        g_free(text);
    }
}

TEST_MAIN(cmocka_unit_test(test_scan_double_is_strtod_on_edge_cases),
          cmocka_unit_test(test_scan_double_is_strtod_on_many_decimals),
          cmocka_unit_test(test_scan_u64_reads_the_leading_digits),
          cmocka_unit_test(test_has_prefix_is_g_str_has_prefix))
