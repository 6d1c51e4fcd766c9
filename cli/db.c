/* vigil db: the warehouse's schema and its partitions. `vigil db migrate`
 * applies the migrations this vigil was built with that the database lacks;
 * `vigil db version` tells where the database stands; `vigil db maintain`
 * makes the day partitions ahead of time (vigil-txd does too, at start and
 * every [warehouse] maintain_interval_s); `vigil db prune [--dry-run]`
 * drops the day partitions older than the [warehouse] retain_*_days.
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

static int apply_migrations(PGconn *db, gboolean citus, GError **error)
{
    guint applied = 0, version = 0, laid_out = 0;
    if (!vigil_warehouse_migrate(db, &applied, error) ||
        !vigil_warehouse_current_version(db, &version, error) ||
        (citus && !vigil_warehouse_citus_layout(db, &laid_out, error)))
        return VIGIL_EXIT_FAILURE;
    if (laid_out > 0)
        printf("laid out %u tables on Citus\n", laid_out);
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

/* maintain and prune need migration 2's functions. */
static gboolean schema_is_latest(PGconn *db, GError **error)
{
    guint current = 0, latest = vigil_warehouse_latest_version();
    if (!vigil_warehouse_current_version(db, &current, error))
        return FALSE;
    if (current != latest) {
        g_set_error(error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_MIGRATION,
                    "the schema is at version %u, this vigil's is %u: run 'vigil db migrate' "
                    "(or the vigil of that version)",
                    current, latest);
        return FALSE;
    }
    return TRUE;
}

static int maintain(PGconn *db, const struct vigil_warehouse_settings *warehouse, GError **error)
{
    if (!schema_is_latest(db, error))
        return VIGIL_EXIT_FAILURE;
    guint ahead = warehouse->partitions_ahead_days;
    guint created = 0;
    gboolean ok = vigil_warehouse_maintain(db, ahead, &created, error);
    printf("made %u day partitions; %s yesterday, today and %u days after\n", created,
           ok ? "every day table has" : "not every day table has yet", ahead);
    /* The roll-up levels, a day a pass until caught up (vigil-txd builds
     * an hour a pass between its groups). */
    gboolean busy = FALSE, caught_up = FALSE;
    guint64 blocks = 0;
    while (ok && !busy && !caught_up) {
        guint64 rows = 0;
        ok = vigil_warehouse_build_levels(db, "1 day", NULL, &busy, &caught_up, &rows, error);
        blocks += rows;
    }
    if (ok)
        printf("built %" G_GUINT64_FORMAT " roll-up level blocks; %s\n", blocks,
               busy ? "another session is building them" : "the levels are up to date");
    return ok ? VIGIL_EXIT_OK : VIGIL_EXIT_FAILURE;
}

static int prune(PGconn *db, const struct vigil_warehouse_settings *warehouse, gboolean dry_run,
                 GError **error)
{
    if (!schema_is_latest(db, error))
        return VIGIL_EXIT_FAILURE;
    struct vigil_warehouse_retention retention = warehouse->retention;
    guint batches = vigil_warehouse_batches_retention(&retention);
    if (batches != retention.days[VIGIL_WAREHOUSE_DAY_TABLES - 1]) {
        char *kept = batches == 0 ? g_strdup("for ever") : g_strdup_printf("%u days", batches);
        printf("ingested_batches: kept %s, not %u days: a batch resent after its record went "
               "would be stored twice while its rows are kept\n",
               kept, retention.days[VIGIL_WAREHOUSE_DAY_TABLES - 1]);
        g_free(kept);
    }
    GPtrArray *expired = g_ptr_array_new_with_free_func(vigil_warehouse_expired_free);
    gboolean ok = vigil_warehouse_prune(db, &retention, dry_run, expired, error);
    for (guint i = 0; i < expired->len; i++) {
        const struct vigil_warehouse_expired *e = g_ptr_array_index(expired, i);
        printf("%s %s (%s before %s)\n", dry_run ? "would drop" : "dropped", e->partition, e->table,
               e->until);
    }
    if (ok && expired->len == 0)
        printf("nothing to drop\n");
    else if (ok)
        printf("%s %u partitions\n", dry_run ? "would drop" : "dropped", expired->len);
    g_ptr_array_unref(expired);
    return ok ? VIGIL_EXIT_OK : VIGIL_EXIT_FAILURE;
}

