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
     .default_value = "procstat;meminfo;loadavg;diskstats;netdev;process;energy;cpufreq",
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
    {.section = "daemon",
     .name = "max_connections_per_uid",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1024",
     .min = 1,
     .max = 1000000,
     .description = "connections one user (not root) may hold open on the socket at once, "
                    "registered processes included; more are refused, counted and logged "
                    "(refusal_log_interval_s)"},
    {.section = "daemon",
     .name = "max_processes_per_uid",
     .type = VIGIL_CONFIG_INT,
     .default_value = "512",
     .min = 1,
     .max = 1000000,
     .description = "registered processes of one user (not root) served at once; more are "
                    "refused with the reason (max_processes bounds them all)"},
    {.section = "daemon",
     .name = "unregistered_timeout_ms",
     .type = VIGIL_CONFIG_INT,
     .default_value = "10000",
     .min = 10,
     .max = 3600000,
     .description = "a connection that has not registered (a `vigil status` client too) is "
                    "closed this long after it connected, whatever it asked meanwhile; a "
                    "registered process may stay silent for its whole life"},
    {.section = "daemon",
     .name = "fd_reserve",
     .type = VIGIL_CONFIG_INT,
     .default_value = "1024",
     .min = 16,
     .max = 1000000,
     .description = "descriptors kept free below vigild's limit (RLIMIT_NOFILE) for its own "
                    "files, pidfds and providers: a user's connection that would go past the "
                    "limit minus this is refused (root's may use half of the reserve); it leaves "
                    "128 at least"},
    {.section = "daemon",
     .name = "status_requests_per_s",
     .type = VIGIL_CONFIG_INT,
     .default_value = "2",
     .min = 1,
     .max = 1000000,
     .description = "status requests (`vigil status`) one user (not root) may make a second "
                    "once its burst is used; more are refused with the reason, counted and "
                    "logged: each answer builds the whole status"},
    {.section = "daemon",
     .name = "status_requests_burst",
     .type = VIGIL_CONFIG_INT,
     .default_value = "10",
     .min = 1,
     .max = 1000000,
     .description = "status requests one user (not root) may make at once before "
                    "status_requests_per_s applies"},
    {.section = "daemon",
     .name = "refusal_log_interval_s",
     .type = VIGIL_CONFIG_INT,
     .default_value = "60",
     .min = 1,
     .max = 86400,
     .description = "what the socket refuses a user (a limit, a malformed or out-of-turn "
                    "message) is logged at once, then at most once in this many seconds for "
                    "that user, with the counts by kind since; `vigil status` counts every "
                    "refusal"},
    {.section = "daemon",
     .name = "record",
     .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "a file vigild records each cycle's inputs to the ADPIs and reasoners "
                    "(samples, activities) and their decisions in, for `vigil tune --replay`; "
                    "made anew at each start, read at start only; empty: no recording"},
    {.section = "daemon",
     .name = "record_max_bytes",
     .type = VIGIL_CONFIG_INT,
     .default_value = "268435456",
     .min = 65536,
     .max = 1099511627776.0,
     .description = "the recording's size at most: past it vigild stops recording (logged), "
                    "so that a forgotten recording cannot fill the disk"},
};
const size_t vigil_daemon_config_key_count =
    sizeof vigil_daemon_config_keys / sizeof vigil_daemon_config_keys[0];
