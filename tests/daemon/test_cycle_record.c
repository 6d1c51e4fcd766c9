/* The cycle recording's format (daemon/cycle_record.c, cycle_record_read.c):
 * what is written reads back field by field, the recorded configuration
 * leaves out [warehouse] and [uplink], record_max_bytes holds with a LIMIT
 * record last, and every kind of damage is an error naming its offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include <cmocka.h>

#include "cycle_record.h"
#include "test_support.h"
#include "vigil/schema.h"
#include "test_main.h"

static char *scratch_path(void **state, const char *name)
{
    return g_build_filename((const char *)*state, name, NULL);
}

static const struct vigil_activity activities[] = {
    {.record_type = VIGIL_RECORD_ACTIVITY,
     .layer = 1,
     .op = 3,
     .file_id = 7,
     .seq = 100,
     .start_ns = 5000000000,
     .end_ns = 5000001234,
     .offset_bytes = 4096,
     .bytes_asked = 512,
     .result = 512,
     .thread_id = 4242},
    /* Earlier than the one before, a parent, no offset, a failure. */
    {.record_type = VIGIL_RECORD_ACTIVITY,
     .layer = 2,
     .op = 1,
     .file_id = 0,
     .seq = 101,
     .parent_start_ns = 4999999000,
     .start_ns = 4999999999,
     .end_ns = 4999999999,
     .offset_bytes = VIGIL_OFFSET_UNKNOWN,
     .bytes_asked = UINT64_MAX,
     .result = -1,
     .errno_value = 28,
     .thread_id = 1,
     .flags = VIGIL_ACTIVITY_COLLECTIVE,
     .comm_size = 64},
};

static void assert_same_activity(const struct vigil_activity *a, const struct vigil_activity *b)
{
    assert_int_equal(a->layer, b->layer);
    assert_int_equal(a->op, b->op);
    assert_int_equal(a->file_id, b->file_id);
    assert_int_equal(a->seq, b->seq);
    assert_int_equal(a->parent_start_ns, b->parent_start_ns);
    assert_int_equal(a->start_ns, b->start_ns);
    assert_int_equal(a->end_ns, b->end_ns);
    assert_int_equal(a->offset_bytes, b->offset_bytes);
    assert_int_equal(a->bytes_asked, b->bytes_asked);
    assert_int_equal(a->result, b->result);
    assert_int_equal(a->errno_value, b->errno_value);
    assert_int_equal(a->thread_id, b->thread_id);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->comm_size, b->comm_size);
}

static void next_of_type(struct vigild_record_reader *r, struct vigild_record_payload *p,
                         unsigned type)
{
    GError *error = NULL;
    if (!vigild_record_next(r, p, &error))
        fail_msg("no %s record: %s", vigild_record_type_name(type),
                 error != NULL ? error->message : "the end");
    assert_string_equal(vigild_record_type_name(p->type), vigild_record_type_name(type));
}

