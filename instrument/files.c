/* vigil — files and descriptors as the preload library sees them.
 *
 * Paths are interned into a fixed, lock-free hash table mapped at start-up,
 * so that opening a file never allocates: a thread claims an empty slot
 * with a compare-and-swap on its hash, copies the path into an arena, and
 * marks the slot ready. A thread that finds a slot with its hash still being
 * written waits a few hundred iterations, then moves on: at worst one path
 * gets two ids, never a wrong one. The descriptor table maps each fd to the
 * id of the file it was opened on. */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "preload.h"

#define FILE_SLOTS         PRELOAD_FILE_SLOTS
#define FILE_MAX_PROBES    64u
#define PATH_ARENA_BYTES   (16u << 20)
#define FD_TABLE_MAX       (1u << 20)
#define EXCLUDE_MAX        16
#define EXCLUDE_TEXT_BYTES 1024

enum slot_state { SLOT_EMPTY, SLOT_WRITING, SLOT_READY, SLOT_BROKEN };

struct file_slot {
    _Atomic uint64_t hash; /* 0: empty */
    _Atomic uint32_t state;
    uint32_t path_length;
    uint32_t path_offset;
    _Atomic uint32_t announced; /* ring generation its name record went into */
    _Atomic uint64_t calls, read_bytes, written_bytes;
};

static struct file_slot *slots;
static char *arena;
static _Atomic uint64_t arena_used;
/* Slots in use, in the order they were taken: a fork resets only these. */
static uint32_t *used_slots;
static _Atomic uint32_t used_count;

_Atomic uint64_t *preload_fd_table; /* 0: unknown; else PRELOAD_FD_KNOWN | file id | ref */
uint32_t preload_fd_table_size;
_Atomic uint64_t preload_fd_near[PRELOAD_FD_NEAR]; /* the table's first words */

/* Open file descriptions, shared with forked children: the first slot
 * holds the count of descriptions ever made (slot 0 is never used). */
#define DESC_SLOTS (1u << PRELOAD_DESC_BITS)
struct preload_description *preload_descriptions;
static _Atomic uint64_t *descriptions_made;

PRELOAD_REAL_EXTERN(lseek);
PRELOAD_REAL_EXTERN(fcntl);
PRELOAD_REAL_EXTERN(fstat);

/* The working directory, for relative paths. chdir fills the other buffer
 * and then flips `cwd_current`, so a reader sees one whole path or the
 * other. */
static char cwd[2][PATH_MAX];
static _Atomic int cwd_current;

static char exclude_text[EXCLUDE_TEXT_BYTES];
static const char *exclude[EXCLUDE_MAX];
static size_t exclude_length[EXCLUDE_MAX];
static int exclude_count;

static void *map_anonymous(size_t bytes)
{
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return map == MAP_FAILED ? NULL : map;
}

/* ---- interning ----------------------------------------------------------- */

static uint64_t path_hash(const char *path, size_t length)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < length; i++) {
        h ^= (unsigned char)path[i];
        h *= 0x100000001b3ull;
    }
    return h | 1; /* never 0, which marks an empty slot */
}

static bool slot_holds(const struct file_slot *s, const char *path, size_t length)
{
    /* The writer may still be copying the path: give it a moment. */
    uint32_t state = SLOT_WRITING;
    for (int spin = 0; spin < 1000; spin++) {
        state = atomic_load_explicit(&s->state, memory_order_acquire);
        if (state != SLOT_WRITING)
            break;
    }
    return state == SLOT_READY && s->path_length == length &&
           memcmp(arena + s->path_offset, path, length) == 0;
}

/* Paths that could not be given a file: the table (or its arena) was full
 * around them, or the path was too long. Their calls are in the totals,
 * under no file; the report says how many there were. */
static _Atomic uint64_t untracked;

