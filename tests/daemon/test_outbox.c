/* vigild's batches to vigil-txd, end to end through a real vigild: a
 * ZeroMQ ROUTER in the test stands in for vigil-txd and acknowledges every
 * batch.
 *
 * - An instrumented dd under [capture] mode = all: every batch decodes and
 *   describes every process, metric and file it names; every activity the
 *   JSON sink got is in exactly one batch; the node's state comes every
 *   cycle; dd's process arrives with its end, exit status and report, and
 *   its window with every activity counted.
 * - A system state sent down by the stand-in becomes the node reasoner's
 *   parent in `vigil status`, and is not sent back up in the node's state.
 * - Without a server batches wait (unacknowledged, spooled); after a
 *   SIGTERM the next vigild replays every one of them to a server.
 *
 * Every wait polls for a condition under a generous deadline. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zmq.h>

#include "test_daemon.h"
#include "test_support.h"
#include "vigil/health.h"
#include "vigil/wire.h"
#include "test_main.h"

#define NODE_ID     42
#define DEADLINE_US (60 * G_USEC_PER_SEC)
#define SERVE_MS    100 /* one wait for messages, between polls of a condition */
#define CYCLE_MS    200

/* Short cycles, and only the test's own providers. */
#define DAEMON_LINES "providers = procstat;process\ntick_ms = 50\ncycle_ms = 200\nrollup_ms = 200\n"

/* ---- the stand-in for vigil-txd ------------------------------------------------ */

struct fake_txd {
    void *context, *router;
    char peer[64];       /* the daemon's routing id, once it has sent */
    GHashTable *batches; /* sequence (uint64_t *) → GBytes *, each once */
    gboolean ack;        /* acknowledge what comes */
};

static void txd_start(struct fake_txd *t, const char *dir)
{
    memset(t, 0, sizeof *t);
    t->context = zmq_ctx_new();
    t->router = zmq_socket(t->context, ZMQ_ROUTER);
    assert_non_null(t->router);
    int on = 1, zero = 0;
    assert_int_equal(zmq_setsockopt(t->router, ZMQ_ROUTER_HANDOVER, &on, sizeof on), 0);
    assert_int_equal(zmq_setsockopt(t->router, ZMQ_LINGER, &zero, sizeof zero), 0);
    char *endpoint = g_strdup_printf("ipc://%s/txd.sock", dir);
    assert_int_equal(zmq_bind(t->router, endpoint), 0);
    g_free(endpoint);
    t->batches =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, (GDestroyNotify)g_bytes_unref);
    t->ack = TRUE;
}

static void txd_stop(struct fake_txd *t)
{
    zmq_close(t->router);
    zmq_ctx_term(t->context);
    g_hash_table_destroy(t->batches);
}

static void txd_send(struct fake_txd *t, GBytes *message)
{
    gsize length;
    const void *data = g_bytes_get_data(message, &length);
    assert_int_equal(zmq_send(t->router, t->peer, strlen(t->peer), ZMQ_SNDMORE),
                     (int)strlen(t->peer));
    assert_int_equal(zmq_send(t->router, data, length, 0), (int)length);
}

/* Takes one message: a batch, kept once (a resend must be the same
 * bytes), and acknowledged. */
static void txd_take(struct fake_txd *t, zmq_msg_t *id, zmq_msg_t *body)
{
    size_t id_length = zmq_msg_size(id);
    assert_true(id_length < sizeof t->peer);
    memcpy(t->peer, zmq_msg_data(id), id_length);
    t->peer[id_length] = '\0';
    GBytes *message = g_bytes_new(zmq_msg_data(body), zmq_msg_size(body));
    struct vigil_wire_header header;
    gsize length;
    const void *data = g_bytes_get_data(message, &length);
    assert_true(vigil_wire_peek_header(data, length, &header, NULL));
    assert_int_equal(header.type, VIGIL_WIRE_BATCH);
    assert_int_equal(header.node_id, NODE_ID);
    GBytes *before = g_hash_table_lookup(t->batches, &header.sequence);
    if (before != NULL) {
        if (!g_bytes_equal(before, message))
            fail_msg("batch %" PRIu64 " came again with other bytes", header.sequence);
        g_bytes_unref(message);
    } else {
        g_hash_table_insert(t->batches, g_memdup2(&header.sequence, sizeof header.sequence),
                            message);
    }
    if (t->ack) {
        GBytes *ack = vigil_wire_writer_finish(
            vigil_wire_writer_new(VIGIL_WIRE_ACK, header.node_id, header.sequence, 0));
        txd_send(t, ack);
        g_bytes_unref(ack);
    }
}

