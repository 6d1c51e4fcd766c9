/* vigil-txd — what store.c and store_processes.c share while they write a
 * group of batches: the store's connection and caches, and one batch's
 * context. Private to txd/. */
#ifndef VIGIL_TXD_STORE_BATCH_H
#define VIGIL_TXD_STORE_BATCH_H

#include "txd.h"

struct txd_store {
    struct vigil_warehouse_settings settings;
    PGconn *db;
    int64_t next_maintain_ns;       /* monotonic; 0: at the next turn */
    int64_t next_levels_ns;         /* the same for the roll-up levels (store_levels.c) */
    guint levels_interval_s;        /* 0: vigil-txd does not build them */
    struct txd_levels_pass *levels; /* the levels' thread and connection, or NULL */
    struct txd_ids *ids;
    struct txd_known_processes *known_processes;
    struct txd_store_counts counts;
    GHashTable *below;   /* node id → when a sequence below its highest was last said */
    GHashTable *highest; /* node id → the highest sequence this server stored of it */
    /* node id → struct txd_node_written: what `nodes` holds of it, as of
     * this server's last committed write. */
    GHashTable *nodes_written;
};

/* What one batch needs while it is written: its node's clock and the
 * warehouse ids of the processes and files it names. */
struct batch_context {
    struct txd_store *store;
    const struct vigil_wire_message *batch;
    const struct vigil_wire_node *node;
    int64_t node_id;       /* as the warehouse keys it */
    GHashTable *processes; /* daemon's process id → warehouse id (boxed) */
    GHashTable *files;     /* "process id:file id" → warehouse id */
    GHashTable *metrics;   /* daemon's metric id → warehouse id */
    GHashTable *runs;      /* "UID KEY" (the key a process of UID named) → struct batch_run */
    GHashTable *jobs;      /* scheduler job id → warehouse id */
    /* Daemon's process id → its UNWATCHED_ENDS item: its end is a bound. */
    GHashTable *unwatched_ends;
    uint64_t rows;
    uint64_t runs_described;
    /* The group's per-second counts, while store_rows copies activities. */
    struct txd_activity_seconds *activity_seconds;
};

static inline int64_t realtime(const struct batch_context *b, uint64_t monotonic_ns)
{
    return (int64_t)monotonic_ns + b->node->realtime_offset_ns;
}

static inline gboolean lookup(GHashTable *table, gconstpointer key, int64_t *id)
{
    gpointer value;
    if (!g_hash_table_lookup_extended(table, key, NULL, &value))
        return FALSE;
    *id = (int64_t)GPOINTER_TO_SIZE(value);
    return TRUE;
}

/* Sets a TXD_ERROR_REFUSE error: the batch itself can never be stored. */
gboolean txd_refuse(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);
/* The warehouse id of the batch's process `daemon_id`; refused when the
 * batch does not describe it (`what` names the item that refers to it). */
gboolean txd_process_id_of(const struct batch_context *b, uint64_t daemon_id, int64_t *id,
                           const char *what, GError **error);

/* ---- store_processes.c ---------------------------------------------------------------- */

/* The batch's PROCESSES items (and their jobs and runs) into the
 * warehouse, each looked up in b->processes afterwards; then each run a new
 * or changed process belongs to is described again. A process stored
 * before by this server, and unchanged, costs no statement. */
gboolean txd_store_processes(struct batch_context *b, GError **error);

/* What this server stored of each process, kept across batches; what a
 * transaction learnt counts only once it commits. */
struct txd_known_processes;
struct txd_known_processes *txd_known_processes_new(void);
void txd_known_processes_free(struct txd_known_processes *k);
void txd_known_processes_commit(struct txd_known_processes *k);
void txd_known_processes_rollback(struct txd_known_processes *k);

#endif
