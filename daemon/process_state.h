/* vigild — the processes across a restart of vigild (process_state.c). */
#ifndef VIGILD_PROCESS_STATE_H
#define VIGILD_PROCESS_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

#include "capture.h"

struct vigild_process; /* processes.h */

/* A process the last vigild served, found running with its ring. */
struct vigild_recovered {
    pid_t pid;
    uid_t uid;
    int ring_fd;
    uint32_t ring_slots, tick_source;
    uint64_t proc_start_ticks, start_monotonic_ns, start_realtime_ns, registered_ns;
    char *program, *cwd, *job, *run_key;
    char **argv;
    gboolean argv_truncated;
    int32_t mpi_rank, mpi_size;
    uint64_t committed;
    uint64_t activities, names, corrupt, torn, dropped, seq_gaps, restart_lost, restarts;
    struct vigild_capture_counts capture;
    double cpu_s, energy_j;
    uint32_t energy_flags;
    gboolean energy_shared;
    GArray *name_ids;      /* uint32_t */
    GPtrArray *name_paths; /* char *, bytes as drained */
    /* Every name record the counts say was drained is in the names file:
     * else the process is asked for its names again. */
    gboolean names_complete;
    /* It ended while no vigild ran (its pid is gone, or another process's):
     * no ring (ring_fd -1); the last vigild saw it running at saved_ns
     * (CLOCK_MONOTONIC; 0 when its counts do not say). */
    gboolean ended;
    uint64_t saved_ns;
};

/* This boot's id (/proc/sys/kernel/random/boot_id): a process of the
 * state folder that ran before the machine restarted cannot be placed on
 * this boot's clock. */
const char *vigild_boot_id(void);
/* The process's start time in /proc/PID/stat (clock ticks since boot); 0
 * when it is gone. */
uint64_t vigild_proc_start_ticks(pid_t pid);
/* Makes the folder, private to vigild's user. */
gboolean vigild_process_state_open_dir(const char *dir, GError **error);
/* Writes the registration of a new process. */
void vigild_process_state_register(const char *dir, const struct vigild_process *p);
/* Rewrites the process's counts as of `committed`, less what the next
 * vigild would read again: the `held_activities` capture holds and the
 * `kept_activities` kept back for their file names. */
void vigild_process_state_save(const char *dir, const struct vigild_process *p,
                               const struct vigild_capture_counts *capture, uint64_t committed,
                               uint64_t held_activities, uint64_t kept_activities);
/* Rewrites only the process's CPU time and energy (and when it was seen
 * running) in its counts, the rest as of the position last committed: a
 * running sum, not read again from the ring, so the newest is kept even
 * while the position waits for an acknowledgement. Nothing when its counts
 * are not there or torn (the next commit writes them whole). */
void vigild_process_state_save_energy(const char *dir, const struct vigild_process *p);
void vigild_process_state_add_name(const char *dir, const struct vigild_process *p,
                                   uint32_t file_id, const char *path, size_t length);
void vigild_process_state_remove(const char *dir, pid_t pid, uint64_t start_monotonic_ns);
/* Every process of the folder that still runs and whose ring can be
 * reached, and every one that ended while no vigild ran (`ended`), as
 * struct vigild_recovered *; the others' files are removed. */
GPtrArray *vigild_process_state_recover(const char *dir);
void vigild_recovered_free(struct vigild_recovered *r);

#endif
