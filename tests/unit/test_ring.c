/* Tests of the shared-memory ring: concurrency, names, a full ring, and a
 * consumer that survives any content of the mapping. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../record/ring_layout.h"
#include "vigil/ontology.h"
#include "vigil/ring.h"
#include "test_main.h"

/* ---- helpers ----------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng_next(void)
{
    /* xorshift64: a fixed seed gives the same cases on every run */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static struct vigil_activity make_activity(uint32_t producer, uint64_t counter)
{
    struct vigil_activity a = {
        .record_type = VIGIL_RECORD_ACTIVITY,
        .layer = VIGIL_LAYER_POSIX,
        .op = VIGIL_OP_POSIX_WRITE,
        .file_id = 7,
        .start_ns = 1000 + counter,
        .end_ns = 2000 + counter,
        .offset_bytes = (int64_t)counter * 8,
        .bytes_asked = counter,
        .result = (int64_t)producer * 1000000000 + (int64_t)counter,
        .thread_id = producer,
    };
    return a;
}

/* A consumer in this process sees the ring as vigild does: through its own
 * mapping of the memfd, attached and validated. */
struct pair {
    struct vigil_ring *producer;
    struct vigil_ring *consumer;
};

static struct pair make_pair_of(uint32_t slots, enum vigil_tick_source ticks)
{
    struct vigil_error err = {{0}};
    struct pair p;
    p.producer = vigil_ring_create(slots, ticks, &err);
    assert_non_null(p.producer);
    p.consumer = vigil_ring_attach(vigil_ring_fd(p.producer), &err);
    if (p.consumer == NULL)
        fail_msg("attach: %s", err.message);
    return p;
}

static struct pair make_pair(uint32_t slots)
{
    return make_pair_of(slots, VIGIL_TICKS_MONOTONIC_NS);
}

static void free_pair(struct pair *p)
{
    vigil_ring_close(p->consumer);
    vigil_ring_close(p->producer);
}

/* A separate writable view of the shared memory, for scribbling. */
static void *map_raw(struct vigil_ring *producer, size_t *bytes)
{
    *bytes = RING_HEADER_BYTES + (size_t)vigil_ring_slot_count(producer) * VIGIL_RING_SLOT_BYTES;
    void *map = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_SHARED, vigil_ring_fd(producer), 0);
    assert_true(map != MAP_FAILED);
    return map;
}

/* A pair and that view of its shared memory, for damaging it. */
struct scribbled {
    struct pair p;
    unsigned char *raw;
    size_t bytes;
    struct ring_header *header;
    struct ring_slot *slots;
};

static struct scribbled make_scribbled(uint32_t slots)
{
    struct scribbled s = {.p = make_pair(slots)};
    s.raw = map_raw(s.p.producer, &s.bytes);
    s.header = (struct ring_header *)s.raw;
    s.slots = (struct ring_slot *)(s.raw + RING_HEADER_BYTES);
    return s;
}

static void free_scribbled(struct scribbled *s)
{
    munmap(s->raw, s->bytes);
    free_pair(&s->p);
}

/* The consumer closed and another attached, as when vigild restarts. */
static void new_consumer(struct pair *p)
{
    vigil_ring_close(p->consumer);
    struct vigil_error err = {{0}};
    p->consumer = vigil_ring_attach(vigil_ring_fd(p->producer), &err);
    assert_non_null(p->consumer);
}

/* Activities 0 to n - 1 of producer 1. */
static void push_activities(struct vigil_ring *producer, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        struct vigil_activity a = make_activity(1, i);
        assert_true(vigil_ring_push(producer, &a));
    }
}

struct collected {
    size_t count;
    struct vigil_ring_record last;
    uint64_t next_seq; /* seq the next record must carry when nothing is lost */
    bool in_order;
};

static void collect(const struct vigil_ring_record *r, void *user)
{
    struct collected *c = user;
    if (r->seq != c->next_seq)
        c->in_order = false;
    c->next_seq = r->seq + r->slots;
    c->last = *r;
    c->count++;
}

/* The consumer holding what it reads, activities 0 to n - 1 pushed and read. */
static void push_and_read_held(struct pair *p, uint64_t n)
{
    vigil_ring_hold(p->consumer, true);
    push_activities(p->producer, n);
    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report report;
    assert_int_equal(vigil_ring_drain(p->consumer, SIZE_MAX, 0, NULL, collect, &c, &report), n);
}

/* ---- basic ------------------------------------------------------------- */

static void test_push_and_drain_one(void **state)
{
    (void)state;
    struct pair p = make_pair(64);
    struct vigil_activity a = make_activity(3, 42);
    a.parent_start_ns = 900;
    a.errno_value = 5;
    a.flags = VIGIL_ACTIVITY_COLLECTIVE;
    a.comm_size = 4;
    assert_true(vigil_ring_push(p.producer, &a));

    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report rep;
    assert_int_equal(vigil_ring_drain(p.consumer, 100, 0, NULL, collect, &c, &rep), 1);
    assert_int_equal(c.last.type, VIGIL_RECORD_ACTIVITY);
    a.seq = 0;
    assert_memory_equal(&c.last.activity, &a, sizeof a);
    assert_int_equal(rep.corrupt + rep.torn + rep.dropped, 0);
    assert_string_equal(rep.first_problem.message, "");

    /* Nothing more to read. */
    assert_int_equal(vigil_ring_drain(p.consumer, 100, 0, NULL, collect, &c, &rep), 0);
    free_pair(&p);
}

