/* vigil — the report's files: the compact table of the busiest in the text,
 * every file with its Darshan-style counters in the JSON, and the
 * timeline of bytes over the run (vigil/report.h).
 *
 * A report stored by an older vigil has no counters (has_layers false) and
 * no timeline (bin_s 0): both forms then print exactly what that vigil
 * printed, so that `vigil report` still shows it as the console did. */
#include <stddef.h>
#include <stdio.h>

#include "report_layer_fields.h"
#include "report_put.h"

#define put_text   vigil_report_put_text
#define put_printf vigil_report_put_printf

static double rounded(double value)
{
    return vigil_report_round(value, VIGIL_REPORT_FIGURE_DECIMALS);
}

/* ---- text ---------------------------------------------------------------------------------- */

/* "100" (sequential share, %), or "-" without reads and writes. */
static void sequential_share(char *out, size_t size, const struct vigil_report_file *f)
{
    uint64_t accesses = f->posix.reads + f->posix.writes + f->stdio.reads + f->stdio.writes;
    uint64_t sequential =
        f->posix.seq_reads + f->posix.seq_writes + f->stdio.seq_reads + f->stdio.seq_writes;
    if (accesses == 0)
        snprintf(out, size, "-");
    else
        snprintf(out, size, "%llu", (unsigned long long)(sequential * 100 / accesses));
}

/* The most common access size of the POSIX layer, else of stdio; "-". */
static void common_size(char *out, size_t size, const struct vigil_report_file *f)
{
    const struct vigil_report_file_layer *l =
        f->posix.common_size_count > 0 ? &f->posix : &f->stdio;
    if (l->common_size_count == 0)
        snprintf(out, size, "-");
    else
        snprintf(out, size, "%lld", (long long)l->common_sizes[0].value);
}

void vigil_report_text_files(struct vigil_report_sink *s, const struct vigil_report *r)
{
    if (r->file_count == 0)
        return;
    bool layers = r->files[0].has_layers;
    put_printf(s, "\n%-44s %10s %16s %16s", "top files", "calls", "read_bytes", "written_bytes");
    put_text(s, layers ? "  seq_%  common_size\n" : "\n");
    int shown = r->file_count < VIGIL_REPORT_TOP_FILES ? r->file_count : VIGIL_REPORT_TOP_FILES;
    for (int i = 0; i < shown; i++) {
        const struct vigil_report_file *f = &r->files[i];
        vigil_report_put_cell_bytes(s, f->path, f->path_bytes, 44);
        put_printf(s, " %10llu %16llu %16llu", (unsigned long long)f->calls,
                   (unsigned long long)f->read_bytes, (unsigned long long)f->written_bytes);
        if (f->has_layers) {
            char share[24], size[24];
            sequential_share(share, sizeof share, f);
            common_size(size, sizeof size, f);
            put_printf(s, " %6s %12s", share, size);
        }
        put_text(s, "\n");
    }
    uint64_t total =
        r->files_total > (uint64_t)r->file_count ? r->files_total : (uint64_t)r->file_count;
    if (total > (uint64_t)shown)
        put_printf(s, "(%llu more file%s in the JSON report)\n",
                   (unsigned long long)(total - (uint64_t)shown), total - shown == 1 ? "" : "s");
    if (r->files_untracked > 0)
        put_printf(s,
                   "(and %llu time%s a path found the file table full: those calls are in the "
                   "totals, under no file)\n",
                   (unsigned long long)r->files_untracked, r->files_untracked == 1 ? "" : "s");
}

/* ---- JSON ---------------------------------------------------------------------------------- */

/* A row of the table below: a figure, or a layer's most common values. */
#define LAYER(kind_, name_)                                                                        \
    .kind = VIGIL_REPORT_LAYER_##kind_, .name = #name_,                                            \
    .offset = offsetof(struct vigil_report_file_layer, name_)
