/* vigil — vigild's socket under floods of one unprivileged user: what the
 * flood costs the node's sampling (ticks missed) and a root program's
 * registration (connect to REGISTERED), beside the same figures with no
 * flood, in the same run.
 *
 *   bench-socket-flood VIGILD VIGIL_CLI [SECONDS [PROBES]]
 *
 * A private vigild runs on the default providers (VIGIL_PLUGIN_DIR tells
 * where they are) with its socket in a temporary folder. Four phases of
 * SECONDS (default 10) each: no flood, then a child that setuid()s to
 * nobody (65534) and loops, as fast as it can, on one of
 *   malformed    connect, send a message without the protocol's magic,
 *                wait for vigild to close the connection;
 *   connections  connect, send the same garbage, close at once (never
 *                waits: the backlog fills);
 *   status       connect, STATUS_REQUEST, read the answer (a `vigil
 *                status` loop).
 * Meanwhile root registers PROBES (default 40) times, evenly over the
 * phase, each from a child of its own that connects, sends REGISTER with a
 * ring, waits for REGISTERED and exits: the time from before connect() to
 * the answer. The preload library gives up on a connect() that waits 5 ms
 * (the backlog full) and runs standalone, so those are counted too.
 *
 * Per phase it prints the flood's rate, the ticks missed (from `vigil
 * status --json`, before and after the phase: missed / deadlines), the
 * registration's median and max, the connects over 5 ms, vigild's CPU
 * (utime+stime) and the lines its log grew by; then each flood's median
 * and max registration as ratios to no flood. The goals (ticks missed at
 * most 1 %, a registration at most 10 ms) are reported, not enforced: the
 * figures depend on the machine and what else runs on it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "vigil/clock.h"
#include "vigil/local_protocol.h"
#include "vigil/ring.h"

#define NOBODY            65534
#define PROBE_SLOTS       64
#define PRELOAD_WAIT_NS   (5 * 1000000ull) /* instrument/daemon_link.c's SEND_TIMEOUT_MS */
#define GOAL_MISSED_SHARE 0.01
#define GOAL_REGISTER_MS  10.0

enum flood { FLOOD_NONE, FLOOD_MALFORMED, FLOOD_CONNECTIONS, FLOOD_STATUS, FLOODS };
static const char *const flood_names[FLOODS] = {"none", "malformed", "connections", "status"};

struct phase {
    double flood_per_s;
    double missed_share;
    gint64 ticks, missed;
    double register_median_ms, register_max_ms;
    int probes, probes_failed, connects_over_5ms;
    char failure[300]; /* the first */
    double cpu_share;
    gint64 log_lines;
};

static const char *vigil_cli;
static char socket_path[108];

/* As the preload library connects: root on root's socket first, a user
 * on the shared one. */
static int connect_socket(void)
{
    char paths[2][VIGIL_SOCKET_PATH_MAX];
    int n = vigil_local_daemon_sockets(socket_path, geteuid(), paths);
    for (int i = 0; i < n; i++) {
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        g_strlcpy(addr.sun_path, paths[i], sizeof addr.sun_path);
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0)
            return fd;
        if (fd >= 0)
            close(fd);
    }
    return -1;
}

/* ---- the floods, each in a child of nobody ------------------------------ */

static volatile sig_atomic_t flood_stopping;

static void on_flood_stop(int signo)
{
    (void)signo;
    flood_stopping = 1;
}

/* A message of the protocol's size and shape but without its magic. */
static const char garbage[32] = "GET / HTTP/1.0\r\n\r\n";

static gboolean flood_once(enum flood kind, char *buffer)
{
    int fd = connect_socket();
    if (fd < 0)
        return FALSE;
    gboolean done = TRUE;
    struct vigil_error err;
    enum vigil_local_type type;
    int answer_fd = -1;
    switch (kind) {
    case FLOOD_MALFORMED:
        done = send(fd, garbage, sizeof garbage, MSG_NOSIGNAL) == (ssize_t)sizeof garbage;
        if (done) /* vigild refuses it and closes */
            (void)vigil_local_receive(fd, buffer, &type, NULL, &err);
        break;
    case FLOOD_CONNECTIONS:
        done = send(fd, garbage, sizeof garbage, MSG_NOSIGNAL) == (ssize_t)sizeof garbage;
        break;
    case FLOOD_STATUS: {
        struct vigil_local_status_request request = {0};
        done =
            vigil_local_send(fd, VIGIL_LOCAL_STATUS_REQUEST, &request, sizeof request, -1, &err) &&
            vigil_local_receive(fd, buffer, &type, &answer_fd, &err) >= 0;
        if (answer_fd >= 0)
            close(answer_fd);
        break;
    }
    default:
        break;
    }
    close(fd);
    return done;
}

