/* ingest-sender: the synthetic side of bench/ingest.py. It makes one stream
 * of activity rows and puts it into PostgreSQL in one of three ways, so that
 * the three are compared on exactly the same rows:
 *
 *   ingest-sender send ENDPOINT        as vigild would: batches over a DEALER
 *                                      socket to vigil-txd, which COPYs them
 *   ingest-sender copy-file FILE       the rows as COPY text for the
 *                                      activities table, for psql's \copy
 *   ingest-sender insert CONNINFO      one INSERT per row, through libpq, in
 *                                      one transaction
 *
 * Options: --rows N (activities, default 1000000), --batch-rows B (per
 * batch, default 20000), --window W (batches sent and not yet acknowledged,
 * default 8), --start-realtime-ns T (the first activity's wall-clock time;
 * default one hour into today, UTC), --ack-timeout-s S (default 300),
 * --unprepared (insert: PQexecParams with the statement's text each time
 * instead of a statement prepared once).
 *
 * `send` and `insert` print one JSON line with the rows and the seconds
 * they took; `copy-file` prints the rows and bytes written. Everything that
 * is not the method itself (building the batches, formatting the INSERTs'
 * parameters, writing the file, connecting) happens before the clock starts.
 *
 * vigil-txd stores an activity under the warehouse ids of its process and
 * file, which in a fresh warehouse are 1 and 1 for the one process and the
 * one file every batch here describes: the COPY and INSERT rows carry those
 * ids, and bench/ingest.py checks that the three databases end up with the
 * same rows. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <glib.h>
#include <libpq-fe.h>
#include <zmq.h>

#include "node_batch.h"
#include "vigil/health.h"
#include "vigil/ontology.h"
#include "vigil/wire.h"

/* Where the synthetic node's CLOCK_MONOTONIC stands at the first activity;
 * any value does, the node's realtime offset maps it to the wall clock. */
#define MONOTONIC_BASE_NS   UINT64_C(1000000000000)
#define ACTIVITY_SPACING_NS UINT64_C(1000)
#define NODE_ID             UINT64_C(1)
#define WAREHOUSE_PROCESS   1 /* what a fresh warehouse calls the one process */
#define WAREHOUSE_FILE      1 /* and the one file */
#define DAEMON_PROCESS      UINT64_C(7)
#define DAEMON_FILE         1u
#define COLUMNS             16
#define FIELD_CHARS         40     /* the longest field is a timestamp */
#define MAX_BATCH_ROWS      500000 /* 80 bytes each: well under the wire's 64 MiB */

static const char activity_columns[] =
    "process_id, seq, layer, operation, file_id, file_offset, bytes, result, errno, "
    "start_time, start_ns, duration_ns, thread, parent_start_ns, flags, comm_size";

struct options {
    gint64 rows;
    gint64 batch_rows;
    gint64 window;
    gint64 start_realtime_ns;
    gint64 ack_timeout_s;
    gboolean unprepared;
};

/* ---- the rows ------------------------------------------------------------------------------ */

/* Activity `i` of the stream: a process reading and writing one file in
 * 4 KiB and 1 MiB pieces from four threads, with durations that vary. */
static void activity_at(uint64_t i, struct vigil_activity *a)
{
    static const uint64_t sizes[] = {4096, 4096, 4096, 1048576};
    uint64_t size = sizes[i % G_N_ELEMENTS(sizes)];
    uint64_t start_ns = MONOTONIC_BASE_NS + i * ACTIVITY_SPACING_NS;
    memset(a, 0, sizeof *a);
    a->record_type = VIGIL_RECORD_ACTIVITY;
    a->layer = VIGIL_LAYER_POSIX;
    a->op = i % 3 == 0 ? VIGIL_OP_POSIX_READ : VIGIL_OP_POSIX_WRITE;
    a->file_id = DAEMON_FILE;
    a->seq = i;
    a->start_ns = start_ns;
    a->end_ns = start_ns + 200 + (i * 7919) % 700; /* within the spacing */
    a->offset_bytes = (int64_t)(i * 4096);
    a->bytes_asked = size;
    a->result = (int64_t)size;
    a->thread_id = 1000 + (uint32_t)(i % 4);
}

