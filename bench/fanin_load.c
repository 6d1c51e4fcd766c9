/* fanin-load: the nodes' side of bench/fanin.py. It stands in for N
 * vigild at once, each its own DEALER with its own CURVE key pair and
 * routing id (its node id), as vigild's uplink sets them, all sending to
 * one vigil-txd over TCP.
 *
 *   fanin-load keygen N DIR     N CURVE key pairs: DIR/nodes.keys (public
 *                               and secret a line, mode 0600) and
 *                               DIR/authorized (the public keys, for
 *                               vigil-txd's curve_authorized_keys)
 *   fanin-load run ENDPOINT DIR --server-key=KEY --nodes N ...
 *                               (KEY: vigil-txd's public key; with "=",
 *                               since a Z85 key may begin with "-")
 *   fanin-load handshakes ENDPOINT DIR --server-key=KEY --nodes N
 *              --txd-pid PID   N fresh connections at once, each until its
 *                               CURVE handshake succeeds: vigil-txd's CPU
 *                               time (/proc) per handshake, and how long
 *                               they all took
 *
 * Each node connects and reconnects as vigild's uplink does: its first
 * connect a random time below --connect-delay-max-ms after the start, its
 * reconnect interval drawn between --reconnect-ivl-ms and twice that, with
 * ZeroMQ's backoff up to --reconnect-ivl-max-ms (the [uplink] keys of the
 * same names, and their defaults).
 *
 * Each node sends one batch a cycle (--cycle-ms, 1 s), at its own phase in
 * the cycle (node i at i/N of it: vigild's cycles are not aligned across
 * nodes), as vigild makes it (bench/node_batch.c): its node item; its
 * --ranks processes (an MPI job's ranks; every batch describes the
 * processes it names, as vigild's do); the metric descriptors and one 1 s
 * roll-up each of the metric set a vigild with every provider on reports
 * on a node of --cores CPUs, --disks disks and --nets interfaces; the node
 * state and each process's state; and, in the share --forwarded-share of
 * cycles that capture forwards, the cycle's activities (--activity-rate a
 * second on the node, spread over the ranks, each rank with its file's
 * name), the cycle's statistics at full resolution (every metric every
 * --tick-ms) and a window item per rank. Which cycles are captured is a
 * hash of (node, cycle), so each node's share is the same and the load is
 * even. Nodes are grouped into jobs of --nodes-per-job nodes (one run key
 * and scheduler job each).
 *
 * A node keeps at most --max-in-flight batches unacknowledged (vigild's
 * uplink keeps 64), and at most 4 queued in its socket; a cycle past
 * either is not sent and is counted as held back (vigild would keep it in
 * memory or spool it).
 *
 * After --warmup-s (connections, CURVE handshakes, the first batches that
 * create the nodes, runs and processes), --seconds of measurement: the
 * batches sent then, their acknowledgement latency (send to ACK; a batch
 * never acknowledged counts as slower than any), the acknowledgements
 * received then, the rows they stored, and the CPU time vigil-txd
 * (--txd-pid) and PostgreSQL (the children of --postmaster-pid) used then,
 * from /proc/PID/stat. Then it waits up to --drain-s for what is still
 * unacknowledged, and prints one JSON line (and, with --latencies-out, the
 * window's latencies for bench/fanin.py to merge several runs').
 *
 * With --restart-at-s S, S seconds into the window it prints "restart"
 * (bench/fanin.py then kills vigil-txd and starts it again on the same
 * endpoint, and writes the new one's pid to its standard input) and
 * measures from then: how long until each node has a batch acknowledged
 * again (the last node's time is the restart's figure) and the batches
 * acknowledged meanwhile. vigil-txd's CPU is then the old one's until the
 * restart and the new one's after. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <glib.h>
#include <zmq.h>

#include "node_batch.h"
#include "bench_clock.h"
#include "vigil/health.h"
#include "vigil/link_liveness.h"
#include "vigil/ontology.h"

#define KEY_CHARS 40
#define SWEEP_NS  (100 * 1000000LL) /* every socket checked at least this often */

struct options {
    gint64 nodes, seconds, warmup_s, drain_s, cycle_ms, tick_ms;
    gint64 cores, disks, nets, ranks, activity_rate, nodes_per_job, max_in_flight;
    gint64 first_node_id, io_threads, txd_pid, postmaster_pid;
    gint64 reconnect_ivl_ms, reconnect_ivl_max_ms, connect_delay_max_ms, restart_at_s;
    double forwarded_share;
    char *latencies_out, *server_key;
};

struct node {
    void *socket;
    uint64_t node_id;
    char public_key[KEY_CHARS + 1], secret_key[KEY_CHARS + 1];
    uint64_t next_sequence; /* the next batch's; batch k is sequence k + 1 */
    int64_t *sent_ns;       /* by sequence - 1: when sent; 0 not sent; -1 acknowledged */
    uint32_t *rows;         /* by sequence - 1: the rows the batch stores */
    uint64_t in_flight;
    struct vigil_wire_process *processes;
    int64_t connect_at_ns;       /* monotonic; 0 once connected */
    void *monitor;               /* --restart-at-s: its handshakes, else NULL */
    int64_t handshaken_again_ns; /* after the restart: its first handshake's time; 0 not yet */
    int64_t heard_again_ns;      /* after the restart: its first ACK's time; 0 not yet */
};

struct run {
    const struct options *o;
    struct node *nodes;
    struct vigil_metric_desc *metrics;
    unsigned n_metrics;
    int64_t realtime_offset_ns;
    int64_t start_ns; /* the first cycle's start (monotonic) */
    int64_t window_start_ns, window_end_ns;
    uint64_t max_batches; /* per node */
    char run_tag[32];
    /* figures */
    GArray *latencies_ms; /* of batches sent in the window and acknowledged */
    uint64_t sent, sent_in_window, acked, acked_in_window, rows_in_window;
    uint64_t held_back, refused, unexpected, bytes_sent;
    GString *first_refusal;
    /* --restart-at-s */
    int64_t restart_ns;         /* 0 until asked for */
    int64_t all_heard_ns;       /* every node heard again; 0 not yet */
    uint64_t heard_again;       /* nodes with an ACK since the restart */
    uint64_t restart_acked;     /* ACKs from the restart until every node was heard again */
    GArray *heard_again_s;      /* each node's delay */
    GArray *handshaken_again_s; /* each node's delay until its handshake succeeded again */
    long new_txd_pid;           /* 0 until fanin.py says */
};

/* ---- keys -------------------------------------------------------------------------------------
 */

