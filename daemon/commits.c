/* vigild — freeing what the rings hold once it is stored.
 *
 * A ring's records are released only once they are spooled or
 * acknowledged (or decided: dropped by capture's policy, or by a bound,
 * which is counted). With the spool written ahead, a cycle's batch is in
 * the spool when the cycle ends, and its positions are committed at once.
 * When it is not (the spool cannot be written, or spool_after_ms holds
 * batches in memory), the cycle's positions are noted with the sequence
 * of its last batch and committed at a later cycle's end, once the uplink
 * says every batch up to it is durable (vigild_uplink_durable_below); till
 * then the rings keep those slots, so a SIGKILL of vigild loses none of
 * it: the next vigild reads them again. Each process's energy, which no
 * ring gives back, is saved at every cycle's end all the same. */
#include <inttypes.h>

#include "vigil/ring.h"
#include "commits.h"
#include "daemon.h"
#include "outbox.h"
#include "process_state.h"
#include "uplink.h"

/* Noted cycles kept at most: the newest are kept, since committing a newer
 * one covers the older. */
#define COMMIT_POINTS_MAX 16

/* One process's position at a cycle's end, and its counts then. */
struct process_point {
    uint64_t process_id;
    uint64_t position;   /* everything before it is in the cycle's batches, or decided */
    uint64_t held;       /* activities after it, drained: read again by a new vigild */
    uint64_t kept;       /* of those, kept back for their file names, not yet observed */
    uint64_t activities; /* drained then */
    struct vigild_capture_counts capture;
};

struct commit_point {
    uint64_t sequence; /* the last batch the cycle made; 0: none */
    GArray *processes; /* struct process_point */
};

static void point_free(struct commit_point *point)
{
    g_array_free(point->processes, TRUE);
    g_free(point);
}

static void measure(const struct vigild *d, const struct vigild_process *p,
                    struct process_point *out)
{
    out->process_id = p->id;
    out->position = vigil_ring_read_position(p->ring);
    out->held = 0;
    uint64_t oldest;
    if (vigild_capture_oldest_held(&d->capture, p->id, &oldest, &out->held))
        out->position = oldest;
    /* Activities kept back for their file names come before any capture
     * holds. */
    out->kept = vigild_processes_oldest_kept(p, &oldest) ? p->awaiting_names->len : 0;
    if (out->kept > 0)
        out->position = MIN(out->position, oldest);
    if (!vigild_capture_counts(&d->capture, p->id, &out->capture))
        out->capture = p->capture;
    out->activities = p->activities;
}

/* Writes the counts as of the point and frees the ring below it. What was
 * drained since the point is read again by a new vigild, so it counts as
 * held: not in the activities, and (in the capture counts of the point)
 * not observed. */
/* The process's running energy and CPU time, from its account now. */
static void take_energy(const struct vigild *d, struct vigild_process *p)
{
    const struct vigild_energy_account *a = vigild_energy_share_account(&d->energy, p->id);
    if (a != NULL) {
        p->cpu_s = a->cpu_s;
        p->energy_j = a->energy_j;
        p->energy_flags = a->flags;
        p->energy_shared = a->shared;
    }
}

static void apply(struct vigild *d, const struct process_point *point)
{
    struct vigild_process *p = vigild_processes_get(&d->processes, point->process_id);
    if (p == NULL || p->ring == NULL)
        return; /* ended: nothing is left for a restarted vigild to take */
    take_energy(d, p);
    uint64_t drained_since = p->activities - MIN(point->activities, p->activities);
    struct vigild_capture_counts counts = point->capture;
    counts.observed += drained_since;
    vigild_process_state_save(d->state_dir, p, &counts, point->position,
                              point->held + drained_since, point->kept);
    vigild_processes_commit(&d->processes, p, point->position);
}

void vigild_commit_process(struct vigild *d, struct vigild_process *p)
{
    if (d->state_dir == NULL || p->ring == NULL)
        return;
    struct process_point point;
    measure(d, p, &point);
    apply(d, &point);
}

