/* vigil-web — a run's files, as its processes' reports characterize them:
 *   GET /api/v1/runs/RUN_ID/files[?limit=N]
 * from the warehouse's run_files and run_io_timelines views
 * (warehouse/migrations/0008_file_stats.sql): the busiest files with Darshan's counters,
 * the run's totals over all its files (access sizes, sequential and
 * consecutive counts), and each counted report's read/write timeline. */
#include "api.h"
#include "db_pool.h"
#include "json_rows.h"

#define FILES_DEFAULT 100
#define FILES_MAX     10000
/* A timeline is at most 64 bins: this many processes' is about 1 MB. */
#define TIMELINES_MAX 1024

/* Histograms as JSON arrays (json_rows reads jsonb, not bigint[]). */
static const char files_sql[] =
    "SELECT path, mount, fs_type, reports, calls, read_bytes, written_bytes,"
    "       posix_reads, posix_writes, posix_opens, posix_seeks, posix_stats, posix_fsyncs,"
    "       posix_other, posix_read_bytes, posix_written_bytes, max_read_offset,"
    "       max_written_offset, seq_reads, seq_writes, consec_reads, consec_writes,"
    "       to_jsonb(read_size_hist) AS read_size_hist,"
    "       to_jsonb(write_size_hist) AS write_size_hist, common_sizes, common_strides,"
    "       read_time_s, write_time_s, meta_time_s, first_open_s, last_close_s, first_io_s,"
    "       last_io_s, size_bins_upper_inclusive, posix_rw_switches, posix_fdatasyncs,"
    "       posix_filenos, posix_dups, posix_mode, posix_file_alignment_bytes,"
    "       posix_file_not_aligned, posix_mem_alignment_bytes, posix_mem_not_aligned,"
    "       posix_max_read_time_s, posix_max_read_time_size, posix_max_write_time_s,"
    "       posix_max_write_time_size,"
    "       CASE WHEN mpiio_read_bytes IS NULL THEN NULL ELSE jsonb_build_object("
    "         'indep_reads', mpiio_indep_reads, 'indep_writes', mpiio_indep_writes,"
    "         'coll_reads', mpiio_coll_reads, 'coll_writes', mpiio_coll_writes,"
    "         'split_reads', mpiio_split_reads, 'split_writes', mpiio_split_writes,"
    "         'nb_reads', mpiio_nb_reads, 'nb_writes', mpiio_nb_writes,"
    "         'read_bytes', mpiio_read_bytes, 'written_bytes', mpiio_written_bytes,"
    "         'indep_opens', mpiio_indep_opens, 'coll_opens', mpiio_coll_opens,"
    "         'syncs', mpiio_syncs, 'hints', mpiio_hints, 'views', mpiio_views,"
    "         'rw_switches', mpiio_rw_switches, 'mode', mpiio_mode,"
    "         'read_size_hist', to_jsonb(mpiio_read_size_hist),"
    "         'write_size_hist', to_jsonb(mpiio_write_size_hist),"
    "         'common_sizes', mpiio_common_sizes,"
    "         'max_read_time_s', mpiio_max_read_time_s,"
    "         'max_read_time_size', mpiio_max_read_time_size,"
    "         'max_write_time_s', mpiio_max_write_time_s,"
    "         'max_write_time_size', mpiio_max_write_time_size) END AS mpiio,"
    "       CASE WHEN rank_count IS NULL THEN NULL ELSE jsonb_build_object("
    "         'count', rank_count, 'shared', shared, 'fastest_rank', fastest_rank,"
    "         'fastest_s', fastest_s, 'fastest_bytes', fastest_bytes,"
    "         'slowest_rank', slowest_rank, 'slowest_s', slowest_s,"
    "         'slowest_bytes', slowest_bytes, 'time_variance_s2', time_variance_s2,"
    "         'bytes_variance', bytes_variance, 'most_posix_rank', most_posix_rank,"
    "         'most_posix_bytes', most_posix_bytes, 'least_posix_rank', least_posix_rank,"
    "         'least_posix_bytes', least_posix_bytes) END AS ranks"
    "  FROM run_files WHERE run_id = $1::bigint"
    " ORDER BY read_bytes + written_bytes DESC, calls DESC, path LIMIT $2::integer";

