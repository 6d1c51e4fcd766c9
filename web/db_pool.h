/* vigil-web — a small pool of warehouse connections. Each is read-only
 * (default_transaction_read_only), has the statement timeout of the
 * config, and speaks UTC; each request runs in one REPEATABLE READ
 * transaction, so its queries see one state of the warehouse. A
 * connection that broke (the server restarted) is made again on its next
 * use; while the server is away, requests get 503 at once. */
#ifndef VIGIL_WEB_DB_POOL_H
#define VIGIL_WEB_DB_POOL_H

#include <glib.h>
#include <libpq-fe.h>

#include "request.h"

struct web_db_pool;

struct web_db_pool *web_db_pool_new(const char *conninfo, guint size, guint connect_timeout_s,
                                    guint statement_timeout_ms);
void web_db_pool_free(struct web_db_pool *pool);

/* Waits for a free connection, connects it if needed and opens the
 * request's transaction; 503 when the warehouse cannot be reached. */
PGconn *web_db_pool_take(struct web_db_pool *pool, GError **error);
/* Ends the transaction and gives the connection back. */
void web_db_pool_give(struct web_db_pool *pool, PGconn *db);

/* Runs `sql` with text parameters (NULL for SQL NULL) on the request's
 * connection. NULL with error set when it fails: 503 when the warehouse
 * went away or the query outran statement_timeout_ms, 500 otherwise. */
PGresult *web_db_query(struct web_request *req, const char *sql, int n_params,
                       const char *const *params, GError **error);
/* The same, its values in binary (web/pg_binary.h reads them): for
 * answers of many numbers, which text would print and parse again. */
PGresult *web_db_query_binary(struct web_request *req, const char *sql, int n_params,
                              const char *const *params, GError **error);
/* web_db_query_binary of a statement prepared once a connection, as
 * `name`, and run on its generic plan: for a query of every request whose
 * planning costs more than its run (a level's blocks: partitions). */
PGresult *web_db_query_prepared(struct web_request *req, const char *name, const char *sql,
                                int n_params, const char *const *params, GError **error);
/* The same for the thing `what` whose id is `id`: a 404 "WHAT ID does not
 * exist" when the query returns no row. */
PGresult *web_db_query_found(struct web_request *req, const char *sql, int n_params,
                             const char *const *params, const char *what, const char *id,
                             GError **error);
/* The same for what only its owner sees (a run, a window): the 404 says
 * "WHAT ID does not exist or is not yours" to a viewer who is no admin,
 * who cannot tell another user's thing from none. */
PGresult *web_db_query_owned(struct web_request *req, const char *sql, int n_params,
                             const char *const *params, const char *what, const char *id,
                             GError **error);

#endif
