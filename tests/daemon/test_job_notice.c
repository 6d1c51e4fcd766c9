/* Job notices against a real vigild: `vigil job begin|end` from Slurm's
 * variables and vigil_job_notice_send are answered; a JOB vigild refuses
 * (bad text, another user's job) comes back with the reason; with no
 * vigild, or one that does not answer, the error names the socket. What vigild forwards of a job is
 * checked in the warehouse by tests/pg/test_jobs.c. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_daemon.h"
#include "test_support.h"
#include "vigil/job_notice.h"
#include "vigil/local_protocol.h"
#include "test_main.h"

static void test_cli_from_slurm_variables(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, "providers = \n", NULL);
    const char *vars[] = {"SLURM_JOB_ID=4242", "SLURM_JOB_USER=alice", "SLURM_JOB_UID=1000",
                          "SLURM_JOB_NODELIST=node[01-02]", NULL};
    char **env = test_clean_environment(vars);
    const char *begin[] = {
        test_env_or_fail("VIGIL_CLI"), "job", "begin", "--socket", d.socket_path, NULL};
    struct test_run run = test_run_program(NULL, begin, env);
    test_assert_status(&run, 0, "vigil job begin from Slurm's variables");
    test_run_clear(&run);
    const char *end[] = {
        test_env_or_fail("VIGIL_CLI"), "job", "end", "--socket", d.socket_path, NULL};
    run = test_run_program(NULL, end, env);
    test_assert_status(&run, 0, "vigil job end");
    test_run_clear(&run);
    g_strfreev(env);

    /* No job anywhere: a usage error that says where the id comes from. */
    env = test_clean_environment(NULL);
    run = test_run_program(NULL, begin, env);
    test_assert_status(&run, 2, "vigil job begin without a job");
    test_assert_contains(run.err, "SLURM_JOB_ID");
    test_run_clear(&run);
    g_strfreev(env);
    char *log = test_daemon_stop(&d);
    test_assert_contains(log, "job 4242 begins (user alice, nodes node[01-02])");
    test_assert_contains(log, "job 4242 ends (user alice, nodes node[01-02])");
    g_free(log);
}

static void test_send_and_refusals(void **state)
{
    struct test_daemon d;
    test_daemon_start(&d, *state, "providers = \n", NULL);
    char err[256] = "";
    struct vigil_job_notice n = {.begin = true,
                                 .job_id = "17",
                                 .step_id = "0",
                                 .user = "bob",
                                 .uid = 1001,
                                 .node_list = "n1"};
    if (!vigil_job_notice_send(d.socket_path, &n, err, sizeof err))
        fail_msg("a job step's begin is not answered: %s", err);

    /* A JOB whose user is not UTF-8, sent raw: vigild refuses it, saying why. */
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    g_strlcpy(addr.sun_path, d.socket_path, sizeof addr.sun_path);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    struct {
        struct vigil_local_job head;
        char strings[3];
    } bad = {.head = {.flags = VIGIL_LOCAL_JOB_BEGIN, .job_bytes = 2, .user_bytes = 1},
             .strings = {'1', '7', '\xff'}};
    struct vigil_error e = {{0}};
    assert_true(
        vigil_local_send(fd, VIGIL_LOCAL_JOB, &bad, sizeof bad.head + sizeof bad.strings, -1, &e));
    static _Alignas(8) char answer[VIGIL_LOCAL_MAX_BYTES];
    enum vigil_local_type type;
    ssize_t got = vigil_local_receive(fd, answer, &type, NULL, &e);
    assert_true(got > 0);
    assert_int_equal(type, VIGIL_LOCAL_REFUSED);
    answer[got] = '\0';
    assert_string_equal(answer, "job: the user is not valid UTF-8");
    close(fd);

    /* A user other than root speaks only for their own uid. */
    assert_int_equal(chmod(*state, 0755), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
            _exit(3);
        struct vigil_job_notice other = {.begin = false, .job_id = "17", .uid = 1001};
        char why[256] = "";
        bool sent = vigil_job_notice_send(d.socket_path, &other, why, sizeof why);
        _exit(!sent && strstr(why, "refused the job notice: uid 65534 may only tell of its own "
                                   "jobs, not of uid 1001's") != NULL
                  ? 0
                  : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    test_daemon_stop_saying(&d, "job 17.0 begins (user bob, nodes n1)");

    /* No vigild: the error names the socket. */
    assert_false(vigil_job_notice_send(d.socket_path, &n, err, sizeof err));
    test_assert_contains(err, "no vigild answers on ");
    test_assert_contains(err, d.socket_path);
}

/* A vigild that accepts and never answers holds a notice up no longer
 * than its bound: a listening socket nobody accepts on stands in for it. */
static void test_silent_daemon(void **state)
{
    char *path = g_build_filename(*state, "silent.sock", NULL);
    int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    g_strlcpy(addr.sun_path, path, sizeof addr.sun_path);
    assert_int_equal(bind(listener, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(listen(listener, 4), 0);
    struct vigil_job_notice n = {.begin = true, .job_id = "5", .uid = UINT32_MAX};
    char err[256] = "";
    assert_false(vigil_job_notice_send(path, &n, err, sizeof err));
    char *want = g_strdup_printf("vigild on %s did not answer the job notice within 1 s", path);
    assert_string_equal(err, want);
    g_free(want);
    close(listener);
    g_free(path);
}

TEST_MAIN(TEST_WITH_DIR(test_cli_from_slurm_variables), TEST_WITH_DIR(test_send_and_refusals),
          TEST_WITH_DIR(test_silent_daemon))
