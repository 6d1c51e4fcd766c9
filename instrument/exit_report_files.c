/* vigil — every file's figures for the end-of-run report: the counts and
 * Darshan counters of each file (file_stats.c) with what threads still
 * hold, the busiest first, each with its mount point and file-system type;
 * and the process's timeline.
 *
 * Runs at exit, like report.c: no heap (mmap instead), no stdio. */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "mpiio_files.h"
#include "exit_report.h"

/* One file while the figures are put together. */
struct gathered {
    uint32_t file_id;
    uint64_t calls, read_bytes, written_bytes;
    struct preload_layer_stats layer[PRELOAD_STATS_LAYERS];
    bool seen;
};

struct gathering {
    /* The files in the order they were first used, and where each id is
     * among them (index + 1; 0: not used). File ids are hash slots, spread
     * over the whole table: a gathering indexed by id would touch every page
     * of 65,536 records (70 MB) at every exit, 0.3 s here. */
    struct gathered *files;
    uint32_t *index_of;
    uint32_t slots, used;
    /* The timeline, with what threads hold. */
    uint32_t shift;
    uint64_t timeline[2][PRELOAD_TIMELINE_BINS];
};

static void *map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void add_pending(uint32_t file_id, const struct preload_pending *p, void *user)
{
    struct gathering *g = user;
    if (file_id < g->slots && g->index_of[file_id] != 0) {
        struct gathered *f = &g->files[g->index_of[file_id] - 1];
        f->calls += __atomic_load_n(&p->calls, __ATOMIC_RELAXED);
        f->read_bytes += __atomic_load_n(&p->read_bytes, __ATOMIC_RELAXED);
        f->written_bytes += __atomic_load_n(&p->written_bytes, __ATOMIC_RELAXED);
        for (int layer = 0; layer < PRELOAD_STATS_LAYERS; layer++)
            preload_layer_merge(&f->layer[layer], &p->stats[layer]);
    }
}

/* The thread's timeline bin, at the timeline's (coarser or equal) width. */
static void add_pending_bin(const struct preload_thread_counters *c, void *user)
{
    struct gathering *g = user;
    uint64_t bin = c->timeline_bin;
    if (g->shift >= c->timeline_shift)
        bin >>= g->shift - c->timeline_shift;
    if (bin >= PRELOAD_TIMELINE_BINS)
        bin = PRELOAD_TIMELINE_BINS - 1;
    g->timeline[0][bin] += c->timeline_bytes[0];
    g->timeline[1][bin] += c->timeline_bytes[1];
}

/* ---- mounts --------------------------------------------------------------------------------- */

#define MOUNTS_MAX       512
#define MOUNT_TEXT_BYTES (128u << 10)

static struct {
    char text[MOUNT_TEXT_BYTES];
    const char *point[MOUNTS_MAX], *type[MOUNTS_MAX];
    size_t point_length[MOUNTS_MAX];
    uint64_t block_bytes[MOUNTS_MAX]; /* Darshan's FILE_ALIGNMENT; 0: not asked yet */
    int count;
} mounts;

/* /proc/self/mounts's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s)
{
    char *out = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
            p[3] >= '0' && p[3] <= '7') {
            *out++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *out++ = *p;
        }
    }
    *out = '\0';
}

static void read_mounts(void)
{
    mounts.count = 0;
    int fd = open("/proc/self/mounts", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    size_t length = 0;
    ssize_t n;
    while (length < sizeof mounts.text - 1 &&
           (n = read(fd, mounts.text + length, sizeof mounts.text - 1 - length)) > 0)
        length += (size_t)n;
    close(fd);
    mounts.text[length] = '\0';
    char *save = NULL;
    for (char *line = strtok_r(mounts.text, "\n", &save); line && mounts.count < MOUNTS_MAX;
         line = strtok_r(NULL, "\n", &save)) {
        /* device mount-point type options dump pass */
        char *point = strchr(line, ' ');
        char *type = point ? strchr(point + 1, ' ') : NULL;
        char *end = type ? strchr(type + 1, ' ') : NULL;
        if (end == NULL)
            continue;
        *point++ = '\0';
        *type++ = '\0';
        *end = '\0';
        unescape(point);
        mounts.point[mounts.count] = point;
        mounts.point_length[mounts.count] = strlen(point);
        mounts.block_bytes[mounts.count] = 0;
        mounts.type[mounts.count++] = type;
    }
}

