/* vigild — the uplink: each cycle's batch to vigil-txd, kept until it is
 * acknowledged.
 *
 * ZeroMQ sockets belong to one thread, and a send must never hold up the
 * tick, so the uplink runs a thread of its own. The main thread hands it
 * batches through a GAsyncQueue and wakes it with an eventfd; the thread
 * owns the DEALER socket, the spool and every pending batch, and publishes
 * its figures under a mutex for `vigil status`.
 *
 * A batch goes: in memory → sent (at most MAX_IN_FLIGHT at once, so that a
 * big spool replayed after an outage does not flood vigil-txd) → ACK, and
 * it is forgotten. Until then it is sent again every resend_after_ms
 * (ZeroMQ drops what it had queued for a peer that went away) and right
 * after a disconnection; vigil-txd ignores a (node, sequence) it already
 * has.
 *
 * With spool_after_ms = 0 (the default) a batch is written to the spool by
 * vigild_uplink_send itself, on the main thread, before it returns: the
 * page cache keeps it through a SIGKILL of vigild, so the daemon may free
 * the ring slots of the activities it carries, and a restarted vigild
 * loses nothing (docs/architecture.md, "Restarts"). A batch that is not
 * durable then (the spool failed, or spool_after_ms > 0) is noted, and the
 * thread says when it settles (spooled, acknowledged, refused or dropped):
 * vigild_uplink_durable_below is what the daemon frees its rings by. The write is an append
 * to a file; the segment is deleted once all its batches are acknowledged,
 * usually before the kernel ever writes it out. With spool_after_ms > 0 a
 * batch is spooled only once it has waited that long, and a SIGKILL loses
 * the younger ones. Either way a batch's bytes leave memory beyond
 * memory_max_bytes: spooled ones are read back when they are sent again;
 * ones the spool cannot take (an unwritable or full disk) are dropped,
 * oldest first, logged and counted, so that memory stays bounded in every
 * state. REFUSED means it can never be stored: its bytes go to
 * SPOOL_DIR/refused/ (bounded by refused_max_bytes, oldest deleted first)
 * and it is not sent again. vigild_uplink_free spools whatever is still in
 * memory.
 *
 * The wire protocol: one ZeroMQ frame per message, no delimiter frame.
 * The DEALER's routing id is the node id as 16 hex digits, so vigil-txd
 * should set ZMQ_ROUTER_HANDOVER: a restarted vigild then takes its place
 * at once. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>
#include <glib/gstdio.h>

#include "vigil/curve.h"
#include "vigil/link_liveness.h"
#include "vigil/schema.h"
#include "vigil/health.h"
#include "vigil/wire.h"
#include "spool.h"
#include "spool_scan.h"
#include "uplink.h"
#include "uplink_drops.h"
#include "vigild_error.h"

#define MAX_IN_FLIGHT      64
#define MAX_RECEIVED_BYTES (4 << 20) /* acks and states are small */
#define SPOOL_RETRY_US     G_USEC_PER_SEC
#define LOG_EVERY          1000 /* after the first ten, one repeated warning in so many */

/* ---- settings ------------------------------------------------------------ */

const char *vigild_uplink_hostname(const char *configured)
{
    return configured[0] != '\0' ? configured : g_get_host_name();
}

uint64_t vigild_uplink_derive_node_id(const char *machine_id_path, const char *hostname)
{
    uint64_t id = 0;
    gchar *text = NULL;
    if (machine_id_path != NULL && g_file_get_contents(machine_id_path, &text, NULL, NULL)) {
        gboolean hex = strlen(text) >= 16;
        for (int i = 0; hex && i < 16; i++)
            hex = g_ascii_isxdigit(text[i]);
        if (hex) {
            text[16] = '\0';
            id = g_ascii_strtoull(text, NULL, 16);
        }
        g_free(text);
    }
    id &= (uint64_t)INT64_MAX;
    if (id == 0) {
        /* FNV-1a, 64 bits: stable across runs, unlike g_str_hash's seed-free
         * 32 bits it has room for a cluster's worth of names. */
        uint64_t h = 0xcbf29ce484222325u;
        for (const char *c = hostname != NULL ? hostname : ""; *c != '\0'; c++)
            h = (h ^ (uint8_t)*c) * 0x100000001b3u;
        id = h & (uint64_t)INT64_MAX;
    }
    return id != 0 ? id : 1;
}

/* The table's check has read the pair `vigil keygen` writes (vigil/curve.h),
 * private to its owner since the secret key is what proves this node is this
 * node, and found it good. */
static gboolean read_key_pair(struct vigild_uplink_settings *s, GError **error)
{
    struct vigil_curve_pair pair;
    GError *e = NULL;
    if (!vigil_curve_pair_read(s->curve_key_file, &pair, &e)) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "[uplink] curve_key_file: %s", e->message);
        g_error_free(e);
        return FALSE;
    }
    s->curve_public_key = g_strdup(pair.public_key);
    s->curve_secret_key = g_strdup(pair.secret_key);
    memset(&pair, 0, sizeof pair);
    return TRUE;
}

gboolean vigild_uplink_settings_load(const vigil_config *config, struct vigild_uplink_settings *out,
                                     GError **error)
{
    if (!vigil_settings_load(config, &vigild_uplink_keys, out, error))
        return FALSE;
    if (out->curve_server_key[0] != '\0' && !read_key_pair(out, error)) {
        vigild_uplink_settings_clear(out);
        return FALSE;
    }
    char *hostname = g_strdup(vigild_uplink_hostname(out->hostname));
    g_free(out->hostname);
    out->hostname = hostname;
    if (out->node_id == 0)
        out->node_id = vigild_uplink_derive_node_id("/etc/machine-id", out->hostname);
    return TRUE;
}

void vigild_uplink_settings_clear(struct vigild_uplink_settings *s)
{
    g_clear_pointer(&s->curve_public_key, g_free);
    if (s->curve_secret_key != NULL) {
        memset(s->curve_secret_key, 0, strlen(s->curve_secret_key));
        g_clear_pointer(&s->curve_secret_key, g_free);
    }
    vigil_settings_clear(&vigild_uplink_keys, s);
}

gboolean vigild_uplink_settings_equal(const struct vigild_uplink_settings *a,
                                      const struct vigild_uplink_settings *b)
{
    return vigil_settings_equal(&vigild_uplink_keys, a, b) &&
           g_strcmp0(a->curve_public_key, b->curve_public_key) == 0 &&
           g_strcmp0(a->curve_secret_key, b->curve_secret_key) == 0;
}

static void settings_copy(struct vigild_uplink_settings *to,
                          const struct vigild_uplink_settings *from)
{
    vigil_settings_copy(&vigild_uplink_keys, to, from);
    to->curve_public_key = g_strdup(from->curve_public_key);
    to->curve_secret_key = g_strdup(from->curve_secret_key);
}

/* ---- the uplink ------------------------------------------------------------ */

enum pending_state {
    PENDING_UNSENT,    /* in `unsent`: waiting for room in flight, or for a peer */
    PENDING_IN_FLIGHT, /* in `in_flight`: sent, waiting for its ack */
};

/* A batch not acknowledged yet. It is in memory (`bytes`, and in the
 * `memory` queue) until it is spooled, then only in the spool. */
