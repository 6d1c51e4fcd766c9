/* vigil — libvigil-preload.so's internal interface, shared by its files.
 *
 * The library is loaded into arbitrary programs. Every wrapper follows the
 * same shape:
 *
 *     ssize_t write(int fd, const void *buf, size_t count)
 *     {
 *         struct preload_call call;
 *         if (!preload_call_begin(&call))
 *             return REAL(write)(fd, buf, count);      // not ours to count
 *         ssize_t ret = REAL(write)(fd, buf, count);
 *         preload_call_end(&call, &(struct preload_outcome){ … });
 *         return ret;
 *     }
 *
 * preload_call_begin refuses when the library is not active or when this
 * thread is already inside a wrapper (our own I/O, libc calling itself, a
 * signal handler interrupting a wrapper); the call then goes straight
 * through. preload_call_end does the bookkeeping and leaves errno exactly
 * as the real function set it. Nothing on this path allocates or makes a
 * system call of its own. It takes no lock but on the rare path: a
 * thread moving to a file it holds no pending entry for merges the evicted
 * entry into that file's record, and threads sharing the overflow counter
 * block write into the record directly, both under the record's spin lock
 * (file_stats.c). */
#ifndef VIGIL_PRELOAD_H
#define VIGIL_PRELOAD_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* set by the build for every file; here for tools */
#endif
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "vigil/activity.h"
#include "vigil/clock.h"
#include "vigil/ontology.h"
#include "ring_producer.h" /* record/'s: the producer side, inline */
#include "vigil/ring.h"
#include "vigil/run_key.h"

#define PRELOAD_HIDDEN      __attribute__((visibility("hidden")))
#define PRELOAD_EXPORT      __attribute__((visibility("default")))
#define PRELOAD_LIKELY(x)   __builtin_expect(!!(x), 1)
#define PRELOAD_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* The globals every call reads (the state, the real functions' slots, the
 * descriptor table's address…), gathered in one section so that they share
 * one page: on a kernel that flushes the TLB at every system call, each
 * distinct page a call touches afterwards costs a page walk. On a
 * declaration, the attribute carries over to the definition. state.c
 * aligns the section to a page (preload_hot_page), so that it never
 * straddles two while it stays below 4 KiB. */
#define PRELOAD_HOT __attribute__((section("vigil_hot"), aligned(64)))
/* The commonest wrappers start on a page of their own: their path through
 * (about 1.5 KiB of their 2.5) then lies on one page, where the linker
 * could leave it across two, each a walk after the system call. */
#define PRELOAD_HOT_CODE __attribute__((aligned(4096)))
/* For bench-preload's table of what each part of a call's bookkeeping
 * costs, bench/meson.build builds variants of the library with one of
 * these set to 1, which leaves that part out: the file's counts and
 * Darshan statistics, the activity record, the clock read at the call's
 * end (its duration is then 0). The library itself is built with all
 * three 0: they fold away at compile time. */
#ifndef PRELOAD_WITHOUT_FILE_STATS
#define PRELOAD_WITHOUT_FILE_STATS 0
#endif
#ifndef PRELOAD_WITHOUT_RECORD
#define PRELOAD_WITHOUT_RECORD 0
#endif
#ifndef PRELOAD_WITHOUT_END_CLOCK
#define PRELOAD_WITHOUT_END_CLOCK 0
#endif
/* A preloaded library's TLS is in the static block: the cheapest model. */
#define PRELOAD_TLS __thread __attribute__((tls_model("initial-exec")))

/* ---- per-file statistics: the types (file_stats.c) ----------------------- */

/* Darshan's counters of one layer for one file, and what a thread adds to
 * them between merges: the same struct. Reads and writes are the calls that
 * succeeded (a failed call is in the operation table, not here). Times are
 * ticks; 0 means none. */
enum preload_stats_kind {
    PRELOAD_KIND_READ,
    PRELOAD_KIND_WRITE,
    PRELOAD_KIND_OPEN,
    PRELOAD_KIND_SEEK,
    PRELOAD_KIND_STAT,
    PRELOAD_KIND_FSYNC, /* fsync; stdio: fflush */
    PRELOAD_KIND_OTHER, /* close counts here too */
    PRELOAD_KIND_COUNT,
    PRELOAD_KIND_CLOSE = PRELOAD_KIND_COUNT, /* counted as OTHER, and times the last close */
    /* Rare: counted in the file's shared part (struct preload_file_shared),
     * not in a thread's stats, whose first two entries share a page with
     * the operations' counters. */
    PRELOAD_KIND_FDATASYNC, /* Darshan's FDSYNCS */
    PRELOAD_KIND_DUP,       /* dup, dup2, dup3: Darshan's DUPS; in "other" too */
};
#define PRELOAD_STATS_LAYERS 2 /* POSIX, stdio */
#define PRELOAD_COMMON_SLOTS 8 /* values followed per file; the report keeps the top 4 */
#define PRELOAD_SIZE_BINS    10

/* The most frequent values, most recent first, by the space-saving
 * algorithm: exact while a file has no more than PRELOAD_COMMON_SLOTS
 * different ones, else the rarest is replaced, its count carried over and
 * recorded as the newcomer's error: count - error is a lower bound of the
 * truth, exact when error is 0 (common_values.c). */
struct preload_common {
    int64_t value[PRELOAD_COMMON_SLOTS];
    uint64_t count[PRELOAD_COMMON_SLOTS];
    /* 32 bits (room on the counters' first page): an error past that
     * lowers the count by as much, which keeps count - error. */
    uint32_t error[PRELOAD_COMMON_SLOTS];
    uint32_t used;
};

/* What all threads share about one layer of a file, in its record: where
 * its last read and write ended and which came last, so that sequential
 * and consecutive accesses, strides and read/write switches are judged per
 * file, not per thread. Each access exchanges the word (one atomic
 * instruction): it then has exactly one predecessor, whatever the threads.
 * The rest is written on the rare paths (an open, fileno). */
struct preload_file_shared {
    /* Where the previous read, write ended, as Darshan's last byte + 1:
     * 1 at the start and after each open (Darshan's last byte 0 then, so
     * that an access at 0 is not sequential and one at 1 is consecutive;
     * no stride is counted from it). */
    _Atomic int64_t last_end[2];
    _Atomic uint32_t last_rw; /* 0: none yet, 1: a read, 2: a write */
    _Atomic int64_t mode;     /* the mode an open gave; 0: none given */
    _Atomic uint64_t filenos; /* fileno() on the file's streams */
    _Atomic uint64_t dups, fdatasyncs, rw_switches;
    /* The file system's block size (Darshan's FILE_ALIGNMENT: statfs's
     * f_bsize, 1 MiB on Lustre), taken at the file's first open; the mask
     * is it - 1 when it is a power of two, else 0 (not counted). */
    _Atomic uint64_t alignment_bytes, alignment_mask;
};

/* The memory alignment Darshan checks buffers against by default. */
#define PRELOAD_MEM_ALIGNMENT_BYTES 8

struct preload_layer_stats {
    uint64_t count[PRELOAD_KIND_COUNT];
    uint64_t bytes[2];   /* read, written */
    int64_t max_end[2];  /* offset + size of the furthest read, write; 0: none */
    uint64_t forward[2]; /* began past the previous one's end: seq = consec + forward */
    uint64_t consec[2];
    uint64_t hist[2][PRELOAD_SIZE_BINS];
    uint64_t time[3]; /* read, write, meta */
    uint64_t first_open, last_close, first_io, last_io;
    /* POSIX only (stdio's stay 0: Darshan's STDIO module has none). */
    uint64_t file_not_aligned, mem_not_aligned;
    uint64_t max_time[2];      /* the slowest read, write: ticks */
    uint32_t max_time_size[2]; /* its bytes (Linux moves < 2 GiB a call) */
    struct preload_common sizes, strides;
    /* The file's shared part (never NULL once the stats are in use); not
     * merged, not cleared. */
    struct preload_file_shared *shared;
};

/* What a thread holds for one file it used recently and has not merged
 * into the file's shared counters yet: its counts and its Darshan counters
 * (file_stats.c). Four entries: a copy (one file in, one out) with a log
 * on the side switches files without merging; a fifth file evicts the
 * least recently used. */
#define PRELOAD_PENDING_FILES 4
#define PRELOAD_PENDING_NEAR  2 /* of them on the block's first page */
struct preload_pending {
    uint32_t file;       /* VIGIL_FILE_NONE: a free entry */
    uint64_t used_stamp; /* the thread's pending_stamp when it last moved here; 0 free */
    uint64_t calls, read_bytes, written_bytes;
    struct preload_layer_stats stats[PRELOAD_STATS_LAYERS];
};

/* ---- counters (counters.c) --------------------------------------------- */

