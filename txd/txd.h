/* vigil-txd — the transaction server's parts.
 *
 *   txd_main.c            the command line, signals, the loop
 *   txd_settings.c        [txd] from the config (txd_settings.h); txd_keys.c is
 *                         the [txd] table, warehouse/warehouse_keys.c [warehouse]'s
 *   txd_router.c          the ROUTER socket's options
 *   txd_server.c          the ROUTER socket: batches in, acknowledgements and
 *                     refusals out, the queue of batches waiting for the
 *                     database, the system state sent down
 *   store_thread.c    the store on a thread of its own: PostgreSQL takes a
 *                     group while the loop receives the next
 *   store.c           a group of batches into PostgreSQL in one transaction:
 *                     one claim of their (node, sequence)s, one COPY per
 *                     table; a refused batch found and refused alone
 *   store_processes.c a batch's processes, jobs and runs; what was stored
 *                     of each process, so that an unchanged one costs nothing
 *   store_ids.c       the warehouse ids of metrics, metric sets and files,
 *                     cached across batches
 *   store_groups.c    a batch's statistics grouped by window or tick
 *   store_activity_seconds.c a group's activities counted per process and second
 *   txd_system_reasoner.c the nodes' latest states → the system's state
 *   curve.c           CURVE keys and the ZAP handler that admits daemons */
#ifndef VIGIL_TXD_H
#define VIGIL_TXD_H

#include <math.h>
#include <stdint.h>
#include <glib.h>
#include <libpq-fe.h>

#include "vigil/config.h"
#include "vigil/reasoner.h"
#include "vigil/warehouse.h"
#include "vigil/wire.h"
#include "copy_binary.h"
#include "txd_settings.h"

/* ---- txd_settings.c: txd_settings.h ------------------------------------------- */

/* ---- store_pg_error.c: errors -------------------------------------------------------- */

#define TXD_ERROR (txd_error_quark())
GQuark txd_error_quark(void);

enum txd_error_code {
    TXD_ERROR_RETRY,        /* the database is down or busy: try the batch again later */
    TXD_ERROR_REFUSE,       /* the batch itself can never be stored */
    TXD_ERROR_NO_PARTITION, /* a partition known to exist was dropped: retry */
};

/* An error for a failed statement, by the warehouse's classification
 * (vigil_warehouse_write_fault): TXD_ERROR_REFUSE when PostgreSQL rejected
 * the data, TXD_ERROR_NO_PARTITION when a cached day partition is gone,
 * else TXD_ERROR_RETRY (connection lost, server shutting down, out of
 * resources, a deadlock, a timeout). */
void txd_set_pg_error(GError **error, PGconn *db, const PGresult *result, const char *what);
/* Runs `sql`, a command with its `n_params` parameters as text; FALSE
 * with that error when it fails. */
gboolean txd_exec_params(PGconn *db, const char *sql, int n_params, const char *const *values,
                         GError **error);

/* ---- binary COPY: warehouse/copy_binary.h ------------------------------------------ */

/* The error's code says whether to retry (txd_set_pg_error). */
static inline gboolean txd_copy_send(PGconn *db, const char *statement, struct vigil_copy *c,
                                     GError **error)
{
    return vigil_copy_send(db, statement, c, txd_set_pg_error, error);
}

/* ---- store_jobs.c --------------------------------------------------------------------- */

/* The batch's JOBS items into jobs and job_steps, in the batch's
 * transaction; `rows` counts them. */
gboolean txd_store_jobs(PGconn *db, int64_t node_id, int64_t realtime_offset_ns,
                        const struct vigil_wire_message *batch, uint64_t *rows, GError **error);

/* ---- store_drops.c -------------------------------------------------------------------- */

/* The batch's DROPS items into uplink_drops, in the batch's transaction;
 * `rows` counts them. */
gboolean txd_store_drops(PGconn *db, int64_t node_id, const struct vigil_wire_message *batch,
                         uint64_t *rows, GError **error);
/* ---- store_unwatched_ends.c ---------------------------------------------------------- */

/* The batch's UNWATCHED_ENDS items by the daemon's process id (uint64_t
 * keys; the items stay the batch's). g_hash_table_destroy it. */
GHashTable *txd_unwatched_ends_of(const struct vigil_wire_message *batch);
/* What vigild counted of a process that ended while no vigild ran, into
 * process_unwatched_ends, in the batch's transaction. */
gboolean txd_store_unwatched_end(PGconn *db, int64_t process_id,
                                 const struct vigil_wire_unwatched_end *e, GError **error);

