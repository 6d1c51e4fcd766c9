/* vigil-web's connections under clients that hold them: keep-alive
 * connections closed by their clients, idle ones, slow clients that send
 * their headers a byte at a time and never finish (slowloris), a request
 * announcing a 1 GB body, and all of them at once; after each, a
 * legitimate request is answered and the connections the server counts
 * are its live ones ("connections: N open", logged at level info).
 *
 * A vigil-web per test (auth = remote-user, its proxy at 127.0.0.1, every
 * request below from 127.0.0.2 so untrusted, client_timeout_s = 1,
 * max_clients = 256 as by default) serving a static folder: no warehouse
 * is needed, what is tested happens before any query. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "test_support.h"
#include "test_web.h"

/* max_clients by default: the hostile clients below outnumber it. */
enum { MAX_CLIENTS = 256 };
enum { KEEP_ALIVE_CLIENTS = 1000, SLOW_CLIENTS = 300, LEGITIMATE_REQUESTS = 10 };
/* A client streaming a body stops after this much without an answer:
 * far less than the 1 GB it announces, and far more than the socket
 * buffers between it and the server hold. */
#define BODY_ANNOUNCED_BYTES    1000000000ull
#define BODY_STREAMED_MAX_BYTES (64ull << 20)
/* How much the server's resident memory may grow under all of it. */
#define RSS_GROWTH_MAX_KIB (20u << 10)

#define UNTRUSTED "127.0.0.2"

static char *dir;
static struct test_web web;

static int group_setup(void **state)
{
    (void)state;
    dir = test_web_folder_new("connections");
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    test_remove_tree(dir);
    g_free(dir);
    return 0;
}

/* A vigil-web of its own for each test: what one test leaves behind
 * (connections it could not close) does not count against the next. */
static int start_web(void **state)
{
    (void)state;
    test_web_startf(&web, dir, "connections",
                    "[log]\nlevel = info\n"
                    "[web]\nlisten = 127.0.0.1:0\nstatic_dir = %s/static\n"
                    "vendor_dir = %s\nauth = remote-user\n"
                    "trusted_proxies = 127.0.0.1\nclient_timeout_s = 1\n"
                    "max_clients = %d\n",
                    dir, dir, MAX_CLIENTS);
    return 0;
}

static int stop_web(void **state)
{
    (void)state;
    test_web_stop(&web);
    return 0;
}

