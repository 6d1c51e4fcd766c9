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
    struct preload_outcome o = {
        .op = op,
        .fd = fd,
        .file_id = file_id,
        .result = ret,
        .failed = ret < 0,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    errno = saved_errno;
    preload_call_end(call, &o);
}

int stat(const char *path, struct stat *buf)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(stat)(path, buf);
    int ret = REAL(stat)(path, buf);
    end_path(&call, VIGIL_OP_POSIX_STAT, AT_FDCWD, path, 0, ret);
    return ret;
}

int stat64(const char *path, struct stat64 *buf)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(stat64)(path, buf);
    int ret = REAL(stat64)(path, buf);
    end_path(&call, VIGIL_OP_POSIX_STAT, AT_FDCWD, path, 0, ret);
    return ret;
}

int lstat(const char *path, struct stat *buf)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(lstat)(path, buf);
    int ret = REAL(lstat)(path, buf);
    end_path(&call, VIGIL_OP_POSIX_LSTAT, AT_FDCWD, path, 0, ret);
    return ret;
}

int lstat64(const char *path, struct stat64 *buf)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(lstat64)(path, buf);
    int ret = REAL(lstat64)(path, buf);
    end_path(&call, VIGIL_OP_POSIX_LSTAT, AT_FDCWD, path, 0, ret);
    return ret;
}

int fstat(int fd, struct stat *buf)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(fstat)(fd, buf);
    int ret = REAL(fstat)(fd, buf);
    preload_end_meta(&call, VIGIL_OP_POSIX_FSTAT, fd, ret);
    return ret;
}

int fstat64(int fd, struct stat64 *buf)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(fstat64)(fd, buf);
    int ret = REAL(fstat64)(fd, buf);
    preload_end_meta(&call, VIGIL_OP_POSIX_FSTAT, fd, ret);
    return ret;
}

int fstatat(int dirfd, const char *path, struct stat *buf, int flags)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(fstatat)(dirfd, path, buf, flags);
    int ret = REAL(fstatat)(dirfd, path, buf, flags);
    end_path(&call, VIGIL_OP_POSIX_FSTATAT, dirfd, path, flags, ret);
    return ret;
}

int fstatat64(int dirfd, const char *path, struct stat64 *buf, int flags)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(fstatat64)(dirfd, path, buf, flags);
    int ret = REAL(fstatat64)(dirfd, path, buf, flags);
    end_path(&call, VIGIL_OP_POSIX_FSTATAT, dirfd, path, flags, ret);
    return ret;
}

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(statx)(dirfd, path, flags, mask, buf);
    int ret = REAL(statx)(dirfd, path, flags, mask, buf);
    end_path(&call, VIGIL_OP_POSIX_STATX, dirfd, path, flags, ret);
    return ret;
}

int access(const char *path, int mode)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(access)(path, mode);
    int ret = REAL(access)(path, mode);
    end_path(&call, VIGIL_OP_POSIX_ACCESS, AT_FDCWD, path, 0, ret);
    return ret;
}

int unlink(const char *path)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(unlink)(path);
    int ret = REAL(unlink)(path);
    end_path(&call, VIGIL_OP_POSIX_UNLINK, AT_FDCWD, path, 0, ret);
    return ret;
}

int unlinkat(int dirfd, const char *path, int flags)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(unlinkat)(dirfd, path, flags);
    int ret = REAL(unlinkat)(dirfd, path, flags);
    /* Its flags (AT_REMOVEDIR) have nothing to do with end_path's. */
    end_path(&call, VIGIL_OP_POSIX_UNLINKAT, dirfd, path, 0, ret);
    return ret;
}

/* A rename is counted on the file it moves: the old path. */
int rename(const char *oldpath, const char *newpath)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(rename)(oldpath, newpath);
    int ret = REAL(rename)(oldpath, newpath);
    end_path(&call, VIGIL_OP_POSIX_RENAME, AT_FDCWD, oldpath, 0, ret);
    return ret;
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(renameat)(olddirfd, oldpath, newdirfd, newpath);
    int ret = REAL(renameat)(olddirfd, oldpath, newdirfd, newpath);
    end_path(&call, VIGIL_OP_POSIX_RENAMEAT, olddirfd, oldpath, 0, ret);
    return ret;
}

int mkdir(const char *path, mode_t mode)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(mkdir)(path, mode);
    int ret = REAL(mkdir)(path, mode);
    end_path(&call, VIGIL_OP_POSIX_MKDIR, AT_FDCWD, path, 0, ret);
    return ret;
}

int rmdir(const char *path)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(rmdir)(path);
    int ret = REAL(rmdir)(path);
    end_path(&call, VIGIL_OP_POSIX_RMDIR, AT_FDCWD, path, 0, ret);
    return ret;
}

int __xstat(int ver, const char *path, struct stat *buf)
{
    __typeof__(&__xstat) real = REAL_VERSIONED(__xstat, XSTAT_VERSION);
    if (PRELOAD_UNLIKELY(real == NULL))
        return no_real_function();
    struct preload_call call;
    if (!preload_call_begin(&call))
        return real(ver, path, buf);
    int ret = real(ver, path, buf);
    end_path(&call, VIGIL_OP_POSIX_STAT, AT_FDCWD, path, 0, ret);
    return ret;
}

