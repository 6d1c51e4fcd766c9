/* vigild's socket against its local users (issue 14): 20,000 idle
 * connections of one user while another user's instrumented program
 * registers and is drained to its last record; a registration into
 * another user's run kept apart with the reason, and a user's processes
 * bounded; an idle unregistered connection closed while a silent
 * registered one stays; the descriptor budget; the sink off beside an
 * uplink; floods of malformed messages and of garbage connections logged
 * in a line or two per user with their counts, and a user's status loop
 * refused past its burst while root's is answered, and a connection that
 * only asks for the status closed by the idle timeout (issue 30). Other users are real: forked
 * children that setuid() to nobody (65534) or to uid 1. */
#define _GNU_SOURCE
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "clients.h"
#include "holder.h"
#include "test_daemon.h"
#include "test_report.h"
#include "test_support.h"
#include "vigil/clock.h"
#include "vigil/local_protocol.h"
#include "test_main.h"

#define FAST_PROVIDERS "providers = procstat;process\n"
#define SAFETY_MS      60000

static JsonObject *object_at(JsonNode *status, const char *name)
{
    return json_object_get_object_member(json_node_get_object(status), name);
}

static gint64 refused(JsonNode *status, const char *kind)
{
    return test_daemon_json_int(object_at(status, "clients"), "refused", kind, NULL);
}

/* Lines of `log` that contain `needle`. */
static guint count_lines(const char *log, const char *needle)
{
    guint n = 0;
    for (const char *at = log; (at = strstr(at, needle)) != NULL; at += strlen(needle))
        n++;
    return n;
}

/* ---- a flood of idle connections ----------------------------------------- */

struct flood {
    pid_t pids[4];
    int children;
    int release;
};

/* `children` children of `uid`, each holding `each` connections it never
 * speaks on; returns once every connect() returned. */
static void flood_start(struct flood *f, const char *socket_path, uid_t uid, int children, int each)
{
    int ready[2], release[2];
    pipes_open(ready, release);
    f->children = children;
    for (int i = 0; i < children; i++) {
        f->pids[i] = fork_with_pipes(ready, release);
        if (f->pids[i] == 0) {
            struct rlimit limit;
            if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_max < (rlim_t)each + 16)
                _exit(72); /* the hard limit is too low for the test */
            limit.rlim_cur = limit.rlim_max;
            if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
                _exit(73);
            become(uid);
            for (int j = 0; j < each; j++)
                if (client_connect(socket_path) < 0)
                    _exit(74);
            if (write(ready[1], "x", 1) != 1)
                _exit(75);
            exit_when_released(release[0]);
        }
    }
    pipes_keep_test_ends(ready, release);
    f->release = release[1];
    for (int i = 0; i < children; i++) {
        char c;
        if (read(ready[0], &c, 1) != 1) {
            for (int k = 0; k < children; k++)
                kill(f->pids[k], SIGKILL);
            fail_msg("a flooding child died before its connections were made");
        }
    }
    close(ready[0]);
}

static void flood_stop(struct flood *f)
{
    close(f->release);
    for (int i = 0; i < f->children; i++)
        wait_exit(f->pids[i], 0);
}

/* dd under the preload library as `uid`, writing `count` blocks into a
 * folder of that user's; checks that vigild drained every record its
 * report says it wrote. */
