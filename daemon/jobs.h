/* vigild — the scheduler jobs that Slurm's prolog and epilog (`vigil job
 * begin|end`) or the SPANK plugin tell vigild of (jobs.c): who may speak
 * for a job, and the notices waiting for the next batch to vigil-txd. */
#ifndef VIGILD_JOBS_H
#define VIGILD_JOBS_H

#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

#include "vigil/local_protocol.h"

/* A job, or one step of it, as its notices since the last batch told;
 * times are the daemon's CLOCK_MONOTONIC ns when the notice came, 0 when
 * not told. */
struct vigild_job {
    char *job_id;
    char *step_id; /* NULL: the whole job */
    char *user;    /* "" when not known */
    uint32_t uid;  /* VIGIL_LOCAL_JOB_UID_UNKNOWN */
    char *nodes;   /* "" when not known */
    uint64_t begin_ns, end_ns;
    gboolean from_root; /* root or vigild's own user told it, not the job's user */
};

struct vigild_jobs;
typedef void (*vigild_job_fn)(void *user, const struct vigild_job *job);

/* `forwarded`: an outbox takes the notices; without one they are only
 * logged. */
struct vigild_jobs *vigild_jobs_new(gboolean forwarded);
void vigild_jobs_free(struct vigild_jobs *j);
/* Records a JOB message from a client of uid `peer_uid`; FALSE with the
 * reason to send back when the notice is refused. */
gboolean vigild_jobs_note(struct vigild_jobs *j, const struct vigil_local_job_info *info,
                          uid_t peer_uid, uint64_t now_ns, GError **error);
/* The uid root (or vigild's own user) told vigild job `job_id` is, while
 * the job runs and for a margin after its end; FALSE when not told. */
gboolean vigild_jobs_owner(struct vigild_jobs *j, const char *job_id, uint64_t now_ns, uid_t *uid);
/* Root's word on each job's uid, across a restart: written to the state
 * folder when changed, read back at start. */
void vigild_jobs_save(struct vigild_jobs *j, const char *dir);
void vigild_jobs_load(struct vigild_jobs *j, const char *dir);
/* Hands each job or step told of since the last call to `fn`, and forgets
 * them. */
void vigild_jobs_take_pending(struct vigild_jobs *j, vigild_job_fn fn, void *user);
guint vigild_jobs_count(const struct vigild_jobs *j);
void vigild_jobs_counts(const struct vigild_jobs *j, uint64_t *notices, uint64_t *refused);

#endif
