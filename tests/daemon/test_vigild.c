/* vigild with real clients: many processes registered at once, each
 * record drained; a process killed with SIGKILL loses nothing; clients
 * that send garbage or a corrupt ring are logged and dropped while the
 * others are served; SIGHUP with a bad and a good configuration. The
 * clients are forked children speaking the protocol (clients.c); the
 * preload library's side is tested in tests/integration. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "clients.h"
#include "holder.h"
#include "test_daemon.h"
#include "test_local.h"
#include "test_report.h"
#include "test_support.h"
#include "vigil/local_protocol.h"
#include "test_main.h"

/* Only the test's own providers: none reads anything slow or absent. */
#define FAST_PROVIDERS "providers = procstat;process\n"

static const char *member_string(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    return n != NULL && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_string(n) : NULL;
}

/* The process of `pid` has ended with exactly `activities` drained and
 * no position skipped. */
static void assert_drained(JsonNode *status, pid_t pid, gint64 activities)
{
    JsonObject *p = test_daemon_process(status, pid);
    if (p == NULL)
        fail_msg("pid %d is not in the daemon's status", (int)pid);
    assert_string_equal(member_string(p, "state"), "ended");
    assert_int_equal(json_object_get_int_member(p, "activities"), activities);
    assert_int_equal(json_object_get_int_member(p, "corrupt"), 0);
    assert_int_equal(json_object_get_int_member(p, "torn"), 0);
    assert_int_equal(json_object_get_int_member(p, "seq_gaps"), 0);
    assert_int_equal(json_object_get_int_member(p, "dropped"), 0);
    assert_string_equal(member_string(p, "program"), "test-client");
    assert_string_equal(member_string(p, "job"), "job-7");
}

#define MANY         200
#define RECORDS_EACH 1000

static void test_many_short_lived_processes_all_drained(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, NULL);
    pid_t pids[MANY];
    /* All of them started before any is waited for: they register, write
     * and exit at once, most before the daemon has read a word. */
    for (int i = 0; i < MANY; i++) {
        pids[i] = fork_or_fail();
        if (pids[i] == 0) {
            struct vigil_ring *ring = client_start(d.socket_path, 4096, false);
            client_push(ring, RECORDS_EACH);
            _exit(0);
        }
    }
    for (int i = 0; i < MANY; i++)
        wait_exit(pids[i], 0);
    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *root = json_node_get_object(status);
    assert_int_equal(test_daemon_json_int(root, "processes", "registered_total", NULL), MANY);
    assert_int_equal(test_daemon_json_int(root, "processes", "ended_total", NULL), MANY);
    assert_int_equal(test_daemon_json_int(root, "processes", "running", NULL), 0);
    for (int i = 0; i < MANY; i++)
        assert_drained(status, pids[i], RECORDS_EACH);
    json_node_unref(status);
    /* Exiting without reading REGISTERED resets the connection: that is
     * an ordinary end, not a client to warn about. */
    char *log = test_daemon_stop(&d);
    if (strstr(log, "warning") != NULL)
        fail_msg("vigild warned about well-behaved clients:\n%s", log);
    g_free(log);
}

#define AT_ONCE 1000

static void test_a_thousand_processes_served_at_once(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, NULL);
    int registered[2], release[2];
    pipes_open(registered, release);
    pid_t *pids = g_new(pid_t, AT_ONCE);
    for (int i = 0; i < AT_ONCE; i++) {
        pids[i] = fork_with_pipes(registered, release);
        if (pids[i] == 0) {
            struct vigil_ring *ring = client_start(d.socket_path, VIGIL_RING_MIN_SLOTS, true);
            client_push(ring, 10);
            if (write(registered[1], "r", 1) != 1)
                _exit(93);
            char byte;
            (void)!read(release[0], &byte, 1); /* returns at EOF: released */
            _exit(0);
        }
    }
    pipes_keep_test_ends(registered, release);
    for (int i = 0; i < AT_ONCE; i++) {
        char byte;
        assert_int_equal(read(registered[0], &byte, 1), 1);
    }
    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *root = json_node_get_object(status);
    assert_int_equal(test_daemon_json_int(root, "processes", "running", NULL), AT_ONCE);
    assert_int_equal(test_daemon_json_int(root, "processes", "refused_total", NULL), 0);
    json_node_unref(status);

    close(release[1]);
    for (int i = 0; i < AT_ONCE; i++)
        wait_exit(pids[i], 0);
    status = test_daemon_status(&d, 0);
    root = json_node_get_object(status);
    assert_int_equal(test_daemon_json_int(root, "processes", "ended_total", NULL), AT_ONCE);
    for (int i = 0; i < AT_ONCE; i++)
        assert_drained(status, pids[i], 10);
    json_node_unref(status);
    close(registered[0]);
    g_free(pids);
    g_free(test_daemon_stop(&d));
}