struct pending {
    uint64_t sequence;
    GBytes *bytes;
    gsize length;
    gint64 queued_us; /* monotonic: when the thread took it */
    gint64 sent_us;   /* monotonic: when it was last sent */
    gboolean ever_sent;
    gboolean spooled; /* also in the spool: forgetting it removes it there */
    gboolean awaited; /* handed over not durable: the main thread waits to hear it settled */
    gsize sent_bytes; /* its size while in flight */
    enum pending_state state;
    GList send_link;   /* its place in `unsent` or `in_flight` */
    GList memory_link; /* its place in `memory` */
};

/* What the main thread asks the thread to do and waits for: spool what is
 * in memory (the stop), or queue batches again (an administrator's `vigil
 * spool resend|replay`). */
enum request_kind {
    REQUEST_SPOOL_NOW,
    REQUEST_RESEND_REFUSED,
    REQUEST_REPLAY,
};

struct request {
    enum request_kind kind;
    const char *path; /* REQUEST_REPLAY */
    struct vigild_uplink_requeued result;
    GError *error;
    gboolean done; /* under the uplink's lock, signalled with `carried_out` */
};

struct inbox_item {
    uint64_t sequence;
    GBytes *batch;
    gboolean spooled;        /* written ahead by vigild_uplink_send */
    GArray *dropped;         /* sequences the spool dropped to make room for it, or NULL */
    struct request *request; /* instead of a batch: the main thread waits for it */
};

/* Queued last by vigild_uplink_free. */
static struct inbox_item stop_item;

struct vigild_uplink {
    struct vigild_uplink_settings settings;
    char routing_id[17];
    GThread *thread;
    GAsyncQueue *inbox; /* struct inbox_item * */
    int wake_fd;        /* eventfd: the inbox has something */
    void *context, *dealer, *monitor;
    struct vigild_sequence sequence; /* the main thread's */

    /* The spool is written by the main thread (ahead) and by the thread;
     * every vigild_spool_* call holds this. */
    GMutex spool_lock;

    GCond carried_out; /* with `lock`: a request is done */
    GMutex lock;       /* guards the five around it, and requests' `done` */
    struct vigild_uplink_stats shared;
    struct vigil_wire_state system_state;
    gboolean have_system_state;
    /* Sequences of batches handed over not durable that the thread has
     * since spooled, or forgotten (acknowledged, refused, dropped). */
    GArray *settled;

    /* The main thread's: the batches it handed over that were not durable
     * then and that it has not heard settled (uint64_t set). */
    GHashTable *awaited;

    /* What the uplink and the spool dropped, per process (any thread). */
    struct vigild_drops *drops;

    /* The thread's own. */
    struct vigild_spool *spool;
    GHashTable *pending; /* uint64_t sequence → struct pending * */
    GQueue unsent;       /* oldest sequence first, roughly */
    GQueue in_flight;    /* oldest send first */
    GQueue memory;       /* oldest arrival first */
    uint64_t memory_bytes;
    guint memory_spooled; /* of the batches in memory, those also in the spool */
    uint64_t in_flight_bytes;
    gint64 spool_retry_us; /* after a spool write failed */
    gint64 read_retry_us;  /* after a spooled batch could not be read back */
    gboolean connected;
    gint64 connect_at_us;              /* monotonic: the first connect's time; 0 once made */
    gboolean handshake_failing;        /* warned already */
    struct vigild_uplink_stats counts; /* the counters; the rest is filled when published */
};

