/* vigil — the local protocol: instrumented processes and `vigil status`
 * talking to vigild over its Unix socket.
 *
 * The socket is SOCK_SEQPACKET: a connection whose messages keep their
 * boundaries, so that a message is read whole or not at all and a short or
 * long one is an error rather than a lost frame. Both ends are on one node,
 * so the fixed-size fields are in the node's own byte order.
 *
 * A conversation, from the instrumented process's side:
 *
 *   REGISTER (+ the ring's memfd)  →
 *                                  ←  REGISTERED (its process id) or REFUSED (why),
 *                                     or REGISTERED_APART (its process id, the run it is
 *                                     kept in and why: the run it named is another user's)
 *   RANK, once MPI_Init told it    →
 *   SUMMARY_REQUEST, at exit       →
 *                                  ←  SUMMARY (energy and its source, what was drained)
 *                                  ←  INSIGHT (the findings' thresholds, vigil/insight.h)
 *   REPORT (+ a memfd of its JSON) →  (after printing its report)
 *                                  ←  only REFUSED (why), for a report vigild will not keep
 *
 * and from `vigil status`: STATUS_REQUEST → STATUS, whose JSON travels in a
 * memfd passed with the reply, since it outgrows a socket buffer on a node
 * with a thousand processes.
 *
 * A scheduler's prolog, epilog or SPANK plugin (vigil/job_notice.h, `vigil
 * job begin|end`): JOB → JOB_NOTED, or REFUSED (why). One message per
 * connection. JOB is new in version 3's lifetime: a type a vigild does not
 * know is refused by type, so adding one leaves every existing layout, and
 * the version, as they were (a process that outlives a vigild upgrade can
 * still re-attach). REGISTERED_APART (12) likewise: a library older than it
 * takes it for an answer it does not know, and its report lacks vigild's
 * summary; its process is registered all the same. INSIGHT (14) comes after
 * the SUMMARY, which an older library stops reading at; a library that
 * waits for it past the SUMMARY from an older vigild waits out the
 * summary's bound (100 ms) and uses the default thresholds.
 *
 * `vigil spool resend|replay` (root or vigild's own user): SPOOL → SPOOL
 * (what was done), or REFUSED (why). One message per connection.
 *
 * vigild trusts nothing in a message about who sent it: pid and uid come
 * from the kernel (SO_PEERCRED). This part is GLib-free: the preload
 * library links it. */
#ifndef VIGIL_LOCAL_PROTOCOL_H
#define VIGIL_LOCAL_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "vigil/error.h"

#define VIGIL_SOCKET_DEFAULT  "/run/vigil/vigild.sock"
#define VIGIL_LOCAL_MAGIC     0x434c4756u /* "VGLC" */
#define VIGIL_LOCAL_VERSION   3u
#define VIGIL_LOCAL_MAX_BYTES 16384u /* a whole message, header included */

enum vigil_local_type {
    VIGIL_LOCAL_REGISTER = 1,          /* process → daemon, with the ring's memfd */
    VIGIL_LOCAL_REGISTERED = 2,        /* daemon → process */
    VIGIL_LOCAL_REFUSED = 3,           /* daemon → any client: why, as text */
    VIGIL_LOCAL_RANK = 4,              /* process → daemon */
    VIGIL_LOCAL_SUMMARY_REQUEST = 5,   /* process → daemon, no payload */
    VIGIL_LOCAL_SUMMARY = 6,           /* daemon → process */
    VIGIL_LOCAL_STATUS_REQUEST = 7,    /* vigil status → daemon */
    VIGIL_LOCAL_STATUS = 8,            /* daemon → vigil status, with a memfd of JSON */
    VIGIL_LOCAL_REPORT = 9,            /* process → daemon, at exit; a memfd of JSON, if any */
    VIGIL_LOCAL_JOB = 10,              /* prolog/epilog/SPANK → daemon: a job begins or ends */
    VIGIL_LOCAL_JOB_NOTED = 11,        /* daemon → that client, no payload */
    VIGIL_LOCAL_REGISTERED_APART = 12, /* daemon → process: registered, in a run of its own */
    VIGIL_LOCAL_SPOOL = 13,            /* vigil spool → daemon, and its answer back */
    VIGIL_LOCAL_INSIGHT = 14,          /* daemon → process, after SUMMARY: [insight] */
};

struct vigil_local_header {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t payload_bytes; /* after the header; the message's length says the same */
    uint32_t reserved;      /* zero */
};
_Static_assert(sizeof(struct vigil_local_header) == 16, "local header layout changed");

/* REGISTER: what the process says about itself. The strings follow the
 * fixed part, each without a NUL, in this order: program, cwd, job id, run
 * key (vigil/run_key.h: never empty), then argv with a NUL after each
 * argument. */
