/* vigil — the ontology: I/O layers, operations and attributes.
 *
 * Every id here is stable: it is written into rings, onto the wire and into
 * the warehouse. Never renumber an entry; add new ones with new ids.
 * Variants of one call (open64, __read_chk, pwrite64…) are counted as their
 * base operation, so they have no ids of their own. */
#ifndef VIGIL_ONTOLOGY_H
#define VIGIL_ONTOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum vigil_layer {
    VIGIL_LAYER_POSIX = 1,
    VIGIL_LAYER_STDIO = 2,
    VIGIL_LAYER_MPIIO = 3,
};
#define VIGIL_LAYER_COUNT 3 /* valid ids are 1..VIGIL_LAYER_COUNT */

/* What an operation does with data: the reports split bytes by direction. */
enum vigil_op_class {
    VIGIL_OP_READS = 1,  /* moves bytes from a file or socket to memory */
    VIGIL_OP_WRITES = 2, /* moves bytes from memory to a file or socket */
    VIGIL_OP_META = 3,   /* everything else: open, seek, stat, sync… */
};

/* X(ENUM_SUFFIX, id, layer, name, class). Ids are grouped by layer:
 * POSIX 1–99, stdio 101–199, MPI-IO 201–299. */
#define VIGIL_OPERATIONS(X)                                                                        \
    X(POSIX_OPEN, 1, POSIX, "open", META)                                                          \
    X(POSIX_OPENAT, 2, POSIX, "openat", META)                                                      \
    X(POSIX_CREAT, 3, POSIX, "creat", META)                                                        \
    X(POSIX_CLOSE, 4, POSIX, "close", META)                                                        \
    X(POSIX_READ, 5, POSIX, "read", READS)                                                         \
    X(POSIX_WRITE, 6, POSIX, "write", WRITES)                                                      \
    X(POSIX_PREAD, 7, POSIX, "pread", READS)                                                       \
    X(POSIX_PWRITE, 8, POSIX, "pwrite", WRITES)                                                    \
    X(POSIX_READV, 9, POSIX, "readv", READS)                                                       \
    X(POSIX_WRITEV, 10, POSIX, "writev", WRITES)                                                   \
    X(POSIX_PREADV, 11, POSIX, "preadv", READS)                                                    \
    X(POSIX_PWRITEV, 12, POSIX, "pwritev", WRITES)                                                 \
    X(POSIX_PREADV2, 13, POSIX, "preadv2", READS)                                                  \
    X(POSIX_PWRITEV2, 14, POSIX, "pwritev2", WRITES)                                               \
    X(POSIX_LSEEK, 15, POSIX, "lseek", META)                                                       \
    X(POSIX_FSYNC, 16, POSIX, "fsync", META)                                                       \
    X(POSIX_FDATASYNC, 17, POSIX, "fdatasync", META)                                               \
    X(POSIX_FTRUNCATE, 18, POSIX, "ftruncate", META)                                               \
    X(POSIX_DUP, 19, POSIX, "dup", META)                                                           \
    X(POSIX_DUP2, 20, POSIX, "dup2", META)                                                         \
    X(POSIX_DUP3, 21, POSIX, "dup3", META)                                                         \
    X(POSIX_FCNTL, 22, POSIX, "fcntl", META)                                                       \
    X(POSIX_MMAP, 23, POSIX, "mmap", META)                                                         \
    X(POSIX_MSYNC, 24, POSIX, "msync", META)                                                       \
    X(POSIX_STAT, 25, POSIX, "stat", META)                                                         \
    X(POSIX_LSTAT, 26, POSIX, "lstat", META)                                                       \
    X(POSIX_FSTAT, 27, POSIX, "fstat", META)                                                       \
    X(POSIX_FSTATAT, 28, POSIX, "fstatat", META)                                                   \
    X(POSIX_STATX, 29, POSIX, "statx", META)                                                       \
    X(POSIX_UNLINK, 30, POSIX, "unlink", META)                                                     \
    X(POSIX_UNLINKAT, 31, POSIX, "unlinkat", META)                                                 \
    X(POSIX_RENAME, 32, POSIX, "rename", META)                                                     \
    X(POSIX_RENAMEAT, 33, POSIX, "renameat", META)                                                 \
    X(POSIX_MKDIR, 34, POSIX, "mkdir", META)                                                       \
    X(POSIX_RMDIR, 35, POSIX, "rmdir", META)                                                       \
    X(POSIX_ACCESS, 36, POSIX, "access", META)                                                     \
    X(POSIX_SEND, 37, POSIX, "send", WRITES)                                                       \
    X(POSIX_RECV, 38, POSIX, "recv", READS)                                                        \
    X(POSIX_SENDTO, 39, POSIX, "sendto", WRITES)                                                   \
    X(POSIX_RECVFROM, 40, POSIX, "recvfrom", READS)                                                \
    X(POSIX_SENDMSG, 41, POSIX, "sendmsg", WRITES)                                                 \
    X(POSIX_RECVMSG, 42, POSIX, "recvmsg", READS)                                                  \
    X(POSIX_COPY_FILE_RANGE, 43, POSIX, "copy_file_range", WRITES)                                 \
    X(POSIX_SENDFILE, 44, POSIX, "sendfile", WRITES)                                               \
    X(POSIX_AIO_READ, 45, POSIX, "aio_read", READS)                                                \
    X(POSIX_AIO_WRITE, 46, POSIX, "aio_write", WRITES)                                             \
    X(STDIO_FOPEN, 101, STDIO, "fopen", META)                                                      \
    X(STDIO_FDOPEN, 102, STDIO, "fdopen", META)                                                    \
    X(STDIO_FREOPEN, 103, STDIO, "freopen", META)                                                  \
    X(STDIO_FCLOSE, 104, STDIO, "fclose", META)                                                    \
    X(STDIO_FREAD, 105, STDIO, "fread", READS)                                                     \
    X(STDIO_FWRITE, 106, STDIO, "fwrite", WRITES)                                                  \
    X(STDIO_FGETS, 107, STDIO, "fgets", READS)                                                     \
    X(STDIO_FPUTS, 108, STDIO, "fputs", WRITES)                                                    \
    X(STDIO_FGETC, 109, STDIO, "fgetc", READS)                                                     \
    X(STDIO_FPUTC, 110, STDIO, "fputc", WRITES)                                                    \
    X(STDIO_GETC, 111, STDIO, "getc", READS)                                                       \
    X(STDIO_PUTC, 112, STDIO, "putc", WRITES)                                                      \
    X(STDIO_FPRINTF, 113, STDIO, "fprintf", WRITES)                                                \
    X(STDIO_VFPRINTF, 114, STDIO, "vfprintf", WRITES)                                              \
    X(STDIO_FSCANF, 115, STDIO, "fscanf", READS)                                                   \
    X(STDIO_VFSCANF, 116, STDIO, "vfscanf", READS)                                                 \
    X(STDIO_FSEEK, 117, STDIO, "fseek", META)                                                      \
    X(STDIO_FSEEKO, 118, STDIO, "fseeko", META)                                                    \
    X(STDIO_FTELL, 119, STDIO, "ftell", META)                                                      \
    X(STDIO_FTELLO, 120, STDIO, "ftello", META)                                                    \
    X(STDIO_REWIND, 121, STDIO, "rewind", META)                                                    \
    X(STDIO_FFLUSH, 122, STDIO, "fflush", META)                                                    \
    X(STDIO_PRINTF, 123, STDIO, "printf", WRITES)                                                  \
    X(STDIO_VPRINTF, 124, STDIO, "vprintf", WRITES)                                                \
    X(STDIO_PUTS, 125, STDIO, "puts", WRITES)                                                      \
    X(STDIO_PUTCHAR, 126, STDIO, "putchar", WRITES)                                                \
    X(STDIO_GETCHAR, 127, STDIO, "getchar", READS)                                                 \
    X(STDIO_SCANF, 128, STDIO, "scanf", READS)                                                     \
    X(STDIO_VSCANF, 129, STDIO, "vscanf", READS)                                                   \
    X(STDIO_GETDELIM, 130, STDIO, "getdelim", READS)                                               \
    X(MPIIO_OPEN, 201, MPIIO, "open", META)                                                        \
    X(MPIIO_CLOSE, 202, MPIIO, "close", META)                                                      \
    X(MPIIO_DELETE, 203, MPIIO, "delete", META)                                                    \
    X(MPIIO_SET_SIZE, 204, MPIIO, "set_size", META)                                                \
    X(MPIIO_PREALLOCATE, 205, MPIIO, "preallocate", META)                                          \
    X(MPIIO_GET_SIZE, 206, MPIIO, "get_size", META)                                                \
    X(MPIIO_SYNC, 207, MPIIO, "sync", META)                                                        \
    X(MPIIO_SEEK, 208, MPIIO, "seek", META)                                                        \
    X(MPIIO_SEEK_SHARED, 209, MPIIO, "seek_shared", META)                                          \
    X(MPIIO_SET_VIEW, 210, MPIIO, "set_view", META)                                                \
    X(MPIIO_SET_ATOMICITY, 211, MPIIO, "set_atomicity", META)                                      \
    X(MPIIO_READ, 212, MPIIO, "read", READS)                                                       \
    X(MPIIO_READ_AT, 213, MPIIO, "read_at", READS)                                                 \
    X(MPIIO_READ_ALL, 214, MPIIO, "read_all", READS)                                               \
    X(MPIIO_READ_AT_ALL, 215, MPIIO, "read_at_all", READS)                                         \
    X(MPIIO_WRITE, 216, MPIIO, "write", WRITES)                                                    \
    X(MPIIO_WRITE_AT, 217, MPIIO, "write_at", WRITES)                                              \
    X(MPIIO_WRITE_ALL, 218, MPIIO, "write_all", WRITES)                                            \
    X(MPIIO_WRITE_AT_ALL, 219, MPIIO, "write_at_all", WRITES)                                      \
    X(MPIIO_IREAD, 220, MPIIO, "iread", READS)                                                     \
    X(MPIIO_IREAD_AT, 221, MPIIO, "iread_at", READS)                                               \
    X(MPIIO_IWRITE, 222, MPIIO, "iwrite", WRITES)                                                  \
    X(MPIIO_IWRITE_AT, 223, MPIIO, "iwrite_at", WRITES)                                            \
    X(MPIIO_IREAD_ALL, 224, MPIIO, "iread_all", READS)                                             \
    X(MPIIO_IWRITE_ALL, 225, MPIIO, "iwrite_all", WRITES)                                          \
    X(MPIIO_IREAD_AT_ALL, 226, MPIIO, "iread_at_all", READS)                                       \
    X(MPIIO_IWRITE_AT_ALL, 227, MPIIO, "iwrite_at_all", WRITES)                                    \
    X(MPIIO_READ_SHARED, 228, MPIIO, "read_shared", READS)                                         \
    X(MPIIO_WRITE_SHARED, 229, MPIIO, "write_shared", WRITES)                                      \
    X(MPIIO_READ_ORDERED, 230, MPIIO, "read_ordered", READS)                                       \
    X(MPIIO_WRITE_ORDERED, 231, MPIIO, "write_ordered", WRITES)                                    \
    X(MPIIO_READ_ALL_BEGIN, 232, MPIIO, "read_all_begin", READS)                                   \
    X(MPIIO_READ_ALL_END, 233, MPIIO, "read_all_end", META)                                        \
    X(MPIIO_WRITE_ALL_BEGIN, 234, MPIIO, "write_all_begin", WRITES)                                \
    X(MPIIO_WRITE_ALL_END, 235, MPIIO, "write_all_end", META)                                      \
    X(MPIIO_READ_AT_ALL_BEGIN, 236, MPIIO, "read_at_all_begin", READS)                             \
    X(MPIIO_READ_AT_ALL_END, 237, MPIIO, "read_at_all_end", META)                                  \
    X(MPIIO_WRITE_AT_ALL_BEGIN, 238, MPIIO, "write_at_all_begin", WRITES)                          \
    X(MPIIO_WRITE_AT_ALL_END, 239, MPIIO, "write_at_all_end", META)                                \
    X(MPIIO_READ_ORDERED_BEGIN, 240, MPIIO, "read_ordered_begin", READS)                           \
    X(MPIIO_READ_ORDERED_END, 241, MPIIO, "read_ordered_end", META)                                \
    X(MPIIO_WRITE_ORDERED_BEGIN, 242, MPIIO, "write_ordered_begin", WRITES)                        \
    X(MPIIO_WRITE_ORDERED_END, 243, MPIIO, "write_ordered_end", META)

