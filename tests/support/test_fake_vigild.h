/* vigil — a fake vigild for the tests of libvigil-preload.so's link to the
 * daemon: it listens on a Unix SOCK_SEQPACKET socket in a thread of the
 * test and takes connections as vigild does (the first message must be
 * REGISTER with the ring's memfd; pid and uid from SO_PEERCRED; the ring
 * attached with vigil_ring_attach), then answers as the test asks: a
 * SUMMARY of what it drained, nothing, or REFUSED; it takes the REPORT a
 * process sends at exit (its exit status and its report's JSON). Everything
 * each client said is kept for the test to check once the daemon is
 * stopped.
 *
 * No sleeps: the thread waits in poll, and stopping it (after the clients
 * have exited) handles everything they sent before it returns. */
#ifndef VIGIL_TEST_FAKE_VIGILD_H
#define VIGIL_TEST_FAKE_VIGILD_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vigil/insight.h"
#include "vigil/local_protocol.h"
#include "vigil/ontology.h"

enum test_fake_vigild_mode {
    TEST_FAKE_VIGILD_ANSWER,    /* REGISTERED; on SUMMARY_REQUEST, drain and SUMMARY */
    TEST_FAKE_VIGILD_SILENT,    /* REGISTERED; a summary request goes unanswered */
    TEST_FAKE_VIGILD_REFUSE,    /* REFUSED with `refusal`, then the connection is closed */
    TEST_FAKE_VIGILD_NO_ACCEPT, /* listens with a backlog of 0 and never accepts */
    TEST_FAKE_VIGILD_HANG_UP,   /* REGISTERED; closes the connection on a summary request */
};

/* One connection, in the order they were accepted. */
struct test_fake_vigild_client {
    pid_t pid; /* SO_PEERCRED */
    uid_t uid;
    char *problem; /* what was wrong with its registration (g_free'd), or NULL */
    bool registered;
    uint64_t process_id; /* 17, 18…: in the order of registration */
    struct vigil_local_register fixed;
    char *program, *cwd, *job, *run_key;
    GPtrArray *argv; /* of char * */
    bool ring_attached;
    uint32_t ring_slots; /* vigil_ring_slot_count of the attached ring */
    ino_t ring_inode;    /* of the memfd it passed */
    int rank, size;      /* from RANK; -1 before */
    int summary_requests;
    int reports;                  /* REPORT messages */
    int exit_code;                /* from the last REPORT; -2 before one came */
    char *report_json;            /* its JSON, read from its memfd; NULL when it had none */
    bool report_sealed;           /* the memfd was sealed against writing, shrinking and growing */
    uint64_t answered_activities; /* the drained count its SUMMARY gave */
    /* Everything drained from its ring, at summary requests and after it
     * closed the connection. */
    uint64_t activities, names, gaps, dropped;
    uint64_t ops[VIGIL_OP_MAX_ID + 1]; /* activities per operation */
    bool closed;                       /* it closed the connection (it ended) */
    /* It closed the connection with messages of ours unread (the kernel
     * then says ECONNRESET, once, before what is still queued). */
    bool reset;
};

struct test_fake_vigild;

/* The SUMMARY a client gets, before it is sent: the test may change it. */
typedef void (*test_fake_vigild_answer_fn)(const struct test_fake_vigild_client *client,
                                           struct vigil_local_summary *summary, void *user);

/* The capture figures of a SUMMARY; observed is their sum. */
struct test_fake_vigild_capture {
    const char *mode; /* NULL: the fake's own figures, see below */
    uint64_t cycles, abnormal_cycles;
    uint64_t forwarded, dropped, lost, held;
};

struct test_fake_vigild_settings {
    enum test_fake_vigild_mode mode;
    /* ANSWER: the summary's energy (NaN for none) and its words. */
    double energy_j;
    const char *energy_source;
    uint32_t energy_flags;
    const char *energy_note;
    /* ANSWER: the summary's capture. Without a mode, that of a process
     * that ended within its first cycle: mode "anomalies", no cycle
     * decided, every activity it drained held. */
    struct test_fake_vigild_capture capture;
    test_fake_vigild_answer_fn answer; /* or NULL */
    void *answer_user;
    const char *refusal; /* REFUSE: the reason */
    /* ANSWER: thresholds sent as INSIGHT after the SUMMARY, as vigild
     * does; NULL: none, as an older vigild. */
    const struct vigil_insight_thresholds *insight;
};

/* Listens on `socket_path` (which must not exist) and starts the thread;
 * fails the test when it cannot. */
struct test_fake_vigild *test_fake_vigild_start(const char *socket_path,
                                                const struct test_fake_vigild_settings *settings);
/* Handles everything the clients sent until now, then stops the thread.
 * Call it once the clients have ended. */
void test_fake_vigild_stop(struct test_fake_vigild *d);
/* After test_fake_vigild_stop. */
guint test_fake_vigild_count(const struct test_fake_vigild *d);
const struct test_fake_vigild_client *test_fake_vigild_client(const struct test_fake_vigild *d,
                                                              guint i);
/* The client with this pid, or NULL. */
const struct test_fake_vigild_client *test_fake_vigild_find(const struct test_fake_vigild *d,
                                                            pid_t pid);
/* Stops it if needed, removes the socket and frees everything. */
void test_fake_vigild_free(struct test_fake_vigild *d);

#endif
