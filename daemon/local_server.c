/* vigild — the Unix socket: processes register on it, ask for their
 * summary and hand in their report at exit; `vigil status` asks what the
 * daemon sees.
 *
 * Who is on the other end comes from the kernel (SO_PEERCRED), never from
 * a message. A client that sends something malformed, out of turn or a
 * ring the daemon refuses is counted, logged (once a period per user, with
 * the counts since: refusal_log.c) and disconnected; every other client
 * is served on as before. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "client_limits.h"
#include "processes.h"
#include "local_server.h"
#include "vigild_settings.h"
#include "vigild_error.h"

/* Messages read from one client in a catch-up: a client that floods the
 * socket must not hold a status answer up for ever. */
#define CATCH_UP_MESSAGES_MAX 64
/* Connections accepted in one turn of the main loop: a user connecting as
 * fast as it can must leave the tick and the other clients their turn (an
 * accept loop that ran until the backlog was empty missed 74 % of the
 * ticks under a flood of garbage connections). */
#define ACCEPTS_PER_TURN 64
/* The backlog holds at most this many connections (listen()'s argument,
 * which the kernel caps at net.core.somaxconn, plus one): a catch-up
 * accepts no more, so that it ends under a flood and still takes every
 * connection made before the status request it answers. */
#define LISTEN_BACKLOG      SOMAXCONN
#define BACKLOG_CONNECTIONS (LISTEN_BACKLOG + 1)

enum connection_role {
    ROLE_NEW,     /* has not said anything yet */
    ROLE_PROCESS, /* registered */
    ROLE_STATUS,  /* `vigil status` */
};

struct connection {
    uint64_t key;
    struct vigild_server *server;
    int fd;
    guint watch;
    pid_t pid;
    uid_t uid;
    uint64_t accepted_ns; /* CLOCK_MONOTONIC: the peer connected before it */
    enum connection_role role;
    uint64_t process_id;
    gboolean reported; /* its REPORT came: one per process */
    GList *idle;       /* its idle timeout while it has not registered (client_limits.c) */
};

/* A listening socket. Two: the socket every user connects to (0666), and
 * beside it the privileged one (PATH.root, 0600: root and vigild's own
 * user). One user can keep the shared socket's backlog full, and the
 * kernel queues in order of arrival, so root's programs (and the
 * scheduler's notices) would wait behind it for as long as it likes; on
 * their own socket, accepted first, they do not. */
enum { LISTENER_SHARED, LISTENER_ROOT, LISTENERS };
struct listener {
    struct vigild_server *server;
    char *path;
    int fd;
    guint watch;
};

struct vigild_server {
    struct vigild_processes *processes; /* the daemon's: registrations go there */
    const struct vigild_server_ops *ops;
    void *user;          /* the ops' */
    guint max_processes; /* [daemon] max_processes */
    struct listener listeners[LISTENERS];
    GHashTable *connections; /* key → struct connection * */
    uint64_t next_key;
    gboolean catching_up;
    gboolean accept_failing; /* logged once until accept works again */
    int spare_fd;            /* given up to accept and shed a client when out of descriptors */
    char *buffer;            /* VIGIL_LOCAL_MAX_BYTES, for every message */
    struct vigild_client_limits limits;
};

static void connection_close(struct connection *c)
{
    if (c->idle != NULL)
        vigild_client_limits_idle_stop(&c->server->limits, c->idle);
    vigild_client_limits_closed(&c->server->limits, c->uid);
    if (c->watch != 0) /* none yet while its first message is read at accept */
        g_source_remove(c->watch);
    close(c->fd);
    g_hash_table_remove(c->server->connections, &c->key); /* frees c */
}

/* "pid 1234 (dd)" or "pid 1234", for log lines. */
static char *client_label(const struct connection *c)
{
    const struct vigild_process *p =
        c->process_id != 0 ? vigild_processes_get(c->server->processes, c->process_id) : NULL;
    return p != NULL ? g_strdup_printf("pid %d (%s)", (int)c->pid, p->program)
                     : g_strdup_printf("pid %d", (int)c->pid);
}

/* Counts and logs (per user, once a period) why the client is dropped,
 * and closes it. */
static void reject(struct connection *c, enum vigild_refusal kind, const char *reason)
{
    char *label = client_label(c);
    char *why = g_strdup_printf("client %s: %s; disconnected", label, reason);
    vigild_refusal_log_note(&c->server->limits.refusals, c->uid, kind, why);
    g_free(why);
    g_free(label);
    connection_close(c);
}