struct preload_op_counter {
    uint64_t calls;
    uint64_t bytes;  /* bytes the calls moved */
    uint64_t ticks;  /* time inside the calls */
    uint64_t errors; /* calls that failed */
};

/* One thread's counts. Only its thread writes them, with plain stores; the
 * reporter reads them (relaxed) from another thread at exit. Blocks come
 * from a pool that outlives threads, so an exited thread's counts stay. */
struct preload_thread_counters {
    /* What every call touches first, on the block's first page with the
     * two near entries and the POSIX operations' counters: after a system
     * call flushed the TLB each page costs a walk. */
    bool shared; /* the overflow block, used by many threads: atomic adds */
    /* The file whose name record this thread last saw go into the ring: a
     * thread working on one file checks it with a compare, not a lookup. */
    uint32_t announced_file;
    /* Counts for the few files this thread used last, merged into each
     * file's shared counters when it is evicted: a thread reading one file,
     * or copying one file to another, pays no atomic operation per call.
     * `current` is the entry of the file used last (set at the claim). */
    struct preload_pending *current;
    uint64_t dropped;  /* records the ring had no room for */
    uint64_t excluded; /* calls on excluded files: counted here only */
    /* Bytes of the timeline's bin this thread is in, added to the
     * process's timeline when it moves on (file_stats.c). */
    uint64_t timeline_bin;
    uint32_t timeline_shift;
    uint64_t timeline_bin_end; /* in ticks; 0: no bin yet */
    uint64_t timeline_bytes[2];
    uint64_t pending_stamp; /* moves between entries so far */
    /* Bytes moved by calls made inside another counted call (the POSIX
     * calls of an MPI-IO call): the report's totals count them once. */
    uint64_t nested_read_bytes, nested_written_bytes;
    /* The first two entries, then the operations: a thread working on one
     * or two files finds its entry and its POSIX operation's counters
     * (ids below 43) on the block's first page. preload_pending_entry
     * numbers all four. */
    struct preload_pending pending_near[PRELOAD_PENDING_NEAR];
    struct preload_op_counter ops[VIGIL_OP_MAX_ID + 1];
    struct preload_pending pending_far[PRELOAD_PENDING_FILES - PRELOAD_PENDING_NEAR];
} __attribute__((aligned(4096))); /* blocks start on a page: the layout above holds */

_Static_assert(offsetof(struct preload_thread_counters, ops) +
                       (VIGIL_OP_POSIX_STATX + 1) * sizeof(struct preload_op_counter) <=
                   4096,
               "the POSIX data and metadata operations' counters share the first page");

/* Entry i (0 .. PRELOAD_PENDING_FILES - 1) of a block. */
static inline struct preload_pending *preload_pending_entry(struct preload_thread_counters *c,
                                                            int i)
{
    return i < PRELOAD_PENDING_NEAR ? &c->pending_near[i]
                                    : &c->pending_far[i - PRELOAD_PENDING_NEAR];
}

/* The calling thread's block, claimed on its first call. */
struct preload_thread_counters *preload_counters_claim(void) PRELOAD_HIDDEN;
/* Adds `value`; plain on a thread's own block, atomic on the shared one. */
static inline void preload_count(const struct preload_thread_counters *c, uint64_t *counter,
                                 uint64_t value)
{
    if (PRELOAD_UNLIKELY(c->shared))
        __atomic_fetch_add(counter, value, __ATOMIC_RELAXED);
    else
        __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + value,
                         __ATOMIC_RELAXED);
}

/* Sums of every block (and of every file's pending counts), for the report. */
struct preload_totals {
    struct preload_op_counter ops[VIGIL_OP_MAX_ID + 1];
    uint64_t recorded, dropped, excluded;
    uint64_t nested_read_bytes, nested_written_bytes;
};
void preload_counters_sum(struct preload_totals *out) PRELOAD_HIDDEN;
/* An entry's counts into its file's shared counters; the entry is free after. */
void preload_pending_flush(struct preload_pending *p) PRELOAD_HIDDEN;
/* Calls `file_fn` with every entry (of every thread) that holds a file's
 * counts not merged yet, and `thread_fn` with every thread's block (its
 * timeline bin). */
typedef void (*preload_pending_fn)(uint32_t file_id, const struct preload_pending *p, void *user);
typedef void (*preload_block_fn)(const struct preload_thread_counters *c, void *user);
void preload_counters_visit_pending(preload_pending_fn file_fn, preload_block_fn thread_fn,
                                    void *user) PRELOAD_HIDDEN;
bool preload_counters_init(void) PRELOAD_HIDDEN;
void preload_counters_reset_after_fork(void) PRELOAD_HIDDEN;

/* ---- files and descriptors (files.c) ------------------------------------ */

/* Interns an absolute path (or a name such as "<stdout>"); returns its
 * file id, or VIGIL_FILE_NONE when the table is full. Lock-free. */
uint32_t preload_file_intern(const char *path, size_t length) PRELOAD_HIDDEN;
const char *preload_file_path(uint32_t file_id, size_t *length) PRELOAD_HIDDEN;
/* Adds to a file's shared counters. */
void preload_file_count(uint32_t file_id, uint64_t calls, uint64_t read_bytes,
                        uint64_t written_bytes) PRELOAD_HIDDEN;
/* The file's shared counters (without what threads still hold). */
void preload_file_counts(uint32_t file_id, uint64_t *calls, uint64_t *read_bytes,
                         uint64_t *written_bytes) PRELOAD_HIDDEN;
uint32_t preload_file_count_used(void) PRELOAD_HIDDEN;
/* How many times a path could not be given a file (the table full). */
uint64_t preload_file_untracked(void) PRELOAD_HIDDEN;
uint32_t preload_file_used_id(uint32_t n) PRELOAD_HIDDEN; /* n < preload_file_count_used() */
/* Makes sure the ring has this file's name record before its activities;
 * false when it could not (the ring is full: tried again next time). */
bool preload_file_announce(uint32_t file_id) PRELOAD_HIDDEN;
/* Announces the files used from the *next-th on, in the order they were
 * first used, while the ring has more than `keep_free` slots free; true
 * once every one is announced, else *next is where to go on. */
bool preload_files_announce_all(uint32_t *next, uint32_t keep_free) PRELOAD_HIDDEN;
/* vigild asked for every name record again (a vigild restarted without
 * them): answers, a part at a time if the ring is short of room. Called
 * off the hot path: a thread's move to another bin of the timeline, a
 * file's first record, the summary (names_again.c). */
void preload_names_check(void) PRELOAD_HIDDEN;
void preload_names_reset_after_fork(void) PRELOAD_HIDDEN;

/* Absolute form of `path` as seen from `dirfd` (AT_FDCWD for the working
 * directory) in `out`, made clean (preload_path_clean); returns its
 * length, or 0 when it does not fit. */
size_t preload_absolute_path(int dirfd, const char *path, char *out,
                             size_t out_size) PRELOAD_HIDDEN;
/* An absolute path made lexically clean, in place: no empty or "."
 * component and no trailing slash; a ".." removes the component before
 * it when that one lies in the first `physical_length` bytes (a path
 * known to hold no symbolic link, such as getcwd's) or is root, and is
 * kept otherwise, since after a link it would not name the lexical
 * parent. Returns the new length; a path not starting with '/' is left
 * as it is (path_clean.c). */
size_t preload_path_clean(char *path, size_t length, size_t physical_length) PRELOAD_HIDDEN;
bool preload_path_is_excluded(const char *absolute_path) PRELOAD_HIDDEN;
/* The file id for a path argument (stat, unlink, open…): interned, or
 * PRELOAD_FILE_EXCLUDED for a path under an excluded prefix. */
uint32_t preload_file_for_path(int dirfd, const char *path) PRELOAD_HIDDEN;
#define PRELOAD_FILE_EXCLUDED UINT32_MAX

/* POSIX aio's requests in flight are none in a forked child
 * (wrap_posix_aio.c). */
void preload_aio_reset_after_fork(void) PRELOAD_HIDDEN;

/* Socket calls: their bytes are the network's, not files'. */
static inline bool preload_op_is_network(unsigned op)
{
    return op >= VIGIL_OP_POSIX_SEND && op <= VIGIL_OP_POSIX_RECVMSG;
}

/* Whether an operation's bytes count as read from files, or as written to
 * them, in the totals (io_bytes_read, io_bytes_written, a layer's and a
 * region's bytes): a socket's are the network's, and a kernel copy
 * (copy_file_range, sendfile: a write in the operation table) read its
 * source as much as it wrote its destination, as the read(2) and write(2)
 * it replaces would have. Off the hot path: the report and regions. */
static inline bool preload_op_reads_files(unsigned op)
{
    return (vigil_op_class(op) == VIGIL_OP_READS && !preload_op_is_network(op)) ||
           op == VIGIL_OP_POSIX_COPY_FILE_RANGE || op == VIGIL_OP_POSIX_SENDFILE;
}

