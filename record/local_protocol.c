/* vigil — the local protocol's messages: framing, descriptor passing and
 * the checks every received message goes through before anything reads
 * its fields. */
#define _GNU_SOURCE /* strerrordesc_np */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "vigil/clock.h"
#include "vigil/insight.h"
#include "vigil/local_protocol.h"
#include "vigil/ring.h"
#include "vigil/run_key.h"

#define PAYLOAD_MAX (VIGIL_LOCAL_MAX_BYTES - sizeof(struct vigil_local_header))

/* strerror translates, and for an unknown number formats into a buffer it
 * allocates: the preload library's exit path may run in a signal handler
 * that interrupted malloc. glibc's English descriptions do neither. */
static const char *errno_text(int errno_value)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
    const char *text = strerrordesc_np(errno_value);
    return text != NULL ? text : "unknown error";
#else
    return strerror(errno_value);
#endif
}

static const char *const type_names[] = {
    [VIGIL_LOCAL_REGISTER] = "register",
    [VIGIL_LOCAL_REGISTERED] = "registered",
    [VIGIL_LOCAL_REFUSED] = "refused",
    [VIGIL_LOCAL_RANK] = "rank",
    [VIGIL_LOCAL_SUMMARY_REQUEST] = "summary request",
    [VIGIL_LOCAL_SUMMARY] = "summary",
    [VIGIL_LOCAL_STATUS_REQUEST] = "status request",
    [VIGIL_LOCAL_STATUS] = "status",
    [VIGIL_LOCAL_REPORT] = "report",
    [VIGIL_LOCAL_JOB] = "job",
    [VIGIL_LOCAL_JOB_NOTED] = "job noted",
    [VIGIL_LOCAL_REGISTERED_APART] = "registered apart",
    [VIGIL_LOCAL_SPOOL] = "spool",
    [VIGIL_LOCAL_INSIGHT] = "insight",
};

const char *vigil_local_type_name(unsigned type)
{
    return type < sizeof type_names / sizeof type_names[0] ? type_names[type] : NULL;
}

bool vigil_local_send(int socket_fd, enum vigil_local_type type, const void *payload,
                      size_t payload_bytes, int pass_fd, struct vigil_error *err)
{
    if (vigil_local_type_name(type) == NULL) {
        vigil_error_set(err, "cannot send a message of unknown type %u", (unsigned)type);
        errno = EINVAL;
        return false;
    }
    if (payload_bytes > PAYLOAD_MAX) {
        vigil_error_set(err, "a %s message of %zu bytes is over the limit of %zu",
                        vigil_local_type_name(type), payload_bytes, (size_t)PAYLOAD_MAX);
        errno = EMSGSIZE;
        return false;
    }
    struct vigil_local_header header = {
        .magic = VIGIL_LOCAL_MAGIC,
        .version = VIGIL_LOCAL_VERSION,
        .type = (uint16_t)type,
        .payload_bytes = (uint32_t)payload_bytes,
    };
    struct iovec parts[2] = {
        {.iov_base = &header, .iov_len = sizeof header},
        {.iov_base = (void *)payload, .iov_len = payload_bytes},
    };
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(sizeof(int))];
    } control;
    struct msghdr msg = {.msg_iov = parts, .msg_iovlen = payload_bytes > 0 ? 2 : 1};
    if (pass_fd >= 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.bytes;
        msg.msg_controllen = sizeof control.bytes;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    ssize_t sent;
    do
        sent = sendmsg(socket_fd, &msg, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent < 0) {
        int errno_value = errno;
        vigil_error_set(err, "cannot send a %s message: %s", vigil_local_type_name(type),
                        errno_text(errno_value));
        errno = errno_value;
        return false;
    }
    return true;
}

/* Takes the descriptors a message carried: the one it may carry in *fd, or
 * none when it carried several (all closed then) or the caller wants none.
 * Returns how many came. */
static size_t take_descriptors(struct msghdr *msg, bool keep_one, int *fd)
{
    size_t count = 0;
    *fd = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            count += (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int one;
            memcpy(&one, CMSG_DATA(c) + i * sizeof(int), sizeof one);
            if (keep_one && count == 1)
                *fd = one;
            else
                close(one);
        }
    }
    return count;
}