/* The mount a path is on: the longest mount point it is under; the last
 * listed wins a tie (it is mounted over the others). */
static int mount_of(const char *path, size_t length, const char **point, const char **type)
{
    *point = "/";
    *type = "";
    int found = -1;
    if (length == 0 || path[0] != '/')
        return found; /* <stdin> and kin */
    size_t best = 0;
    for (int i = 0; i < mounts.count; i++) {
        size_t n = mounts.point_length[i];
        bool under = n == 1 ? true
                            : n <= length && memcmp(path, mounts.point[i], n) == 0 &&
                                  (n == length || path[n] == '/');
        if (under && n >= best) {
            best = n;
            *point = mounts.point[i];
            *type = mounts.type[i];
            found = i;
        }
    }
    return found;
}

/* The block size of a mount (statfs, once), for a file whose POSIX
 * record had none from an open (only stat or inherited descriptors): as
 * Darshan, which gives every record its mount's. 0: not known. */
static uint64_t mount_block_bytes(int mount)
{
    if (mount < 0)
        return 0;
    if (mounts.block_bytes[mount] == 0) {
        struct statfs fs;
        mounts.block_bytes[mount] = statfs(mounts.point[mount], &fs) == 0
                                        ? preload_block_bytes((long)fs.f_type, (long)fs.f_bsize)
                                        : UINT64_MAX;
    }
    return mounts.block_bytes[mount] == UINT64_MAX ? 0 : mounts.block_bytes[mount];
}

/* ---- the figures ---------------------------------------------------------------------------- */

static bool busier(const struct vigil_report_file *a, const struct vigil_report_file *b)
{
    uint64_t bytes_a = a->read_bytes + a->written_bytes, bytes_b = b->read_bytes + b->written_bytes;
    if (bytes_a != bytes_b)
        return bytes_a > bytes_b;
    if (a->calls != b->calls)
        return a->calls > b->calls;
    size_t n = a->path_bytes < b->path_bytes ? a->path_bytes : b->path_bytes;
    int c = memcmp(a->path, b->path, n);
    return c != 0 ? c < 0 : a->path_bytes < b->path_bytes;
}

/* Heapsort, the busiest first: qsort may allocate. */
static void sift(struct vigil_report_file *f, size_t at, size_t count)
{
    for (;;) {
        size_t child = 2 * at + 1;
        if (child >= count)
            return;
        /* A min-heap of busyness: the least busy at the top goes last. */
        if (child + 1 < count && busier(&f[child], &f[child + 1]))
            child++;
        if (!busier(&f[at], &f[child]))
            return;
        struct vigil_report_file t = f[at];
        f[at] = f[child];
        f[child] = t;
        at = child;
    }
}

static void sort_busiest_first(struct vigil_report_file *f, size_t count)
{
    for (size_t i = count / 2; i-- > 0;)
        sift(f, i, count);
    for (size_t end = count; end-- > 1;) {
        struct vigil_report_file t = f[0];
        f[0] = f[end];
        f[end] = t;
        sift(f, 0, end);
    }
}

static double seconds(const struct vigil_tick_clock *clock, uint64_t ticks)
{
    return vigil_tick_clock_duration_ns(clock, ticks) / 1e9;
}

/* A time since the process started, or -1 for none. */
static double since_start(const struct vigil_tick_clock *clock, uint64_t ticks)
{
    if (ticks == 0)
        return -1;
    return ticks > preload.start.ticks ? seconds(clock, ticks - preload.start.ticks) : 0;
}

/* Reads or writes: each is in one bin of the histogram (the hot path
 * counts nothing else). */
static uint64_t accesses(const uint64_t hist[PRELOAD_SIZE_BINS])
{
    uint64_t n = 0;
    for (int b = 0; b < PRELOAD_SIZE_BINS; b++)
        n += hist[b];
    return n;
}

