/* vigil — the sections only the command reads: [preload] (vigil run) and
 * [advise] (vigil advise), each key filling the field of its name
 * (preload_keys.c, advise_keys.c). */
#ifndef VIGIL_CLI_SETTINGS_H
#define VIGIL_CLI_SETTINGS_H

#include <glib.h>

#include "vigil/config.h"
#include "vigil/settings.h"

/* [preload]: passed to the preload library as its environment. */
struct vigil_preload_settings {
    char *report;
    char *report_format; /* "text" or "json" */
    char **exclude;
    guint ring_slots; /* a power of two: the table's check */
};

/* [advise] */
struct vigil_advise_settings {
    double power_exponent;
    guint frequency_step_mhz;
};

#endif
