/* Tests of the clocks and of the realtime/monotonic conversion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "vigil/clock.h"
#include "test_main.h"

static void test_monotonic_never_goes_back(void **state)
{
    (void)state;
    uint64_t prev = vigil_clock_monotonic_ns();
    for (int i = 0; i < 100000; i++) {
        uint64_t now = vigil_clock_monotonic_ns();
        assert_true(now >= prev);
        prev = now;
    }
}

static void test_offset_converts_both_ways(void **state)
{
    (void)state;
    struct vigil_clock_offset off;
    vigil_clock_offset_measure(&off);
    uint64_t mono = vigil_clock_monotonic_ns();
    uint64_t real = vigil_clock_to_realtime_ns(&off, mono);
    assert_int_equal(vigil_clock_to_monotonic_ns(&off, real), mono);

    /* The converted time lies between two realtime reads around it, within
     * the measured uncertainty. */
    uint64_t before = vigil_clock_realtime_ns();
    uint64_t converted = vigil_clock_to_realtime_ns(&off, vigil_clock_monotonic_ns());
    uint64_t after = vigil_clock_realtime_ns();
    assert_true(converted + off.uncertainty_ns >= before);
    assert_true(converted <= after + off.uncertainty_ns);
}

static void test_realtime_matches_the_system_clock(void **state)
{
    (void)state;
    struct timespec ts;
    uint64_t ours = vigil_clock_realtime_ns();
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t theirs = (uint64_t)ts.tv_sec * VIGIL_NS_PER_S + (uint64_t)ts.tv_nsec;
    assert_true(theirs >= ours);
}

static void test_tick_clock_arithmetic(void **state)
{
    (void)state;
    struct vigil_tick_anchor a = {1000, 5000}, b = {3000, 6000};
    struct vigil_tick_clock c;
    vigil_tick_clock_init(&c, VIGIL_TICKS_TSC, &a, &b);
    assert_true(c.ns_per_tick == 0.5);
    assert_int_equal(vigil_tick_clock_ns(&c, 3000), 6000);
    assert_int_equal(vigil_tick_clock_ns(&c, 2000), 5500); /* before the base */
    assert_int_equal(vigil_tick_clock_ns(&c, 5000), 7000);
    assert_true(vigil_tick_clock_duration_ns(&c, 400) == 200.0);

    /* Monotonic-ns ticks are ns already, whatever the anchors say. */
    vigil_tick_clock_init(&c, VIGIL_TICKS_MONOTONIC_NS, &a, &b);
    assert_int_equal(vigil_tick_clock_ns(&c, 1234), 1234);
    assert_true(vigil_tick_clock_duration_ns(&c, 400) == 400.0);

    /* Anchors in the wrong order cannot give a rate: stay at 1. */
    vigil_tick_clock_init(&c, VIGIL_TICKS_TSC, &b, &a);
    assert_true(c.ns_per_tick == 1.0);
}

/* A hostile ring's ticks may be anywhere. At a rate of 1 ns a tick (what
 * init falls back to) a tick 2^63 from the base was converted through a
 * double just past int64's range: undefined behaviour, caught by UBSan. */
static void test_ticks_far_from_the_base(void **state)
{
    (void)state;
    struct vigil_tick_anchor a = {1000, 5000};
    struct vigil_tick_clock c;
    vigil_tick_clock_init(&c, VIGIL_TICKS_TSC, &a, &a);
    assert_true(c.ns_per_tick == 1.0);
    uint64_t far = vigil_tick_clock_ns(&c, 1000 + (uint64_t)INT64_MAX);
    uint64_t nearer = vigil_tick_clock_ns(&c, 1000 + (1ull << 62));
    assert_true(far > nearer);
    uint64_t far_back = vigil_tick_clock_ns(&c, 1000 - (1ull << 63));
    assert_int_equal(far_back, 5000 - (1ull << 63));
}

static void test_tick_source_and_anchors(void **state)
{
    (void)state;
    enum vigil_tick_source source = vigil_tick_source_detect();
    assert_true(source == VIGIL_TICKS_TSC || source == VIGIL_TICKS_MONOTONIC_NS);
    struct vigil_tick_anchor first, second;
    vigil_tick_anchor_now(source, &first);
    vigil_tick_anchor_now(source, &second);
    assert_true(second.ns >= first.ns);
    assert_true(second.ticks >= first.ticks);
    if (source == VIGIL_TICKS_MONOTONIC_NS)
        assert_int_equal(first.ticks, first.ns);
}

static void test_tick_source_choice(void **state)
{
    (void)state;
    const char *vm = "flags\t\t: fpu tsc constant_tsc tsc_reliable nonstop_tsc hypervisor";
#if defined(__x86_64__)
    assert_int_equal(vigil_tick_source_choose("tsc", NULL), VIGIL_TICKS_TSC);
    /* A virtual machine on kvm-clock whose platform vouches for the TSC. */
    assert_int_equal(vigil_tick_source_choose("kvm-clock", vm), VIGIL_TICKS_TSC);
#else
    assert_int_equal(vigil_tick_source_choose("tsc", vm), VIGIL_TICKS_MONOTONIC_NS);
#endif
    /* Any of the three missing, or only part of a word: not trusted. */
    assert_int_equal(
        vigil_tick_source_choose("kvm-clock", "flags : tsc constant_tsc nonstop_tsc hypervisor"),
        VIGIL_TICKS_MONOTONIC_NS);
    assert_int_equal(vigil_tick_source_choose("hpet", "flags : constant_tsc tsc_reliable"),
                     VIGIL_TICKS_MONOTONIC_NS);
    assert_int_equal(vigil_tick_source_choose(
                         "kvm-clock", "flags : xconstant_tsc nonstop_tscx tsc_reliable_not"),
                     VIGIL_TICKS_MONOTONIC_NS);
    assert_int_equal(vigil_tick_source_choose("kvm-clock", NULL), VIGIL_TICKS_MONOTONIC_NS);
    assert_int_equal(vigil_tick_source_choose(NULL, ""), VIGIL_TICKS_MONOTONIC_NS);
}

TEST_MAIN(cmocka_unit_test(test_monotonic_never_goes_back),
          cmocka_unit_test(test_offset_converts_both_ways),
          cmocka_unit_test(test_realtime_matches_the_system_clock),
          cmocka_unit_test(test_tick_clock_arithmetic), cmocka_unit_test(test_tick_source_choice),
          cmocka_unit_test(test_ticks_far_from_the_base),
          cmocka_unit_test(test_tick_source_and_anchors))