ssize_t vigil_local_receive(int socket_fd, void *buffer, enum vigil_local_type *type,
                            int *received_fd, struct vigil_error *err)
{
    if (received_fd != NULL)
        *received_fd = -1;
    /* Room for a few descriptors, so that a peer sending several is caught
     * and all of them closed, rather than cut off by the kernel. */
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(8 * sizeof(int))];
    } control;
    struct iovec part = {.iov_base = buffer, .iov_len = VIGIL_LOCAL_MAX_BYTES};
    struct msghdr msg = {
        .msg_iov = &part,
        .msg_iovlen = 1,
        .msg_control = control.bytes,
        .msg_controllen = sizeof control.bytes,
    };
    ssize_t got;
    do
        got = recvmsg(socket_fd, &msg, MSG_CMSG_CLOEXEC);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        int errno_value = errno;
        vigil_error_set(err, "cannot receive: %s", errno_text(errno_value));
        errno = errno_value;
        return -1;
    }
    int fd;
    size_t descriptors = take_descriptors(&msg, received_fd != NULL, &fd);
    if (got == 0) {
        if (fd >= 0)
            close(fd);
        vigil_error_set(err, "the peer closed the connection");
        errno = 0;
        return -1;
    }
    char problem[96] = "";
    struct vigil_local_header header;
    if (msg.msg_flags & MSG_TRUNC)
        snprintf(problem, sizeof problem, "a message longer than the limit of %u bytes",
                 VIGIL_LOCAL_MAX_BYTES);
    else if (msg.msg_flags & MSG_CTRUNC)
        snprintf(problem, sizeof problem, "a message with more descriptors than it can carry");
    else if (descriptors > 1)
        snprintf(problem, sizeof problem,
                 "a message with %zu descriptors; none carries more than one", descriptors);
    else if ((size_t)got < sizeof header)
        snprintf(problem, sizeof problem, "a message shorter than its header");
    if (problem[0] == '\0') {
        memcpy(&header, buffer, sizeof header);
        if (header.magic != VIGIL_LOCAL_MAGIC)
            snprintf(problem, sizeof problem, "a message without the protocol's magic number");
        else if (header.version != VIGIL_LOCAL_VERSION)
            snprintf(problem, sizeof problem, "a message of protocol version %u, not %u",
                     header.version, VIGIL_LOCAL_VERSION);
        else if (vigil_local_type_name(header.type) == NULL)
            snprintf(problem, sizeof problem, "a message of unknown type %u", header.type);
        else if (header.payload_bytes != (size_t)got - sizeof header)
            snprintf(problem, sizeof problem,
                     "a message whose header gives %u payload bytes, not the %zu it has",
                     header.payload_bytes, (size_t)got - sizeof header);
        else if (header.reserved != 0)
            snprintf(problem, sizeof problem, "a message with its reserved field set");
    }
    if (problem[0] != '\0') {
        if (fd >= 0)
            close(fd);
        vigil_error_set(err, "%s (%zd bytes)", problem, got);
        errno = EPROTO;
        return -1;
    }
    memmove(buffer, (char *)buffer + sizeof header, header.payload_bytes);
    *type = (enum vigil_local_type)header.type;
    if (received_fd != NULL)
        *received_fd = fd;
    return (ssize_t)header.payload_bytes;
}

/* Appends a string's bytes (no NUL), cut at what fits in 16 bits and in the
 * room left; returns how many went in. */
static uint16_t put_string(char **cursor, const char *end, const char *text)
{
    size_t length = text != NULL ? strlen(text) : 0;
    size_t room = (size_t)(end - *cursor);
    if (length > room)
        length = room;
    if (length > UINT16_MAX)
        length = UINT16_MAX;
    memcpy(*cursor, text != NULL ? text : "", length);
    *cursor += length;
    return (uint16_t)length;
}

