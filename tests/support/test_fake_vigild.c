/* vigil — a fake vigild for tests (see test_fake_vigild.h). */
#define _GNU_SOURCE /* accept4, struct ucred */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_fake_vigild.h"
#include "vigil/ring.h"

#define FIRST_PROCESS_ID 17

struct connection {
    int fd;
    struct vigil_ring *ring;
    int ring_fd;
    struct test_fake_vigild_client *client;
};

struct test_fake_vigild {
    struct test_fake_vigild_settings settings;
    char *path;
    int listen_fd;
    int backlog_filler; /* NO_ACCEPT: the connection that fills the backlog */
    int stop_pipe[2];
    GThread *thread;
    bool stopped;
    GPtrArray *connections; /* of struct connection *, open ones */
    GPtrArray *clients;     /* of struct test_fake_vigild_client *, all */
    uint64_t next_process_id;
    char *failure; /* the first thing that went wrong in the thread, for the test */
    _Alignas(8) unsigned char buffer[VIGIL_LOCAL_MAX_BYTES];
};

__attribute__((format(printf, 2, 3))) static void note_failure(struct test_fake_vigild *d,
                                                               const char *fmt, ...)
{
    if (d->failure != NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    d->failure = g_strdup_vprintf(fmt, ap);
    va_end(ap);
}

static void drained_one(const struct vigil_ring_record *record, void *user)
{
    struct test_fake_vigild_client *c = user;
    if (record->type == VIGIL_RECORD_ACTIVITY) {
        c->activities++;
        if (record->activity.op <= VIGIL_OP_MAX_ID)
            c->ops[record->activity.op]++;
    } else {
        c->names++;
    }
}

static void drain(struct connection *conn, unsigned flags)
{
    if (conn->ring == NULL)
        return;
    struct vigil_ring_drain_report report;
    do {
        memset(&report, 0, sizeof report);
        vigil_ring_drain(conn->ring, 4096, flags, NULL, drained_one, conn->client, &report);
        conn->client->gaps += report.corrupt + report.torn;
        conn->client->dropped += report.dropped;
    } while (report.slots > 0 && !report.header_corrupt);
}

static void close_connection(struct test_fake_vigild *d, struct connection *conn)
{
    /* What the process wrote before it ended is still in the ring. */
    drain(conn, VIGIL_RING_PRODUCER_GONE);
    conn->client->closed = true;
    if (conn->ring != NULL)
        vigil_ring_close(conn->ring);
    if (conn->ring_fd >= 0)
        close(conn->ring_fd);
    close(conn->fd);
    g_ptr_array_remove(d->connections, conn);
    g_free(conn);
}

static void send_or_note(struct test_fake_vigild *d, struct connection *conn,
                         enum vigil_local_type type, const void *payload, size_t bytes)
{
    struct vigil_error err = {{0}};
    /* A client that has gone already (EPIPE) is no fault of its own. */
    if (!vigil_local_send(conn->fd, type, payload, bytes, -1, &err) && errno != EPIPE)
        note_failure(d, "pid %d: %s", (int)conn->client->pid, err.message);
}

static void take_register(struct test_fake_vigild *d, struct connection *conn, size_t bytes, int fd)
{
    struct test_fake_vigild_client *c = conn->client;
    struct vigil_local_process_info info;
    struct vigil_error err = {{0}};
    if (fd < 0) {
        c->problem = g_strdup("a registration without a descriptor");
        return;
    }
    conn->ring_fd = fd;
    if (!vigil_local_decode_register(d->buffer, bytes, &info, &err)) {
        c->problem = g_strdup(err.message);
        return;
    }
    c->registered = true;
    c->fixed = info.fixed;
    c->program = g_strndup(info.program, info.fixed.program_bytes);
    c->cwd = g_strndup(info.cwd, info.fixed.cwd_bytes);
    c->job = g_strndup(info.job, info.fixed.job_bytes);
    c->run_key = g_strndup(info.run_key, info.fixed.run_bytes);
    for (const char *a = info.argv; a < info.argv + info.fixed.argv_bytes; a += strlen(a) + 1)
        g_ptr_array_add(c->argv, g_strdup(a));
    struct stat st;
    if (fstat(fd, &st) == 0)
        c->ring_inode = st.st_ino;
    conn->ring = vigil_ring_attach(fd, &err);
    if (conn->ring == NULL) {
        c->problem = g_strdup_printf("its ring is refused: %s", err.message);
    } else {
        c->ring_attached = true;
        c->ring_slots = vigil_ring_slot_count(conn->ring);
    }
    if (d->settings.mode == TEST_FAKE_VIGILD_REFUSE) {
        const char *why = d->settings.refusal != NULL ? d->settings.refusal : "refused";
        send_or_note(d, conn, VIGIL_LOCAL_REFUSED, why, strlen(why));
        close_connection(d, conn);
        return;
    }
    c->process_id = d->next_process_id++;
    struct vigil_local_registered answer = {.process_id = c->process_id};
    send_or_note(d, conn, VIGIL_LOCAL_REGISTERED, &answer, sizeof answer);
}

static void take_summary_request(struct test_fake_vigild *d, struct connection *conn)
{
    struct test_fake_vigild_client *c = conn->client;
    c->summary_requests++;
    if (d->settings.mode == TEST_FAKE_VIGILD_HANG_UP)
        close_connection(d, conn);
    if (d->settings.mode != TEST_FAKE_VIGILD_ANSWER)
        return;
    drain(conn, 0);
    struct vigil_local_summary s;
    memset(&s, 0, sizeof s);
    s.process_id = c->process_id;
    s.activities_drained = c->activities;
    s.names_drained = c->names;
    s.gaps = c->gaps;
    s.dropped = c->dropped;
    s.cpu_s = 0.5;
    s.energy_j = d->settings.energy_j;
    s.energy_flags = d->settings.energy_flags;
    g_strlcpy(s.energy_source, d->settings.energy_source ? d->settings.energy_source : "",
              sizeof s.energy_source);
    g_strlcpy(s.energy_note, d->settings.energy_note ? d->settings.energy_note : "",
              sizeof s.energy_note);
    const struct test_fake_vigild_capture *capture = &d->settings.capture;
    if (capture->mode != NULL) {
        g_strlcpy(s.capture_mode, capture->mode, sizeof s.capture_mode);
        s.cycles = capture->cycles;
        s.abnormal_cycles = capture->abnormal_cycles;
        s.activities_forwarded = capture->forwarded;
        s.activities_dropped = capture->dropped;
        s.activities_lost = capture->lost;
        s.activities_held = capture->held;
    } else {
        g_strlcpy(s.capture_mode, "anomalies", sizeof s.capture_mode);
        s.activities_held = c->activities;
    }
    s.activities_observed =
        s.activities_forwarded + s.activities_dropped + s.activities_lost + s.activities_held;
    if (d->settings.answer != NULL)
        d->settings.answer(c, &s, d->settings.answer_user);
    c->answered_activities = s.activities_drained;
    send_or_note(d, conn, VIGIL_LOCAL_SUMMARY, &s, sizeof s);
    if (d->settings.insight != NULL)
        send_or_note(d, conn, VIGIL_LOCAL_INSIGHT, d->settings.insight,
                     sizeof *d->settings.insight);
}

/* A REPORT: the exit status, and the JSON from its memfd, read whole. */
static void take_report(struct test_fake_vigild *d, struct connection *conn, size_t bytes, int fd)
{
    struct test_fake_vigild_client *c = conn->client;
    struct vigil_local_report r;
    struct vigil_error err = {{0}};
    c->reports++;
    if (!vigil_local_decode_fixed(VIGIL_LOCAL_REPORT, d->buffer, bytes, &r, &err)) {
        note_failure(d, "pid %d: %s", (int)c->pid, err.message);
        return;
    }
    c->exit_code = r.exit_code;
    if ((fd >= 0) != (r.json_bytes > 0)) {
        note_failure(d, "pid %d: a report of %llu bytes %s a descriptor", (int)c->pid,
                     (unsigned long long)r.json_bytes, fd >= 0 ? "with" : "without");
        return;
    }
    if (fd < 0)
        return;
    int seals = fcntl(fd, F_GET_SEALS);
    int needed = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
    c->report_sealed = seals >= 0 && (seals & needed) == needed;
    g_free(c->report_json);
    c->report_json = g_malloc0(r.json_bytes + 1);
    if (pread(fd, c->report_json, r.json_bytes, 0) != (ssize_t)r.json_bytes)
        note_failure(d, "pid %d: cannot read the %llu bytes of its report", (int)c->pid,
                     (unsigned long long)r.json_bytes);
}

/* Reads one message; false when the connection is gone. */
static bool take_message(struct test_fake_vigild *d, struct connection *conn)
{
    struct test_fake_vigild_client *c = conn->client;
    enum vigil_local_type type;
    int fd = -1;
    struct vigil_error err = {{0}};
    ssize_t bytes = vigil_local_receive(conn->fd, d->buffer, &type, &fd, &err);
    if (bytes < 0 && errno == ECONNRESET) {
        c->reset = true;
        return true; /* what it sent before is still to be read, then the end */
    }
    if (bytes < 0) {
        if (errno != 0)
            note_failure(d, "pid %d sent %s", (int)c->pid, err.message);
        close_connection(d, conn);
        return false;
    }
    if (!c->registered && c->problem == NULL && type != VIGIL_LOCAL_REGISTER)
        note_failure(d, "pid %d began with a %s message", (int)c->pid, vigil_local_type_name(type));
    switch (type) {
    case VIGIL_LOCAL_REGISTER:
        if (c->registered || c->problem != NULL)
            note_failure(d, "pid %d registered twice", (int)c->pid);
        take_register(d, conn, (size_t)bytes, fd);
        /* REFUSE closed it. */
        return g_ptr_array_find(d->connections, conn, NULL);
    case VIGIL_LOCAL_RANK: {
        struct vigil_local_rank r;
        if (vigil_local_decode_fixed(type, d->buffer, (size_t)bytes, &r, &err)) {
            c->rank = r.rank;
            c->size = r.size;
        } else {
            note_failure(d, "pid %d: %s", (int)c->pid, err.message);
        }
        break;
    }
    case VIGIL_LOCAL_SUMMARY_REQUEST:
        if (!vigil_local_decode_fixed(type, d->buffer, (size_t)bytes, NULL, &err))
            note_failure(d, "pid %d: %s", (int)c->pid, err.message);
        take_summary_request(d, conn);
        /* HANG_UP closed it. */
        return g_ptr_array_find(d->connections, conn, NULL);
    case VIGIL_LOCAL_REPORT:
        if (c->reports > 0)
            note_failure(d, "pid %d sent a second report", (int)c->pid);
        take_report(d, conn, (size_t)bytes, fd);
        if (fd >= 0)
            close(fd);
        return true;
    default:
        note_failure(d, "pid %d sent a %s message", (int)c->pid, vigil_local_type_name(type));
        break;
    }
    if (fd >= 0 && type != VIGIL_LOCAL_REGISTER) {
        note_failure(d, "pid %d sent a descriptor with a %s message", (int)c->pid,
                     vigil_local_type_name(type));
        close(fd);
    }
    return true;
}

static void take_connection(struct test_fake_vigild *d)
{
    int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
        note_failure(d, "accept: %s", g_strerror(errno));
        return;
    }
    struct test_fake_vigild_client *c = g_new0(struct test_fake_vigild_client, 1);
    c->argv = g_ptr_array_new_with_free_func(g_free);
    c->rank = c->size = -1;
    c->exit_code = -2;
    struct ucred cred;
    socklen_t length = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0) {
        c->pid = cred.pid;
        c->uid = cred.uid;
    }
    g_ptr_array_add(d->clients, c);
    struct connection *conn = g_new0(struct connection, 1);
    conn->fd = fd;
    conn->ring_fd = -1;
    conn->client = c;
    g_ptr_array_add(d->connections, conn);
}

