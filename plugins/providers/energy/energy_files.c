/* vigil — the energy sources' small files: opened once, read with pread,
 * with errors that say what a node's administrator needs to know. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "energy_source.h"

static gboolean is_counter_file(const char *path)
{
    return g_str_has_suffix(path, "/energy_uj");
}

/* EACCES on energy_uj is the usual case on a node where vigild is not
 * root: the message says so, since the file's mode alone does not. */
static void set_file_error(GError **error, int code, const char *path, int errno_value)
{
    if ((errno_value == EACCES || errno_value == EPERM) && is_counter_file(path))
        g_set_error(error, VIGIL_PROVIDER_ERROR, code,
                    "permission denied on %s (Linux makes energy_uj root-only since 5.10, "
                    "against the PLATYPUS side channel)",
                    path);
    else
        g_set_error(error, VIGIL_PROVIDER_ERROR, code, "cannot read %s: %s", path,
                    g_strerror(errno_value));
}

int energy_open_file(const char *path, int code, GError **error)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        set_file_error(error, code, path, errno);
    return fd;
}

gboolean energy_pread_text(int fd, const char *path, char *text, gsize size, int code,
                           GError **error)
{
    if (vigil_provider_pread_all(fd, text, size) < 0) {
        set_file_error(error, code, path, errno);
        return FALSE;
    }
    return TRUE;
}

gboolean energy_parse_u64(const char *text, const char *path, int code, guint64 *value,
                          GError **error)
{
    if (!vigil_provider_parse_u64(text, value)) {
        g_set_error(error, VIGIL_PROVIDER_ERROR, code, "%s does not hold a whole number: \"%.40s\"",
                    path, text);
        return FALSE;
    }
    return TRUE;
}
