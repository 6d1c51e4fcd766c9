/* vigild's spool on its own: batches written, read back after a restart,
 * damaged stretches kept aside and the batches after them replayed, the bound kept
 * by dropping the oldest segments, one vigild per folder, and sequence
 * numbers that never repeat. Batches here are raw messages (a header with a
 * CRC and an opaque payload): the spool reads only headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "vigil/wire.h"
#include "spool.h"
#include "test_support.h"
#include "test_main.h"

#define MiB (1024u * 1024u)

static void store_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void store_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A BATCH message as the wire header describes it: `payload` bytes of a
 * pattern that depends on the sequence. */
static GBytes *raw_batch(uint64_t sequence, uint32_t payload)
{
    size_t length = VIGIL_WIRE_HEADER_BYTES + payload;
    uint8_t *m = g_malloc0(length);
    store_u32(m, VIGIL_WIRE_MAGIC);
    m[4] = VIGIL_WIRE_VERSION;
    m[6] = VIGIL_WIRE_BATCH;
    store_u64(m + 8, 42);
    store_u64(m + 16, sequence);
    store_u32(m + 24, 1);
    store_u32(m + 28, payload);
    for (uint32_t i = 0; i < payload; i++)
        m[VIGIL_WIRE_HEADER_BYTES + i] = (uint8_t)(sequence * 31 + i);
    store_u32(m + VIGIL_WIRE_CRC_OFFSET, vigil_wire_checksum(m, length));
    return g_bytes_new_take(m, length);
}

static char *spool_dir(void **state)
{
    return g_build_filename(*state, "spool", NULL);
}

/* What the spool set aside beside the segment at `path` (PATH.damaged),
 * which must be there; its length in *length unless NULL. g_free it. */
static gchar *set_aside(const char *path, gsize *length)
{
    char *aside = g_strconcat(path, ".damaged", NULL);
    gchar *kept = NULL;
    if (!g_file_get_contents(aside, &kept, length, NULL))
        fail_msg("nothing set aside as %s", aside);
    g_free(aside);
    return kept;
}

/* spool_dir, made as vigild makes it (0700), before a test puts files in it. */
static char *made_spool_dir(void **state)
{
    char *dir = spool_dir(state);
    assert_int_equal(g_mkdir_with_parents(dir, 0700), 0);
    return dir;
}

static char *segment_path(const char *dir, uint64_t first)
{
    char name[64];
    snprintf(name, sizeof name, "%020" G_GUINT64_FORMAT ".spool", first);
    return g_build_filename(dir, name, NULL);
}

static void assert_sequences(const struct vigild_spool *spool, const uint64_t *want, guint n)
{
    GArray *have = vigild_spool_sequences(spool);
    assert_int_equal(have->len, n);
    for (guint i = 0; i < n; i++)
        assert_int_equal(g_array_index(have, uint64_t, i), want[i]);
    g_array_free(have, TRUE);
}

static void assert_reads_back(struct vigild_spool *spool, uint64_t sequence, uint32_t payload)
{
    GBytes *want = raw_batch(sequence, payload);
    GError *error = NULL;
    GBytes *have = vigild_spool_read(spool, sequence, &error);
    assert_null(error);
    assert_non_null(have);
    assert_true(g_bytes_equal(have, want));
    g_bytes_unref(have);
    g_bytes_unref(want);
}

static void append(struct vigild_spool *spool, uint64_t sequence, uint32_t payload, GArray *dropped)
{
    GBytes *b = raw_batch(sequence, payload);
    GError *error = NULL;
    assert_true(vigild_spool_append(spool, sequence, b, dropped, &error));
    assert_null(error);
    g_bytes_unref(b);
}

/* The payload of the batches of open_with_batches. */
#define PAYLOAD 1000u

/* A spool opened in `dir` with room for `max_bytes`, batches 1 to `n` of
 * PAYLOAD bytes appended to it; the sequences they dropped are appended
 * to `dropped`. */
static struct vigild_spool *open_with_batches(const char *dir, uint64_t max_bytes, uint64_t n,
                                              GArray *dropped)
{
    struct vigild_spool *spool = vigild_spool_open(dir, max_bytes, NULL);
    assert_non_null(spool);
    for (uint64_t s = 1; s <= n; s++)
        append(spool, s, PAYLOAD, dropped);
    return spool;
}

/* Three batches of different sizes in one segment, closed. */
static char *three_batches(const char *dir, const uint32_t payload[3])
{
    struct vigild_spool *spool = vigild_spool_open(dir, 64 * MiB, NULL);
    assert_non_null(spool);
    GArray *dropped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    for (uint64_t s = 1; s <= 3; s++)
        append(spool, s, payload[s - 1], dropped);
    assert_int_equal(dropped->len, 0);
    g_array_free(dropped, TRUE);
    vigild_spool_close(spool);
    return segment_path(dir, 1);
}

