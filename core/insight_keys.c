/* vigil — the [insight] section: the thresholds of the report's findings
 * (vigil/insight.h). vigild reads them and sends them to each process with
 * its summary (an INSIGHT message); a process without vigild uses
 * vigil_insight_defaults, which the unit tests hold equal to the defaults
 * here. Each default keeps a healthy run quiet. */
#include <string.h>

#include "vigil/insight.h"
#include "vigil/schema.h"

#define SHARE .type = VIGIL_CONFIG_DOUBLE, .min = 0, .max = 1
#define COUNT .type = VIGIL_CONFIG_INT, .min = 1, .max = 1e15

static const struct vigil_config_key keys[] = {
    {VIGIL_SETTING(struct vigil_insight_thresholds, min_accesses), COUNT, .default_value = "1000",
     .description = "a file with fewer reads and writes raises no access-pattern finding "
                    "(small_accesses, misaligned_accesses, random_access, unbuffered_stdio, "
                    "independent_mpiio)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, small_access_bytes), COUNT,
     .default_value = "1024",
     .description = "small_accesses: an access of at most this many bytes is small; one of "
                    "Darshan's size-bin edges: 100, 1024, 10240, 102400, 1048576, 4194304, "
                    "10485760, 104857600, 1073741824"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, small_access_share), SHARE,
     .default_value = "0.5",
     .description = "small_accesses: raised when at least this share of a file's POSIX reads "
                    "and writes are small (above 0, at most 1)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, misaligned_share), SHARE,
     .default_value = "0.5",
     .description = "misaligned_accesses: raised when at least this share of a file's POSIX "
                    "accesses do not start on the file system's block (above 0, at most 1)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, sequential_share), SHARE,
     .default_value = "0.7",
     .description = "random_access: raised when fewer than this share of a file's POSIX "
                    "accesses began after the previous one ended (above 0, at most 1)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, metadata_min_calls), COUNT,
     .default_value = "1000",
     .description = "metadata_heavy: at least this many opens and stats over the run"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, metadata_share), SHARE, .default_value = "0.5",
     .description = "metadata_heavy: and at least this share of the opens, stats, reads and "
                    "writes together (above 0, at most 1)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, small_file_bytes), COUNT,
     .default_value = "1048576",
     .description = "many_small_files: a file with less than this many bytes read and written "
                    "is small"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, small_files_min), COUNT,
     .default_value = "1000",
     .description = "many_small_files: raised from this many small files per rank (per "
                    "process)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, imbalance_ratio), .type = VIGIL_CONFIG_DOUBLE,
     .min = 1, .max = 1e6, .default_value = "2",
     .description = "rank_imbalance: raised when the busiest rank read, wrote or spent in I/O "
                    "at least this many times the mean of the ranks (above 1)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, imbalance_min_bytes), COUNT,
     .default_value = "268435456",
     .description = "rank_imbalance: in bytes only when the ranks read (or wrote) this many "
                    "together"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, imbalance_min_io_s),
     .type = VIGIL_CONFIG_DOUBLE, .min = 0, .max = 1e9, .default_value = "10",
     .description = "rank_imbalance: in I/O time only when the busiest rank spent this many "
                    "seconds in I/O (above 0)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, collective_below_bytes), COUNT,
     .default_value = "1048576",
     .description = "independent_mpiio: raised for a file shared by ranks, with no collective "
                    "call, whose independent calls moved fewer bytes than this on average"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, stdio_flush_share), SHARE,
     .default_value = "0.5",
     .description = "unbuffered_stdio: raised when small stdio writes reached the kernel one "
                    "by one (a flush or a POSIX write each) for at least this share of them "
                    "(above 0, at most 1)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, repeated_opens), .type = VIGIL_CONFIG_INT,
     .min = 2, .max = 1e15, .default_value = "100",
     .description = "repeated_open: raised for a file opened this many times (per rank, in "
                    "an MPI job's report)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, fsync_min_calls), COUNT, .default_value = "100",
     .description = "fsync_per_write: at least this many fsync and fdatasync calls on a file"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, fsync_per_write), SHARE, .default_value = "0.5",
     .description = "fsync_per_write: and at least this many per write (0.5: one every two "
                    "writes or more often; above 0, at most 1)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, io_time_share), SHARE, .default_value = "0.5",
     .description = "io_time_share: raised when I/O calls took at least this share of the "
                    "run (the busiest rank's, in an MPI job; above 0, at most 1)"},
    {VIGIL_SETTING(struct vigil_insight_thresholds, io_time_min_s), .type = VIGIL_CONFIG_DOUBLE,
     .min = 0, .max = 1e9, .default_value = "10",
     .description = "io_time_share: and at least this many seconds (above 0)"},
};

/* What a key's range cannot say (a bin edge, a share above 0), as the
 * local protocol checks an INSIGHT message: one rule, vigil_insight_check. */
static gboolean check_thresholds(const void *settings, const char *section,
                                 const vigil_config *config, GError **error)
{
    (void)section;
    char why[256];
    if (vigil_insight_check(settings, why, sizeof why) == NULL)
        return TRUE;
    const char *source = NULL;
    for (size_t i = 0; i < G_N_ELEMENTS(keys); i++) {
        size_t n = strlen(keys[i].name);
        if (strncmp(why, keys[i].name, n) == 0 && why[n] == ':')
            source = vigil_settings_source(config, &vigil_insight_keys, keys[i].offset);
    }
    g_set_error(error, VIGIL_CONFIG_ERROR, VIGIL_CONFIG_ERROR_BAD_VALUE, "%s: [insight] %s",
                source != NULL ? source : "the default", why);
    return FALSE;
}

const struct vigil_settings_table vigil_insight_keys =
    VIGIL_SETTINGS_TABLE("insight", struct vigil_insight_thresholds, keys, check_thresholds);