enum vigil_op {
#define VIGIL_OP_ENUM(suffix, id, layer, name, cls) VIGIL_OP_##suffix = id,
    VIGIL_OPERATIONS(VIGIL_OP_ENUM)
#undef VIGIL_OP_ENUM
};
#define VIGIL_OP_MAX_ID 299 /* every id is below this; arrays indexed by id fit */

/* Attributes name the facts an activity carries, for the warehouse, the
 * reports and the plugins' configuration. X(ENUM_SUFFIX, id, name, unit). */
#define VIGIL_ATTRIBUTES(X)                                                                        \
    X(LAYER, 1, "layer", "")                                                                       \
    X(OPERATION, 2, "operation", "")                                                               \
    X(FILE, 3, "file", "")                                                                         \
    X(OFFSET, 4, "offset_bytes", "bytes")                                                          \
    X(BYTES_ASKED, 5, "bytes_asked", "bytes")                                                      \
    X(RESULT, 6, "result", "")                                                                     \
    X(ERRNO, 7, "errno", "")                                                                       \
    X(START, 8, "start_ns", "ns")                                                                  \
    X(END, 9, "end_ns", "ns")                                                                      \
    X(DURATION, 10, "duration_ns", "ns")                                                           \
    X(THREAD, 11, "thread", "")                                                                    \
    X(PARENT, 12, "parent_start_ns", "ns")                                                         \
    X(SEQUENCE, 13, "seq", "")                                                                     \
    X(COMM_SIZE, 14, "comm_size", "processes")                                                     \
    X(COLLECTIVE, 15, "collective", "")                                                            \
    X(NONBLOCKING, 16, "nonblocking", "")

