/* vigil — the [preload] section: how `vigil run` sets up
 * libvigil-preload.so. The library itself reads no file (it runs inside
 * arbitrary programs, without GLib); `vigil run` turns these keys into the
 * environment variables it reads. */
#include "cli_settings.h"
#include "vigil/ring.h"
#include "vigil/schema.h"

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct vigil_preload_settings, report), .type = VIGIL_CONFIG_STRING,
     .default_value = "stderr",
     .description = "where the end-of-run report goes: stderr, a file path (%p is the pid), "
                    "or off (nothing printed; vigild still gets its figures)"},
    {VIGIL_SETTING(struct vigil_preload_settings, report_format), .type = VIGIL_CONFIG_ENUM,
     .default_value = "text", .choices = "text|json",
     .description = "the report for people (text) or for programs (json)"},
    {VIGIL_SETTING(struct vigil_preload_settings, exclude), .type = VIGIL_CONFIG_LIST,
     .default_value = VIGIL_EXCLUDE_DEFAULT,
     .description = "path prefixes whose calls are counted but not recorded"},
    {VIGIL_SETTING(struct vigil_preload_settings, ring_slots), .type = VIGIL_CONFIG_INT,
     .default_value = G_STRINGIFY(VIGIL_RING_DEFAULT_SLOTS_NUMBER), .min = VIGIL_RING_MIN_SLOTS,
     .max = VIGIL_RING_MAX_SLOTS,
     .description = "activity records a process's ring holds (a power of two; 96 bytes each)"},
};
/* What the key's type cannot say. `vigil config check` refuses it; `vigil
 * run` warns and leaves the library its default. */
static gboolean check_ring_slots(const void *settings, const char *section,
                                 const vigil_config *config, GError **error)
{
    (void)section;
    guint slots = ((const struct vigil_preload_settings *)settings)->ring_slots;
    if ((slots & (slots - 1)) == 0)
        return TRUE;
    const char *source = vigil_settings_source(config, &vigil_preload_keys,
                                               offsetof(struct vigil_preload_settings, ring_slots));
    g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE,
                "%s: [preload] ring_slots: expected a power of two, got %u",
                source != NULL ? source : "the default", slots);
    return FALSE;
}

const struct vigil_settings_table vigil_preload_keys =
    VIGIL_SETTINGS_TABLE("preload", struct vigil_preload_settings, keys, check_ring_slots);
