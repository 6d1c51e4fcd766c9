/* vigil — the MPI parts of a report's files: what MPI-IO did to each file
 * and, in an MPI job's report, how its ranks shared it. The rest of a
 * file's figures are report_text.c's.
 *
 * Times have the 6 decimals of every figure; variances are rounded to 7
 * significant digits (a variance of times in s² is often far below 1e-6)
 * and written as %.6e in both forms, so that a stored report reads back
 * exactly as printed. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "report_put.h"

#define TIME_DECIMALS VIGIL_REPORT_FIGURE_DECIMALS
#define PATH_WIDTH    36
#define ROWS_SHOWN    VIGIL_REPORT_TOP_FILES

static double seconds(double value)
{
    return vigil_report_round(value, TIME_DECIMALS);
}

/* `value` to 7 significant digits, as %.6e prints it. */
static double significant(double value)
{
    if (!isfinite(value))
        return 0;
    char text[64];
    snprintf(text, sizeof text, "%.6e", value);
    return strtod(text, NULL);
}

static unsigned long long u(uint64_t value)
{
    return (unsigned long long)value;
}

static void json_hist(struct vigil_report_sink *s, const char *name, const uint64_t *hist)
{
    vigil_report_put_printf(s, ",\"%s\":[", name);
    for (int i = 0; i < VIGIL_REPORT_SIZE_BINS; i++)
        vigil_report_put_printf(s, "%s%llu", i ? "," : "", u(hist[i]));
    vigil_report_put_text(s, "]");
}

static void json_mpiio(struct vigil_report_sink *s, const struct vigil_report_file_mpiio *m)
{
    vigil_report_put_printf(
        s,
        ",\"mpiio\":{\"indep_reads\":%llu,\"indep_writes\":%llu,\"coll_reads\":%llu,"
        "\"coll_writes\":%llu,\"split_reads\":%llu,\"split_writes\":%llu,\"nb_reads\":%llu,"
        "\"nb_writes\":%llu,\"read_bytes\":%llu,\"written_bytes\":%llu,",
        u(m->indep_reads), u(m->indep_writes), u(m->coll_reads), u(m->coll_writes),
        u(m->split_reads), u(m->split_writes), u(m->nb_reads), u(m->nb_writes), u(m->read_bytes),
        u(m->written_bytes));
    vigil_report_put_printf(s, "\"read_time_s\":%.6f,\"write_time_s\":%.6f,\"meta_time_s\":%.6f",
                            seconds(m->read_time_s), seconds(m->write_time_s),
                            seconds(m->meta_time_s));
    vigil_report_put_printf(s,
                            ",\"indep_opens\":%llu,\"coll_opens\":%llu,\"syncs\":%llu,"
                            "\"hints\":%llu,\"views\":%llu,\"rw_switches\":%llu,\"mode\":%lld",
                            u(m->indep_opens), u(m->coll_opens), u(m->syncs), u(m->hints),
                            u(m->views), u(m->rw_switches), (long long)m->mode);
    json_hist(s, "read_size_hist", m->read_size_hist);
    json_hist(s, "write_size_hist", m->write_size_hist);
    vigil_report_put_text(s, ",\"common_sizes\":[");
    for (int i = 0; i < m->common_size_count && i < VIGIL_REPORT_COMMON; i++)
        vigil_report_put_printf(s, "%s{\"size\":%lld,\"count\":%llu,\"exact\":%s}", i ? "," : "",
                                (long long)m->common_sizes[i].value, u(m->common_sizes[i].count),
                                m->common_sizes[i].exact ? "true" : "false");
    vigil_report_put_printf(s,
                            "],\"max_read_time_s\":%.6f,\"max_read_time_size\":%llu,"
                            "\"max_write_time_s\":%.6f,\"max_write_time_size\":%llu}",
                            seconds(m->max_read_time_s), u(m->max_read_time_size),
                            seconds(m->max_write_time_s), u(m->max_write_time_size));
}

