/* vigild's uplink against a ZeroMQ ROUTER in the test process standing in
 * for vigil-txd, on an ipc:// endpoint in a fresh folder: batches arrive
 * intact and leave memory and spool once acknowledged; without a peer they
 * are spooled and replayed by the next vigild; damaged spool files replay
 * their good batches; the bound drops the oldest; REFUSED batches are kept
 * aside and never sent again; the system state comes back down; sequences
 * never repeat; CURVE works and bad CURVE settings are refused by name.
 *
 * Every wait polls for a condition under a generous deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <zmq.h>

#include "vigil/health.h"
#include "vigil/schema.h"
#include "vigil/wire.h"
#include "spool.h"
#include "uplink.h"
#include "uplink_settings.h"
#include "test_support.h"
#include "test_main.h"

#define NODE_ID     42
#define NODE_HEX_ID "000000000000002a"
#define DEADLINE_US (60 * G_USEC_PER_SEC)
#define POLL_US     (2 * 1000)

struct fixture {
    char *dir;
    char *endpoint;
    char *spool;
    struct vigild_uplink_settings settings;
    void *context;
    void *router; /* NULL until a test binds it */
};

static int setup(void **state)
{
    struct fixture *f = g_new0(struct fixture, 1);
    if (!test_uplink_settings_in_new_dir(&f->settings, &f->dir, NODE_ID, 64u << 20)) {
        g_free(f);
        return -1;
    }
    f->endpoint = f->settings.endpoint;
    f->spool = f->settings.spool_dir;
    /* Sequences from 1, as a node's spool folder says once it has one (a
     * new folder starts at the clock: test_spool.c), so that the tests can
     * name them. */
    char *sequence_path = g_build_filename(f->spool, "sequence", NULL);
    gboolean made = g_mkdir_with_parents(f->spool, 0700) == 0 &&
                    g_file_set_contents(sequence_path, "1\n", -1, NULL);
    g_free(sequence_path);
    assert_true(made);
    f->context = zmq_ctx_new();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    if (f->router != NULL)
        zmq_close(f->router);
    zmq_ctx_term(f->context);
    g_free(f->endpoint);
    g_free(f->spool);
    void *dir = f->dir;
    g_free(f);
    return test_remove_dir(&dir);
}

/* ---- batches ---------------------------------------------------------------- */

/* A BATCH holding one NODE message, as the outbox makes them. */
static GBytes *make_batch(uint64_t sequence)
{
    struct vigil_wire_node node = {
        .realtime_offset_ns = 1700000000 * (int64_t)1000000000,
        .cycle = sequence,
        .cycle_start_ns = sequence * 1000000000u,
        .cycle_end_ns = (sequence + 1) * 1000000000u,
        .cycle_ms = 1000,
        .hostname = "node-a",
    };
    GError *error = NULL;
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_NODE, NODE_ID, sequence, 0);
    assert_true(vigil_wire_add_node(w, &node, &error));
    GBytes *inner = vigil_wire_writer_finish(w);
    w = vigil_wire_writer_new(VIGIL_WIRE_BATCH, NODE_ID, sequence, 0);
    assert_true(vigil_wire_add_message(w, inner, &error));
    assert_null(error);
    g_bytes_unref(inner);
    return vigil_wire_writer_finish(w);
}

static uint64_t send_batch(struct vigild_uplink *u)
{
    uint64_t sequence = vigild_uplink_next_sequence(u);
    GBytes *batch = make_batch(sequence);
    vigild_uplink_send(u, sequence, batch);
    g_bytes_unref(batch);
    return sequence;
}

static void send_batches(struct vigild_uplink *u, int n)
{
    for (int i = 0; i < n; i++)
        send_batch(u);
}

/* The size of one of make_batch's batches. */
static gsize batch_size(void)
{
    GBytes *sample = make_batch(1);
    gsize size = g_bytes_get_size(sample);
    g_bytes_unref(sample);
    return size;
}

static struct vigild_uplink *new_uplink(const struct vigild_uplink_settings *settings)
{
    struct vigild_uplink *u = vigild_uplink_new(settings, NULL);
    assert_non_null(u);
    return u;
}

/* ---- the stand-in for vigil-txd ---------------------------------------------- */

static void bind_router(struct fixture *f, const char *curve_secret)
{
    f->router = zmq_socket(f->context, ZMQ_ROUTER);
    assert_non_null(f->router);
    int on = 1, zero = 0;
    assert_int_equal(zmq_setsockopt(f->router, ZMQ_ROUTER_HANDOVER, &on, sizeof on), 0);
    assert_int_equal(zmq_setsockopt(f->router, ZMQ_LINGER, &zero, sizeof zero), 0);
    if (curve_secret != NULL) {
        assert_int_equal(zmq_setsockopt(f->router, ZMQ_CURVE_SERVER, &on, sizeof on), 0);
        assert_int_equal(zmq_setsockopt(f->router, ZMQ_CURVE_SECRETKEY, curve_secret, 40), 0);
    }
    assert_int_equal(zmq_bind(f->router, f->endpoint), 0);
}

struct received {
    char id[64];
    GBytes *message;
    uint64_t sequence;
};

