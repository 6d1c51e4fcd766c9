/* Tests of the local protocol (record/local_protocol.c): REGISTER's encoding
 * and every check its decoder makes, the fixed messages' sizes and checks,
 * REFUSED's text; and, over a real SOCK_SEQPACKET socketpair, descriptor
 * passing and every way a received message can be malformed. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_local.h"
#include "test_main.h"
#include "test_support.h"
#include "vigil/clock.h"
#include "vigil/insight.h"
#include "vigil/local_protocol.h"
#include "vigil/run_key.h"

#define PAYLOAD_MAX (VIGIL_LOCAL_MAX_BYTES - sizeof(struct vigil_local_header))

static _Alignas(8) unsigned char buffer[VIGIL_LOCAL_MAX_BYTES];

/* Decodes the REGISTER of `bytes` in buffer into *info; `what` names the
 * message when the decoder refuses it. */
static void decode_encoded_register(size_t bytes, struct vigil_local_process_info *info,
                                    const char *what)
{
    struct vigil_error err = {{0}};
    if (!vigil_local_decode_register(buffer, bytes, info, &err))
        fail_msg("%s is refused: %s", what, err.message);
}

/* ---- REGISTER ---------------------------------------------------------------------------- */

static void test_register_round_trip(void **state)
{
    (void)state;
    struct vigil_local_register fixed = test_local_register_fixed();
    char *argv[] = {"/usr/bin/dd", "if=/dev/zero", "", "count=1", NULL};
    size_t bytes = vigil_local_encode_register(buffer, &fixed, "/usr/bin/dd", "/home/me", "4242",
                                               "slurm-4242.0", 4, argv);
    assert_int_equal(bytes, sizeof fixed + strlen("/usr/bin/dd") + strlen("/home/me") + 4 +
                                strlen("slurm-4242.0") + sizeof "/usr/bin/dd" +
                                sizeof "if=/dev/zero" + 1 + sizeof "count=1");

    struct vigil_local_process_info info;
    decode_encoded_register(bytes, &info, "a register message we encoded");
    assert_int_equal(info.fixed.ring_slots, 1024);
    assert_int_equal(info.fixed.tick_source, VIGIL_TICKS_TSC);
    assert_int_equal(info.fixed.start_ticks, 123456789);
    assert_int_equal(info.fixed.start_monotonic_ns, 987654321);
    assert_int_equal(info.fixed.start_realtime_ns, 1700000000000000000ull);
    assert_int_equal(info.fixed.mpi_rank, -1);
    assert_int_equal(info.fixed.flags, 0);
    assert_int_equal(info.fixed.argc, 4);
    assert_int_equal(info.fixed.program_bytes, strlen("/usr/bin/dd"));
    assert_memory_equal(info.program, "/usr/bin/dd", info.fixed.program_bytes);
    assert_int_equal(info.fixed.cwd_bytes, strlen("/home/me"));
    assert_memory_equal(info.cwd, "/home/me", info.fixed.cwd_bytes);
    assert_int_equal(info.fixed.job_bytes, 4);
    assert_memory_equal(info.job, "4242", 4);
    assert_int_equal(info.fixed.run_bytes, strlen("slurm-4242.0"));
    assert_memory_equal(info.run_key, "slurm-4242.0", info.fixed.run_bytes);
    /* argv: each argument NUL-terminated, the empty one included. */
    const char *arg = info.argv;
    for (int i = 0; i < 4; i++) {
        assert_string_equal(arg, argv[i]);
        arg += strlen(arg) + 1;
    }
    assert_ptr_equal(arg, info.argv + info.fixed.argv_bytes);
}

static void test_register_without_job_or_argv(void **state)
{
    (void)state;
    struct vigil_local_register fixed = test_local_register_fixed();
    size_t bytes =
        vigil_local_encode_register(buffer, &fixed, "/bin/true", "/", NULL, "r", 0, NULL);
    struct vigil_local_process_info info;
    decode_encoded_register(bytes, &info, "a register message without a job or argv");
    assert_int_equal(info.fixed.job_bytes, 0);
    assert_int_equal(info.fixed.argc, 0);
    assert_int_equal(info.fixed.argv_bytes, 0);
    assert_int_equal(info.fixed.flags, 0);
}

/* argv longer than a message: the arguments that fit, in order, argc
 * counting only them, and the flag that says so. */
static void test_register_argv_truncated(void **state)
{
    (void)state;
    enum { ARGS = 10, ARG_BYTES = 3000 };
    static char args[ARGS][ARG_BYTES + 1];
    char *argv[ARGS + 1];
    for (int i = 0; i < ARGS; i++) {
        memset(args[i], 'a' + i, ARG_BYTES);
        args[i][ARG_BYTES] = '\0';
        argv[i] = args[i];
    }
    argv[ARGS] = NULL;
    struct vigil_local_register fixed = test_local_register_fixed();
    size_t bytes = vigil_local_encode_register(buffer, &fixed, "/p", "/c", "7", "r", ARGS, argv);
    assert_true(bytes <= PAYLOAD_MAX);
    size_t room = PAYLOAD_MAX - sizeof fixed - strlen("/p") - strlen("/c") - 1 - 1;
    uint32_t fitting = (uint32_t)(room / (ARG_BYTES + 1));
    assert_true(fitting < ARGS);

    struct vigil_local_process_info info;
    decode_encoded_register(bytes, &info, "a truncated argv");
    assert_true(info.fixed.flags & VIGIL_LOCAL_ARGV_TRUNCATED);
    assert_int_equal(info.fixed.argc, fitting);
    const char *arg = info.argv;
    for (uint32_t i = 0; i < fitting; i++) {
        assert_string_equal(arg, argv[i]);
        arg += strlen(arg) + 1;
    }
}

/* A program path beyond 4 KiB is cut there, the message stays valid. */
static void test_register_long_program_cut(void **state)
{
    (void)state;
    static char program[6000];
    memset(program, 'p', sizeof program - 1);
    struct vigil_local_register fixed = test_local_register_fixed();
    char *argv[] = {"x", NULL};
    size_t bytes = vigil_local_encode_register(buffer, &fixed, program, "/", "", "r", 1, argv);
    struct vigil_local_process_info info;
    decode_encoded_register(bytes, &info, "a register message with its program cut");
    assert_int_equal(info.fixed.program_bytes, 4096);
    assert_int_equal(info.fixed.argc, 1);
    assert_false(info.fixed.flags & VIGIL_LOCAL_ARGV_TRUNCATED);
}

/* A valid REGISTER payload ("/p", "/c", "j", run "rk", argv "a" "bc") in
 * `out`; its length. */
static size_t valid_register(unsigned char *out)
{
    struct vigil_local_register fixed = test_local_register_fixed();
    char *argv[] = {"a", "bc", NULL};
    return vigil_local_encode_register(out, &fixed, "/p", "/c", "j", "rk", 2, argv);
}

static struct vigil_local_register *fixed_of(unsigned char *payload)
{
    return (struct vigil_local_register *)payload;
}

