/* Whose a run and a job are in the warehouse (issue 30), through a real
 * vigil-txd: runs span nodes, so the warehouse keeps another user's
 * process out of a run as vigild does, whatever a node sends. A run's
 * uid, program, argv and start are its first process's for good: a
 * process of another uid naming its key, from another node, with a start
 * before the run's, is stored in a run of its own ("KEY@uidUID"); two
 * users in one batch likewise; a Slurm key belongs to the uid root told
 * the job is. A job notice from a user (not marked as root's) changes
 * nothing root told of the job, and does not describe a job root said is
 * another uid's; nor is a run filed under such a job. Batches are made here as a node's vigild
 * would send them (an older vigild, which did none of this, included). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "test_pg.h"
#include "test_support.h"
#include "test_txd.h"
#include "vigil/clock.h"
#include "vigil/health.h"

struct proc_spec {
    int32_t pid;
    uint32_t uid;
    const char *run_key;
    const char *job;
    const char *program;
    int64_t start_from_now_ns; /* its monotonic start, from now (negative: earlier) */
    uint64_t start_ns;         /* else, when not 0: its monotonic start itself */
    gboolean ended;
};

/* NODE, PROCESSES (`procs`) and JOBS (`jobs`), as vigild sends them. */
static GBytes *batch_new(uint64_t node_id, uint64_t sequence, const struct proc_spec *procs,
                         size_t n_procs, const struct vigil_wire_job *jobs, size_t n_jobs)
{
    GError *error = NULL;
    uint64_t now = vigil_clock_monotonic_ns();
    vigil_wire_writer *batch = vigil_wire_writer_new(VIGIL_WIRE_BATCH, node_id, sequence, 0);
    char hostname[32];
    g_snprintf(hostname, sizeof hostname, "node-%" G_GUINT64_FORMAT, node_id);
    test_txd_add_node(batch, node_id, sequence, hostname, now - 1000000000u, 0);
    vigil_wire_writer *w;
    if (n_procs > 0) {
        w = vigil_wire_writer_new(VIGIL_WIRE_PROCESSES, node_id, sequence, 0);
        for (size_t i = 0; i < n_procs; i++) {
            const struct proc_spec *s = &procs[i];
            char *argv[] = {(char *)s->program, "--steps", "10", NULL};
            struct vigil_wire_process p = {
                .process_id = i + 1,
                .pid = s->pid,
                .uid = s->uid,
                .rank = -1,
                .exit_code = s->ended ? 0 : -1,
                .start_ns = s->start_ns != 0 ? s->start_ns
                                             : (uint64_t)((int64_t)now + s->start_from_now_ns),
                .end_ns = s->ended ? now : 0,
                .run_key = (char *)s->run_key,
                .job = (char *)(s->job != NULL ? s->job : ""),
                .program = (char *)s->program,
                .cwd = "/tmp",
                .argc = 3,
                .argv = argv};
            test_txd_check_item(vigil_wire_add_process(w, &p, &error), &error);
        }
        test_txd_add_message(batch, w);
    }
    if (n_jobs > 0) {
        w = vigil_wire_writer_new(VIGIL_WIRE_JOBS, node_id, sequence, 0);
        for (size_t i = 0; i < n_jobs; i++)
            test_txd_check_item(vigil_wire_add_job(w, &jobs[i], &error), &error);
        test_txd_add_message(batch, w);
    }
    return vigil_wire_writer_finish(batch);
}

/* Sends batch `sequence` of the sender's node (batch_new) and waits for
 * its ACK. */
static void send_batch(struct test_sender *s, uint64_t sequence, const struct proc_spec *procs,
                       size_t n_procs, const struct vigil_wire_job *jobs, size_t n_jobs)
{
    GBytes *batch = batch_new(s->node_id, sequence, procs, n_procs, jobs, n_jobs);
    test_sender_send_acked(s, batch, sequence);
    g_bytes_unref(batch);
}

static char *text(const struct test_txd_fixture *f, const char *sql)
{
    char *t = test_pg_query_text_in(f->conninfo, sql);
    return t != NULL ? t : g_strdup("(none)");
}

static void assert_text(const struct test_txd_fixture *f, const char *sql, const char *want)
{
    char *got = text(f, sql);
    if (strcmp(got, want) != 0)
        fail_msg("%s\n  gave: %s\n  want: %s", sql, got, want);
    g_free(got);
}

#define SECOND_NS 1000000000LL

/* Process `pid` of `uid` running `program` in run `run_key` (and job
 * `job`, or none), started `started_s_ago` seconds ago. */