static inline bool preload_op_writes_files(unsigned op)
{
    return vigil_op_class(op) == VIGIL_OP_WRITES && !preload_op_is_network(op);
}

/* Whether a call's path argument was read by the kernel (or libc), so that
 * we may read it too: after success, or after an error that only comes from
 * looking the name up. After any other (EFAULT, but also EINVAL or
 * ENAMETOOLONG, which are decided before the name is read or without
 * reading all of it) the pointer may be bad, and reading it could crash a
 * program that libc would have answered with an error. */
static inline bool preload_path_was_read(bool failed, int errno_value)
{
    if (!failed)
        return true;
    switch (errno_value) {
    case ENOENT:
    case ENOTDIR:
    case EACCES:
    case EPERM:
    case EEXIST:
    case EISDIR:
    case ELOOP:
    case EROFS:
    case ETXTBSY:
    case ENOTEMPTY:
    case EXDEV:
    case EBUSY:
        return true;
    default:
        return false;
    }
}

/* The descriptor table: what each fd refers to. preload_fd_set gives fd a
 * new open file description (its own offset) at `offset` (-1: ask the
 * kernel when needed), in append mode or not. */
void preload_fd_set(int fd, uint32_t file_id, int64_t offset,
                    bool append) PRELOAD_HIDDEN; /* file id or PRELOAD_FILE_EXCLUDED */
/* The table itself, read inline on the hot path: one word per fd, 0 when
 * unknown, else PRELOAD_FD_KNOWN | file id | the description's reference
 * (index and tag) above it; reference 0: no offset is followed (a pipe, a
 * socket, a terminal). */
extern _Atomic uint64_t *preload_fd_table PRELOAD_HIDDEN PRELOAD_HOT;
extern uint32_t preload_fd_table_size PRELOAD_HIDDEN PRELOAD_HOT;
#define PRELOAD_FD_KNOWN      (UINT64_C(1) << 32)
#define PRELOAD_FD_REF_SHIFT  33
#define PRELOAD_DESC_BITS     20 /* descriptions followed at once: 2^20 - 1 */
#define PRELOAD_DESC_TAG_MASK 0x7ffu

/* The words of descriptors below PRELOAD_FD_NEAR (most programs' all) are
 * in vigil_hot itself, not in the table: one page less per call. */
#define PRELOAD_FD_NEAR 128
extern _Atomic uint64_t preload_fd_near[PRELOAD_FD_NEAR] PRELOAD_HIDDEN PRELOAD_HOT;

/* fd's word, or NULL for a number the table does not cover. */
static inline _Atomic uint64_t *preload_fd_slot(int fd)
{
    if (PRELOAD_LIKELY((uint32_t)fd < PRELOAD_FD_NEAR))
        return &preload_fd_near[fd];
    if (fd < 0 || (uint32_t)fd >= preload_fd_table_size)
        return NULL;
    return &preload_fd_table[fd];
}

static inline uint64_t preload_fd_word(int fd)
{
    _Atomic uint64_t *slot = preload_fd_slot(fd);
    return slot == NULL ? 0 : atomic_load_explicit(slot, memory_order_relaxed);
}

/* VIGIL_FILE_NONE when unknown. */
static inline uint32_t preload_fd_get(int fd)
{
    return (uint32_t)preload_fd_word(fd);
}

/* ---- offsets: open file descriptions (files.c) ----------------------------
 *
 * What the kernel keeps per open file description, its offset, followed
 * here in a table mapped MAP_SHARED at start-up, so that a forked child and
 * its parent move one offset, as they do in the kernel. dup, dup2, dup3 and
 * F_DUPFD copy the reference, so the copies share it too. A slot is reused
 * after 2^20 opens; the tag in the fd's word then no longer matches and the
 * offset is asked from the kernel again. Two threads (or processes) moving
 * one description at the same instant may leave it off: the kernel's order
 * of their calls is not ours to see. An offset of -1 means "ask the
 * kernel" (lseek(fd, 0, SEEK_CUR), once, on the rare path): after exec,
 * and after calls that move it unseen. A write in append mode goes to the
 * end of its file, which files.c follows per file: a description in append
 * mode has PRELOAD_DESC_APPEND in its tag, so that every move on it takes
 * the out-of-line path (preload_offset_slow, no system call) while the
 * others pay nothing for it. */
struct preload_description {
    _Atomic int64_t offset;
    _Atomic uint32_t tag;    /* | PRELOAD_DESC_APPEND in append mode */
    _Atomic uint32_t append; /* files.c's: where an append's offset comes from */
};
#define PRELOAD_DESC_APPEND 0x1000u
extern struct preload_description *preload_descriptions PRELOAD_HIDDEN PRELOAD_HOT;

/* What a call did to the offset: read (or seek past) `moved` bytes, write
 * them, or move a stream. */
enum preload_move { PRELOAD_MOVE_READ, PRELOAD_MOVE_STREAM, PRELOAD_MOVE_WRITE };

/* The offset a call on fd that moved `moved` bytes (< 0: failed) began at,
 * when fd's description is known: the offset is advanced by it. For a
 * stream (`stream`), the offset is its logical position (what ftell says),
 * which stdio's buffering keeps apart from the kernel's. A write in append
 * mode takes the out-of-line path, without a system call. */
int64_t preload_offset_slow(int fd, int64_t moved, enum preload_move how) PRELOAD_HIDDEN;
static inline int64_t preload_offset_move(int fd, int64_t moved, enum preload_move how)
{
    uint64_t word = preload_fd_word(fd);
    uint32_t ref = (uint32_t)(word >> PRELOAD_FD_REF_SHIFT);
    if (PRELOAD_UNLIKELY(ref == 0))
        return word == 0 ? preload_offset_slow(fd, moved, how) : VIGIL_OFFSET_UNKNOWN;
    struct preload_description *d = &preload_descriptions[ref & ((1u << PRELOAD_DESC_BITS) - 1)];
    int64_t offset = atomic_load_explicit(&d->offset, memory_order_relaxed);
    if (PRELOAD_UNLIKELY(offset < 0 || atomic_load_explicit(&d->tag, memory_order_relaxed) !=
                                           ref >> PRELOAD_DESC_BITS))
        return preload_offset_slow(fd, moved, how);
    if (moved > 0)
        atomic_store_explicit(&d->offset, offset + moved, memory_order_relaxed);
    return offset;
}
static inline int64_t preload_offset_advance(int fd, int64_t moved, bool stream)
{
    return preload_offset_move(fd, moved, stream ? PRELOAD_MOVE_STREAM : PRELOAD_MOVE_READ);
}
/* A write (write, writev, pwritev2 at -1) that moved `moved` bytes. */
static inline int64_t preload_offset_written(int fd, int64_t moved)
{
    return preload_offset_move(fd, moved, PRELOAD_MOVE_WRITE);
}
/* After a seek: fd's description is at `offset` (-1: unknown). */
void preload_offset_set(int fd, int64_t offset) PRELOAD_HIDDEN;
/* After fcntl(F_SETFL): fd's description is in append mode or not. */
void preload_offset_append_set(int fd, bool append) PRELOAD_HIDDEN;
/* After ftruncate (or an open with O_TRUNC): fd's file ends at `length`. */
void preload_offset_truncated(int fd, int64_t length) PRELOAD_HIDDEN;
void preload_fd_clear(int fd) PRELOAD_HIDDEN;
/* Clears fd's entry if it still names `file_id`: after a close, another
 * thread may already have opened something else under the same number. */
void preload_fd_forget(int fd, uint32_t file_id) PRELOAD_HIDDEN;
void preload_fd_copy(int from, int to) PRELOAD_HIDDEN;
void preload_cwd_changed(void) PRELOAD_HIDDEN;

bool preload_files_init(void) PRELOAD_HIDDEN;
void preload_files_reset_after_fork(void) PRELOAD_HIDDEN;

/* An operation's layer and class. For a constant op (every wrapper's) the
 * switch folds to a constant, where vigil_op_layer/class would read
 * vigil_op_table, a page of its own. */
#define PRELOAD_OP_LAYER_CASE(suffix, id, layer, name, cls)                                        \
    case id:                                                                                       \
        return VIGIL_LAYER_##layer;
#define PRELOAD_OP_CLASS_CASE(suffix, id, layer, name, cls)                                        \
    case id:                                                                                       \
        return VIGIL_OP_##cls;
