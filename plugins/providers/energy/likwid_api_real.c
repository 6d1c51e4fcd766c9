/* vigil — the likwid table filled from liblikwid, the only file linked with
 * it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "likwid_api.h"

static int real_msr_device_errno(int cpu)
{
    char path[64];
    snprintf(path, sizeof path, "/dev/cpu/%d/msr", cpu);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

static bool real_file_exists(const char *path)
{
    struct stat st;
    return path != NULL && stat(path, &st) == 0;
}

static bool real_setuid_root(const char *path)
{
    struct stat st;
    return path != NULL && stat(path, &st) == 0 && st.st_uid == 0 && (st.st_mode & S_ISUID);
}

static uid_t real_euid(void)
{
    return geteuid();
}

const struct likwid_api likwid_api_real = {
    .topology_init = topology_init,
    .get_cpuTopology = get_cpuTopology,
    .get_cpuInfo = get_cpuInfo,
    .topology_finalize = topology_finalize,
    .init_configuration = init_configuration,
    .get_configuration = get_configuration,
    .destroy_configuration = destroy_configuration,
    .HPMmode = HPMmode,
    .HPMaddThread = HPMaddThread,
    .HPMfinalize = HPMfinalize,
    .power_init = power_init,
    .get_powerInfo = get_powerInfo,
    .power_read = power_read,
    .power_finalize = power_finalize,
    .power_names = power_names,
    .msr_device_errno = real_msr_device_errno,
    .file_exists = real_file_exists,
    .setuid_root = real_setuid_root,
    .euid = real_euid,
};