static void run_dd_as(const struct test_daemon *d, uid_t uid, int count)
{
    char *report_path;
    pid_t pid = dd_as(d, uid, count, NULL, &report_path);

    struct test_report rep = test_report_load(report_path);
    gint64 recorded = test_report_int(&rep, "activities.recorded");
    assert_true(recorded >= count);
    assert_int_equal(test_report_int(&rep, "activities.dropped"), 0);
    const char *state = test_report_string(&rep, "vigild.state");
    assert_true(strcmp(state, "summary") == 0 || strcmp(state, "connected") == 0);
    JsonNode *status = test_daemon_status(d, pid);
    JsonObject *p = test_daemon_process(status, pid);
    if (p == NULL)
        fail_msg("dd (pid %d, uid %u) is not in the daemon's status", (int)pid, (unsigned)uid);
    assert_string_equal(json_object_get_string_member(p, "state"), "ended");
    assert_int_equal(json_object_get_int_member(p, "activities"), recorded);
    assert_int_equal(json_object_get_int_member(p, "seq_gaps"), 0);
    assert_int_equal(json_object_get_int_member(p, "corrupt"), 0);
    json_node_unref(status);
    test_report_free(&rep);
    g_free(report_path);
}

#define FLOOD_CHILDREN 2
#define FLOOD_EACH     10000 /* 20,000 in all: the hard limit here is 20,000 a process */
#define PER_UID        1024  /* [daemon] max_connections_per_uid's default */

/* One user holds 20,000 connections open and silent; another user's
 * program registers and every record it wrote is drained. The flooding
 * user got its limit and no more, and the log said so in a few lines. */
static void test_idle_connections_of_one_user_do_not_stop_another(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    /* The timeout is long: the flood stays for the whole test. */
    holder_daemon_start(&d, dir, FAST_PROVIDERS "unregistered_timeout_ms = 3600000\n");
    struct flood flood;
    flood_start(&flood, d.socket_path, NOBODY, FLOOD_CHILDREN, FLOOD_EACH);

    run_dd_as(&d, OTHER_UID, 200);

    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *clients = object_at(status, "clients");
    assert_int_equal(refused(status, "uid_connections"), FLOOD_CHILDREN * FLOOD_EACH - PER_UID);
    assert_int_equal(refused(status, "fd_budget"), 0);
    assert_int_equal(test_daemon_json_int(clients, "max_connections_per_uid", NULL), PER_UID);
    /* The flood's, and the status request's own. */
    assert_int_equal(test_daemon_json_int(clients, "connections", NULL), PER_UID + 1);
    assert_true(test_daemon_json_int(clients, "fds_in_use", NULL) <
                test_daemon_json_int(clients, "fd_budget", NULL));
    json_node_unref(status);

    flood_stop(&flood);
    char *log = test_daemon_stop(&d);
    guint lines = count_lines(log, "refused");
    if (lines < 1 || lines > 3)
        fail_msg("%u log lines about %d refusals, not 1 to 3:\n%s", lines,
                 FLOOD_CHILDREN * FLOOD_EACH - PER_UID, log);
    test_assert_contains(log, "uid 65534 holds 1024 connections already");
    g_free(log);
}

/* A user's connections past the descriptor budget are refused, root's
 * status and programs are still served, and the daemon stays far from its
 * limit. */
static void test_the_descriptor_budget_holds(void **state)
{
    const char *dir = *state;
    struct rlimit limit;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &limit), 0);
    const gint64 budget = 300;
    char *lines = g_strdup_printf(FAST_PROVIDERS "unregistered_timeout_ms = 3600000\n"
                                                 "max_connections_per_uid = 1000000\n"
                                                 "fd_reserve = %" G_GINT64_FORMAT "\n",
                                  (gint64)limit.rlim_max - budget);
    struct test_daemon d;
    holder_daemon_start(&d, dir, lines);
    g_free(lines);
    struct flood flood;
    flood_start(&flood, d.socket_path, NOBODY, 1, 1000);

    run_dd_as(&d, 0, 100);

    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *clients = object_at(status, "clients");
    assert_int_equal(test_daemon_json_int(clients, "fd_budget", NULL), budget);
    gint64 connections = test_daemon_json_int(clients, "connections", NULL);
    assert_true(connections < budget);
    assert_int_equal(refused(status, "fd_budget"), 1000 - (connections - 1));
    assert_int_equal(refused(status, "uid_connections"), 0);
    json_node_unref(status);
    flood_stop(&flood);
    char *log = test_daemon_stop(&d);
    test_assert_contains(log, "over its budget of 300");
    guint n = count_lines(log, "refused");
    if (n < 1 || n > 3)
        fail_msg("%u log lines about the refusals, not 1 to 3:\n%s", n, log);
    g_free(log);
}