#define COMMON(name_, count_, value_name_)                                                         \
    LAYER(COMMON, name_), .count_offset = offsetof(struct vigil_report_file_layer, count_),        \
                          .value_name = value_name_

const struct vigil_report_layer_field vigil_report_layer_fields[] = {
    {LAYER(COUNT, reads)},
    {LAYER(COUNT, writes)},
    {LAYER(COUNT, opens)},
    {LAYER(COUNT, seeks)},
    {LAYER(COUNT, stats)},
    {LAYER(COUNT, fsyncs)},
    {LAYER(COUNT, other)},
    {LAYER(COUNT, read_bytes)},
    {LAYER(COUNT, written_bytes)},
    {LAYER(OFFSET, max_read_offset)},
    {LAYER(OFFSET, max_written_offset)},
    {LAYER(COUNT, seq_reads)},
    {LAYER(COUNT, seq_writes)},
    {LAYER(COUNT, consec_reads)},
    {LAYER(COUNT, consec_writes)},
    {LAYER(SIZE_HIST, read_size_hist)},
    {LAYER(SIZE_HIST, write_size_hist)},
    {COMMON(common_sizes, common_size_count, "size")},
    {COMMON(common_strides, common_stride_count, "stride")},
    {LAYER(SECONDS, read_time_s)},
    {LAYER(SECONDS, write_time_s)},
    {LAYER(SECONDS, meta_time_s)},
    {LAYER(SECONDS, first_open_s)},
    {LAYER(SECONDS, last_close_s)},
    {LAYER(SECONDS, first_io_s)},
    {LAYER(SECONDS, last_io_s)},
    /* Issue 33's (Darshan's names in docs/darshan-counters.md). */
    {LAYER(COUNT, rw_switches), .added = true},
    {LAYER(COUNT, fdatasyncs), .added = true},
    {LAYER(COUNT, filenos), .added = true},
    {LAYER(COUNT, dups), .added = true},
    {LAYER(INTEGER, mode), .added = true},
    {LAYER(COUNT, file_alignment_bytes), .added = true},
    {LAYER(COUNT, file_not_aligned), .added = true},
    {LAYER(COUNT, mem_alignment_bytes), .added = true},
    {LAYER(COUNT, mem_not_aligned), .added = true},
    {LAYER(SECONDS, max_read_time_s), .added = true},
    {LAYER(COUNT, max_read_time_size), .added = true},
    {LAYER(SECONDS, max_write_time_s), .added = true},
    {LAYER(COUNT, max_write_time_size), .added = true},
};
const size_t vigil_report_layer_field_count =
    sizeof vigil_report_layer_fields / sizeof vigil_report_layer_fields[0];

static void json_u64(struct vigil_report_sink *s, const char *name, uint64_t value)
{
    put_printf(s, ",\"%s\":%llu", name, (unsigned long long)value);
}

static void json_layer_field(struct vigil_report_sink *s, const struct vigil_report_file_layer *l,
                             const struct vigil_report_layer_field *field)
{
    const void *at = (const char *)l + field->offset;
    switch (field->kind) {
    case VIGIL_REPORT_LAYER_COUNT:
        put_printf(s, "%llu", (unsigned long long)*(const uint64_t *)at);
        break;
    case VIGIL_REPORT_LAYER_OFFSET:
    case VIGIL_REPORT_LAYER_INTEGER:
        put_printf(s, "%lld", (long long)*(const int64_t *)at);
        break;
    case VIGIL_REPORT_LAYER_SIZE_HIST:
        put_text(s, "[");
        for (int i = 0; i < VIGIL_REPORT_SIZE_BINS; i++)
            put_printf(s, "%s%llu", i ? "," : "", (unsigned long long)((const uint64_t *)at)[i]);
        put_text(s, "]");
        break;
    case VIGIL_REPORT_LAYER_COMMON: {
        const struct vigil_report_common *common = (const struct vigil_report_common *)at;
        int count = *(const int *)((const char *)l + field->count_offset);
        put_text(s, "[");
        for (int i = 0; i < count; i++)
            put_printf(s, "%s{\"%s\":%lld,\"count\":%llu,\"exact\":%s}", i ? "," : "",
                       field->value_name, (long long)common[i].value,
                       (unsigned long long)common[i].count, common[i].exact ? "true" : "false");
        put_text(s, "]");
        break;
    }
    case VIGIL_REPORT_LAYER_SECONDS:
        put_printf(s, "%.6f", rounded(*(const double *)at));
        break;
    }
}