static const char request_ok[] = "GET /static/ok.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/* A legitimate request on a connection of its own: 200 and the file. */
static char *legitimate_request_problem(void)
{
    struct test_http a = test_web_raw(web.port, UNTRUSTED,
                                      "GET /static/ok.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                      "Connection: close\r\n\r\n");
    char *problem = a.status == 200 && strcmp(a.body, TEST_WEB_OK_TXT) == 0
                        ? NULL
                        : g_strdup_printf("status %u, body \"%.200s\"", a.status, a.body);
    test_http_clear(&a);
    return problem;
}

static void assert_legitimate_request_answered(const char *after)
{
    char *problem = legitimate_request_problem();
    if (problem != NULL)
        fail_msg("a legitimate request after %s: %s", after, problem);
}

/* ---- keep-alive connections --------------------------------------------------------------- */

/* Reads an answer on `c`: whether it is 200 with the file. */
static gboolean answer_ok(GSocketConnection *c)
{
    struct test_http a = test_web_read_answer(c);
    gboolean ok = a.status == 200 && strcmp(a.body, TEST_WEB_OK_TXT) == 0;
    test_http_clear(&a);
    return ok;
}

/* Each makes one request on a kept-alive connection, reads the answer and
 * closes: how many were answered 200 with the file. */
static guint keep_alive_clients_that_close(guint n)
{
    guint answered = 0;
    for (guint i = 0; i < n; i++) {
        GSocketConnection *c = test_web_connect(web.port, UNTRUSTED);
        test_web_write(c, request_ok);
        answered += answer_ok(c);
        g_object_unref(c);
    }
    return answered;
}

static void test_closed_keep_alive_connections_are_not_counted(void **state)
{
    (void)state;
    guint answered = keep_alive_clients_that_close(KEEP_ALIVE_CLIENTS);
    if (answered != KEEP_ALIVE_CLIENTS)
        fail_msg("%u of %d keep-alive clients (max_clients = %d), each closing after its "
                 "answer, were answered",
                 answered, KEEP_ALIVE_CLIENTS, MAX_CLIENTS);
    test_web_wait_open_connections(&web, 0);
    assert_legitimate_request_answered("1,000 closed keep-alive connections");
}

static void test_an_idle_keep_alive_connection_is_closed(void **state)
{
    (void)state;
    GSocketConnection *c = test_web_connect(web.port, UNTRUSTED);
    test_web_write(c, request_ok);
    struct test_http a = test_web_read_answer(c);
    assert_int_equal(a.status, 200);
    test_http_clear(&a);
    /* Then nothing: the server closes it after client_timeout_s = 1 (the
     * read's guard is 30 s). */
    gsize n = 0;
    char *got = test_web_read_to_eof(c, &n);
    if (n != 0)
        fail_msg("an idle connection was sent %zu bytes: %s", n, got);
    g_free(got);
    g_object_unref(c);
    test_web_wait_open_connections(&web, 0);
}

/* A client keeps its connection for many requests, one after the other as
 * soon as each answer is in, or several sent at once (pipelining). */
static void test_many_requests_on_one_kept_alive_connection(void **state)
{
    (void)state;
    enum { SEQUENTIAL = 200, PIPELINED = 20 };
    GSocketConnection *c = test_web_connect(web.port, UNTRUSTED);
    guint answered = 0;
    for (guint i = 0; i < SEQUENTIAL; i++) {
        test_web_write(c, request_ok);
        if (!answer_ok(c))
            break;
        answered++;
    }
    if (answered != SEQUENTIAL)
        fail_msg("%u of %d requests, one after the other, answered on one kept-alive connection",
                 answered, SEQUENTIAL);
    GString *burst = g_string_new(NULL);
    for (guint i = 0; i < PIPELINED; i++)
        g_string_append(burst, request_ok);
    test_web_write(c, burst->str);
    g_string_free(burst, TRUE);
    answered = 0;
    for (guint i = 0; i < PIPELINED; i++) {
        if (!answer_ok(c))
            break;
        answered++;
    }
    if (answered != PIPELINED)
        fail_msg("%u of %d requests sent at once answered on one kept-alive connection", answered,
                 PIPELINED);
    g_object_unref(c);
    test_web_wait_open_connections(&web, 0);
}

/* ---- slow clients ------------------------------------------------------------------------- */

struct slow_clients {
    GSocketConnection *c[SLOW_CLIENTS];
    gboolean closed[SLOW_CLIENTS]; /* by the server: EOF, a reset or an answer */
    guint open;
};

static void slow_clients_open(struct slow_clients *slow)
{
    memset(slow, 0, sizeof *slow);
    for (guint i = 0; i < SLOW_CLIENTS; i++) {
        slow->c[i] = test_web_connect(web.port, UNTRUSTED);
        /* Headers that are never finished. */
        test_web_write(slow->c[i], "GET /static/ok.txt HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    }
    slow->open = SLOW_CLIENTS;
}

/* One more byte of header on each open one, then waits up to `wait_ms`
 * for the server to close any: a slowloris sends often enough that no
 * inactivity timeout fires (client_timeout_s = 1). */
static void slow_clients_trickle(struct slow_clients *slow, int wait_ms)
{
    struct pollfd fds[SLOW_CLIENTS];
    guint which[SLOW_CLIENTS];
    nfds_t n = 0;
    for (guint i = 0; i < SLOW_CLIENTS; i++) {
        if (slow->closed[i])
            continue;
        GSocket *s = g_socket_connection_get_socket(slow->c[i]);
        /* A failed send is a server that closed: seen by the poll below. */
        g_socket_send(s, "x", 1, NULL, NULL);
        fds[n] = (struct pollfd){.fd = g_socket_get_fd(s), .events = POLLIN};
        which[n++] = i;
    }
    if (poll(fds, n, wait_ms) < 0 && errno != EINTR)
        fail_msg("poll: %s", g_strerror(errno));
    for (nfds_t k = 0; k < n; k++)
        if (fds[k].revents != 0) {
            slow->closed[which[k]] = TRUE;
            slow->open--;
        }
}

static void slow_clients_close(struct slow_clients *slow)
{
    for (guint i = 0; i < SLOW_CLIENTS; i++)
        g_object_unref(slow->c[i]);
}

/* Trickles until the server has closed every one, guarded. */
static void assert_slow_clients_closed(struct slow_clients *slow)
{
    gint64 guard = g_get_monotonic_time() + TEST_WEB_GUARD_S * G_USEC_PER_SEC;
    while (slow->open > 0 && g_get_monotonic_time() < guard)
        slow_clients_trickle(slow, 250);
    if (slow->open > 0)
        fail_msg("%u of %d slow clients, each sending a header byte every 250 ms and never "
                 "finishing, still open after %d s (client_timeout_s = 1)",
                 slow->open, SLOW_CLIENTS, TEST_WEB_GUARD_S);
}

static void test_slow_clients_neither_stay_nor_starve_others(void **state)
{
    (void)state;
    struct slow_clients slow;
    slow_clients_open(&slow);
    slow_clients_trickle(&slow, 0);
    /* While they hold more connections than max_clients, legitimate
     * requests are answered. */
    guint answered = 0;
    GString *problems = g_string_new(NULL);
    for (int i = 0; i < LEGITIMATE_REQUESTS; i++) {
        char *problem = legitimate_request_problem();
        answered += problem == NULL;
        if (problem != NULL)
            g_string_append_printf(problems, "\n  %s", problem);
        g_free(problem);
        slow_clients_trickle(&slow, 0);
    }
    if (answered != LEGITIMATE_REQUESTS)
        fail_msg("%u of %d legitimate requests answered beside %d slow clients:%s", answered,
                 LEGITIMATE_REQUESTS, SLOW_CLIENTS, problems->str);
    g_string_free(problems, TRUE);
    assert_slow_clients_closed(&slow);
    slow_clients_close(&slow);
    test_web_wait_open_connections(&web, 0);
}

/* ---- request bodies ----------------------------------------------------------------------- */

/* Sends `headers`, then streams body bytes until the server answers or
 * closes, or BODY_STREAMED_MAX_BYTES went unanswered; the answer, and the
 * body bytes the server took in *streamed. */
static struct test_http stream_body(const char *headers, guint64 *streamed)
{
    GSocketConnection *c = test_web_connect(web.port, UNTRUSTED);
    test_web_write(c, headers);
    GSocket *s = g_socket_connection_get_socket(c);
    static char chunk[64 << 10];
    memset(chunk, 'b', sizeof chunk);
    *streamed = 0;
    while (*streamed < BODY_STREAMED_MAX_BYTES &&
           (g_socket_condition_check(s, G_IO_IN | G_IO_HUP | G_IO_ERR) &
            (G_IO_IN | G_IO_HUP | G_IO_ERR)) == 0) {
        GError *error = NULL;
        /* Blocking, with the guard as the socket's timeout. */
        gssize n = g_socket_send(s, chunk, sizeof chunk, NULL, &error);
        if (n < 0 && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
            fail_msg("the server neither read nor answered for %d s (%" G_GUINT64_FORMAT
                     " body bytes taken)",
                     TEST_WEB_GUARD_S, *streamed);
        g_clear_error(&error);
        if (n <= 0)
            break; /* closed by the server: its answer may be waiting */
        *streamed += (guint64)n;
    }
    if (*streamed >= BODY_STREAMED_MAX_BYTES) {
        g_object_unref(c);
        return (struct test_http){.headers = g_strdup(""), .body = g_strdup("")};
    }
    gsize n = 0;
    char *text = test_web_read_to_eof(c, &n);
    g_object_unref(c);
    return test_web_parse_answer(text, n);
}

static void assert_body_refused(const char *method, guint status, const char *code)
{
    char *headers = g_strdup_printf("%s /api/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    "Content-Type: application/octet-stream\r\n"
                                    "Content-Length: %llu\r\n\r\n",
                                    method, BODY_ANNOUNCED_BYTES);
    guint64 streamed = 0;
    struct test_http a = stream_body(headers, &streamed);
    char *mismatch = test_web_error_mismatch(&a, status, code, NULL);
    if (mismatch != NULL)
        fail_msg("%s with a body of %llu bytes from an untrusted address, %" G_GUINT64_FORMAT
                 " body bytes taken (the client gives up unanswered at %llu MiB): %s",
                 method, BODY_ANNOUNCED_BYTES, streamed, BODY_STREAMED_MAX_BYTES >> 20, mismatch);
    printf("%s announcing %llu bytes: %u after %" G_GUINT64_FORMAT " body bytes taken\n", method,
           BODY_ANNOUNCED_BYTES, a.status, streamed);
    test_http_clear(&a);
    g_free(headers);
}

static void test_a_request_body_is_refused_before_it_is_read(void **state)
{
    (void)state;
    assert_body_refused("GET", 413, "content_too_large");
    assert_body_refused("POST", 405, "method_not_allowed");
    test_web_wait_open_connections(&web, 0);
    assert_legitimate_request_answered("refused bodies");
}

/* ---- all at once -------------------------------------------------------------------------- */

static void test_all_at_once_then_a_legitimate_request(void **state)
{
    (void)state;
    guint64 rss_before_kib = test_web_rss_kib(&web);
    guint answered = keep_alive_clients_that_close(KEEP_ALIVE_CLIENTS);
    struct slow_clients slow;
    slow_clients_open(&slow);
    slow_clients_trickle(&slow, 0);
    assert_body_refused("GET", 413, "content_too_large");
    /* The slow ones still there. */
    slow_clients_trickle(&slow, 0);
    assert_legitimate_request_answered("1,000 closed keep-alive connections, 300 slow clients "
                                       "and a 1 GB body");
    guint64 rss_after_kib = test_web_rss_kib(&web);
    printf("vigil-web VmRSS %" G_GUINT64_FORMAT " KiB before, %" G_GUINT64_FORMAT
           " KiB after (%u of %d keep-alive clients answered)\n",
           rss_before_kib, rss_after_kib, answered, KEEP_ALIVE_CLIENTS);
    assert_int_equal(answered, KEEP_ALIVE_CLIENTS);
    if (rss_after_kib > rss_before_kib + RSS_GROWTH_MAX_KIB)
        fail_msg("vigil-web's resident memory grew from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT
                 " KiB, more than %u KiB",
                 rss_before_kib, rss_after_kib, RSS_GROWTH_MAX_KIB);
    assert_slow_clients_closed(&slow);
    slow_clients_close(&slow);
    test_web_wait_open_connections(&web, 0);
}

int main(void)
{
    /* ASan keeps what is freed in a quarantine of 256 MB: none for the
     * vigil-web children (which inherit this), or their RSS would say
     * nothing (a plain build ignores the variable). */
    const char *asan = g_getenv("ASAN_OPTIONS");
    char *asan_options = g_strdup_printf("%s%squarantine_size_mb=0", asan != NULL ? asan : "",
                                         asan != NULL ? ":" : "");
    g_setenv("ASAN_OPTIONS", asan_options, TRUE);
    g_free(asan_options);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_closed_keep_alive_connections_are_not_counted,
                                        start_web, stop_web),
        cmocka_unit_test_setup_teardown(test_an_idle_keep_alive_connection_is_closed, start_web,
                                        stop_web),
        cmocka_unit_test_setup_teardown(test_many_requests_on_one_kept_alive_connection, start_web,
                                        stop_web),
        cmocka_unit_test_setup_teardown(test_slow_clients_neither_stay_nor_starve_others, start_web,
                                        stop_web),
        cmocka_unit_test_setup_teardown(test_a_request_body_is_refused_before_it_is_read, start_web,
                                        stop_web),
        cmocka_unit_test_setup_teardown(test_all_at_once_then_a_legitimate_request, start_web,
                                        stop_web),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
