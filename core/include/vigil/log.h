/* vigil — logging through g_log.
 *
 * Each part logs under its own domain (G_LOG_DOMAIN is set per part by the
 * build: "vigil-core", "vigil-cli", "vigild"…). vigil_log_setup installs one
 * writer that prints "program[pid]: domain: level: message" to stderr, which
 * is what journald and a terminal both want, and drops messages below the
 * chosen level. The preload library never logs. */
#ifndef VIGIL_LOG_H
#define VIGIL_LOG_H

#include <glib.h>

#include "vigil/config.h"
#include "vigil/settings.h"

enum vigil_log_level {
    VIGIL_LOG_ERROR = 1, /* g_critical and g_error */
    VIGIL_LOG_WARNING,
    VIGIL_LOG_MESSAGE,
    VIGIL_LOG_INFO,
    VIGIL_LOG_DEBUG,
};

/* The [log] section every program reads (vigil/settings.h). */
extern const struct vigil_settings_table vigil_log_keys;

/* "error", "warning", "message", "info", "debug" → level; 0 if unknown. */
enum vigil_log_level vigil_log_level_from_name(const char *name);

/* Prints messages at `level` and above, prefixed with `program`; may be
 * called again to change them. The
 * VIGIL_LOG_LEVEL environment variable, when set to a level name, wins. */
void vigil_log_setup(const char *program, enum vigil_log_level level);

/* vigil_log_setup with the configuration's [log] level. */
void vigil_log_setup_from_config(const char *program, const vigil_config *config);

/* Makes g_print and g_printerr (GOption's --help among them) write their
 * UTF-8 text as it is. GLib converts it to the locale's charset, and in the
 * C locale of a batch job or a unit every "…" becomes "?". */
void vigil_log_print_utf8(void);

#endif
