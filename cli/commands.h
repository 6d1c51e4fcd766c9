/* vigil — the subcommands of the `vigil` program. Each takes the arguments
 * after its own name (argv[0] is the subcommand) and returns the exit status. */
#ifndef VIGIL_CLI_COMMANDS_H
#define VIGIL_CLI_COMMANDS_H

#include <glib.h>

/* Exit statuses shared by every subcommand. */
enum {
    VIGIL_EXIT_OK = 0,
    VIGIL_EXIT_FAILURE = 1, /* the command ran and found a problem */
    VIGIL_EXIT_USAGE = 2,   /* the command line itself was wrong */
};

int vigil_cli_config(int argc, char **argv);

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
struct vigil_config;
struct vigil_config *vigil_cli_warehouse_config(const char *config_path, GError **error);
int vigil_cli_keygen(int argc, char **argv);
int vigil_cli_report(int argc, char **argv);
int vigil_cli_advise(int argc, char **argv);
int vigil_cli_export(int argc, char **argv);
int vigil_cli_runs(int argc, char **argv);
int vigil_cli_tune(int argc, char **argv);
int vigil_cli_spool(int argc, char **argv);
int vigil_cli_node(int argc, char **argv);

#endif