static void set_last_error(struct vigild_uplink *u, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void set_last_error(struct vigild_uplink *u, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_vsnprintf(u->counts.last_error, sizeof u->counts.last_error, format, args);
    va_end(args);
}

static gboolean worth_logging(uint64_t count)
{
    return count <= 10 || count % LOG_EVERY == 0;
}

static void unlink_send(struct vigild_uplink *u, struct pending *p)
{
    g_queue_unlink(p->state == PENDING_UNSENT ? &u->unsent : &u->in_flight, &p->send_link);
}

/* A batch handed over not durable is durable now, or decided (forgotten):
 * the main thread may free the ring slots it carries. */
static void settle(struct vigild_uplink *u, struct pending *p)
{
    if (!p->awaited)
        return;
    p->awaited = FALSE;
    g_mutex_lock(&u->lock);
    g_array_append_val(u->settled, p->sequence);
    g_mutex_unlock(&u->lock);
}

/* Forgets a batch: acknowledged, refused, or dropped from the spool (which
 * has forgotten it already: `in_spool` FALSE). */
static void forget(struct vigild_uplink *u, struct pending *p, gboolean in_spool)
{
    uint64_t sequence = p->sequence;
    settle(u, p);
    unlink_send(u, p);
    if (p->state == PENDING_IN_FLIGHT)
        u->in_flight_bytes -= p->sent_bytes;
    gboolean spooled = p->bytes == NULL || p->spooled;
    if (p->bytes != NULL) {
        g_queue_unlink(&u->memory, &p->memory_link);
        u->memory_bytes -= p->length;
        u->memory_spooled -= p->spooled;
        g_clear_pointer(&p->bytes, g_bytes_unref);
    }
    if (in_spool && spooled) {
        g_mutex_lock(&u->spool_lock);
        vigild_spool_remove(u->spool, sequence);
        g_mutex_unlock(&u->spool_lock);
    }
    g_hash_table_remove(u->pending, &sequence); /* frees p */
}

static struct pending *add_pending(struct vigild_uplink *u, uint64_t sequence, GBytes *bytes,
                                   gsize length)
{
    struct pending *p = g_new0(struct pending, 1);
    p->sequence = sequence;
    p->bytes = bytes;
    p->length = length;
    p->queued_us = g_get_monotonic_time();
    p->state = PENDING_UNSENT;
    p->send_link.data = p;
    p->memory_link.data = p;
    g_hash_table_insert(u->pending, &p->sequence, p);
    g_queue_push_tail_link(&u->unsent, &p->send_link);
    if (bytes != NULL) {
        g_queue_push_tail_link(&u->memory, &p->memory_link);
        u->memory_bytes += length;
    }
    return p;
}

/* The batch's bytes, from memory or the spool; NULL (logged, counted) when
 * the spool cannot give them back. */
/* The batch's bytes, from memory or the spool. NULL when they cannot be
 * read: *gone says whether they are gone for good (not in the spool, or
 * its file deleted) or the read may work later (out of descriptors, an I/O
 * error), in which case the batch must stay: a passing failure must not
 * throw away a whole backlog that is intact on disk. */
static GBytes *pending_bytes(struct vigild_uplink *u, struct pending *p, gboolean *gone)
{
    *gone = FALSE;
    if (p->bytes != NULL)
        return g_bytes_ref(p->bytes);
    GError *error = NULL;
    g_mutex_lock(&u->spool_lock);
    GBytes *bytes = vigild_spool_read(u->spool, p->sequence, &error);
    g_mutex_unlock(&u->spool_lock);
    if (bytes == NULL) {
        *gone = g_error_matches(error, G_FILE_ERROR, G_FILE_ERROR_NOENT);
        if (*gone) {
            g_warning("batch %" PRIu64 " is lost: %s", p->sequence, error->message);
            vigild_drops_count_unknown(u->drops);
        }
        set_last_error(u, "%s", error->message);
        g_error_free(error);
    }
    return bytes;
}

struct refused_file {
    char *path;
    guint64 bytes;
    gint64 mtime_us;
};

static gint compare_refused_age(gconstpointer a, gconstpointer b)
{
    const struct refused_file *x = a, *y = b;
    if (x->mtime_us != y->mtime_us)
        return x->mtime_us < y->mtime_us ? -1 : 1;
    return g_strcmp0(x->path, y->path);
}

/* Deletes the oldest kept refusals until `incoming` more bytes fit under
 * refused_max_bytes: the folder must not fill the disk the spool is on. */
static void make_room_for_refused(struct vigild_uplink *u, const char *folder, guint64 incoming)
{
    GDir *dir = g_dir_open(folder, 0, NULL);
    if (dir == NULL)
        return;
    GArray *files = g_array_new(FALSE, FALSE, sizeof(struct refused_file));
    guint64 total = 0;
    const char *name;
    while ((name = g_dir_read_name(dir)) != NULL) {
        if (!g_str_has_suffix(name, ".batch"))
            continue;
        struct refused_file f = {.path = g_build_filename(folder, name, NULL)};
        struct stat st;
        if (stat(f.path, &st) != 0) {
            g_free(f.path);
            continue;
        }
        f.bytes = (guint64)st.st_size;
        f.mtime_us = (gint64)st.st_mtim.tv_sec * G_USEC_PER_SEC + st.st_mtim.tv_nsec / 1000;
        total += f.bytes;
        g_array_append_val(files, f);
    }
    g_dir_close(dir);
    g_array_sort(files, compare_refused_age);
    for (guint i = 0; i < files->len && total + incoming > u->settings.refused_max_bytes; i++) {
        struct refused_file *f = &g_array_index(files, struct refused_file, i);
        if (g_unlink(f->path) == 0) {
            total -= f->bytes;
            u->counts.refused_deleted++;
            u->counts.refused_kept -= MIN(u->counts.refused_kept, 1);
            g_warning("uplink: %s deleted to keep the refused batches under refused_max_bytes "
                      "(%" PRIu64 ")",
                      f->path, u->settings.refused_max_bytes);
        }
    }
    for (guint i = 0; i < files->len; i++)
        g_free(g_array_index(files, struct refused_file, i).path);
    g_array_free(files, TRUE);
}

/* Keeps a batch vigil-txd will never store where a person can look at it:
 * SPOOL_DIR/refused/NODE-SEQUENCE.batch. */
static void keep_refused(struct vigild_uplink *u, uint64_t sequence, GBytes *bytes, const char *why)
{
    u->counts.refused++;
    gsize length;
    const uint8_t *data = g_bytes_get_data(bytes, &length);
    struct vigil_wire_header header;
    uint64_t node =
        vigil_wire_peek_header(data, length, &header, NULL) ? header.node_id : u->settings.node_id;
    char *folder = g_build_filename(u->settings.spool_dir, "refused", NULL);
    char *name = g_strdup_printf("%" PRIu64 "-%" PRIu64 ".batch", node, sequence);
    char *path = g_build_filename(folder, name, NULL);
    GError *error = NULL;
    if (g_mkdir_with_parents(folder, 0700) != 0)
        g_set_error(&error, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot make %s: %s",
                    folder, g_strerror(errno));
    else if ((make_room_for_refused(u, folder, length), length > u->settings.refused_max_bytes))
        g_set_error(&error, G_FILE_ERROR, G_FILE_ERROR_NOSPC,
                    "it alone is larger than refused_max_bytes (%" PRIu64 ")",
                    u->settings.refused_max_bytes);
    else
        (void)g_file_set_contents_full(path, (const char *)data, (gssize)length,
                                       G_FILE_SET_CONTENTS_CONSISTENT | G_FILE_SET_CONTENTS_DURABLE,
                                       0600, &error);
    if (error == NULL) {
        u->counts.refused_kept++;
        g_warning("batch %" PRIu64 ": %s; it is kept in %s and not sent again (`vigil spool "
                  "resend` sends it once that is fixed)",
                  sequence, why, path);
        set_last_error(u, "batch %" PRIu64 ": %s", sequence, why);
    } else {
        u->counts.spool_errors++;
        vigild_drops_count_batch(u->drops, data, length);
        g_warning("batch %" PRIu64 ": %s; it could not be kept (%s) and is lost", sequence, why,
                  error->message);
        set_last_error(u, "batch %" PRIu64 ": %s; lost: %s", sequence, why, error->message);
        g_error_free(error);
    }
    g_free(path);
    g_free(name);
    g_free(folder);
}

/* ---- the thread: batches in ------------------------------------------------ */

static void admit(struct vigild_uplink *u, struct inbox_item *item)
{
    gsize length;
    const void *data = g_bytes_get_data(item->batch, &length);
    struct vigil_wire_header header;
    GError *error = NULL;
    char *why = NULL;
    if (!vigil_wire_peek_header(data, length, &header, &error))
        why = g_strdup_printf("handed to the uplink malformed: %s", error->message);
    else if (header.type != VIGIL_WIRE_BATCH)
        why = g_strdup_printf("handed to the uplink as a %s message, not a batch",
                              vigil_wire_type_name(header.type));
    else if (header.sequence != item->sequence)
        why = g_strdup_printf("handed to the uplink with sequence %" PRIu64 " in its header",
                              header.sequence);
    else if (g_hash_table_contains(u->pending, &item->sequence))
        why = g_strdup("handed to the uplink twice");
    g_clear_error(&error);
    /* What the spool dropped to make room for this batch is gone for good
     * (the spool has logged it). */
    for (guint i = 0; item->dropped != NULL && i < item->dropped->len; i++) {
        uint64_t gone = g_array_index(item->dropped, uint64_t, i);
        struct pending *q = g_hash_table_lookup(u->pending, &gone);
        if (q != NULL)
            forget(u, q, FALSE);
    }
    if (why != NULL) {
        keep_refused(u, item->sequence, item->batch, why);
        g_free(why);
        g_bytes_unref(item->batch);
        if (!item->spooled) {
            g_mutex_lock(&u->lock);
            g_array_append_val(u->settled, item->sequence);
            g_mutex_unlock(&u->lock);
        }
    } else {
        struct pending *p = add_pending(u, item->sequence, item->batch, length);
        p->spooled = item->spooled;
        p->awaited = !item->spooled;
        u->memory_spooled += p->spooled;
    }
    if (item->dropped != NULL)
        g_array_free(item->dropped, TRUE);
    g_free(item);
}

static void spool_due(struct vigild_uplink *u, gint64 now, gboolean all);
static void carry_out(struct vigild_uplink *u, struct request *r);

/* TRUE when the stop item came. */
static gboolean take_inbox(struct vigild_uplink *u)
{
    struct inbox_item *item;
    while ((item = g_async_queue_try_pop(u->inbox)) != NULL) {
        if (item == &stop_item)
            return TRUE;
        if (item->request != NULL) {
            struct request *r = item->request;
            g_free(item);
            carry_out(u, r);
            g_mutex_lock(&u->lock);
            r->done = TRUE;
            g_cond_broadcast(&u->carried_out);
            g_mutex_unlock(&u->lock);
            continue;
        }
        admit(u, item);
    }
    return FALSE;
}

/* ---- the thread: an administrator's requests ------------------------------------- */

/* Appends batch `sequence` to the spool (`bytes` NULL: it is there
 * already); *held: the spool holds it now. A batch the spool cannot take is
 * logged (and with `note_error` kept as the last error) and stays in memory:
 * FALSE. What the spool dropped to stay under its bound is gone for good;
 * the spool has logged it. This batch is among them when it alone is too
 * big. */
static gboolean append_to_spool(struct vigild_uplink *u, uint64_t sequence, GBytes *bytes,
                                gboolean note_error, gboolean *held)
{
    GArray *dropped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GError *error = NULL;
    g_mutex_lock(&u->spool_lock);
    gboolean ok = bytes == NULL || vigild_spool_append(u->spool, sequence, bytes, dropped, &error);
    *held = ok && vigild_spool_has(u->spool, sequence);
    g_mutex_unlock(&u->spool_lock);
    if (!ok) {
        g_warning("%s; batch %" PRIu64 " stays in memory", error->message, sequence);
        if (note_error)
            set_last_error(u, "%s", error->message);
        g_error_free(error);
    }
    for (guint i = 0; i < dropped->len; i++) {
        uint64_t gone = g_array_index(dropped, uint64_t, i);
        struct pending *q = g_hash_table_lookup(u->pending, &gone);
        if (q != NULL)
            forget(u, q, FALSE);
    }
    g_array_free(dropped, TRUE);
    return ok;
}

/* Queues a batch again, as vigild_uplink_send would: written to the spool
 * first, then sent. One vigild already holds (pending) is left as it is. */
static void requeue_batch(struct vigild_uplink *u, GBytes *batch, struct request *r)
{
    gsize length;
    const void *data = g_bytes_get_data(batch, &length);
    struct vigil_wire_header header;
    if (!vigil_wire_peek_header(data, length, &header, NULL) || header.type != VIGIL_WIRE_BATCH) {
        r->result.unreadable_bytes += length;
        return;
    }
    if (g_hash_table_contains(u->pending, &header.sequence)) {
        r->result.skipped++;
        return;
    }
    /* Kept in memory when the spool cannot take it, spooled when it can
     * again. */
    gboolean spooled;
    append_to_spool(u, header.sequence, batch, FALSE, &spooled);
    if (g_hash_table_contains(u->pending, &header.sequence))
        return; /* it was among those the spool dropped: counted there */
    struct pending *p = add_pending(u, header.sequence, g_bytes_ref(batch), length);
    p->spooled = spooled;
    u->memory_spooled += spooled;
    r->result.batches++;
}

static gint compare_names(gconstpointer a, gconstpointer b)
{
    return g_strcmp0(*(const char *const *)a, *(const char *const *)b);
}

/* SPOOL_DIR/refused/: every kept batch queued again and its file removed. */
static void resend_refused(struct vigild_uplink *u, struct request *r)
{
    char *folder = g_build_filename(u->settings.spool_dir, "refused", NULL);
    GDir *dir = g_dir_open(folder, 0, NULL);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    for (const char *name; dir != NULL && (name = g_dir_read_name(dir)) != NULL;)
        if (g_str_has_suffix(name, ".batch"))
            g_ptr_array_add(names, g_strdup(name));
    if (dir != NULL)
        g_dir_close(dir);
    g_ptr_array_sort(names, compare_names); /* NODE-SEQUENCE: oldest first, roughly */
    for (guint i = 0; i < names->len; i++) {
        char *path = g_build_filename(folder, g_ptr_array_index(names, i), NULL);
        gchar *contents;
        gsize length;
        GError *error = NULL;
        if (!g_file_get_contents(path, &contents, &length, &error)) {
            g_warning("uplink: %s cannot be sent again: %s", path, error->message);
            g_error_free(error);
            g_free(path);
            continue;
        }
        GBytes *batch = g_bytes_new_take(contents, length);
        uint64_t before = r->result.unreadable_bytes;
        requeue_batch(u, batch, r);
        g_bytes_unref(batch);
        if (r->result.unreadable_bytes != before)
            g_warning("uplink: %s is not a batch; it is left where it is", path);
        else if (g_unlink(path) == 0)
            u->counts.refused_kept -= MIN(u->counts.refused_kept, 1);
        g_free(path);
    }
    u->counts.resent_refused += r->result.batches;
    if (names->len > 0)
        g_message("uplink: %" PRIu64 " refused batches of %s queued to be sent again (%" PRIu64
                  " were queued already)",
                  r->result.batches, folder, r->result.skipped);
    g_ptr_array_free(names, TRUE);
    g_free(folder);
}

/* A file of batches (a NAME.damaged the spool set aside): its intact ones
 * queued again; the file is renamed NAME.replayed, with its damage. */
static void replay_file(struct vigild_uplink *u, struct request *r)
{
    gchar *contents;
    gsize size;
    if (!g_file_get_contents(r->path, &contents, &size, &r->error))
        return;
    GArray *pieces = vigild_spool_scan((const uint8_t *)contents, size);
    for (guint i = 0; i < pieces->len; i++) {
        const struct vigild_spool_piece *piece =
            &g_array_index(pieces, struct vigild_spool_piece, i);
        if (piece->damaged) {
            r->result.unreadable_bytes += piece->length_bytes;
            continue;
        }
        GBytes *batch = g_bytes_new(contents + piece->offset_bytes, piece->length_bytes);
        requeue_batch(u, batch, r);
        g_bytes_unref(batch);
    }
    vigild_spool_scan_free(pieces);
    g_free(contents);
    char *done = g_strconcat(r->path, ".replayed", NULL);
    if (g_rename(r->path, done) != 0)
        g_warning("uplink: %s was replayed but cannot be renamed %s (%s): replaying it again "
                  "queues nothing twice",
                  r->path, done, g_strerror(errno));
    g_message("uplink: %s replayed: %" PRIu64 " batches queued, %" PRIu64 " held already, %" PRIu64
              " bytes unreadable",
              r->path, r->result.batches, r->result.skipped, r->result.unreadable_bytes);
    g_free(done);
}

static void carry_out(struct vigild_uplink *u, struct request *r)
{
    switch (r->kind) {
    case REQUEST_SPOOL_NOW:
        spool_due(u, g_get_monotonic_time(), TRUE);
        break;
    case REQUEST_RESEND_REFUSED:
        resend_refused(u, r);
        break;
    case REQUEST_REPLAY:
        replay_file(u, r);
        break;
    }
}

/* ---- the thread: spooling ---------------------------------------------------- */

static gboolean spool_one(struct vigild_uplink *u, struct pending *p)
{
    gboolean held;
    gboolean ok = append_to_spool(u, p->sequence, p->spooled ? NULL : p->bytes, TRUE, &held);
    if (held) {
        settle(u, p);
        u->memory_spooled -= p->spooled;
        p->spooled = FALSE; /* only there now: forget() removes it from the spool */
        g_queue_unlink(&u->memory, &p->memory_link);
        u->memory_bytes -= p->length;
        g_clear_pointer(&p->bytes, g_bytes_unref);
    }
    return ok;
}

/* Keeps memory under memory_max_bytes whatever the disk does: batches the
 * spool has leave memory (they are read back to be sent again); ones it
 * could not take are dropped, oldest first, loudly. */
static void shed_memory(struct vigild_uplink *u)
{
    GList *link = g_queue_peek_head_link(&u->memory);
    while (u->memory_bytes > u->settings.memory_max_bytes && link != NULL) {
        struct pending *p = link->data;
        link = link->next;
        if (p->spooled) {
            g_queue_unlink(&u->memory, &p->memory_link);
            u->memory_bytes -= p->length;
            u->memory_spooled--;
            p->spooled = FALSE; /* only in the spool now: forget() removes it there */
            g_clear_pointer(&p->bytes, g_bytes_unref);
            continue;
        }
        u->counts.dropped_memory_batches++;
        u->counts.dropped_memory_bytes += p->length;
        gsize length;
        const uint8_t *data = g_bytes_get_data(p->bytes, &length);
        vigild_drops_count_batch(u->drops, data, length);
        if (worth_logging(u->counts.dropped_memory_batches))
            g_warning("uplink: batch %" PRIu64 " (%zu bytes) dropped: the spool cannot take it "
                      "and memory_max_bytes (%" PRIu64 ") is reached; %" PRIu64
                      " batches dropped so far",
                      p->sequence, (size_t)p->length, u->settings.memory_max_bytes,
                      u->counts.dropped_memory_batches);
        set_last_error(u, "batch %" PRIu64 " dropped: the spool cannot take it and memory is full",
                       p->sequence);
        forget(u, p, FALSE);
    }
}

/* Spools the batches unacknowledged for spool_after_ms, and the oldest
 * beyond memory_max_bytes; everything when `all`. */
static void spool_due(struct vigild_uplink *u, gint64 now, gboolean all)
{
    gint64 after_us = (gint64)u->settings.spool_after_ms * 1000;
    GList *link;
    while ((all || now >= u->spool_retry_us) &&
           (link = g_queue_peek_head_link(&u->memory)) != NULL) {
        struct pending *p = link->data;
        /* A batch written ahead leaves memory only when memory is full. */
        if (!all && u->memory_bytes <= u->settings.memory_max_bytes &&
            (p->spooled || now - p->queued_us < after_us))
            break;
        if (!spool_one(u, p)) {
            u->spool_retry_us = now + SPOOL_RETRY_US;
            break;
        }
    }
    shed_memory(u);
}

/* ---- the thread: sending ------------------------------------------------------- */

/* Puts the links of `from` back at the head of `unsent`, in their order. */
static void requeue(struct vigild_uplink *u, GQueue *from)
{
    GList *link;
    while ((link = g_queue_pop_tail_link(from)) != NULL) {
        struct pending *p = link->data;
        if (p->state == PENDING_IN_FLIGHT)
            u->in_flight_bytes -= p->sent_bytes;
        p->state = PENDING_UNSENT;
        g_queue_push_head_link(&u->unsent, link);
    }
}

static void resend_due(struct vigild_uplink *u, gint64 now)
{
    gint64 after_us = (gint64)u->settings.resend_after_ms * 1000;
    GQueue due = G_QUEUE_INIT;
    GList *link;
    while ((link = g_queue_peek_head_link(&u->in_flight)) != NULL &&
           now - ((struct pending *)link->data)->sent_us >= after_us)
        g_queue_push_tail_link(&due, g_queue_pop_head_link(&u->in_flight));
    requeue(u, &due);
}

/* Sends what the window allows; TRUE when ZeroMQ would not take more (no
 * peer, or its queue is full), so the poll waits for room. */
static gboolean send_what_fits(struct vigild_uplink *u)
{
    GList *link;
    if (g_get_monotonic_time() < u->read_retry_us)
        return FALSE;
    /* At most MAX_IN_FLIGHT batches and in_flight_max_bytes (but always
     * one), so that neither a replayed spool nor a few huge batches flood
     * vigil-txd or ZeroMQ's queues. */
    while (u->in_flight.length < MAX_IN_FLIGHT &&
           (u->in_flight.length == 0 || u->in_flight_bytes < u->settings.in_flight_max_bytes) &&
           (link = g_queue_peek_head_link(&u->unsent)) != NULL) {
        struct pending *p = link->data;
        gboolean gone;
        GBytes *bytes = pending_bytes(u, p, &gone);
        if (bytes == NULL && gone) {
            forget(u, p, TRUE);
            continue;
        }
        if (bytes == NULL) {
            u->read_retry_us = g_get_monotonic_time() + SPOOL_RETRY_US;
            return FALSE;
        }
        gsize length;
        const void *data = g_bytes_get_data(bytes, &length);
        int rc = zmq_send(u->dealer, data, length, ZMQ_DONTWAIT);
        int e = errno;
        g_bytes_unref(bytes);
        if (rc < 0) {
            if (e != EAGAIN)
                set_last_error(u, "sending batch %" PRIu64 ": %s", p->sequence, zmq_strerror(e));
            return TRUE;
        }
        g_queue_unlink(&u->unsent, link);
        g_queue_push_tail_link(&u->in_flight, link);
        p->state = PENDING_IN_FLIGHT;
        p->sent_bytes = length;
        u->in_flight_bytes += length;
        p->sent_us = g_get_monotonic_time();
        u->counts.sent++;
        if (p->ever_sent)
            u->counts.resent++;
        p->ever_sent = TRUE;
    }
    return FALSE;
}

/* ---- the thread: what vigil-txd says ---------------------------------------------- */

static void unexpected(struct vigild_uplink *u, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void unexpected(struct vigild_uplink *u, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *what = g_strdup_vprintf(format, args);
    va_end(args);
    if (worth_logging(++u->counts.unexpected))
        g_warning("vigil-txd sent %s; ignored (%" PRIu64 " such messages so far)", what,
                  u->counts.unexpected);
    set_last_error(u, "vigil-txd sent %s", what);
    g_free(what);
}

static void take_states(struct vigild_uplink *u, const struct vigil_wire_message *m)
{
    const struct vigil_wire_state *system = NULL;
    for (uint32_t i = 0; i < m->header.count; i++)
        if (m->states[i].level == VIGIL_LEVEL_SYSTEM)
            system = &m->states[i];
    if (system == NULL) {
        unexpected(u, "a states message without the system's state");
        return;
    }
    g_mutex_lock(&u->lock);
    u->system_state = *system;
    u->have_system_state = TRUE;
    g_mutex_unlock(&u->lock);
}

static void take_refusal(struct vigild_uplink *u, const struct vigil_wire_message *m)
{
    uint64_t sequence = m->header.sequence;
    struct pending *p = g_hash_table_lookup(u->pending, &sequence);
    if (p == NULL) {
        g_message("vigil-txd refused batch %" PRIu64 ", which vigild no longer has", sequence);
        return;
    }
    gboolean gone;
    GBytes *bytes = pending_bytes(u, p, &gone);
    const char *reason = m->header.count > 0 ? m->refusals[0].reason : "no reason given";
    g_strlcpy(u->counts.last_refusal, reason, sizeof u->counts.last_refusal);
    if (bytes != NULL) {
        char *why = g_strdup_printf("refused by vigil-txd: %s", reason);
        keep_refused(u, sequence, bytes, why);
        g_free(why);
        g_bytes_unref(bytes);
    }
    forget(u, p, TRUE);
}

static void take_message(struct vigild_uplink *u, const void *data, size_t length)
{
    struct vigil_wire_message m;
    GError *error = NULL;
    if (!vigil_wire_decode(data, length, &m, &error)) {
        unexpected(u, "a message that cannot be read (%s)", error->message);
        g_error_free(error);
        return;
    }
    uint64_t sequence = m.header.sequence;
    struct pending *p;
    switch (m.header.type) {
    case VIGIL_WIRE_ACK:
        /* An ack for a batch no longer here is a resend's second ack. */
        p = g_hash_table_lookup(u->pending, &sequence);
        if (p != NULL) {
            u->counts.acked++;
            forget(u, p, TRUE);
        }
        break;
    case VIGIL_WIRE_REFUSED:
        take_refusal(u, &m);
        break;
    case VIGIL_WIRE_STATES:
        take_states(u, &m);
        break;
    default:
        unexpected(u, "a %s message", vigil_wire_type_name(m.header.type));
        break;
    }
    vigil_wire_message_clear(&m);
}

/* Every message waiting; a message is one frame, and of a multi-part one
 * only the last frame counts. */
static void receive(struct vigild_uplink *u)
{
    for (;;) {
        zmq_msg_t frame;
        zmq_msg_init(&frame);
        if (zmq_msg_recv(&frame, u->dealer, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&frame);
            return;
        }
        while (zmq_msg_more(&frame)) {
            zmq_msg_close(&frame);
            zmq_msg_init(&frame);
            if (zmq_msg_recv(&frame, u->dealer, 0) < 0)
                break;
        }
        take_message(u, zmq_msg_data(&frame), zmq_msg_size(&frame));
        zmq_msg_close(&frame);
    }
}

/* Connection events: `connected` for status, and what was in flight sent
 * again at once after a disconnection, since ZeroMQ dropped it. */
static void take_monitor_events(struct vigild_uplink *u)
{
    for (;;) {
        zmq_msg_t head, address;
        zmq_msg_init(&head);
        if (zmq_msg_recv(&head, u->monitor, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&head);
            return;
        }
        zmq_msg_init(&address);
        if (!zmq_msg_more(&head) || zmq_msg_recv(&address, u->monitor, 0) < 0 ||
            zmq_msg_size(&head) < 6) {
            zmq_msg_close(&head);
            zmq_msg_close(&address);
            continue;
        }
        uint16_t event;
        uint32_t value;
        memcpy(&event, zmq_msg_data(&head), sizeof event);
        memcpy(&value, (const uint8_t *)zmq_msg_data(&head) + 2, sizeof value);
        char *endpoint = g_strndup(zmq_msg_data(&address), zmq_msg_size(&address));
        zmq_msg_close(&head);
        zmq_msg_close(&address);
        switch (event) {
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
            if (u->handshake_failing)
                g_message("uplink to %s: connected", endpoint);
            u->connected = TRUE;
            u->handshake_failing = FALSE;
            break;
        case ZMQ_EVENT_DISCONNECTED:
            u->connected = FALSE;
            requeue(u, &u->in_flight);
            break;
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
            u->connected = FALSE;
            set_last_error(u,
                           "handshake with %s failed (%s; are [uplink] curve_server_key and "
                           "the key pair the ones vigil-txd expects?)",
                           endpoint,
                           event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ? "refused by its "
                                                                      "authentication"
                                                                    : zmq_strerror((int)value));
            if (!u->handshake_failing)
                g_warning("uplink: %s", u->counts.last_error);
            u->handshake_failing = TRUE;
            break;
        default:
            break;
        }
        g_free(endpoint);
    }
}

/* ---- the thread: the loop -------------------------------------------------------- */

static void publish(struct vigild_uplink *u)
{
    struct vigild_spool_stats spool;
    g_mutex_lock(&u->spool_lock);
    vigild_spool_stats(u->spool, &spool);
    g_mutex_unlock(&u->spool_lock);
    g_mutex_lock(&u->lock);
    u->shared = u->counts;
    u->shared.in_flight = u->in_flight.length;
    u->shared.in_flight_bytes = u->in_flight_bytes;
    u->shared.unacked = g_hash_table_size(u->pending);
    u->shared.memory_batches = u->memory.length - u->memory_spooled;
    u->shared.memory_bytes = u->memory_bytes;
    u->shared.spooled_batches = spool.batches;
    u->shared.spool_bytes = spool.bytes;
    u->shared.dropped_full_batches = spool.dropped_batches;
    u->shared.dropped_full_bytes = spool.dropped_bytes;
    u->shared.spool_corrupt = spool.corrupt;
    u->shared.spool_corrupt_bytes = spool.corrupt_bytes;
    u->shared.spool_errors = u->counts.spool_errors + spool.errors;
    u->shared.connected = u->connected;
    g_mutex_unlock(&u->lock);
}

/* ms until the next timer: a batch to spool or to send again; -1: none. */
static long next_timeout_ms(struct vigild_uplink *u, gint64 now)
{
    gint64 due = G_MAXINT64;
    const GList *link = g_queue_peek_head_link(&u->memory);
    if (link != NULL && !((const struct pending *)link->data)->spooled) {
        const struct pending *p = link->data;
        due = MAX(p->queued_us + (gint64)u->settings.spool_after_ms * 1000, u->spool_retry_us);
    }
    link = g_queue_peek_head_link(&u->in_flight);
    if (link != NULL) {
        const struct pending *p = link->data;
        due = MIN(due, p->sent_us + (gint64)u->settings.resend_after_ms * 1000);
    }
    if (!g_queue_is_empty(&u->unsent) && u->read_retry_us > now)
        due = MIN(due, u->read_retry_us);
    if (u->connect_at_us != 0)
        due = MIN(due, u->connect_at_us);
    if (due == G_MAXINT64)
        return -1;
    return due <= now ? 0 : (long)((due - now + 999) / 1000);
}

static gboolean connect_dealer(struct vigild_uplink *u, GError **error)
{
    u->connect_at_us = 0;
    if (zmq_connect(u->dealer, u->settings.endpoint) == 0)
        return TRUE;
    g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                "[uplink] endpoint = %s: %s", u->settings.endpoint, zmq_strerror(errno));
    return FALSE;
}

/* The first connect, once its random delay is over. The endpoint's form
 * was checked at start; what fails now (a host name that no longer
 * resolves) is logged and shown by `vigil status`, and batches spool. */
static void connect_when_due(struct vigild_uplink *u, gint64 now)
{
    GError *error = NULL;
    if (u->connect_at_us == 0 || now < u->connect_at_us || connect_dealer(u, &error))
        return;
    g_critical("uplink: %s; batches are spooled, not sent", error->message);
    set_last_error(u, "%s", error->message);
    g_error_free(error);
}

static gpointer run(gpointer data)
{
    struct vigild_uplink *u = data;
    for (;;) {
        if (take_inbox(u))
            break;
        gint64 now = g_get_monotonic_time();
        connect_when_due(u, now);
        spool_due(u, now, FALSE);
        resend_due(u, now);
        gboolean blocked = send_what_fits(u);
        publish(u);
        zmq_pollitem_t items[] = {
            {u->dealer, 0, (short)(ZMQ_POLLIN | (blocked ? ZMQ_POLLOUT : 0)), 0},
            {u->monitor, 0, ZMQ_POLLIN, 0},
            {NULL, u->wake_fd, ZMQ_POLLIN, 0},
        };
        if (zmq_poll(items, G_N_ELEMENTS(items), next_timeout_ms(u, now)) < 0) {
            if (errno != EINTR)
                g_warning("uplink: zmq_poll: %s", zmq_strerror(errno));
            continue;
        }
        if (items[2].revents & ZMQ_POLLIN) {
            uint64_t wakes;
            (void)!read(u->wake_fd, &wakes, sizeof wakes);
        }
        if (items[1].revents & ZMQ_POLLIN)
            take_monitor_events(u);
        if (items[0].revents & ZMQ_POLLIN)
            receive(u);
    }
    spool_due(u, g_get_monotonic_time(), TRUE);
    if (u->memory.length > 0)
        g_warning("uplink: %u batches (%" PRIu64 " bytes) could not be spooled and are lost",
                  u->memory.length, u->memory_bytes);
    g_mutex_lock(&u->spool_lock);
    vigild_spool_sync(u->spool);
    g_mutex_unlock(&u->spool_lock);
    publish(u);
    return NULL;
}

/* ---- the main thread's side -------------------------------------------------------- */

/* The batches kept in SPOOL_DIR/refused/ by an earlier vigild. */
static uint64_t count_refused(const char *spool_dir)
{
    char *folder = g_build_filename(spool_dir, "refused", NULL);
    GDir *dir = g_dir_open(folder, 0, NULL);
    uint64_t n = 0;
    for (const char *name; dir != NULL && (name = g_dir_read_name(dir)) != NULL;)
        n += g_str_has_suffix(name, ".batch");
    if (dir != NULL)
        g_dir_close(dir);
    g_free(folder);
    return n;
}

static void pending_free(gpointer data)
{
    struct pending *p = data;
    if (p->bytes != NULL)
        g_bytes_unref(p->bytes);
    g_free(p);
}

static void inbox_item_free(gpointer data)
{
    struct inbox_item *item = data;
    if (item == &stop_item)
        return;
    if (item->dropped != NULL)
        g_array_free(item->dropped, TRUE);
    if (item->batch != NULL)
        g_bytes_unref(item->batch);
    g_free(item);
}

static gboolean set_option(void *socket, int option, const char *name, const void *value,
                           size_t length, GError **error)
{
    if (zmq_setsockopt(socket, option, value, length) == 0)
        return TRUE;
    g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED, "uplink: cannot set %s: %s", name,
                zmq_strerror(errno));
    return FALSE;
}