size_t vigil_local_encode_register(void *buffer, const struct vigil_local_register *fixed,
                                   const char *program, const char *cwd, const char *job,
                                   const char *run_key, int argc, char *const *argv)
{
    struct vigil_local_register head = *fixed;
    char *start = (char *)buffer + sizeof head;
    char *cursor = start;
    const char *end = (const char *)buffer + PAYLOAD_MAX;
    /* Paths beyond 4 KiB are cut: the argv that follows matters more. */
    const char *path_end = cursor + 4096;
    head.program_bytes = put_string(&cursor, path_end, program);
    head.cwd_bytes = put_string(&cursor, cursor + 4096, cwd);
    head.job_bytes = put_string(&cursor, cursor + 255, job);
    head.run_bytes = put_string(&cursor, cursor + VIGIL_RUN_KEY_MAX, run_key);
    char *argv_start = cursor;
    head.argc = 0;
    head.flags &= ~(uint32_t)VIGIL_LOCAL_ARGV_TRUNCATED;
    for (int i = 0; i < argc && argv != NULL && argv[i] != NULL; i++) {
        size_t length = strlen(argv[i]);
        if (length + 1 > (size_t)(end - cursor) ||
            (size_t)(cursor - argv_start) + length + 1 > UINT16_MAX) {
            head.flags |= VIGIL_LOCAL_ARGV_TRUNCATED;
            break;
        }
        memcpy(cursor, argv[i], length);
        cursor[length] = '\0';
        cursor += length + 1;
        head.argc++;
    }
    head.argv_bytes = (uint16_t)(cursor - argv_start);
    head.reserved = 0;
    memcpy(buffer, &head, sizeof head);
    return (size_t)(cursor - (char *)buffer);
}

/* The fixed part that begins a message of variable length, into `head`;
 * false when the payload is shorter. */
static bool read_fixed_part(const char *what, const void *payload, size_t payload_bytes, void *head,
                            size_t head_bytes, struct vigil_error *err)
{
    if (payload_bytes < head_bytes) {
        vigil_error_set(err, "%s: %zu bytes, shorter than its fixed part (%zu)", what,
                        payload_bytes, head_bytes);
        return false;
    }
    memcpy(head, payload, head_bytes);
    return true;
}

bool vigil_local_decode_register(const void *payload, size_t payload_bytes,
                                 struct vigil_local_process_info *out, struct vigil_error *err)
{
    struct vigil_local_register head;
    if (!read_fixed_part("register", payload, payload_bytes, &head, sizeof head, err))
        return false;
    size_t strings = (size_t)head.program_bytes + head.cwd_bytes + head.job_bytes + head.run_bytes +
                     head.argv_bytes;
    if (sizeof head + strings != payload_bytes) {
        vigil_error_set(err, "register: its strings take %zu bytes but %zu follow the fixed part",
                        strings, payload_bytes - sizeof head);
        return false;
    }
    if (head.flags & ~(uint32_t)(VIGIL_LOCAL_ARGV_TRUNCATED | VIGIL_LOCAL_REATTACH)) {
        vigil_error_set(err, "register: unknown flags 0x%x", head.flags);
        return false;
    }
    if (head.reserved != 0) {
        vigil_error_set(err, "register: the reserved field is 0x%x, not 0", head.reserved);
        return false;
    }
    if (head.mpi_rank < -1) {
        vigil_error_set(err, "register: MPI rank %d (-1 or more)", head.mpi_rank);
        return false;
    }
    if (head.tick_source != VIGIL_TICKS_MONOTONIC_NS && head.tick_source != VIGIL_TICKS_TSC) {
        vigil_error_set(err, "register: unknown tick source %u", head.tick_source);
        return false;
    }
    if (head.ring_slots < VIGIL_RING_MIN_SLOTS || head.ring_slots > VIGIL_RING_MAX_SLOTS ||
        (head.ring_slots & (head.ring_slots - 1)) != 0) {
        vigil_error_set(err, "register: a ring of %u slots (a power of two from %u to %u)",
                        head.ring_slots, VIGIL_RING_MIN_SLOTS, VIGIL_RING_MAX_SLOTS);
        return false;
    }
    const char *p = (const char *)payload + sizeof head;
    const struct {
        const char *what;
        uint16_t bytes;
    } texts[] = {{"program", head.program_bytes},
                 {"cwd", head.cwd_bytes},
                 {"job id", head.job_bytes},
                 {"run key", head.run_bytes}};
    const char *starts[4];
    for (size_t i = 0; i < 4; i++) {
        starts[i] = p;
        if (memchr(p, '\0', texts[i].bytes) != NULL) {
            vigil_error_set(err, "register: the %s has a NUL byte in it", texts[i].what);
            return false;
        }
        p += texts[i].bytes;
    }
    if (!vigil_run_key_valid(starts[3], head.run_bytes)) {
        vigil_error_set(err,
                        "register: the run key is %u bytes, not 1 to %d printable ASCII "
                        "characters without spaces",
                        head.run_bytes, VIGIL_RUN_KEY_MAX);
        return false;
    }
    uint32_t nuls = 0;
    for (size_t i = 0; i < head.argv_bytes; i++)
        nuls += p[i] == '\0';
    if (nuls != head.argc || (head.argv_bytes > 0 && p[head.argv_bytes - 1] != '\0')) {
        vigil_error_set(err, "register: argv holds %u terminated strings, not argc = %u", nuls,
                        head.argc);
        return false;
    }
    out->fixed = head;
    out->program = starts[0];
    out->cwd = starts[1];
    out->job = starts[2];
    out->run_key = starts[3];
    out->argv = p;
    return true;
}

