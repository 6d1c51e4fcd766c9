/* vigil — POSIX calls that open, close and duplicate descriptors, and
 * change the working directory: besides being counted, they keep the
 * descriptor table (which file each fd is) and the working directory (for
 * relative paths) up to date. */
#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <stdarg.h>
#include <unistd.h>

#include "preload.h"

PRELOAD_REAL_SLOT(open);
PRELOAD_REAL_SLOT(open64);
PRELOAD_REAL_SLOT(openat);
PRELOAD_REAL_SLOT(openat64);
PRELOAD_REAL_SLOT(__open_2);
PRELOAD_REAL_SLOT(__open64_2);
PRELOAD_REAL_SLOT(__openat_2);
PRELOAD_REAL_SLOT(__openat64_2);
PRELOAD_REAL_SLOT(creat);
PRELOAD_REAL_SLOT(creat64);
PRELOAD_REAL_SLOT(close);
PRELOAD_REAL_SLOT(dup);
PRELOAD_REAL_SLOT(dup2);
PRELOAD_REAL_SLOT(dup3);
PRELOAD_REAL_SLOT(fcntl);
PRELOAD_REAL_SLOT(fcntl64);
PRELOAD_REAL_SLOT(chdir);
PRELOAD_REAL_SLOT(fchdir);

/* The glibc fortify variants are declared only under _FORTIFY_SOURCE. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* open's third argument exists only when the flags create a file. It can
 * only be read in the variadic function itself, hence a macro; `flags` is
 * the last parameter before the "..." in every open variant. */
#define OPEN_NEEDS_MODE(flags) (((flags)&O_CREAT) || ((flags)&O_TMPFILE) == O_TMPFILE)
#define OPEN_MODE(flags)                                                                           \
    __extension__({                                                                                \
        mode_t mode_ = 0;                                                                          \
        if (OPEN_NEEDS_MODE(flags)) {                                                              \
            va_list ap_;                                                                           \
            va_start(ap_, flags);                                                                  \
            mode_ = va_arg(ap_, mode_t);                                                           \
            va_end(ap_);                                                                           \
        }                                                                                          \
        mode_;                                                                                     \
    })

/* An open we do not count still gets a number that may have a name from
 * before: it must not inherit it. */
static int uncounted_open(int fd)
{
    if (fd >= 0)
        preload_fd_clear(fd);
    return fd;
}

static void end_open(const struct preload_call *call, unsigned op, int dirfd, const char *path,
                     int flags, mode_t mode, int ret)
{
    int saved_errno = errno;
    uint32_t file_id = VIGIL_FILE_NONE;
    if (path != NULL && preload_path_was_read(ret < 0, saved_errno))
        file_id = preload_file_for_path(dirfd, path);
    if (ret >= 0) {
        preload_fd_set(ret, file_id, 0, (flags & O_APPEND) != 0);
        if (flags & O_TRUNC)
            preload_offset_truncated(ret, 0);
        /* Its mode (Darshan's POSIX_MODE) and, the first time, its file
         * system's block size: an open is the rare path. */
        if (file_id != VIGIL_FILE_NONE && file_id != PRELOAD_FILE_EXCLUDED)
            preload_file_opened(file_id, ret, (int64_t)mode);
    }
    struct preload_outcome o = PRELOAD_PATH_OUTCOME(op, -1, file_id, ret);
    errno = saved_errno;
    preload_call_end(call, &o);
}

/* An open: PRELOAD_WRAP's shape, but the descriptor of an open it does not
 * count loses its old name (uncounted_open), and the one it counts is
 * followed (end_open). After `flags`: what the call reads first, the mode
 * of a variadic open. */
#define OPEN_WRAP(fn, params, args, op, dirfd, flags, mode_given, ...)                             \
    int fn params                                                                                  \
    {                                                                                              \
        __VA_ARGS__;                                                                               \
        struct preload_call call;                                                                  \
        if (!preload_call_begin(&call))                                                            \
            return uncounted_open(REAL(fn) args);                                                  \
        int ret = REAL(fn) args;                                                                   \
        end_open(&call, op, dirfd, path, flags, mode_given, ret);                                  \
        return ret;                                                                                \
    }

OPEN_WRAP(open, (const char *path, int flags, ...), (path, flags, mode), VIGIL_OP_POSIX_OPEN,
          AT_FDCWD, flags, mode, mode_t mode = OPEN_MODE(flags))

OPEN_WRAP(open64, (const char *path, int flags, ...), (path, flags, mode), VIGIL_OP_POSIX_OPEN,
          AT_FDCWD, flags, mode, mode_t mode = OPEN_MODE(flags))

OPEN_WRAP(openat, (int dirfd, const char *path, int flags, ...), (dirfd, path, flags, mode),
          VIGIL_OP_POSIX_OPENAT, dirfd, flags, mode, mode_t mode = OPEN_MODE(flags))

OPEN_WRAP(openat64, (int dirfd, const char *path, int flags, ...), (dirfd, path, flags, mode),
          VIGIL_OP_POSIX_OPENAT, dirfd, flags, mode, mode_t mode = OPEN_MODE(flags))

OPEN_WRAP(__open_2, (const char *path, int flags), (path, flags), VIGIL_OP_POSIX_OPEN, AT_FDCWD,
          flags, 0)

OPEN_WRAP(__open64_2, (const char *path, int flags), (path, flags), VIGIL_OP_POSIX_OPEN, AT_FDCWD,
          flags, 0)

OPEN_WRAP(__openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags),
          VIGIL_OP_POSIX_OPENAT, dirfd, flags, 0)

OPEN_WRAP(__openat64_2, (int dirfd, const char *path, int flags), (dirfd, path, flags),
          VIGIL_OP_POSIX_OPENAT, dirfd, flags, 0)