static void test_sigkill_loses_nothing(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, NULL);
    int ready;
    pid_t pid = fork_as_writer(0, &ready);
    if (pid == 0) {
        struct vigil_ring *ring = client_start(d.socket_path, 8192, true);
        client_push(ring, 5000);
        if (write(ready, "w", 1) != 1)
            _exit(93);
        for (;;)
            pause();
    }
    char byte;
    assert_int_equal(read(ready, &byte, 1), 1);
    close(ready);
    assert_int_equal(kill(pid, SIGKILL), 0);
    int wstatus;
    assert_int_equal(waitpid(pid, &wstatus, 0), pid);
    assert_true(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL);

    JsonNode *status = test_daemon_status(&d, pid);
    JsonObject *root = json_node_get_object(status);
    assert_true(json_object_get_boolean_member(json_object_get_object_member(root, "processes"),
                                               "finished_pid_found"));
    assert_drained(status, pid, 5000);
    json_node_unref(status);
    g_free(test_daemon_stop(&d));
}

/* REGISTER of `ring` on `fd` as clients.c's, with the start and flags
 * given; waits for REGISTERED when `wait_answer`. In a child: _exit(90)
 * when anything fails. */
static void register_ring(int fd, struct vigil_ring *ring, uint64_t start_ns, uint32_t flags,
                          bool wait_answer)
{
    static char buffer[VIGIL_LOCAL_MAX_BYTES];
    struct vigil_error err;
    struct vigil_local_register fixed =
        test_local_register_monotonic(vigil_ring_slot_count(ring), start_ns);
    fixed.flags = flags;
    char *argv[] = {"test-client", NULL};
    size_t length =
        vigil_local_encode_register(buffer, &fixed, "test-client", "/", "job-7", "run-7", 1, argv);
    if (!vigil_local_send(fd, VIGIL_LOCAL_REGISTER, buffer, length, vigil_ring_fd(ring), &err))
        _exit(90);
    enum vigil_local_type type;
    if (wait_answer &&
        (vigil_local_receive(fd, buffer, &type, NULL, &err) < 0 || type != VIGIL_LOCAL_REGISTERED))
        _exit(90);
}

/* A process whose library reattaches (as after a restart of vigild) and
 * exits before vigild reads the REATTACH, as a program's last words at its
 * exit are: it is the process vigild knows, found by the start it was
 * registered under, although its /proc entry, which vigild checks a start
 * against, is gone by then. vigild is stopped (SIGSTOP) while the child
 * reattaches and exits, so that the order is certain. Taken for a new
 * process, it had been registered a second time on the same ring, which
 * two readers then read: under load, the restart tests' writer lost the
 * file of thousands of its writes and vigild skipped thousands of ring
 * positions as corrupt. The same ring registered as another process is
 * refused. */
static void test_a_reattach_read_after_its_process_ended_is_that_process(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, NULL);
    int ready[2], go[2];
    pipes_open(ready, go);
    pid_t pid = fork_with_pipes(ready, go);
    if (pid == 0) {
        struct vigil_error err;
        struct vigil_ring *ring = vigil_ring_create(8192, VIGIL_TICKS_MONOTONIC_NS, &err);
        int fd = client_connect(d.socket_path);
        if (ring == NULL || fd < 0)
            _exit(92);
        uint64_t start_ns = vigil_clock_monotonic_ns();
        register_ring(fd, ring, start_ns, 0, true);
        client_push(ring, 100);
        /* The same ring registered anew (not a reattach: another start)
         * is refused: a second reader would corrupt the first's reading. */
        int twice = client_connect(d.socket_path);
        if (twice < 0)
            _exit(92);
        register_ring(twice, ring, start_ns + 1, 0, false);
        static char answer[VIGIL_LOCAL_MAX_BYTES];
        enum vigil_local_type type;
        ssize_t n = vigil_local_receive(twice, answer, &type, NULL, &err);
        if (n < 0 || type != VIGIL_LOCAL_REFUSED ||
            strstr(answer, "its ring is read already as process") == NULL)
            _exit(94);
        close(twice);
        char byte;
        if (write(ready[1], "r", 1) != 1 || read(go[0], &byte, 1) != 1)
            _exit(93);
        int again = client_connect(d.socket_path);
        if (again < 0)
            _exit(92);
        register_ring(again, ring, start_ns, VIGIL_LOCAL_REATTACH, false);
        client_push(ring, 50);
        _exit(0);
    }
    pipes_keep_test_ends(ready, go);
    char byte;
    assert_int_equal(read(ready[0], &byte, 1), 1);
    assert_int_equal(kill(d.pid, SIGSTOP), 0);
    assert_int_equal(write(go[1], "g", 1), 1);
    wait_exit(pid, 0);
    assert_int_equal(kill(d.pid, SIGCONT), 0);
    close(ready[0]);
    close(go[1]);

    JsonNode *status = test_daemon_status(&d, pid);
    JsonObject *root = json_node_get_object(status);
    assert_int_equal(test_daemon_json_int(root, "processes", "registered_total", NULL), 1);
    assert_drained(status, pid, 150);
    json_node_unref(status);
    g_free(test_daemon_stop(&d));
}