static void keygen(gint64 n, const char *dir)
{
    char *keys_path = g_build_filename(dir, "nodes.keys", NULL);
    char *authorized_path = g_build_filename(dir, "authorized", NULL);
    GString *keys = g_string_new(NULL), *authorized = g_string_new("# fanin-load's nodes\n");
    for (gint64 i = 0; i < n; i++) {
        char public_key[KEY_CHARS + 1], secret_key[KEY_CHARS + 1];
        if (zmq_curve_keypair(public_key, secret_key) != 0)
            bench_die("zmq_curve_keypair: %s (libzmq without CURVE?)", zmq_strerror(zmq_errno()));
        g_string_append_printf(keys, "%s %s\n", public_key, secret_key);
        g_string_append_printf(authorized, "%s\n", public_key);
    }
    GError *error = NULL;
    if (!g_file_set_contents_full(keys_path, keys->str, (gssize)keys->len,
                                  G_FILE_SET_CONTENTS_CONSISTENT, 0600, &error) ||
        !g_file_set_contents(authorized_path, authorized->str, (gssize)authorized->len, &error))
        bench_die("%s", error->message);
    memset(keys->str, 0, keys->len);
    g_string_free(keys, TRUE);
    g_string_free(authorized, TRUE);
    g_free(keys_path);
    g_free(authorized_path);
}

static void read_keys(struct node *nodes, gint64 n, const char *dir)
{
    char *path = g_build_filename(dir, "nodes.keys", NULL);
    char *text = NULL;
    GError *error = NULL;
    if (!g_file_get_contents(path, &text, NULL, &error))
        bench_die("%s", error->message);
    char **lines = g_strsplit(text, "\n", -1);
    gint64 i = 0;
    for (char **line = lines; *line != NULL && i < n; line++) {
        if (**line == '\0')
            continue;
        if (strlen(*line) != 2 * KEY_CHARS + 1 || (*line)[KEY_CHARS] != ' ')
            bench_die("%s: line %" G_GINT64_FORMAT " is not \"PUBLIC SECRET\"", path, i + 1);
        memcpy(nodes[i].public_key, *line, KEY_CHARS);
        memcpy(nodes[i].secret_key, *line + KEY_CHARS + 1, KEY_CHARS);
        i++;
    }
    if (i < n)
        bench_die("%s holds %" G_GINT64_FORMAT " key pairs, --nodes wants %" G_GINT64_FORMAT, path,
                  i, n);
    memset(text, 0, strlen(text));
    g_strfreev(lines);
    g_free(text);
    g_free(path);
}

/* ---- CPU and memory from /proc ----------------------------------------------------------------
 */

/* /proc/PID/stat from the field after the command's closing parenthesis
 * (state, field 3) on, in `buffer`; NULL when `pid` is gone. */
static const char *stat_fields(long pid, char *buffer, size_t size)
{
    char path[64];
    g_snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t n = fread(buffer, 1, size - 1, f);
    fclose(f);
    buffer[n] = '\0';
    const char *p = strrchr(buffer, ')');
    return p != NULL ? p + 2 : NULL;
}