/* Offsets of the strings in valid_register's payload. */
enum {
    AT_PROGRAM = sizeof(struct vigil_local_register),
    AT_CWD = AT_PROGRAM + 2,
    AT_JOB = AT_CWD + 2,
    AT_RUN = AT_JOB + 1,
    AT_ARGV = AT_RUN + 2, /* "a\0bc\0" */
};

static void expect_register_refused(const unsigned char *payload, size_t bytes, const char *message)
{
    struct vigil_local_process_info info;
    struct vigil_error err = {{0}};
    if (vigil_local_decode_register(payload, bytes, &info, &err))
        fail_msg("a malformed register message (%s) is accepted", message);
    test_assert_contains(err.message, message);
}

/* Where a field of REGISTER's fixed part is, and how wide it is. */
#define REGISTER_FIELD(name)                                                                       \
    offsetof(struct vigil_local_register, name), sizeof(((struct vigil_local_register *)0)->name)

/* One way to spoil valid_register's payload: `value` written over the
 * field or the byte, `size` bytes wide, at `at`; what the decoder says. */
struct register_spoil {
    size_t at, size;
    int64_t value;
    const char *message;
};

static const struct register_spoil register_spoils[] = {
    /* Lengths that do not add up. */
    {REGISTER_FIELD(cwd_bytes), 3, "its strings take 13 bytes but 12 follow"},
    {REGISTER_FIELD(argv_bytes), 0, "its strings take 7 bytes but 12 follow"},
    /* A NUL byte inside a string. */
    {AT_PROGRAM + 1, 1, '\0', "the program has a NUL byte in it"},
    {AT_CWD, 1, '\0', "the cwd has a NUL byte in it"},
    {AT_JOB, 1, '\0', "the job id has a NUL byte in it"},
    {AT_RUN + 1, 1, '\0', "the run key has a NUL byte in it"},
    /* A run key is 1 to 255 printable characters without spaces: here
     * "r " (a space), "r\x7f", "r\xe9" and "r\x01". */
    {AT_RUN + 1, 1, ' ', "the run key is 2 bytes, not 1 to 255 printable ASCII"},
    {AT_RUN + 1, 1, 0x7f, "the run key is 2 bytes, not 1 to 255 printable ASCII"},
    {AT_RUN + 1, 1, 0xe9, "the run key is 2 bytes, not 1 to 255 printable ASCII"},
    {AT_RUN + 1, 1, 0x01, "the run key is 2 bytes, not 1 to 255 printable ASCII"},
    /* argc against argv's strings; the last argument ("bc") unterminated. */
    {REGISTER_FIELD(argc), 3, "argv holds 2 terminated strings, not argc = 3"},
    {REGISTER_FIELD(argc), 1, "argv holds 2 terminated strings, not argc = 1"},
    {AT_ARGV + 4, 1, 'x', "argv holds 1 terminated strings, not argc = 2"},
    /* The fixed part's values. */
    {REGISTER_FIELD(flags), 4, "unknown flags 0x4"},
    {REGISTER_FIELD(reserved), 5, "the reserved field is 0x5"},
    {REGISTER_FIELD(mpi_rank), -2, "MPI rank -2"},
    {REGISTER_FIELD(tick_source), 7, "unknown tick source 7"},
    {REGISTER_FIELD(ring_slots), 100, "a ring of 100 slots"},
    {REGISTER_FIELD(ring_slots), 32, "a ring of 32 slots"},
};

/* Writes `value`, `size` bytes wide (1, 2 or 4), at `at` in the payload. */
static void spoil_register(unsigned char *payload, const struct register_spoil *spoil)
{
    if (spoil->size == 1) {
        payload[spoil->at] = (unsigned char)spoil->value;
    } else if (spoil->size == 2) {
        uint16_t narrow = (uint16_t)spoil->value;
        memcpy(payload + spoil->at, &narrow, sizeof narrow);
    } else {
        assert_int_equal(spoil->size, 4);
        uint32_t wide = (uint32_t)spoil->value;
        memcpy(payload + spoil->at, &wide, sizeof wide);
    }
}

static void test_register_malformed(void **state)
{
    (void)state;
    static _Alignas(8) unsigned char p[VIGIL_LOCAL_MAX_BYTES];
    size_t n = valid_register(p);
    struct vigil_local_process_info info;
    struct vigil_error err = {{0}};
    assert_true(vigil_local_decode_register(p, n, &info, &err));

    expect_register_refused(p, sizeof(struct vigil_local_register) - 1,
                            "shorter than its fixed part");
    expect_register_refused(p, 0, "shorter than its fixed part");
    /* Lengths that do not add up, either way. */
    expect_register_refused(p, n - 1, "its strings take 12 bytes but 11 follow");
    for (size_t i = 0; i < sizeof register_spoils / sizeof register_spoils[0]; i++) {
        n = valid_register(p);
        spoil_register(p, &register_spoils[i]);
        expect_register_refused(p, n, register_spoils[i].message);
    }
    /* An empty run key: its bytes given to the job id, the lengths still
     * add up. */
    n = valid_register(p);
    fixed_of(p)->job_bytes += 2;
    fixed_of(p)->run_bytes = 0;
    expect_register_refused(p, n, "the run key is 0 bytes");

    /* A rank, and the truncation flag, are fine. */
    n = valid_register(p);
    fixed_of(p)->mpi_rank = 12;
    fixed_of(p)->flags = VIGIL_LOCAL_ARGV_TRUNCATED;
    assert_true(vigil_local_decode_register(p, n, &info, &err));
    assert_int_equal(info.fixed.mpi_rank, 12);
}

/* ---- fixed messages --------------------------------------------------------------------- */

static void test_fixed_sizes(void **state)
{
    (void)state;
    static const struct {
        enum vigil_local_type type;
        size_t bytes;
    } fixed[] = {
        {VIGIL_LOCAL_REGISTERED, sizeof(struct vigil_local_registered)},
        {VIGIL_LOCAL_RANK, sizeof(struct vigil_local_rank)},
        {VIGIL_LOCAL_SUMMARY_REQUEST, 0},
        {VIGIL_LOCAL_SUMMARY, sizeof(struct vigil_local_summary)},
        {VIGIL_LOCAL_STATUS_REQUEST, sizeof(struct vigil_local_status_request)},
        {VIGIL_LOCAL_STATUS, sizeof(struct vigil_local_status)},
        {VIGIL_LOCAL_REPORT, sizeof(struct vigil_local_report)},
    };
    static _Alignas(8) unsigned char payload[512], out[512];
    memset(payload, 0, sizeof payload);
    struct vigil_local_rank *rank = (struct vigil_local_rank *)payload;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        struct vigil_error err = {{0}};
        rank->size = fixed[i].type == VIGIL_LOCAL_RANK ? 1 : 0; /* rank 0 of 1 */
        if (!vigil_local_decode_fixed(fixed[i].type, payload, fixed[i].bytes, out, &err))
            fail_msg("a %s message of its size is refused: %s",
                     vigil_local_type_name(fixed[i].type), err.message);
        char expected[128];
        snprintf(expected, sizeof expected, "a %s message of %zu bytes; it has %zu",
                 vigil_local_type_name(fixed[i].type), fixed[i].bytes + 1, fixed[i].bytes);
        assert_false(
            vigil_local_decode_fixed(fixed[i].type, payload, fixed[i].bytes + 1, out, &err));
        test_assert_contains(err.message, expected);
        if (fixed[i].bytes > 0) {
            snprintf(expected, sizeof expected, "a %s message of %zu bytes; it has %zu",
                     vigil_local_type_name(fixed[i].type), fixed[i].bytes - 1, fixed[i].bytes);
            assert_false(
                vigil_local_decode_fixed(fixed[i].type, payload, fixed[i].bytes - 1, out, &err));
            test_assert_contains(err.message, expected);
        }
    }
    struct vigil_error err = {{0}};
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_REGISTER, payload, 56, out, &err));
    test_assert_contains(err.message, "a register message has no fixed layout");
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_REFUSED, payload, 4, out, &err));
    test_assert_contains(err.message, "a refused message has no fixed layout");
    assert_false(vigil_local_decode_fixed((enum vigil_local_type)42, payload, 4, out, &err));
    test_assert_contains(err.message, "a message of unknown type 42 has no fixed layout");
}

