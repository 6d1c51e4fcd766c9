/* vigil — reports' figures for the tests: every kind of report the
 * preload library writes (test_report_figures.h). The unit test of the
 * report's two forms and the report fuzzer's seeds use the same ones. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "test_report_figures.h"
#include "vigil/local_protocol.h"

static const char *const plain_argv[] = {"/usr/bin/dd", "if=/dev/zero", "of=out", "count=3"};

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

static struct vigil_report_link standalone_link(const char *why)
{
    return (struct vigil_report_link){
        .state = VIGIL_REPORT_STANDALONE,
        .cpu_s = NAN,
        .energy_j = NAN,
        .energy_source = "",
        .energy_note = why,
        .reason = why,
        .capture_mode = "",
    };
}

static void add_op(struct vigil_report *r, unsigned op, uint64_t calls, uint64_t bytes,
                   uint64_t time_ns, uint64_t errors)
{
    r->ops[op] = (struct vigil_report_op){calls, bytes, time_ns, errors};
}

/* The files of the set being made (a report points to its files). */
static struct vigil_report_file files_store[16];

/* A file as a report stored by an older vigil has it: counts only. */
static struct vigil_report_file *add_file(struct vigil_report *r, const char *path, uint64_t calls,
                                          uint64_t read_bytes, uint64_t written_bytes)
{
    if (r->file_count == 0)
        r->files = files_store;
    struct vigil_report_file *f = &files_store[r->file_count++];
    *f = (struct vigil_report_file){
        .path = path,
        .path_bytes = strlen(path),
        .mount = "/",
        .fs_type = "",
        .calls = calls,
        .read_bytes = read_bytes,
        .written_bytes = written_bytes,
    };
    return f;
}

/* Gives a file the per-file counters' form, with nothing counted yet. */
static void with_layers(struct vigil_report_file *f)
{
    f->has_layers = true;
    f->posix = test_report_layer_none();
}

/* dd under vigild, with its summary. */
void test_report_plain_run(struct vigil_report *r)
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
    r->cpu_seconds = 0.0004996; /* rounds up to 0.0005 first, then to 0.001 */
    r->link = summary_link();
    r->io_read_bytes = 3 * 512;
    r->io_written_bytes = 3 * 512 + 7;
    r->network_bytes = 1ull << 33;
    r->observed = 20;
    r->recorded = 18;
    r->dropped = 1;
    r->excluded = 1;
    add_op(r, VIGIL_OP_POSIX_OPEN, 2, 0, 12345, 0);
    add_op(r, VIGIL_OP_POSIX_READ, 3, 1536, 1500,
           0); /* 0.0015 ms: a tie at the text's 3 decimals */
    add_op(r, VIGIL_OP_POSIX_WRITE, 4, 1543, 987654321, 1);
    add_op(r, VIGIL_OP_STDIO_FWRITE, 1, 7, 999, 0);
    add_file(r, "/tmp/out", 7, 0, 1543);
    add_file(r, "/dev/zero", 3, 1536, 0);
}

/* No vigild: the reason stands in for the energy and vigild's figures. */
static void no_daemon(struct vigil_report *r)
{
    test_report_plain_run(r);
    r->link = standalone_link("no vigild at /run/vigil/vigild.sock (No such file or directory)");
    r->dropped = 65536;
}

/* vigild answered, but has no energy for the process and says why; its
 * capture is off. */
static void energy_unavailable(struct vigil_report *r)
{
    test_report_plain_run(r);
    r->link.energy_j = NAN;
    r->link.energy_flags = 0;
    r->link.energy_note = "the process ended before vigild's first tick";
    r->link.capture_mode = "none";
    r->link.capture_forwarded = r->link.capture_lost = r->link.capture_held = 0;
    r->link.capture_dropped = r->link.capture_observed;
    r->cpu_seconds = 2.5;
}