/* A raw message: `bytes` as they are. */
static void send_raw(int fd, const void *bytes, size_t length)
{
    assert_int_equal(send(fd, bytes, length, MSG_NOSIGNAL), (ssize_t)length);
}

/* Waits for the daemon to close `fd`, after an optional REFUSED. Returns
 * whether it refused. */
static bool wait_disconnected(int fd)
{
    char buffer[VIGIL_LOCAL_MAX_BYTES];
    enum vigil_local_type type;
    struct vigil_error err;
    bool refused = false;
    for (;;) {
        ssize_t n = vigil_local_receive(fd, buffer, &type, NULL, &err);
        if (n < 0)
            break;
        refused |= type == VIGIL_LOCAL_REFUSED;
    }
    close(fd);
    return refused;
}

static void test_hostile_clients_are_dropped_and_others_served(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, NULL);

    /* Garbage bytes. */
    int fd = client_connect(d.socket_path);
    assert_true(fd >= 0);
    char garbage[100];
    for (size_t i = 0; i < sizeof garbage; i++)
        garbage[i] = (char)(i * 37 + 11);
    send_raw(fd, garbage, sizeof garbage);
    assert_false(wait_disconnected(fd));

    /* A well-formed message only the daemon sends. */
    fd = client_connect(d.socket_path);
    struct vigil_local_summary fake = {0};
    struct vigil_error err;
    assert_true(vigil_local_send(fd, VIGIL_LOCAL_SUMMARY, &fake, sizeof fake, -1, &err));
    assert_false(wait_disconnected(fd));

    /* A registration without a ring, then with a file that is no ring. */
    char buffer[VIGIL_LOCAL_MAX_BYTES];
    struct vigil_local_register fixed = {.ring_slots = 64, .tick_source = 1, .mpi_rank = -1};
    size_t length = vigil_local_encode_register(buffer, &fixed, "liar", "/", "", "run-1", 0, NULL);
    fd = client_connect(d.socket_path);
    assert_true(vigil_local_send(fd, VIGIL_LOCAL_REGISTER, buffer, length, -1, &err));
    assert_true(wait_disconnected(fd));
    int not_a_ring = memfd_create("not-a-ring", MFD_CLOEXEC);
    assert_int_equal(ftruncate(not_a_ring, 1 << 16), 0);
    fd = client_connect(d.socket_path);
    assert_true(vigil_local_send(fd, VIGIL_LOCAL_REGISTER, buffer, length, not_a_ring, &err));
    assert_true(wait_disconnected(fd));
    close(not_a_ring);

    /* A ring corrupted after its registration. */
    pid_t corrupter = fork_or_fail();
    if (corrupter == 0) {
        struct vigil_ring *ring = client_start(d.socket_path, 64, true);
        client_push(ring, 5);
        void *map = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, vigil_ring_fd(ring), 0);
        if (map == MAP_FAILED)
            _exit(94);
        uint64_t far_ahead = UINT64_C(1) << 60;
        memcpy((char *)map + 64, &far_ahead, sizeof far_ahead); /* the head */
        _exit(0);
    }
    wait_exit(corrupter, 0);

    /* A path that is not UTF-8 (a Latin-1 file name) must not make the
     * status's JSON invalid for everyone: test_daemon_status parses it. */
    pid_t latin1 = fork_or_fail();
    if (latin1 == 0) {
        int lfd = client_connect(d.socket_path);
        struct vigil_ring *ring = vigil_ring_create(64, VIGIL_TICKS_MONOTONIC_NS, &err);
        struct vigil_local_register lfixed = {
            .ring_slots = 64, .tick_source = VIGIL_TICKS_MONOTONIC_NS, .mpi_rank = -1};
        char *largv[] = {"caf\xe9", NULL};
        size_t llength = vigil_local_encode_register(buffer, &lfixed, "caf\xe9", "/tmp/\xff", "",
                                                     "run-2", 1, largv);
        enum vigil_local_type type;
        if (ring == NULL ||
            !vigil_local_send(lfd, VIGIL_LOCAL_REGISTER, buffer, llength, vigil_ring_fd(ring),
                              &err) ||
            vigil_local_receive(lfd, buffer, &type, NULL, &err) < 0 ||
            type != VIGIL_LOCAL_REGISTERED)
            _exit(90);
        _exit(0);
    }
    wait_exit(latin1, 0);

    /* Meanwhile, an honest process is served as if nothing happened. */
    pid_t honest = run_client(d.socket_path, 256, 100);

    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *root = json_node_get_object(status);
    assert_drained(status, honest, 100);
    JsonObject *bad = test_daemon_process(status, corrupter);
    assert_non_null(bad);
    assert_string_equal(member_string(bad, "state"), "dropped");
    test_assert_contains(member_string(bad, "dropped_reason"), "head");
    assert_int_equal(test_daemon_json_int(root, "processes", "dropped_total", NULL), 1);
    JsonObject *latin1_process = test_daemon_process(status, latin1);
    assert_non_null(latin1_process);
    assert_string_equal(member_string(latin1_process, "program"), "caf\xef\xbf\xbd");
    assert_int_equal(test_daemon_json_int(root, "processes", "refused_total", NULL), 2);
    assert_int_equal(test_daemon_json_int(root, "clients", "refused", "malformed", NULL), 3);
    assert_int_equal(test_daemon_json_int(root, "clients", "refused", "out_of_turn", NULL), 1);
    json_node_unref(status);

    /* The first with its reason; the rest, one user's, in one line with
     * the counts by kind and the last reason (refusal_log.c). */
    char *log = test_daemon_stop(&d);
    test_assert_contains(log, "refused a client of uid 0 (malformed): client pid ");
    test_assert_contains(log, "without the protocol's magic number (100 bytes); disconnected");
    test_assert_contains(log, "refused 3 more of uid 0 in ");
    test_assert_contains(log, " s (2 malformed, 1 out_of_turn); the last: client pid ");
    test_assert_contains(log, "its ring is refused");
    test_assert_contains(log, "dropped, its ring is corrupt");
    g_free(log);
}