static uint32_t fill_slot(uint32_t index, const char *path, size_t length)
{
    struct file_slot *s = &slots[index];
    uint64_t offset = atomic_fetch_add_explicit(&arena_used, length + 1, memory_order_relaxed);
    if (offset + length + 1 > PATH_ARENA_BYTES) {
        atomic_store_explicit(&s->state, SLOT_BROKEN, memory_order_release);
        atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
        return VIGIL_FILE_NONE;
    }
    memcpy(arena + offset, path, length);
    arena[offset + length] = '\0';
    s->path_offset = (uint32_t)offset;
    s->path_length = (uint32_t)length;
    uint32_t n = atomic_fetch_add_explicit(&used_count, 1, memory_order_relaxed);
    used_slots[n] = index;
    preload_file_stats_clear(index + 1);
    atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
    /* A new file, off the hot path: the moment to see whether vigild
     * asked for the names again. */
    preload_names_check();
    return index + 1;
}

uint64_t preload_file_untracked(void)
{
    return atomic_load_explicit(&untracked, memory_order_relaxed);
}

uint32_t preload_file_intern(const char *path, size_t length)
{
    if (slots == NULL)
        return VIGIL_FILE_NONE;
    if (length > VIGIL_PATH_MAX) {
        atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
        return VIGIL_FILE_NONE;
    }
    uint64_t hash = path_hash(path, length);
    for (uint32_t probe = 0; probe < FILE_MAX_PROBES; probe++) {
        uint32_t index = (uint32_t)(hash + probe) & (FILE_SLOTS - 1);
        struct file_slot *s = &slots[index];
        uint64_t seen = atomic_load_explicit(&s->hash, memory_order_acquire);
        if (seen == 0) {
            if (atomic_compare_exchange_strong_explicit(&s->hash, &seen, hash, memory_order_acq_rel,
                                                        memory_order_acquire)) {
                atomic_store_explicit(&s->state, SLOT_WRITING, memory_order_relaxed);
                return fill_slot(index, path, length);
            }
            /* Another thread took it first; `seen` is now its hash. */
        }
        if (seen == hash && slot_holds(s, path, length))
            return index + 1;
    }
    /* The table is full around this hash. */
    atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
    return VIGIL_FILE_NONE;
}

static struct file_slot *slot_of(uint32_t file_id)
{
    if (file_id == VIGIL_FILE_NONE || file_id > FILE_SLOTS || slots == NULL)
        return NULL;
    struct file_slot *s = &slots[file_id - 1];
    return atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_READY ? s : NULL;
}

const char *preload_file_path(uint32_t file_id, size_t *length)
{
    const struct file_slot *s = slot_of(file_id);
    if (s == NULL)
        return NULL;
    *length = s->path_length;
    return arena + s->path_offset;
}

void preload_file_count(uint32_t file_id, uint64_t calls, uint64_t read_bytes,
                        uint64_t written_bytes)
{
    struct file_slot *s = slot_of(file_id);
    if (s == NULL)
        return;
    atomic_fetch_add_explicit(&s->calls, calls, memory_order_relaxed);
    if (read_bytes)
        atomic_fetch_add_explicit(&s->read_bytes, read_bytes, memory_order_relaxed);
    if (written_bytes)
        atomic_fetch_add_explicit(&s->written_bytes, written_bytes, memory_order_relaxed);
}

void preload_file_counts(uint32_t file_id, uint64_t *calls, uint64_t *read_bytes,
                         uint64_t *written_bytes)
{
    struct file_slot *s = slot_of(file_id);
    *calls = s ? atomic_load_explicit(&s->calls, memory_order_relaxed) : 0;
    *read_bytes = s ? atomic_load_explicit(&s->read_bytes, memory_order_relaxed) : 0;
    *written_bytes = s ? atomic_load_explicit(&s->written_bytes, memory_order_relaxed) : 0;
}

uint32_t preload_file_count_used(void)
{
    return atomic_load_explicit(&used_count, memory_order_acquire);
}

uint32_t preload_file_used_id(uint32_t n)
{
    return used_slots[n] + 1;
}

