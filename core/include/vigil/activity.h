/* vigil — the activity record and the name record.
 *
 * One activity is one intercepted call. The record is fixed-size so that the
 * preload library can write it into the shared ring with plain stores, and so
 * that every reader can validate it field by field. */
#ifndef VIGIL_ACTIVITY_H
#define VIGIL_ACTIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vigil/error.h"

/* Record types are distinctive byte values so that zeroed or random memory
 * is unlikely to pass for a record. */
enum vigil_record_type {
    VIGIL_RECORD_ACTIVITY = 0xA1,
    VIGIL_RECORD_NAME = 0xB2,
};

enum vigil_activity_flags {
    VIGIL_ACTIVITY_COLLECTIVE = 1u << 0,  /* an MPI-IO collective call */
    VIGIL_ACTIVITY_NONBLOCKING = 1u << 1, /* bytes are counted at completion */
};
#define VIGIL_ACTIVITY_KNOWN_FLAGS (VIGIL_ACTIVITY_COLLECTIVE | VIGIL_ACTIVITY_NONBLOCKING)

#define VIGIL_OFFSET_UNKNOWN (-1)
#define VIGIL_FILE_NONE      0u

struct vigil_activity {
    uint8_t record_type; /* VIGIL_RECORD_ACTIVITY */
    uint8_t layer;       /* enum vigil_layer */
    uint16_t op;         /* enum vigil_op, belonging to layer */
    uint32_t file_id;    /* interned path (a name record), or VIGIL_FILE_NONE */
    /* Per-process sequence number, set by vigil_ring_push from the ring
     * position: consecutive for everything that entered the ring, so a lost
     * record downstream shows as a gap. */
    uint64_t seq;
    /* start_ns of the call that made this one, in the same thread (an MPI-IO
     * call is the parent of the POSIX calls it makes); 0 for none. The
     * parent's own record is written when it ends, after its children, so it
     * is referred to by when it began rather than by its seq. */
    uint64_t parent_start_ns;
    /* CLOCK_MONOTONIC ns everywhere but inside a ring: there the three
     * times are in the ring's ticks (clock.h), which the hot path reads for
     * half the price, and vigil_ring_drain converts them. */
    uint64_t start_ns;
    uint64_t end_ns;
    int64_t offset_bytes; /* VIGIL_OFFSET_UNKNOWN when it cannot be known */
    uint64_t bytes_asked;
    int64_t result;      /* the return value the caller saw */
    int32_t errno_value; /* errno the caller saw when the call failed, else 0 */
    uint32_t thread_id;  /* kernel thread id */
    uint32_t flags;      /* enum vigil_activity_flags */
    uint32_t comm_size;  /* MPI-IO: processes in the file's communicator; else 0 */
};

_Static_assert(sizeof(struct vigil_activity) == 80, "activity record layout changed");
_Static_assert(sizeof(struct vigil_activity) <= 96, "activity record must stay within 96 bytes");

/* Longest path a name record carries, in bytes, without the terminating NUL.
 * Linux's PATH_MAX (4096) counts the NUL. */
#define VIGIL_PATH_MAX 4095

/* A path interned by a process: its activities name it by file_id. */
struct vigil_name {
    uint32_t file_id;              /* never VIGIL_FILE_NONE */
    uint16_t length;               /* bytes in path, without the NUL */
    char path[VIGIL_PATH_MAX + 1]; /* NUL-terminated; contains no other NUL */
};

/* Checks every field a reader can check: record type, layer, operation of
 * that layer, end not before start, known flags, errno in range. On failure
 * says which field is wrong and why. */
bool vigil_activity_check(const struct vigil_activity *activity, struct vigil_error *err);

/* Checks a path for a name record: length within VIGIL_PATH_MAX, no NUL
 * byte inside, file id not VIGIL_FILE_NONE. */
bool vigil_name_check(uint32_t file_id, const char *path, size_t length, struct vigil_error *err);

#endif
