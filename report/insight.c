/* vigil — findings from a report's figures (vigil/insight.h).
 *
 * Each finding is one function over the report: the run's or the job's
 * figures first, then each kind over the files, the busiest first, naming
 * at most VIGIL_INSIGHT_PER_KIND files. A finding needs its counters: a
 * counter a report does not fill (0, as file_alignment_bytes where the file
 * system's block is not known) raises nothing. Run at exit by the preload
 * library: no heap, no GLib. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vigil/insight.h"

/* Darshan's size-bin upper edges (report.h's VIGIL_REPORT_SIZE_BINS). */
static const uint64_t bin_edges[VIGIL_REPORT_SIZE_BINS - 1] = {
    100, 1024, 10240, 102400, 1048576, 4194304, 10485760, 104857600, 1073741824,
};

/* ---- writing findings ---------------------------------------------------------------------- */

struct finder {
    struct vigil_report *r;
    const struct vigil_insight_thresholds *t;
    const struct vigil_insight_process *process; /* NULL: nothing */
    struct vigil_insight_findings *out;
    int rank; /* of findings about one of the report's files */
};

__attribute__((format(printf, 6, 7))) static void add(struct finder *fd, const char *id,
                                                      const char *severity,
                                                      const struct vigil_report_file *f,
                                                      const char *advice, const char *fmt, ...)
{
    struct vigil_insight_findings *out = fd->out;
    if (out->count >= VIGIL_INSIGHT_MAX)
        return;
    char *evidence = out->evidence[out->count];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(evidence, VIGIL_INSIGHT_TEXT_BYTES, fmt, ap);
    va_end(ap);
    out->findings[out->count++] = (struct vigil_report_finding){
        .id = id,
        .severity = severity,
        .file = f != NULL ? f->path : NULL,
        .file_bytes = f != NULL ? f->path_bytes : 0,
        .rank = f != NULL ? fd->rank : -1,
        .evidence = evidence,
        .advice = advice,
    };
}

/* "1 KiB", "100 B", "4 MiB", "1.5 GiB". */
static void bytes_text(char *out, size_t size, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int unit = 0;
    while (bytes >= 1024 && unit < 5) {
        bytes /= 1024;
        unit++;
    }
    if (bytes == (double)(uint64_t)bytes)
        snprintf(out, size, "%llu %s", (unsigned long long)bytes, units[unit]);
    else
        snprintf(out, size, "%.1f %s", bytes, units[unit]);
}

static double percent(uint64_t part, uint64_t whole)
{
    return whole > 0 ? 100.0 * (double)part / (double)whole : 0;
}

static bool at_least_share(uint64_t part, uint64_t whole, double share)
{
    return whole > 0 && (double)part >= share * (double)whole;
}

/* ---- the run's findings -------------------------------------------------------------------- */

/* A file's own time: its MPI-IO time when it used MPI-IO (the POSIX calls
 * under it are inside that time), else its POSIX and stdio time. */
static double file_io_s(const struct vigil_report_file *f)
{
    if (f->has_mpiio)
        return f->mpiio.read_time_s + f->mpiio.write_time_s + f->mpiio.meta_time_s;
    const struct vigil_report_file_layer *p = &f->posix, *s = &f->stdio;
    double seconds = p->read_time_s + p->write_time_s + p->meta_time_s;
    if (f->has_stdio)
        seconds += s->read_time_s + s->write_time_s + s->meta_time_s;
    return seconds;
}

static void io_time_share(struct finder *fd)
{
    const struct vigil_report *r = fd->r;
    double io_s = 0, run_s = r->runtime_ms / 1000;
    if (r->ranks > 0) { /* the slowest rank's, against the longest rank's run */
        io_s = r->per_rank[VIGIL_REPORT_RANK_IO_TIME_SECONDS].max;
        run_s = r->per_rank[VIGIL_REPORT_RANK_RUNTIME_MS].max / 1000;
    } else {
        for (int i = 0; i < r->file_count; i++)
            io_s += r->files[i].has_layers ? file_io_s(&r->files[i]) : 0;
    }
    if (io_s < fd->t->io_time_min_s || run_s <= 0 || io_s < fd->t->io_time_share * run_s)
        return;
    add(fd, "io_time_share", "info", NULL,
        "I/O bounds this run: see the other findings for where; else overlap I/O with "
        "computation (non-blocking or background writes) or move less data (fewer "
        "checkpoints, compression).",
        "%.1f s of the %.1f s run (%.0f %%) went to I/O calls%s", io_s, run_s, 100.0 * io_s / run_s,
        r->ranks > 0 ? " on the busiest rank" : "");
}