/* INSIGHT: the thresholds as they are, of their size, and only those
 * vigil_insight_check accepts, the refusal naming the key. */
static void test_insight(void **state)
{
    (void)state;
    struct vigil_insight_thresholds t, out;
    vigil_insight_defaults(&t);
    struct vigil_error err = {{0}};
    assert_int_equal(sizeof t, VIGIL_LOCAL_INSIGHT_BYTES);
    assert_true(vigil_local_decode_fixed(VIGIL_LOCAL_INSIGHT, &t, sizeof t, &out, &err));
    assert_memory_equal(&t, &out, sizeof t);
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_INSIGHT, &t, sizeof t - 8, &out, &err));
    test_assert_contains(err.message, "a insight message of 144 bytes; it has 152");
    static const struct {
        size_t offset;
        double value;
        bool is_double;
        const char *message;
    } bad[] = {
        {offsetof(struct vigil_insight_thresholds, min_accesses), 0, false,
         "insight: min_accesses: 0 is not at least 1"},
        {offsetof(struct vigil_insight_thresholds, small_access_bytes), 1000, false,
         "insight: small_access_bytes: 1000 is not one of Darshan's size-bin edges"},
        {offsetof(struct vigil_insight_thresholds, small_access_share), 0, true,
         "insight: small_access_share: 0 is not a share above 0 and at most 1"},
        {offsetof(struct vigil_insight_thresholds, sequential_share), 1.5, true,
         "insight: sequential_share: 1.5 is not a share above 0 and at most 1"},
        {offsetof(struct vigil_insight_thresholds, imbalance_ratio), 1, true,
         "insight: imbalance_ratio: 1 is not a ratio above 1"},
        {offsetof(struct vigil_insight_thresholds, io_time_min_s), NAN, true,
         "insight: io_time_min_s: nan is not above 0"},
        {offsetof(struct vigil_insight_thresholds, repeated_opens), 1, false,
         "insight: repeated_opens: 1 is not at least 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vigil_insight_thresholds wrong = t;
        unsigned char *field = (unsigned char *)&wrong + bad[i].offset;
        if (bad[i].is_double)
            memcpy(field, &bad[i].value, sizeof(double));
        else
            memcpy(field, &(uint64_t){(uint64_t)bad[i].value}, sizeof(uint64_t));
        if (vigil_local_decode_fixed(VIGIL_LOCAL_INSIGHT, &wrong, sizeof wrong, &out, &err))
            fail_msg("thresholds that should say \"%s\" are accepted", bad[i].message);
        test_assert_contains(err.message, bad[i].message);
    }
}

/* A summary the decoder refuses, saying `message`. */
static void expect_summary_refused(const struct vigil_local_summary *s, const char *message)
{
    struct vigil_local_summary out;
    struct vigil_error err = {{0}};
    if (vigil_local_decode_fixed(VIGIL_LOCAL_SUMMARY, s, sizeof *s, &out, &err))
        fail_msg("a summary that should say \"%s\" is accepted", message);
    test_assert_contains(err.message, message);
}

static void test_summary(void **state)
{
    (void)state;
    struct vigil_local_summary s = test_local_summary(), out;
    struct vigil_error err = {{0}};
    assert_true(vigil_local_decode_fixed(VIGIL_LOCAL_SUMMARY, &s, sizeof s, &out, &err));
    assert_int_equal(out.process_id, 17);
    assert_int_equal(out.activities_drained, 1234);
    assert_true(out.energy_j == 1.5);
    assert_string_equal(out.energy_source, "energy/estimate");
    assert_int_equal(out.cycles, 12);
    assert_int_equal(out.abnormal_cycles, 3);
    assert_int_equal(out.activities_observed, 52000);
    assert_int_equal(out.activities_forwarded, 4210);
    assert_int_equal(out.activities_dropped, 47088);
    assert_int_equal(out.activities_lost, 12);
    assert_int_equal(out.activities_held, 690);
    assert_string_equal(out.capture_mode, "anomalies");

    s = test_local_summary();
    s.energy_j = NAN;
    strcpy(s.energy_note, "no RAPL here");
    assert_true(vigil_local_decode_fixed(VIGIL_LOCAL_SUMMARY, &s, sizeof s, &out, &err));
    assert_true(isnan(out.energy_j));
    assert_string_equal(out.energy_note, "no RAPL here");

    s = test_local_summary();
    memset(s.energy_source, 'x', sizeof s.energy_source);
    expect_summary_refused(&s, "summary: the energy source is not terminated");
    s = test_local_summary();
    memset(s.energy_note, 'y', sizeof s.energy_note);
    expect_summary_refused(&s, "summary: the energy note is not terminated");
    s = test_local_summary();
    memset(s.capture_mode, 'z', sizeof s.capture_mode);
    expect_summary_refused(&s, "summary: the capture mode is not terminated");
    /* Every activity observed is accounted for once: one too many, or one
     * held that was never observed, is refused. */
    s = test_local_summary();
    s.activities_observed++;
    expect_summary_refused(&s, "summary: 52001 activities observed, but 4210 forwarded + "
                               "47088 dropped + 12 lost + 690 held");
    s = test_local_summary();
    s.activities_held++;
    expect_summary_refused(&s, "summary: 52000 activities observed, but 4210 forwarded + "
                               "47088 dropped + 12 lost + 691 held");
    /* Parts so large that their sum wraps round to the total are refused
     * too. */
    s = test_local_summary();
    s.activities_forwarded = UINT64_MAX;
    s.activities_dropped = 1;
    s.activities_lost = s.activities_held = s.activities_observed = 0;
    expect_summary_refused(&s, "0 activities observed, but 18446744073709551615 forwarded");
    s = test_local_summary();
    s.abnormal_cycles = s.cycles + 1;
    expect_summary_refused(&s, "summary: 13 abnormal cycles of 12");
    /* Nothing observed, nothing else: a process vigild captured nothing of. */
    s = test_local_summary();
    s.activities_observed = s.activities_forwarded = s.activities_dropped = 0;
    s.activities_lost = s.activities_held = 0;
    assert_true(vigil_local_decode_fixed(VIGIL_LOCAL_SUMMARY, &s, sizeof s, &out, &err));
    s = test_local_summary();
    s.energy_flags = 1u << 5;
    expect_summary_refused(&s, "summary: unknown energy flags 0x20");
    s = test_local_summary();
    s.reserved = 1;
    expect_summary_refused(&s, "reserved field 0x1");
}