/* utime + stime of `pid` (fields 14 and 15), in seconds; -1 when it is gone. */
static double cpu_seconds(long pid)
{
    char buffer[1024];
    const char *fields = stat_fields(pid, buffer, sizeof buffer);
    unsigned long utime = 0, stime = 0;
    if (fields == NULL ||
        sscanf(fields, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
        return -1;
    return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static long parent_of(long pid)
{
    char buffer[1024];
    const char *fields = stat_fields(pid, buffer, sizeof buffer);
    long parent = -1;
    if (fields == NULL || sscanf(fields, "%*c %ld", &parent) != 1)
        return -1;
    return parent;
}

/* The postmaster's and its children's CPU seconds: the whole server. */
static double server_cpu_seconds(long postmaster)
{
    if (postmaster <= 0)
        return 0;
    double total = MAX(cpu_seconds(postmaster), 0);
    DIR *proc = opendir("/proc");
    if (proc == NULL)
        return total;
    for (struct dirent *e; (e = readdir(proc)) != NULL;) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end == '\0' && pid > 0 && parent_of(pid) == postmaster)
            total += MAX(cpu_seconds(pid), 0);
    }
    closedir(proc);
    return total;
}

/* A "VmHWM:" line of /proc/PID/status, in KiB; 0 when unknown. */
static long status_kib(long pid, const char *field)
{
    char path[64];
    g_snprintf(path, sizeof path, "/proc/%ld/status", pid);
    char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return 0;
    long kib = 0;
    char *line = strstr(text, field);
    if (line != NULL)
        kib = strtol(line + strlen(field), NULL, 10);
    g_free(text);
    return kib;
}

/* ---- one node's batch -------------------------------------------------------------------------
 */

/* Whether capture forwards node `node`'s cycle `cycle`: a hash, so that
 * every node forwards the same share and not all at once. */
static gboolean captured(const struct options *o, uint64_t node, uint64_t cycle)
{
    uint64_t h = (node * 0x9e3779b97f4a7c15u) ^ (cycle * 0xc2b2ae3d27d4eb4fu);
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 32;
    return (double)(h % 1000000) < o->forwarded_share * 1e6;
}

static void make_processes(struct run *r, struct node *n, gint64 index)
{
    const struct options *o = r->o;
    n->processes = g_new0(struct vigil_wire_process, (gsize)o->ranks);
    gint64 job = index / o->nodes_per_job;
    char *run_key = g_strdup_printf("fanin-%s-job%" G_GINT64_FORMAT, r->run_tag, job);
    char *job_id = g_strdup_printf("%" G_GINT64_FORMAT, 100000 + job);
    static char *argv[] = {"/apps/wrf/bin/wrf.exe", "-i", "namelist.input", NULL};
    for (gint64 k = 0; k < o->ranks; k++) {
        struct vigil_wire_process *p = &n->processes[k];
        p->process_id = (uint64_t)k + 1;
        p->pid = (int32_t)(20000 + k);
        p->uid = 1000;
        p->rank = (int32_t)(index % o->nodes_per_job * o->ranks + k);
        p->exit_code = -1;
        p->start_ns = (uint64_t)(r->start_ns - 60 * G_GINT64_CONSTANT(1000000000));
        p->run_key = run_key; /* shared by the ranks, freed with the first */
        p->job = job_id;
        p->program = argv[0];
        p->cwd = "/scratch/run";
        p->argc = 3;
        p->argv = argv;
    }
}

static void add_states(bench_batch *b, const struct options *o, uint64_t cycle)
{
    GError *error = NULL;
    vigil_wire_writer *w = bench_batch_message(b, VIGIL_WIRE_STATES, 0);
    struct vigil_wire_state node = {
        .cycle = cycle, .level = VIGIL_LEVEL_NODE, .health = VIGIL_HEALTH_OK};
    bench_check(vigil_wire_add_state(w, &node, &error), error);
    for (gint64 k = 0; k < o->ranks; k++) {
        struct vigil_wire_state p = {.cycle = cycle,
                                     .process_id = (uint64_t)k + 1,
                                     .level = VIGIL_LEVEL_PROCESS,
                                     .health = VIGIL_HEALTH_OK};
        bench_check(vigil_wire_add_state(w, &p, &error), error);
    }
    bench_batch_add(b, w);
}

/* Rank `k`'s activities of the cycle [start_ns, end_ns): writes and reads
 * of 1 MiB and 4 KiB pieces into its file. */
static uint32_t add_activities(bench_batch *b, const struct options *o, uint64_t cycle, gint64 k,
                               uint64_t start_ns, uint64_t end_ns)
{
    GError *error = NULL;
    uint64_t per_rank = (uint64_t)(o->activity_rate * o->cycle_ms / 1000 / o->ranks);
    if (per_rank == 0)
        return 0;
    char path[64];
    g_snprintf(path, sizeof path, "/scratch/run/out.%05" G_GINT64_FORMAT, k);
    vigil_wire_writer *w = bench_batch_message(b, VIGIL_WIRE_NAMES, (uint64_t)k + 1);
    bench_check(vigil_wire_add_name(w, 1, path, strlen(path), &error), error);
    bench_batch_add(b, w);
    w = bench_batch_message(b, VIGIL_WIRE_ACTIVITIES, (uint64_t)k + 1);
    uint64_t spacing = (end_ns - start_ns) / per_rank;
    for (uint64_t i = 0; i < per_rank; i++) {
        uint64_t seq = cycle * per_rank + i;
        uint64_t size = i % 4 == 3 ? 1048576 : 4096;
        struct vigil_activity a = {
            .record_type = VIGIL_RECORD_ACTIVITY,
            .layer = VIGIL_LAYER_POSIX,
            .op = i % 3 == 0 ? VIGIL_OP_POSIX_READ : VIGIL_OP_POSIX_WRITE,
            .file_id = 1,
            .seq = seq,
            .start_ns = start_ns + i * spacing,
            .end_ns = start_ns + i * spacing + 2000 + (seq * 7919) % 50000,
            .offset_bytes = (int64_t)(seq * 4096),
            .bytes_asked = size,
            .result = (int64_t)size,
            .thread_id = (uint32_t)(20000 + k),
        };
        bench_check(vigil_wire_add_activity(w, &a, &error), error);
    }
    bench_batch_add(b, w);
    return (uint32_t)per_rank;
}

/* Node `n`'s batch for cycle `cycle` (its sequence is cycle + 1); the rows
 * it stores go to *rows. */
static GBytes *make_batch(struct run *r, struct node *n, uint64_t cycle, uint32_t *rows)
{
    const struct options *o = r->o;
    uint64_t cycle_ns = (uint64_t)o->cycle_ms * 1000000;
    uint64_t start_ns = (uint64_t)r->start_ns + cycle * cycle_ns;
    uint64_t end_ns = start_ns + cycle_ns;
    char hostname[32];
    g_snprintf(hostname, sizeof hostname, "cn%05" G_GUINT64_FORMAT, n->node_id);
    struct vigil_wire_node node = {.realtime_offset_ns = r->realtime_offset_ns,
                                   .cycle = cycle + 1,
                                   .cycle_start_ns = start_ns,
                                   .cycle_end_ns = end_ns,
                                   .cycle_ms = (uint32_t)o->cycle_ms,
                                   .hostname = hostname};
    bench_batch *b = bench_batch_new(n->node_id, cycle + 1, &node);
    bench_batch_add_processes(b, n->processes, (unsigned)o->ranks);
    bench_batch_add_metrics(b, r->metrics, r->n_metrics);
    uint32_t ticks = (uint32_t)(o->cycle_ms / o->tick_ms);
    bench_batch_add_rollups(b, r->metrics, r->n_metrics, start_ns, end_ns, ticks);
    add_states(b, o, cycle + 1);
    *rows = (uint32_t)(1 + o->ranks + r->n_metrics + 1 + o->ranks); /* node, processes, … */
    if (captured(o, n->node_id, cycle)) {
        GError *error = NULL;
        vigil_wire_writer *w = bench_batch_message(b, VIGIL_WIRE_WINDOWS, 0);
        for (gint64 k = 0; k < o->ranks; k++) {
            uint32_t count = add_activities(b, o, cycle, k, start_ns, end_ns);
            struct vigil_wire_window window = {.process_id = (uint64_t)k + 1,
                                               .first_cycle = cycle + 1,
                                               .last_cycle = cycle + 1,
                                               .start_ns = start_ns,
                                               .end_ns = end_ns,
                                               .activities_forwarded = count,
                                               .reasons = "process ABNORMAL_BAD "
                                                          "(latency-histogram: posix.write)"};
            bench_check(vigil_wire_add_window(w, &window, &error), error);
            *rows += count + 1;
        }
        bench_batch_add(b, w);
        bench_batch_add_samples(b, r->metrics, r->n_metrics, start_ns, end_ns,
                                (uint64_t)o->tick_ms * 1000000);
        *rows += ticks * r->n_metrics;
    }
    return bench_batch_finish(b);
}

/* ---- the link ----------------------------------------------------------------------------------
 */

static void open_node(struct run *r, void *context, struct node *n, const char *endpoint,
                      const char *server_key)
{
    n->socket = zmq_socket(context, ZMQ_DEALER);
    if (n->socket == NULL)
        bench_die("a DEALER for node %" G_GUINT64_FORMAT ": %s", n->node_id,
                  zmq_strerror(zmq_errno()));
    /* A few batches queued per node at most: 5,000 nodes' 100 KiB
     * batches must not fill this machine's memory while vigil-txd is
     * behind. */
    int zero = 0, send_hwm = 4;
    /* vigild's uplink: an interval of its own, ZeroMQ's backoff. */
    int reconnect_ivl_ms = (int)r->o->reconnect_ivl_ms +
                           g_random_int_range(0, (gint32)MAX(r->o->reconnect_ivl_ms, 1)),
        reconnect_ivl_max_ms = (int)r->o->reconnect_ivl_max_ms;
    char routing_id[17];
    g_snprintf(routing_id, sizeof routing_id, "%016" PRIx64, n->node_id);
    if (zmq_setsockopt(n->socket, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
        zmq_setsockopt(n->socket, ZMQ_SNDHWM, &send_hwm, sizeof send_hwm) != 0 ||
        zmq_setsockopt(n->socket, ZMQ_ROUTING_ID, routing_id, 16) != 0 ||
        zmq_setsockopt(n->socket, ZMQ_RECONNECT_IVL, &reconnect_ivl_ms, sizeof reconnect_ivl_ms) !=
            0 ||
        zmq_setsockopt(n->socket, ZMQ_RECONNECT_IVL_MAX, &reconnect_ivl_max_ms,
                       sizeof reconnect_ivl_max_ms) != 0 ||
        zmq_setsockopt(n->socket, ZMQ_CURVE_SERVERKEY, server_key, KEY_CHARS + 1) != 0 ||
        zmq_setsockopt(n->socket, ZMQ_CURVE_PUBLICKEY, n->public_key, KEY_CHARS + 1) != 0 ||
        zmq_setsockopt(n->socket, ZMQ_CURVE_SECRETKEY, n->secret_key, KEY_CHARS + 1) != 0)
        bench_die("node %" G_GUINT64_FORMAT "'s socket options: %s", n->node_id,
                  zmq_strerror(zmq_errno()));
    /* vigild's uplink: TCP keepalive, no ZMTP heartbeats. */
    GError *error = NULL;
    if (!vigil_link_liveness_set(n->socket, &error))
        bench_die("node %" G_GUINT64_FORMAT ": %s", n->node_id, error->message);
    (void)endpoint; /* connected when its time comes: connect_due */
    n->connect_at_ns = bench_monotonic_ns() +
                       (r->o->connect_delay_max_ms > 0
                            ? g_random_int_range(0, (gint32)r->o->connect_delay_max_ms) * 1000000LL
                            : 0);
    n->sent_ns = g_new0(int64_t, r->max_batches);
    n->rows = g_new0(uint32_t, r->max_batches);
}

/* Connects the nodes whose first connect is due; the next one's time, or
 * INT64_MAX when all are connected. `order`: the nodes by connect time. */
static int64_t connect_due(struct run *r, const char *endpoint, const gint64 *order,
                           gint64 *connected, int64_t now)
{
    for (; *connected < r->o->nodes; ++*connected) {
        struct node *n = &r->nodes[order[*connected]];
        if (n->connect_at_ns > now)
            return n->connect_at_ns;
        if (zmq_connect(n->socket, endpoint) != 0)
            bench_die("connecting to %s: %s", endpoint, zmq_strerror(zmq_errno()));
        n->connect_at_ns = 0;
    }
    return INT64_MAX;
}

static gint compare_connect_at(gconstpointer a, gconstpointer b, gpointer data)
{
    const struct node *nodes = data;
    int64_t x = nodes[*(const gint64 *)a].connect_at_ns,
            y = nodes[*(const gint64 *)b].connect_at_ns;
    return x < y ? -1 : x > y;
}

static void acknowledged(struct run *r, struct node *n, uint64_t sequence)
{
    if (sequence == 0 || sequence > r->max_batches || n->sent_ns[sequence - 1] <= 0)
        return; /* not sent, or acknowledged before (a resend's answer) */
    int64_t now = bench_monotonic_ns();
    int64_t sent = n->sent_ns[sequence - 1];
    n->sent_ns[sequence - 1] = -1;
    n->in_flight--;
    r->acked++;
    /* From the new vigil-txd only: fanin.py writes its pid once the old
     * one is dead. The delay counts from the restart asked for. */
    if (r->new_txd_pid > 0 && r->all_heard_ns == 0) {
        r->restart_acked++;
        if (n->heard_again_ns == 0) {
            n->heard_again_ns = now;
            double delay_s = (double)(now - r->restart_ns) / 1e9;
            g_array_append_val(r->heard_again_s, delay_s);
            if (++r->heard_again == (uint64_t)r->o->nodes)
                r->all_heard_ns = now;
        }
    }
    if (now >= r->window_start_ns && now < r->window_end_ns) {
        r->acked_in_window++;
        r->rows_in_window += n->rows[sequence - 1];
    }
    if (sent >= r->window_start_ns && sent < r->window_end_ns) {
        double ms = (double)(now - sent) / 1e6;
        g_array_append_val(r->latencies_ms, ms);
    }
}

#define MONITOR_EVENT (1ULL << 62) /* in an epoll event's data: node i's monitor */

static void watch_handshakes(void *context, struct node *n, gint64 i)
{
    char *address = g_strdup_printf("inproc://handshakes-%" G_GINT64_FORMAT, i);
    n->monitor = zmq_socket(context, ZMQ_PAIR);
    if (zmq_socket_monitor(n->socket, address, ZMQ_EVENT_HANDSHAKE_SUCCEEDED) != 0 ||
        n->monitor == NULL || zmq_connect(n->monitor, address) != 0)
        bench_die("watching node %" G_GUINT64_FORMAT "'s handshakes: %s", n->node_id,
                  zmq_strerror(zmq_errno()));
    g_free(address);
}

/* Node n's handshakes so far: the first after the restart is noted. */
static void drain_monitor(struct run *r, struct node *n)
{
    if (n->monitor == NULL)
        return;
    for (;;) {
        zmq_msg_t event, address;
        zmq_msg_init(&event);
        if (zmq_msg_recv(&event, n->monitor, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&event);
            return;
        }
        zmq_msg_init(&address);
        zmq_msg_recv(&address, n->monitor, 0);
        zmq_msg_close(&event);
        zmq_msg_close(&address);
        if (r->restart_ns != 0 && n->handshaken_again_ns == 0) {
            n->handshaken_again_ns = bench_monotonic_ns();
            double delay_s = (double)(n->handshaken_again_ns - r->restart_ns) / 1e9;
            g_array_append_val(r->handshaken_again_s, delay_s);
        }
    }
}

/* Everything node `n` has received. */
static void drain(struct run *r, struct node *n)
{
    for (;;) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, n->socket, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&m);
            if (zmq_errno() == EAGAIN)
                return;
            if (zmq_errno() == EINTR)
                continue;
            bench_die("receiving: %s", zmq_strerror(zmq_errno()));
        }
        struct vigil_wire_header h;
        if (!vigil_wire_peek_header(zmq_msg_data(&m), zmq_msg_size(&m), &h, NULL)) {
            r->unexpected++;
        } else if (h.type == VIGIL_WIRE_ACK) {
            acknowledged(r, n, h.sequence);
        } else if (h.type == VIGIL_WIRE_REFUSED) {
            if (r->refused++ == 0) {
                struct vigil_wire_message reply;
                if (vigil_wire_decode(zmq_msg_data(&m), zmq_msg_size(&m), &reply, NULL)) {
                    g_string_printf(r->first_refusal,
                                    "node %" G_GUINT64_FORMAT " batch %" PRIu64 ": %s", n->node_id,
                                    h.sequence, reply.refusals[0].reason);
                    vigil_wire_message_clear(&reply);
                }
            }
        } else if (h.type != VIGIL_WIRE_STATES) {
            r->unexpected++;
        }
        zmq_msg_close(&m);
    }
}