/* Reloads `d` with its configuration `original` and `more` after it;
 * the status once the reload is done (a status request takes pending
 * signals first). json_node_unref it. */
static JsonNode *reload_with(struct test_daemon *d, const char *original, const char *more)
{
    char *text = g_strconcat(original, more, NULL);
    assert_true(g_file_set_contents(d->config_path, text, -1, NULL));
    g_free(text);
    assert_int_equal(kill(d->pid, SIGHUP), 0);
    return test_daemon_status(d, 0);
}

static void test_reload_keeps_serving_and_refuses_a_bad_config(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, NULL);
    /* A process registered before the reloads is still drained after. */
    int go;
    pid_t pid = fork_as_reader(0, &go);
    if (pid == 0) {
        struct vigil_ring *ring = client_start(d.socket_path, 256, true);
        client_push(ring, 7);
        char byte;
        (void)!read(go, &byte, 1);
        client_push(ring, 8);
        _exit(0);
    }

    char *original = test_read_file(d.config_path);
    JsonNode *status = reload_with(&d, original, "[daemon]\ntick_mss = 5\n");
    JsonObject *root = json_node_get_object(status);
    assert_int_equal(test_daemon_json_int(root, "daemon", "reload_failures", NULL), 1);
    assert_int_equal(test_daemon_json_int(root, "daemon", "reloads", NULL), 0);
    assert_int_equal(test_daemon_json_int(root, "daemon", "tick_ms", NULL), 100);
    json_node_unref(status);

    status = reload_with(&d, original, "[daemon]\ntick_ms = 50\nrollup_ms = 1000\n");
    root = json_node_get_object(status);
    assert_int_equal(test_daemon_json_int(root, "daemon", "reloads", NULL), 1);
    assert_int_equal(test_daemon_json_int(root, "daemon", "tick_ms", NULL), 50);
    /* The process registered before both reloads is still served. */
    JsonObject *p = test_daemon_process(status, pid);
    assert_non_null(p);
    assert_string_equal(member_string(p, "state"), "running");
    json_node_unref(status);
    assert_int_equal(write(go, "g", 1), 1);
    close(go);
    wait_exit(pid, 0);
    status = test_daemon_status(&d, 0);
    JsonObject *ended = test_daemon_process(status, pid);
    assert_string_equal(member_string(ended, "state"), "ended");
    assert_int_equal(json_object_get_int_member(ended, "activities"), 15);
    json_node_unref(status);

    char *log = test_daemon_stop(&d);
    test_assert_contains(log, "[daemon] tick_mss: unknown key; did you mean 'tick_ms'?");
    test_assert_contains(log, "the running configuration stays");
    test_assert_contains(log, "reloaded ");
    g_free(log);
    g_free(original);
}