/* The 16 columns of the activities table as text, as vigil-txd fills them
 * from `a` (store.c, copy_activities): NULL where it writes NULL. */
struct row_text {
    char fields[COLUMNS][FIELD_CHARS];
    const char *values[COLUMNS];
};

static void put_int(struct row_text *r, int column, int64_t v)
{
    g_snprintf(r->fields[column], FIELD_CHARS, "%" PRId64, v);
    r->values[column] = r->fields[column];
}

static void put_timestamp(struct row_text *r, int column, int64_t realtime_ns)
{
    /* Floored to µs, as vigil-txd's binary timestamps are; explicitly UTC. */
    int64_t us = realtime_ns >= 0 ? realtime_ns / 1000 : -((-realtime_ns + 999) / 1000);
    int64_t seconds = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
    time_t t = (time_t)seconds;
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL)
        bench_die("activity time %" PRId64 " ns is out of range", realtime_ns);
    g_snprintf(r->fields[column], FIELD_CHARS, "%04d-%02d-%02d %02d:%02d:%02d.%06" PRId64 "+00",
               tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
               us - seconds * 1000000);
    r->values[column] = r->fields[column];
}

static void row_text_of(const struct vigil_activity *a, int64_t realtime_offset_ns,
                        struct row_text *r)
{
    memset(r->values, 0, sizeof r->values);
    int64_t start_ns = (int64_t)a->start_ns + realtime_offset_ns;
    put_int(r, 0, WAREHOUSE_PROCESS);
    put_int(r, 1, (int64_t)a->seq);
    put_int(r, 2, a->layer);
    put_int(r, 3, (int16_t)a->op);
    if (a->file_id != VIGIL_FILE_NONE)
        put_int(r, 4, WAREHOUSE_FILE);
    if (a->offset_bytes != VIGIL_OFFSET_UNKNOWN)
        put_int(r, 5, a->offset_bytes);
    put_int(r, 6, (int64_t)a->bytes_asked);
    put_int(r, 7, a->result);
    put_int(r, 8, a->errno_value);
    put_timestamp(r, 9, start_ns);
    put_int(r, 10, start_ns);
    put_int(r, 11, (int64_t)(a->end_ns - a->start_ns));
    put_int(r, 12, (int32_t)a->thread_id);
    if (a->parent_start_ns != 0)
        put_int(r, 13, (int64_t)a->parent_start_ns + realtime_offset_ns);
    put_int(r, 14, (int16_t)a->flags);
    if (a->comm_size != 0)
        put_int(r, 15, (int32_t)a->comm_size);
}

static int64_t realtime_offset(const struct options *o)
{
    return o->start_realtime_ns - (int64_t)MONOTONIC_BASE_NS;
}

/* ---- copy-file ------------------------------------------------------------------------------ */

static void write_copy_file(const struct options *o, const char *path)
{
    FILE *out = fopen(path, "w");
    if (out == NULL)
        bench_die("%s: %s", path, g_strerror(errno));
    uint64_t bytes = 0;
    for (int64_t i = 0; i < o->rows; i++) {
        struct vigil_activity a;
        struct row_text r;
        activity_at((uint64_t)i, &a);
        row_text_of(&a, realtime_offset(o), &r);
        /* COPY's text format: tab between fields, \N for NULL; none of
         * these values holds a tab, a newline or a backslash. */
        for (int c = 0; c < COLUMNS; c++) {
            int n =
                fprintf(out, "%s%s", c > 0 ? "\t" : "", r.values[c] != NULL ? r.values[c] : "\\N");
            if (n < 0)
                bench_die("%s: %s", path, g_strerror(errno));
            bytes += (uint64_t)n;
        }
        if (fputc('\n', out) == EOF)
            bench_die("%s: %s", path, g_strerror(errno));
        bytes++;
    }
    if (fclose(out) != 0)
        bench_die("%s: %s", path, g_strerror(errno));
    printf("{\"method\": \"copy-file\", \"rows\": %" G_GINT64_FORMAT ", \"bytes\": %" PRIu64 "}\n",
           o->rows, bytes);
}

