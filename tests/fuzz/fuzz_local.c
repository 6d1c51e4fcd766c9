/* libFuzzer target for the local protocol (record/local_protocol.c): every
 * message vigild decodes from a client and every answer the preload library
 * and `vigil status` decode from vigild.
 *
 * The input's first byte says how many descriptors travel with the message
 * (0-3, the same /dev/null each time) and whether the receiver takes one;
 * the rest is the message, header included. It goes through a real
 * SOCK_SEQPACKET socketpair into vigil_local_receive, and what that accepts
 * is decoded by its type, as the daemon and the clients do. Promises
 * checked: an error always says what is wrong; no descriptor leaks, however
 * many came; what a decoder accepts holds what its header says (strings
 * inside the payload, texts terminated, the summary's parts adding up); a
 * REGISTER within the encoder's limits encodes back to the same bytes. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "vigil/insight.h"
#include "vigil/local_protocol.h"
#include "vigil/run_key.h"
#include "fuzz_must.h"
#include "test_local.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PAYLOAD_MAX (VIGIL_LOCAL_MAX_BYTES - sizeof(struct vigil_local_header))

static int sender = -1, receiver = -1, passed = -1;

static int first_free_fd(void)
{
    int fd = fcntl(0, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        abort();
    close(fd);
    return fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
        abort();
    sender = pair[0];
    receiver = pair[1];
    /* A message that never arrives (a zero-length one) must not hang the run. */
    if (fcntl(receiver, F_SETFL, O_NONBLOCK) != 0)
        abort();
    passed = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (passed < 0)
        abort();
    return 0;
}

/* A decoder's answer: a refusal must say why. */
static bool decoded(bool ok, const struct vigil_error *err)
{
    must(ok || err->message[0] != '\0');
    return ok;
}

/* The message, with `descriptors` (0-3) copies of the /dev/null one. */
static void send_raw(const uint8_t *message, size_t size, unsigned descriptors)
{
    const int fds[3] = {passed, passed, passed};
    must(descriptors <= 3);
    must(test_local_send_raw(sender, message, size, fds, descriptors) == (ssize_t)size);
}

/* Encodes the decoded REGISTER again: within the encoder's limits (paths
 * of 4 KiB, a job id of 255 bytes, argv not cut) it must give the same
 * bytes, or two messages mean one registration. */
static void check_register_round_trip(const struct vigil_local_process_info *info,
                                      const uint8_t *payload, size_t size)
{
    const struct vigil_local_register *f = &info->fixed;
    if (f->flags != 0 || f->program_bytes > 4096 || f->cwd_bytes > 4096 || f->job_bytes > 255)
        return;
    char *program = strndup(info->program, f->program_bytes);
    char *cwd = strndup(info->cwd, f->cwd_bytes);
    char *job = strndup(info->job, f->job_bytes);
    char *run_key = strndup(info->run_key, f->run_bytes);
    char **argv = calloc((size_t)f->argc + 1, sizeof *argv);
    must(program != NULL && cwd != NULL && job != NULL && run_key != NULL && argv != NULL);
    const char *arg = info->argv;
    for (uint32_t i = 0; i < f->argc; i++) {
        argv[i] = (char *)arg;
        arg += strlen(arg) + 1;
    }
    static _Alignas(8) uint8_t again[PAYLOAD_MAX];
    size_t bytes =
        vigil_local_encode_register(again, f, program, cwd, job, run_key, (int)f->argc, argv);
    must(bytes == size && memcmp(again, payload, size) == 0);
    free(argv);
    free(run_key);
    free(job);
    free(cwd);
    free(program);
}