static void send_cycle(struct run *r, struct node *n, uint64_t cycle)
{
    if (cycle >= r->max_batches)
        return;
    if (n->in_flight >= (uint64_t)r->o->max_in_flight) {
        r->held_back++;
        return;
    }
    GBytes *batch = make_batch(r, n, cycle, &n->rows[cycle]);
    gsize length;
    const void *data = g_bytes_get_data(batch, &length);
    int64_t now = bench_monotonic_ns();
    /* Not waiting when the node's pipe to vigil-txd is full (vigil-txd
     * is not reading): the batch is held back, as vigild's uplink would
     * keep it in memory or its spool, and the next cycles go on time. */
    while (zmq_send(n->socket, data, length, ZMQ_DONTWAIT) != (int)length) {
        if (zmq_errno() == EAGAIN) {
            g_bytes_unref(batch);
            r->held_back++;
            return;
        }
        if (zmq_errno() != EINTR)
            bench_die("sending a batch: %s", zmq_strerror(zmq_errno()));
    }
    g_bytes_unref(batch);
    n->sent_ns[cycle] = now;
    n->in_flight++;
    r->sent++;
    r->bytes_sent += length;
    if (now >= r->window_start_ns && now < r->window_end_ns)
        r->sent_in_window++;
}

static int compare_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of the window's latencies, those never acknowledged
 * counted as infinitely slow; -1 when it falls among them. */