bool preload_file_announce(uint32_t file_id)
{
    struct file_slot *s = slot_of(file_id);
    uint32_t generation = atomic_load_explicit(&preload.ring_generation, memory_order_relaxed);
    if (s == NULL || atomic_load_explicit(&s->announced, memory_order_relaxed) == generation)
        return true;
    /* Two threads may both send it: a repeated name record is harmless. If
     * the ring is full it is tried again with the file's next activity. */
    if (!vigil_ring_push_name(preload.ring, file_id, arena + s->path_offset, s->path_length))
        return false;
    atomic_store_explicit(&s->announced, generation, memory_order_relaxed);
    return true;
}

bool preload_files_announce_all(uint32_t *next, uint32_t keep_free)
{
    uint32_t used = preload_file_count_used();
    for (; *next < used; (*next)++) {
        /* Names go in while the program keeps room for its activities:
         * the rest goes at the next call here. */
        if (vigil_ring_room(preload.ring) <= keep_free ||
            !preload_file_announce(used_slots[*next] + 1))
            return false;
    }
    return true;
}

/* ---- paths ---------------------------------------------------------------- */

static size_t join(char *out, size_t out_size, const char *base, size_t base_length,
                   const char *path, size_t path_length)
{
    bool slash = base_length > 0 && base[base_length - 1] != '/';
    size_t total = base_length + slash + path_length;
    if (total + 1 > out_size)
        return 0;
    memcpy(out, base, base_length);
    if (slash)
        out[base_length] = '/';
    memcpy(out + base_length + slash, path, path_length);
    out[total] = '\0';
    return total;
}

size_t preload_absolute_path(int dirfd, const char *path, char *out, size_t out_size)
{
    /* Bounded: a name the kernel refused as too long may have no NUL
     * before unmapped memory. */
    size_t length = strnlen(path, PATH_MAX);
    if (length == PATH_MAX)
        return 0;
    size_t joined;
    if (path[0] == '/') {
        joined = join(out, out_size, "", 0, path, length);
        return preload_path_clean(out, joined, 0);
    }
    if (dirfd == AT_FDCWD) {
        /* getcwd's path has no symbolic link in it: a ".." just past it
         * is its real parent. */
        const char *base = cwd[atomic_load_explicit(&cwd_current, memory_order_acquire)];
        size_t base_length = strlen(base);
        joined = join(out, out_size, base, base_length, path, length);
        return preload_path_clean(out, joined, base_length);
    }
    /* Relative to a directory we know by its path; one we do not know (not
     * opened through us) leaves the name unresolved: no file rather than a
     * wrong one. */
    size_t base_length;
    const char *base = preload_file_path(preload_fd_get(dirfd), &base_length);
    if (base == NULL)
        return 0;
    joined = join(out, out_size, base, base_length, path, length);
    return preload_path_clean(out, joined, 0);
}

bool preload_path_is_excluded(const char *absolute_path)
{
    for (int i = 0; i < exclude_count; i++) {
        size_t n = exclude_length[i];
        if (strncmp(absolute_path, exclude[i], n) == 0 &&
            (absolute_path[n] == '/' || absolute_path[n] == '\0'))
            return true;
    }
    return false;
}

uint32_t preload_file_for_path(int dirfd, const char *path)
{
    char absolute[PATH_MAX];
    if (path == NULL)
        return VIGIL_FILE_NONE;
    /* Under an excluded directory, everything is excluded. */
    if (path[0] != '/' && dirfd != AT_FDCWD && preload_fd_get(dirfd) == PRELOAD_FILE_EXCLUDED)
        return PRELOAD_FILE_EXCLUDED;
    size_t length = preload_absolute_path(dirfd, path, absolute, sizeof absolute);
    if (length == 0)
        return VIGIL_FILE_NONE;
    if (preload_path_is_excluded(absolute))
        return PRELOAD_FILE_EXCLUDED;
    return preload_file_intern(absolute, length);
}

void preload_cwd_changed(void)
{
    int next = !atomic_load_explicit(&cwd_current, memory_order_relaxed);
    if (getcwd(cwd[next], sizeof cwd[next]) != NULL)
        atomic_store_explicit(&cwd_current, next, memory_order_release);
}