/* A registration into a run whose processes are another user's is kept
 * apart, in a run of its own user's, and told so; root too; a user joins
 * its own runs; a user's processes are bounded by max_processes_per_uid. */
static void test_a_run_is_joined_only_by_its_own_user(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, FAST_PROVIDERS "max_processes_per_uid = 2\n");
    struct holder owner, fake, root, own_run, second, third;
    holder_start(&owner, d.socket_path, NOBODY, "run-7");
    assert_int_equal(owner.answer.type, VIGIL_LOCAL_REGISTERED);
    holder_start(&fake, d.socket_path, OTHER_UID, "run-7");
    assert_int_equal(fake.answer.type, VIGIL_LOCAL_REGISTERED_APART);
    assert_string_equal(fake.answer.run_key, "run-7@uid1");
    test_assert_contains(fake.answer.reason,
                         "run run-7 is not uid 1's: its processes are uid 65534's");
    holder_start(&root, d.socket_path, 0, "run-7");
    assert_int_equal(root.answer.type, VIGIL_LOCAL_REGISTERED_APART);
    assert_string_equal(root.answer.run_key, "run-7@uid0");
    holder_start(&own_run, d.socket_path, OTHER_UID, "run-8");
    assert_int_equal(own_run.answer.type, VIGIL_LOCAL_REGISTERED);
    holder_start(&second, d.socket_path, NOBODY, "run-7");
    assert_int_equal(second.answer.type, VIGIL_LOCAL_REGISTERED);
    holder_start(&third, d.socket_path, NOBODY, "run-10");
    assert_int_equal(third.answer.type, VIGIL_LOCAL_REFUSED);
    test_assert_contains(third.answer.reason,
                         "uid 65534 has 2 processes registered already ([daemon] "
                         "max_processes_per_uid)");

    JsonNode *status = test_daemon_status(&d, 0);
    assert_int_equal(refused(status, "uid_processes"), 1);
    JsonObject *root_object = json_node_get_object(status);
    assert_int_equal(test_daemon_json_int(root_object, "processes", "running", NULL), 5);
    assert_int_equal(test_daemon_json_int(root_object, "processes", "placed_apart_total", NULL), 2);
    assert_string_equal(
        json_object_get_string_member(test_daemon_process(status, fake.pid), "run_key"),
        "run-7@uid1");
    json_node_unref(status);
    struct holder *all[] = {&owner, &fake, &root, &own_run, &second, &third};
    for (size_t i = 0; i < G_N_ELEMENTS(all); i++)
        holder_release(all[i]);
    g_free(test_daemon_stop(&d));
}

/* A connection that says nothing is closed after the timeout; a
 * registered process that has been silent for longer stays. */
