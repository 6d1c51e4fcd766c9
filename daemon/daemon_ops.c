/* vigild — the daemon behind the interfaces of its parts: the socket
 * server's struct vigild_server_ops (server.h) and the signals' callbacks
 * (signals.h), answered from the whole daemon. local_server.c and signals.c
 * themselves know nothing of struct vigild. */
#include <unistd.h>

#include "vigil/clock.h"
#include "vigil/service_notify.h"
#include "capture.h"
#include "daemon.h"
#include "jobs.h"
#include "local_server.h"
#include "signals.h"
#include "snapshot.h"
#include "status.h"
#include "uplink.h"
#include "vigild_error.h"

static void take_signals(void *user)
{
    struct vigild *d = user;
    vigild_signals_take(&d->signals);
}

static char *status_json(void *user, uid_t viewer_uid, int32_t finished_pid)
{
    struct vigild_snapshot snap;
    vigild_snapshot_take(user, &snap);
    return vigild_status_json(&snap, viewer_uid, finished_pid);
}

static void summary(void *user, const struct vigild_process *p, struct vigil_local_summary *out)
{
    struct vigild_snapshot snap;
    vigild_snapshot_take(user, &snap);
    vigild_status_summary(&snap, p, out);
}

/* [insight] as last loaded (a reload changes what later exits get). */
static void insight(void *user, struct vigil_insight_thresholds *out)
{
    *out = ((const struct vigild *)user)->settings.insight;
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

/* `vigil spool resend|replay`: only root and vigild's own user may make
 * vigild read a file, or send again what vigil-txd refused. */
static gboolean spool(void *user, const struct vigil_local_spool *request, uid_t uid,
                      struct vigil_local_spool *answer, GError **error)
{
    struct vigild *d = user;
    if (uid != 0 && uid != geteuid()) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "uid %u may not ask for the spool: only root and vigild's own user (uid %u)",
                    (unsigned)uid, (unsigned)geteuid());
        return FALSE;
    }
    if (d->uplink == NULL) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "vigild has no uplink ([uplink] endpoint is empty): it spools nothing");
        return FALSE;
    }
    struct vigild_uplink_requeued done;
    gboolean ok = request->op == VIGIL_LOCAL_SPOOL_RESEND
                      ? vigild_uplink_resend_refused(d->uplink, &done, error)
                      : vigild_uplink_replay(d->uplink, request->path, &done, error);
    if (ok) {
        answer->batches = done.batches;
        answer->skipped = done.skipped;
        answer->unreadable_bytes = done.unreadable_bytes;
    }
    return ok;
}

static const struct vigild_server_ops daemon_server_ops = {
    .take_signals = take_signals,
    .status_json = status_json,
    .summary = summary,
    .insight = insight,
    .note_job = note_job,
    .rank_known = rank_known,
    .spool = spool,
};

struct vigild_server *vigild_serve(struct vigild *d, GError **error)
{
    return vigild_server_new(d->settings.daemon.socket, &d->settings.daemon, &d->processes,
                             &daemon_server_ops, d, error);
}

static void reload_on_signal(void *user)
{
    vigil_service_reloading();
    vigild_reload(user);
    vigil_service_ready();
}

/* The first stops the main loop; later ones find it stopping. */
static void stop_on_signal(void *user, int signo, uint32_t sender_pid)
{
    struct vigild *d = user;
    if (d->stopping)
        return;
    g_message("stopping on %s from pid %u", g_strsignal(signo), sender_pid);
    vigil_service_stopping();
    d->stopping = TRUE;
    if (d->loop != NULL)
        g_main_loop_quit(d->loop);
}

gboolean vigild_listen_signals(struct vigild *d, GError **error)
{
    return vigild_signals_start(&d->signals, reload_on_signal, stop_on_signal, d, error);
}