static void test_written_records_read_back(void **state)
{
    char *path = scratch_path(state, "rec.bin");
    GError *error = NULL;
    struct vigild_cycle_record *w = vigild_cycle_record_open(path, 1 << 20, 777, "node-a", &error);
    assert_non_null(w);
    vigil_config *config = vigil_config_new();
    assert_true(vigil_schema_declare(config, NULL));
    vigild_cycle_record_config(w, config);
    vigild_cycle_record_process(w, 9, FALSE);
    for (size_t i = 0; i < G_N_ELEMENTS(activities); i++)
        vigild_cycle_record_activity(w, 9, &activities[i]);
    vigild_cycle_record_activity(w, 10, &activities[0]); /* another process: a new batch */
    vigild_cycle_record_process(w, 9, TRUE);
    assert_false(vigild_cycle_record_limited(w));
    vigild_cycle_record_close(w);
    vigil_config_free(config);

    struct vigild_record_reader r;
    assert_true(vigild_record_reader_open(&r, path, &error));
    struct vigild_record_payload p;
    next_of_type(&r, &p, VIGILD_RECORD_START);
    assert_int_equal(p.version, VIGILD_RECORD_VERSION);
    assert_int_equal(vigild_payload_u64(&p, "start"), 777);
    g_free(vigild_payload_string(&p, "version"));
    char *node = vigild_payload_string(&p, "node");
    assert_string_equal(node, "node-a");
    g_free(node);
    /* Wall-clock time less monotonic time: the epoch is long before any
     * boot, so it is positive. */
    assert_true(vigild_payload_i64(&p, "wall-clock offset") > 0);
    assert_true(vigild_payload_done(&p, NULL));
    next_of_type(&r, &p, VIGILD_RECORD_CONFIG);
    char *text = vigild_payload_string(&p, "config");
    test_assert_contains(text, "[daemon]");
    test_assert_contains(text, "cycle_ms = 1000");
    test_assert_contains(text, "[capture]");
    assert_null(strstr(text, "[warehouse]")); /* its conninfo may hold a password */
    assert_null(strstr(text, "[uplink]"));
    assert_null(strstr(text, "\n#"));
    g_free(text);
    next_of_type(&r, &p, VIGILD_RECORD_PROCESS_ADD);
    assert_int_equal(vigild_payload_u64(&p, "id"), 9);
    next_of_type(&r, &p, VIGILD_RECORD_ACTIVITIES);
    GArray *got = g_array_new(FALSE, FALSE, sizeof(struct vigil_activity));
    assert_int_equal(vigild_payload_activities(&p, got), 9);
    assert_true(vigild_payload_done(&p, NULL));
    assert_int_equal(got->len, 2);
    for (guint i = 0; i < got->len; i++)
        assert_same_activity(&g_array_index(got, struct vigil_activity, i), &activities[i]);
    g_array_set_size(got, 0);
    next_of_type(&r, &p, VIGILD_RECORD_ACTIVITIES);
    assert_int_equal(vigild_payload_activities(&p, got), 10);
    assert_int_equal(got->len, 1);
    assert_same_activity(&g_array_index(got, struct vigil_activity, 0), &activities[0]);
    next_of_type(&r, &p, VIGILD_RECORD_PROCESS_END);
    next_of_type(&r, &p, VIGILD_RECORD_END);
    assert_false(vigild_record_next(&r, &p, &error));
    assert_null(error);
    g_array_free(got, TRUE);
    vigild_record_reader_clear(&r);
    g_free(path);
}

static void test_max_bytes_holds_with_a_limit_record_last(void **state)
{
    char *path = scratch_path(state, "rec.bin");
    struct vigild_cycle_record *w = vigild_cycle_record_open(path, 300, 0, "node-a", NULL);
    assert_non_null(w);
    for (uint64_t id = 1; id <= 100; id++)
        vigild_cycle_record_process(w, id, FALSE);
    assert_true(vigild_cycle_record_limited(w));
    vigild_cycle_record_close(w);
    char *data = NULL;
    gsize size;
    assert_true(g_file_get_contents(path, &data, &size, NULL));
    assert_true(size <= 300);
    struct vigild_record_reader r;
    assert_true(vigild_record_reader_open(&r, path, NULL));
    struct vigild_record_payload p;
    unsigned last = 0, count = 0;
    GError *error = NULL;
    while (vigild_record_next(&r, &p, &error))
        last = p.type, count++;
    if (error != NULL)
        fail_msg("%s", error->message);
    assert_int_equal(last, VIGILD_RECORD_LIMIT);
    assert_true(count > 10); /* it was not stopped early either */
    vigild_record_reader_clear(&r);
    g_free(data);
    g_free(path);
}

/* A file of the header and one record of `type` with `payload`. */
static void write_one(const char *path, guint8 type, const guint8 *payload, uint32_t length,
                      gboolean good_crc)
{
    GByteArray *b = g_byte_array_new();
    guint8 header[16] = "VIGILREC";
    header[8] = VIGILD_RECORD_VERSION;
    g_byte_array_append(b, header, 16);
    guint8 head[5] = {type, (guint8)length, (guint8)(length >> 8), (guint8)(length >> 16),
                      (guint8)(length >> 24)};
    g_byte_array_append(b, head, 5);
    g_byte_array_append(b, payload, length);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), head, 5);
    crc = crc32(crc, payload, length) ^ (good_crc ? 0 : 1);
    guint8 tail[4] = {(guint8)crc, (guint8)(crc >> 8), (guint8)(crc >> 16), (guint8)(crc >> 24)};
    g_byte_array_append(b, tail, 4);
    assert_true(g_file_set_contents(path, (const char *)b->data, b->len, NULL));
    g_byte_array_free(b, TRUE);
}

