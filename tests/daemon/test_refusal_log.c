/* Unit tests of vigild's refusal log (daemon/refusal_log.c): a user's
 * first refusal is logged at once with its reason, the rest of a period
 * in one line with the counts by kind, each user on its own; the status
 * counts every refusal. Times are given, so nothing waits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "refusal_log.h"
#include "test_support.h"
#include "test_main.h"

#define PERIOD_S  60
#define PERIOD_US ((gint64)PERIOD_S * G_USEC_PER_SEC)
#define T0_US     ((gint64)1000 * G_USEC_PER_SEC)

static GPtrArray *lines; /* what the log got, since the test began */

static void keep_line(const gchar *domain, GLogLevelFlags level, const gchar *message,
                      gpointer user_data)
{
    (void)domain;
    (void)level;
    (void)user_data;
    g_ptr_array_add(lines, g_strdup(message));
}

static int setup(void **state)
{
    lines = g_ptr_array_new_with_free_func(g_free);
    g_log_set_handler("vigild", G_LOG_LEVEL_MASK, keep_line, NULL);
    struct vigild_refusal_log *log = g_new0(struct vigild_refusal_log, 1);
    vigild_refusal_log_init(log, PERIOD_S);
    *state = log;
    return 0;
}

static int teardown(void **state)
{
    struct vigild_refusal_log *log = *state;
    vigild_refusal_log_clear(log);
    g_free(log);
    g_ptr_array_free(lines, TRUE);
    return 0;
}

static const char *line(guint i)
{
    if (i >= lines->len)
        fail_msg("the log has %u lines, not %u", lines->len, i + 1);
    return g_ptr_array_index(lines, i);
}

/* 1,000 refusals of one user in a period: its first logged at once with
 * the reason, the rest in one line at the period's end with the counts by
 * kind and the last reason; the status counts all of them. */
static void test_a_users_refusals_are_one_line_a_period(void **state)
{
    struct vigild_refusal_log *log = *state;
    vigild_refusal_log_note_at(log, 65534, VIGILD_REFUSED_MALFORMED, "first why", T0_US);
    assert_int_equal(lines->len, 1);
    test_assert_contains(line(0), "refused a client of uid 65534 (malformed): first why");
    test_assert_contains(line(0), "logged at most once in 60 s");
    for (int i = 1; i < 1000; i++)
        vigild_refusal_log_note_at(
            log, 65534, i % 4 == 0 ? VIGILD_REFUSED_OUT_OF_TURN : VIGILD_REFUSED_MALFORMED,
            i == 999 ? "last why" : "other why", T0_US + i * 1000);
    assert_int_equal(lines->len, 1);
    /* Before the period ends nothing more is logged; the line is due then. */
    assert_int_equal(vigild_refusal_log_flush_at(log, T0_US + PERIOD_US - 1), T0_US + PERIOD_US);
    assert_int_equal(lines->len, 1);
    assert_int_equal(vigild_refusal_log_flush_at(log, T0_US + PERIOD_US), 0);
    assert_int_equal(lines->len, 2);
    assert_string_equal(line(1), "refused 999 more of uid 65534 in 60 s (750 malformed, 249 "
                                 "out_of_turn); the last: last why");

    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    vigild_refusal_log_status(log, b);
    json_builder_end_object(b);
    JsonNode *root = json_builder_get_root(b);
    JsonObject *refused = json_object_get_object_member(json_node_get_object(root), "refused");
    assert_int_equal(json_object_get_int_member(refused, "malformed"), 751);
    assert_int_equal(json_object_get_int_member(refused, "out_of_turn"), 249);
    assert_int_equal(json_object_get_int_member(refused, "uid_connections"), 0);
    assert_true(json_object_has_member(refused, "job_notice"));
    json_node_unref(root);
    g_object_unref(b);
}

/* One user's flood does not hide another user's first refusal. */
static void test_each_user_has_its_own_first_line(void **state)
{
    struct vigild_refusal_log *log = *state;
    vigild_refusal_log_note_at(log, 65534, VIGILD_REFUSED_MALFORMED, "flood", T0_US);
    vigild_refusal_log_note_at(log, 65534, VIGILD_REFUSED_MALFORMED, "flood", T0_US + 1);
    vigild_refusal_log_note_at(log, 1000, VIGILD_REFUSED_JOB_NOTICE, "not your job", T0_US + 2);
    vigild_refusal_log_note_at(log, 0, VIGILD_REFUSED_FD_BUDGET, "root over", T0_US + 3);
    assert_int_equal(lines->len, 3);
    test_assert_contains(line(1), "refused a client of uid 1000 (job_notice): not your job");
    test_assert_contains(line(2), "refused a client of uid 0 (fd_budget): root over");
}

/* After a period without refusals, the next is logged at once with its
 * reason; a user quiet for a period is forgotten. */
static void test_a_refusal_after_a_quiet_period_is_logged_at_once(void **state)
{
    struct vigild_refusal_log *log = *state;
    vigild_refusal_log_note_at(log, 65534, VIGILD_REFUSED_UID_CONNECTIONS, "one", T0_US);
    assert_int_equal(vigild_refusal_log_flush_at(log, T0_US + PERIOD_US), 0);
    assert_int_equal(g_hash_table_size(log->by_uid), 0);
    vigild_refusal_log_note_at(log, 65534, VIGILD_REFUSED_UID_CONNECTIONS, "two",
                               T0_US + 2 * PERIOD_US);
    assert_int_equal(lines->len, 2);
    test_assert_contains(line(1), "refused a client of uid 65534 (uid_connections): two");
}

/* Counts held when a refusal comes after the period but before the timer
 * ran (a busy loop) are logged first; the stop logs what is held. */
static void test_held_counts_are_never_lost(void **state)
{
    struct vigild_refusal_log *log = *state;
    vigild_refusal_log_note_at(log, 65534, VIGILD_REFUSED_MALFORMED, "a", T0_US);
    vigild_refusal_log_note_at(log, 65534, VIGILD_REFUSED_MALFORMED, "b", T0_US + 1);
    vigild_refusal_log_note_at(log, 65534, VIGILD_REFUSED_OUT_OF_TURN, "c", T0_US + PERIOD_US);
    assert_int_equal(lines->len, 3);
    assert_string_equal(line(1), "refused 1 more of uid 65534 in 60 s (1 malformed); the last: b");
    test_assert_contains(line(2), "refused a client of uid 65534 (out_of_turn): c");
    vigild_refusal_log_note_at(log, 65534, VIGILD_REFUSED_JOB_NOTICE, "d", T0_US + PERIOD_US + 1);
    vigild_refusal_log_clear(log);
    assert_int_equal(lines->len, 4);
    test_assert_contains(line(3), "refused 1 more of uid 65534 in ");
    test_assert_contains(line(3), "(1 job_notice); the last: d");
    vigild_refusal_log_init(log, PERIOD_S); /* for the teardown */
}

#define WITH_FIXTURE(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

TEST_MAIN(WITH_FIXTURE(test_a_users_refusals_are_one_line_a_period),
          WITH_FIXTURE(test_each_user_has_its_own_first_line),
          WITH_FIXTURE(test_a_refusal_after_a_quiet_period_is_logged_at_once),
          WITH_FIXTURE(test_held_counts_are_never_lost))