static void test_names_of_every_length_class(void **state)
{
    (void)state;
    struct pair p = make_pair(256);
    size_t lengths[] = {0, 1, 71, 72, 73, 152, 153, 1000, VIGIL_PATH_MAX};
    char *path = malloc(VIGIL_PATH_MAX + 1);
    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report rep;
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        for (size_t j = 0; j < lengths[i]; j++)
            path[j] = (char)('a' + (j * 7 + i) % 26);
        assert_true(vigil_ring_push_name(p.producer, (uint32_t)i + 1, path, lengths[i]));
        /* An activity after each name checks that seq accounts for spans. */
        struct vigil_activity a = make_activity(1, i);
        assert_true(vigil_ring_push(p.producer, &a));

        size_t before = c.count;
        assert_int_equal(vigil_ring_drain(p.consumer, 1, 0, NULL, collect, &c, &rep), 1);
        assert_int_equal(c.last.type, VIGIL_RECORD_NAME);
        assert_int_equal(c.last.name.file_id, i + 1);
        assert_int_equal(c.last.name.length, lengths[i]);
        assert_memory_equal(c.last.name.path, path, lengths[i]);
        assert_int_equal(c.last.name.path[lengths[i]], '\0');
        assert_int_equal(vigil_ring_drain(p.consumer, 1, 0, NULL, collect, &c, &rep), 1);
        assert_int_equal(c.last.type, VIGIL_RECORD_ACTIVITY);
        assert_int_equal(c.last.activity.bytes_asked, i);
        assert_int_equal(c.count, before + 2);
    }
    assert_true(c.in_order);
    free(path);
    free_pair(&p);
}

static void test_invalid_names_are_refused(void **state)
{
    (void)state;
    struct pair p = make_pair(64);
    assert_false(vigil_ring_push_name(p.producer, 0, "/x", 2)); /* file id 0 is "none" */
    assert_false(vigil_ring_push_name(p.producer, 1, "/a\0b", 4));
    char *huge = calloc(1, VIGIL_PATH_MAX + 2);
    memset(huge, 'x', VIGIL_PATH_MAX + 1);
    assert_false(vigil_ring_push_name(p.producer, 1, huge, VIGIL_PATH_MAX + 1));
    free(huge);
    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report rep;
    assert_int_equal(vigil_ring_drain(p.consumer, 10, 0, NULL, collect, &c, &rep), 0);
    free_pair(&p);
}

/* The preload library pushes through a copy of the ring's geometry: the
 * same records, in order with pushes through the handle, the same drops
 * when full; no view of no ring. */
static void test_push_through_a_producer_view(void **state)
{
    (void)state;
    struct pair p = make_pair(64);
    struct vigil_ring_producer view;
    vigil_ring_producer_view(p.producer, &view);
    for (uint64_t i = 0; i < 64; i++) {
        struct vigil_activity a = make_activity(2, i);
        assert_true(i % 2 ? vigil_ring_push_view(&view, &a) : vigil_ring_push(p.producer, &a));
    }
    struct vigil_activity extra = make_activity(2, 64);
    assert_false(vigil_ring_push_view(&view, &extra));
    assert_int_equal(vigil_ring_dropped(p.producer), 1);

    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report rep;
    assert_int_equal(vigil_ring_drain(p.consumer, 1000, 0, NULL, collect, &c, &rep), 64);
    assert_true(c.in_order);
    assert_int_equal(rep.corrupt + rep.torn, 0);
    assert_int_equal(rep.dropped, 1);
    struct vigil_activity last = make_activity(2, 63);
    last.seq = 63;
    assert_memory_equal(&c.last.activity, &last, sizeof last);

    vigil_ring_producer_view(NULL, &view);
    assert_null(view.header);
    assert_null(view.slots);
    assert_int_equal(view.mask, 0);
    free_pair(&p);
}

static void test_full_ring_drops_and_counts(void **state)
{
    (void)state;
    struct pair p = make_pair(64);
    push_activities(p.producer, 64);
    struct vigil_activity extra = make_activity(1, 64);
    assert_false(vigil_ring_push(p.producer, &extra));
    assert_false(vigil_ring_push_name(p.producer, 9, "/tmp/f", 6));
    assert_int_equal(vigil_ring_dropped(p.producer), 2);

    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report rep;
    assert_int_equal(vigil_ring_drain(p.consumer, 1000, 0, NULL, collect, &c, &rep), 64);
    assert_int_equal(rep.dropped, 2);
    assert_true(c.in_order);
    assert_int_equal(c.last.activity.bytes_asked, 63);

    /* Room again, and the drop is not reported twice. */
    assert_true(vigil_ring_push(p.producer, &extra));
    assert_int_equal(vigil_ring_drain(p.consumer, 1000, 0, NULL, collect, &c, &rep), 1);
    assert_int_equal(rep.dropped, 0);
    assert_int_equal(c.last.activity.seq, 64);
    free_pair(&p);
}

static void test_drain_respects_max_records(void **state)
{
    (void)state;
    struct pair p = make_pair(128);
    push_activities(p.producer, 100);
    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report rep;
    assert_int_equal(vigil_ring_drain(p.consumer, 30, 0, NULL, collect, &c, &rep), 30);
    assert_int_equal(vigil_ring_drain(p.consumer, 1000, 0, NULL, collect, &c, &rep), 70);
    assert_true(c.in_order);
    assert_int_equal(c.count, 100);
    free_pair(&p);
}

/* ---- many producers ---------------------------------------------------- */

