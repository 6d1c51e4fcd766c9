/* vigild — batches to vigil-txd (uplink.c). */
#ifndef VIGILD_UPLINK_H
#define VIGILD_UPLINK_H

#include <stdint.h>
#include <glib.h>

#include "vigil/config.h"
#include "vigil/settings.h"

struct vigild_uplink;

/* The uplink runs its own thread, which owns the ZeroMQ sockets and the
 * spool; the functions below are called from the main thread only. A batch
 * is kept (in memory, then on disk) until vigil-txd acknowledges it, and
 * sent again until it does: vigil-txd ignores a (node, sequence) it has. */

struct vigil_wire_state;
struct vigild_drops; /* uplink_drops.h */

/* [uplink]: each key fills the field of its name (uplink_keys.c), and
 * vigild_uplink_settings_load derives the rest. Strings are owned. */
struct vigild_uplink_settings {
    char *endpoint; /* "": no uplink */
    uint64_t node_id;
    char *hostname; /* [uplink] hostname, else the machine's; never empty */
    char *spool_dir;
    uint64_t spool_max_bytes;
    guint spool_after_ms;
    guint resend_after_ms;
    uint64_t memory_max_bytes;
    uint64_t in_flight_max_bytes;
    uint64_t refused_max_bytes;
    /* Spread so that a thousand nodes do not all come back at once after
     * vigil-txd restarts (each CURVE handshake costs it a curve25519). */
    guint reconnect_ivl_ms;     /* this node's, drawn in [it, 2 × it) */
    guint reconnect_ivl_max_ms; /* backoff up to it; 0: none */
    guint connect_delay_max_ms; /* the first connect waits a random time below it */
    char *curve_server_key;     /* Z85 text; "": no CURVE */
    char *curve_key_file;
    /* curve_key_file's pair, Z85 text; NULL when CURVE is off */
    char *curve_public_key;
    char *curve_secret_key;
};

/* Reads [uplink]: derives node_id when it is 0 and the host name when it is
 * empty, reads the key pair from curve_key_file. Every refusal names the
 * key. */
gboolean vigild_uplink_settings_load(const vigil_config *config, struct vigild_uplink_settings *out,
                                     GError **error);
void vigild_uplink_settings_clear(struct vigild_uplink_settings *s);
/* Whether two loaded settings are the same, key pairs included. */
gboolean vigild_uplink_settings_equal(const struct vigild_uplink_settings *a,
                                      const struct vigild_uplink_settings *b);
/* /etc/machine-id's first 16 hex digits, else a hash of the host name; 63
 * bits (the warehouse keys nodes by a bigint), never 0. */
uint64_t vigild_uplink_derive_node_id(const char *machine_id_path, const char *hostname);
/* The node's name in the warehouse: [uplink] hostname as written, else the
 * machine's. */
const char *vigild_uplink_hostname(const char *configured);

struct vigild_uplink_stats {
    uint64_t sent;   /* sends handed to ZeroMQ, resends included */
    uint64_t resent; /* of those, a batch sent before */
    uint64_t acked;
    uint64_t in_flight; /* sent and not acknowledged yet */
    uint64_t in_flight_bytes;
    uint64_t unacked;        /* every batch kept: in memory or in the spool */
    uint64_t memory_batches; /* kept in memory only, not spooled yet */
    uint64_t memory_bytes;
    uint64_t spooled_batches; /* in the spool, not acknowledged */
    uint64_t spool_bytes;     /* disk the spool's segments use */
    uint64_t replayed;        /* found in the spool at start, queued again */
    uint64_t dropped_full_batches, dropped_full_bytes; /* spool_max_bytes reached */
    /* The spool could not take them and memory_max_bytes was reached. */
    uint64_t dropped_memory_batches, dropped_memory_bytes;
    uint64_t refused_deleted;     /* kept refused batches deleted for refused_max_bytes */
    uint64_t refused;             /* by vigil-txd, or malformed here: kept in refused/ */
    uint64_t refused_kept;        /* batches in refused/ now, waiting for `vigil spool resend` */
    uint64_t resent_refused;      /* taken back from refused/ to be sent again */
    uint64_t spool_corrupt;       /* damaged stretches of spool files, kept aside */
    uint64_t spool_corrupt_bytes; /* their bytes */
    uint64_t spool_errors;        /* spool files that could not be written or read */
    uint64_t unexpected;          /* messages from vigil-txd that were not understood */
    gboolean connected;           /* a handshake with vigil-txd succeeded and holds */
    char last_error[256];         /* "" when none */
    char last_refusal[512];       /* vigil-txd's reason for the last batch it refused; "" */
};

/* Opens the spool (replaying what it holds) and starts the thread; NULL
 * with error set when the spool or the endpoint cannot be used. */
struct vigild_uplink *vigild_uplink_new(const struct vigild_uplink_settings *s, GError **error);
/* The next batch's sequence: never one handed out before, even by an
 * earlier vigild on the same spool_dir. */
uint64_t vigild_uplink_next_sequence(struct vigild_uplink *u);
/* Takes a reference to a finished BATCH message. With spool_after_ms = 0
 * it first writes it to the spool; TRUE when it is there, i.e. survives a
 * SIGKILL of vigild. */
gboolean vigild_uplink_send(struct vigild_uplink *u, uint64_t sequence, GBytes *batch);
/* The lowest sequence handed to vigild_uplink_send that is not durable yet
 * (neither spooled nor acknowledged, nor given up on: refused or dropped,
 * which is counted); UINT64_MAX when every batch is. The ring slots a
 * batch carries may be freed only once its sequence is below this. */
uint64_t vigild_uplink_durable_below(struct vigild_uplink *u);
/* Spools every batch in memory the spool can take, and returns once it
 * has tried (vigild's stop, before it commits the rings). */
void vigild_uplink_spool_now(struct vigild_uplink *u);

/* What `vigil spool resend|replay` queued again. */
struct vigild_uplink_requeued {
    uint64_t batches;          /* queued: spooled, then sent */
    uint64_t skipped;          /* held already (waiting to be sent): left as they were */
    uint64_t unreadable_bytes; /* in no intact batch */
};
/* Queues again every batch kept in SPOOL_DIR/refused/ (vigil-txd refused
 * them; what made it may be fixed now) and removes their files. */
gboolean vigild_uplink_resend_refused(struct vigild_uplink *u, struct vigild_uplink_requeued *out,
                                      GError **error);
/* Queues the intact batches of the file at `path` (a NAME.damaged the
 * spool set aside), then renames it NAME.replayed. FALSE with error set
 * when it cannot be read. */
gboolean vigild_uplink_replay(struct vigild_uplink *u, const char *path,
                              struct vigild_uplink_requeued *out, GError **error);
/* The last system state vigil-txd sent; FALSE when none came yet. */
gboolean vigild_uplink_system_state(struct vigild_uplink *u, struct vigil_wire_state *out);
void vigild_uplink_stats(struct vigild_uplink *u, struct vigild_uplink_stats *out);
/* What the uplink and its spool dropped of the outbox's batches, per
 * process (uplink_drops.h). */
struct vigild_drops *vigild_uplink_drops(struct vigild_uplink *u);
/* Spools every unacknowledged batch still in memory, then stops. */
void vigild_uplink_free(struct vigild_uplink *u);

#endif