static void decode_register(const uint8_t *payload, size_t size)
{
    struct vigil_local_process_info info;
    struct vigil_error err = {{0}};
    if (!decoded(vigil_local_decode_register(payload, size, &info, &err), &err))
        return;
    const struct vigil_local_register *f = &info.fixed;
    const char *end = (const char *)payload + size;
    must(info.program == (const char *)payload + sizeof *f);
    must(info.argv + f->argv_bytes == end);
    must(memchr(info.program, '\0', f->program_bytes) == NULL);
    must(memchr(info.cwd, '\0', f->cwd_bytes) == NULL);
    must(memchr(info.job, '\0', f->job_bytes) == NULL);
    must(vigil_run_key_valid(info.run_key, f->run_bytes));
    must(f->argv_bytes == 0 || info.argv[f->argv_bytes - 1] == '\0');
    must(f->ring_slots > 0 && (f->ring_slots & (f->ring_slots - 1)) == 0);
    must(f->mpi_rank >= -1);
    check_register_round_trip(&info, payload, size);
}

static void decode_fixed(enum vigil_local_type type, const uint8_t *payload, size_t size)
{
    union {
        struct vigil_local_registered registered;
        struct vigil_local_rank rank;
        struct vigil_local_summary summary;
        struct vigil_local_status_request status_request;
        struct vigil_local_status status;
        struct vigil_local_report report;
        struct vigil_local_spool spool;
        struct vigil_insight_thresholds insight;
    } out;
    struct vigil_error err = {{0}};
    /* vigild passes no room for a SUMMARY_REQUEST, which has no payload. */
    void *room = type == VIGIL_LOCAL_SUMMARY_REQUEST ? NULL : &out;
    if (!decoded(vigil_local_decode_fixed(type, payload, size, room, &err), &err))
        return;
    if (type == VIGIL_LOCAL_RANK) {
        must(out.rank.rank >= 0 && out.rank.rank < out.rank.size);
    } else if (type == VIGIL_LOCAL_SUMMARY) {
        const struct vigil_local_summary *s = &out.summary;
        must(strnlen(s->energy_source, sizeof s->energy_source) < sizeof s->energy_source);
        must(strnlen(s->energy_note, sizeof s->energy_note) < sizeof s->energy_note);
        must(strnlen(s->capture_mode, sizeof s->capture_mode) < sizeof s->capture_mode);
        must(s->abnormal_cycles <= s->cycles);
        /* The parts add up without wrapping round. */
        uint64_t rest = s->activities_observed;
        const uint64_t parts[] = {s->activities_forwarded, s->activities_dropped,
                                  s->activities_lost, s->activities_held};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            must(parts[i] <= rest);
            rest -= parts[i];
        }
        must(rest == 0);
    } else if (type == VIGIL_LOCAL_INSIGHT) {
        /* Thresholds the engine can use: the check passes again, and no
         * share is 0 or NaN (a finding's test would divide by nothing). */
        char why[200];
        must(vigil_insight_check(&out.insight, why, sizeof why) == NULL);
        must(out.insight.small_access_share > 0 && out.insight.io_time_min_s > 0);
    } else if (type == VIGIL_LOCAL_REPORT) {
        must(out.report.exit_code >= -1 && out.report.exit_code <= 255);
        must(out.report.json_bytes <= VIGIL_LOCAL_REPORT_MAX_BYTES);
    } else if (type == VIGIL_LOCAL_STATUS_REQUEST) {
        must(out.status_request.finished_pid >= 0);
    } else if (type == VIGIL_LOCAL_SPOOL) {
        /* A known request; a replay's path ends in the field, and is
         * absolute; another request names none. */
        const struct vigil_local_spool *s = &out.spool;
        must(s->op == VIGIL_LOCAL_SPOOL_RESEND || s->op == VIGIL_LOCAL_SPOOL_REPLAY);
        must(memchr(s->path, '\0', sizeof s->path) != NULL);
        must(s->op == VIGIL_LOCAL_SPOOL_REPLAY ? s->path[0] == '/' : s->path[0] == '\0');
    }
}

/* A JOB the decoder takes holds its strings as the header says, is
 * encoded again to the same bytes, and its job id is not empty. */
