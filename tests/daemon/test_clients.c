/* vigild's socket against its local users (issue 14): 20,000 idle
 * connections of one user while another user's instrumented program
 * registers and is drained to its last record; a registration into
 * another user's run kept apart with the reason, and a user's processes
 * bounded; an idle unregistered connection closed while a silent
 * registered one stays; the descriptor budget; the sink off beside an
 * uplink. Other users are real: forked children that setuid() to nobody
 * (65534) or to uid 1. */
#define _GNU_SOURCE
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
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

#define TEST_WITH_DIR(f) cmocka_unit_test_setup_teardown(f, test_make_dir, test_daemon_teardown)

#define FAST_PROVIDERS "providers = procstat;process\n"
#define NOBODY         65534
#define OTHER_UID      1 /* "daemon" on Debian; any unprivileged uid will do */
#define SAFETY_MS      60000

/* The test's folder, where vigild's socket is, reachable by other users. */
static void open_dir_to_others(const char *dir)
{
    assert_int_equal(chmod(dir, 0755), 0);
}

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
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(release), 0);
    f->children = children;
    for (int i = 0; i < children; i++) {
        f->pids[i] = fork_or_fail();
        if (f->pids[i] == 0) {
            close(ready[0]);
            close(release[1]);
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
            char c;
            while (read(release[0], &c, 1) > 0)
                ;
            _exit(0);
        }
    }
    close(ready[1]);
    close(release[0]);
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
    char *home = g_build_filename(d->dir, "home", NULL);
    assert_int_equal(g_mkdir_with_parents(home, 0700), 0);
    assert_int_equal(chown(home, uid, (gid_t)uid), 0);
    char *socket_var = g_strconcat("VIGIL_SOCKET=", d->socket_path, NULL);
    char *preload_var = g_strconcat("LD_PRELOAD=", test_env_or_fail("VIGIL_PRELOAD_LIB"), NULL);
    char *report_path = g_build_filename(home, "report.json", NULL);
    char *report_var = g_strconcat("VIGIL_REPORT=", report_path, NULL);
    const char *vars[] = {socket_var, preload_var, report_var, "VIGIL_REPORT_FORMAT=json", NULL};
    char **env = test_clean_environment(vars);
    char *of = g_strdup_printf("of=%s/out", home);
    char *count_arg = g_strdup_printf("count=%d", count);
    pid_t pid = fork_or_fail();
    if (pid == 0) {
        char *argv[] = {"dd", "if=/dev/zero", of, "bs=512", count_arg, "status=none", NULL};
        become(uid);
        execvpe("dd", argv, env);
        _exit(127);
    }
    wait_exit(pid, 0);

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
    g_strfreev(env);
    g_free(count_arg);
    g_free(of);
    g_free(report_var);
    g_free(report_path);
    g_free(preload_var);
    g_free(socket_var);
    g_free(home);
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
    open_dir_to_others(dir);
    struct test_daemon d;
    /* The timeout is long: the flood stays for the whole test. */
    test_daemon_start(&d, dir, FAST_PROVIDERS "unregistered_timeout_ms = 3600000\n", NULL);
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
    open_dir_to_others(dir);
    struct rlimit limit;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &limit), 0);
    const gint64 budget = 300;
    char *lines = g_strdup_printf(FAST_PROVIDERS "unregistered_timeout_ms = 3600000\n"
                                                 "max_connections_per_uid = 1000000\n"
                                                 "fd_reserve = %" G_GINT64_FORMAT "\n",
                                  (gint64)limit.rlim_max - budget);
    struct test_daemon d;
    test_daemon_start(&d, dir, lines, NULL);
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
    open_dir_to_others(dir);
    struct test_daemon d;
    test_daemon_start(&d, dir, FAST_PROVIDERS "max_processes_per_uid = 2\n", NULL);
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
    open_dir_to_others(dir);
    struct test_daemon d;
    test_daemon_start(&d, dir, FAST_PROVIDERS "unregistered_timeout_ms = 100\n", NULL);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST_WITH_DIR(test_idle_connections_of_one_user_do_not_stop_another),
        TEST_WITH_DIR(test_the_descriptor_budget_holds),
        TEST_WITH_DIR(test_a_run_is_joined_only_by_its_own_user),
        TEST_WITH_DIR(test_an_idle_unregistered_connection_is_closed),
        TEST_WITH_DIR(test_the_sink_is_off_beside_an_uplink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
