/* vigild — where capture's forwarded cycles and windows go: one interface,
 * in the manner of collectd's write callbacks. The JSON sink
 * (capture_json.c) and the outbox to vigil-txd (outbox.c) are its two
 * consumers; capture.c keeps a list of them and tells each the same
 * events in the same order, so that what they share (which cycles'
 * statistics each has had, the samples read once per cycle, a window's
 * reasons, every count) is kept once, in capture.
 *
 * Within a cycle's close a consumer is told, per subject: the statistics
 * and the activities of each forwarded cycle, then each window that
 * closes; after every subject, the cycle's end. Every callback may be
 * NULL. A consumer only reads what it is given, and keeps what it needs
 * beyond the call (the outbox takes a reference to the activities). */
#ifndef VIGILD_CAPTURE_CONSUMER_H
#define VIGILD_CAPTURE_CONSUMER_H

#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

#include "capture.h"
#include "verdicts.h"

/* A cycle of a subject: its span and its activities in drain order. */
struct vigild_capture_cycle {
    uint64_t cycle;
    uint64_t start_ns, end_ns;
    GArray *activities; /* struct vigil_activity; g_array_ref() it to keep it */
};

/* Why a cycle of a window was forwarded: every level abnormal in it,
 * copied from the cycle's verdicts, which the window outlives. */
struct vigild_capture_reason {
    uint64_t cycle;
    struct vigild_verdict *process, *node; /* NULL: not abnormal on their own */
    enum vigil_health system_state;        /* as upstream said; 0: none */
};

/* A subject as consumers see it: a process, or the node (process id 0),
 * and its window. */
struct vigild_capture_subject {
    uint64_t process_id;
    pid_t pid;
    char *program;
    int32_t mpi_rank;
    GHashTable *names; /* file id → path, its bytes as the ring gave them */
    /* The window being forwarded; 0 when none is open. */
    uint64_t window;
    gboolean window_keeps_all; /* opened under mode = all, which is its reason */
    uint64_t window_first, window_last, window_activities;
    uint64_t window_start_ns, window_end_ns;
    GArray *reasons;           /* struct vigild_capture_reason, one per abnormal cycle */
    uint64_t reasons_left_out; /* abnormal cycles past those kept */
};

struct vigild_capture_consumer {
    const char *name; /* "sink", "outbox": one consumer of each name */
    void *context;
    /* The node's samples of a forwarded cycle: once per cycle and
     * consumer, whichever subjects forward it. */
    void (*statistics)(void *context, const struct vigild_capture_cycle *cycle,
                       const GArray *samples);
    /* A process's forwarded cycle (the node has no activities). */
    void (*activities)(void *context, const struct vigild_capture_subject *s,
                       const struct vigild_capture_cycle *cycle);
    /* A window that closed, under capture's mode now. */
    void (*window)(void *context, const struct vigild_capture_subject *s,
                   enum vigild_capture_mode mode);
    /* The cycle's end, after every subject's: the processes capture knows
     * and the node's counts, held included. */
    void (*cycle_closed)(void *context, const struct vigild_cycle_verdicts *v, guint processes,
                         const struct vigild_capture_counts *total);
    /* A file id of a process was named (again, perhaps for another path). */
    void (*file_named)(void *context, uint64_t process_id, uint32_t file_id);
    /* Capture forgot a process after its last cycle. */
    void (*forget)(void *context, uint64_t process_id);
    /* Taken out of capture (replaced, removed, or capture cleared). */
    void (*close)(void *context);
};

/* The consumer of consumer->name becomes `consumer`, in the old one's place
 * (closed) or after the others; `consumer` NULL removes the one of `name`. */
void vigild_capture_set_consumer(struct vigild_capture *c, const char *name,
                                 const struct vigild_capture_consumer *consumer);
/* The context of the consumer called `name`, or NULL. */
void *vigild_capture_consumer_context(const struct vigild_capture *c, const char *name);

#endif
