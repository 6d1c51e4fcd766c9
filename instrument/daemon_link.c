/* vigil — the preload library's side of its conversation with vigild, the
 * node daemon (the protocol: core/include/vigil/local_protocol.h).
 *
 * At start, and in every forked child, the process registers: it connects
 * to vigild's socket and sends REGISTER with its ring's memfd, and does not
 * wait for the answer, so that a slow daemon never holds the program up by
 * more than the 5 ms send timeout (which also bounds connect() when the
 * daemon's backlog is full). After MPI_Init it sends its rank. Just before
 * its report (an MPI rank: at MPI_Finalize) it asks for a summary and waits
 * at most 100 ms for it, reading on the way whatever vigild answered to the
 * registration. After the report it sends REPORT, its exit status and the
 * report's JSON, and does not wait for an answer (vigild only answers a
 * report it refuses).
 *
 * Standalone is normal (a laptop, a node without vigild): a failure only
 * leaves a reason for the report, and nothing is printed.
 *
 * Everything here runs with the thread's in-call guard set, so that the
 * library's own socket calls go straight to libc, neither counted nor
 * recorded. Nothing here uses the heap: the summary may be asked for on the
 * way out through _exit, from a signal handler that interrupted malloc. */
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "exit_report.h"
#include "preload.h"
#include "vigil/local_protocol.h"

#define SEND_TIMEOUT_MS    5
#define SUMMARY_TIMEOUT_MS 100
/* Bounds the summary's reading loop even if the daemon floods us. */
#define SUMMARY_MAX_MESSAGES 64

static struct {
    /* Read at set-up: a forked child uses what the program started with,
     * not what it may have done to its environment since. */
    char path[sizeof(((struct sockaddr_un *)NULL)->sun_path)];
    char setup_problem[160]; /* why VIGIL_SOCKET rules out connecting, or "" */
    char job[256];
    /* The connection, or -1, and its identity: a program that closes every
     * descriptor may have put one of its own files under the number. */
    int fd;
    dev_t dev;
    ino_t ino;
    atomic_int summary_taken;
    struct preload_link_figures figures;
    /* The run vigild keeps the process in when it is not the one named
     * (REGISTERED_APART: that run is another user's); "" otherwise. */
    char run_key_apart[VIGIL_RUN_KEY_MAX + 1];
    /* [insight] as vigild sent it after the summary (INSIGHT). */
    bool insight_taken;
    struct vigil_insight_thresholds insight;
} conn = {.fd = -1};

/* REGISTER is built here, and the answers are read here. */
static _Alignas(8) unsigned char message[VIGIL_LOCAL_MAX_BYTES];

/* strerror may allocate or translate; glibc's English texts do neither. */
static const char *errno_text(int errno_value)
{
    const char *text = strerrordesc_np(errno_value);
    return text != NULL ? text : "unknown error";
}

__attribute__((format(printf, 1, 2))) static void set_reason(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(conn.figures.reason, sizeof conn.figures.reason, fmt, ap);
    va_end(ap);
}

static void reset_figures(void)
{
    memset(&conn.figures, 0, sizeof conn.figures);
    conn.run_key_apart[0] = '\0';
    conn.figures.state = PRELOAD_LINK_STANDALONE;
    conn.figures.energy_j = NAN;
    conn.figures.cpu_s = NAN;
}

static bool connection_is_ours(void)
{
    struct stat st;
    return conn.fd >= 0 && fstat(conn.fd, &st) == 0 && st.st_dev == conn.dev &&
           st.st_ino == conn.ino;
}

/* A socket connected to `path`, moved out of the numbers the program
 * expects its own open() calls to return, or -1 with the reason set. */
