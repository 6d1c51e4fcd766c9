/* vigil — validation of activity and name records.
 *
 * Records reach vigild through memory the instrumented program can scribble
 * on, and vigil-txd through the network: every field is checked before
 * anything downstream relies on it. */
#include <string.h>

#include "vigil/activity.h"
#include "vigil/ontology.h"

/* Linux errno values stay well below this; anything above is garbage. */
#define ERRNO_LIMIT 4096

bool vigil_activity_check(const struct vigil_activity *a, struct vigil_error *err)
{
    if (a->record_type != VIGIL_RECORD_ACTIVITY) {
        vigil_error_set(err, "record type 0x%02x is not an activity (0x%02x)", a->record_type,
                        VIGIL_RECORD_ACTIVITY);
        return false;
    }
    if (vigil_layer_name(a->layer) == NULL) {
        vigil_error_set(err, "activity seq %llu: unknown layer %u", (unsigned long long)a->seq,
                        a->layer);
        return false;
    }
    if (vigil_op_layer(a->op) != a->layer) {
        vigil_error_set(err, "activity seq %llu: operation %u is not an operation of layer %s",
                        (unsigned long long)a->seq, a->op, vigil_layer_name(a->layer));
        return false;
    }
    if (a->end_ns < a->start_ns) {
        vigil_error_set(err, "activity seq %llu: ends (%llu ns) before it starts (%llu ns)",
                        (unsigned long long)a->seq, (unsigned long long)a->end_ns,
                        (unsigned long long)a->start_ns);
        return false;
    }
    if (a->parent_start_ns > a->start_ns) {
        vigil_error_set(err, "activity seq %llu: parent starts (%llu ns) after its child (%llu ns)",
                        (unsigned long long)a->seq, (unsigned long long)a->parent_start_ns,
                        (unsigned long long)a->start_ns);
        return false;
    }
    if (a->offset_bytes < VIGIL_OFFSET_UNKNOWN) {
        vigil_error_set(err, "activity seq %llu: negative offset %lld", (unsigned long long)a->seq,
                        (long long)a->offset_bytes);
        return false;
    }
    if (a->errno_value < 0 || a->errno_value >= ERRNO_LIMIT) {
        vigil_error_set(err, "activity seq %llu: errno %d out of range", (unsigned long long)a->seq,
                        a->errno_value);
        return false;
    }
    if (a->flags & ~(uint32_t)VIGIL_ACTIVITY_KNOWN_FLAGS) {
        vigil_error_set(err, "activity seq %llu: unknown flags 0x%x", (unsigned long long)a->seq,
                        a->flags & ~(uint32_t)VIGIL_ACTIVITY_KNOWN_FLAGS);
        return false;
    }
    return true;
}

bool vigil_name_check(uint32_t file_id, const char *path, size_t length, struct vigil_error *err)
{
    if (file_id == VIGIL_FILE_NONE) {
        vigil_error_set(err, "name record with file id 0, which means no file");
        return false;
    }
    if (length > VIGIL_PATH_MAX) {
        vigil_error_set(err, "file %u: path of %zu bytes, longer than %d", file_id, length,
                        VIGIL_PATH_MAX);
        return false;
    }
    if (memchr(path, '\0', length) != NULL) {
        vigil_error_set(err, "file %u: path contains a NUL byte", file_id);
        return false;
    }
    return true;
}
