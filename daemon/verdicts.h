/* vigild — verdicts: what reasoning.c decides and capture.c acts on. */
#ifndef VIGILD_VERDICTS_H
#define VIGILD_VERDICTS_H

#include <stdint.h>
#include <glib.h>

#include "vigil/adpi.h"
#include "vigil/health.h"
#include "vigil/reasoner.h"

/* One issue of a cycle, with the ADPI that reported it. */
struct vigild_issue {
    const char *plugin; /* the ADPI's name; lives as long as the daemon's registry */
    struct vigil_issue issue;
};

/* One reasoner's decision in one cycle, as capture and status read it. */
struct vigild_verdict {
    enum vigil_level level;
    uint64_t process_id; /* 0 for the node and the system */
    struct vigil_reasoner_decision decision;
    const struct vigild_issue *issues;
    guint n_issues;
};

/* What a cycle's end hands capture. */
struct vigild_cycle_verdicts {
    uint64_t cycle;
    uint64_t start_ns, end_ns;
    const struct vigild_verdict *node;
    enum vigil_health system_state; /* from upstream; 0 when there is none */
    gboolean final;                 /* the daemon stops: every window ends, nothing stays held */
    /* The verdict of a process, or NULL when it has none this cycle. */
    const struct vigild_verdict *(*process)(void *user, uint64_t process_id);
    void *user;
};

#endif