size_t vigil_local_encode_registered_apart(void *buffer, uint64_t process_id, const char *run_key,
                                           const char *reason)
{
    struct vigil_local_registered_apart head = {.process_id = process_id};
    char *cursor = (char *)buffer + sizeof head;
    head.run_bytes = put_string(&cursor, cursor + VIGIL_RUN_KEY_MAX, run_key);
    head.reason_bytes = put_string(&cursor, cursor + VIGIL_LOCAL_APART_REASON_MAX, reason);
    memcpy(buffer, &head, sizeof head);
    return (size_t)(cursor - (char *)buffer);
}

bool vigil_local_decode_registered_apart(const void *payload, size_t payload_bytes,
                                         uint64_t *process_id, char *run_key, char *reason,
                                         size_t reason_size, struct vigil_error *err)
{
    struct vigil_local_registered_apart head;
    if (!read_fixed_part("registered apart", payload, payload_bytes, &head, sizeof head, err))
        return false;
    if (sizeof head + head.run_bytes + head.reason_bytes != payload_bytes) {
        vigil_error_set(err,
                        "registered apart: its strings take %u bytes but %zu follow the fixed "
                        "part",
                        (unsigned)(head.run_bytes + head.reason_bytes),
                        payload_bytes - sizeof head);
        return false;
    }
    if (head.reserved != 0 || head.reason_bytes > VIGIL_LOCAL_APART_REASON_MAX) {
        vigil_error_set(err, "registered apart: reserved 0x%x, a reason of %u bytes", head.reserved,
                        head.reason_bytes);
        return false;
    }
    const char *key = (const char *)payload + sizeof head;
    const char *why = key + head.run_bytes;
    if (!vigil_run_key_valid(key, head.run_bytes)) {
        vigil_error_set(err,
                        "registered apart: the run key is not 1 to %d printable ASCII "
                        "characters without spaces",
                        VIGIL_RUN_KEY_MAX);
        return false;
    }
    if (memchr(why, '\0', head.reason_bytes) != NULL) {
        vigil_error_set(err, "registered apart: the reason has a NUL byte in it");
        return false;
    }
    *process_id = head.process_id;
    memcpy(run_key, key, head.run_bytes);
    run_key[head.run_bytes] = '\0';
    if (reason_size > 0) {
        size_t copied = head.reason_bytes < reason_size - 1 ? head.reason_bytes : reason_size - 1;
        memcpy(reason, why, copied);
        reason[copied] = '\0';
    }
    return true;
}

static bool text_is_terminated(const char *text, size_t size)
{
    return memchr(text, '\0', size) != NULL;
}

/* The payload size of each message of a fixed layout; a type not here
 * has none. */
static const struct {
    bool fixed;
    size_t bytes;
} fixed_layouts[] = {
    [VIGIL_LOCAL_REGISTERED] = {true, sizeof(struct vigil_local_registered)},
    [VIGIL_LOCAL_RANK] = {true, sizeof(struct vigil_local_rank)},
    [VIGIL_LOCAL_SUMMARY_REQUEST] = {true, 0},
    [VIGIL_LOCAL_SUMMARY] = {true, sizeof(struct vigil_local_summary)},
    [VIGIL_LOCAL_STATUS_REQUEST] = {true, sizeof(struct vigil_local_status_request)},
    [VIGIL_LOCAL_STATUS] = {true, sizeof(struct vigil_local_status)},
    [VIGIL_LOCAL_REPORT] = {true, sizeof(struct vigil_local_report)},
    [VIGIL_LOCAL_JOB_NOTED] = {true, 0},
    [VIGIL_LOCAL_SPOOL] = {true, sizeof(struct vigil_local_spool)},
    [VIGIL_LOCAL_INSIGHT] = {true, sizeof(struct vigil_insight_thresholds)},
};
_Static_assert(sizeof(struct vigil_insight_thresholds) == VIGIL_LOCAL_INSIGHT_BYTES,
               "insight layout changed");