enum { PRODUCERS = 8, PER_PRODUCER = 1000000 };

struct mt {
    struct pair pair;
    _Atomic int producers_done;
    uint64_t dropped_by[PRODUCERS];
    uint64_t received_by[PRODUCERS];
    int64_t last_counter[PRODUCERS];
    uint64_t duplicates_or_reordered, inconsistent, dropped_reported;
    uint64_t corrupt, torn;
};

struct producer_arg {
    struct mt *mt;
    uint32_t id;
};

static void *producer_main(void *arg)
{
    struct producer_arg *pa = arg;
    for (uint64_t i = 0; i < PER_PRODUCER; i++) {
        struct vigil_activity a = make_activity(pa->id, i);
        if (!vigil_ring_push(pa->mt->pair.producer, &a)) {
            pa->mt->dropped_by[pa->id]++;
            /* On two cores, eight spinning producers would starve the
             * consumer and nearly everything would be dropped; backing off
             * after a drop lets most records through to be checked. */
            sched_yield();
        }
    }
    atomic_fetch_add(&pa->mt->producers_done, 1);
    return NULL;
}

static void mt_check(const struct vigil_ring_record *r, void *user)
{
    struct mt *mt = user;
    const struct vigil_activity *a = &r->activity;
    uint32_t p = a->thread_id;
    if (r->type != VIGIL_RECORD_ACTIVITY || p >= PRODUCERS) {
        mt->inconsistent++;
        return;
    }
    int64_t counter = (int64_t)a->bytes_asked;
    /* Every field derives from (producer, counter): a torn record mixing two
     * writes cannot satisfy all of them. */
    struct vigil_activity expect = make_activity(p, (uint64_t)counter);
    expect.seq = a->seq;
    if (memcmp(&expect, a, sizeof expect) != 0)
        mt->inconsistent++;
    /* One producer's pushes are sequential, so they arrive in its order. */
    if (counter <= mt->last_counter[p])
        mt->duplicates_or_reordered++;
    mt->last_counter[p] = counter;
    mt->received_by[p]++;
}

static void test_eight_producers_one_consumer(void **state)
{
    (void)state;
    struct mt *mt = calloc(1, sizeof *mt);
    mt->pair = make_pair(1u << 16);
    for (int i = 0; i < PRODUCERS; i++)
        mt->last_counter[i] = -1;
    pthread_t threads[PRODUCERS];
    struct producer_arg args[PRODUCERS];
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        args[i] = (struct producer_arg){mt, i};
        assert_int_equal(pthread_create(&threads[i], NULL, producer_main, &args[i]), 0);
    }
    /* The consumer drains until every producer is done and the ring empty. */
    for (;;) {
        bool done = atomic_load(&mt->producers_done) == PRODUCERS;
        struct vigil_ring_drain_report rep;
        size_t n = vigil_ring_drain(mt->pair.consumer, 4096, 0, NULL, mt_check, mt, &rep);
        mt->dropped_reported += rep.dropped;
        mt->corrupt += rep.corrupt;
        mt->torn += rep.torn;
        assert_false(rep.header_corrupt);
        if (done && n == 0)
            break;
        if (n == 0)
            sched_yield();
    }
    uint64_t received = 0, dropped = 0;
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(threads[i], NULL);
        assert_int_equal(mt->received_by[i] + mt->dropped_by[i], PER_PRODUCER);
        received += mt->received_by[i];
        dropped += mt->dropped_by[i];
    }
    assert_int_equal(mt->inconsistent, 0);
    assert_int_equal(mt->duplicates_or_reordered, 0);
    assert_int_equal(mt->corrupt + mt->torn, 0);
    assert_int_equal(mt->dropped_reported, dropped);
    assert_int_equal(received + dropped, (uint64_t)PRODUCERS * PER_PRODUCER);
    assert_true(received > 0);
    print_message("8 x %d pushes: %llu received, %llu dropped\n", PER_PRODUCER,
                  (unsigned long long)received, (unsigned long long)dropped);
    free_pair(&mt->pair);
    free(mt);
}

/* ---- a consumer that trusts nothing ------------------------------------ */

static void count_only(const struct vigil_ring_record *r, void *user)
{
    size_t *n = user;
    /* Whatever got through validation must be a well-formed record. */
    if (r->type == VIGIL_RECORD_ACTIVITY) {
        struct vigil_error why;
        assert_true(vigil_activity_check(&r->activity, &why));
    } else {
        assert_int_equal(r->type, VIGIL_RECORD_NAME);
        assert_int_equal(strlen(r->name.path), r->name.length);
    }
    (*n)++;
}

static void test_garbage_slots_are_reported_not_crashed_on(void **state)
{
    (void)state;
    for (int round = 0; round < 200; round++) {
        struct scribbled s = make_scribbled(64);
        /* Random bytes over the slots, marks included, and a head anywhere
         * within the window the consumer accepts. */
        for (size_t i = RING_HEADER_BYTES; i < s.bytes; i++)
            s.raw[i] = (unsigned char)rng_next();
        /* Some marks made plausible, so the payload checks are reached. */
        for (int i = 0; i < 64; i++)
            if (rng_next() % 2)
                atomic_store(&s.slots[i].mark, 1);
        if (round % 3 == 0)
            for (int i = 0; i < 64; i++)
                s.slots[i].payload.record_type =
                    (rng_next() % 2) ? VIGIL_RECORD_ACTIVITY : VIGIL_RECORD_NAME;
        atomic_store(&s.header->head, rng_next() % 65);

        size_t n = 0;
        struct vigil_ring_drain_report rep;
        size_t handed = vigil_ring_drain(s.p.consumer, 1000, VIGIL_RING_PRODUCER_GONE, NULL,
                                         count_only, &n, &rep);
        assert_int_equal(handed, n);
        /* Every position below the head was either handed out or reported. */
        assert_int_equal(rep.slots, atomic_load(&s.header->head));
        if (rep.corrupt + rep.torn > 0)
            assert_string_not_equal(rep.first_problem.message, "");
        free_scribbled(&s);
    }
}