static void test_round_trip(void **state)
{
    char *dir = spool_dir(state);
    GError *error = NULL;
    struct vigild_spool *spool = vigild_spool_open(dir, 64 * MiB, &error);
    assert_null(error);
    GArray *dropped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    for (uint64_t s = 1; s <= 3; s++)
        append(spool, s, 100 + (uint32_t)s, dropped);
    for (uint64_t s = 1; s <= 3; s++)
        assert_reads_back(spool, s, 100 + (uint32_t)s);
    vigild_spool_remove(spool, 2);
    assert_false(vigild_spool_has(spool, 2));
    vigild_spool_close(spool);

    /* A new vigild finds the segment as it was: acknowledgements are not
     * written to disk, so batch 2 is replayed too, which vigil-txd ignores. */
    spool = vigild_spool_open(dir, 64 * MiB, &error);
    assert_null(error);
    assert_sequences(spool, (const uint64_t[]){1, 2, 3}, 3);
    for (uint64_t s = 1; s <= 3; s++)
        assert_reads_back(spool, s, 100 + (uint32_t)s);
    struct vigild_spool_stats stats;
    vigild_spool_stats(spool, &stats);
    assert_int_equal(stats.batches, 3);
    assert_int_equal(stats.corrupt, 0);
    assert_int_equal(stats.bytes, 3 * VIGIL_WIRE_HEADER_BYTES + 101 + 102 + 103);
    /* The last batch of a segment gone, the file goes. */
    vigild_spool_remove(spool, 1);
    vigild_spool_remove(spool, 3);
    assert_int_equal(test_count_files(dir, "", ".spool"), 1);
    vigild_spool_remove(spool, 2);
    assert_int_equal(test_count_files(dir, "", ".spool"), 0);
    vigild_spool_stats(spool, &stats);
    assert_int_equal(stats.bytes, 0);
    vigild_spool_close(spool);
    g_array_free(dropped, TRUE);
    g_free(dir);
}

static void test_truncated_tail(void **state)
{
    char *dir = spool_dir(state);
    const uint32_t payload[3] = {50, 60, 70};
    char *path = three_batches(dir, payload);
    size_t first_two = 2 * VIGIL_WIRE_HEADER_BYTES + 50 + 60;
    size_t third = VIGIL_WIRE_HEADER_BYTES + 70;
    assert_int_equal(truncate(path, (off_t)(first_two + third - 9)), 0);

    struct vigild_spool *spool = vigild_spool_open(dir, 64 * MiB, NULL);
    assert_non_null(spool);
    assert_sequences(spool, (const uint64_t[]){1, 2}, 2);
    assert_reads_back(spool, 2, 60);
    struct vigild_spool_stats stats;
    vigild_spool_stats(spool, &stats);
    assert_int_equal(stats.corrupt, 1);
    assert_int_equal(stats.corrupt_bytes, third - 9);
    vigild_spool_close(spool);

    /* The segment now ends at its last good batch; the cut-off part is
     * beside it, byte for byte. */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, first_two);
    gsize kept_length;
    gchar *kept = set_aside(path, &kept_length);
    GBytes *b3 = raw_batch(3, 70);
    assert_int_equal(kept_length, third - 9);
    assert_memory_equal(kept, g_bytes_get_data(b3, NULL), kept_length);

    /* Opened again, nothing more is found wrong. */
    spool = vigild_spool_open(dir, 64 * MiB, NULL);
    vigild_spool_stats(spool, &stats);
    assert_int_equal(stats.corrupt, 0);
    assert_int_equal(stats.batches, 2);
    vigild_spool_close(spool);
    g_bytes_unref(b3);
    g_free(kept);
    g_free(path);
    g_free(dir);
}

static void flip_byte(const char *path, size_t offset)
{
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)offset, SEEK_SET), 0);
    int c = fgetc(f);
    assert_int_equal(fseek(f, (long)offset, SEEK_SET), 0);
    assert_int_not_equal(fputc(c ^ 0x10, f), EOF);
    assert_int_equal(fclose(f), 0);
}

/* A bit flipped in one batch's payload: that batch is kept aside, the
 * ones on both sides of it are replayed. */
