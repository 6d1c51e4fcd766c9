/* vigil — the [txd] section: vigil-txd, the transaction server. */
#include "txd_settings.h"
#include "vigil/curve.h"
#include "vigil/schema.h"

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct txd_settings, bind), .type = VIGIL_CONFIG_STRING,
     .default_value = "tcp://127.0.0.1:5701",
     .description = "the ZeroMQ endpoint the daemons connect to; without CURVE keys only a "
                    "loopback or ipc:// endpoint is accepted"},
    {VIGIL_SETTING(struct txd_settings, cycle_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "1000", .min = 10, .max = 3600000,
     .description = "how often the system reasoner decides, and sends its state to every daemon"},
    {VIGIL_SETTING(struct txd_settings, node_state_max_age_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "5000", .min = 10, .max = 3600000,
     .description = "a node whose last state is older than this is left out of the system "
                    "reasoner (it is down, or its batches are being replayed late)"},
    {VIGIL_SETTING(struct txd_settings, curve_key_file), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "this server's CURVE key pair, as `vigil keygen` writes it; empty for no "
                    "CURVE (then only loopback)"},
    {VIGIL_SETTING(struct txd_settings, curve_authorized_keys), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "a file of the daemons' CURVE public keys, one Z85 key a line (# comments); "
                    "any other key is refused"},
    {VIGIL_SETTING(struct txd_settings, pending_max_bytes), .type = VIGIL_CONFIG_INT,
     .default_value = "268435456", .min = 1048576, .max = 1099511627776.0,
     .description = "batches received but not yet stored (the database is down) that are kept "
                    "in memory; past it new batches are not acknowledged, and their daemons "
                    "spool them"},
    {VIGIL_SETTING(struct txd_settings, receive_batches_per_node), .type = VIGIL_CONFIG_INT,
     .default_value = "4", .min = 1, .max = 1000,
     .description = "batches one node's connection may hold in vigil-txd's memory before the "
                    "server reads them; past it the node's batches wait on its side. With "
                    "pending_max_bytes it bounds vigil-txd's memory: about nodes x this x a "
                    "batch's size"},
    {VIGIL_SETTING(struct txd_settings, retry_max_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "5000", .min = 10, .max = 600000,
     .description = "the longest wait between two tries to reach a database that is down (the "
                    "wait doubles from 100 ms up to this)"},
    {VIGIL_SETTING(struct txd_settings, levels_interval_s), .type = VIGIL_CONFIG_INT,
     .default_value = "30", .min = 0, .max = 86400,
     .description =
         "how often vigil-txd builds the coarser roll-up levels (5 s, 60 s) of the "
         "blocks that ended 2 minutes ago or more, at most an hour of them a pass, on "
         "a thread and connection of its own (the groups do not wait for it); several vigil-txd "
         "take turns; 0: vigil-txd does not build them (`vigil db maintain` does)"},
};
/* The key files read as vigil-txd reads them at start. */
static gboolean check_curve(const void *settings, const char *section, const vigil_config *config,
                            GError **error)
{
    (void)section;
    (void)config;
    const struct txd_settings *s = settings;
    return vigil_curve_check_server("txd", s->curve_key_file, s->curve_authorized_keys, error);
}

const struct vigil_settings_table txd_keys =
    VIGIL_SETTINGS_TABLE("txd", struct txd_settings, keys, check_curve);
