/* connect_spy — preloaded after libvigil-preload.so, it reports on stderr
 * every Unix socket made and every connect() tried through libc, so that a
 * test can tell whether the library tried to reach vigild at all. The real
 * calls and the report go straight to the kernel: neither libc's functions
 * nor the library's wrappers are involved. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static void say(const char *what, const char *detail)
{
    char line[256];
    int n = snprintf(line, sizeof line, "spy: %s %s\n", what, detail);
    if (n > 0)
        syscall(SYS_write, 2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

int socket(int domain, int type, int protocol)
{
    if (domain == AF_UNIX)
        say("socket", "AF_UNIX");
    return (int)syscall(SYS_socket, domain, type, protocol);
}

int connect(int fd, const struct sockaddr *address, socklen_t length)
{
    if (address != NULL && address->sa_family == AF_UNIX) {
        const struct sockaddr_un *un = (const struct sockaddr_un *)address;
        say("connect", un->sun_path);
    }
    return (int)syscall(SYS_connect, fd, address, length);
}
