/* Integration tests of the REPORT a process sends vigild at exit, against
 * a private vigild: a good one is taken without a word and the process is
 * served on; a bad one, or a second one, is answered REFUSED with what is
 * wrong, logged, and the client disconnected. (What vigild checks is unit
 * tested in test_report_intake.c; the preload library's side in
 * tests/integration/test_daemon_link.c.) */
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

#include "clients.h"
#include "test_daemon.h"
#include "test_support.h"
#include "vigil/insight.h"
#include "vigil/local_protocol.h"
#include "test_main.h"

static int sealed_memfd(const char *text)
{
    int fd = memfd_create("test-report", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL), 0);
    return fd;
}

static void send_report(int socket_fd, int exit_code, const char *json)
{
    int fd = sealed_memfd(json);
    struct vigil_local_report fixed = {.exit_code = exit_code, .json_bytes = strlen(json)};
    struct vigil_error err;
    if (!vigil_local_send(socket_fd, VIGIL_LOCAL_REPORT, &fixed, sizeof fixed, fd, &err))
        fail_msg("cannot send a report: %s", err.message);
    close(fd);
}

/* The next message, which must be of `want`; its payload in `buffer`. */
static ssize_t expect_message(int fd, enum vigil_local_type want, char *buffer)
{
    enum vigil_local_type type;
    struct vigil_error err = {{0}};
    ssize_t n = vigil_local_receive(fd, buffer, &type, NULL, &err);
    if (n < 0)
        fail_msg("no %s message: %s", vigil_local_type_name(want), err.message);
    if (type != want)
        fail_msg("a %s message, not %s", vigil_local_type_name(type), vigil_local_type_name(want));
    return n;
}

/* REFUSED with a text holding `reason`, then the end of the connection. */
static void expect_refused(int fd, const char *reason)
{
    static char buffer[VIGIL_LOCAL_MAX_BYTES];
    ssize_t n = expect_message(fd, VIGIL_LOCAL_REFUSED, buffer);
    char text[512];
    struct vigil_error err;
    assert_true(
        vigil_local_decode_text(VIGIL_LOCAL_REFUSED, buffer, (size_t)n, text, sizeof text, &err));
    test_assert_contains(text, reason);
    enum vigil_local_type type;
    assert_int_equal(vigil_local_receive(fd, buffer, &type, NULL, &err), -1);
    assert_int_equal(errno, 0); /* the daemon closed it */
}

static void test_reports_good_and_bad(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, "providers = procstat\n", NULL);
    static char buffer[VIGIL_LOCAL_MAX_BYTES];

    /* A good report: no answer, and the process is served on (its summary
     * request is answered: it was not disconnected). */
    int good = client_connect(d.socket_path);
    assert_true(good >= 0);
    struct vigil_ring *ring = client_register(good, 64, true);
    send_report(good, 0, "{\"vigil_report\":1,\"run_key\":\"r\"}");
    assert_true(vigil_local_send(good, VIGIL_LOCAL_SUMMARY_REQUEST, NULL, 0, -1, NULL));
    expect_message(good, VIGIL_LOCAL_SUMMARY, buffer);
    /* Then [insight], here the defaults: the library's findings use them. */
    ssize_t n = expect_message(good, VIGIL_LOCAL_INSIGHT, buffer);
    struct vigil_insight_thresholds sent, defaults;
    struct vigil_error err = {{0}};
    if (!vigil_local_decode_fixed(VIGIL_LOCAL_INSIGHT, buffer, (size_t)n, &sent, &err))
        fail_msg("vigild's INSIGHT is refused: %s", err.message);
    vigil_insight_defaults(&defaults);
    assert_memory_equal(&sent, &defaults, sizeof sent);
    /* A second one is refused. */
    send_report(good, 0, "{\"vigil_report\":1,\"run_key\":\"r\"}");
    expect_refused(good, "report refused: a second report");
    close(good);
    vigil_ring_close(ring);

    /* JSON that is no vigil report. */
    int bad = client_connect(d.socket_path);
    ring = client_register(bad, 64, true);
    send_report(bad, 2, "{\"program\":\"x\"}");
    expect_refused(bad, "report refused: its JSON is not a vigil report");
    close(bad);
    vigil_ring_close(ring);

    /* A report before any registration. */
    int early = client_connect(d.socket_path);
    send_report(early, 0, "{\"vigil_report\":1}");
    static char none[VIGIL_LOCAL_MAX_BYTES];
    enum vigil_local_type type;
    assert_int_equal(vigil_local_receive(early, none, &type, NULL, NULL), -1);
    close(early);

    /* The first refusal is logged with its reason, the rest of the
     * period counted by kind, with the last reason. */
    char *log = test_daemon_stop(&d);
    test_assert_contains(log, "refused a client of uid 0 (out_of_turn): client pid");
    test_assert_contains(log, "report refused: a second report");
    test_assert_contains(log, "refused 2 more of uid 0 in ");
    test_assert_contains(log, " s (1 malformed, 1 out_of_turn); the last: client pid");
    test_assert_contains(log, "a report before its registration");
    g_free(log);
}

TEST_MAIN(TEST_WITH_DIR(test_reports_good_and_bad))