static void test_rank_and_status_request(void **state)
{
    (void)state;
    struct vigil_local_rank r, out;
    struct vigil_error err = {{0}};
    r = (struct vigil_local_rank){.rank = 3, .size = 4};
    assert_true(vigil_local_decode_fixed(VIGIL_LOCAL_RANK, &r, sizeof r, &out, &err));
    assert_int_equal(out.rank, 3);
    assert_int_equal(out.size, 4);
    r = (struct vigil_local_rank){.rank = 4, .size = 4};
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_RANK, &r, sizeof r, &out, &err));
    test_assert_contains(err.message, "rank: rank 4 of 4 processes");
    r = (struct vigil_local_rank){.rank = -1, .size = 4};
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_RANK, &r, sizeof r, &out, &err));
    test_assert_contains(err.message, "rank: rank -1 of 4 processes");
    r = (struct vigil_local_rank){.rank = 0, .size = 0};
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_RANK, &r, sizeof r, &out, &err));
    test_assert_contains(err.message, "rank: rank 0 of 0 processes");

    struct vigil_local_status_request q = {.finished_pid = -5}, q_out;
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_STATUS_REQUEST, &q, sizeof q, &q_out, &err));
    test_assert_contains(err.message, "status request: pid -5");
    q = (struct vigil_local_status_request){.finished_pid = 99};
    assert_true(vigil_local_decode_fixed(VIGIL_LOCAL_STATUS_REQUEST, &q, sizeof q, &q_out, &err));
    assert_int_equal(q_out.finished_pid, 99);
}

static void test_report(void **state)
{
    (void)state;
    struct vigil_local_report r, out;
    struct vigil_error err = {{0}};
    const int32_t good_codes[] = {-1, 0, 1, 255};
    for (size_t i = 0; i < sizeof good_codes / sizeof good_codes[0]; i++) {
        r = (struct vigil_local_report){.exit_code = good_codes[i], .json_bytes = 1234};
        if (!vigil_local_decode_fixed(VIGIL_LOCAL_REPORT, &r, sizeof r, &out, &err))
            fail_msg("a report with exit code %d is refused: %s", good_codes[i], err.message);
        assert_int_equal(out.exit_code, good_codes[i]);
        assert_int_equal(out.json_bytes, 1234);
    }
    r = (struct vigil_local_report){.exit_code = 0, .json_bytes = VIGIL_LOCAL_REPORT_MAX_BYTES};
    assert_true(vigil_local_decode_fixed(VIGIL_LOCAL_REPORT, &r, sizeof r, &out, &err));

    r = (struct vigil_local_report){.exit_code = 256};
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_REPORT, &r, sizeof r, &out, &err));
    test_assert_contains(err.message, "report: exit code 256 (-1 for unknown, or 0 to 255)");
    r = (struct vigil_local_report){.exit_code = -2};
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_REPORT, &r, sizeof r, &out, &err));
    test_assert_contains(err.message, "report: exit code -2");
    r = (struct vigil_local_report){.reserved = 3};
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_REPORT, &r, sizeof r, &out, &err));
    test_assert_contains(err.message, "report: the reserved field is 0x3, not 0");
    r = (struct vigil_local_report){.json_bytes = VIGIL_LOCAL_REPORT_MAX_BYTES + 1ull};
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_REPORT, &r, sizeof r, &out, &err));
    test_assert_contains(err.message, "report: 1048577 bytes of JSON, more than the limit of "
                                      "1048576");
}

static void test_refused_text(void **state)
{
    (void)state;
    char out[32];
    struct vigil_error err = {{0}};
    assert_true(vigil_local_decode_text(VIGIL_LOCAL_REFUSED, "too many", 8, out, sizeof out, &err));
    assert_string_equal(out, "too many");
    assert_true(vigil_local_decode_text(VIGIL_LOCAL_REFUSED, "ended\0", 6, out, sizeof out, &err));
    assert_string_equal(out, "ended");
    assert_true(vigil_local_decode_text(VIGIL_LOCAL_REFUSED, "0123456789abcdef", 16, out, 8, &err));
    assert_string_equal(out, "0123456");

    assert_false(vigil_local_decode_text(VIGIL_LOCAL_REFUSED, "a\0b", 3, out, sizeof out, &err));
    test_assert_contains(err.message, "refused: the reason has a NUL byte in it");
    assert_false(vigil_local_decode_text(VIGIL_LOCAL_REFUSED, "", 0, out, sizeof out, &err));
    test_assert_contains(err.message, "refused: no reason given");
    assert_false(vigil_local_decode_text(VIGIL_LOCAL_REFUSED, "\0", 1, out, sizeof out, &err));
    test_assert_contains(err.message, "refused: no reason given");
    assert_false(vigil_local_decode_text(VIGIL_LOCAL_SUMMARY, "x", 1, out, sizeof out, &err));
    test_assert_contains(err.message, "a summary message carries no text");
}

/* ---- over a socket ------------------------------------------------------------------------ */