/* ---- descriptors ------------------------------------------------------------------------------
 */

/* A description's `append`: 0 when it is not in append mode; else where
 * its writes' offsets come from. */
enum {
    APPEND_UNLEARNED = 1, /* its file's end is learnt at its first write */
    APPEND_ASK_KERNEL,    /* no room in the table of ends: lseek after each write */
    APPEND_NO_OFFSET,     /* not a regular file (a pipe, a device): no offset at all */
    APPEND_END_FIRST,     /* and above: this + the index of its file's end */
};

/* A new description at `offset`: its reference for an fd's word. */
static uint64_t description_new(int64_t offset, bool append)
{
    if (preload_descriptions == NULL)
        return 0;
    uint64_t made = atomic_fetch_add_explicit(descriptions_made, 1, memory_order_relaxed);
    uint32_t index = (uint32_t)(made % (DESC_SLOTS - 1)) + 1;
    uint32_t tag = (uint32_t)(made / (DESC_SLOTS - 1)) & PRELOAD_DESC_TAG_MASK;
    struct preload_description *d = &preload_descriptions[index];
    /* The old tag goes first: a reader of the old description must not
     * take the new offset for its own. */
    atomic_store_explicit(&d->tag, PRELOAD_DESC_TAG_MASK + 1, memory_order_relaxed);
    atomic_store_explicit(&d->offset, offset, memory_order_relaxed);
    atomic_store_explicit(&d->append, append ? APPEND_UNLEARNED : 0, memory_order_relaxed);
    atomic_store_explicit(&d->tag, tag | (append ? PRELOAD_DESC_APPEND : 0), memory_order_release);
    return ((uint64_t)tag << PRELOAD_DESC_BITS | index) << PRELOAD_FD_REF_SHIFT;
}

/* fd's description, if its word has one and it is still the same. */
static struct preload_description *description_of(uint64_t word)
{
    uint32_t ref = (uint32_t)(word >> PRELOAD_FD_REF_SHIFT);
    if (ref == 0 || preload_descriptions == NULL)
        return NULL;
    struct preload_description *d = &preload_descriptions[ref & (DESC_SLOTS - 1)];
    if ((atomic_load_explicit(&d->tag, memory_order_acquire) & ~PRELOAD_DESC_APPEND) !=
        ref >> PRELOAD_DESC_BITS)
        return NULL;
    return d;
}

void preload_fd_set(int fd, uint32_t file_id, int64_t offset, bool append)
{
    _Atomic uint64_t *slot = preload_fd_slot(fd);
    if (slot != NULL) {
        /* An excluded file's offset is nobody's business. */
        uint64_t ref = file_id == PRELOAD_FILE_EXCLUDED ? 0 : description_new(offset, append);
        atomic_store_explicit(slot, PRELOAD_FD_KNOWN | file_id | ref, memory_order_relaxed);
    }
}

void preload_fd_clear(int fd)
{
    _Atomic uint64_t *slot = preload_fd_slot(fd);
    if (slot != NULL)
        atomic_store_explicit(slot, 0, memory_order_relaxed);
}

void preload_fd_forget(int fd, uint32_t file_id)
{
    _Atomic uint64_t *slot = preload_fd_slot(fd);
    if (slot == NULL)
        return;
    uint64_t expected = atomic_load_explicit(slot, memory_order_relaxed);
    if ((expected & (PRELOAD_FD_KNOWN | UINT32_MAX)) != (PRELOAD_FD_KNOWN | file_id))
        return;
    atomic_compare_exchange_strong_explicit(slot, &expected, 0, memory_order_relaxed,
                                            memory_order_relaxed);
}

void preload_fd_copy(int from, int to)
{
    _Atomic uint64_t *to_slot = preload_fd_slot(to);
    if (to_slot != NULL)
        atomic_store_explicit(to_slot, preload_fd_word(from), memory_order_relaxed);
}

