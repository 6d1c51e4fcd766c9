/* vigil — the run key: what groups processes into one run in the
 * warehouse (all ranks of an MPI job, a program and its children).
 *
 * A process takes it from its environment: VIGIL_RUN_ID when set (`vigil
 * run` sets one), else the Slurm job step (slurm-JOB.STEP), else Open MPI's
 * PMIx namespace (pmix-NAMESPACE), so that every rank of a job started by a
 * launcher finds the same key without being told. Without any of them the
 * preload library makes a fresh one (host-pid-start ns) and exports it as
 * VIGIL_RUN_ID for its children.
 *
 * A key is 1 to 255 bytes of printable ASCII without spaces, so that it is
 * safe on a command line (`vigil report KEY`), in a log line and in a URL.
 * GLib-free: the preload library uses it. */
#ifndef VIGIL_RUN_KEY_H
#define VIGIL_RUN_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/error.h"

#define VIGIL_RUN_KEY_MAX 255 /* bytes, without the NUL */

enum vigil_run_key_origin {
    VIGIL_RUN_KEY_NONE,  /* nothing in the environment: make a fresh one */
    VIGIL_RUN_KEY_GIVEN, /* VIGIL_RUN_ID */
    VIGIL_RUN_KEY_SLURM, /* SLURM_JOB_ID and SLURM_STEP_ID */
    VIGIL_RUN_KEY_PMIX,  /* PMIX_NAMESPACE */
};

bool vigil_run_key_valid(const char *key, size_t length);

/* The key the environment gives, into `out` (VIGIL_RUN_KEY_MAX + 1 bytes),
 * and where it came from. A VIGIL_RUN_ID that is not a valid key is
 * skipped, and `problem` (may be NULL) says why; otherwise problem is "". */
enum vigil_run_key_origin vigil_run_key_from_environment(char *out, struct vigil_error *problem);

/* A fresh key, "HOST-PID-NS": the host name with anything but letters,
 * digits, '.', '-' and '_' made '_'. */
void vigil_run_key_fresh(char *out, const char *host, int pid, uint64_t realtime_ns);

/* Whose a run is. A run belongs to the uid of its first process, and a
 * process of another uid never joins it: vigild and the warehouse keep
 * that process, and every other process of its uid that names the same
 * key, in a run of their own whose key this makes (into `out`, VIGIL_RUN_KEY_MAX + 1
 * bytes): "KEY@uidUID". When that would pass VIGIL_RUN_KEY_MAX, the end
 * of KEY is cut, and "~" and 16 hex digits of a hash (FNV-1a) of the whole
 * KEY stand in for it, so that two long keys that differ only at their
 * ends stay apart. The same (key, uid) always makes the same key. */
void vigil_run_key_apart(char *out, const char *key, uint32_t uid);

/* A key that ends in "@uidN" (N decimal, no leading zero, a uid_t) is
 * uid N's by its name: one vigil_run_key_apart made, or one named so. */
bool vigil_run_key_owner(const char *key, uint32_t *uid);

/* The scheduler job a key names, "slurm-JOB" or "slurm-JOB.STEP", into
 * `job` (NUL-terminated); false for any other key, or a job that does not
 * fit in `job_size`. Such a key is predictable, so it belongs to the uid
 * root told vigild the job is (daemon/jobs.c), not to whoever names it
 * first. "pmix-NAMESPACE" has no such voucher: it is an ordinary key,
 * its first process's uid's. */
bool vigil_run_key_scheduler_job(const char *key, char *job, size_t job_size);

#endif
