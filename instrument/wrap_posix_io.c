/* vigil — POSIX calls that move data through a descriptor, or position,
 * sync, size or map it. The 64-bit variants count as their base call. */
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload.h"

PRELOAD_REAL_SLOT(read);
PRELOAD_REAL_SLOT(write);
PRELOAD_REAL_SLOT(pread);
PRELOAD_REAL_SLOT(pread64);
PRELOAD_REAL_SLOT(pwrite);
PRELOAD_REAL_SLOT(pwrite64);
PRELOAD_REAL_SLOT(readv);
PRELOAD_REAL_SLOT(writev);
PRELOAD_REAL_SLOT(preadv);
PRELOAD_REAL_SLOT(preadv64);
PRELOAD_REAL_SLOT(pwritev);
PRELOAD_REAL_SLOT(pwritev64);
PRELOAD_REAL_SLOT(preadv2);
PRELOAD_REAL_SLOT(pwritev2);
PRELOAD_REAL_SLOT(lseek);
PRELOAD_REAL_SLOT(lseek64);
PRELOAD_REAL_SLOT(fsync);
PRELOAD_REAL_SLOT(fdatasync);
PRELOAD_REAL_SLOT(ftruncate);
PRELOAD_REAL_SLOT(ftruncate64);
PRELOAD_REAL_SLOT(mmap);
PRELOAD_REAL_SLOT(mmap64);
PRELOAD_REAL_SLOT(msync);

/* Bytes an iovec array asks for. Read only after the kernel accepted the
 * array (the call did not fail): before that it may point anywhere. */
static uint64_t iov_bytes(const struct iovec *iov, int count, ssize_t ret)
{
    uint64_t total = 0;
    if (ret < 0 || iov == NULL)
        return 0;
    for (int i = 0; i < count; i++)
        total += iov[i].iov_len;
    return total;
}

/* The buffer an iovec array's alignment is judged by (Darshan's: aligned
 * when every buffer is): a misaligned one, else the first; NULL after a
 * failure, when the array may point anywhere. */
static const void *iov_buffer(const struct iovec *iov, int count, ssize_t ret)
{
    if (ret < 0 || iov == NULL || count <= 0)
        return NULL;
    for (int i = 0; i < count; i++)
        if ((uintptr_t)iov[i].iov_base & (PRELOAD_MEM_ALIGNMENT_BYTES - 1))
            return iov[i].iov_base;
    return iov[0].iov_base;
}

PRELOAD_HOT_CODE ssize_t read(int fd, void *buf, size_t count)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(read)(fd, buf, count);
    ssize_t ret = REAL(read)(fd, buf, count);
    preload_end_buffer(&call, VIGIL_OP_POSIX_READ, fd, ret, count,
                       preload_offset_advance(fd, ret, false), buf);
    return ret;
}

PRELOAD_HOT_CODE ssize_t write(int fd, const void *buf, size_t count)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(write)(fd, buf, count);
    ssize_t ret = REAL(write)(fd, buf, count);
    preload_end_buffer(&call, VIGIL_OP_POSIX_WRITE, fd, ret, count, preload_offset_written(fd, ret),
                       buf);
    return ret;
}

/* A read or write at an explicit offset (the position does not move), on
 * a page of its own (PRELOAD_HOT_CODE). */
#define AT_OFFSET(fn, const_, offset_type, op)                                                     \
    PRELOAD_HOT_CODE                                                                               \
    PRELOAD_WRAP(ssize_t, fn, (int fd, const_ void *buf, size_t count, offset_type offset),        \
                 (fd, buf, count, offset),                                                         \
                 preload_end_buffer(&call, op, fd, ret, count, offset, buf))
#define NO_CONST
AT_OFFSET(pread, NO_CONST, off_t, VIGIL_OP_POSIX_PREAD)
AT_OFFSET(pread64, NO_CONST, off64_t, VIGIL_OP_POSIX_PREAD)
AT_OFFSET(pwrite, const, off_t, VIGIL_OP_POSIX_PWRITE)
AT_OFFSET(pwrite64, const, off64_t, VIGIL_OP_POSIX_PWRITE)

PRELOAD_WRAP(ssize_t, readv, (int fd, const struct iovec *iov, int iovcnt), (fd, iov, iovcnt),
             preload_end_buffer(&call, VIGIL_OP_POSIX_READV, fd, ret, iov_bytes(iov, iovcnt, ret),
                                preload_offset_advance(fd, ret, false),
                                iov_buffer(iov, iovcnt, ret)))

PRELOAD_WRAP(ssize_t, writev, (int fd, const struct iovec *iov, int iovcnt), (fd, iov, iovcnt),
             preload_end_buffer(&call, VIGIL_OP_POSIX_WRITEV, fd, ret, iov_bytes(iov, iovcnt, ret),
                                preload_offset_written(fd, ret), iov_buffer(iov, iovcnt, ret)))

