/* fuzz-report-seeds DIR: writes reports in their JSON form, as the preload
 * library writes them, to DIR/seed-*.json for fuzz-report: a plain run, one
 * without vigild, an MPI job's with its ranks, and odd bytes in strings. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_json.h"
#include "vigil/local_protocol.h"

static const char *const plain_argv[] = {"/usr/bin/dd", "if=/dev/zero", "of=out", "count=3"};
static const char *const odd_argv[] = {"/opt/caf\xe9/run", "--name=\"a\\b\"", "\x01\x7f\t",
                                       "\xf0\x9f\x98\x80 smile"};

static struct vigil_report_link summary_link(void)
{
    return (struct vigil_report_link){
        .state = VIGIL_REPORT_SUMMARY,
        .ranks_with_summary = 1,
        .process_id = 17,
        .activities_drained = 1234,
        .names_drained = 5,
        .gaps = 2,
        .dropped = 1,
        .anomalies = 3,
        .cpu_s = 0.123456789,
        .energy_j = 12.3456789,
        .energy_flags = VIGIL_LOCAL_ENERGY_ESTIMATED,
        .energy_source = "energy/estimate",
        .energy_note = "",
        .reason = "",
        .cycles = 12,
        .abnormal_cycles = 3,
        .capture_observed = 52000,
        .capture_forwarded = 4210,
        .capture_dropped = 47088,
        .capture_lost = 12,
        .capture_held = 690,
        .capture_mode = "anomalies",
    };
}

static void add_file(struct vigil_report *r, const char *path, uint64_t calls)
{
    r->files[r->file_count++] = (struct vigil_report_file){
        .path = path, .path_bytes = strlen(path), .calls = calls, .read_bytes = 512 * calls};
}

static void plain_run(struct vigil_report *r)
{
    memset(r, 0, sizeof *r);
    r->run_key = "vm-4242-1700000000123456789";
    r->program = plain_argv[0];
    r->argc = 4;
    r->argv = plain_argv;
    r->pid = 4242;
    r->rank = -1;
    r->host = "node17";
    r->runtime_ms = 1234.5678;
    r->cpu_seconds = 0.0004996;
    r->link = summary_link();
    r->io_read_bytes = 1536;
    r->io_written_bytes = 1543;
    r->network_bytes = 1ull << 33;
    r->observed = 20;
    r->recorded = 18;
    r->dropped = 1;
    r->excluded = 1;
    r->ops[VIGIL_OP_POSIX_OPEN] = (struct vigil_report_op){2, 0, 12345, 0};
    r->ops[VIGIL_OP_POSIX_READ] = (struct vigil_report_op){3, 1536, 1500, 0};
    r->ops[VIGIL_OP_POSIX_WRITE] = (struct vigil_report_op){4, 1543, 987654321, 1};
    r->ops[VIGIL_OP_STDIO_FWRITE] = (struct vigil_report_op){1, 7, 999, 0};
    add_file(r, "/tmp/out", 7);
    add_file(r, "/dev/zero", 3);
}

static void no_daemon(struct vigil_report *r)
{
    plain_run(r);
    static const char why[] = "no vigild at /run/vigil/vigild.sock (No such file or directory)";
    r->link = (struct vigil_report_link){
        .state = VIGIL_REPORT_STANDALONE,
        .cpu_s = NAN,
        .energy_j = NAN,
        .energy_source = "",
        .energy_note = why,
        .reason = why,
        .capture_mode = "",
    };
}

static void odd_bytes(struct vigil_report *r)
{
    plain_run(r);
    r->program = odd_argv[0];
    r->argc = 4;
    r->argv = odd_argv;
    r->host = "h\xf6st";
    r->rank = 3;
    r->in_job_report = true;
    r->file_count = 0;
    add_file(r, "/data/caf\xe9.dat", 9);
    add_file(r, "/data/line\nbreak\x1b[31m", 7);
    add_file(r, "/data/\xe2\x82", 6);
}

static struct vigil_report_link rank_links[3];

static void mpi_job(struct vigil_report *r)
{
    plain_run(r);
    r->program = "./mpi-io-levels";
    r->argc = 1;
    r->ranks = 3;
    r->file_count = 0;
    r->link.process_id = 0;
    r->link.ranks_with_summary = 2;
    r->link.state = VIGIL_REPORT_CONNECTED;
    r->link.reason = "rank 2: vigild did not answer within 100 ms";
    r->link.capture_mode = "mixed";
    r->ops[VIGIL_OP_MPIIO_WRITE_AT_ALL] = (struct vigil_report_op){16, 1 << 20, 55555555, 0};
    for (int m = 0; m < VIGIL_REPORT_RANK_METRIC_COUNT; m++)
        r->per_rank[m] = (struct vigil_report_rank_stats){.min = m / 3.0,
                                                          .mean = (m + 1) / 7.0 * 1e6,
                                                          .max = 5e9,
                                                          .sum = 1e17 / 3,
                                                          .max_rank = m % 3};
    for (int i = 0; i < 3; i++) {
        rank_links[i] = summary_link();
        rank_links[i].process_id = 100 + (uint64_t)i;
    }
    rank_links[2].state = VIGIL_REPORT_CONNECTED;
    rank_links[2].energy_j = NAN;
    r->rank_links = rank_links;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    static const struct {
        const char *name;
        void (*fill)(struct vigil_report *);
    } seeds[] = {
        {"plain", plain_run},
        {"no-daemon", no_daemon},
        {"odd-bytes", odd_bytes},
        {"mpi-job", mpi_job},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(seeds); i++) {
        static struct vigil_report r;
        seeds[i].fill(&r);
        char *json = vigil_cli_report_json(&r);
        char *path = g_strdup_printf("%s/seed-%s.json", argv[1], seeds[i].name);
        GError *error = NULL;
        if (!g_file_set_contents(path, json, -1, &error))
            g_error("%s", error->message);
        g_free(path);
        g_free(json);
    }
    return 0;
}
