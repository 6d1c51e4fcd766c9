/* vigil-txd — the ROUTER socket and the loop around it.
 *
 * Each vigild connects with a DEALER socket and sends BATCH messages; each
 * is answered, once PostgreSQL has committed it (or found it stored
 * before), with an ACK naming its (node, sequence). A batch that can never
 * be stored (malformed, another version, rows the database rejects) is
 * answered with REFUSED and the reason, so that its daemon keeps it aside
 * instead of sending it for ever. While the database is down batches wait
 * here, up to pending_max_bytes, unacknowledged; past that they are not
 * kept at all, and their daemons, hearing nothing, spool them. Nothing is
 * acknowledged that is not committed, so nothing is lost. What waits is
 * stored a group at a time, one transaction a group, by the store's
 * thread (store_thread.c): while PostgreSQL takes one group this loop
 * receives and decodes the next batches, and answers the group when the
 * thread hands it back. The group on its way stays at the head of the
 * queue, untouched, until then.
 *
 * Once a cycle the system reasoner decides and its state goes to every
 * daemon heard from recently. */
#include <errno.h>
#include <string.h>
#include <sys/signalfd.h>
#include <zmq.h>

#include "txd.h"
#include "vigil/curve.h"
#include "vigil/health.h"
#include "vigil/schema.h"

#define RETRY_FIRST_MS 100u
/* A group stored in one transaction: one claim, one COPY per table and
 * one commit (one fdatasync of the WAL, 4.7 ms on the disk measured) for
 * up to this many batches, and a group's acknowledgements not long in
 * coming (a minimal batch costs about 0.5 ms of CPU in all: 256 of them,
 * about a tenth of a second on two cores). */
#define GROUP_MAX_BATCHES 256u
#define GROUP_MAX_BYTES   (8u << 20)

struct pending {
    GBytes *identity;
    struct vigil_wire_message batch;
    size_t bytes;
    char *key;                 /* batch_key(), in pending_batches */
    char *curve_key;           /* the sender's, or NULL without CURVE */
    uint32_t crc32;            /* the batch message's */
    gboolean sender_confirmed; /* no CURVE, or the node's key confirmed before it came: its
                                * state counted on arrival, its key not looked up again */
};

struct peer {
    GBytes *identity;
    uint64_t node_id;
    int64_t last_seen_ns; /* monotonic */
};

struct txd_server {
    struct txd_settings settings;
    void *context, *router, *zap;
    GHashTable *authorized; /* admitted CURVE public keys (a set), or NULL: a lookup a handshake,
                             * whatever the number of nodes */
    int signal_fd;
    gboolean stopping;
    struct txd_store *store; /* the store thread's while it runs */
    struct txd_store_thread *store_thread;
    /* The job posted to the store's thread, and the group it holds: the
     * first `job.n` of the queue. */
    struct txd_store_job job;
    struct txd_group_item items[GROUP_MAX_BATCHES];
    gboolean job_posted;
    gboolean timers_due; /* the store's maintenance and levels: once a cycle at least */
    /* The system state to store with the next job, when it changed. */
    gboolean state_wanted;
    struct vigil_wire_state state_to_store;
    int64_t state_realtime_ns;
    struct txd_system_reasoner *system;
    enum vigil_health last_system_state;
    GQueue pending;              /* struct pending, oldest first */
    GHashTable *pending_batches; /* batch_key() of those waiting */
    uint64_t pending_bytes;
    gboolean pending_full; /* logged once per episode */
    GHashTable *peers;     /* identity (GBytes) → struct peer */
    GHashTable *node_keys; /* node id → its CURVE key, as the warehouse confirmed it */
    int64_t next_retry_ns, next_cycle_ns;
    guint retry_ms;
    gboolean database_down; /* logged once per outage */
    uint64_t messages_refused;
};

static int64_t monotonic_ns(void)
{
    return g_get_monotonic_time() * 1000;
}

/* A resend of a batch still waiting has the same key; a batch reusing its
 * sequence with other content does not, and waits to be refused. */
