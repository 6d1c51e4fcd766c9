/* vigil — the main of a test program that runs its tests as one group with
 * no group fixture, so that each program lists its tests and nothing else:
 *
 *     TEST_MAIN(cmocka_unit_test(test_a), TEST_WITH_DIR(test_b))
 *
 * Include after <cmocka.h>. */
#ifndef VIGIL_TEST_MAIN_H
#define VIGIL_TEST_MAIN_H

#define TEST_MAIN(...)                                                                             \
    int main(void)                                                                                 \
    {                                                                                              \
        const struct CMUnitTest tests[] = {__VA_ARGS__};                                           \
        return cmocka_run_group_tests(tests, NULL, NULL);                                          \
    }

#endif
