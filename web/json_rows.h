/* vigil-web — query results as JSON: each column by its PostgreSQL type
 * (integers, numbers, booleans, json, timestamps as ISO 8601 UTC with µs),
 * SQL NULL as null. Queries name their columns as the API names fields. */
#ifndef VIGIL_WEB_JSON_ROWS_H
#define VIGIL_WEB_JSON_ROWS_H

#include <json-glib/json-glib.h>
#include <libpq-fe.h>

#include "vigil/json_members.h"

JsonNode *web_json_value(const PGresult *r, int row, int col);
JsonObject *web_json_row(const PGresult *r, int row);
JsonArray *web_json_rows(const PGresult *r);
/* Runs `sql` (web_db_query) and sets its rows as the array `member` of
 * `out`; FALSE with error set, `out` unchanged, when the query fails. */
struct web_request;
gboolean web_json_query_rows(struct web_request *req, JsonObject *out, const char *member,
                             const char *sql, int n_params, const char *const *params,
                             GError **error);

/* A timestamptz's text (TimeZone UTC, DateStyle ISO) as the API writes
 * times; NULL for ±infinity. g_free it. */
char *web_json_time_from_pg(const char *text);

#endif