static double quantile(struct run *r, double q)
{
    if (r->sent_in_window == 0)
        return -1;
    uint64_t rank = (uint64_t)ceil(q * (double)r->sent_in_window);
    if (rank == 0)
        rank = 1;
    if (rank > r->latencies_ms->len)
        return -1;
    return g_array_index(r->latencies_ms, double, rank - 1);
}

static void run(const struct options *o, const char *endpoint, const char *server_key,
                const char *dir)
{
    struct run r = {.o = o, .latencies_ms = g_array_new(FALSE, FALSE, sizeof(double))};
    r.first_refusal = g_string_new("");
    r.heard_again_s = g_array_new(FALSE, FALSE, sizeof(double));
    r.handshaken_again_s = g_array_new(FALSE, FALSE, sizeof(double));
    r.metrics =
        bench_node_metrics((unsigned)o->cores, (unsigned)o->disks, (unsigned)o->nets, &r.n_metrics);
    int64_t cycle_ns = o->cycle_ms * 1000000;
    r.max_batches = (uint64_t)((o->warmup_s + o->seconds) * 1000 / o->cycle_ms + 2);
    r.realtime_offset_ns = g_get_real_time() * 1000 - bench_monotonic_ns();
    g_snprintf(r.run_tag, sizeof r.run_tag, "%" G_GINT64_FORMAT, g_get_real_time());

    void *context = zmq_ctx_new();
    /* With --restart-at-s, each node's handshakes are watched: a monitor's
     * PAIR inside ZeroMQ and ours. */
    zmq_ctx_set(context, ZMQ_MAX_SOCKETS, (o->restart_at_s >= 0 ? 3 : 1) * (int)o->nodes + 16);
    zmq_ctx_set(context, ZMQ_IO_THREADS, (int)o->io_threads);
    r.nodes = g_new0(struct node, (gsize)o->nodes);
    read_keys(r.nodes, o->nodes, dir);
    int epoll = epoll_create1(EPOLL_CLOEXEC);
    r.start_ns = bench_monotonic_ns() + 500000000; /* half a second to connect */
    for (gint64 i = 0; i < o->nodes; i++) {
        struct node *n = &r.nodes[i];
        n->node_id = (uint64_t)(o->first_node_id + i);
        make_processes(&r, n, i);
        open_node(&r, context, n, endpoint, server_key);
        int fd;
        size_t fd_size = sizeof fd;
        if (zmq_getsockopt(n->socket, ZMQ_FD, &fd, &fd_size) != 0)
            bench_die("ZMQ_FD: %s", zmq_strerror(zmq_errno()));
        struct epoll_event e = {.events = EPOLLIN, .data.u64 = (uint64_t)i};
        if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &e) != 0)
            bench_die("epoll_ctl: %s", g_strerror(errno));
        if (o->restart_at_s >= 0) {
            watch_handshakes(context, n, i);
            if (zmq_getsockopt(n->monitor, ZMQ_FD, &fd, &fd_size) != 0)
                bench_die("ZMQ_FD: %s", zmq_strerror(zmq_errno()));
            e.data.u64 = MONITOR_EVENT | (uint64_t)i;
            if (epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &e) != 0)
                bench_die("epoll_ctl: %s", g_strerror(errno));
        }
    }
    gint64 *connect_order = g_new(gint64, (gsize)o->nodes), connected = 0;
    for (gint64 i = 0; i < o->nodes; i++)
        connect_order[i] = i;
    g_qsort_with_data(connect_order, (gint)o->nodes, sizeof *connect_order, compare_connect_at,
                      r.nodes);
    struct epoll_event stdin_event = {.events = EPOLLIN, .data.u64 = UINT64_MAX};
    if (o->restart_at_s >= 0 && epoll_ctl(epoll, EPOLL_CTL_ADD, STDIN_FILENO, &stdin_event) != 0)
        bench_die("epoll_ctl on standard input: %s", g_strerror(errno));
    double txd_cpu_before_restart = 0; /* the old vigil-txd's, in the window */
    long txd_peak_rss_kib = 0;         /* the old vigil-txd's, at the restart */
    r.window_start_ns = r.start_ns + o->warmup_s * 1000000000;
    r.window_end_ns = r.window_start_ns + o->seconds * 1000000000;
    double txd_cpu_start = 0, txd_cpu_end = 0, pg_cpu_start = 0, pg_cpu_end = 0;
    double own_cpu_start = 0, own_cpu_end = 0;
    gboolean window_open = FALSE, window_closed = FALSE;

    /* Node i sends cycle c at start + c × cycle + i/N of a cycle: taken in
     * that order, the next one due is always the cursor's. */
    uint64_t cycles = (uint64_t)((o->warmup_s + o->seconds) * 1000 / o->cycle_ms);
    uint64_t cycle = 0;
    gint64 cursor = 0;
    int64_t last_sweep = 0;
    struct epoll_event events[256];
    int64_t drain_end = 0;
    for (;;) {
        int64_t now = bench_monotonic_ns();
        int64_t next_connect = connect_due(&r, endpoint, connect_order, &connected, now);
        if (o->restart_at_s >= 0 && window_open && r.restart_ns == 0 &&
            now >= r.window_start_ns + o->restart_at_s * 1000000000) {
            txd_cpu_before_restart = cpu_seconds(o->txd_pid) - txd_cpu_start;
            txd_peak_rss_kib = status_kib(o->txd_pid, "VmHWM:");
            r.restart_ns = now;
            printf("restart\n");
            fflush(stdout);
        }
        if (!window_open && now >= r.window_start_ns) {
            window_open = TRUE;
            txd_cpu_start = cpu_seconds(o->txd_pid);
            pg_cpu_start = server_cpu_seconds(o->postmaster_pid);
            own_cpu_start = bench_cpu_s();
        }
        if (window_open && !window_closed && now >= r.window_end_ns) {
            window_closed = TRUE;
            txd_cpu_end = r.restart_ns == 0
                              ? cpu_seconds(o->txd_pid)
                              : txd_cpu_start + txd_cpu_before_restart +
                                    (r.new_txd_pid > 0 ? cpu_seconds(r.new_txd_pid) : 0);
            pg_cpu_end = server_cpu_seconds(o->postmaster_pid);
            own_cpu_end = bench_cpu_s();
        }
        int64_t due = INT64_MAX;
        if (cycle < cycles)
            due = r.start_ns + (int64_t)cycle * cycle_ns + cycle_ns * cursor / o->nodes;
        else if (drain_end == 0)
            drain_end = now + o->drain_s * 1000000000;
        if (drain_end != 0 && window_closed) {
            gboolean all_acked = r.acked == r.sent;
            if (all_acked || now >= drain_end)
                break;
        }
        if (due <= now) {
            struct node *n = &r.nodes[cursor];
            send_cycle(&r, n, cycle);
            drain(&r, n); /* a send may have taken the socket's signal */
            if (++cursor == o->nodes) {
                cursor = 0;
                cycle++;
            }
            continue;
        }
        if (now - last_sweep >= SWEEP_NS) {
            /* ZMQ_FD signals edges; a signal consumed elsewhere is found
             * here. */
            for (gint64 i = 0; i < o->nodes; i++) {
                drain(&r, &r.nodes[i]);
                drain_monitor(&r, &r.nodes[i]);
            }
            last_sweep = now;
        }
        int64_t wait_ns = MIN(MIN(due, next_connect) - now, SWEEP_NS);
        if (!window_open)
            wait_ns = MIN(wait_ns, r.window_start_ns - now);
        else if (!window_closed)
            wait_ns = MIN(wait_ns, r.window_end_ns - now);
        int timeout_ms = (int)MAX(wait_ns / 1000000, 0);
        int ready = epoll_wait(epoll, events, G_N_ELEMENTS(events), timeout_ms);
        if (ready < 0 && errno != EINTR)
            bench_die("epoll_wait: %s", g_strerror(errno));
        for (int i = 0; i < ready; i++) {
            if (events[i].data.u64 == UINT64_MAX) {
                /* fanin.py: the new vigil-txd's pid, a line. */
                char line[32] = "";
                ssize_t got = read(STDIN_FILENO, line, sizeof line - 1);
                if (got <= 0) {
                    epoll_ctl(epoll, EPOLL_CTL_DEL, STDIN_FILENO, NULL);
                    continue;
                }
                r.new_txd_pid = strtol(line, NULL, 10);
                continue;
            }
            if (events[i].data.u64 & MONITOR_EVENT)
                drain_monitor(&r, &r.nodes[events[i].data.u64 & ~MONITOR_EVENT]);
            else
                drain(&r, &r.nodes[events[i].data.u64]);
        }
    }
    g_free(connect_order);

    g_array_sort(r.latencies_ms, compare_double);
    if (o->latencies_out != NULL) {
        /* For several runs' figures together (bench/fanin.py --groups). */
        FILE *out = fopen(o->latencies_out, "w");
        if (out == NULL)
            bench_die("%s: %s", o->latencies_out, g_strerror(errno));
        for (guint i = 0; i < r.latencies_ms->len; i++)
            fprintf(out, "%.3f\n", g_array_index(r.latencies_ms, double, i));
        if (fclose(out) != 0)
            bench_die("%s: %s", o->latencies_out, g_strerror(errno));
    }
    double window_s = (double)o->seconds;
    uint64_t unacked = r.sent - r.acked;
    long txd_pid_now = r.restart_ns != 0 ? r.new_txd_pid : o->txd_pid;
    txd_peak_rss_kib = MAX(txd_peak_rss_kib, status_kib(txd_pid_now, "VmHWM:"));
    GString *restart = g_string_new("");
    if (r.restart_ns != 0) {
        g_array_sort(r.handshaken_again_s, compare_double);
        guint shaken = r.handshaken_again_s->len;
        g_string_append_printf(
            restart,
            ", \"restart_handshaken\": %u, \"restart_handshakes_all_s\": %.2f"
            ", \"restart_handshakes_p50_s\": %.2f, \"restart_handshakes_p90_s\": %.2f",
            shaken,
            shaken == (guint)o->nodes ? g_array_index(r.handshaken_again_s, double, shaken - 1)
                                      : -1,
            shaken > 0 ? g_array_index(r.handshaken_again_s, double, shaken / 2) : -1,
            shaken > 0 ? g_array_index(r.handshaken_again_s, double, shaken * 9 / 10) : -1);
        g_array_sort(r.heard_again_s, compare_double);
        guint heard = r.heard_again_s->len;
        double all_s = r.all_heard_ns != 0 ? (double)(r.all_heard_ns - r.restart_ns) / 1e9 : -1;
        double until_s = all_s >= 0 ? all_s : (double)(r.window_end_ns - r.restart_ns) / 1e9;
        g_string_append_printf(
            restart,
            ", \"restart_heard\": %u, \"restart_all_heard_s\": %.2f"
            ", \"restart_p50_s\": %.2f, \"restart_p90_s\": %.2f"
            ", \"restart_acked\": %" PRIu64 ", \"restart_acked_per_s\": %.1f",
            heard, all_s, heard > 0 ? g_array_index(r.heard_again_s, double, heard / 2) : -1,
            heard > 0 ? g_array_index(r.heard_again_s, double, heard * 9 / 10) : -1,
            r.restart_acked, until_s > 0 ? (double)r.restart_acked / until_s : 0);
    }
    char *first_refusal = g_strescape(r.first_refusal->str, NULL);
    printf("{\"nodes\": %" G_GINT64_FORMAT ", \"metrics\": %u, \"ranks\": %" G_GINT64_FORMAT
           ", \"offered_per_s\": %.1f, \"sent_in_window\": %" PRIu64
           ", \"acked_per_s\": %.1f, \"p50_ms\": %.1f, \"p99_ms\": %.1f, \"max_ms\": %.1f"
           ", \"rows_per_s\": %.0f, \"txd_cpu_share\": %.3f, \"pg_cpu_share\": %.3f"
           ", \"load_cpu_share\": %.3f, \"txd_peak_rss_kib\": %ld, \"mean_batch_bytes\": %.0f"
           ", \"sent\": %" PRIu64 ", \"acked\": %" PRIu64 ", \"unacked\": %" PRIu64
           ", \"held_back\": %" PRIu64 ", \"refused\": %" PRIu64 ", \"unexpected\": %" PRIu64
           ", \"first_refusal\": \"%s\"%s}\n",
           o->nodes, r.n_metrics, o->ranks, (double)o->nodes * 1000.0 / (double)o->cycle_ms,
           r.sent_in_window, (double)r.acked_in_window / window_s, quantile(&r, 0.5),
           quantile(&r, 0.99), quantile(&r, 1.0), (double)r.rows_in_window / window_s,
           (txd_cpu_end - txd_cpu_start) / window_s, (pg_cpu_end - pg_cpu_start) / window_s,
           (own_cpu_end - own_cpu_start) / window_s, txd_peak_rss_kib,
           r.sent > 0 ? (double)r.bytes_sent / (double)r.sent : 0.0, r.sent, r.acked, unacked,
           r.held_back, r.refused, r.unexpected, first_refusal, restart->str);
    g_free(first_refusal);
    g_string_free(restart, TRUE);
    fflush(stdout);
    /* Closing 5,000 sockets one by one takes a while, and the process
     * ends here anyway. */
    _exit(r.refused > 0 || r.unexpected > 0 ? 2 : 0);
}

