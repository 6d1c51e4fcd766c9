/* 100 bytes of damage in the active spool segment lose one batch, not
 * everything written after it: a program writes 50,000 times while
 * vigil-txd is down, so every batch waits in vigild's spool (the writes
 * paced over about ten of vigild's cycles, so about ten batches); vigild stops,
 * 100 bytes at the start of a batch in the middle of the segment are
 * overwritten, vigil-txd starts and vigild is started again on the spool.
 * The warehouse then holds every write but the damaged batch's. An admin's
 * `vigil spool check` names the damaged range first, and `vigil spool
 * replay` of a set-aside copy of the segment sends its intact batches again,
 * which the warehouse already has: nothing is stored twice. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <json-glib/json-glib.h>

#include "vigil/activity.h"
#include "vigil/ontology.h"
#include "vigil/wire.h"
#include "test_daemon.h"
#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "writer.h"

#define WRITES          50000
#define DAMAGE_BYTES    100
#define PACE_US         40000 /* between chunks of 1,000 writes: 2 s in all */
#define DEADLINE_US     (120 * G_USEC_PER_SEC)
#define POLL_US         20000
#define OPERATION_WRITE VIGIL_OP_POSIX_WRITE

/* The newest segment of the spool: the one vigild was appending to. */
static char *active_segment(const char *spool)
{
    GDir *d = g_dir_open(spool, 0, NULL);
    assert_non_null(d);
    char *newest = NULL;
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL)
        if (g_str_has_suffix(name, ".spool") && (newest == NULL || strcmp(name, newest) > 0)) {
            g_free(newest);
            newest = g_strdup(name);
        }
    g_dir_close(d);
    assert_non_null(newest);
    char *path = g_build_filename(spool, newest, NULL);
    g_free(newest);
    return path;
}

/* The writes a batch carries. */
static guint64 writes_in(const uint8_t *data, size_t length)
{
    struct vigil_wire_message m;
    GError *error = NULL;
    if (!vigil_wire_decode(data, length, &m, &error))
        fail_msg("a spooled batch does not decode: %s", error->message);
    guint64 writes = 0;
    for (uint32_t i = 0; i < m.header.count; i++) {
        const struct vigil_wire_message *inner = &m.inner[i];
        if (inner->header.type != VIGIL_WIRE_ACTIVITIES)
            continue;
        for (uint32_t a = 0; a < inner->header.count; a++)
            writes += inner->activities[a].op == OPERATION_WRITE;
    }
    vigil_wire_message_clear(&m);
    return writes;
}

/* Overwrites DAMAGE_BYTES at the start of the batch with writes nearest
 * the middle of the segment; returns how many writes it carried. */
static guint64 damage_middle_batch(const char *path)
{
    gchar *contents;
    gsize size;
    assert_true(g_file_get_contents(path, &contents, &size, NULL));
    const uint8_t *data = (const uint8_t *)contents;
    size_t offset = 0, chosen = 0;
    guint64 chosen_writes = 0;
    guint batches = 0;
    while (offset < size) {
        struct vigil_wire_header h;
        size_t length = VIGIL_WIRE_HEADER_BYTES;
        if (size - offset >= VIGIL_WIRE_HEADER_BYTES)
            length += (uint32_t)data[offset + 28] | (uint32_t)data[offset + 29] << 8 |
                      (uint32_t)data[offset + 30] << 16 | (uint32_t)data[offset + 31] << 24;
        assert_true(length <= size - offset);
        assert_true(vigil_wire_peek_header(data + offset, length, &h, NULL));
        guint64 writes = writes_in(data + offset, length);
        if (writes > 0 && chosen_writes == 0 && offset >= size / 2) {
            chosen = offset;
            chosen_writes = writes;
        }
        offset += length;
        batches++;
    }
    assert_true(batches >= 3);
    assert_true(chosen_writes > 0);
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)chosen, SEEK_SET), 0);
    for (int i = 0; i < DAMAGE_BYTES; i++)
        assert_int_not_equal(fputc(0xAA, f), EOF);
    assert_int_equal(fclose(f), 0);
    print_message("damaged %d bytes at offset %zu of %s (%zu bytes, %u batches): a batch of "
                  "%" G_GUINT64_FORMAT " writes\n",
                  DAMAGE_BYTES, chosen, path, (size_t)size, batches, chosen_writes);
    g_free(contents);
    return chosen_writes;
}

static void test_damage_in_the_active_segment_loses_one_batch(void **state)
{
    struct test_txd_fixture *f = *state;
    char *config = writer_daemon_config(f, NULL, "");
    struct test_daemon d;
    test_daemon_start(&d, f->dir, WRITER_DAEMON_LINES, config);
    struct writer w;
    /* Spread over about ten cycles, so over about ten batches. */
    writer_start_paced(&w, &d, f->dir, WRITES, 0, PACE_US, NULL);
    writer_wait_for_drained(&d, w.pid, WRITES);
    writer_finish(&w);
    /* Its end and report go into a batch of their own, after the writes. */
    json_node_unref(test_daemon_status(&d, w.pid));
    writer_wait_for_drained(&d, w.pid, WRITES);
    g_free(test_daemon_stop(&d));

    char *spool = g_build_filename(f->dir, "spool", NULL);
    char *segment = active_segment(spool);
    guint64 damaged_writes = damage_middle_batch(segment);
    /* What an admin sees before anything is sent: the damage, by range. */
    struct test_run run = test_daemon_vigil(&d, (const char *[]){"spool", "check", spool, NULL});
    test_assert_out(&run, 1, "vigil spool check of a damaged spool", "  damaged: bytes ",
                    " 1 damaged ranges (", NULL);
    test_run_clear(&run);
    /* A copy set aside, as the spool sets aside what it cannot read. */
    char *aside = g_strconcat(segment, ".damaged", NULL), *contents = NULL;
    gsize size;
    assert_true(g_file_get_contents(segment, &contents, &size, NULL));
    assert_true(g_file_set_contents(aside, contents, (gssize)size, NULL));
    g_free(contents);

    test_txd_start(&f->txd, f->dir, f->conninfo, NULL);
    test_daemon_start(&d, f->dir, WRITER_DAEMON_LINES, config);
    writer_wait_for_all_sent(&d);
    guint64 stored = writer_writes_stored(f->conninfo, w.pid);
    print_message("%" G_GUINT64_FORMAT
                  " of %d writes stored; the damaged batch held %" G_GUINT64_FORMAT "\n",
                  stored, WRITES, damaged_writes);
    assert_int_equal(stored, WRITES - damaged_writes);
    writer_wait_for_report(f->conninfo, f->dir, w.pid);

    /* Its intact batches sent again: the warehouse has each already. */
    run = test_daemon_vigil(&d, (const char *[]){"spool", "replay", aside, NULL});
    test_assert_out(&run, 0, "vigil spool replay of a set-aside copy",
                    " batches queued to be sent again, ", " bytes of ", NULL);
    test_run_clear(&run);
    char *replayed = g_strconcat(aside, ".replayed", NULL);
    assert_true(g_file_test(replayed, G_FILE_TEST_EXISTS));
    assert_false(g_file_test(aside, G_FILE_TEST_EXISTS));
    writer_wait_for_all_sent(&d);
    assert_int_equal(writer_writes_stored(f->conninfo, w.pid), stored);
    g_free(replayed);
    g_free(aside);
    g_free(test_daemon_stop(&d));
    g_free(segment);
    g_free(spool);
    g_free(config);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_damage_in_the_active_segment_loses_one_batch))
