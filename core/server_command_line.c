/* vigil — the command line the servers share
 * (vigil/server_command_line.h). */
#include <stdio.h>

#include "vigil-build.h"
#include "vigil/config.h"
#include "vigil/detach.h"
#include "vigil/log.h"
#include "vigil/server_command_line.h"

int vigil_server_command_line(const char *program, const char *summary,
                              struct vigil_server_detach *detach, const GOptionEntry *own,
                              int *argc, char ***argv, char **config_path)
{
    gboolean version = FALSE;
    *config_path = NULL;
    const GOptionEntry common[] = {
        {"config", 'c', 0, G_OPTION_ARG_FILENAME, config_path,
         "The configuration (default $VIGIL_CONFIG, else " VIGIL_SYSCONF_DIR "/vigil.conf)",
         "FILE"},
        {"version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    vigil_log_print_utf8();
    GOptionContext *options = g_option_context_new(NULL);
    g_option_context_set_summary(options, summary);
    g_option_context_add_main_entries(options, common, NULL);
    char *foreground_help = NULL;
    if (detach != NULL) {
        foreground_help =
            g_strdup_printf("Stay in the foreground (as systemd runs it); without it, "
                            "go to the background once %s",
                            detach->ready_when);
        const GOptionEntry detaching[] = {
            {"foreground", 'f', 0, G_OPTION_ARG_NONE, &detach->foreground, foreground_help, NULL},
            {"pid-file", 0, 0, G_OPTION_ARG_FILENAME, &detach->pid_file,
             "Write the server's pid here", "FILE"},
            {NULL, 0, 0, 0, NULL, NULL, NULL},
        };
        g_option_context_add_main_entries(options, detaching, NULL);
    }
    if (own != NULL)
        g_option_context_add_main_entries(options, own, NULL);
    GError *error = NULL;
    gboolean parsed = g_option_context_parse(options, argc, argv, &error);
    g_option_context_free(options);
    g_free(foreground_help);
    if (!parsed) {
        fprintf(stderr, "%s: %s\n", program, error->message);
        g_error_free(error);
        g_clear_pointer(config_path, g_free);
        return 2;
    }
    if (version) {
        printf("%s %s\n", program, VIGIL_VERSION);
        g_clear_pointer(config_path, g_free);
        return 0;
    }
    if (*config_path == NULL)
        *config_path = vigil_config_default_path();
    if (detach != NULL) {
        vigil_detach_keep_path(config_path);
        vigil_detach_keep_path(&detach->pid_file);
    }
    return -1;
}