void vigil_report_json_file_mpi(struct vigil_report_sink *s, const struct vigil_report_file *f)
{
    if (f->has_mpiio)
        json_mpiio(s, &f->mpiio);
    else
        vigil_report_put_text(s, ",\"mpiio\":null");
    if (f->has_ranks) {
        const struct vigil_report_file_ranks *k = &f->ranks;
        vigil_report_put_printf(
            s,
            ",\"ranks\":{\"count\":%d,\"shared\":%s,\"fastest_rank\":%d,\"fastest_s\":%.6f,"
            "\"fastest_bytes\":%llu,\"slowest_rank\":%d,\"slowest_s\":%.6f,"
            "\"slowest_bytes\":%llu,\"time_variance_s2\":%.6e,\"bytes_variance\":%.6e",
            (int)k->count, k->shared ? "true" : "false", (int)k->fastest_rank,
            seconds(k->fastest_s), u(k->fastest_bytes), (int)k->slowest_rank, seconds(k->slowest_s),
            u(k->slowest_bytes), significant(k->time_variance_s2), significant(k->bytes_variance));
        if (k->most_posix_rank >= 0 && k->least_posix_rank >= 0)
            vigil_report_put_printf(s,
                                    ",\"most_posix_rank\":%d,\"most_posix_bytes\":%llu,"
                                    "\"least_posix_rank\":%d,\"least_posix_bytes\":%llu",
                                    (int)k->most_posix_rank, u(k->most_posix_bytes),
                                    (int)k->least_posix_rank, u(k->least_posix_bytes));
        vigil_report_put_text(s, "}");
    } else {
        vigil_report_put_text(s, ",\"ranks\":null");
    }
}

/* "reads/writes" of one kind, right-aligned in `width`. */
static void put_pair(struct vigil_report_sink *s, uint64_t reads, uint64_t writes, int width)
{
    char text[48];
    snprintf(text, sizeof text, "%llu/%llu", u(reads), u(writes));
    vigil_report_put_printf(s, " %*s", width, text);
}

/* "rank: bytes" of the rank that moved the most through POSIX, or "-". */
static void put_most_posix(struct vigil_report_sink *s, const struct vigil_report_file *f)
{
    char text[48] = "-";
    if (f->has_ranks && f->ranks.most_posix_rank >= 0)
        snprintf(text, sizeof text, "%d: %llu", (int)f->ranks.most_posix_rank,
                 u(f->ranks.most_posix_bytes));
    vigil_report_put_printf(s, " %25s", text);
}

/* "0.001234 s 1048576 B": a slowest call, or "-" when there was none. */
static void put_slowest(struct vigil_report_sink *s, double time_s, uint64_t bytes, int width)
{
    char text[64] = "-";
    if (time_s > 0 || bytes > 0)
        snprintf(text, sizeof text, "%.6f s %llu B", seconds(time_s), u(bytes));
    vigil_report_put_printf(s, " %*s", width, text);
}

/* A file with an MPI-IO record: MPI_File_open opened it (a report of a
 * vigil before the record has none). */
static bool has_record(const struct vigil_report_file *f)
{
    return f->has_mpiio && f->mpiio.indep_opens + f->mpiio.coll_opens > 0;
}

/* What else the program asked of MPI-IO on each file, in a few columns
 * (the rest of the record, hints, views, mode and histograms, is the
 * JSON's). */
static void text_mpiio_record(struct vigil_report_sink *s, const struct vigil_report *r)
{
    int with = 0;
    for (int i = 0; i < r->file_count; i++)
        with += has_record(&r->files[i]);
    if (with == 0)
        return;
    vigil_report_put_printf(s, "\n%-*s %11s %6s %11s %11s %26s %26s\n", PATH_WIDTH,
                            "MPI-IO files (record)", "opens i/c", "syncs", "rw_switches",
                            "common_size", "slowest read (s B)", "slowest write (s B)");
    int shown = 0;
    for (int i = 0; i < r->file_count && shown < ROWS_SHOWN; i++) {
        const struct vigil_report_file *f = &r->files[i];
        if (!has_record(f))
            continue;
        const struct vigil_report_file_mpiio *m = &f->mpiio;
        vigil_report_put_cell_bytes(s, f->path, f->path_bytes, PATH_WIDTH);
        put_pair(s, m->indep_opens, m->coll_opens, 11);
        vigil_report_put_printf(s, " %6llu %11llu", u(m->syncs), u(m->rw_switches));
        char size[32] = "-";
        if (m->common_size_count > 0)
            snprintf(size, sizeof size, "%lld", (long long)m->common_sizes[0].value);
        vigil_report_put_printf(s, " %11s", size);
        put_slowest(s, m->max_read_time_s, m->max_read_time_size, 26);
        put_slowest(s, m->max_write_time_s, m->max_write_time_size, 26);
        vigil_report_put_text(s, "\n");
        shown++;
    }
}

