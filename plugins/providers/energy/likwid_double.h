/* vigil — a test double of the liblikwid functions the likwid energy
 * source calls, for the unit tests and bench/energy_read.c: a machine of
 * N sockets of two hardware threads each, Intel (PKG, PP0, DRAM supported;
 * PP1, PLATFORM not) or AMD (CORE, PKG, as likwid 5.2.2 sets them up:
 * domain 0 CORE with its type left at PKG), whose counters the caller
 * scripts. One machine per process: likwid's API has no handle either. */
#ifndef VIGIL_LIKWID_DOUBLE_H
#define VIGIL_LIKWID_DOUBLE_H

#include "likwid_api.h"

#define LIKWID_DOUBLE_MAX_COUNTERS 32

struct likwid_double_counter {
    int cpu;
    uint32_t reg;
    uint32_t value;
    int read_result; /* what power_read returns: 0, or a failure */
};

struct likwid_double {
    /* Scripted: what likwid answers. */
    int topology_result;
    int power_init_result;
    int add_thread_result;
    Likwid_Configuration configuration;
    CpuInfo info;
    CpuTopology topology;
    HWThread threads[16];
    PowerInfo power;
    const char *names[NUM_POWER_DOMAINS];
    struct likwid_double_counter counters[LIKWID_DOUBLE_MAX_COUNTERS];
    int n_counters;
    /* The machine around likwid. */
    int msr_errno;
    bool daemon_exists, daemon_setuid_root;
    uid_t euid;

    /* Seen: what the source did. */
    int mode_set; /* the last HPMmode, -2 before any */
    int power_init_cpu;
    int finalized; /* power_finalize + topology_finalize calls */
    long reads;
};

extern struct likwid_double likwid_double;
extern const struct likwid_api likwid_double_api;

/* A fresh machine, all counters at 0, power_init succeeding. */
void likwid_double_reset_intel(int sockets);
void likwid_double_reset_amd(int sockets);

/* The counter (cpu, reg): created at 0 when new. */
struct likwid_double_counter *likwid_double_counter(int cpu, uint32_t reg);

#endif