/* The same through an iovec array. */
#define AT_OFFSET_V(fn, offset_type, op)                                                           \
    PRELOAD_WRAP(ssize_t, fn, (int fd, const struct iovec *iov, int iovcnt, offset_type offset),   \
                 (fd, iov, iovcnt, offset),                                                        \
                 preload_end_buffer(&call, op, fd, ret, iov_bytes(iov, iovcnt, ret), offset,       \
                                    iov_buffer(iov, iovcnt, ret)))
AT_OFFSET_V(preadv, off_t, VIGIL_OP_POSIX_PREADV)
AT_OFFSET_V(preadv64, off64_t, VIGIL_OP_POSIX_PREADV)
AT_OFFSET_V(pwritev, off_t, VIGIL_OP_POSIX_PWRITEV)
AT_OFFSET_V(pwritev64, off64_t, VIGIL_OP_POSIX_PWRITEV)

/* An offset of -1 means "the current position", which moves. */
PRELOAD_WRAP(ssize_t, preadv2,
             (int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags),
             (fd, iov, iovcnt, offset, flags),
             preload_end_buffer(&call, VIGIL_OP_POSIX_PREADV2, fd, ret, iov_bytes(iov, iovcnt, ret),
                                offset < 0 ? preload_offset_advance(fd, ret, false) : offset,
                                iov_buffer(iov, iovcnt, ret)))

PRELOAD_WRAP(ssize_t, pwritev2,
             (int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags),
             (fd, iov, iovcnt, offset, flags),
             preload_end_buffer(&call, VIGIL_OP_POSIX_PWRITEV2, fd, ret,
                                iov_bytes(iov, iovcnt, ret),
                                offset < 0 ? preload_offset_written(fd, ret) : offset,
                                iov_buffer(iov, iovcnt, ret)))

static void end_seek(const struct preload_call *call, int fd, off64_t ret)
{
    if (ret >= 0)
        preload_offset_set(fd, ret);
    struct preload_outcome o = {
        .op = VIGIL_OP_POSIX_LSEEK,
        .fd = fd,
        .result = ret,
        .failed = ret < 0,
        .offset_bytes = ret < 0 ? VIGIL_OFFSET_UNKNOWN : ret, /* where it ended */
    };
    preload_call_end(call, &o);
}

PRELOAD_WRAP(off_t, lseek, (int fd, off_t offset, int whence), (fd, offset, whence),
             end_seek(&call, fd, ret))

PRELOAD_WRAP(off64_t, lseek64, (int fd, off64_t offset, int whence), (fd, offset, whence),
             end_seek(&call, fd, ret))

PRELOAD_WRAP(int, fsync, (int fd), (fd), preload_end_meta(&call, VIGIL_OP_POSIX_FSYNC, fd, ret))

PRELOAD_WRAP(int, fdatasync, (int fd), (fd),
             preload_end_meta(&call, VIGIL_OP_POSIX_FDATASYNC, fd, ret))

static void end_truncate(const struct preload_call *call, int fd, int ret, off64_t length)
{
    if (ret == 0)
        preload_offset_truncated(fd, length);
    struct preload_outcome o = {
        .op = VIGIL_OP_POSIX_FTRUNCATE,
        .fd = fd,
        .result = ret,
        .failed = ret == -1,
        .bytes_asked = length > 0 ? (uint64_t)length : 0, /* the size asked for */
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    preload_call_end(call, &o);
}

PRELOAD_WRAP(int, ftruncate, (int fd, off_t length), (fd, length),
             end_truncate(&call, fd, ret, length))

PRELOAD_WRAP(int, ftruncate64, (int fd, off64_t length), (fd, length),
             end_truncate(&call, fd, ret, length))

static void end_mmap(const struct preload_call *call, void *ret, size_t length, int flags, int fd,
                     off64_t offset)
{
    struct preload_outcome o = {
        .op = VIGIL_OP_POSIX_MMAP,
        /* An anonymous mapping is memory, not a file. */
        .fd = (flags & MAP_ANONYMOUS) ? -1 : fd,
        .result = (int64_t)(intptr_t)ret,
        .failed = ret == MAP_FAILED,
        .bytes_asked = length,
        .offset_bytes = (flags & MAP_ANONYMOUS) ? VIGIL_OFFSET_UNKNOWN : offset,
    };
    preload_call_end(call, &o);
}

PRELOAD_WRAP(void *, mmap, (void *addr, size_t length, int prot, int flags, int fd, off_t offset),
             (addr, length, prot, flags, fd, offset),
             end_mmap(&call, ret, length, flags, fd, offset))

PRELOAD_WRAP(void *, mmap64,
             (void *addr, size_t length, int prot, int flags, int fd, off64_t offset),
             (addr, length, prot, flags, fd, offset),
             end_mmap(&call, ret, length, flags, fd, offset))

int msync(void *addr, size_t length, int flags)
{
    struct preload_call call;
    if (!preload_call_begin(&call))
        return REAL(msync)(addr, length, flags);
    int ret = REAL(msync)(addr, length, flags);
    struct preload_outcome o = {
        .op = VIGIL_OP_POSIX_MSYNC,
        .fd = -1, /* a mapping has no descriptor */
        .result = ret,
        .failed = ret == -1,
        .bytes_asked = length,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    preload_call_end(&call, &o);
    return ret;
}
