/* vigil — connecting to the warehouse.
 *
 * libpq reads what the connection string leaves out from its environment
 * (PGHOST, PGSERVICE, ~/.pgpass…), so "" is a valid connection string. The
 * errors name the server libpq tried, never the string itself, which may
 * hold a password. */
#include <string.h>

#include "vigil/warehouse.h"
#include "warehouse_migrations.h"
#include "warehouse_query.h"

GQuark vigil_warehouse_error_quark(void)
{
    return g_quark_from_static_string("vigil-warehouse-error-quark");
}

char *vigil_warehouse_one_line(const char *message)
{
    GString *text = g_string_new(NULL);
    gboolean in_space = FALSE;
    for (const char *p = message != NULL ? message : ""; *p != '\0'; p++) {
        if (g_ascii_isspace(*p)) {
            in_space = TRUE;
            continue;
        }
        if (in_space && text->len > 0)
            g_string_append_c(text, ' ');
        in_space = FALSE;
        g_string_append_c(text, *p);
    }
    return g_string_free(text, FALSE);
}

/* Server notices (warnings: notices below that are turned off) go to the
 * log instead of libpq's default, a bare line on stderr. */
static void log_notice(void *arg, const char *message)
{
    (void)arg;
    char *text = vigil_warehouse_one_line(message);
    g_warning("PostgreSQL: %s", text);
    g_free(text);
}

PGconn *vigil_warehouse_connect(const char *conninfo, GError **error)
{
    return vigil_warehouse_connect_timeout(conninfo, 0, error);
}

PGconn *vigil_warehouse_connect_timeout(const char *conninfo, guint connect_timeout_s,
                                        GError **error)
{
    if (conninfo == NULL)
        conninfo = "";
    /* Checked first so that a typo is reported as one, not as a failure to
     * reach some default server. */
    char *parse_error = NULL;
    PQconninfoOption *parsed = PQconninfoParse(conninfo, &parse_error);
    if (parsed == NULL) {
        /* libpq quotes the string in some of its parse errors, and the
         * string may hold a password: then only say where to look. */
        gboolean secret = strstr(conninfo, "password") != NULL || strchr(conninfo, '@') != NULL;
        char *text = vigil_warehouse_one_line(
            secret ? "check its quoting, brackets and port (libpq's message is not shown: it "
                     "would show the password)"
            : parse_error != NULL ? parse_error
                                  : "out of memory");
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNINFO,
                    "the warehouse connection string is malformed: %s", text);
        g_free(text);
        PQfreemem(parse_error);
        return NULL;
    }
    PQconninfoFree(parsed);

    /* expand_dbname: `conninfo` is a whole connection string; the fallback
     * name applies only when it sets no application_name itself. Every text
     * vigil sends is UTF-8 (paths made valid before), and error positions
     * in migrations are counted in its characters: client_encoding, given
     * after the string, wins over one in it. The connect timeout comes
     * before it: a connect_timeout the string sets wins over the config's. */
    char timeout_text[16];
    g_snprintf(timeout_text, sizeof timeout_text, "%u", connect_timeout_s);
    const char *const keywords[] = {"connect_timeout", "dbname", "fallback_application_name",
                                    "client_encoding", NULL};
    const char *const values[] = {connect_timeout_s > 0 ? timeout_text : NULL, conninfo, "vigil",
                                  "UTF8", NULL};
    PGconn *db = PQconnectdbParams(keywords, values, 1);
    if (db == NULL) {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNECT,
                    "cannot connect to the warehouse: out of memory");
        return NULL;
    }
    if (PQstatus(db) != CONNECTION_OK) {
        char *target = vigil_warehouse_target(db),
             *text = vigil_warehouse_one_line(PQerrorMessage(db));
        /* libpq says only "timeout expired": say which. */
        gboolean timed_out = connect_timeout_s > 0 && strstr(text, "timeout expired") != NULL;
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNECT,
                    "cannot connect to the warehouse (%s): %s%s", target, text,
                    timed_out ? " (the connect timeout, [warehouse] connect_timeout_s, fired)"
                              : "");
        g_free(target);
        g_free(text);
        PQfinish(db);
        return NULL;
    }
    PQsetNoticeProcessor(db, log_notice, NULL);
    /* "relation already exists, skipping" and the like are noise for us. */
    PGresult *result = PQexec(db, "SET client_min_messages = warning");
    gboolean ok = PQresultStatus(result) == PGRES_COMMAND_OK;
    if (!ok) {
        char *target = vigil_warehouse_target(db),
             *text = vigil_warehouse_one_line(PQerrorMessage(db));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "the warehouse (%s) refused to set client_min_messages: %s", target, text);
        g_free(target);
        g_free(text);
    }
    PQclear(result);
    if (!ok) {
        PQfinish(db);
        return NULL;
    }
    return db;
}
