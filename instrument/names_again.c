/* vigil — the file names again, when vigild asks for them.
 *
 * A file's name record goes into the ring once, before its first activity.
 * A vigild restarted without the names the one before it read (another
 * state folder, a names file lost) cannot tell which file an activity is
 * of; it asks through the ring's header (vigil_ring_want_names), and this
 * writes every name record again. It looks off the hot path only: when a
 * thread's reads and writes move to another bin of the timeline (every
 * 0.1 s of I/O at first, wider as the process ages), when a file gets its
 * first record, and once the summary is in at exit (a process that
 * registers again then has just been met by a new vigild).
 *
 * The names go in while the ring keeps a quarter of its slots free for the
 * program's activities; the rest goes at the next look. One thread answers
 * at a time; no heap, no lock, no system call. */
#include "preload.h"

static struct {
    _Atomic int busy;   /* a thread is answering */
    uint64_t serving;   /* the request being answered; 0 for none */
    uint32_t next_file; /* where its names go on, in preload_files_announce_all's order */
} names;

void preload_names_check(void)
{
    struct vigil_ring *ring = preload.ring;
    if (ring == NULL)
        return;
    uint64_t wanted = vigil_ring_names_wanted(ring);
    if (wanted == vigil_ring_names_answered(ring) || atomic_exchange(&names.busy, 1))
        return;
    if (wanted != names.serving) {
        names.serving = wanted;
        names.next_file = 0;
        /* Every file's name is due again, before its next activity too
         * (preload_file_announce), whichever thread comes to it first. */
        atomic_fetch_add_explicit(&preload.ring_generation, 1, memory_order_relaxed);
    }
    if (preload_files_announce_all(&names.next_file, vigil_ring_slot_count(ring) / 4))
        vigil_ring_names_given(ring, wanted);
    atomic_store(&names.busy, 0);
}

void preload_names_reset_after_fork(void)
{
    /* The child's ring is new: nobody has asked it for anything. */
    atomic_store(&names.busy, 0);
    names.serving = 0;
    names.next_file = 0;
}