/* Darshan's MAX_BYTE_*: the furthest access's last byte, 0 when none. */
static int64_t last_byte(int64_t end)
{
    return end > 0 ? end - 1 : 0;
}

static void layer_view(const struct preload_layer_stats *l, bool posix,
                       const struct vigil_tick_clock *clock, struct vigil_report_file_layer *v)
{
    const struct preload_file_shared *f = l->shared;
    *v = (struct vigil_report_file_layer){
        .reads = accesses(l->hist[0]),
        .writes = accesses(l->hist[1]),
        .opens = l->count[PRELOAD_KIND_OPEN], /* POSIX: dups and filenos added below */
        .seeks = l->count[PRELOAD_KIND_SEEK],
        .stats = l->count[PRELOAD_KIND_STAT],
        .fsyncs = l->count[PRELOAD_KIND_FSYNC],
        .other = l->count[PRELOAD_KIND_OTHER],
        .read_bytes = l->bytes[0],
        .written_bytes = l->bytes[1],
        .max_read_offset = last_byte(l->max_end[0]),
        .max_written_offset = last_byte(l->max_end[1]),
        .seq_reads = l->consec[0] + l->forward[0],
        .seq_writes = l->consec[1] + l->forward[1],
        .consec_reads = l->consec[0],
        .consec_writes = l->consec[1],
        .read_time_s = seconds(clock, l->time[0]),
        .write_time_s = seconds(clock, l->time[1]),
        .meta_time_s = seconds(clock, l->time[2]),
        .first_open_s = since_start(clock, l->first_open),
        .last_close_s = since_start(clock, l->last_close),
        .first_io_s = since_start(clock, l->first_io),
        .last_io_s = since_start(clock, l->last_io),
        .mode = -1,
        .file_not_aligned = l->file_not_aligned,
        .mem_not_aligned = l->mem_not_aligned,
        .max_read_time_s = seconds(clock, l->max_time[0]),
        .max_write_time_s = seconds(clock, l->max_time[1]),
        .max_read_time_size = l->max_time_size[0],
        .max_write_time_size = l->max_time_size[1],
    };
    if (posix && f != NULL) { /* Darshan's STDIO module has none of these */
        v->rw_switches = atomic_load_explicit(&f->rw_switches, memory_order_relaxed);
        v->fdatasyncs = atomic_load_explicit(&f->fdatasyncs, memory_order_relaxed);
        v->filenos = atomic_load_explicit(&f->filenos, memory_order_relaxed);
        v->dups = atomic_load_explicit(&f->dups, memory_order_relaxed);
        v->opens += v->dups + v->filenos; /* Darshan's REFOPEN: opens too */
        int64_t mode = atomic_load_explicit(&f->mode, memory_order_relaxed);
        v->mode = mode != 0 ? mode : -1; /* none given (Darshan: 0) */
        v->file_alignment_bytes = atomic_load_explicit(&f->alignment_bytes, memory_order_relaxed);
        v->mem_alignment_bytes = PRELOAD_MEM_ALIGNMENT_BYTES;
    }
    memcpy(v->read_size_hist, l->hist[0], sizeof v->read_size_hist);
    memcpy(v->write_size_hist, l->hist[1], sizeof v->write_size_hist);
    v->common_size_count = preload_common_top(&l->sizes, v->common_sizes);
    v->common_stride_count = preload_common_top(&l->strides, v->common_strides);
}

static bool layer_any(const struct preload_layer_stats *l)
{
    for (int k = 0; k < PRELOAD_KIND_COUNT; k++)
        if (l->count[k] != 0)
            return true;
    return l->last_io != 0; /* a read or write */
}

/* The previous report's arrays: a process may gather more than once (an
 * MPI rank's own report after the job's). */
static struct {
    void *files, *gathered, *index_of;
    size_t files_bytes, gathered_bytes, index_of_bytes;
} kept;

