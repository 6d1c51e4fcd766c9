/* vigil — the _FORTIFY_SOURCE entry points. Built with -D_FORTIFY_SOURCE=2
 * (and optimization), a program calls __read_chk instead of read when the
 * buffer's size is known, __fprintf_chk instead of fprintf, and so on.
 * Each counts as its base call, and goes to the real _chk function (the
 * variadic ones to its v variant), so that glibc's checks still happen. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "preload.h"

PRELOAD_REAL_SLOT(__read_chk);
PRELOAD_REAL_SLOT(__pread_chk);
PRELOAD_REAL_SLOT(__pread64_chk);
PRELOAD_REAL_SLOT(__fread_chk);
PRELOAD_REAL_SLOT(__fgets_chk);
PRELOAD_REAL_SLOT(__fread_unlocked_chk);
PRELOAD_REAL_SLOT(__fgets_unlocked_chk);
PRELOAD_REAL_SLOT(__vfprintf_chk);
PRELOAD_REAL_SLOT(__vprintf_chk);
PRELOAD_REAL_SLOT(__recv_chk);
PRELOAD_REAL_SLOT(__recvfrom_chk);

/* glibc declares these only under _FORTIFY_SOURCE, which this library is
 * built without. */
ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t nbytes, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t nbytes, off64_t offset, size_t buflen);
size_t __fread_chk(void *restrict ptr, size_t ptrlen, size_t size, size_t n, FILE *restrict fp);
char *__fgets_chk(char *restrict s, size_t size, int n, FILE *restrict fp);
size_t __fread_unlocked_chk(void *restrict ptr, size_t ptrlen, size_t size, size_t n,
                            FILE *restrict fp);
char *__fgets_unlocked_chk(char *restrict s, size_t size, int n, FILE *restrict fp);
int __fprintf_chk(FILE *restrict fp, int flag, const char *restrict format, ...)
    __attribute__((format(printf, 3, 4)));
int __vfprintf_chk(FILE *restrict fp, int flag, const char *restrict format, va_list ap)
    __attribute__((format(printf, 3, 0)));
int __printf_chk(int flag, const char *restrict format, ...) __attribute__((format(printf, 2, 3)));
int __vprintf_chk(int flag, const char *restrict format, va_list ap)
    __attribute__((format(printf, 2, 0)));
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *restrict buf, size_t n, size_t buflen, int flags,
                       __SOCKADDR_ARG addr, socklen_t *restrict addrlen);

PRELOAD_WRAP(ssize_t, __read_chk, (int fd, void *buf, size_t nbytes, size_t buflen),
             (fd, buf, nbytes, buflen),
             preload_end_buffer(&call, VIGIL_OP_POSIX_READ, fd, ret, nbytes,
                                preload_offset_advance(fd, ret, false), buf))

PRELOAD_WRAP(ssize_t, __pread_chk, (int fd, void *buf, size_t nbytes, off_t offset, size_t buflen),
             (fd, buf, nbytes, offset, buflen),
             preload_end_buffer(&call, VIGIL_OP_POSIX_PREAD, fd, ret, nbytes, offset, buf))

PRELOAD_WRAP(ssize_t, __pread64_chk,
             (int fd, void *buf, size_t nbytes, off64_t offset, size_t buflen),
             (fd, buf, nbytes, offset, buflen),
             preload_end_buffer(&call, VIGIL_OP_POSIX_PREAD, fd, ret, nbytes, offset, buf))

PRELOAD_WRAP(size_t, __fread_chk,
             (void *restrict ptr, size_t ptrlen, size_t size, size_t n, FILE *restrict fp),
             (ptr, ptrlen, size, n, fp),
             preload_end_stream_items(&call, VIGIL_OP_STDIO_FREAD, fp, size, n, ret))

PRELOAD_WRAP(char *, __fgets_chk, (char *restrict s, size_t size, int n, FILE *restrict fp),
             (s, size, n, fp), preload_end_fgets(&call, fp, n, ret))

/* The unlocked ones (wrap_stdio_unlocked.c) under _FORTIFY_SOURCE. */
PRELOAD_WRAP(size_t, __fread_unlocked_chk,
             (void *restrict ptr, size_t ptrlen, size_t size, size_t n, FILE *restrict fp),
             (ptr, ptrlen, size, n, fp),
             preload_end_stream_items(&call, VIGIL_OP_STDIO_FREAD, fp, size, n, ret))

PRELOAD_WRAP(char *, __fgets_unlocked_chk,
             (char *restrict s, size_t size, int n, FILE *restrict fp), (s, size, n, fp),
             preload_end_fgets(&call, fp, n, ret))

PRELOAD_WRAP_VARIADIC(int, __fprintf_chk,
                      (FILE *restrict fp, int flag, const char *restrict format, ...), format,
                      __vfprintf_chk, (fp, flag, format, ap),
                      preload_end_printf(&call, VIGIL_OP_STDIO_FPRINTF, fp, ret))

PRELOAD_WRAP(int, __vfprintf_chk,
             (FILE *restrict fp, int flag, const char *restrict format, va_list ap),
             (fp, flag, format, ap), preload_end_printf(&call, VIGIL_OP_STDIO_VFPRINTF, fp, ret))

PRELOAD_WRAP_VARIADIC(int, __printf_chk, (int flag, const char *restrict format, ...), format,
                      __vprintf_chk, (flag, format, ap),
                      preload_end_printf(&call, VIGIL_OP_STDIO_PRINTF, stdout, ret))

PRELOAD_WRAP(int, __vprintf_chk, (int flag, const char *restrict format, va_list ap),
             (flag, format, ap), preload_end_printf(&call, VIGIL_OP_STDIO_VPRINTF, stdout, ret))

PRELOAD_WRAP(ssize_t, __recv_chk, (int fd, void *buf, size_t n, size_t buflen, int flags),
             (fd, buf, n, buflen, flags),
             preload_end_data(&call, VIGIL_OP_POSIX_RECV, fd, ret, n, VIGIL_OFFSET_UNKNOWN))

PRELOAD_WRAP(ssize_t, __recvfrom_chk,
             (int fd, void *restrict buf, size_t n, size_t buflen, int flags, __SOCKADDR_ARG addr,
              socklen_t *restrict addrlen),
             (fd, buf, n, buflen, flags, addr, addrlen),
             preload_end_data(&call, VIGIL_OP_POSIX_RECVFROM, fd, ret, n, VIGIL_OFFSET_UNKNOWN))
