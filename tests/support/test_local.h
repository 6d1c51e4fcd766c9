/* vigil — the local protocol's messages for its tests: the figures of a
 * valid REGISTER's fixed part and of a valid SUMMARY, and a raw send that
 * passes descriptors the way vigil_local_send does not (several of them,
 * any bytes). The protocol's unit test, the local fuzzer and its seeds use
 * the same ones. Header-only, so that a fuzz target needs no test library. */
#ifndef VIGIL_TEST_LOCAL_H
#define VIGIL_TEST_LOCAL_H

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "vigil/clock.h"
#include "vigil/local_protocol.h"

/* The most descriptors test_local_send_raw passes in one message. */
#define TEST_LOCAL_MAX_FDS 8

/* A REGISTER's fixed part the decoder takes: a ring of 1024 slots on the
 * TSC, no MPI rank yet. */
static inline struct vigil_local_register test_local_register_fixed(void)
{
    return (struct vigil_local_register){
        .ring_slots = 1024,
        .tick_source = VIGIL_TICKS_TSC,
        .start_ticks = 123456789,
        .start_monotonic_ns = 987654321,
        .start_realtime_ns = 1700000000000000000ull,
        .mpi_rank = -1,
    };
}

/* A REGISTER's fixed part as a test client sends it for a ring of its own:
 * `slots` slots in monotonic ns, started at `start_monotonic_ns`, the
 * realtime clock read now, no MPI rank. */
static inline struct vigil_local_register test_local_register_monotonic(uint32_t slots,
                                                                        uint64_t start_monotonic_ns)
{
    return (struct vigil_local_register){
        .ring_slots = slots,
        .tick_source = VIGIL_TICKS_MONOTONIC_NS,
        .start_monotonic_ns = start_monotonic_ns,
        .start_realtime_ns = vigil_clock_realtime_ns(),
        .mpi_rank = -1,
    };
}

/* A SUMMARY the decoder takes: estimated energy, some cycles abnormal, and
 * every activity observed accounted for once. */
static inline struct vigil_local_summary test_local_summary(void)
{
    struct vigil_local_summary s;
    memset(&s, 0, sizeof s);
    s = (struct vigil_local_summary){
        .process_id = 17,
        .activities_drained = 1234,
        .names_drained = 5,
        .cpu_s = 0.25,
        .energy_j = 1.5,
        .energy_flags = VIGIL_LOCAL_ENERGY_ESTIMATED,
        .energy_source = "energy/estimate",
        .cycles = 12,
        .abnormal_cycles = 3,
        .activities_observed = 4210 + 47088 + 12 + 690,
        .activities_forwarded = 4210,
        .activities_dropped = 47088,
        .activities_lost = 12,
        .activities_held = 690,
        .capture_mode = "anomalies",
    };
    return s;
}

/* Sends `length` bytes as one message on `socket_fd`, with the `count`
 * descriptors of `fds` (at most TEST_LOCAL_MAX_FDS) as one SCM_RIGHTS;
 * sendmsg's answer. */
static inline ssize_t test_local_send_raw(int socket_fd, const void *bytes, size_t length,
                                          const int *fds, size_t count)
{
    if (count > TEST_LOCAL_MAX_FDS) {
        errno = E2BIG;
        return -1;
    }
    struct iovec part = {.iov_base = (void *)bytes, .iov_len = length};
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(TEST_LOCAL_MAX_FDS * sizeof(int))];
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {.msg_iov = &part, .msg_iovlen = 1};
    if (count > 0) {
        msg.msg_control = control.bytes;
        msg.msg_controllen = CMSG_SPACE(count * sizeof(int));
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(count * sizeof(int));
        memcpy(CMSG_DATA(c), fds, count * sizeof(int));
    }
    return sendmsg(socket_fd, &msg, MSG_NOSIGNAL);
}

#endif