/* ---- ends of files appended to ---------------------------------------------------------------
 *
 * A write in append mode goes to its file's end, wherever the description's
 * position is. Asking the kernel where that was (lseek after the write)
 * cost a system call per write; instead the end of every file this process
 * appends to is learnt once, by fstat after the first write of each
 * description in append mode, and then counted here: each append takes its
 * offset with one atomic add, so several descriptions appending to one file
 * (opened twice, or by a forked child: the table is shared like the
 * descriptions) each get their own part of it. A file is known by its
 * device and inode, not its path, so two names of one file are one end.
 * What another process appends (not one forked from here, or one that ran
 * exec) is not seen until one of our descriptions learns the end again. */
#define APPEND_END_SLOTS  (1u << 14)
#define APPEND_END_PROBES 64u

struct append_end {
    _Atomic uint64_t key; /* 0: free; else the file's device and inode, mixed */
    _Atomic int64_t end;
};

static struct append_end *append_ends;
static _Atomic uint64_t *append_ends_taken; /* slot 0's key */

/* The kernel's offset of fd now, or -1. */
static int64_t kernel_offset(int fd)
{
    int saved_errno = errno;
    off_t at = REAL(lseek)(fd, 0, SEEK_CUR);
    errno = saved_errno;
    return at;
}

static uint64_t file_key(dev_t dev, ino_t ino)
{
    /* splitmix64's finaliser over both: a 64-bit collision of two files is
     * not a worry next to the races the table already admits. */
    uint64_t z = (uint64_t)dev * 0x9e3779b97f4a7c15ull ^ (uint64_t)ino;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) | 1; /* never 0, which marks a free slot */
}

/* The end of the file (dev, ino): found, or taken when `take`; NULL when
 * there is none, or no room. Slot 0 holds the count of slots taken. */
