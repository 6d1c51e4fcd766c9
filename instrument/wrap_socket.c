/* vigil — calls that move data through a socket. They are counted like
 * read and write; a socket has no path, so its bytes go to the operation's
 * counters and records, with no file. */
#include <sys/socket.h>
#include <sys/uio.h>

#include "preload.h"

PRELOAD_REAL_SLOT(send);
PRELOAD_REAL_SLOT(recv);
PRELOAD_REAL_SLOT(sendto);
PRELOAD_REAL_SLOT(recvfrom);
PRELOAD_REAL_SLOT(sendmsg);
PRELOAD_REAL_SLOT(recvmsg);

/* Bytes a message's iovec array asks for. Read only after the kernel
 * accepted the message (the call did not fail): before that it may point
 * anywhere. */
static uint64_t msg_bytes(const struct msghdr *msg, ssize_t ret)
{
    uint64_t total = 0;
    if (ret < 0 || msg == NULL || msg->msg_iov == NULL)
        return 0;
    for (size_t i = 0; i < (size_t)msg->msg_iovlen; i++)
        total += msg->msg_iov[i].iov_len;
    return total;
}

PRELOAD_WRAP(ssize_t, send, (int fd, const void *buf, size_t len, int flags), (fd, buf, len, flags),
             preload_end_data(&call, VIGIL_OP_POSIX_SEND, fd, ret, len, VIGIL_OFFSET_UNKNOWN))

PRELOAD_WRAP(ssize_t, recv, (int fd, void *buf, size_t len, int flags), (fd, buf, len, flags),
             preload_end_data(&call, VIGIL_OP_POSIX_RECV, fd, ret, len, VIGIL_OFFSET_UNKNOWN))

/* With _GNU_SOURCE, glibc declares the address arguments as transparent
 * unions (__CONST_SOCKADDR_ARG, __SOCKADDR_ARG): the definitions match. */
PRELOAD_WRAP(ssize_t, sendto,
             (int fd, const void *buf, size_t len, int flags, __CONST_SOCKADDR_ARG addr,
              socklen_t addrlen),
             (fd, buf, len, flags, addr, addrlen),
             preload_end_data(&call, VIGIL_OP_POSIX_SENDTO, fd, ret, len, VIGIL_OFFSET_UNKNOWN))

PRELOAD_WRAP(ssize_t, recvfrom,
             (int fd, void *restrict buf, size_t len, int flags, __SOCKADDR_ARG addr,
              socklen_t *restrict addrlen),
             (fd, buf, len, flags, addr, addrlen),
             preload_end_data(&call, VIGIL_OP_POSIX_RECVFROM, fd, ret, len, VIGIL_OFFSET_UNKNOWN))

PRELOAD_WRAP(ssize_t, sendmsg, (int fd, const struct msghdr *msg, int flags), (fd, msg, flags),
             preload_end_data(&call, VIGIL_OP_POSIX_SENDMSG, fd, ret, msg_bytes(msg, ret),
                              VIGIL_OFFSET_UNKNOWN))

PRELOAD_WRAP(ssize_t, recvmsg, (int fd, struct msghdr *msg, int flags), (fd, msg, flags),
             preload_end_data(&call, VIGIL_OP_POSIX_RECVMSG, fd, ret, msg_bytes(msg, ret),
                              VIGIL_OFFSET_UNKNOWN))