/* A refused registration or job notice: said back, then as reject(). */
static void refuse(struct connection *c, enum vigild_refusal kind, const char *reason)
{
    struct vigil_error err;
    vigil_local_send(c->fd, VIGIL_LOCAL_REFUSED, reason, strlen(reason), -1, &err);
    c->server->processes->refused_total++;
    reject(c, kind, reason);
}

/* A refusal of the client limits, which counted and logged it: said back. */
static void refuse_over_limit(struct connection *c, char *reason)
{
    struct vigil_error err;
    vigil_local_send(c->fd, VIGIL_LOCAL_REFUSED, reason, strlen(reason), -1, &err);
    c->server->processes->refused_total++;
    g_free(reason);
    connection_close(c);
}

/* Registered, in the run it named or, when that is another user's, in the
 * one kept apart for its own (saying which and why). */
static void answer_registered(struct connection *c, const struct vigild_process *p,
                              const char *apart_why)
{
    struct vigil_error err = {{0}};
    gboolean sent;
    if (apart_why == NULL) {
        struct vigil_local_registered answer = {.process_id = p->id};
        sent = vigil_local_send(c->fd, VIGIL_LOCAL_REGISTERED, &answer, sizeof answer, -1, &err);
    } else {
        size_t bytes =
            vigil_local_encode_registered_apart(c->server->buffer, p->id, p->run_key, apart_why);
        sent = vigil_local_send(c->fd, VIGIL_LOCAL_REGISTERED_APART, c->server->buffer, bytes, -1,
                                &err);
    }
    if (!sent)
        g_debug("pid %d: %s", (int)c->pid, err.message);
}

static void handle_register(struct connection *c, size_t length, int ring_fd)
{
    struct vigild_server *s = c->server;
    struct vigil_local_process_info info;
    struct vigil_error err = {{0}};
    if (ring_fd < 0) {
        refuse(c, VIGILD_REFUSED_MALFORMED, "a registration without its ring's descriptor");
        return;
    }
    if (!vigil_local_decode_register(c->server->buffer, length, &info, &err)) {
        close(ring_fd);
        refuse(c, VIGILD_REFUSED_MALFORMED, err.message);
        return;
    }
    /* Its start is the kernel's, the message's only within it: a forged
     * one would make it look older than it is. */
    uint64_t claimed_ns = info.fixed.start_monotonic_ns;
    info.fixed.start_monotonic_ns = vigild_processes_start_of(c->pid, claimed_ns, c->accepted_ns);
    /* A process whose vigild restarted, and which this vigild may have
     * taken back already (process_state.c): the same pid, uid and start.
     * The start it was kept under was checked against the kernel's when it
     * first registered; a process that exits right after its REATTACH (at
     * its end, the library's last word) has no /proc entry left by the
     * time the message is read, and the start checked now would be the
     * connection's: a second process on the same ring, which two
     * consumers would read and corrupt. */
    struct vigild_process *known = NULL;
    if (info.fixed.flags & VIGIL_LOCAL_REATTACH) {
        known = vigild_processes_find(s->processes, c->pid, info.fixed.start_monotonic_ns);
        if (known == NULL)
            known = vigild_processes_find(s->processes, c->pid, claimed_ns);
        if (known != NULL && known->uid != c->uid)
            known = NULL;
    }
    if (known != NULL) {
        close(ring_fd);
        c->role = ROLE_PROCESS;
        c->process_id = known->id;
        vigild_client_limits_idle_stop(&c->server->limits, c->idle);
        c->idle = NULL;
        g_debug("pid %d (%s) re-attached as process %" G_GUINT64_FORMAT, (int)c->pid,
                known->program, known->id);
        answer_registered(c, known, NULL);
        return;
    }
    char *over = vigild_client_limits_check_register(&c->server->limits, c->uid, s->processes);
    if (over != NULL) {
        close(ring_fd);
        refuse_over_limit(c, over);
        return;
    }
    if (vigild_processes_running(s->processes) >= s->max_processes) {
        close(ring_fd);
        char *why =
            g_strdup_printf("vigild serves at most %u processes (max_processes)", s->max_processes);
        refuse(c, VIGILD_REFUSED_MAX_PROCESSES, why);
        g_free(why);
        return;
    }
    char *named = g_strndup(info.run_key, info.fixed.run_bytes);
    char *apart_why = NULL;
    char *run_key = vigild_processes_place(s->processes, c->pid, c->uid, named, &apart_why);
    info.run_key = run_key;
    info.fixed.run_bytes = (uint16_t)strlen(run_key);
    GError *error = NULL;
    struct vigild_process *p =
        vigild_processes_add(s->processes, &info, c->pid, c->uid, ring_fd, &error);
    g_free(run_key);
    g_free(named);
    if (p == NULL) {
        g_free(apart_why);
        refuse(c, VIGILD_REFUSED_MALFORMED, error->message);
        g_error_free(error);
        return;
    }
    c->role = ROLE_PROCESS;
    c->process_id = p->id;
    /* Registered: silent for its whole life is normal, not idle. */
    vigild_client_limits_idle_stop(&c->server->limits, c->idle);
    c->idle = NULL;
    g_debug("registered pid %d (%s) as process %" G_GUINT64_FORMAT, (int)c->pid, p->program, p->id);
    answer_registered(c, p, apart_why);
    g_free(apart_why);
}

