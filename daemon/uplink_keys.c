/* vigil — the [uplink] section: how vigild sends its batches to vigil-txd,
 * and how much it keeps on disk while it cannot. */
#include "uplink.h"
#include "vigil/curve.h"
#include "vigil/schema.h"

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct vigild_uplink_settings, endpoint), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "vigil-txd's ZeroMQ endpoint (tcp://host:port); empty: no uplink, vigild "
                    "keeps only its local capture sink"},
    {VIGIL_SETTING(struct vigild_uplink_settings, node_id), .type = VIGIL_CONFIG_INT,
     .default_value = "0", .min = 0, .max = 1e18,
     .description = "this node's id in the warehouse; 0: derived from /etc/machine-id, else "
                    "from the host name"},
    {VIGIL_SETTING(struct vigild_uplink_settings, hostname), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "the host name this node gives the warehouse and its run keys; empty: the "
                    "machine's (several vigild on one machine, each a node of its own, set it)"},
    {VIGIL_SETTING(struct vigild_uplink_settings, spool_dir), .type = VIGIL_CONFIG_STRING,
     .default_value = "/var/lib/vigil/spool",
     .description = "where batches vigil-txd has not acknowledged are kept, and the sequence "
                    "numbers already used"},
    {VIGIL_SETTING(struct vigild_uplink_settings, spool_max_bytes), .type = VIGIL_CONFIG_INT,
     .default_value = "1073741824", .min = 1048576, .max = 1e15,
     .description = "disk the spool may use; beyond it the oldest batches are dropped, logged "
                    "and counted"},
    {VIGIL_SETTING(struct vigild_uplink_settings, spool_after_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "0", .min = 0, .max = 3600000,
     .description = "0: every batch is written to the spool as it is made, so that a SIGKILL "
                    "of vigild loses nothing; else a batch not acknowledged this long is "
                    "written to the spool (younger ones are what a SIGKILL loses)"},
    {VIGIL_SETTING(struct vigild_uplink_settings, resend_after_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "10000", .min = 100, .max = 3600000,
     .description = "a batch not acknowledged this long after it was sent is sent again"},
    {VIGIL_SETTING(struct vigild_uplink_settings, memory_max_bytes), .type = VIGIL_CONFIG_INT,
     .default_value = "67108864", .min = 0, .max = 1e12,
     .description = "unacknowledged batches kept in memory at most; beyond it the oldest leave "
                    "memory: spooled ones are read back to be sent again, ones the spool cannot "
                    "take are dropped, logged and counted"},
    {VIGIL_SETTING(struct vigild_uplink_settings, in_flight_max_bytes), .type = VIGIL_CONFIG_INT,
     .default_value = "67108864", .min = 65536, .max = 1e12,
     .description = "batches sent and not yet acknowledged, in bytes, at most (and at most 64 "
                    "batches); one batch is always allowed"},
    {VIGIL_SETTING(struct vigild_uplink_settings, refused_max_bytes), .type = VIGIL_CONFIG_INT,
     .default_value = "268435456", .min = 0, .max = 1e15,
     .description = "disk the batches vigil-txd refused (kept in SPOOL_DIR/refused/ for people "
                    "to look at) may use; the oldest are deleted first, logged and counted"},
    {VIGIL_SETTING(struct vigild_uplink_settings, reconnect_ivl_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "1000", .min = 10, .max = 600000,
     .description = "after a disconnection, the first try to reconnect comes after a time "
                    "drawn once per vigild between this and twice this (ZeroMQ adds up to as "
                    "much again at each try), so that after a vigil-txd restart its nodes "
                    "come back spread out, not all at once"},
    {VIGIL_SETTING(struct vigild_uplink_settings, reconnect_ivl_max_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "5000", .min = 0, .max = 3600000,
     .description = "each failed try doubles the wait up to this (0: no backoff; below "
                    "reconnect_ivl_ms: none either); a node is heard again at most about this "
                    "long after vigil-txd is back"},
    {VIGIL_SETTING(struct vigild_uplink_settings, connect_delay_max_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "1000", .min = 0, .max = 600000,
     .description = "vigild's first connection to vigil-txd waits a random time below this "
                    "after its start (0: none), so that nodes started together do not all "
                    "shake hands at once; batches wait meanwhile"},
    {VIGIL_SETTING(struct vigild_uplink_settings, curve_server_key), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "vigil-txd's CURVE public key (40 characters of Z85); empty: no CURVE, "
                    "with curve_key_file"},
    {VIGIL_SETTING(struct vigild_uplink_settings, curve_key_file), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "this node's CURVE key pair as `vigil keygen` writes it ([curve] public, "
                    "secret), mode 0600; with curve_server_key"},
};
/* The key files read as vigild reads them at start. */
static gboolean check_curve(const void *settings, const char *section, const vigil_config *config,
                            GError **error)
{
    (void)section;
    (void)config;
    const struct vigild_uplink_settings *s = settings;
    return vigil_curve_check_client("uplink", s->curve_server_key, s->curve_key_file, error);
}

const struct vigil_settings_table vigild_uplink_keys =
    VIGIL_SETTINGS_TABLE("uplink", struct vigild_uplink_settings, keys, check_curve);
