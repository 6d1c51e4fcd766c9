/* vigil — job notices (vigil/job_notice.h): one connection, one JOB
 * message, one answer, all under one deadline. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "vigil/job_notice.h"
#include "vigil/local_protocol.h"

static bool failed(char *err, size_t err_bytes, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool failed(char *err, size_t err_bytes, const char *fmt, ...)
{
    if (err != NULL && err_bytes > 0) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(err, err_bytes, fmt, args);
        va_end(args);
    }
    return false;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Gives the socket's send and receive timeouts what is left until the
 * deadline: Linux applies the send timeout to a connect that waits for
 * room in a full backlog, too. False with errno ETIMEDOUT when nothing is
 * left. */
static bool time_left(int fd, int64_t deadline_ms)
{
    int64_t left = deadline_ms - now_ms();
    if (left <= 0) {
        errno = ETIMEDOUT;
        return false;
    }
    struct timeval tv = {.tv_sec = left / 1000, .tv_usec = (left % 1000) * 1000};
    return setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) == 0 &&
           setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0;
}

static bool timed_out(int errno_value)
{
    return errno_value == ETIMEDOUT || errno_value == EAGAIN || errno_value == EWOULDBLOCK ||
           errno_value == EINPROGRESS;
}

bool vigil_job_notice_send(const char *socket_path, const struct vigil_job_notice *n, char *err,
                           size_t err_bytes)
{
    const char *path =
        socket_path != NULL && socket_path[0] != '\0' ? socket_path : VIGIL_SOCKET_DEFAULT;
    if (n == NULL || n->job_id == NULL)
        return failed(err, err_bytes, "a job notice needs a job id");
    /* The message and its answer: both fit in one local message. */
    _Alignas(8) unsigned char buffer[VIGIL_LOCAL_MAX_BYTES];
    struct vigil_error problem = {{0}};
    size_t payload_bytes = vigil_local_encode_job(buffer, n->begin, n->job_id, n->step_id, n->user,
                                                  n->uid, n->node_list, &problem);
    if (payload_bytes == 0)
        return failed(err, err_bytes, "job %s: %s", n->job_id, problem.message);

    /* Root's notices (the prolog's, SPANK's) go to root's socket first:
     * another user may keep the shared one's backlog full. */
    char paths[2][VIGIL_SOCKET_PATH_MAX];
    int candidates = vigil_local_daemon_sockets(path, geteuid(), paths);
    if (candidates == 0)
        return failed(err, err_bytes, "the socket path %s is too long for vigild's sockets", path);
    const int64_t deadline_ms = now_ms() + VIGIL_JOB_NOTICE_TIMEOUT_MS;
    int fd = -1, connect_errno = 0;
    for (int i = 0; i < candidates && fd < 0; i++) {
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        memcpy(addr.sun_path, paths[i], strlen(paths[i]) + 1);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return failed(err, err_bytes, "cannot make a socket: %s", strerror(errno));
        int rc;
        do
            rc = time_left(fd, deadline_ms) ? connect(fd, (struct sockaddr *)&addr, sizeof addr)
                                            : -1;
        while (rc != 0 && errno == EINTR);
        if (rc != 0) {
            connect_errno = errno;
            close(fd);
            fd = -1;
        }
    }
    if (fd < 0)
        return failed(err, err_bytes, "no vigild answers on %s: %s", path,
                      timed_out(connect_errno) ? "it did not accept within 1 s"
                                               : strerror(connect_errno));
    bool ok = false;
    enum vigil_local_type type;
    if (!time_left(fd, deadline_ms) ||
        !vigil_local_send(fd, VIGIL_LOCAL_JOB, buffer, payload_bytes, -1, &problem)) {
        int saved = errno;
        failed(err, err_bytes, "vigild on %s: cannot send the job notice: %s", path,
               timed_out(saved) ? "no room within 1 s" : strerror(saved));
    } else {
        ssize_t got;
        do
            got = time_left(fd, deadline_ms)
                      ? vigil_local_receive(fd, buffer, &type, NULL, &problem)
                      : -1;
        while (got < 0 && errno == EINTR);
        if (got < 0 && timed_out(errno))
            failed(err, err_bytes, "vigild on %s did not answer the job notice within 1 s", path);
        else if (got < 0 && errno == 0)
            failed(err, err_bytes,
                   "vigild on %s closed the connection without answering the job notice (a "
                   "vigild older than job notices?)",
                   path);
        else if (got < 0)
            failed(err, err_bytes, "vigild on %s: %s", path, problem.message);
        else if (type == VIGIL_LOCAL_REFUSED)
            failed(err, err_bytes, "vigild on %s refused the job notice: %.*s", path, (int)got,
                   (const char *)buffer);
        else if (type != VIGIL_LOCAL_JOB_NOTED || got != 0)
            failed(err, err_bytes, "vigild on %s answered the job notice with a %s message", path,
                   vigil_local_type_name(type) != NULL ? vigil_local_type_name(type) : "unknown");
        else
            ok = true;
    }
    close(fd);
    return ok;
}