/* A running process, or an ended one the daemon still keeps; NULL. */
static struct vigild_process *kept_process(struct vigild_processes *ps, uint64_t id)
{
    struct vigild_process *p = vigild_processes_get(ps, id);
    if (p != NULL && p->state == VIGILD_PROCESS_RUNNING)
        return p;
    for (GList *l = ps->ended->tail; l != NULL; l = l->prev) {
        struct vigild_process *e = l->data;
        if (e->id == id)
            return e;
    }
    return NULL;
}

static void handle_summary_request(struct connection *c)
{
    struct vigild_server *s = c->server;
    struct vigild_process *p = vigild_processes_get(s->processes, c->process_id);
    struct vigil_local_summary summary;
    if (p != NULL)
        vigild_processes_drain(s->processes, p);
    /* Dropped by that drain, or earlier: its figures are in the ended list. */
    p = kept_process(s->processes, c->process_id);
    if (p == NULL) {
        /* Dropped past keep_ended: counted with the requests out of turn. */
        reject(c, VIGILD_REFUSED_OUT_OF_TURN,
               "asked for the summary of a process the daemon no longer keeps");
        return;
    }
    s->ops->summary(s->user, p, &summary);
    struct vigil_error err;
    /* A process that stopped waiting (it waits 100 ms) still sends its
     * REPORT behind the request: the connection stays until its end. */
    if (!vigil_local_send(c->fd, VIGIL_LOCAL_SUMMARY, &summary, sizeof summary, -1, &err)) {
        g_debug("pid %d no longer waits for its summary: %s", (int)c->pid, err.message);
        return;
    }
    /* After the SUMMARY, where an older library has stopped reading. */
    if (s->ops->insight != NULL) {
        struct vigil_insight_thresholds insight;
        s->ops->insight(s->user, &insight);
        if (!vigil_local_send(c->fd, VIGIL_LOCAL_INSIGHT, &insight, sizeof insight, -1, &err))
            g_debug("pid %d no longer waits for the thresholds: %s", (int)c->pid, err.message);
    }
}

/* Reads the JSON of a report: all of a sealed memfd, which its sender
 * cannot change under us, and which no read can block on (a pipe or a FIFO
 * passed instead could hold the daemon up for ever). */
static char *read_report_json(int fd, uint64_t json_bytes, GError **error)
{
    const int needed = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW;
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "its JSON does not come in a memfd (%s)", g_strerror(errno));
        return NULL;
    }
    if ((seals & needed) != needed) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "its memfd is not sealed against writing, shrinking and growing");
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != json_bytes) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "its memfd holds %lld bytes, not the %" G_GUINT64_FORMAT " it says",
                    (long long)st.st_size, json_bytes);
        return NULL;
    }
    char *json = g_malloc(json_bytes + 1);
    size_t done = 0;
    while (done < json_bytes) {
        ssize_t n = pread(fd, json + done, json_bytes - done, (off_t)done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED, "cannot read its memfd: %s",
                        n < 0 ? g_strerror(errno) : "it ended early");
            g_free(json);
            return NULL;
        }
        done += (size_t)n;
    }
    json[json_bytes] = '\0';
    return json;
}

/* What `vigil report` and the warehouse need of a report: text (UTF-8,
 * no NUL: the warehouse keeps it as jsonb) that parses as JSON, and a
 * vigil report (its "vigil_report" member). Its figures are not checked
 * here: a report of a newer or older library is still the process's. */