static gpointer serve(gpointer user)
{
    struct test_fake_vigild *d = user;
    bool stopping = false;
    for (;;) {
        guint n = d->connections->len;
        struct pollfd *fds = g_new0(struct pollfd, n + 2);
        struct connection **conns = g_new0(struct connection *, n);
        /* Once asked to stop, what is already there is handled, then no more. */
        fds[0] = (struct pollfd){.fd = stopping ? -1 : d->stop_pipe[0], .events = POLLIN};
        fds[1] = (struct pollfd){
            .fd = d->settings.mode == TEST_FAKE_VIGILD_NO_ACCEPT ? -1 : d->listen_fd,
            .events = POLLIN,
        };
        for (guint i = 0; i < n; i++) {
            conns[i] = g_ptr_array_index(d->connections, i);
            fds[i + 2] = (struct pollfd){.fd = conns[i]->fd, .events = POLLIN};
        }
        int ready = poll(fds, n + 2, stopping ? 0 : -1);
        if (ready < 0 && errno != EINTR)
            note_failure(d, "poll: %s", g_strerror(errno));
        bool done = ready <= 0 && stopping;
        if (ready > 0) {
            if (fds[0].revents)
                stopping = true;
            if (fds[1].revents)
                take_connection(d);
            for (guint i = 0; i < n; i++)
                if (fds[i + 2].revents)
                    take_message(d, conns[i]);
        }
        g_free(conns);
        g_free(fds);
        if (done || (ready < 0 && errno != EINTR))
            break;
    }
    return NULL;
}