static void test_a_second_daemon_does_not_take_the_socket(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, NULL);
    const char *argv[] = {test_env_or_fail("VIGILD"), "--foreground", "--config", d.config_path,
                          NULL};
    char **env = test_clean_environment(NULL);
    struct test_run run = test_run_program(NULL, argv, env);
    g_strfreev(env);
    test_assert_status(&run, 1, "a second vigild");
    test_assert_contains(run.err, "another vigild is serving");
    test_run_clear(&run);
    /* The first one still serves. */
    JsonNode *status = test_daemon_status(&d, 0);
    json_node_unref(status);
    g_free(test_daemon_stop(&d));
}

static void test_bad_config_is_refused_at_start(void **state)
{
    char *path = g_build_filename(*state, "bad.conf", NULL);
    assert_true(g_file_set_contents(path, "[daemon]\ntick_ms = 30\nrollup_ms = 1000\n", -1, NULL));
    const char *argv[] = {test_env_or_fail("VIGILD"), "--config", path, NULL};
    char **env = test_clean_environment(NULL);
    struct test_run run = test_run_program(NULL, argv, env);
    test_assert_status(&run, 1, "vigild with a bad config");
    test_assert_contains(run.err, "[daemon] rollup_ms = 1000 is not a multiple of tick_ms = 30");
    test_run_clear(&run);
    const char *missing[] = {test_env_or_fail("VIGILD"), "--config", "/nonexistent/vigil.conf",
                             NULL};
    run = test_run_program(NULL, missing, env);
    test_assert_status(&run, 1, "vigild without its config");
    test_assert_contains(run.err, "/nonexistent/vigil.conf");
    test_run_clear(&run);
    /* A state folder that is a link (someone could have planted one where
     * vigild looks for the processes to take back): refused, named. */
    char *target = g_build_filename(*state, "elsewhere", NULL);
    char *link = g_build_filename(*state, "state", NULL);
    assert_int_equal(g_mkdir(target, 0700), 0);
    assert_int_equal(symlink(target, link), 0);
    char *socket_path = g_build_filename(*state, "linked.sock", NULL);
    char *config =
        g_strdup_printf("[daemon]\nsocket = %s\nstate_dir = %s\nproviders =\n", socket_path, link);
    assert_true(g_file_set_contents(path, config, -1, NULL));
    run = test_run_program(NULL, argv, env);
    test_assert_status(&run, 1, "vigild with a linked state folder");
    test_assert_contains(run.err, "is not a folder of vigild's own user");
    test_run_clear(&run);
    g_free(config);
    g_free(socket_path);
    g_free(link);
    g_free(target);
    g_strfreev(env);
    g_free(path);
}

/* Without --config, vigild and vigil-txd read $VIGIL_CONFIG, as every
 * vigil program does: settings have one order (command line, environment,
 * file, default). A bad file there is refused by its name. */
static void test_daemons_read_vigil_config(void **state)
{
    char *path = g_build_filename(*state, "from-env.conf", NULL);
    assert_true(g_file_set_contents(path, "[daemon]\ntick_ms = 30\nrollup_ms = 1000\n", -1, NULL));
    char *var = g_strdup_printf("VIGIL_CONFIG=%s", path);
    const char *vars[] = {var, NULL};
    char **env = test_clean_environment(vars);
    const char *vigild_argv[] = {test_env_or_fail("VIGILD"), NULL};
    test_daemon_assert_refused(NULL, vigild_argv, env,
                               "vigild with $VIGIL_CONFIG naming a bad file",
                               "[daemon] rollup_ms = 1000 is not a multiple of tick_ms = 30");
    assert_true(g_file_set_contents(path, "[txd]\nbind = nowhere\n", -1, NULL));
    const char *txd_argv[] = {test_env_or_fail("VIGIL_TXD"), NULL};
    test_daemon_assert_refused(NULL, txd_argv, env,
                               "vigil-txd with $VIGIL_CONFIG naming a bad file",
                               "[txd] bind = nowhere");
    g_strfreev(env);
    g_free(var);
    g_free(path);
}

static void test_status_without_a_daemon(void **state)
{
    char *socket_path = g_build_filename(*state, "nobody.sock", NULL);
    struct test_run run = test_daemon_status_text(socket_path);
    test_assert_status(&run, 1, "vigil status without a daemon");
    test_assert_contains(run.err, "no vigild answers on ");
    test_assert_contains(run.err, "No such file or directory");
    test_run_clear(&run);
    g_free(socket_path);
}

