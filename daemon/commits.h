/* vigild — freeing what the rings hold once it is stored (commits.c). */
#ifndef VIGILD_COMMITS_H
#define VIGILD_COMMITS_H

#include <glib.h>

struct vigild;         /* daemon.h */
struct vigild_process; /* processes.h */

/* Keeps what a restarted vigild needs of `p` as of now and frees its ring
 * below its position: for a process just taken back, whose position the
 * vigild before committed. */
void vigild_commit_process(struct vigild *d, struct vigild_process *p);
/* A cycle's end, once its batch is with the uplink (or the sink): notes
 * each running process's position with the batch's sequence, then commits
 * the newest noted positions whose batches are all durable. */
void vigild_commit_cycle(struct vigild *d);
/* Between cycles, every tick: commits what became durable since (an
 * acknowledgement), so that a SIGKILL finds as little as can be read again
 * that was stored already. TRUE when there was something to look at. */
gboolean vigild_commit_tick(struct vigild *d);
/* The stop, after its last cycle: the uplink spools what it still holds in
 * memory, then what is durable is committed. */
void vigild_commit_stop(struct vigild *d);
/* Forgets the positions not committed (the stop's end). */
void vigild_commits_clear(struct vigild *d);

#endif
