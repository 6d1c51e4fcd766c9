/* vigil — one report for an MPI job.
 *
 * At MPI_Finalize, before MPI goes, every rank asks vigild for its summary,
 * gathers its figures and reduces them to rank 0 on a duplicate of
 * MPI_COMM_WORLD (so nothing of ours mixes with the program's messages):
 * min, mean, max, sum and the rank of the max of each per-rank figure, the
 * sums of every operation's counters, and what vigild said about each rank
 * (gathered whole: the report lists each rank's energy), and every rank's
 * files, merged by path (mpi_files.c). Rank 0 writes the
 * job's report, and keeps its JSON for vigild, which gets it at exit; the
 * ranks' own reports are then skipped unless VIGIL_REPORT_PER_RANK=1 (vigild
 * gets them all the same). A rank that never reaches MPI_Finalize (it
 * crashed, or exited early) still writes its own report at exit. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpi_files.h"
#include "mpi_handles.h"
#include "mpi_regions.h"
#include "exit_report.h"
#include "vigil/report.h"

PRELOAD_REAL_SLOT(PMPI_Initialized);
PRELOAD_REAL_SLOT(PMPI_Finalized);
PRELOAD_REAL_SLOT(PMPI_Comm_dup);
PRELOAD_REAL_SLOT(PMPI_Comm_free);
PRELOAD_REAL_SLOT(PMPI_Reduce);
PRELOAD_REAL_SLOT(PMPI_Allreduce);
PRELOAD_REAL_SLOT(PMPI_Gather);
PRELOAD_REAL_EXTERN(PMPI_Comm_rank);
PRELOAD_REAL_EXTERN(PMPI_Comm_size);

/* Per operation: calls, bytes, time in ns, errors. Exact integers, and
 * times already in ns: each node's TSC has its own rate. */
#define OP_FIELDS 4

static void pack_ops(const struct vigil_report *r, uint64_t *out)
{
    for (unsigned op = 0; op <= VIGIL_OP_MAX_ID; op++) {
        const struct vigil_report_op *c = &r->ops[op];
        out[op * OP_FIELDS + 0] = c->calls;
        out[op * OP_FIELDS + 1] = c->bytes;
        out[op * OP_FIELDS + 2] = c->time_ns;
        out[op * OP_FIELDS + 3] = c->errors;
    }
}

static void unpack_ops(struct vigil_report *r, const uint64_t *in)
{
    for (unsigned op = 0; op <= VIGIL_OP_MAX_ID; op++) {
        struct vigil_report_op *c = &r->ops[op];
        c->calls = in[op * OP_FIELDS + 0];
        c->bytes = in[op * OP_FIELDS + 1];
        c->time_ns = in[op * OP_FIELDS + 2];
        c->errors = in[op * OP_FIELDS + 3];
    }
}

/* The job's figures on rank 0, from the reduced ones. */
static void joint_figures(struct vigil_report *r, const uint64_t *ops)
{
    unpack_ops(r, ops);
    const struct vigil_report_rank_stats *st = r->per_rank;
    r->runtime_ms = st[VIGIL_REPORT_RANK_RUNTIME_MS].max; /* as long as its longest rank */
    r->cpu_seconds = st[VIGIL_REPORT_RANK_CPU_SECONDS].sum;
    r->io_read_bytes = (uint64_t)st[VIGIL_REPORT_RANK_IO_BYTES_READ].sum;
    r->io_written_bytes = (uint64_t)st[VIGIL_REPORT_RANK_IO_BYTES_WRITTEN].sum;
    r->network_bytes = (uint64_t)st[VIGIL_REPORT_RANK_NETWORK_BYTES].sum;
    r->observed = (uint64_t)st[VIGIL_REPORT_RANK_OBSERVED].sum;
    r->recorded = (uint64_t)st[VIGIL_REPORT_RANK_RECORDED].sum;
    r->dropped = (uint64_t)st[VIGIL_REPORT_RANK_DROPPED].sum;
    r->excluded = (uint64_t)st[VIGIL_REPORT_RANK_EXCLUDED].sum;
    r->rank = -1;
    /* r->files are the job's already (mpi_files.c). */
}

/* Appends `source` to the "+"-joined list in `sources` unless it is there. */
static void add_source(char *sources, size_t size, const char *source)
{
    size_t length = strlen(source), used = strlen(sources);
    for (const char *p = sources; *p != '\0';) {
        const char *end = strchr(p, '+');
        size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n == length && memcmp(p, source, n) == 0)
            return;
        p += n + (end != NULL);
    }
    if (used + (used > 0) + length < size)
        snprintf(sources + used, size - used, "%s%s", used > 0 ? "+" : "", source);
}

/* What vigild said about the job: the sum of the ranks' energy when every
 * rank has one, else the first rank's reason; the sums of what it drained
 * and captured, with the capture mode of the first rank that has a summary,
 * or "mixed" when ranks differ (one node's vigild configured otherwise). */