static void seqpacket_pair(int sv[2])
{
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

/* test_local_send_raw, all `length` bytes sent. */
static void send_raw(int socket_fd, const void *bytes, size_t length, const int *fds, size_t count)
{
    assert_int_equal(test_local_send_raw(socket_fd, bytes, length, fds, count), (ssize_t)length);
}

/* The tests over a socket: a pair of connected SOCK_SEQPACKET sockets in
 * *state, closed after the test (one it closed itself set to -1). */
static int pair_open(void **state)
{
    static int sv[2];
    seqpacket_pair(sv);
    *state = sv;
    return 0;
}

static int pair_close(void **state)
{
    int *sv = *state;
    for (int i = 0; i < 2; i++)
        if (sv[i] >= 0)
            close(sv[i]);
    return 0;
}

/* How many descriptors this process has open. */
static int open_descriptors(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int count = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        if (e->d_name[0] != '.')
            count++;
    closedir(d);
    return count - 1; /* the directory's own */
}

/* What the names are for: errors and logs name a message by them, and the
 * fuzzer's seeds are files named after them. So every type the header's
 * field can carry either has a name, not empty, distinct and in lowercase
 * words, and is one the sender sends and the receiver takes, as that type;
 * or it has none, and both refuse it. */
static void test_type_names(void **state)
{
    int *sv = *state;
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (unsigned type = 0; type <= UINT16_MAX; type++) {
        const char *name = vigil_local_type_name(type);
        struct vigil_error err = {{0}};
        bool sent = vigil_local_send(sv[0], (enum vigil_local_type)type, NULL, 0, -1, &err);
        assert_int_equal(sent, name != NULL);
        if (!sent)
            test_assert_contains(err.message, "unknown type");
        /* The same header sent raw, whatever the sender thinks of it. */
        struct vigil_local_header header = {
            .magic = VIGIL_LOCAL_MAGIC,
            .version = VIGIL_LOCAL_VERSION,
            .type = (uint16_t)type,
        };
        send_raw(sv[0], &header, sizeof header, NULL, 0);
        for (int copy = sent ? 0 : 1; copy < 2; copy++) {
            enum vigil_local_type received;
            ssize_t got = vigil_local_receive(sv[1], buffer, &received, NULL, &err);
            if (name != NULL) {
                assert_int_equal(got, 0);
                assert_int_equal(received, type);
            } else {
                assert_int_equal(got, -1);
                char *needle = g_strdup_printf("a message of unknown type %u", type);
                test_assert_contains(err.message, needle);
                g_free(needle);
            }
        }
        if (name == NULL)
            continue;
        assert_true(name[0] != '\0' && name[0] != ' ');
        for (const char *p = name; *p != '\0'; p++)
            if (!g_ascii_islower(*p) && !(*p == ' ' && p[1] != '\0' && p[1] != ' '))
                fail_msg("type %u's name \"%s\" is not lowercase words", type, name);
        if (!g_hash_table_add(seen, (gpointer)name))
            fail_msg("type %u has the name \"%s\" of another", type, name);
    }
    assert_true(g_hash_table_size(seen) > 0);
    assert_null(vigil_local_type_name(UINT_MAX)); /* beyond the header's field */
    g_hash_table_unref(seen);
}

static void test_send_and_receive_with_descriptor(void **state)
{
    int *sv = *state;
    int pipe_fds[2];
    assert_int_equal(pipe2(pipe_fds, O_CLOEXEC), 0);
    static _Alignas(8) unsigned char payload[VIGIL_LOCAL_MAX_BYTES];
    size_t n = valid_register(payload);
    struct vigil_error err = {{0}};
    if (!vigil_local_send(sv[0], VIGIL_LOCAL_REGISTER, payload, n, pipe_fds[1], &err))
        fail_msg("send: %s", err.message);

    enum vigil_local_type type = 0;
    int fd = -1;
    ssize_t got = vigil_local_receive(sv[1], buffer, &type, &fd, &err);
    if (got < 0)
        fail_msg("receive: %s", err.message);
    assert_int_equal(got, n);
    assert_int_equal(type, VIGIL_LOCAL_REGISTER);
    assert_memory_equal(buffer, payload, n);
    assert_true(fd >= 0);
    assert_int_not_equal(fd, pipe_fds[1]);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    /* It is the pipe's write end: what goes in comes out of ours. */
    assert_int_equal(write(fd, "hello", 5), 5);
    char back[8] = {0};
    assert_int_equal(read(pipe_fds[0], back, sizeof back), 5);
    assert_string_equal(back, "hello");

    /* A message without payload, and without a descriptor. */
    assert_true(vigil_local_send(sv[1], VIGIL_LOCAL_SUMMARY_REQUEST, NULL, 0, -1, &err));
    int none = 99;
    assert_int_equal(vigil_local_receive(sv[0], buffer, &type, &none, &err), 0);
    assert_int_equal(type, VIGIL_LOCAL_SUMMARY_REQUEST);
    assert_int_equal(none, -1);

    close(fd);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
}

/* A descriptor the receiver did not ask for is closed, not left open. */
static void test_unwanted_descriptor_closed(void **state)
{
    int *sv = *state;
    int extra = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(extra >= 0);
    struct vigil_error err = {{0}};
    struct vigil_local_rank r = {.rank = 0, .size = 1};
    assert_true(vigil_local_send(sv[0], VIGIL_LOCAL_RANK, &r, sizeof r, extra, &err));
    close(extra);
    int before = open_descriptors();
    enum vigil_local_type type;
    assert_int_equal(vigil_local_receive(sv[1], buffer, &type, NULL, &err), sizeof r);
    assert_int_equal(type, VIGIL_LOCAL_RANK);
    assert_int_equal(open_descriptors(), before);
}

/* Several descriptors in one message (no message carries more than one):
 * the message is refused and every descriptor closed. */
static void test_several_descriptors_all_closed(void **state)
{
    int *sv = *state;
    int fds[3];
    for (int i = 0; i < 3; i++) {
        fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
        assert_true(fds[i] >= 0);
    }
    struct vigil_local_header header = {
        .magic = VIGIL_LOCAL_MAGIC,
        .version = VIGIL_LOCAL_VERSION,
        .type = VIGIL_LOCAL_SUMMARY_REQUEST,
    };
    send_raw(sv[0], &header, sizeof header, fds, 3);
    send_raw(sv[0], &header, sizeof header, fds, 3);
    for (int i = 0; i < 3; i++)
        close(fds[i]);

    int before = open_descriptors();
    enum vigil_local_type type;
    int fd = 99;
    struct vigil_error err = {{0}};
    errno = 0;
    assert_int_equal(vigil_local_receive(sv[1], buffer, &type, &fd, &err), -1);
    assert_int_equal(errno, EPROTO);
    assert_int_equal(fd, -1);
    test_assert_contains(err.message, "a message with 3 descriptors; none carries more than one");
    assert_int_equal(open_descriptors(), before);
    /* The same when the caller wants none. */
    assert_int_equal(vigil_local_receive(sv[1], buffer, &type, NULL, &err), -1);
    test_assert_contains(err.message, "3 descriptors");
    assert_int_equal(open_descriptors(), before);
}

static void test_message_over_the_limit(void **state)
{
    int *sv = *state;
    int big_bytes = VIGIL_LOCAL_MAX_BYTES * 2;
    assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big_bytes, sizeof big_bytes), 0);
    static _Alignas(8) unsigned char big[VIGIL_LOCAL_MAX_BYTES + 1];
    memset(big, 0, sizeof big);
    struct vigil_local_header header = {
        .magic = VIGIL_LOCAL_MAGIC,
        .version = VIGIL_LOCAL_VERSION,
        .type = VIGIL_LOCAL_REFUSED,
        .payload_bytes = (uint32_t)(sizeof big - sizeof header),
    };
    memcpy(big, &header, sizeof header);
    send_raw(sv[0], big, sizeof big, NULL, 0);
    /* And the sender refuses to make one. */
    struct vigil_error err = {{0}};
    errno = 0;
    assert_false(vigil_local_send(sv[0], VIGIL_LOCAL_REFUSED, big, PAYLOAD_MAX + 1, -1, &err));
    assert_int_equal(errno, EMSGSIZE);
    test_assert_contains(err.message, "is over the limit");
    assert_true(vigil_local_send(sv[0], VIGIL_LOCAL_REFUSED, "next", 4, -1, &err));

    enum vigil_local_type type;
    errno = 0;
    assert_int_equal(vigil_local_receive(sv[1], buffer, &type, NULL, &err), -1);
    assert_int_equal(errno, EPROTO);
    test_assert_contains(err.message, "a message longer than the limit of 16384 bytes");
    /* The connection goes on: the next message is whole. */
    assert_int_equal(vigil_local_receive(sv[1], buffer, &type, NULL, &err), 4);
    assert_int_equal(type, VIGIL_LOCAL_REFUSED);
    assert_memory_equal(buffer, "next", 4);
}