/* ---- insert --------------------------------------------------------------------------------- */

static void exec_or_bench_die(PGconn *db, const char *sql)
{
    PGresult *result = PQexec(db, sql);
    if (PQresultStatus(result) != PGRES_COMMAND_OK)
        bench_die("%s: %s", sql, PQresultErrorMessage(result));
    PQclear(result);
}

static void insert_rows(const struct options *o, const char *conninfo)
{
    /* Every parameter's text first, so that the clock times only the
     * statements and their round trips. */
    struct row_text *rows = g_new(struct row_text, (gsize)o->rows);
    for (int64_t i = 0; i < o->rows; i++) {
        struct vigil_activity a;
        activity_at((uint64_t)i, &a);
        row_text_of(&a, realtime_offset(o), &rows[i]);
    }
    PGconn *db = PQconnectdb(conninfo);
    if (PQstatus(db) != CONNECTION_OK)
        bench_die("cannot connect to %s: %s", conninfo, PQerrorMessage(db));
    char *sql = g_strdup_printf("INSERT INTO activities (%s) VALUES ($1, $2, $3, $4, $5, $6, $7, "
                                "$8, $9, $10, $11, $12, $13, $14, $15, $16)",
                                activity_columns);
    /* Prepared once by default: the best a program inserting row by row
     * can do, so that the comparison does not flatter COPY. */
    PGresult *result;
    if (!o->unprepared) {
        result = PQprepare(db, "activity", sql, COLUMNS, NULL);
        if (PQresultStatus(result) != PGRES_COMMAND_OK)
            bench_die("%s: %s", sql, PQresultErrorMessage(result));
        PQclear(result);
    }

    int64_t start = bench_monotonic_ns();
    exec_or_bench_die(db, "BEGIN");
    for (int64_t i = 0; i < o->rows; i++) {
        result = o->unprepared
                     ? PQexecParams(db, sql, COLUMNS, NULL, rows[i].values, NULL, NULL, 0)
                     : PQexecPrepared(db, "activity", COLUMNS, rows[i].values, NULL, NULL, 0);
        if (PQresultStatus(result) != PGRES_COMMAND_OK)
            bench_die("row %" G_GINT64_FORMAT ": %s: %s", i, sql, PQresultErrorMessage(result));
        PQclear(result);
    }
    exec_or_bench_die(db, "COMMIT");
    double seconds = (double)(bench_monotonic_ns() - start) / 1e9;

    printf("{\"method\": \"insert\", \"statement\": \"%s\", \"rows\": %" G_GINT64_FORMAT
           ", \"seconds\": %.6f}\n",
           o->unprepared ? "unprepared" : "prepared", o->rows, seconds);
    g_free(sql);
    PQfinish(db);
    g_free(rows);
}

/* ---- send ------------------------------------------------------------------------------------ */

/* One cycle's batch as vigild makes it: NODE, PROCESSES (one), METRICS
 * (two), NAMES (one file), the activities [first, first + count), ROLLUPS
 * (one per metric), STATES (the node's). */