static void test_an_idle_unregistered_connection_is_closed(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, FAST_PROVIDERS "unregistered_timeout_ms = 100\n");
    struct holder silent;
    holder_start(&silent, d.socket_path, NOBODY, "run-1");
    assert_int_equal(silent.answer.type, VIGIL_LOCAL_REGISTERED);
    int idle = client_connect(d.socket_path);
    assert_true(idle >= 0);
    /* The wait is for the daemon's close; the bound is only a safety net. */
    struct pollfd p = {.fd = idle, .events = POLLIN};
    assert_int_equal(poll(&p, 1, SAFETY_MS), 1);
    char byte;
    assert_int_equal(recv(idle, &byte, 1, 0), 0);
    close(idle);

    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *clients = object_at(status, "clients");
    assert_int_equal(test_daemon_json_int(clients, "closed_idle", NULL), 1);
    /* The silent process's and the status request's. */
    assert_int_equal(test_daemon_json_int(clients, "connections", NULL), 2);
    JsonObject *process = test_daemon_process(status, silent.pid);
    assert_non_null(process);
    assert_string_equal(json_object_get_string_member(process, "state"), "running");
    json_node_unref(status);

    /* A reload applies new limits; the status shows them. */
    char *changed = g_strdup_printf("[daemon]\nsocket = %s\n" FAST_PROVIDERS
                                    "unregistered_timeout_ms = 250\nmax_connections_per_uid = 7\n",
                                    d.socket_path);
    assert_true(g_file_set_contents(d.config_path, changed, -1, NULL));
    g_free(changed);
    assert_int_equal(kill(d.pid, SIGHUP), 0);
    status = test_daemon_status(&d, 0);
    clients = object_at(status, "clients");
    assert_int_equal(test_daemon_json_int(clients, "unregistered_timeout_ms", NULL), 250);
    assert_int_equal(test_daemon_json_int(clients, "max_connections_per_uid", NULL), 7);
    json_node_unref(status);
    holder_release(&silent);
    g_free(test_daemon_stop(&d));
}

/* ---- floods of bad messages --------------------------------------------- */

/* A message of the protocol's size whose header lacks the magic number. */
static const char garbage[32] = "GET / HTTP/1.0\r\n\r\n";

/* A child of `uid` opens `count` connections one after the other, each
 * sending one bad message: garbage, or every second one (`mixed`) a RANK
 * before any registration. With `wait_close` it waits on each for vigild
 * to close it; without, it closes at once and goes on. */
static void send_bad_messages(const char *socket_path, uid_t uid, int count, bool mixed,
                              bool wait_close)
{
    pid_t pid = fork_or_fail();
    if (pid == 0) {
        become(uid);
        const struct vigil_local_rank rank = {.rank = 0, .size = 1};
        for (int i = 0; i < count; i++) {
            int fd = client_connect(socket_path);
            if (fd < 0)
                _exit(80);
            bool sent =
                mixed && i % 2 == 1
                    ? vigil_local_send(fd, VIGIL_LOCAL_RANK, &rank, sizeof rank, -1, NULL)
                    : send(fd, garbage, sizeof garbage, MSG_NOSIGNAL) == (ssize_t)sizeof garbage;
            /* Without waiting, a connection refused at accept may be
             * closed already: that refusal counts as well. */
            if (!sent && wait_close)
                _exit(81);
            char buffer[512];
            struct pollfd p = {.fd = fd, .events = POLLIN};
            while (wait_close && poll(&p, 1, SAFETY_MS) == 1 &&
                   recv(fd, buffer, sizeof buffer, 0) > 0)
                ;
            close(fd);
        }
        _exit(0);
    }
    wait_exit(pid, 0);
}

/* The refusals of `kind` that the log counts for `uid`: a first line
 * ("refused a client of uid U (KIND): why") counts one, a later line
 * ("refused N more of uid U in S s (N1 KIND1, N2 KIND2); the last: why")
 * its figure for the kind. `lines` gets the lines about `uid`. */
