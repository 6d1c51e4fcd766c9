/* Unit tests of vigild's socket server on its own (daemon/local_server.c): no
 * struct vigild, only a processes table and a struct vigild_server_ops of
 * the test's, which records what the server asks of the daemon. Clients
 * talk over a real socket in a temporary folder; vigild_server_catch_up
 * handles what they sent, so no main loop runs and nothing waits. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib/gstdio.h>

#include "test_support.h"
#include "processes.h"
#include "local_server.h"
#include "vigild_settings.h"
#include "vigil/clock.h"
#include "vigil/local_protocol.h"
#include "vigil/ring.h"
#include "test_local.h"
#include "test_main.h"

/* What the server asked of the "daemon". */
struct fake_daemon {
    int signals_taken;
    int statuses;
    int32_t finished_pid;
    int jobs_noted;
    uid_t job_uid;
    char *job_id;
    gboolean jobs_ready; /* FALSE: note_job refuses without an error */
    int ranks;
    int32_t rank;
    uint64_t rank_process_id;
};

static void fake_take_signals(void *user)
{
    ((struct fake_daemon *)user)->signals_taken++;
}

static char *fake_status_json(void *user, uid_t viewer_uid, int32_t finished_pid)
{
    (void)viewer_uid;
    struct fake_daemon *f = user;
    f->statuses++;
    f->finished_pid = finished_pid;
    return g_strdup_printf("{\"fake\":%d}", (int)finished_pid);
}

static void fake_summary(void *user, const struct vigild_process *p,
                         struct vigil_local_summary *out)
{
    (void)user;
    (void)p;
    memset(out, 0, sizeof *out);
}

static gboolean fake_note_job(void *user, const struct vigil_local_job_info *info, uid_t uid,
                              GError **error)
{
    struct fake_daemon *f = user;
    f->jobs_noted++;
    f->job_uid = uid;
    g_free(f->job_id);
    f->job_id = g_strndup(info->job, info->fixed.job_bytes);
    if (!f->jobs_ready)
        return FALSE;
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM, "job %s refused by the test", f->job_id);
    return FALSE;
}

static void fake_rank_known(void *user, const struct vigild_process *p)
{
    struct fake_daemon *f = user;
    f->ranks++;
    f->rank = p->mpi_rank;
    f->rank_process_id = p->id;
}

static const struct vigild_server_ops fake_ops = {
    .take_signals = fake_take_signals,
    .status_json = fake_status_json,
    .summary = fake_summary,
    .note_job = fake_note_job,
    .rank_known = fake_rank_known,
};

struct fixture {
    char *dir, *path;
    struct vigild_daemon_settings settings; /* [daemon]: the limits */
    struct vigild_processes processes;
    struct fake_daemon fake;
    struct vigild_server *server;
    GPtrArray *rings;
};

static int setup(void **state)
{
    struct fixture *f = g_new0(struct fixture, 1);
    f->dir = g_dir_make_tmp("vigil-server-XXXXXX", NULL);
    assert_non_null(f->dir);
    f->path = g_build_filename(f->dir, "vigild.sock", NULL);
    f->settings.max_processes = 1;
    f->settings.max_connections_per_uid = 16;
    f->settings.max_processes_per_uid = 16;
    f->settings.unregistered_timeout_ms = 60000;
    f->settings.fd_reserve = 64;
    f->settings.refusal_log_interval_s = 60;
    f->settings.status_requests_per_s = 2;
    f->settings.status_requests_burst = 10;
    vigild_processes_init(&f->processes, 4);
    f->rings = g_ptr_array_new_with_free_func((GDestroyNotify)vigil_ring_close);
    GError *error = NULL;
    f->server =
        vigild_server_new(f->path, &f->settings, &f->processes, &fake_ops, &f->fake, &error);
    if (f->server == NULL)
        fail_msg("cannot serve %s: %s", f->path, error->message);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    vigild_server_free(f->server);
    vigild_processes_clear(&f->processes);
    g_ptr_array_free(f->rings, TRUE);
    g_rmdir(f->dir);
    g_free(f->fake.job_id);
    g_free(f->path);
    g_free(f->dir);
    g_free(f);
    return 0;
}

static int client_connect(const struct fixture *f)
{
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    g_strlcpy(addr.sun_path, f->path, sizeof addr.sun_path);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    return fd;
}

static void client_send(int fd, enum vigil_local_type type, const void *payload, size_t bytes,
                        int pass_fd)
{
    struct vigil_error err = {{0}};
    if (!vigil_local_send(fd, type, payload, bytes, pass_fd, &err))
        fail_msg("send: %s", err.message);
}

/* The answer the server left on the socket: its type, its payload as text
 * (g_free it), and the descriptor it carried. */
static char *client_answer(int fd, enum vigil_local_type *type, int *passed)
{
    static char buffer[VIGIL_LOCAL_MAX_BYTES];
    struct vigil_error err = {{0}};
    ssize_t n = vigil_local_receive(fd, buffer, type, passed, &err);
    if (n < 0)
        fail_msg("no answer: %s", err.message);
    return g_strndup(buffer, (gsize)n);
}

