/* vigil — the shared-memory activity ring (see ring.h for the contract and
 * ring_layout.h for the memory layout and the meaning of slot marks).
 *
 * Producers: claim positions with one compare-and-swap on the head, after
 * checking that the slot of the last position they want is free for this
 * lap; write the payload; publish it by storing the mark with release
 * order. The consumer frees slots strictly in order, so if the last slot of
 * a claim is free, every slot before it is too.
 *
 * Consumer: for each position below the head, wait for its mark to say
 * "written", copy the payload out, check the mark did not move while it was
 * copied, validate the copy, free the slot, hand the copy on. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring_layout.h"
#include "ring_producer.h"
#include "vigil/ring.h"

struct vigil_ring {
    struct ring_header *header;
    struct ring_slot *slots;
    uint64_t mask; /* slot_count - 1, from our own validated copy */
    uint32_t slot_count;
    enum vigil_tick_source tick_source; /* our own validated copy */
    size_t map_bytes;
    int fd;          /* the memfd we created, or -1 when attached */
    dev_t fd_device; /* what fd was, to recognise it at close */
    ino_t fd_inode;
    /* Consumer state lives here, never in the mapping the producer can write. */
    uint64_t tail;     /* the next position to read */
    uint64_t released; /* slots below it are free again; released <= tail */
    bool hold;         /* read slots stay taken until vigil_ring_release */
    uint64_t dropped_seen;
    uint64_t resumed_at, lost_at_resume; /* from the consumer before us */
    uint32_t producer_features;          /* as attach read them */
    /* The open names request (0: none) and, once the producer answered it,
     * the head then: every name record of the answer lies below it. */
    uint64_t names_wanted, names_answer_head;
    bool names_answer_seen;
    /* What this consumer last published (vigil_ring_publish_energy): the
     * power is the rate since then. Never read back from the mapping. */
    double published_energy_j;
    uint64_t published_t_ns;
};

static inline uint64_t lap_base(const struct vigil_ring *ring, uint64_t position)
{
    return position & ~ring->mask;
}

static inline struct ring_slot *slot_at(const struct vigil_ring *ring, uint64_t position)
{
    return &ring->slots[position & ring->mask];
}

static bool slot_count_is_valid(uint64_t slot_count)
{
    return slot_count >= VIGIL_RING_MIN_SLOTS && slot_count <= VIGIL_RING_MAX_SLOTS &&
           (slot_count & (slot_count - 1)) == 0;
}

static size_t ring_bytes(uint64_t slot_count)
{
    return RING_HEADER_BYTES + (size_t)slot_count * VIGIL_RING_SLOT_BYTES;
}

static struct vigil_ring *ring_wrap(void *map, size_t map_bytes, uint32_t slot_count,
                                    enum vigil_tick_source tick_source, int fd)
{
    struct vigil_ring *ring = calloc(1, sizeof *ring);
    if (ring == NULL)
        return NULL;
    ring->header = map;
    ring->slots = (struct ring_slot *)((char *)map + RING_HEADER_BYTES);
    ring->slot_count = slot_count;
    ring->mask = slot_count - 1u;
    ring->tick_source = tick_source;
    ring->map_bytes = map_bytes;
    ring->fd = fd;
    return ring;
}

struct vigil_ring *vigil_ring_create(uint32_t slot_count, enum vigil_tick_source ticks,
                                     struct vigil_error *err)
{
    if (!slot_count_is_valid(slot_count)) {
        vigil_error_set(err, "ring of %u slots: the count must be a power of two from %u to %u",
                        slot_count, VIGIL_RING_MIN_SLOTS, VIGIL_RING_MAX_SLOTS);
        return NULL;
    }
    if (ticks != VIGIL_TICKS_MONOTONIC_NS && ticks != VIGIL_TICKS_TSC) {
        vigil_error_set(err, "ring with unknown tick source %d", (int)ticks);
        return NULL;
    }
    size_t bytes = ring_bytes(slot_count);
    int fd = memfd_create("vigil-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) {
        vigil_error_set(err, "memfd_create for the ring: %s", strerror(errno));
        return NULL;
    }
    /* Sealed so that nobody, this process included, can shrink the file
     * under the consumer's mapping and make it fault (SIGBUS). */
    if (ftruncate(fd, (off_t)bytes) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        vigil_error_set(err, "sizing and sealing the ring's memfd (%zu bytes): %s", bytes,
                        strerror(errno));
        close(fd);
        return NULL;
    }
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        vigil_error_set(err, "mapping the ring (%zu bytes): %s", bytes, strerror(errno));
        close(fd);
        return NULL;
    }
    struct ring_header *h = map;
    h->magic = RING_MAGIC;
    h->version = RING_VERSION;
    h->slot_bytes = VIGIL_RING_SLOT_BYTES;
    h->slot_count = slot_count;
    h->total_bytes = bytes;
    h->producer_pid = (uint32_t)getpid();
    h->tick_source = ticks;
    h->producer_features = RING_PRODUCER_RESENDS_NAMES;

    struct vigil_ring *ring = ring_wrap(map, bytes, slot_count, ticks, fd);
    struct stat st;
    if (ring != NULL && fstat(fd, &st) == 0) {
        ring->fd_device = st.st_dev;
        ring->fd_inode = st.st_ino;
    }
    if (ring == NULL) {
        vigil_error_set(err, "no memory for the ring's handle");
        munmap(map, bytes);
        close(fd);
    }
    return ring;
}

