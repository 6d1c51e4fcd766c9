/* vigil — the C library's streams (stdio). A stream's file is its
 * descriptor's (read from the FILE, see preload_stream_fd): the calls that
 * open and close streams keep the descriptor table up to date, since the
 * C library opens and closes the descriptors underneath with internal
 * calls that no wrapper sees. The variants (fopen64, _IO_getc, fseeko64,
 * __isoc99_fscanf…) count as their base call; fprintf and the other
 * variadic calls count under their own name, though they go through the
 * real v-function. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "preload.h"

/* Old headers defined getc and putc as macros. */
#undef getc
#undef putc

PRELOAD_REAL_SLOT(fopen);
PRELOAD_REAL_SLOT(fopen64);
PRELOAD_REAL_SLOT(fdopen);
PRELOAD_REAL_SLOT(freopen);
PRELOAD_REAL_SLOT(freopen64);
PRELOAD_REAL_SLOT(fclose);
PRELOAD_REAL_SLOT(fread);
PRELOAD_REAL_SLOT(fwrite);
PRELOAD_REAL_SLOT(fgets);
PRELOAD_REAL_SLOT(fputs);
PRELOAD_REAL_SLOT(fgetc);
PRELOAD_REAL_SLOT(fputc);
PRELOAD_REAL_SLOT(getc);
PRELOAD_REAL_SLOT(_IO_getc);
PRELOAD_REAL_SLOT(putc);
PRELOAD_REAL_SLOT(_IO_putc);
PRELOAD_REAL_SLOT(vfprintf);
PRELOAD_REAL_SLOT(vfscanf);
PRELOAD_REAL_SLOT(__isoc99_vfscanf);
PRELOAD_REAL_SLOT(fseek);
PRELOAD_REAL_SLOT(fseeko);
PRELOAD_REAL_SLOT(fseeko64);
PRELOAD_REAL_SLOT(ftell);
PRELOAD_REAL_SLOT(ftello);
PRELOAD_REAL_SLOT(ftello64);
PRELOAD_REAL_SLOT(rewind);
PRELOAD_REAL_SLOT(fflush);
PRELOAD_REAL_SLOT(fileno);
PRELOAD_REAL_SLOT(vprintf);
PRELOAD_REAL_SLOT(puts);
PRELOAD_REAL_SLOT(putchar);
PRELOAD_REAL_SLOT(getchar);
PRELOAD_REAL_SLOT(vscanf);
PRELOAD_REAL_SLOT(__isoc99_vscanf);

/* glibc's old names for getc and putc, still exported, no longer declared. */
int _IO_getc(FILE *fp);
int _IO_putc(int c, FILE *fp);

/* Under C99 and later, <stdio.h> renames fscanf, scanf, vfscanf and vscanf
 * to glibc's __isoc99_ functions (C99's %a); programs built in C89 mode
 * call the historical ones (GNU's %a). Both sets are wrapped, each under
 * its own symbol: the historical ones through asm labels, since their C
 * names now mean the __isoc99_ symbols. */
int __isoc99_fscanf(FILE *restrict fp, const char *restrict format, ...);
int __isoc99_vfscanf(FILE *restrict fp, const char *restrict format, va_list ap);
int __isoc99_scanf(const char *restrict format, ...);
int __isoc99_vscanf(const char *restrict format, va_list ap);
int wrap_fscanf(FILE *restrict fp, const char *restrict format, ...) __asm__("fscanf");
int wrap_vfscanf(FILE *restrict fp, const char *restrict format, va_list ap) __asm__("vfscanf");
int wrap_scanf(const char *restrict format, ...) __asm__("scanf");
int wrap_vscanf(const char *restrict format, va_list ap) __asm__("vscanf");

/* ---- opening and closing ------------------------------------------------- */

/* Ends a call that opens a stream on a path, like open(): the file comes
 * from the path (read only when libc did: see preload_path_was_read), and the stream's
 * descriptor now names it. With no path (freopen changing the mode of the
 * same file), the stream keeps `file_id`. */