static inline __attribute__((always_inline)) unsigned preload_op_layer(unsigned op)
{
    if (__builtin_constant_p(op)) {
        switch (op) {
            VIGIL_OPERATIONS(PRELOAD_OP_LAYER_CASE)
        default:
            return 0;
        }
    }
    return vigil_op_layer(op);
}
static inline __attribute__((always_inline)) enum vigil_op_class preload_op_class(unsigned op)
{
    if (__builtin_constant_p(op)) {
        switch (op) {
            VIGIL_OPERATIONS(PRELOAD_OP_CLASS_CASE)
        default:
            return 0;
        }
    }
    return vigil_op_class(op);
}

/* ---- the process (state.c) ---------------------------------------------- */

struct preload_state {
    /* What every call reads comes first, on one cache line. */
    _Atomic int active; /* 1 once set up; 0 before, and after it gave up */
    enum vigil_tick_source tick_source;
    /* preload.ring's geometry, for ring_activity_claim: the handle
     * itself is on a heap page of its own, one more page per call to walk
     * after a system call flushed the TLB. */
    struct vigil_ring_producer ring_producer;
    struct vigil_ring *ring;
    _Atomic uint32_t ring_generation; /* a fork makes a new ring */
    pid_t pid;
    struct vigil_tick_anchor start;
    uint64_t start_realtime_ns;
    int argc;
    char **argv;
    /* Descriptors of our own go at or above this, out of the way of the
     * numbers a program expects its own open() calls to return. */
    int private_fd_floor;
    int saved_stderr;    /* a copy of fd 2 from set-up, for the report, or -1 */
    int mpi_rank;        /* after MPI_Init; -1 before and without MPI */
    bool joint_reported; /* MPI_Finalize wrote the job's report */
    /* The run this process belongs to (vigil/run_key.h), from set-up. */
    char run_key[VIGIL_RUN_KEY_MAX + 1];
    /* What the program gave exit or _exit, as wait(2)'s WEXITSTATUS would
     * show it; -1 until then (and for good when a signal ends it). */
    _Atomic int exit_code;
};

/* The exit status (exit_status.c): noted by the _exit wrappers and, for
 * exit() and a return from main, by an on_exit handler. */
void preload_exit_status_note(int status) PRELOAD_HIDDEN;

/* At MPI_Finalize, before MPI goes: every rank's figures reduced to rank 0,
 * which writes one report for the job (mpi_report.c). */
void preload_mpi_report_joint(void) PRELOAD_HIDDEN;
extern struct preload_state preload PRELOAD_HIDDEN PRELOAD_HOT;

struct preload_thread {
    int in_call; /* inside a wrapper: a nested call goes straight through */
    /* Inside an MPI-IO call: the start of it, which the POSIX calls it makes
     * record as their parent (they are counted, unlike other nested calls);
     * else 0. */
    uint64_t parent_start_ticks;
    uint32_t thread_id;
    struct preload_thread_counters *counters;
    /* &errno, taken when the thread claims its counters: reading errno
     * through __errno_location would cost a call through the PLT into
     * libc, and the pages of both, on every call. */
    int *errno_at;
};
extern PRELOAD_TLS struct preload_thread preload_thread PRELOAD_HIDDEN;

/* The calling thread's preload_thread on the hot path. The compiler's own
 * initial-exec access reads the variable's offset from the thread pointer
 * out of the GOT: a page of its own, walked again after every system call
 * on a kernel with page-table isolation. The offset is the same in every
 * thread (the static TLS block), so set-up copies it into vigil_hot, and
 * the access is %fs-relative through it. Before set-up the offset is 0,
 * but preload_call_begin reads `preload.active` first, and nothing else
 * uses PRELOAD_SELF until then. */
#if defined(__x86_64__) && defined(__SEG_FS)
extern intptr_t preload_thread_offset PRELOAD_HIDDEN PRELOAD_HOT;
#define PRELOAD_SELF (*(struct preload_thread __seg_fs *)preload_thread_offset)
#else
#define PRELOAD_SELF preload_thread
#endif

/* ---- vigild, the node daemon (daemon_link.c) ----------------------------- */

enum preload_link_state {
    PRELOAD_LINK_STANDALONE, /* never connected, or refused: `reason` says why */
    PRELOAD_LINK_CONNECTED,  /* registered, but no summary came: `reason` says why */
    PRELOAD_LINK_SUMMARY,    /* vigild's summary is in */
};

/* What vigild said about this process (or, in an MPI job's report, about
 * all its ranks), as the report shows it. Plain data: the MPI report
 * gathers one per rank as bytes. */
struct preload_link_figures {
    uint32_t state;              /* enum preload_link_state */
    uint32_t ranks_with_summary; /* 0 or 1 for a process */
    uint64_t process_id;         /* vigild's name for the process; 0 when it did not say */
    uint64_t activities_drained, names_drained, gaps, dropped, anomalies;
    double cpu_s;          /* as vigild last sampled it; NaN when unknown */
    double energy_j;       /* NaN when there is none */
    uint32_t energy_flags; /* VIGIL_LOCAL_ENERGY_* */
    uint32_t reserved;
    char energy_source[96]; /* "energy/powercap"; several joined by "+" in a job's report */
    char energy_note[256];  /* when energy_j is NaN: why */
    char reason[256];       /* unless state is SUMMARY: why not */
    /* What vigild's capture made of its activities (local_protocol.h):
     * observed = forwarded + dropped + lost + held. Sums in a job's report. */
    uint64_t cycles, abnormal_cycles;
    uint64_t capture_observed, capture_forwarded, capture_dropped, capture_lost, capture_held;
    char capture_mode[16]; /* "anomalies", "all", "none"; "mixed" in a job's report */
};

/* At set-up, once the ring exists: reads VIGIL_SOCKET and registers the
 * process with vigild, without waiting for its answer. */
void preload_link_start(void) PRELOAD_HIDDEN;
/* In a forked child: drops the parent's connection (the parent's, not
 * ours to use), then registers the child when `ring_ok`. */
void preload_link_after_fork(bool ring_ok) PRELOAD_HIDDEN;
/* After MPI_Init: tells vigild the rank. */
void preload_link_rank(int rank, int size) PRELOAD_HIDDEN;
/* Asks vigild for the summary and waits for it (at most 100 ms); only the
 * first call does anything. */
void preload_link_summary(void) PRELOAD_HIDDEN;
/* At exit: reads, without waiting, what vigild sent and nobody read (its
 * REGISTERED when no summary was asked for), so that the connection closes
 * with nothing unread: Linux tells the peer of a socket closed with unread
 * data ECONNRESET instead of an end. */
void preload_link_leave(void) PRELOAD_HIDDEN;
void preload_link_figures(struct preload_link_figures *out) PRELOAD_HIDDEN;
/* The run the process is in: the one it named (preload.run_key), or the
 * one vigild keeps it in instead, the named one being another user's
 * (known once vigild's answer was read, with the summary). */
const char *preload_link_run_key(void) PRELOAD_HIDDEN;
/* Whether the process is registered with vigild (and still holds the
 * connection): only then is a report for it worth rendering. */
bool preload_link_connected(void) PRELOAD_HIDDEN;
/* At exit, after the report: sends REPORT (the exit status, and the
 * report's JSON in `json_fd` when >= 0) without waiting for an answer. */
void preload_link_report(int exit_code, int json_fd, uint64_t json_bytes) PRELOAD_HIDDEN;

/* ---- calls (call.c) ------------------------------------------------------ */

struct preload_call {
    uint64_t start_ticks;
};

/* What a wrapper knows once the real function has returned. */
struct preload_outcome {
    unsigned op;      /* enum vigil_op */
    int fd;           /* the descriptor it used, or -1 */
    uint32_t file_id; /* when fd < 0: from preload_file_for_path, or VIGIL_FILE_NONE */
    int64_t result;   /* what the caller gets back */
    bool failed;      /* the call failed: errno is meaningful */
    /* A POSIX read's or write's buffer, whose alignment the file's stats
     * count (an address, not a flag: computed only where it is counted);
     * 0: none. */
    uintptr_t buffer;
    uint64_t bytes_asked;
    uint64_t bytes_moved; /* what it transferred, 0 when it failed */
    int64_t offset_bytes; /* VIGIL_OFFSET_UNKNOWN when it cannot be known */
    uint32_t flags;       /* enum vigil_activity_flags */
    uint32_t comm_size;   /* MPI-IO: processes sharing the file */
};

static inline bool preload_call_begin(struct preload_call *call)
{
    if (PRELOAD_UNLIKELY(!atomic_load_explicit(&preload.active, memory_order_relaxed)) ||
        PRELOAD_SELF.in_call)
        return false;
    PRELOAD_SELF.in_call = 1;
    call->start_ticks = vigil_ticks(preload.tick_source);
    return true;
}

/* The rare paths of preload_call_end, out of line (call.c). Each is given
 * the address of a copy made in its own unlikely branch, never the
 * wrapper's outcome: had that escaped, the compiler would reload its
 * fields from the stack after every call instead of folding the constant
 * operation (its layer, class and kind then cost a table each, pages of
 * their own). Passed by value, the outcome was built on the stack on every
 * call, rare path or not (some 14 instructions). */