static gint64 logged_refusals(const char *log, uid_t uid, const char *kind, guint *lines)
{
    char *of_uid = g_strdup_printf(" of uid %u ", (unsigned)uid);
    char *first = g_strdup_printf("refused a client of uid %u (%s)", (unsigned)uid, kind);
    char *more = g_strdup_printf("more of uid %u in ", (unsigned)uid);
    char *counted = g_strdup_printf(" %s", kind);
    gint64 n = 0;
    *lines = 0;
    char **all = g_strsplit(log, "\n", -1);
    for (char **line = all; *line != NULL; line++) {
        if (strstr(*line, of_uid) == NULL)
            continue;
        (*lines)++;
        if (strstr(*line, first) != NULL) {
            n++;
            continue;
        }
        const char *from = strstr(*line, more);
        const char *open = from != NULL ? strstr(from, " s (") : NULL;
        const char *close_at = open != NULL ? strstr(open, "); the last") : NULL;
        if (close_at == NULL)
            continue;
        char *counts = g_strndup(open + 4, (gsize)(close_at - open - 4));
        char **parts = g_strsplit(counts, ", ", -1);
        for (char **part = parts; *part != NULL; part++) {
            char *end;
            gint64 figure = g_ascii_strtoll(*part, &end, 10);
            if (strcmp(end, counted) == 0)
                n += figure;
        }
        g_strfreev(parts);
        g_free(counts);
    }
    g_strfreev(all);
    g_free(counted);
    g_free(more);
    g_free(first);
    g_free(of_uid);
    return n;
}

/* Lines a flood may cost the log at most: the first refusal, one line a
 * period ([daemon] refusal_log_interval_s, 60 s by default) with the
 * counts since, and one at the stop with what was left. */
static guint allowed_lines(gint64 started_us)
{
    gint64 elapsed_s = (g_get_monotonic_time() - started_us) / G_USEC_PER_SEC;
    return 2 + (guint)(elapsed_s / 60);
}

/* What a flood left: the status vigild answered after it (which covers
 * every connection made before it), vigild's log, and how many lines the
 * log may spend on it. */
struct bad_flood {
    JsonNode *status;
    char *log;
    guint allowed;
};

/* Starts vigild in `dir`, floods it as nobody (send_bad_messages with
 * `count`, `mixed` and `wait_close`), and stops it. */
static struct bad_flood run_bad_flood(const char *dir, int count, bool mixed, bool wait_close)
{
    struct test_daemon d;
    holder_daemon_start(&d, dir, FAST_PROVIDERS);
    gint64 started_us = g_get_monotonic_time();
    send_bad_messages(d.socket_path, NOBODY, count, mixed, wait_close);
    struct bad_flood f = {.status = test_daemon_status(&d, 0)};
    f.log = test_daemon_stop(&d);
    f.allowed = allowed_lines(started_us);
    return f;
}

/* The refusals of two kinds the flood's log counts for nobody, in `a` and
 * `b`; fails unless the log spent 1 to `allowed` lines on nobody. */
static void logged_by_kind(const struct bad_flood *f, const char *kind_a, gint64 *a,
                           const char *kind_b, gint64 *b)
{
    guint lines;
    *a = logged_refusals(f->log, NOBODY, kind_a, &lines);
    *b = logged_refusals(f->log, NOBODY, kind_b, &lines);
    if (lines < 1 || lines > f->allowed)
        fail_msg("%u log lines about uid 65534, not 1 to %u:\n%s", lines, f->allowed, f->log);
}

static void bad_flood_clear(struct bad_flood *f)
{
    json_node_unref(f->status);
    g_free(f->log);
}

#define BAD_MESSAGES 400

/* One user's malformed and out-of-turn messages, each on a connection of
 * its own: the log says so in a line or two for that user with the counts,
 * not a line per message, and the status counts them by kind. */
static void test_malformed_messages_are_logged_once_a_period(void **state)
{
    struct bad_flood f = run_bad_flood(*state, BAD_MESSAGES, true, true);
    guint about_flood = count_lines(f.log, "protocol's magic number") +
                        count_lines(f.log, "a rank before its registration");
    if (about_flood > f.allowed)
        fail_msg("%u log lines for %d bad messages, not %u at most", about_flood, BAD_MESSAGES,
                 f.allowed);
    gint64 malformed, out_of_turn;
    logged_by_kind(&f, "malformed", &malformed, "out_of_turn", &out_of_turn);
    assert_int_equal(malformed, BAD_MESSAGES / 2);
    assert_int_equal(out_of_turn, BAD_MESSAGES / 2);
    assert_int_equal(refused(f.status, "malformed"), BAD_MESSAGES / 2);
    assert_int_equal(refused(f.status, "out_of_turn"), BAD_MESSAGES / 2);
    bad_flood_clear(&f);
}