static struct commit_point *take_point(struct vigild *d, uint64_t sequence)
{
    struct commit_point *point = g_new0(struct commit_point, 1);
    point->sequence = sequence;
    point->processes = g_array_new(FALSE, FALSE, sizeof(struct process_point));
    GPtrArray *running = vigild_processes_list(&d->processes);
    for (guint i = 0; i < running->len; i++) {
        const struct vigild_process *p = g_ptr_array_index(running, i);
        if (p->ring == NULL)
            continue;
        struct process_point pp;
        measure(d, p, &pp);
        g_array_append_val(point->processes, pp);
    }
    g_ptr_array_free(running, TRUE);
    return point;
}

/* Commits the newest noted point whose batches are all durable, and
 * forgets the ones before it. */
static void commit_durable(struct vigild *d)
{
    uint64_t durable_below = vigild_uplink_durable_below(d->uplink);
    struct commit_point *newest = NULL;
    struct commit_point *head;
    while ((head = g_queue_peek_head(&d->commit_points)) != NULL &&
           head->sequence < durable_below) {
        if (newest != NULL)
            point_free(newest);
        newest = g_queue_pop_head(&d->commit_points);
    }
    /* A cycle's positions wait for its batch's acknowledgement when the
     * spool is not written ahead; said when a whole cycle goes by. */
    gboolean held = d->commit_points.length > 1;
    if (held && !d->commits_held)
        g_warning("the rings keep what vigild read since batch %" PRIu64 ": it is neither "
                  "spooled nor acknowledged yet",
                  durable_below);
    else if (!held && d->commits_held)
        g_message("every batch is spooled or acknowledged: the rings are freed again");
    d->commits_held = held;
    if (newest == NULL)
        return;
    for (guint i = 0; i < newest->processes->len; i++)
        apply(d, &g_array_index(newest->processes, struct process_point, i));
    point_free(newest);
}

/* While a cycle's positions wait for their acknowledgement, the energy
 * shared since the last commit is kept all the same: it is a running sum
 * that no ring gives back, so a SIGKILL before the acknowledgement (which
 * may take the uplink's connect delay, or a vigil-txd away for hours)
 * would otherwise lose it, and the next vigild would take the process back
 * as having had no share at all. */
static void keep_energy(struct vigild *d)
{
    GPtrArray *running = vigild_processes_list(&d->processes);
    for (guint i = 0; i < running->len; i++) {
        struct vigild_process *p = g_ptr_array_index(running, i);
        if (p->ring == NULL)
            continue;
        take_energy(d, p);
        vigild_process_state_save_energy(d->state_dir, p);
    }
    g_ptr_array_free(running, TRUE);
}

void vigild_commit_cycle(struct vigild *d)
{
    if (d->state_dir == NULL)
        return;
    uint64_t sequence = d->outbox != NULL ? vigild_outbox_last_sequence(d->outbox) : 0;
    g_queue_push_tail(&d->commit_points, take_point(d, sequence));
    if (d->commit_points.length > COMMIT_POINTS_MAX)
        point_free(g_queue_pop_head(&d->commit_points));
    if (d->uplink == NULL) {
        /* The sink: written when the cycle's windows closed. */
        struct commit_point *point = g_queue_pop_tail(&d->commit_points);
        for (guint i = 0; i < point->processes->len; i++)
            apply(d, &g_array_index(point->processes, struct process_point, i));
        point_free(point);
        return;
    }
    commit_durable(d);
    if (!g_queue_is_empty(&d->commit_points))
        keep_energy(d);
}

gboolean vigild_commit_tick(struct vigild *d)
{
    if (d->uplink == NULL || g_queue_is_empty(&d->commit_points))
        return FALSE;
    commit_durable(d);
    return TRUE;
}

void vigild_commit_stop(struct vigild *d)
{
    if (d->uplink == NULL || g_queue_is_empty(&d->commit_points))
        return;
    vigild_uplink_spool_now(d->uplink);
    commit_durable(d);
}

void vigild_commits_clear(struct vigild *d)
{
    struct commit_point *point;
    while ((point = g_queue_pop_head(&d->commit_points)) != NULL)
        point_free(point);
}