/* Sends a REGISTER with a fresh ring of its own (kept by the fixture). */
static void client_register(struct fixture *f, int fd)
{
    struct vigil_error err = {{0}};
    struct vigil_ring *ring =
        vigil_ring_create(VIGIL_RING_MIN_SLOTS, VIGIL_TICKS_MONOTONIC_NS, &err);
    if (ring == NULL)
        fail_msg("ring: %s", err.message);
    g_ptr_array_add(f->rings, ring);
    static char buffer[VIGIL_LOCAL_MAX_BYTES];
    struct vigil_local_register fixed =
        test_local_register_monotonic(VIGIL_RING_MIN_SLOTS, vigil_clock_monotonic_ns());
    size_t length =
        vigil_local_encode_register(buffer, &fixed, "test-server", "/", "", "run-s", 0, NULL);
    client_send(fd, VIGIL_LOCAL_REGISTER, buffer, length, vigil_ring_fd(ring));
}

/* A status request is answered with what the ops' status_json made, after
 * the pending signals were taken. */
static void test_status_comes_from_the_ops(void **state)
{
    struct fixture *f = *state;
    int fd = client_connect(f);
    struct vigil_local_status_request request = {.finished_pid = 4242};
    client_send(fd, VIGIL_LOCAL_STATUS_REQUEST, &request, sizeof request, -1);
    vigild_server_catch_up(f->server);
    assert_int_equal(f->fake.signals_taken, 1);
    assert_int_equal(f->fake.statuses, 1);
    assert_int_equal(f->fake.finished_pid, 4242);
    enum vigil_local_type type;
    int json_fd = -1;
    char *payload = client_answer(fd, &type, &json_fd);
    assert_int_equal(type, VIGIL_LOCAL_STATUS);
    assert_true(json_fd >= 0);
    char json[64] = {0};
    assert_true(pread(json_fd, json, sizeof json - 1, 0) > 0);
    assert_string_equal(json, "{\"fake\":4242}");
    close(json_fd);
    g_free(payload);
    close(fd);
}

static void send_job(int fd, const char *job)
{
    static char buffer[VIGIL_LOCAL_MAX_BYTES];
    struct vigil_error err = {{0}};
    size_t length = vigil_local_encode_job(buffer, true, job, "", "someone", 1000, "node1", &err);
    if (length == 0)
        fail_msg("encode: %s", err.message);
    client_send(fd, VIGIL_LOCAL_JOB, buffer, length, -1);
}

/* A job notice goes to the ops' note_job with the client's uid; a refusal
 * without an error says the daemon is not ready, one with an error says
 * the error's message. */
static void test_job_notices_go_to_the_ops(void **state)
{
    struct fixture *f = *state;
    int fd = client_connect(f);
    send_job(fd, "77");
    vigild_server_catch_up(f->server);
    assert_int_equal(f->fake.jobs_noted, 1);
    assert_int_equal(f->fake.job_uid, getuid());
    assert_string_equal(f->fake.job_id, "77");
    enum vigil_local_type type;
    char *why = client_answer(fd, &type, NULL);
    assert_int_equal(type, VIGIL_LOCAL_REFUSED);
    assert_string_equal(why, "vigild is not ready for job notices");
    g_free(why);
    close(fd);

    f->fake.jobs_ready = TRUE;
    fd = client_connect(f);
    send_job(fd, "78");
    vigild_server_catch_up(f->server);
    assert_int_equal(f->fake.jobs_noted, 2);
    why = client_answer(fd, &type, NULL);
    assert_int_equal(type, VIGIL_LOCAL_REFUSED);
    assert_string_equal(why, "job 78 refused by the test");
    g_free(why);
    close(fd);
}

/* Registrations go into the processes table the server was given, up to
 * max_processes as vigild_server_configure last set it; a rank goes to the
 * ops' rank_known. */
static void test_registrations_and_ranks(void **state)
{
    struct fixture *f = *state;
    int first = client_connect(f);
    client_register(f, first);
    vigild_server_catch_up(f->server);
    enum vigil_local_type type;
    char *answer = client_answer(first, &type, NULL);
    assert_int_equal(type, VIGIL_LOCAL_REGISTERED);
    g_free(answer);
    assert_int_equal(vigild_processes_running(&f->processes), 1);

    int second = client_connect(f);
    client_register(f, second);
    vigild_server_catch_up(f->server);
    char *why = client_answer(second, &type, NULL);
    assert_int_equal(type, VIGIL_LOCAL_REFUSED);
    assert_string_equal(why, "vigild serves at most 1 processes (max_processes)");
    g_free(why);
    assert_int_equal(f->processes.refused_total, 1);
    close(second);

    f->settings.max_processes = 2;
    vigild_server_configure(f->server, &f->settings);
    int third = client_connect(f);
    client_register(f, third);
    vigild_server_catch_up(f->server);
    answer = client_answer(third, &type, NULL);
    assert_int_equal(type, VIGIL_LOCAL_REGISTERED);
    g_free(answer);
    assert_int_equal(vigild_processes_running(&f->processes), 2);

    struct vigil_local_rank rank = {.rank = 3, .size = 8};
    client_send(first, VIGIL_LOCAL_RANK, &rank, sizeof rank, -1);
    vigild_server_catch_up(f->server);
    assert_int_equal(f->fake.ranks, 1);
    assert_int_equal(f->fake.rank, 3);
    const struct vigild_process *p = vigild_processes_get(&f->processes, f->fake.rank_process_id);
    assert_non_null(p);
    assert_int_equal(p->mpi_size, 8);
    close(first);
    close(third);
}

#define WITH_FIXTURE(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

TEST_MAIN(WITH_FIXTURE(test_status_comes_from_the_ops),
          WITH_FIXTURE(test_job_notices_go_to_the_ops), WITH_FIXTURE(test_registrations_and_ranks))
