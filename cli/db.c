/* vigil db: the warehouse's schema. `vigil db migrate` applies the
 * migrations this vigil was built with that the database lacks; `vigil db
 * version` tells where the database stands.
 *
 * The connection string comes from --conninfo, else the configuration's
 * [warehouse] conninfo, else libpq's environment (PGHOST, PGSERVICE…).
 * --conninfo is refused when it holds a password: every user on the machine
 * can read a command line (ps). */
#include <stdio.h>
#include <string.h>
#include <libpq-fe.h>

#include "commands.h"
#include "vigil-build.h"
#include "vigil/config.h"
#include "vigil/plugin.h"
#include "vigil/schema.h"
#include "vigil/warehouse.h"

/* Whether a connection string sets a password, in key=value form or in a
 * postgresql://user:password@ URI (libpq parses both alike). A string libpq
 * cannot parse is an error; its text is not repeated, it may hold one. */
static gboolean conninfo_sets_password(const char *conninfo, gboolean *sets, GError **error)
{
    char *parse_error = NULL;
    PQconninfoOption *options = PQconninfoParse(conninfo, &parse_error);
    if (options == NULL) {
        char *text = g_strstrip(g_strdup(parse_error != NULL ? parse_error : "out of memory"));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_CONNINFO,
                    "--conninfo is malformed: %s", text);
        g_free(text);
        PQfreemem(parse_error);
        return FALSE;
    }
    *sets = FALSE;
    for (const PQconninfoOption *o = options; o->keyword != NULL; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val != NULL && o->val[0] != '\0')
            *sets = TRUE;
    PQconninfoFree(options);
    return TRUE;
}

/* The names of the recorded migrations after `after_version`, ", "-joined. */
static char *names_after(PGconn *db, guint after_version, GError **error)
{
    char version[16];
    g_snprintf(version, sizeof version, "%u", after_version);
    const char *const params[] = {version};
    PGresult *result = PQexecParams(db,
                                    "SELECT name FROM vigil_schema_migrations WHERE version > $1"
                                    " ORDER BY version",
                                    1, NULL, params, NULL, NULL, 0);
    if (PQresultStatus(result) != PGRES_TUPLES_OK) {
        char *text = g_strstrip(g_strdup(PQresultErrorMessage(result)));
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY,
                    "reading vigil_schema_migrations: %s", text);
        g_free(text);
        PQclear(result);
        return NULL;
    }
    GString *names = g_string_new(NULL);
    for (int i = 0; i < PQntuples(result); i++)
        g_string_append_printf(names, "%s%s", i > 0 ? ", " : "", PQgetvalue(result, i, 0));
    PQclear(result);
    return g_string_free(names, FALSE);
}

static int apply_migrations(PGconn *db, GError **error)
{
    guint applied = 0, version = 0;
    if (!vigil_warehouse_migrate(db, &applied, error) ||
        !vigil_warehouse_current_version(db, &version, error))
        return VIGIL_EXIT_FAILURE;
    if (applied == 0) {
        printf("schema at version %u, nothing to do\n", version);
        return VIGIL_EXIT_OK;
    }
    /* Counted back from the end: another program may have applied some
     * at the same time, and those are not ours to report. */
    char *names = names_after(db, version - applied, error);
    if (names == NULL)
        return VIGIL_EXIT_FAILURE;
    printf("applied %s; schema at version %u\n", names, version);
    g_free(names);
    return VIGIL_EXIT_OK;
}

/* Exit status 0 when the database is at this vigil's latest version, 1
 * when it is behind or ahead, so that scripts can test it. */
static int print_version(PGconn *db, GError **error)
{
    guint current = 0, latest = vigil_warehouse_latest_version();
    if (!vigil_warehouse_current_version(db, &current, error))
        return VIGIL_EXIT_FAILURE;
    if (current == latest) {
        printf("schema at version %u, up to date\n", current);
        return VIGIL_EXIT_OK;
    }
    if (current < latest)
        printf("schema at version %u; this vigil has migrations up to version %u: run "
               "'vigil db migrate'\n",
               current, latest);
    else
        printf("schema at version %u, newer than this vigil knows (version %u): upgrade vigil\n",
               current, latest);
    return VIGIL_EXIT_FAILURE;
}

static int run(const char *action, const char *config_path, const char *conninfo_option)
{
    GError *error = NULL;
    char *conninfo = NULL;
    int status = VIGIL_EXIT_FAILURE;
    if (conninfo_option != NULL) {
        gboolean sets_password = FALSE;
        if (!conninfo_sets_password(conninfo_option, &sets_password, &error)) {
            fprintf(stderr, "vigil db: %s\n", error->message);
            g_clear_error(&error);
            return VIGIL_EXIT_USAGE;
        }
        if (sets_password) {
            fprintf(stderr, "vigil db: --conninfo holds a password, which every user can read on "
                            "a command line (ps): put it in ~/.pgpass or $PGPASSWORD, or give "
                            "the connection string as [warehouse] conninfo in a configuration "
                            "file readable only by you (--config FILE)\n");
            return VIGIL_EXIT_USAGE;
        }
        conninfo = g_strdup(conninfo_option);
    } else {
        conninfo = vigil_cli_warehouse_conninfo(config_path, &error);
    }
    PGconn *db = NULL;
    if (conninfo != NULL)
        db = vigil_warehouse_connect(conninfo, &error);
    if (db != NULL)
        status = strcmp(action, "migrate") == 0 ? apply_migrations(db, &error)
                                                : print_version(db, &error);
    if (error != NULL)
        fprintf(stderr, "vigil db %s: %s\n", action, error->message);
    g_clear_error(&error);
    if (db != NULL)
        PQfinish(db);
    g_free(conninfo);
    return status;
}

int vigil_cli_db(int argc, char **argv)
{
    char *config_path = NULL, *conninfo = NULL;
    GOptionEntry entries[] = {
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
         "The configuration file whose [warehouse] conninfo is used (default: $VIGIL_CONFIG, "
         "else " VIGIL_SYSCONF_DIR "/vigil.conf when it exists)",
         "FILE"},
        {"conninfo", 0, 0, G_OPTION_ARG_STRING, &conninfo,
         "The libpq connection string, instead of the configuration's; without a password "
         "(use ~/.pgpass or $PGPASSWORD)",
         "STR"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context = g_option_context_new("migrate|version");
    g_option_context_set_summary(
        context, "migrate: applies the warehouse's schema migrations the database lacks.\n"
                 "version: prints the database's schema version; exit status 1 when it is "
                 "not this vigil's.\n\nWithout --conninfo or a [warehouse] conninfo, libpq's "
                 "environment says where the database is (PGHOST, PGDATABASE, PGSERVICE…).");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    int status;
    if (!g_option_context_parse(context, &argc, &argv, &error)) {
        fprintf(stderr, "vigil db: %s\n", error->message);
        status = VIGIL_EXIT_USAGE;
    } else if (argc != 2 || (strcmp(argv[1], "migrate") != 0 && strcmp(argv[1], "version") != 0)) {
        fprintf(stderr, "usage: vigil db migrate|version [--config FILE] [--conninfo STR]\n");
        status = VIGIL_EXIT_USAGE;
    } else {
        status = run(argv[1], config_path, conninfo);
    }
    g_clear_error(&error);
    g_option_context_free(context);
    g_free(config_path);
    g_free(conninfo);
    return status;
}
