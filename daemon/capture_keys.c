/* vigil — the [capture] section: which activities vigild forwards. */
#include "vigild_settings.h"
#include "vigil/schema.h"

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct vigild_capture_settings, mode), .type = VIGIL_CONFIG_ENUM,
     .default_value = "anomalies", .choices = "anomalies|all|none",
     .description = "forward the cycles around abnormal ones (anomalies), every cycle (all) or "
                    "none; the others are dropped and only counted"},
    {VIGIL_SETTING(struct vigild_capture_settings, pre_cycles), .type = VIGIL_CONFIG_INT,
     .default_value = "1", .min = 0, .max = 60,
     .description = "cycles before an abnormal one that are forwarded with it"},
    {VIGIL_SETTING(struct vigild_capture_settings, post_cycles), .type = VIGIL_CONFIG_INT,
     .default_value = "1", .min = 0, .max = 60,
     .description = "cycles after the last abnormal one that are forwarded with it"},
    {VIGIL_SETTING(struct vigild_capture_settings, max_held), .type = VIGIL_CONFIG_INT,
     .default_value = "4000000", .min = 1000, .max = 1000000000,
     .description = "activities held on the node at most while their cycles wait for a "
                    "decision (80 bytes each); beyond it activities are lost, and counted"},
    {VIGIL_SETTING(struct vigild_capture_settings, sink), .type = VIGIL_CONFIG_STRING,
     .default_value = "/var/lib/vigil/capture.jsonl",
     .description = "the file forwarded windows are appended to, one JSON object a line, on a "
                    "node without a transaction server (see sink_enabled); mode 0600, a new "
                    "folder 0700"},
    {VIGIL_SETTING(struct vigild_capture_settings, sink_enabled), .type = VIGIL_CONFIG_ENUM,
     .default_value = "auto", .choices = "auto|yes|no",
     .description = "write the sink: auto writes it only when [uplink] endpoint is empty (the "
                    "transaction server keeps the windows otherwise), yes always, no never"},
    {VIGIL_SETTING(struct vigild_capture_settings, sink_max_bytes), .type = VIGIL_CONFIG_INT,
     .default_value = "67108864", .min = 65536, .max = 1099511627776.0,
     .description = "the sink file's size at most: a line that would pass it starts a new file, "
                    "the full one renamed SINK.1 (SINK.1 to SINK.2, and so on)"},
    {VIGIL_SETTING(struct vigild_capture_settings, sink_keep_files), .type = VIGIL_CONFIG_INT,
     .default_value = "4", .min = 0, .max = 1000,
     .description = "full sink files kept beside the sink (SINK.1 the newest); an older one is "
                    "deleted, logged and counted as dropped, so the sink uses at most "
                    "(sink_keep_files + 1) * sink_max_bytes of disk"},
};
const struct vigil_settings_table vigild_capture_keys =
    VIGIL_SETTINGS_TABLE("capture", struct vigild_capture_settings, keys, NULL);