OPEN_WRAP(creat, (const char *path, mode_t mode), (path, mode), VIGIL_OP_POSIX_CREAT, AT_FDCWD,
          O_CREAT | O_WRONLY | O_TRUNC, mode)

OPEN_WRAP(creat64, (const char *path, mode_t mode), (path, mode), VIGIL_OP_POSIX_CREAT, AT_FDCWD,
          O_CREAT | O_WRONLY | O_TRUNC, mode)

/* Linux releases the descriptor whatever close returns, except EBADF (it
 * was not open): the entry goes with it. It is read before the real call,
 * while the number cannot yet have been reused. */
static void forget_closed(int fd, uint32_t file_id, int ret, int errno_value)
{
    if (ret == 0 || errno_value != EBADF)
        preload_fd_forget(fd, file_id);
}

int close(int fd)
{
    uint32_t file_id = preload_fd_get(fd);
    struct preload_call call;
    if (!preload_call_begin(&call)) {
        int ret = REAL(close)(fd);
        int saved_errno = errno;
        forget_closed(fd, file_id, ret, saved_errno); /* even uncounted */
        errno = saved_errno;
        return ret;
    }
    int ret = REAL(close)(fd);
    forget_closed(fd, file_id, ret, errno);
    struct preload_outcome o = {
        .op = VIGIL_OP_POSIX_CLOSE,
        .fd = -1,
        .file_id = file_id,
        .result = ret,
        .failed = ret == -1,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    preload_call_end(&call, &o);
    return ret;
}

/* Closing many at once is not I/O and is not counted, but the entries of
 * the descriptors it closes must go, or their numbers would keep a file's
 * name when reused. */
PRELOAD_REAL_SLOT(close_range);
PRELOAD_REAL_SLOT(closefrom);
PRELOAD_REAL_SLOT(closedir);

int close_range(unsigned int first, unsigned int last, int flags)
{
    int ret = REAL(close_range)(first, last, flags);
    if (ret == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
        for (unsigned fd = first; fd <= last && fd < preload_fd_table_size; fd++)
            preload_fd_clear((int)fd);
    return ret;
}

void closefrom(int lowfd)
{
    REAL(closefrom)(lowfd);
    for (unsigned fd = lowfd < 0 ? 0 : (unsigned)lowfd; fd < preload_fd_table_size; fd++)
        preload_fd_clear((int)fd);
}

int closedir(DIR *dir)
{
    int fd = dirfd(dir); /* closedir(NULL) is undefined: glibc crashes on it too */
    uint32_t file_id = preload_fd_get(fd);
    int ret = REAL(closedir)(dir);
    int saved_errno = errno;
    forget_closed(fd, file_id, ret, saved_errno);
    errno = saved_errno;
    return ret;
}

/* A dup: the new descriptor names the old one's file, counted or not. */
#define DUP_WRAP(fn, params, args, op, oldfd)                                                      \
    int fn params                                                                                  \
    {                                                                                              \
        struct preload_call call;                                                                  \
        if (!preload_call_begin(&call)) {                                                          \
            int ret = REAL(fn) args;                                                               \
            if (ret >= 0)                                                                          \
                preload_fd_copy(oldfd, ret);                                                       \
            return ret;                                                                            \
        }                                                                                          \
        int ret = REAL(fn) args;                                                                   \
        if (ret >= 0)                                                                              \
            preload_fd_copy(oldfd, ret);                                                           \
        preload_end_meta(&call, op, oldfd, ret);                                                   \
        return ret;                                                                                \
    }

DUP_WRAP(dup, (int fd), (fd), VIGIL_OP_POSIX_DUP, fd)

DUP_WRAP(dup2, (int oldfd, int newfd), (oldfd, newfd), VIGIL_OP_POSIX_DUP2, oldfd)

DUP_WRAP(dup3, (int oldfd, int newfd, int flags), (oldfd, newfd, flags), VIGIL_OP_POSIX_DUP3, oldfd)

/* fcntl's third argument is an int or a pointer depending on the command;
 * like glibc itself, pass it on as a pointer-sized value. */
static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
    struct preload_call call;
    bool counted = preload_call_begin(&call);
    int ret = real(fd, cmd, arg);
    if (ret >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) {
        preload_fd_copy(fd, ret);
        if (counted) /* Darshan's DUPS (dup, dup2, dup3): the header's F_DUPFD too */
            preload_file_dup(preload_fd_get(fd));
    }
    if (ret == 0 && cmd == F_SETFL)
        preload_offset_append_set(fd, ((int)(intptr_t)arg & O_APPEND) != 0);
    if (counted)
        preload_end_meta(&call, VIGIL_OP_POSIX_FCNTL, fd, ret);
    return ret;
}

/* fcntl and fcntl64: the same but for the real function. */
#define FCNTL(fn)                                                                                  \
    int fn(int fd, int cmd, ...)                                                                   \
    {                                                                                              \
        va_list ap;                                                                                \
        va_start(ap, cmd);                                                                         \
        void *arg = va_arg(ap, void *);                                                            \
        va_end(ap);                                                                                \
        return fcntl_common(REAL(fn), fd, cmd, arg);                                               \
    }
FCNTL(fcntl)
FCNTL(fcntl64)

/* Not I/O, so not counted: only followed, for relative paths. `ret` is
 * the change's, errno kept. */
static int cwd_changed(int ret)
{
    if (ret == 0) {
        int saved_errno = errno;
        preload_cwd_changed();
        errno = saved_errno;
    }
    return ret;
}

int chdir(const char *path)
{
    return cwd_changed(REAL(chdir)(path));
}

int fchdir(int fd)
{
    return cwd_changed(REAL(fchdir)(fd));
}
