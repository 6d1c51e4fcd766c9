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
     .description = "the file forwarded windows are appended to, one JSON object a line, until "
                    "the transaction server takes them"},
};
const size_t vigil_capture_config_key_count =
    sizeof vigil_capture_config_keys / sizeof vigil_capture_config_keys[0];