static void end_stream_open(const struct preload_call *call, unsigned op, const char *path,
                            const char *mode, FILE *ret, uint32_t file_id)
{
    int saved_errno = errno;
    if (path != NULL && preload_path_was_read(ret == NULL, saved_errno))
        file_id = preload_file_for_path(AT_FDCWD, path);
    /* The stream starts at 0, but in append mode (where the position is
     * the end, which stdio finds by itself). */
    if (ret != NULL)
        preload_fd_set(preload_stream_fd(ret), file_id, 0, mode != NULL && strchr(mode, 'a'));
    struct preload_outcome o = {
        .op = op,
        .fd = -1,
        .file_id = file_id,
        .result = (int64_t)(intptr_t)ret,
        .failed = ret == NULL,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    errno = saved_errno;
    preload_call_end(call, &o);
}

PRELOAD_WRAP(FILE *, fopen, (const char *path, const char *mode), (path, mode),
             end_stream_open(&call, VIGIL_OP_STDIO_FOPEN, path, mode, ret, VIGIL_FILE_NONE))

PRELOAD_WRAP(FILE *, fopen64, (const char *path, const char *mode), (path, mode),
             end_stream_open(&call, VIGIL_OP_STDIO_FOPEN, path, mode, ret, VIGIL_FILE_NONE))

/* The descriptor already names its file (or not): its entry stays. */
FILE *fdopen(int fd, const char *mode)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(fdopen)(fd, mode);
    FILE *ret = REAL(fdopen)(fd, mode);
    struct preload_outcome o = {
        .op = VIGIL_OP_STDIO_FDOPEN,
        .fd = fd,
        .result = (int64_t)(intptr_t)ret,
        .failed = ret == NULL,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    preload_call_end(&call, &o);
    return ret;
}

/* freopen closes the stream's descriptor, whatever happens next (read
 * before the call: `fp` is the caller's open stream), and on success the
 * stream has a new one. */
static FILE *freopen_common(FILE *(*real)(const char *, const char *, FILE *), const char *path,
                            const char *mode, FILE *fp)
{
    int old_fd = preload_stream_fd(fp);
    uint32_t old_file_id = preload_fd_get(old_fd);
    struct preload_call call;
    if (!preload_call_begin(&call)) {
        FILE *ret = real(path, mode, fp);
        preload_fd_forget(old_fd, old_file_id);
        if (ret != NULL && path == NULL)
            preload_fd_set(preload_stream_fd(ret), old_file_id, 0, strchr(mode, 'a') != NULL);
        return ret;
    }
    FILE *ret = real(path, mode, fp);
    preload_fd_forget(old_fd, old_file_id);
    end_stream_open(&call, VIGIL_OP_STDIO_FREOPEN, path, mode, ret, old_file_id);
    return ret;
}

FILE *freopen(const char *path, const char *mode, FILE *fp)
{
    return freopen_common(REAL(freopen), path, mode, fp);
}

FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
    return freopen_common(REAL(freopen64), path, mode, fp);
}

/* fclose releases the stream and its descriptor even when it fails: the
 * descriptor's entry goes either way. */