/* Checks the header against what the consumer knows independently: the
 * file's size. Every field is read once into a local first, since the
 * producer may be changing them. */
static bool header_is_valid(const struct ring_header *h, size_t file_bytes, struct vigil_error *err)
{
    uint32_t magic = h->magic, version = h->version, slot_bytes = h->slot_bytes;
    uint32_t slot_count = h->slot_count, tick_source = h->tick_source;
    uint64_t total = h->total_bytes;
    if (magic != RING_MAGIC) {
        vigil_error_set(err, "not a vigil ring: magic 0x%08x, expected 0x%08x", magic, RING_MAGIC);
        return false;
    }
    if (version != RING_VERSION) {
        vigil_error_set(err, "ring version %u, this vigil reads version %u", version, RING_VERSION);
        return false;
    }
    if (slot_bytes != VIGIL_RING_SLOT_BYTES) {
        vigil_error_set(err, "ring slots of %u bytes, expected %u", slot_bytes,
                        VIGIL_RING_SLOT_BYTES);
        return false;
    }
    if (!slot_count_is_valid(slot_count)) {
        vigil_error_set(err, "ring of %u slots: not a power of two from %u to %u", slot_count,
                        VIGIL_RING_MIN_SLOTS, VIGIL_RING_MAX_SLOTS);
        return false;
    }
    if (tick_source != VIGIL_TICKS_MONOTONIC_NS && tick_source != VIGIL_TICKS_TSC) {
        vigil_error_set(err, "ring with unknown tick source %u", tick_source);
        return false;
    }
    if (total != ring_bytes(slot_count) || total != file_bytes) {
        vigil_error_set(err,
                        "ring size mismatch: %u slots need %zu bytes, the header says %llu, the "
                        "file has %zu (truncated or corrupt)",
                        slot_count, ring_bytes(slot_count), (unsigned long long)total, file_bytes);
        return false;
    }
    return true;
}

struct vigil_ring *vigil_ring_attach(int fd, struct vigil_error *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        vigil_error_set(err, "ring fd %d: %s", fd, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        vigil_error_set(err, "ring fd %d is not a memory file", fd);
        return NULL;
    }
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0) {
        vigil_error_set(err, "ring fd %d cannot be sealed (%s): rings are memfds", fd,
                        strerror(errno));
        return NULL;
    }
    if (!(seals & F_SEAL_SHRINK)) {
        vigil_error_set(err,
                        "ring fd %d is not sealed against shrinking: its producer could truncate "
                        "it and crash the reader",
                        fd);
        return NULL;
    }
    size_t file_bytes = (size_t)st.st_size;
    if (st.st_size < (off_t)RING_HEADER_BYTES || file_bytes > ring_bytes(VIGIL_RING_MAX_SLOTS)) {
        vigil_error_set(err,
                        "ring of %lld bytes: a ring has %u to %zu bytes (truncated or corrupt)",
                        (long long)st.st_size, RING_HEADER_BYTES, ring_bytes(VIGIL_RING_MAX_SLOTS));
        return NULL;
    }
    void *map = mmap(NULL, file_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        vigil_error_set(err, "mapping ring fd %d (%zu bytes): %s", fd, file_bytes, strerror(errno));
        return NULL;
    }
    struct ring_header *h = map;
    /* Read once: these copies are what header_is_valid checks and what we
     * keep, whatever the producer writes into the header afterwards. */
    struct ring_header copy;
    memcpy(&copy, h, offsetof(struct ring_header, head));
    if (!header_is_valid(&copy, file_bytes, err)) {
        munmap(map, file_bytes);
        return NULL;
    }
    struct vigil_ring *ring =
        ring_wrap(map, file_bytes, copy.slot_count, (enum vigil_tick_source)copy.tick_source, -1);
    if (ring == NULL) {
        vigil_error_set(err, "no memory for the ring's handle");
        munmap(map, file_bytes);
        return NULL;
    }
    /* A ring may have had a consumer before us (a vigild that restarted):
     * start where it stopped. What it freed early, before it had stored it,
     * is gone with it; counted, never trusted beyond one lap. */
    uint64_t consumed = atomic_load_explicit(&h->consumed, memory_order_acquire);
    uint64_t committed = atomic_load_explicit(&h->committed, memory_order_acquire);
    ring->tail = ring->released = ring->resumed_at = consumed;
    ring->lost_at_resume =
        committed <= consumed && consumed - committed <= copy.slot_count ? consumed - committed : 0;
    ring->dropped_seen = 0;
    ring->producer_features = copy.producer_features;
    return ring;
}

