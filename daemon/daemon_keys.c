/* vigil — the [daemon] section: how vigild runs on a node. */
#include "vigild_settings.h"
#include "vigil/schema.h"
#include "vigil/local_protocol.h"

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct vigild_daemon_settings, socket), .type = VIGIL_CONFIG_STRING,
     .default_value = VIGIL_SOCKET_DEFAULT,
     .description = "the Unix socket processes register on (VIGIL_SOCKET overrides it)"},
    {VIGIL_SETTING(struct vigild_daemon_settings, tick_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "100", .min = 10, .max = 60000,
     .description = "the sampling period: statistics are read and rings drained every tick"},
    {VIGIL_SETTING(struct vigild_daemon_settings, providers), .type = VIGIL_CONFIG_LIST,
     .default_value = "procstat;meminfo;loadavg;diskstats;netdev;process;energy;cpufreq",
     .description = "the statistics providers to run, each configured in [provider.NAME]"},
    {VIGIL_SETTING(struct vigild_daemon_settings, cycle_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "1000", .min = 10, .max = 3600000,
     .description = "the reasoner cycle: ADPIs report and reasoners decide once a cycle, and "
                    "capture keeps or drops activities a cycle at a time; a multiple of tick_ms"},
    {VIGIL_SETTING(struct vigild_daemon_settings, rollup_ms), .type = VIGIL_CONFIG_INT,
     .default_value = "1000", .min = 10, .max = 3600000,
     .description = "the window of the statistics roll-ups (min, mean, max, counter deltas); "
                    "a multiple of tick_ms"},
    {VIGIL_SETTING(struct vigild_daemon_settings, history_s), .type = VIGIL_CONFIG_INT,
     .default_value = "60", .min = 0, .max = 86400,
     .description = "seconds of full-resolution statistics kept in memory"},
    {VIGIL_SETTING(struct vigild_daemon_settings, max_processes), .type = VIGIL_CONFIG_INT,
     .default_value = "4096", .min = 1, .max = 1000000,
     .description = "registered processes served at once; more are refused"},
    {VIGIL_SETTING(struct vigild_daemon_settings, state_dir), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "where vigild keeps what a restarted vigild needs to take the running "
                    "processes back (their registrations, file names and counts); empty: "
                    "beside the socket (SOCKET.state), in /run so a reboot empties it; none: "
                    "a restart of vigild loses the running processes"},
    {VIGIL_SETTING(struct vigild_daemon_settings, keep_ended), .type = VIGIL_CONFIG_INT,
     .default_value = "1024",
     .min = 1, /* a process that ends while it registers is still answered */
     .max = 1000000, .description = "ended processes whose figures `vigil status` still shows"},
    {VIGIL_SETTING(struct vigild_daemon_settings, max_connections_per_uid),
     .type = VIGIL_CONFIG_INT, .default_value = "1024", .min = 1, .max = 1000000,
     .description = "connections one user (not root) may hold open on the socket at once, "
                    "registered processes included; more are refused, counted and logged "
                    "(refusal_log_interval_s)"},
    {VIGIL_SETTING(struct vigild_daemon_settings, max_processes_per_uid), .type = VIGIL_CONFIG_INT,
     .default_value = "512", .min = 1, .max = 1000000,
     .description = "registered processes of one user (not root) served at once; more are "
                    "refused with the reason (max_processes bounds them all)"},
    {VIGIL_SETTING(struct vigild_daemon_settings, unregistered_timeout_ms),
     .type = VIGIL_CONFIG_INT, .default_value = "10000", .min = 10, .max = 3600000,
     .description = "a connection that has not registered (a `vigil status` client too) is "
                    "closed this long after it connected, whatever it asked meanwhile; a "
                    "registered process may stay silent for its whole life"},
    {VIGIL_SETTING(struct vigild_daemon_settings, fd_reserve), .type = VIGIL_CONFIG_INT,
     .default_value = "1024", .min = 16, .max = 1000000,
     .description = "descriptors kept free below vigild's limit (RLIMIT_NOFILE) for its own "
                    "files, pidfds and providers: a user's connection that would go past the "
                    "limit minus this is refused (root's may use half of the reserve); it leaves "
                    "128 at least"},
    {VIGIL_SETTING(struct vigild_daemon_settings, status_requests_per_s), .type = VIGIL_CONFIG_INT,
     .default_value = "2", .min = 1, .max = 1000000,
     .description = "status requests (`vigil status`) one user (not root) may make a second "
                    "once its burst is used; more are refused with the reason, counted and "
                    "logged: each answer builds the whole status"},
    {VIGIL_SETTING(struct vigild_daemon_settings, status_requests_burst), .type = VIGIL_CONFIG_INT,
     .default_value = "10", .min = 1, .max = 1000000,
     .description = "status requests one user (not root) may make at once before "
                    "status_requests_per_s applies"},
    {VIGIL_SETTING(struct vigild_daemon_settings, refusal_log_interval_s), .type = VIGIL_CONFIG_INT,
     .default_value = "60", .min = 1, .max = 86400,
     .description = "what the socket refuses a user (a limit, a malformed or out-of-turn "
                    "message) is logged at once, then at most once in this many seconds for "
                    "that user, with the counts by kind since; `vigil status` counts every "
                    "refusal"},
    {VIGIL_SETTING(struct vigild_daemon_settings, record), .type = VIGIL_CONFIG_STRING,
     .default_value = "",
     .description = "a file vigild records each cycle's inputs to the ADPIs and reasoners "
                    "(samples, activities) and their decisions in, for `vigil tune --replay`; "
                    "made anew at each start, read at start only; empty: no recording"},
    {VIGIL_SETTING(struct vigild_daemon_settings, record_max_bytes), .type = VIGIL_CONFIG_INT,
     .default_value = "268435456", .min = 65536, .max = 1099511627776.0,
     .description = "the recording's size at most: past it vigild stops recording (logged), "
                    "so that a forgotten recording cannot fill the disk"},
};
const struct vigil_settings_table vigild_daemon_keys =
    VIGIL_SETTINGS_TABLE("daemon", struct vigild_daemon_settings, keys, NULL);
