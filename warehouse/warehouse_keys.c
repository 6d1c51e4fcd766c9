/* vigil — the [warehouse] section: how vigil-txd, vigil-web and `vigil db`
 * reach PostgreSQL and what `vigil db prune` keeps. */
#include "vigil/schema.h"
#include "vigil/warehouse_settings.h"

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct vigil_warehouse_settings, conninfo), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "the libpq connection string (\"host=db1 dbname=vigil user=vigil\" or a "
                    "postgresql:// URI); empty: libpq's PGHOST, PGSERVICE… variables. Keep a "
                    "password in ~/.pgpass, or make this file readable only by vigil",
     .redact_password = true},
    {VIGIL_SETTING(struct vigil_warehouse_settings, migrate), .type = VIGIL_CONFIG_BOOL,
     .default_value = "false",
     .description = "whether vigil-txd applies the schema migrations it was built with when it "
                    "starts; otherwise it refuses a database whose schema is older (run "
                    "`vigil db migrate`)"},
    {VIGIL_SETTING(struct vigil_warehouse_settings, distributed), .type = VIGIL_CONFIG_ENUM,
     .default_value = "no", .choices = "no|citus",
     .description = "citus: conninfo names a Citus cluster's coordinator, and `vigil db "
                    "migrate` (and vigil-txd with migrate = true) lays the tables out across "
                    "its workers after the migrations (docs/scaling.md); no: one PostgreSQL "
                    "server"},
    {VIGIL_SETTING(struct vigil_warehouse_settings, connect_timeout_s), .type = VIGIL_CONFIG_INT,
     .default_value = "10", .min = 2, .max = 600,
     .description = "how long vigil-txd and `vigil db` wait for PostgreSQL to answer a "
                    "connection (libpq's connect_timeout, whole seconds, 2 at least); vigil-txd "
                    "then keeps its batches and tries again with back-off"},
    {VIGIL_SETTING(struct vigil_warehouse_settings, statement_timeout_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "60000", .min = 100, .max = 3600000,
     .description = "the longest one statement of vigil-txd may run (PostgreSQL's "
                    "statement_timeout); past it the batch is rolled back, stays queued and "
                    "unacknowledged, and is tried again"},
    {VIGIL_SETTING(struct vigil_warehouse_settings, lock_timeout_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "5000", .min = 10, .max = 600000,
     .description = "the longest vigil-txd, `vigil db maintain` and `vigil db prune` wait for a "
                    "lock another session holds (PostgreSQL's lock_timeout); vigil-txd then "
                    "keeps the batch queued and tries again"},
    {VIGIL_SETTING(struct vigil_warehouse_settings, partitions_ahead_days),
     .type = VIGIL_CONFIG_INT, .default_value = "3", .min = 1, .max = 366,
     .description =
         "the day partitions made ahead of time by the maintenance step (`vigil db "
         "maintain`, and vigil-txd at start and every maintain_interval_s): yesterday, today "
         "and this many days after it"},
    {VIGIL_SETTING(struct vigil_warehouse_settings, maintain_interval_s), .type = VIGIL_CONFIG_INT,
     .default_value = "3600", .min = 10, .max = 86400,
     .description = "how often vigil-txd runs the maintenance step while it runs"},
    {VIGIL_SETTING_NAMED("retain_activities_days", struct vigil_warehouse_settings,
                         retention.days[0]),
     .type = VIGIL_CONFIG_INT, .default_value = "0", .min = 0, .max = 36500,
     .description = "`vigil db prune` drops the day partitions of activities (and of their "
                    "per-second counts, activity_seconds) whose every row is older than this "
                    "many days; 0 keeps them for ever"},
    {VIGIL_SETTING_NAMED("retain_window_statistics_days", struct vigil_warehouse_settings,
                         retention.days[2]),
     .type = VIGIL_CONFIG_INT, .default_value = "0", .min = 0, .max = 36500,
     .description = "the same for window_statistics (full resolution, captured windows)"},
    {VIGIL_SETTING_NAMED("retain_statistics_rollups_days", struct vigil_warehouse_settings,
                         retention.days[1]),
     .type = VIGIL_CONFIG_INT, .default_value = "0", .min = 0, .max = 36500,
     .description = "the same for statistics_rollups"},
    {VIGIL_SETTING_NAMED("retain_reasoner_states_days", struct vigil_warehouse_settings,
                         retention.days[3]),
     .type = VIGIL_CONFIG_INT, .default_value = "0", .min = 0, .max = 36500,
     .description = "the same for reasoner_states (every node's state every cycle)"},
    {VIGIL_SETTING_NAMED("retain_statistics_levels_days", struct vigil_warehouse_settings,
                         retention.days[4]),
     .type = VIGIL_CONFIG_INT, .default_value = "0", .min = 0, .max = 36500,
     .description = "the same for statistics_level_blocks (the 5 s and 60 s levels made from "
                    "the roll-ups): may be longer than the roll-ups', which long series then "
                    "read the levels alone for"},
    {VIGIL_SETTING_NAMED("retain_ingested_batches_days", struct vigil_warehouse_settings,
                         retention.days[5]),
     .type = VIGIL_CONFIG_INT, .default_value = "0", .min = 0, .max = 36500,
     .description = "the same for ingested_batches, the record of stored batches that keeps a "
                    "resent batch from being stored twice; never shorter than the longest of "
                    "the data tables above but the levels (0 for ever when one of them is 0), "
                    "whatever it says"},
};
const struct vigil_settings_table vigil_warehouse_keys =
    VIGIL_SETTINGS_TABLE("warehouse", struct vigil_warehouse_settings, keys, NULL);
