/* vigil — what every subcommand's command line shares: GOption set up
 * from a vigil_cli_help, and --format text|json. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

gboolean vigil_cli_parse_options(const struct vigil_cli_help *help, const GOptionEntry *entries,
                                 int *argc, char ***argv, GError **error)
{
    GOptionContext *context = g_option_context_new(help->parameters);
    g_option_context_set_summary(context, help->summary);
    g_option_context_set_description(context, help->description);
    if (entries != NULL)
        g_option_context_add_main_entries(context, entries, NULL);
    g_option_context_set_strict_posix(context, help->stop_at_program);
    gboolean ok = g_option_context_parse(context, argc, argv, error);
    g_option_context_free(context);
    return ok;
}

gboolean vigil_cli_options_ok(const char *command, const struct vigil_cli_help *help,
                              const GOptionEntry *entries, int *argc, char ***argv)
{
    GError *error = NULL;
    if (vigil_cli_parse_options(help, entries, argc, argv, &error))
        return TRUE;
    fprintf(stderr, "vigil %s: %s\n", command, error->message);
    g_error_free(error);
    return FALSE;
}

gboolean vigil_cli_format_is_json(const char *format, gboolean *json, GError **error)
{
    *json = format != NULL && strcmp(format, "json") == 0;
    if (format == NULL || *json || strcmp(format, "text") == 0)
        return TRUE;
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "--format %s: expected text or json", format);
    return FALSE;
}
