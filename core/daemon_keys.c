/* vigil — the [daemon] section: how vigild runs on a node. */
#include "vigil/schema.h"

const struct vigil_config_key vigil_daemon_config_keys[] = {
    {.section = "daemon",
     .name = "socket",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "/run/vigil/vigild.sock",
     .description = "the Unix socket processes register on (VIGIL_SOCKET overrides it)"},
    {.section = "daemon",
     .name = "tick_ms",
     .type = VIGIL_CONFIG_INT,
     .default_value = "100",
     .min = 10,
     .max = 60000,
     .description = "the sampling period: statistics are read and rings drained every tick"},
    {.section = "daemon",
     .name = "providers",
     .type = VIGIL_CONFIG_LIST,
     .default_value = "procstat;meminfo;loadavg;diskstats;netdev;process;energy",
     .description = "the statistics providers to run, each configured in [provider.NAME]"},
    {.section = "daemon",
     .name = "cycle_ms",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1000",
     .min = 10,
     .max = 3600000,
     .description = "the reasoner cycle: ADPIs report and reasoners decide once a cycle, and "
                    "capture keeps or drops activities a cycle at a time; a multiple of tick_ms"},
    {.section = "daemon",
     .name = "rollup_ms",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1000",
     .min = 10,
     .max = 3600000,
     .description = "the window of the statistics roll-ups (min, mean, max, counter deltas); "
                    "a multiple of tick_ms"},
    {.section = "daemon",
     .name = "history_s",
     .type = VIGIL_CONFIG_INT,
     .default_value = "60",
     .min = 0,
     .max = 86400,
     .description = "seconds of full-resolution statistics kept in memory"},
    {.section = "daemon",
     .name = "max_processes",
     .type = VIGIL_CONFIG_INT,
     .default_value = "4096",
     .min = 1,
     .max = 1000000,
     .description = "registered processes served at once; more are refused"},
    {.section = "daemon",
     .name = "state_dir",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "where vigild keeps what a restarted vigild needs to take the running "
                    "processes back (their registrations, file names and counts); empty: "
                    "beside the socket (SOCKET.state), in /run so a reboot empties it; none: "
                    "a restart of vigild loses the running processes"},
    {.section = "daemon",
     .name = "keep_ended",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1024",
     .min = 1, /* a process that ends while it registers is still answered */
     .max = 1000000,
     .description = "ended processes whose figures `vigil status` still shows"},
};
const size_t vigil_daemon_config_key_count =
    sizeof vigil_daemon_config_keys / sizeof vigil_daemon_config_keys[0];
