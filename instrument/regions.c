/* vigil — code regions: vigil_region_begin/end (vigil/vigil.h) and
 * likwid's markers, as libvigil-preload.so follows them.
 *
 * Each thread keeps a stack of its open regions. A begin notes a snapshot
 * of the thread's figures: its I/O counters (counters.c: the per-thread
 * block that the wrappers already keep, summed over the operations that
 * read and write), the monotonic clock, the thread's CPU clock, and the
 * process's energy as vigild last published it into the ring's header
 * (vigil_ring_read_energy), extrapolated to now with the power of the last
 * tick. An end takes the same snapshot and adds the differences to the
 * region's totals. So a wrapped I/O call pays nothing for regions: the
 * cost is all at the region's begin and end. Figures are inclusive: a
 * region's I/O, time and energy include its nested regions', since they
 * happened while it was open.
 *
 * Names are interned once in a table of VIGIL_REPORT_REGIONS_MAX; lookups
 * are lock-free (a thread remembers the last names it used, by pointer,
 * and checks the text), inserts take a mutex. Nothing here can crash the
 * program: an end that names no open region, a recursion, a name past the
 * table, a stack past its depth or a call from a signal handler that
 * interrupted a region call are counted and reported, never fatal. */
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include "regions.h"
#include "vigil/local_protocol.h"

#define NAMES_MAX     VIGIL_REPORT_REGIONS_MAX
#define NAME_BYTES    64 /* 63 bytes and the NUL */
#define HASH_SLOTS    (2 * NAMES_MAX)
#define DEPTH_MAX     32 /* nesting a thread's stack follows */
#define THREADS_MAX   4096
#define CACHE_ENTRIES 4
#define UNTRACKED     UINT32_MAX /* a frame whose name is not in the table */

_Static_assert((HASH_SLOTS & (HASH_SLOTS - 1)) == 0, "hash slots: a power of two");
_Static_assert((unsigned)VIGIL_RING_ENERGY_ESTIMATED == (unsigned)VIGIL_LOCAL_ENERGY_ESTIMATED &&
                   (unsigned)VIGIL_RING_ENERGY_UNCERTAIN == (unsigned)VIGIL_LOCAL_ENERGY_UNCERTAIN,
               "the ring's energy flags are the protocol's");

/* A region's totals: every thread adds to them at its ends. */
struct region_totals {
    _Atomic uint64_t entered, calls, read_bytes, written_bytes, wall_ns, cpu_ns;
    _Atomic uint64_t energy_nj, energy_entries, energy_missing, energy_flags;
    _Atomic int64_t open; /* begun and not ended yet */
};

struct region_name {
    char text[NAME_BYTES];
    uint32_t hash;
};

static struct {
    struct region_name names[NAMES_MAX];
    struct region_totals totals[NAMES_MAX];
    _Atomic uint32_t hash_slots[HASH_SLOTS]; /* 0: empty; else name index + 1 */
    _Atomic uint32_t name_count;
    pthread_mutex_t insert_lock;
    _Atomic uint64_t names_dropped, unmatched_ends, closed_by_outer, too_deep, dropped_calls;
} table = {.insert_lock = PTHREAD_MUTEX_INITIALIZER};

/* One snapshot of the calling thread's figures. */
struct region_snapshot {
    uint64_t calls, read_bytes, written_bytes;
    uint64_t wall_ns, cpu_ns;
    double energy_j; /* NaN when vigild published none */
    double power_w;  /* the power it published last */
    uint32_t energy_flags;
};

struct region_frame {
    uint32_t index; /* in the names table, or UNTRACKED */
    /* Adds nothing at its end: the region was already open on this thread
     * (a recursion: the outer entry has the figures), or it began before
     * a fork, in the parent. */
    bool uncounted;
    struct region_snapshot begin;
};

