/* vigil — one file's POSIX or stdio counters merged across the ranks of an
 * MPI job (mpi_files.c merges the files): counts, bytes, histograms and
 * times summed, the largest offsets, the earliest first open and first
 * I/O, the latest last close and last I/O (each rank's seconds since its own
 * start: ranks start together within a launch, which is what these compare
 * at), and the most common access sizes and strides from each rank's four
 * (as Darshan's reduction does: a size common on every rank but never in
 * one rank's top four is missed). Counts stay lower bounds, exact only when
 * every rank gave the value an exact count. The slowest call is the
 * slowest rank's; the block size the one ranks agree on, else the smallest
 * known; the mode the first rank's that knows it (rank 0's). */
#include <stdlib.h>
#include <string.h>

#include "mpi_file_layers.h"

static int64_t larger(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* The earlier of two times, -1 meaning none. */
static double earlier(double a, double b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return a < b ? a : b;
}

static double later(double a, double b)
{
    return a > b ? a : b;
}

/* Adds one rank's count of `value` among the candidates; a new value takes
 * a free slot, else the place of the least common one if it is less
 * common (whose count, a lower bound, is then dropped: still one). */
static void add_candidate(struct preload_common_candidates *c, const struct vigil_report_common *e)
{
    int least = 0;
    for (int i = 0; i < c->count; i++) {
        if (c->items[i].value == e->value) {
            c->items[i].count += e->count;
            c->exact_ranks[i] += e->exact;
            return;
        }
        if (c->items[i].count < c->items[least].count)
            least = i;
    }
    int at;
    if (c->count < PRELOAD_COMMON_CANDIDATES)
        at = c->count++;
    else if (c->items[least].count < e->count)
        at = least;
    else
        return;
    c->items[at] = (struct vigil_report_common){.value = e->value, .count = e->count};
    c->exact_ranks[at] = e->exact;
}

/* The smaller of two block sizes, 0 meaning not known. */
static uint64_t smaller_known(uint64_t a, uint64_t b)
{
    return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

void preload_job_layer_add(struct preload_job_layer *m, const struct vigil_report_file_layer *l,
                           bool first)
{
    struct vigil_report_file_layer *to = &m->layer;
    if (first) {
        *to = *l;
        to->common_size_count = to->common_stride_count = 0;
        memset(&m->sizes, 0, sizeof m->sizes);
        memset(&m->strides, 0, sizeof m->strides);
        m->ranks = 0;
    } else {
        to->reads += l->reads;
        to->writes += l->writes;
        to->opens += l->opens;
        to->seeks += l->seeks;
        to->stats += l->stats;
        to->fsyncs += l->fsyncs;
        to->other += l->other;
        to->read_bytes += l->read_bytes;
        to->written_bytes += l->written_bytes;
        to->max_read_offset = larger(to->max_read_offset, l->max_read_offset);
        to->max_written_offset = larger(to->max_written_offset, l->max_written_offset);
        to->seq_reads += l->seq_reads;
        to->seq_writes += l->seq_writes;
        to->consec_reads += l->consec_reads;
        to->consec_writes += l->consec_writes;
        for (int i = 0; i < VIGIL_REPORT_SIZE_BINS; i++) {
            to->read_size_hist[i] += l->read_size_hist[i];
            to->write_size_hist[i] += l->write_size_hist[i];
        }
        to->read_time_s += l->read_time_s;
        to->write_time_s += l->write_time_s;
        to->meta_time_s += l->meta_time_s;
        to->first_open_s = earlier(to->first_open_s, l->first_open_s);
        to->first_io_s = earlier(to->first_io_s, l->first_io_s);
        to->last_close_s = later(to->last_close_s, l->last_close_s);
        to->last_io_s = later(to->last_io_s, l->last_io_s);
        to->rw_switches += l->rw_switches;
        to->fdatasyncs += l->fdatasyncs;
        to->filenos += l->filenos;
        to->dups += l->dups;
        if (to->mode == -1)
            to->mode = l->mode;
        to->file_alignment_bytes = smaller_known(to->file_alignment_bytes, l->file_alignment_bytes);
        to->file_not_aligned += l->file_not_aligned;
        to->mem_alignment_bytes = smaller_known(to->mem_alignment_bytes, l->mem_alignment_bytes);
        to->mem_not_aligned += l->mem_not_aligned;
        if (l->max_read_time_s > to->max_read_time_s) {
            to->max_read_time_s = l->max_read_time_s;
            to->max_read_time_size = l->max_read_time_size;
        }
        if (l->max_write_time_s > to->max_write_time_s) {
            to->max_write_time_s = l->max_write_time_s;
            to->max_write_time_size = l->max_write_time_size;
        }
    }
    m->ranks++;
    for (int i = 0; i < l->common_size_count && i < VIGIL_REPORT_COMMON; i++)
        add_candidate(&m->sizes, &l->common_sizes[i]);
    for (int i = 0; i < l->common_stride_count && i < VIGIL_REPORT_COMMON; i++)
        add_candidate(&m->strides, &l->common_strides[i]);
}

/* Darshan's order: most common first; on equal counts the larger value. */
static int most_common_first(const void *a, const void *b)
{
    const struct vigil_report_common *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->value < y->value) - (x->value > y->value);
}

static int take_top(struct preload_common_candidates *c, int ranks, struct vigil_report_common *out)
{
    for (int i = 0; i < c->count; i++)
        c->items[i].exact = c->exact_ranks[i] == ranks;
    qsort(c->items, (size_t)c->count, sizeof c->items[0], most_common_first);
    int n = c->count < VIGIL_REPORT_COMMON ? c->count : VIGIL_REPORT_COMMON;
    memcpy(out, c->items, (size_t)n * sizeof *out);
    return n;
}

void preload_job_layer_finish(struct preload_job_layer *m)
{
    m->layer.common_size_count = take_top(&m->sizes, m->ranks, m->layer.common_sizes);
    m->layer.common_stride_count = take_top(&m->strides, m->ranks, m->layer.common_strides);
}