static void damage_slot(struct ring_slot *slot, int which)
{
    switch (which) {
    case 0:
        slot->payload.activity.layer = 9;
        break;
    case 1:
        slot->payload.activity.op = VIGIL_OP_STDIO_FWRITE; /* not a posix operation */
        break;
    case 2:
        slot->payload.activity.end_ns = 1; /* before its start */
        break;
    case 3:
        slot->payload.activity.seq = 1234; /* another position's */
        break;
    case 4:
        slot->payload.record_type = 0x55;
        break;
    case 5:
        atomic_store(&slot->mark, 77); /* a mark of no lap */
        break;
    }
}

static void test_each_corruption_is_named(void **state)
{
    (void)state;
    const char *expected[] = {"unknown layer 9",     "not an operation of layer posix",
                              "before it starts",    "another position",
                              "unknown record type", "belongs to no lap"};
    for (int i = 0; i < 6; i++) {
        struct scribbled s = make_scribbled(64);
        struct vigil_activity a = make_activity(1, 1);
        assert_true(vigil_ring_push(s.p.producer, &a));
        assert_true(vigil_ring_push(s.p.producer, &a));
        damage_slot(&s.slots[0], i);

        /* The damaged record is skipped and named; the good one after it
         * still arrives. */
        size_t n = 0;
        struct vigil_ring_drain_report rep;
        assert_int_equal(vigil_ring_drain(s.p.consumer, 10, 0, NULL, count_only, &n, &rep), 1);
        assert_int_equal(rep.corrupt, 1);
        assert_int_equal(rep.slots, 2);
        if (strstr(rep.first_problem.message, expected[i]) == NULL)
            fail_msg("case %d: \"%s\" does not say \"%s\"", i, rep.first_problem.message,
                     expected[i]);
        free_scribbled(&s);
    }
}

/* The drain's first problem says `words`. */
static void assert_problem(const struct vigil_ring_drain_report *rep, const char *words)
{
    if (strstr(rep->first_problem.message, words) == NULL)
        fail_msg("the first problem \"%s\" does not say \"%s\"", rep->first_problem.message, words);
}

static void test_damaged_name_records(void **state)
{
    (void)state;
    struct scribbled s = make_scribbled(64);
    char path[200];
    memset(path, 'p', sizeof path);

    /* A continuation that belongs to another file. */
    assert_true(vigil_ring_push_name(s.p.producer, 5, path, sizeof path)); /* 3 slots */
    s.slots[2].payload.name_next.file_id = 6;
    size_t n = 0;
    struct vigil_ring_drain_report rep;
    assert_int_equal(vigil_ring_drain(s.p.consumer, 10, 0, NULL, count_only, &n, &rep), 0);
    assert_int_equal(rep.corrupt, 3); /* the first two slots, then the stray one */
    assert_problem(&rep, "continuation is missing");

    /* A length that does not fit the slot count. */
    assert_true(vigil_ring_push_name(s.p.producer, 5, path, 10));
    s.slots[3].payload.name_first.length = 500;
    assert_int_equal(vigil_ring_drain(s.p.consumer, 10, 0, NULL, count_only, &n, &rep), 0);
    assert_int_equal(rep.corrupt, 1);
    assert_problem(&rep, "impossible length");

    /* A NUL written into a path after it was checked by the producer. */
    assert_true(vigil_ring_push_name(s.p.producer, 5, path, 10));
    s.slots[4].payload.name_first.path[3] = '\0';
    assert_int_equal(vigil_ring_drain(s.p.consumer, 10, 0, NULL, count_only, &n, &rep), 0);
    assert_problem(&rep, "NUL");
    free_scribbled(&s);
}

static void test_corrupt_header_counters(void **state)
{
    (void)state;
    struct scribbled s = make_scribbled(64);
    size_t n = 0;
    struct vigil_ring_drain_report rep;

    atomic_store(&s.header->head, 65); /* more than one lap ahead */
    assert_int_equal(vigil_ring_drain(s.p.consumer, 10, 0, NULL, count_only, &n, &rep), 0);
    assert_true(rep.header_corrupt);
    assert_problem(&rep, "head");

    atomic_store(&s.header->head, 0);
    atomic_store(&s.header->dropped, 10);
    assert_int_equal(vigil_ring_drain(s.p.consumer, 10, 0, NULL, count_only, &n, &rep), 0);
    assert_false(rep.header_corrupt);
    assert_int_equal(rep.dropped, 10);
    atomic_store(&s.header->dropped, 3); /* backwards */
    assert_int_equal(vigil_ring_drain(s.p.consumer, 10, 0, NULL, count_only, &n, &rep), 0);
    assert_true(rep.header_corrupt);
    assert_problem(&rep, "drop counter");
    free_scribbled(&s);
}

