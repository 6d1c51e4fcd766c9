/* Whose run a process joins, against a real vigild with real users (issue
 * 30): a run whose processes have all ended is still its user's, across a
 * restart of vigild too, so another user's process that names its key is
 * kept in a run of its own ("KEY@uidN") rather than joining it; a
 * process's start is the kernel's, never a REGISTER's; a Slurm run key
 * ("slurm-JOB.STEP") belongs to the uid root told vigild the job is, so a
 * user who registers it first cannot squat it; a user may not tell of
 * another user's job; and the report of a process kept apart names the
 * run it is in. Other users are forked children that setuid() to
 * nobody (65534) or to uid 1. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "holder.h"
#include "test_daemon.h"
#include "test_report.h"
#include "test_support.h"
#include "vigil/clock.h"
#include "vigil/job_notice.h"
#include "vigil/local_protocol.h"
#include "test_main.h"

#define NO_PROVIDERS "providers = \n"

/* A member of the status's process of pid `pid` (which must be there). */
static JsonObject *process_of(JsonNode *status, pid_t pid)
{
    JsonObject *p = test_daemon_process(status, pid);
    if (p == NULL)
        fail_msg("pid %d is not in vigild's status", (int)pid);
    return p;
}

static void assert_run_key(const struct test_daemon *d, pid_t pid, const char *want)
{
    JsonNode *status = test_daemon_status(d, 0);
    const char *key = json_object_get_string_member(process_of(status, pid), "run_key");
    if (key == NULL || strcmp(key, want) != 0)
        fail_msg("pid %d is in run %s, not %s", (int)pid, key != NULL ? key : "(none)", want);
    json_node_unref(status);
}

/* Registered, and told it is kept in run `key`, not the one it named. */
static void assert_kept_apart(const struct holder *h, const char *key)
{
    if (h->answer.type != VIGIL_LOCAL_REGISTERED_APART)
        fail_msg("pid %d was answered a %s, not that it is kept apart in %s", (int)h->pid,
                 vigil_local_type_name((unsigned)h->answer.type), key);
    assert_string_equal(h->answer.run_key, key);
}

/* Root's run `run`: a process of root's registers naming it (its key is
 * `run`) and ends. Its pid. */
static pid_t end_a_root_run(const struct test_daemon *d, const char *run)
{
    struct holder root;
    holder_start(&root, d->socket_path, 0, run);
    assert_int_equal(root.answer.type, VIGIL_LOCAL_REGISTERED);
    assert_run_key(d, root.pid, run);
    holder_release(&root);
    return root.pid;
}

/* Root's run has ended: nobody naming its key is kept apart, in a run of
 * its own, and so after vigild restarts; a key made that way is its
 * user's, so uid 1 naming it is kept apart again. */
static void test_an_ended_run_stays_its_users(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, NO_PROVIDERS);
    pid_t root = end_a_root_run(&d, "run-k");
    JsonNode *status = test_daemon_status(&d, root);
    assert_string_equal(json_object_get_string_member(process_of(status, root), "state"), "ended");
    json_node_unref(status);

    struct holder squatter;
    holder_start(&squatter, d.socket_path, NOBODY, "run-k");
    assert_kept_apart(&squatter, "run-k@uid65534");
    assert_run_key(&d, squatter.pid, "run-k@uid65534");
    holder_release(&squatter);

    /* A restarted vigild still knows whose run-k is. */
    g_free(test_daemon_stop(&d));
    test_daemon_start(&d, dir, NO_PROVIDERS, NULL);
    holder_start(&squatter, d.socket_path, NOBODY, "run-k");
    assert_kept_apart(&squatter, "run-k@uid65534");
    assert_run_key(&d, squatter.pid, "run-k@uid65534");
    struct holder other;
    holder_start(&other, d.socket_path, OTHER_UID, "run-k@uid65534");
    assert_kept_apart(&other, "run-k@uid65534@uid1");
    assert_run_key(&d, other.pid, "run-k@uid65534@uid1");
    holder_release(&other);
    holder_release(&squatter);
    test_daemon_stop_saying(&d, "run-k@uid65534");
}

/* A process that says it started at boot is taken to have started when
 * the kernel says it did; one that tells its true start keeps it. */