static char *batch_key(uint64_t node_id, uint64_t sequence, uint32_t crc32)
{
    return g_strdup_printf("%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT ":%08" G_GINT32_MODIFIER "x",
                           node_id, sequence, crc32);
}

static void pending_free(struct pending *p)
{
    if (p->identity != NULL)
        g_bytes_unref(p->identity);
    vigil_wire_message_clear(&p->batch);
    g_free(p->key);
    g_free(p->curve_key);
    g_free(p);
}

static void peer_free(gpointer data)
{
    struct peer *p = data;
    g_bytes_unref(p->identity);
    g_free(p);
}

/* ---- sending ---------------------------------------------------------------------------- */

static void send_to(struct txd_server *s, GBytes *identity, GBytes *message)
{
    gsize id_length, length;
    const void *id = g_bytes_get_data(identity, &id_length);
    const void *data = g_bytes_get_data(message, &length);
    /* A peer that has gone is not an error: it will resend what it has no
     * answer for. ZMQ_DONTWAIT: a peer that does not read must not stop
     * the server. */
    if (zmq_send(s->router, id, id_length, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 ||
        zmq_send(s->router, data, length, ZMQ_DONTWAIT) < 0)
        g_debug("a reply to a daemon was not sent: %s", zmq_strerror(zmq_errno()));
}

static void send_ack(struct txd_server *s, GBytes *identity, const struct vigil_wire_header *h)
{
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_ACK, h->node_id, h->sequence, 0);
    GBytes *message = vigil_wire_writer_finish(w);
    send_to(s, identity, message);
    g_bytes_unref(message);
}

static void send_refusal(struct txd_server *s, GBytes *identity, uint64_t node_id,
                         uint64_t sequence, const char *reason)
{
    vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_REFUSED, node_id, sequence, 0);
    /* A reason that is not valid text (from the decoder's view of hostile
     * bytes, say) is made so rather than lost. */
    char *valid = g_utf8_make_valid(reason, -1);
    struct vigil_wire_refusal refusal = {.reason = valid};
    GError *error = NULL;
    if (!vigil_wire_add_refusal(w, &refusal, &error)) {
        g_warning("cannot word a refusal: %s", error->message);
        g_error_free(error);
        vigil_wire_writer_free(w);
    } else {
        GBytes *message = vigil_wire_writer_finish(w);
        send_to(s, identity, message);
        g_bytes_unref(message);
    }
    g_free(valid);
}

/* ---- the system state --------------------------------------------------------------------- */

static void note_peer(struct txd_server *s, GBytes *identity, uint64_t node_id)
{
    struct peer *p = g_hash_table_lookup(s->peers, identity);
    if (p == NULL) {
        p = g_new0(struct peer, 1);
        p->identity = g_bytes_ref(identity);
        g_hash_table_insert(s->peers, p->identity, p);
        g_message("node %" G_GUINT64_FORMAT " connected", node_id);
    }
    p->node_id = node_id;
    p->last_seen_ns = monotonic_ns();
}

static void note_node_states(struct txd_server *s, const struct vigil_wire_message *batch)
{
    const struct vigil_wire_node *node = &batch->inner[0].nodes[0];
    int64_t cycle_end = (int64_t)node->cycle_end_ns + node->realtime_offset_ns;
    for (uint32_t i = 0; i < batch->header.count; i++) {
        const struct vigil_wire_message *m = &batch->inner[i];
        if (m->header.type != VIGIL_WIRE_STATES)
            continue;
        for (uint32_t k = 0; k < m->header.count; k++)
            if (m->states[k].level == VIGIL_LEVEL_NODE && m->states[k].cycle == node->cycle)
                txd_system_reasoner_node_state(s->system, batch->header.node_id,
                                               m->states[k].health, cycle_end);
    }
}