void preload_count_excluded(struct preload_thread_counters *c, const struct preload_outcome *o,
                            uint64_t ticks) PRELOAD_HIDDEN;
void preload_count_shared(struct preload_thread_counters *c, const struct preload_outcome *o,
                          uint32_t file_id, uint64_t start_ticks,
                          uint64_t end_ticks) PRELOAD_HIDDEN;
/* The thread moves to another file: its entry if it has one, else the
 * least recently used entry's counts are merged and it takes the file. */
struct preload_pending *preload_count_file_change(struct preload_thread_counters *c,
                                                  uint32_t file_id) PRELOAD_HIDDEN;
void preload_announce(struct preload_thread_counters *c, uint32_t file_id) PRELOAD_HIDDEN;
void preload_count_nested(struct preload_thread_counters *c, const struct preload_outcome *o,
                          uint32_t file_id, uint64_t start_ticks,
                          uint64_t end_ticks) PRELOAD_HIDDEN;
/* The source side of a kernel copy (copy_file_range, sendfile) that read
 * `moved` bytes of fd_in's file at `offset`: a read in that file's counts
 * only. Called inside the wrapper, before preload_call_end; errno kept. */
void preload_count_copy_source(int fd_in, int64_t offset, int64_t moved,
                               uint64_t start_ticks) PRELOAD_HIDDEN;

/* ---- per-file statistics: the rare paths (file_stats.c) ---------------------- */

#define PRELOAD_FILE_SLOTS    (1u << 16) /* files a process can name (files.c) */
#define PRELOAD_TIMELINE_BINS 64

bool preload_file_stats_init(void) PRELOAD_HIDDEN;
void preload_file_stats_reset_after_fork(void) PRELOAD_HIDDEN;
/* A newly interned file's record: no access yet. */
void preload_file_stats_clear(uint32_t file_id) PRELOAD_HIDDEN;
/* A pending entry's Darshan counters into its file's record (then
 * cleared), and the start of a new file's in an entry. */
void preload_file_stats_flush(struct preload_pending *p) PRELOAD_HIDDEN;
void preload_file_stats_take(struct preload_pending *p, uint32_t file_id) PRELOAD_HIDDEN;
/* For the shared counter block: straight into the record, under its lock. */
void preload_file_stats_note_shared(uint32_t file_id, const struct preload_outcome *o,
                                    uint64_t start_ticks, uint64_t end_ticks) PRELOAD_HIDDEN;
void preload_timeline_note_shared(unsigned rw, uint64_t bytes, uint64_t end_ticks) PRELOAD_HIDDEN;
/* An open of the file by the POSIX layer succeeded on fd, with `mode`
 * (0: none given): its mode, and at its first open its file system's block
 * size (one fstatfs). */
void preload_file_opened(uint32_t file_id, int fd, int64_t mode) PRELOAD_HIDDEN;
/* fileno() gave fd, one of the file's (Darshan's FILENOS, a POSIX open;
 * the block size as at an open); fcntl(F_DUPFD) made a copy (a dup, and
 * an open, as Darshan counts them). */
void preload_file_fileno(uint32_t file_id, int fd) PRELOAD_HIDDEN;
void preload_file_dup(uint32_t file_id) PRELOAD_HIDDEN;
/* Darshan's FILE_ALIGNMENT of a file system (statfs's type and block
 * size): the block size, 1 MiB on Lustre (whose f_bsize says 4 KiB). */
uint64_t preload_block_bytes(long fs_type, long block_size) PRELOAD_HIDDEN;
/* The file's record as it stands (without what threads hold); each
 * layer's `shared` points at the record's. */
void preload_file_stats_get(uint32_t file_id,
                            struct preload_layer_stats out[PRELOAD_STATS_LAYERS]) PRELOAD_HIDDEN;
void preload_layer_merge(struct preload_layer_stats *into,
                         const struct preload_layer_stats *from) PRELOAD_HIDDEN;
/* The timeline: its bins' bytes, how many are used; returns the shift
 * (bins are 2^shift ticks wide). */
uint32_t preload_timeline_get(uint64_t read_bytes[PRELOAD_TIMELINE_BINS],
                              uint64_t written_bytes[PRELOAD_TIMELINE_BINS],
                              int *bins) PRELOAD_HIDDEN;

/* ---- per-file statistics: the hot part (file_stats.c) ------------------------ */

/* The layer's index in the stats (constant for a constant op): POSIX 0,
 * stdio 1, others PRELOAD_STATS_LAYERS. */
static inline unsigned preload_stats_layer(unsigned op)
{
    return op < 100 ? 0 : op < 200 ? 1 : PRELOAD_STATS_LAYERS;
}

static inline unsigned preload_stats_kind(unsigned op)
{
    switch (op) {
    case VIGIL_OP_POSIX_READ:
    case VIGIL_OP_POSIX_PREAD:
    case VIGIL_OP_POSIX_READV:
    case VIGIL_OP_POSIX_PREADV:
    case VIGIL_OP_POSIX_PREADV2:
    case VIGIL_OP_POSIX_AIO_READ:
    case VIGIL_OP_STDIO_FREAD:
    case VIGIL_OP_STDIO_FGETS:
    case VIGIL_OP_STDIO_FGETC:
    case VIGIL_OP_STDIO_GETC:
    case VIGIL_OP_STDIO_FSCANF:
    case VIGIL_OP_STDIO_VFSCANF:
    case VIGIL_OP_STDIO_GETCHAR:
    case VIGIL_OP_STDIO_SCANF:
    case VIGIL_OP_STDIO_VSCANF:
    case VIGIL_OP_STDIO_GETDELIM:
        return PRELOAD_KIND_READ;
    case VIGIL_OP_POSIX_WRITE:
    case VIGIL_OP_POSIX_PWRITE:
    case VIGIL_OP_POSIX_WRITEV:
    case VIGIL_OP_POSIX_PWRITEV:
    case VIGIL_OP_POSIX_PWRITEV2:
    case VIGIL_OP_POSIX_COPY_FILE_RANGE:
    case VIGIL_OP_POSIX_SENDFILE:
    case VIGIL_OP_POSIX_AIO_WRITE:
    case VIGIL_OP_STDIO_FWRITE:
    case VIGIL_OP_STDIO_FPUTS:
    case VIGIL_OP_STDIO_FPUTC:
    case VIGIL_OP_STDIO_PUTC:
    case VIGIL_OP_STDIO_FPRINTF:
    case VIGIL_OP_STDIO_VFPRINTF:
    case VIGIL_OP_STDIO_PRINTF:
    case VIGIL_OP_STDIO_VPRINTF:
    case VIGIL_OP_STDIO_PUTS:
    case VIGIL_OP_STDIO_PUTCHAR:
        return PRELOAD_KIND_WRITE;
    case VIGIL_OP_POSIX_OPEN:
    case VIGIL_OP_POSIX_OPENAT:
    case VIGIL_OP_POSIX_CREAT:
    case VIGIL_OP_STDIO_FOPEN:
    case VIGIL_OP_STDIO_FDOPEN:
    case VIGIL_OP_STDIO_FREOPEN:
        return PRELOAD_KIND_OPEN;
    case VIGIL_OP_POSIX_LSEEK:
    case VIGIL_OP_STDIO_FSEEK:
    case VIGIL_OP_STDIO_FSEEKO:
    case VIGIL_OP_STDIO_REWIND:
        return PRELOAD_KIND_SEEK;
    case VIGIL_OP_POSIX_STAT:
    case VIGIL_OP_POSIX_LSTAT:
    case VIGIL_OP_POSIX_FSTAT:
    case VIGIL_OP_POSIX_FSTATAT:
    case VIGIL_OP_POSIX_STATX:
        return PRELOAD_KIND_STAT;
    case VIGIL_OP_POSIX_FSYNC:
    case VIGIL_OP_STDIO_FFLUSH: /* stdio's sync: to the kernel */
        return PRELOAD_KIND_FSYNC;
    case VIGIL_OP_POSIX_FDATASYNC:
        return PRELOAD_KIND_FDATASYNC;
    case VIGIL_OP_POSIX_DUP:
    case VIGIL_OP_POSIX_DUP2:
    case VIGIL_OP_POSIX_DUP3:
        return PRELOAD_KIND_DUP;
    case VIGIL_OP_POSIX_CLOSE:
    case VIGIL_OP_STDIO_FCLOSE:
        return PRELOAD_KIND_CLOSE;
    default:
        return PRELOAD_KIND_OTHER;
    }
}

