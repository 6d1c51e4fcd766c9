/* vigil node keys: which CURVE key each node id belongs to in the
 * warehouse, and putting a wrong claim right.
 *
 *   vigil node keys [--format text|json] [--config FILE]
 *   vigil node keys --forget NODE [--config FILE]
 *   vigil node keys --set NODE --key KEY [--config FILE]
 *
 * vigil-txd trusts a node id on first use: the first key it comes with is
 * its key (node_keys, schema 3), and a batch of that id with another key is
 * refused. So a key that claims another node's id first gets every batch
 * of the real node refused; vigil-txd counts them on the node's row
 * (schema 11). The list shows each node id with its host name, its key,
 * when it was first seen, and the batches refused, with the last refused
 * key, when and why. --forget deletes the row: the node's next batch
 * claims it with its key (vigil-txd reads the row again before it refuses;
 * no restart). --set writes the node's key, as an administrator may before
 * the node first comes. Then `vigil spool resend` on the node sends what
 * was refused. The connection comes from [warehouse] conninfo, as for
 * `vigil report`. */
#include <stdio.h>
#include <string.h>
#include <json-glib/json-glib.h>
#include <libpq-fe.h>

#include "commands.h"
#include "vigil/curve.h"
#include "vigil/json_members.h"
#include "vigil/warehouse.h"
#include "warehouse_query.h"

static const char list_sql[] =
    "SELECT k.node_id, coalesce(n.hostname, ''), k.curve_public_key,"
    "       to_char(k.first_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    "       k.refused_batches, coalesce(k.refused_key, ''),"
    "       coalesce(to_char(k.refused_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
    "                ''),"
    "       coalesce(k.refused_reason, '')"
    "  FROM node_keys k LEFT JOIN nodes n USING (node_id)"
    " ORDER BY k.node_id";

enum column { NODE, HOSTNAME, KEY, FIRST_SEEN, REFUSED, REFUSED_KEY, REFUSED_AT, REASON };

static void print_text(const PGresult *r)
{
    int rows = PQntuples(r);
    if (rows == 0) {
        printf("no node keys: vigil-txd has not seen a node with CURVE yet\n");
        return;
    }
    printf("%-20s %-16s %-40s %-20s %s\n", "NODE", "HOSTNAME", "KEY", "FIRST_SEEN", "REFUSED");
    for (int i = 0; i < rows; i++) {
        printf("%-20s %-16s %-40s %-20s %s\n", PQgetvalue(r, i, NODE),
               PQgetvalue(r, i, HOSTNAME)[0] != '\0' ? PQgetvalue(r, i, HOSTNAME) : "-",
               PQgetvalue(r, i, KEY), PQgetvalue(r, i, FIRST_SEEN), PQgetvalue(r, i, REFUSED));
        if (strcmp(PQgetvalue(r, i, REFUSED), "0") != 0)
            printf("  refused batches came with key %s, the last at %s: %s\n",
                   PQgetvalue(r, i, REFUSED_KEY), PQgetvalue(r, i, REFUSED_AT),
                   PQgetvalue(r, i, REASON));
    }
}

static void print_json(const PGresult *r)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_array(b);
    for (int i = 0; i < PQntuples(r); i++) {
        json_builder_begin_object(b);
        vigil_json_int(b, "node_id", g_ascii_strtoll(PQgetvalue(r, i, NODE), NULL, 10));
        static const struct {
            const char *name;
            enum column column;
        } texts[] = {{"hostname", HOSTNAME},     {"curve_public_key", KEY},
                     {"first_seen", FIRST_SEEN}, {"refused_key", REFUSED_KEY},
                     {"refused_at", REFUSED_AT}, {"refused_reason", REASON}};
        for (gsize k = 0; k < G_N_ELEMENTS(texts); k++) {
            const char *value = PQgetvalue(r, i, texts[k].column);
            vigil_json_string(b, texts[k].name, value[0] != '\0' ? value : NULL);
        }
        vigil_json_int(b, "refused_batches", g_ascii_strtoll(PQgetvalue(r, i, REFUSED), NULL, 10));
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    char *text = vigil_json_builder_text(b, TRUE);
    printf("%s\n", text);
    g_free(text);
}