static void test_status_text_shows_providers_and_processes(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, "providers = procstat;process;energy;nonexistent\n",
                      "[provider.energy]\nsources = estimate\n");
    run_client(d.socket_path, 64, 3);
    char *capture = g_strdup_printf("\ncapture: anomalies (1 before, 1 after) to %s: 3 "
                                    "activities observed, ",
                                    d.capture_path);
    const char *const says[] = {"procstat ", "nonexistent not running: ",
                                /* Before the first tick there is no figure yet, and it says so. */
                                "\nenergy: ",
                                /* The provider's note, under its line: the source in use. */
                                "\n             energy/estimate (estimated)\n", "ended",
                                "test-client", "\nreasoning: a cycle every 1000 ms, ", capture};
    char *text = test_daemon_status_text_says(d.socket_path, says, G_N_ELEMENTS(says));
    assert_null(strstr(text, "energy     not running"));
    g_free(text);
    g_free(capture);
    g_free(test_daemon_stop(&d));
}

/* Where a tick's time goes: every part, subscriber and node ADPI is in the
 * status, each counted as often as it ran, whenever the status is asked
 * (the status is answered between ticks), and the text shows it. */
static void test_status_tells_where_the_tick_goes(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, NULL);
    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *root = json_node_get_object(status);
    gint64 ticks = test_daemon_json_int(root, "daemon", "ticks", NULL);
    JsonObject *costs = json_object_get_object_member(root, "tick_costs");
    JsonArray *parts = json_object_get_array_member(costs, "parts");
    static const char *const names[] = {"providers", "energy_share", "publish", "drain",
                                        "reasoners", "capture",      "outbox",  "commit"};
    assert_int_equal(json_array_get_length(parts), G_N_ELEMENTS(names));
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        JsonObject *part = json_array_get_object_element(parts, i);
        assert_string_equal(json_object_get_string_member(part, "name"), names[i]);
    }
    JsonObject *providers = json_array_get_object_element(parts, 0);
    assert_int_equal(test_daemon_json_int(providers, "cost_us", "count", NULL), ticks);
    JsonArray *subscribers = json_object_get_array_member(costs, "subscribers");
    assert_int_equal(json_array_get_length(subscribers), 4);
    assert_string_equal(
        json_object_get_string_member(json_array_get_object_element(subscribers, 0), "name"),
        "rollup");
    for (guint i = 0; i < json_array_get_length(subscribers); i++)
        assert_int_equal(test_daemon_json_int(json_array_get_object_element(subscribers, i),
                                              "cost_us", "count", NULL),
                         ticks);
    /* The node's default ADPIs (sensor-sanity, statistics-range), each fed
     * the node's samples every tick. */
    JsonArray *adpis = json_object_get_array_member(costs, "adpis");
    assert_int_equal(json_array_get_length(adpis), 2);
    for (guint i = 0; i < json_array_get_length(adpis); i++) {
        JsonObject *a = json_array_get_object_element(adpis, i);
        assert_string_equal(json_object_get_string_member(a, "level"), "node");
        assert_int_equal(test_daemon_json_int(a, "samples", "count", NULL), ticks);
    }
    json_node_unref(status);
    const char *const where[] = {"\nwhere a tick goes"};
    g_free(test_daemon_status_text_says(d.socket_path, where, 1));
    g_free(test_daemon_stop(&d));
}

#define INSTRUMENTED 200

/* The real thing: 200 unmodified programs under the preload library at
 * once, each registering its ring with a real vigild. Every record each
 * one's report says it wrote into its ring is drained. */