/* The next batch the router gets; fails the test after the deadline. */
static void router_receive(struct fixture *f, struct received *out)
{
    zmq_pollitem_t item = {f->router, 0, ZMQ_POLLIN, 0};
    int ready = zmq_poll(&item, 1, DEADLINE_US / 1000);
    assert_int_equal(ready, 1);
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    assert_true(zmq_msg_recv(&id, f->router, 0) >= 0);
    assert_true(zmq_msg_more(&id));
    assert_true(zmq_msg_recv(&body, f->router, 0) >= 0);
    assert_false(zmq_msg_more(&body)); /* one frame per message */
    size_t id_length = zmq_msg_size(&id);
    assert_true(id_length < sizeof out->id);
    memcpy(out->id, zmq_msg_data(&id), id_length);
    out->id[id_length] = '\0';
    out->message = g_bytes_new(zmq_msg_data(&body), zmq_msg_size(&body));
    zmq_msg_close(&id);
    zmq_msg_close(&body);
    struct vigil_wire_header header;
    gsize length;
    const void *data = g_bytes_get_data(out->message, &length);
    assert_true(vigil_wire_peek_header(data, length, &header, NULL));
    assert_int_equal(header.type, VIGIL_WIRE_BATCH);
    out->sequence = header.sequence;
}

static void router_send(struct fixture *f, const char *id, GBytes *message)
{
    assert_int_equal(zmq_send(f->router, id, strlen(id), ZMQ_SNDMORE), (int)strlen(id));
    gsize length;
    const void *data = g_bytes_get_data(message, &length);
    assert_int_equal(zmq_send(f->router, data, length, 0), (int)length);
}

/* vigil-txd's REFUSED of batch `sequence`, saying `reason`. */
static void refuse(struct fixture *f, uint64_t sequence, const char *reason)
{
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_REFUSED, NODE_ID, sequence, 0);
    struct vigil_wire_refusal refusal = {.reason = (char *)reason}; /* only read */
    assert_true(vigil_wire_add_refusal(w, &refusal, NULL));
    GBytes *reply = vigil_wire_writer_finish(w);
    router_send(f, NODE_HEX_ID, reply);
    g_bytes_unref(reply);
}

static void router_reply(struct fixture *f, const char *id, enum vigil_wire_type type,
                         uint64_t sequence)
{
    GBytes *reply = vigil_wire_writer_finish(vigil_wire_writer_new(type, NODE_ID, sequence, 0));
    router_send(f, id, reply);
    g_bytes_unref(reply);
}

/* ---- waiting --------------------------------------------------------------------- */

/* The uplink's counters now. */
static struct vigild_uplink_stats stats_of(struct vigild_uplink *u)
{
    struct vigild_uplink_stats s;
    vigild_uplink_stats(u, &s);
    return s;
}

typedef gboolean (*condition)(const struct vigild_uplink_stats *s, uint64_t want);

static void wait_for(struct vigild_uplink *u, condition c, uint64_t want, const char *what)
{
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    struct vigild_uplink_stats s;
    for (;;) {
        vigild_uplink_stats(u, &s);
        if (c(&s, want))
            return;
        if (g_get_monotonic_time() > deadline)
            fail_msg("waited in vain for %s: sent %" PRIu64 ", acked %" PRIu64 ", unacked %" PRIu64
                     ", memory %" PRIu64 ", spooled %" PRIu64 ", last error \"%s\"",
                     what, s.sent, s.acked, s.unacked, s.memory_batches, s.spooled_batches,
                     s.last_error);
        g_usleep(POLL_US); /* between polls of a condition, not to synchronise */
    }
}

static gboolean all_acked(const struct vigild_uplink_stats *s, uint64_t want)
{
    return s->acked == want && s->unacked == 0;
}

static gboolean spooled(const struct vigild_uplink_stats *s, uint64_t want)
{
    return s->spooled_batches == want && s->memory_batches == 0;
}

static gboolean connected(const struct vigild_uplink_stats *s, uint64_t want)
{
    (void)want;
    return s->connected;
}

static gboolean resent_at_least(const struct vigild_uplink_stats *s, uint64_t want)
{
    return s->resent >= want;
}

static gboolean dropped_five(const struct vigild_uplink_stats *s, uint64_t want)
{
    return s->dropped_full_batches == 5 && spooled(s, want);
}

static gboolean spooled_beside_memory(const struct vigild_uplink_stats *s, uint64_t want)
{
    return s->spooled_batches == want && s->memory_batches == 2;
}

static gboolean refused(const struct vigild_uplink_stats *s, uint64_t want)
{
    return s->refused == want;
}

static gboolean unexpected(const struct vigild_uplink_stats *s, uint64_t want)
{
    return s->unexpected == want;
}

static gboolean handshake_failed(const struct vigild_uplink_stats *s, uint64_t want)
{
    (void)want;
    return strstr(s->last_error, "handshake") != NULL;
}

static guint count_files(const char *dir, const char *suffix)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    if (d == NULL)
        return 0;
    guint n = 0;
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL)
        n += g_str_has_suffix(name, suffix);
    g_dir_close(d);
    return n;
}

/* Receives until every sequence first..last came at least once, acking
 * each; a batch the router gets must be one of them, intact. */
