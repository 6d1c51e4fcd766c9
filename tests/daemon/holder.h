/* vigil — other users' processes for vigild's tests: forked children that
 * become a uid (nobody, 65534; uid 1) and register a ring of their own
 * over the local protocol, then hold their connection, silent, until the
 * test releases them. Include after <cmocka.h>. */
#ifndef VIGIL_TEST_DAEMON_HOLDER_H
#define VIGIL_TEST_DAEMON_HOLDER_H

#include <stdint.h>
#include <sys/types.h>

#include "test_daemon.h"

/* The other users: nobody, and uid 1 ("daemon" on Debian; any
 * unprivileged uid will do). */
#define NOBODY    65534
#define OTHER_UID 1

/* Starts vigild (test_daemon_start, with `daemon_lines`) in the test's
 * folder `dir`, made reachable by other users first: its socket is there. */
void holder_daemon_start(struct test_daemon *d, const char *dir, const char *daemon_lines);

pid_t fork_or_fail(void);
/* Waits for `pid`, which must exit with `want_status`. */
void wait_exit(pid_t pid, int want_status);
/* In a child: become `uid` for good (its group too, no supplementary
 * ones); root stays root. Exits 70 when it cannot. */
void become(uid_t uid);

/* Two pipes between the test and its children: the children write to
 * `up` and read from `down`. */
void pipes_open(int up[2], int down[2]);
/* fork_or_fail; the child keeps only its ends of the pipes (up[1], down[0]). */
pid_t fork_with_pipes(int up[2], int down[2]);
/* In the test, once its children are forked: it keeps only its ends
 * (up[0], down[1]). */
void pipes_keep_test_ends(int up[2], int down[2]);

/* A pipe, and a child (fork_or_fail: 0 in the child) that became `uid`
 * and writes to it: `*end` is the child's write end in the child, the
 * test's read end in the test (the other end closed in each). */
pid_t fork_as_writer(uid_t uid, int *end);
/* The same with a child that reads from the pipe, and the test that
 * writes to it. */
pid_t fork_as_reader(uid_t uid, int *end);

/* A child that registers a ring of `slots` on the socket at `socket_path`
 * (client_start, waiting for the answer), pushes `n` activities and
 * exits; returns its pid once it exited 0. */
pid_t run_client(const char *socket_path, uint32_t slots, uint64_t n);

/* In a child: waits until the test closes the other end of `release_fd`
 * (or writes nothing more to it), then exits 0. */
G_GNUC_NORETURN void exit_when_released(int release_fd);

/* dd under the preload library against `d` as `uid`, in DIR/home (made
 * for `uid`): `count` blocks of 512 bytes, its JSON report in
 * DIR/home/report.json (`*report_path`: g_free it), and `vars` more in its
 * environment ("NAME=value", NULL-terminated, or NULL). Returns its pid
 * once it exited 0. */
pid_t dd_as(const struct test_daemon *d, uid_t uid, int count, const char *const *vars,
            char **report_path);

/* What vigild answered a holder's REGISTER. */
struct answer {
    int type; /* enum vigil_local_type; -1 when none came */
    uint64_t process_id;
    char reason[512];            /* REFUSED's text */
    char run_key[256];           /* the run vigild keeps it in, when it says so */
    uint64_t start_monotonic_ns; /* the start its REGISTER gave */
};

struct holder {
    pid_t pid;
    int release; /* closing it lets the child exit */
    struct answer answer;
};

/* A child that becomes `uid`, registers a ring in run `run_key` with its
 * own start (CLOCK_MONOTONIC at the REGISTER), tells the answer, and holds
 * its connection open, silent, until released. */
void holder_start(struct holder *h, const char *socket_path, uid_t uid, const char *run_key);
/* The same, saying it started at `start_monotonic_ns`. */
void holder_start_at(struct holder *h, const char *socket_path, uid_t uid, const char *run_key,
                     uint64_t start_monotonic_ns);
/* The same, saying it belongs to scheduler job `job` (its SLURM_JOB_ID). */
void holder_start_in_job(struct holder *h, const char *socket_path, uid_t uid, const char *run_key,
                         const char *job);
/* Lets it exit, and waits for it. */
void holder_release(struct holder *h);

#endif
