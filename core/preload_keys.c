/* vigil — the [preload] section: how `vigil run` sets up
 * libvigil-preload.so. The library itself reads no file (it runs inside
 * arbitrary programs, without GLib); `vigil run` turns these keys into the
 * environment variables it reads. */
#include "vigil/schema.h"

const struct vigil_config_key vigil_preload_config_keys[] = {
    {.section = "preload",
     .name = "report",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "stderr",
     .description = "where the end-of-run report goes: stderr, a file path (%p is the pid), "
                    "or off (nothing printed; vigild still gets its figures)"},
    {.section = "preload",
     .name = "report_format",
     .type = VIGIL_CONFIG_ENUM,
     .default_value = "text",
     .choices = "text|json",
     .description = "the report for people (text) or for programs (json)"},
    {.section = "preload",
     .name = "exclude",
     .type = VIGIL_CONFIG_LIST,
     .default_value = "/proc;/sys;/dev",
     .description = "path prefixes whose calls are counted but not recorded"},
    {.section = "preload",
     .name = "ring_slots",
     .type = VIGIL_CONFIG_INT,
     .default_value = "65536",
     .min = 64,
     .max = 16777216,
     .description = "activity records a process's ring holds (a power of two; 96 bytes each)"},
};
const size_t vigil_preload_config_key_count =
    sizeof vigil_preload_config_keys / sizeof vigil_preload_config_keys[0];

gboolean vigil_preload_check_config(const vigil_config *config, GError **error)
{
    gint64 slots = vigil_config_get_int(config, "preload", "ring_slots");
    if ((slots & (slots - 1)) == 0)
        return TRUE;
    const char *source = vigil_config_source(config, "preload", "ring_slots");
    g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                "%s: [preload] ring_slots: expected a power of two, got %" G_GINT64_FORMAT,
                source != NULL ? source : "the default", slots);
    return FALSE;
}