static const char totals_sql[] =
    "SELECT count(*) AS files, sum(calls) AS calls, sum(read_bytes) AS read_bytes,"
    "       sum(written_bytes) AS written_bytes, sum(posix_reads) AS posix_reads,"
    "       sum(posix_writes) AS posix_writes, sum(seq_reads) AS seq_reads,"
    "       sum(seq_writes) AS seq_writes, sum(consec_reads) AS consec_reads,"
    "       sum(consec_writes) AS consec_writes,"
    "       to_jsonb(vigil_int8_array_sum(read_size_hist)) AS read_size_hist,"
    "       to_jsonb(vigil_int8_array_sum(write_size_hist)) AS write_size_hist,"
    "       count(*) FILTER (WHERE posix_reads IS NOT NULL) AS files_characterized,"
    "       bool_and(size_bins_upper_inclusive) AS size_bins_upper_inclusive,"
    "       sum(posix_rw_switches) AS posix_rw_switches,"
    "       sum(posix_file_not_aligned) AS posix_file_not_aligned,"
    "       sum(posix_mem_not_aligned) AS posix_mem_not_aligned,"
    "       coalesce((SELECT files_unlisted FROM run_files_unlisted WHERE run_id = $1::bigint),"
    "                0) AS files_unlisted"
    "  FROM run_files WHERE run_id = $1::bigint";

static const char timelines_sql[] =
    "SELECT process_id, node_id, hostname, pid, rank, start_time, bin_s,"
    "       to_jsonb(read_bytes) AS read_bytes, to_jsonb(written_bytes) AS written_bytes,"
    "       count(*) OVER () AS total"
    "  FROM run_io_timelines WHERE run_id = $1::bigint"
    " ORDER BY rank NULLS LAST, start_time, process_id LIMIT " G_STRINGIFY(TIMELINES_MAX);

gboolean web_api_run_files(struct web_request *req, GError **error)
{
    gint64 run_id = 0, limit = 0;
    if (!web_path_id(req, req->segments[1], "run_id", &run_id, error) ||
        !web_param_int(req, "limit", FILES_DEFAULT, 1, FILES_MAX, &limit, error) ||
        !web_params_done(req, error))
        return FALSE;
    char id[24];
    gboolean mixed = FALSE;
    if (!web_api_run_visible(req, run_id, id, error) || !web_api_run_mixed(req, id, &mixed, error))
        return FALSE;
    /* run_files sums over the run's reports, whoever's: a run that holds
     * another user's process shows its files to admins only. */
    if (mixed) {
        g_set_error(error, WEB_ERROR, WEB_ERROR_FORBIDDEN,
                    "run %s holds processes of other users (stored before vigil kept each "
                    "user's processes in runs of their own): its files are summed over theirs "
                    "too, and only an admin may see them",
                    id);
        return FALSE;
    }
    char limit_text[24];
    g_snprintf(limit_text, sizeof limit_text, "%" G_GINT64_FORMAT, limit);
    const char *params[] = {id, limit_text};
    PGresult *files = web_db_query(req, files_sql, 2, params, error);
    PGresult *totals = files != NULL ? web_db_query(req, totals_sql, 1, params, error) : NULL;
    PGresult *timelines =
        totals != NULL ? web_db_query(req, timelines_sql, 1, params, error) : NULL;
    gboolean ok = timelines != NULL;
    if (ok) {
        JsonObject *out = json_object_new();
        JsonObject *sums = web_json_row(totals, 0);
        gint64 total = json_object_get_int_member(sums, "files");
        json_object_set_int_member(out, "files_total", total);
        json_object_set_int_member(out, "limit", limit);
        json_object_set_array_member(out, "files", web_json_rows(files));
        json_object_set_object_member(out, "totals", sums);
        JsonArray *lines = web_json_rows(timelines);
        gint64 lines_total =
            PQntuples(timelines) > 0 ? g_ascii_strtoll(PQgetvalue(timelines, 0, 9), NULL, 10) : 0;
        for (guint i = 0; i < json_array_get_length(lines); i++)
            json_object_remove_member(json_array_get_object_element(lines, i), "total");
        json_object_set_int_member(out, "timelines_total", lines_total);
        json_object_set_array_member(out, "timelines", lines);
        web_answer_object(req, out);
    }
    if (files != NULL)
        PQclear(files);
    if (totals != NULL)
        PQclear(totals);
    if (timelines != NULL)
        PQclear(timelines);
    return ok;
}
