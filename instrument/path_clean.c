/* vigil — one name per file: an absolute path made lexically clean, the
 * way Darshan names files, so that "./out", "out" and "dir/../dir/out"
 * seen from one working directory are one file in the report, the
 * warehouse and a job's shared-file statistics.
 *
 * Kept apart from files.c so that the unit tests can run it on its own. */
#include <stdbool.h>
#include <string.h>

#include "preload.h"

/* Whether the component of `length` bytes at `c` is "." or "..". */
static bool is_dot(const char *c, size_t length)
{
    return length == 1 && c[0] == '.';
}

static bool is_dot_dot(const char *c, size_t length)
{
    return length == 2 && c[0] == '.' && c[1] == '.';
}

size_t preload_path_clean(char *path, size_t length, size_t physical_length)
{
    if (length == 0 || path[0] != '/')
        return length; /* a name such as "<stdout>", or nothing */
    /* The output never outgrows the input, so it is written over the input
     * behind the reading position. `physical_end` is how much of the
     * output is made of the physical prefix's components: only those may
     * be removed by a "..". */
    size_t out = 0, physical_end = 0;
    size_t i = 0;
    while (i < length) {
        while (i < length && path[i] == '/')
            i++;
        size_t start = i;
        while (i < length && path[i] != '/')
            i++;
        size_t component = i - start;
        if (component == 0 || is_dot(path + start, component))
            continue;
        if (is_dot_dot(path + start, component)) {
            /* Root's parent is root. */
            if (out == 0)
                continue;
            /* A component the program named may be a symbolic link, whose
             * ".." is not the lexical parent: that one stays as written
             * (exact, if not pretty); the working directory's are real. */
            if (out == physical_end) {
                do
                    out--;
                while (path[out] != '/');
                physical_end = out;
                continue;
            }
        }
        bool physical = out == physical_end && i <= physical_length;
        path[out] = '/';
        memmove(path + out + 1, path + start, component);
        out += 1 + component;
        if (physical)
            physical_end = out;
    }
    if (out == 0)
        path[out++] = '/';
    path[out] = '\0';
    return out;
}