static void rank_imbalance(struct finder *fd)
{
    const struct vigil_report *r = fd->r;
    const struct vigil_insight_thresholds *t = fd->t;
    if (r->ranks < 2)
        return;
    static const char *const advice =
        "Spread the data evenly over the ranks, or let MPI-IO collective I/O (aggregators on "
        "every node) share the work: the job waits for its slowest rank.";
    static const struct {
        enum vigil_report_rank_metric metric;
        const char *verb;
    } byte_metrics[] = {{VIGIL_REPORT_RANK_IO_BYTES_READ, "read"},
                        {VIGIL_REPORT_RANK_IO_BYTES_WRITTEN, "wrote"}};
    for (size_t i = 0; i < sizeof byte_metrics / sizeof byte_metrics[0]; i++) {
        const struct vigil_report_rank_stats *st = &r->per_rank[byte_metrics[i].metric];
        if (st->sum < (double)t->imbalance_min_bytes || st->mean <= 0 ||
            st->max < t->imbalance_ratio * st->mean)
            continue;
        char most[32], mean[32];
        bytes_text(most, sizeof most, st->max);
        bytes_text(mean, sizeof mean, st->mean);
        add(fd, "rank_imbalance", "warning", NULL, advice,
            "rank %d %s %s, %.1f times the mean of %s over %d ranks", (int)st->max_rank,
            byte_metrics[i].verb, most, st->max / st->mean, mean, (int)r->ranks);
        fd->out->findings[fd->out->count - 1].rank = st->max_rank;
    }
    const struct vigil_report_rank_stats *io = &r->per_rank[VIGIL_REPORT_RANK_IO_TIME_SECONDS];
    if (io->max >= t->imbalance_min_io_s && io->mean > 0 &&
        io->max >= t->imbalance_ratio * io->mean) {
        add(fd, "rank_imbalance", "warning", NULL, advice,
            "rank %d spent %.1f s in I/O, %.1f times the mean of %.1f s over %d ranks",
            (int)io->max_rank, io->max, io->max / io->mean, io->mean, (int)r->ranks);
        fd->out->findings[fd->out->count - 1].rank = io->max_rank;
    }
}

static void metadata_heavy(struct finder *fd)
{
    const struct vigil_report *r = fd->r;
    uint64_t meta = 0, data = 0;
    double meta_s = 0;
    for (int i = 0; i < r->file_count; i++) {
        const struct vigil_report_file *f = &r->files[i];
        if (!f->has_layers)
            continue;
        meta += f->posix.opens + f->posix.stats + f->stdio.opens;
        data += f->posix.reads + f->posix.writes + f->stdio.reads + f->stdio.writes;
        meta_s += f->posix.meta_time_s + f->stdio.meta_time_s;
    }
    /* A job's report sums its ranks' calls: the minimum is per rank. */
    uint64_t ranks = r->ranks > 0 ? (uint64_t)r->ranks : 1;
    if (meta < fd->t->metadata_min_calls * ranks ||
        !at_least_share(meta, meta + data, fd->t->metadata_share))
        return;
    add(fd, "metadata_heavy", "warning", NULL,
        "Open each file once and keep it open, and keep what stat says rather than asking "
        "again: on a parallel file system every open and stat is a round trip to its metadata "
        "server.",
        "%llu opens and stats against %llu reads and writes (%.1f %% of these calls), %.3f s in "
        "metadata calls",
        (unsigned long long)meta, (unsigned long long)data, percent(meta, meta + data), meta_s);
}

static void many_small_files(struct finder *fd)
{
    const struct vigil_report *r = fd->r;
    uint64_t small = 0, bytes = 0;
    for (int i = 0; i < r->file_count; i++) {
        const struct vigil_report_file *f = &r->files[i];
        uint64_t moved = f->read_bytes + f->written_bytes;
        if (moved > 0 && moved < fd->t->small_file_bytes) {
            small++;
            bytes += moved;
        }
    }
    /* A job's report merges its ranks' files: "per rank" is the mean. */
    uint64_t ranks = r->ranks > 0 ? (uint64_t)r->ranks : 1;
    if (small < fd->t->small_files_min * ranks)
        return;
    char limit[32], total[32];
    bytes_text(limit, sizeof limit, (double)fd->t->small_file_bytes);
    bytes_text(total, sizeof total, (double)bytes);
    add(fd, "many_small_files", "warning", NULL,
        "Pack small files into fewer, larger ones (an archive, HDF5, one file per rank rather "
        "than per step) or keep the data in memory: each file costs the file system a create, "
        "an open and a close.",
        "%llu files (%llu per rank) each had less than %s read and written, %s in all",
        (unsigned long long)small, (unsigned long long)(small / ranks), limit, total);
}

/* ---- the files' findings ------------------------------------------------------------------- */

/* One kind of finding about one file: true when it raised one. */
typedef bool (*file_rule)(struct finder *fd, const struct vigil_report_file *f);