/* Everything that comes within SERVE_MS. */
static void txd_serve(struct fake_txd *t)
{
    zmq_pollitem_t item = {t->router, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, SERVE_MS) <= 0)
        return;
    for (;;) {
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&id, t->router, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&id);
            zmq_msg_close(&body);
            return;
        }
        assert_true(zmq_msg_more(&id));
        assert_true(zmq_msg_recv(&body, t->router, 0) >= 0);
        assert_false(zmq_msg_more(&body)); /* one frame per message */
        txd_take(t, &id, &body);
        zmq_msg_close(&id);
        zmq_msg_close(&body);
    }
}

/* ---- what the batches say ------------------------------------------------------ */

/* Everything the batches received so far hold, checked batch by batch. */
struct seen {
    guint batches;
    GHashTable *activities;  /* "pid:seq" → batch sequence (boxed) */
    GHashTable *node_cycles; /* cycle → the node's health (boxed u64 keys) */
    GHashTable *pids;        /* daemon process id → pid */
    GArray *ended;           /* struct vigil_wire_process copies (strings not kept) */
    GHashTable *summaries;   /* daemon process id of each summary */
    GArray *windows;         /* struct vigil_wire_window, reasons owned */
    guint rollups, samples, names;
    GHashTable *first_cycles; /* NODE cycle of each batch: sequence → cycle */
};

static void seen_init(struct seen *s)
{
    memset(s, 0, sizeof *s);
    s->activities = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    s->node_cycles = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    s->pids = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    s->ended = g_array_new(FALSE, FALSE, sizeof(struct vigil_wire_process));
    s->summaries = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    s->windows = g_array_new(FALSE, FALSE, sizeof(struct vigil_wire_window));
    s->first_cycles = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
}

static void seen_clear(struct seen *s)
{
    g_hash_table_destroy(s->activities);
    g_hash_table_destroy(s->node_cycles);
    g_hash_table_destroy(s->pids);
    g_array_free(s->ended, TRUE);
    g_hash_table_destroy(s->summaries);
    for (guint i = 0; i < s->windows->len; i++)
        g_free(g_array_index(s->windows, struct vigil_wire_window, i).reasons);
    g_array_free(s->windows, TRUE);
    g_hash_table_destroy(s->first_cycles);
}

static void box_insert(GHashTable *table, uint64_t key, uint64_t value)
{
    g_hash_table_replace(table, g_memdup2(&key, sizeof key), GSIZE_TO_POINTER((gsize)value));
}

static char *name_key(uint64_t process_id, uint32_t file_id)
{
    return g_strdup_printf("%" PRIu64 ":%u", process_id, file_id);
}

static void require_process(GHashTable *described, uint64_t process_id, uint64_t sequence,
                            const char *what)
{
    if (process_id != 0 && !g_hash_table_contains(described, &process_id))
        fail_msg("batch %" PRIu64 ": %s names process %" PRIu64 ", which it does not describe",
                 sequence, what, process_id);
}

static void require_metric(GHashTable *described, uint32_t id, uint64_t sequence)
{
    if (!g_hash_table_contains(described, GUINT_TO_POINTER(id)))
        fail_msg("batch %" PRIu64 ": a statistic of metric %u, which it does not describe",
                 sequence, id);
}

