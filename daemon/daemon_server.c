/* vigild — the daemon's side of the socket server's interface (server.h's
 * struct vigild_server_ops): what a client's message needs beyond the
 * processes table, answered from the whole daemon. server.c itself knows
 * nothing of struct vigild. */
#include "capture.h"
#include "daemon.h"
#include "jobs.h"
#include "server.h"
#include "signals.h"
#include "status.h"
#include "vigil/clock.h"

static void take_signals(void *user)
{
    vigild_signals_take(user);
}

static char *status_json(void *user, int32_t finished_pid)
{
    return vigild_status_json(user, finished_pid);
}

static void summary(void *user, const struct vigild_process *p, struct vigil_local_summary *out)
{
    vigild_status_summary(user, p, out);
}

/* No error when there are no jobs yet: the server says so itself. */
static gboolean note_job(void *user, const struct vigil_local_job_info *info, uid_t uid,
                         GError **error)
{
    struct vigild *d = user;
    return d->jobs != NULL &&
           vigild_jobs_note(d->jobs, info, uid, vigil_clock_monotonic_ns(), error);
}

static void rank_known(void *user, const struct vigild_process *p)
{
    struct vigild *d = user;
    vigild_capture_set_rank(&d->capture, p->id, p->mpi_rank);
}

static const struct vigild_server_ops daemon_server_ops = {
    .take_signals = take_signals,
    .status_json = status_json,
    .summary = summary,
    .note_job = note_job,
    .rank_known = rank_known,
};

struct vigild_server *vigild_serve(struct vigild *d, GError **error)
{
    return vigild_server_new(d->settings.socket_path, &d->settings, &d->processes,
                             &daemon_server_ops, d, error);
}