static void test_flipped_payload_byte(void **state)
{
    char *dir = spool_dir(state);
    const uint32_t payload[3] = {50, 60, 70};
    char *path = three_batches(dir, payload);
    size_t second = VIGIL_WIRE_HEADER_BYTES + 50;
    flip_byte(path, second + VIGIL_WIRE_HEADER_BYTES + 7);

    struct vigild_spool *spool = vigild_spool_open(dir, 64 * MiB, NULL);
    assert_sequences(spool, (const uint64_t[]){1, 3}, 2);
    assert_reads_back(spool, 1, 50);
    assert_reads_back(spool, 3, 70); /* its offset moved: the file was rewritten */
    struct vigild_spool_stats stats;
    vigild_spool_stats(spool, &stats);
    assert_int_equal(stats.corrupt, 1);
    assert_int_equal(stats.corrupt_bytes, VIGIL_WIRE_HEADER_BYTES + 60);
    vigild_spool_close(spool);
    gsize kept_length;
    gchar *kept = set_aside(path, &kept_length);
    assert_int_equal(kept_length, VIGIL_WIRE_HEADER_BYTES + 60);
    g_free(kept);
    g_free(path);
    g_free(dir);
}

/* A flipped length: the batch cannot be stepped over by its own length,
 * so the walk looks for the next header that checks, and replays what
 * follows. */
static void test_flipped_length(void **state)
{
    char *dir = spool_dir(state);
    const uint32_t payload[3] = {50, 60, 70};
    char *path = three_batches(dir, payload);
    size_t second = VIGIL_WIRE_HEADER_BYTES + 50;
    flip_byte(path, second + 28);

    struct vigild_spool *spool = vigild_spool_open(dir, 64 * MiB, NULL);
    assert_sequences(spool, (const uint64_t[]){1, 3}, 2);
    assert_reads_back(spool, 3, 70);
    struct vigild_spool_stats stats;
    vigild_spool_stats(spool, &stats);
    assert_int_equal(stats.corrupt, 1);
    assert_int_equal(stats.corrupt_bytes, VIGIL_WIRE_HEADER_BYTES + 60);
    vigild_spool_close(spool);
    g_free(path);
    g_free(dir);
}

/* A file with nothing good in it goes; what it held is kept aside. */
static void test_all_damaged(void **state)
{
    char *dir = made_spool_dir(state);
    char *path = segment_path(dir, 7);
    assert_true(g_file_set_contents(path, "not a batch at all", -1, NULL));
    struct vigild_spool *spool = vigild_spool_open(dir, 64 * MiB, NULL);
    struct vigild_spool_stats stats;
    vigild_spool_stats(spool, &stats);
    assert_int_equal(stats.batches, 0);
    assert_int_equal(stats.corrupt, 1);
    assert_int_equal(stats.corrupt_bytes, strlen("not a batch at all"));
    vigild_spool_close(spool);
    assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
    g_free(set_aside(path, NULL));
    g_free(path);
    g_free(dir);
}

/* The bound: ten batches' room, fifteen batches; the five oldest go, and
 * the spool says which. A batch bigger than the whole bound goes itself. */