/* Floods until SIGTERM, then writes how many it did to `count_fd`. */
static void flood_child(enum flood kind, int count_fd)
{
    signal(SIGTERM, on_flood_stop);
    signal(SIGPIPE, SIG_IGN);
    if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
        _exit(70);
    static char buffer[VIGIL_LOCAL_MAX_BYTES];
    uint64_t done = 0;
    while (!flood_stopping)
        done += flood_once(kind, buffer);
    if (write(count_fd, &done, sizeof done) != (ssize_t)sizeof done)
        _exit(71);
    _exit(0);
}

/* ---- a root program's registration -------------------------------------- */

struct probe_result {
    uint64_t connect_ns, register_ns;
    int ok;
    char why[300]; /* when not ok */
};

static void probe_child(int result_fd)
{
    struct probe_result r = {0};
    struct vigil_error err;
    struct vigil_ring *ring = vigil_ring_create(PROBE_SLOTS, VIGIL_TICKS_MONOTONIC_NS, &err);
    static char buffer[VIGIL_LOCAL_MAX_BYTES];
    struct vigil_local_register fixed = {
        .ring_slots = PROBE_SLOTS,
        .tick_source = VIGIL_TICKS_MONOTONIC_NS,
        .start_monotonic_ns = vigil_clock_monotonic_ns(),
        .start_realtime_ns = vigil_clock_realtime_ns(),
        .mpi_rank = -1,
    };
    char *argv[] = {"probe", NULL};
    size_t length =
        vigil_local_encode_register(buffer, &fixed, "probe", "/", "", "bench-probe", 1, argv);
    uint64_t start_ns = vigil_clock_monotonic_ns();
    int fd = ring != NULL ? connect_socket() : -1;
    r.connect_ns = vigil_clock_monotonic_ns() - start_ns;
    enum vigil_local_type type;
    ssize_t got = -1;
    if (fd >= 0 &&
        vigil_local_send(fd, VIGIL_LOCAL_REGISTER, buffer, length, vigil_ring_fd(ring), &err) &&
        (got = vigil_local_receive(fd, buffer, &type, NULL, &err)) >= 0) {
        r.ok = type == VIGIL_LOCAL_REGISTERED;
        if (type == VIGIL_LOCAL_REFUSED)
            snprintf(r.why, sizeof r.why, "refused: %.*s", (int)got, buffer);
    } else {
        g_strlcpy(r.why, fd < 0 && ring != NULL ? "cannot connect" : err.message, sizeof r.why);
    }
    r.register_ns = vigil_clock_monotonic_ns() - start_ns;
    if (write(result_fd, &r, sizeof r) != (ssize_t)sizeof r)
        _exit(71);
    _exit(0);
}

static struct probe_result probe(void)
{
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        g_error("pipe: %s", g_strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        g_error("fork: %s", g_strerror(errno));
    if (pid == 0)
        probe_child(pipe_fds[1]);
    close(pipe_fds[1]);
    struct probe_result r = {0};
    if (read(pipe_fds[0], &r, sizeof r) != (ssize_t)sizeof r)
        r.ok = 0;
    close(pipe_fds[0]);
    waitpid(pid, NULL, 0);
    return r;
}

/* ---- the daemon ------------------------------------------------------- */

static JsonObject *daemon_status(JsonParser *parser)
{
    const char *argv[] = {vigil_cli, "status", "--json", "--socket", socket_path, NULL};
    char *out = NULL, *err = NULL;
    int status = 0;
    GError *error = NULL;
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                      &error) ||
        !g_spawn_check_wait_status(status, &error) ||
        !json_parser_load_from_data(parser, out, -1, &error))
        g_error("vigil status --json: %s: %s", error->message, err != NULL ? err : "");
    g_free(err);
    g_free(out);
    return json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)),
                                         "daemon");
}

static void tick_counts(gint64 *ticks, gint64 *missed)
{
    JsonParser *parser = json_parser_new();
    JsonObject *d = daemon_status(parser);
    *ticks = json_object_get_int_member(d, "ticks");
    *missed = json_object_get_int_member(d, "missed_ticks");
    g_object_unref(parser);
}

