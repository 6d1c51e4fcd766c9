/* vigil — the few liblikwid functions the likwid energy source calls, as a
 * table of function pointers, so that the source runs on the real library
 * (likwid_api_real.c, linked with liblikwid) or on a test double with
 * scripted counters (likwid_double.c). The types are likwid's own, from
 * likwid.h: this header is only built where likwid.h is.
 *
 * Besides likwid's functions, the table has three looks at the machine
 * around likwid, so that an unavailable source can say which of likwid's
 * traps applied, and the double can script them too. */
#ifndef VIGIL_LIKWID_API_H
#define VIGIL_LIKWID_API_H

#include <stdbool.h>
#include <sys/types.h>

#include <likwid.h>

/* The RAPL registers power_read is given. likwid.h has none of them (they
 * are in likwid's private registers.h): these are Intel's SDM vol. 4 and
 * AMD's PPR for family 17h. */
#define LIKWID_MSR_RAPL_POWER_UNIT     0x606u /* Intel: the units */
#define LIKWID_MSR_PKG_ENERGY_STATUS   0x611u
#define LIKWID_MSR_PP0_ENERGY_STATUS   0x639u
#define LIKWID_MSR_PP1_ENERGY_STATUS   0x641u
#define LIKWID_MSR_DRAM_ENERGY_STATUS  0x619u
#define LIKWID_MSR_PLATFORM_ENERGY     0x64du
#define LIKWID_MSR_AMD_RAPL_POWER_UNIT 0xc0010299u /* AMD: the units */
#define LIKWID_MSR_AMD_CORE_ENERGY     0xc001029au
#define LIKWID_MSR_AMD_PKG_ENERGY      0xc001029bu

struct likwid_api {
    int (*topology_init)(void);
    CpuTopology_t (*get_cpuTopology)(void);
    CpuInfo_t (*get_cpuInfo)(void);
    void (*topology_finalize)(void);
    int (*init_configuration)(void);
    Configuration_t (*get_configuration)(void); /* its access mode, its daemon's path */
    int (*destroy_configuration)(void);
    void (*HPMmode)(int mode);
    int (*HPMaddThread)(int cpu);
    void (*HPMfinalize)(void);
    int (*power_init)(int cpu);
    PowerInfo_t (*get_powerInfo)(void);
    int (*power_read)(int cpu, uint64_t reg, uint32_t *data);
    void (*power_finalize)(void);
    const char *const *power_names; /* NUM_POWER_DOMAINS names; AMD's first is "CORE" */

    /* 0 when /dev/cpu/CPU/msr opens for reading, else the errno. */
    int (*msr_device_errno)(int cpu);
    /* Whether the file at `path` exists, and is setuid root. */
    bool (*file_exists)(const char *path);
    bool (*setuid_root)(const char *path);
    uid_t (*euid)(void);
};

/* liblikwid's (likwid_api_real.c). */
extern const struct likwid_api likwid_api_real;

#endif