/* Registered, but vigild never answered the summary request. */
static void no_summary(struct vigil_report *r)
{
    test_report_plain_run(r);
    r->link = standalone_link("vigild did not answer within 100 ms");
    r->link.state = VIGIL_REPORT_CONNECTED;
    r->link.process_id = 99;
}

/* Bytes that are not UTF-8, control characters, quotes and characters
 * outside the BMP, in the program, argv, the host and the paths. */
static const char *const odd_argv[] = {"/opt/caf\xe9/run", "--name=\"a\\b\"", "\x01\x7f\t",
                                       "\xf0\x9f\x98\x80 smile", "\xc0\xaf\xed\xa0\x80\xf5"};

void test_report_odd_bytes(struct vigil_report *r)
{
    test_report_plain_run(r);
    r->program = odd_argv[0];
    r->argc = 5;
    r->argv = odd_argv;
    r->host = "h\xf6st";
    r->link.energy_source = "energy/\xe9";
    r->file_count = 0;
    add_file(r, "/data/caf\xe9.dat", 9, 90, 0);
    add_file(r, "/data/caf\xc3\xa9.dat", 8, 80, 0); /* the same name, in UTF-8 */
    add_file(r, "/data/line\nbreak\x1b[31m", 7, 0, 70);
    add_file(r, "/data/\xe2\x82", 6, 60, 0); /* a sequence cut short */
    add_file(r, "/data/\xf0\x9f\x98\x80\x80\x9f", 5, 0, 50);
    add_file(r, "/data/\"quoted\"\\back", 4, 40, 0);
}

/* An MPI job's report on rank 0: four ranks, figures with many decimals,
 * one rank without energy. */
static struct vigil_report_link rank_links[4];

void test_report_mpi_joint(struct vigil_report *r)
{
    test_report_plain_run(r);
    r->program = "./mpi-io-levels";
    r->argc = 1;
    r->ranks = 4;
    r->rank = -1;
    r->file_count = 0;
    r->link.process_id = 0;
    r->link.ranks_with_summary = 3;
    r->link.state = VIGIL_REPORT_CONNECTED;
    r->link.reason = "rank 2: vigild did not answer within 100 ms";
    r->link.capture_mode = "mixed";
    r->link.energy_j = NAN;
    r->link.energy_note = "rank 2: vigild did not answer within 100 ms";
    add_op(r, VIGIL_OP_MPIIO_WRITE_AT_ALL, 16, 1 << 20, 55555555, 0);
    for (int m = 0; m < VIGIL_REPORT_RANK_METRIC_COUNT; m++)
        r->per_rank[m] = (struct vigil_report_rank_stats){
            .min = m / 3.0,
            .mean = (m + 1) / 7.0 * 1e6,
            .max = 5e9 + 1.0 / 3, /* past 2^32: a double's last decimals */
            .sum = 1e17 / 3,      /* past 2^53 */
            .max_rank = m % 4,
        };
    for (int i = 0; i < 4; i++) {
        rank_links[i] = summary_link();
        rank_links[i].process_id = 100 + (uint64_t)i;
        rank_links[i].energy_j = 1.0000005 * (i + 1);
        rank_links[i].capture_forwarded = 10 * (uint64_t)i;
    }
    rank_links[2] = standalone_link("vigild did not answer within 100 ms");
    rank_links[2].state = VIGIL_REPORT_CONNECTED;
    rank_links[2].process_id = 102;
    rank_links[3].energy_flags = VIGIL_LOCAL_ENERGY_UNCERTAIN;
    r->rank_links = rank_links;
    /* A file the four ranks shared through collective MPI-IO, and one of
     * rank 2's own: times and variances with more decimals than printed. */
    struct vigil_report_file *f = add_file(r, "/scratch/shared.dat", 40, 1 << 19, 1 << 20);
    with_layers(f);
    f->posix.writes = 4; /* rank 0 aggregated: POSIX moved more than MPI-IO asked */
    f->posix.written_bytes = 1 << 21;
    f->has_mpiio = true;
    f->mpiio = (struct vigil_report_file_mpiio){
        .indep_reads = 1,
        .coll_reads = 8,
        .coll_writes = 16,
        .split_writes = 2,
        .nb_reads = 3,
        .nb_writes = 4,
        .read_bytes = 1 << 19,
        .written_bytes = 1 << 20,
        .read_time_s = 0.1234567,
        .write_time_s = 1.0 / 3,
        .meta_time_s = 2e-7,
        .coll_opens = 4,
        .hints = 8,
        .views = 4,
        .syncs = 4,
        .rw_switches = 12,
        .mode = 9,
        .read_size_hist = {[4] = 12},
        .write_size_hist = {[4] = 20, [6] = 2},
        .common_size_count = 2,
        .common_sizes = {{65536, 24, true}, {4096, 3, false}},
        .max_read_time_s = 0.0123455,
        .max_read_time_size = 65536,
        .max_write_time_s = 0.25,
        .max_write_time_size = 5 << 20,
    };
    f->has_ranks = true;
    f->ranks = (struct vigil_report_file_ranks){
        .count = 4,
        .shared = true,
        .fastest_rank = 3,
        .fastest_s = 0.0123455,
        .fastest_bytes = 1 << 18,
        .slowest_rank = 0,
        .slowest_s = 0.45678951,
        .slowest_bytes = 1 << 20,
        .time_variance_s2 = 1.23456789e-9,
        .bytes_variance = 1e17 / 3,
        .most_posix_rank = 0,
        .most_posix_bytes = 1 << 21,
        .least_posix_rank = 2,
        .least_posix_bytes = 0,
    };
    f = add_file(r, "/scratch/rank-2.log", 3, 0, 300);
    with_layers(f);
    f->posix.writes = 3;
    f->posix.written_bytes = 300;
    f->has_ranks = true;
    f->ranks = (struct vigil_report_file_ranks){
        .count = 1,
        .fastest_rank = 2,
        .fastest_s = 0.001,
        .fastest_bytes = 300,
        .slowest_rank = 2,
        .slowest_s = 0.001,
        .slowest_bytes = 300,
        .most_posix_rank = 2,
        .most_posix_bytes = 300,
        .least_posix_rank = 2,
        .least_posix_bytes = 300,
    };
}