int vigil_ring_fd(const struct vigil_ring *ring)
{
    return ring->fd;
}

uint32_t vigil_ring_slot_count(const struct vigil_ring *ring)
{
    return ring->slot_count;
}

enum vigil_tick_source vigil_ring_tick_source(const struct vigil_ring *ring)
{
    return ring->tick_source;
}

uint64_t vigil_ring_dropped(const struct vigil_ring *ring)
{
    return atomic_load_explicit(&ring->header->dropped, memory_order_relaxed);
}

static bool fd_is_ours(const struct vigil_ring *ring)
{
    struct stat st;
    return ring->fd >= 0 && fstat(ring->fd, &st) == 0 && st.st_dev == ring->fd_device &&
           st.st_ino == ring->fd_inode;
}

bool vigil_ring_move_fd(struct vigil_ring *ring, int min_fd)
{
    if (!fd_is_ours(ring))
        return false;
    int moved = fcntl(ring->fd, F_DUPFD_CLOEXEC, min_fd);
    if (moved < 0)
        return false;
    close(ring->fd);
    ring->fd = moved;
    return true;
}

void vigil_ring_close(struct vigil_ring *ring)
{
    if (ring == NULL)
        return;
    munmap(ring->header, ring->map_bytes);
    if (fd_is_ours(ring))
        close(ring->fd);
    free(ring);
}

/* ---- producer ---------------------------------------------------------- */

/* ring_claim, ring_publish and the activity's claim and publication are in
 * ring_producer.h, inline, shared with the preload library's wrappers. */

/* A push through a producer's copy of the geometry
 * (vigil_ring_producer_view): it touches the head's line and the slot, not
 * the ring's handle. */
static inline bool ring_producer_push(const struct vigil_ring_producer *p,
                                      const struct vigil_activity *activity)
{
    uint64_t pos;
    struct vigil_activity *slot = ring_activity_claim(p, &pos);
    if (slot == NULL)
        return false;
    *slot = *activity;
    ring_activity_publish(p, slot, pos);
    return true;
}

bool vigil_ring_push(struct vigil_ring *ring, const struct vigil_activity *activity)
{
    struct vigil_ring_producer p = {ring->header, ring->slots, ring->mask};
    return ring_producer_push(&p, activity);
}

bool vigil_ring_push_view(const struct vigil_ring_producer *p,
                          const struct vigil_activity *activity)
{
    return ring_producer_push(p, activity);
}

void vigil_ring_producer_view(const struct vigil_ring *ring, struct vigil_ring_producer *out)
{
    *out = ring == NULL ? (struct vigil_ring_producer){NULL, NULL, 0}
                        : (struct vigil_ring_producer){ring->header, ring->slots, ring->mask};
}

static uint32_t name_slots(size_t length)
{
    if (length <= RING_NAME_FIRST_PATH_BYTES)
        return 1;
    size_t rest = length - RING_NAME_FIRST_PATH_BYTES;
    return 1u + (uint32_t)((rest + RING_NAME_NEXT_PATH_BYTES - 1) / RING_NAME_NEXT_PATH_BYTES);
}