static void receive_and_ack(struct fixture *f, uint64_t first, uint64_t last)
{
    guint n = (guint)(last - first + 1);
    gboolean *seen = g_new0(gboolean, n);
    guint missing = n;
    while (missing > 0) {
        struct received r;
        router_receive(f, &r);
        assert_string_equal(r.id, NODE_HEX_ID);
        assert_true(r.sequence >= first && r.sequence <= last);
        GBytes *want = make_batch(r.sequence);
        assert_true(g_bytes_equal(r.message, want));
        g_bytes_unref(want);
        if (!seen[r.sequence - first]) {
            seen[r.sequence - first] = TRUE;
            missing--;
        }
        router_reply(f, r.id, VIGIL_WIRE_ACK, r.sequence);
        g_bytes_unref(r.message);
    }
    g_free(seen);
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_batches_flow_and_acks_forget(void **state)
{
    struct fixture *f = *state;
    bind_router(f, NULL);
    GError *error = NULL;
    struct vigild_uplink *u = vigild_uplink_new(&f->settings, &error);
    assert_null(error);
    for (int i = 0; i < 20; i++)
        assert_int_equal(send_batch(u), i + 1);
    receive_and_ack(f, 1, 20);
    wait_for(u, all_acked, 20, "20 acks");
    struct vigild_uplink_stats s = stats_of(u);
    assert_int_equal(s.memory_batches, 0);
    assert_int_equal(s.memory_bytes, 0);
    assert_int_equal(s.spooled_batches, 0);
    assert_int_equal(s.in_flight, 0);
    assert_true(s.sent >= 20);
    wait_for(u, connected, 0, "the connection to be seen");
    vigild_uplink_free(u);
    assert_int_equal(count_files(f->spool, ".spool"), 0);
}

/* No peer: everything goes to disk; the next vigild replays it to the
 * vigil-txd that appears, paced, and the acks empty the spool. */
static void test_spool_and_replay(void **state)
{
    struct fixture *f = *state;
    f->settings.spool_after_ms = 0;
    struct vigild_uplink *u = new_uplink(&f->settings);
    send_batches(u, 150);
    wait_for(u, spooled, 150, "150 batches spooled");
    vigild_uplink_free(u);
    assert_true(count_files(f->spool, ".spool") > 0);

    u = new_uplink(&f->settings);
    struct vigild_uplink_stats s = stats_of(u);
    assert_int_equal(s.replayed, 150);
    assert_int_equal(s.spooled_batches, 150);
    bind_router(f, NULL);
    receive_and_ack(f, 1, 150);
    wait_for(u, all_acked, 150, "150 acks");
    vigild_uplink_stats(u, &s);
    assert_true(s.in_flight == 0 && s.spooled_batches == 0);
    assert_int_equal(count_files(f->spool, ".spool"), 0);
    /* New batches carry on above the replayed ones. */
    assert_int_equal(vigild_uplink_next_sequence(u), 151);
    vigild_uplink_free(u);
}

/* Damaged spool files: a flipped byte in one segment's middle batch, a
 * truncated last batch in another. The good batches reach vigil-txd, the
 * damage is kept aside and counted. */
static void test_damaged_spool_replays_good_batches(void **state)
{
    struct fixture *f = *state;
    struct vigild_spool *spool = vigild_spool_open(f->spool, 1u << 30, NULL);
    assert_non_null(spool);
    GArray *dropped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    gsize size = 0;
    for (uint64_t s = 1; s <= 6; s++) {
        if (s == 4) { /* a second segment */
            vigild_spool_close(spool);
            spool = vigild_spool_open(f->spool, 1u << 30, NULL);
        }
        GBytes *b = make_batch(s);
        size = g_bytes_get_size(b);
        assert_true(vigild_spool_append(spool, s, b, dropped, NULL));
        g_bytes_unref(b);
    }
    vigild_spool_close(spool);
    g_array_free(dropped, TRUE);
    char *first = g_build_filename(f->spool, "00000000000000000001.spool", NULL);
    char *second = g_build_filename(f->spool, "00000000000000000004.spool", NULL);
    FILE *file = fopen(first, "r+");
    assert_non_null(file);
    assert_int_equal(fseek(file, (long)(size + size / 2 + 20), SEEK_SET), 0);
    int c = fgetc(file);
    assert_int_equal(fseek(file, (long)(size + size / 2 + 20), SEEK_SET), 0);
    fputc(c ^ 1, file);
    assert_int_equal(fclose(file), 0);
    assert_int_equal(truncate(second, (off_t)(3 * size - 5)), 0);

    struct vigild_uplink *u = new_uplink(&f->settings);
    struct vigild_uplink_stats s = stats_of(u);
    assert_int_equal(s.replayed, 4);
    assert_int_equal(s.spool_corrupt, 2);
    assert_int_equal(s.spool_corrupt_bytes, 2 * size - 5);
    bind_router(f, NULL);
    const uint64_t good[] = {1, 3, 4, 5};
    guint got = 0;
    while (got < G_N_ELEMENTS(good)) {
        struct received r;
        router_receive(f, &r);
        gboolean known = FALSE;
        for (guint i = 0; i < G_N_ELEMENTS(good); i++)
            known |= r.sequence == good[i];
        assert_true(known);
        got++;
        router_reply(f, r.id, VIGIL_WIRE_ACK, r.sequence);
        g_bytes_unref(r.message);
    }
    wait_for(u, all_acked, 4, "the 4 good batches acked");
    vigild_uplink_free(u);
    assert_int_equal(count_files(f->spool, ".spool"), 0);
    assert_int_equal(count_files(f->spool, ".spool.damaged"), 2);
    g_free(first);
    g_free(second);
}

/* The bound: room for ten batches, fifteen sent without a peer. The five
 * oldest are dropped and counted exactly; the newest ten reach vigil-txd. */
static void test_bound_keeps_newest(void **state)
{
    struct fixture *f = *state;
    gsize size = batch_size();
    f->settings.spool_after_ms = 0;
    f->settings.spool_max_bytes = 10 * size;
    struct vigild_uplink *u = new_uplink(&f->settings);
    send_batches(u, 15);
    wait_for(u, dropped_five, 10, "5 batches dropped, 10 spooled");
    struct vigild_uplink_stats s = stats_of(u);
    assert_int_equal(s.dropped_full_batches, 5);
    assert_int_equal(s.dropped_full_bytes, 5 * size);
    assert_int_equal(s.unacked, 10);
    bind_router(f, NULL);
    receive_and_ack(f, 6, 15);
    wait_for(u, all_acked, 10, "the newest 10 acked");
    vigild_uplink_free(u);
}

/* memory_max_bytes: beyond it the oldest batches go to the spool before
 * spool_after_ms. */
static void test_memory_bound_spools_early(void **state)
{
    struct fixture *f = *state;
    gsize size = batch_size();
    f->settings.memory_max_bytes = 2 * size;
    struct vigild_uplink *u = new_uplink(&f->settings);
    send_batches(u, 5);
    wait_for(u, spooled_beside_memory, 3, "3 batches spooled, 2 in memory");
    struct vigild_uplink_stats s = stats_of(u);
    assert_int_equal(s.memory_bytes, 2 * size);
    vigild_uplink_free(u);
    /* Stopping spools the rest. */
    u = vigild_uplink_new(&f->settings, NULL);
    vigild_uplink_stats(u, &s);
    assert_int_equal(s.replayed, 5);
    vigild_uplink_free(u);
}

static char *read_text(const char *path, gsize *length)
{
    gchar *text = NULL;
    assert_true(g_file_get_contents(path, &text, length, NULL));
    return text;
}

/* REFUSED: the batch is kept in refused/ and never sent again, while an
 * unacknowledged neighbour keeps being resent. */
static void test_refused_is_kept_and_not_resent(void **state)
{
    struct fixture *f = *state;
    f->settings.resend_after_ms = 100;
    bind_router(f, NULL);
    struct vigild_uplink *u = new_uplink(&f->settings);
    send_batch(u);
    send_batch(u);
    struct received r;
    do {
        router_receive(f, &r);
        g_bytes_unref(r.message);
    } while (r.sequence != 2);

    refuse(f, 1, "cycle 1: no such process 7");
    wait_for(u, refused, 1, "the refusal");

    char *path = g_build_filename(f->spool, "refused", "42-1.batch", NULL);
    gsize length;
    char *kept = read_text(path, &length);
    GBytes *b1 = make_batch(1);
    assert_int_equal(length, g_bytes_get_size(b1));
    assert_memory_equal(kept, g_bytes_get_data(b1, NULL), length);
    struct vigild_uplink_stats s = stats_of(u);
    test_assert_contains(s.last_error, "no such process 7");

    /* Batch 3 is sent after the refusal was taken, and the one connection
     * keeps order: batch 1 after batch 3 would be a resend. Two more
     * resends of batch 2 show that resends went on meanwhile. */
    uint64_t third = send_batch(u);
    gboolean third_seen = FALSE;
    int second_after = 0;
    while (second_after < 2) {
        router_receive(f, &r);
        if (third_seen)
            assert_int_not_equal(r.sequence, 1);
        if (r.sequence == third && !third_seen) {
            third_seen = TRUE;
            router_reply(f, NODE_HEX_ID, VIGIL_WIRE_ACK, third);
        }
        if (third_seen && r.sequence == 2)
            second_after++;
        g_bytes_unref(r.message);
    }
    wait_for(u, resent_at_least, 2, "the resends counted");
    vigild_uplink_stats(u, &s);
    assert_int_equal(s.refused, 1);
    vigild_uplink_free(u);
    g_bytes_unref(b1);
    g_free(kept);
    g_free(path);
}

/* STATES with the system's state comes back from system_state; a states
 * message without it and bytes that are no message are counted. */
/* ---- bounds: memory, in flight, refused ---------------------------------------- */

/* Every batch handed over is accounted for, and memory dropped some. */
static gboolean all_accounted_some_dropped(const struct vigild_uplink_stats *s, uint64_t want)
{
    return s->dropped_memory_batches > 0 &&
           s->unacked + s->dropped_memory_batches + s->dropped_full_batches == want;
}

/* Waits until vigild_uplink_durable_below says `want`. */
static void wait_for_durable_below(struct vigild_uplink *u, uint64_t want, const char *what)
{
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    uint64_t have;
    while ((have = vigild_uplink_durable_below(u)) != want) {
        if (g_get_monotonic_time() > deadline)
            fail_msg("durable below %" PRIu64 ", not %" PRIu64 ": %s", have, want, what);
        g_usleep(POLL_US);
    }
}

/* What the daemon frees its rings by: a batch is durable once it is
 * spooled or acknowledged. Not written ahead (spool_after_ms > 0), a batch
 * is not durable until vigil-txd acknowledges it; written ahead to a spool
 * that cannot take it, not until the spool can again. */
static void test_durable_once_spooled_or_acknowledged(void **state)
{
    struct fixture *f = *state;
    struct vigild_uplink *u = new_uplink(&f->settings);
    assert_int_equal(vigild_uplink_durable_below(u), UINT64_MAX);
    uint64_t first = send_batch(u);
    uint64_t second = send_batch(u);
    assert_int_equal(vigild_uplink_durable_below(u), first);
    bind_router(f, NULL);
    for (int i = 0; i < 2; i++) {
        struct received r;
        router_receive(f, &r);
        if (r.sequence == first)
            router_reply(f, r.id, VIGIL_WIRE_ACK, r.sequence);
        g_bytes_unref(r.message);
    }
    wait_for_durable_below(u, second, "the first acknowledged");
    vigild_uplink_free(u);

    f->settings.spool_after_ms = 0;
    u = new_uplink(&f->settings);
    wait_for_durable_below(u, UINT64_MAX, "the spool replayed is durable");
    struct rlimit saved, small = {.rlim_cur = 0};
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    small.rlim_max = saved.rlim_max;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    uint64_t third = vigild_uplink_next_sequence(u);
    GBytes *batch = make_batch(third);
    gboolean durable = vigild_uplink_send(u, third, batch);
    g_bytes_unref(batch);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, old_handler);
    assert_false(durable);
    /* The uplink tries the spool again (after a second) and it works. */
    wait_for_durable_below(u, UINT64_MAX, "spooled once the spool could take it");
    vigild_uplink_free(u);
}