static void json_layer(struct vigil_report_sink *s, const struct vigil_report_file_layer *l)
{
    for (size_t i = 0; i < vigil_report_layer_field_count; i++) {
        put_printf(s, "%s\"%s\":", i == 0 ? "{" : ",", vigil_report_layer_fields[i].name);
        json_layer_field(s, l, &vigil_report_layer_fields[i]);
    }
    put_text(s, "}");
}

static void json_file(struct vigil_report_sink *s, const struct vigil_report_file *f)
{
    put_text(s, "{\"path\":");
    vigil_report_put_json_bytes(s, f->path, f->path_bytes);
    if (!f->has_layers) { /* as an older vigil wrote it */
        put_printf(s, ",\"calls\":%llu,\"bytes_read\":%llu,\"bytes_written\":%llu}",
                   (unsigned long long)f->calls, (unsigned long long)f->read_bytes,
                   (unsigned long long)f->written_bytes);
        return;
    }
    put_text(s, ",\"mount\":");
    vigil_report_put_json_string(s, f->mount);
    put_text(s, ",\"fs_type\":");
    vigil_report_put_json_string(s, f->fs_type);
    json_u64(s, "calls", f->calls);
    json_u64(s, "read_bytes", f->read_bytes);
    json_u64(s, "written_bytes", f->written_bytes);
    /* The names the first version gave them, for the readers that know
     * only those (the web's run page). */
    json_u64(s, "bytes_read", f->read_bytes);
    json_u64(s, "bytes_written", f->written_bytes);
    put_text(s, ",\"posix\":");
    json_layer(s, &f->posix);
    put_text(s, ",\"stdio\":");
    if (f->has_stdio)
        json_layer(s, &f->stdio);
    else
        put_text(s, "null");
    vigil_report_json_file_mpi(s, f); /* "mpiio" and "ranks" */
    put_text(s, "}");
}

void vigil_report_json_files(struct vigil_report_sink *s, const struct vigil_report *r)
{
    put_text(s, ",\"files\":[");
    for (int i = 0; i < r->file_count; i++) {
        if (i > 0)
            put_text(s, ",");
        json_file(s, &r->files[i]);
    }
    put_text(s, "]");
}

void vigil_report_json_timeline(struct vigil_report_sink *s, const struct vigil_report *r)
{
    const struct vigil_report_timeline *t = &r->timeline;
    if (t->bin_s <= 0)
        return; /* a report from an older vigil */
    uint64_t total =
        r->files_total > (uint64_t)r->file_count ? r->files_total : (uint64_t)r->file_count;
    put_printf(s, ",\"files_total\":%llu", (unsigned long long)total);
    if (r->files_untracked > 0)
        put_printf(s, ",\"files_untracked\":%llu", (unsigned long long)r->files_untracked);
    put_printf(s, ",\"timeline\":{\"bin_s\":%.6f,\"read_bytes\":[", rounded(t->bin_s));
    for (int i = 0; i < t->bins; i++)
        put_printf(s, "%s%llu", i ? "," : "", (unsigned long long)t->read_bytes[i]);
    put_text(s, "],\"written_bytes\":[");
    for (int i = 0; i < t->bins; i++)
        put_printf(s, "%s%llu", i ? "," : "", (unsigned long long)t->written_bytes[i]);
    put_text(s, "]}");
}