bool vigil_local_decode_fixed(enum vigil_local_type type, const void *payload, size_t payload_bytes,
                              void *out, struct vigil_error *err)
{
    if ((unsigned)type >= sizeof fixed_layouts / sizeof fixed_layouts[0] ||
        !fixed_layouts[type].fixed) {
        if (vigil_local_type_name(type) != NULL)
            vigil_error_set(err, "a %s message has no fixed layout", vigil_local_type_name(type));
        else
            vigil_error_set(err, "a message of unknown type %u has no fixed layout",
                            (unsigned)type);
        return false;
    }
    size_t expected = fixed_layouts[type].bytes;
    if (payload_bytes != expected) {
        vigil_error_set(err, "a %s message of %zu bytes; it has %zu", vigil_local_type_name(type),
                        payload_bytes, expected);
        return false;
    }
    if (expected > 0)
        memcpy(out, payload, expected);
    if (type == VIGIL_LOCAL_RANK) {
        const struct vigil_local_rank *r = out;
        if (r->rank < 0 || r->size < 1 || r->rank >= r->size) {
            vigil_error_set(err, "rank: rank %d of %d processes", r->rank, r->size);
            return false;
        }
    } else if (type == VIGIL_LOCAL_INSIGHT) {
        char why[200];
        if (vigil_insight_check(out, why, sizeof why) != NULL) {
            vigil_error_set(err, "insight: %s", why);
            return false;
        }
    } else if (type == VIGIL_LOCAL_SUMMARY) {
        const struct vigil_local_summary *s = out;
        if (!text_is_terminated(s->energy_source, sizeof s->energy_source)) {
            vigil_error_set(err, "summary: the energy source is not terminated");
            return false;
        }
        if (!text_is_terminated(s->energy_note, sizeof s->energy_note)) {
            vigil_error_set(err, "summary: the energy note is not terminated");
            return false;
        }
        if (!text_is_terminated(s->capture_mode, sizeof s->capture_mode)) {
            vigil_error_set(err, "summary: the capture mode is not terminated");
            return false;
        }
        /* Subtracted one by one, so that huge parts cannot wrap round to
         * the right sum. */
        uint64_t rest = s->activities_observed;
        bool parts_fit = true;
        const uint64_t parts[] = {s->activities_forwarded, s->activities_dropped,
                                  s->activities_lost, s->activities_held};
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            parts_fit = parts_fit && parts[i] <= rest;
            rest = parts_fit ? rest - parts[i] : rest;
        }
        if (s->abnormal_cycles > s->cycles) {
            vigil_error_set(err, "summary: %llu abnormal cycles of %llu",
                            (unsigned long long)s->abnormal_cycles, (unsigned long long)s->cycles);
            return false;
        }
        if (!parts_fit || rest != 0) {
            vigil_error_set(err,
                            "summary: %llu activities observed, but %llu forwarded + %llu "
                            "dropped + %llu lost + %llu held",
                            (unsigned long long)s->activities_observed,
                            (unsigned long long)s->activities_forwarded,
                            (unsigned long long)s->activities_dropped,
                            (unsigned long long)s->activities_lost,
                            (unsigned long long)s->activities_held);
            return false;
        }
        uint32_t known = VIGIL_LOCAL_ENERGY_ESTIMATED | VIGIL_LOCAL_ENERGY_UNCERTAIN;
        if ((s->energy_flags & ~known) != 0 || s->reserved != 0) {
            vigil_error_set(err, "summary: unknown energy flags 0x%x or reserved field 0x%x",
                            s->energy_flags, s->reserved);
            return false;
        }
    } else if (type == VIGIL_LOCAL_REPORT) {
        const struct vigil_local_report *r = out;
        if (r->exit_code < -1 || r->exit_code > 255) {
            vigil_error_set(err, "report: exit code %d (-1 for unknown, or 0 to 255)",
                            r->exit_code);
            return false;
        }
        if (r->reserved != 0) {
            vigil_error_set(err, "report: the reserved field is 0x%x, not 0", r->reserved);
            return false;
        }
        if (r->json_bytes > VIGIL_LOCAL_REPORT_MAX_BYTES) {
            vigil_error_set(err, "report: %llu bytes of JSON, more than the limit of %u",
                            (unsigned long long)r->json_bytes, VIGIL_LOCAL_REPORT_MAX_BYTES);
            return false;
        }
    } else if (type == VIGIL_LOCAL_STATUS_REQUEST) {
        const struct vigil_local_status_request *r = out;
        if (r->finished_pid < 0 || r->reserved != 0) {
            vigil_error_set(err, "status request: pid %d", r->finished_pid);
            return false;
        }
    } else if (type == VIGIL_LOCAL_SPOOL) {
        const struct vigil_local_spool *r = out;
        if (r->op != VIGIL_LOCAL_SPOOL_RESEND && r->op != VIGIL_LOCAL_SPOOL_REPLAY) {
            vigil_error_set(err, "spool: unknown operation %u", r->op);
            return false;
        }
        if (r->reserved != 0) {
            vigil_error_set(err, "spool: the reserved field is 0x%x, not 0", r->reserved);
            return false;
        }
        if (!text_is_terminated(r->path, sizeof r->path)) {
            vigil_error_set(err, "spool: the path is not terminated");
            return false;
        }
        if (r->op == VIGIL_LOCAL_SPOOL_REPLAY && r->path[0] != '/') {
            vigil_error_set(err, "spool: replay needs an absolute path, not \"%.64s\"", r->path);
            return false;
        }
        if (r->op == VIGIL_LOCAL_SPOOL_RESEND && r->path[0] != '\0') {
            vigil_error_set(err, "spool: resend names no file, not \"%.64s\"", r->path);
            return false;
        }
    }
    return true;
}