static GBytes *batch_new(const struct options *o, uint64_t sequence, uint64_t first, uint64_t count)
{
    GError *error = NULL;
    uint64_t cycle_start_ns = MONOTONIC_BASE_NS + first * ACTIVITY_SPACING_NS;
    uint64_t cycle_end_ns = MONOTONIC_BASE_NS + (first + count) * ACTIVITY_SPACING_NS;
    struct vigil_wire_node node = {.realtime_offset_ns = realtime_offset(o),
                                   .cycle = sequence,
                                   .cycle_start_ns = cycle_start_ns,
                                   .cycle_end_ns = cycle_end_ns,
                                   .cycle_ms = 1000,
                                   .hostname = "bench-node"};
    bench_batch *batch = bench_batch_new(NODE_ID, sequence, &node);

    char *argv[] = {"ior", "-w", "-r", "-t", "1m", NULL};
    struct vigil_wire_process p = {.process_id = DAEMON_PROCESS,
                                   .pid = 4242,
                                   .uid = 1000,
                                   .rank = 0,
                                   .exit_code = -1,
                                   .start_ns = MONOTONIC_BASE_NS - UINT64_C(60000000000),
                                   .run_key = "bench-ingest-run",
                                   .job = "",
                                   .program = "/usr/bin/ior",
                                   .cwd = "/scratch",
                                   .argc = 5,
                                   .argv = argv};
    bench_batch_add_processes(batch, &p, 1);

    struct vigil_metric_desc metrics[] = {
        {.id = 1,
         .kind = VIGIL_METRIC_COUNTER,
         .origin = VIGIL_METRIC_MEASURED,
         .name = "cpu.busy_s",
         .unit = "s",
         .source = "procstat"},
        {.id = 2,
         .kind = VIGIL_METRIC_GAUGE,
         .origin = VIGIL_METRIC_MEASURED,
         .name = "mem.used_bytes",
         .unit = "bytes",
         .source = "meminfo"},
    };
    bench_batch_add_metrics(batch, metrics, G_N_ELEMENTS(metrics));

    static const char path[] = "/scratch/ior.dat";
    vigil_wire_writer *w = bench_batch_message(batch, VIGIL_WIRE_NAMES, DAEMON_PROCESS);
    bench_check(vigil_wire_add_name(w, DAEMON_FILE, path, strlen(path), &error), error);
    bench_batch_add(batch, w);

    if (count > 0) {
        w = bench_batch_message(batch, VIGIL_WIRE_ACTIVITIES, DAEMON_PROCESS);
        for (uint64_t i = first; i < first + count; i++) {
            struct vigil_activity a;
            activity_at(i, &a);
            bench_check(vigil_wire_add_activity(w, &a, &error), error);
        }
        bench_batch_add(batch, w);
    }

    bench_batch_add_rollups(batch, metrics, G_N_ELEMENTS(metrics), cycle_start_ns, cycle_end_ns,
                            10);

    w = bench_batch_message(batch, VIGIL_WIRE_STATES, 0);
    struct vigil_wire_state state = {
        .cycle = sequence, .level = VIGIL_LEVEL_NODE, .health = VIGIL_HEALTH_OK};
    bench_check(vigil_wire_add_state(w, &state, &error), error);
    bench_batch_add(batch, w);

    return bench_batch_finish(batch);
}

struct link {
    void *context, *socket;
    int ack_timeout_ms;
};

static void send_batch(struct link *l, GBytes *batch)
{
    gsize length;
    const void *data = g_bytes_get_data(batch, &length);
    if (zmq_send(l->socket, data, length, 0) != (int)length)
        bench_die("sending a batch: %s", zmq_strerror(zmq_errno()));
}

/* The sequence of the next batch vigil-txd acknowledges; system states in
 * between are skipped, a refusal ends the run. */
