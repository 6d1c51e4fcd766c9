/* vigil — the command line the servers share (vigild, vigil-txd,
 * vigil-web; server_command_line.c): --config and --version besides each
 * one's own options. */
#ifndef VIGIL_SERVER_COMMAND_LINE_H
#define VIGIL_SERVER_COMMAND_LINE_H

#include <glib.h>

/* Parses the command line of `program` ("vigild"): --config FILE,
 * --version and the program's `own` options (NULL-terminated; NULL for
 * none), with `summary` for --help. Returns -1 when the program is to go
 * on, with *config_path set to --config or else the default file
 * (vigil_config_default_path; g_free it); otherwise the status to exit
 * with: 0 after --version (printed), 2 after a command line it refuses
 * (said on stderr). */
int vigil_server_command_line(const char *program, const char *summary, const GOptionEntry *own,
                              int *argc, char ***argv, char **config_path);

#endif