static bool small_accesses(struct finder *fd, const struct vigil_report_file *f)
{
    const struct vigil_report_file_layer *p = &f->posix;
    uint64_t accesses = p->reads + p->writes, small = 0;
    if (accesses < fd->t->min_accesses)
        return false;
    for (int i = 0; i < VIGIL_REPORT_SIZE_BINS - 1 && bin_edges[i] <= fd->t->small_access_bytes;
         i++)
        small += p->read_size_hist[i] + p->write_size_hist[i];
    if (!at_least_share(small, accesses, fd->t->small_access_share))
        return false;
    char limit[32];
    bytes_text(limit, sizeof limit, (double)fd->t->small_access_bytes);
    add(fd, "small_accesses", "warning", f,
        "Make fewer, larger requests (1 MiB or more on a parallel file system): gather the "
        "data in memory and write it in large blocks, or let MPI-IO collective I/O or a "
        "library such as HDF5 aggregate it.",
        "%llu of %llu POSIX reads and writes (%.1f %%) moved at most %s each",
        (unsigned long long)small, (unsigned long long)accesses, percent(small, accesses), limit);
    return true;
}

static bool misaligned_accesses(struct finder *fd, const struct vigil_report_file *f)
{
    const struct vigil_report_file_layer *p = &f->posix;
    uint64_t accesses = p->reads + p->writes;
    if (p->file_alignment_bytes == 0 || accesses < fd->t->min_accesses ||
        !at_least_share(p->file_not_aligned, accesses, fd->t->misaligned_share))
        return false;
    add(fd, "misaligned_accesses", "warning", f,
        "Start accesses on the file system's block (pad records to it, or choose a record "
        "size that divides it); on a parallel file system, match the stripe size (lfs "
        "setstripe, MPI-IO's striping_unit hint) to the access size.",
        "%llu of %llu POSIX reads and writes (%.1f %%) did not start on a multiple of the "
        "file system's %llu-byte block",
        (unsigned long long)p->file_not_aligned, (unsigned long long)accesses,
        percent(p->file_not_aligned, accesses), (unsigned long long)p->file_alignment_bytes);
    return true;
}

static bool random_access(struct finder *fd, const struct vigil_report_file *f)
{
    const struct vigil_report_file_layer *p = &f->posix;
    uint64_t accesses = p->reads + p->writes, seq = p->seq_reads + p->seq_writes;
    if (accesses < fd->t->min_accesses || at_least_share(seq, accesses, fd->t->sequential_share))
        return false;
    add(fd, "random_access", "warning", f,
        "Read and write in file order: sort the requests by offset, or gather them (a staging "
        "buffer, MPI-IO collective I/O) so that the file system sees large sequential "
        "accesses it can read ahead and merge.",
        "only %llu of %llu POSIX reads and writes (%.1f %%) began after the previous one ended, "
        "%llu right at its end",
        (unsigned long long)seq, (unsigned long long)accesses, percent(seq, accesses),
        (unsigned long long)(p->consec_reads + p->consec_writes));
    return true;
}

/* Whether the process made the file's stream unbuffered. */
static bool made_unbuffered(const struct finder *fd, const struct vigil_report_file *f)
{
    const struct vigil_insight_process *p = fd->process;
    for (int i = 0; p != NULL && i < p->unbuffered_count; i++)
        if (p->unbuffered_bytes[i] == f->path_bytes &&
            memcmp(p->unbuffered_paths[i], f->path, f->path_bytes) == 0)
            return true;
    return false;
}

static bool unbuffered_stdio(struct finder *fd, const struct vigil_report_file *f)
{
    const struct vigil_report_file_layer *s = &f->stdio;
    if (!f->has_stdio || s->writes < fd->t->min_accesses ||
        s->written_bytes > fd->t->small_access_bytes * s->writes)
        return false;
    static const char advice[] =
        "Let stdio buffer: no fflush after every write and no setvbuf(_IONBF); give the "
        "stream a large buffer (setvbuf with 1 MiB) and flush when the data must be out.";
    double mean = (double)s->written_bytes / (double)s->writes;
    /* Unbuffered, each write goes to the kernel alone, where no wrapper
     * sees it. */
    if (made_unbuffered(fd, f)) {
        add(fd, "unbuffered_stdio", "warning", f, advice,
            "%llu stdio writes of %.0f bytes on average to a stream made unbuffered, each a "
            "write to the kernel of its own",
            (unsigned long long)s->writes, mean);
        return true;
    }
    /* Else what reached the kernel one stdio write at a time: a flush after
     * each (stdio's fsyncs are its fflushes), or the POSIX writes under it
     * where those are seen. */
    uint64_t to_kernel = f->posix.writes > s->fsyncs ? f->posix.writes : s->fsyncs;
    if (!at_least_share(to_kernel, s->writes, fd->t->stdio_flush_share))
        return false;
    add(fd, "unbuffered_stdio", "warning", f, advice,
        "%llu stdio writes of %.0f bytes on average, with %llu flushes and %llu POSIX writes "
        "on the file",
        (unsigned long long)s->writes, mean, (unsigned long long)s->fsyncs,
        (unsigned long long)f->posix.writes);
    return true;
}