/* A rank's own report (VIGIL_REPORT_PER_RANK=1, or a rank that never
 * reached MPI_Finalize), with lost activities. */
static void own_rank(struct vigil_report *r)
{
    test_report_plain_run(r);
    r->rank = 3;
    r->in_job_report = true;
    /* Both levels of a file MPI-IO used; no ranks in a rank's own report. */
    struct vigil_report_file *f = &files_store[0];
    with_layers(&files_store[1]); /* every file of a report has the counters, or none */
    with_layers(f);
    f->posix.writes = 7;
    f->posix.written_bytes = 1543;
    f->has_mpiio = true;
    f->mpiio = (struct vigil_report_file_mpiio){
        .indep_writes = 7,
        .written_bytes = 1543,
        .write_time_s = 0.0000005,
    };
    r->link.capture_lost = 12;
    r->link.energy_flags = VIGIL_LOCAL_ENERGY_ESTIMATED | VIGIL_LOCAL_ENERGY_UNCERTAIN;
    r->link.energy_j = 1.0000005;
}

/* A job whose rank 0 could not gather the ranks' vigild figures. */
static void mpi_without_rank_links(struct vigil_report *r)
{
    test_report_mpi_joint(r);
    r->rank_links = NULL;
}

/* Code regions: nested ones, one with energy (estimated), one without,
 * one still open, a name that needs escaping, and every kind of note. */
static struct vigil_report_region regions[4];