static void test_many_instrumented_processes_all_drained(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    test_daemon_start(&d, dir, FAST_PROVIDERS, NULL);
    char *report_var = g_strdup_printf("VIGIL_REPORT=%s/report-%%p.json", dir);
    const char *vars[] = {report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    char **env = test_daemon_preload_env(&d, vars);
    pid_t pids[INSTRUMENTED];
    for (int i = 0; i < INSTRUMENTED; i++) {
        char *of = g_strdup_printf("of=%s/out-%d", dir, i);
        pids[i] = test_daemon_spawn_dd(dir, env, of, "bs=512", "count=50");
        g_free(of);
    }
    for (int i = 0; i < INSTRUMENTED; i++)
        wait_exit(pids[i], 0);

    JsonNode *status = test_daemon_status(&d, 0);
    JsonObject *root = json_node_get_object(status);
    assert_int_equal(test_daemon_json_int(root, "processes", "registered_total", NULL),
                     INSTRUMENTED);
    for (int i = 0; i < INSTRUMENTED; i++) {
        char *path = g_strdup_printf("%s/report-%d.json", dir, (int)pids[i]);
        struct test_report rep = test_report_load(path);
        gint64 recorded = test_report_int(&rep, "activities.recorded");
        assert_true(recorded >= 50); /* its 50 writes at least */
        assert_int_equal(test_report_int(&rep, "activities.dropped"), 0);
        JsonObject *p = test_daemon_process(status, pids[i]);
        if (p == NULL)
            fail_msg("dd pid %d is not in the daemon's status", (int)pids[i]);
        assert_string_equal(member_string(p, "state"), "ended");
        assert_int_equal(json_object_get_int_member(p, "activities"), recorded);
        assert_int_equal(json_object_get_int_member(p, "corrupt"), 0);
        assert_int_equal(json_object_get_int_member(p, "torn"), 0);
        /* It was connected; whether its summary came within 100 ms on a
         * machine running 200 of them at once is not the test's business. */
        const char *state_text = test_report_string(&rep, "vigild.state");
        assert_true(strcmp(state_text, "summary") == 0 || strcmp(state_text, "connected") == 0);
        test_report_free(&rep);
        g_free(path);
    }
    json_node_unref(status);
    g_strfreev(env);
    g_free(report_var);
    g_free(test_daemon_stop(&d));
}

/* One instrumented program's report shows vigild's energy figure and what
 * it drained, equal to what it wrote. */
static void test_report_shows_what_vigild_measured(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    /* [insight] thresholds under which dd's few opens are metadata-heavy:
     * vigild sends them after the summary, and the findings use them. */
    test_daemon_start(&d, dir, "providers = procstat;process;energy\n",
                      "[provider.energy]\nsources = estimate\n"
                      "[insight]\nmetadata_min_calls = 1\nmetadata_share = 0.001\n");
    char **env = test_daemon_preload_env(&d, NULL);
    char *of = g_strdup_printf("of=%s/out", dir);
    const char *argv[] = {"dd", "if=/dev/zero", of, "bs=4096", "count=100", "status=none", NULL};
    struct test_run run = test_run_program(dir, argv, env);
    test_assert_status(&run, 0, "dd under vigild");
    /* Energy: a figure from the estimate or, for a run shorter than a
     * tick, or one before the daemon's first tick, n/a with vigild's
     * reason; never the standalone note. */
    if (strstr(run.err, "(energy/estimate, estimated") == NULL &&
        strstr(run.err, "n/a (vigild has not sampled the node's energy yet") == NULL)
        test_assert_contains(run.err, "n/a (it ended before a tick measured its share");
    test_assert_contains(run.err, "activities drained, 0 gaps, 0 dropped");
    assert_null(strstr(run.err, "standalone"));
    test_assert_contains(run.err, "\nfindings (thresholds: vigild)\nwarning metadata_heavy\n");
    test_run_clear(&run);
    g_strfreev(env);
    g_free(of);
    g_free(test_daemon_stop(&d));
}

/* The activities of a capture sink's "activities" lines for `pid`:
 * counted, and their sequence numbers checked to be 0..n-1, each once. */
static gint64 sink_activities(const char *path, pid_t pid)
{
    GArray *seqs = test_daemon_sink_seqs(path, pid);
    GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < seqs->len; i++)
        if (!g_hash_table_add(seen, &g_array_index(seqs, gint64, i)))
            fail_msg("activity %" G_GINT64_FORMAT " of pid %d forwarded twice",
                     g_array_index(seqs, gint64, i), (int)pid);
    gint64 n = g_hash_table_size(seen);
    for (gint64 seq = 0; seq < n; seq++)
        if (!g_hash_table_contains(seen, &seq))
            fail_msg("activity %" G_GINT64_FORMAT " of pid %d is missing", seq, (int)pid);
    g_hash_table_destroy(seen);
    g_array_unref(seqs);
    return n;
}

/* A process that writes 5,000 records and exits. */
static pid_t run_writer(const struct test_daemon *d)
{
    pid_t pid = run_client(d->socket_path, 8192, 5000);
    return pid;
}

/* [capture] mode = all: every activity reaches the sink, once. */
static void test_capture_all_forwards_every_activity(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, "[capture]\nmode = all\n");
    pid_t pid = run_writer(&d);
    JsonNode *status = test_daemon_status(&d, pid);
    JsonObject *p = test_daemon_process(status, pid);
    assert_non_null(p);
    assert_int_equal(test_daemon_json_int(p, "capture", "observed", NULL), 5000);
    assert_int_equal(test_daemon_json_int(p, "capture", "lost", NULL), 0);
    json_node_unref(status);
    /* A stop decides the cycle it cuts short: nothing stays held. */
    char *sink = g_strdup(d.capture_path);
    g_free(test_daemon_stop(&d));
    assert_int_equal(sink_activities(sink, pid), 5000);
    g_free(sink);
}

/* [capture] mode = anomalies: whatever is decided, every activity is
 * counted once as forwarded or dropped, and none is lost or left held
 * after a stop. */