static void test_a_start_is_the_kernels(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, NO_PROVIDERS);
    uint64_t before_ns = vigil_clock_monotonic_ns();
    struct holder forger, honest;
    holder_start_at(&forger, d.socket_path, NOBODY, "run-f", 1000);
    assert_int_equal(forger.answer.type, VIGIL_LOCAL_REGISTERED);
    holder_start(&honest, d.socket_path, NOBODY, "run-f");
    assert_int_equal(honest.answer.type, VIGIL_LOCAL_REGISTERED);
    uint64_t after_ns = vigil_clock_monotonic_ns();
    JsonNode *status = test_daemon_status(&d, 0);
    gint64 forged =
        json_object_get_int_member(process_of(status, forger.pid), "start_monotonic_ns");
    /* The kernel counts starts in clock ticks (10 ms here at most). */
    if (forged < (gint64)before_ns - 10000000 || forged > (gint64)after_ns)
        fail_msg("the forger's start is %" G_GINT64_FORMAT " ns, not between its fork "
                 "(%" G_GUINT64_FORMAT ") and now (%" G_GUINT64_FORMAT ")",
                 forged, before_ns, after_ns);
    assert_int_equal(
        json_object_get_int_member(process_of(status, honest.pid), "start_monotonic_ns"),
        (gint64)honest.answer.start_monotonic_ns);
    json_node_unref(status);
    holder_release(&forger);
    holder_release(&honest);
    g_free(test_daemon_stop(&d));
}

/* As a root prolog or SPANK plugin would. */
static void tell_job(const struct test_daemon *d, gboolean begin, const char *job, uint32_t uid,
                     const char *user)
{
    char err[256] = "";
    struct vigil_job_notice n = {
        .begin = begin, .job_id = job, .step_id = "", .user = user, .uid = uid, .node_list = "n1"};
    if (!vigil_job_notice_send(d->socket_path, &n, err, sizeof err))
        fail_msg("root's notice of job %s is refused: %s", job, err);
}

/* nobody registers job 59038's first step's key before the job begins: it
 * is kept apart, and uid 1, whose job root says it is, gets the key;
 * nobody again is kept apart. */
static void test_a_slurm_key_is_the_jobs_users(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, NO_PROVIDERS);
    struct holder squatter, owner, late;
    holder_start(&squatter, d.socket_path, NOBODY, "slurm-59038.0");
    assert_kept_apart(&squatter, "slurm-59038.0@uid65534");
    tell_job(&d, TRUE, "59038", OTHER_UID, "daemon");
    holder_start(&owner, d.socket_path, OTHER_UID, "slurm-59038.0");
    if (owner.answer.type != VIGIL_LOCAL_REGISTERED)
        fail_msg("the job's own step is not registered: %s", owner.answer.reason);
    holder_start(&late, d.socket_path, NOBODY, "slurm-59038.0");
    assert_kept_apart(&late, "slurm-59038.0@uid65534");
    assert_run_key(&d, squatter.pid, "slurm-59038.0@uid65534");
    assert_run_key(&d, owner.pid, "slurm-59038.0");
    assert_run_key(&d, late.pid, "slurm-59038.0@uid65534");
    holder_release(&squatter);
    holder_release(&owner);
    holder_release(&late);
    g_free(test_daemon_stop(&d));
}

/* In a child of `uid`: a job notice; exits 0 when it was taken, 1 when
 * refused (the reason on the pipe). */
static gboolean notice_as(const struct test_daemon *d, uid_t uid, const struct vigil_job_notice *n,
                          char *reason, size_t reason_size)
{
    int reason_fd;
    pid_t pid = fork_as_writer(uid, &reason_fd);
    if (pid == 0) {
        char err[256] = "";
        gboolean ok = vigil_job_notice_send(d->socket_path, n, err, sizeof err);
        if (write(reason_fd, err, sizeof err) != (ssize_t)sizeof err)
            _exit(72);
        _exit(ok ? 0 : 1);
    }
    char err[256] = "";
    assert_int_equal(read(reason_fd, err, sizeof err), (ssize_t)sizeof err);
    close(reason_fd);
    g_strlcpy(reason, err, reason_size);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status) == 0;
}

/* Root told vigild job 4711 is root's: nobody cannot end it as its own,
 * under another user and node list; its own job it can tell of. */
static void test_a_user_cannot_end_anothers_job(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, NO_PROVIDERS);
    tell_job(&d, TRUE, "4711", 0, "root");
    char reason[256];
    struct vigil_job_notice forged = {.begin = false,
                                      .job_id = "4711",
                                      .step_id = "",
                                      .user = "mallory",
                                      .uid = NOBODY,
                                      .node_list = "evil-node"};
    if (notice_as(&d, NOBODY, &forged, reason, sizeof reason))
        fail_msg("nobody ended root's job 4711 as mallory on evil-node");
    test_assert_contains(reason, "job 4711");
    test_assert_contains(reason, "uid 0");
    struct vigil_job_notice own = forged;
    own.job_id = "4712";
    if (!notice_as(&d, NOBODY, &own, reason, sizeof reason))
        fail_msg("nobody may not tell of its own job: %s", reason);
    test_daemon_stop_saying(&d, "job 4711 begins (user root, nodes n1)");
}