bool vigil_ring_push_name(struct vigil_ring *ring, uint32_t file_id, const char *path,
                          size_t length)
{
    if (!vigil_name_check(file_id, path, length, NULL))
        return false;
    uint32_t slots = name_slots(length);
    uint64_t pos;
    if (!ring_claim(ring->header, ring->slots, ring->mask, slots, &pos))
        return false;

    struct ring_name_first *first = &slot_at(ring, pos)->payload.name_first;
    size_t chunk = length < RING_NAME_FIRST_PATH_BYTES ? length : RING_NAME_FIRST_PATH_BYTES;
    first->record_type = VIGIL_RECORD_NAME;
    first->slots = (uint8_t)slots;
    first->length = (uint16_t)length;
    first->file_id = file_id;
    first->seq = pos;
    memcpy(first->path, path, chunk);
    size_t done = chunk;
    for (uint32_t i = 1; i < slots; i++) {
        struct ring_name_next *next = &slot_at(ring, pos + i)->payload.name_next;
        chunk =
            length - done < RING_NAME_NEXT_PATH_BYTES ? length - done : RING_NAME_NEXT_PATH_BYTES;
        next->record_type = RING_RECORD_NAME_CONTINUATION;
        next->index = (uint8_t)i;
        next->reserved = 0;
        next->file_id = file_id;
        memcpy(next->path, path + done, chunk);
        done += chunk;
        ring_publish(slot_at(ring, pos + i), pos + i, ring->mask);
    }
    /* The first slot last: the consumer then mostly finds the whole record. */
    ring_publish(slot_at(ring, pos), pos, ring->mask);
    return true;
}

/* ---- consumer ---------------------------------------------------------- */

struct drain {
    struct vigil_ring *ring;
    unsigned flags;
    const struct vigil_tick_clock *clock; /* NULL: leave times in ticks */
    struct vigil_ring_drain_report *report;
    struct vigil_ring_record record; /* reused for every record of one drain */
};

/* What looking at one position found. */
enum slot_state { SLOT_WRITTEN, SLOT_PENDING, SLOT_GARBAGE };

static bool first_problem(const struct drain *d)
{
    return d->report->first_problem.message[0] == '\0';
}

/* Moves the tail past positions [tail, tail + count); their slots are
 * freed by free_slots, at once or when the owner releases them. */
static void release(struct drain *d, uint32_t count)
{
    d->ring->tail += count;
    d->report->slots += count;
}

/* Frees the slots of positions [released, upto) for the producers' next lap. */
static void free_slots(struct vigil_ring *ring, uint64_t upto)
{
    for (uint64_t pos = ring->released; pos < upto; pos++)
        atomic_store_explicit(&slot_at(ring, pos)->mark, lap_base(ring, pos) + ring->slot_count,
                              memory_order_release);
    ring->released = upto;
    atomic_store_explicit(&ring->header->consumed, upto, memory_order_release);
}

static void skip(struct drain *d, uint32_t count, uint64_t *counter, const char *why)
{
    if (first_problem(d))
        vigil_error_set(&d->report->first_problem, "ring position %llu skipped: %s",
                        (unsigned long long)d->ring->tail, why);
    *counter += count;
    release(d, count);
}

/* Copies the payload of `position` into `out` if it is written, checking
 * that its mark did not move while it was copied (a torn read). */
static enum slot_state read_slot(struct drain *d, uint64_t position, union ring_payload *out,
                                 bool *torn)
{
    struct vigil_ring *ring = d->ring;
    struct ring_slot *slot = slot_at(ring, position);
    uint64_t mark = atomic_load_explicit(&slot->mark, memory_order_acquire);
    uint64_t base = lap_base(ring, position);
    *torn = false;
    if (mark == base)
        return SLOT_PENDING;
    if (mark != base + 1)
        return SLOT_GARBAGE;
    memcpy(out, (const void *)&slot->payload, sizeof *out);
    atomic_thread_fence(memory_order_acquire);
    *torn = atomic_load_explicit(&slot->mark, memory_order_relaxed) != mark;
    return SLOT_WRITTEN;
}