static void decode_job(const uint8_t *payload, size_t size)
{
    struct vigil_local_job_info info;
    struct vigil_error err = {{0}};
    if (!decoded(vigil_local_decode_job(payload, size, &info, &err), &err))
        return;
    const struct vigil_local_job *f = &info.fixed;
    must(f->job_bytes > 0 && f->job_bytes <= VIGIL_LOCAL_JOB_ID_MAX);
    must(info.nodes + f->nodes_bytes == (const char *)payload + size);
    char *texts[4] = {strndup(info.job, f->job_bytes), strndup(info.step, f->step_bytes),
                      strndup(info.user, f->user_bytes), strndup(info.nodes, f->nodes_bytes)};
    static _Alignas(8) uint8_t again[VIGIL_LOCAL_MAX_BYTES];
    size_t bytes = vigil_local_encode_job(again, (f->flags & VIGIL_LOCAL_JOB_BEGIN) != 0, texts[0],
                                          texts[1], texts[2], f->uid, texts[3], &err);
    must(bytes == size && memcmp(again, payload, size) == 0);
    for (size_t i = 0; i < 4; i++)
        free(texts[i]);
}

/* A REGISTERED_APART the decoder takes names a valid key, and encodes
 * again to the same bytes when its reason is not cut. */
static void decode_apart(const uint8_t *payload, size_t size)
{
    uint64_t id = 0;
    static char key[VIGIL_RUN_KEY_MAX + 1], why[VIGIL_LOCAL_APART_REASON_MAX + 1];
    struct vigil_error err = {{0}};
    bool ok = vigil_local_decode_registered_apart(payload, size, &id, key, why, sizeof why, &err);
    if (!decoded(ok, &err))
        return;
    must(vigil_run_key_valid(key, strlen(key)));
    static _Alignas(8) uint8_t again[VIGIL_LOCAL_MAX_BYTES];
    size_t bytes = vigil_local_encode_registered_apart(again, id, key, why);
    must(bytes == size && memcmp(again, payload, size) == 0);
}

static void decode_text(const uint8_t *payload, size_t size)
{
    /* A room that fits, and one that cuts the text. */
    static const size_t rooms[] = {PAYLOAD_MAX + 1, 8, 1};
    for (size_t i = 0; i < sizeof rooms / sizeof rooms[0]; i++) {
        static char out[PAYLOAD_MAX + 1];
        struct vigil_error err = {{0}};
        bool ok = vigil_local_decode_text(VIGIL_LOCAL_REFUSED, payload, size, out, rooms[i], &err);
        if (!decoded(ok, &err))
            return;
        size_t length = strlen(out);
        must(length < rooms[i] && (length > 0) == (rooms[i] > 1));
        must(memcmp(out, payload, length) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size - 1 > VIGIL_LOCAL_MAX_BYTES + 64)
        return -1; /* beyond what a socket message up to the limit can be */
    unsigned descriptors = data[0] & 3u;
    bool take_descriptor = (data[0] & 4u) != 0;
    /* A descriptor received and not closed takes the lowest free number. */
    int lowest_free_fd = first_free_fd();
    send_raw(data + 1, size - 1, descriptors);

    static _Alignas(8) uint8_t buffer[VIGIL_LOCAL_MAX_BYTES];
    enum vigil_local_type type;
    int fd = -2;
    struct vigil_error err = {{0}};
    ssize_t got = vigil_local_receive(receiver, buffer, &type, take_descriptor ? &fd : NULL, &err);
    if (got < 0) {
        must(err.message[0] != '\0');
        must(!take_descriptor || fd == -1);
    } else {
        must((size_t)got == size - 1 - sizeof(struct vigil_local_header));
        must(vigil_local_type_name(type) != NULL);
        must(descriptors <= 1);
        if (take_descriptor) {
            must((fd >= 0) == (descriptors == 1));
            if (fd >= 0)
                close(fd);
        }
        if (type == VIGIL_LOCAL_REGISTER)
            decode_register(buffer, (size_t)got);
        else if (type == VIGIL_LOCAL_REFUSED)
            decode_text(buffer, (size_t)got);
        else if (type == VIGIL_LOCAL_JOB)
            decode_job(buffer, (size_t)got);
        else if (type == VIGIL_LOCAL_REGISTERED_APART)
            decode_apart(buffer, (size_t)got);
        else
            decode_fixed(type, buffer, (size_t)got);
    }
    /* Every descriptor that came is closed, whatever the message was. */
    must(first_free_fd() == lowest_free_fd);
    return 0;
}