static void system_cycle(struct txd_server *s)
{
    struct vigil_wire_state state;
    int64_t now_realtime_ns = g_get_real_time() * 1000;
    txd_system_reasoner_decide(s->system, now_realtime_ns, &state);
    /* One on its way to the database is waited for: it is stored once. */
    gboolean state_on_its_way = s->job_posted && s->job.has_state;
    if (state.health != s->last_system_state && !state_on_its_way) {
        g_message("system state %s (%u nodes: %u bad, %u good, %u other issues)",
                  vigil_health_name(state.health), txd_system_reasoner_nodes(s->system),
                  state.bad_issues, state.good_issues, state.other_issues);
        /* Stored by the store's thread with its next job; tried again at
         * the next cycle when it was not. */
        s->state_wanted = TRUE;
        s->state_to_store = state;
        s->state_realtime_ns = now_realtime_ns;
    }
    s->timers_due = TRUE;
    /* Daemons not heard from for a while have gone; they get the state
     * again when they come back. */
    int64_t quiet_ns =
        (int64_t)MAX(s->settings.node_state_max_age_ms, 3 * s->settings.cycle_ms) * 1000000;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, s->peers);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct peer *p = value;
        if (monotonic_ns() - p->last_seen_ns > quiet_ns) {
            g_hash_table_iter_remove(&it);
            continue;
        }
        /* Each daemon hears the system without itself: its own state
         * must not come back to it as its parent's. */
        struct vigil_wire_state others;
        txd_system_reasoner_decide_for(s->system, p->node_id, &others);
        vigil_wire_writer *w = vigil_wire_writer_new(VIGIL_WIRE_STATES, p->node_id, 0, 0);
        GError *error = NULL;
        if (!vigil_wire_add_state(w, &others, &error)) {
            g_warning("system state not sent: %s", error->message);
            g_error_free(error);
            vigil_wire_writer_free(w);
            continue;
        }
        GBytes *message = vigil_wire_writer_finish(w);
        send_to(s, p->identity, message);
        g_bytes_unref(message);
    }
}

/* ---- batches ----------------------------------------------------------------------------------
 */

static void refuse_message(struct txd_server *s, GBytes *identity, const void *data, size_t length,
                           const char *reason)
{
    s->messages_refused++;
    struct vigil_wire_header h;
    gboolean named = vigil_wire_peek_header(data, length, &h, NULL);

    if (named) {
        g_warning("refused message %" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT " (%zu bytes): %s",
                  h.node_id, h.sequence, length, reason);
        send_refusal(s, identity, h.node_id, h.sequence, reason);
    } else {
        g_warning("refused a message of %zu bytes that names no batch: %s", length, reason);
    }
}

/* The CRC-32 in a message's header: it covers the whole message, so it
 * stands for the batch's content. */
static uint32_t message_crc32(const uint8_t *data)
{
    const uint8_t *c = data + VIGIL_WIRE_CRC_OFFSET;
    return (uint32_t)c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
}

/* With CURVE, whether the warehouse has confirmed already that the node
 * id is the sender key's. A key this server last saw confirmed for another
 * is not refused here but in the store, which reads node_keys again: an
 * administrator may have forgotten or set the node's key since (`vigil
 * node keys`), and the refusal is counted on the node's row there. Either
 * way an unconfirmed batch's state counts only once it is stored. */
static gboolean sender_confirmed(struct txd_server *s, const char *curve_key, uint64_t node_id)
{
    if (curve_key == NULL)
        return TRUE;
    const char *owner = g_hash_table_lookup(s->node_keys, &node_id);
    return owner != NULL && strcmp(owner, curve_key) == 0;
}

