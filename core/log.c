/* vigil — the log writer: one line per message on stderr. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "name_table.h"
#include "vigil/config.h"
#include "vigil/log.h"
#include "vigil/settings.h"

/* [log], read by every program. */
struct log_settings {
    char *level;
};

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct log_settings, level), .type = VIGIL_CONFIG_ENUM,
     .default_value = "message", .choices = "error|warning|message|info|debug",
     .description = "least important messages printed; VIGIL_LOG_LEVEL overrides it"},
};
const struct vigil_settings_table vigil_log_keys =
    VIGIL_SETTINGS_TABLE("log", struct log_settings, keys, NULL);

static const char *const level_names[] = {NULL, "error", "warning", "message", "info", "debug"};

/* The level is read by every thread that logs (vigil-txd's store thread)
 * and changed by a reload on the main thread: atomic. The program's name
 * is written when it changes, which a reload never does. */
static struct {
    char program[64];
    gint level; /* enum vigil_log_level */
} log_state = {"vigil", VIGIL_LOG_MESSAGE};

enum vigil_log_level vigil_log_level_from_name(const char *name)
{
    return name_table_find(level_names, VIGIL_LOG_DEBUG, name);
}

static enum vigil_log_level level_of(GLogLevelFlags flags)
{
    if (flags & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL))
        return VIGIL_LOG_ERROR;
    if (flags & G_LOG_LEVEL_WARNING)
        return VIGIL_LOG_WARNING;
    if (flags & G_LOG_LEVEL_MESSAGE)
        return VIGIL_LOG_MESSAGE;
    if (flags & G_LOG_LEVEL_INFO)
        return VIGIL_LOG_INFO;
    return VIGIL_LOG_DEBUG;
}

static GLogWriterOutput write_line(GLogLevelFlags flags, const GLogField *fields, gsize n_fields,
                                   gpointer user_data)
{
    (void)user_data;
    enum vigil_log_level level = level_of(flags);
    if ((gint)level > g_atomic_int_get(&log_state.level))
        return G_LOG_WRITER_HANDLED;
    const char *domain = NULL, *message = NULL;
    for (gsize i = 0; i < n_fields; i++) {
        if (strcmp(fields[i].key, "GLIB_DOMAIN") == 0)
            domain = fields[i].value;
        else if (strcmp(fields[i].key, "MESSAGE") == 0)
            message = fields[i].value;
    }
    fprintf(stderr, "%s[%d]: %s: %s: %s\n", log_state.program, (int)getpid(),
            domain ? domain : "vigil", level_names[level], message ? message : "");
    return G_LOG_WRITER_HANDLED;
}

void vigil_log_setup(const char *program, enum vigil_log_level level)
{
    if (strncmp(log_state.program, program, sizeof log_state.program - 1) != 0)
        g_strlcpy(log_state.program, program, sizeof log_state.program);
    enum vigil_log_level from_env = vigil_log_level_from_name(g_getenv("VIGIL_LOG_LEVEL"));
    g_atomic_int_set(&log_state.level, (gint)(from_env ? from_env : level));
    /* GLib allows one writer per process; later calls only change the level
     * (after the config has been read, say). */
    static gsize installed = 0;
    if (g_once_init_enter(&installed)) {
        g_log_set_writer_func(write_line, NULL, NULL);
        g_once_init_leave(&installed, 1);
    }
}

void vigil_log_setup_from_config(const char *program, const vigil_config *config)
{
    struct log_settings s;
    GError *error = NULL;
    if (!vigil_settings_load(config, &vigil_log_keys, &s, &error)) {
        g_critical("[log]: %s", error->message); /* its table is always declared */
        g_error_free(error);
        return;
    }
    vigil_log_setup(program, vigil_log_level_from_name(s.level));
    vigil_settings_clear(&vigil_log_keys, &s);
}

static void print_utf8_out(const gchar *text)
{
    fputs(text, stdout);
}

static void print_utf8_err(const gchar *text)
{
    fputs(text, stderr);
}

void vigil_log_print_utf8(void)
{
    g_set_print_handler(print_utf8_out);
    g_set_printerr_handler(print_utf8_err);
}