#define GARBAGE_CONNECTIONS 3000

/* One user's connections that send garbage and close without waiting, as
 * fast as it can: every one is counted (malformed, or refused at accept
 * over the user's connections), and the log holds a line or two. */
static void test_garbage_connections_are_logged_once_a_period(void **state)
{
    struct bad_flood f = run_bad_flood(*state, GARBAGE_CONNECTIONS, false, false);
    guint about_flood = count_lines(f.log, "protocol's magic number");
    if (about_flood > f.allowed)
        fail_msg("%u log lines for %d garbage connections, not %u at most", about_flood,
                 GARBAGE_CONNECTIONS, f.allowed);
    gint64 malformed, over;
    logged_by_kind(&f, "malformed", &malformed, "uid_connections", &over);
    assert_int_equal(refused(f.status, "malformed") + refused(f.status, "uid_connections"),
                     GARBAGE_CONNECTIONS);
    assert_int_equal(malformed, refused(f.status, "malformed"));
    assert_int_equal(over, refused(f.status, "uid_connections"));
    assert_int_equal(refused(f.status, "fd_budget"), 0);
    bad_flood_clear(&f);
}

/* ---- status loops -------------------------------------------------------- */

struct status_loop {
    int answered;
    int refused; /* 1 when the loop ended on a refusal */
    char why[512];
};

/* As `uid`, status requests one after the other, each on a connection of
 * its own as `vigil status` makes them, until one is refused or `max` were
 * answered. */
static struct status_loop run_status_loop(const char *socket_path, uid_t uid, int max)
{
    int result;
    pid_t pid = fork_as_writer(uid, &result);
    if (pid == 0) {
        struct status_loop r = {0};
        static char buffer[VIGIL_LOCAL_MAX_BYTES];
        const struct vigil_local_status_request request = {0};
        while (r.answered < max && !r.refused) {
            int fd = client_connect(socket_path);
            enum vigil_local_type type;
            int json_fd = -1;
            ssize_t n = -1;
            if (fd < 0 ||
                !vigil_local_send(fd, VIGIL_LOCAL_STATUS_REQUEST, &request, sizeof request, -1,
                                  NULL) ||
                (n = vigil_local_receive(fd, buffer, &type, &json_fd, NULL)) < 0)
                _exit(83);
            if (json_fd >= 0)
                close(json_fd);
            close(fd);
            if (type == VIGIL_LOCAL_STATUS) {
                r.answered++;
            } else if (type == VIGIL_LOCAL_REFUSED) {
                r.refused = 1;
                memcpy(r.why, buffer, MIN((size_t)n, sizeof r.why - 1));
            } else {
                _exit(84);
            }
        }
        if (write(result, &r, sizeof r) != (ssize_t)sizeof r)
            _exit(71);
        _exit(0);
    }
    struct status_loop r;
    assert_int_equal(read(result, &r, sizeof r), (ssize_t)sizeof r);
    close(result);
    wait_exit(pid, 0);
    return r;
}

#define STATUS_BURST     10 /* [daemon] status_requests_burst's default */
#define STATUS_PER_S     2  /* [daemon] status_requests_per_s's */
#define STATUS_LOOP_MAX  2000
#define ROOT_STATUS_LOOP 100

/* A user's status loop is answered for the burst, then refused with the
 * reason and counted; root's is answered every time. */
