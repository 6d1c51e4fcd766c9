/* vigil — the [warehouse] section as a struct: how vigil-txd, vigil-web,
 * `vigil db` and `vigil advise` reach PostgreSQL, and what `vigil db prune`
 * keeps. Each key fills the field of its name (warehouse/warehouse_keys.c);
 * apart from vigil/warehouse.h so that the table needs no libpq. */
#ifndef VIGIL_WAREHOUSE_SETTINGS_H
#define VIGIL_WAREHOUSE_SETTINGS_H

#include <glib.h>

#include "vigil/settings.h"

/* The tables partitioned by day (UTC), in this order: activities,
 * statistics_rollup_arrays, window_statistics_arrays (the tables behind
 * the views statistics_rollups and window_statistics, migration 13),
 * reasoner_states, statistics_level_blocks (the coarser levels, migration
 * 14), ingested_batches (always the last). */
enum { VIGIL_WAREHOUSE_DAY_TABLES = 6 };
extern const char *const vigil_warehouse_day_tables[VIGIL_WAREHOUSE_DAY_TABLES];

/* Retention in days per day table (same order); 0 keeps for ever. */
struct vigil_warehouse_retention {
    guint days[VIGIL_WAREHOUSE_DAY_TABLES];
};

/* [warehouse] distributed: one PostgreSQL server, or a Citus cluster's
 * coordinator (the schema laid out by vigil_warehouse_citus_layout). */
enum vigil_warehouse_distribution {
    VIGIL_WAREHOUSE_SINGLE_SERVER,
    VIGIL_WAREHOUSE_CITUS,
};

struct vigil_warehouse_settings {
    char *conninfo; /* "": libpq's environment */
    gboolean migrate;
    enum vigil_warehouse_distribution distributed;
    guint connect_timeout_s;
    guint statement_timeout_ms;
    guint lock_timeout_ms;
    guint partitions_ahead_days;
    guint maintain_interval_s;
    struct vigil_warehouse_retention retention; /* retain_TABLE_days */
};

#endif