/* dd under the preload library as nobody, naming root's ended run: its
 * report says the run vigild keeps it in. */
static void test_the_report_names_the_run_kept_apart(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, NO_PROVIDERS);
    end_a_root_run(&d, "run-r");
    const char *run_id[] = {"VIGIL_RUN_ID=run-r", NULL};
    char *report_path;
    pid_t pid = dd_as(&d, NOBODY, 4, run_id, &report_path);
    struct test_report rep = test_report_load(report_path);
    assert_string_equal(test_report_string(&rep, "run_key"), "run-r@uid65534");
    assert_string_equal(test_report_string(&rep, "vigild.state"), "summary");
    test_report_free(&rep);
    assert_run_key(&d, pid, "run-r@uid65534");
    g_free(report_path);
    g_free(test_daemon_stop(&d));
}

/* A user's `vigil status` lists their own processes only (another's
 * program, arguments and folder can hold what `ps` on a hidepid node
 * would not show) and says how many others there are; root sees all. */
static void test_a_users_status_shows_only_their_processes(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, NO_PROVIDERS);
    struct holder root, mine;
    holder_start(&root, d.socket_path, 0, "run-secret");
    holder_start(&mine, d.socket_path, NOBODY, "run-mine");

    JsonNode *status = test_daemon_status_as(&d, NOBODY, 0);
    if (test_daemon_process(status, root.pid) != NULL)
        fail_msg("nobody's vigil status lists root's process %d", (int)root.pid);
    char *text = json_to_string(status, FALSE);
    if (strstr(text, "run-secret") != NULL)
        fail_msg("nobody's vigil status names root's run: %s", text);
    g_free(text);
    assert_string_equal(json_object_get_string_member(process_of(status, mine.pid), "run_key"),
                        "run-mine");
    JsonObject *processes =
        json_object_get_object_member(json_node_get_object(status), "processes");
    assert_int_equal(json_object_get_int_member(processes, "not_listed_other_users"), 1);
    json_node_unref(status);

    status = test_daemon_status(&d, 0);
    process_of(status, root.pid);
    process_of(status, mine.pid);
    processes = json_object_get_object_member(json_node_get_object(status), "processes");
    assert_int_equal(json_object_get_int_member(processes, "not_listed_other_users"), 0);
    json_node_unref(status);

    holder_release(&mine);
    holder_release(&root);
    g_free(test_daemon_stop(&d));
}

/* A process's job is its own word (SLURM_JOB_ID): nobody saying it is in
 * root's job 4711 must not be counted in it (its /metrics series, its
 * energy, its warehouse job); its own job it keeps. */
static void test_a_process_cannot_join_anothers_job(void **state)
{
    const char *dir = *state;
    struct test_daemon d;
    holder_daemon_start(&d, dir, NO_PROVIDERS);
    tell_job(&d, TRUE, "4711", 0, "root");
    tell_job(&d, TRUE, "4712", NOBODY, "nobody");
    struct holder intruder, own, roots;
    holder_start_in_job(&intruder, d.socket_path, NOBODY, "run-x", "4711");
    holder_start_in_job(&own, d.socket_path, NOBODY, "run-y", "4712");
    holder_start_in_job(&roots, d.socket_path, 0, "run-z", "4711");
    JsonNode *status = test_daemon_status(&d, 0);
    const char *job = json_object_get_string_member(process_of(status, intruder.pid), "job");
    if (job != NULL && strcmp(job, "4711") == 0)
        fail_msg("nobody's process is counted in root's job 4711");
    assert_string_equal(json_object_get_string_member(process_of(status, own.pid), "job"), "4712");
    assert_string_equal(json_object_get_string_member(process_of(status, roots.pid), "job"),
                        "4711");
    json_node_unref(status);
    holder_release(&intruder);
    holder_release(&own);
    holder_release(&roots);
    test_daemon_stop_saying(&d, "says it is in job 4711, which root told vigild is uid 0's");
}

TEST_MAIN(TEST_WITH_DIR(test_an_ended_run_stays_its_users),
          TEST_WITH_DIR(test_a_start_is_the_kernels),
          TEST_WITH_DIR(test_a_slurm_key_is_the_jobs_users),
          TEST_WITH_DIR(test_a_user_cannot_end_anothers_job),
          TEST_WITH_DIR(test_the_report_names_the_run_kept_apart),
          TEST_WITH_DIR(test_a_users_status_shows_only_their_processes),
          TEST_WITH_DIR(test_a_process_cannot_join_anothers_job))