static void test_producer_gone_mid_write(void **state)
{
    (void)state;
    struct scribbled s = make_scribbled(64);

    /* A producer claimed position 0 and died before writing it; another
     * thread wrote position 1. */
    atomic_store(&s.header->head, 1);
    struct vigil_activity a = make_activity(1, 1);
    assert_true(vigil_ring_push(s.p.producer, &a));

    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report rep;
    assert_int_equal(vigil_ring_drain(s.p.consumer, 10, 0, NULL, collect, &c, &rep), 0);
    assert_int_equal(rep.torn + rep.corrupt, 0); /* it may still be written */

    c.next_seq = 1;
    assert_int_equal(
        vigil_ring_drain(s.p.consumer, 10, VIGIL_RING_PRODUCER_GONE, NULL, collect, &c, &rep), 1);
    assert_int_equal(rep.torn, 1);
    assert_int_equal(c.last.activity.seq, 1);
    assert_problem(&rep, "never written");
    free_scribbled(&s);
}

static void test_producer_gives_up_on_a_garbage_mark(void **state)
{
    (void)state;
    struct scribbled s = make_scribbled(64);
    /* A mark from the future: the producer must not spin on it. */
    atomic_store(&s.slots[0].mark, 1u << 20);
    struct vigil_activity a = make_activity(1, 1);
    assert_false(vigil_ring_push(s.p.producer, &a));
    assert_int_equal(vigil_ring_dropped(s.p.producer), 1);
    free_scribbled(&s);
}

/* ---- attach ------------------------------------------------------------ */

static void expect_attach_error(int fd, const char *needle)
{
    struct vigil_error err = {{0}};
    struct vigil_ring *r = vigil_ring_attach(fd, &err);
    assert_null(r);
    if (strstr(err.message, needle) == NULL)
        fail_msg("attach error \"%s\" does not say \"%s\"", err.message, needle);
}