static gboolean set_int_option(void *socket, int option, const char *name, int value,
                               GError **error)
{
    return set_option(socket, option, name, &value, sizeof value, error);
}

static gboolean link_liveness_set(void *socket, GError **error)
{
    GError *local = NULL;
    if (vigil_link_liveness_set(socket, &local))
        return TRUE;
    g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED, "uplink: %s", local->message);
    g_error_free(local);
    return FALSE;
}

/* What zmq_connect would refuse at once, checked when the connect itself
 * comes later: the transport, and for TCP a host and a port. */
static gboolean endpoint_form_ok(const char *endpoint)
{
    if (g_str_has_prefix(endpoint, "ipc://") || g_str_has_prefix(endpoint, "inproc://"))
        return endpoint[strlen(endpoint) - 1] != '/';
    char *host = NULL;
    gint port = -1;
    gboolean ok = g_str_has_prefix(endpoint, "tcp://") &&
                  g_uri_split_network(endpoint, G_URI_FLAGS_NONE, NULL, &host, &port, NULL) &&
                  host != NULL && host[0] != '\0' && port > 0 && port < 65536;
    g_free(host);
    return ok;
}

static gboolean make_sockets(struct vigild_uplink *u, GError **error)
{
    const struct vigild_uplink_settings *s = &u->settings;
    u->context = zmq_ctx_new();
    u->dealer = zmq_socket(u->context, ZMQ_DEALER);
    if (u->dealer == NULL) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED, "uplink: no ZeroMQ socket: %s",
                    zmq_strerror(errno));
        return FALSE;
    }
    int64_t max_received = MAX_RECEIVED_BYTES;
    /* This node's own interval, so that nodes disconnected together (a
     * vigil-txd restart) do not retry together; ZeroMQ adds a random part
     * below it at each try, and doubles it up to the maximum. */
    int reconnect_ivl_ms =
        (int)s->reconnect_ivl_ms + g_random_int_range(0, (gint32)MAX(s->reconnect_ivl_ms, 1u));
    if (!set_int_option(u->dealer, ZMQ_IMMEDIATE, "ZMQ_IMMEDIATE", 1, error) ||
        !set_int_option(u->dealer, ZMQ_LINGER, "ZMQ_LINGER", 0, error) ||
        !set_int_option(u->dealer, ZMQ_RECONNECT_IVL, "ZMQ_RECONNECT_IVL", reconnect_ivl_ms,
                        error) ||
        !set_int_option(u->dealer, ZMQ_RECONNECT_IVL_MAX, "ZMQ_RECONNECT_IVL_MAX",
                        (int)s->reconnect_ivl_max_ms, error) ||
        /* Finds a vigil-txd whose host vanished: TCP's probes, not ZMTP
         * PINGs, on which libzmq 4.3.4 can make vigil-txd abort
         * (vigil/link_liveness.h). */
        !link_liveness_set(u->dealer, error) ||
        !set_option(u->dealer, ZMQ_MAXMSGSIZE, "ZMQ_MAXMSGSIZE", &max_received, sizeof max_received,
                    error) ||
        !set_option(u->dealer, ZMQ_ROUTING_ID, "ZMQ_ROUTING_ID", u->routing_id,
                    strlen(u->routing_id), error))
        return FALSE;
    if (s->curve_public_key != NULL &&
        (!set_option(u->dealer, ZMQ_CURVE_SERVERKEY, "[uplink] curve_server_key",
                     s->curve_server_key, strlen(s->curve_server_key), error) ||
         !set_option(u->dealer, ZMQ_CURVE_PUBLICKEY, "the public key of curve_key_file",
                     s->curve_public_key, strlen(s->curve_public_key), error) ||
         !set_option(u->dealer, ZMQ_CURVE_SECRETKEY, "the secret key of curve_key_file",
                     s->curve_secret_key, strlen(s->curve_secret_key), error)))
        return FALSE;
    char *address = g_strdup_printf("inproc://vigild-uplink-monitor-%p", (void *)u);
    int rc = zmq_socket_monitor(u->dealer, address,
                                ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED |
                                    ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                    ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                    ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
    if (rc == 0) {
        u->monitor = zmq_socket(u->context, ZMQ_PAIR);
        rc = u->monitor != NULL && set_int_option(u->monitor, ZMQ_LINGER, "ZMQ_LINGER", 0, NULL)
                 ? zmq_connect(u->monitor, address)
                 : -1;
    }
    g_free(address);
    if (rc != 0) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "uplink: cannot watch the connection: %s", zmq_strerror(errno));
        return FALSE;
    }
    if (s->connect_delay_max_ms == 0)
        return connect_dealer(u, error);
    /* Nodes started together (a cluster's boot) spread their first
     * handshakes; the thread connects when the time comes. */
    if (!endpoint_form_ok(s->endpoint)) {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "[uplink] endpoint = %s: not a ZeroMQ endpoint vigild can connect to "
                    "(tcp://HOST:PORT or ipc://PATH)",
                    s->endpoint);
        return FALSE;
    }
    u->connect_at_us = g_get_monotonic_time() +
                       g_random_int_range(0, (gint32)s->connect_delay_max_ms) * (gint64)1000;
    return TRUE;
}

