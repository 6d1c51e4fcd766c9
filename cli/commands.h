/* vigil — the subcommands of the `vigil` program. Each takes the arguments
 * after its own name (argv[0] is the subcommand) and returns the exit status. */
#ifndef VIGIL_CLI_COMMANDS_H
#define VIGIL_CLI_COMMANDS_H

#include <glib.h>

#include "vigil-build.h"

/* Exit statuses shared by every subcommand. */
enum {
    VIGIL_EXIT_OK = 0,
    VIGIL_EXIT_FAILURE = 1, /* the command ran and found a problem */
    VIGIL_EXIT_USAGE = 2,   /* the command line itself was wrong */
};

/* --config's help in the subcommands that read the warehouse. */
#define VIGIL_CLI_WAREHOUSE_CONFIG_HELP                                                            \
    "Configuration file ([warehouse] conninfo); default: $VIGIL_CONFIG, else " VIGIL_SYSCONF_DIR   \
    "/vigil.conf if it exists, else libpq's environment (PGHOST, PGSERVICE and the like)"

/* What a subcommand's --help says besides its options. */
struct vigil_cli_help {
    const char *parameters;   /* after the options: "RUN", or NULL */
    const char *summary;      /* above the options, or NULL */
    const char *description;  /* below them, or NULL */
    gboolean stop_at_program; /* the first argument ends the options (POSIX) */
};
/* Parses a subcommand's options (options.c); what is not an option stays
 * in argc/argv. FALSE with error set when they are malformed. */
gboolean vigil_cli_parse_options(const struct vigil_cli_help *help, const GOptionEntry *entries,
                                 int *argc, char ***argv, GError **error);
/* vigil_cli_parse_options for subcommand COMMAND ("advise"): FALSE once it
 * has said on stderr what is malformed ("vigil advise: …"). */
gboolean vigil_cli_options_ok(const char *command, const struct vigil_cli_help *help,
                              const GOptionEntry *entries, int *argc, char ***argv);
/* --format: text (the default: NULL) or json. FALSE with error set
 * ("--format X: expected text or json") for anything else. */
gboolean vigil_cli_format_is_json(const char *format, gboolean *json, GError **error);

int vigil_cli_config(int argc, char **argv);

/* The configuration a subcommand reads (config_file.c). The file: --config
 * (`from_option`), else $VIGIL_CONFIG, else the default file when it
 * exists; NULL when there is none (the defaults apply). g_free it. */
char *vigil_cli_config_file(const char *from_option);
/* The configuration with vigil's keys and the installed plugins' sections
 * declared, loaded from `path` unless it is NULL. With `problems` NULL,
 * any problem refuses it: NULL with error set. Otherwise the values that
 * pass their checks are kept, the others keep their defaults
 * (vigil_config_load_keeping_valid), and *problems says what was wrong
 * (left alone when nothing was); NULL then only when a declaration fails,
 * a bug of ours. vigil_config_free it. */
struct vigil_config;
struct vigil_config *vigil_cli_config_load(const char *path, char **problems, GError **error);

/* Where the parts that go with this program are (paths.c): next to it in
 * the build tree or in its install prefix, unless the environment says. */
char *vigil_cli_plugin_dir(void); /* g_free it */
char *vigil_cli_preload_library(GError **error);
int vigil_cli_run(int argc, char **argv);
int vigil_cli_status(int argc, char **argv);
/* vigild's socket: `from_option`, else $VIGIL_SOCKET, else [daemon] socket
 * of the configuration (vigild_socket.c). g_free it; NULL with error set. */
char *vigil_cli_socket_path(const char *from_option, const char *config_path, GError **error);
/* A connection to vigild on `socket_path` whose reads give up after
 * `answer_timeout_s`: the descriptor, or -1 with error set ("no vigild
 * answers on PATH: REASON", then `hint` when not NULL). */
int vigil_cli_vigild_connect(const char *socket_path, int answer_timeout_s, const char *hint,
                             GError **error);
int vigil_cli_job(int argc, char **argv);
int vigil_cli_db(int argc, char **argv);
/* [warehouse] conninfo of the configuration at `config_path` (NULL: the
 * usual one, or "" when there is none): g_free it; NULL with error set
 * when the configuration has problems. */
char *vigil_cli_warehouse_conninfo(const char *config_path, GError **error);
/* The whole configuration (defaults when there is no file); NULL with
 * error set when it has problems. vigil_config_free it. */
struct vigil_config *vigil_cli_warehouse_config(const char *config_path, GError **error);
/* Its [warehouse] section (vigil/warehouse_settings.h); clear it with
 * vigil_settings_clear(&vigil_warehouse_keys, out). */
struct vigil_warehouse_settings;
gboolean vigil_cli_warehouse_settings(const char *config_path, struct vigil_warehouse_settings *out,
                                      GError **error);
int vigil_cli_keygen(int argc, char **argv);
int vigil_cli_report(int argc, char **argv);
int vigil_cli_advise(int argc, char **argv);
int vigil_cli_export(int argc, char **argv);
int vigil_cli_runs(int argc, char **argv);
int vigil_cli_tune(int argc, char **argv);
int vigil_cli_spool(int argc, char **argv);
int vigil_cli_node(int argc, char **argv);

#endif
