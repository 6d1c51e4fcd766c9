/* vigil — the command line the servers share (vigild, vigil-txd,
 * vigil-web; server_command_line.c): --config and --version besides each
 * one's own options. */
#ifndef VIGIL_SERVER_COMMAND_LINE_H
#define VIGIL_SERVER_COMMAND_LINE_H

#include <glib.h>

/* What a server that detaches (vigild, vigil-txd) takes besides: --foreground
 * and --pid-file FILE. Its paths are made absolute, so that they still
 * name their files after the chdir of detaching. */
struct vigil_server_detach {
    const char *ready_when; /* in --help: "the socket is served" */
    gboolean foreground;
    char *pid_file; /* NULL: none; g_free it */
};

/* Parses the command line of `program` ("vigild"): --config FILE,
 * --version, with `detach` (NULL for a server that does not detach) its
 * options, and the program's `own` options (NULL-terminated; NULL for
 * none), with `summary` for --help. Returns -1 when the program is to go
 * on, with *config_path set to --config or else the default file
 * (vigil_config_default_path; absolute with `detach`; g_free it);
 * otherwise the status to exit with: 0 after --version (printed), 2 after
 * a command line it refuses (said on stderr). */
int vigil_server_command_line(const char *program, const char *summary,
                              struct vigil_server_detach *detach, const GOptionEntry *own,
                              int *argc, char ***argv, char **config_path);

#endif