static void test_a_users_status_loop_is_refused_past_the_burst(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, FAST_PROVIDERS);
    gint64 started_us = g_get_monotonic_time();
    struct status_loop user = run_status_loop(d.socket_path, NOBODY, STATUS_LOOP_MAX);
    gint64 elapsed_s = (g_get_monotonic_time() - started_us) / G_USEC_PER_SEC + 1;
    if (!user.refused)
        fail_msg("%d of %d status requests of uid 65534 answered, none refused", user.answered,
                 STATUS_LOOP_MAX);
    /* The bucket starts full and refills at the rate while the loop runs. */
    assert_true(user.answered >= STATUS_BURST);
    if (user.answered > STATUS_BURST + STATUS_PER_S * elapsed_s)
        fail_msg("%d status requests answered in %" G_GINT64_FORMAT " s, over %d + %d a second",
                 user.answered, elapsed_s, STATUS_BURST, STATUS_PER_S);
    test_assert_contains(user.why, "uid 65534 asks for the status more than 2 times a second");
    test_assert_contains(user.why, "[daemon] status_requests_per_s");

    struct status_loop root = run_status_loop(d.socket_path, 0, ROOT_STATUS_LOOP);
    assert_int_equal(root.refused, 0);
    assert_int_equal(root.answered, ROOT_STATUS_LOOP);

    JsonNode *status = test_daemon_status(&d, 0);
    assert_int_equal(refused(status, "status_rate"), 1);
    json_node_unref(status);
    g_free(test_daemon_stop(&d));
}

#define STATUS_PACE_MS 20

/* A connection that only asks for the status, again and again (root's, so
 * that no rate refuses it), is closed by the unregistered timeout: status
 * requests are no progress that would restart it. */
static void test_a_status_only_connection_is_closed_when_idle(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    test_daemon_start(&d, dir, FAST_PROVIDERS "unregistered_timeout_ms = 300\n", NULL);
    int fd = client_connect(d.socket_path);
    assert_true(fd >= 0);
    static char buffer[VIGIL_LOCAL_MAX_BYTES];
    const struct vigil_local_status_request request = {0};
    int answered = 0;
    gboolean closed = FALSE;
    gint64 safety_us = g_get_monotonic_time() + (gint64)SAFETY_MS * 1000;
    while (!closed && g_get_monotonic_time() < safety_us) {
        enum vigil_local_type type;
        int json_fd = -1;
        if (!vigil_local_send(fd, VIGIL_LOCAL_STATUS_REQUEST, &request, sizeof request, -1, NULL) ||
            vigil_local_receive(fd, buffer, &type, &json_fd, NULL) < 0) {
            closed = TRUE;
            break;
        }
        assert_int_equal(type, VIGIL_LOCAL_STATUS);
        close(json_fd);
        answered++;
        /* Paces the requests; the close ends the wait at once. */
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, STATUS_PACE_MS) == 1) {
            char byte;
            closed = recv(fd, &byte, 1, MSG_DONTWAIT) == 0;
            assert_true(closed);
        }
    }
    close(fd);
    if (!closed)
        fail_msg("a connection sending only status requests was still open after %d s and %d "
                 "answers, with unregistered_timeout_ms = 300",
                 SAFETY_MS / 1000, answered);
    assert_true(answered >= 1);
    JsonNode *status = test_daemon_status(&d, 0);
    assert_int_equal(test_daemon_json_int(object_at(status, "clients"), "closed_idle", NULL), 1);
    json_node_unref(status);
    g_free(test_daemon_stop(&d));
}