void test_report_regions(struct vigil_report *r)
{
    test_report_plain_run(r);
    regions[0] = (struct vigil_report_region){
        .name = "main",
        .entered = 1,
        .calls = 12,
        .read_bytes = 4096,
        .written_bytes = 1ull << 54, /* past 2^53 */
        .wall_s = 2.0000005,
        .cpu_s = 1.9999995,
        .energy_j = 12.3456785,
        .energy_flags = VIGIL_LOCAL_ENERGY_ESTIMATED,
    };
    regions[1] = (struct vigil_report_region){
        .name = "solver \"x\"\t\xe9",
        .entered = 1000,
        .wall_s = 1.0 / 3,
        .cpu_s = 2.0 / 3,
        .energy_j = NAN,
        .energy_missing = 1000,
    };
    regions[2] = (struct vigil_report_region){
        .name = "io",
        .entered = 3,
        .calls = 9,
        .read_bytes = 1,
        .energy_j = 0.5,
        .energy_missing = 1,
        .energy_flags = VIGIL_LOCAL_ENERGY_UNCERTAIN,
        .open = 2,
    };
    r->regions = regions;
    r->region_count = 3;
    r->region_notes = (struct vigil_report_region_notes){1, 2, 3, 4, 5};
}

/* A job's regions: per-rank figures, one region on some ranks only. */
static void mpi_with_regions(struct vigil_report *r)
{
    test_report_mpi_joint(r);
    test_report_regions(r);
    test_report_mpi_joint(r); /* back to the job's figures; the regions stay */
    r->regions = regions;
    r->region_count = 3;
    r->region_notes = (struct vigil_report_region_notes){0};
    for (int i = 0; i < 3; i++) {
        regions[i].ranks = 4 - i;
        for (int f = 0; f < VIGIL_REPORT_REGION_FIGURE_COUNT; f++)
            regions[i].per_rank[f] = (struct vigil_report_rank_stats){
                .min = f / 3.0,
                .mean = (f + 1) / 7.0,
                .max = 5e9 + 1.0 / 3,
                .sum = 1e17 / 3,
                .max_rank = 3 - i,
            };
    }
    regions[1].per_rank[VIGIL_REPORT_REGION_ENERGY_JOULE] =
        (struct vigil_report_rank_stats){NAN, NAN, NAN, NAN, 0};
}

/* Every file with its Darshan counters (more than the text lists), a
 * stdio layer, MPI-IO counts, ranks, and the timeline. */
