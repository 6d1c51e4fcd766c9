/* vigil — the findings' thresholds: their defaults and their check
 * (vigil/insight.h), in record/ because both ends of the local protocol
 * check an INSIGHT message with them (record/local_protocol.c), and the
 * [insight] section's table (core/insight_keys.c) checks a file with them.
 * GLib-free. */
#include <stdio.h>

#include "vigil/insight.h"

/* Darshan's size-bin upper edges (report.h's VIGIL_REPORT_SIZE_BINS). */
static const uint64_t bin_edges[VIGIL_REPORT_SIZE_BINS - 1] = {
    100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600, 1073741824,
};

void vigil_insight_defaults(struct vigil_insight_thresholds *t)
{
    /* Quiet on a healthy run: each needs a clear majority of bad calls,
     * and enough of them to matter. */
    *t = (struct vigil_insight_thresholds){
        .min_accesses = 1000,
        .small_access_bytes = 1024,
        .small_access_share = 0.5,
        .misaligned_share = 0.5,
        .sequential_share = 0.7,
        .metadata_min_calls = 1000,
        .metadata_share = 0.5,
        .small_file_bytes = 1048576,
        .small_files_min = 1000,
        .imbalance_ratio = 2.0,
        .imbalance_min_bytes = 268435456,
        .imbalance_min_io_s = 10.0,
        .collective_below_bytes = 1048576,
        .stdio_flush_share = 0.5,
        .repeated_opens = 100,
        .fsync_min_calls = 100,
        .fsync_per_write = 0.5,
        .io_time_share = 0.5,
        .io_time_min_s = 10.0,
    };
}

static bool is_share(double v)
{
    return v > 0 && v <= 1;
}

const char *vigil_insight_check(const struct vigil_insight_thresholds *t, char *why, size_t size)
{
    bool edge = false;
    for (int i = 0; i < VIGIL_REPORT_SIZE_BINS - 1; i++)
        edge = edge || t->small_access_bytes == bin_edges[i];
    const struct {
        bool ok;
        const char *key;
        double value;
        const char *expected;
    } rules[] = {
        {t->min_accesses >= 1, "min_accesses", (double)t->min_accesses, "at least 1"},
        {edge, "small_access_bytes", (double)t->small_access_bytes,
         "one of Darshan's size-bin edges (100, 1024, 10240, 102400, 1048576, 4194304, "
         "10485760, 104857600, 1073741824)"},
        {is_share(t->small_access_share), "small_access_share", t->small_access_share,
         "a share above 0 and at most 1"},
        {is_share(t->misaligned_share), "misaligned_share", t->misaligned_share,
         "a share above 0 and at most 1"},
        {is_share(t->sequential_share), "sequential_share", t->sequential_share,
         "a share above 0 and at most 1"},
        {t->metadata_min_calls >= 1, "metadata_min_calls", (double)t->metadata_min_calls,
         "at least 1"},
        {is_share(t->metadata_share), "metadata_share", t->metadata_share,
         "a share above 0 and at most 1"},
        {t->small_file_bytes >= 1, "small_file_bytes", (double)t->small_file_bytes, "at least 1"},
        {t->small_files_min >= 1, "small_files_min", (double)t->small_files_min, "at least 1"},
        {t->imbalance_ratio > 1, "imbalance_ratio", t->imbalance_ratio, "a ratio above 1"},
        {t->imbalance_min_bytes >= 1, "imbalance_min_bytes", (double)t->imbalance_min_bytes,
         "at least 1"},
        {t->imbalance_min_io_s > 0, "imbalance_min_io_s", t->imbalance_min_io_s, "above 0"},
        {t->collective_below_bytes >= 1, "collective_below_bytes",
         (double)t->collective_below_bytes, "at least 1"},
        {is_share(t->stdio_flush_share), "stdio_flush_share", t->stdio_flush_share,
         "a share above 0 and at most 1"},
        {t->repeated_opens >= 2, "repeated_opens", (double)t->repeated_opens, "at least 2"},
        {t->fsync_min_calls >= 1, "fsync_min_calls", (double)t->fsync_min_calls, "at least 1"},
        {is_share(t->fsync_per_write), "fsync_per_write", t->fsync_per_write,
         "a share above 0 and at most 1"},
        {is_share(t->io_time_share), "io_time_share", t->io_time_share,
         "a share above 0 and at most 1"},
        {t->io_time_min_s > 0, "io_time_min_s", t->io_time_min_s, "above 0"},
    };
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        /* NaN fails every comparison above, so it is refused too. */
        if (rules[i].ok)
            continue;
        snprintf(why, size, "%s: %g is not %s", rules[i].key, rules[i].value, rules[i].expected);
        return why;
    }
    return NULL;
}