/* With an uplink the sink is off unless asked for; the spool is private. */
static void test_the_sink_is_off_beside_an_uplink(void **state)
{
    const char *dir = *state;
    char *more =
        g_strdup_printf("[uplink]\nendpoint = ipc://%s/txd.sock\nspool_dir = %s/spool\n", dir, dir);
    struct test_daemon d;
    test_daemon_start(&d, dir, FAST_PROVIDERS, more);
    g_free(more);
    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *capture = object_at(status, "capture");
    assert_true(json_node_is_null(json_object_get_member(capture, "sink")));
    assert_string_equal(json_object_get_string_member(capture, "sink_enabled"), "auto");
    json_node_unref(status);
    assert_false(g_file_test(d.capture_path, G_FILE_TEST_EXISTS));
    char *spool = g_build_filename(dir, "spool", NULL);
    struct stat st;
    assert_int_equal(stat(spool, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    g_free(spool);
    g_free(test_daemon_stop(&d));
}

/* A user who fills vigild's listen backlog (here while vigild is stopped,
 * which makes it full for sure; a flood of connections keeps it full too)
 * must not leave root's programs unmonitored: the preload library gives a
 * connection 5 ms, so root must find room on the sockets it tries. */
static void test_root_connects_while_a_user_fills_the_backlog(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, "providers = \n");
    assert_int_equal(kill(d.pid, SIGSTOP), 0);

    int filled[2], release[2];
    pipes_open(filled, release);
    pid_t filler = fork_with_pipes(filled, release);
    if (filler == 0) {
        struct rlimit most;
        getrlimit(RLIMIT_NOFILE, &most);
        most.rlim_cur = most.rlim_max;
        setrlimit(RLIMIT_NOFILE, &most);
        become(NOBODY);
        /* Root's socket is not the user's. */
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        g_snprintf(addr.sun_path, sizeof addr.sun_path, "%s%s", d.socket_path,
                   VIGIL_ROOT_SOCKET_SUFFIX);
        int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
        if (probe < 0 || connect(probe, (struct sockaddr *)&addr, sizeof addr) == 0 ||
            errno != EACCES)
            _exit(72);
        close(probe);
        g_strlcpy(addr.sun_path, d.socket_path, sizeof addr.sun_path);
        int pending = 0;
        for (;;) {
            int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
            if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0)
                break;
            pending++;
        }
        if (write(filled[1], &pending, sizeof pending) != (ssize_t)sizeof pending)
            _exit(71);
        exit_when_released(release[0]);
    }
    pipes_keep_test_ends(filled, release);
    int pending = 0;
    assert_int_equal(read(filled[0], &pending, sizeof pending), (ssize_t)sizeof pending);
    close(filled[0]);
    assert_true(pending > 100);

    /* Root connects as the preload library would, without waiting. */
    char paths[2][VIGIL_SOCKET_PATH_MAX];
    int n = vigil_local_daemon_sockets(d.socket_path, 0, paths);
    assert_true(n > 0);
    int fd = -1;
    for (int i = 0; i < n && fd < 0; i++) {
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        g_strlcpy(addr.sun_path, paths[i], sizeof addr.sun_path);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        assert_true(fd >= 0);
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0)
        fail_msg("root finds no room on vigild's sockets while nobody holds %d connections "
                 "pending: its program would run unmonitored",
                 pending);
    assert_int_equal(kill(d.pid, SIGCONT), 0);
    pid_t root = fork_or_fail();
    if (root == 0) {
        int flags = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
        client_register(fd, 64, true);
        _exit(0);
    }
    close(fd);
    wait_exit(root, 0);
    close(release[1]);
    wait_exit(filler, 0);
    g_free(test_daemon_stop(&d));
}

TEST_MAIN(TEST_WITH_DIR(test_idle_connections_of_one_user_do_not_stop_another),
          TEST_WITH_DIR(test_the_descriptor_budget_holds),
          TEST_WITH_DIR(test_a_run_is_joined_only_by_its_own_user),
          TEST_WITH_DIR(test_an_idle_unregistered_connection_is_closed),
          TEST_WITH_DIR(test_malformed_messages_are_logged_once_a_period),
          TEST_WITH_DIR(test_garbage_connections_are_logged_once_a_period),
          TEST_WITH_DIR(test_a_users_status_loop_is_refused_past_the_burst),
          TEST_WITH_DIR(test_a_status_only_connection_is_closed_when_idle),
          TEST_WITH_DIR(test_the_sink_is_off_beside_an_uplink),
          TEST_WITH_DIR(test_root_connects_while_a_user_fills_the_backlog))
