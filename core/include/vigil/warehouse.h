/* vigil — the PostgreSQL warehouse: connecting to it and bringing its schema
 * up to date. vigil-txd writes into it; `vigil db migrate`, `vigil report`
 * and vigil-web read it.
 *
 * The connection string comes from the config ([warehouse] conninfo) or,
 * when that is empty, from libpq's own PGSERVICE / PG* variables and
 * ~/.pgpass: never from a command line, where `ps` would show a password. */
#ifndef VIGIL_WAREHOUSE_H
#define VIGIL_WAREHOUSE_H

#include <gio/gio.h>
#include <glib.h>
#include <libpq-fe.h>

#include "vigil/warehouse_settings.h"

#define VIGIL_WAREHOUSE_ERROR (vigil_warehouse_error_quark())
GQuark vigil_warehouse_error_quark(void);

enum vigil_warehouse_error_code {
    VIGIL_WAREHOUSE_ERROR_CONNECT,   /* the server cannot be reached or refused us */
    VIGIL_WAREHOUSE_ERROR_CONNINFO,  /* a connection string that is malformed or unsafe */
    VIGIL_WAREHOUSE_ERROR_MIGRATION, /* a migration failed, or the schema is not ours */
    VIGIL_WAREHOUSE_ERROR_QUERY,     /* any other statement failed */
};

/* Connects with `conninfo` ("" or NULL: libpq's environment). The error
 * names the server libpq tried and what it said. */
PGconn *vigil_warehouse_connect(const char *conninfo, GError **error);
/* The same, waiting at most connect_timeout_s (libpq's connect_timeout,
 * unless the string sets one; 0: libpq's default, for ever) for the
 * server. */
PGconn *vigil_warehouse_connect_timeout(const char *conninfo, guint connect_timeout_s,
                                        GError **error);

/* Applies, in order, every built-in migration (warehouse/migrations/NNNN_name.sql) not yet
 * recorded in vigil_schema_migrations, each in its own transaction with its
 * record. Safe to run twice and from two programs at once (an advisory lock
 * serialises them). A recorded migration whose text has changed since is an
 * error naming it. *applied (may be NULL) gets how many were applied now. */
gboolean vigil_warehouse_migrate(PGconn *db, guint *applied, GError **error);

/* After the migrations, on a Citus coordinator (warehouse_citus.c): makes
 * each table not yet distributed a distributed or reference table, as its
 * row in the layout says, in one transaction. Safe to run twice. An error
 * when Citus is not in the database or a table has no row. *laid_out gets
 * how many tables were laid out now. */
gboolean vigil_warehouse_citus_layout(PGconn *db, guint *laid_out, GError **error);

/* The highest migration number built in; vigil-txd refuses a database whose
 * schema is older (unless told to migrate) or newer. */
guint vigil_warehouse_latest_version(void);

/* The schema version recorded in the database: 0 for an empty one. */
gboolean vigil_warehouse_current_version(PGconn *db, guint *version, GError **error);

/* ---- day partitions (warehouse_maintain.c) ------------------------------------ */

/* vigil_warehouse_day_tables: vigil/warehouse_settings.h */

/* Makes `table`'s partition for the day `day` (days since 1970-01-01, UTC)
 * unless a partition holds that day already. Runs as its own statement, so
 * as its own transaction when none is open: call it outside any. */
gboolean vigil_warehouse_day_partition(PGconn *db, const char *table, gint64 day, gboolean *created,
                                       GError **error);

/* The maintenance step: every day table's partitions for yesterday ..
 * today + ahead_days (the database's today, UTC), each in its own short
 * transaction. *created (may be NULL) gets how many were made. */
gboolean vigil_warehouse_maintain(PGconn *db, guint ahead_days, guint *created, GError **error);

/* One pass of building the coarser roll-up levels (warehouse_levels.c,
 * migrations 15 and 16), aggregated in C in one transaction: per level,
 * the stale blocks again, then the blocks that ended 120 s ago or more, at
 * most `span` (an interval: "1 hour") of them. `cancel` (may be NULL)
 * stops it between statements (the pass rolled back). *busy: another
 * session holds the building lock (nothing done); *caught_up: nothing more
 * is ready to build; *rows: the blocks written. */
gboolean vigil_warehouse_build_levels(PGconn *db, const char *span, GCancellable *cancel,
                                      gboolean *busy, gboolean *caught_up, guint64 *rows,
                                      GError **error);

/* What ingested_batches really keeps: never less than the longest of the
 * data tables (0, for ever, when one keeps for ever), or a batch resent
 * after its record was dropped would be stored twice. */
guint vigil_warehouse_batches_retention(const struct vigil_warehouse_retention *r);

struct vigil_warehouse_expired {
    char *table, *partition;
    char *until; /* the day (UTC) its rows end before, YYYY-MM-DD */
};
void vigil_warehouse_expired_free(gpointer expired);

/* Drops (unless dry_run) every partition of a day table whose rows are
 * all older than its retention: whole partitions, never rows. Each DROP
 * is its own transaction. `out` gets a struct vigil_warehouse_expired for
 * each (dropped, or to drop), in order; on an error the ones before it
 * were dropped. */
gboolean vigil_warehouse_prune(PGconn *db, const struct vigil_warehouse_retention *r,
                               gboolean dry_run, GPtrArray *out, GError **error);

/* What a failed write means for the rows that made it. */
enum vigil_warehouse_fault {
    VIGIL_WAREHOUSE_FAULT_RETRY,        /* the database is down or busy: write them again later */
    VIGIL_WAREHOUSE_FAULT_REFUSE,       /* the rows themselves are wrong (SQLSTATE classes 22,
                                         * 23, 54): they never will be stored */
    VIGIL_WAREHOUSE_FAULT_NO_PARTITION, /* a day partition known to exist was dropped: make it
                                         * again, then retry */
};
/* Classifies the failed `result` of a write on `db` (NULL: the connection
 * failed). *timeout is "" or which timeout fired, as a prefix for the
 * message; *said (g_free) is "(SQLSTATE): what PostgreSQL said". */
enum vigil_warehouse_fault vigil_warehouse_write_fault(PGconn *db, const PGresult *result,
                                                       const char **timeout, char **said);

#endif