void preload_report_gather_files(struct vigil_report *r, const struct vigil_tick_clock *clock)
{
    static struct gathering g; /* the timeline: 1 KiB, not on the exiting thread's stack */
    r->file_count = 0;
    r->files = NULL;
    r->files_total = 0;
    r->files_untracked = preload_file_untracked();
    if (kept.files != NULL)
        munmap(kept.files, kept.files_bytes);
    if (kept.gathered != NULL)
        munmap(kept.gathered, kept.gathered_bytes);
    if (kept.index_of != NULL)
        munmap(kept.index_of, kept.index_of_bytes);
    kept.files = kept.gathered = kept.index_of = NULL;

    int bins;
    memset(&g, 0, sizeof g);
    g.shift = preload_timeline_get(g.timeline[0], g.timeline[1], &bins);
    uint32_t used = preload_file_count_used();
    g.slots = 1;
    for (uint32_t i = 0; i < used; i++)
        if (preload_file_used_id(i) + 1 > g.slots)
            g.slots = preload_file_used_id(i) + 1;
    g.used = used;
    kept.gathered_bytes = (used > 0 ? used : 1) * sizeof *g.files;
    g.files = map(kept.gathered_bytes);
    kept.gathered = g.files;
    kept.index_of_bytes = g.slots * sizeof *g.index_of;
    g.index_of = map(kept.index_of_bytes);
    kept.index_of = g.index_of;
    if (g.index_of == NULL)
        g.files = NULL;
    for (uint32_t i = 0; g.files != NULL && i < used; i++) {
        uint32_t id = preload_file_used_id(i);
        struct gathered *f = &g.files[i];
        g.index_of[id] = i + 1;
        f->file_id = id;
        f->seen = true;
        preload_file_counts(id, &f->calls, &f->read_bytes, &f->written_bytes);
        preload_file_stats_get(id, f->layer);
    }
    if (g.files != NULL)
        preload_counters_visit_pending(add_pending, add_pending_bin, &g);

    /* The timeline: bins of 2^shift ticks, as many as the run used. */
    struct vigil_report_timeline *t = &r->timeline;
    t->bin_s = seconds(clock, UINT64_C(1) << g.shift);
    t->bins = 0;
    for (int i = 0; i < PRELOAD_TIMELINE_BINS; i++) {
        t->read_bytes[i] = g.timeline[0][i];
        t->written_bytes[i] = g.timeline[1][i];
        if (t->read_bytes[i] != 0 || t->written_bytes[i] != 0)
            t->bins = i + 1;
    }
    (void)bins;
    if (g.files == NULL)
        return;

    size_t count = 0;
    for (uint32_t i = 0; i < g.used; i++) {
        const struct gathered *f = &g.files[i];
        count += f->seen && (f->calls > 0 || layer_any(&f->layer[0]) || layer_any(&f->layer[1]));
    }
    if (count == 0)
        return;
    kept.files_bytes = count * sizeof(struct vigil_report_file);
    struct vigil_report_file *files = map(kept.files_bytes);
    kept.files = files;
    if (files == NULL)
        return;
    read_mounts();
    size_t n = 0;
    for (uint32_t i = 0; i < g.used && n < count; i++) {
        const struct gathered *f = &g.files[i];
        uint32_t id = f->file_id;
        if (!f->seen || !(f->calls > 0 || layer_any(&f->layer[0]) || layer_any(&f->layer[1])))
            continue;
        struct vigil_report_file *v = &files[n++];
        v->path = preload_file_path(id, &v->path_bytes);
        if (v->path == NULL) {
            v->path = "?";
            v->path_bytes = 1;
        }
        int mount = mount_of(v->path, v->path_bytes, &v->mount, &v->fs_type);
        v->calls = f->calls;
        v->read_bytes = f->read_bytes;
        v->written_bytes = f->written_bytes;
        v->has_layers = true;
        layer_view(&f->layer[0], true, clock, &v->posix);
        if (v->posix.file_alignment_bytes == 0 && layer_any(&f->layer[0]))
            v->posix.file_alignment_bytes = mount_block_bytes(mount);
        v->has_stdio = layer_any(&f->layer[1]);
        if (v->has_stdio)
            layer_view(&f->layer[1], false, clock, &v->stdio);
        v->has_mpiio = preload_mpiio_file_figures(id, clock, &v->mpiio);
    }
    sort_busiest_first(files, n);
    r->files = files;
    r->file_count = (int)n;
    r->files_total = n;
}