static gboolean check_report_json(const char *json, size_t length, GError **error)
{
    const char *nul = memchr(json, '\0', length);
    if (nul != NULL) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "its JSON has a NUL byte at byte %zu", (size_t)(nul - json));
        return FALSE;
    }
    const char *end;
    if (!g_utf8_validate_len(json, length, &end)) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "its JSON is not valid UTF-8 (at byte %zu)", (size_t)(end - json));
        return FALSE;
    }
    JsonParser *parser = json_parser_new_immutable();
    GError *parse_error = NULL;
    gboolean ok = json_parser_load_from_data(parser, json, (gssize)length, &parse_error);
    if (!ok) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED, "its JSON does not parse: %s",
                    parse_error->message);
        g_error_free(parse_error);
    } else {
        JsonNode *root = json_parser_get_root(parser);
        JsonObject *o =
            root != NULL && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
        JsonNode *version = o != NULL ? json_object_get_member(o, "vigil_report") : NULL;
        ok = version != NULL && json_node_get_value_type(version) == G_TYPE_INT64;
        if (!ok)
            g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                        "its JSON is not a vigil report: no \"vigil_report\" number in an object");
    }
    g_object_unref(parser);
    return ok;
}

gboolean vigild_process_take_report(struct vigild_process *p, int32_t exit_code, int json_fd,
                                    uint64_t json_bytes, GError **error)
{
    /* The exit status came whole (vigil_local_decode_fixed checked it):
     * kept even when the JSON beside it is refused. */
    p->exit_code = exit_code;
    if (json_bytes == 0 && json_fd >= 0) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "a report of 0 bytes came with a descriptor");
        return FALSE;
    }
    if (json_bytes == 0)
        return TRUE; /* VIGIL_REPORT=off: no report, only the exit status */
    if (json_fd < 0) {
        g_set_error(error, VIGILD_ERROR, VIGILD_ERROR_REFUSED,
                    "a report of %" G_GUINT64_FORMAT " bytes came without its memfd", json_bytes);
        return FALSE;
    }
    char *json = read_report_json(json_fd, json_bytes, error);
    if (json == NULL)
        return FALSE;
    if (!check_report_json(json, json_bytes, error)) {
        g_free(json);
        return FALSE;
    }
    g_free(p->report_json);
    p->report_json = json;
    return TRUE;
}

static void handle_report(struct connection *c, size_t length, int fd)
{
    struct vigil_local_report fixed;
    struct vigil_error err = {{0}};
    GError *error = NULL;
    struct vigild_process *p = NULL;
    enum vigild_refusal kind = c->reported ? VIGILD_REFUSED_OUT_OF_TURN : VIGILD_REFUSED_MALFORMED;
    if (c->reported)
        g_set_error(&error, VIGILD_ERROR, VIGILD_ERROR_REFUSED, "a second report");
    else if (!vigil_local_decode_fixed(VIGIL_LOCAL_REPORT, c->server->buffer, length, &fixed, &err))
        g_set_error(&error, VIGILD_ERROR, VIGILD_ERROR_REFUSED, "%s", err.message);
    else if ((p = kept_process(c->server->processes, c->process_id)) != NULL)
        vigild_process_take_report(p, fixed.exit_code, fd, fixed.json_bytes, &error);
    if (fd >= 0)
        close(fd);
    c->reported = TRUE;
    if (error == NULL && p == NULL)
        g_debug("pid %d: a report for a process the daemon no longer keeps", (int)c->pid);
    if (error == NULL)
        return;
    /* Refused, said back (the process may be gone: nobody reads it then)
     * and logged; the process itself stays, only its report is not kept. */
    char *why = g_strdup_printf("report refused: %s", error->message);
    g_error_free(error);
    vigil_local_send(c->fd, VIGIL_LOCAL_REFUSED, why, strlen(why), -1, &err);
    reject(c, kind, why);
    g_free(why);
}