static uint64_t next_ack(struct link *l)
{
    for (;;) {
        zmq_pollitem_t item = {.socket = l->socket, .events = ZMQ_POLLIN};
        int ready = zmq_poll(&item, 1, l->ack_timeout_ms);
        if (ready < 0 && zmq_errno() == EINTR)
            continue;
        if (ready != 1)
            bench_die("no acknowledgement from vigil-txd within %d s", l->ack_timeout_ms / 1000);
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, l->socket, 0) < 0)
            bench_die("receiving: %s", zmq_strerror(zmq_errno()));
        struct vigil_wire_message reply;
        GError *error = NULL;
        if (!vigil_wire_decode(zmq_msg_data(&m), zmq_msg_size(&m), &reply, &error))
            bench_die("vigil-txd sent a message that does not decode: %s", error->message);
        zmq_msg_close(&m);
        unsigned type = reply.header.type;
        uint64_t sequence = reply.header.sequence;
        if (type == VIGIL_WIRE_REFUSED)
            bench_die("vigil-txd refused batch %" PRIu64 ": %s", sequence,
                      reply.refusals[0].reason);
        vigil_wire_message_clear(&reply);
        if (type == VIGIL_WIRE_ACK)
            return sequence;
        if (type != VIGIL_WIRE_STATES)
            bench_die("vigil-txd sent a %s message", vigil_wire_type_name(type));
    }
}

