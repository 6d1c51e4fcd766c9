/* vigil — the PostgreSQL warehouse: connecting to it and bringing its schema
 * up to date. vigil-txd writes into it; `vigil db migrate`, `vigil report`
 * and vigil-web read it.
 *
 * The connection string comes from the config ([warehouse] conninfo) or,
 * when that is empty, from libpq's own PGSERVICE / PG* variables and
 * ~/.pgpass: never from a command line, where `ps` would show a password. */
#ifndef VIGIL_WAREHOUSE_H
#define VIGIL_WAREHOUSE_H

#include <glib.h>
#include <libpq-fe.h>

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

/* Applies, in order, every built-in migration (schema/NNNN_name.sql) not yet
 * recorded in vigil_schema_migrations, each in its own transaction with its
 * record. Safe to run twice and from two programs at once (an advisory lock
 * serialises them). A recorded migration whose text has changed since is an
 * error naming it. *applied (may be NULL) gets how many were applied now. */
gboolean vigil_warehouse_migrate(PGconn *db, guint *applied, GError **error);

/* The highest migration number built in; vigil-txd refuses a database whose
 * schema is older (unless told to migrate) or newer. */
guint vigil_warehouse_latest_version(void);

/* The schema version recorded in the database: 0 for an empty one. */
gboolean vigil_warehouse_current_version(PGconn *db, guint *version, GError **error);

#endif
