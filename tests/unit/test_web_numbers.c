/* Tests of what vigil-web writes and reads itself for the series, where
 * json-glib and libpq's text were the bound: doubles written as json-glib
 * writes them (web/json_numbers.c) and binary results read
 * (web/pg_binary.c), malformed ones refused with what is wrong. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <json-glib/json-glib.h>

#include "json_numbers.h"
#include "pg_binary.h"
#include "test_main.h"

/* json-glib's text of `v`, without the ".0" it puts after an exponent. */
static char *json_glib_text(double v)
{
    JsonNode *node = json_node_new(JSON_NODE_VALUE);
    json_node_set_double(node, v);
    char *text = json_to_string(node, FALSE);
    json_node_unref(node);
    if (strchr(text, 'e') != NULL && g_str_has_suffix(text, ".0") &&
        strchr(text, '.') == strrchr(text, '.'))
        text[strlen(text) - 2] = '\0';
    return text;
}

static void assert_written_as_json_glib(double v)
{
    GString *ours = g_string_new(NULL);
    web_json_append_double(ours, v);
    char *theirs = json_glib_text(v);
    if (strcmp(ours->str, theirs) != 0)
        fail_msg("%a: written %s, json-glib writes %s", v, ours->str, theirs);
    /* And it reads back as the same double. */
    if (g_ascii_strtod(ours->str, NULL) != v)
        fail_msg("%a: %s reads back as another double", v, ours->str);
    g_free(theirs);
    g_string_free(ours, TRUE);
}

static void test_doubles_as_json_glib_writes_them(void **state)
{
    (void)state;
    static const double chosen[] = {0.0,
                                    -0.0,
                                    1.0,
                                    -1.0,
                                    5.0,
                                    0.1,
                                    0.5,
                                    140.0,
                                    149.99999999942858,
                                    1e16,
                                    1e17,
                                    1e20,
                                    1e21,
                                    1e22,
                                    1e-4,
                                    1e-5,
                                    9.9999999999999995e-08,
                                    1.5e-05,
                                    123456789012345678.0,
                                    12345678901234567.0,
                                    9007199254740992.0,
                                    9007199254740993.0,
                                    1795132800.0,
                                    1795132806.0,
                                    DBL_MAX,
                                    DBL_MIN,
                                    DBL_TRUE_MIN,
                                    1e300,
                                    1e-300,
                                    2.5,
                                    0.125,
                                    1e15 + 0.5,
                                    99999999999999999.0,
                                    0.30000000000000004,
                                    1.0 / 3.0,
                                    2.0 / 3.0,
                                    1e23,
                                    5e-324};
    for (gsize i = 0; i < G_N_ELEMENTS(chosen); i++) {
        assert_written_as_json_glib(chosen[i]);
        assert_written_as_json_glib(-chosen[i]);
    }
    /* What series hold (rates, means, times), and any bits at all. */
    GRand *rand = g_rand_new_with_seed(32);
    for (int i = 0; i < 200000; i++) {
        assert_written_as_json_glib(g_rand_double_range(rand, 0, 1000));
        assert_written_as_json_glib(g_rand_double_range(rand, 0, 2e9) / 7.0);
        assert_written_as_json_glib((double)g_rand_int_range(rand, 0, 1000000) / 1e3);
        guint64 bits = ((guint64)g_rand_int(rand) << 32) | g_rand_int(rand);
        double any;
        memcpy(&any, &bits, sizeof any);
        if (isfinite(any))
            assert_written_as_json_glib(any);
    }
    g_rand_free(rand);
}

static void test_arrays_nulls_and_strings(void **state)
{
    (void)state;
    GString *out = g_string_new(NULL);
    const double v[] = {1.0, NAN, INFINITY, 0.25, -INFINITY};
    web_json_append_numbers(out, v, G_N_ELEMENTS(v));
    assert_string_equal(out->str, "[1.0,null,null,0.25,null]");
    g_string_truncate(out, 0);
    web_json_append_numbers(out, v, 0);
    assert_string_equal(out->str, "[]");
    g_string_truncate(out, 0);
    web_json_append_string(out, "n\"1\\\n");
    assert_string_equal(out->str, "\"n\\\"1\\\\\\n\"");
    g_string_free(out, TRUE);
}

/* ---- binary results --------------------------------------------------------------------- */

/* A one-row, one-column binary result holding `len` bytes (NULL: SQL NULL). */
static PGresult *result_of(const char *bytes, int len)
{
    PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    PGresAttDesc column = {.name = (char *)"values", .format = 1, .typlen = -1};
    assert_true(PQsetResultAttrs(r, 1, &column));
    assert_true(PQsetvalue(r, 0, 0, (char *)bytes, bytes == NULL ? -1 : len));
    return r;
}

static void put32(GByteArray *a, guint32 v)
{
    v = GUINT32_TO_BE(v);
    g_byte_array_append(a, (const guint8 *)&v, 4);
}

static void put64(GByteArray *a, guint64 v)
{
    v = GUINT64_TO_BE(v);
    g_byte_array_append(a, (const guint8 *)&v, 8);
}

/* An array's header: `ndim` dimensions of `n` elements of type `oid`. */
static GByteArray *array_head(guint32 ndim, guint32 oid, guint32 n)
{
    GByteArray *a = g_byte_array_new();
    put32(a, ndim);
    put32(a, 1); /* has nulls */
    put32(a, oid);
    for (guint32 d = 0; d < ndim; d++) {
        put32(a, n);
        put32(a, 1);
    }
    return a;
}

