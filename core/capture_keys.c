/* vigil — the [capture] section: which activities vigild forwards. */
#include "vigil/schema.h"

const struct vigil_config_key vigil_capture_config_keys[] = {
    {.section = "capture",
     .name = "mode",
     .type = VIGIL_CONFIG_ENUM,
     .default_value = "anomalies",
     .choices = "anomalies|all|none",
     .description = "forward the cycles around abnormal ones (anomalies), every cycle (all) or "
                    "none; the others are dropped and only counted"},
    {.section = "capture",
     .name = "pre_cycles",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1",
     .min = 0,
     .max = 60,
     .description = "cycles before an abnormal one that are forwarded with it"},
    {.section = "capture",
     .name = "post_cycles",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1",
     .min = 0,
     .max = 60,
     .description = "cycles after the last abnormal one that are forwarded with it"},
    {.section = "capture",
     .name = "max_held",
     .type = VIGIL_CONFIG_INT,
     .default_value = "4000000",
     .min = 1000,
     .max = 1000000000,
     .description = "activities held on the node at most while their cycles wait for a "
                    "decision (80 bytes each); beyond it activities are lost, and counted"},
    {.section = "capture",
     .name = "sink",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "/var/lib/vigil/capture.jsonl",
     .description = "the file forwarded windows are appended to, one JSON object a line, on a "
                    "node without a transaction server (see sink_enabled); mode 0600, a new "
                    "folder 0700"},
    {.section = "capture",
     .name = "sink_enabled",
     .type = VIGIL_CONFIG_ENUM,
     .default_value = "auto",
     .choices = "auto|yes|no",
     .description = "write the sink: auto writes it only when [uplink] endpoint is empty (the "
                    "transaction server keeps the windows otherwise), yes always, no never"},
    {.section = "capture",
     .name = "sink_max_bytes",
     .type = VIGIL_CONFIG_INT,
     .default_value = "67108864",
     .min = 65536,
     .max = 1099511627776.0,
     .description = "the sink file's size at most: a line that would pass it starts a new file, "
                    "the full one renamed SINK.1 (SINK.1 to SINK.2, and so on)"},
    {.section = "capture",
     .name = "sink_keep_files",
     .type = VIGIL_CONFIG_INT,
     .default_value = "4",
     .min = 0,
     .max = 1000,
     .description = "full sink files kept beside the sink (SINK.1 the newest); an older one is "
                    "deleted, logged and counted as dropped, so the sink uses at most "
                    "(sink_keep_files + 1) * sink_max_bytes of disk"},
};
const size_t vigil_capture_config_key_count =
    sizeof vigil_capture_config_keys / sizeof vigil_capture_config_keys[0];