static void expect_bad_header(const struct vigil_local_header *header, size_t length,
                              const char *message)
{
    int sv[2];
    seqpacket_pair(sv);
    static _Alignas(8) unsigned char bytes[64];
    memset(bytes, 0, sizeof bytes);
    memcpy(bytes, header, sizeof *header);
    send_raw(sv[0], bytes, length, NULL, 0);
    enum vigil_local_type type;
    struct vigil_error err = {{0}};
    errno = 0;
    if (vigil_local_receive(sv[1], buffer, &type, NULL, &err) != -1)
        fail_msg("a message with %s is accepted", message);
    assert_int_equal(errno, EPROTO);
    test_assert_contains(err.message, message);
    close(sv[0]);
    close(sv[1]);
}

static void test_bad_headers(void **state)
{
    (void)state;
    const struct vigil_local_header good = {
        .magic = VIGIL_LOCAL_MAGIC,
        .version = VIGIL_LOCAL_VERSION,
        .type = VIGIL_LOCAL_RANK,
        .payload_bytes = sizeof(struct vigil_local_rank),
    };
    size_t length = sizeof good + sizeof(struct vigil_local_rank);
    struct vigil_local_header h = good;
    h.magic = 0x12345678;
    expect_bad_header(&h, length, "a message without the protocol's magic number (24 bytes)");
    h = good;
    /* A peer of the protocol before the run key and the report. */
    h.version = 2;
    expect_bad_header(&h, length, "a message of protocol version 2, not 3");
    h = good;
    h.type = 0;
    expect_bad_header(&h, length, "a message of unknown type 0");
    h = good;
    h.type = VIGIL_LOCAL_INSIGHT + 1;
    expect_bad_header(&h, length, "a message of unknown type 15");
    h = good;
    h.payload_bytes = 9;
    expect_bad_header(&h, length, "a message whose header gives 9 payload bytes, not the 8");
    expect_bad_header(&good, length + 1, "header gives 8 payload bytes, not the 9");
    h = good;
    h.reserved = 1;
    expect_bad_header(&h, length, "a message with its reserved field set");
    expect_bad_header(&good, 8, "a message shorter than its header (8 bytes)");
}

static void test_peer_closed(void **state)
{
    int *sv = *state;
    struct vigil_error err = {{0}};
    struct vigil_local_registered r = {.process_id = 5};
    assert_true(vigil_local_send(sv[0], VIGIL_LOCAL_REGISTERED, &r, sizeof r, -1, &err));
    close(sv[0]);
    sv[0] = -1;
    enum vigil_local_type type;
    /* What was sent before the close still arrives, then the end. */
    assert_int_equal(vigil_local_receive(sv[1], buffer, &type, NULL, &err), sizeof r);
    assert_int_equal(type, VIGIL_LOCAL_REGISTERED);
    errno = EINVAL;
    assert_int_equal(vigil_local_receive(sv[1], buffer, &type, NULL, &err), -1);
    assert_int_equal(errno, 0);
    test_assert_contains(err.message, "the peer closed the connection");
    /* Sending to a closed peer fails (without SIGPIPE, or this test dies). */
    errno = 0;
    assert_false(vigil_local_send(sv[1], VIGIL_LOCAL_SUMMARY_REQUEST, NULL, 0, -1, &err));
    assert_int_equal(errno, EPIPE);
    test_assert_contains(err.message, "cannot send a summary request message: Broken pipe");
}

static void test_send_unknown_type(void **state)
{
    int *sv = *state;
    struct vigil_error err = {{0}};
    errno = 0;
    assert_false(vigil_local_send(sv[0], (enum vigil_local_type)77, NULL, 0, -1, &err));
    assert_int_equal(errno, EINVAL);
    test_assert_contains(err.message, "unknown type 77");
}

/* ---- SPOOL ---------------------------------------------------------------------------------- */

/* `vigil spool resend|replay`: a known operation, a terminated path,
 * absolute to replay and empty to resend; the answer is the same layout,
 * the request's. */
static void test_spool_request(void **state)
{
    (void)state;
    static struct vigil_local_spool request, out;
    struct vigil_error err = {{0}};
    memset(&request, 0, sizeof request);
    request.op = VIGIL_LOCAL_SPOOL_RESEND;
    assert_true(vigil_local_decode_fixed(VIGIL_LOCAL_SPOOL, &request, sizeof request, &out, &err));
    assert_int_equal(out.op, VIGIL_LOCAL_SPOOL_RESEND);
    assert_string_equal(vigil_local_type_name(VIGIL_LOCAL_SPOOL), "spool");
    request.op = VIGIL_LOCAL_SPOOL_REPLAY;
    strcpy(request.path, "/var/lib/vigil/spool/00000000000000000001.spool.damaged");
    assert_true(vigil_local_decode_fixed(VIGIL_LOCAL_SPOOL, &request, sizeof request, &out, &err));
    assert_string_equal(out.path, request.path);
    strcpy(request.path, "relative.damaged");
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_SPOOL, &request, sizeof request, &out, &err));
    test_assert_contains(err.message, "replay needs an absolute path, not \"relative.damaged\"");
    memset(request.path, 'x', sizeof request.path);
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_SPOOL, &request, sizeof request, &out, &err));
    test_assert_contains(err.message, "spool: the path is not terminated");
    memset(request.path, 0, sizeof request.path);
    request.op = 3;
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_SPOOL, &request, sizeof request, &out, &err));
    test_assert_contains(err.message, "spool: unknown operation 3");
    request.op = VIGIL_LOCAL_SPOOL_RESEND;
    request.reserved = 9;
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_SPOOL, &request, sizeof request, &out, &err));
    test_assert_contains(err.message, "spool: the reserved field is 0x9, not 0");
    request.reserved = 0;
    strcpy(request.path, "/var/lib/vigil/spool/x.damaged");
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_SPOOL, &request, sizeof request, &out, &err));
    test_assert_contains(err.message, "spool: resend names no file, not \"/var/lib/vigil/spool/");
    memset(request.path, 0, sizeof request.path);
    assert_false(
        vigil_local_decode_fixed(VIGIL_LOCAL_SPOOL, &request, sizeof request - 1, &out, &err));
    test_assert_contains(err.message, "a spool message of 4127 bytes; it has 4128");
}

/* ---- JOB ---------------------------------------------------------------------------------- */

