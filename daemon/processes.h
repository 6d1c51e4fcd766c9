/* vigild — registered processes: their rings, drains and ends (processes.c). */
#ifndef VIGILD_PROCESSES_H
#define VIGILD_PROCESSES_H

#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

#include "vigil/clock.h"
#include "vigil/local_protocol.h"
#include "vigil/ring.h"
#include "capture.h"
#include "energy_share.h"
#include "owners.h"

enum vigild_process_state {
    VIGILD_PROCESS_RUNNING,
    VIGILD_PROCESS_ENDED,   /* exited; its ring drained to the end */
    VIGILD_PROCESS_DROPPED, /* given up on: a corrupt ring */
};

struct vigild_process {
    uint64_t id;
    pid_t pid;
    uid_t uid;
    enum vigild_process_state state;
    char *program, *cwd, *job;
    GPtrArray *argv; /* char * */
    gboolean argv_truncated;
    int32_t mpi_rank, mpi_size; /* -1 until known */
    uint64_t start_realtime_ns;
    /* As the kernel has it: the REGISTER's own only when it lies between
     * the pid's start in /proc and its connection (vigild_processes_start_of). */
    uint64_t start_monotonic_ns;
    uint64_t registered_ns, ended_ns; /* CLOCK_MONOTONIC */
    /* It ended while no vigild watched it: after this (when a vigild last
     * saw it running) and before ended_ns (when this one found it gone).
     * 0: ended_ns is its end. */
    uint64_t end_earliest_ns;
    char *dropped_reason;

    struct vigil_ring *ring; /* NULL once ended or dropped */
    /* What finds it again after a restart (process_state.c): the ring's
     * memfd, and the process's start time in /proc (0: unknown). */
    dev_t ring_device;
    ino_t ring_inode;
    uint32_t ring_slots, tick_source;
    uint64_t proc_start_ticks;
    int pidfd; /* -1 when it could not be opened, or once ended */
    guint pidfd_watch;

    uint64_t activities, names; /* records drained */
    uint64_t corrupt, torn;     /* ring positions skipped */
    uint64_t dropped;           /* records its ring had no room for */
    uint64_t next_seq;          /* the position the next record should have */
    uint64_t seq_gaps;          /* positions missing between records */
    gboolean seq_started;
    /* Restarts of vigild it lived through, and ring positions one of them
     * lost: freed early (the ring was filling) and not yet stored. */
    uint64_t restarts, restart_lost;
    uint64_t released_early; /* positions freed before they were committed */
    /* Taken back after a restart: records below it were committed by the
     * last vigild, which died before it freed them; they are skipped. */
    uint64_t skip_below;
    uint64_t problems_logged;
    /* Asked for its file names again (this vigild lacks the ones a vigild
     * before it read): since when (0: not waiting), and its activities
     * drained meanwhile, kept back until their names are in
     * (struct vigil_activity). */
    uint64_t names_wanted_ns;
    GArray *awaiting_names;

    /* Its capture counts, copied when capture forgets it. */
    struct vigild_capture_counts capture;
    gboolean capture_final;
    /* Its energy account's figures, copied when it ends. */
    double cpu_s, energy_j;
    uint32_t energy_flags;
    gboolean energy_shared;
    char energy_sources[VIGILD_ENERGY_SOURCES_BYTES];

    /* The run it belongs to (vigil/run_key.h): its REGISTER's, or the key
     * kept apart for its uid when that run is another user's
     * (vigild_processes_place). */
    char *run_key;
    /* From REPORT, sent at its exit: its report's JSON (NULL when none
     * came, or it had none) and its exit status (-1 unknown; else as
     * WEXITSTATUS gives it). */
    char *report_json;
    int32_t exit_code;
};

struct vigild_processes {
    GHashTable *by_id; /* uint64 → struct vigild_process * (running ones) */
    GQueue *ended;     /* struct vigild_process *, newest last */
    uint64_t next_id;
    /* Ticks → ns for rings in TSC ticks (recalibrated every tick against a
     * first anchor), and the identity for rings in monotonic ns. */
    struct vigil_tick_clock tsc_clock, ns_clock;
    struct vigil_tick_anchor tsc_first;
    uint64_t registered_total, ended_total, dropped_total, refused_total;
    uint64_t recovered_total;   /* taken back from a vigild before this one */
    uint64_t adopt_skip_below;  /* for the next add: a process taken back */
    gboolean adopt_names_known; /* and whether its file names came with it */
    guint keep_ended;
    gboolean hold_records;
    /* Whose each ordinary run key is: the uid of its first process here,
     * running or ended, across restarts (state folder "run-owners"). */
    struct vigild_owners *run_owners;
    /* The uid root told vigild scheduler job `job` is (jobs.c); FALSE when
     * it told none. NULL: no such notices. */
    gboolean (*job_owner)(void *user, const char *job, uid_t *uid);
    uint64_t placed_apart_total; /* processes kept out of another user's run */
    gint64 apart_logged_us;      /* g_get_monotonic_time of the last such log line */
    uint64_t apart_unlogged;     /* kept apart since */
    /* Told about every process that starts or ends (sampler, energy). */
    void (*on_start)(void *user, const struct vigild_process *p);
    void (*on_end)(void *user, const struct vigild_process *p);
    /* Told every record drained from a ring. */
    void (*on_record)(void *user, const struct vigild_process *p,
                      const struct vigil_ring_record *record);
    void *user;
};

