/* Tests of the clocks and of the realtime/monotonic conversion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <time.h>

#include <cmocka.h>

#include "vigil/clock.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_monotonic_never_goes_back),
        cmocka_unit_test(test_offset_converts_both_ways),
        cmocka_unit_test(test_realtime_matches_the_system_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