static double cpu_seconds(pid_t pid)
{
    char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
    char *text = NULL;
    double s = 0;
    if (g_file_get_contents(path, &text, NULL, NULL)) {
        const char *after = strrchr(text, ')');
        unsigned long utime = 0, stime = 0;
        if (after != NULL &&
            sscanf(after + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                   &stime) == 2)
            s = (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
    }
    g_free(text);
    g_free(path);
    return s;
}

static gint64 count_lines(const char *path)
{
    char *text = NULL;
    gsize length = 0;
    gint64 n = 0;
    if (g_file_get_contents(path, &text, &length, NULL))
        for (gsize i = 0; i < length; i++)
            n += text[i] == '\n';
    g_free(text);
    return n;
}

static pid_t start_daemon(const char *vigild, const char *dir)
{
    char *config_path = g_build_filename(dir, "vigil.conf", NULL);
    char *log_path = g_build_filename(dir, "vigild.log", NULL);
    char *pid_path = g_build_filename(dir, "vigild.pid", NULL);
    char *config = g_strdup_printf("[daemon]\nsocket = %s\n[capture]\nsink = %s/capture.jsonl\n",
                                   socket_path, dir);
    if (!g_file_set_contents(config_path, config, -1, NULL))
        g_error("cannot write %s", config_path);
    const char *argv[] = {
        "/bin/sh", "-c",        "exec \"$0\" --config \"$1\" --pid-file \"$2\" 2>>\"$3\"",
        vigild,    config_path, pid_path,
        log_path,  NULL};
    int status = 0;
    GError *error = NULL;
    if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status,
                      &error) ||
        !g_spawn_check_wait_status(status, &error))
        g_error("vigild did not start: %s (see %s)", error->message, log_path);
    char *pid_text = NULL;
    if (!g_file_get_contents(pid_path, &pid_text, NULL, NULL))
        g_error("no %s", pid_path);
    pid_t pid = (pid_t)g_ascii_strtoll(pid_text, NULL, 10);
    g_free(pid_text);
    g_free(config);
    g_free(pid_path);
    g_free(log_path);
    g_free(config_path);
    return pid;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void run_phase(enum flood kind, pid_t daemon_pid, const char *log_path, double seconds,
                      int probes, struct phase *out)
{
    memset(out, 0, sizeof *out);
    int count_pipe[2] = {-1, -1};
    pid_t flooder = -1;
    if (kind != FLOOD_NONE) {
        if (pipe2(count_pipe, O_CLOEXEC) != 0)
            g_error("pipe: %s", g_strerror(errno));
        flooder = fork();
        if (flooder < 0)
            g_error("fork: %s", g_strerror(errno));
        if (flooder == 0)
            flood_child(kind, count_pipe[1]);
        close(count_pipe[1]);
    }
    gint64 ticks_before, missed_before;
    tick_counts(&ticks_before, &missed_before);
    gint64 lines_before = count_lines(log_path);
    double cpu_before = cpu_seconds(daemon_pid);
    uint64_t start_ns = vigil_clock_monotonic_ns();

    double *register_ms = g_new0(double, probes);
    uint64_t spacing_ns = (uint64_t)(seconds * 1e9 / probes);
    for (int i = 0; i < probes; i++) {
        /* The probes are paced over the phase: a benchmark's sleep, not a
         * synchronisation. */
        uint64_t due_ns = start_ns + (uint64_t)i * spacing_ns + spacing_ns / 2;
        uint64_t now_ns = vigil_clock_monotonic_ns();
        if (due_ns > now_ns) {
            struct timespec wait = {.tv_sec = (time_t)((due_ns - now_ns) / 1000000000ull),
                                    .tv_nsec = (long)((due_ns - now_ns) % 1000000000ull)};
            nanosleep(&wait, NULL);
        }
        struct probe_result r = probe();
        out->probes++;
        if (!r.ok && out->probes_failed++ == 0)
            g_strlcpy(out->failure, r.why, sizeof out->failure);
        out->connects_over_5ms += r.connect_ns > PRELOAD_WAIT_NS;
        register_ms[i] = (double)r.register_ns / 1e6;
    }
    uint64_t end_ns = vigil_clock_monotonic_ns();
    if (end_ns < start_ns + (uint64_t)(seconds * 1e9)) {
        uint64_t left_ns = start_ns + (uint64_t)(seconds * 1e9) - end_ns;
        struct timespec wait = {.tv_sec = (time_t)(left_ns / 1000000000ull),
                                .tv_nsec = (long)(left_ns % 1000000000ull)};
        nanosleep(&wait, NULL);
        end_ns = vigil_clock_monotonic_ns();
    }
    double cpu_after = cpu_seconds(daemon_pid);
    gint64 ticks_after, missed_after;
    tick_counts(&ticks_after, &missed_after);
    out->log_lines = count_lines(log_path) - lines_before;
    double elapsed_s = (double)(end_ns - start_ns) / 1e9;
    if (flooder > 0) {
        kill(flooder, SIGTERM);
        uint64_t done = 0;
        if (read(count_pipe[0], &done, sizeof done) == (ssize_t)sizeof done)
            out->flood_per_s = (double)done / elapsed_s;
        close(count_pipe[0]);
        waitpid(flooder, NULL, 0);
    }
    out->ticks = ticks_after - ticks_before;
    out->missed = missed_after - missed_before;
    gint64 deadlines = out->ticks + out->missed;
    out->missed_share = deadlines > 0 ? (double)out->missed / (double)deadlines : 0;
    out->cpu_share = (cpu_after - cpu_before) / elapsed_s;
    qsort(register_ms, (size_t)probes, sizeof *register_ms, compare_doubles);
    out->register_median_ms = register_ms[probes / 2];
    out->register_max_ms = register_ms[probes - 1];
    g_free(register_ms);
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: %s VIGILD VIGIL_CLI [SECONDS [PROBES]]\n", argv[0]);
        return 2;
    }
    if (geteuid() != 0) {
        fprintf(stderr, "bench-socket-flood: needs root, to flood as nobody (65534)\n");
        return 77;
    }
    vigil_cli = argv[2];
    double seconds = argc > 3 ? g_ascii_strtod(argv[3], NULL) : 10.0;
    int probes = argc > 4 ? atoi(argv[4]) : 40;
    if (seconds <= 0 || probes < 1) {
        fprintf(stderr, "bench-socket-flood: SECONDS and PROBES must be positive\n");
        return 2;
    }
    char *dir = g_dir_make_tmp("vigil-socket-flood-XXXXXX", NULL);
    if (dir == NULL || chmod(dir, 0755) != 0)
        g_error("cannot make a folder other users can reach");
    g_snprintf(socket_path, sizeof socket_path, "%s/vigild.sock", dir);
    char *log_path = g_build_filename(dir, "vigild.log", NULL);
    pid_t daemon_pid = start_daemon(argv[1], dir);

    struct phase phases[FLOODS];
    for (int k = 0; k < FLOODS; k++)
        run_phase((enum flood)k, daemon_pid, log_path, seconds, probes, &phases[k]);

    printf("vigild's socket flooded by nobody, %.0f s a phase, %d root registrations each "
           "(goals: ticks missed <= %.0f %%, a registration <= %.0f ms)\n",
           seconds, probes, GOAL_MISSED_SHARE * 100, GOAL_REGISTER_MS);
    printf("%-12s %12s %8s %8s %10s %10s %9s %8s %10s %9s %9s\n", "flood", "flood/s", "ticks",
           "missed%", "reg_med_ms", "reg_max_ms", "conn>5ms", "failed", "vigild_cpu", "log_lines",
           "med_ratio");
    for (int k = 0; k < FLOODS; k++) {
        const struct phase *p = &phases[k];
        printf("%-12s %12.0f %8" G_GINT64_FORMAT
               " %8.2f %10.3f %10.3f %9d %8d %9.0f%% %9" G_GINT64_FORMAT " %9.2f\n",
               flood_names[k], p->flood_per_s, p->ticks + p->missed, p->missed_share * 100,
               p->register_median_ms, p->register_max_ms, p->connects_over_5ms, p->probes_failed,
               p->cpu_share * 100, p->log_lines,
               p->register_median_ms / phases[FLOOD_NONE].register_median_ms);
        if (p->probes_failed > 0)
            printf("  %s: %d registrations failed, the first: %s\n", flood_names[k],
                   p->probes_failed, p->failure);
    }
    kill(daemon_pid, SIGTERM);
    for (int i = 0; i < 600 && kill(daemon_pid, 0) == 0; i++)
        g_usleep(100000);
    char *remove_argv[] = {"rm", "-rf", dir, NULL};
    g_spawn_sync(NULL, remove_argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
    g_free(log_path);
    g_free(dir);
    return 0;
}