bool vigil_local_decode_text(enum vigil_local_type type, const void *payload, size_t payload_bytes,
                             char *out, size_t out_size, struct vigil_error *err)
{
    if (type != VIGIL_LOCAL_REFUSED) {
        if (vigil_local_type_name(type) != NULL)
            vigil_error_set(err, "a %s message carries no text", vigil_local_type_name(type));
        else
            vigil_error_set(err, "a message of unknown type %u carries no text", (unsigned)type);
        return false;
    }
    const char *text = payload;
    size_t length = payload_bytes;
    if (length > 0 && text[length - 1] == '\0')
        length--;
    if (length == 0) {
        vigil_error_set(err, "refused: no reason given");
        return false;
    }
    if (memchr(text, '\0', length) != NULL) {
        vigil_error_set(err, "refused: the reason has a NUL byte in it");
        return false;
    }
    if (out_size == 0)
        return true;
    size_t copied = length < out_size - 1 ? length : out_size - 1;
    memcpy(out, text, copied);
    out[copied] = '\0';
    return true;
}

/* ---- JOB ------------------------------------------------------------------------------------ */

enum job_text_kind {
    TEXT_TOKEN, /* printable ASCII, no space */
    TEXT_NAME,  /* UTF-8 without control characters */
};

/* The length of the UTF-8 sequence at `p` (at most `left` bytes), or 0
 * when it is not one: overlong forms, surrogates and code points past
 * U+10FFFF are not. */
