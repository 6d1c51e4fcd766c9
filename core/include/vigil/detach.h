/* vigil — starting a daemon in the background.
 *
 * The parent returns only once the daemon says it serves (status 0) or why
 * it cannot (status 1, the reason printed on stderr), so that a script that
 * starts it can use it at once and no test needs to wait and hope. */
#ifndef VIGIL_DETACH_H
#define VIGIL_DETACH_H

#include <glib.h>

/* Forks; the child carries on in a new session with stdin and stdout on
 * /dev/null (stderr stays: it is the log) and its cwd at /, and gets in
 * *ready_fd the pipe to report on. The parent never returns. -1 (with the
 * reason on stderr) when it cannot fork. */
int vigil_detach(const char *program, int *ready_fd);

/* The child's word: NULL for "serving", else why it could not start. Closes
 * the pipe. Does nothing for a ready_fd < 0 (the daemon did not detach). */
void vigil_detach_report(int ready_fd, const char *failure);

/* Why the start failed, said once: to the waiting parent, which prints it
 * on the stderr the daemon shares with it, when the daemon detached;
 * logged as critical in `log_domain` (the daemon's G_LOG_DOMAIN) when it
 * did not. (Both, as before, printed it twice.) */
void vigil_detach_fail(int ready_fd, const char *log_domain, const char *failure);

/* Replaces a relative *path (NULL: none) by its absolute form, so that it
 * still names the file after the chdir of detaching. */
void vigil_detach_keep_path(char **path);

/* Writes the calling process's pid, a line, into `path`. */
gboolean vigil_pid_file_write(const char *path, GError **error);

#endif