/* Handles the activity at the tail; returns whether it was handed out. */
static bool take_activity(struct drain *d, const union ring_payload *payload)
{
    struct vigil_error why;
    struct vigil_activity *a = &d->record.activity;
    memcpy(a, &payload->activity, sizeof *a);
    if (a->seq != d->ring->tail) {
        skip(d, 1, &d->report->corrupt, "activity carries another position's seq");
        return false;
    }
    /* Converted first, checked after: ticks far from the clock's base wrap
     * round, and a record that ends before it starts must not get out. */
    if (d->clock != NULL) {
        a->start_ns = vigil_tick_clock_ns(d->clock, a->start_ns);
        a->end_ns = vigil_tick_clock_ns(d->clock, a->end_ns);
        if (a->parent_start_ns != 0)
            a->parent_start_ns = vigil_tick_clock_ns(d->clock, a->parent_start_ns);
    }
    if (!vigil_activity_check(a, &why)) {
        skip(d, 1, &d->report->corrupt, why.message);
        return false;
    }
    d->record.type = VIGIL_RECORD_ACTIVITY;
    d->record.seq = d->ring->tail;
    d->record.slots = 1;
    release(d, 1);
    return true;
}

/* Outcome of looking at a record that may span slots. */
enum take_result { TAKEN, SKIPPED, WAIT };

static enum take_result take_name(struct drain *d, const union ring_payload *payload, uint64_t head)
{
    const struct ring_name_first *first = &payload->name_first;
    uint64_t pos = d->ring->tail;
    uint32_t slots = first->slots, length = first->length, file_id = first->file_id;
    if (first->seq != pos || slots == 0 || slots > RING_NAME_MAX_SLOTS || length > VIGIL_PATH_MAX ||
        slots != name_slots(length) || slots > head - pos) {
        skip(d, 1, &d->report->corrupt, "name record with an impossible length or position");
        return SKIPPED;
    }
    struct vigil_name *name = &d->record.name;
    size_t done = length < RING_NAME_FIRST_PATH_BYTES ? length : RING_NAME_FIRST_PATH_BYTES;
    memcpy(name->path, first->path, done);
    for (uint32_t i = 1; i < slots; i++) {
        union ring_payload next;
        bool torn;
        enum slot_state state = read_slot(d, pos + i, &next, &torn);
        if (state == SLOT_PENDING) {
            if (!(d->flags & VIGIL_RING_PRODUCER_GONE))
                return WAIT; /* its producer is still writing it */
            skip(d, slots, &d->report->torn, "name record never finished by its producer");
            return SKIPPED;
        }
        if (state == SLOT_GARBAGE || torn) {
            skip(d, slots, torn ? &d->report->torn : &d->report->corrupt,
                 "name record with a damaged continuation slot");
            return SKIPPED;
        }
        if (next.name_next.record_type != RING_RECORD_NAME_CONTINUATION ||
            next.name_next.index != i || next.name_next.file_id != file_id) {
            /* Not our continuation: leave that slot for the next round. */
            skip(d, i, &d->report->corrupt, "name record whose continuation is missing");
            return SKIPPED;
        }
        size_t chunk =
            length - done < RING_NAME_NEXT_PATH_BYTES ? length - done : RING_NAME_NEXT_PATH_BYTES;
        memcpy(name->path + done, next.name_next.path, chunk);
        done += chunk;
    }
    struct vigil_error why;
    if (!vigil_name_check(file_id, name->path, length, &why)) {
        skip(d, slots, &d->report->corrupt, why.message);
        return SKIPPED;
    }
    name->path[length] = '\0';
    name->file_id = file_id;
    name->length = (uint16_t)length;
    d->record.type = VIGIL_RECORD_NAME;
    d->record.seq = pos;
    d->record.slots = slots;
    release(d, slots);
    return TAKEN;
}

/* Reads the shared counters once and checks them against what the consumer
 * knows; false when the header cannot be right. */
static bool read_header(struct drain *d, uint64_t *head)
{
    struct vigil_ring *ring = d->ring;
    uint64_t dropped = atomic_load_explicit(&ring->header->dropped, memory_order_relaxed);
    *head = atomic_load_explicit(&ring->header->head, memory_order_acquire);
    const char *why = NULL;
    if (dropped < ring->dropped_seen)
        why = "its drop counter went backwards";
    else if (*head < ring->tail || *head - ring->tail > ring->slot_count)
        why = "its head is not within one lap ahead of the reader";
    if (why != NULL) {
        d->report->header_corrupt = true;
        if (first_problem(d))
            vigil_error_set(&d->report->first_problem, "ring header corrupt at position %llu: %s",
                            (unsigned long long)ring->tail, why);
        return false;
    }
    d->report->dropped = dropped - ring->dropped_seen;
    ring->dropped_seen = dropped;
    return true;
}

