/* vigil — vigild's socket, as every command that speaks to vigild finds
 * it (status, spool) and connects to it. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "vigild_settings.h" /* [daemon] */
#include "vigil/config.h"
#include "vigil/local_protocol.h"
#include "vigil/schema.h"

/* --socket, else $VIGIL_SOCKET, else [daemon] socket of the configuration
 * every vigil program reads, else the default. */
char *vigil_cli_socket_path(const char *from_option, const char *config_path, GError **error)
{
    if (from_option != NULL)
        return g_strdup(from_option);
    const char *from_env = g_getenv("VIGIL_SOCKET");
    if (from_env != NULL && from_env[0] != '\0')
        return g_strdup(from_env);
    /* Without a configuration file (or with one the environment names
     * that is not there), the default socket. */
    char *file = vigil_cli_config_file(config_path);
    if (file == NULL || (config_path == NULL && !g_file_test(file, G_FILE_TEST_EXISTS))) {
        g_free(file);
        return g_strdup(VIGIL_SOCKET_DEFAULT);
    }
    vigil_config *config = vigil_cli_config_load(file, NULL, error);
    char *path = NULL;
    struct vigild_daemon_settings daemon;
    if (config != NULL && vigil_settings_fill(config, &vigild_daemon_keys, &daemon, error)) {
        path = g_steal_pointer(&daemon.socket);
        vigil_settings_clear(&vigild_daemon_keys, &daemon);
    }
    if (config != NULL)
        vigil_config_free(config);
    g_free(file);
    return path;
}

/* A connection to `path` whose reads give up after `answer_timeout_s`, or
 * -1 with errno set. */
static int connect_to(const char *path, int answer_timeout_s)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct timeval timeout = {.tv_sec = answer_timeout_s};
    if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout) == 0 &&
        connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0)
        return fd;
    int saved = errno;
    if (fd >= 0)
        close(fd);
    errno = saved;
    return -1;
}

int vigil_cli_vigild_connect(const char *socket_path, int answer_timeout_s, const char *hint,
                             GError **error)
{
    /* Root asks on root's socket first, which no user's flood can fill. */
    char paths[2][VIGIL_SOCKET_PATH_MAX];
    int n = vigil_local_daemon_sockets(socket_path, geteuid(), paths);
    if (n == 0) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NAMETOOLONG,
                    "socket path %s is too long for vigild's sockets", socket_path);
        return -1;
    }
    int fd = -1;
    for (int i = 0; i < n && fd < 0; i++)
        fd = connect_to(paths[i], answer_timeout_s);
    if (fd < 0) {
        int saved = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
                    "no vigild answers on %s: %s%s", socket_path, g_strerror(saved),
                    hint != NULL ? hint : "");
    }
    return fd;
}