/* Darshan's size bins (DARSHAN_BUCKET_INC): 0-100, 100-1K, 1K-10K,
 * 10K-100K, 100K-1M, 1M-4M, 4M-10M, 10M-100M, 100M-1G, 1G+, each including
 * its upper bound (1 MiB is in 100K-1M). Compares with immediates, not a
 * table (a read-only data page per call), smallest first: small accesses,
 * the commonest, take one or two. */
static inline unsigned preload_size_bin(uint64_t size)
{
    if (size <= 100)
        return 0;
    if (size <= 1024)
        return 1;
    if (size <= 10240)
        return 2;
    if (size <= 102400)
        return 3;
    if (size <= 1048576)
        return 4;
    if (size <= 4194304)
        return 5;
    if (size <= 10485760)
        return 6;
    if (size <= 104857600)
        return 7;
    return size <= 1073741824 ? 8 : 9;
}

/* The common-value tables (common_values.c): one value `count` times, with
 * `error` of them perhaps another's; a table into another; the top
 * VIGIL_REPORT_COMMON as the report lists them (Darshan's rules: no value
 * <= 0; lower-bound counts, exact flags), returning how many. */
struct vigil_report_common;
void preload_common_note(struct preload_common *t, int64_t value, uint64_t count,
                         uint64_t error) PRELOAD_HIDDEN;
void preload_common_merge(struct preload_common *into,
                          const struct preload_common *from) PRELOAD_HIDDEN;
int preload_common_top(const struct preload_common *t,
                       struct vigil_report_common *out) PRELOAD_HIDDEN;
/* An empty table's first value is 0, which no table lists (a stride is
 * never noted 0): a 0 counted there before the first note is lost unseen,
 * and `used` need not be checked. */
static inline void preload_common_add(struct preload_common *t, int64_t value)
{
    if (PRELOAD_LIKELY(t->value[0] == value))
        t->count[0]++;
    else
        preload_common_note(t, value, 1, 0);
}

/* The process's timeline (file_stats.c): bins of 2^shift ticks. */
extern _Atomic uint32_t preload_timeline_shift PRELOAD_HIDDEN PRELOAD_HOT;
void preload_timeline_move(struct preload_thread_counters *c, uint64_t bin,
                           uint32_t shift) PRELOAD_HIDDEN;

/* One successful call's share of its file's counters in `l`; `kind` is
 * preload_stats_kind(o->op). */
static inline __attribute__((always_inline)) void
preload_stats_note(struct preload_layer_stats *l, unsigned kind, const struct preload_outcome *o,
                   uint64_t start_ticks, uint64_t end_ticks)
{
    if (kind <= PRELOAD_KIND_WRITE) {
        unsigned rw = kind == PRELOAD_KIND_WRITE;
        bool posix = preload_stats_layer(o->op) == 0; /* a constant: stdio's fold away */
        uint64_t moved = o->bytes_moved, ticks = end_ticks - start_ticks;
        struct preload_file_shared *f = l->shared;
        /* Not counted here, derived where they are read: the reads and
         * writes (the histogram's sum), the sequential ones (consecutive
         * and forward). */
        l->bytes[rw] += moved;
        l->time[rw] += ticks;
        l->hist[rw][preload_size_bin(moved)]++;
        if (l->first_io == 0)
            l->first_io = start_ticks;
        l->last_io = end_ticks;
        /* Zero sizes too (the report leaves them out): no compare here. */
        preload_common_add(&l->sizes, (int64_t)moved);
        if (posix) {
            if (PRELOAD_UNLIKELY(ticks > l->max_time[rw])) {
                l->max_time[rw] = ticks;
                l->max_time_size[rw] = (uint32_t)moved;
            }
            if (o->buffer & (PRELOAD_MEM_ALIGNMENT_BYTES - 1))
                l->mem_not_aligned++;
            /* A switch: the file's last access was of the other kind. */
            if (PRELOAD_UNLIKELY(atomic_load_explicit(&f->last_rw, memory_order_relaxed) !=
                                 rw + 1) &&
                atomic_exchange_explicit(&f->last_rw, rw + 1, memory_order_relaxed) == 2 - rw)
                atomic_fetch_add_explicit(&f->rw_switches, 1, memory_order_relaxed);
        }
        int64_t offset = o->offset_bytes;
        if (offset >= 0) {
            int64_t end = offset + (int64_t)moved;
            int64_t last = atomic_exchange_explicit(&f->last_end[rw], end, memory_order_relaxed);
            if (PRELOAD_LIKELY(offset == last)) {
                l->consec[rw]++;
            } else if (offset > last) {
                /* Darshan's strides: the gap forward only, never 0, and
                 * none from the start (last 1). */
                l->forward[rw]++;
                if (last != 1)
                    preload_common_add(&l->strides, offset - last);
            }
            if (posix &&
                (offset & (int64_t)atomic_load_explicit(&f->alignment_mask, memory_order_relaxed)))
                l->file_not_aligned++;
            if (end > l->max_end[rw])
                l->max_end[rw] = end;
        }
    } else {
        if (kind == PRELOAD_KIND_FDATASYNC || kind == PRELOAD_KIND_DUP)
            atomic_fetch_add_explicit(kind == PRELOAD_KIND_DUP ? &l->shared->dups
                                                               : &l->shared->fdatasyncs,
                                      1, memory_order_relaxed);
        if (kind != PRELOAD_KIND_FDATASYNC)
            l->count[kind >= PRELOAD_KIND_CLOSE ? PRELOAD_KIND_OTHER : kind]++;
        l->time[2] += end_ticks - start_ticks;
        /* An open (not fdopen: Darshan's REFOPEN) starts the file's
         * sequence again, as Darshan's record does. */
        if (kind == PRELOAD_KIND_OPEN && o->op != VIGIL_OP_STDIO_FDOPEN) {
            atomic_store_explicit(&l->shared->last_end[0], 1, memory_order_relaxed);
            atomic_store_explicit(&l->shared->last_end[1], 1, memory_order_relaxed);
        }
        if (kind == PRELOAD_KIND_OPEN && l->first_open == 0)
            l->first_open = start_ticks;
        if (kind == PRELOAD_KIND_CLOSE)
            l->last_close = end_ticks;
    }
}

/* Keeps errno as it was around a rare path's call (it may make a system
 * call, or a call that sets errno): the common path never changes errno,
 * so preload_call_end need neither save nor restore it. Only once the
 * thread has its counters (PRELOAD_SELF.errno_at). */
#define PRELOAD_KEEPING_ERRNO(...)                                                                 \
    do {                                                                                           \
        int *kept_errno_at = PRELOAD_SELF.errno_at, kept_errno = *kept_errno_at;                   \
        __VA_ARGS__;                                                                               \
        *kept_errno_at = kept_errno;                                                               \
    } while (0)

/* The thread's bin of the timeline now ends at `bin`'s end in the scale of
 * `shift` (the process's, which only grows: a bin taken in a finer scale
 * lies inside one of a coarser, and is added there). */
void preload_timeline_enter(struct preload_thread_counters *c, uint64_t end_ticks) PRELOAD_HIDDEN;

/* A read's or write's bytes into the thread's bin of the timeline: one
 * compare while the call ends inside the bin (preload_timeline_enter). */
static inline void preload_timeline_note(struct preload_thread_counters *c, unsigned rw,
                                         uint64_t bytes, uint64_t end_ticks)
{
    if (PRELOAD_UNLIKELY(end_ticks >= c->timeline_bin_end))
        PRELOAD_KEEPING_ERRNO(preload_timeline_enter(c, end_ticks));
    c->timeline_bytes[rw] += bytes;
}

/* Only this thread writes its block: plain adds, which other threads (the
 * report, a region's end) read with relaxed loads. On x86-64 one `add` to
 * memory, a single store no reader can see torn; a relaxed load and store
 * would take three instructions (the compiler does not fuse atomics). */
static inline void preload_add(uint64_t *counter, uint64_t value)
{
#if defined(__x86_64__)
    __asm__ volatile("addq %1, %0" : "+m"(*counter) : "er"(value));
#else
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + value, __ATOMIC_RELAXED);
#endif
}