/* ---- store_activity_seconds.c ------------------------------------------------------- */

/* A group's activities counted per (node, process, second, layer,
 * operation) for activity_seconds: add each activity as it is COPYed, then
 * COPY the counts once, in the same transaction. */
struct txd_activity_seconds;
struct txd_activity_seconds *txd_activity_seconds_new(void);
void txd_activity_seconds_free(struct txd_activity_seconds *s);
/* start_ns: the realtime stored as activities.start_ns. */
void txd_activity_seconds_add(struct txd_activity_seconds *s, int64_t node_id, int64_t process_id,
                              int64_t start_ns, uint16_t layer, uint16_t operation, uint64_t bytes,
                              int64_t duration_ns);
gboolean txd_activity_seconds_copy(struct txd_activity_seconds *s, PGconn *db, GError **error);

/* ---- store_file_stats.c ------------------------------------------------------------- */

/* A report stored in run_summaries: the process's warehouse id, its JSON,
 * and what to call it in the log ("batch NODE:SEQUENCE, process P"). */
struct txd_report_ref {
    int64_t process_id;
    const char *report_json;
    const char *label;
};

/* The reports' "files" and "timeline" into file_stats and
 * process_io_timelines (warehouse/migrations/0008_file_stats.sql), replacing what those
 * processes had. A part that is malformed gets no rows, and a warning says
 * which member is wrong and why; the rest is stored. FALSE (with a
 * TXD_ERROR code) only when the database fails. `rows` counts them. */
gboolean txd_store_file_stats(PGconn *db, const struct txd_report_ref *reports, guint n,
                              uint64_t *rows, GError **error);

/* ---- store.c -------------------------------------------------------------------------- */

enum txd_store_result {
    TXD_STORED,    /* written and committed now */
    TXD_DUPLICATE, /* stored before: acknowledge, write nothing */
    TXD_RETRY,     /* the database is unreachable or failed: keep it, try later */
    TXD_REFUSED,   /* can never be stored: tell the daemon why */
};

struct txd_store;

/* The items of every inner message of `type` in `batch`, in the order
 * `compare` (as g_ptr_array_sort's) puts them: pointers into the batch.
 * `items_offset` is where such a message keeps them, `item_size` one's
 * size; TXD_BATCH_ITEMS says both by the member's name. */
GPtrArray *txd_batch_items(const struct vigil_wire_message *batch, enum vigil_wire_type type,
                           size_t items_offset, size_t item_size, GCompareFunc compare);
#define TXD_BATCH_ITEMS(batch, type, member, compare)                                              \
    txd_batch_items((batch), (type), offsetof(struct vigil_wire_message, member),                  \
                    sizeof *((struct vigil_wire_message *)NULL)->member, (compare))

/* Nothing is connected yet: the first store (or txd_store_connect) does. */
struct txd_store *txd_store_new(const struct vigil_warehouse_settings *warehouse);
void txd_store_free(struct txd_store *s);
/* Connects when not connected: checks the schema's version, migrating
 * first when told to. FALSE with error when the database cannot be used. */
gboolean txd_store_connect(struct txd_store *s, GError **error);
gboolean txd_store_connected(const struct txd_store *s);
/* Who sent a batch and what it held, as it came on the wire. */
struct txd_batch_origin {
    const char *curve_key; /* the sender's CURVE public key (Z85), or NULL without CURVE */
    uint32_t crc32;        /* the BATCH message's CRC-32 (its header's): its content */
    uint64_t bytes;        /* and its length */
};

/* One batch of a group: what to store, and what became of it. */
struct txd_group_item {
    const struct vigil_wire_message *batch;
    struct txd_batch_origin origin;
    enum txd_store_result result; /* TXD_STORED, TXD_DUPLICATE or TXD_REFUSED */
    GError *error;                /* why, for TXD_REFUSED; the caller frees it */
};

/* Writes `n` decoded BATCHes in ONE transaction, one commit (one
 * fdatasync) for them all: one claim statement, one COPY per table. A
 * batch the database refuses is found (by itself, or by bisecting the
 * group when a COPY of the group is refused) and is TXD_REFUSED alone;
 * the others are written again without it. One stored before (also
 * earlier in the same group) is TXD_DUPLICATE. The results hold once this
 * returns TXD_STORED. Any other failure: TXD_RETRY with error, and every
 * batch waits (a part that committed before the failure is found as
 * stored when tried again). */