static struct proc_spec proc(int32_t pid, uint32_t uid, const char *run_key, const char *job,
                             const char *program, int started_s_ago)
{
    return (struct proc_spec){.pid = pid,
                              .uid = uid,
                              .run_key = run_key,
                              .job = job,
                              .program = program,
                              .start_from_now_ns = -started_s_ago * SECOND_NS};
}

/* Root's notice that job `job_id` of `user` (`uid`) began on `nodes` at
 * `begin_ns`. */
static struct vigil_wire_job root_begins(const char *job_id, uint32_t uid, const char *user,
                                         const char *nodes, uint64_t begin_ns)
{
    return (struct vigil_wire_job){.begin_ns = begin_ns,
                                   .uid = uid,
                                   .flags = VIGIL_WIRE_JOB_FROM_ROOT,
                                   .job_id = (char *)job_id,
                                   .step_id = "",
                                   .user = (char *)user,
                                   .nodes = (char *)nodes};
}

/* Each process's run and uid, by pid: "RUN_KEY:UID:PID …". */
#define RUNS_BY_PID                                                                                \
    "SELECT string_agg(format('%s:%s:%s', r.run_key, r.uid, p.pid), ' ' ORDER BY p.pid) "          \
    "FROM runs r JOIN processes p USING (run_id)"

/* Root's run ended on node 1; nobody's process names its key on node 2,
 * saying it started long before: root's run stays root's, with its
 * program, argv and start, and nobody's process is stored apart. */
static void test_a_run_stays_its_first_users(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender one, two;
    test_txd_start_with_sender(f, &one, 1);
    test_sender_open(&two, f->txd.endpoint, 2, NULL, NULL, NULL);
    const struct proc_spec root = {.pid = 100,
                                   .uid = 0,
                                   .run_key = "run-k",
                                   .program = "/bin/true",
                                   .start_from_now_ns = -10 * SECOND_NS,
                                   .ended = TRUE};
    send_batch(&one, 1, &root, 1, NULL, 0);
    char *before = text(f, "SELECT format('%s %s %s %s', uid, program, argv, start_time) FROM runs "
                           "WHERE run_key = 'run-k'");
    const struct proc_spec evil = {.pid = 200,
                                   .uid = 65534,
                                   .run_key = "run-k",
                                   .program = "/usr/bin/evil",
                                   /* The forgery: the earliest start there is (an
                                    * hour back would be before boot on a fresh
                                    * machine, which the wire refuses). */
                                   .start_ns = 1000,
                                   .ended = TRUE};
    send_batch(&two, 1, &evil, 1, NULL, 0);
    assert_text(f,
                "SELECT format('%s %s %s %s', uid, program, argv, start_time) FROM runs "
                "WHERE run_key = 'run-k'",
                before);
    assert_text(f,
                "SELECT string_agg(DISTINCT p.uid::text, ',') FROM processes p JOIN runs r "
                "USING (run_id) WHERE r.run_key = 'run-k'",
                "0");
    assert_text(f,
                "SELECT format('%s %s', r.uid, r.program) FROM runs r JOIN processes p "
                "USING (run_id) WHERE p.pid = 200",
                "65534 /usr/bin/evil");
    assert_text(f,
                "SELECT format('%s %s', r.run_key, r.asked_run_key) FROM runs r JOIN processes p "
                "USING (run_id) WHERE p.pid = 200",
                "run-k@uid65534 run-k");
    char *log = test_txd_stop(&f->txd);
    test_assert_contains(log, "pid 200 (uid 65534) named run run-k, which is not its uid's (its "
                              "first process was uid 0's): stored in run run-k@uid65534");
    g_free(log);
    g_free(before);
    test_sender_close(&one);
    test_sender_close(&two);
}

/* Two users' processes of one key in one batch: the earlier one's run,
 * the other apart. */
static void test_two_users_in_one_batch(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 3);
    const struct proc_spec procs[] = {
        proc(300, 1000, "run-b", NULL, "/bin/a", 2),
        proc(301, 1001, "run-b", NULL, "/bin/b", 5),
        proc(302, 1000, "run-b", NULL, "/bin/c", 1),
    };
    send_batch(&s, 1, procs, G_N_ELEMENTS(procs), NULL, 0);
    assert_text(f, RUNS_BY_PID, "run-b@uid1000:1000:300 run-b:1001:301 run-b@uid1000:1000:302");
    test_sender_close(&s);
}

/* Root told node 4 job 59038 is uid 1's; a node that did not keep nobody
 * out sends nobody's process under the job's first step's key, and uid
 * 1's: uid 1's is in slurm-59038.0, nobody's apart. */
