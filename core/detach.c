/* vigil — starting a daemon in the background (detach.h). */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib.h>

#include "vigil/detach.h"

int vigil_detach(const char *program, int *ready_fd)
{
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        fprintf(stderr, "%s: cannot detach: %s\n", program, g_strerror(errno));
        return -1;
    }
    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "%s: cannot detach: %s\n", program, g_strerror(errno));
        return -1;
    }
    if (child > 0) {
        close(pipe_fds[1]);
        char message[1024];
        ssize_t n = read(pipe_fds[0], message, sizeof message - 1);
        if (n > 0) {
            message[n] = '\0';
            fprintf(stderr, "%s: %s\n", program, message);
            waitpid(child, NULL, 0);
            _exit(1);
        }
        if (n < 0) {
            fprintf(stderr, "%s: the daemon did not say whether it started\n", program);
            _exit(1);
        }
        _exit(0);
    }
    close(pipe_fds[0]);
    setsid();
    /* An inherited stdout would keep the starter's pipe open for as long
     * as the daemon runs. */
    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
        dup2(null_fd, 0);
        dup2(null_fd, 1);
        if (null_fd > 2)
            close(null_fd);
    }
    if (chdir("/") != 0)
        g_debug("chdir /: %s", g_strerror(errno));
    *ready_fd = pipe_fds[1];
    return 0;
}

void vigil_detach_report(int ready_fd, const char *failure)
{
    if (ready_fd < 0)
        return;
    if (failure != NULL) {
        ssize_t ignored = write(ready_fd, failure, strlen(failure));
        (void)ignored;
    }
    close(ready_fd);
}

void vigil_detach_fail(int ready_fd, const char *log_domain, const char *failure)
{
    if (ready_fd >= 0)
        vigil_detach_report(ready_fd, failure);
    else
        g_log(log_domain, G_LOG_LEVEL_CRITICAL, "%s", failure);
}

void vigil_detach_keep_path(char **path)
{
    if (*path == NULL)
        return;
    char *absolute = g_canonicalize_filename(*path, NULL);
    g_free(*path);
    *path = absolute;
}

gboolean vigil_pid_file_write(const char *path, GError **error)
{
    char *text = g_strdup_printf("%d\n", (int)getpid());
    gboolean ok = g_file_set_contents(path, text, -1, error);
    g_free(text);
    return ok;
}