struct region_thread {
    uint32_t depth;                /* may pass DEPTH_MAX: frames beyond it are only counted */
    int busy;                      /* inside a region call: a signal handler's call is dropped */
    uint16_t open_here[NAMES_MAX]; /* frames of each name on this stack */
    struct {
        const char *pointer;
        uint32_t index;
    } cache[CACHE_ENTRIES];
    uint32_t cache_next;
    struct region_frame frames[DEPTH_MAX];
};

/* Threads' stacks come from a pool mapped on first use, like the counter
 * blocks: nothing on the heap, nothing per thread for a program that has
 * no region. */
static struct region_thread *pool;
static _Atomic uint32_t pool_claimed;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static PRELOAD_TLS struct region_thread *current;

/* The operations whose bytes are file reads or writes (preload_op_reads_files). */
static uint16_t read_ops[VIGIL_OP_MAX_ID + 1], write_ops[VIGIL_OP_MAX_ID + 1];
static uint16_t valid_ops[VIGIL_OP_MAX_ID + 1];
static unsigned read_op_count, write_op_count, valid_op_count;

void preload_regions_init(void)
{
    read_op_count = write_op_count = valid_op_count = 0;
    for (unsigned op = 1; op <= VIGIL_OP_MAX_ID; op++) {
        if (!vigil_op_is_valid(op))
            continue;
        valid_ops[valid_op_count++] = (uint16_t)op;
        if (preload_op_reads_files(op))
            read_ops[read_op_count++] = (uint16_t)op;
        if (preload_op_writes_files(op))
            write_ops[write_op_count++] = (uint16_t)op;
    }
}

static void map_pool(void)
{
    void *map = mmap(NULL, (size_t)THREADS_MAX * sizeof *pool, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    pool = map == MAP_FAILED ? NULL : map;
}

static struct region_thread *thread_state(void)
{
    if (PRELOAD_LIKELY(current != NULL))
        return current;
    pthread_once(&pool_once, map_pool);
    if (pool == NULL)
        return NULL;
    uint32_t index = atomic_fetch_add_explicit(&pool_claimed, 1, memory_order_relaxed);
    if (index >= THREADS_MAX)
        return NULL;
    current = &pool[index];
    return current;
}

/* ---- names --------------------------------------------------------------------------------- */

/* FNV-1a of the first NAME_BYTES - 1 bytes, and their length. */
static uint32_t name_hash(const char *name, size_t *length)
{
    uint32_t h = 2166136261u;
    size_t n = 0;
    while (n < NAME_BYTES - 1 && name[n] != '\0') {
        h = (h ^ (unsigned char)name[n]) * 16777619u;
        n++;
    }
    *length = n;
    return h;
}

static bool name_is(const struct region_name *entry, const char *name, size_t length)
{
    return strncmp(entry->text, name, length) == 0 && entry->text[length] == '\0';
}

/* The name's index, UNTRACKED when it is not in the table; inserted when
 * `insert` and there is room. */
static uint32_t name_index(const char *name, bool insert)
{
    size_t length;
    uint32_t hash = name_hash(name, &length);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t probe = 0; probe < HASH_SLOTS; probe++) {
            uint32_t slot = (hash + probe) & (HASH_SLOTS - 1);
            uint32_t value = atomic_load_explicit(&table.hash_slots[slot], memory_order_acquire);
            if (value == 0)
                break;
            const struct region_name *entry = &table.names[value - 1];
            if (entry->hash == hash && name_is(entry, name, length))
                return value - 1;
        }
        if (!insert || pass == 1)
            return UNTRACKED;
        /* Not there: insert under the lock, after looking again (another
         * thread may have put it in meanwhile). */
        pthread_mutex_lock(&table.insert_lock);
        uint32_t found = UNTRACKED;
        uint32_t free_slot = UINT32_MAX;
        for (uint32_t probe = 0; probe < HASH_SLOTS; probe++) {
            uint32_t slot = (hash + probe) & (HASH_SLOTS - 1);
            uint32_t value = atomic_load_explicit(&table.hash_slots[slot], memory_order_relaxed);
            if (value == 0) {
                free_slot = slot;
                break;
            }
            if (table.names[value - 1].hash == hash &&
                name_is(&table.names[value - 1], name, length)) {
                found = value - 1;
                break;
            }
        }
        uint32_t count = atomic_load_explicit(&table.name_count, memory_order_relaxed);
        if (found == UNTRACKED && free_slot != UINT32_MAX && count < NAMES_MAX) {
            struct region_name *entry = &table.names[count];
            memcpy(entry->text, name, length);
            entry->text[length] = '\0';
            entry->hash = hash;
            atomic_store_explicit(&table.name_count, count + 1, memory_order_release);
            atomic_store_explicit(&table.hash_slots[free_slot], count + 1, memory_order_release);
            found = count;
        }
        pthread_mutex_unlock(&table.insert_lock);
        return found;
    }
    return UNTRACKED;
}