static void test_bound(void **state)
{
    char *dir = spool_dir(state);
    const uint64_t size = VIGIL_WIRE_HEADER_BYTES + PAYLOAD;
    GArray *dropped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    struct vigild_spool *spool = open_with_batches(dir, 10 * size, 15, dropped);
    assert_int_equal(dropped->len, 5);
    for (guint i = 0; i < 5; i++)
        assert_int_equal(g_array_index(dropped, uint64_t, i), i + 1);
    assert_sequences(spool, (const uint64_t[]){6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 10);
    struct vigild_spool_stats stats;
    vigild_spool_stats(spool, &stats);
    assert_int_equal(stats.dropped_batches, 5);
    assert_int_equal(stats.dropped_bytes, 5 * size);
    assert_int_equal(stats.bytes, 10 * size);
    assert_int_equal(stats.batches, 10);

    g_array_set_size(dropped, 0);
    append(spool, 16, 11 * PAYLOAD, dropped);
    assert_int_equal(dropped->len, 1);
    assert_int_equal(g_array_index(dropped, uint64_t, 0), 16);
    assert_false(vigild_spool_has(spool, 16));
    vigild_spool_stats(spool, &stats);
    assert_int_equal(stats.dropped_batches, 6);
    assert_int_equal(stats.batches, 10);
    vigild_spool_close(spool);

    /* What was dropped is gone from the disk too. */
    spool = vigild_spool_open(dir, 10 * size, NULL);
    assert_sequences(spool, (const uint64_t[]){6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 10);
    vigild_spool_close(spool);
    g_array_free(dropped, TRUE);
    g_free(dir);
}

/* 100 bytes of damage in the active segment, over the start of one batch
 * (its header and the first of its payload): that batch is lost, and only
 * that one; the walk finds the next header and replays every batch after
 * it. The damage is kept aside and said where it is, in bytes. */
static void test_damage_in_the_middle_loses_one_batch(void **state)
{
    char *dir = spool_dir(state);
    GArray *dropped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    struct vigild_spool *spool = open_with_batches(dir, 64 * MiB, 20, dropped);
    g_array_free(dropped, TRUE);
    const uint64_t size = VIGIL_WIRE_HEADER_BYTES + PAYLOAD;
    vigild_spool_close(spool);
    char *path = segment_path(dir, 1);
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    assert_int_equal(fseek(f, (long)(7 * size), SEEK_SET), 0);
    for (int i = 0; i < 100; i++)
        assert_int_not_equal(fputc(0xAA, f), EOF);
    assert_int_equal(fclose(f), 0);

    spool = vigild_spool_open(dir, 64 * MiB, NULL);
    GArray *have = vigild_spool_sequences(spool);
    guint replayed = have->len;
    g_array_free(have, TRUE);
    if (replayed != 19)
        fail_msg("%u of 20 batches replayed after 100 bytes of damage to batch 8; 19 expected",
                 replayed);
    for (uint64_t s = 1; s <= 20; s++)
        if (s != 8)
            assert_reads_back(spool, s, PAYLOAD);
    struct vigild_spool_stats stats;
    vigild_spool_stats(spool, &stats);
    assert_int_equal(stats.corrupt, 1);
    assert_int_equal(stats.corrupt_bytes, size);
    vigild_spool_close(spool);
    g_free(path);
    g_free(dir);
}

/* A batch queued again with an old sequence (vigil spool resend) whose
 * number names a segment still there: it goes into a segment of another
 * name. The old segment still holds its first copy (acknowledgements are
 * not written to disk), the same bytes: a new vigild keeps that one. */
static void test_an_old_sequence_whose_segment_is_there(void **state)
{
    char *dir = spool_dir(state);
    struct vigild_spool *spool = vigild_spool_open(dir, 64 * MiB, NULL);
    GArray *dropped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    append(spool, 5, 100, dropped);
    append(spool, 6, 100, dropped);
    vigild_spool_close(spool);
    spool = vigild_spool_open(dir, 64 * MiB, NULL);
    vigild_spool_remove(spool, 5); /* refused: 00…05.spool stays, for 6 */
    append(spool, 5, 100, dropped);
    assert_reads_back(spool, 5, 100);
    assert_int_equal(test_count_files(dir, "", ".spool"), 2);
    vigild_spool_close(spool);
    spool = vigild_spool_open(dir, 64 * MiB, NULL);
    assert_sequences(spool, (const uint64_t[]){5, 6}, 2);
    assert_reads_back(spool, 5, 100);
    assert_reads_back(spool, 6, 100);
    vigild_spool_close(spool);
    g_array_free(dropped, TRUE);
    g_free(dir);
}

static void test_one_vigild_per_folder(void **state)
{
    char *dir = spool_dir(state);
    struct vigild_spool *first = vigild_spool_open(dir, 64 * MiB, NULL);
    assert_non_null(first);
    GError *error = NULL;
    assert_null(vigild_spool_open(dir, 64 * MiB, &error));
    assert_non_null(error);
    test_assert_contains(error->message, "used by another vigild");
    test_assert_contains(error->message, dir);
    g_error_free(error);
    vigild_spool_close(first);
    struct vigild_spool *second = vigild_spool_open(dir, 64 * MiB, NULL);
    assert_non_null(second);
    vigild_spool_close(second);
    g_free(dir);
}

static void test_sequences_never_repeat(void **state)
{
    char *dir = made_spool_dir(state);
    struct vigild_sequence s;
    /* A folder without a sequence file starts at the realtime clock in µs. */
    uint64_t before_us = (uint64_t)g_get_real_time();
    assert_true(vigild_sequence_open(&s, dir, 1, NULL));
    uint64_t first = vigild_sequence_take(&s);
    assert_true(first >= before_us && first <= (uint64_t)g_get_real_time());
    assert_int_equal(vigild_sequence_take(&s), first + 1);
    vigild_sequence_close(&s);
    assert_true(vigild_sequence_open(&s, dir, 1, NULL));
    assert_int_equal(vigild_sequence_take(&s), first + 2);

    /* Killed without closing, after more numbers than one reservation:
     * the next vigild starts above all of them. */
    uint64_t last = 0;
    for (int i = 0; i < 5000; i++)
        last = vigild_sequence_take(&s);
    g_free(s.path);
    assert_true(vigild_sequence_open(&s, dir, 1, NULL));
    uint64_t next = vigild_sequence_take(&s);
    assert_true(next > last);
    vigild_sequence_close(&s);

    /* The floor (above what the spool holds) wins over the file. */
    assert_true(vigild_sequence_open(&s, dir, next + 100000, NULL));
    assert_int_equal(vigild_sequence_take(&s), next + 100000);
    vigild_sequence_close(&s);
    g_free(dir);
}

/* The spool folder emptied (a new disk, an admin's rm -r): the numbers of
 * the next start are still above every one used before, so vigil-txd
 * cannot take its batches for ones it has. What that rests on: a node uses
 * fewer numbers than µs go by (one or a few a cycle); here 5,000 go in a
 * few ms, so the test waits until the clock has passed them, as it would
 * have long before in a daemon's life. */
static void test_sequences_above_all_used_after_the_folder_is_lost(void **state)
{
    char *dir = made_spool_dir(state);
    struct vigild_sequence s;
    assert_true(vigild_sequence_open(&s, dir, 1, NULL));
    uint64_t last = 0;
    for (int i = 0; i < 5000; i++)
        last = vigild_sequence_take(&s);
    vigild_sequence_close(&s);
    while ((uint64_t)g_get_real_time() <= last)
        ; /* a condition of the clock itself, passed within 5 ms */
    char *path = g_build_filename(dir, "sequence", NULL);
    assert_int_equal(unlink(path), 0);
    assert_true(vigild_sequence_open(&s, dir, 1, NULL));
    assert_true(vigild_sequence_take(&s) > last);
    vigild_sequence_close(&s);
    g_free(path);
    g_free(dir);
}

static void test_sequence_file_damaged(void **state)
{
    char *dir = made_spool_dir(state);
    char *path = g_build_filename(dir, "sequence", NULL);
    assert_true(g_file_set_contents(path, "12x\n", -1, NULL));
    struct vigild_sequence s;
    GError *error = NULL;
    assert_false(vigild_sequence_open(&s, dir, 1, &error));
    assert_non_null(error);
    test_assert_contains(error->message, path);
    test_assert_contains(error->message, "not a sequence number");
    g_error_free(error);
    g_free(path);
    g_free(dir);
}

static void assert_mode(const char *path, unsigned mode)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    if ((st.st_mode & 0777) != mode)
        fail_msg("%s has mode %04o, not %04o", path, st.st_mode & 0777, mode);
}

/* The spool holds every forwarded activity's file path: a new folder is
 * its owner's alone (0700), and so is every file in it (0600). */
static void test_spool_files_are_private(void **state)
{
    char *dir = g_build_filename(*state, "new", "spool", NULL);
    struct vigild_spool *spool = vigild_spool_open(dir, 64 * MiB, NULL);
    assert_non_null(spool);
    GArray *dropped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    append(spool, 1, 100, dropped);
    g_array_free(dropped, TRUE);
    struct vigild_sequence sequence;
    assert_true(vigild_sequence_open(&sequence, dir, 1, NULL));
    vigild_sequence_take(&sequence);
    vigild_sequence_close(&sequence);
    vigild_spool_sync(spool);
    char *parent = g_path_get_dirname(dir);
    assert_mode(parent, 0700);
    g_free(parent);
    assert_mode(dir, 0700);
    GDir *d = g_dir_open(dir, 0, NULL);
    assert_non_null(d);
    guint files = 0;
    for (const char *name; (name = g_dir_read_name(d)) != NULL; files++) {
        char *path = g_build_filename(dir, name, NULL);
        assert_mode(path, 0600);
        g_free(path);
    }
    g_dir_close(d);
    assert_true(files >= 2); /* a segment and the sequence file at least */
    vigild_spool_close(spool);
    g_free(dir);
}

#define IN_DIR(f) cmocka_unit_test_setup_teardown(f, test_make_dir, test_remove_dir)

TEST_MAIN(IN_DIR(test_round_trip), IN_DIR(test_spool_files_are_private),
          IN_DIR(test_truncated_tail), IN_DIR(test_flipped_payload_byte),
          IN_DIR(test_flipped_length), IN_DIR(test_all_damaged),
          IN_DIR(test_damage_in_the_middle_loses_one_batch), IN_DIR(test_bound),
          IN_DIR(test_one_vigild_per_folder), IN_DIR(test_an_old_sequence_whose_segment_is_there),
          IN_DIR(test_sequences_never_repeat),
          IN_DIR(test_sequences_above_all_used_after_the_folder_is_lost),
          IN_DIR(test_sequence_file_damaged))