size_t vigil_ring_drain(struct vigil_ring *ring, size_t max_records, unsigned flags,
                        const struct vigil_tick_clock *clock, vigil_ring_record_fn fn, void *user,
                        struct vigil_ring_drain_report *report)
{
    struct drain d = {.ring = ring, .flags = flags, .clock = clock, .report = report};
    memset(report, 0, sizeof *report);

    uint64_t head;
    if (!read_header(&d, &head))
        return 0;
    while (ring->tail < head && report->records < max_records) {
        union ring_payload payload;
        bool torn;
        enum slot_state state = read_slot(&d, ring->tail, &payload, &torn);
        if (state == SLOT_PENDING) {
            if (!(flags & VIGIL_RING_PRODUCER_GONE))
                break;
            skip(&d, 1, &report->torn, "claimed but never written by its producer");
            continue;
        }
        if (state == SLOT_GARBAGE) {
            skip(&d, 1, &report->corrupt, "its slot mark belongs to no lap");
            continue;
        }
        if (torn) {
            skip(&d, 1, &report->torn, "it changed while it was read");
            continue;
        }
        bool taken;
        if (payload.record_type == VIGIL_RECORD_ACTIVITY) {
            taken = take_activity(&d, &payload);
        } else if (payload.record_type == VIGIL_RECORD_NAME) {
            enum take_result result = take_name(&d, &payload, head);
            if (result == WAIT)
                break;
            taken = result == TAKEN;
        } else {
            skip(&d, 1, &report->corrupt, "unknown record type");
            taken = false;
        }
        if (taken) {
            report->records++;
            fn(&d.record, user);
        }
    }
    if (!ring->hold) {
        free_slots(ring, ring->tail);
        atomic_store_explicit(&ring->header->committed, ring->tail, memory_order_release);
    }
    return (size_t)report->records;
}

void vigil_ring_hold(struct vigil_ring *ring, bool hold)
{
    ring->hold = hold;
}

uint64_t vigil_ring_read_position(const struct vigil_ring *ring)
{
    return ring->tail;
}

uint64_t vigil_ring_released_position(const struct vigil_ring *ring)
{
    return ring->released;
}

void vigil_ring_release(struct vigil_ring *ring, uint64_t upto, uint64_t committed)
{
    if (upto > ring->tail)
        upto = ring->tail;
    if (upto > ring->released)
        free_slots(ring, upto);
    if (committed > ring->released)
        committed = ring->released;
    /* Only forward: what was committed stays committed. */
    if (committed > atomic_load_explicit(&ring->header->committed, memory_order_relaxed))
        atomic_store_explicit(&ring->header->committed, committed, memory_order_release);
}

void vigil_ring_resumed(const struct vigil_ring *ring, uint64_t *position, uint64_t *lost)
{
    *position = ring->resumed_at;
    *lost = ring->lost_at_resume;
}

/* ---- names again ------------------------------------------------------------------------ */

uint64_t vigil_ring_want_names(struct vigil_ring *ring)
{
    if (!(ring->producer_features & RING_PRODUCER_RESENDS_NAMES))
        return 0;
    /* On from what the mapping says: an earlier consumer may have asked.
     * 0 is "never asked", whatever a producer wrote there. */
    uint64_t generation =
        atomic_load_explicit(&ring->header->names_wanted, memory_order_relaxed) + 1;
    if (generation == 0)
        generation = 1;
    atomic_store_explicit(&ring->header->names_wanted, generation, memory_order_release);
    ring->names_wanted = generation;
    ring->names_answer_seen = false;
    return generation;
}

bool vigil_ring_names_arrived(struct vigil_ring *ring)
{
    if (ring->names_wanted == 0)
        return true;
    if (!ring->names_answer_seen) {
        if (atomic_load_explicit(&ring->header->names_given, memory_order_acquire) !=
            ring->names_wanted)
            return false;
        /* Loaded after the answer: every name record of it is below. A
         * producer that lies about either only ends the wait early, or
         * leaves it to the consumer's own bound. */
        ring->names_answer_head = atomic_load_explicit(&ring->header->head, memory_order_acquire);
        ring->names_answer_seen = true;
    }
    if (ring->tail < ring->names_answer_head)
        return false;
    ring->names_wanted = 0;
    return true;
}

uint64_t vigil_ring_names_wanted(const struct vigil_ring *ring)
{
    return atomic_load_explicit(&ring->header->names_wanted, memory_order_acquire);
}