static void joint_link(const struct preload_link_figures *ranks, int count,
                       struct preload_link_figures *out)
{
    memset(out, 0, sizeof *out);
    out->cpu_s = NAN;
    double energy_j = 0;
    int standalone = 0;
    for (int r = 0; r < count; r++) {
        const struct preload_link_figures *l = &ranks[r];
        if (isnan(l->energy_j)) {
            if (!isnan(energy_j))
                snprintf(out->energy_note, sizeof out->energy_note, "rank %d: %.200s", r,
                         l->energy_note);
            energy_j = NAN;
        } else if (!isnan(energy_j)) {
            energy_j += l->energy_j;
            out->energy_flags |= l->energy_flags;
            add_source(out->energy_source, sizeof out->energy_source, l->energy_source);
        }
        if (l->state == PRELOAD_LINK_SUMMARY) {
            out->ranks_with_summary++;
            out->activities_drained += l->activities_drained;
            out->names_drained += l->names_drained;
            out->gaps += l->gaps;
            out->dropped += l->dropped;
            out->anomalies += l->anomalies;
            out->cycles += l->cycles;
            out->abnormal_cycles += l->abnormal_cycles;
            out->capture_observed += l->capture_observed;
            out->capture_forwarded += l->capture_forwarded;
            out->capture_dropped += l->capture_dropped;
            out->capture_lost += l->capture_lost;
            out->capture_held += l->capture_held;
            if (out->ranks_with_summary == 1)
                snprintf(out->capture_mode, sizeof out->capture_mode, "%s", l->capture_mode);
            else if (strcmp(out->capture_mode, l->capture_mode) != 0)
                snprintf(out->capture_mode, sizeof out->capture_mode, "mixed");
            if (!isnan(l->cpu_s))
                out->cpu_s = (isnan(out->cpu_s) ? 0 : out->cpu_s) + l->cpu_s;
        } else {
            if (out->reason[0] == '\0')
                snprintf(out->reason, sizeof out->reason, "rank %d: %.200s", r, l->reason);
            standalone += l->state == PRELOAD_LINK_STANDALONE;
        }
    }
    out->energy_j = energy_j;
    if (isnan(energy_j)) {
        out->energy_source[0] = '\0';
        out->energy_flags = 0;
    }
    out->state = (int)out->ranks_with_summary == count ? PRELOAD_LINK_SUMMARY
                 : standalone == count                 ? PRELOAD_LINK_STANDALONE
                                                       : PRELOAD_LINK_CONNECTED;
}

/* The job's energy across its nodes: the ranks' figures grouped by the
 * host each runs on. */
static void job_energy(const struct preload_link_figures *ranks, const char *hosts, int count,
                       struct vigil_report_process_energy *scratch, int *order,
                       struct vigil_report_job_energy *out)
{
    for (int r = 0; r < count; r++)
        scratch[r] = (struct vigil_report_process_energy){
            .host = hosts + (size_t)r * VIGIL_REPORT_HOST_BYTES,
            .energy_j = ranks[r].energy_j,
            .flags = ranks[r].energy_flags,
            .source = ranks[r].energy_source,
        };
    vigil_report_job_energy_from_processes(scratch, count, order, out);
}