/* One batch: decoded, self-contained, its items counted into `s`. */
static void seen_batch(struct seen *s, uint64_t sequence, GBytes *bytes)
{
    gsize length;
    const void *data = g_bytes_get_data(bytes, &length);
    struct vigil_wire_message batch;
    GError *error = NULL;
    if (!vigil_wire_decode(data, length, &batch, &error))
        fail_msg("batch %" PRIu64 " does not decode: %s", sequence, error->message);
    s->batches++;
    const struct vigil_wire_node *node = &batch.inner[0].nodes[0];
    assert_int_equal(node->cycle_ms, CYCLE_MS);
    assert_true(node->hostname[0] != '\0');
    assert_true(node->realtime_offset_ns > 0);
    box_insert(s->first_cycles, sequence, node->cycle);
    GHashTable *processes = g_hash_table_new(g_int64_hash, g_int64_equal);
    GHashTable *metrics = g_hash_table_new(g_direct_hash, g_direct_equal);
    GHashTable *names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (uint32_t i = 0; i < batch.header.count; i++) {
        const struct vigil_wire_message *m = &batch.inner[i];
        for (uint32_t k = 0; k < m->header.count && m->header.type == VIGIL_WIRE_PROCESSES; k++) {
            const struct vigil_wire_process *p = &m->processes[k];
            g_hash_table_add(processes, (gpointer)&p->process_id);
            box_insert(s->pids, p->process_id, (uint64_t)p->pid);
            assert_true(p->run_key[0] != '\0');
            if (p->end_ns != 0) {
                struct vigil_wire_process copy = *p;
                copy.run_key = copy.job = copy.program = copy.cwd = NULL;
                copy.argv = NULL;
                g_array_append_val(s->ended, copy);
            }
        }
        for (uint32_t k = 0; k < m->header.count && m->header.type == VIGIL_WIRE_METRICS; k++)
            g_hash_table_add(metrics, GUINT_TO_POINTER(m->metrics[k].id));
        for (uint32_t k = 0; k < m->header.count && m->header.type == VIGIL_WIRE_NAMES; k++) {
            g_hash_table_add(names, name_key(m->process_id, m->names[k].file_id));
            s->names++;
        }
    }
    for (uint32_t i = 0; i < batch.header.count; i++) {
        const struct vigil_wire_message *m = &batch.inner[i];
        switch (m->header.type) {
        case VIGIL_WIRE_ACTIVITIES:
            require_process(processes, m->process_id, sequence, "an activities message");
            for (uint32_t k = 0; k < m->header.count; k++) {
                const struct vigil_activity *a = &m->activities[k];
                if (a->file_id != VIGIL_FILE_NONE) {
                    char *key = name_key(m->process_id, a->file_id);
                    if (!g_hash_table_contains(names, key))
                        fail_msg("batch %" PRIu64 ": activity %" PRIu64 " uses file %s, which it "
                                 "does not name",
                                 sequence, a->seq, key);
                    g_free(key);
                }
                gpointer pid = g_hash_table_lookup(s->pids, &m->process_id);
                char *key = g_strdup_printf("%d:%" PRIu64, (int)GPOINTER_TO_SIZE(pid), a->seq);
                gpointer before;
                if (g_hash_table_lookup_extended(s->activities, key, NULL, &before))
                    fail_msg("activity %s is in batch %" PRIu64 " and batch %zu", key, sequence,
                             (size_t)GPOINTER_TO_SIZE(before));
                g_hash_table_insert(s->activities, key, GSIZE_TO_POINTER((gsize)sequence));
            }
            break;
        case VIGIL_WIRE_ROLLUPS:
            for (uint32_t k = 0; k < m->header.count; k++)
                require_metric(metrics, m->rollups[k].metric_id, sequence);
            s->rollups += m->header.count;
            break;
        case VIGIL_WIRE_SAMPLES:
            for (uint32_t k = 0; k < m->header.count; k++)
                require_metric(metrics, m->samples[k].metric_id, sequence);
            s->samples += m->header.count;
            break;
        case VIGIL_WIRE_ANOMALIES:
            for (uint32_t k = 0; k < m->header.count; k++)
                require_process(processes, m->anomalies[k].process_id, sequence, "an anomaly");
            break;
        case VIGIL_WIRE_STATES:
            for (uint32_t k = 0; k < m->header.count; k++) {
                const struct vigil_wire_state *st = &m->states[k];
                require_process(processes, st->process_id, sequence, "a state");
                if (st->level == VIGIL_LEVEL_NODE) {
                    assert_int_equal(st->cycle, node->cycle);
                    if (g_hash_table_contains(s->node_cycles, &st->cycle))
                        fail_msg("the node's state of cycle %" PRIu64 " came twice", st->cycle);
                    box_insert(s->node_cycles, st->cycle, st->health);
                }
            }
            break;
        case VIGIL_WIRE_WINDOWS:
            for (uint32_t k = 0; k < m->header.count; k++) {
                require_process(processes, m->windows[k].process_id, sequence, "a window");
                struct vigil_wire_window copy = m->windows[k];
                copy.reasons = g_strdup(copy.reasons);
                g_array_append_val(s->windows, copy);
            }
            break;
        case VIGIL_WIRE_SUMMARIES:
            for (uint32_t k = 0; k < m->header.count; k++) {
                require_process(processes, m->summaries[k].process_id, sequence, "a summary");
                assert_non_null(strstr(m->summaries[k].report_json, "\"vigil_report\""));
                box_insert(s->summaries, m->summaries[k].process_id, 1);
            }
            break;
        default:
            break;
        }
    }
    g_hash_table_destroy(processes);
    g_hash_table_destroy(metrics);
    g_hash_table_destroy(names);
    vigil_wire_message_clear(&batch);
}