/* A file the spool set aside (NAME.damaged) holding intact batches between
 * damage: `vigil spool check` shows its ranges and what is replayable, and
 * changes nothing; vigild_uplink_replay (`vigil spool replay`) sends the
 * intact ones and renames the file NAME.replayed. */
static void test_damaged_file_checked_and_replayed(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(g_mkdir_with_parents(f->spool, 0700), 0);
    GBytes *a = make_batch(7), *b = make_batch(9);
    GByteArray *file = g_byte_array_new();
    static const uint8_t junk[50] = {0xAA};
    g_byte_array_append(file, junk, sizeof junk);
    g_byte_array_append(file, g_bytes_get_data(a, NULL), (guint)g_bytes_get_size(a));
    g_byte_array_append(file, junk, 30);
    g_byte_array_append(file, g_bytes_get_data(b, NULL), (guint)g_bytes_get_size(b));
    char *path = g_build_filename(f->spool, "00000000000000000007.spool.damaged", NULL);
    assert_true(g_file_set_contents(path, (const char *)file->data, file->len, NULL));

    struct test_run run = test_run_vigil(NULL, "spool", (const char *[]){"check", f->spool, NULL});
    test_assert_status(&run, 1, "vigil spool check");
    test_assert_contains(run.out, "2 intact batches (sequences 7 to 9); replayable");
    test_assert_contains(run.out, "damaged: bytes 0 to 50 (50 bytes)");
    char *second =
        g_strdup_printf("damaged: bytes %zu to %zu (30 bytes)", 50 + (size_t)g_bytes_get_size(a),
                        80 + (size_t)g_bytes_get_size(a));
    test_assert_contains(run.out, second);
    test_assert_contains(run.out, "2 replayable in set-aside files, 2 damaged ranges (80 bytes)");
    test_run_clear(&run);
    assert_true(g_file_test(path, G_FILE_TEST_EXISTS)); /* check changes nothing */

    struct vigild_uplink *u = new_uplink(&f->settings);
    struct vigild_uplink_requeued done;
    GError *error = NULL;
    assert_true(vigild_uplink_replay(u, path, &done, &error));
    assert_int_equal(done.batches, 2);
    assert_int_equal(done.skipped, 0);
    assert_int_equal(done.unreadable_bytes, 80);
    char *replayed = g_strconcat(path, ".replayed", NULL);
    assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
    assert_true(g_file_test(replayed, G_FILE_TEST_EXISTS));
    bind_router(f, NULL);
    gboolean seen[2] = {FALSE, FALSE};
    for (int i = 0; i < 2; i++) {
        struct received r;
        router_receive(f, &r);
        assert_true(r.sequence == 7 || r.sequence == 9);
        seen[r.sequence == 9] = TRUE;
        assert_true(g_bytes_equal(r.message, r.sequence == 7 ? a : b));
        router_reply(f, r.id, VIGIL_WIRE_ACK, r.sequence);
        g_bytes_unref(r.message);
    }
    assert_true(seen[0] && seen[1]);
    wait_for(u, all_acked, 2, "both replayed batches acked");
    /* A file that is not there is an error that names it. */
    assert_false(vigild_uplink_replay(u, path, &done, &error));
    test_assert_contains(error->message, path);
    g_error_free(error);
    vigild_uplink_free(u);
    g_free(replayed);
    g_free(second);
    g_free(path);
    g_byte_array_unref(file);
    g_bytes_unref(a);
    g_bytes_unref(b);
}