int __xstat64(int ver, const char *path, struct stat64 *buf)
{
    __typeof__(&__xstat64) real = REAL_VERSIONED(__xstat64, XSTAT_VERSION);
    if (PRELOAD_UNLIKELY(real == NULL))
        return no_real_function();
    struct preload_call call;
    if (!preload_call_begin(&call))
        return real(ver, path, buf);
    int ret = real(ver, path, buf);
    end_path(&call, VIGIL_OP_POSIX_STAT, AT_FDCWD, path, 0, ret);
    return ret;
}

int __lxstat(int ver, const char *path, struct stat *buf)
{
    __typeof__(&__lxstat) real = REAL_VERSIONED(__lxstat, XSTAT_VERSION);
    if (PRELOAD_UNLIKELY(real == NULL))
        return no_real_function();
    struct preload_call call;
    if (!preload_call_begin(&call))
        return real(ver, path, buf);
    int ret = real(ver, path, buf);
    end_path(&call, VIGIL_OP_POSIX_LSTAT, AT_FDCWD, path, 0, ret);
    return ret;
}

int __lxstat64(int ver, const char *path, struct stat64 *buf)
{
    __typeof__(&__lxstat64) real = REAL_VERSIONED(__lxstat64, XSTAT_VERSION);
    if (PRELOAD_UNLIKELY(real == NULL))
        return no_real_function();
    struct preload_call call;
    if (!preload_call_begin(&call))
        return real(ver, path, buf);
    int ret = real(ver, path, buf);
    end_path(&call, VIGIL_OP_POSIX_LSTAT, AT_FDCWD, path, 0, ret);
    return ret;
}

int __fxstat(int ver, int fd, struct stat *buf)
{
    __typeof__(&__fxstat) real = REAL_VERSIONED(__fxstat, XSTAT_VERSION);
    if (PRELOAD_UNLIKELY(real == NULL))
        return no_real_function();
    struct preload_call call;
    if (!preload_call_begin(&call))
        return real(ver, fd, buf);
    int ret = real(ver, fd, buf);
    preload_end_meta(&call, VIGIL_OP_POSIX_FSTAT, fd, ret);
    return ret;
}

int __fxstat64(int ver, int fd, struct stat64 *buf)
{
    __typeof__(&__fxstat64) real = REAL_VERSIONED(__fxstat64, XSTAT_VERSION);
    if (PRELOAD_UNLIKELY(real == NULL))
        return no_real_function();
    struct preload_call call;
    if (!preload_call_begin(&call))
        return real(ver, fd, buf);
    int ret = real(ver, fd, buf);
    preload_end_meta(&call, VIGIL_OP_POSIX_FSTAT, fd, ret);
    return ret;
}

int __fxstatat(int ver, int dirfd, const char *path, struct stat *buf, int flags)
{
    __typeof__(&__fxstatat) real = REAL_VERSIONED(__fxstatat, FXSTATAT_VERSION);
    if (PRELOAD_UNLIKELY(real == NULL))
        return no_real_function();
    struct preload_call call;
    if (!preload_call_begin(&call))
        return real(ver, dirfd, path, buf, flags);
    int ret = real(ver, dirfd, path, buf, flags);
    end_path(&call, VIGIL_OP_POSIX_FSTATAT, dirfd, path, flags, ret);
    return ret;
}

int __fxstatat64(int ver, int dirfd, const char *path, struct stat64 *buf, int flags)
{
    __typeof__(&__fxstatat64) real = REAL_VERSIONED(__fxstatat64, FXSTATAT_VERSION);
    if (PRELOAD_UNLIKELY(real == NULL))
        return no_real_function();
    struct preload_call call;
    if (!preload_call_begin(&call))
        return real(ver, dirfd, path, buf, flags);
    int ret = real(ver, dirfd, path, buf, flags);
    end_path(&call, VIGIL_OP_POSIX_FSTATAT, dirfd, path, flags, ret);
    return ret;
}

/* off_t, off64_t and loff_t are one type on the 64-bit systems the
 * library is built for, so the offset helpers below take any of them. */
_Static_assert(sizeof(off_t) == sizeof(int64_t) && sizeof(off64_t) == sizeof(int64_t),
               "off_t is not 64 bits");

/* Where a kernel copy read: *offset when it was given one (read only after
 * a success, when the kernel has used it and moved it past the bytes
 * copied), else fd_in's own offset, which it moved. */
static int64_t copy_source_offset(int fd_in, const int64_t *offset, ssize_t ret)
{
    if (ret <= 0)
        return VIGIL_OFFSET_UNKNOWN; /* nothing read: no read to place */
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
ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(sendfile)(out_fd, in_fd, offset, count);
    ssize_t ret = REAL(sendfile)(out_fd, in_fd, offset, count);
    preload_count_copy_source(in_fd, copy_source_offset(in_fd, offset, ret), ret, call.start_ticks);
    preload_end_data(&call, VIGIL_OP_POSIX_SENDFILE, out_fd, ret, count,
                     copy_destination_offset(out_fd, NULL, ret));
    return ret;
}

ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset, size_t count)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(sendfile64)(out_fd, in_fd, offset, count);
    ssize_t ret = REAL(sendfile64)(out_fd, in_fd, offset, count);
    preload_count_copy_source(in_fd, copy_source_offset(in_fd, offset, ret), ret, call.start_ticks);
    preload_end_data(&call, VIGIL_OP_POSIX_SENDFILE, out_fd, ret, count,
                     copy_destination_offset(out_fd, NULL, ret));
    return ret;
}

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