/* Both levels of each file MPI-IO used: its calls by kind, the bytes MPI-IO
 * moved and those POSIX moved under it (and, in a job's report, the rank
 * that moved the most through POSIX). */
static void text_mpiio(struct vigil_report_sink *s, const struct vigil_report *r)
{
    int with = 0;
    for (int i = 0; i < r->file_count; i++)
        with += r->files[i].has_mpiio;
    if (with == 0)
        return;
    vigil_report_put_printf(s, "\n%-*s %11s %11s %11s %11s %13s %13s %13s %13s", PATH_WIDTH,
                            "MPI-IO files (reads/writes)", "independent", "collective", "split",
                            "nonblocking", "mpiio_read", "mpiio_written", "posix_read",
                            "posix_written");
    vigil_report_put_text(s, r->ranks > 0 ? "  most_posix (rank: bytes)\n" : "\n");
    int shown = 0;
    for (int i = 0; i < r->file_count && shown < ROWS_SHOWN; i++) {
        const struct vigil_report_file *f = &r->files[i];
        if (!f->has_mpiio)
            continue;
        const struct vigil_report_file_mpiio *m = &f->mpiio;
        vigil_report_put_cell_bytes(s, f->path, f->path_bytes, PATH_WIDTH);
        put_pair(s, m->indep_reads, m->indep_writes, 11);
        put_pair(s, m->coll_reads, m->coll_writes, 11);
        put_pair(s, m->split_reads, m->split_writes, 11);
        put_pair(s, m->nb_reads, m->nb_writes, 11);
        vigil_report_put_printf(s, " %13llu %13llu", u(m->read_bytes), u(m->written_bytes));
        if (f->has_layers)
            vigil_report_put_printf(s, " %13llu %13llu", u(f->posix.read_bytes),
                                    u(f->posix.written_bytes));
        else
            vigil_report_put_printf(s, " %13s %13s", "-", "-");
        if (r->ranks > 0)
            put_most_posix(s, f);
        vigil_report_put_text(s, "\n");
        shown++;
    }
    if (with > shown)
        vigil_report_put_printf(s, "(%d more MPI-IO files in the JSON report)\n", with - shown);
    text_mpiio_record(s, r);
}

/* "rank 3: 0.001234 s, 1048576 B" in `width`. */
static void put_rank(struct vigil_report_sink *s, int32_t rank, double time_s, uint64_t bytes,
                     int width)
{
    char text[96];
    snprintf(text, sizeof text, "%d: %.6f s %llu B", (int)rank, seconds(time_s), u(bytes));
    vigil_report_put_printf(s, " %*s", width, text);
}

/* A file several ranks used and that moved bytes: the shared table's rows
 * (the configuration files every rank stats are not worth a line). */
static bool shared_io(const struct vigil_report_file *f)
{
    return f->has_ranks && f->ranks.shared && f->read_bytes + f->written_bytes > 0;
}

static void text_ranks(struct vigil_report_sink *s, const struct vigil_report *r)
{
    int shared = 0;
    for (int i = 0; i < r->file_count; i++)
        shared += shared_io(&r->files[i]);
    if (shared == 0)
        return;
    vigil_report_put_printf(s, "\n%-*s %5s %30s %30s %13s %13s\n", PATH_WIDTH,
                            "shared files (by rank)", "ranks", "fastest rank: time bytes",
                            "slowest rank: time bytes", "time_var_s2", "bytes_var");
    int shown = 0;
    for (int i = 0; i < r->file_count && shown < ROWS_SHOWN; i++) {
        const struct vigil_report_file *f = &r->files[i];
        if (!shared_io(f))
            continue;
        const struct vigil_report_file_ranks *k = &f->ranks;
        vigil_report_put_cell_bytes(s, f->path, f->path_bytes, PATH_WIDTH);
        vigil_report_put_printf(s, " %5d", (int)k->count);
        put_rank(s, k->fastest_rank, k->fastest_s, k->fastest_bytes, 30);
        put_rank(s, k->slowest_rank, k->slowest_s, k->slowest_bytes, 30);
        vigil_report_put_printf(s, " %13.6e %13.6e\n", significant(k->time_variance_s2),
                                significant(k->bytes_variance));
        shown++;
    }
    if (shared > shown)
        vigil_report_put_printf(s, "(%d more shared files with I/O in the JSON report)\n",
                                shared - shown);
}

void vigil_report_text_files_mpi(struct vigil_report_sink *s, const struct vigil_report *r)
{
    text_mpiio(s, r);
    text_ranks(s, r);
}
