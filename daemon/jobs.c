/* vigild — scheduler jobs on this node, as the prolog, the epilog or the
 * SPANK plugin tell of them (a JOB message): who runs them, on which
 * nodes, from when to when. The notices of a job or step are merged until
 * the next cycle's batch takes them (outbox.c) and then forgotten: the
 * warehouse merges a begin and its end (an end's empty user or node list
 * keeps the begin's), so nothing is kept for a job whose end never comes
 * (an epilog that ran while vigild was down). Without an uplink a notice
 * is only logged.
 *
 * The processes of a job already carry its id (SLURM_JOB_ID, in their
 * REGISTER): a notice adds what only the scheduler knows (the user, the
 * node list, the step's bounds), not whose a process is. */
#include <string.h>
#include <unistd.h>

#include "jobs.h"
#include "vigild_error.h"

/* Notices waiting for the next batch: a node runs a few jobs at a time;
 * this bounds what a client that invents jobs can make the daemon keep
 * within one cycle. */
#define JOBS_KEPT_MAX 4096

struct vigild_jobs {
    GHashTable *jobs;   /* "JOB" or "JOB.STEP" → struct vigild_job *, not yet forwarded */
    gboolean forwarded; /* there is an outbox that takes them */
    uint64_t notices_total, refused_total;
};

static void job_free(gpointer data)
{
    struct vigild_job *j = data;
    g_free(j->job_id);
    g_free(j->step_id);
    g_free(j->user);
    g_free(j->nodes);
    g_free(j);
}

struct vigild_jobs *vigild_jobs_new(gboolean forwarded)
{
    struct vigild_jobs *j = g_new0(struct vigild_jobs, 1);
    j->jobs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, job_free);
    j->forwarded = forwarded;
    return j;
}

void vigild_jobs_free(struct vigild_jobs *j)
{
    if (j == NULL)
        return;
    g_hash_table_destroy(j->jobs);
    g_free(j);
}

guint vigild_jobs_count(const struct vigild_jobs *j)
{
    return j != NULL ? g_hash_table_size(j->jobs) : 0;
}

/* Replaces *field with the message's bytes when they say something: an
 * end notice without a user keeps the one its begin gave. */
static void take_text(char **field, const char *text, uint16_t bytes)
{
    if (bytes == 0 && *field != NULL)
        return;
    g_free(*field);
    *field = g_strndup(text, bytes);
}

gboolean vigild_jobs_note(struct vigild_jobs *j, const struct vigil_local_job_info *info,
                          uid_t peer_uid, uint64_t now_ns, GError **error)
{
    /* Root (the prolog, slurmstepd) and vigild's own user speak for any
     * job; anyone else only for a job of their own uid, so that no user can
     * give another's job a node list or end it early. */
    if (peer_uid != 0 && peer_uid != geteuid() && info->fixed.uid != (uint32_t)peer_uid) {
        j->refused_total++;
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "uid %u may only tell of its own jobs, not of uid %u's", (unsigned)peer_uid,
                    info->fixed.uid);
        return FALSE;
    }
    char *key = info->fixed.step_bytes > 0
                    ? g_strdup_printf("%.*s.%.*s", (int)info->fixed.job_bytes, info->job,
                                      (int)info->fixed.step_bytes, info->step)
                    : g_strndup(info->job, info->fixed.job_bytes);
    struct vigild_job *job = g_hash_table_lookup(j->jobs, key);
    if (job == NULL) {
        if (g_hash_table_size(j->jobs) >= JOBS_KEPT_MAX) {
            j->refused_total++;
            g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                        "vigild keeps at most %d jobs and steps at a time", JOBS_KEPT_MAX);
            g_free(key);
            return FALSE;
        }
        job = g_new0(struct vigild_job, 1);
        job->job_id = g_strndup(info->job, info->fixed.job_bytes);
        if (info->fixed.step_bytes > 0)
            job->step_id = g_strndup(info->step, info->fixed.step_bytes);
        job->uid = VIGIL_LOCAL_JOB_UID_UNKNOWN;
        g_hash_table_insert(j->jobs, g_strdup(key), job);
    }
    take_text(&job->user, info->user, info->fixed.user_bytes);
    take_text(&job->nodes, info->nodes, info->fixed.nodes_bytes);
    if (info->fixed.uid != VIGIL_LOCAL_JOB_UID_UNKNOWN)
        job->uid = info->fixed.uid;
    if (info->fixed.flags & VIGIL_LOCAL_JOB_BEGIN)
        job->begin_ns = now_ns; /* a second begin (a requeued job) starts it again */
    else
        job->end_ns = now_ns;
    if (job->begin_ns != 0 && job->end_ns != 0 && job->end_ns < job->begin_ns)
        job->end_ns = 0; /* begun again after an end: it runs */
    j->notices_total++;
    g_message("job %s%s%s %s (user %s, nodes %s)", job->job_id, job->step_id != NULL ? "." : "",
              job->step_id != NULL ? job->step_id : "",
              (info->fixed.flags & VIGIL_LOCAL_JOB_BEGIN) ? "begins" : "ends",
              job->user[0] != '\0' ? job->user : "unknown",
              job->nodes[0] != '\0' ? job->nodes : "unknown");
    if (!j->forwarded)
        g_hash_table_remove(j->jobs, key);
    g_free(key);
    return TRUE;
}

void vigild_jobs_take_pending(struct vigild_jobs *j, vigild_job_fn fn, void *user)
{
    if (j == NULL)
        return;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, j->jobs);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct vigild_job *job = value;
        fn(user, job);
        g_hash_table_iter_remove(&it);
    }
}

void vigild_jobs_counts(const struct vigild_jobs *j, uint64_t *notices, uint64_t *refused)
{
    *notices = j != NULL ? j->notices_total : 0;
    *refused = j != NULL ? j->refused_total : 0;
}