static void test_capture_counts_every_activity_once(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, NULL);
    pid_t pid = run_writer(&d);
    JsonNode *status = test_daemon_status(&d, pid);
    JsonObject *root = json_node_get_object(status);
    assert_string_equal(
        json_object_get_string_member(json_object_get_object_member(root, "capture"), "mode"),
        "anomalies");
    json_node_unref(status);
    char *sink = g_strdup(d.capture_path);
    g_free(test_daemon_stop(&d));
    gint64 forwarded = sink_activities(sink, pid);
    /* The sink's last cycle line has the node's totals after the stop. */
    char *text = test_read_file(sink);
    g_free(sink);
    char *last = g_strrstr(g_strchomp(text), "\n");
    JsonParser *parser = json_parser_new();
    assert_true(json_parser_load_from_data(parser, last != NULL ? last + 1 : text, -1, NULL));
    JsonObject *cycle = json_node_get_object(json_parser_get_root(parser));
    assert_string_equal(json_object_get_string_member(cycle, "type"), "cycle");
    assert_int_equal(json_object_get_int_member(cycle, "observed"), 5000);
    assert_int_equal(json_object_get_int_member(cycle, "forwarded"), forwarded);
    assert_int_equal(json_object_get_int_member(cycle, "dropped"), 5000 - forwarded);
    assert_int_equal(json_object_get_int_member(cycle, "lost"), 0);
    assert_int_equal(json_object_get_int_member(cycle, "held"), 0);
    g_object_unref(parser);
    g_free(text);
}

static void test_bad_capture_config_is_refused_at_start(void **state)
{
    const char *dir = *state;
    char *config = g_build_filename(dir, "vigil.conf", NULL);
    assert_true(g_file_set_contents(config, "[daemon]\nhistory_s = 1\n[capture]\npre_cycles = 5\n",
                                    -1, NULL));
    const char *argv[] = {test_env_or_fail("VIGILD"), "--config", config, NULL};
    char **env = test_clean_environment(NULL);
    struct test_run run = test_run_program(NULL, argv, env);
    test_assert_status(&run, 1, "vigild with a history too short for its windows");
    test_assert_contains(run.err,
                         "[daemon] history_s = 1 is too short for [capture] pre_cycles = 5");
    test_run_clear(&run);
    g_strfreev(env);
    g_free(config);
}

/* A reload whose ADPI cannot be made from it is refused whole, naming the
 * reasoner's key and the ADPI's problem; the running ADPIs stay. */
static void test_reload_refuses_a_bad_adpi(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, FAST_PROVIDERS, NULL);
    char *original = test_read_file(d.config_path);
    JsonNode *status =
        reload_with(&d, original, "[adpi.drift]\nshort_cycles = 50\nlong_cycles = 40\n");
    JsonObject *root = json_node_get_object(status);
    assert_int_equal(test_daemon_json_int(root, "daemon", "reload_failures", NULL), 1);
    JsonArray *adpis =
        json_object_get_array_member(json_object_get_object_member(root, "reasoning"), "adpis");
    assert_int_equal(json_array_get_length(adpis), 2); /* the node's default list */
    json_node_unref(status);
    char *log = test_daemon_stop(&d);
    test_assert_contains(log, "[reasoner.process] adpis: drift: ");
    test_assert_contains(log, "long_cycles");
    g_free(log);
    g_free(original);
}

TEST_MAIN(TEST_WITH_DIR(test_many_short_lived_processes_all_drained),
          TEST_WITH_DIR(test_many_instrumented_processes_all_drained),
          TEST_WITH_DIR(test_report_shows_what_vigild_measured),
          TEST_WITH_DIR(test_a_thousand_processes_served_at_once),
          TEST_WITH_DIR(test_sigkill_loses_nothing),
          TEST_WITH_DIR(test_a_reattach_read_after_its_process_ended_is_that_process),
          TEST_WITH_DIR(test_hostile_clients_are_dropped_and_others_served),
          TEST_WITH_DIR(test_reload_keeps_serving_and_refuses_a_bad_config),
          TEST_WITH_DIR(test_a_second_daemon_does_not_take_the_socket),
          TEST_WITH_DIR(test_bad_config_is_refused_at_start),
          TEST_WITH_DIR(test_daemons_read_vigil_config),
          TEST_WITH_DIR(test_status_without_a_daemon),
          TEST_WITH_DIR(test_status_text_shows_providers_and_processes),
          TEST_WITH_DIR(test_capture_all_forwards_every_activity),
          TEST_WITH_DIR(test_capture_counts_every_activity_once),
          TEST_WITH_DIR(test_bad_capture_config_is_refused_at_start),
          TEST_WITH_DIR(test_reload_refuses_a_bad_adpi),
          TEST_WITH_DIR(test_status_tells_where_the_tick_goes))
