/* vigil — the MPI parts of a report's files read back from its JSON: each
 * file's "mpiio" and "ranks" members (report/report_files_mpi.c writes them),
 * null or absent when the file has none (reports of an earlier vigil have
 * neither). As strict as the rest of report_json.c: a member missing or of
 * the wrong type is named (report_json_reader.h). An "mpiio" written before
 * the record of issue 33 (opens, hints, views… the slowest calls) has none
 * of its members: they are 0, the mode -1; one that has "indep_opens" has
 * them all. */
#include "report_json_reader.h"

/* The per-file record's members (Darshan's MPIIO_INDEP_OPENS… ). */
static void read_record(struct report_reader *rd, JsonObject *m, const char *at,
                        struct vigil_report_file_mpiio *out)
{
    out->mode = -1;
    if (!json_object_has_member(m, "indep_opens"))
        return;
    out->indep_opens = report_count_member(rd, m, at, "indep_opens");
    out->coll_opens = report_count_member(rd, m, at, "coll_opens");
    out->syncs = report_count_member(rd, m, at, "syncs");
    out->hints = report_count_member(rd, m, at, "hints");
    out->views = report_count_member(rd, m, at, "views");
    out->rw_switches = report_count_member(rd, m, at, "rw_switches");
    out->mode = report_i64_member(rd, m, at, "mode");
    if (!rd->failed && (out->mode < -1 || out->mode > INT32_MAX)) {
        char *path = report_path(at, "mode");
        report_fail(rd, path, "expected an MPI-IO amode, or -1 (not known)");
        g_free(path);
    }
    report_counts_member(rd, m, at, "read_size_hist", out->read_size_hist, VIGIL_REPORT_SIZE_BINS);
    report_counts_member(rd, m, at, "write_size_hist", out->write_size_hist,
                         VIGIL_REPORT_SIZE_BINS);
    out->common_size_count =
        report_read_common(rd, m, at, "common_sizes", "size", out->common_sizes);
    out->max_read_time_s = report_amount_member(rd, m, at, "max_read_time_s");
    out->max_read_time_size = report_count_member(rd, m, at, "max_read_time_size");
    out->max_write_time_s = report_amount_member(rd, m, at, "max_write_time_s");
    out->max_write_time_size = report_count_member(rd, m, at, "max_write_time_size");
}

static void read_mpiio(struct report_reader *rd, JsonObject *m, const char *where,
                       struct vigil_report_file_mpiio *out)
{
    char *at = g_strdup_printf("%s.mpiio", where);
    *out = (struct vigil_report_file_mpiio){
        .indep_reads = report_count_member(rd, m, at, "indep_reads"),
        .indep_writes = report_count_member(rd, m, at, "indep_writes"),
        .coll_reads = report_count_member(rd, m, at, "coll_reads"),
        .coll_writes = report_count_member(rd, m, at, "coll_writes"),
        .split_reads = report_count_member(rd, m, at, "split_reads"),
        .split_writes = report_count_member(rd, m, at, "split_writes"),
        .nb_reads = report_count_member(rd, m, at, "nb_reads"),
        .nb_writes = report_count_member(rd, m, at, "nb_writes"),
        .read_bytes = report_count_member(rd, m, at, "read_bytes"),
        .written_bytes = report_count_member(rd, m, at, "written_bytes"),
        .read_time_s = report_amount_member(rd, m, at, "read_time_s"),
        .write_time_s = report_amount_member(rd, m, at, "write_time_s"),
        .meta_time_s = report_amount_member(rd, m, at, "meta_time_s"),
    };
    read_record(rd, m, at, out);
    g_free(at);
}

static void read_ranks(struct report_reader *rd, JsonObject *k, const char *where,
                       struct vigil_report_file_ranks *out)
{
    char *at = g_strdup_printf("%s.ranks", where);
    gboolean shared = report_bool_member(rd, k, at, "shared");
    *out = (struct vigil_report_file_ranks){
        .count = report_rank_member(rd, k, at, "count"),
        .shared = shared && !rd->failed,
        .fastest_rank = report_rank_member(rd, k, at, "fastest_rank"),
        .fastest_s = report_amount_member(rd, k, at, "fastest_s"),
        .fastest_bytes = report_count_member(rd, k, at, "fastest_bytes"),
        .slowest_rank = report_rank_member(rd, k, at, "slowest_rank"),
        .slowest_s = report_amount_member(rd, k, at, "slowest_s"),
        .slowest_bytes = report_count_member(rd, k, at, "slowest_bytes"),
        .time_variance_s2 = report_amount_member(rd, k, at, "time_variance_s2"),
        .bytes_variance = report_amount_member(rd, k, at, "bytes_variance"),
    };
    /* Added after the first of these reports: absent, they are unknown. */
    out->most_posix_rank = out->least_posix_rank = -1;
    if (json_object_has_member(k, "most_posix_rank")) {
        out->most_posix_rank = report_rank_member(rd, k, at, "most_posix_rank");
        out->most_posix_bytes = report_count_member(rd, k, at, "most_posix_bytes");
        out->least_posix_rank = report_rank_member(rd, k, at, "least_posix_rank");
        out->least_posix_bytes = report_count_member(rd, k, at, "least_posix_bytes");
    }
    if (!rd->failed && out->shared != (out->count > 1)) {
        char *path = report_path(at, "shared");
        report_fail(rd, path, "%s for %d ranks", out->shared ? "true" : "false", (int)out->count);
        g_free(path);
    }
    g_free(at);
}

/* Either is absent in a report of an earlier vigil, null when the file has
 * none. */
static JsonObject *optional_object(struct report_reader *rd, JsonObject *file, const char *where,
                                   const char *name)
{
    return json_object_has_member(file, name) ? report_object_or_null(rd, file, where, name) : NULL;
}

void report_read_file_mpi(struct report_reader *rd, JsonObject *file, const char *where,
                          struct vigil_report_file *f)
{
    JsonObject *m = optional_object(rd, file, where, "mpiio");
    f->has_mpiio = m != NULL;
    if (m != NULL)
        read_mpiio(rd, m, where, &f->mpiio);
    JsonObject *k = optional_object(rd, file, where, "ranks");
    f->has_ranks = k != NULL;
    if (k != NULL && !rd->failed)
        read_ranks(rd, k, where, &f->ranks);
}