static void test_job_round_trip(void **state)
{
    (void)state;
    struct vigil_error err = {{0}};
    size_t bytes =
        vigil_local_encode_job(buffer, true, "4242", "1", "jörg", 1000, "node[01-04],gpu3", &err);
    assert_int_equal(bytes, sizeof(struct vigil_local_job) + 4 + 1 + strlen("jörg") +
                                strlen("node[01-04],gpu3"));
    struct vigil_local_job_info info;
    if (!vigil_local_decode_job(buffer, bytes, &info, &err))
        fail_msg("a job message we encoded is refused: %s", err.message);
    assert_int_equal(info.fixed.flags, VIGIL_LOCAL_JOB_BEGIN);
    assert_int_equal(info.fixed.uid, 1000);
    assert_int_equal(info.fixed.job_bytes, 4);
    assert_memory_equal(info.job, "4242", 4);
    assert_int_equal(info.fixed.step_bytes, 1);
    assert_memory_equal(info.step, "1", 1);
    assert_int_equal(info.fixed.user_bytes, strlen("jörg"));
    assert_memory_equal(info.user, "jörg", strlen("jörg"));
    assert_memory_equal(info.nodes, "node[01-04],gpu3", info.fixed.nodes_bytes);

    /* An end of the whole job, nothing else known. */
    bytes = vigil_local_encode_job(buffer, false, "9", NULL, NULL, VIGIL_LOCAL_JOB_UID_UNKNOWN,
                                   NULL, &err);
    assert_int_equal(bytes, sizeof(struct vigil_local_job) + 1);
    assert_true(vigil_local_decode_job(buffer, bytes, &info, &err));
    assert_int_equal(info.fixed.flags, 0);
    assert_int_equal(info.fixed.uid, VIGIL_LOCAL_JOB_UID_UNKNOWN);
    assert_int_equal(info.fixed.step_bytes + info.fixed.user_bytes + info.fixed.nodes_bytes, 0);
}

/* Each bad string is refused by the encoder and the decoder alike, with a
 * message naming it. */
