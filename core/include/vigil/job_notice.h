/* vigil — job notices: telling the node's vigild that a scheduler job, or
 * one step of it, begins or ends here.
 *
 * For a Slurm prolog/epilog (through `vigil job begin|end`) and the SPANK
 * plugin, which runs inside slurmstepd: plain C, GLib-free, no allocation,
 * no main loop, and bounded in time (about a second at most, connect, send
 * and answer together), because a step must not wait on monitoring. It is
 * in libvigil-record (core/meson.build's static, position-independent
 * vigil_record_lib, vigil_record_dep), which a plugin links whole. */
#ifndef VIGIL_JOB_NOTICE_H
#define VIGIL_JOB_NOTICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long a notice may take, from connect to vigild's answer. */
#define VIGIL_JOB_NOTICE_TIMEOUT_MS 1000

struct vigil_job_notice {
    bool begin;            /* begins, else ends */
    const char *job_id;    /* required: printable ASCII, no spaces, 1 to 64 bytes */
    const char *step_id;   /* NULL or "": the whole job */
    const char *user;      /* NULL or "": not known */
    uint32_t uid;          /* UINT32_MAX: not known */
    const char *node_list; /* the job's nodes as Slurm writes them; NULL or "": not known */
};

/* Sends `n` to the vigild listening on `socket_path` (NULL: the default,
 * /run/vigil/vigild.sock) and waits for its answer. False with a message in
 * `err` (may be NULL; cut to err_bytes) that names the socket: no vigild
 * there, a vigild that refused the notice (its reason), or one that did not
 * answer in time. */
bool vigil_job_notice_send(const char *socket_path, const struct vigil_job_notice *n, char *err,
                           size_t err_bytes);

#endif