static bool repeated_open(struct finder *fd, const struct vigil_report_file *f)
{
    uint64_t opens = f->posix.opens + (f->has_stdio ? f->stdio.opens : 0);
    /* A job's report sums its ranks' opens: a shared file opened once by
     * each rank is not this. */
    uint64_t ranks = f->has_ranks && f->ranks.count > 1 ? (uint64_t)f->ranks.count : 1;
    if (opens / ranks < fd->t->repeated_opens)
        return false;
    if (ranks > 1)
        add(fd, "repeated_open", "warning", f,
            "Open the file once and keep the descriptor or stream for the run: each open and "
            "close costs a metadata round trip, and a close may wait for the data.",
            "opened %llu times by %llu ranks (%llu each on average)", (unsigned long long)opens,
            (unsigned long long)ranks, (unsigned long long)(opens / ranks));
    else
        add(fd, "repeated_open", "warning", f,
            "Open the file once and keep the descriptor or stream for the run: each open and "
            "close costs a metadata round trip, and a close may wait for the data.",
            "opened %llu times, for %llu reads and writes", (unsigned long long)opens,
            (unsigned long long)(f->posix.reads + f->posix.writes + f->stdio.reads +
                                 f->stdio.writes));
    return true;
}

static bool fsync_per_write(struct finder *fd, const struct vigil_report_file *f)
{
    const struct vigil_report_file_layer *p = &f->posix;
    uint64_t syncs = p->fsyncs + p->fdatasyncs;
    if (syncs < fd->t->fsync_min_calls || !at_least_share(syncs, p->writes, fd->t->fsync_per_write))
        return false;
    add(fd, "fsync_per_write", "warning", f,
        "Sync once, when the data must be durable (at the end of a checkpoint), not after "
        "every write: each fsync waits for the storage.",
        "%llu fsync and fdatasync calls for %llu writes (one every %.1f writes)",
        (unsigned long long)syncs, (unsigned long long)p->writes,
        (double)p->writes / (double)syncs);
    return true;
}

static bool independent_mpiio(struct finder *fd, const struct vigil_report_file *f)
{
    const struct vigil_report_file_mpiio *m = &f->mpiio;
    if (!f->has_mpiio || !f->has_ranks || f->ranks.count < 2)
        return false;
    uint64_t indep = m->indep_reads + m->indep_writes;
    uint64_t coll = m->coll_reads + m->coll_writes + m->split_reads + m->split_writes;
    uint64_t calls = indep + m->nb_reads + m->nb_writes;
    if (coll > 0 || indep < fd->t->min_accesses ||
        m->read_bytes + m->written_bytes >= fd->t->collective_below_bytes * calls)
        return false;
    char mean[32];
    bytes_text(mean, sizeof mean, (double)(m->read_bytes + m->written_bytes) / (double)calls);
    add(fd, "independent_mpiio", "warning", f,
        "Use the collective calls (MPI_File_write_all, MPI_File_read_at_all, ...): MPI-IO "
        "then gathers the ranks' small pieces into large contiguous accesses by a few "
        "aggregators (two-phase I/O).",
        "%d ranks made %llu independent MPI-IO reads and writes of %s on average, and no "
        "collective one",
        (int)f->ranks.count, (unsigned long long)indep, mean);
    return true;
}

void vigil_insight_find(struct vigil_report *r, const struct vigil_insight_thresholds *t,
                        const struct vigil_insight_process *process, const char *source,
                        struct vigil_insight_findings *out)
{
    out->count = 0;
    struct finder fd = {
        .r = r, .t = t, .process = process, .out = out, .rank = r->ranks > 0 ? -1 : r->rank};
    io_time_share(&fd);
    rank_imbalance(&fd);
    metadata_heavy(&fd);
    many_small_files(&fd);
    static const file_rule rules[] = {small_accesses,   misaligned_accesses, random_access,
                                      unbuffered_stdio, repeated_open,       fsync_per_write,
                                      independent_mpiio};
    for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++) {
        int named = 0;
        for (int i = 0; i < r->file_count && named < VIGIL_INSIGHT_PER_KIND; i++)
            if (r->files[i].has_layers && rules[k](&fd, &r->files[i]))
                named++;
    }
    r->findings_thresholds = source;
    r->finding_count = out->count;
    r->findings = out->findings;
}