/* The error reading `path` to its end (or decoding its one record). */
static char *read_error(const char *path)
{
    struct vigild_record_reader r;
    GError *error = NULL;
    if (vigild_record_reader_open(&r, path, &error)) {
        struct vigild_record_payload p;
        while (error == NULL && vigild_record_next(&r, &p, &error)) {
            vigild_payload_u64(&p, "process id");
            vigild_payload_done(&p, &error);
        }
        vigild_record_reader_clear(&r);
    }
    assert_non_null(error);
    char *message = g_strdup(error->message);
    g_error_free(error);
    return message;
}

static void test_damage_is_named_with_its_offset(void **state)
{
    char *path = scratch_path(state, "bad.bin");
    const guint8 id[] = {0x05};
    const guint8 cut_varint[] = {0x85}; /* a varint whose continuation bit runs off the end */
    const guint8 extra[] = {0x05, 0x00};

    write_one(path, VIGILD_RECORD_PROCESS_ADD, id, 1, FALSE);
    char *m = read_error(path);
    test_assert_contains(m, "corrupt at offset 16: the PROCESS_ADD record's checksum");
    g_free(m);

    write_one(path, 99, id, 1, TRUE);
    m = read_error(path);
    test_assert_contains(m, "corrupt at offset 16: unknown record type 99");
    g_free(m);

    write_one(path, VIGILD_RECORD_PROCESS_ADD, cut_varint, 1, TRUE);
    m = read_error(path);
    test_assert_contains(m, "corrupt at offset 16: the PROCESS_ADD record's process id is cut");
    g_free(m);

    write_one(path, VIGILD_RECORD_PROCESS_ADD, extra, 2, TRUE);
    m = read_error(path);
    test_assert_contains(m, "corrupt at offset 16: the PROCESS_ADD record has 1 bytes after");
    g_free(m);

    /* The file ends inside the record: its CRC is missing. */
    write_one(path, VIGILD_RECORD_PROCESS_ADD, id, 1, TRUE);
    char *data = NULL;
    gsize size;
    assert_true(g_file_get_contents(path, &data, &size, NULL));
    assert_true(g_file_set_contents(path, data, (gssize)size - 2, NULL));
    m = read_error(path);
    test_assert_contains(m, "truncated at offset 16: its PROCESS_ADD record needs 10 bytes, 8 are");
    g_free(m);

    /* A length beyond any record. */
    data[17] = 0xff, data[18] = 0xff, data[19] = 0xff, data[20] = 0x7f;
    assert_true(g_file_set_contents(path, data, (gssize)size, NULL));
    m = read_error(path);
    test_assert_contains(m, "corrupt at offset 16: a PROCESS_ADD record of");
    g_free(m);

    /* Another version, and no header. */
    data[8] = VIGILD_RECORD_VERSION + 1;
    assert_true(g_file_set_contents(path, data, (gssize)size, NULL));
    m = read_error(path);
    test_assert_contains(m, "recording format version 3 at offset 8; this vigil reads versions 1 "
                            "to 2");
    g_free(m);
    data[8] = 0;
    assert_true(g_file_set_contents(path, data, (gssize)size, NULL));
    m = read_error(path);
    test_assert_contains(m, "recording format version 0 at offset 8");
    g_free(m);
    assert_true(g_file_set_contents(path, "VIGIL", -1, NULL));
    m = read_error(path);
    test_assert_contains(m, "not a vigild recording");
    g_free(m);
    g_free(data);
    g_free(path);
}

#define IN_DIR(f) cmocka_unit_test_setup_teardown(f, test_make_dir, test_remove_dir)

TEST_MAIN(IN_DIR(test_written_records_read_back),
          IN_DIR(test_max_bytes_holds_with_a_limit_record_last),
          IN_DIR(test_damage_is_named_with_its_offset))
