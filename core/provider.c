/* vigil — helpers every statistics provider uses. */
#include <errno.h>
#include <unistd.h>

#include "vigil/provider.h"

GQuark vigil_provider_error_quark(void)
{
    return g_quark_from_static_string("vigil-provider-error-quark");
}

gssize vigil_provider_pread_all(int fd, char *buffer, gsize size)
{
    gsize done = 0;
    while (done + 1 < size) {
        ssize_t n = pread(fd, buffer + done, size - 1 - done, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        done += (gsize)n;
    }
    buffer[done] = '\0';
    return (gssize)done;
}

char *vigil_provider_path(const char *root, const char *relative)
{
    return g_build_filename(root != NULL && root[0] != '\0' ? root : "/", relative, NULL);
}