void vigild_processes_init(struct vigild_processes *ps, guint keep_ended);
/* Rings keep the slots they were read from until vigild_processes_commit
 * (set when vigild keeps state for a restart). */
void vigild_processes_hold_records(struct vigild_processes *ps, gboolean hold);
/* Everything of `p` before `position` is stored or decided: its ring may
 * free it, and a restarted vigild resumes there. */
void vigild_processes_commit(struct vigild_processes *ps, struct vigild_process *p,
                             uint64_t position);
/* The start vigild keeps for `pid`, which says it started at `claimed_ns`
 * and connected by `connected_ns` (CLOCK_MONOTONIC): its claim when that
 * lies between the kernel's start of the pid (/proc/PID/stat, to its
 * clock tick) and now, else the kernel's. A pid whose /proc entry is gone,
 * or is a later process's (started after the connection), started by its
 * connection: `connected_ns`. */
uint64_t vigild_processes_start_of(pid_t pid, uint64_t claimed_ns, uint64_t connected_ns);
/* The run key a process `pid` of `uid` that names `key` is kept in, as a
 * new string: `key`, unless that run is another uid's — by its name
 * ("…@uidN", vigil/run_key.h), by root's word on its Slurm job, or by its
 * first process here, running or ended — when it is the key kept apart
 * for `uid` (vigil_run_key_apart); *why then says whose, else NULL. A
 * Slurm key root has not told vigild of is kept apart too: whoever names
 * it first cannot have it. g_free both. */
char *vigild_processes_place(struct vigild_processes *ps, pid_t pid, uid_t uid, const char *key,
                             char **why);
/* A process by its pid and its start (vigild_processes_start_of), running or
 * among the ended ones kept; NULL. */
struct vigild_process *vigild_processes_find(const struct vigild_processes *ps, pid_t pid,
                                             uint64_t start_monotonic_ns);
/* Takes a registration: attaches the ring from `ring_fd` (which it closes)
 * and watches the pid for its end. NULL with error set when the ring is
 * refused. */
struct vigild_process *vigild_processes_add(struct vigild_processes *ps,
                                            const struct vigil_local_process_info *info, pid_t pid,
                                            uid_t uid, int ring_fd, GError **error);
/* A process the vigild before this one served, which ended while no vigild
 * ran: started (the callbacks see it) and ended at once, its end between
 * `seen_running_ns` and now. Its ring went with it. */
struct vigild_process *vigild_processes_add_ended(struct vigild_processes *ps,
                                                  const struct vigil_local_process_info *info,
                                                  pid_t pid, uid_t uid, uint64_t seen_running_ns);
struct vigild_process *vigild_processes_get(const struct vigild_processes *ps, uint64_t id);
/* The oldest activity of `p` kept back for its file names, if any: not
 * stored yet, so its ring must keep it for a restart. */
gboolean vigild_processes_oldest_kept(const struct vigild_process *p, uint64_t *seq);
/* Drains every running process's ring (each tick). */
void vigild_processes_drain_all(struct vigild_processes *ps);
/* Drains one; a corrupt ring header drops the process. */
void vigild_processes_drain(struct vigild_processes *ps, struct vigild_process *p);
/* Ends every process whose pid has exited (a last drain, then it moves to
 * the ended list), without waiting for the main loop to notice. */
void vigild_processes_sweep(struct vigild_processes *ps);
/* The end of one process: the last drain, untracked, kept in the ended
 * list. */
void vigild_processes_end(struct vigild_processes *ps, struct vigild_process *p);
void vigild_processes_set_keep_ended(struct vigild_processes *ps, guint keep_ended);
/* A later anchor for the TSC clock (every tick): the rate gets better as
 * the anchors get further apart. */
void vigild_processes_calibrate(struct vigild_processes *ps);
guint vigild_processes_running(const struct vigild_processes *ps);
/* The running processes in registration order; g_ptr_array_free it (the
 * processes stay the table's). */
GPtrArray *vigild_processes_list(const struct vigild_processes *ps);
/* Drains every ring a last time, for a clean stop. */
void vigild_processes_clear(struct vigild_processes *ps);

const char *vigild_process_state_name(enum vigild_process_state state);

#endif