void preload_mpi_report_joint(void)
{
    /* Every rank with the library takes part, even where it could not set
     * itself up: a rank that skipped the collectives would leave the others
     * waiting in MPI_Finalize for ever. A job where some
     * ranks run without the library at all cannot be helped from here:
     * VIGIL_MPI_JOINT=off leaves each rank to report on its own. */
    const char *joint = getenv("VIGIL_MPI_JOINT");
    if (joint != NULL && strcmp(joint, "off") == 0)
        return;
    int initialized = 0, finalized = 1;
    /* cppcheck cannot see through REAL() that these calls set the flags: */
    // cppcheck-suppress knownConditionTrueFalse
    if (REAL(PMPI_Initialized)(&initialized) != MPI_SUCCESS || !initialized ||
        REAL(PMPI_Finalized)(&finalized) != MPI_SUCCESS || finalized)
        return;
    bool active = atomic_load(&preload.active);
    preload_thread.in_call = 1; /* our own messages and writes are not the program's */
    /* Each rank's own, before its figures are taken: what vigild drained
     * then is what the report counts as recorded. */
    if (active)
        preload_link_summary();
    MPI_Comm comm;
    if (REAL(PMPI_Comm_dup)(PRELOAD_COMM_WORLD, &comm) != MPI_SUCCESS) {
        preload_thread.in_call = 0;
        return; /* each rank reports on its own at exit */
    }
    int rank = 0, ranks = 1;
    REAL(PMPI_Comm_rank)(comm, &rank);
    REAL(PMPI_Comm_size)(comm, &ranks);

    /* The job's report only if every rank can give its figures (rank 0
     * needs room for every rank's link figures); else each rank reports on
     * its own, as without MPI. */
    struct preload_link_figures *links = NULL;
    struct vigil_report_link *views = NULL; /* of links, for the report */
    /* And for the job's energy by node: each rank's host. */
    struct vigil_report_process_energy *energies = NULL;
    int *order = NULL;
    char *hosts = NULL;
    size_t links_bytes = (size_t)ranks * (sizeof *links + sizeof *views + sizeof *energies +
                                          sizeof *order + VIGIL_REPORT_HOST_BYTES);
    if (rank == 0) {
        void *map =
            mmap(NULL, links_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (map != MAP_FAILED) {
            links = map;
            views = (struct vigil_report_link *)(links + ranks);
            energies = (struct vigil_report_process_energy *)(views + ranks);
            order = (int *)(energies + ranks);
            hosts = (char *)(order + ranks);
        }
    }
    int mine = active && (rank != 0 || links != NULL), all_active = 0;
    if (REAL(PMPI_Allreduce)(&mine, &all_active, 1, PRELOAD_MPI_INT, PRELOAD_MPI_MIN, comm) !=
            MPI_SUCCESS ||
        !all_active) {
        REAL(PMPI_Comm_free)(&comm);
        if (links != NULL)
            munmap(links, links_bytes);
        preload_thread.in_call = 0;
        return;
    }

    static struct preload_report f;
    double values[VIGIL_REPORT_RANK_METRIC_COUNT] = {0}, mins[VIGIL_REPORT_RANK_METRIC_COUNT];
    double maxs[VIGIL_REPORT_RANK_METRIC_COUNT], sums[VIGIL_REPORT_RANK_METRIC_COUNT];
    struct {
        double value;
        int rank;
    } located[VIGIL_REPORT_RANK_METRIC_COUNT], max_at[VIGIL_REPORT_RANK_METRIC_COUNT] = {{0, 0}};
    static uint64_t ops[(VIGIL_OP_MAX_ID + 1) * OP_FIELDS],
        ops_sum[(VIGIL_OP_MAX_ID + 1) * OP_FIELDS];
    preload_report_gather(&f);
    preload_report_rank_values(&f.r, values);
    pack_ops(&f.r, ops);
    for (int m = 0; m < VIGIL_REPORT_RANK_METRIC_COUNT; m++) {
        located[m].value = values[m];
        located[m].rank = rank;
    }

    int n = VIGIL_REPORT_RANK_METRIC_COUNT;
    int link_bytes = (int)sizeof f.link;
    char host[VIGIL_REPORT_HOST_BYTES] = {0}; /* a longer name is cut */
    memcpy(host, f.host, strnlen(f.host, sizeof host - 1));
    bool ok = REAL(PMPI_Reduce)(values, mins, n, PRELOAD_MPI_DOUBLE, PRELOAD_MPI_MIN, 0, comm) ==
                  MPI_SUCCESS &&
              REAL(PMPI_Reduce)(values, maxs, n, PRELOAD_MPI_DOUBLE, PRELOAD_MPI_MAX, 0, comm) ==
                  MPI_SUCCESS &&
              REAL(PMPI_Reduce)(values, sums, n, PRELOAD_MPI_DOUBLE, PRELOAD_MPI_SUM, 0, comm) ==
                  MPI_SUCCESS &&
              REAL(PMPI_Reduce)(located, max_at, n, PRELOAD_MPI_DOUBLE_INT, PRELOAD_MPI_MAXLOC, 0,
                                comm) == MPI_SUCCESS &&
              REAL(PMPI_Reduce)(ops, ops_sum, (int)(sizeof ops / sizeof ops[0]),
                                PRELOAD_MPI_UINT64_T, PRELOAD_MPI_SUM, 0, comm) == MPI_SUCCESS &&
              REAL(PMPI_Gather)(&f.link, link_bytes, PRELOAD_MPI_BYTE, links, link_bytes,
                                PRELOAD_MPI_BYTE, 0, comm) == MPI_SUCCESS &&
              REAL(PMPI_Gather)(host, (int)sizeof host, PRELOAD_MPI_BYTE, hosts, (int)sizeof host,
                                PRELOAD_MPI_BYTE, 0, comm) == MPI_SUCCESS &&
              preload_mpi_regions_joint(comm, rank, ranks, &f.r) &&
              preload_mpi_files_joint(comm, rank, ranks, &f.r);
    REAL(PMPI_Comm_free)(&comm);
    if (ok && rank == 0) {
        struct vigil_report *r = &f.r;
        r->ranks = ranks;
        for (int m = 0; m < n; m++) {
            r->per_rank[m] = (struct vigil_report_rank_stats){
                .min = mins[m],
                .mean = sums[m] / ranks,
                .max = maxs[m],
                .sum = sums[m],
                .max_rank = max_at[m].rank,
            };
        }
        for (int i = 0; i < ranks; i++)
            preload_link_view(&links[i], &views[i]);
        r->rank_links = views;
        joint_figures(r, ops_sum);
        joint_link(links, ranks, &f.link);
        job_energy(links, hosts, ranks, energies, order, &r->job_energy);
        preload_link_view(&f.link, &r->link);
        preload_report_findings(r); /* the job's: across its ranks and merged files */
        preload_report_emit(r);
        /* vigild gets the job's report from rank 0, at exit. */
        if (preload_link_connected())
            preload_report_keep_json(r);
        r->rank_links = NULL;
    }
    preload_mpi_files_release();
    if (links != NULL)
        munmap(links, links_bytes);
    if (ok)
        preload.joint_reported = true; /* else each rank reports on its own at exit */
    preload_thread.in_call = 0;
}
