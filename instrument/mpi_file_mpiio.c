/* vigil — one file's MPI-IO record merged across the ranks of an MPI job
 * (mpi_files.c merges the files): counts, bytes, times and histograms
 * summed; the slowest read and write the slowest rank's, with its size; the
 * mode the first rank's that knows it (rank 0's, as ranks come in order).
 *
 * The common sizes come from each rank's four and stay lower bounds. A
 * merged count is exact when every rank's part of it is known: the rank
 * listed the size with its exact count, or listed every size it saw (fewer
 * than VIGIL_REPORT_COMMON, all exact: mpiio_files.c then counted each of
 * its sizes, and a size it does not list it never saw). A size evicted
 * from the candidates and seen again restarts from the rank that brought
 * it back: a lower count, and not exact (nor is any size first taken in
 * after an eviction: it may be one of those). */
#include <stdlib.h>

#include "mpi_file_mpiio.h"

static bool lists_every_size(const struct vigil_report_file_mpiio *r)
{
    if (r->common_size_count >= VIGIL_REPORT_COMMON)
        return false;
    for (int i = 0; i < r->common_size_count; i++)
        if (!r->common_sizes[i].exact)
            return false;
    return true;
}

/* Adds a rank's count of `size`; a new size takes a free slot, else the
 * place of the least common one if it is less common. */
static void add_candidate(struct preload_job_mpiio *m, const struct vigil_report_common *c,
                          bool complete)
{
    /* A complete rank's exact listings are counted by complete_ranks. */
    int exact = c->exact && !complete;
    int least = 0;
    for (int i = 0; i < m->candidate_count; i++) {
        struct preload_mpiio_candidate *k = &m->candidates[i];
        if (k->size == c->value) {
            k->count += c->count;
            k->exact_ranks += exact;
            return;
        }
        if (k->count < m->candidates[least].count)
            least = i;
    }
    struct preload_mpiio_candidate added = {c->value, c->count, exact, m->evicted};
    if (m->candidate_count < PRELOAD_MPIIO_CANDIDATES) {
        m->candidates[m->candidate_count++] = added;
    } else if (m->candidates[least].count < c->count) {
        m->evicted = true;
        added.after_eviction = true;
        m->candidates[least] = added;
    }
}

static void slower(double *time_s, uint64_t *size, double other_s, uint64_t other_size)
{
    if (other_s > *time_s) {
        *time_s = other_s;
        *size = other_size;
    }
}

void preload_job_mpiio_add(struct preload_job_mpiio *m, const struct vigil_report_file_mpiio *r,
                           bool first)
{
    struct vigil_report_file_mpiio *to = &m->mpiio;
    if (first) {
        *m = (struct preload_job_mpiio){.mpiio = *r};
        to->common_size_count = 0;
    } else {
        to->indep_reads += r->indep_reads;
        to->indep_writes += r->indep_writes;
        to->coll_reads += r->coll_reads;
        to->coll_writes += r->coll_writes;
        to->split_reads += r->split_reads;
        to->split_writes += r->split_writes;
        to->nb_reads += r->nb_reads;
        to->nb_writes += r->nb_writes;
        to->read_bytes += r->read_bytes;
        to->written_bytes += r->written_bytes;
        to->read_time_s += r->read_time_s;
        to->write_time_s += r->write_time_s;
        to->meta_time_s += r->meta_time_s;
        to->indep_opens += r->indep_opens;
        to->coll_opens += r->coll_opens;
        to->syncs += r->syncs;
        to->hints += r->hints;
        to->views += r->views;
        to->rw_switches += r->rw_switches;
        if (to->mode < 0)
            to->mode = r->mode;
        for (int i = 0; i < VIGIL_REPORT_SIZE_BINS; i++) {
            to->read_size_hist[i] += r->read_size_hist[i];
            to->write_size_hist[i] += r->write_size_hist[i];
        }
        slower(&to->max_read_time_s, &to->max_read_time_size, r->max_read_time_s,
               r->max_read_time_size);
        slower(&to->max_write_time_s, &to->max_write_time_size, r->max_write_time_s,
               r->max_write_time_size);
    }
    bool complete = lists_every_size(r);
    m->ranks++;
    m->complete_ranks += complete;
    for (int i = 0; i < r->common_size_count && i < VIGIL_REPORT_COMMON; i++)
        add_candidate(m, &r->common_sizes[i], complete);
}

/* Most common first; on equal counts the larger size (Darshan's order). */
static int most_common_first(const void *a, const void *b)
{
    const struct preload_mpiio_candidate *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->size < y->size) - (x->size > y->size);
}

void preload_job_mpiio_finish(struct preload_job_mpiio *m)
{
    qsort(m->candidates, (size_t)m->candidate_count, sizeof m->candidates[0], most_common_first);
    int n = m->candidate_count < VIGIL_REPORT_COMMON ? m->candidate_count : VIGIL_REPORT_COMMON;
    for (int i = 0; i < n; i++) {
        const struct preload_mpiio_candidate *k = &m->candidates[i];
        m->mpiio.common_sizes[i] = (struct vigil_report_common){
            .value = k->size,
            .count = k->count,
            .exact = !k->after_eviction && k->exact_ranks + m->complete_ranks == m->ranks,
        };
    }
    m->mpiio.common_size_count = n;
}
