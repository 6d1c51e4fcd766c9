/* vigild — what `vigil status` is told, as JSON (status.c). */
#ifndef VIGILD_STATUS_H
#define VIGILD_STATUS_H

#include <stdint.h>
#include <sys/types.h>

#include "vigil/local_protocol.h"

struct vigild_snapshot; /* snapshot.h */
struct vigild_process;  /* processes.h */

/* What `vigil status` shows a client of `viewer_uid`, as a JSON text
 * (g_free it): root and vigild's own user see every process, any other
 * user only their own, and how many others there are. */
char *vigild_status_json(const struct vigild_snapshot *snap, uid_t viewer_uid,
                         int32_t finished_pid);
/* The summary a process asks for at exit. */
void vigild_status_summary(const struct vigild_snapshot *snap, const struct vigild_process *p,
                           struct vigil_local_summary *out);

#endif
