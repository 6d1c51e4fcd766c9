/* vigil — vigild's socket, as every command that speaks to vigild finds
 * it (status, spool) and connects to it. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "commands.h"
#include "vigil-build.h"
#include "vigil/config.h"
#include "vigil/local_protocol.h"
#include "vigil/plugin.h"
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
    char *default_path = NULL;
    if (config_path == NULL) {
        const char *env_config = g_getenv("VIGIL_CONFIG");
        default_path = env_config != NULL && env_config[0] != '\0'
                           ? g_strdup(env_config)
                           : g_build_filename(VIGIL_SYSCONF_DIR, "vigil.conf", NULL);
        if (!g_file_test(default_path, G_FILE_TEST_EXISTS)) {
            g_free(default_path);
            return g_strdup(VIGIL_SOCKET_DEFAULT);
        }
        config_path = default_path;
    }
    vigil_config *config = vigil_config_new();
    char *plugin_dir = vigil_cli_plugin_dir();
    vigil_plugin_registry *registry = vigil_plugin_registry_new(plugin_dir);
    vigil_config_set_section_resolver(config, vigil_plugin_registry_resolve_section, registry);
    char *path = NULL;
    if (vigil_schema_declare(config, error) && vigil_config_load(config, config_path, error))
        path = g_strdup(vigil_config_get_string(config, "daemon", "socket"));
    vigil_config_free(config);
    vigil_plugin_registry_free(registry);
    g_free(plugin_dir);
    g_free(default_path);
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