static void test_attach_refuses_bad_headers(void **state)
{
    (void)state;
    struct {
        size_t offset;
        uint32_t value;
        const char *needle;
    } cases[] = {
        {offsetof(struct ring_header, magic), 0x12345678, "not a vigil ring"},
        {offsetof(struct ring_header, version), 99, "ring version 99"},
        {offsetof(struct ring_header, slot_bytes), 64, "slots of 64 bytes"},
        {offsetof(struct ring_header, slot_count), 100, "not a power of two"},
        {offsetof(struct ring_header, slot_count), 128, "size mismatch"},
        {offsetof(struct ring_header, total_bytes), 4096, "size mismatch"},
        {offsetof(struct ring_header, tick_source), 7, "unknown tick source 7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct vigil_error err;
        struct vigil_ring *r = vigil_ring_create(64, VIGIL_TICKS_MONOTONIC_NS, &err);
        size_t bytes;
        unsigned char *raw = map_raw(r, &bytes);
        memcpy(raw + cases[i].offset, &cases[i].value, sizeof cases[i].value);
        expect_attach_error(vigil_ring_fd(r), cases[i].needle);
        munmap(raw, bytes);
        vigil_ring_close(r);
    }
}

static void test_attach_refuses_truncated_and_unsealed_files(void **state)
{
    (void)state;
    /* An unsealed memfd: a producer could shrink it under the reader. */
    int fd = memfd_create("not-sealed", MFD_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, RING_HEADER_BYTES + 64 * VIGIL_RING_SLOT_BYTES), 0);
    expect_attach_error(fd, "not sealed");
    close(fd);

    /* A sealed one truncated before sealing: shorter than a header. */
    fd = memfd_create("short", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_int_equal(ftruncate(fd, 100), 0);
    assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    expect_attach_error(fd, "truncated or corrupt");
    close(fd);

    /* A valid header over a file cut short. */
    struct vigil_error err;
    struct vigil_ring *r = vigil_ring_create(64, VIGIL_TICKS_MONOTONIC_NS, &err);
    fd = memfd_create("cut", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    size_t cut = RING_HEADER_BYTES + 10 * VIGIL_RING_SLOT_BYTES;
    assert_int_equal(ftruncate(fd, (off_t)cut), 0);
    size_t bytes;
    unsigned char *raw = map_raw(r, &bytes);
    assert_int_equal(pwrite(fd, raw, RING_HEADER_BYTES, 0), RING_HEADER_BYTES);
    assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    expect_attach_error(fd, "size mismatch");
    close(fd);
    munmap(raw, bytes);
    vigil_ring_close(r);

    /* A regular file cannot carry seals. */
    FILE *f = tmpfile();
    expect_attach_error(fileno(f), "cannot be sealed");
    fclose(f);

    expect_attach_error(-1, "ring fd -1");
}

static void test_tsc_ring_times_are_converted_by_drain(void **state)
{
    (void)state;
    struct pair p = make_pair_of(64, VIGIL_TICKS_TSC);
    assert_int_equal(vigil_ring_tick_source(p.consumer), VIGIL_TICKS_TSC);

    struct vigil_activity a = make_activity(1, 1);
    a.start_ns = 3000; /* ticks, in a TSC ring */
    a.end_ns = 3400;
    a.parent_start_ns = 2000;
    assert_true(vigil_ring_push(p.producer, &a));
    assert_true(vigil_ring_push(p.producer, &a));

    /* Two ticks per ns, tick 1000 at 5000 ns. */
    struct vigil_tick_clock clock = {VIGIL_TICKS_TSC, {1000, 5000}, 0.5};
    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report rep;
    assert_int_equal(vigil_ring_drain(p.consumer, 1, 0, &clock, collect, &c, &rep), 1);
    assert_int_equal(c.last.activity.start_ns, 6000);
    assert_int_equal(c.last.activity.end_ns, 6200);
    assert_int_equal(c.last.activity.parent_start_ns, 5500);
    /* Without a clock the reader gets the ticks as written. */
    assert_int_equal(vigil_ring_drain(p.consumer, 1, 0, NULL, collect, &c, &rep), 1);
    assert_int_equal(c.last.activity.start_ns, 3000);
    free_pair(&p);
}

/* ---- a consumer that holds records across its own restart ---------------- */

/* Where a new consumer of `ring` resumes (the position it reads again
 * from) and how many records it counts lost. */
static void assert_resumed(const struct vigil_ring *ring, uint64_t position, uint64_t lost)
{
    uint64_t resumed_at, lost_count;
    vigil_ring_resumed(ring, &resumed_at, &lost_count);
    assert_int_equal(resumed_at, position);
    assert_int_equal(lost_count, lost);
}

static void test_held_records_survive_a_new_consumer(void **state)
{
    (void)state;
    struct pair p = make_pair(64);
    push_and_read_held(&p, 40);
    assert_int_equal(vigil_ring_read_position(p.consumer), 40);
    assert_int_equal(vigil_ring_released_position(p.consumer), 0);
    /* Read but held: only 24 more fit, the rest are dropped and counted. */
    unsigned pushed = 0;
    for (uint64_t i = 40; i < 80; i++) {
        struct vigil_activity a = make_activity(1, i);
        pushed += vigil_ring_push(p.producer, &a);
    }
    assert_int_equal(pushed, 24);
    assert_int_equal(vigil_ring_dropped(p.producer), 16);

    /* Stored up to 30: the slots below it are free, 30..39 stay held. */
    vigil_ring_release(p.consumer, 30, 30);
    assert_int_equal(vigil_ring_released_position(p.consumer), 30);
    /* The consumer dies; a new one attaches the same memfd and reads the
     * held records again, then the ones it never read. */
    new_consumer(&p);
    assert_resumed(p.consumer, 30, 0);
    struct collected d = {.next_seq = 30, .in_order = true};
    struct vigil_ring_drain_report report;
    assert_int_equal(vigil_ring_drain(p.consumer, SIZE_MAX, 0, NULL, collect, &d, &report), 34);
    assert_true(d.in_order);
    assert_int_equal(d.next_seq, 64);
    assert_int_equal(d.last.activity.bytes_asked, 63);
    /* Without holding, a drain frees what it read and commits it. */
    assert_int_equal(vigil_ring_released_position(p.consumer), 64);
    free_pair(&p);
}

/* ---- names again ------------------------------------------------------------------------ */

/* A consumer that lost the names asks for them; the producer sees the
 * request, writes its names and answers; the consumer knows they are in
 * only once it has read up to where they were when it saw the answer. */
static void test_names_asked_for_again(void **state)
{
    (void)state;
    struct pair p = make_pair(64);
    assert_int_equal(vigil_ring_names_wanted(p.producer), 0);
    assert_true(vigil_ring_names_arrived(p.consumer)); /* nothing asked */
    uint64_t generation = vigil_ring_want_names(p.consumer);
    assert_int_equal(generation, 1);
    assert_int_equal(vigil_ring_names_wanted(p.producer), 1);
    assert_int_equal(vigil_ring_names_answered(p.producer), 0);
    struct vigil_activity a = make_activity(1, 0);
    assert_true(vigil_ring_push(p.producer, &a));
    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report report;
    assert_int_equal(vigil_ring_drain(p.consumer, SIZE_MAX, 0, NULL, collect, &c, &report), 1);
    assert_false(vigil_ring_names_arrived(p.consumer)); /* not answered */

    assert_true(vigil_ring_push_name(p.producer, 7, "/data/out", 9));
    vigil_ring_names_given(p.producer, vigil_ring_names_wanted(p.producer));
    assert_int_equal(vigil_ring_names_answered(p.producer), 1);
    /* Answered, but its name record is not read yet. */
    assert_false(vigil_ring_names_arrived(p.consumer));
    assert_int_equal(vigil_ring_drain(p.consumer, SIZE_MAX, 0, NULL, collect, &c, &report), 1);
    assert_int_equal(c.last.type, VIGIL_RECORD_NAME);
    assert_true(vigil_ring_names_arrived(p.consumer));

    /* A new consumer asks again: the next generation, whatever it knew. */
    new_consumer(&p);
    assert_int_equal(vigil_ring_want_names(p.consumer), 2);
    assert_false(vigil_ring_names_arrived(p.consumer));
    free_pair(&p);
}

/* A ring whose producer does not answer (an older library: the header's
 * feature word is 0) is never asked, so nobody waits for it. */
static void test_names_not_asked_of_an_older_producer(void **state)
{
    (void)state;
    struct vigil_error err = {{0}};
    struct vigil_ring *producer = vigil_ring_create(64, VIGIL_TICKS_MONOTONIC_NS, &err);
    assert_non_null(producer);
    size_t bytes;
    struct ring_header *h = map_raw(producer, &bytes);
    h->producer_features = 0;
    struct vigil_ring *consumer = vigil_ring_attach(vigil_ring_fd(producer), &err);
    assert_non_null(consumer);
    assert_int_equal(vigil_ring_want_names(consumer), 0);
    assert_int_equal(vigil_ring_names_wanted(producer), 0);
    assert_true(vigil_ring_names_arrived(consumer));
    munmap(h, bytes);
    vigil_ring_close(consumer);
    vigil_ring_close(producer);
}

/* Room for the producer: the slots neither written nor held. */
static void test_room_counts_held_slots(void **state)
{
    (void)state;
    struct pair p = make_pair(64);
    vigil_ring_hold(p.consumer, true);
    assert_int_equal(vigil_ring_room(p.producer), 64);
    push_activities(p.producer, 40);
    assert_int_equal(vigil_ring_room(p.producer), 24);
    struct collected c = {.in_order = true};
    struct vigil_ring_drain_report report;
    vigil_ring_drain(p.consumer, SIZE_MAX, 0, NULL, collect, &c, &report);
    assert_int_equal(vigil_ring_room(p.producer), 24); /* read, still held */
    vigil_ring_release(p.consumer, 30, 30);
    assert_int_equal(vigil_ring_room(p.producer), 54);
    free_pair(&p);
}

/* ---- the process's energy, published by the consumer ------------------------------------- */

static void test_energy_published_and_read(void **state)
{
    (void)state;
    struct pair p = make_pair(64);
    struct vigil_ring_energy e;
    /* Nothing published yet: no energy, not zero. */
    assert_false(vigil_ring_read_energy(p.producer, &e));
    /* A figure that is no energy is not published. */
    vigil_ring_publish_energy(p.consumer, NAN, 1000000000, 0);
    vigil_ring_publish_energy(p.consumer, -1, 1000000000, 0);
    vigil_ring_publish_energy(p.consumer, 1, 0, 0);
    assert_false(vigil_ring_read_energy(p.producer, &e));

    vigil_ring_publish_energy(p.consumer, 10, 1000000000, VIGIL_RING_ENERGY_ESTIMATED);
    assert_true(vigil_ring_read_energy(p.producer, &e));
    assert_true(e.energy_j == 10 && e.power_w == 0 && e.t_ns == 1000000000);
    assert_int_equal(e.flags, VIGIL_RING_ENERGY_ESTIMATED);
    /* 2 J more in half a second: 4 W, and the energy goes on at that rate. */
    vigil_ring_publish_energy(p.consumer, 12, 1500000000, 0);
    assert_true(vigil_ring_read_energy(p.producer, &e));
    assert_true(e.energy_j == 12 && e.power_w == 4);
    assert_true(vigil_ring_energy_at(&e, 1750000000) == 13);
    assert_true(vigil_ring_energy_at(&e, 1000000000) == 12); /* never before the tick */
    /* A new consumer (a restarted vigild) starts its rate again. */
    new_consumer(&p);
    assert_true(vigil_ring_read_energy(p.producer, &e) && e.energy_j == 12);
    vigil_ring_publish_energy(p.consumer, 15, 2000000000, VIGIL_RING_ENERGY_UNCERTAIN);
    assert_true(vigil_ring_read_energy(p.producer, &e));
    assert_true(e.energy_j == 15 && e.power_w == 0);
    assert_int_equal(e.flags, VIGIL_RING_ENERGY_UNCERTAIN);
    free_pair(&p);
}

static void test_energy_read_is_bounded_and_checked(void **state)
{
    (void)state;
    struct scribbled s = make_scribbled(64);
    vigil_ring_publish_energy(s.p.consumer, 10, 1000000000, 0);
    /* A consumer that died between its two sequence stores: the reader
     * gives up after a bounded number of tries, it does not hang. */
    uint64_t seq = atomic_load(&s.header->energy_seq);
    atomic_store(&s.header->energy_seq, seq + 1);
    struct vigil_ring_energy e;
    assert_false(vigil_ring_read_energy(s.p.producer, &e));
    /* The next consumer's write is read again, whatever the mapping held. */
    vigil_ring_publish_energy(s.p.consumer, 11, 2000000000, 0);
    assert_true(vigil_ring_read_energy(s.p.producer, &e) && e.energy_j == 11);
    /* Bits that are no energy (a program scribbling) are not read as one. */
    double nan = NAN;
    uint64_t bits;
    memcpy(&bits, &nan, sizeof bits);
    atomic_store(&s.header->energy_j_bits, bits);
    assert_false(vigil_ring_read_energy(s.p.producer, &e));
    free_scribbled(&s);
}

/* A writer publishing as fast as it can while readers read: every figure
 * read is one that was written whole (energy and time from the same
 * publication), never a mix of two. */
struct energy_race {
    struct vigil_ring *consumer;
    _Atomic int stop;
};

static void *publish_loop(void *arg)
{
    struct energy_race *race = arg;
    for (uint64_t k = 1; !atomic_load(&race->stop); k++)
        vigil_ring_publish_energy(race->consumer, (double)k, k * 1000000000, (uint32_t)(k & 1));
    return NULL;
}

static void test_energy_torn_reads_are_retried(void **state)
{
    (void)state;
    struct pair p = make_pair(64);
    struct energy_race race = {.consumer = p.consumer};
    pthread_t writer;
    assert_int_equal(pthread_create(&writer, NULL, publish_loop, &race), 0);
    uint64_t read = 0, last_t_ns = 0;
    /* The first figure, then as many reads again as the writer races. */
    for (int i = 0; i < 200000 || read == 0; i++) {
        struct vigil_ring_energy e;
        if (!vigil_ring_read_energy(p.producer, &e))
            continue;
        read++;
        uint64_t k = e.t_ns / 1000000000;
        if (e.energy_j != (double)k || e.flags != (k & 1) || (k > 1 && e.power_w != 1))
            fail_msg("a torn figure: %.1f J, %.1f W at %llu ns, flags %u", e.energy_j, e.power_w,
                     (unsigned long long)e.t_ns, e.flags);
        assert_true(e.t_ns >= last_t_ns); /* never an older figure after a newer one */
        last_t_ns = e.t_ns;
    }
    atomic_store(&race.stop, 1);
    pthread_join(writer, NULL);
    assert_true(read > 0);
    free_pair(&p);
}

static void test_release_beyond_commit_is_counted_by_the_next_consumer(void **state)
{
    (void)state;
    struct pair p = make_pair(64);
    push_and_read_held(&p, 50);
    /* Room for the producer, although only 10 are stored: 10..39 are at risk. */
    vigil_ring_release(p.consumer, 40, 10);
    /* Release never goes past what was read, nor commit past release. */
    vigil_ring_release(p.consumer, 1000, 1000);
    assert_int_equal(vigil_ring_released_position(p.consumer), 50);
    new_consumer(&p);
    assert_resumed(p.consumer, 50, 0); /* the second release committed all 50 */
    free_pair(&p);

    /* A hostile producer's header cannot make the count absurd. */
    struct scribbled s = make_scribbled(64);
    atomic_store(&s.header->consumed, 20);
    atomic_store(&s.header->committed, 999);
    new_consumer(&s.p);
    assert_resumed(s.p.consumer, 20, 0);
    atomic_store(&s.header->committed, 5);
    new_consumer(&s.p);
    uint64_t resumed, lost;
    vigil_ring_resumed(s.p.consumer, &resumed, &lost);
    assert_int_equal(lost, 15);
    free_scribbled(&s);
}

/* Found by tests/fuzz/fuzz_ring.c: ticks the clock maps past the end of
 * the ns range come out with an end before their start. The reader checks
 * the converted record, so it is skipped as corrupt, not handed out. */
static void test_times_that_wrap_when_converted_are_corrupt(void **state)
{
    (void)state;
    struct pair p = make_pair_of(64, VIGIL_TICKS_TSC);

    /* One tick a ns, tick 1000 at 5000 ns: tick 2^64 - 4000 is ns 2^64. */
    struct vigil_tick_clock clock = {VIGIL_TICKS_TSC, {1000, 5000}, 1.0};
    struct vigil_activity a = make_activity(1, 1);
    a.parent_start_ns = 0;
    a.start_ns = UINT64_MAX - 4009; /* ns 2^64 - 10 */
    a.end_ns = UINT64_MAX - 3989;   /* ns 10 */
    assert_true(vigil_ring_push(p.producer, &a));
    a.start_ns = 3000;
    a.end_ns = 3400;
    assert_true(vigil_ring_push(p.producer, &a));

    struct collected c = {.in_order = false};
    struct vigil_ring_drain_report rep;
    assert_int_equal(vigil_ring_drain(p.consumer, 10, 0, &clock, collect, &c, &rep), 1);
    assert_problem(&rep, "ends");
    assert_int_equal(rep.corrupt, 1);
    assert_int_equal(c.last.activity.start_ns, 7000);
    free_pair(&p);
}

static void test_create_refuses_bad_sizes(void **state)
{
    (void)state;
    struct vigil_error err = {{0}};
    assert_null(vigil_ring_create(100, VIGIL_TICKS_MONOTONIC_NS, &err));
    assert_non_null(strstr(err.message, "power of two"));
    assert_null(vigil_ring_create(32, VIGIL_TICKS_MONOTONIC_NS, &err));
    assert_null(vigil_ring_create(VIGIL_RING_MAX_SLOTS * 2u, VIGIL_TICKS_MONOTONIC_NS, &err));
}

TEST_MAIN(
    cmocka_unit_test(test_push_and_drain_one), cmocka_unit_test(test_names_of_every_length_class),
    cmocka_unit_test(test_invalid_names_are_refused),
    cmocka_unit_test(test_push_through_a_producer_view),
    cmocka_unit_test(test_full_ring_drops_and_counts),
    cmocka_unit_test(test_drain_respects_max_records),
    cmocka_unit_test(test_eight_producers_one_consumer),
    cmocka_unit_test(test_garbage_slots_are_reported_not_crashed_on),
    cmocka_unit_test(test_each_corruption_is_named), cmocka_unit_test(test_damaged_name_records),
    cmocka_unit_test(test_corrupt_header_counters), cmocka_unit_test(test_producer_gone_mid_write),
    cmocka_unit_test(test_producer_gives_up_on_a_garbage_mark),
    cmocka_unit_test(test_attach_refuses_bad_headers),
    cmocka_unit_test(test_attach_refuses_truncated_and_unsealed_files),
    cmocka_unit_test(test_tsc_ring_times_are_converted_by_drain),
    cmocka_unit_test(test_times_that_wrap_when_converted_are_corrupt),
    cmocka_unit_test(test_create_refuses_bad_sizes),
    cmocka_unit_test(test_held_records_survive_a_new_consumer),
    cmocka_unit_test(test_release_beyond_commit_is_counted_by_the_next_consumer),
    cmocka_unit_test(test_names_asked_for_again),
    cmocka_unit_test(test_names_not_asked_of_an_older_producer),
    cmocka_unit_test(test_room_counts_held_slots), cmocka_unit_test(test_energy_published_and_read),
    cmocka_unit_test(test_energy_read_is_bounded_and_checked),
    cmocka_unit_test(test_energy_torn_reads_are_retried))