static void put_float8(GByteArray *a, double v)
{
    guint64 bits;
    memcpy(&bits, &v, sizeof bits);
    put32(a, 8);
    put64(a, bits);
}

/* The array in `a` read: its length, or -1 with the error's message
 * holding `refusal`. */
static gint64 read_array(GByteArray *a, double **values, const char *refusal)
{
    PGresult *r = result_of((const char *)a->data, (int)a->len);
    GError *error = NULL;
    gint64 n = web_pg_float8_array(r, 0, 0, values, &error);
    if (refusal != NULL) {
        assert_int_equal(n, -1);
        assert_non_null(error);
        if (strstr(error->message, refusal) == NULL || strstr(error->message, "values") == NULL)
            fail_msg("refusal \"%s\" does not name the column and say %s", error->message, refusal);
        assert_null(*values);
        g_error_free(error);
    } else {
        assert_null(error);
    }
    PQclear(r);
    g_byte_array_unref(a);
    return n;
}

static void test_binary_arrays_read(void **state)
{
    (void)state;
    double *v = NULL;
    /* float8 with a NULL element. */
    GByteArray *a = array_head(1, 701, 3);
    put_float8(a, 1.5);
    put32(a, (guint32)-1);
    put_float8(a, -2.25);
    assert_int_equal(read_array(a, &v, NULL), 3);
    assert_true(v[0] == 1.5 && isnan(v[1]) && v[2] == -2.25);
    g_free(v);
    /* int4, read as doubles (a level's samples). */
    a = array_head(1, 23, 2);
    put32(a, 4);
    put32(a, 7);
    put32(a, 4);
    put32(a, (guint32)-3);
    PGresult *ints = result_of((const char *)a->data, (int)a->len);
    GError *int_error = NULL;
    assert_int_equal(web_pg_int4_array(ints, 0, 0, &v, &int_error), 2);
    assert_null(int_error);
    assert_true(v[0] == 7 && v[1] == -3);
    g_free(v);
    /* Read as float8: the type is named wrong, not taken for another. */
    assert_int_equal(web_pg_float8_array(ints, 0, 0, &v, &int_error), -1);
    assert_non_null(strstr(int_error->message, "of another type"));
    assert_null(v);
    g_clear_error(&int_error);
    PQclear(ints);
    g_byte_array_unref(a);
    /* Empty: no dimension at all. */
    assert_int_equal(read_array(array_head(0, 701, 0), &v, NULL), 0);
    assert_null(v);

    /* What is not an array of numbers of one dimension, or is cut short. */
    a = array_head(1, 25, 1); /* text[]: one element, "x" */
    put32(a, 1);
    g_byte_array_append(a, (const guint8 *)"x", 1);
    assert_int_equal(read_array(a, &v, "of another type"), -1);
    assert_int_equal(read_array(array_head(2, 701, 1), &v, "not a one-dimensional array"), -1);
    a = array_head(1, 701, 2);
    put_float8(a, 1.0);
    assert_int_equal(read_array(a, &v, "shorter than its length says"), -1);
    a = array_head(1, 701, 1);
    put32(a, 4); /* a float8 of 4 bytes */
    put32(a, 0);
    assert_int_equal(read_array(a, &v, "not a double"), -1);
    /* A count no value could hold: refused, not allocated. */
    assert_int_equal(read_array(array_head(1, 701, 0x7fffffff), &v, "shorter than its length says"),
                     -1);
    a = g_byte_array_new();
    put32(a, 1);
    assert_int_equal(read_array(a, &v, "not an array"), -1);
    PGresult *r = result_of(NULL, 0);
    GError *error = NULL;
    assert_int_equal(web_pg_float8_array(r, 0, 0, &v, &error), -1);
    assert_non_null(strstr(error->message, "values is NULL"));
    g_clear_error(&error);
    assert_true(isnan(web_pg_float8(r, 0, 0)));
    PQclear(r);
}

static void test_binary_scalars_read(void **state)
{
    (void)state;
    GByteArray *a = g_byte_array_new();
    put64(a, (guint64)G_GINT64_CONSTANT(-5));
    PGresult *r = result_of((const char *)a->data, (int)a->len);
    assert_int_equal(web_pg_int8(r, 0, 0), -5);
    /* 2000-01-01 plus a second, in µs since 1970. */
    PQclear(r);
    g_byte_array_set_size(a, 0);
    put64(a, 1000000);
    r = result_of((const char *)a->data, (int)a->len);
    assert_int_equal(web_pg_timestamptz_us(r, 0, 0), G_GINT64_CONSTANT(946684801000000));
    PQclear(r);
    r = result_of("\1", 1);
    assert_true(web_pg_bool(r, 0, 0));
    PQclear(r);
    r = result_of("\0", 1);
    assert_false(web_pg_bool(r, 0, 0));
    PQclear(r);
    g_byte_array_unref(a);
}

TEST_MAIN(cmocka_unit_test(test_doubles_as_json_glib_writes_them),
          cmocka_unit_test(test_arrays_nulls_and_strings),
          cmocka_unit_test(test_binary_arrays_read), cmocka_unit_test(test_binary_scalars_read))