static gint compare_u64(gconstpointer a, gconstpointer b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Every batch the stand-in has, in sequence order. */
static void seen_all(struct seen *s, const struct fake_txd *t)
{
    seen_init(s);
    GArray *sequences = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, t->batches);
    while (g_hash_table_iter_next(&it, &key, NULL))
        g_array_append_val(sequences, *(uint64_t *)key);
    g_array_sort(sequences, compare_u64);
    for (guint i = 0; i < sequences->len; i++) {
        uint64_t sequence = g_array_index(sequences, uint64_t, i);
        seen_batch(s, sequence, g_hash_table_lookup(t->batches, &sequence));
    }
    g_array_free(sequences, TRUE);
}

static guint seen_activities_of(const struct seen *s, pid_t pid)
{
    char *prefix = g_strdup_printf("%d:", (int)pid);
    guint n = 0;
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, s->activities);
    while (g_hash_table_iter_next(&it, &key, NULL))
        n += g_str_has_prefix(key, prefix);
    g_free(prefix);
    return n;
}

static const struct vigil_wire_process *seen_ended(const struct seen *s, pid_t pid)
{
    for (guint i = 0; i < s->ended->len; i++) {
        const struct vigil_wire_process *p = &g_array_index(s->ended, struct vigil_wire_process, i);
        if (p->pid == pid)
            return p;
    }
    return NULL;
}

/* ---- the JSON sink and the status ------------------------------------------------ */

/* The "pid:seq" of every activity of `pid` in the sink, each once. */
static GHashTable *sink_activities(const char *path, pid_t pid)
{
    GArray *seqs = test_daemon_sink_seqs(path, pid);
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < seqs->len; i++)
        assert_true(g_hash_table_add(seen, g_strdup_printf("%d:%" G_GINT64_FORMAT, (int)pid,
                                                           g_array_index(seqs, gint64, i))));
    g_array_unref(seqs);
    return seen;
}

static JsonObject *member_object(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    if (n == NULL || !JSON_NODE_HOLDS_OBJECT(n))
        fail_msg("no object \"%s\" in the status", name);
    return json_node_get_object(n);
}

static const char *member_string(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    return n != NULL && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_string(n) : NULL;
}

static char *uplink_config(const char *dir, const char *more)
{
    /* The sink, off by default beside an uplink, is the test's witness. */
    return g_strdup_printf("[capture]\nmode = all\nsink_enabled = yes\n"
                           "[uplink]\nendpoint = ipc://%s/txd.sock\n"
                           "spool_dir = %s/spool\nnode_id = %d\n%s",
                           dir, dir, NODE_ID, more != NULL ? more : "");
}

/* Serves until the first batch came; fails after `deadline`. */
static void serve_until_a_batch(struct fake_txd *txd, gint64 deadline)
{
    while (g_hash_table_size(txd->batches) == 0) {
        txd_serve(txd);
        if (g_get_monotonic_time() > deadline)
            fail_msg("no batch came");
    }
}