static struct append_end *append_end_of(dev_t dev, ino_t ino, bool take)
{
    if (append_ends == NULL)
        return NULL;
    uint64_t key = file_key(dev, ino);
    for (uint32_t probe = 0; probe < APPEND_END_PROBES; probe++) {
        uint32_t index = 1 + (uint32_t)((key + probe) % (APPEND_END_SLOTS - 1));
        struct append_end *e = &append_ends[index];
        uint64_t seen = atomic_load_explicit(&e->key, memory_order_acquire);
        if (seen == 0 && take &&
            atomic_compare_exchange_strong_explicit(&e->key, &seen, key, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            atomic_fetch_add_explicit(append_ends_taken, 1, memory_order_relaxed);
            return e;
        }
        if (seen == key)
            return e;
        if (seen == 0)
            return NULL; /* not taken, and not to be */
    }
    return NULL;
}

/* Where a write of `moved` bytes in append mode began, and the position
 * after it (the end it made). */
static int64_t append_written(int fd, struct preload_description *d, uint32_t append, int64_t moved)
{
    int64_t bytes = moved > 0 ? moved : 0;
    if (append >= APPEND_END_FIRST) {
        struct append_end *e = &append_ends[append - APPEND_END_FIRST];
        int64_t start = bytes > 0 ? atomic_fetch_add_explicit(&e->end, bytes, memory_order_relaxed)
                                  : atomic_load_explicit(&e->end, memory_order_relaxed);
        atomic_store_explicit(&d->offset, start + bytes, memory_order_relaxed);
        return start;
    }
    if (append == APPEND_NO_OFFSET || moved < 0)
        return VIGIL_OFFSET_UNKNOWN;
    int64_t end = -1;
    if (append == APPEND_ASK_KERNEL) {
        end = kernel_offset(fd);
    } else {
        /* The first write of this description: learn the end it made. */
        int saved_errno = errno;
        struct stat st;
        int ret = REAL(fstat)(fd, &st);
        errno = saved_errno;
        if (ret != 0)
            return VIGIL_OFFSET_UNKNOWN;
        if (!S_ISREG(st.st_mode)) {
            atomic_store_explicit(&d->append, APPEND_NO_OFFSET, memory_order_relaxed);
            return VIGIL_OFFSET_UNKNOWN;
        }
        end = st.st_size;
        struct append_end *e = append_end_of(st.st_dev, st.st_ino, true);
        if (e != NULL) {
            /* The kernel's word is the truth: it also covers what others
             * appended since the file's end was last learnt. */
            atomic_store_explicit(&e->end, end, memory_order_relaxed);
            append = APPEND_END_FIRST + (uint32_t)(e - append_ends);
        } else {
            append = APPEND_ASK_KERNEL;
        }
        atomic_store_explicit(&d->append, append, memory_order_relaxed);
    }
    if (end < 0)
        return VIGIL_OFFSET_UNKNOWN;
    atomic_store_explicit(&d->offset, end, memory_order_relaxed);
    return end - bytes >= 0 ? end - bytes : VIGIL_OFFSET_UNKNOWN;
}

/* ---- offsets ----------------------------------------------------------------------------------
 */

void preload_offset_set(int fd, int64_t offset)
{
    /* In append mode too: reads and seeks use the position like any other;
     * only writes go to the end. */
    struct preload_description *d = description_of(preload_fd_word(fd));
    if (d != NULL)
        atomic_store_explicit(&d->offset, offset < 0 ? -1 : offset, memory_order_relaxed);
}

/* What an inherited descriptor (one not opened through us: from before
 * exec, or from a call we do not follow) is, from /proc/self/fd: a file's
 * path, with a description at the kernel's offset; for anything that is
 * not a path (a pipe, a socket), known to be nothing. `standard` names a
 * standard stream that is not a regular file (a terminal, a pipe,
 * /dev/null) instead. */
static uint64_t fd_resolve(int fd, const char *standard)
{
    int saved_errno = errno;
    char link[64], path[PATH_MAX];
    struct stat st;
    uint64_t word = 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    if (length <= 0 || REAL(fstat)(fd, &st) != 0) {
        errno = saved_errno;
        return 0; /* not open (any more): nothing to remember */
    }
    path[length] = '\0';
    bool regular = S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode);
    uint32_t file_id = VIGIL_FILE_NONE;
    if (standard != NULL && !S_ISREG(st.st_mode))
        file_id = preload_file_intern(standard, strlen(standard));
    else if (path[0] == '/' && regular && !(S_ISDIR(st.st_mode) && standard != NULL))
        file_id = preload_path_is_excluded(path) ? PRELOAD_FILE_EXCLUDED
                                                 : preload_file_intern(path, (size_t)length);
    word = PRELOAD_FD_KNOWN | file_id;
    if (regular && file_id != PRELOAD_FILE_EXCLUDED && file_id != VIGIL_FILE_NONE) {
        int flags = REAL(fcntl)(fd, F_GETFL);
        word |= description_new(kernel_offset(fd), flags >= 0 && (flags & O_APPEND));
    }
    errno = saved_errno;
    return word;
}

int64_t preload_offset_slow(int fd, int64_t moved, enum preload_move how)
{
    _Atomic uint64_t *slot = preload_fd_slot(fd);
    if (slot == NULL || preload_descriptions == NULL)
        return VIGIL_OFFSET_UNKNOWN;
    uint64_t word = atomic_load_explicit(slot, memory_order_relaxed);
    bool resolved = word == 0; /* its offset is the kernel's after this call */
    if (word == 0) {
        /* First use of a descriptor we did not see open. */
        word = fd_resolve(fd, NULL);
        if (word == 0)
            return VIGIL_OFFSET_UNKNOWN;
        uint64_t expected = 0;
        if (!atomic_compare_exchange_strong_explicit(slot, &expected, word, memory_order_relaxed,
                                                     memory_order_relaxed))
            word = expected;
    }
    struct preload_description *d = description_of(word);
    if (d == NULL)
        return VIGIL_OFFSET_UNKNOWN;
    uint32_t append = atomic_load_explicit(&d->append, memory_order_relaxed);
    /* A stream's position in append mode, or on a description whose offset
     * we lost, is not the kernel's: stdio buffers. And a stream in append
     * mode moves the kernel's offset where we do not see it. */
    if (how == PRELOAD_MOVE_STREAM) {
        if (append != 0)
            atomic_store_explicit(&d->offset, -1, memory_order_relaxed);
        return VIGIL_OFFSET_UNKNOWN;
    }
    if (how == PRELOAD_MOVE_WRITE && append != 0)
        return append_written(fd, d, append, moved);
    /* A read in append mode: the position, as on the inline path. */
    int64_t offset = atomic_load_explicit(&d->offset, memory_order_relaxed);
    if (append != 0 && offset >= 0 && !resolved) {
        if (moved > 0)
            atomic_store_explicit(&d->offset, offset + moved, memory_order_relaxed);
        return offset;
    }
    int64_t now = kernel_offset(fd); /* after the call: where it ended */
    if (now < 0)
        return VIGIL_OFFSET_UNKNOWN;
    int64_t start = now - (moved > 0 ? moved : 0);
    atomic_store_explicit(&d->offset, now, memory_order_relaxed);
    return start >= 0 ? start : VIGIL_OFFSET_UNKNOWN;
}