enum vigil_attribute {
#define VIGIL_ATTRIBUTE_ENUM(suffix, id, name, unit) VIGIL_ATTR_##suffix = id,
    VIGIL_ATTRIBUTES(VIGIL_ATTRIBUTE_ENUM)
#undef VIGIL_ATTRIBUTE_ENUM
};

/* Names are NULL for an unknown id; lookups return 0 for an unknown name. */
const char *vigil_layer_name(unsigned layer);
unsigned vigil_layer_from_name(const char *name);

/* The operation table, indexed by id; an unused id has a NULL name. It is
 * public so that the hot path can read an operation's layer and class with
 * one load instead of a call. */
struct vigil_op_info {
    const char *name;
    unsigned char layer;    /* enum vigil_layer */
    unsigned char op_class; /* enum vigil_op_class */
};
extern const struct vigil_op_info vigil_op_table[VIGIL_OP_MAX_ID + 1];

static inline bool vigil_op_is_valid(unsigned op)
{
    return op <= VIGIL_OP_MAX_ID && vigil_op_table[op].name != NULL;
}

/* 0 for an unknown op. */
static inline unsigned vigil_op_layer(unsigned op)
{
    return op <= VIGIL_OP_MAX_ID ? vigil_op_table[op].layer : 0;
}

/* 0 for an unknown op. */
static inline enum vigil_op_class vigil_op_class(unsigned op)
{
    return op <= VIGIL_OP_MAX_ID ? (enum vigil_op_class)vigil_op_table[op].op_class : 0;
}

const char *vigil_op_name(unsigned op); /* "write", without the layer */
unsigned vigil_op_from_name(unsigned layer, const char *name);

const char *vigil_attribute_name(unsigned attribute);
const char *vigil_attribute_unit(unsigned attribute);
unsigned vigil_attribute_from_name(const char *name);

#endif