static void test_job_bad_strings(void **state)
{
    (void)state;
    char long_id[VIGIL_LOCAL_JOB_ID_MAX + 2];
    memset(long_id, '7', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    char long_nodes[VIGIL_LOCAL_JOB_NODES_MAX + 2];
    memset(long_nodes, 'n', sizeof long_nodes - 1);
    long_nodes[sizeof long_nodes - 1] = '\0';
    const struct {
        const char *job, *step, *user, *nodes, *expected;
    } cases[] = {
        {"", NULL, NULL, NULL, "the job id is empty"},
        {long_id, NULL, NULL, NULL, "the job id is 65 bytes, over the limit of 64"},
        {"42 43", NULL, NULL, NULL, "the job id is not printable ASCII"},
        {"4\xff", NULL, NULL, NULL, "the job id is not printable ASCII"},
        {"42", "0\t", NULL, NULL, "the step id is not printable ASCII"},
        {"42", NULL, "j\xc3", NULL, "the user is not valid UTF-8"},
        {"42", NULL, "\xc0\xaf", NULL, "the user is not valid UTF-8"},     /* overlong "/" */
        {"42", NULL, "\xed\xa0\x80", NULL, "the user is not valid UTF-8"}, /* a surrogate */
        {"42", NULL, "me\n", NULL, "the user has a control character"},
        {"42", NULL, NULL, "n1, n2", "the node list is not printable ASCII"},
        {"42", NULL, NULL, long_nodes, "the node list is 8193 bytes, over the limit of 8192"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct vigil_error err = {{0}};
        size_t bytes = vigil_local_encode_job(buffer, true, cases[i].job, cases[i].step,
                                              cases[i].user, 0, cases[i].nodes, &err);
        assert_int_equal(bytes, 0);
        if (strstr(err.message, cases[i].expected) == NULL)
            fail_msg("case %zu: \"%s\" does not say \"%s\"", i, err.message, cases[i].expected);
        /* The same strings put in by hand reach the decoder's checks. */
        const char *texts[4] = {cases[i].job, cases[i].step, cases[i].user, cases[i].nodes};
        struct vigil_local_job head = {.flags = VIGIL_LOCAL_JOB_BEGIN};
        uint16_t *lengths[4] = {&head.job_bytes, &head.step_bytes, &head.user_bytes,
                                &head.nodes_bytes};
        size_t at = sizeof head;
        for (size_t t = 0; t < 4; t++) {
            size_t length = texts[t] != NULL ? strlen(texts[t]) : 0;
            memcpy(buffer + at, texts[t] != NULL ? texts[t] : "", length);
            at += length;
            *lengths[t] = (uint16_t)length;
        }
        memcpy(buffer, &head, sizeof head);
        struct vigil_local_job_info info;
        assert_false(vigil_local_decode_job(buffer, at, &info, &err));
        assert_non_null(strstr(err.message, "job: "));
        if (strstr(err.message, cases[i].expected) == NULL)
            fail_msg("case %zu decoded: \"%s\" does not say \"%s\"", i, err.message,
                     cases[i].expected);
    }
}

static void test_job_bad_layout(void **state)
{
    (void)state;
    struct vigil_error err = {{0}};
    size_t bytes = vigil_local_encode_job(buffer, true, "4242", "0", "me", 0, "n1", &err);
    assert_int_not_equal(bytes, 0);
    struct vigil_local_job_info info;
    /* Every truncation, the fixed part's included. */
    for (size_t cut = 0; cut < bytes; cut++) {
        assert_false(vigil_local_decode_job(buffer, cut, &info, &err));
        assert_non_null(strstr(err.message, cut < sizeof(struct vigil_local_job)
                                                ? "shorter than its fixed part"
                                                : "its strings take"));
    }
    /* A byte more than the strings say. */
    assert_false(vigil_local_decode_job(buffer, bytes + 1, &info, &err));
    assert_non_null(strstr(err.message, "its strings take 9 bytes but 10 follow"));
    /* An unknown flag. */
    struct vigil_local_job head;
    memcpy(&head, buffer, sizeof head);
    head.flags |= 1u << 7;
    memcpy(buffer, &head, sizeof head);
    assert_false(vigil_local_decode_job(buffer, bytes, &info, &err));
    assert_string_equal(err.message, "job: unknown flags 0x81");
    /* A NUL in the job id. */
    head.flags = 0;
    memcpy(buffer, &head, sizeof head);
    buffer[sizeof head + 1] = '\0';
    assert_false(vigil_local_decode_job(buffer, bytes, &info, &err));
    assert_string_equal(err.message, "job: the job id is not printable ASCII without spaces");
    /* JOB_NOTED has no payload. */
    assert_true(vigil_local_decode_fixed(VIGIL_LOCAL_JOB_NOTED, buffer, 0, NULL, &err));
    assert_false(vigil_local_decode_fixed(VIGIL_LOCAL_JOB_NOTED, buffer, 1, NULL, &err));
    assert_string_equal(vigil_local_type_name(VIGIL_LOCAL_JOB), "job");
}

/* Over a real socket: the largest JOB the limits allow fits in a message. */
static void test_job_largest_fits(void **state)
{
    (void)state;
    char job[VIGIL_LOCAL_JOB_ID_MAX + 1], step[VIGIL_LOCAL_JOB_STEP_MAX + 1];
    char user[VIGIL_LOCAL_JOB_USER_MAX + 1], nodes[VIGIL_LOCAL_JOB_NODES_MAX + 1];
    memset(job, '1', sizeof job - 1), job[sizeof job - 1] = '\0';
    memset(step, '2', sizeof step - 1), step[sizeof step - 1] = '\0';
    memset(user, 'u', sizeof user - 1), user[sizeof user - 1] = '\0';
    memset(nodes, 'n', sizeof nodes - 1), nodes[sizeof nodes - 1] = '\0';
    struct vigil_error err = {{0}};
    size_t bytes = vigil_local_encode_job(buffer, false, job, step, user, 5, nodes, &err);
    assert_int_not_equal(bytes, 0);
    int pair[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, pair), 0);
    assert_true(vigil_local_send(pair[0], VIGIL_LOCAL_JOB, buffer, bytes, -1, &err));
    static _Alignas(8) unsigned char received[VIGIL_LOCAL_MAX_BYTES];
    enum vigil_local_type type;
    assert_int_equal(vigil_local_receive(pair[1], received, &type, NULL, &err), (ssize_t)bytes);
    assert_int_equal(type, VIGIL_LOCAL_JOB);
    struct vigil_local_job_info info;
    assert_true(vigil_local_decode_job(received, bytes, &info, &err));
    assert_int_equal(info.fixed.nodes_bytes, VIGIL_LOCAL_JOB_NODES_MAX);
    close(pair[0]);
    close(pair[1]);
}

/* REGISTERED_APART: the key and the reason round-trip; a long reason is
 * cut; bad lengths, an invalid key, a NUL in the reason are refused. */
static void test_registered_apart(void **state)
{
    (void)state;
    size_t n =
        vigil_local_encode_registered_apart(buffer, 42, "run-7@uid1", "run run-7 is not uid 1's");
    uint64_t id = 0;
    char key[VIGIL_RUN_KEY_MAX + 1], why[64];
    struct vigil_error err;
    assert_true(vigil_local_decode_registered_apart(buffer, n, &id, key, why, sizeof why, &err));
    assert_int_equal(id, 42);
    assert_string_equal(key, "run-7@uid1");
    assert_string_equal(why, "run run-7 is not uid 1's");
    /* Cut to the caller's buffer. */
    char small[4];
    assert_true(
        vigil_local_decode_registered_apart(buffer, n, &id, key, small, sizeof small, &err));
    assert_string_equal(small, "run");
    char long_reason[VIGIL_LOCAL_APART_REASON_MAX + 100];
    memset(long_reason, 'x', sizeof long_reason - 1);
    long_reason[sizeof long_reason - 1] = '\0';
    n = vigil_local_encode_registered_apart(buffer, 1, "k", long_reason);
    assert_int_equal(n, sizeof(struct vigil_local_registered_apart) + 1 +
                            VIGIL_LOCAL_APART_REASON_MAX);
    assert_true(vigil_local_decode_registered_apart(buffer, n, &id, key, NULL, 0, &err));

    n = vigil_local_encode_registered_apart(buffer, 1, "k", "why");
    assert_false(
        vigil_local_decode_registered_apart(buffer, n - 1, &id, key, why, sizeof why, &err));
    test_assert_contains(err.message, "its strings take 4 bytes but 3 follow");
    assert_false(vigil_local_decode_registered_apart(buffer, 8, &id, key, why, sizeof why, &err));
    test_assert_contains(err.message, "shorter than its fixed part");
    buffer[sizeof(struct vigil_local_registered_apart)] = ' ';
    assert_false(vigil_local_decode_registered_apart(buffer, n, &id, key, why, sizeof why, &err));
    test_assert_contains(err.message, "the run key is not");
    n = vigil_local_encode_registered_apart(buffer, 1, "k", "why");
    buffer[n - 2] = '\0';
    assert_false(vigil_local_decode_registered_apart(buffer, n, &id, key, why, sizeof why, &err));
    test_assert_contains(err.message, "a NUL byte");
}

/* Root tries root's socket, then the shared one; a user only the shared
 * one; a path that cannot take the suffix is no one's. */
static void test_daemon_sockets(void **state)
{
    (void)state;
    char paths[2][VIGIL_SOCKET_PATH_MAX];
    assert_int_equal(vigil_local_daemon_sockets("/run/vigil/vigild.sock", 0, paths), 2);
    assert_string_equal(paths[0], "/run/vigil/vigild.sock.root");
    assert_string_equal(paths[1], "/run/vigil/vigild.sock");
    assert_int_equal(vigil_local_daemon_sockets("/run/vigil/vigild.sock", 1000, paths), 1);
    assert_string_equal(paths[0], "/run/vigil/vigild.sock");
    char longest[VIGIL_SOCKET_PATH_MAX];
    memset(longest, 'x', sizeof longest);
    longest[0] = '/';
    longest[VIGIL_SOCKET_PATH_MAX - 1 - strlen(VIGIL_ROOT_SOCKET_SUFFIX)] = '\0';
    assert_int_equal(vigil_local_daemon_sockets(longest, 0, paths), 2);
    longest[VIGIL_SOCKET_PATH_MAX - 1 - strlen(VIGIL_ROOT_SOCKET_SUFFIX)] = 'x';
    longest[VIGIL_SOCKET_PATH_MAX - strlen(VIGIL_ROOT_SOCKET_SUFFIX)] = '\0';
    assert_int_equal(vigil_local_daemon_sockets(longest, 0, paths), 0);
    assert_int_equal(vigil_local_daemon_sockets(longest, 1000, paths), 0);
}

/* A test over a socket pair (pair_open). */
#define OVER_A_SOCKET(test) cmocka_unit_test_setup_teardown(test, pair_open, pair_close)

TEST_MAIN(cmocka_unit_test(test_register_round_trip),
          cmocka_unit_test(test_register_without_job_or_argv),
          cmocka_unit_test(test_register_argv_truncated),
          cmocka_unit_test(test_register_long_program_cut),
          cmocka_unit_test(test_register_malformed), cmocka_unit_test(test_fixed_sizes),
          cmocka_unit_test(test_summary), cmocka_unit_test(test_insight),
          cmocka_unit_test(test_rank_and_status_request), cmocka_unit_test(test_report),
          cmocka_unit_test(test_refused_text), cmocka_unit_test(test_daemon_sockets),
          cmocka_unit_test(test_bad_headers), cmocka_unit_test(test_job_round_trip),
          cmocka_unit_test(test_job_bad_strings), cmocka_unit_test(test_job_bad_layout),
          cmocka_unit_test(test_job_largest_fits), cmocka_unit_test(test_registered_apart),
          cmocka_unit_test(test_spool_request), OVER_A_SOCKET(test_type_names),
          OVER_A_SOCKET(test_send_and_receive_with_descriptor),
          OVER_A_SOCKET(test_unwanted_descriptor_closed),
          OVER_A_SOCKET(test_several_descriptors_all_closed),
          OVER_A_SOCKET(test_message_over_the_limit), OVER_A_SOCKET(test_peer_closed),
          OVER_A_SOCKET(test_send_unknown_type))