static void take_batch(struct txd_server *s, GBytes *identity, const char *curve_key,
                       const void *data, size_t length)
{
    struct pending *p = g_new0(struct pending, 1);
    GError *error = NULL;
    if (!vigil_wire_decode(data, length, &p->batch, &error)) {
        refuse_message(s, identity, data, length, error->message);
        g_error_free(error);
        g_free(p);
        return;
    }
    if (p->batch.header.type != VIGIL_WIRE_BATCH) {
        char *reason = g_strdup_printf("a %s message where a batch was expected",
                                       vigil_wire_type_name(p->batch.header.type));
        refuse_message(s, identity, data, length, reason);
        g_free(reason);
        vigil_wire_message_clear(&p->batch);
        g_free(p);
        return;
    }
    const struct vigil_wire_header *h = &p->batch.header;
    gboolean known = sender_confirmed(s, curve_key, h->node_id);
    /* A node's state counts as soon as it comes (batches may wait for the
     * database), unless the node id's key is still to be confirmed by the
     * warehouse: then once it is stored. */
    if (known) {
        note_peer(s, identity, h->node_id);
        note_node_states(s, &p->batch);
        p->sender_confirmed = TRUE;
    }
    p->crc32 = message_crc32(data);
    p->curve_key = g_strdup(curve_key);
    char *key = batch_key(h->node_id, h->sequence, p->crc32);
    if (g_hash_table_contains(s->pending_batches, key)) {
        /* A resend of one still waiting: the first copy is answered. */
        g_free(key);
        pending_free(p);
        return;
    }
    /* An empty queue takes any batch, however large, so that a batch over
     * the limit is still answered. */
    if (!g_queue_is_empty(&s->pending) &&
        s->pending_bytes + length > s->settings.pending_max_bytes) {
        if (!s->pending_full)
            g_warning("%" G_GUINT64_FORMAT " bytes of batches wait for the database, the "
                      "[txd] pending_max_bytes; new ones are not acknowledged, and their "
                      "daemons keep them in their spools",
                      s->pending_bytes);
        s->pending_full = TRUE;
        g_free(key);
        pending_free(p);
        return;
    }
    s->pending_full = FALSE;
    p->identity = g_bytes_ref(identity);
    p->bytes = length;
    p->key = key;
    s->pending_bytes += length;
    g_hash_table_add(s->pending_batches, g_strdup(key));
    g_queue_push_tail(&s->pending, p);
}

/* Posts the store's thread its next job, when it has none: one group of
 * what waits, oldest first (up to GROUP_MAX_BATCHES and GROUP_MAX_BYTES, at
 * least one batch, one transaction, so that one commit serves them all),
 * the system state when it changed, and the store's timers. */
static void post_job(struct txd_server *s)
{
    /* Stopping: only the job on its way is finished. */
    if (s->job_posted || s->stopping)
        return;
    gboolean group = !g_queue_is_empty(&s->pending) && monotonic_ns() >= s->next_retry_ns;
    if (!group && !s->state_wanted && !s->timers_due)
        return;
    guint n = 0;
    uint64_t bytes = 0;
    for (GList *l = s->pending.head; group && l != NULL && n < GROUP_MAX_BATCHES; l = l->next) {
        struct pending *p = l->data;
        if (n > 0 && bytes + p->bytes > GROUP_MAX_BYTES)
            break;
        bytes += p->bytes;
        /* A key this server has confirmed already is not looked up again:
         * one statement less a batch. */
        s->items[n++] = (struct txd_group_item){
            .batch = &p->batch,
            .origin = {.curve_key = p->sender_confirmed ? NULL : p->curve_key,
                       .crc32 = p->crc32,
                       .bytes = p->bytes},
        };
    }
    s->job.items = s->items;
    s->job.n = n;
    s->job.has_state = s->state_wanted;
    s->job.state = s->state_to_store;
    s->job.state_realtime_ns = s->state_realtime_ns;
    s->state_wanted = FALSE;
    s->timers_due = FALSE;
    s->job_posted = TRUE;
    txd_store_thread_post(s->store_thread, &s->job);
}

/* The system state's part of a job done. */
static void state_done(struct txd_server *s, struct txd_store_job *job)
{
    if (!job->has_state)
        return;
    if (job->state_stored)
        s->last_system_state = job->state.health;
    else if (job->state_error != NULL)
        g_debug("system state not stored: %s", job->state_error->message);
    g_clear_error(&job->state_error);
}

/* The group's part of a job done: its batches answered and gone from the
 * queue, or all kept for the next try when the database failed. */