struct test_fake_vigild *test_fake_vigild_start(const char *socket_path,
                                                const struct test_fake_vigild_settings *settings)
{
    struct test_fake_vigild *d = g_new0(struct test_fake_vigild, 1);
    d->settings = *settings;
    d->path = g_strdup(socket_path);
    d->connections = g_ptr_array_new();
    d->clients = g_ptr_array_new();
    d->next_process_id = FIRST_PROCESS_ID;
    d->backlog_filler = -1;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof address.sun_path)
        fail_msg("%s: too long for a socket path", socket_path);
    strcpy(address.sun_path, socket_path);
    d->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    assert_true(d->listen_fd >= 0);
    if (bind(d->listen_fd, (struct sockaddr *)&address, sizeof address) != 0)
        fail_msg("cannot bind %s: %s", socket_path, g_strerror(errno));
    int backlog = settings->mode == TEST_FAKE_VIGILD_NO_ACCEPT ? 0 : 64;
    assert_int_equal(listen(d->listen_fd, backlog), 0);
    if (settings->mode == TEST_FAKE_VIGILD_NO_ACCEPT) {
        /* A backlog of 0 holds one connection: with ours in it, it is full,
         * and a client's connect() waits for room. */
        d->backlog_filler = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        assert_true(d->backlog_filler >= 0);
        if (connect(d->backlog_filler, (struct sockaddr *)&address, sizeof address) != 0)
            fail_msg("cannot fill the backlog of %s: %s", socket_path, g_strerror(errno));
    }
    assert_int_equal(pipe2(d->stop_pipe, O_CLOEXEC), 0);
    d->thread = g_thread_new("fake-vigild", serve, d);
    return d;
}

