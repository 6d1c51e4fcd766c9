/* vigild — the capture buffer: each process's activities per cycle,
 * forwarded around abnormal cycles, dropped otherwise (capture.c). */
#ifndef VIGILD_CAPTURE_H
#define VIGILD_CAPTURE_H

#include <stdint.h>
#include <sys/types.h>
#include <glib.h>

#include "vigil/activity.h"
#include "vigil/metric.h"
#include "verdicts.h"

enum vigild_capture_mode {
    VIGILD_CAPTURE_ANOMALIES, /* cycles around an abnormal one */
    VIGILD_CAPTURE_ALL,
    VIGILD_CAPTURE_NONE,
};

/* Counts of one process's activities, or the node's totals. */
struct vigild_capture_counts {
    uint64_t observed;  /* drained into the capture buffer */
    uint64_t forwarded; /* sent on in a window */
    uint64_t dropped;   /* dropped by policy: in no window */
    uint64_t lost;      /* not kept: the memory bound was hit */
    uint64_t held;      /* waiting for their cycle's decision */
    uint64_t cycles, abnormal_cycles, windows;
};

struct vigild_capture {
    enum vigild_capture_mode mode;
    guint pre, post;
    uint64_t max_held;    /* activities held on the node at most */
    GHashTable *subjects; /* uint64 process id → struct capture_subject * (0: the node) */
    uint64_t held;        /* activities held now, every process */
    uint64_t next_window;
    struct vigild_capture_counts total;
    uint64_t cycle; /* the cycle being filled */
    uint64_t cycle_start_ns;
    /* Where forwarded cycles and windows go, in order, each with the
     * cycles whose statistics it has had (capture_consumer.h). */
    GArray *consumers;
    /* The node's samples of a cycle, for a window's statistics. */
    void (*statistics)(void *user, uint64_t start_ns, uint64_t end_ns, GArray *out);
    void *statistics_user;
    /* Told a process's final counts when it is forgotten. */
    void (*finished)(void *user, uint64_t process_id, const struct vigild_capture_counts *counts);
    void *finished_user;
    const vigil_metric_catalog *catalog;
};

void vigild_capture_init(struct vigild_capture *c, const vigil_metric_catalog *catalog);
/* Mode, pre and post cycles, the memory bound; from the next cycle on. */
void vigild_capture_configure(struct vigild_capture *c, enum vigild_capture_mode mode, guint pre,
                              guint post, uint64_t max_held);
void vigild_capture_add_process(struct vigild_capture *c, uint64_t process_id, pid_t pid,
                                const char *program, int32_t mpi_rank);
void vigild_capture_activity(struct vigild_capture *c, uint64_t process_id,
                             const struct vigil_activity *activity);
void vigild_capture_name(struct vigild_capture *c, uint64_t process_id, uint32_t file_id,
                         const char *path);
void vigild_capture_set_rank(struct vigild_capture *c, uint64_t process_id, int32_t mpi_rank);
/* The process has ended: its last cycle is decided at the next cycle's
 * end, then it is forgotten. */
void vigild_capture_end_process(struct vigild_capture *c, uint64_t process_id);
/* A cycle's end: forwards or drops each process's cycle. */
void vigild_capture_close_cycle(struct vigild_capture *c, const struct vigild_cycle_verdicts *v);
/* The ring position of the oldest activity of the process still held for
 * a decision, and how many are held; FALSE when none is. */
gboolean vigild_capture_oldest_held(const struct vigild_capture *c, uint64_t process_id,
                                    uint64_t *seq, uint64_t *held);
/* A process taken back after a restart of vigild: its counts go on. */
void vigild_capture_restore(struct vigild_capture *c, uint64_t process_id,
                            const struct vigild_capture_counts *counts);
/* A process's counts (FALSE when it is not known), or the node's. */
gboolean vigild_capture_counts(const struct vigild_capture *c, uint64_t process_id,
                               struct vigild_capture_counts *out);
/* Closes every consumer too. */
void vigild_capture_clear(struct vigild_capture *c);
const char *vigild_capture_mode_name(enum vigild_capture_mode mode);

#endif