static inline __attribute__((always_inline)) void
preload_count_own(struct preload_thread_counters *c, const struct preload_outcome *o,
                  uint32_t file_id, uint64_t start_ticks, uint64_t end_ticks)
{
    uint64_t ticks = end_ticks - start_ticks;
    struct preload_op_counter *op = &c->ops[o->op];
    preload_add(&op->calls, 1);
    preload_add(&op->bytes, o->bytes_moved);
    preload_add(&op->ticks, ticks);
    if (o->failed)
        preload_add(&op->errors, 1);
    /* A call made inside an MPI-IO call: its bytes are already the MPI-IO
     * call's, in the totals and in the file's counts. */
    if (PRELOAD_UNLIKELY(PRELOAD_SELF.parent_start_ticks != 0)) {
        struct preload_outcome rare = *o;
        PRELOAD_KEEPING_ERRNO(preload_count_nested(c, &rare, file_id, start_ticks, end_ticks));
        return;
    }
    if (file_id == VIGIL_FILE_NONE || PRELOAD_WITHOUT_FILE_STATS)
        return;
    struct preload_pending *p = c->current;
    if (PRELOAD_UNLIKELY(p->file != file_id))
        PRELOAD_KEEPING_ERRNO(p = preload_count_file_change(c, file_id));
    enum vigil_op_class cls = preload_op_class(o->op);
    preload_add(&p->calls, 1);
    if (cls == VIGIL_OP_READS)
        preload_add(&p->read_bytes, o->bytes_moved);
    else if (cls == VIGIL_OP_WRITES)
        preload_add(&p->written_bytes, o->bytes_moved);
    unsigned layer = preload_stats_layer(o->op);
    if (layer < PRELOAD_STATS_LAYERS && !o->failed) {
        unsigned kind = preload_stats_kind(o->op);
        preload_stats_note(&p->stats[layer], kind, o, start_ticks, end_ticks);
        if (kind <= PRELOAD_KIND_WRITE)
            preload_timeline_note(c, kind == PRELOAD_KIND_WRITE, o->bytes_moved, end_ticks);
    }
}

/* The bookkeeping after every counted call: counters, the file's counts,
 * one activity record. errno is read only when the call failed (for its
 * record): nothing on the common path changes it, and each rare path
 * keeps it (PRELOAD_KEEPING_ERRNO). Inlined into each wrapper, where the operation is a constant:
 * its layer and class fold away and the outcome never needs to exist in memory. */
static inline __attribute__((always_inline)) void preload_call_end(const struct preload_call *call,
                                                                   const struct preload_outcome *o)
{
    struct preload_thread_counters *c = PRELOAD_SELF.counters;
    if (PRELOAD_UNLIKELY(c == NULL))
        c = preload_counters_claim(); /* leaves errno as it was */
    /* A descriptor below PRELOAD_FD_NEAR, the common case, is one test. */
    uint32_t file_id =
        PRELOAD_LIKELY((uint32_t)o->fd < PRELOAD_FD_NEAR)
            ? (uint32_t)atomic_load_explicit(&preload_fd_near[o->fd], memory_order_relaxed)
        : o->fd >= 0 ? preload_fd_get(o->fd)
                     : o->file_id;
    uint64_t end_ticks =
        PRELOAD_WITHOUT_END_CLOCK ? call->start_ticks : vigil_ticks(preload.tick_source);
    if (PRELOAD_UNLIKELY(file_id == PRELOAD_FILE_EXCLUDED)) {
        struct preload_outcome rare = *o;
        preload_count_excluded(c, &rare, end_ticks - call->start_ticks);
    } else {
        if (PRELOAD_LIKELY(!c->shared)) {
            preload_count_own(c, o, file_id, call->start_ticks, end_ticks);
        } else {
            struct preload_outcome rare = *o;
            PRELOAD_KEEPING_ERRNO(
                preload_count_shared(c, &rare, file_id, call->start_ticks, end_ticks));
        }
        /* The file's name must be in the ring before its first activity. */
        if (PRELOAD_UNLIKELY(file_id != c->announced_file)) {
            if (file_id != VIGIL_FILE_NONE)
                PRELOAD_KEEPING_ERRNO(preload_announce(c, file_id));
        }
        /* Written straight into its slot (ring_producer.h, inline): no
         * call, no copy from the stack, no page of the push's code. */
        uint64_t position = 0; /* read only when claimed; clang cannot tell */
        /* A copy of the geometry: read through `preload`, the compiler
         * reloads it after the claim's atomic operations (three loads and
         * the slot's address worked out three times). */
        const struct vigil_ring_producer ring = preload.ring_producer;
        struct vigil_activity *slot =
            PRELOAD_WITHOUT_RECORD ? NULL : ring_activity_claim(&ring, &position);
        if (PRELOAD_LIKELY(slot != NULL)) {
            *slot = (struct vigil_activity){
                .record_type = VIGIL_RECORD_ACTIVITY,
                .layer = (uint8_t)preload_op_layer(o->op),
                .op = (uint16_t)o->op,
                .file_id = file_id,
                .start_ns = call->start_ticks, /* ticks: the ring's reader converts them */
                .end_ns = end_ticks,
                .offset_bytes = o->offset_bytes,
                .bytes_asked = o->bytes_asked,
                .result = o->result,
                .errno_value = o->failed ? *PRELOAD_SELF.errno_at : 0,
                .thread_id = PRELOAD_SELF.thread_id,
                .flags = o->flags,
                .comm_size = o->comm_size,
                .parent_start_ns = PRELOAD_SELF.parent_start_ticks,
            };
            ring_activity_publish(&ring, slot, position);
        } else {
            /* What was recorded is what was counted and not excluded nor
             * dropped (preload_counters_sum): no count per record. */
            preload_count(c, &c->dropped, 1);
        }
    }
    PRELOAD_SELF.in_call = 0;
}

/* The two commonest endings. A data call on a descriptor returns the bytes
 * it moved, or -1; a meta call returns anything, -1 meaning failure. A
 * POSIX read or write also gives its buffer, whose alignment is Darshan's
 * MEM_NOT_ALIGNED (against PRELOAD_MEM_ALIGNMENT_BYTES). */
static inline __attribute__((always_inline)) void
preload_end_buffer(const struct preload_call *call, unsigned op, int fd, int64_t ret,
                   uint64_t bytes_asked, int64_t offset_bytes, const void *buffer)
{
    /* Named first: clang-format reads "ret < 0, ... ret > 0" in an
     * initializer as a template's brackets. */
    bool failed = ret < 0;
    struct preload_outcome o = {
        .op = op,
        .fd = fd,
        .result = ret,
        .failed = failed,
        .buffer = (uintptr_t)buffer,
        .bytes_asked = bytes_asked,
        .bytes_moved = failed ? 0 : (uint64_t)ret,
        .offset_bytes = offset_bytes,
    };
    preload_call_end(call, &o);
}

static inline __attribute__((always_inline)) void preload_end_data(const struct preload_call *call,
                                                                   unsigned op, int fd, int64_t ret,
                                                                   uint64_t bytes_asked,
                                                                   int64_t offset_bytes)
{
    preload_end_buffer(call, op, fd, ret, bytes_asked, offset_bytes, NULL);
}