uint64_t vigil_ring_names_answered(const struct vigil_ring *ring)
{
    return atomic_load_explicit(&ring->header->names_given, memory_order_relaxed);
}

void vigil_ring_names_given(struct vigil_ring *ring, uint64_t generation)
{
    atomic_store_explicit(&ring->header->names_given, generation, memory_order_release);
}

uint32_t vigil_ring_room(const struct vigil_ring *ring)
{
    uint64_t head = atomic_load_explicit(&ring->header->head, memory_order_relaxed);
    uint64_t consumed = atomic_load_explicit(&ring->header->consumed, memory_order_relaxed);
    uint64_t used = head - consumed;
    return used < ring->slot_count ? ring->slot_count - (uint32_t)used : 0;
}

/* ---- the process's energy, published by the consumer ------------------------------------- */

/* A reader gives up after this many torn reads: only a writer that died
 * between its two sequence stores keeps the sequence odd for ever. */
#define ENERGY_READ_MAX_ATTEMPTS 64

static uint64_t double_bits(double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static double bits_double(uint64_t bits)
{
    double value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

void vigil_ring_publish_energy(struct vigil_ring *ring, double energy_j, uint64_t t_ns,
                               uint32_t flags)
{
    if (ring == NULL || isnan(energy_j) || energy_j < 0 || t_ns == 0)
        return;
    double power_w = 0;
    if (ring->published_t_ns != 0 && t_ns > ring->published_t_ns &&
        energy_j >= ring->published_energy_j)
        power_w =
            (energy_j - ring->published_energy_j) / ((double)(t_ns - ring->published_t_ns) / 1e9);
    ring->published_energy_j = energy_j;
    ring->published_t_ns = t_ns;

    struct ring_header *h = ring->header;
    /* Our own count, not the mapping's: a producer that scribbled an odd
     * value there must not make every later figure look torn. */
    uint64_t seq = atomic_load_explicit(&h->energy_seq, memory_order_relaxed) & ~UINT64_C(1);
    if (seq > UINT64_MAX - 2)
        seq = 0; /* never back to 0, which reads as "nothing published" */
    atomic_store_explicit(&h->energy_seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&h->energy_j_bits, double_bits(energy_j), memory_order_relaxed);
    atomic_store_explicit(&h->energy_w_bits, double_bits(power_w), memory_order_relaxed);
    atomic_store_explicit(&h->energy_t_ns, t_ns, memory_order_relaxed);
    atomic_store_explicit(&h->energy_flags, flags, memory_order_relaxed);
    atomic_store_explicit(&h->energy_seq, seq + 2, memory_order_release);
}

bool vigil_ring_read_energy(const struct vigil_ring *ring, struct vigil_ring_energy *out)
{
    if (ring == NULL)
        return false;
    struct ring_header *h = ring->header;
    for (int attempt = 0; attempt < ENERGY_READ_MAX_ATTEMPTS; attempt++) {
        uint64_t before = atomic_load_explicit(&h->energy_seq, memory_order_acquire);
        if (before & 1)
            continue;
        uint64_t energy_bits = atomic_load_explicit(&h->energy_j_bits, memory_order_relaxed);
        uint64_t power_bits = atomic_load_explicit(&h->energy_w_bits, memory_order_relaxed);
        uint64_t t_ns = atomic_load_explicit(&h->energy_t_ns, memory_order_relaxed);
        uint64_t flags = atomic_load_explicit(&h->energy_flags, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&h->energy_seq, memory_order_relaxed) != before)
            continue;
        if (before == 0 || t_ns == 0)
            return false; /* nothing published */
        *out = (struct vigil_ring_energy){
            .energy_j = bits_double(energy_bits),
            .power_w = bits_double(power_bits),
            .t_ns = t_ns,
            .flags = (uint32_t)flags,
        };
        /* The consumer checks what it writes; a value that is no energy
         * was written by someone else. */
        return isfinite(out->energy_j) && out->energy_j >= 0 && isfinite(out->power_w) &&
               out->power_w >= 0;
    }
    return false;
}

double vigil_ring_energy_at(const struct vigil_ring_energy *e, uint64_t now_ns)
{
    double since_s = now_ns > e->t_ns ? (double)(now_ns - e->t_ns) / 1e9 : 0;
    return e->energy_j + e->power_w * since_s;
}
