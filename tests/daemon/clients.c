/* vigil — test clients of vigild that speak the local protocol directly. */
#define _GNU_SOURCE
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clients.h"
#include "test_local.h"
#include "vigil/clock.h"
#include "vigil/local_protocol.h"
#include "vigil/ontology.h"

int client_connect(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

struct vigil_ring *client_register(int fd, uint32_t slots, bool wait_answer)
{
    struct vigil_error err;
    struct vigil_ring *ring = vigil_ring_create(slots, VIGIL_TICKS_MONOTONIC_NS, &err);
    if (ring == NULL)
        _exit(90);
    static char buffer[VIGIL_LOCAL_MAX_BYTES];
    struct vigil_local_register fixed =
        test_local_register_monotonic(slots, vigil_clock_monotonic_ns());
    char *argv[] = {"test-client", "--flag", NULL};
    size_t length =
        vigil_local_encode_register(buffer, &fixed, "test-client", "/", "job-7", "run-7", 2, argv);
    if (!vigil_local_send(fd, VIGIL_LOCAL_REGISTER, buffer, length, vigil_ring_fd(ring), &err))
        _exit(90);
    if (wait_answer) {
        enum vigil_local_type type;
        if (vigil_local_receive(fd, buffer, &type, NULL, &err) < 0 ||
            type != VIGIL_LOCAL_REGISTERED)
            _exit(90);
    }
    return ring;
}

struct vigil_ring *client_start(const char *path, uint32_t slots, bool wait_answer)
{
    int fd = client_connect(path);
    if (fd < 0)
        _exit(92);
    return client_register(fd, slots, wait_answer);
}

void client_push(struct vigil_ring *ring, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t now = vigil_clock_monotonic_ns();
        struct vigil_activity a = {
            .record_type = VIGIL_RECORD_ACTIVITY,
            .layer = VIGIL_LAYER_POSIX,
            .op = VIGIL_OP_POSIX_WRITE,
            .start_ns = now,
            .end_ns = now,
            .offset_bytes = VIGIL_OFFSET_UNKNOWN,
            .bytes_asked = 1,
            .result = 1,
            .thread_id = (uint32_t)gettid(),
        };
        if (!vigil_ring_push(ring, &a))
            _exit(91);
    }
}