void preload_offset_append_set(int fd, bool append)
{
    struct preload_description *d = description_of(preload_fd_word(fd));
    if (d == NULL || (atomic_load_explicit(&d->append, memory_order_relaxed) != 0) == append)
        return;
    /* Switched on, its file's end is learnt at the next write; switched
     * off, the position is where the last append left it, which we have.
     * The tag's mark sends its moves out of line while it is on. */
    if (append) {
        atomic_store_explicit(&d->append, APPEND_UNLEARNED, memory_order_relaxed);
        atomic_fetch_or_explicit(&d->tag, PRELOAD_DESC_APPEND, memory_order_release);
    } else {
        atomic_fetch_and_explicit(&d->tag, ~PRELOAD_DESC_APPEND, memory_order_release);
        atomic_store_explicit(&d->append, 0, memory_order_relaxed);
    }
}

void preload_offset_truncated(int fd, int64_t length)
{
    struct preload_description *d = description_of(preload_fd_word(fd));
    if (d == NULL || length < 0 ||
        atomic_load_explicit(append_ends_taken, memory_order_relaxed) == 0)
        return;
    uint32_t append = atomic_load_explicit(&d->append, memory_order_relaxed);
    struct append_end *e = NULL;
    if (append >= APPEND_END_FIRST) {
        e = &append_ends[append - APPEND_END_FIRST];
    } else {
        /* Another description may append to this file: which one is its
         * file is for the kernel to say (one fstat, only in a process
         * that appends at all). */
        int saved_errno = errno;
        struct stat st;
        if (REAL(fstat)(fd, &st) == 0 && S_ISREG(st.st_mode))
            e = append_end_of(st.st_dev, st.st_ino, false);
        errno = saved_errno;
    }
    if (e != NULL)
        atomic_store_explicit(&e->end, length, memory_order_relaxed);
}

/* ---- set-up -------------------------------------------------------------------- */

/* Non-empty items of `text` between `separator`s. */
static int count_items(const char *text, char separator)
{
    int n = 0;
    for (const char *p = text; *p; p++)
        n += *p != separator && (p == text || p[-1] == separator);
    return n;
}

/* VIGIL_EXCLUDE: path prefixes whose calls are counted but not recorded;
 * empty excludes nothing. They are separated by ';', as in the
 * configuration's [preload] exclude (a LIST, like every list of the
 * configuration), so that one rule holds everywhere; a path may well hold
 * ':' (/dev/disk/by-path/pci-0000:00:1f.2-ata-1) but hardly ';'. A value
 * without any ';' is read the old way, split at ':', so that settings
 * written for earlier versions still work (`vigil run` warns about them);
 * one prefix that holds a ':' is written with a ';' after it. A list
 * longer than we hold is refused whole, with a message, rather than cut
 * short: a cut list would record what the site meant to exclude. */
