/* Run keys kept apart for another uid (vigil/run_key.h): the suffix, a
 * key too long for it, the owner a key names, and the Slurm job a key
 * names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vigil/run_key.h"
#include "test_main.h"

static void test_apart_adds_the_uid(void **state)
{
    (void)state;
    char out[VIGIL_RUN_KEY_MAX + 1];
    vigil_run_key_apart(out, "run-k", 65534);
    assert_string_equal(out, "run-k@uid65534");
    vigil_run_key_apart(out, "run-k@uid65534", 1);
    assert_string_equal(out, "run-k@uid65534@uid1");
    vigil_run_key_apart(out, "x", 4294967295u);
    assert_string_equal(out, "x@uid4294967295");
    assert_true(vigil_run_key_valid(out, strlen(out)));
}

/* A key that leaves no room for the suffix keeps its start and a hash of
 * the whole; two such keys that differ only at their ends stay apart, and
 * the same key gives the same result each time. */
static void test_a_long_key_is_cut_and_hashed(void **state)
{
    (void)state;
    char long_a[VIGIL_RUN_KEY_MAX + 1], long_b[VIGIL_RUN_KEY_MAX + 1];
    memset(long_a, 'a', VIGIL_RUN_KEY_MAX);
    long_a[VIGIL_RUN_KEY_MAX] = '\0';
    memcpy(long_b, long_a, sizeof long_b);
    long_b[VIGIL_RUN_KEY_MAX - 1] = 'b';
    char a[VIGIL_RUN_KEY_MAX + 1], a2[VIGIL_RUN_KEY_MAX + 1], b[VIGIL_RUN_KEY_MAX + 1];
    vigil_run_key_apart(a, long_a, 1000);
    vigil_run_key_apart(a2, long_a, 1000);
    vigil_run_key_apart(b, long_b, 1000);
    assert_int_equal(strlen(a), VIGIL_RUN_KEY_MAX);
    assert_true(vigil_run_key_valid(a, strlen(a)));
    assert_string_equal(a, a2);
    assert_string_not_equal(a, b);
    assert_memory_equal(a, long_a, VIGIL_RUN_KEY_MAX - 8 - 17);
    assert_int_equal(a[VIGIL_RUN_KEY_MAX - 8 - 17], '~');
    assert_string_equal(a + VIGIL_RUN_KEY_MAX - 8, "@uid1000");
    uint32_t uid = 0;
    assert_true(vigil_run_key_owner(a, &uid));
    assert_int_equal(uid, 1000);
    /* One byte short of needing the cut. */
    char fits[VIGIL_RUN_KEY_MAX + 1];
    memset(fits, 'c', VIGIL_RUN_KEY_MAX - 8);
    fits[VIGIL_RUN_KEY_MAX - 8] = '\0';
    vigil_run_key_apart(a, fits, 1000);
    assert_int_equal(strlen(a), VIGIL_RUN_KEY_MAX);
    assert_null(strchr(a, '~'));
}

static void test_the_owner_a_key_names(void **state)
{
    (void)state;
    uint32_t uid = 7;
    assert_true(vigil_run_key_owner("run@uid0", &uid));
    assert_int_equal(uid, 0);
    assert_true(vigil_run_key_owner("a@uid1@uid65534", &uid));
    assert_int_equal(uid, 65534);
    const char *not_owned[] = {"run",       "run@uid",   "run@uid01",
                               "run@uid-1", "run@uidx",  "run@uid4294967296",
                               "run@user1", "run@uid1x", "run@uid12345678901"};
    for (size_t i = 0; i < sizeof not_owned / sizeof not_owned[0]; i++)
        if (vigil_run_key_owner(not_owned[i], &uid))
            fail_msg("%s is taken to name an owner", not_owned[i]);
}

static void test_the_slurm_job_a_key_names(void **state)
{
    (void)state;
    char job[16];
    assert_true(vigil_run_key_scheduler_job("slurm-59038.0", job, sizeof job));
    assert_string_equal(job, "59038");
    assert_true(vigil_run_key_scheduler_job("slurm-59038", job, sizeof job));
    assert_string_equal(job, "59038");
    assert_true(vigil_run_key_scheduler_job("slurm-7.batch", job, sizeof job));
    assert_string_equal(job, "7");
    assert_false(vigil_run_key_scheduler_job("pmix-ns", job, sizeof job));
    assert_false(vigil_run_key_scheduler_job("slurm-", job, sizeof job));
    assert_false(vigil_run_key_scheduler_job("slurm-.0", job, sizeof job));
    assert_false(vigil_run_key_scheduler_job("slurm-5@uid1", job, sizeof job));
    assert_false(vigil_run_key_scheduler_job("slurm-1234567890123456", job, sizeof job));
    assert_false(vigil_run_key_scheduler_job("my-slurm-5", job, sizeof job));
}

TEST_MAIN(cmocka_unit_test(test_apart_adds_the_uid),
          cmocka_unit_test(test_a_long_key_is_cut_and_hashed),
          cmocka_unit_test(test_the_owner_a_key_names),
          cmocka_unit_test(test_the_slurm_job_a_key_names))
