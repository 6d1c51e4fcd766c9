/* What the per-file characterization costs the warehouse: vigil-txd's
 * txd_store_file_stats (json-glib parse, checks, binary COPY) for one
 * report listing N files, in a transaction rolled back each time, then the
 * web API's query of run_files for that run.
 *
 *   bench-file-stats-store CONNINFO [FILES [REPEATS]]
 *
 * CONNINFO names a database migrated to the latest schema (tools/pg-private
 * and `vigil db migrate`); the bench's rows are rolled back. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "txd.h"
#include "vigil/clock.h"

static void must(PGconn *db, const char *sql)
{
    PGresult *r = PQexec(db, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
        fprintf(stderr, "%s: %s", sql, PQerrorMessage(db));
        exit(1);
    }
    PQclear(r);
}

/* A report as the preload library writes it (report/report_files.c's
 * members), `files` files of which file i did i + 1 writes. */
static char *report_of(guint files)
{
    GString *s = g_string_new("{\"vigil_report\":1,\"files\":[");
    for (guint i = 0; i < files; i++)
        g_string_append_printf(
            s,
            "%s{\"path\":\"/scratch/bench/dir%u/file%u.dat\",\"mount\":\"/scratch\","
            "\"fs_type\":\"lustre\",\"calls\":%u,\"read_bytes\":0,\"written_bytes\":%u,"
            "\"posix\":{\"reads\":0,\"writes\":%u,\"opens\":1,\"seeks\":0,\"stats\":1,\"fsyncs\":0,"
            "\"other\":0,\"read_bytes\":0,\"written_bytes\":%u,\"max_read_offset\":-1,"
            "\"max_written_offset\":%u,\"seq_reads\":0,\"seq_writes\":%u,\"consec_reads\":0,"
            "\"consec_writes\":%u,\"read_size_hist\":[0,0,0,0,0,0,0,0,0,0],"
            "\"write_size_hist\":[0,0,%u,0,0,0,0,0,0,0],\"common_sizes\":[{\"size\":4096,"
            "\"count\":%u}],\"common_strides\":[{\"stride\":0,\"count\":%u}],\"read_time_s\":0."
            "000000,\"write_time_s\":0.000120,\"meta_time_s\":0.000030,\"first_open_s\":0.010000,"
            "\"last_close_s\":0.020000,\"first_io_s\":0.011000,\"last_io_s\":0.019000},"
            "\"stdio\":null,\"mpiio\":null,\"ranks\":null}",
            i > 0 ? "," : "", i % 100, i, i + 3, 4096 * (i + 1), i + 1, 4096 * (i + 1),
            4096 * (i + 1) - 1, i, i, i + 1, i + 1, i);
    g_string_append_printf(s,
                           "],\"files_total\":%u,\"timeline\":{\"bin_s\":0.5,"
                           "\"read_bytes\":[0,0],\"written_bytes\":[100,200]}}",
                           files);
    return g_string_free(s, FALSE);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CONNINFO [FILES [REPEATS]]\n", argv[0]);
        return 2;
    }
    guint files = argc > 2 ? (guint)atoi(argv[2]) : 2000;
    guint repeats = argc > 3 ? (guint)atoi(argv[3]) : 5;
    PGconn *db = PQconnectdb(argv[1]);
    if (PQstatus(db) != CONNECTION_OK) {
        fprintf(stderr, "%s", PQerrorMessage(db));
        return 1;
    }
    char *report = report_of(files);
    printf("one report, %u files, %zu bytes of JSON\n", files, strlen(report));
    for (guint k = 0; k < repeats; k++) {
        must(db, "BEGIN");
        must(db, "INSERT INTO nodes (node_id, hostname) VALUES (999999, 'bench')");
        must(db, "INSERT INTO runs (run_id, run_key, program, argv, uid, start_time) VALUES "
                 "(999999, 'bench-files', 'bench', '{}', 0, now())");
        must(db, "INSERT INTO processes (process_id, run_id, node_id, pid, uid, program, argv, "
                 "cwd, start_time, start_monotonic_ns) VALUES (999999, 999999, 999999, 1, 0, "
                 "'bench', '{}', '/', now(), 1)");
        struct txd_report_ref ref = {.process_id = 999999, .report_json = report, .label = "bench"};
        uint64_t rows = 0;
        GError *error = NULL;
        struct rusage before, after;
        getrusage(RUSAGE_SELF, &before);
        uint64_t t0 = vigil_clock_monotonic_ns();
        if (!txd_store_file_stats(db, &ref, 1, &rows, &error)) {
            fprintf(stderr, "%s\n", error->message);
            return 1;
        }
        uint64_t t1 = vigil_clock_monotonic_ns();
        getrusage(RUSAGE_SELF, &after);
        double cpu_ms = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec +
                                 after.ru_stime.tv_sec - before.ru_stime.tv_sec) *
                            1e3 +
                        (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec +
                                 after.ru_stime.tv_usec - before.ru_stime.tv_usec) /
                            1e3;
        PGresult *r = PQexec(db, "SELECT count(*) FROM (SELECT * FROM run_files WHERE run_id = "
                                 "999999 ORDER BY read_bytes + written_bytes DESC, calls DESC, "
                                 "path LIMIT 100) f");
        uint64_t t2 = vigil_clock_monotonic_ns();
        if (PQresultStatus(r) != PGRES_TUPLES_OK) {
            fprintf(stderr, "%s", PQerrorMessage(db));
            return 1;
        }
        PQclear(r);
        must(db, "ROLLBACK");
        printf("store: %.1f ms (%.1f us a file, %" G_GUINT64_FORMAT " rows), of it vigil-txd's CPU "
               "%.1f ms; run_files top 100: %.1f ms\n",
               (t1 - t0) / 1e6, (t1 - t0) / 1e3 / files, rows, cpu_ms, (t2 - t1) / 1e6);
    }
    g_free(report);
    PQfinish(db);
    return 0;
}
