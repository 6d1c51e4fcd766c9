/* vigil — POSIX calls that name a file by its path (stat, unlink, rename,
 * mkdir…) or query a descriptor (fstat), and the calls that copy between
 * two descriptors in the kernel (copy_file_range, sendfile; splice only
 * moves the offsets it moves). The 64-bit
 * variants and glibc's pre-2.33 __xstat entry points count as their base
 * call. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload.h"

PRELOAD_REAL_SLOT(stat);
PRELOAD_REAL_SLOT(stat64);
PRELOAD_REAL_SLOT(lstat);
PRELOAD_REAL_SLOT(lstat64);
PRELOAD_REAL_SLOT(fstat);
PRELOAD_REAL_SLOT(fstat64);
PRELOAD_REAL_SLOT(fstatat);
PRELOAD_REAL_SLOT(fstatat64);
PRELOAD_REAL_SLOT(statx);
PRELOAD_REAL_SLOT(access);
PRELOAD_REAL_SLOT(unlink);
PRELOAD_REAL_SLOT(unlinkat);
PRELOAD_REAL_SLOT(rename);
PRELOAD_REAL_SLOT(renameat);
PRELOAD_REAL_SLOT(mkdir);
PRELOAD_REAL_SLOT(rmdir);
PRELOAD_REAL_SLOT(__xstat);
PRELOAD_REAL_SLOT(__xstat64);
PRELOAD_REAL_SLOT(__lxstat);
PRELOAD_REAL_SLOT(__lxstat64);
PRELOAD_REAL_SLOT(__fxstat);
PRELOAD_REAL_SLOT(__fxstat64);
PRELOAD_REAL_SLOT(__fxstatat);
PRELOAD_REAL_SLOT(__fxstatat64);
PRELOAD_REAL_SLOT(copy_file_range);
PRELOAD_REAL_SLOT(sendfile);
PRELOAD_REAL_SLOT(sendfile64);
PRELOAD_REAL_SLOT(splice);

/* Before glibc 2.33, a program's stat(), lstat(), fstat() and fstatat()
 * were stubs linked into it (libc_nonshared.a) that called these; programs
 * built then still do. glibc's headers no longer declare them, and they
 * are kept as compat symbols, found with dlvsym. */
int __xstat(int ver, const char *path, struct stat *buf);
int __xstat64(int ver, const char *path, struct stat64 *buf);
int __lxstat(int ver, const char *path, struct stat *buf);
int __lxstat64(int ver, const char *path, struct stat64 *buf);
int __fxstat(int ver, int fd, struct stat *buf);
int __fxstat64(int ver, int fd, struct stat64 *buf);
int __fxstatat(int ver, int dirfd, const char *path, struct stat *buf, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *buf, int flags);
#define XSTAT_VERSION    "GLIBC_2.2.5" /* x86_64's base version */
#define FXSTATAT_VERSION "GLIBC_2.4"   /* __fxstatat came later */

/* What a compat wrapper returns when this C library lacks the function. */
static int no_real_function(void)
{
    errno = ENOSYS;
    return -1;
}

/* A compat entry point: PRELOAD_WRAP's shape around the function this C
 * library keeps at `version`, or ENOSYS when it has none. */
#define XSTAT_WRAP(fn, version, params, args, ...)                                                 \
    int fn params                                                                                  \
    {                                                                                              \
        __typeof__(&fn) real = REAL_VERSIONED(fn, version);                                        \
        if (PRELOAD_UNLIKELY(real == NULL))                                                        \
            return no_real_function();                                                             \
        struct preload_call call;                                                                  \
        if (!preload_call_begin(&call))                                                            \
            return real args;                                                                      \
        int ret = real args;                                                                       \
        __VA_ARGS__;                                                                               \
        return ret;                                                                                \
    }

/* Ends a call that names a file by a path, relative to `dirfd` (AT_FDCWD
 * for the working directory). With AT_EMPTY_PATH in `flags` and an empty
 * path, the file is dirfd's own. After most errors the path pointer may be bad: it
 * is not read then. */
static void end_path(const struct preload_call *call, unsigned op, int dirfd, const char *path,
                     int flags, int ret)
{
    int saved_errno = errno;
    int fd = -1;
    uint32_t file_id = VIGIL_FILE_NONE;
    bool readable = path != NULL && preload_path_was_read(ret < 0, saved_errno);
    if ((flags & AT_EMPTY_PATH) && dirfd >= 0 && (path == NULL || (readable && path[0] == '\0')))
        fd = dirfd; /* the call is about dirfd's own file */
    else if (readable)
        file_id = preload_file_for_path(dirfd, path);
    struct preload_outcome o = PRELOAD_PATH_OUTCOME(op, fd, file_id, ret);
    errno = saved_errno;
    preload_call_end(call, &o);
}