int fclose(FILE *fp)
{
    int fd = preload_stream_fd(fp);
    uint32_t file_id = preload_fd_get(fd); /* before the number can be reused */
    struct preload_call call;
    if (!preload_call_begin(&call)) {
        int ret = REAL(fclose)(fp);
        preload_fd_forget(fd, file_id);
        return ret;
    }
    int ret = REAL(fclose)(fp);
    preload_fd_forget(fd, file_id);
    struct preload_outcome o = {
        .op = VIGIL_OP_STDIO_FCLOSE,
        .fd = -1,
        .file_id = file_id,
        .result = ret,
        .failed = ret == EOF,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    preload_call_end(&call, &o);
    return ret;
}

/* ---- data ------------------------------------------------------------------ */

PRELOAD_WRAP(size_t, fread, (void *ptr, size_t size, size_t n, FILE *fp), (ptr, size, n, fp),
             preload_end_stream_items(&call, VIGIL_OP_STDIO_FREAD, fp, size, n, ret))

PRELOAD_WRAP(size_t, fwrite, (const void *ptr, size_t size, size_t n, FILE *fp), (ptr, size, n, fp),
             preload_end_stream_items(&call, VIGIL_OP_STDIO_FWRITE, fp, size, n, ret))

PRELOAD_WRAP(char *, fgets, (char *s, int n, FILE *fp), (s, n, fp),
             preload_end_fgets(&call, fp, n, ret))

PRELOAD_WRAP(int, fputs, (const char *s, FILE *fp), (s, fp),
             preload_end_puts(&call, VIGIL_OP_STDIO_FPUTS, fp, s, ret, 0))

PRELOAD_WRAP(int, puts, (const char *s), (s),
             preload_end_puts(&call, VIGIL_OP_STDIO_PUTS, stdout, s, ret, 1))

PRELOAD_WRAP(int, fgetc, (FILE * fp), (fp), preload_end_getc(&call, VIGIL_OP_STDIO_FGETC, fp, ret))

PRELOAD_WRAP(int, getc, (FILE * fp), (fp), preload_end_getc(&call, VIGIL_OP_STDIO_GETC, fp, ret))

PRELOAD_WRAP(int, _IO_getc, (FILE * fp), (fp),
             preload_end_getc(&call, VIGIL_OP_STDIO_GETC, fp, ret))

PRELOAD_WRAP(int, getchar, (void), (), preload_end_getc(&call, VIGIL_OP_STDIO_GETCHAR, stdin, ret))

PRELOAD_WRAP(int, fputc, (int c, FILE *fp), (c, fp),
             preload_end_putc(&call, VIGIL_OP_STDIO_FPUTC, fp, ret))

PRELOAD_WRAP(int, putc, (int c, FILE *fp), (c, fp),
             preload_end_putc(&call, VIGIL_OP_STDIO_PUTC, fp, ret))

PRELOAD_WRAP(int, _IO_putc, (int c, FILE *fp), (c, fp),
             preload_end_putc(&call, VIGIL_OP_STDIO_PUTC, fp, ret))

PRELOAD_WRAP(int, putchar, (int c), (c),
             preload_end_putc(&call, VIGIL_OP_STDIO_PUTCHAR, stdout, ret))

/* ---- formatted output ------------------------------------------------------ */

PRELOAD_WRAP_VARIADIC(int, fprintf, (FILE *restrict fp, const char *restrict format, ...), format,
                      vfprintf, (fp, format, ap),
                      preload_end_printf(&call, VIGIL_OP_STDIO_FPRINTF, fp, ret))

PRELOAD_WRAP(int, vfprintf, (FILE *restrict fp, const char *restrict format, va_list ap),
             (fp, format, ap), preload_end_printf(&call, VIGIL_OP_STDIO_VFPRINTF, fp, ret))

PRELOAD_WRAP_VARIADIC(int, printf, (const char *restrict format, ...), format, vprintf,
                      (format, ap), preload_end_printf(&call, VIGIL_OP_STDIO_PRINTF, stdout, ret))

PRELOAD_WRAP(int, vprintf, (const char *restrict format, va_list ap), (format, ap),
             preload_end_printf(&call, VIGIL_OP_STDIO_VPRINTF, stdout, ret))

/* ---- formatted input ------------------------------------------------------- */

/* The scanf family returns how many items it stored, or EOF when input
 * ended (or failed) first: a failure only when the stream's error flag
 * says so. The bytes it consumed are not known. */
static void end_scanf(const struct preload_call *call, unsigned op, FILE *fp, int ret)
{
    int fd = preload_stream_fd(fp);
    int64_t before = preload_offset_advance(fd, 0, true);
    /* Where it stopped, from the stream: the bytes it read are not told. */
    if (fd >= 0)
        preload_offset_set(fd, REAL(ftello64)(fp));
    struct preload_outcome o = {
        .op = op,
        .fd = fd,
        .result = ret,
        .failed = ret == EOF && preload_stream_error(fp),
        .offset_bytes = before,
    };
    preload_call_end(call, &o);
}

PRELOAD_WRAP_VARIADIC(int, wrap_fscanf, (FILE *restrict fp, const char *restrict format, ...),
                      format, vfscanf, (fp, format, ap),
                      end_scanf(&call, VIGIL_OP_STDIO_FSCANF, fp, ret))

int wrap_vfscanf(FILE *restrict fp, const char *restrict format, va_list ap)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(vfscanf)(fp, format, ap);
    int ret = REAL(vfscanf)(fp, format, ap);
    end_scanf(&call, VIGIL_OP_STDIO_VFSCANF, fp, ret);
    return ret;
}

PRELOAD_WRAP_VARIADIC(int, __isoc99_fscanf, (FILE *restrict fp, const char *restrict format, ...),
                      format, __isoc99_vfscanf, (fp, format, ap),
                      end_scanf(&call, VIGIL_OP_STDIO_FSCANF, fp, ret))

PRELOAD_WRAP(int, __isoc99_vfscanf, (FILE *restrict fp, const char *restrict format, va_list ap),
             (fp, format, ap), end_scanf(&call, VIGIL_OP_STDIO_VFSCANF, fp, ret))

PRELOAD_WRAP_VARIADIC(int, wrap_scanf, (const char *restrict format, ...), format, vscanf,
                      (format, ap), end_scanf(&call, VIGIL_OP_STDIO_SCANF, stdin, ret))

int wrap_vscanf(const char *restrict format, va_list ap)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(vscanf)(format, ap);
    int ret = REAL(vscanf)(format, ap);
    end_scanf(&call, VIGIL_OP_STDIO_VSCANF, stdin, ret);
    return ret;
}

