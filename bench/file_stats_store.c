/* What the per-file characterization costs the warehouse: vigil-txd's
 * txd_store_file_stats (json-glib parse, checks, binary COPY) for one
 * report listing N files, in a transaction rolled back each time, then the
 * web API's query of run_files for that run; a report of before issue 33
 * and one with its members (warehouse/migrations/0017) side by side, and
 * run_files as 0017 makes it against 0008's.
 *
 *   bench-file-stats-store CONNINFO [FILES [REPEATS]]
 *
 * CONNINFO names a database migrated to the latest schema (tools/pg-private
 * and `vigil db migrate`); the bench's rows are rolled back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "txd.h"
#include "vigil/clock.h"
#include "warehouse_migrations.h"

/* run_files as migration 8 made it (correlated subqueries for the common
 * values), from the embedded text, as a temporary view beside 0017's. */
static char *run_files_0008_sql(void)
{
    const char *sql = vigil_warehouse_migrations[7].sql;
    const char *from = strstr(sql, "CREATE VIEW run_files AS");
    const char *to = from != NULL ? strstr(from, ";\n") : NULL;
    if (to == NULL) {
        fprintf(stderr, "migration 8 has no run_files view\n");
        exit(1);
    }
    from += strlen("CREATE VIEW run_files AS");
    return g_strdup_printf("CREATE TEMPORARY VIEW run_files_0008 AS%.*s", (int)(to - from), from);
}

/* Milliseconds of the web API's read of run_files' busiest 100 (every
 * column, as it asks for them: a count alone would not compute them). */
static double top_100_ms(PGconn *db, const char *view)
{
    char *sql = g_strdup_printf("SELECT * FROM %s WHERE run_id = 999999 ORDER BY read_bytes + "
                                "written_bytes DESC, calls DESC, path LIMIT 100",
                                view);
    uint64_t t0 = vigil_clock_monotonic_ns();
    PGresult *r = PQexec(db, sql);
    uint64_t t1 = vigil_clock_monotonic_ns();
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        fprintf(stderr, "%s", PQerrorMessage(db));
        exit(1);
    }
    PQclear(r);
    g_free(sql);
    return (t1 - t0) / 1e6;
}

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
 * members), `files` files of which file i did i + 1 writes; with
 * `darshan`, issue 33's members too (warehouse/migrations/0017). */
static char *report_of(guint files, gboolean darshan)
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
            "\"last_close_s\":0.020000,\"first_io_s\":0.011000,\"last_io_s\":0.019000%s},"
            "\"stdio\":null,\"mpiio\":null,\"ranks\":null}",
            i > 0 ? "," : "", i % 100, i, i + 3, 4096 * (i + 1), i + 1, 4096 * (i + 1),
            4096 * (i + 1) - 1, i, i, i + 1, i + 1, i,
            darshan ? ",\"rw_switches\":0,\"fdatasyncs\":0,\"filenos\":0,\"dups\":0,"
                      "\"mode\":420,\"file_alignment_bytes\":4096,\"file_not_aligned\":0,"
                      "\"mem_alignment_bytes\":8,\"mem_not_aligned\":0,"
                      "\"max_read_time_s\":0,\"max_read_time_size\":0,"
                      "\"max_write_time_s\":0.000020,\"max_write_time_size\":4096"
                    : "");
    g_string_append_printf(s,
                           "],\"files_total\":%u,\"timeline\":{\"bin_s\":0.5,"
                           "\"read_bytes\":[0,0],\"written_bytes\":[100,200]}}",
                           files);
    return g_string_free(s, FALSE);
}

struct figures {
    double store_ms, cpu_ms, query_ms, query_0008_ms;
};

/* Stores `report` in a transaction rolled back, then queries run_files. */
static struct figures measure(PGconn *db, const char *report, const char *old_view_sql)
{
    must(db, "BEGIN");
    must(db, old_view_sql);
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
        exit(1);
    }
    uint64_t t1 = vigil_clock_monotonic_ns();
    getrusage(RUSAGE_SELF, &after);
    double cpu_ms = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec +
                             after.ru_stime.tv_sec - before.ru_stime.tv_sec) *
                        1e3 +
                    (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec +
                             after.ru_stime.tv_usec - before.ru_stime.tv_usec) /
                        1e3;
    double query_ms = top_100_ms(db, "run_files");
    double query_0008_ms = top_100_ms(db, "run_files_0008");
    must(db, "ROLLBACK");
    return (struct figures){(t1 - t0) / 1e6, cpu_ms, query_ms, query_0008_ms};
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
    /* Reports of before issue 33 and with its members, alternately, so
     * that both see the same machine. */
    char *reports[] = {report_of(files, FALSE), report_of(files, TRUE)};
    const char *names[] = {"before issue 33", "issue 33's members"};
    struct figures sums[2] = {{0}};
    char *old_view_sql = run_files_0008_sql();
    for (guint v = 0; v < 2; v++)
        printf("%s: one report, %u files, %zu bytes of JSON\n", names[v], files,
               strlen(reports[v]));
    for (guint k = 0; k < repeats; k++)
        for (guint v = 0; v < 2; v++) {
            struct figures f = measure(db, reports[v], old_view_sql);
            printf("%-18s store: %.1f ms (%.1f us a file), of it vigil-txd's CPU %.1f ms; "
                   "run_files top 100: %.1f ms (0008's view: %.1f ms)\n",
                   names[v], f.store_ms, f.store_ms * 1e3 / files, f.cpu_ms, f.query_ms,
                   f.query_0008_ms);
            sums[v].store_ms += f.store_ms;
            sums[v].cpu_ms += f.cpu_ms;
            sums[v].query_ms += f.query_ms;
            sums[v].query_0008_ms += f.query_0008_ms;
        }
    printf("issue 33's members / before, over %u runs each: store %.2f, vigil-txd's CPU %.2f, "
           "run_files top 100 %.2f\n",
           repeats, sums[1].store_ms / sums[0].store_ms, sums[1].cpu_ms / sums[0].cpu_ms,
           sums[1].query_ms / sums[0].query_ms);
    printf("run_files top 100, 0017's view / 0008's, over %u runs: %.3f\n", 2 * repeats,
           (sums[0].query_ms + sums[1].query_ms) / (sums[0].query_0008_ms + sums[1].query_0008_ms));
    g_free(old_view_sql);
    g_free(reports[0]);
    g_free(reports[1]);
    PQfinish(db);
    return 0;
}