/* The stand-in for vigil-txd, then vigild with its uplink to it
 * (uplink_config with `more`). */
static void start_with_txd(struct fake_txd *txd, struct test_daemon *d, const char *dir,
                           const char *more)
{
    txd_start(txd, dir);
    char *config = uplink_config(dir, more);
    test_daemon_start(d, dir, DAEMON_LINES, config);
    g_free(config);
}

/* An instrumented dd writing 100 blocks; its pid. */
static pid_t run_dd(const struct test_daemon *d, const char *dir)
{
    char *report_var = g_strdup_printf("VIGIL_REPORT=%s/report-%%p.json", dir);
    const char *vars[] = {report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    char **env = test_daemon_preload_env(d, vars);
    char *of = g_strdup_printf("of=%s/out", dir);
    GPid pid = test_daemon_spawn_dd(dir, env, of, "bs=512", "count=100");
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    g_free(of);
    g_strfreev(env);
    g_free(report_var);
    return pid;
}

/* ---- the tests ------------------------------------------------------------------------ */

/* Everything dd did and was, in batches that each stand on their own. */
static gboolean dd_all_in(const struct seen *s, pid_t pid, guint activities)
{
    const struct vigil_wire_process *p = seen_ended(s, pid);
    if (p == NULL || seen_activities_of(s, pid) < activities ||
        !g_hash_table_contains(s->summaries, &p->process_id) ||
        g_hash_table_size(s->node_cycles) < 3)
        return FALSE;
    for (guint i = 0; i < s->windows->len; i++)
        if (g_array_index(s->windows, struct vigil_wire_window, i).process_id == p->process_id)
            return TRUE;
    return FALSE;
}

static void test_batches_carry_what_the_sink_got(void **state)
{
    const char *dir = *state;
    struct fake_txd txd;
    struct test_daemon d;
    start_with_txd(&txd, &d, dir, NULL);
    pid_t pid = run_dd(&d, dir);
    JsonNode *status = test_daemon_status(&d, pid);
    JsonObject *p = test_daemon_process(status, pid);
    assert_non_null(p);
    guint activities = (guint)json_object_get_int_member(p, "activities");
    assert_true(activities >= 100); /* its 100 writes at least */
    json_node_unref(status);

    struct seen s;
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    for (;;) {
        txd_serve(&txd);
        seen_all(&s, &txd);
        if (dd_all_in(&s, pid, activities))
            break;
        if (g_get_monotonic_time() > deadline)
            fail_msg("waited in vain for dd in the batches: %u batches, %u of %u activities, "
                     "ended %s, %u node cycles",
                     s.batches, seen_activities_of(&s, pid), activities,
                     seen_ended(&s, pid) != NULL ? "yes" : "no", g_hash_table_size(s.node_cycles));
        seen_clear(&s);
    }
    /* The node's state every cycle from the first. */
    for (uint64_t cycle = 1; cycle <= g_hash_table_size(s.node_cycles); cycle++)
        if (!g_hash_table_contains(s.node_cycles, &cycle))
            fail_msg("no node state for cycle %" PRIu64, cycle);
    const struct vigil_wire_process *ended = seen_ended(&s, pid);
    assert_int_equal(ended->exit_code, 0);
    assert_true(ended->end_ns >= ended->start_ns);
    for (guint i = 0; i < s.windows->len; i++) {
        const struct vigil_wire_window *w = &g_array_index(s.windows, struct vigil_wire_window, i);
        if (w->process_id == ended->process_id)
            assert_int_equal(w->activities_forwarded, activities);
        /* Why it was kept, for the run's report card: the mode, when no
         * cycle was abnormal (it had read "because: ."). */
        if (strstr(w->reasons, "[capture] mode = all keeps every cycle") != w->reasons)
            fail_msg("window of process %" PRIu64 " gives as its reasons \"%s\"", w->process_id,
                     w->reasons);
    }
    assert_true(s.names > 0);
    assert_true(s.rollups > 0);
    assert_true(s.samples > 0);

    /* The uplink's figures agree. */
    status = test_daemon_status(&d, 0);
    JsonObject *uplink = member_object(json_node_get_object(status), "uplink");
    /* Acknowledgements still on their way are not counted yet. */
    assert_true(json_object_get_int_member(uplink, "acked") > 0);
    assert_true(json_object_get_int_member(uplink, "sent") >=
                json_object_get_int_member(uplink, "acked"));
    assert_int_equal(json_object_get_int_member(uplink, "refused"), 0);
    assert_int_equal(json_object_get_int_member(uplink, "items_skipped"), 0);
    assert_int_equal(json_object_get_int_member(uplink, "names_missing"), 0);
    assert_int_equal(json_object_get_int_member(uplink, "node_id"), NODE_ID);
    json_node_unref(status);

    char *sink = g_strdup(d.capture_path);
    g_free(test_daemon_stop(&d));
    /* Exactly the sink's activities, each in one batch. */
    GHashTable *in_sink = sink_activities(sink, pid);
    assert_int_equal(g_hash_table_size(in_sink), activities);
    assert_int_equal(seen_activities_of(&s, pid), activities);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, in_sink);
    while (g_hash_table_iter_next(&it, &key, NULL))
        if (!g_hash_table_contains(s.activities, key))
            fail_msg("activity %s is in the sink and in no batch", (const char *)key);
    g_hash_table_destroy(in_sink);
    g_free(sink);
    seen_clear(&s);
    txd_stop(&txd);
}

