/* vigil — code regions in an MPI job's report: every rank's regions
 * gathered on rank 0 and merged by name, with each region's sums over the
 * ranks and its per-rank min, mean, max (over the ranks that entered it)
 * and the rank of the max. Called by mpi_report.c on every rank, after its
 * other collectives and on the same communicator. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "mpi_handles.h"
#include "mpi_regions.h"

PRELOAD_REAL_EXTERN(PMPI_Gather);

#define NAME_BYTES 64

/* One rank's region, as bytes on the wire (every rank runs this library:
 * the same layout). */
struct packed_region {
    char name[NAME_BYTES];
    uint64_t entered, calls, read_bytes, written_bytes, energy_missing, open;
    double wall_s, cpu_s, energy_j;
    uint32_t energy_flags, reserved;
};

struct packed_rank {
    uint32_t count, reserved;
    struct vigil_report_region_notes notes;
    struct packed_region regions[VIGIL_REPORT_REGIONS_MAX];
};

static void pack(const struct vigil_report *r, struct packed_rank *out)
{
    memset(out, 0, sizeof *out);
    out->count = (uint32_t)r->region_count;
    out->notes = r->region_notes;
    for (int i = 0; i < r->region_count && i < VIGIL_REPORT_REGIONS_MAX; i++) {
        const struct vigil_report_region *g = &r->regions[i];
        struct packed_region *p = &out->regions[i];
        snprintf(p->name, sizeof p->name, "%s", g->name);
        p->entered = g->entered;
        p->calls = g->calls;
        p->read_bytes = g->read_bytes;
        p->written_bytes = g->written_bytes;
        p->energy_missing = g->energy_missing;
        p->open = g->open;
        p->wall_s = g->wall_s;
        p->cpu_s = g->cpu_s;
        p->energy_j = g->energy_j;
        p->energy_flags = g->energy_flags;
    }
}

static double figure(const struct packed_region *p, int f)
{
    switch (f) {
    case VIGIL_REPORT_REGION_ENTERED:
        return (double)p->entered;
    case VIGIL_REPORT_REGION_CALLS:
        return (double)p->calls;
    case VIGIL_REPORT_REGION_BYTES_READ:
        return (double)p->read_bytes;
    case VIGIL_REPORT_REGION_BYTES_WRITTEN:
        return (double)p->written_bytes;
    case VIGIL_REPORT_REGION_WALL_SECONDS:
        return p->wall_s;
    case VIGIL_REPORT_REGION_CPU_SECONDS:
        return p->cpu_s;
    default:
        return p->energy_j;
    }
}

/* Adds one rank's value to a region's per-rank figure; NaN (no energy on
 * that rank) is left out of its min, mean and max. */
static void add_rank_value(struct vigil_report_rank_stats *st, uint32_t *known, double value,
                           int rank)
{
    if (isnan(value))
        return;
    if (*known == 0 || value < st->min)
        st->min = value;
    if (*known == 0 || value > st->max) {
        st->max = value;
        st->max_rank = rank;
    }
    st->sum = (*known == 0 ? 0 : st->sum) + value;
    (*known)++;
}

/* Rank 0: the job's regions from every rank's. */
static void merge(const struct packed_rank *ranks, int count, struct vigil_report *r)
{
    static struct vigil_report_region joint[VIGIL_REPORT_REGIONS_MAX];
    static char names[VIGIL_REPORT_REGIONS_MAX][NAME_BYTES];
    static uint32_t known[VIGIL_REPORT_REGIONS_MAX][VIGIL_REPORT_REGION_FIGURE_COUNT];
    memset(joint, 0, sizeof joint);
    memset(known, 0, sizeof known);
    int n = 0;
    struct vigil_report_region_notes notes = {0};
    for (int rank = 0; rank < count; rank++) {
        const struct packed_rank *pr = &ranks[rank];
        notes.names_dropped += pr->notes.names_dropped;
        notes.unmatched_ends += pr->notes.unmatched_ends;
        notes.closed_by_outer += pr->notes.closed_by_outer;
        notes.too_deep += pr->notes.too_deep;
        notes.dropped_calls += pr->notes.dropped_calls;
        for (uint32_t i = 0; i < pr->count && i < VIGIL_REPORT_REGIONS_MAX; i++) {
            const struct packed_region *p = &pr->regions[i];
            char name[NAME_BYTES];
            snprintf(name, sizeof name, "%s", p->name); /* NUL-terminated whatever came */
            int at = 0;
            while (at < n && strcmp(names[at], name) != 0)
                at++;
            if (at == n) {
                if (n == VIGIL_REPORT_REGIONS_MAX) {
                    notes.names_dropped += p->entered; /* the job tracks as many as a process */
                    continue;
                }
                snprintf(names[n], sizeof names[n], "%s", name);
                joint[n].name = names[n];
                joint[n].energy_j = NAN;
                n++;
            }
            struct vigil_report_region *g = &joint[at];
            g->entered += p->entered;
            g->calls += p->calls;
            g->read_bytes += p->read_bytes;
            g->written_bytes += p->written_bytes;
            g->wall_s += p->wall_s;
            g->cpu_s += p->cpu_s;
            if (!isnan(p->energy_j))
                g->energy_j = (isnan(g->energy_j) ? 0 : g->energy_j) + p->energy_j;
            g->energy_missing += p->energy_missing;
            g->energy_flags |= p->energy_flags;
            g->open += p->open;
            g->ranks++;
            for (int f = 0; f < VIGIL_REPORT_REGION_FIGURE_COUNT; f++)
                add_rank_value(&g->per_rank[f], &known[at][f], figure(p, f), rank);
        }
    }
    for (int i = 0; i < n; i++) {
        for (int f = 0; f < VIGIL_REPORT_REGION_FIGURE_COUNT; f++) {
            struct vigil_report_rank_stats *st = &joint[i].per_rank[f];
            if (known[i][f] == 0)
                *st = (struct vigil_report_rank_stats){NAN, NAN, NAN, NAN, 0};
            else
                st->mean = st->sum / known[i][f];
        }
    }
    r->regions = joint;
    r->region_count = n;
    r->region_notes = notes;
}

bool preload_mpi_regions_joint(MPI_Comm comm, int rank, int ranks, struct vigil_report *r)
{
    static struct packed_rank mine;
    pack(r, &mine);
    struct packed_rank *all = NULL;
    size_t bytes = (size_t)ranks * sizeof *all;
    if (rank == 0) {
        void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        /* Without room, rank 0 still takes part (the others are waiting in
         * the gather) and the job's report lists no region. */
        all = map != MAP_FAILED ? map : NULL;
    }
    static struct packed_rank discard;
    int size = (int)sizeof mine;
    bool ok = REAL(PMPI_Gather)(&mine, size, PRELOAD_MPI_BYTE, all != NULL ? (void *)all : &discard,
                                all != NULL ? size : 0, PRELOAD_MPI_BYTE, 0, comm) == MPI_SUCCESS;
    if (rank == 0) {
        if (ok && all != NULL)
            merge(all, ranks, r);
        else
            r->region_count = 0;
        if (all != NULL)
            munmap(all, bytes);
    }
    return ok;
}
