/* Unit tests of how vigild takes a process's REPORT (daemon/local_server.c,
 * vigild_process_take_report): the JSON read whole from a sealed memfd and
 * kept only when it is UTF-8 text that parses and is a vigil report; every
 * refusal says what was wrong; the exit status is kept either way. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_support.h"
#include "processes.h"
#include "local_server.h"
#include "test_main.h"

#define GOOD_JSON "{\"vigil_report\":1,\"program\":\"/bin/true\",\"run_key\":\"r-1\"}\n"

/* A memfd holding `length` bytes of `bytes`, sealed when `seal`. */
static int memfd_with(const char *bytes, size_t length, gboolean seal)
{
    int fd = memfd_create("test-report", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, bytes, length), (ssize_t)length);
    if (seal)
        assert_int_equal(
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL), 0);
    return fd;
}

static struct vigild_process *new_process(void)
{
    struct vigild_process *p = g_new0(struct vigild_process, 1);
    p->exit_code = -1;
    return p;
}

static void free_process(struct vigild_process *p)
{
    g_free(p->report_json);
    g_free(p);
}

static void test_a_good_report_is_kept(void **state)
{
    (void)state;
    struct vigild_process *p = new_process();
    int fd = memfd_with(GOOD_JSON, strlen(GOOD_JSON), TRUE);
    GError *error = NULL;
    if (!vigild_process_take_report(p, 3, fd, strlen(GOOD_JSON), &error))
        fail_msg("refused: %s", error->message);
    assert_string_equal(p->report_json, GOOD_JSON);
    assert_int_equal(p->exit_code, 3);
    close(fd);
    free_process(p);
}

/* VIGIL_REPORT=off: no JSON, no descriptor; the exit status is kept. */
static void test_an_exit_status_alone(void **state)
{
    (void)state;
    struct vigild_process *p = new_process();
    GError *error = NULL;
    assert_true(vigild_process_take_report(p, 0, -1, 0, &error));
    assert_null(p->report_json);
    assert_int_equal(p->exit_code, 0);
    free_process(p);
}

/* `bytes` in a sealed memfd (or `fd` when >= 0) announced as `announced`
 * bytes: refused with `message`, the exit status kept all the same. */
static void expect_refused(const char *bytes, size_t length, uint64_t announced, int fd,
                           const char *message)
{
    struct vigild_process *p = new_process();
    int own = fd < 0 && bytes != NULL ? memfd_with(bytes, length, TRUE) : -1;
    GError *error = NULL;
    if (vigild_process_take_report(p, 7, own >= 0 ? own : fd, announced, &error))
        fail_msg("a report is kept, though %s", message);
    test_assert_contains(error->message, message);
    assert_null(p->report_json);
    assert_int_equal(p->exit_code, 7);
    g_error_free(error);
    if (own >= 0)
        close(own);
    free_process(p);
}

static void test_bad_reports_are_refused(void **state)
{
    (void)state;
    size_t good = strlen(GOOD_JSON);
    expect_refused(NULL, 0, good, -1, "a report of 57 bytes came without its memfd");
    int unsealed = memfd_with(GOOD_JSON, good, FALSE);
    expect_refused(NULL, 0, good, unsealed, "its memfd is not sealed against writing");
    int end[2];
    assert_int_equal(pipe2(end, O_CLOEXEC), 0);
    expect_refused(NULL, 0, good, end[0], "its JSON does not come in a memfd");
    int zero = memfd_with(GOOD_JSON, good, TRUE);
    expect_refused(NULL, 0, 0, zero, "a report of 0 bytes came with a descriptor");
    expect_refused(GOOD_JSON, good, good + 1, -1, "its memfd holds 57 bytes, not the 58 it says");
    expect_refused("{\"vigil_report\":1,\"p\":\"a\0b\"}", 28, 28, -1,
                   "its JSON has a NUL byte at byte 24");
    expect_refused("{\"vigil_report\":1,\"p\":\"caf\xe9\"}", 29, 29, -1,
                   "its JSON is not valid UTF-8 (at byte 26)");
    expect_refused("{\"vigil_report\":1,", 18, 18, -1, "its JSON does not parse: ");
    expect_refused("[1]", 3, 3, -1, "its JSON is not a vigil report");
    expect_refused("{\"program\":\"x\"}", 15, 15, -1, "its JSON is not a vigil report");
    expect_refused("{\"vigil_report\":\"1\"}", 20, 20, -1, "its JSON is not a vigil report");
    close(unsealed);
    close(end[0]);
    close(end[1]);
    close(zero);
}

TEST_MAIN(cmocka_unit_test(test_a_good_report_is_kept), cmocka_unit_test(test_an_exit_status_alone),
          cmocka_unit_test(test_bad_reports_are_refused))