enum txd_store_result txd_store_group(struct txd_store *s, struct txd_group_item *items, guint n,
                                      GError **error);
/* Writes one decoded BATCH (a group of one). A (node, sequence) stored before is
 * TXD_DUPLICATE when its content was the same, TXD_REFUSED ("sequence
 * reused") when not; with a CURVE key, a node id first seen with another
 * key is TXD_REFUSED. For TXD_RETRY and TXD_REFUSED error says why. */
enum txd_store_result txd_store_batch(struct txd_store *s, const struct vigil_wire_message *batch,
                                      const struct txd_batch_origin *origin, GError **error);
/* The maintenance step (day partitions ahead) when it is due: at each
 * connection and every maintain_interval_s. Only when connected; a failure
 * is logged and tried again at the next turn. */
void txd_store_maintain_when_due(struct txd_store *s);
/* ---- store_levels.c: the coarser roll-up levels ---------------------------------- */

/* Building them, every `seconds` ([txd] levels_interval_s; 0: never) when
 * connected, a bounded pass each time, sent on a connection of their own
 * and collected at a later call; a failure is logged and tried again.
 * Close cancels a pass on its way. */
void txd_store_set_levels_interval(struct txd_store *s, guint seconds);
void txd_store_levels_when_due(struct txd_store *s);
void txd_store_levels_close(struct txd_store *s);
/* A group's roll-ups that came late: add each batch written, then store
 * (which frees it) in the group's transaction, before its COMMIT: the
 * blocks they fall in are built again. No statement when none is late. */
struct txd_levels_late;
struct batch_context;
struct txd_levels_late *txd_levels_late_new(void);
void txd_levels_late_add(struct txd_levels_late *l, const struct batch_context *b);
gboolean txd_levels_late_store(struct txd_levels_late *l, PGconn *db, GError **error);

/* The system reasoner's decision, best effort (FALSE when not stored). */
gboolean txd_store_system_state(struct txd_store *s, const struct vigil_wire_state *state,
                                int64_t realtime_ns, GError **error);

struct txd_store_counts {
    uint64_t batches_stored, batches_duplicate, batches_refused, rows_stored;
    uint64_t batches_reused;   /* a stored (node, sequence) with other content (refused too) */
    uint64_t batches_impostor; /* a node id of another CURVE key (refused too) */
    uint64_t batches_below;    /* stored with a sequence below the node's highest */
    uint64_t runs_described;   /* run rows described again: at most one per run per batch */
};
void txd_store_counts(const struct txd_store *s, struct txd_store_counts *out);
/* Statement parameters as text, kept alive in `buffers`: an integer, and a
 * realtime as a timestamptz (UTC, µs), NULL when GLib cannot name its date. */
const char *txd_param_int(GPtrArray *buffers, int64_t v);
const char *txd_param_timestamp(GPtrArray *buffers, int64_t realtime_ns);

/* ---- store_groups.c ------------------------------------------------------------------- */

/* The indices 0 .. n-1 grouped by equal `keys` (two words each: a roll-up's
 * start and end, a sample's time and 0): a GArray of guint per key, in
 * the order of each key's first item, each in the items' order.
 * g_ptr_array_unref it. */
GPtrArray *txd_store_groups(const uint64_t (*keys)[2], guint n);

/* ---- store_ids.c ------------------------------------------------------------------------ */

/* Warehouse ids looked up once and kept. An id made inside a transaction
 * that then rolls back never existed: ids learnt in a transaction are kept
 * aside until it commits (txd_ids_commit) or dropped (txd_ids_rollback). */
struct txd_ids;

struct txd_ids *txd_ids_new(void);
void txd_ids_free(struct txd_ids *ids);
void txd_ids_commit(struct txd_ids *ids);
void txd_ids_rollback(struct txd_ids *ids);
/* Each returns the id, or -1 with error set. */
int64_t txd_ids_metric(struct txd_ids *ids, PGconn *db, const struct vigil_metric_desc *m,
                       GError **error);
int64_t txd_ids_file(struct txd_ids *ids, PGconn *db, const char *path, size_t length,
                     GError **error);
/* The metric set of the `n` warehouse metric ids, in their order
 * (metric_sets, migration 13). */
int64_t txd_ids_metric_set(struct txd_ids *ids, PGconn *db, const int32_t *metric_ids, guint n,
                           GError **error);
/* Makes sure table `t` (an index into vigil_warehouse_day_tables) has a
 * partition for `day` (days since the epoch, UTC): known, or checked and
 * made if missing, in a statement of its own; call it outside any
 * transaction. */
