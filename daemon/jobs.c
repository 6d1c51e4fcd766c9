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
 * node list, the step's bounds), not whose a process is.
 *
 * What root (the prolog, slurmstepd) or vigild's own user says of a job's
 * uid is kept apart from the notices, until the job's end and a margin:
 * it is the only word on whose a Slurm run key ("slurm-JOB.STEP",
 * predictable to anyone) is (processes.c), and no one else may tell of the
 * job as theirs. Kept across a restart (state folder "job-owners"). */
#include <string.h>
#include <unistd.h>

#include "jobs.h"
#include "owners.h"
#include "vigild_error.h"

/* Notices waiting for the next batch: a node runs a few jobs at a time;
 * this bounds what a client that invents jobs can make the daemon keep
 * within one cycle. */
#define JOBS_KEPT_MAX 4096
/* Jobs whose uid root told: a node runs a few at a time; the least
 * recently named are forgotten first past this. */
#define JOB_OWNERS_MAX 4096
/* How long after its end a job's uid is still known: a step's last
 * processes may register, and its epilogs end, on other nodes later. */
#define JOB_OWNER_MARGIN_NS (G_GUINT64_CONSTANT(600) * 1000000000u)

struct vigild_jobs {
    /* "JOB" or "JOB.STEP", and " uid" after a user's own notice, → struct
     * vigild_job *, not yet forwarded: root's word and a user's travel
     * apart, so the warehouse can tell them. */
    GHashTable *jobs;
    gboolean forwarded; /* there is an outbox that takes them */
    uint64_t notices_total, refused_total;
    struct vigild_owners *owners; /* job id → uid, as root told */
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
    j->owners = vigild_owners_new(JOB_OWNERS_MAX, "job-owners");
    return j;
}

void vigild_jobs_free(struct vigild_jobs *j)
{
    if (j == NULL)
        return;
    g_hash_table_destroy(j->jobs);
    vigild_owners_free(j->owners);
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

/* Root's word on whose job it is: from its begin until its end and the
 * margin. A step's end says nothing of the job's. */
static void note_owner(struct vigild_jobs *j, const struct vigil_local_job_info *info,
                       const char *job_id, uint64_t now_ns)
{
    if (info->fixed.uid == VIGIL_LOCAL_JOB_UID_UNKNOWN)
        return;
    uid_t known;
    if (info->fixed.flags & VIGIL_LOCAL_JOB_BEGIN)
        vigild_owners_set(j->owners, job_id, info->fixed.uid, 0);
    else if (info->fixed.step_bytes == 0 ||
             !vigild_owners_lookup(j->owners, job_id, now_ns, &known))
        vigild_owners_set(j->owners, job_id, info->fixed.uid, now_ns + JOB_OWNER_MARGIN_NS);
}

gboolean vigild_jobs_note(struct vigild_jobs *j, const struct vigil_local_job_info *info,
                          uid_t peer_uid, uint64_t now_ns, GError **error)
{
    /* Root (the prolog, slurmstepd) and vigild's own user speak for any
     * job; anyone else only for a job of their own uid, and not for one
     * root said is another uid's, so that no user can give another's job
     * a node list or end it early. */
    gboolean from_root = peer_uid == 0 || peer_uid == geteuid();
    char *job_id = g_strndup(info->job, info->fixed.job_bytes);
    uid_t owner = 0;
    if (!from_root && info->fixed.uid != (uint32_t)peer_uid) {
        j->refused_total++;
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "uid %u may only tell of its own jobs, not of uid %u's", (unsigned)peer_uid,
                    info->fixed.uid);
        g_free(job_id);
        return FALSE;
    }
    if (!from_root && vigild_owners_lookup(j->owners, job_id, now_ns, &owner) &&
        owner != peer_uid) {
        j->refused_total++;
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "uid %u may not tell of job %s: root told vigild it is uid %u's",
                    (unsigned)peer_uid, job_id, (unsigned)owner);
        g_free(job_id);
        return FALSE;
    }
    if (from_root)
        note_owner(j, info, job_id, now_ns);
    GString *key = g_string_new(job_id);
    if (info->fixed.step_bytes > 0)
        g_string_append_printf(key, ".%.*s", (int)info->fixed.step_bytes, info->step);
    if (!from_root)
        g_string_append_printf(key, " %u", (unsigned)peer_uid);
    g_free(job_id);
    struct vigild_job *job = g_hash_table_lookup(j->jobs, key->str);
    if (job == NULL) {
        if (g_hash_table_size(j->jobs) >= JOBS_KEPT_MAX) {
            j->refused_total++;
            g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                        "vigild keeps at most %d jobs and steps at a time", JOBS_KEPT_MAX);
            g_string_free(key, TRUE);
            return FALSE;
        }
        job = g_new0(struct vigild_job, 1);
        job->job_id = g_strndup(info->job, info->fixed.job_bytes);
        if (info->fixed.step_bytes > 0)
            job->step_id = g_strndup(info->step, info->fixed.step_bytes);
        job->uid = VIGIL_LOCAL_JOB_UID_UNKNOWN;
        job->from_root = from_root;
        g_hash_table_insert(j->jobs, g_strdup(key->str), job);
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
    g_message("job %s%s%s %s (user %s, nodes %s)%s", job->job_id, job->step_id != NULL ? "." : "",
              job->step_id != NULL ? job->step_id : "",
              (info->fixed.flags & VIGIL_LOCAL_JOB_BEGIN) ? "begins" : "ends",
              job->user[0] != '\0' ? job->user : "unknown",
              job->nodes[0] != '\0' ? job->nodes : "unknown",
              from_root ? "" : ", as its user says");
    if (!j->forwarded)
        g_hash_table_remove(j->jobs, key->str);
    g_string_free(key, TRUE);
    return TRUE;
}

gboolean vigild_jobs_owner(struct vigild_jobs *j, const char *job_id, uint64_t now_ns, uid_t *uid)
{
    return j != NULL && vigild_owners_lookup(j->owners, job_id, now_ns, uid);
}

void vigild_jobs_save(struct vigild_jobs *j, const char *dir)
{
    if (j != NULL)
        vigild_owners_save(j->owners, dir);
}

void vigild_jobs_load(struct vigild_jobs *j, const char *dir)
{
    vigild_owners_load(j->owners, dir);
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