static gboolean system_state_shown(JsonObject *root)
{
    JsonObject *r = member_object(root, "reasoning");
    JsonNode *u = json_object_get_member(root, "uplink");
    const char *reasoning_state = member_string(r, "system_state");
    const char *uplink_state = u != NULL && JSON_NODE_HOLDS_OBJECT(u)
                                   ? member_string(json_node_get_object(u), "system_state")
                                   : NULL;
    return g_strcmp0(reasoning_state, "ABNORMAL_BAD") == 0 &&
           g_strcmp0(uplink_state, "ABNORMAL_BAD") == 0;
}

/* The system's state comes down and is the node reasoner's parent; the
 * node's own state sent up does not count it. */
static void test_system_state_is_the_nodes_parent(void **state)
{
    const char *dir = *state;
    struct fake_txd txd;
    struct test_daemon d;
    /* No ADPIs and no overload for the node: what it decides is its
     * parent's part alone. */
    start_with_txd(&txd, &d, dir, "[reasoner.node]\nadpis =\nmax_load = 1\n");
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    serve_until_a_batch(&txd, deadline);
    struct vigil_wire_state system = {
        .cycle = 9, .level = VIGIL_LEVEL_SYSTEM, .health = VIGIL_HEALTH_ABNORMAL_BAD};
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_STATES, NODE_ID, 0, 0);
    assert_true(vigil_wire_add_state(w, &system, NULL));
    GBytes *states = vigil_wire_writer_finish(w);
    txd_send(&txd, states);
    g_bytes_unref(states);

    /* The next cycles decide with it. */
    JsonNode *status = NULL;
    for (;;) {
        txd_serve(&txd);
        status = test_daemon_status(&d, 0);
        JsonObject *root = json_node_get_object(status);
        const char *node = member_string(member_object(root, "reasoning"), "node_health");
        if (system_state_shown(root) && g_strcmp0(node, "ABNORMAL_BAD") == 0)
            break;
        if (g_get_monotonic_time() > deadline)
            fail_msg("the system state is not the node's parent: node %s", node);
        json_node_unref(status);
    }
    JsonObject *root = json_node_get_object(status);
    uint64_t from_cycle = (uint64_t)test_daemon_json_int(root, "reasoning", "cycles", NULL);
    json_node_unref(status);

    /* As text, in the uplink's line. */
    const char *const connected[] = {"uplink: ipc://", "as node 42, connected",
                                     "; system ABNORMAL_BAD\n"};
    char *text = test_daemon_status_text_says(d.socket_path, connected, G_N_ELEMENTS(connected));
    assert_null(strstr(text, "warning:"));
    g_free(text);

    /* The node's states sent after it are its own: OK, not its parent's
     * ABNORMAL_BAD coming back up. */
    struct seen s;
    for (;;) {
        txd_serve(&txd);
        seen_all(&s, &txd);
        gboolean later = FALSE;
        GHashTableIter it;
        gpointer key, value;
        g_hash_table_iter_init(&it, s.node_cycles);
        while (g_hash_table_iter_next(&it, &key, &value)) {
            assert_int_equal(GPOINTER_TO_SIZE(value), VIGIL_HEALTH_OK);
            later = later || *(uint64_t *)key > from_cycle;
        }
        seen_clear(&s);
        if (later)
            break;
        if (g_get_monotonic_time() > deadline)
            fail_msg("no node state after cycle %" PRIu64 " came", from_cycle);
    }
    g_free(test_daemon_stop(&d));
    txd_stop(&txd);
}