static void send_rows(const struct options *o, const char *endpoint)
{
    /* Built before the clock starts: what is measured is vigil-txd and
     * PostgreSQL, not this program's encoding (vigild encodes in its own
     * time, a cycle at a time). Sequence 1 is a batch without activities
     * that opens the connection and has vigil-txd record the node, the
     * process and the file, as a running vigild's first cycle would. */
    uint64_t batches = (uint64_t)((o->rows + o->batch_rows - 1) / o->batch_rows);
    GBytes **batch = g_new0(GBytes *, batches);
    uint64_t wire_bytes = 0;
    for (uint64_t b = 0; b < batches; b++) {
        uint64_t first = b * (uint64_t)o->batch_rows;
        uint64_t count = MIN((uint64_t)o->batch_rows, (uint64_t)o->rows - first);
        batch[b] = batch_new(o, b + 2, first, count);
        wire_bytes += g_bytes_get_size(batch[b]);
    }
    GBytes *opening = batch_new(o, 1, 0, 0);

    struct link l = {.context = zmq_ctx_new(), .ack_timeout_ms = (int)o->ack_timeout_s * 1000};
    l.socket = zmq_socket(l.context, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(l.socket, ZMQ_LINGER, &zero, sizeof zero);
    if (zmq_connect(l.socket, endpoint) != 0)
        bench_die("connecting to %s: %s", endpoint, zmq_strerror(zmq_errno()));
    send_batch(&l, opening);
    if (next_ack(&l) != 1)
        bench_die("vigil-txd acknowledged another batch than the opening one");

    /* A window of unacknowledged batches, as vigild's uplink keeps: while
     * vigil-txd stores one, the next ones wait in its socket. */
    GHashTable *acked = g_hash_table_new(g_int64_hash, g_int64_equal);
    uint64_t *sequences = g_new(uint64_t, batches);
    uint64_t sent = 0;
    int64_t start = bench_monotonic_ns();
    for (; sent < batches && sent < (uint64_t)o->window; sent++)
        send_batch(&l, batch[sent]);
    for (uint64_t received = 0; received < batches; received++) {
        uint64_t sequence = next_ack(&l);
        if (sequence < 2 || sequence >= sent + 2)
            bench_die("vigil-txd acknowledged batch %" PRIu64 ", which was not sent", sequence);
        sequences[received] = sequence;
        if (!g_hash_table_add(acked, &sequences[received]))
            bench_die("vigil-txd acknowledged batch %" PRIu64 " twice", sequence);
        if (sent < batches)
            send_batch(&l, batch[sent++]);
    }
    double seconds = (double)(bench_monotonic_ns() - start) / 1e9;

    printf("{\"method\": \"txd\", \"rows\": %" G_GINT64_FORMAT ", \"batches\": %" PRIu64
           ", \"batch_rows\": %" G_GINT64_FORMAT ", \"window\": %" G_GINT64_FORMAT
           ", \"wire_bytes\": %" PRIu64 ", \"seconds\": %.6f}\n",
           o->rows, batches, o->batch_rows, o->window, wire_bytes, seconds);
    g_hash_table_destroy(acked);
    g_free(sequences);
    zmq_close(l.socket);
    zmq_ctx_term(l.context);
    for (uint64_t b = 0; b < batches; b++)
        g_bytes_unref(batch[b]);
    g_free(batch);
    g_bytes_unref(opening);
}

/* ---- main ------------------------------------------------------------------------------------ */

static int64_t default_start_realtime_ns(void)
{
    /* One hour into today (UTC): the day's partition is the same whenever
     * in the day the benchmark runs, and every row falls inside it. */
    int64_t now_s = g_get_real_time() / G_USEC_PER_SEC;
    return (now_s - now_s % 86400 + 3600) * 1000000000;
}

int main(int argc, char **argv)
{
    bench_set_program_name("ingest-sender");
    struct options o = {.rows = 1000000,
                        .batch_rows = 20000,
                        .window = 8,
                        .start_realtime_ns = default_start_realtime_ns(),
                        .ack_timeout_s = 300};
    GOptionEntry entries[] = {
        {"rows", 0, 0, G_OPTION_ARG_INT64, &o.rows, "activities (default 1000000)", "N"},
        {"batch-rows", 0, 0, G_OPTION_ARG_INT64, &o.batch_rows,
         "send: activities per batch (default 20000)", "N"},
        {"window", 0, 0, G_OPTION_ARG_INT64, &o.window,
         "send: batches sent and not yet acknowledged (default 8)", "N"},
        {"start-realtime-ns", 0, 0, G_OPTION_ARG_INT64, &o.start_realtime_ns,
         "the first activity's time, ns since the epoch (default 01:00 UTC today)", "NS"},
        {"ack-timeout-s", 0, 0, G_OPTION_ARG_INT64, &o.ack_timeout_s,
         "send: longest wait for one acknowledgement (default 300)", "S"},
        {"unprepared", 0, 0, G_OPTION_ARG_NONE, &o.unprepared,
         "insert: the statement's text with every row (PQexecParams), not prepared once", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context =
        g_option_context_new("send ENDPOINT | copy-file FILE | insert CONNINFO");
    g_option_context_set_summary(context, "The same activity rows into vigil's warehouse through "
                                          "vigil-txd, as a COPY file, or by INSERTs.");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    if (!g_option_context_parse(context, &argc, &argv, &error))
        bench_die("%s", error->message);
    g_option_context_free(context);
    if (argc != 3)
        bench_die(
            "expected a command and its target: send ENDPOINT | copy-file FILE | insert CONNINFO");
    if (o.rows < 1)
        bench_die("--rows %" G_GINT64_FORMAT ": at least 1", o.rows);
    if (o.batch_rows < 1 || o.batch_rows > MAX_BATCH_ROWS)
        bench_die("--batch-rows %" G_GINT64_FORMAT ": from 1 to %d", o.batch_rows, MAX_BATCH_ROWS);
    if (o.window < 1)
        bench_die("--window %" G_GINT64_FORMAT ": at least 1", o.window);
    if (o.ack_timeout_s < 1 || o.ack_timeout_s > 86400)
        bench_die("--ack-timeout-s %" G_GINT64_FORMAT ": from 1 to 86400", o.ack_timeout_s);
    if (o.start_realtime_ns < (int64_t)MONOTONIC_BASE_NS)
        bench_die("--start-realtime-ns %" G_GINT64_FORMAT ": before 1970-01-01 00:16:40",
                  o.start_realtime_ns);

    if (strcmp(argv[1], "send") == 0)
        send_rows(&o, argv[2]);
    else if (strcmp(argv[1], "copy-file") == 0)
        write_copy_file(&o, argv[2]);
    else if (strcmp(argv[1], "insert") == 0)
        insert_rows(&o, argv[2]);
    else
        bench_die("%s: not a command (send, copy-file or insert)", argv[1]);
    return 0;
}