/* The JSON goes in a sealed memfd: a socket buffer would cap its size. */
static void handle_status_request(struct connection *c, int32_t finished_pid)
{
    struct vigild_server *s = c->server;
    /* A client that sent SIGHUP before asking sees the reload done. */
    s->ops->take_signals(s->user);
    if (!s->catching_up)
        vigild_server_catch_up(s);
    vigild_processes_sweep(s->processes);
    char *json = s->ops->status_json(s->user, c->uid, finished_pid);
    size_t length = strlen(json);
    int fd = memfd_create("vigil-status", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    struct vigil_error err = {{0}};
    gboolean ok = fd >= 0;
    for (size_t done = 0; ok && done < length;) {
        ssize_t n = write(fd, json + done, length - done);
        if (n < 0 && errno == EINTR)
            continue;
        ok = n > 0;
        done += n > 0 ? (size_t)n : 0;
    }
    if (ok)
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    struct vigil_local_status answer = {.json_bytes = length};
    /* Neither is the client's doing: not a refusal. */
    if (!ok) {
        g_warning("client pid %d: no memory for the status (%s); disconnected", (int)c->pid,
                  g_strerror(errno));
        connection_close(c);
    } else if (!vigil_local_send(c->fd, VIGIL_LOCAL_STATUS, &answer, sizeof answer, fd, &err)) {
        g_debug("client pid %d no longer waits for its status: %s", (int)c->pid, err.message);
        connection_close(c);
    }
    if (fd >= 0)
        close(fd);
    g_free(json);
}

/* A job begins or ends: noted (jobs.c) and answered, then the connection
 * closes; a notice is the whole conversation. */
static void handle_job(struct connection *c, size_t length)
{
    struct vigild_server *s = c->server;
    struct vigil_local_job_info info;
    struct vigil_error err = {{0}};
    GError *error = NULL;
    if (!vigil_local_decode_job(c->server->buffer, length, &info, &err)) {
        refuse(c, VIGILD_REFUSED_MALFORMED, err.message);
        return;
    }
    if (!s->ops->note_job(s->user, &info, c->uid, &error)) {
        refuse(c, VIGILD_REFUSED_JOB_NOTICE,
               error != NULL ? error->message : "vigild is not ready for job notices");
        g_clear_error(&error);
        return;
    }
    if (!vigil_local_send(c->fd, VIGIL_LOCAL_JOB_NOTED, NULL, 0, -1, &err))
        g_debug("client pid %d no longer waits for its job notice's answer: %s", (int)c->pid,
                err.message);
    connection_close(c);
}

/* `vigil spool resend|replay`: carried out and answered with what was done,
 * then the connection closes. */
static void handle_spool(struct connection *c, const struct vigil_local_spool *request)
{
    struct vigild_server *s = c->server;
    /* The request with its counts: the decoder holds an answer to what it
     * holds a request to (a replay names its file). 4 KiB: off the stack;
     * one thread. */
    static struct vigil_local_spool answer;
    answer = *request;
    GError *error = NULL;
    if (s->ops->spool == NULL || !s->ops->spool(s->user, request, c->uid, &answer, &error)) {
        refuse(c, VIGILD_REFUSED_SPOOL_REQUEST,
               error != NULL ? error->message : "vigild takes no spool requests");
        g_clear_error(&error);
        return;
    }
    struct vigil_error err = {{0}};
    if (!vigil_local_send(c->fd, VIGIL_LOCAL_SPOOL, &answer, sizeof answer, -1, &err))
        g_debug("client pid %d no longer waits for its spool request's answer: %s", (int)c->pid,
                err.message);
    connection_close(c);
}

/* A message the connection may send now; otherwise refused, its
 * descriptor (if any) closed: FALSE, the connection gone. */
static gboolean in_turn(struct connection *c, gboolean allowed, int fd, const char *why)
{
    if (allowed)
        return TRUE;
    if (fd >= 0)
        close(fd);
    reject(c, VIGILD_REFUSED_OUT_OF_TURN, why);
    return FALSE;
}

/* A message of fixed size, read from the server's buffer into `out`;
 * refused when malformed: FALSE, the connection gone. */
static gboolean decoded(struct connection *c, enum vigil_local_type type, ssize_t length, void *out)
{
    struct vigil_error err = {{0}};
    if (vigil_local_decode_fixed(type, c->server->buffer, (size_t)length, out, &err))
        return TRUE;
    reject(c, VIGILD_REFUSED_MALFORMED, err.message);
    return FALSE;
}

/* Reads and handles one message. FALSE when there was none to read or the
 * connection is gone (and freed). */
static gboolean handle_one(struct connection *c)
{
    struct vigild_server *s = c->server;
    /* A handler may close the connection, which frees c: ask by key. */
    const uint64_t key = c->key;
    enum vigil_local_type type;
    int fd = -1;
    struct vigil_error err = {{0}};
    ssize_t length = vigil_local_receive(c->fd, s->buffer, &type, &fd, &err);
    if (length < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return FALSE;
        /* Linux tells the peer of a socket closed with unread data in it
         * (a process that exec'd or died before reading REGISTERED) this
         * once, ahead of the messages still queued: read on to the end. */
        if (errno == ECONNRESET)
            return TRUE;
        if (errno == 0) { /* closed: the process ended, or closed our socket */
            struct vigild_process *p =
                c->process_id != 0 ? vigild_processes_get(s->processes, c->process_id) : NULL;
            if (p != NULL && p->pidfd < 0)
                vigild_processes_end(s->processes, p);
            connection_close(c);
        } else {
            reject(c, VIGILD_REFUSED_MALFORMED, err.message);
        }
        return FALSE;
    }
    /* No message restarts an unregistered connection's timeout: the only
     * ones that make progress, REGISTER and JOB, end it (client_limits.h). */
    /* Only a registration and a report carry a descriptor. */
    if (fd >= 0 && type != VIGIL_LOCAL_REGISTER && type != VIGIL_LOCAL_REPORT) {
        close(fd);
        reject(c, VIGILD_REFUSED_MALFORMED, "a descriptor with a message that carries none");
        return FALSE;
    }
    union {
        struct vigil_local_rank rank;
        struct vigil_local_status_request status;
        struct vigil_local_spool spool;
    } fixed;
    switch (type) {
    case VIGIL_LOCAL_REGISTER:
        if (!in_turn(c, c->role == ROLE_NEW, fd, "a second registration on one connection"))
            return FALSE;
        handle_register(c, (size_t)length, fd);
        return g_hash_table_contains(s->connections, &key);
    case VIGIL_LOCAL_RANK:
        if (!in_turn(c, c->role == ROLE_PROCESS, fd, "a rank before its registration") ||
            !decoded(c, type, length, &fixed.rank))
            return FALSE;
        struct vigild_process *p = vigild_processes_get(s->processes, c->process_id);
        if (p != NULL) {
            p->mpi_rank = fixed.rank.rank;
            p->mpi_size = fixed.rank.size;
            s->ops->rank_known(s->user, p);
        }
        return TRUE;
    case VIGIL_LOCAL_SUMMARY_REQUEST:
        if (!in_turn(c, c->role == ROLE_PROCESS, fd, "a summary request before its registration") ||
            !decoded(c, type, length, NULL))
            return FALSE;
        handle_summary_request(c);
        return g_hash_table_contains(s->connections, &key);
    case VIGIL_LOCAL_REPORT:
        if (!in_turn(c, c->role == ROLE_PROCESS, fd, "a report before its registration"))
            return FALSE;
        handle_report(c, (size_t)length, fd);
        return g_hash_table_contains(s->connections, &key);
    case VIGIL_LOCAL_JOB:
        if (!in_turn(c, c->role == ROLE_NEW, fd,
                     "a job notice on a connection that said something else before"))
            return FALSE;
        handle_job(c, (size_t)length);
        return FALSE;
    case VIGIL_LOCAL_SPOOL:
        if (!in_turn(c, c->role == ROLE_NEW, fd,
                     "a spool request on a connection that said something else before") ||
            !decoded(c, type, length, &fixed.spool))
            return FALSE;
        handle_spool(c, &fixed.spool);
        return FALSE;
    case VIGIL_LOCAL_STATUS_REQUEST:
        if (!in_turn(c, c->role != ROLE_PROCESS, fd,
                     "a status request from a registered process") ||
            !decoded(c, type, length, &fixed.status))
            return FALSE;
        char *over = vigild_client_limits_check_status(&s->limits, c->uid);
        if (over != NULL) { /* counted and logged by the limits; said back */
            vigil_local_send(c->fd, VIGIL_LOCAL_REFUSED, over, strlen(over), -1, &err);
            g_free(over);
            connection_close(c);
            return FALSE;
        }
        c->role = ROLE_STATUS;
        handle_status_request(c, fixed.status.finished_pid);
        return g_hash_table_contains(s->connections, &key);
    default: {
        char *why = g_strdup_printf("a %s message, which only the daemon sends",
                                    vigil_local_type_name(type));
        reject(c, VIGILD_REFUSED_OUT_OF_TURN, why);
        g_free(why);
        return FALSE;
    }
    }
}

static gboolean on_client(gint fd, GIOCondition condition, gpointer user_data)
{
    (void)fd;
    (void)condition;
    /* A connection that closes removes this watch itself. */
    handle_one(user_data);
    return G_SOURCE_CONTINUE;
}

/* Accepts up to `most` waiting connections, and handles what each sent
 * with its connect. */
static void accept_some(struct listener *l, unsigned most)
{
    struct vigild_server *s = l->server;
    for (unsigned accepted = 0; accepted < most; accepted++) {
        int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            int saved = errno;
            if (saved == EAGAIN || saved == EWOULDBLOCK)
                return;
            if (!s->accept_failing)
                g_warning("cannot accept a client on %s: %s", l->path, g_strerror(saved));
            s->accept_failing = TRUE;
            /* Out of descriptors, the connection stays in the backlog and
             * the listening socket stays readable: without this the loop
             * would spin. The spare descriptor makes room to accept it and
             * close it at once. */
            if ((saved == EMFILE || saved == ENFILE) && s->spare_fd >= 0) {
                close(s->spare_fd);
                int dropped = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
                if (dropped >= 0)
                    close(dropped);
                s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (dropped >= 0)
                    continue;
            }
            return;
        }
        s->accept_failing = FALSE;
        struct ucred cred;
        socklen_t cred_length = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_length) != 0) {
            g_warning("a client on %s without credentials (%s); disconnected", l->path,
                      g_strerror(errno));
            close(fd);
            continue;
        }
        /* The file's mode keeps others out; a mode changed by hand must not
         * let them in. */
        if (l == &s->listeners[LISTENER_ROOT] && cred.uid != 0 && cred.uid != geteuid()) {
            g_warning("uid %u connected to %s, which is root's; disconnected", (unsigned)cred.uid,
                      l->path);
            close(fd);
            continue;
        }
        char *over = vigild_client_limits_admit(&s->limits, cred.uid);
        if (over != NULL) {
            struct vigil_error err;
            vigil_local_send(fd, VIGIL_LOCAL_REFUSED, over, strlen(over), -1, &err);
            g_free(over);
            close(fd);
            continue;
        }
        struct connection *c = g_new0(struct connection, 1);
        c->key = s->next_key++;
        c->server = s;
        c->fd = fd;
        c->pid = cred.pid;
        c->uid = cred.uid;
        c->accepted_ns = vigil_clock_monotonic_ns();
        c->role = ROLE_NEW;
        c->idle = vigild_client_limits_idle_start(&s->limits, c->key);
        g_hash_table_insert(s->connections, &c->key, c);
        /* Its first message (a registration, most often, or garbage) is
         * most often there already: handled now, it waits for no other
         * turn of the loop, and a client it ends costs no watch. */
        const uint64_t key = c->key;
        handle_one(c);
        if (g_hash_table_contains(s->connections, &key))
            c->watch = g_unix_fd_add(fd, G_IO_IN | G_IO_HUP | G_IO_ERR, on_client, c);
    }
}

