/* vigil — the streams' unlocked calls (fread_unlocked, fwrite_unlocked,
 * fputs_unlocked…, GNU's) and getdelim/getline.
 *
 * GNU's coreutils, sed, grep and tar are built with gnulib's unlocked-io,
 * which turns their fread, fwrite, fputs and fputc into the _unlocked
 * calls, and they read lines with getdelim: without these, `sort`, `sed`
 * or `grep` showed no byte read or written. Each _unlocked call counts as
 * its base call; getline is getdelim with '\n'. What no wrapper can see:
 * getc_unlocked and putc_unlocked (and getchar_unlocked, putchar_unlocked)
 * are macros that read and write the stream's buffer in place, calling
 * the library only when it is empty or full. */
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "preload.h"

/* glibc's optimised headers define some of these as macros (fread_unlocked
 * and fwrite_unlocked for small constant sizes); the wrappers are the
 * functions. */
#undef fread_unlocked
#undef fwrite_unlocked
#undef getc_unlocked
#undef putc_unlocked
#undef getchar_unlocked
#undef putchar_unlocked
#undef fgetc_unlocked
#undef fputc_unlocked

PRELOAD_REAL_SLOT(fread_unlocked);
PRELOAD_REAL_SLOT(fwrite_unlocked);
PRELOAD_REAL_SLOT(fgets_unlocked);
PRELOAD_REAL_SLOT(fputs_unlocked);
PRELOAD_REAL_SLOT(fgetc_unlocked);
PRELOAD_REAL_SLOT(fputc_unlocked);
PRELOAD_REAL_SLOT(getc_unlocked);
PRELOAD_REAL_SLOT(putc_unlocked);
PRELOAD_REAL_SLOT(getchar_unlocked);
PRELOAD_REAL_SLOT(putchar_unlocked);
PRELOAD_REAL_SLOT(fflush_unlocked);
PRELOAD_REAL_SLOT(getdelim);
PRELOAD_REAL_SLOT(__getdelim);
PRELOAD_REAL_SLOT(getline);

/* glibc's own name for getdelim, exported and called by tar, not declared. */
ssize_t __getdelim(char **restrict line, size_t *restrict size, int delim, FILE *restrict fp);

PRELOAD_WRAP(size_t, fread_unlocked, (void *ptr, size_t size, size_t n, FILE *fp),
             (ptr, size, n, fp),
             preload_end_stream_items(&call, VIGIL_OP_STDIO_FREAD, fp, size, n, ret))

PRELOAD_WRAP(size_t, fwrite_unlocked, (const void *ptr, size_t size, size_t n, FILE *fp),
             (ptr, size, n, fp),
             preload_end_stream_items(&call, VIGIL_OP_STDIO_FWRITE, fp, size, n, ret))

PRELOAD_WRAP(char *, fgets_unlocked, (char *s, int n, FILE *fp), (s, n, fp),
             preload_end_fgets(&call, fp, n, ret))

PRELOAD_WRAP(int, fputs_unlocked, (const char *s, FILE *fp), (s, fp),
             preload_end_puts(&call, VIGIL_OP_STDIO_FPUTS, fp, s, ret, 0))

PRELOAD_WRAP(int, fgetc_unlocked, (FILE * fp), (fp),
             preload_end_getc(&call, VIGIL_OP_STDIO_FGETC, fp, ret))

PRELOAD_WRAP(int, getc_unlocked, (FILE * fp), (fp),
             preload_end_getc(&call, VIGIL_OP_STDIO_GETC, fp, ret))

PRELOAD_WRAP(int, getchar_unlocked, (void), (),
             preload_end_getc(&call, VIGIL_OP_STDIO_GETCHAR, stdin, ret))

PRELOAD_WRAP(int, fputc_unlocked, (int c, FILE *fp), (c, fp),
             preload_end_putc(&call, VIGIL_OP_STDIO_FPUTC, fp, ret))

PRELOAD_WRAP(int, putc_unlocked, (int c, FILE *fp), (c, fp),
             preload_end_putc(&call, VIGIL_OP_STDIO_PUTC, fp, ret))

PRELOAD_WRAP(int, putchar_unlocked, (int c), (c),
             preload_end_putc(&call, VIGIL_OP_STDIO_PUTCHAR, stdout, ret))

PRELOAD_WRAP(int, fflush_unlocked, (FILE * fp), (fp),
             preload_end_meta(&call, VIGIL_OP_STDIO_FFLUSH, preload_stream_fd(fp), ret))

/* getdelim and getline: the bytes of the line stored (its delimiter
 * included), or -1 at end of file or on an error (the stream's error flag
 * tells which). What it asked for is unknown until it found the end. */
static void end_getdelim(const struct preload_call *call, FILE *fp, ssize_t ret)
{
    int fd = preload_stream_fd(fp);
    uint64_t moved = ret > 0 ? (uint64_t)ret : 0;
    struct preload_outcome o = {
        .op = VIGIL_OP_STDIO_GETDELIM,
        .fd = fd,
        .result = ret,
        .failed = ret < 0 && preload_stream_error(fp),
        .bytes_asked = moved,
        .bytes_moved = moved,
        .offset_bytes = preload_offset_advance(fd, (int64_t)moved, true),
    };
    preload_call_end(call, &o);
}

PRELOAD_WRAP(ssize_t, getdelim,
             (char **restrict line, size_t *restrict size, int delim, FILE *restrict fp),
             (line, size, delim, fp), end_getdelim(&call, fp, ret))

PRELOAD_WRAP(ssize_t, __getdelim,
             (char **restrict line, size_t *restrict size, int delim, FILE *restrict fp),
             (line, size, delim, fp), end_getdelim(&call, fp, ret))

PRELOAD_WRAP(ssize_t, getline, (char **restrict line, size_t *restrict size, FILE *restrict fp),
             (line, size, fp), end_getdelim(&call, fp, ret))
