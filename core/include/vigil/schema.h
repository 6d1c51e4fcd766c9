/* vigil — the settings tables of every built-in part, in one registry.
 *
 * Each program declares all of them, not only its own, so that one
 * vigil.conf serves every program and `vigil config check` checks all of
 * it; so every table is linked into libvigil, although each one's source
 * sits beside the code that reads it (core/meson.build names them). A part
 * adds its table here and to the list in schema.c. */
#ifndef VIGIL_SCHEMA_H
#define VIGIL_SCHEMA_H

#include <glib.h>

#include "vigil/config.h"
#include "vigil/settings.h"

/* Declares every table. */
gboolean vigil_schema_declare(vigil_config *config, GError **error);
/* Runs every table's check (vigil_settings_check), every problem one a
 * line: what `vigil config check` refuses beyond what the loader does. */
gboolean vigil_schema_check(const vigil_config *config, GError **error);
/* The tables, in the order of vigil_schema_declare; NULL-terminated. */
extern const struct vigil_settings_table *const vigil_schema_tables[];

/* [log]: every program (core/log.c). */
extern const struct vigil_settings_table vigil_log_keys;
/* [daemon], [capture], [uplink], [metrics]: vigild (daemon/settings.h,
 * daemon/uplink.h). */
extern const struct vigil_settings_table vigild_daemon_keys;
extern const struct vigil_settings_table vigild_capture_keys;
extern const struct vigil_settings_table vigild_uplink_keys;
extern const struct vigil_settings_table vigild_metrics_keys;
/* [warehouse]: vigil-txd, vigil-web, `vigil db`, `vigil advise`
 * (vigil/warehouse_settings.h). */
extern const struct vigil_settings_table vigil_warehouse_keys;
/* [txd]: vigil-txd (txd/txd_settings.h). */
extern const struct vigil_settings_table txd_keys;
/* [web]: vigil-web (web/settings.h). */
extern const struct vigil_settings_table web_keys;
/* [preload] and [advise]: vigil run and vigil advise (cli/cli_settings.h). */
extern const struct vigil_settings_table vigil_preload_keys;
extern const struct vigil_settings_table vigil_advise_keys;
/* [insight]: the findings' thresholds, vigild's to send (vigil/insight.h). */
extern const struct vigil_settings_table vigil_insight_keys;

#endif