static gboolean on_listen(gint fd, GIOCondition condition, gpointer user_data)
{
    (void)fd;
    (void)condition;
    accept_some(user_data, ACCEPTS_PER_TURN);
    return G_SOURCE_CONTINUE;
}

/* Its unregistered timeout passed. */
static void close_idle(void *user, uint64_t key)
{
    struct vigild_server *s = user;
    struct connection *c = g_hash_table_lookup(s->connections, &key);
    if (c != NULL) {
        g_debug("client pid %d (uid %u) did not register within %u ms; closed", (int)c->pid,
                (unsigned)c->uid, s->limits.unregistered_timeout_ms);
        connection_close(c);
    }
}

void vigild_server_catch_up(struct vigild_server *s)
{
    s->catching_up = TRUE;
    for (int i = LISTENERS - 1; i >= 0; i--)
        accept_some(&s->listeners[i], BACKLOG_CONNECTIONS);
    GArray *keys = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init(&it, s->connections);
    while (g_hash_table_iter_next(&it, &key, NULL))
        g_array_append_val(keys, *(uint64_t *)key);
    for (guint i = 0; i < keys->len; i++) {
        for (int n = 0; n < CATCH_UP_MESSAGES_MAX; n++) {
            struct connection *c =
                g_hash_table_lookup(s->connections, &g_array_index(keys, uint64_t, i));
            if (c == NULL || c->role == ROLE_STATUS || !handle_one(c))
                break;
        }
    }
    g_array_free(keys, TRUE);
    s->catching_up = FALSE;
}