static size_t utf8_sequence(const unsigned char *p, size_t left)
{
    unsigned char c = p[0];
    size_t length;
    uint32_t code, min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        length = 2, code = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        length = 3, code = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        length = 4, code = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (length > left)
        return 0;
    for (size_t i = 1; i < length; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        code = code << 6 | (p[i] & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
        return 0;
    return length;
}

/* NULL when `text` (`length` bytes) is of its kind, else what is wrong. */
static const char *job_text_problem(const char *text, size_t length, enum job_text_kind kind)
{
    const unsigned char *p = (const unsigned char *)text;
    for (size_t i = 0; i < length;) {
        if (kind == TEXT_TOKEN) {
            if (p[i] < 0x21 || p[i] > 0x7e)
                return "is not printable ASCII without spaces";
            i++;
            continue;
        }
        size_t n = utf8_sequence(p + i, length - i);
        if (n == 0)
            return "is not valid UTF-8";
        if (n == 1 && (p[i] < 0x20 || p[i] == 0x7f))
            return "has a control character in it";
        i += n;
    }
    return NULL;
}

static const struct job_text {
    const char *what;
    size_t max;
    enum job_text_kind kind;
} job_texts[4] = {
    {"job id", VIGIL_LOCAL_JOB_ID_MAX, TEXT_TOKEN},
    {"step id", VIGIL_LOCAL_JOB_STEP_MAX, TEXT_TOKEN},
    {"user", VIGIL_LOCAL_JOB_USER_MAX, TEXT_NAME},
    {"node list", VIGIL_LOCAL_JOB_NODES_MAX, TEXT_TOKEN},
};

static bool check_job_text(const char *prefix, size_t index, const char *text, size_t length,
                           struct vigil_error *err)
{
    const struct job_text *t = &job_texts[index];
    if (index == 0 && length == 0) {
        vigil_error_set(err, "%sthe job id is empty", prefix);
        return false;
    }
    if (length > t->max) {
        vigil_error_set(err, "%sthe %s is %zu bytes, over the limit of %zu", prefix, t->what,
                        length, t->max);
        return false;
    }
    const char *problem = job_text_problem(text, length, t->kind);
    if (problem != NULL) {
        vigil_error_set(err, "%sthe %s %s", prefix, t->what, problem);
        return false;
    }
    return true;
}

size_t vigil_local_encode_job(void *buffer, bool begin, const char *job, const char *step,
                              const char *user, uint32_t uid, const char *nodes,
                              struct vigil_error *err)
{
    const char *texts[4] = {job, step, user, nodes};
    uint16_t lengths[4];
    struct vigil_local_job head = {
        .flags = begin ? VIGIL_LOCAL_JOB_BEGIN : 0,
        .uid = uid,
    };
    char *cursor = (char *)buffer + sizeof head;
    for (size_t i = 0; i < 4; i++) {
        size_t length = texts[i] != NULL ? strlen(texts[i]) : 0;
        if (!check_job_text("", i, texts[i], length, err))
            return 0;
        memcpy(cursor, texts[i] != NULL ? texts[i] : "", length);
        cursor += length;
        lengths[i] = (uint16_t)length;
    }
    head.job_bytes = lengths[0];
    head.step_bytes = lengths[1];
    head.user_bytes = lengths[2];
    head.nodes_bytes = lengths[3];
    memcpy(buffer, &head, sizeof head);
    return (size_t)(cursor - (char *)buffer);
}

bool vigil_local_decode_job(const void *payload, size_t payload_bytes,
                            struct vigil_local_job_info *out, struct vigil_error *err)
{
    struct vigil_local_job head;
    if (!read_fixed_part("job", payload, payload_bytes, &head, sizeof head, err))
        return false;
    const uint16_t lengths[4] = {head.job_bytes, head.step_bytes, head.user_bytes,
                                 head.nodes_bytes};
    size_t strings = (size_t)lengths[0] + lengths[1] + lengths[2] + lengths[3];
    if (sizeof head + strings != payload_bytes) {
        vigil_error_set(err, "job: its strings take %zu bytes but %zu follow the fixed part",
                        strings, payload_bytes - sizeof head);
        return false;
    }
    if (head.flags & ~(uint32_t)VIGIL_LOCAL_JOB_BEGIN) {
        vigil_error_set(err, "job: unknown flags 0x%x", head.flags);
        return false;
    }
    const char *p = (const char *)payload + sizeof head;
    const char *starts[4];
    for (size_t i = 0; i < 4; i++) {
        starts[i] = p;
        if (!check_job_text("job: ", i, p, lengths[i], err))
            return false;
        p += lengths[i];
    }
    out->fixed = head;
    out->job = starts[0];
    out->step = starts[1];
    out->user = starts[2];
    out->nodes = starts[3];
    return true;
}

int vigil_local_daemon_sockets(const char *path, uid_t euid, char paths[2][VIGIL_SOCKET_PATH_MAX])
{
    size_t length = strlen(path);
    if (length + strlen(VIGIL_ROOT_SOCKET_SUFFIX) >= VIGIL_SOCKET_PATH_MAX)
        return 0;
    int n = 0;
    if (euid == 0) {
        memcpy(paths[n], path, length);
        memcpy(paths[n] + length, VIGIL_ROOT_SOCKET_SUFFIX, sizeof VIGIL_ROOT_SOCKET_SUFFIX);
        n++;
    }
    memcpy(paths[n], path, length + 1);
    return n + 1;
}