struct vigil_local_register {
    uint32_t ring_slots;  /* must be the passed ring's */
    uint32_t tick_source; /* enum vigil_tick_source of the ring's times */
    /* A (ticks, CLOCK_MONOTONIC ns) pair and CLOCK_REALTIME taken together
     * at the process's start. */
    uint64_t start_ticks;
    uint64_t start_monotonic_ns;
    uint64_t start_realtime_ns;
    int32_t mpi_rank; /* -1 until known */
    uint32_t argc;    /* arguments in the argv string */
    uint16_t program_bytes;
    uint16_t cwd_bytes;
    uint16_t job_bytes;
    uint16_t argv_bytes;
    uint32_t flags; /* enum vigil_local_register_flags */
    uint16_t run_bytes;
    uint16_t reserved;
};
_Static_assert(sizeof(struct vigil_local_register) == 56, "register layout changed");

enum vigil_local_register_flags {
    VIGIL_LOCAL_ARGV_TRUNCATED = 1u << 0, /* argv did not fit in the message */
    /* Sent again, with the same ring, to a vigild that restarted since the
     * first REGISTER: it may have taken the process back already. */
    VIGIL_LOCAL_REATTACH = 1u << 1,
};

/* A decoded REGISTER: the strings point into the message, NUL-terminated
 * copies are the caller's to make. */
struct vigil_local_process_info {
    struct vigil_local_register fixed;
    const char *program, *cwd, *job, *run_key, *argv; /* lengths in `fixed` */
};

/* REGISTERED */
struct vigil_local_registered {
    uint64_t process_id; /* the daemon's name for this process, unique on the node */
};

/* REGISTERED_APART: registered, but not in the run its REGISTER named,
 * which is another user's (vigil/run_key.h): in the run kept apart for its
 * own user. The run key and the reason follow, each without a NUL. */
struct vigil_local_registered_apart {
    uint64_t process_id;
    uint16_t run_bytes;
    uint16_t reason_bytes; /* at most VIGIL_LOCAL_APART_REASON_MAX */
    uint32_t reserved;
};
_Static_assert(sizeof(struct vigil_local_registered_apart) == 16, "apart layout changed");
#define VIGIL_LOCAL_APART_REASON_MAX 1024u

/* RANK */
struct vigil_local_rank {
    int32_t rank;
    int32_t size;
};

/* SUMMARY: what the daemon knows of the process when it asks, just before
 * it exits. Texts are NUL-terminated within their arrays. */
struct vigil_local_summary {
    uint64_t process_id;
    uint64_t activities_drained; /* records taken out of its ring */
    uint64_t names_drained;
    uint64_t gaps;    /* ring positions skipped as corrupt or torn */
    uint64_t dropped; /* records its ring had no room for, as the ring counts them */
    uint64_t anomalies;
    double cpu_s;          /* its CPU time as last sampled; NaN when unknown */
    double energy_j;       /* its share of the node's energy; NaN when unavailable */
    uint32_t energy_flags; /* enum vigil_local_energy_flags */
    uint32_t reserved;
    char energy_source[32]; /* "energy/powercap", "energy/estimate"… */
    char energy_note[192];  /* when energy_j is NaN: why */
    /* Capture (daemon/capture.c): its cycles decided so far and how many
     * were abnormal, and what became of its activities. observed =
     * forwarded + dropped + lost + held, held being those whose cycle is
     * not decided yet (the one it exits in, at least). */
    uint64_t cycles, abnormal_cycles;
    uint64_t activities_observed, activities_forwarded, activities_dropped;
    uint64_t activities_lost, activities_held;
    char capture_mode[16]; /* "anomalies", "all", "none" */
};
_Static_assert(sizeof(struct vigil_local_summary) == 368, "summary layout changed");

/* INSIGHT: vigild's [insight] thresholds, struct vigil_insight_thresholds
 * as it is (only uint64_t and double fields); decoded only when
 * vigil_insight_check accepts every one. */
#define VIGIL_LOCAL_INSIGHT_BYTES 152u

enum vigil_local_energy_flags {
    VIGIL_LOCAL_ENERGY_ESTIMATED = 1u << 0, /* a model's figure, not a meter's */
    VIGIL_LOCAL_ENERGY_UNCERTAIN = 1u << 1, /* a sample it rests on was uncertain */
};

/* STATUS_REQUEST */
struct vigil_local_status_request {
    /* A pid the client knows has ended (it waited for it): the daemon
     * finishes that process (a last drain) before it answers, so the
     * answer includes everything the process wrote. 0 for none. */
    int32_t finished_pid;
    uint32_t reserved;
};

/* STATUS: the JSON's length; the JSON itself is in the memfd. */
struct vigil_local_status {
    uint64_t json_bytes;
};