static void parse_exclusions(void)
{
    const char *text = getenv("VIGIL_EXCLUDE");
    if (text == NULL)
        text = VIGIL_EXCLUDE_DEFAULT;
    char separator = strchr(text, ';') != NULL || strchr(text, ':') == NULL ? ';' : ':';
    size_t length = strlen(text);
    int prefixes = count_items(text, separator);
    if (length >= sizeof exclude_text || prefixes > EXCLUDE_MAX) {
        dprintf(2,
                "vigil: VIGIL_EXCLUDE has %d prefixes in %zu bytes, more than the %d in %zu "
                "bytes it can hold; using %s\n",
                prefixes, length, EXCLUDE_MAX, sizeof exclude_text - 1, VIGIL_EXCLUDE_DEFAULT);
        text = VIGIL_EXCLUDE_DEFAULT;
        separator = ';';
        length = strlen(text);
    }
    memcpy(exclude_text, text, length + 1);
    exclude_count = 0;
    char *save = NULL;
    const char separators[] = {separator, '\0'};
    for (char *p = strtok_r(exclude_text, separators, &save); p != NULL;
         p = strtok_r(NULL, separators, &save)) {
        size_t n = strlen(p);
        while (n > 1 && p[n - 1] == '/')
            p[--n] = '\0'; /* "/dev/" excludes what "/dev" does */
        exclude[exclude_count] = p;
        exclude_length[exclude_count++] = n;
    }
}

/* A standard stream on a regular file is named by its path (gzip's output
 * is out.gz); on a terminal, a pipe or a device, <stdin>, <stdout> and
 * <stderr>. */
static void name_standard_streams(void)
{
    static const char *const names[] = {"<stdin>", "<stdout>", "<stderr>"};
    for (int fd = 0; fd < 3; fd++) {
        uint64_t word = fd_resolve(fd, names[fd]);
        if (word != 0) /* only those that are open */
            atomic_store_explicit(preload_fd_slot(fd), word, memory_order_relaxed);
    }
}

bool preload_files_init(void)
{
    struct rlimit limit;
    preload_fd_table_size = FD_TABLE_MAX;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_max < FD_TABLE_MAX)
        preload_fd_table_size = (uint32_t)limit.rlim_max;
    slots = map_anonymous(FILE_SLOTS * sizeof *slots);
    arena = map_anonymous(PATH_ARENA_BYTES);
    used_slots = map_anonymous(FILE_SLOTS * sizeof *used_slots);
    preload_fd_table = map_anonymous(preload_fd_table_size * sizeof *preload_fd_table);
    /* Shared: a forked child moves the same offsets as its parent. */
    void *shared = mmap(NULL, DESC_SLOTS * sizeof *preload_descriptions, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!slots || !arena || !used_slots || !preload_fd_table || shared == MAP_FAILED)
        return false;
    preload_descriptions = shared;
    descriptions_made = (_Atomic uint64_t *)(void *)&preload_descriptions[0];
    void *ends = mmap(NULL, APPEND_END_SLOTS * sizeof *append_ends, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (ends == MAP_FAILED)
        return false;
    append_ends = ends;
    append_ends_taken = &append_ends[0].key;
    if (!preload_file_stats_init())
        return false;
    if (getcwd(cwd[0], sizeof cwd[0]) == NULL)
        cwd[0][0] = '\0';
    parse_exclusions();
    name_standard_streams();
    return true;
}

void preload_files_reset_after_fork(void)
{
    /* The child keeps the names and descriptors it inherited, and starts its
     * own counts; its new ring needs every name record again, which the
     * ring generation takes care of. */
    atomic_store_explicit(&untracked, 0, memory_order_relaxed);
    uint32_t used = preload_file_count_used();
    for (uint32_t i = 0; i < used; i++) {
        struct file_slot *s = &slots[used_slots[i]];
        atomic_store_explicit(&s->calls, 0, memory_order_relaxed);
        atomic_store_explicit(&s->read_bytes, 0, memory_order_relaxed);
        atomic_store_explicit(&s->written_bytes, 0, memory_order_relaxed);
    }
    preload_file_stats_reset_after_fork();
}
