/* vigild's tick: deadlines that pass while the daemon cannot run are
 * counted as missed, and one tick runs for all of them. */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "vigild.h"

static void test_late_reader_counts_missed_ticks(void **state)
{
    (void)state;
    struct vigild_ticker t = {.fd = -1};
    GError *error = NULL;
    assert_true(vigild_ticker_start(&t, VIGIL_NS_PER_MS, &error));
    struct pollfd p = {.fd = t.fd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, -1), 1);
    /* Not a synchronisation: the daemon being late is the condition under
     * test, and 20 ms late on a 1 ms tick misses at least some deadlines
     * whatever the machine does meanwhile. */
    nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
    uint64_t expirations = vigild_ticker_take(&t);
    assert_true(expirations >= 20);
    assert_int_equal(t.ticks, 1);
    assert_int_equal(t.missed, expirations - 1);
    /* Nothing pending now: a wake-up without a deadline is no tick. */
    uint64_t before = t.ticks;
    if (vigild_ticker_take(&t) == 0)
        assert_int_equal(t.ticks, before);
    vigild_ticker_stop(&t);
    assert_int_equal(t.fd, -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_late_reader_counts_missed_ticks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