static void uplink_destroy(struct vigild_uplink *u)
{
    if (u->dealer != NULL) {
        zmq_socket_monitor(u->dealer, NULL, 0);
        zmq_close(u->dealer);
    }
    if (u->monitor != NULL)
        zmq_close(u->monitor);
    if (u->context != NULL)
        zmq_ctx_term(u->context);
    if (u->wake_fd >= 0)
        close(u->wake_fd);
    vigild_sequence_close(&u->sequence);
    vigild_spool_close(u->spool);
    vigild_drops_free(u->drops);
    if (u->pending != NULL)
        g_hash_table_destroy(u->pending);
    if (u->inbox != NULL)
        g_async_queue_unref(u->inbox);
    g_array_free(u->settled, TRUE);
    g_hash_table_destroy(u->awaited);
    g_cond_clear(&u->carried_out);
    g_mutex_clear(&u->lock);
    g_mutex_clear(&u->spool_lock);
    vigild_uplink_settings_clear(&u->settings);
    g_free(u);
}

struct vigild_uplink *vigild_uplink_new(const struct vigild_uplink_settings *s, GError **error)
{
    if (s->endpoint == NULL || s->endpoint[0] == '\0') {
        g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                    "[uplink] endpoint is empty: there is no uplink to start");
        return NULL;
    }
    struct vigild_uplink *u = g_new0(struct vigild_uplink, 1);
    settings_copy(&u->settings, s);
    g_snprintf(u->routing_id, sizeof u->routing_id, "%016" PRIx64, s->node_id);
    g_mutex_init(&u->lock);
    g_mutex_init(&u->spool_lock);
    g_cond_init(&u->carried_out);
    u->settled = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    u->awaited = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    u->wake_fd = -1;
    u->inbox = g_async_queue_new_full(inbox_item_free);
    u->pending = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, pending_free);
    u->drops = vigild_drops_new();
    u->spool = vigild_spool_open(s->spool_dir, s->spool_max_bytes, error);
    if (u->spool == NULL) {
        uplink_destroy(u);
        return NULL;
    }
    vigild_spool_set_drops(u->spool, u->drops);
    u->counts.refused_kept = count_refused(s->spool_dir);
    /* What the spool holds is replayed first, oldest first; new sequences
     * start above it whatever the sequence file says. */
    GArray *spooled = vigild_spool_sequences(u->spool);
    for (guint i = 0; i < spooled->len; i++)
        add_pending(u, g_array_index(spooled, uint64_t, i), NULL, 0);
    uint64_t floor = spooled->len > 0 ? g_array_index(spooled, uint64_t, spooled->len - 1) + 1 : 1;
    u->counts.replayed = spooled->len;
    g_array_free(spooled, TRUE);
    if (!vigild_sequence_open(&u->sequence, s->spool_dir, floor, error) ||
        !make_sockets(u, error)) {
        uplink_destroy(u);
        return NULL;
    }
    /* Its drop counts' name: the first sequence it may hand out. Counts
     * reach the warehouse only in a batch of its own, of a sequence at or
     * above it, so the next vigild's first is above it. */
    vigild_drops_set_counter(u->drops, u->sequence.next);
    u->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (u->wake_fd < 0) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED, "uplink: eventfd: %s",
                    g_strerror(errno));
        uplink_destroy(u);
        return NULL;
    }
    publish(u);
    /* The sockets were made here; the thread start is the full memory
     * barrier ZeroMQ asks for before another thread uses them. */
    u->thread = g_thread_try_new("vigild-uplink", run, u, error);
    if (u->thread == NULL) {
        uplink_destroy(u);
        return NULL;
    }
    return u;
}