static void test_a_slurm_key_is_the_jobs_users(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 4);
    uint64_t now = vigil_clock_monotonic_ns();
    const struct vigil_wire_job begin =
        root_begins("59038", 1, "daemon", "node-4", now - 30 * SECOND_NS);
    const struct proc_spec squatter =
        proc(400, 65534, "slurm-59038.0", "59038", "/usr/bin/evil", 40);
    send_batch(&s, 1, &squatter, 1, &begin, 1);
    const struct proc_spec owner = proc(401, 1, "slurm-59038.0", "59038", "/bin/solver", 20);
    send_batch(&s, 2, &owner, 1, NULL, 0);
    assert_text(f, RUNS_BY_PID, "slurm-59038.0@uid65534:65534:400 slurm-59038.0:1:401");
    test_sender_close(&s);
}

/* Root began job 4711 as root's on n1; nobody's own notice ending it as
 * mallory's on evil-node changes nothing of it, and adds no step row. */
static void test_a_users_notice_leaves_roots_job(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 5);
    uint64_t now = vigil_clock_monotonic_ns();
    const struct vigil_wire_job begin = root_begins("4711", 0, "root", "n1", now - 10 * SECOND_NS);
    send_batch(&s, 1, NULL, 0, &begin, 1);
    const struct vigil_wire_job forged = {.end_ns = now - 10 * SECOND_NS + 1700000000,
                                          .uid = 65534,
                                          .job_id = "4711",
                                          .step_id = "",
                                          .user = "mallory",
                                          .nodes = "evil-node"};
    send_batch(&s, 2, NULL, 0, &forged, 1);
    assert_text(f,
                "SELECT format('%s %s %s %s', user_name, uid, node_list, end_time IS NULL) "
                "FROM jobs WHERE scheduler_job_id = '4711'",
                "root 0 n1 t");
    assert_text(f,
                "SELECT count(*) FROM job_steps s JOIN jobs j USING (job_id) "
                "WHERE j.scheduler_job_id = '4711' AND s.end_time IS NOT NULL",
                "0");
    /* A user's notice of a job no root notice covers is stored as before. */
    const struct vigil_wire_job own = {.begin_ns = now - 5 * SECOND_NS,
                                       .uid = 65534,
                                       .job_id = "4712",
                                       .step_id = "",
                                       .user = "nobody",
                                       .nodes = "n1"};
    send_batch(&s, 3, NULL, 0, &own, 1);
    assert_text(f,
                "SELECT format('%s %s', user_name, uid) FROM jobs WHERE scheduler_job_id = '4712'",
                "nobody 65534");
    test_sender_close(&s);
}

/* A run is filed under the scheduler job its processes name
 * (SLURM_JOB_ID, which anyone can set): not under a job root told the
 * warehouse is another uid's, whether root's word came first (run x) or
 * after the run was filed (run y, taken out then). */
static void test_a_run_is_not_filed_under_anothers_job(void **state)
{
    struct test_txd_fixture *f = *state;
    struct test_sender s;
    test_txd_start_with_sender(f, &s, 6);
    uint64_t now = vigil_clock_monotonic_ns();
    const struct proc_spec early = proc(600, 65534, "y", "4721", "/usr/bin/evil", 20);
    send_batch(&s, 1, &early, 1, NULL, 0);
    const struct vigil_wire_job begins[] = {
        root_begins("4720", 0, "root", "n1", now - 10 * SECOND_NS),
        root_begins("4721", 0, "root", "n1", now - 10 * SECOND_NS),
    };
    send_batch(&s, 2, NULL, 0, begins, G_N_ELEMENTS(begins));
    const struct proc_spec both[] = {
        proc(601, 65534, "x", "4720", "/usr/bin/evil", 5),
        proc(602, 0, "z", "4720", "/bin/solver", 4),
    };
    send_batch(&s, 3, both, 2, NULL, 0);
    assert_text(f,
                "SELECT string_agg(format('%s:%s', r.run_key, coalesce(j.scheduler_job_id, "
                "'none')), ' ' ORDER BY r.run_key) FROM runs r LEFT JOIN jobs j USING (job_id)",
                "x:none y:none z:4720");
    test_sender_close(&s);
}

TEST_PG_MAIN(test_pg_group_setup, test_pg_group_teardown,
             TEST_WITH_TXD_FIXTURE(test_a_run_stays_its_first_users),
             TEST_WITH_TXD_FIXTURE(test_two_users_in_one_batch),
             TEST_WITH_TXD_FIXTURE(test_a_slurm_key_is_the_jobs_users),
             TEST_WITH_TXD_FIXTURE(test_a_users_notice_leaves_roots_job),
             TEST_WITH_TXD_FIXTURE(test_a_run_is_not_filed_under_anothers_job))