gboolean txd_ids_partition(struct txd_ids *ids, PGconn *db, unsigned t, int64_t day,
                           GError **error);
/* Forgets the partitions known: one was dropped (by prune or an admin). */
void txd_ids_forget_partitions(struct txd_ids *ids);

/* ---- txd_system_reasoner.c --------------------------------------------------------------------
 */

struct txd_system_reasoner;

struct txd_system_reasoner *txd_system_reasoner_new(const struct vigil_reasoner_rule *rule,
                                                    guint max_age_ms);
void txd_system_reasoner_free(struct txd_system_reasoner *r);
void txd_system_reasoner_set_rule(struct txd_system_reasoner *r,
                                  const struct vigil_reasoner_rule *rule, guint max_age_ms);
/* A node's state for a cycle that ended at `realtime_ns`; older news than
 * what the node already said is ignored. */
void txd_system_reasoner_node_state(struct txd_system_reasoner *r, uint64_t node_id,
                                    enum vigil_health state, int64_t realtime_ns);
/* Decides the cycle that ends at `now_realtime_ns` from the nodes heard from
 * within max_age. */
void txd_system_reasoner_decide(struct txd_system_reasoner *r, int64_t now_realtime_ns,
                                struct vigil_wire_state *out);
/* What node `node_id` is told after that decision: the same rule over the
 * other nodes' states, held in the node's own memory (call it once a
 * cycle a node). A node the reasoner does not know sees every node. */
void txd_system_reasoner_decide_for(struct txd_system_reasoner *r, uint64_t node_id,
                                    struct vigil_wire_state *out);
guint txd_system_reasoner_nodes(const struct txd_system_reasoner *r);

/* ---- txd_router.c ------------------------------------------------------------------------------
 */

/* The ROUTER the daemons connect to, its options set (not yet bound):
 * ZMQ_RCVHWM receive_batches_per_node, the link's liveness options. */
void *txd_router_new(void *context, guint receive_batches_per_node, GError **error);

/* ---- store_thread.c: the store beside the main loop --------------------------------- */

/* One job for the store's thread: a group to store (n > 0), the system
 * state to store (has_state), and the store's timers in any case. */
struct txd_store_job {
    struct txd_group_item *items;
    guint n;
    enum txd_store_result result; /* of the group: see txd_store_group */
    GError *error;                /* why, for TXD_RETRY; the caller frees it */
    gboolean has_state;
    struct vigil_wire_state state;
    int64_t state_realtime_ns;
    gboolean state_stored;
    GError *state_error; /* why not, when not stored (may be NULL); the caller frees it */
};

struct txd_store_thread;

/* Starts the thread; from now on it alone uses `store`, until
 * txd_store_thread_stop returns. */
struct txd_store_thread *txd_store_thread_new(struct txd_store *store, GError **error);
/* Readable (POLLIN) when a job is done: then txd_store_thread_take. */
int txd_store_thread_fd(const struct txd_store_thread *t);
/* Hands `job` over; no other until it is taken back. The job, its items and
 * their batches stay untouched by the caller until then. */
void txd_store_thread_post(struct txd_store_thread *t, struct txd_store_job *job);
/* The job done, or NULL when it is still on its way. */
struct txd_store_job *txd_store_thread_take(struct txd_store_thread *t);
/* Finishes the job on its way (take it after) and ends the thread: the
 * store is the caller's again. */
void txd_store_thread_stop(struct txd_store_thread *t);
/* Stops it first. */
void txd_store_thread_free(struct txd_store_thread *t);

/* ---- txd_server.c ------------------------------------------------------------------------------
 */

struct txd_server;

/* Binds and, when configured, sets up CURVE; a database that is down is
 * not an error (batches wait), a schema of another version is. */
struct txd_server *txd_server_new(const struct txd_settings *settings,
                                  const struct vigil_warehouse_settings *warehouse,
                                  const struct vigil_reasoner_rule *rule, int signal_fd,
                                  GError **error);
void txd_server_set_rule(struct txd_server *s, const struct vigil_reasoner_rule *rule);
/* One turn of the loop; each signal read from signal_fd goes to on_signal. */
void txd_server_turn(struct txd_server *s, void (*on_signal)(struct txd_server *s, int signal));
void txd_server_stop(struct txd_server *s);
gboolean txd_server_stopping(const struct txd_server *s);
void txd_server_free(struct txd_server *s);

#endif
