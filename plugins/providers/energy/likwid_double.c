/* vigil — the liblikwid test double (likwid_double.h). */
#include <errno.h>
#include <string.h>

#include <glib.h>

#include "likwid_double.h"

struct likwid_double likwid_double;

static void reset(int sockets, bool is_intel)
{
    memset(&likwid_double, 0, sizeof likwid_double);
    struct likwid_double *d = &likwid_double;
    d->power_init_result = 1;
    d->mode_set = -2;
    d->power_init_cpu = -1;
    d->configuration.daemonMode = ACCESSMODE_DAEMON; /* Debian's default */
    d->configuration.daemonPath = (char *)"/usr/sbin/likwid-accessD";
    d->daemon_exists = true;
    d->msr_errno = ENOENT;
    d->info.isIntel = is_intel;
    d->info.family = is_intel ? 0x6 : 0x19;
    d->info.model = is_intel ? 0x55 : 0x1;
    int n = sockets * 2;
    if (n > (int)G_N_ELEMENTS(d->threads))
        n = (int)G_N_ELEMENTS(d->threads);
    for (int i = 0; i < n; i++) {
        d->threads[i].apicId = (uint32_t)i;
        d->threads[i].packageId = (uint32_t)(i % sockets); /* interleaved, as on many nodes */
        d->threads[i].coreId = (uint32_t)(i / sockets);
    }
    d->topology.numHWThreads = (uint32_t)n;
    d->topology.activeHWThreads = (uint32_t)n;
    d->topology.numSockets = (uint32_t)sockets;
    d->topology.threadPool = d->threads;
    d->power.hasRAPL = 1;
    static const char *const intel_names[] = {"PKG", "PP0", "PP1", "DRAM", "PLATFORM"};
    static const char *const amd_names[] = {"CORE", "PKG", "PP1", "DRAM", "PLATFORM"};
    for (int i = 0; i < NUM_POWER_DOMAINS; i++) {
        d->names[i] = is_intel ? intel_names[i] : amd_names[i];
        d->power.domains[i].type = (PowerType)i; /* as likwid does, AMD's CORE included */
    }
    uint32_t status = POWER_DOMAIN_SUPPORT_STATUS;
    if (is_intel) {
        d->power.domains[PKG].supportFlags = status;
        d->power.domains[PKG].energyUnit = 1.0 / 16384; /* 2^-14 J, a common ESU */
        d->power.domains[PP0].supportFlags = status;
        d->power.domains[PP0].energyUnit = 1.0 / 16384;
        d->power.domains[DRAM].supportFlags = status;
        d->power.domains[DRAM].energyUnit = 15.3e-6; /* the fixed DRAM unit of servers */
    } else {
        d->power.domains[0].supportFlags = status;
        d->power.domains[0].energyUnit = 1.0 / 65536; /* 2^-16 J */
        d->power.domains[1].supportFlags = status;
        d->power.domains[1].energyUnit = 1.0 / 65536;
    }
}

void likwid_double_reset_intel(int sockets)
{
    reset(sockets, true);
}

void likwid_double_reset_amd(int sockets)
{
    reset(sockets, false);
}

struct likwid_double_counter *likwid_double_counter(int cpu, uint32_t reg)
{
    struct likwid_double *d = &likwid_double;
    for (int i = 0; i < d->n_counters; i++)
        if (d->counters[i].cpu == cpu && d->counters[i].reg == reg)
            return &d->counters[i];
    g_assert(d->n_counters < LIKWID_DOUBLE_MAX_COUNTERS);
    struct likwid_double_counter *c = &d->counters[d->n_counters++];
    c->cpu = cpu;
    c->reg = reg;
    return c;
}

static int double_topology_init(void)
{
    return likwid_double.topology_result;
}

static CpuTopology_t double_get_cpuTopology(void)
{
    return &likwid_double.topology;
}

static CpuInfo_t double_get_cpuInfo(void)
{
    return &likwid_double.info;
}

static void double_finalize(void)
{
    likwid_double.finalized++;
}

static void double_nothing(void)
{
}

static int double_init_configuration(void)
{
    return 0;
}

static Configuration_t double_get_configuration(void)
{
    return &likwid_double.configuration;
}

static void double_HPMmode(int mode)
{
    likwid_double.mode_set = mode;
}

static int double_HPMaddThread(int cpu)
{
    (void)cpu;
    return likwid_double.add_thread_result;
}

static int double_power_init(int cpu)
{
    likwid_double.power_init_cpu = cpu;
    return likwid_double.power_init_result;
}

static PowerInfo_t double_get_powerInfo(void)
{
    return &likwid_double.power;
}

/* A register never scripted reads 0. */
static int double_power_read(int cpu, uint64_t reg, uint32_t *data)
{
    likwid_double.reads++;
    struct likwid_double_counter *c = likwid_double_counter(cpu, (uint32_t)reg);
    if (c->read_result != 0)
        return c->read_result;
    *data = c->value;
    return 0;
}

static int double_msr_device_errno(int cpu)
{
    (void)cpu;
    return likwid_double.msr_errno;
}

static bool double_file_exists(const char *path)
{
    (void)path;
    return likwid_double.daemon_exists;
}

static bool double_setuid_root(const char *path)
{
    (void)path;
    return likwid_double.daemon_setuid_root;
}

static uid_t double_euid(void)
{
    return likwid_double.euid;
}

const struct likwid_api likwid_double_api = {
    .topology_init = double_topology_init,
    .get_cpuTopology = double_get_cpuTopology,
    .get_cpuInfo = double_get_cpuInfo,
    .topology_finalize = double_finalize,
    .init_configuration = double_init_configuration,
    .get_configuration = double_get_configuration,
    .destroy_configuration = double_init_configuration,
    .HPMmode = double_HPMmode,
    .HPMaddThread = double_HPMaddThread,
    .HPMfinalize = double_nothing,
    .power_init = double_power_init,
    .get_powerInfo = double_get_powerInfo,
    .power_read = double_power_read,
    .power_finalize = double_finalize,
    .power_names = likwid_double.names,
    .msr_device_errno = double_msr_device_errno,
    .file_exists = double_file_exists,
    .setuid_root = double_setuid_root,
    .euid = double_euid,
};