static int connect_to(const char *path)
{
    int first = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (first < 0) {
        set_reason("cannot make a socket to reach vigild (%s)", errno_text(errno));
        return -1;
    }
    int fd = fcntl(first, F_DUPFD_CLOEXEC, preload.private_fd_floor);
    int dup_errno = errno;
    close(first);
    if (fd < 0) {
        set_reason("no descriptor free at or above %d for vigild's connection (%s)",
                   preload.private_fd_floor, errno_text(dup_errno));
        return -1;
    }
    /* For a Unix socket, connect() waits on a full backlog with the send
     * timeout: with it, a daemon that does not accept costs 5 ms, once. */
    struct timeval timeout = {.tv_sec = 0, .tv_usec = SEND_TIMEOUT_MS * 1000};
    if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout) != 0) {
        set_reason("cannot set a send timeout on vigild's connection (%s)", errno_text(errno));
        close(fd);
        return -1;
    }
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    memcpy(address.sun_path, path, strlen(path) + 1);
    int ret;
    do
        ret = connect(fd, (const struct sockaddr *)&address, sizeof address);
    while (ret != 0 && errno == EINTR);
    if (ret != 0) {
        int connect_errno = errno;
        if (connect_errno == EAGAIN || connect_errno == EINPROGRESS)
            set_reason("vigild did not accept within %d ms", SEND_TIMEOUT_MS);
        else if (connect_errno == ENOENT || connect_errno == ECONNREFUSED ||
                 connect_errno == ENOTSOCK)
            set_reason("no vigild at %s (%s)", path, errno_text(connect_errno));
        else
            set_reason("cannot reach vigild at %s (%s)", path, errno_text(connect_errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Root tries root's socket first (vigil_local_daemon_sockets): another
 * user may keep the shared one's backlog full. The reason, when none
 * answers, is the shared socket's. */
static int connect_to_vigild(void)
{
    char paths[2][VIGIL_SOCKET_PATH_MAX];
    int n = vigil_local_daemon_sockets(conn.path, geteuid(), paths);
    if (n == 0) {
        set_reason("VIGIL_SOCKET %s is too long for vigild's sockets", conn.path);
        return -1;
    }
    int fd = -1;
    for (int i = 0; i < n && fd < 0; i++)
        fd = connect_to(paths[i]);
    return fd;
}

/* Connects and sends REGISTER (with `flags`); the answer is read with the
 * summary's. */
static void send_register(uint32_t flags)
{
    conn.fd = -1;
    if (conn.setup_problem[0] != '\0') {
        set_reason("%s", conn.setup_problem);
        return;
    }
    int fd = connect_to_vigild();
    if (fd < 0)
        return;

    static char program[4096], cwd[4096];
    ssize_t length = readlink("/proc/self/exe", program, sizeof program - 1);
    if (length > 0)
        program[length] = '\0';
    else
        snprintf(program, sizeof program, "%s",
                 preload.argc > 0 && preload.argv != NULL && preload.argv[0] != NULL
                     ? preload.argv[0]
                     : "");
    if (getcwd(cwd, sizeof cwd) == NULL)
        cwd[0] = '\0'; /* removed, or too long: vigild learns nothing rather than a wrong one */
    const struct vigil_local_register fixed = {
        .ring_slots = vigil_ring_slot_count(preload.ring),
        .tick_source = (uint32_t)vigil_ring_tick_source(preload.ring),
        .start_ticks = preload.start.ticks,
        .start_monotonic_ns = preload.start.ns,
        .start_realtime_ns = preload.start_realtime_ns,
        .mpi_rank = -1,
        .flags = flags,
    };
    size_t bytes = vigil_local_encode_register(message, &fixed, program, cwd, conn.job,
                                               preload.run_key, preload.argc, preload.argv);
    struct stat st;
    if (!vigil_local_send(fd, VIGIL_LOCAL_REGISTER, message, bytes, vigil_ring_fd(preload.ring),
                          NULL)) {
        int send_errno = errno;
        if (send_errno == EAGAIN)
            set_reason("vigild did not accept within %d ms", SEND_TIMEOUT_MS);
        else
            set_reason("cannot register with vigild at %s (%s)", conn.path, errno_text(send_errno));
        close(fd);
        return;
    }
    if (fstat(fd, &st) != 0) {
        set_reason("cannot identify vigild's connection (%s)", errno_text(errno));
        close(fd);
        return;
    }
    conn.fd = fd;
    conn.dev = st.st_dev;
    conn.ino = st.st_ino;
    conn.figures.state = PRELOAD_LINK_CONNECTED;
    set_reason("no summary was asked of vigild");
}

static void register_process(void)
{
    reset_figures();
    atomic_store(&conn.summary_taken, 0);
    send_register(0);
}

/* vigild closed our connection: it stopped or was killed, and may be back.
 * Asked only on the way to the rank, the summary and the report, never on
 * the hot path: a restarted vigild takes the ring back on its own
 * (daemon/process_state.c), and this tells it the connection is ours. */
static bool take_answer(enum vigil_local_type type, size_t bytes);

static void reattach_if_vigild_restarted(void)
{
    struct pollfd p = {.fd = conn.fd, .events = POLLRDHUP};
    if (poll(&p, 1, 0) != 1 || (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) == 0)
        return;
    /* A vigild that refused us closed the connection too: it said so
     * first, and then there is no coming back. */
    for (int messages = 0; messages < SUMMARY_MAX_MESSAGES; messages++) {
        struct pollfd q = {.fd = conn.fd, .events = POLLIN};
        enum vigil_local_type type;
        ssize_t bytes;
        if (poll(&q, 1, 0) != 1 ||
            (bytes = vigil_local_receive(conn.fd, message, &type, NULL, NULL)) < 0)
            break;
        if (!take_answer(type, (size_t)bytes) && conn.figures.state == PRELOAD_LINK_STANDALONE)
            return;
    }
    close(conn.fd);
    conn.fd = -1;
    send_register(VIGIL_LOCAL_REATTACH);
    if (conn.fd < 0)
        conn.figures.state = PRELOAD_LINK_STANDALONE;
}

void preload_link_start(void)
{
    const char *path = getenv("VIGIL_SOCKET");
    if (path == NULL || path[0] == '\0')
        path = VIGIL_SOCKET_DEFAULT;
    conn.setup_problem[0] = '\0';
    if (strcmp(path, "off") == 0)
        snprintf(conn.setup_problem, sizeof conn.setup_problem,
                 "VIGIL_SOCKET=off: vigild not contacted");
    else if (strlen(path) >= sizeof conn.path)
        snprintf(conn.setup_problem, sizeof conn.setup_problem,
                 "VIGIL_SOCKET is %zu bytes long, more than a Unix socket path holds (%zu)",
                 strlen(path), sizeof conn.path - 1);
    else
        memcpy(conn.path, path, strlen(path) + 1);
    const char *job = getenv("SLURM_JOB_ID");
    snprintf(conn.job, sizeof conn.job, "%s", job != NULL ? job : "");
    register_process();
}

void preload_link_after_fork(bool ring_ok)
{
    /* The inherited connection is the parent's: anything the child sent on
     * it would be taken for the parent's. Closing our copy leaves the
     * parent's open. */
    if (connection_is_ours())
        close(conn.fd);
    conn.fd = -1;
    if (ring_ok) {
        register_process();
    } else {
        reset_figures();
        set_reason("vigil is disabled in this process");
    }
}

void preload_link_rank(int rank, int size)
{
    if (conn.fd < 0 || atomic_load(&conn.summary_taken))
        return;
    int saved_in_call = preload_thread.in_call, saved_errno = errno;
    preload_thread.in_call = 1;
    const struct vigil_local_rank payload = {.rank = rank, .size = size};
    /* A failure shows when the summary is asked for. */
    if (connection_is_ours())
        reattach_if_vigild_restarted();
    if (connection_is_ours())
        vigil_local_send(conn.fd, VIGIL_LOCAL_RANK, &payload, sizeof payload, -1, NULL);
    preload_thread.in_call = saved_in_call;
    errno = saved_errno;
}

/* Takes in vigild's summary. */
static void accept_summary(const struct vigil_local_summary *s)
{
    struct preload_link_figures *f = &conn.figures;
    f->state = PRELOAD_LINK_SUMMARY;
    f->ranks_with_summary = 1;
    f->process_id = s->process_id;
    f->activities_drained = s->activities_drained;
    f->names_drained = s->names_drained;
    f->gaps = s->gaps;
    f->dropped = s->dropped;
    f->anomalies = s->anomalies;
    f->cpu_s = s->cpu_s;
    f->energy_flags = s->energy_flags;
    f->cycles = s->cycles;
    f->abnormal_cycles = s->abnormal_cycles;
    f->capture_observed = s->activities_observed;
    f->capture_forwarded = s->activities_forwarded;
    f->capture_dropped = s->activities_dropped;
    f->capture_lost = s->activities_lost;
    f->capture_held = s->activities_held;
    snprintf(f->capture_mode, sizeof f->capture_mode, "%s", s->capture_mode);
    f->reason[0] = '\0';
    snprintf(f->energy_source, sizeof f->energy_source, "%s", s->energy_source);
    if (isfinite(s->energy_j)) {
        f->energy_j = s->energy_j;
        f->energy_note[0] = '\0';
    } else {
        f->energy_j = NAN;
        if (!isnan(s->energy_j))
            snprintf(f->energy_note, sizeof f->energy_note, "vigild gave an energy of %f",
                     s->energy_j);
        else
            snprintf(f->energy_note, sizeof f->energy_note, "%s",
                     s->energy_note[0] != '\0' ? s->energy_note : "vigild gave no reason");
    }
}

/* Handles one message read while waiting for the summary; false once there
 * is nothing more to wait for. */
static bool take_answer(enum vigil_local_type type, size_t bytes)
{
    struct vigil_error err;
    switch (type) {
    case VIGIL_LOCAL_REGISTERED: {
        struct vigil_local_registered r;
        if (!vigil_local_decode_fixed(type, message, bytes, &r, &err)) {
            set_reason("vigild sent %s", err.message);
            return false;
        }
        conn.figures.process_id = r.process_id;
        return true;
    }
    case VIGIL_LOCAL_REGISTERED_APART: {
        if (!vigil_local_decode_registered_apart(message, bytes, &conn.figures.process_id,
                                                 conn.run_key_apart, NULL, 0, &err)) {
            set_reason("vigild sent %s", err.message);
            return false;
        }
        return true;
    }
    case VIGIL_LOCAL_REFUSED: {
        char why[200];
        if (vigil_local_decode_text(type, message, bytes, why, sizeof why, &err))
            set_reason("vigild refused the registration: %s", why);
        else
            set_reason("vigild refused the registration (%s)", err.message);
        conn.figures.state = PRELOAD_LINK_STANDALONE;
        return false;
    }
    case VIGIL_LOCAL_SUMMARY: {
        struct vigil_local_summary s;
        if (!vigil_local_decode_fixed(type, message, bytes, &s, &err)) {
            set_reason("vigild sent %s", err.message);
            return false;
        }
        accept_summary(&s);
        return true; /* its INSIGHT comes next, unless vigild is older than it */
    }
    case VIGIL_LOCAL_INSIGHT:
        /* Thresholds it refuses leave the defaults, as no INSIGHT would. */
        conn.insight_taken = vigil_local_decode_fixed(type, message, bytes, &conn.insight, &err);
        return false;
    default:
        set_reason("vigild answered with a %s message", vigil_local_type_name(type));
        return false;
    }
}

static void ask_for_summary(void)
{
    uint64_t deadline_ns = vigil_clock_monotonic_ns() + (uint64_t)SUMMARY_TIMEOUT_MS * 1000000u;
    /* When the request could not be sent, nothing more will come: only what
     * is already queued is read (REFUSED, say, which explains why). */
    bool sent = vigil_local_send(conn.fd, VIGIL_LOCAL_SUMMARY_REQUEST, NULL, 0, -1, NULL);
    if (sent)
        set_reason("vigild did not answer within %d ms", SUMMARY_TIMEOUT_MS);
    else if (errno == EAGAIN)
        set_reason("vigild did not take the summary request within %d ms", SEND_TIMEOUT_MS);
    else
        set_reason("vigild went away");
    for (int messages = 0; messages < SUMMARY_MAX_MESSAGES;) {
        uint64_t now_ns = vigil_clock_monotonic_ns();
        int wait_ms =
            !sent || now_ns >= deadline_ns ? 0 : (int)((deadline_ns - now_ns + 999999u) / 1000000u);
        struct pollfd p = {.fd = conn.fd, .events = POLLIN};
        int ready = poll(&p, 1, wait_ms);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            return; /* the reason already says why */
        messages++;
        enum vigil_local_type type;
        struct vigil_error err;
        ssize_t bytes = vigil_local_receive(conn.fd, message, &type, NULL, &err);
        if (bytes >= 0) {
            if (!take_answer(type, (size_t)bytes))
                return;
            continue;
        }
        int receive_errno = errno;
        if (conn.figures.state == PRELOAD_LINK_SUMMARY)
            return; /* the summary is in: only its thresholds are missing */
        if (receive_errno == ECONNRESET) {
            /* Reported once, before the messages still queued: read on. */
            set_reason("vigild went away");
            continue;
        }
        if (receive_errno == 0 || receive_errno == EPIPE)
            set_reason("vigild went away");
        else if (receive_errno == EPROTO)
            set_reason("vigild sent %s", err.message);
        else
            set_reason("cannot read vigild's answer (%s)", errno_text(receive_errno));
        return;
    }
}

bool preload_link_insight(struct vigil_insight_thresholds *out)
{
    if (conn.insight_taken)
        *out = conn.insight;
    else
        vigil_insight_defaults(out);
    return conn.insight_taken;
}

void preload_link_summary(void)
{
    if (conn.fd < 0 || atomic_exchange(&conn.summary_taken, 1))
        return;
    int saved_in_call = preload_thread.in_call, saved_errno = errno;
    preload_thread.in_call = 1;
    if (connection_is_ours())
        reattach_if_vigild_restarted();
    if (conn.fd < 0 || conn.figures.state == PRELOAD_LINK_STANDALONE) {
        /* Refused, or vigild is gone for good: the reason says which. */
    } else if (connection_is_ours()) {
        ask_for_summary();
        /* A vigild this process has just registered with again has read
         * its ring by now, and asked for the names if it lacks them: they
         * go in before the process ends, and vigild reads them at its end. */
        preload_names_check();
    } else {
        conn.fd = -1;
        set_reason("the program closed its connection to vigild");
    }
    /* The connection stays open: vigild sees the process end when the
     * kernel closes it, and drains what the process writes until then. */
    preload_thread.in_call = saved_in_call;
    errno = saved_errno;
}

void preload_link_leave(void)
{
    if (conn.fd < 0)
        return;
    int saved_in_call = preload_thread.in_call, saved_errno = errno;
    preload_thread.in_call = 1;
    if (connection_is_ours()) {
        for (int messages = 0; messages < SUMMARY_MAX_MESSAGES; messages++) {
            struct pollfd p = {.fd = conn.fd, .events = POLLIN};
            enum vigil_local_type type;
            if (poll(&p, 1, 0) <= 0 ||
                (vigil_local_receive(conn.fd, message, &type, NULL, NULL) < 0 &&
                 errno != ECONNRESET))
                break;
        }
    }
    preload_thread.in_call = saved_in_call;
    errno = saved_errno;
}

bool preload_link_connected(void)
{
    return conn.fd >= 0 && conn.figures.state != PRELOAD_LINK_STANDALONE;
}

void preload_link_report(int exit_code, int json_fd, uint64_t json_bytes)
{
    if (!preload_link_connected())
        return;
    int saved_in_call = preload_thread.in_call, saved_errno = errno;
    preload_thread.in_call = 1;
    const struct vigil_local_report fixed = {
        .exit_code = exit_code,
        .json_bytes = json_fd >= 0 ? json_bytes : 0,
    };
    /* The send timeout bounds this; a failure loses the stored report,
     * which nobody on the way out could act on anyway. */
    if (connection_is_ours())
        reattach_if_vigild_restarted();
    if (connection_is_ours())
        vigil_local_send(conn.fd, VIGIL_LOCAL_REPORT, &fixed, sizeof fixed,
                         fixed.json_bytes > 0 ? json_fd : -1, NULL);
    preload_thread.in_call = saved_in_call;
    errno = saved_errno;
}

const char *preload_link_run_key(void)
{
    return conn.run_key_apart[0] != '\0' ? conn.run_key_apart : preload.run_key;
}

void preload_link_figures(struct preload_link_figures *out)
{
    *out = conn.figures;
    if (out->state != PRELOAD_LINK_SUMMARY)
        snprintf(out->energy_note, sizeof out->energy_note, "%s", out->reason);
}