uint64_t vigild_uplink_next_sequence(struct vigild_uplink *u)
{
    return vigild_sequence_take(&u->sequence);
}

static void wake(struct vigild_uplink *u)
{
    uint64_t one = 1;
    /* Non-blocking: a full counter already means "wake up". */
    (void)!write(u->wake_fd, &one, sizeof one);
}

gboolean vigild_uplink_send(struct vigild_uplink *u, uint64_t sequence, GBytes *batch)
{
    struct inbox_item *item = g_new0(struct inbox_item, 1);
    item->sequence = sequence;
    item->batch = g_bytes_ref(batch);
    if (u->settings.spool_after_ms == 0) {
        /* Written ahead, here: when this returns the batch survives a
         * SIGKILL of vigild (not a power cut: there is no fsync here, and
         * the programs whose rings it empties do not survive one either). */
        GError *error = NULL;
        item->dropped = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        g_mutex_lock(&u->spool_lock);
        gboolean ok = vigild_spool_append(u->spool, sequence, batch, item->dropped, &error);
        item->spooled = ok && vigild_spool_has(u->spool, sequence);
        g_mutex_unlock(&u->spool_lock);
        if (!ok) {
            /* The thread tries again later and counts it; once here. */
            g_warning_once("uplink: cannot write batches ahead to the spool (%s): until it can, "
                           "a SIGKILL of vigild loses what vigil-txd has not acknowledged",
                           error->message);
            g_error_free(error);
        }
    }
    gboolean durable = item->spooled;
    /* Before the thread can hear of it: what it settles is found here. */
    if (!durable)
        g_hash_table_add(u->awaited, g_memdup2(&sequence, sizeof sequence));
    g_async_queue_push(u->inbox, item);
    wake(u);
    /* gtk.cfg says a queue does not keep what is pushed; this one does. */
    // cppcheck-suppress memleak
    return durable;
}