void test_report_files(struct vigil_report *r)
{
    test_report_plain_run(r);
    r->file_count = 0;
    r->files_untracked = 7; /* paths that found the file table full */
    static char names[12][32];
    for (int i = 0; i < 12; i++) {
        snprintf(names[i], sizeof names[i], "/scratch/ior.%02d", i);
        struct vigil_report_file *f =
            add_file(r, names[i], 100 - (uint64_t)i, 0, (12 - (uint64_t)i) << 20);
        f->mount = "/scratch";
        f->fs_type = "lustre";
        f->has_layers = true;
        struct vigil_report_file_layer *p = &f->posix;
        p->opens = 1;
        p->writes = 16;
        p->seeks = (uint64_t)i;
        p->written_bytes = f->written_bytes;
        p->max_read_offset = -1;
        p->max_written_offset = (int64_t)f->written_bytes - 1;
        p->seq_writes = 15;
        p->consec_writes = (uint64_t)(15 - i);
        p->write_size_hist[4] = 16;
        p->common_size_count = 1;
        p->common_sizes[0] =
            (struct vigil_report_common){.value = 65536, .count = 16, .exact = true};
        p->common_stride_count = i % 3;
        p->common_strides[0] = (struct vigil_report_common){.value = 0, .count = 15 - (uint64_t)i};
        p->common_strides[1] = (struct vigil_report_common){.value = -131072, .count = 1};
        p->write_time_s = 0.1234565 * (i + 1);
        p->meta_time_s = 1.0 / 3;
        p->first_open_s = 0.0000004; /* rounds to 0 */
        p->last_close_s = 2.5;
        p->first_io_s = 0.001;
        p->last_io_s = 2.4999995;
        p->read_time_s = 0;
    }
    /* One read through stdio only: no POSIX access, "-" for both columns. */
    struct vigil_report_file *s = &files_store[11];
    s->has_stdio = true;
    s->posix = test_report_layer_none();
    s->stdio = test_report_layer_none();
    s->stdio.reads = 3;
    s->stdio.read_bytes = 300;
    s->stdio.max_read_offset = 299;
    s->stdio.first_io_s = 0.5;
    s->stdio.last_io_s = 0.75;
    s->stdio.read_size_hist[1] = 3;
    s->stdio.common_size_count = 1;
    s->stdio.common_sizes[0] = (struct vigil_report_common){.value = 100, .count = 3};
    s->stdio.seq_reads = 2;
    struct vigil_report_file *m = &files_store[0];
    m->has_mpiio = true;
    m->mpiio = (struct vigil_report_file_mpiio){.indep_reads = 1,
                                                .indep_writes = 2,
                                                .coll_reads = 3,
                                                .coll_writes = 4,
                                                .split_reads = 5,
                                                .split_writes = 6,
                                                .nb_reads = 7,
                                                .nb_writes = 8,
                                                .read_bytes = 9,
                                                .written_bytes = 1ull << 60,
                                                .read_time_s = 0.25,
                                                .write_time_s = 0.5,
                                                .meta_time_s = 1.0 / 3,
                                                .mode = -1};
    m->has_ranks = true;
    m->ranks = (struct vigil_report_file_ranks){.count = 4,
                                                .shared = true,
                                                .fastest_rank = 2,
                                                .fastest_s = 1.0 / 7,
                                                .fastest_bytes = 3,
                                                .slowest_rank = 0,
                                                .slowest_s = 2.0 / 3,
                                                .slowest_bytes = 5,
                                                .time_variance_s2 = 1e-7,
                                                .bytes_variance = 1e17 / 3};
    r->timeline.bin_s = 0.134217728;
    r->timeline.bins = 3;
    r->timeline.read_bytes[2] = 300;
    r->timeline.written_bytes[0] = 1ull << 40;
}

/* Findings: about the run, a file (a path that is not UTF-8), a rank. */
static void with_findings(struct vigil_report *r)
{
    test_report_files(r);
    static const char odd_path[] = "/scratch/\xff\\\"small\".dat";
    static const struct vigil_report_finding findings[] = {
        {.id = "io_time_share",
         .severity = "info",
         .rank = -1,
         .evidence = "12.5 s of the 20.0 s run (62 %) went to I/O calls",
         .advice = "I/O bounds this run."},
        {.id = "small_accesses",
         .severity = "warning",
         .file = odd_path,
         .file_bytes = sizeof odd_path - 1,
         .rank = 3,
         .evidence = "8192 of 8192 POSIX reads and writes (100.0 %) moved at most 1 KiB each",
         .advice = "Make fewer, larger requests \"now\"\n\u00e9."},
    };
    r->findings_thresholds = "vigild";
    r->finding_count = 2;
    r->findings = findings;
}

/* Findings made, none raised. */
static void no_findings(struct vigil_report *r)
{
    test_report_plain_run(r);
    r->findings_thresholds = "defaults";
    r->finding_count = 0;
    r->findings = NULL;
}

void (*const test_report_figure_sets[TEST_REPORT_FIGURE_SETS])(struct vigil_report *) = {
    test_report_plain_run,
    no_daemon,
    energy_unavailable,
    no_summary,
    test_report_odd_bytes,
    test_report_mpi_joint,
    own_rank,
    mpi_without_rank_links,
    test_report_regions,
    mpi_with_regions,
    test_report_files,
    with_findings,
    no_findings,
};
const char *const test_report_figure_set_names[TEST_REPORT_FIGURE_SETS] = {
    "plain run",
    "no daemon",
    "energy unavailable",
    "no summary",
    "odd bytes",
    "MPI job",
    "own rank",
    "MPI job without rank figures",
    "regions",
    "MPI job with regions",
    "files",
    "findings",
    "no findings",
};