/* N fresh connections at once, each watched until its CURVE handshake
 * succeeds: vigil-txd's CPU (all its threads: ZeroMQ's I/O thread doing
 * the curve25519, its loop answering ZAP) over them, per handshake. */
static void handshakes(const struct options *o, const char *endpoint, const char *dir)
{
    void *context = zmq_ctx_new();
    /* Each node: its DEALER, the monitor's PAIR inside ZeroMQ and ours. */
    zmq_ctx_set(context, ZMQ_MAX_SOCKETS, 3 * (int)o->nodes + 16);
    struct node *nodes = g_new0(struct node, (gsize)o->nodes);
    read_keys(nodes, o->nodes, dir);
    void **monitors = g_new0(void *, (gsize)o->nodes);
    zmq_pollitem_t *items = g_new0(zmq_pollitem_t, (gsize)o->nodes);
    struct options no_delay = *o;
    no_delay.connect_delay_max_ms = 0;
    struct run r = {.o = &no_delay, .max_batches = 1};
    for (gint64 i = 0; i < o->nodes; i++) {
        nodes[i].node_id = (uint64_t)(o->first_node_id + i);
        open_node(&r, context, &nodes[i], endpoint, o->server_key);
        char *address = g_strdup_printf("inproc://handshake-%" G_GINT64_FORMAT, i);
        monitors[i] = zmq_socket(context, ZMQ_PAIR);
        if (zmq_socket_monitor(nodes[i].socket, address,
                               ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                   ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) != 0 ||
            monitors[i] == NULL || zmq_connect(monitors[i], address) != 0)
            bench_die("watching node %" G_GINT64_FORMAT "'s handshake: %s", i,
                      zmq_strerror(zmq_errno()));
        g_free(address);
        items[i] = (zmq_pollitem_t){monitors[i], 0, ZMQ_POLLIN, 0};
    }
    double cpu_start = cpu_seconds(o->txd_pid);
    int64_t start_ns = bench_monotonic_ns();
    for (gint64 i = 0; i < o->nodes; i++)
        if (zmq_connect(nodes[i].socket, endpoint) != 0)
            bench_die("connecting to %s: %s", endpoint, zmq_strerror(zmq_errno()));
    gint64 done = 0;
    int64_t deadline_ns = start_ns + 300 * 1000000000LL;
    while (done < o->nodes) {
        if (bench_monotonic_ns() > deadline_ns)
            bench_die("%" G_GINT64_FORMAT " of %" G_GINT64_FORMAT " handshakes in 300 s", done,
                      o->nodes);
        if (zmq_poll(items, (int)o->nodes, 1000) < 0 && zmq_errno() != EINTR)
            bench_die("zmq_poll: %s", zmq_strerror(zmq_errno()));
        for (gint64 i = 0; i < o->nodes; i++) {
            if (!(items[i].revents & ZMQ_POLLIN))
                continue;
            zmq_msg_t event, address;
            zmq_msg_init(&event);
            zmq_msg_init(&address);
            if (zmq_msg_recv(&event, monitors[i], 0) < 6 ||
                zmq_msg_recv(&address, monitors[i], 0) < 0)
                bench_die("node %" G_GINT64_FORMAT "'s monitor: %s", i, zmq_strerror(zmq_errno()));
            uint16_t id;
            memcpy(&id, zmq_msg_data(&event), sizeof id);
            if (id != ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
                bench_die("node %" G_GINT64_FORMAT "'s handshake failed (event %u): is its key "
                          "in vigil-txd's curve_authorized_keys?",
                          i, id);
            zmq_msg_close(&event);
            zmq_msg_close(&address);
            items[i].events = 0; /* done: not polled again */
            done++;
        }
    }
    double seconds = (double)(bench_monotonic_ns() - start_ns) / 1e9;
    double cpu_s = cpu_seconds(o->txd_pid) - cpu_start;
    printf("{\"handshakes\": %" G_GINT64_FORMAT ", \"seconds\": %.3f, \"txd_cpu_s\": %.3f"
           ", \"txd_cpu_ms_each\": %.3f}\n",
           o->nodes, seconds, cpu_s, 1000 * cpu_s / (double)o->nodes);
    fflush(stdout);
    _exit(0); /* closing them one by one takes a while */
}

int main(int argc, char **argv)
{
    bench_set_program_name("fanin-load");
    struct options o = {.nodes = 100,
                        .seconds = 20,
                        .warmup_s = 8,
                        .drain_s = 30,
                        .cycle_ms = 1000,
                        .tick_ms = 100,
                        .cores = 48,
                        .disks = 2,
                        .nets = 2,
                        .ranks = 48,
                        .activity_rate = 2000,
                        .forwarded_share = 0.175,
                        .nodes_per_job = 64,
                        .max_in_flight = 64,
                        .first_node_id = 1,
                        .io_threads = 1,
                        .reconnect_ivl_ms = 1000,
                        .reconnect_ivl_max_ms = 5000,
                        .connect_delay_max_ms = 1000,
                        .restart_at_s = -1};
    GOptionEntry entries[] = {
        {"nodes", 0, 0, G_OPTION_ARG_INT64, &o.nodes, "nodes simulated (default 100)", "N"},
        {"seconds", 0, 0, G_OPTION_ARG_INT64, &o.seconds, "measured (default 20)", "S"},
        {"warmup-s", 0, 0, G_OPTION_ARG_INT64, &o.warmup_s, "before (default 8)", "S"},
        {"drain-s", 0, 0, G_OPTION_ARG_INT64, &o.drain_s,
         "longest wait for the last acknowledgements (default 30)", "S"},
        {"cycle-ms", 0, 0, G_OPTION_ARG_INT64, &o.cycle_ms, "a batch per (default 1000)", "MS"},
        {"tick-ms", 0, 0, G_OPTION_ARG_INT64, &o.tick_ms, "vigild's tick (default 100)", "MS"},
        {"cores", 0, 0, G_OPTION_ARG_INT64, &o.cores, "CPUs per node (default 48)", "N"},
        {"disks", 0, 0, G_OPTION_ARG_INT64, &o.disks, "disks per node (default 2)", "N"},
        {"nets", 0, 0, G_OPTION_ARG_INT64, &o.nets, "interfaces per node (default 2)", "N"},
        {"ranks", 0, 0, G_OPTION_ARG_INT64, &o.ranks, "processes per node (default 48)", "N"},
        {"activity-rate", 0, 0, G_OPTION_ARG_INT64, &o.activity_rate,
         "I/O calls a second on a node (default 2000)", "N"},
        {"forwarded-share", 0, 0, G_OPTION_ARG_DOUBLE, &o.forwarded_share,
         "share of cycles capture forwards (default 0.175)", "F"},
        {"nodes-per-job", 0, 0, G_OPTION_ARG_INT64, &o.nodes_per_job,
         "nodes sharing a run (default 64)", "N"},
        {"max-in-flight", 0, 0, G_OPTION_ARG_INT64, &o.max_in_flight,
         "unacknowledged batches per node (default 64)", "N"},
        {"first-node-id", 0, 0, G_OPTION_ARG_INT64, &o.first_node_id, "(default 1)", "ID"},
        {"io-threads", 0, 0, G_OPTION_ARG_INT64, &o.io_threads, "ZeroMQ's (default 1)", "N"},
        {"txd-pid", 0, 0, G_OPTION_ARG_INT64, &o.txd_pid, "vigil-txd, for its CPU", "PID"},
        {"postmaster-pid", 0, 0, G_OPTION_ARG_INT64, &o.postmaster_pid, "PostgreSQL, for its CPU",
         "PID"},
        {"server-key", 0, 0, G_OPTION_ARG_STRING, &o.server_key,
         "run: vigil-txd's CURVE public key", "KEY"},
        {"latencies-out", 0, 0, G_OPTION_ARG_FILENAME, &o.latencies_out,
         "the window's ACK latencies (ms), one a line", "FILE"},
        {"reconnect-ivl-ms", 0, 0, G_OPTION_ARG_INT64, &o.reconnect_ivl_ms,
         "as [uplink] reconnect_ivl_ms (default 1000)", "MS"},
        {"reconnect-ivl-max-ms", 0, 0, G_OPTION_ARG_INT64, &o.reconnect_ivl_max_ms,
         "as [uplink] reconnect_ivl_max_ms (default 5000)", "MS"},
        {"connect-delay-max-ms", 0, 0, G_OPTION_ARG_INT64, &o.connect_delay_max_ms,
         "as [uplink] connect_delay_max_ms (default 1000)", "MS"},
        {"restart-at-s", 0, 0, G_OPTION_ARG_INT64, &o.restart_at_s,
         "ask for vigil-txd's restart this far into the window (default: none)", "S"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context = g_option_context_new(
        "keygen N DIR | run ENDPOINT DIR --server-key=KEY - N nodes' batches to one vigil-txd");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    if (!g_option_context_parse(context, &argc, &argv, &error))
        bench_die("%s", error->message);
    g_option_context_free(context);
    if (argc == 4 && strcmp(argv[1], "keygen") == 0) {
        gint64 n = g_ascii_strtoll(argv[2], NULL, 10);
        if (n < 1 || n > 100000)
            bench_die("keygen %s: from 1 to 100000 key pairs", argv[2]);
        keygen(n, argv[3]);
        return 0;
    }
    if (argc != 4 || (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "handshakes") != 0))
        bench_die("expected keygen N DIR, or run|handshakes ENDPOINT DIR --server-key=KEY");
    if (o.server_key == NULL || strlen(o.server_key) != KEY_CHARS)
        bench_die("--server-key=%s: not a CURVE public key (40 characters of Z85)",
                  o.server_key != NULL ? o.server_key : "");
    if (o.nodes < 1 || o.nodes > 100000)
        bench_die("--nodes %" G_GINT64_FORMAT ": from 1 to 100000", o.nodes);
    if (o.seconds < 1 || o.warmup_s < 0 || o.drain_s < 0)
        bench_die("--seconds at least 1, --warmup-s and --drain-s at least 0");
    if (o.cycle_ms < 10 || o.tick_ms < 1 || o.cycle_ms % o.tick_ms != 0)
        bench_die("--cycle-ms at least 10 and a multiple of --tick-ms");
    if (o.ranks < 1 || o.ranks > 1024 || o.cores < 0 || o.cores > 4096 || o.disks < 0 ||
        o.disks > 256 || o.nets < 0 || o.nets > 256)
        bench_die("--ranks from 1 to 1024; --cores, --disks, --nets from 0");
    if (o.forwarded_share < 0 || o.forwarded_share > 1)
        bench_die("--forwarded-share %g: from 0 to 1", o.forwarded_share);
    if (o.nodes_per_job < 1 || o.max_in_flight < 1 || o.io_threads < 1 || o.first_node_id < 1 ||
        o.activity_rate < 0)
        bench_die("--nodes-per-job, --max-in-flight, --io-threads, --first-node-id: at least 1");
    if (o.reconnect_ivl_ms < 10 || o.reconnect_ivl_ms > 600000 || o.reconnect_ivl_max_ms < 0 ||
        o.reconnect_ivl_max_ms > 3600000 || o.connect_delay_max_ms < 0 ||
        o.connect_delay_max_ms > 600000)
        bench_die("--reconnect-ivl-ms from 10 to 600000, --reconnect-ivl-max-ms from 0 to "
                  "3600000, --connect-delay-max-ms from 0 to 600000 (as vigild's keys)");
    if (o.restart_at_s >= o.seconds)
        bench_die("--restart-at-s %" G_GINT64_FORMAT
                  ": within the window (--seconds %" G_GINT64_FORMAT ")",
                  o.restart_at_s, o.seconds);
    if (strcmp(argv[1], "handshakes") == 0) {
        if (o.txd_pid <= 0)
            bench_die("handshakes: --txd-pid, whose CPU they cost");
        handshakes(&o, argv[2], argv[3]);
    }
    run(&o, argv[2], o.server_key, argv[3]);
    return 0;
}