/* REPORT: how the process ended and, in a sealed memfd passed with it, the
 * JSON form of its report (exactly the one VIGIL_REPORT_FORMAT=json writes;
 * under MPI, rank 0 sends the job's report and the other ranks their own).
 * json_bytes 0: no report (VIGIL_REPORT=off), and no memfd. */
struct vigil_local_report {
    int32_t exit_code; /* 0–255 as WEXITSTATUS gives it; -1 unknown */
    uint32_t reserved;
    uint64_t json_bytes;
};
_Static_assert(sizeof(struct vigil_local_report) == 16, "report layout changed");

/* A report's JSON may not be longer: the warehouse's uplink carries a text
 * of at most this (VIGIL_WIRE_TEXT_MAX). */
#define VIGIL_LOCAL_REPORT_MAX_BYTES (1u << 20)

/* JOB: a scheduler job, or one step of it, begins or ends on this node. The
 * strings follow the fixed part, each without a NUL, in this order: job
 * id, step id (none: the whole job), user name, node list. vigild stamps
 * the time itself; who sent it comes from the kernel. */
struct vigil_local_job {
    uint32_t flags; /* enum vigil_local_job_flags */
    uint32_t uid;   /* the job's user; VIGIL_LOCAL_JOB_UID_UNKNOWN */
    uint16_t job_bytes;
    uint16_t step_bytes;
    uint16_t user_bytes;
    uint16_t nodes_bytes;
};
_Static_assert(sizeof(struct vigil_local_job) == 16, "job layout changed");

enum vigil_local_job_flags {
    VIGIL_LOCAL_JOB_BEGIN = 1u << 0, /* else it ends */
};

#define VIGIL_LOCAL_JOB_UID_UNKNOWN UINT32_MAX

/* SPOOL: an administrator asks vigild's uplink to send batches again; the
 * answer is a SPOOL with the counts filled in (and path empty). */
enum vigil_local_spool_op {
    /* The batches vigil-txd refused, kept in SPOOL_DIR/refused/: once what
     * made it refuse them is fixed (a node id's key, say). */
    VIGIL_LOCAL_SPOOL_RESEND = 1,
    /* What can be read of the file at `path` (a NAME.damaged the spool
     * set aside, or any file of whole batches): its intact batches. */
    VIGIL_LOCAL_SPOOL_REPLAY = 2,
};

#define VIGIL_LOCAL_SPOOL_PATH_MAX 4096 /* PATH_MAX, its NUL included */

struct vigil_local_spool {
    uint32_t op; /* enum vigil_local_spool_op */
    uint32_t reserved;
    uint64_t batches;          /* answer: batches queued to be sent again */
    uint64_t skipped;          /* answer: batches vigild already holds, left as they are */
    uint64_t unreadable_bytes; /* answer: bytes no intact batch could be read from */
    char path[VIGIL_LOCAL_SPOOL_PATH_MAX]; /* REPLAY: NUL-terminated, absolute; else "" */
};
_Static_assert(sizeof(struct vigil_local_spool) == 32 + VIGIL_LOCAL_SPOOL_PATH_MAX,
               "spool layout changed");
/* Limits of a JOB's strings, in bytes. A job id and a step are printable
 * ASCII without spaces, as a run key ("slurm-JOB.STEP") is; a user name
 * is UTF-8 without control characters; a node list is a Slurm host list
 * ("node[01-64],gpu3"), printable ASCII without spaces. */
#define VIGIL_LOCAL_JOB_ID_MAX    64u
#define VIGIL_LOCAL_JOB_STEP_MAX  32u
#define VIGIL_LOCAL_JOB_USER_MAX  256u
#define VIGIL_LOCAL_JOB_NODES_MAX 8192u

/* A decoded JOB: the strings point into the message (lengths in `fixed`). */
struct vigil_local_job_info {
    struct vigil_local_job fixed;
    const char *job, *step, *user, *nodes;
};

/* Sending and receiving ----------------------------------------------------------------------- */

/* Sends one message, with `pass_fd` as SCM_RIGHTS when it is >= 0.
 * Retries on EINTR; false with err set and errno kept on failure (EAGAIN
 * included: a full socket, or the send timeout, is the caller's to handle).
 * Never raises SIGPIPE. Error texts are libc's untranslated ones: nothing
 * here allocates, so the preload library can call it from its exit path. */
bool vigil_local_send(int socket_fd, enum vigil_local_type type, const void *payload,
                      size_t payload_bytes, int pass_fd, struct vigil_error *err);