static void group_done(struct txd_server *s, struct txd_store_job *job)
{
    if (job->n == 0)
        return;
    if (job->result == TXD_RETRY) {
        if (!s->database_down)
            g_warning("the warehouse is unavailable, batches wait (%u now): %s",
                      g_queue_get_length(&s->pending), job->error->message);
        else
            g_debug("the warehouse is still unavailable: %s", job->error->message);
        g_clear_error(&job->error);
        s->database_down = TRUE;
        s->next_retry_ns = monotonic_ns() + (int64_t)s->retry_ms * 1000000;
        s->retry_ms = MIN(s->retry_ms * 2, s->settings.retry_max_ms);
        return;
    }
    if (s->database_down)
        g_message("the warehouse is back; storing the %u batches that waited",
                  g_queue_get_length(&s->pending));
    s->database_down = FALSE;
    s->retry_ms = RETRY_FIRST_MS;
    /* Committed: each batch is answered now. */
    for (guint i = 0; i < job->n; i++) {
        struct pending *p = g_queue_peek_head(&s->pending);
        g_assert(p != NULL && job->items[i].batch == &p->batch);
        const struct vigil_wire_header *h = &p->batch.header;
        if (job->items[i].result == TXD_REFUSED) {
            g_warning("batch %" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT " cannot be stored: %s",
                      h->node_id, h->sequence, job->items[i].error->message);
            send_refusal(s, p->identity, h->node_id, h->sequence, job->items[i].error->message);
            g_clear_error(&job->items[i].error);
        } else {
            send_ack(s, p->identity, h);
            /* Stored with its key: the node's key now (an earlier one may
             * have been forgotten since). */
            if (p->curve_key != NULL && !p->sender_confirmed)
                g_hash_table_replace(s->node_keys, g_memdup2(&h->node_id, sizeof h->node_id),
                                     g_strdup(p->curve_key));
            if (!p->sender_confirmed) {
                note_peer(s, p->identity, h->node_id);
                note_node_states(s, &p->batch);
            }
        }
        g_hash_table_remove(s->pending_batches, p->key);
        s->pending_bytes -= p->bytes;
        pending_free(g_queue_pop_head(&s->pending));
    }
}

/* The job the store's thread has done, if it has. */
static void take_job(struct txd_server *s)
{
    struct txd_store_job *job = txd_store_thread_take(s->store_thread);
    if (job == NULL)
        return;
    g_assert(job == &s->job && s->job_posted);
    s->job_posted = FALSE;
    group_done(s, job);
    state_done(s, job);
}

/* Reads one whole multipart message from the ROUTER: the peer's identity,
 * then exactly one frame. */
static void receive_one(struct txd_server *s)
{
    zmq_msg_t identity, body;
    zmq_msg_init(&identity);
    if (zmq_msg_recv(&identity, s->router, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&identity);
        return;
    }
    GBytes *id = g_bytes_new(zmq_msg_data(&identity), zmq_msg_size(&identity));
    zmq_msg_close(&identity);
    zmq_msg_init(&body);
    int frames = 0;
    gboolean more = TRUE;
    while (more) {
        if (frames > 0)
            zmq_msg_close(&body), zmq_msg_init(&body);
        if (zmq_msg_recv(&body, s->router, 0) < 0)
            break;
        frames++;
        more = zmq_msg_more(&body);
        if (frames == 1 && !more)
            /* With CURVE, the ZAP handler made the client's public key the
             * connection's User-Id. */
            take_batch(s, id, s->zap != NULL ? zmq_msg_gets(&body, "User-Id") : NULL,
                       zmq_msg_data(&body), zmq_msg_size(&body));
    }
    if (frames != 1) {
        s->messages_refused++;
        g_warning("refused a message of %d frames; a daemon sends one frame a batch", frames);
    }
    zmq_msg_close(&body);
    g_bytes_unref(id);
}

/* ---- CURVE: the ZAP handler ------------------------------------------------------------------ */