/* A socket file left by a daemon that died is taken over; one that a
 * daemon still serves is not. */
static gboolean claim_path(const char *path, struct sockaddr_un *addr, GError **error)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return TRUE;
    if (!S_ISSOCK(st.st_mode)) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
                    "%s exists and is not a socket: not removing it", path);
        return FALSE;
    }
    int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    gboolean served = probe >= 0 && connect(probe, (struct sockaddr *)addr, sizeof *addr) == 0;
    if (probe >= 0)
        close(probe);
    if (served) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST, "another vigild is serving %s already",
                    path);
        return FALSE;
    }
    if (g_unlink(path) != 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                    "cannot remove the stale socket %s: %s", path, g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

/* Binds and listens on `path` with `mode`; -1 with error set. */
static int listen_on(const char *path, mode_t mode, GError **error)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, path, strlen(path) + 1);
    if (!claim_path(path, &addr, error))
        return -1;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || chmod(path, mode) != 0 ||
        listen(fd, LISTEN_BACKLOG) != 0) {
        int saved = errno;
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "cannot listen on %s: %s",
                    path, g_strerror(saved));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

struct vigild_server *vigild_server_new(const char *path,
                                        const struct vigild_daemon_settings *settings,
                                        struct vigild_processes *processes,
                                        const struct vigild_server_ops *ops, void *user,
                                        GError **error)
{
    char paths[2][VIGIL_SOCKET_PATH_MAX];
    if (vigil_local_daemon_sockets(path, 0, paths) != LISTENERS) {
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NAMETOOLONG,
                    "socket path %s is too long: with \"%s\" after it (root's socket) it must fit "
                    "a Unix socket's %d bytes",
                    path, VIGIL_ROOT_SOCKET_SUFFIX, VIGIL_SOCKET_PATH_MAX - 1);
        return NULL;
    }
    /* The socket's own folder only (/run/vigil when run by hand), never
     * its parents: a mistyped --socket must not make folders all over /. */
    char *dir = g_path_get_dirname(path);
    int made = g_file_test(dir, G_FILE_TEST_IS_DIR) ? 0 : g_mkdir(dir, 0755);
    int saved = errno;
    if (made != 0) {
        g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved),
                    "cannot make the socket's folder %s: %s", dir, g_strerror(saved));
        g_free(dir);
        return NULL;
    }
    g_free(dir);
    /* paths[0] is root's (vigil_local_daemon_sockets gives root's first). */
    int root_fd = listen_on(paths[0], 0600, error);
    if (root_fd < 0)
        return NULL;
    int shared_fd = listen_on(path, 0666, error);
    if (shared_fd < 0) {
        close(root_fd);
        g_unlink(paths[0]);
        return NULL;
    }
    struct vigild_server *s = g_new0(struct vigild_server, 1);
    s->processes = processes;
    s->ops = ops;
    s->user = user;
    s->listeners[LISTENER_SHARED] =
        (struct listener){.server = s, .path = g_strdup(path), .fd = shared_fd};
    s->listeners[LISTENER_ROOT] =
        (struct listener){.server = s, .path = g_strdup(paths[0]), .fd = root_fd};
    s->connections = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
    s->next_key = 1;
    s->buffer = g_malloc(VIGIL_LOCAL_MAX_BYTES);
    s->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    vigild_client_limits_init(&s->limits, close_idle, s);
    vigild_server_configure(s, settings);
    /* Root's first: of two ready sources, GLib dispatches only the one of
     * higher priority in a turn of the loop. */
    s->listeners[LISTENER_SHARED].watch =
        g_unix_fd_add(shared_fd, G_IO_IN, on_listen, &s->listeners[LISTENER_SHARED]);
    s->listeners[LISTENER_ROOT].watch = g_unix_fd_add_full(
        G_PRIORITY_HIGH, root_fd, G_IO_IN, on_listen, &s->listeners[LISTENER_ROOT], NULL);
    return s;
}

guint vigild_server_clients(const struct vigild_server *s)
{
    return g_hash_table_size(s->connections);
}

void vigild_server_configure(struct vigild_server *server, const struct vigild_daemon_settings *s)
{
    server->max_processes = s->max_processes;
    vigild_client_limits_configure(&server->limits, s);
}

struct vigild_client_limits *vigild_server_limits(struct vigild_server *s)
{
    return &s->limits;
}

const char *vigild_server_path(const struct vigild_server *s)
{
    return s->listeners[LISTENER_SHARED].path;
}

void vigild_server_free(struct vigild_server *s)
{
    if (s == NULL)
        return;
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, s->connections);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
        struct connection *c = value;
        g_source_remove(c->watch);
        close(c->fd);
    }
    g_hash_table_destroy(s->connections);
    vigild_client_limits_clear(&s->limits);
    for (int i = 0; i < LISTENERS; i++) {
        g_source_remove(s->listeners[i].watch);
        close(s->listeners[i].fd);
        g_unlink(s->listeners[i].path);
        g_free(s->listeners[i].path);
    }
    if (s->spare_fd >= 0)
        close(s->spare_fd);
    g_free(s->buffer);
    g_free(s);
}