/* Written ahead: the batch is in the spool when vigild_uplink_send returns
 * (what lets vigild free its rings). Then a spool that cannot be written
 * (files limited to 4 KiB: no disk space, as root) with vigil-txd gone:
 * memory stays under memory_max_bytes, the oldest batches dropped and
 * counted, and every batch is in memory, in the spool or counted. */
static void test_memory_is_bounded_when_the_spool_fails(void **state)
{
    struct fixture *f = *state;
    f->settings.spool_after_ms = 0;
    gsize size = batch_size();
    f->settings.memory_max_bytes = 10 * size;
    struct vigild_uplink *u = new_uplink(&f->settings);
    uint64_t first = vigild_uplink_next_sequence(u);
    GBytes *batch = make_batch(first);
    assert_true(vigild_uplink_send(u, first, batch));
    g_bytes_unref(batch);
    char *segment = g_strdup_printf("%s/%020" PRIu64 ".spool", f->spool, first);
    struct stat st;
    assert_int_equal(stat(segment, &st), 0);
    assert_true((gsize)st.st_size >= size);
    g_free(segment);

    struct rlimit saved, small = {.rlim_cur = 4096};
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    small.rlim_max = saved.rlim_max;
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    guint sent = 1, durable = 1;
    for (; sent < 200; sent++) {
        uint64_t sequence = vigild_uplink_next_sequence(u);
        batch = make_batch(sequence);
        durable += vigild_uplink_send(u, sequence, batch);
        g_bytes_unref(batch);
    }
    assert_true(durable < sent); /* the spool did fail */
    wait_for(u, all_accounted_some_dropped, sent, "every batch accounted for, some dropped");
    struct vigild_uplink_stats s = stats_of(u);
    assert_true(s.memory_bytes <= f->settings.memory_max_bytes + size);
    assert_true(s.spool_errors > 0);
    assert_true(s.dropped_memory_batches > 0);
    assert_int_equal(s.unacked + s.dropped_memory_batches + s.dropped_full_batches, sent);
    test_assert_contains(s.last_error, "dropped");
    vigild_uplink_free(u);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, old_handler);
}

