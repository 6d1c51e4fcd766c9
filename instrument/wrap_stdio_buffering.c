/* vigil — the streams a program makes unbuffered: setvbuf with _IONBF,
 * setbuf and setbuffer with no buffer.
 *
 * Every fwrite on such a stream is a write(2) of its own, made by glibc
 * inside the call where no wrapper sees it: the POSIX layer shows nothing
 * and stdio's counts look like a buffered stream's. Only this says so, for
 * the unbuffered_stdio finding at exit (report/insight.c). Not counted as
 * operations: the calls are rare and move no data. The files are kept by
 * id, at most VIGIL_INSIGHT_UNBUFFERED_MAX, without lock or heap. */
#include <stdatomic.h>
#include <stdio.h>

#include "exit_report.h"
#include "preload.h"

PRELOAD_REAL_SLOT(setvbuf);
PRELOAD_REAL_SLOT(setbuf);
PRELOAD_REAL_SLOT(setbuffer);

static _Atomic uint32_t unbuffered[VIGIL_INSIGHT_UNBUFFERED_MAX];

static void note_unbuffered(FILE *fp)
{
    uint32_t id = preload_fd_get(preload_stream_fd(fp));
    if (id == VIGIL_FILE_NONE)
        return;
    for (int i = 0; i < VIGIL_INSIGHT_UNBUFFERED_MAX; i++) {
        uint32_t seen = atomic_load_explicit(&unbuffered[i], memory_order_relaxed);
        if (seen == id)
            return;
        if (seen == VIGIL_FILE_NONE && atomic_compare_exchange_strong(&unbuffered[i], &seen, id))
            return;
        if (seen == id) /* another thread took the slot for it */
            return;
    }
}

int setvbuf(FILE *restrict fp, char *restrict buf, int mode, size_t size)
{
    int ret = REAL(setvbuf)(fp, buf, mode, size);
    if (ret == 0 && mode == _IONBF)
        note_unbuffered(fp);
    return ret;
}

void setbuf(FILE *restrict fp, char *restrict buf)
{
    REAL(setbuf)(fp, buf);
    if (buf == NULL)
        note_unbuffered(fp);
}

void setbuffer(FILE *restrict fp, char *restrict buf, size_t size)
{
    REAL(setbuffer)(fp, buf, size);
    if (buf == NULL)
        note_unbuffered(fp);
}

int preload_unbuffered_paths(const char **paths, size_t *lengths)
{
    int count = 0;
    for (int i = 0; i < VIGIL_INSIGHT_UNBUFFERED_MAX; i++) {
        uint32_t id = atomic_load_explicit(&unbuffered[i], memory_order_relaxed);
        if (id == VIGIL_FILE_NONE)
            break;
        paths[count] = preload_file_path(id, &lengths[count]);
        if (paths[count] != NULL)
            count++;
    }
    return count;
}
