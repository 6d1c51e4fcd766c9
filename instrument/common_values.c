/* vigil — a file's most common access sizes and strides (Darshan's
 * ACCESS1..4 and STRIDE1..4), counted in a few slots whatever the number of
 * distinct values.
 *
 * The space-saving algorithm, with each entry's error kept: a value that
 * finds the table full takes the rarest entry's place, and its count
 * starts from the evicted one's (an upper bound of its own) with that
 * carried count recorded as its error. count - error is then never above
 * the value's true count, and is exactly it when the error is 0 (the value
 * came into a table that had never evicted anything since it was cleared).
 * The report lists count - error, so that no count it gives overstates
 * what happened (Darshan's are exact for the first 32 values it met and
 * blind to the others: lower bounds too).
 *
 * Tables merge the same way (a thread's into its file's, at eviction or at
 * exit): an entry carries its count and its error into the other table. */
#include <string.h>

#include "preload.h"
#include "vigil/report.h"

void preload_common_note(struct preload_common *t, int64_t value, uint64_t count, uint64_t error)
{
    uint32_t at = 0;
    while (at < t->used && t->value[at] != value)
        at++;
    uint64_t total = count, wrong = error; /* the error's sum: 64 bits */
    if (at < t->used) {
        total += t->count[at];
        wrong += t->error[at];
    } else if (t->used < PRELOAD_COMMON_SLOTS) {
        at = t->used++;
    } else {
        /* Full: the rarest goes; what it had counted may have been ours. */
        at = 0;
        for (uint32_t i = 1; i < t->used; i++)
            if (t->count[i] < t->count[at])
                at = i;
        total += t->count[at];
        wrong += t->count[at];
    }
    if (wrong > UINT32_MAX) { /* count - error kept, in the error's 32 bits */
        total -= wrong - UINT32_MAX;
        wrong = UINT32_MAX;
    }
    /* To the front: the next call of the same value is the inline case. */
    memmove(&t->value[1], &t->value[0], at * sizeof t->value[0]);
    memmove(&t->count[1], &t->count[0], at * sizeof t->count[0]);
    memmove(&t->error[1], &t->error[0], at * sizeof t->error[0]);
    t->value[0] = value;
    t->count[0] = total;
    t->error[0] = (uint32_t)wrong;
}

void preload_common_merge(struct preload_common *into, const struct preload_common *from)
{
    /* Least frequent first, so that the most frequent end at the front. */
    for (uint32_t i = from->used; i-- > 0;)
        preload_common_note(into, from->value[i], from->count[i], from->error[i]);
}

/* Darshan's order: the larger count first, the larger value on a tie. */
static bool listed_before(const struct vigil_report_common *a, const struct vigil_report_common *b)
{
    return a->count != b->count ? a->count > b->count : a->value > b->value;
}

int preload_common_top(const struct preload_common *t, struct vigil_report_common *out)
{
    int n = 0;
    for (uint32_t i = 0; i < t->used; i++) {
        /* Darshan lists no 0 (a zero size, a consecutive access) and no
         * negative stride (it has none: a backward access counts as 0). */
        uint64_t lower = t->count[i] - t->error[i];
        if (t->value[i] <= 0 || lower == 0)
            continue;
        struct vigil_report_common e = {
            .value = t->value[i], .count = lower, .exact = t->error[i] == 0};
        /* Insertion into the top VIGIL_REPORT_COMMON, best first. */
        int at = n < VIGIL_REPORT_COMMON ? n++ : VIGIL_REPORT_COMMON;
        while (at > 0 && listed_before(&e, &out[at - 1])) {
            if (at < VIGIL_REPORT_COMMON)
                out[at] = out[at - 1];
            at--;
        }
        if (at < VIGIL_REPORT_COMMON)
            out[at] = e;
    }
    return n;
}