uint64_t vigild_uplink_durable_below(struct vigild_uplink *u)
{
    g_mutex_lock(&u->lock);
    for (guint i = 0; i < u->settled->len; i++)
        g_hash_table_remove(u->awaited, &g_array_index(u->settled, uint64_t, i));
    g_array_set_size(u->settled, 0);
    g_mutex_unlock(&u->lock);
    uint64_t below = UINT64_MAX;
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, u->awaited);
    while (g_hash_table_iter_next(&it, &key, NULL))
        below = MIN(below, *(const uint64_t *)key);
    return below;
}

/* Hands the thread a request and waits until it is carried out. */
static void run_request(struct vigild_uplink *u, struct request *r)
{
    struct inbox_item *item = g_new0(struct inbox_item, 1);
    item->request = r;
    g_async_queue_push(u->inbox, item);
    wake(u);
    g_mutex_lock(&u->lock);
    while (!r->done)
        g_cond_wait(&u->carried_out, &u->lock);
    g_mutex_unlock(&u->lock);
}

void vigild_uplink_spool_now(struct vigild_uplink *u)
{
    struct request r = {.kind = REQUEST_SPOOL_NOW};
    run_request(u, &r);
}

gboolean vigild_uplink_resend_refused(struct vigild_uplink *u, struct vigild_uplink_requeued *out,
                                      GError **error)
{
    struct request r = {.kind = REQUEST_RESEND_REFUSED};
    run_request(u, &r);
    *out = r.result;
    if (r.error != NULL) {
        g_propagate_error(error, r.error);
        return FALSE;
    }
    return TRUE;
}

gboolean vigild_uplink_replay(struct vigild_uplink *u, const char *path,
                              struct vigild_uplink_requeued *out, GError **error)
{
    struct request r = {.kind = REQUEST_REPLAY, .path = path};
    run_request(u, &r);
    *out = r.result;
    if (r.error != NULL) {
        g_propagate_error(error, r.error);
        return FALSE;
    }
    return TRUE;
}

gboolean vigild_uplink_system_state(struct vigild_uplink *u, struct vigil_wire_state *out)
{
    g_mutex_lock(&u->lock);
    gboolean have = u->have_system_state;
    if (have)
        *out = u->system_state;
    g_mutex_unlock(&u->lock);
    return have;
}

struct vigild_drops *vigild_uplink_drops(struct vigild_uplink *u)
{
    return u->drops;
}

void vigild_uplink_stats(struct vigild_uplink *u, struct vigild_uplink_stats *out)
{
    g_mutex_lock(&u->lock);
    *out = u->shared;
    g_mutex_unlock(&u->lock);
}

void vigild_uplink_free(struct vigild_uplink *u)
{
    if (u == NULL)
        return;
    g_async_queue_push(u->inbox, &stop_item);
    wake(u);
    g_thread_join(u->thread);
    uplink_destroy(u);
}
