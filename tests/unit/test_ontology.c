/* Tests of the ontology's tables: ids, names, layers and round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "vigil/activity.h"
#include "vigil/health.h"
#include "vigil/ontology.h"
#include "test_main.h"

static void test_every_operation_round_trips(void **state)
{
    (void)state;
    unsigned count = 0;
    for (unsigned op = 0; op <= VIGIL_OP_MAX_ID + 5; op++) {
        if (!vigil_op_is_valid(op)) {
            assert_null(vigil_op_name(op));
            assert_int_equal(vigil_op_layer(op), 0);
            continue;
        }
        count++;
        unsigned layer = vigil_op_layer(op);
        assert_non_null(vigil_layer_name(layer));
        assert_int_equal(vigil_op_from_name(layer, vigil_op_name(op)), op);
        /* Ids are grouped by layer, so a stored id tells its layer. */
        assert_int_equal((op - 1) / 100 + 1, layer);
        enum vigil_op_class cls = vigil_op_class(op);
        assert_true(cls == VIGIL_OP_READS || cls == VIGIL_OP_WRITES || cls == VIGIL_OP_META);
    }
    assert_int_equal(count, 46 + 30 + 43);
}

static void test_known_ids_never_change(void **state)
{
    (void)state;
    /* These ids are in rings, on the wire and in warehouses: pinned. */
    assert_int_equal(VIGIL_OP_POSIX_WRITE, 6);
    assert_string_equal(vigil_op_name(6), "write");
    assert_int_equal(VIGIL_OP_STDIO_FWRITE, 106);
    assert_int_equal(VIGIL_OP_MPIIO_WRITE_AT_ALL, 219);
    assert_int_equal(vigil_op_from_name(VIGIL_LAYER_MPIIO, "write"), 216);
    assert_int_equal(vigil_op_from_name(VIGIL_LAYER_POSIX, "fwrite"), 0);
    assert_int_equal(vigil_op_class(VIGIL_OP_POSIX_PREAD), VIGIL_OP_READS);
    assert_int_equal(vigil_op_class(VIGIL_OP_POSIX_SEND), VIGIL_OP_WRITES);
    assert_int_equal(vigil_op_class(VIGIL_OP_POSIX_LSEEK), VIGIL_OP_META);
    assert_int_equal(VIGIL_OP_POSIX_AIO_WRITE, 46);
    assert_string_equal(vigil_op_name(45), "aio_read");
    assert_int_equal(VIGIL_OP_STDIO_GETDELIM, 130);
}

static void test_layers_attributes_and_health(void **state)
{
    (void)state;
    assert_string_equal(vigil_layer_name(VIGIL_LAYER_MPIIO), "mpiio");
    assert_int_equal(vigil_layer_from_name("stdio"), VIGIL_LAYER_STDIO);
    assert_int_equal(vigil_layer_from_name("nfs"), 0);
    assert_null(vigil_layer_name(0));
    assert_null(vigil_layer_name(4));

    for (unsigned a = 1; vigil_attribute_name(a) != NULL; a++)
        assert_int_equal(vigil_attribute_from_name(vigil_attribute_name(a)), a);
    assert_string_equal(vigil_attribute_unit(VIGIL_ATTR_BYTES_ASKED), "bytes");
    assert_int_equal(vigil_attribute_from_name("nonsense"), 0);

    for (unsigned h = 1; h <= VIGIL_HEALTH_COUNT; h++)
        assert_int_equal(vigil_health_from_name(vigil_health_name(h)), h);
    assert_true(vigil_health_is_abnormal(VIGIL_HEALTH_ABNORMAL_GOOD));
    assert_false(vigil_health_is_abnormal(VIGIL_HEALTH_BAD));
    assert_null(vigil_health_name(7));
    assert_string_equal(vigil_level_name(VIGIL_LEVEL_NODE), "node");
}

static void test_activity_check(void **state)
{
    (void)state;
    struct vigil_activity a = {
        .record_type = VIGIL_RECORD_ACTIVITY,
        .layer = VIGIL_LAYER_STDIO,
        .op = VIGIL_OP_STDIO_FREAD,
        .start_ns = 10,
        .end_ns = 20,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    struct vigil_error err;
    assert_true(vigil_activity_check(&a, &err));
    a.offset_bytes = -2;
    assert_false(vigil_activity_check(&a, &err));
    assert_non_null(strstr(err.message, "negative offset -2"));
    a.offset_bytes = 0;
    a.errno_value = -1;
    assert_false(vigil_activity_check(&a, &err));
    assert_non_null(strstr(err.message, "errno -1"));
    a.errno_value = 0;
    a.flags = 1u << 7;
    assert_false(vigil_activity_check(&a, &err));
    assert_non_null(strstr(err.message, "unknown flags"));
    a.flags = 0;
    a.parent_start_ns = 11;
    assert_false(vigil_activity_check(&a, &err));
    assert_non_null(strstr(err.message, "parent starts"));
}

TEST_MAIN(cmocka_unit_test(test_every_operation_round_trips),
          cmocka_unit_test(test_known_ids_never_change),
          cmocka_unit_test(test_layers_attributes_and_health),
          cmocka_unit_test(test_activity_check))
