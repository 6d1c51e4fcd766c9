/* vigil — the [uplink] section: how vigild sends its batches to vigil-txd,
 * and how much it keeps on disk while it cannot. */
#include "vigil/schema.h"

const struct vigil_config_key vigil_uplink_config_keys[] = {
    {.section = "uplink",
     .name = "endpoint",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "vigil-txd's ZeroMQ endpoint (tcp://host:port); empty: no uplink, vigild "
                    "keeps only its local capture sink"},
    {.section = "uplink",
     .name = "node_id",
     .type = VIGIL_CONFIG_INT,
     .default_value = "0",
     .min = 0,
     .max = 1e18,
     .description = "this node's id in the warehouse; 0: derived from /etc/machine-id, else "
                    "from the host name"},
    {.section = "uplink",
     .name = "spool_dir",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "/var/lib/vigil/spool",
     .description = "where batches vigil-txd has not acknowledged are kept, and the sequence "
                    "numbers already used"},
    {.section = "uplink",
     .name = "spool_max_bytes",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1073741824",
     .min = 1048576,
     .max = 1e15,
     .description = "disk the spool may use; beyond it the oldest batches are dropped, logged "
                    "and counted"},
    {.section = "uplink",
     .name = "spool_after_ms",
     .type = VIGIL_CONFIG_INT,
     .default_value = "0",
     .min = 0,
     .max = 3600000,
     .description = "0: every batch is written to the spool as it is made, so that a SIGKILL "
                    "of vigild loses nothing; else a batch not acknowledged this long is "
                    "written to the spool (younger ones are what a SIGKILL loses)"},
    {.section = "uplink",
     .name = "resend_after_ms",
     .type = VIGIL_CONFIG_INT,
     .default_value = "10000",
     .min = 100,
     .max = 3600000,
     .description = "a batch not acknowledged this long after it was sent is sent again"},
    {.section = "uplink",
     .name = "memory_max_bytes",
     .type = VIGIL_CONFIG_INT,
     .default_value = "67108864",
     .min = 0,
     .max = 1e12,
     .description = "unacknowledged batches kept in memory at most; beyond it the oldest leave "
                    "memory: spooled ones are read back to be sent again, ones the spool cannot "
                    "take are dropped, logged and counted"},
    {.section = "uplink",
     .name = "in_flight_max_bytes",
     .type = VIGIL_CONFIG_INT,
     .default_value = "67108864",
     .min = 65536,
     .max = 1e12,
     .description = "batches sent and not yet acknowledged, in bytes, at most (and at most 64 "
                    "batches); one batch is always allowed"},
    {.section = "uplink",
     .name = "refused_max_bytes",
     .type = VIGIL_CONFIG_INT,
     .default_value = "268435456",
     .min = 0,
     .max = 1e15,
     .description = "disk the batches vigil-txd refused (kept in SPOOL_DIR/refused/ for people "
                    "to look at) may use; the oldest are deleted first, logged and counted"},
    {.section = "uplink",
     .name = "curve_server_key",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "vigil-txd's CURVE public key (40 characters of Z85); empty: no CURVE, "
                    "with curve_key_file"},
    {.section = "uplink",
     .name = "curve_key_file",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "this node's CURVE key pair as `vigil keygen` writes it ([curve] public, "
                    "secret), mode 0600; with curve_server_key"},
};
const size_t vigil_uplink_config_key_count =
    sizeof vigil_uplink_config_keys / sizeof vigil_uplink_config_keys[0];