/* --forget, --set: one statement; FALSE with error set. */
static gboolean change(PGconn *db, const char *node, const char *key, GError **error)
{
    const char *params[] = {node, key};
    static const char forget_sql[] = "DELETE FROM node_keys WHERE node_id = $1::bigint";
    static const char set_sql[] =
        "INSERT INTO node_keys (node_id, curve_public_key) VALUES ($1::bigint, $2) "
        "ON CONFLICT (node_id) DO UPDATE SET curve_public_key = EXCLUDED.curve_public_key, "
        "first_seen = now(), refused_batches = 0, refused_key = NULL, refused_at = NULL, "
        "refused_reason = NULL";
    const char *sql = key != NULL ? set_sql : forget_sql;
    PGresult *r = PQexecParams(db, sql, key != NULL ? 2 : 1, NULL, params, NULL, NULL, 0);
    gboolean ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok)
        vigil_warehouse_set_read_error(
            db, r, key != NULL ? "setting the node's key" : "forgetting the node's key", error);
    else if (key == NULL && strcmp(PQcmdTuples(r), "0") == 0)
        printf("node %s had no key in the warehouse: nothing to forget\n", node);
    else if (key == NULL)
        printf("node %s's key is forgotten: its next batch claims it with its own key; `vigil "
               "spool resend` on the node sends what was refused\n",
               node);
    else
        printf("node %s belongs to key %s now\n", node, key);
    PQclear(r);
    return ok;
}

static int keys(const char *config_path, const char *forget, const char *set, const char *key,
                gboolean json)
{
    GError *error = NULL;
    int status = VIGIL_EXIT_FAILURE;
    PGconn *db = NULL;
    char *conninfo = vigil_cli_warehouse_conninfo(config_path, &error);
    if (conninfo != NULL)
        db = vigil_warehouse_connect(conninfo, &error);
    if (db == NULL)
        goto out;
    if (forget != NULL || set != NULL) {
        if (change(db, forget != NULL ? forget : set, key, &error))
            status = VIGIL_EXIT_OK;
        goto out;
    }
    PGresult *r = vigil_warehouse_query(db, list_sql, 0, NULL, &error);
    if (r == NULL)
        goto out;
    if (json)
        print_json(r);
    else
        print_text(r);
    PQclear(r);
    status = fflush(stdout) == 0 ? VIGIL_EXIT_OK : VIGIL_EXIT_FAILURE;
out:
    if (error != NULL) {
        fprintf(stderr, "vigil node keys: %s\n", error->message);
        g_error_free(error);
    }
    if (db != NULL)
        PQfinish(db);
    g_free(conninfo);
    return status;
}

int vigil_cli_node(int argc, char **argv)
{
    char *config_path = NULL, *format = NULL, *forget = NULL, *set = NULL, *key = NULL;
    GOptionEntry entries[] = {
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
         "Configuration file ([warehouse] conninfo), as for vigil report", "FILE"},
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format, "text (the default) or json", "FORMAT"},
        {"forget", 0, 0, G_OPTION_ARG_STRING, &forget,
         "Forget NODE's key: its next batch claims the id with its own", "NODE"},
        {"set", 0, 0, G_OPTION_ARG_STRING, &set, "Set NODE's key to --key", "NODE"},
        {"key", 0, 0, G_OPTION_ARG_STRING, &key,
         "With --set: the node's CURVE public key (40 characters of Z85, its FILE.pub)", "KEY"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = "keys",
        .summary = "Lists which CURVE key each node id belongs to in the warehouse, with the "
                   "batches vigil-txd refused for it; --forget or --set puts a wrong claim right.",
    };
    GError *error = NULL;
    int status = VIGIL_EXIT_USAGE;
    if (!vigil_cli_options_ok("node", &help, entries, &argc, &argv))
        goto out;
    if (argc != 2 || strcmp(argv[1], "keys") != 0 || (forget != NULL && set != NULL) ||
        (key != NULL) != (set != NULL)) {
        fprintf(stderr, "usage: vigil node keys [--format text|json] [--config FILE]\n"
                        "       vigil node keys --forget NODE [--config FILE]\n"
                        "       vigil node keys --set NODE --key KEY [--config FILE]\n");
        goto out;
    }
    const char *node = forget != NULL ? forget : set;
    if (node != NULL && !vigil_warehouse_is_row_number(node)) {
        fprintf(stderr,
                "vigil node keys: %s is not a node id (a number, as `vigil node keys` "
                "lists them)\n",
                node);
        goto out;
    }
    if (key != NULL && !vigil_curve_key_check("--key", key, &error)) {
        fprintf(stderr, "vigil node keys: %s\n", error->message);
        goto out;
    }
    gboolean json = FALSE;
    if (!vigil_cli_format_is_json(format, &json, &error)) {
        fprintf(stderr, "vigil node keys: %s\n", error->message);
        goto out;
    }
    status = keys(config_path, forget, set, key, json);
out:
    g_clear_error(&error);
    g_free(config_path);
    g_free(format);
    g_free(forget);
    g_free(set);
    g_free(key);
    return status;
}