static gboolean waiting_in_spool(JsonObject *root)
{
    JsonObject *u = member_object(root, "uplink");
    return json_object_get_int_member(u, "unacked") >= 5 &&
           json_object_get_int_member(u, "spooled_batches") >= 1 &&
           !json_object_get_boolean_member(u, "connected");
}

/* Without a server the batches wait, in the spool over a stop; the next
 * vigild sends every one of them. */
static void test_spooled_batches_replayed_after_a_restart(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    /* Numbered from 1, so that the first run's batches are 1..N: a folder
     * without a sequence file would start at the clock. */
    char *spool = g_build_filename(dir, "spool", NULL);
    char *first_sequence = g_build_filename(spool, "sequence", NULL);
    assert_int_equal(g_mkdir_with_parents(spool, 0700), 0);
    assert_true(g_file_set_contents(first_sequence, "1\n", -1, NULL));
    g_free(first_sequence);
    g_free(spool);
    /* Connected at start: the replay comes before the second run's own
     * batches, whose cycles count from 1 again (seen_all would take them
     * for the first run's, sent twice). */
    char *config = uplink_config(dir, "spool_after_ms = 200\nconnect_delay_max_ms = 0\n");
    test_daemon_start(&d, dir, DAEMON_LINES, config);
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    for (;;) {
        JsonNode *status = test_daemon_status(&d, 0);
        gboolean waiting = waiting_in_spool(json_node_get_object(status));
        json_node_unref(status);
        if (waiting)
            break;
        if (g_get_monotonic_time() > deadline)
            fail_msg("batches do not wait in the spool");
        g_usleep(SERVE_MS * 1000); /* between polls of a condition, not to synchronise */
    }
    char *log = test_daemon_stop(&d);
    g_free(log);
    /* The sequence file says the next number: every one below was used. */
    char *sequence_path = g_build_filename(dir, "spool", "sequence", NULL);
    char *text = NULL;
    assert_true(g_file_get_contents(sequence_path, &text, NULL, NULL));
    uint64_t first_run = g_ascii_strtoull(text, NULL, 10) - 1;
    assert_true(first_run >= 5);
    g_free(text);
    g_free(sequence_path);

    struct fake_txd txd;
    txd_start(&txd, dir);
    test_daemon_start(&d, dir, DAEMON_LINES, config);
    g_free(config);
    for (;;) {
        txd_serve(&txd);
        guint arrived = 0;
        for (uint64_t sequence = 1; sequence <= first_run; sequence++)
            arrived += g_hash_table_contains(txd.batches, &sequence);
        if (arrived == first_run)
            break;
        if (g_get_monotonic_time() > deadline)
            fail_msg("%u of the %" PRIu64 " batches of the first run arrived", arrived, first_run);
    }
    /* The first run's cycles, each once: nothing was lost over the stop. */
    struct seen s;
    seen_all(&s, &txd);
    for (uint64_t sequence = 1; sequence <= first_run; sequence++) {
        gpointer cycle = g_hash_table_lookup(s.first_cycles, &sequence);
        assert_int_equal(GPOINTER_TO_SIZE(cycle), sequence);
    }
    seen_clear(&s);
    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *uplink = member_object(json_node_get_object(status), "uplink");
    assert_int_equal(json_object_get_int_member(uplink, "replayed"), first_run);
    json_node_unref(status);
    g_free(test_daemon_stop(&d));
    txd_stop(&txd);
}