static int run(const char *action, const char *config_path, const char *conninfo_option,
               gboolean dry_run, gboolean citus)
{
    GError *error = NULL;
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
    }
    struct vigil_warehouse_settings warehouse = {0};
    PGconn *db = NULL;
    if (vigil_cli_warehouse_settings(config_path, &warehouse, &error))
        db = vigil_warehouse_connect_timeout(conninfo_option != NULL ? conninfo_option
                                                                     : warehouse.conninfo,
                                             warehouse.connect_timeout_s, &error);
    if (db != NULL && (strcmp(action, "maintain") == 0 || strcmp(action, "prune") == 0)) {
        /* Making or dropping a partition waits for a lock that ingest
         * transactions hold, and every ingest waits behind it: briefly. */
        char *sql = g_strdup_printf("SET lock_timeout = %u", warehouse.lock_timeout_ms);
        PGresult *result = PQexec(db, sql);
        if (PQresultStatus(result) != PGRES_COMMAND_OK) {
            char *text = g_strstrip(g_strdup(PQresultErrorMessage(result)));
            g_set_error(&error, VIGIL_WAREHOUSE_ERROR, VIGIL_WAREHOUSE_ERROR_QUERY, "%s: %s", sql,
                        text);
            g_free(text);
            PQfinish(db);
            db = NULL;
        }
        PQclear(result);
        g_free(sql);
    }
    if (db != NULL) {
        if (strcmp(action, "migrate") == 0)
            status = apply_migrations(db, citus || warehouse.distributed == VIGIL_WAREHOUSE_CITUS,
                                      &error);
        else if (strcmp(action, "version") == 0)
            status = print_version(db, &error);
        else if (strcmp(action, "maintain") == 0)
            status = maintain(db, &warehouse, &error);
        else
            status = prune(db, &warehouse, dry_run, &error);
    }
    if (error != NULL)
        fprintf(stderr, "vigil db %s: %s\n", action, error->message);
    g_clear_error(&error);
    if (db != NULL)
        PQfinish(db);
    vigil_settings_clear(&vigil_warehouse_keys, &warehouse);
    return status;
}

static gboolean known_action(const char *action)
{
    static const char *const actions[] = {"migrate", "version", "maintain", "prune", NULL};
    return g_strv_contains(actions, action);
}

int vigil_cli_db(int argc, char **argv)
{
    char *config_path = NULL, *conninfo = NULL;
    gboolean dry_run = FALSE, citus = FALSE;
    GOptionEntry entries[] = {
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, &config_path,
         "The configuration file whose [warehouse] section is used (default: $VIGIL_CONFIG, "
         "else " VIGIL_SYSCONF_DIR "/vigil.conf when it exists)",
         "FILE"},
        {"conninfo", 0, 0, G_OPTION_ARG_STRING, &conninfo,
         "The libpq connection string, instead of the configuration's; without a password "
         "(use ~/.pgpass or $PGPASSWORD)",
         "STR"},
        {"dry-run", 'n', 0, G_OPTION_ARG_NONE, &dry_run,
         "prune: say which partitions would be dropped, drop none", NULL},
        {"citus", 0, 0, G_OPTION_ARG_NONE, &citus,
         "migrate: then lay the tables out on the Citus cluster whose coordinator the "
         "database is (as [warehouse] distributed = citus does)",
         NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    static const struct vigil_cli_help help = {
        .parameters = "migrate|version|maintain|prune",
        .summary =
            "migrate [--citus]: applies the warehouse's schema migrations the database lacks; "
            "with --citus (or [warehouse] distributed = citus) then lays the tables out on the "
            "Citus cluster whose coordinator it is.\n"
            "version: prints the database's schema version; exit status 1 when it is not this "
            "vigil's.\n"
            "maintain: makes the day partitions of yesterday, today and [warehouse] "
            "partitions_ahead_days "
            "after (vigil-txd does it too, at start and every maintain_interval_s).\n"
            "prune [--dry-run]: drops every day partition whose rows are all older than its "
            "table's [warehouse] retain_*_days (0: kept for ever); whole partitions, never rows.\n"
            "\nWithout --conninfo or a [warehouse] conninfo, libpq's environment says where the "
            "database is (PGHOST, PGDATABASE, PGSERVICE…).",
    };
    GError *error = NULL;
    int status;
    if (!vigil_cli_options_ok("db", &help, entries, &argc, &argv)) {
        status = VIGIL_EXIT_USAGE;
    } else if (argc != 2 || !known_action(argv[1])) {
        fprintf(stderr,
                "usage: vigil db migrate|version|maintain|prune [--citus] [--dry-run] [--config "
                "FILE] [--conninfo STR]\n");
        status = VIGIL_EXIT_USAGE;
    } else if (citus && strcmp(argv[1], "migrate") != 0) {
        fprintf(stderr, "vigil db %s: --citus is migrate's\n", argv[1]);
        status = VIGIL_EXIT_USAGE;
    } else if (dry_run && strcmp(argv[1], "prune") != 0) {
        fprintf(stderr, "vigil db %s: --dry-run is prune's\n", argv[1]);
        status = VIGIL_EXIT_USAGE;
    } else {
        status = run(argv[1], config_path, conninfo, dry_run, citus);
    }
    g_clear_error(&error);
    g_free(config_path);
    g_free(conninfo);
    return status;
}