PRELOAD_WRAP(int, stat, (const char *path, struct stat *buf), (path, buf),
             end_path(&call, VIGIL_OP_POSIX_STAT, AT_FDCWD, path, 0, ret))

PRELOAD_WRAP(int, stat64, (const char *path, struct stat64 *buf), (path, buf),
             end_path(&call, VIGIL_OP_POSIX_STAT, AT_FDCWD, path, 0, ret))

PRELOAD_WRAP(int, lstat, (const char *path, struct stat *buf), (path, buf),
             end_path(&call, VIGIL_OP_POSIX_LSTAT, AT_FDCWD, path, 0, ret))

PRELOAD_WRAP(int, lstat64, (const char *path, struct stat64 *buf), (path, buf),
             end_path(&call, VIGIL_OP_POSIX_LSTAT, AT_FDCWD, path, 0, ret))

PRELOAD_WRAP(int, fstat, (int fd, struct stat *buf), (fd, buf),
             preload_end_meta(&call, VIGIL_OP_POSIX_FSTAT, fd, ret))

PRELOAD_WRAP(int, fstat64, (int fd, struct stat64 *buf), (fd, buf),
             preload_end_meta(&call, VIGIL_OP_POSIX_FSTAT, fd, ret))

PRELOAD_WRAP(int, fstatat, (int dirfd, const char *path, struct stat *buf, int flags),
             (dirfd, path, buf, flags),
             end_path(&call, VIGIL_OP_POSIX_FSTATAT, dirfd, path, flags, ret))

PRELOAD_WRAP(int, fstatat64, (int dirfd, const char *path, struct stat64 *buf, int flags),
             (dirfd, path, buf, flags),
             end_path(&call, VIGIL_OP_POSIX_FSTATAT, dirfd, path, flags, ret))

PRELOAD_WRAP(int, statx,
             (int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf),
             (dirfd, path, flags, mask, buf),
             end_path(&call, VIGIL_OP_POSIX_STATX, dirfd, path, flags, ret))

PRELOAD_WRAP(int, access, (const char *path, int mode), (path, mode),
             end_path(&call, VIGIL_OP_POSIX_ACCESS, AT_FDCWD, path, 0, ret))

PRELOAD_WRAP(int, unlink, (const char *path), (path),
             end_path(&call, VIGIL_OP_POSIX_UNLINK, AT_FDCWD, path, 0, ret))

/* unlinkat's flags (AT_REMOVEDIR) have nothing to do with end_path's. */
PRELOAD_WRAP(int, unlinkat, (int dirfd, const char *path, int flags), (dirfd, path, flags),
             end_path(&call, VIGIL_OP_POSIX_UNLINKAT, dirfd, path, 0, ret))

/* A rename is counted on the file it moves: the old path. */
PRELOAD_WRAP(int, rename, (const char *oldpath, const char *newpath), (oldpath, newpath),
             end_path(&call, VIGIL_OP_POSIX_RENAME, AT_FDCWD, oldpath, 0, ret))

PRELOAD_WRAP(int, renameat, (int olddirfd, const char *oldpath, int newdirfd, const char *newpath),
             (olddirfd, oldpath, newdirfd, newpath),
             end_path(&call, VIGIL_OP_POSIX_RENAMEAT, olddirfd, oldpath, 0, ret))

PRELOAD_WRAP(int, mkdir, (const char *path, mode_t mode), (path, mode),
             end_path(&call, VIGIL_OP_POSIX_MKDIR, AT_FDCWD, path, 0, ret))

PRELOAD_WRAP(int, rmdir, (const char *path), (path),
             end_path(&call, VIGIL_OP_POSIX_RMDIR, AT_FDCWD, path, 0, ret))

XSTAT_WRAP(__xstat, XSTAT_VERSION, (int ver, const char *path, struct stat *buf), (ver, path, buf),
           end_path(&call, VIGIL_OP_POSIX_STAT, AT_FDCWD, path, 0, ret))

XSTAT_WRAP(__xstat64, XSTAT_VERSION, (int ver, const char *path, struct stat64 *buf),
           (ver, path, buf), end_path(&call, VIGIL_OP_POSIX_STAT, AT_FDCWD, path, 0, ret))

XSTAT_WRAP(__lxstat, XSTAT_VERSION, (int ver, const char *path, struct stat *buf), (ver, path, buf),
           end_path(&call, VIGIL_OP_POSIX_LSTAT, AT_FDCWD, path, 0, ret))

XSTAT_WRAP(__lxstat64, XSTAT_VERSION, (int ver, const char *path, struct stat64 *buf),
           (ver, path, buf), end_path(&call, VIGIL_OP_POSIX_LSTAT, AT_FDCWD, path, 0, ret))

XSTAT_WRAP(__fxstat, XSTAT_VERSION, (int ver, int fd, struct stat *buf), (ver, fd, buf),
           preload_end_meta(&call, VIGIL_OP_POSIX_FSTAT, fd, ret))