/* Receives one message into `buffer` (VIGIL_LOCAL_MAX_BYTES) and checks its
 * header. Returns the payload's length and sets *type, or -1 with err set:
 * the peer closed (err says so, errno 0), a read error (errno), or a
 * malformed message (errno EPROTO). A received descriptor goes to
 * *received_fd (close-on-exec); when the caller passes NULL it is closed. A
 * message with more than one descriptor is malformed: all of them are
 * closed, so that a hostile peer cannot make the receiver leak fds. */
ssize_t vigil_local_receive(int socket_fd, void *buffer, enum vigil_local_type *type,
                            int *received_fd, struct vigil_error *err);

/* Encoding and decoding ----------------------------------------------------------------------- */

/* Builds a REGISTER payload into `buffer` (at least VIGIL_LOCAL_MAX_BYTES -
 * the header) from `info` (whose fixed lengths are ignored: the strings are
 * NUL-terminated here, argv is `argc` strings). Arguments that do not fit
 * are left out and the message says so. Returns the payload's length. */
size_t vigil_local_encode_register(void *buffer, const struct vigil_local_register *fixed,
                                   const char *program, const char *cwd, const char *job,
                                   const char *run_key, int argc, char *const *argv);

/* Checks a REGISTER payload: lengths that add up, strings without NUL but
 * argv's separators, argc matching them, a valid run key, known flags and
 * tick source, a ring size the ring allows, a rank of -1 or more. */
bool vigil_local_decode_register(const void *payload, size_t payload_bytes,
                                 struct vigil_local_process_info *out, struct vigil_error *err);

/* Builds a JOB payload into `buffer` (at least VIGIL_LOCAL_MAX_BYTES - the
 * header) from NUL-terminated strings (step, user and nodes may be NULL).
 * Nothing is cut: a string over its limit, or one the decoder would refuse,
 * is an error that names it. Returns the payload's length, 0 on error. */
size_t vigil_local_encode_job(void *buffer, bool begin, const char *job, const char *step,
                              const char *user, uint32_t uid, const char *nodes,
                              struct vigil_error *err);

/* Checks a JOB payload: lengths that add up, each string within its limit
 * and of its characters, a job id that is not empty, known flags. */
bool vigil_local_decode_job(const void *payload, size_t payload_bytes,
                            struct vigil_local_job_info *out, struct vigil_error *err);

/* Builds a REGISTERED_APART payload into `buffer` (at least
 * VIGIL_LOCAL_MAX_BYTES - the header); a reason past its limit is cut.
 * Returns the payload's length. */
size_t vigil_local_encode_registered_apart(void *buffer, uint64_t process_id, const char *run_key,
                                           const char *reason);
/* Checks a REGISTERED_APART payload (lengths that add up, a valid run
 * key, a reason without NUL) and copies the key into `run_key`
 * (VIGIL_RUN_KEY_MAX + 1 bytes) and the reason into `reason`, cut to
 * `reason_size`. */
bool vigil_local_decode_registered_apart(const void *payload, size_t payload_bytes,
                                         uint64_t *process_id, char *run_key, char *reason,
                                         size_t reason_size, struct vigil_error *err);

/* Checks a fixed-size payload: its length, and for a SUMMARY that its texts
 * are terminated and its flags known; for a REPORT, an exit code of -1 to
 * 255 and a length within VIGIL_LOCAL_REPORT_MAX_BYTES; for a SPOOL, a
 * known op, reserved 0, and a terminated path, absolute for REPLAY; for an
 * INSIGHT, thresholds vigil_insight_check accepts. */
bool vigil_local_decode_fixed(enum vigil_local_type type, const void *payload, size_t payload_bytes,
                              void *out, struct vigil_error *err);

/* Copies the text of a REFUSED message into `out` (NUL-terminated, cut to
 * `out_size`). The text is the payload's bytes, without NUL; one NUL at its
 * very end is tolerated. An empty text, or a NUL inside it, is refused. */
bool vigil_local_decode_text(enum vigil_local_type type, const void *payload, size_t payload_bytes,
                             char *out, size_t out_size, struct vigil_error *err);

const char *vigil_local_type_name(unsigned type); /* "register"; NULL if unknown */

/* A Unix socket path's room (sockaddr_un's sun_path). */
#define VIGIL_SOCKET_PATH_MAX 108
/* Beside vigild's socket PATH, root's: PATH.root, mode 0600, for root and
 * vigild's own user. One user can keep the shared socket's backlog full;
 * root's programs and notices then still find room. */
#define VIGIL_ROOT_SOCKET_SUFFIX ".root"
/* The sockets a client of effective uid `euid` tries, in this order, for
 * vigild's socket `path`: root's first for root, then the shared one.
 * Writes them into `paths` and returns how many (0 when `path` with the
 * suffix does not fit, so that a path is usable for everyone or no one). */
int vigil_local_daemon_sockets(const char *path, uid_t euid, char paths[2][VIGIL_SOCKET_PATH_MAX]);

#endif
