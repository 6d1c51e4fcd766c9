/* vigil — other users' processes holding a registration (holder.h). */
#define _GNU_SOURCE
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib.h>

#include "clients.h"
#include "holder.h"
#include "test_local.h"
#include "vigil/clock.h"
#include "vigil/local_protocol.h"

void holder_daemon_start(struct test_daemon *d, const char *dir, const char *daemon_lines)
{
    assert_int_equal(chmod(dir, 0755), 0);
    test_daemon_start(d, dir, daemon_lines, NULL);
}

pid_t fork_or_fail(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    return pid;
}

void pipes_open(int up[2], int down[2])
{
    assert_int_equal(pipe(up), 0);
    assert_int_equal(pipe(down), 0);
}

pid_t fork_with_pipes(int up[2], int down[2])
{
    pid_t pid = fork_or_fail();
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
    }
    return pid;
}

void pipes_keep_test_ends(int up[2], int down[2])
{
    close(up[1]);
    close(down[0]);
}

void wait_exit(pid_t pid, int want_status)
{
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != want_status)
        fail_msg("child %d ended with status 0x%x, not exit %d", (int)pid, status, want_status);
}

void become(uid_t uid)
{
    if (uid == 0)
        return;
    if (setgroups(0, NULL) != 0 || setgid((gid_t)uid) != 0 || setuid(uid) != 0)
        _exit(70);
}

/* A pipe, and a child that became `uid`: the child keeps end `child_end`
 * of it (0 to read, 1 to write), the test the other; `*end` is the one
 * the calling process keeps. */
static pid_t fork_with_pipe(uid_t uid, int child_end, int *end)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork_or_fail();
    int kept = pid == 0 ? child_end : 1 - child_end;
    close(fds[1 - kept]);
    *end = fds[kept];
    if (pid == 0)
        become(uid);
    return pid;
}

pid_t fork_as_writer(uid_t uid, int *end)
{
    return fork_with_pipe(uid, 1, end);
}

pid_t fork_as_reader(uid_t uid, int *end)
{
    return fork_with_pipe(uid, 0, end);
}

pid_t run_client(const char *socket_path, uint32_t slots, uint64_t n)
{
    pid_t pid = fork_or_fail();
    if (pid == 0) {
        struct vigil_ring *ring = client_start(socket_path, slots, true);
        client_push(ring, n);
        _exit(0);
    }
    wait_exit(pid, 0);
    return pid;
}

void exit_when_released(int release_fd)
{
    char c;
    while (read(release_fd, &c, 1) > 0)
        ;
    _exit(0);
}

pid_t dd_as(const struct test_daemon *d, uid_t uid, int count, const char *const *vars,
            char **report_path)
{
    char *home = g_build_filename(d->dir, "home", NULL);
    assert_int_equal(g_mkdir_with_parents(home, 0700), 0);
    assert_int_equal(chown(home, uid, (gid_t)uid), 0);
    *report_path = g_build_filename(home, "report.json", NULL);
    GPtrArray *all = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(all, g_strconcat("VIGIL_REPORT=", *report_path, NULL));
    g_ptr_array_add(all, g_strdup("VIGIL_REPORT_FORMAT=json"));
    for (const char *const *v = vars; v != NULL && *v != NULL; v++)
        g_ptr_array_add(all, g_strdup(*v));
    g_ptr_array_add(all, NULL);
    char **env = test_daemon_preload_env(d, (const char *const *)all->pdata);
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
    g_strfreev(env);
    g_free(count_arg);
    g_free(of);
    g_ptr_array_free(all, TRUE);
    g_free(home);
    return pid;
}

/* The release ends the test holds: a child closes those of the others, or
 * a holder would never see its own release. */
static int held_releases[16];
static int held_count;

/* In the child: what vigild answered. */
static void read_answer(int fd, char *buffer, struct answer *a)
{
    struct vigil_error err;
    enum vigil_local_type type;
    ssize_t n = vigil_local_receive(fd, buffer, &type, NULL, &err);
    if (n < 0)
        return;
    a->type = (int)type;
    if (type == VIGIL_LOCAL_REFUSED) {
        memcpy(a->reason, buffer, MIN((size_t)n, sizeof a->reason - 1));
    } else if (type == VIGIL_LOCAL_REGISTERED) {
        struct vigil_local_registered r;
        if (vigil_local_decode_fixed(type, buffer, (size_t)n, &r, &err))
            a->process_id = r.process_id;
    } else if (type == VIGIL_LOCAL_REGISTERED_APART &&
               !vigil_local_decode_registered_apart(buffer, (size_t)n, &a->process_id, a->run_key,
                                                    a->reason, sizeof a->reason, &err)) {
        a->type = -1;
    }
}

static void holder_run(const char *socket_path, uid_t uid, const char *run_key, const char *job,
                       uint64_t start_monotonic_ns, int result_fd, int release_fd)
{
    become(uid);
    struct answer a = {.type = -1};
    int fd = client_connect(socket_path);
    struct vigil_error err;
    struct vigil_ring *ring = vigil_ring_create(64, VIGIL_TICKS_MONOTONIC_NS, &err);
    static char buffer[VIGIL_LOCAL_MAX_BYTES];
    struct vigil_local_register fixed = test_local_register_monotonic(
        64, start_monotonic_ns != 0 ? start_monotonic_ns : vigil_clock_monotonic_ns());
    a.start_monotonic_ns = fixed.start_monotonic_ns;
    char *argv[] = {"holder", NULL};
    size_t length =
        vigil_local_encode_register(buffer, &fixed, "holder", "/", job, run_key, 1, argv);
    if (fd >= 0 && ring != NULL &&
        vigil_local_send(fd, VIGIL_LOCAL_REGISTER, buffer, length, vigil_ring_fd(ring), &err))
        read_answer(fd, buffer, &a);
    if (write(result_fd, &a, sizeof a) != (ssize_t)sizeof a)
        _exit(71);
    exit_when_released(release_fd);
}

static void holder_spawn(struct holder *h, const char *socket_path, uid_t uid, const char *run_key,
                         const char *job, uint64_t start_monotonic_ns)
{
    int result[2], release[2];
    pipes_open(result, release);
    h->pid = fork_with_pipes(result, release);
    if (h->pid == 0) {
        for (int i = 0; i < held_count; i++)
            close(held_releases[i]);
        holder_run(socket_path, uid, run_key, job, start_monotonic_ns, result[1], release[0]);
    }
    pipes_keep_test_ends(result, release);
    h->release = release[1];
    assert_true(held_count < (int)G_N_ELEMENTS(held_releases));
    held_releases[held_count++] = h->release;
    assert_int_equal(read(result[0], &h->answer, sizeof h->answer), (ssize_t)sizeof h->answer);
    close(result[0]);
}

void holder_start_at(struct holder *h, const char *socket_path, uid_t uid, const char *run_key,
                     uint64_t start_monotonic_ns)
{
    holder_spawn(h, socket_path, uid, run_key, "", start_monotonic_ns);
}

void holder_start(struct holder *h, const char *socket_path, uid_t uid, const char *run_key)
{
    holder_spawn(h, socket_path, uid, run_key, "", 0);
}

void holder_start_in_job(struct holder *h, const char *socket_path, uid_t uid, const char *run_key,
                         const char *job)
{
    holder_spawn(h, socket_path, uid, run_key, job, 0);
}

void holder_release(struct holder *h)
{
    for (int i = 0; i < held_count; i++)
        if (held_releases[i] == h->release)
            held_releases[i] = held_releases[--held_count];
    close(h->release);
    wait_exit(h->pid, 0);
}