/* The thread remembers the last names it used by pointer (string
 * literals, mostly): a hit costs a compare of the text, not a hash. */
static uint32_t cached_index(struct region_thread *t, const char *name, bool insert)
{
    for (int i = 0; i < CACHE_ENTRIES; i++) {
        if (t->cache[i].pointer == name) {
            const struct region_name *entry = &table.names[t->cache[i].index];
            size_t length = strnlen(name, NAME_BYTES - 1);
            if (name_is(entry, name, length))
                return t->cache[i].index;
        }
    }
    uint32_t index = name_index(name, insert);
    if (index != UNTRACKED) {
        t->cache[t->cache_next].pointer = name;
        t->cache[t->cache_next].index = index;
        t->cache_next = (t->cache_next + 1) % CACHE_ENTRIES;
    }
    return index;
}

/* ---- snapshots ----------------------------------------------------------------------------- */

static uint64_t load(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void take_snapshot(struct region_snapshot *s)
{
    struct preload_thread_counters *c = preload_thread.counters;
    if (c == NULL)
        c = preload_counters_claim();
    s->calls = s->read_bytes = s->written_bytes = 0;
    for (unsigned i = 0; i < valid_op_count; i++)
        s->calls += load(&c->ops[valid_ops[i]].calls);
    for (unsigned i = 0; i < read_op_count; i++)
        s->read_bytes += load(&c->ops[read_ops[i]].bytes);
    for (unsigned i = 0; i < write_op_count; i++)
        s->written_bytes += load(&c->ops[write_ops[i]].bytes);
    /* The POSIX calls an MPI-IO call makes count once, as the report's
     * totals count them. */
    s->read_bytes -= load(&c->nested_read_bytes);
    s->written_bytes -= load(&c->nested_written_bytes);
    s->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    s->wall_ns = clock_ns(CLOCK_MONOTONIC);
    struct vigil_ring_energy e;
    if (preload.ring != NULL && vigil_ring_read_energy(preload.ring, &e)) {
        s->energy_j = vigil_ring_energy_at(&e, s->wall_ns);
        s->power_w = e.power_w;
        s->energy_flags = e.flags;
    } else {
        s->energy_j = s->power_w = NAN;
        s->energy_flags = 0;
    }
}

static uint64_t difference(uint64_t end, uint64_t begin)
{
    return end > begin ? end - begin : 0;
}

static void add(_Atomic uint64_t *total, uint64_t value)
{
    atomic_fetch_add_explicit(total, value, memory_order_relaxed);
}

/* Closes the thread's top frame with the figures of `now`. */
static void close_top(struct region_thread *t, const struct region_snapshot *now)
{
    t->depth--;
    if (t->depth >= DEPTH_MAX)
        return; /* beyond what the stack holds: only counted */
    const struct region_frame *f = &t->frames[t->depth];
    if (f->index == UNTRACKED)
        return;
    t->open_here[f->index]--;
    if (f->uncounted)
        return;
    struct region_totals *g = &table.totals[f->index];
    const struct region_snapshot *b = &f->begin;
    add(&g->entered, 1);
    add(&g->calls, difference(now->calls, b->calls));
    add(&g->read_bytes, difference(now->read_bytes, b->read_bytes));
    add(&g->written_bytes, difference(now->written_bytes, b->written_bytes));
    add(&g->wall_ns, difference(now->wall_ns, b->wall_ns));
    add(&g->cpu_ns, difference(now->cpu_ns, b->cpu_ns));
    double begin_j = b->energy_j;
    uint32_t flags = b->energy_flags | now->energy_flags;
    if (isnan(begin_j) && !isnan(now->energy_j) && b->wall_ns >= preload.start.ns) {
        /* Begun before vigild's first figure for the process (a region at
         * the start of main, usually): its energy is counted from the
         * process's start, which had none, at the power of the last tick,
         * and said to be uncertain. */
        begin_j = now->power_w * (double)(b->wall_ns - preload.start.ns) / 1e9;
        if (begin_j > now->energy_j)
            begin_j = now->energy_j;
        flags |= VIGIL_LOCAL_ENERGY_UNCERTAIN;
    }
    if (!isnan(begin_j) && !isnan(now->energy_j)) {
        /* An extrapolation at the begin may overshoot what the next tick
         * measured: never a negative energy. */
        double joules = now->energy_j > begin_j ? now->energy_j - begin_j : 0;
        add(&g->energy_nj, (uint64_t)(joules * 1e9 + 0.5));
        add(&g->energy_entries, 1);
        atomic_fetch_or_explicit(&g->energy_flags, flags, memory_order_relaxed);
    } else {
        add(&g->energy_missing, 1);
    }
    atomic_fetch_sub_explicit(&g->open, 1, memory_order_relaxed);
}

/* ---- begin and end ------------------------------------------------------------------------- */

void preload_region_begin(const char *name)
{
    if (PRELOAD_UNLIKELY(!atomic_load_explicit(&preload.active, memory_order_relaxed)))
        return;
    struct region_thread *t = thread_state();
    if (t == NULL || t->busy || name == NULL) {
        add(&table.dropped_calls, 1);
        return;
    }
    t->busy = 1;
    uint32_t index = cached_index(t, name, true);
    if (index == UNTRACKED)
        add(&table.names_dropped, 1);
    if (t->depth >= DEPTH_MAX) {
        add(&table.too_deep, 1);
        t->depth++;
        t->busy = 0;
        return;
    }
    struct region_frame *f = &t->frames[t->depth];
    f->index = index;
    f->uncounted = index != UNTRACKED && t->open_here[index] > 0;
    if (index != UNTRACKED) {
        t->open_here[index]++;
        if (!f->uncounted)
            atomic_fetch_add_explicit(&table.totals[index].open, 1, memory_order_relaxed);
    }
    t->depth++;
    /* Last, so that the region's own bookkeeping is not in its figures. */
    if (index != UNTRACKED && !f->uncounted)
        take_snapshot(&f->begin);
    t->busy = 0;
}

void preload_region_end(const char *name)
{
    if (PRELOAD_UNLIKELY(!atomic_load_explicit(&preload.active, memory_order_relaxed)))
        return;
    struct region_snapshot now;
    struct region_thread *t = current;
    if (t == NULL || t->busy || name == NULL) {
        add(t == NULL ? &table.unmatched_ends : &table.dropped_calls, 1);
        return;
    }
    t->busy = 1;
    if (t->depth == 0) {
        add(&table.unmatched_ends, 1);
        t->busy = 0;
        return;
    }
    if (t->depth > DEPTH_MAX) {
        t->depth--; /* a frame only counted: trusted to be this one */
        t->busy = 0;
        return;
    }
    uint32_t index = cached_index(t, name, false);
    /* The innermost open frame of that name; an untracked name matches an
     * untracked frame on top. */
    uint32_t at = t->depth;
    if (index == UNTRACKED) {
        if (t->frames[t->depth - 1].index == UNTRACKED)
            at = t->depth - 1;
    } else if (t->open_here[index] > 0) {
        for (at = t->depth; at-- > 0;)
            if (t->frames[at].index == index)
                break;
    }
    if (at == t->depth) {
        add(&table.unmatched_ends, 1);
        t->busy = 0;
        return;
    }
    take_snapshot(&now);
    /* Regions left open inside it end with it, counted as such. */
    while (t->depth > at + 1) {
        add(&table.closed_by_outer, 1);
        close_top(t, &now);
    }
    close_top(t, &now);
    t->busy = 0;
}

/* ---- the API, exported: these take the place of libvigil-region.so's ---------------------- */

PRELOAD_EXPORT void vigil_region_begin(const char *name);
PRELOAD_EXPORT void vigil_region_end(const char *name);

void vigil_region_begin(const char *name)
{
    preload_region_begin(name);
}

void vigil_region_end(const char *name)
{
    preload_region_end(name);
}

/* ---- the report ---------------------------------------------------------------------------- */

void preload_regions_report(struct vigil_report *r)
{
    static struct vigil_report_region regions[NAMES_MAX];
    uint32_t count = atomic_load_explicit(&table.name_count, memory_order_acquire);
    if (count > NAMES_MAX)
        count = NAMES_MAX;
    for (uint32_t i = 0; i < count; i++) {
        const struct region_totals *g = &table.totals[i];
        uint64_t energy_entries = atomic_load_explicit(&g->energy_entries, memory_order_relaxed);
        int64_t open = atomic_load_explicit(&g->open, memory_order_relaxed);
        regions[i] = (struct vigil_report_region){
            .name = table.names[i].text,
            .entered = atomic_load_explicit(&g->entered, memory_order_relaxed),
            .calls = atomic_load_explicit(&g->calls, memory_order_relaxed),
            .read_bytes = atomic_load_explicit(&g->read_bytes, memory_order_relaxed),
            .written_bytes = atomic_load_explicit(&g->written_bytes, memory_order_relaxed),
            .wall_s = (double)atomic_load_explicit(&g->wall_ns, memory_order_relaxed) / 1e9,
            .cpu_s = (double)atomic_load_explicit(&g->cpu_ns, memory_order_relaxed) / 1e9,
            .energy_j =
                energy_entries > 0
                    ? (double)atomic_load_explicit(&g->energy_nj, memory_order_relaxed) / 1e9
                    : NAN,
            .energy_missing = atomic_load_explicit(&g->energy_missing, memory_order_relaxed),
            .energy_flags = (uint32_t)atomic_load_explicit(&g->energy_flags, memory_order_relaxed),
            .open = open > 0 ? (uint64_t)open : 0,
        };
    }
    r->regions = regions;
    r->region_count = (int)count;
    r->region_notes = (struct vigil_report_region_notes){
        .names_dropped = atomic_load(&table.names_dropped),
        .unmatched_ends = atomic_load(&table.unmatched_ends),
        .closed_by_outer = atomic_load(&table.closed_by_outer),
        .too_deep = atomic_load(&table.too_deep),
        .dropped_calls = atomic_load(&table.dropped_calls),
    };
}

void preload_regions_reset_after_fork(void)
{
    /* Names stay (the child runs the same code); figures start again. */
    memset(table.totals, 0, sizeof table.totals);
    atomic_store(&table.names_dropped, 0);
    atomic_store(&table.unmatched_ends, 0);
    atomic_store(&table.closed_by_outer, 0);
    atomic_store(&table.too_deep, 0);
    atomic_store(&table.dropped_calls, 0);
    /* Another thread of the parent may have held it: not ours to wait for. */
    pthread_mutex_init(&table.insert_lock, NULL);
    /* The forking thread's open regions began in the parent: they end, but
     * count nothing. Other threads' stacks are of threads that do not exist
     * here (and their pool entries stay claimed: harmless). */
    struct region_thread *t = current;
    if (t != NULL) {
        for (uint32_t i = 0; i < t->depth && i < DEPTH_MAX; i++)
            t->frames[i].uncounted = true;
        t->busy = 0;
    }
}
