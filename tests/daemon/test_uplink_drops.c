/* What the uplink and the spool drop is counted per process, from the
 * dropped batch itself: its PROCESSES items say whose its ACTIVITIES are.
 * A batch the spool's bound deletes is read back and counted; one that
 * cannot be read is counted as a batch of unknown content. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "vigil/ontology.h"
#include "vigil/wire.h"
#include "spool.h"
#include "test_support.h"
#include "uplink_drops.h"
#include "test_main.h"

#define NODE_ID 42

static void add_message(vigil_wire_writer *batch, vigil_wire_writer *w)
{
    GBytes *m = vigil_wire_writer_finish(w);
    GError *error = NULL;
    if (!vigil_wire_add_message(batch, m, &error))
        fail_msg("%s", error->message);
    g_bytes_unref(m);
}

/* A batch of two processes (pids 100 and 200, started at 1000 and 2000
 * ns), with `first` and `second` activities. */
static GBytes *batch_of(uint64_t sequence, uint32_t first, uint32_t second)
{
    GError *error = NULL;
    vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, NODE_ID, sequence, 0);
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_NODE, NODE_ID, sequence, 0);
    struct vigil_wire_node node = {
        .cycle = 1, .cycle_start_ns = 1, .cycle_end_ns = 2, .cycle_ms = 1000, .hostname = "n1"};
    assert_true(vigil_wire_add_node(w, &node, &error));
    add_message(batch, w);
    w = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, NODE_ID, sequence, 0);
    char *argv[] = {NULL};
    for (int i = 1; i <= 2; i++) {
        struct vigil_wire_process p = {.process_id = (uint64_t)i,
                                       .pid = 100 * i,
                                       .rank = -1,
                                       .exit_code = -1,
                                       .start_ns = 1000 * (uint64_t)i,
                                       .run_key = "r",
                                       .job = "",
                                       .program = "p",
                                       .cwd = "/",
                                       .argv = argv};
        assert_true(vigil_wire_add_process(w, &p, &error));
    }
    add_message(batch, w);
    for (uint64_t id = 1; id <= 2; id++) {
        w = vigil_wire_writer_new(VIGIL_WIRE_ACTIVITIES, NODE_ID, sequence, id);
        for (uint32_t k = 0; k < (id == 1 ? first : second); k++) {
            struct vigil_activity a = {.record_type = VIGIL_RECORD_ACTIVITY,
                                       .layer = VIGIL_LAYER_POSIX,
                                       .op = VIGIL_OP_POSIX_WRITE,
                                       .file_id = VIGIL_FILE_NONE,
                                       .seq = k,
                                       .start_ns = 10,
                                       .end_ns = 20,
                                       .offset_bytes = VIGIL_OFFSET_UNKNOWN,
                                       .result = 1};
            assert_true(vigil_wire_add_activity(w, &a, &error));
        }
        add_message(batch, w);
    }
    return vigil_wire_writer_finish(batch);
}

static void assert_count(struct vigild_drops *d, int32_t pid, uint64_t start_ns,
                         uint64_t activities, uint64_t batches)
{
    struct vigild_drop_count c;
    assert_true(vigild_drops_of(d, pid, start_ns, &c));
    assert_int_equal(c.activities, activities);
    assert_int_equal(c.batches, batches);
}

static void test_a_batch_is_counted_per_process(void **state)
{
    (void)state;
    struct vigild_drops *d = vigild_drops_new();
    uint64_t generation = vigild_drops_generation(d);
    GBytes *b = batch_of(7, 3, 5);
    gsize length;
    const uint8_t *data = g_bytes_get_data(b, &length);
    vigild_drops_count_batch(d, data, length);
    vigild_drops_count_batch(d, data, length);
    assert_count(d, 100, 1000, 6, 2);
    assert_count(d, 200, 2000, 10, 2);
    struct vigild_drop_count none;
    assert_false(vigild_drops_of(d, 100, 2000, &none));
    /* Bytes that are not a batch: a batch, whose content is not known. */
    vigild_drops_count_batch(d, (const uint8_t *)"damaged", 7);
    struct vigild_drops_totals t;
    vigild_drops_totals(d, &t);
    assert_int_equal(t.activities, 16);
    assert_int_equal(t.batches, 3);
    assert_int_equal(t.unknown_batches, 1);
    assert_true(vigild_drops_generation(d) > generation);
    GArray *all = vigild_drops_list(d);
    assert_int_equal(all->len, 2);
    g_array_free(all, TRUE);
    g_bytes_unref(b);
    vigild_drops_free(d);
}

/* The spool's bound: the oldest batches go, counted from their bytes. */
static void test_the_spool_bound_is_counted(void **state)
{
    char *dir = g_build_filename(*state, "spool", NULL);
    GBytes *sample = batch_of(1, 40, 2);
    uint64_t size = g_bytes_get_size(sample);
    g_bytes_unref(sample);
    struct vigild_spool *spool = vigild_spool_open(dir, MAX(3 * size, 1u << 20), NULL);
    assert_non_null(spool);
    struct vigild_drops *d = vigild_drops_new();
    vigild_spool_set_drops(spool, d);
    GArray *dropped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    uint64_t sequence = 1;
    while (dropped->len == 0) {
        GBytes *b = batch_of(sequence, 40, 2);
        assert_true(vigild_spool_append(spool, sequence++, b, dropped, NULL));
        g_bytes_unref(b);
    }
    assert_count(d, 100, 1000, 40 * (uint64_t)dropped->len, dropped->len);
    assert_count(d, 200, 2000, 2 * (uint64_t)dropped->len, dropped->len);
    g_array_free(dropped, TRUE);
    vigild_spool_close(spool);
    vigild_drops_free(d);
    g_free(dir);
}

TEST_MAIN(cmocka_unit_test(test_a_batch_is_counted_per_process),
          cmocka_unit_test_setup_teardown(test_the_spool_bound_is_counted, test_make_dir,
                                          test_remove_dir))