/* A batch vigil-txd refuses is counted, and `vigil status` warns of it. */
static void test_a_refused_batch_is_warned_of(void **state)
{
    const char *dir = *state;
    struct fake_txd txd;
    struct test_daemon d;
    start_with_txd(&txd, &d, dir, NULL);
    txd.ack = FALSE; /* acks go in txd_serve: none went yet */
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    serve_until_a_batch(&txd, deadline);
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, txd.batches);
    assert_true(g_hash_table_iter_next(&it, &key, NULL));
    struct vigil_wire_refusal refusal = {.reason = "the test refuses it"};
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_REFUSED, NODE_ID, *(uint64_t *)key, 0);
    assert_true(vigil_wire_add_refusal(w, &refusal, NULL));
    GBytes *refused = vigil_wire_writer_finish(w);
    txd_send(&txd, refused);
    g_bytes_unref(refused);
    txd.ack = TRUE;
    for (;;) {
        txd_serve(&txd);
        JsonNode *status = test_daemon_status(&d, 0);
        gint64 n = test_daemon_json_int(json_node_get_object(status), "uplink", "refused", NULL);
        json_node_unref(status);
        if (n == 1)
            break;
        if (g_get_monotonic_time() > deadline)
            fail_msg("the refusal is not counted");
    }
    const char *const warned[] = {
        "  warning: 0 batches (0 bytes) dropped from the full spool, 0 (0 bytes) dropped from "
        "full memory while the spool failed, 1 refused by vigil-txd (kept in ",
        "refused by vigil-txd: the test refuses it"};
    g_free(test_daemon_status_text_says(d.socket_path, warned, G_N_ELEMENTS(warned)));
    g_free(test_daemon_stop(&d));
    txd_stop(&txd);
}

/* [uplink] is read at the start only: a reload that changes it says so
 * and keeps the running uplink. */
static void test_reload_keeps_the_uplink(void **state)
{
    const char *dir = *state;
    struct fake_txd txd;
    struct test_daemon d;
    start_with_txd(&txd, &d, dir, NULL);
    char *changed =
        g_strdup_printf("[daemon]\nsocket = %s\n%s[capture]\nsink = %s\nsink_enabled = yes\n"
                        "[uplink]\nendpoint = ipc://%s/elsewhere.sock\n"
                        "spool_dir = %s/spool\nnode_id = %d\n",
                        d.socket_path, DAEMON_LINES, d.capture_path, dir, dir, NODE_ID);
    assert_true(g_file_set_contents(d.config_path, changed, -1, NULL));
    g_free(changed);
    assert_int_equal(kill(d.pid, SIGHUP), 0);
    gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
    guint before = 0;
    for (;;) {
        txd_serve(&txd);
        JsonNode *status = test_daemon_status(&d, 0);
        JsonObject *root = json_node_get_object(status);
        gint64 reloads = test_daemon_json_int(root, "daemon", "reloads", NULL);
        const char *endpoint = member_string(member_object(root, "uplink"), "endpoint");
        assert_true(g_str_has_suffix(endpoint, "/txd.sock"));
        json_node_unref(status);
        if (reloads == 1 && before == 0)
            before = g_hash_table_size(txd.batches);
        /* Batches still come to the first endpoint after the reload. */
        if (before > 0 && g_hash_table_size(txd.batches) > before)
            break;
        if (g_get_monotonic_time() > deadline)
            fail_msg("no reload, or no batch after it");
    }
    test_daemon_stop_saying(&d, "reload: [uplink] changed; it applies at the next start");
    txd_stop(&txd);
}

TEST_MAIN(TEST_WITH_DIR(test_batches_carry_what_the_sink_got),
          TEST_WITH_DIR(test_system_state_is_the_nodes_parent),
          TEST_WITH_DIR(test_spooled_batches_replayed_after_a_restart),
          TEST_WITH_DIR(test_a_refused_batch_is_warned_of),
          TEST_WITH_DIR(test_reload_keeps_the_uplink))