static void zap_reply(void *zap, const char *version, zmq_msg_t *request_id, const char *status,
                      const char *text, const char *user)
{
    zmq_send(zap, version, strlen(version), ZMQ_SNDMORE);
    zmq_send(zap, zmq_msg_data(request_id), zmq_msg_size(request_id), ZMQ_SNDMORE);
    zmq_send(zap, status, strlen(status), ZMQ_SNDMORE);
    zmq_send(zap, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(zap, user, strlen(user), ZMQ_SNDMORE);
    zmq_send(zap, "", 0, 0);
}

/* One ZAP request (RFC 27): version, request id, domain, address, routing
 * id, mechanism, then the client's 32-byte public key for CURVE. FALSE
 * when none was waiting. */
static gboolean zap_handle_one(struct txd_server *s)
{
    zmq_msg_t frames[8];
    int n = 0;
    gboolean more = TRUE;
    while (more) {
        zmq_msg_t scratch;
        zmq_msg_t *m = n < 8 ? &frames[n] : &scratch;
        zmq_msg_init(m);
        /* The first frame only if one waits; the others come with it. */
        if (zmq_msg_recv(m, s->zap, n == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            zmq_msg_close(m);
            break;
        }
        more = zmq_msg_more(m);
        if (n < 8)
            n++;
        else
            zmq_msg_close(m);
    }
    if (n >= 7) {
        char address[64] = "?";
        g_snprintf(address, sizeof address, "%.*s", (int)MIN(zmq_msg_size(&frames[3]), 63u),
                   (const char *)zmq_msg_data(&frames[3]));
        char key[VIGIL_CURVE_KEY_CHARS + 1] = "";
        gboolean admitted = FALSE;
        if (zmq_msg_size(&frames[6]) == 32 &&
            zmq_z85_encode(key, zmq_msg_data(&frames[6]), 32) != NULL)
            admitted = g_hash_table_contains(s->authorized, key);
        if (!admitted)
            g_warning("refused a daemon at %s: its CURVE key %s is not in [txd] "
                      "curve_authorized_keys",
                      address, key[0] != '\0' ? key : "(none)");
        zap_reply(s->zap, "1.0", &frames[1], admitted ? "200" : "400",
                  admitted ? "OK" : "key not authorized", admitted ? key : "");
    }
    for (int i = 0; i < n; i++)
        zmq_msg_close(&frames[i]);
    return n > 0;
}

/* Every ZAP request waiting: a handshake ends only once it is answered,
 * and with a thousand nodes reconnecting after a restart one answer a turn
 * (a turn may store a group) would keep most of them waiting for seconds.
 * A REP socket holds one request at a time, so they are taken one by one. */
static void zap_handle(struct txd_server *s)
{
    while (zap_handle_one(s))
        ;
}

static gboolean setup_curve(struct txd_server *s, GError **error)
{
    struct vigil_curve_pair pair;
    if (!vigil_curve_pair_read(s->settings.curve_key_file, &pair, error))
        return FALSE;
    char **keys = vigil_curve_authorized_read(s->settings.curve_authorized_keys, error);
    if (keys == NULL) {
        memset(&pair, 0, sizeof pair);
        return FALSE;
    }
    s->authorized = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (char **k = keys; *k != NULL; k++)
        g_hash_table_add(s->authorized, *k);
    g_free(keys); /* its strings are the set's now */
    g_message("CURVE: %u daemon keys admitted", g_hash_table_size(s->authorized));
    /* The handler must be bound before the socket that asks it. */
    s->zap = zmq_socket(s->context, ZMQ_REP);
    int on = 1;
    gboolean ok = s->zap != NULL && zmq_bind(s->zap, "inproc://zeromq.zap.01") == 0 &&
                  zmq_setsockopt(s->router, ZMQ_CURVE_SERVER, &on, sizeof on) == 0 &&
                  zmq_setsockopt(s->router, ZMQ_CURVE_SECRETKEY, pair.secret_key,
                                 VIGIL_CURVE_KEY_CHARS + 1) == 0 &&
                  zmq_setsockopt(s->router, ZMQ_ZAP_DOMAIN, "vigil", 5) == 0;
    memset(&pair, 0, sizeof pair);
    if (!ok)
        g_set_error(error, TXD_ERROR, TXD_ERROR_REFUSE, "cannot set up CURVE: %s",
                    zmq_strerror(zmq_errno()));
    return ok;
}

/* ---- the server ---------------------------------------------------------------------------------
 */

static void apply_rule(struct txd_server *s, const struct vigil_reasoner_rule *rule)
{
    if (s->system == NULL)
        s->system = txd_system_reasoner_new(rule, s->settings.node_state_max_age_ms);
    else
        txd_system_reasoner_set_rule(s->system, rule, s->settings.node_state_max_age_ms);
}

struct txd_server *txd_server_new(const struct txd_settings *settings,
                                  const struct vigil_warehouse_settings *warehouse,
                                  const struct vigil_reasoner_rule *rule, int signal_fd,
                                  GError **error)
{
    struct txd_server *s = g_new0(struct txd_server, 1);
    vigil_settings_copy(&txd_keys, &s->settings, settings);
    s->signal_fd = signal_fd;
    s->retry_ms = RETRY_FIRST_MS;
    s->last_system_state = 0;
    g_queue_init(&s->pending);
    s->pending_batches = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    s->peers = g_hash_table_new_full(g_bytes_hash, g_bytes_equal, NULL, peer_free);
    s->node_keys = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    apply_rule(s, rule);
    s->store = txd_store_new(warehouse);
    txd_store_set_levels_interval(s->store, s->settings.levels_interval_s);
    s->timers_due = TRUE;
    s->context = zmq_ctx_new();
    s->router = txd_router_new(s->context, settings->receive_batches_per_node, error);
    if (s->router == NULL) {
        txd_server_free(s);
        return NULL;
    }
    if (settings->curve_key_file[0] != '\0' && !setup_curve(s, error)) {
        txd_server_free(s);
        return NULL;
    }
    if (zmq_bind(s->router, settings->bind) != 0) {
        g_set_error(error, TXD_ERROR, TXD_ERROR_REFUSE, "[txd] bind = %s: %s", settings->bind,
                    zmq_strerror(zmq_errno()));
        txd_server_free(s);
        return NULL;
    }
    /* The database may be down at start: the server serves anyway, and the
     * batches wait until it comes (the daemons spool meanwhile). But a
     * schema that is not this version's is the admin's to fix, now. */
    GError *local = NULL;
    if (!txd_store_connect(s->store, &local)) {
        if (g_error_matches(local, TXD_ERROR, TXD_ERROR_RETRY)) {
            g_warning("the warehouse is unavailable at start; batches will wait: %s",
                      local->message);
            g_error_free(local);
            s->database_down = TRUE;
        } else {
            g_propagate_error(error, local);
            txd_server_free(s);
            return NULL;
        }
    }
    /* Made after the connection at start, which is this thread's alone. */
    s->store_thread = txd_store_thread_new(s->store, error);
    if (s->store_thread == NULL) {
        txd_server_free(s);
        return NULL;
    }
    g_message("serving %s%s", settings->bind, s->zap != NULL ? " with CURVE" : "");
    return s;
}

void txd_server_set_rule(struct txd_server *s, const struct vigil_reasoner_rule *rule)
{
    apply_rule(s, rule);
}

gboolean txd_server_stopping(const struct txd_server *s)
{
    return s->stopping;
}

void txd_server_stop(struct txd_server *s)
{
    s->stopping = TRUE;
}

/* One turn of the loop: waits for a message, a signal or a timer. */
void txd_server_turn(struct txd_server *s, void (*on_signal)(struct txd_server *s, int signal))
{
    int64_t now = monotonic_ns();
    if (s->next_cycle_ns == 0)
        s->next_cycle_ns = now + (int64_t)s->settings.cycle_ms * 1000000;
    int64_t wake = s->next_cycle_ns;
    /* With a job on its way, the store's thread wakes the poll when done. */
    if (!s->job_posted && !g_queue_is_empty(&s->pending))
        wake = MIN(wake, MAX(s->next_retry_ns, now));
    long timeout_ms = (long)MAX((wake - now + 999999) / 1000000, 0);

    zmq_pollitem_t items[4] = {
        {.socket = s->router, .events = ZMQ_POLLIN},
        {.fd = s->signal_fd, .events = ZMQ_POLLIN},
        {.fd = txd_store_thread_fd(s->store_thread), .events = ZMQ_POLLIN},
        {.socket = s->zap, .events = ZMQ_POLLIN},
    };
    int n_items = s->zap != NULL ? 4 : 3;
    if (zmq_poll(items, n_items, timeout_ms) < 0 && zmq_errno() != EINTR)
        g_warning("zmq_poll: %s", zmq_strerror(zmq_errno()));
    if (items[1].revents & ZMQ_POLLIN) {
        struct signalfd_siginfo info;
        while (read(s->signal_fd, &info, sizeof info) == sizeof info)
            on_signal(s, (int)info.ssi_signo);
    }
    if (items[2].revents & ZMQ_POLLIN)
        take_job(s);
    if (items[0].revents & ZMQ_POLLIN)
        /* A bounded number per turn, so that timers still run under load. */
        for (int i = 0; i < 256; i++) {
            int events = 0;
            size_t size = sizeof events;
            if (zmq_getsockopt(s->router, ZMQ_EVENTS, &events, &size) != 0 ||
                !(events & ZMQ_POLLIN))
                break;
            receive_one(s);
        }
    /* Handshakes first, every turn, whether or not the poll saw one (it
     * takes none that come during the reads): a group stored before them
     * would hold every connecting node back for as long as it takes. */
    if (s->zap != NULL)
        zap_handle(s);
    if (monotonic_ns() >= s->next_cycle_ns) {
        system_cycle(s);
        s->next_cycle_ns += (int64_t)s->settings.cycle_ms * 1000000;
        if (s->next_cycle_ns < monotonic_ns()) /* a long stall: do not catch up */
            s->next_cycle_ns = monotonic_ns() + (int64_t)s->settings.cycle_ms * 1000000;
    }
    post_job(s);
}

void txd_server_free(struct txd_server *s)
{
    if (s == NULL)
        return;
    /* The group on its way is finished (bounded by the statement and lock
     * timeouts, as a turn was when the loop stored it itself) and answered
     * if it committed; what else waits is not acknowledged, and its
     * daemons send it again. */
    if (s->store_thread != NULL) {
        txd_store_thread_stop(s->store_thread);
        if (s->job_posted)
            take_job(s);
        txd_store_thread_free(s->store_thread);
    }
    if (!g_queue_is_empty(&s->pending))
        g_message("stopping with %u batches not stored: their daemons send them again",
                  g_queue_get_length(&s->pending));
    struct txd_store_counts c;
    txd_store_counts(s->store, &c);
    g_message("stored %" G_GUINT64_FORMAT " batches (%" G_GUINT64_FORMAT
              " rows), %" G_GUINT64_FORMAT " seen before, %" G_GUINT64_FORMAT
              " refused by the database (%" G_GUINT64_FORMAT
              " naming another key's node), %" G_GUINT64_FORMAT
              " malformed or refused on arrival; %" G_GUINT64_FORMAT
              " reusing a sequence (stored for a later cycle, or refused), %" G_GUINT64_FORMAT
              " below their node's highest sequence",
              c.batches_stored, c.rows_stored, c.batches_duplicate, c.batches_refused,
              c.batches_impostor, s->messages_refused, c.batches_reused, c.batches_below);
    g_queue_clear_full(&s->pending, (GDestroyNotify)pending_free);
    g_hash_table_destroy(s->pending_batches);
    g_hash_table_destroy(s->peers);
    g_hash_table_destroy(s->node_keys);
    if (s->router != NULL)
        zmq_close(s->router);
    if (s->zap != NULL)
        zmq_close(s->zap);
    if (s->context != NULL)
        zmq_ctx_term(s->context);
    txd_store_free(s->store);
    txd_system_reasoner_free(s->system);
    if (s->authorized != NULL)
        g_hash_table_destroy(s->authorized);
    txd_settings_clear(&s->settings);
    g_free(s);
}