PRELOAD_WRAP_VARIADIC(int, __isoc99_scanf, (const char *restrict format, ...), format,
                      __isoc99_vscanf, (format, ap),
                      end_scanf(&call, VIGIL_OP_STDIO_SCANF, stdin, ret))

PRELOAD_WRAP(int, __isoc99_vscanf, (const char *restrict format, va_list ap), (format, ap),
             end_scanf(&call, VIGIL_OP_STDIO_VSCANF, stdin, ret))

/* ---- position and flushing ------------------------------------------------- */

/* fseek and fseeko: 0, or -1 on failure. Where the stream ended up is
 * `offset` for SEEK_SET, else the stream says (ftello, which costs an lseek
 * at most). */
static void end_fseek(const struct preload_call *call, unsigned op, FILE *fp, int64_t offset,
                      int whence, int ret)
{
    int fd = preload_stream_fd(fp);
    int64_t at = VIGIL_OFFSET_UNKNOWN;
    if (ret == 0 && fd >= 0) {
        int saved_errno = errno;
        at = whence == SEEK_SET ? offset : REAL(ftello64)(fp);
        errno = saved_errno;
        preload_offset_set(fd, at);
    }
    struct preload_outcome o = {
        .op = op,
        .fd = fd,
        .result = ret,
        .failed = ret == -1,
        .offset_bytes = at < 0 ? VIGIL_OFFSET_UNKNOWN : at,
    };
    preload_call_end(call, &o);
}

PRELOAD_WRAP(int, fseek, (FILE * fp, long offset, int whence), (fp, offset, whence),
             end_fseek(&call, VIGIL_OP_STDIO_FSEEK, fp, offset, whence, ret))

PRELOAD_WRAP(int, fseeko, (FILE * fp, off_t offset, int whence), (fp, offset, whence),
             end_fseek(&call, VIGIL_OP_STDIO_FSEEKO, fp, offset, whence, ret))

PRELOAD_WRAP(int, fseeko64, (FILE * fp, off64_t offset, int whence), (fp, offset, whence),
             end_fseek(&call, VIGIL_OP_STDIO_FSEEKO, fp, offset, whence, ret))

/* ftell and ftello: the position, or -1 on failure. */
static void end_ftell(const struct preload_call *call, unsigned op, FILE *fp, int64_t ret)
{
    if (ret >= 0)
        preload_offset_set(preload_stream_fd(fp), ret);
    struct preload_outcome o = {
        .op = op,
        .fd = preload_stream_fd(fp),
        .result = ret,
        .failed = ret == -1,
        .offset_bytes = ret >= 0 ? ret : VIGIL_OFFSET_UNKNOWN,
    };
    preload_call_end(call, &o);
}

PRELOAD_WRAP(long, ftell, (FILE * fp), (fp), end_ftell(&call, VIGIL_OP_STDIO_FTELL, fp, ret))

PRELOAD_WRAP(off_t, ftello, (FILE * fp), (fp), end_ftell(&call, VIGIL_OP_STDIO_FTELLO, fp, ret))

PRELOAD_WRAP(off64_t, ftello64, (FILE * fp), (fp), end_ftell(&call, VIGIL_OP_STDIO_FTELLO, fp, ret))

/* rewind returns nothing: never a failure, and the stream is at 0. */
void rewind(FILE *fp)
{
    struct preload_call call;
    if (!preload_call_begin(&call)) {
        REAL(rewind)(fp);
        return;
    }
    REAL(rewind)(fp);
    preload_offset_set(preload_stream_fd(fp), 0);
    struct preload_outcome o = {
        .op = VIGIL_OP_STDIO_REWIND,
        .fd = preload_stream_fd(fp),
        .offset_bytes = 0,
    };
    preload_call_end(&call, &o);
}

/* fflush(NULL) flushes every stream: no one descriptor. */
PRELOAD_WRAP(int, fflush, (FILE * fp), (fp),
             preload_end_meta(&call, VIGIL_OP_STDIO_FFLUSH, preload_stream_fd(fp), ret))

/* fileno is no I/O and no operation of the table: only Darshan's FILENOS
 * of the file (the POSIX layer's, as Darshan counts it). */
int fileno(FILE *fp)
{
    int fd = REAL(fileno)(fp);
    if (fd >= 0 && atomic_load_explicit(&preload.active, memory_order_relaxed) &&
        !PRELOAD_SELF.in_call) {
        uint32_t file_id = preload_fd_get(fd);
        if (file_id != VIGIL_FILE_NONE && file_id != PRELOAD_FILE_EXCLUDED)
            preload_file_fileno(file_id, fd);
    }
    return fd;
}