void test_fake_vigild_stop(struct test_fake_vigild *d)
{
    if (d->stopped)
        return;
    assert_int_equal(write(d->stop_pipe[1], "x", 1), 1);
    g_thread_join(d->thread);
    d->stopped = true;
    if (d->failure != NULL)
        fail_msg("the fake vigild: %s", d->failure);
}

guint test_fake_vigild_count(const struct test_fake_vigild *d)
{
    return d->clients->len;
}

const struct test_fake_vigild_client *test_fake_vigild_client(const struct test_fake_vigild *d,
                                                              guint i)
{
    return i < d->clients->len ? g_ptr_array_index(d->clients, i) : NULL;
}

const struct test_fake_vigild_client *test_fake_vigild_find(const struct test_fake_vigild *d,
                                                            pid_t pid)
{
    for (guint i = 0; i < d->clients->len; i++) {
        const struct test_fake_vigild_client *c = g_ptr_array_index(d->clients, i);
        if (c->pid == pid)
            return c;
    }
    return NULL;
}

void test_fake_vigild_free(struct test_fake_vigild *d)
{
    if (!d->stopped) {
        assert_int_equal(write(d->stop_pipe[1], "x", 1), 1);
        g_thread_join(d->thread);
    }
    while (d->connections->len > 0)
        close_connection(d, g_ptr_array_index(d->connections, 0));
    for (guint i = 0; i < d->clients->len; i++) {
        struct test_fake_vigild_client *c = g_ptr_array_index(d->clients, i);
        g_free(c->problem);
        g_free(c->program);
        g_free(c->cwd);
        g_free(c->job);
        g_free(c->run_key);
        g_free(c->report_json);
        g_ptr_array_free(c->argv, TRUE);
        g_free(c);
    }
    g_ptr_array_free(d->clients, TRUE);
    g_ptr_array_free(d->connections, TRUE);
    if (d->backlog_filler >= 0)
        close(d->backlog_filler);
    close(d->listen_fd);
    close(d->stop_pipe[0]);
    close(d->stop_pipe[1]);
    unlink(d->path);
    g_free(d->path);
    g_free(d->failure);
    g_free(d);
}