XSTAT_WRAP(__fxstat64, XSTAT_VERSION, (int ver, int fd, struct stat64 *buf), (ver, fd, buf),
           preload_end_meta(&call, VIGIL_OP_POSIX_FSTAT, fd, ret))

XSTAT_WRAP(__fxstatat, FXSTATAT_VERSION,
           (int ver, int dirfd, const char *path, struct stat *buf, int flags),
           (ver, dirfd, path, buf, flags),
           end_path(&call, VIGIL_OP_POSIX_FSTATAT, dirfd, path, flags, ret))

XSTAT_WRAP(__fxstatat64, FXSTATAT_VERSION,
           (int ver, int dirfd, const char *path, struct stat64 *buf, int flags),
           (ver, dirfd, path, buf, flags),
           end_path(&call, VIGIL_OP_POSIX_FSTATAT, dirfd, path, flags, ret))

/* off_t, off64_t and loff_t are one type on the 64-bit systems the
 * library is built for, so the offset helpers below take any of them. */
_Static_assert(sizeof(off_t) == sizeof(int64_t) && sizeof(off64_t) == sizeof(int64_t),
               "off_t is not 64 bits");

/* Where a kernel copy read: *offset when it was given one (read only after
 * a success, when the kernel has used it and moved it past the bytes
 * copied), else fd_in's own offset, which it moved. */
static int64_t copy_source_offset(int fd_in, const int64_t *offset, ssize_t ret)
{
    if (ret < 0)
        return VIGIL_OFFSET_UNKNOWN; /* failed: no read to place */
    if (offset != NULL)
        return *offset - ret;
    return preload_offset_advance(fd_in, ret, false);
}

/* Where it wrote: the same, for fd_out (sendfile has no offset for it). */
static int64_t copy_destination_offset(int fd_out, const int64_t *offset, ssize_t ret)
{
    if (ret < 0)
        return VIGIL_OFFSET_UNKNOWN;
    return offset != NULL ? *offset - ret : preload_offset_written(fd_out, ret);
}

/* copy_file_range reads from fd_in and writes to fd_out. Its activity names
 * one descriptor, so it is counted on fd_out; fd_in's file gets the read in
 * its own counts (preload_count_copy_source). */
ssize_t copy_file_range(int fd_in, off64_t *off_in, int fd_out, off64_t *off_out, size_t len,
                        unsigned int flags)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(copy_file_range)(fd_in, off_in, fd_out, off_out, len, flags);
    ssize_t ret = REAL(copy_file_range)(fd_in, off_in, fd_out, off_out, len, flags);
    preload_count_copy_source(fd_in, copy_source_offset(fd_in, off_in, ret), ret, call.start_ticks);
    preload_end_data(&call, VIGIL_OP_POSIX_COPY_FILE_RANGE, fd_out, ret, len,
                     copy_destination_offset(fd_out, off_out, ret));
    return ret;
}

/* sendfile: counted on out_fd, like copy_file_range, at out_fd's offset,
 * which it moves (a socket has none); in_fd, always a file, is read at
 * `offset`, or at its own offset, which it moves. */
#define SENDFILE_WRAP(fn, offset_type)                                                             \
    ssize_t fn(int out_fd, int in_fd, offset_type *offset, size_t count)                           \
    {                                                                                              \
        struct preload_call call;                                                                  \
        if (!preload_call_begin(&call))                                                            \
            return REAL(fn)(out_fd, in_fd, offset, count);                                         \
        ssize_t ret = REAL(fn)(out_fd, in_fd, offset, count);                                      \
        preload_count_copy_source(in_fd, copy_source_offset(in_fd, offset, ret), ret,              \
                                  call.start_ticks);                                               \
        preload_end_data(&call, VIGIL_OP_POSIX_SENDFILE, out_fd, ret, count,                       \
                         copy_destination_offset(out_fd, NULL, ret));                              \
        return ret;                                                                                \
    }
SENDFILE_WRAP(sendfile, off_t)
SENDFILE_WRAP(sendfile64, off64_t)

/* splice moves data between a pipe and a descriptor. It is not counted
 * (there is no operation for it), but the file offset it moves (the side
 * given no offset pointer) is followed, or the calls after it would be
 * recorded where it left them. */
ssize_t splice(int fd_in, loff_t *off_in, int fd_out, loff_t *off_out, size_t len,
               unsigned int flags)
{
    ssize_t ret = REAL(splice)(fd_in, off_in, fd_out, off_out, len, flags);
    if (ret > 0 && atomic_load_explicit(&preload.active, memory_order_relaxed)) {
        int saved_errno = errno;
        if (off_in == NULL)
            preload_offset_advance(fd_in, ret, false);
        if (off_out == NULL)
            preload_offset_written(fd_out, ret);
        errno = saved_errno;
    }
    return ret;
}