static gboolean in_flight_is(const struct vigild_uplink_stats *s, uint64_t want)
{
    return s->in_flight == want;
}

/* in_flight_max_bytes: with room for two and a half batches, three go out
 * (one more while under the bound), and one more for each ACK. */
static void test_in_flight_is_bounded_by_bytes(void **state)
{
    struct fixture *f = *state;
    f->settings.in_flight_max_bytes = batch_size() * 5 / 2;
    bind_router(f, NULL);
    struct vigild_uplink *u = new_uplink(&f->settings);
    send_batches(u, 10);
    struct received r;
    for (int i = 0; i < 3; i++) {
        router_receive(f, &r);
        g_bytes_unref(r.message);
    }
    wait_for(u, in_flight_is, 3, "three batches in flight");
    struct vigild_uplink_stats s = stats_of(u);
    assert_int_equal(s.sent, 3);
    router_reply(f, NODE_HEX_ID, VIGIL_WIRE_ACK, 1);
    router_receive(f, &r); /* the fourth, now that there is room */
    assert_int_equal(r.sequence, 4);
    g_bytes_unref(r.message);
    vigild_uplink_free(u);
}

/* refused_max_bytes: the folder keeps the newest refusals that fit, the
 * older ones are deleted and counted. */
static void test_refused_folder_is_bounded(void **state)
{
    struct fixture *f = *state;
    gsize size = batch_size();
    f->settings.refused_max_bytes = size * 5 / 2;
    bind_router(f, NULL);
    struct vigild_uplink *u = new_uplink(&f->settings);
    for (uint64_t i = 1; i <= 5; i++) {
        uint64_t sequence = send_batch(u);
        struct received r;
        router_receive(f, &r);
        assert_int_equal(r.sequence, sequence);
        g_bytes_unref(r.message);
        refuse(f, sequence, "never");
        wait_for(u, refused, i, "the refusal");
    }
    struct vigild_uplink_stats s = stats_of(u);
    assert_int_equal(s.refused_deleted, 3);
    char *folder = g_build_filename(f->spool, "refused", NULL);
    assert_int_equal(test_count_files(folder, "", ""), 2);
    char *newest = g_build_filename(folder, "42-5.batch", NULL);
    assert_true(g_file_test(newest, G_FILE_TEST_EXISTS));
    g_free(newest);
    g_free(folder);
    vigild_uplink_free(u);
}

static void test_system_state(void **state)
{
    struct fixture *f = *state;
    bind_router(f, NULL);
    struct vigild_uplink *u = new_uplink(&f->settings);
    struct vigil_wire_state out;
    assert_false(vigild_uplink_system_state(u, &out));
    send_batch(u);
    struct received r;
    router_receive(f, &r); /* the router learns the node's id */
    g_bytes_unref(r.message);

    struct vigil_wire_state node = {
        .cycle = 6, .level = VIGIL_LEVEL_NODE, .health = VIGIL_HEALTH_OK};
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_STATES, NODE_ID, 0, 0);
    assert_true(vigil_wire_add_state(w, &node, NULL));
    GBytes *reply = vigil_wire_writer_finish(w);
    router_send(f, NODE_HEX_ID, reply);
    g_bytes_unref(reply);
    wait_for(u, unexpected, 1, "the states message without a system state");
    GBytes *junk = g_bytes_new_static("not a wire message at all, not even close", 41);
    router_send(f, NODE_HEX_ID, junk);
    g_bytes_unref(junk);
    wait_for(u, unexpected, 2, "the junk");
    assert_false(vigild_uplink_system_state(u, &out));

    struct vigil_wire_state system = {.cycle = 7,
                                      .level = VIGIL_LEVEL_SYSTEM,
                                      .health = VIGIL_HEALTH_ABNORMAL_BAD,
                                      .overloaded_mask = 2,
                                      .bad_issues = 3,
                                      .good_issues = 1,
                                      .other_issues = 4};
    w = vigil_wire_writer_new(VIGIL_WIRE_STATES, NODE_ID, 0, 0);
    assert_true(vigil_wire_add_state(w, &system, NULL));
    reply = vigil_wire_writer_finish(w);
    router_send(f, NODE_HEX_ID, reply);
    g_bytes_unref(reply);
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    while (!vigild_uplink_system_state(u, &out)) {
        assert_true(g_get_monotonic_time() < deadline);
        g_usleep(POLL_US);
    }
    assert_int_equal(out.cycle, 7);
    assert_int_equal(out.level, VIGIL_LEVEL_SYSTEM);
    assert_int_equal(out.health, VIGIL_HEALTH_ABNORMAL_BAD);
    assert_int_equal(out.overloaded_mask, 2);
    assert_int_equal(out.bad_issues, 3);
    assert_int_equal(out.good_issues, 1);
    assert_int_equal(out.other_issues, 4);
    vigild_uplink_free(u);
}