static inline __attribute__((always_inline)) void preload_end_meta(const struct preload_call *call,
                                                                   unsigned op, int fd, int64_t ret)
{
    struct preload_outcome o = {
        .op = op,
        .fd = fd,
        .result = ret,
        .failed = ret == -1,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    preload_call_end(call, &o);
}

/* The outcome of a call about a path: its file (`file_id`, or the
 * descriptor `fd_named` it named; VIGIL_FILE_NONE, -1: none). */
#define PRELOAD_PATH_OUTCOME(op_, fd_named, file_id_, ret)                                         \
    {                                                                                              \
        .op = (op_), .fd = (fd_named), .file_id = (file_id_), .result = (ret),                     \
        .failed = (ret) < 0, .offset_bytes = VIGIL_OFFSET_UNKNOWN,                                 \
    }

/* ---- streams (wrap_stdio.c, wrap_fortify.c) ------------------------------- */

/* glibc's flag for a stream on a descriptor (libio.h, public until 2.27,
 * unchanged since): in the others (open_memstream, fmemopen…) _fileno
 * means nothing, and may well be 0. */
#define PRELOAD_IO_IS_FILEBUF 0x2000

/* A stream's descriptor, as fileno() finds it but read from glibc's FILE
 * directly: no call, no lock, errno untouched. -1 for NULL, and for
 * streams without one. */
static inline int preload_stream_fd(FILE *fp)
{
    if (fp == NULL || !(fp->_flags & PRELOAD_IO_IS_FILEBUF) || fp->_fileno < 0)
        return -1;
    return fp->_fileno;
}

/* ferror(fp) without the stream lock: the flag test ferror_unlocked makes.
 * Only for a stream the real call has just used. */
static inline bool preload_stream_error(FILE *fp)
{
    return fp != NULL && (fp->_flags & _IO_ERR_SEEN) != 0;
}

/* fread and fwrite: `ret` items of `size` bytes out of `n`; a short count
 * is a failure only when the stream's error flag says so (else: end of
 * file). */
static inline __attribute__((always_inline)) void
preload_end_stream_items(const struct preload_call *call, unsigned op, FILE *fp, size_t size,
                         size_t n, size_t ret)
{
    uint64_t asked;
    if (__builtin_mul_overflow((uint64_t)size, (uint64_t)n, &asked))
        asked = UINT64_MAX;
    int fd = preload_stream_fd(fp);
    struct preload_outcome o = {
        .op = op,
        .fd = fd,
        .result = (int64_t)ret,
        .failed = ret < n && preload_stream_error(fp),
        .bytes_asked = asked,
        .bytes_moved = (uint64_t)ret * size,
        .offset_bytes = preload_offset_advance(fd, (int64_t)((uint64_t)ret * size), true),
    };
    preload_call_end(call, &o);
}

/* fgets: the line it stored, or NULL at end of file or on an error. */
static inline __attribute__((always_inline)) void
preload_end_fgets(const struct preload_call *call, FILE *fp, int n, const char *ret)
{
    int fd = preload_stream_fd(fp);
    uint64_t moved = ret != NULL ? strlen(ret) : 0;
    struct preload_outcome o = {
        .op = VIGIL_OP_STDIO_FGETS,
        .fd = fd,
        .result = (int64_t)(intptr_t)ret,
        .failed = ret == NULL && preload_stream_error(fp),
        .bytes_asked = n > 1 ? (uint64_t)n - 1 : 0, /* room for n - 1 bytes and the NUL */
        .bytes_moved = moved,
        .offset_bytes = preload_offset_advance(fd, (int64_t)moved, true),
    };
    preload_call_end(call, &o);
}

/* fputs and puts: a negative value (EOF) on failure. `s` is read only
 * after a success; puts adds a newline. */
static inline __attribute__((always_inline)) void preload_end_puts(const struct preload_call *call,
                                                                   unsigned op, FILE *fp,
                                                                   const char *s, int ret,
                                                                   uint64_t extra)
{
    uint64_t bytes = ret >= 0 ? strlen(s) + extra : 0;
    int fd = preload_stream_fd(fp);
    struct preload_outcome o = {
        .op = op,
        .fd = fd,
        .result = ret,
        .failed = ret < 0,
        .bytes_asked = bytes,
        .bytes_moved = bytes,
        .offset_bytes = preload_offset_advance(fd, (int64_t)bytes, true),
    };
    preload_call_end(call, &o);
}

/* One byte through a stream: the getc family returns it, or EOF at end of
 * file or on an error (the stream's error flag tells which); the putc
 * family returns the byte written, or EOF on failure. */
static inline __attribute__((always_inline)) void
preload_end_byte(const struct preload_call *call, unsigned op, FILE *fp, int ret, bool reading)
{
    struct preload_outcome o = {
        .op = op,
        .fd = preload_stream_fd(fp),
        .result = ret,
        .failed = ret == EOF && (!reading || preload_stream_error(fp)),
        .bytes_asked = 1,
        .bytes_moved = ret != EOF ? 1 : 0,
        .offset_bytes = preload_offset_advance(preload_stream_fd(fp), ret != EOF, true),
    };
    preload_call_end(call, &o);
}

static inline __attribute__((always_inline)) void preload_end_getc(const struct preload_call *call,
                                                                   unsigned op, FILE *fp, int ret)
{
    preload_end_byte(call, op, fp, ret, true);
}

static inline __attribute__((always_inline)) void preload_end_putc(const struct preload_call *call,
                                                                   unsigned op, FILE *fp, int ret)
{
    preload_end_byte(call, op, fp, ret, false);
}

/* The printf family: the bytes it wrote, or a negative value on failure. */
static inline __attribute__((always_inline)) void
preload_end_printf(const struct preload_call *call, unsigned op, FILE *fp, int ret)
{
    int fd = preload_stream_fd(fp);
    struct preload_outcome o = {
        .op = op,
        .fd = fd,
        .result = ret,
        .failed = (ret < 0),
        .bytes_asked = ret > 0 ? (uint64_t)ret : 0,
        .bytes_moved = ret > 0 ? (uint64_t)ret : 0,
        .offset_bytes = preload_offset_advance(fd, ret, true),
    };
    preload_call_end(call, &o);
}

/* ---- the real functions (real.c) ----------------------------------------- */

/* Resolves `name` with dlsym(RTLD_NEXT) into *slot, once. */
void *preload_real_resolve(void **slot, const char *name) PRELOAD_HIDDEN;
#define REAL(fn)                                                                                   \
    ((__typeof__(&fn))(preload_real_##fn != NULL ? preload_real_##fn                               \
                                                 : preload_real_resolve(&preload_real_##fn, #fn)))
/* The real function once the library is active: set-up (state.c) resolved
 * every slot before it set `preload.active`, and a slot dlsym left NULL
 * stays so. Without REAL's test and its call to the resolver, the
 * wrapper's arguments need not outlive a call the counted path never
 * makes: they stay in their registers for the real call. */
#define REAL_RESOLVED(fn) ((__typeof__(&fn))preload_real_##fn)
/* Defines, in a wrapper file, the slot of a real function, and lists it in
 * the "preload_real" section, so that the constructor can resolve every
 * slot before main: a wrapper first called from a signal handler must not
 * be the one to call dlsym, which is not async-signal-safe. */
struct preload_real_entry {
    void **slot;
    const char *name;
};
#define PRELOAD_REAL_SLOT(fn)                                                                      \
    void *preload_real_##fn PRELOAD_HIDDEN __attribute__((section("vigil_hot")));                  \
    static const struct preload_real_entry preload_real_entry_##fn                                 \
        __attribute__((used, section("preload_real"))) = {&preload_real_##fn, #fn}
/* Uses, in another file, a slot that one wrapper file defines. */
#define PRELOAD_REAL_EXTERN(fn) extern void *preload_real_##fn PRELOAD_HIDDEN
/* Resolves every slot listed in the section (the constructor calls it). */
void preload_real_resolve_all(void) PRELOAD_HIDDEN;
/* The same for a function that exists only as a compat symbol (glibc's
 * __xstat and kin since 2.33), which dlsym may not return: resolved with
 * dlvsym(RTLD_NEXT) at `version`, then with dlsym as a fallback (other
 * architectures have other base versions). NULL when neither finds it. */
void *preload_real_resolve_versioned(void **slot, const char *name,
                                     const char *version) PRELOAD_HIDDEN;
#define REAL_VERSIONED(fn, version)                                                                \
    ((__typeof__(&fn))(preload_real_##fn != NULL                                                   \
                           ? preload_real_##fn                                                     \
                           : preload_real_resolve_versioned(&preload_real_##fn, #fn, version)))

/* A wrapper of exactly the shape at the top of this file, whose end is one
 * statement: the function `type fn params`, passing `args` on, ended by
 * `...`, which reads this `call` and the real function's `ret`:
 *
 *     PRELOAD_WRAP(int, unlink, (const char *path), (path),
 *                  end_path(&call, VIGIL_OP_POSIX_UNLINK, AT_FDCWD, path, 0, ret))
 *
 * It expands to the same code as the function written out; one that sits
 * on a page of its own has PRELOAD_HOT_CODE before it. A wrapper that does
 * more (checks its arguments first, calls a versioned function) is written
 * out in that shape. */
#define PRELOAD_WRAP(type, fn, params, args, ...)                                                  \
    type fn params                                                                                 \
    {                                                                                              \
        struct preload_call call;                                                                  \
        if (!preload_call_begin(&call))                                                            \
            return REAL(fn) args;                                                                  \
        type ret = REAL_RESOLVED(fn) args;                                                         \
        __VA_ARGS__;                                                                               \
        return ret;                                                                                \
    }

/* A variadic wrapper of the same shape: the function `type fn params`,
 * whose `params` end in `last, ...`, passing them on as the va_list `ap` to
 * the real `vfn` called with `vargs`; `...` as PRELOAD_WRAP's, run only when
 * the call is counted:
 *
 *     PRELOAD_WRAP_VARIADIC(int, printf, (const char *restrict format, ...), format,
 *                           vprintf, (format, ap),
 *                           preload_end_printf(&call, VIGIL_OP_STDIO_PRINTF, stdout, ret))
 *
 * The real variadic function is not called: it cannot be handed a va_list. */
#define PRELOAD_WRAP_VARIADIC(type, fn, params, last, vfn, vargs, ...)                             \
    type fn params                                                                                 \
    {                                                                                              \
        struct preload_call call;                                                                  \
        bool counted = preload_call_begin(&call);                                                  \
        va_list ap;                                                                                \
        va_start(ap, last);                                                                        \
        type ret = REAL(vfn) vargs;                                                                \
        va_end(ap);                                                                                \
        if (counted)                                                                               \
            __VA_ARGS__;                                                                           \
        return ret;                                                                                \
    }

/* ---- the report (report.c) ------------------------------------------------ */

/* Reads VIGIL_REPORT and VIGIL_REPORT_FORMAT once, at set-up, so that a
 * program changing its environment does not redirect the report. */
void preload_report_init(void) PRELOAD_HIDDEN;
bool preload_report_off(void) PRELOAD_HIDDEN; /* VIGIL_REPORT=off */

#endif