static void test_sequences_across_restarts(void **state)
{
    struct fixture *f = *state;
    struct vigild_uplink *u = new_uplink(&f->settings);
    for (uint64_t i = 1; i <= 3; i++)
        assert_int_equal(vigild_uplink_next_sequence(u), i);
    vigild_uplink_free(u);
    u = vigild_uplink_new(&f->settings, NULL);
    assert_int_equal(vigild_uplink_next_sequence(u), 4);
    vigild_uplink_free(u);
}

/* ---- configuration ---------------------------------------------------------------- */

static char *write_key_file(const char *dir, const char *name, const char *public_key,
                            const char *secret_key, mode_t mode)
{
    char *path =
        test_new_filef(dir, name, "[curve]\npublic = %s\nsecret = %s\n", public_key, secret_key);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

/* Loads [uplink] from a vigil.conf holding `body`; the error, or NULL. */
static char *load(const char *dir, const char *body, struct vigild_uplink_settings *out)
{
    char *path = test_new_filef(dir, "vigil.conf", "[uplink]\n%s", body);
    vigil_config *config = vigil_config_new();
    GError *error = NULL;
    assert_true(vigil_schema_declare(config, &error));
    assert_true(vigil_config_load(config, path, &error));
    char *message = NULL;
    if (!vigild_uplink_settings_load(config, out, &error)) {
        message = g_strdup(error->message);
        g_error_free(error);
    }
    vigil_config_free(config);
    g_free(path);
    return message;
}

static void assert_refused(const char *dir, const char *body, const char *needle1,
                           const char *needle2)
{
    struct vigild_uplink_settings s;
    char *message = load(dir, body, &s);
    if (message == NULL)
        fail_msg("accepted: %s", body);
    test_assert_contains(message, needle1);
    if (needle2 != NULL)
        test_assert_contains(message, needle2);
    g_free(message);
}

/* vigil-txd's key pair and a node's, made fresh. */
struct curve_keys {
    char server_public[41], server_secret[41], public_key[41], secret_key[41];
};

static void curve_keys_new(struct curve_keys *k)
{
    assert_int_equal(zmq_curve_keypair(k->server_public, k->server_secret), 0);
    assert_int_equal(zmq_curve_keypair(k->public_key, k->secret_key), 0);
}

static void test_bad_curve_settings(void **state)
{
    struct fixture *f = *state;
    struct curve_keys k;
    curve_keys_new(&k);
    char *good = write_key_file(f->dir, "good.key", k.public_key, k.secret_key, 0600);
    char *open_to_all = write_key_file(f->dir, "open.key", k.public_key, k.secret_key, 0644);
    char *not_z85 = write_key_file(f->dir, "bad.key", "tooshort", k.secret_key, 0600);
    char *mismatched = write_key_file(f->dir, "other.key", k.server_public, k.secret_key, 0600);
    char *missing = g_strdup_printf("%s/missing.key", f->dir);
    char one_short[40], bad_char[41];
    g_strlcpy(one_short, k.server_public, sizeof one_short);
    memcpy(bad_char, k.server_public, sizeof bad_char);
    bad_char[5] = '~';

    /* curve_server_key and curve_key_file (NULL: the line left out), and
     * what the refusal must name. */
    const struct {
        const char *server_key, *key_file, *needle1, *needle2;
    } cases[] = {
        {one_short, good, "curve_server_key", "40 characters"},
        {bad_char, good, "curve_server_key", "character 6"},
        {k.server_public, open_to_all, "curve_key_file", "chmod 600"},
        {k.server_public, NULL, "curve_server_key", "curve_key_file is empty"},
        {NULL, good, "curve_key_file is set", "curve_server_key"},
        {k.server_public, not_z85, not_z85, "[curve] public"},
        {k.server_public, mismatched, mismatched, "not the public key"},
        {k.server_public, missing, "curve_key_file", "missing.key"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        GString *body = g_string_new("");
        if (cases[i].server_key != NULL)
            g_string_append_printf(body, "curve_server_key = %s\n", cases[i].server_key);
        if (cases[i].key_file != NULL)
            g_string_append_printf(body, "curve_key_file = %s\n", cases[i].key_file);
        assert_refused(f->dir, body->str, cases[i].needle1, cases[i].needle2);
        g_string_free(body, TRUE);
    }

    /* The defaults: no uplink, a node id of its own. */
    struct vigild_uplink_settings s;
    assert_null(load(f->dir, "", &s));
    assert_string_equal(s.endpoint, "");
    assert_true(s.node_id > 0 && s.node_id <= (uint64_t)INT64_MAX);
    assert_string_equal(s.curve_server_key, ""); /* no CURVE: no key pair read */
    assert_null(s.curve_public_key);
    assert_null(s.curve_secret_key);
    assert_int_equal(s.spool_after_ms, 0);
    vigild_uplink_settings_clear(&s);
    g_free(good);
    g_free(open_to_all);
    g_free(not_z85);
    g_free(mismatched);
    g_free(missing);
}

static void test_node_id_derivation(void **state)
{
    struct fixture *f = *state;
    char *path = g_build_filename(f->dir, "machine-id", NULL);
    assert_true(g_file_set_contents(path, "0123456789abcdef0123456789abcdef\n", -1, NULL));
    assert_int_equal(vigild_uplink_derive_node_id(path, "x"), 0x0123456789abcdefu);
    /* Above 2^63 the top bit goes: the warehouse keeps a bigint. */
    assert_true(g_file_set_contents(path, "f123456789abcdef0123456789abcdef\n", -1, NULL));
    assert_int_equal(vigild_uplink_derive_node_id(path, "x"), 0x7123456789abcdefu);
    assert_true(g_file_set_contents(path, "not hex\n", -1, NULL));
    uint64_t a = vigild_uplink_derive_node_id(path, "node-a");
    assert_int_equal(vigild_uplink_derive_node_id(NULL, "node-a"), a);
    assert_int_not_equal(vigild_uplink_derive_node_id(NULL, "node-b"), a);
    assert_true(a != 0);
    g_free(path);
}

/* CURVE: the settings read from a config with a key file, and a ROUTER that
 * is a CURVE server with the matching key: batches flow. With the wrong
 * server key the handshake fails and says so. */
static void test_curve(void **state)
{
    struct fixture *f = *state;
    struct curve_keys k;
    curve_keys_new(&k);
    char *key_file = write_key_file(f->dir, "node.key", k.public_key, k.secret_key, 0600);
    char *body = g_strdup_printf("endpoint = %s\nnode_id = %d\nspool_dir = %s\n"
                                 "curve_server_key = %s\ncurve_key_file = %s\n",
                                 f->endpoint, NODE_ID, f->spool, k.server_public, key_file);
    struct vigild_uplink_settings s;
    assert_null(load(f->dir, body, &s));
    assert_string_equal(s.curve_public_key, k.public_key);
    assert_string_equal(s.curve_secret_key, k.secret_key);
    assert_int_equal(s.node_id, NODE_ID);

    bind_router(f, k.server_secret);
    struct vigild_uplink *u = new_uplink(&s);
    send_batches(u, 5);
    receive_and_ack(f, 1, 5);
    wait_for(u, all_acked, 5, "5 acks over CURVE");
    vigild_uplink_free(u);

    /* A server key that is not vigil-txd's. */
    char other_public[41], other_secret[41];
    assert_int_equal(zmq_curve_keypair(other_public, other_secret), 0);
    g_free(s.curve_server_key);
    s.curve_server_key = g_strdup(other_public);
    u = new_uplink(&s);
    send_batch(u);
    wait_for(u, handshake_failed, 0, "a handshake failure");
    struct vigild_uplink_stats stats;
    vigild_uplink_stats(u, &stats);
    assert_false(stats.connected);
    assert_int_equal(stats.acked, 0);
    vigild_uplink_free(u);
    vigild_uplink_settings_clear(&s);
    g_free(body);
    g_free(key_file);
}

/* Reconnects spread: the defaults, and a first connect put off by a random
 * delay that still comes, its endpoint checked at start. */
static void test_spread_connects(void **state)
{
    struct fixture *f = *state;
    struct vigild_uplink_settings s;
    assert_null(load(f->dir, "", &s));
    assert_int_equal(s.reconnect_ivl_ms, 1000);
    assert_int_equal(s.reconnect_ivl_max_ms, 5000);
    assert_int_equal(s.connect_delay_max_ms, 1000);
    vigild_uplink_settings_clear(&s);

    /* What zmq_connect would refuse is refused at start, though the
     * connect itself comes later. */
    const char *bad[] = {"tcp://no-port", "tcp://:5555", "udp://host:5555", "ipc://"};
    char *good_endpoint = f->settings.endpoint;
    f->settings.connect_delay_max_ms = 1000;
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        f->settings.endpoint = (char *)bad[i]; /* only read */
        GError *error = NULL;
        assert_null(vigild_uplink_new(&f->settings, &error));
        test_assert_contains(error->message, "[uplink] endpoint");
        test_assert_contains(error->message, bad[i]);
        g_error_free(error);
    }
    f->settings.endpoint = good_endpoint;

    /* A good one: the batches wait for the connect, then flow. */
    bind_router(f, NULL);
    struct vigild_uplink *u = new_uplink(&f->settings);
    send_batches(u, 3);
    receive_and_ack(f, 1, 3);
    wait_for(u, all_acked, 3, "3 acks after a delayed connect");
    vigild_uplink_free(u);
}

#define WITH_FIXTURE(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

TEST_MAIN(WITH_FIXTURE(test_batches_flow_and_acks_forget), WITH_FIXTURE(test_spool_and_replay),
          WITH_FIXTURE(test_damaged_spool_replays_good_batches),
          WITH_FIXTURE(test_bound_keeps_newest), WITH_FIXTURE(test_memory_bound_spools_early),
          WITH_FIXTURE(test_refused_is_kept_and_not_resent),
          WITH_FIXTURE(test_memory_is_bounded_when_the_spool_fails),
          WITH_FIXTURE(test_durable_once_spooled_or_acknowledged),
          WITH_FIXTURE(test_damaged_file_checked_and_replayed),
          WITH_FIXTURE(test_in_flight_is_bounded_by_bytes),
          WITH_FIXTURE(test_refused_folder_is_bounded), WITH_FIXTURE(test_system_state),
          WITH_FIXTURE(test_sequences_across_restarts), WITH_FIXTURE(test_bad_curve_settings),
          WITH_FIXTURE(test_node_id_derivation), WITH_FIXTURE(test_curve),
          WITH_FIXTURE(test_spread_connects))
