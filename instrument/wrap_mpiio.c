/* vigil — MPI-IO, intercepted at the MPI profiling interface.
 *
 * Each wrapper calls PMPI_<name>, resolved with dlsym like every real
 * function: this library is compiled against MPI's headers but not linked
 * to libmpi, so a program without MPI never has it mapped because of us.
 *
 * An MPI-IO call is an activity whose POSIX calls hang under it: while it
 * runs, the thread's parent_start_ticks holds its start, and the POSIX
 * wrappers count and record the calls the MPI library makes with it as
 * their parent (the report's byte totals count them once). Bytes are
 * count × the datatype's size. The offset in bytes is asked of MPI where it
 * can be known: explicit offsets, and the individual file pointer (read
 * before the call); shared file pointers are left unknown (asking would be
 * a collective operation). Nonblocking calls are recorded when MPI_Wait or
 * MPI_Test (or their all, any and some forms) completes them, spanning
 * from the call to the completion; split collectives count their bytes at
 * the begin call, their end is a call of its own. */
#include <fcntl.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_handles.h"
#include "mpiio_files.h"
#include "preload.h"

PRELOAD_REAL_SLOT(PMPI_Init);
PRELOAD_REAL_SLOT(PMPI_Init_thread);
PRELOAD_REAL_SLOT(PMPI_Finalize);
PRELOAD_REAL_SLOT(PMPI_Comm_rank);
PRELOAD_REAL_SLOT(PMPI_Comm_size);
PRELOAD_REAL_SLOT(PMPI_Type_size_x);
PRELOAD_REAL_SLOT(PMPI_File_get_byte_offset);
PRELOAD_REAL_SLOT(PMPI_File_get_position);
PRELOAD_REAL_SLOT(PMPI_Get_elements_x);
PRELOAD_REAL_SLOT(PMPI_Request_free);
PRELOAD_REAL_SLOT(PMPI_File_open);
PRELOAD_REAL_SLOT(PMPI_File_close);
PRELOAD_REAL_SLOT(PMPI_File_delete);
PRELOAD_REAL_SLOT(PMPI_File_set_size);
PRELOAD_REAL_SLOT(PMPI_File_preallocate);
PRELOAD_REAL_SLOT(PMPI_File_get_size);
PRELOAD_REAL_SLOT(PMPI_File_sync);
PRELOAD_REAL_SLOT(PMPI_File_seek);
PRELOAD_REAL_SLOT(PMPI_File_seek_shared);
PRELOAD_REAL_SLOT(PMPI_File_set_view);
PRELOAD_REAL_SLOT(PMPI_File_set_info);
PRELOAD_REAL_SLOT(PMPI_File_set_atomicity);
PRELOAD_REAL_SLOT(PMPI_File_read);
PRELOAD_REAL_SLOT(PMPI_File_read_at);
PRELOAD_REAL_SLOT(PMPI_File_read_all);
PRELOAD_REAL_SLOT(PMPI_File_read_at_all);
PRELOAD_REAL_SLOT(PMPI_File_write);
PRELOAD_REAL_SLOT(PMPI_File_write_at);
PRELOAD_REAL_SLOT(PMPI_File_write_all);
PRELOAD_REAL_SLOT(PMPI_File_write_at_all);
PRELOAD_REAL_SLOT(PMPI_File_read_shared);
PRELOAD_REAL_SLOT(PMPI_File_write_shared);
PRELOAD_REAL_SLOT(PMPI_File_read_ordered);
PRELOAD_REAL_SLOT(PMPI_File_write_ordered);
PRELOAD_REAL_SLOT(PMPI_File_iread);
PRELOAD_REAL_SLOT(PMPI_File_iread_at);
PRELOAD_REAL_SLOT(PMPI_File_iwrite);
PRELOAD_REAL_SLOT(PMPI_File_iwrite_at);
PRELOAD_REAL_SLOT(PMPI_File_iread_all);
PRELOAD_REAL_SLOT(PMPI_File_iwrite_all);
PRELOAD_REAL_SLOT(PMPI_File_iread_at_all);
PRELOAD_REAL_SLOT(PMPI_File_iwrite_at_all);
PRELOAD_REAL_SLOT(PMPI_File_read_all_begin);
PRELOAD_REAL_SLOT(PMPI_File_read_all_end);
PRELOAD_REAL_SLOT(PMPI_File_write_all_begin);
PRELOAD_REAL_SLOT(PMPI_File_write_all_end);
PRELOAD_REAL_SLOT(PMPI_File_read_at_all_begin);
PRELOAD_REAL_SLOT(PMPI_File_read_at_all_end);
PRELOAD_REAL_SLOT(PMPI_File_write_at_all_begin);
PRELOAD_REAL_SLOT(PMPI_File_write_at_all_end);
PRELOAD_REAL_SLOT(PMPI_File_read_ordered_begin);
PRELOAD_REAL_SLOT(PMPI_File_read_ordered_end);
PRELOAD_REAL_SLOT(PMPI_File_write_ordered_begin);
PRELOAD_REAL_SLOT(PMPI_File_write_ordered_end);
PRELOAD_REAL_SLOT(PMPI_Wait);
PRELOAD_REAL_SLOT(PMPI_Test);
PRELOAD_REAL_SLOT(PMPI_Waitall);
PRELOAD_REAL_SLOT(PMPI_Testall);
PRELOAD_REAL_SLOT(PMPI_Waitany);
PRELOAD_REAL_SLOT(PMPI_Testany);
PRELOAD_REAL_SLOT(PMPI_Waitsome);
PRELOAD_REAL_SLOT(PMPI_Testsome);

/* ---- open files ---------------------------------------------------------- */

/* What we know of an open MPI file: its interned name and how many
 * processes share it. A small open-addressing table keyed by the handle. */
#define FILE_HANDLES 1024
#define HANDLE_GONE  ((uintptr_t)1) /* a closed file's slot: keep probing past it */

struct mpi_file {
    _Atomic uintptr_t key;
    uint32_t file_id;
    uint32_t comm_size;
};

static struct mpi_file files[FILE_HANDLES];

/* MPI_REQUEST_NULL, MPI_INFO_NULL and MPI_BYTE, looked up once MPI runs
 * (mpi_started): under Open MPI each lookup is a dlsym, too dear for every
 * call. */
static MPI_Request request_null;
static MPI_Info info_null;
static MPI_Datatype byte_type;

static uintptr_t handle_key(MPI_File fh)
{
    return (uintptr_t)fh;
}

static void file_remember(MPI_File fh, uint32_t file_id, uint32_t comm_size)
{
    uintptr_t key = handle_key(fh);
    for (unsigned i = 0; i < FILE_HANDLES; i++) {
        struct mpi_file *f = &files[(key / 8 + i) % FILE_HANDLES];
        uintptr_t seen = atomic_load(&f->key);
        if ((seen == 0 || seen == HANDLE_GONE) &&
            atomic_compare_exchange_strong(&f->key, &seen, key)) {
            f->file_id = file_id;
            f->comm_size = comm_size;
            return;
        }
    }
    /* More than 1024 files open at once: their calls carry no file. */
}

static struct mpi_file *file_find(MPI_File fh)
{
    uintptr_t key = handle_key(fh);
    for (unsigned i = 0; i < FILE_HANDLES; i++) {
        struct mpi_file *f = &files[(key / 8 + i) % FILE_HANDLES];
        uintptr_t seen = atomic_load(&f->key);
        if (seen == key)
            return f;
        if (seen == 0)
            return NULL;
    }
    return NULL;
}

/* ---- calls ------------------------------------------------------------------ */

/* Like preload_call_begin, but the POSIX calls the MPI library makes inside
 * are counted too: the marker is the parent's start, not the guard. */
static bool mpiio_begin(struct preload_call *call)
{
    if (!atomic_load_explicit(&preload.active, memory_order_relaxed) || preload_thread.in_call ||
        preload_thread.parent_start_ticks != 0)
        return false;
    call->start_ticks = vigil_ticks(preload.tick_source);
    preload_thread.parent_start_ticks = call->start_ticks;
    return true;
}

/* The file's MPI-IO figures (mpiio_files.c), then the usual bookkeeping.
 * One more clock read than a POSIX call: an MPI-IO call costs microseconds.
 * (The timeline holds the bytes POSIX moved, the POSIX calls under this
 * one included: not this call's.) */
static void mpiio_count_file(const struct preload_call *call, const struct preload_outcome *o)
{
    uint64_t ticks = vigil_ticks(preload.tick_source) - call->start_ticks;
    preload_mpiio_file_count(o, ticks);
}

static void mpiio_end(const struct preload_call *call, const struct preload_outcome *o)
{
    preload_thread.parent_start_ticks = 0;
    preload_thread.in_call = 1; /* preload_call_end clears it */
    mpiio_count_file(call, o);
    preload_call_end(call, o);
}

static uint64_t data_bytes(int count, MPI_Datatype type)
{
    MPI_Count size = 0;
    if (count <= 0 || REAL(PMPI_Type_size_x)(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

static int64_t byte_offset_at(MPI_File fh, MPI_Offset offset)
{
    MPI_Offset bytes;
    return REAL(PMPI_File_get_byte_offset)(fh, offset, &bytes) == MPI_SUCCESS
               ? (int64_t)bytes
               : VIGIL_OFFSET_UNKNOWN;
}

/* Where the individual file pointer is now, in bytes. */
static int64_t byte_offset_here(MPI_File fh)
{
    MPI_Offset position;
    if (REAL(PMPI_File_get_position)(fh, &position) != MPI_SUCCESS)
        return VIGIL_OFFSET_UNKNOWN;
    return byte_offset_at(fh, position);
}

static struct preload_outcome outcome(unsigned op, MPI_File fh, int ret, uint64_t bytes,
                                      int64_t offset, uint32_t flags)
{
    const struct mpi_file *f = file_find(fh);
    struct preload_outcome o = {
        .op = op,
        .fd = -1,
        .file_id = f ? f->file_id : VIGIL_FILE_NONE,
        .result = ret,
        .failed = ret != MPI_SUCCESS,
        .bytes_asked = bytes,
        .bytes_moved = ret == MPI_SUCCESS ? bytes : 0,
        .offset_bytes = offset,
        .flags = flags,
        .comm_size = f ? f->comm_size : 0,
    };
    return o;
}

/* What a read moved can be less than it asked (the end of the file): the
 * status says, when the program gave one. */
static uint64_t bytes_read(const MPI_Status *status, uint64_t asked)
{
    MPI_Count bytes = 0;
    if (status == MPI_STATUS_IGNORE || byte_type == NULL ||
        REAL(PMPI_Get_elements_x)(status, byte_type, &bytes) != MPI_SUCCESS ||
        bytes == MPI_UNDEFINED || bytes < 0 || (uint64_t)bytes > asked)
        return asked;
    return (uint64_t)bytes;
}

static void end_data(const struct preload_call *call, unsigned op, MPI_File fh, int count,
                     MPI_Datatype type, int64_t offset, int ret, uint32_t flags,
                     const MPI_Status *status)
{
    struct preload_outcome o = outcome(op, fh, ret, data_bytes(count, type), offset, flags);
    if (ret == MPI_SUCCESS && vigil_op_class(op) == VIGIL_OP_READS)
        o.bytes_moved = bytes_read(status, o.bytes_asked);
    mpiio_end(call, &o);
}

static void end_meta(const struct preload_call *call, unsigned op, MPI_File fh, int ret,
                     uint32_t flags)
{
    struct preload_outcome o = outcome(op, fh, ret, 0, VIGIL_OFFSET_UNKNOWN, flags);
    mpiio_end(call, &o);
}

#define COLLECTIVE VIGIL_ACTIVITY_COLLECTIVE

/* ---- start and end of MPI ---------------------------------------------------- */

/* Once MPI runs: our rank (vigild is told it too), and the handles we
 * compare with (looked up here, not per call: under Open MPI each is a
 * dlsym). */
static void mpi_started(void)
{
    int rank, size;
    MPI_Comm world = PRELOAD_COMM_WORLD;
    if (REAL(PMPI_Comm_rank)(world, &rank) == MPI_SUCCESS) {
        preload.mpi_rank = rank;
        if (REAL(PMPI_Comm_size)(world, &size) == MPI_SUCCESS)
            preload_link_rank(rank, size);
    }
    request_null = PRELOAD_REQUEST_NULL;
    info_null = PRELOAD_INFO_NULL;
    byte_type = PRELOAD_MPI_BYTE;
    preload_mpiio_files_start();
}

int MPI_Init(int *argc, char ***argv)
{
    int ret = REAL(PMPI_Init)(argc, argv);
    if (ret == MPI_SUCCESS)
        mpi_started();
    return ret;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int ret = REAL(PMPI_Init_thread)(argc, argv, required, provided);
    if (ret == MPI_SUCCESS)
        mpi_started();
    return ret;
}

int MPI_Finalize(void)
{
    preload_mpi_report_joint();
    return REAL(PMPI_Finalize)();
}

/* ---- opening, closing and the like ----------------------------------------------- */

/* ROMIO accepts "ufs:/path" and the like: the file is what follows the
 * prefix. A one-letter prefix is a drive, not a file system type. */
static const char *without_fs_prefix(const char *filename)
{
    const char *colon = strchr(filename, ':');
    return colon != NULL && colon - filename > 1 && strchr(filename, '/') > colon ? colon + 1
                                                                                  : filename;
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    struct preload_call call;
    if (!mpiio_begin(&call))
        return REAL(PMPI_File_open)(comm, filename, amode, info, fh);
    int ret = REAL(PMPI_File_open)(comm, filename, amode, info, fh);
    uint32_t file_id = preload_file_for_path(AT_FDCWD, without_fs_prefix(filename));
    int comm_size = 0;
    REAL(PMPI_Comm_size)(comm, &comm_size);
    if (ret == MPI_SUCCESS) {
        file_remember(*fh, file_id == PRELOAD_FILE_EXCLUDED ? VIGIL_FILE_NONE : file_id,
                      (uint32_t)comm_size);
        /* Darshan's: an open on one process is independent, whatever the call. */
        preload_mpiio_file_opened(file_id, amode, comm_size > 1, info != info_null);
    }
    struct preload_outcome o = {
        .op = VIGIL_OP_MPIIO_OPEN,
        .fd = -1,
        .file_id = file_id,
        .result = ret,
        .failed = ret != MPI_SUCCESS,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
        .flags = COLLECTIVE,
        .comm_size = (uint32_t)comm_size,
    };
    mpiio_end(&call, &o);
    return ret;
}

int MPI_File_close(MPI_File *fh)
{
    struct preload_call call;
    if (!mpiio_begin(&call))
        /* cppcheck reads REAL()'s __typeof__ cast as an address: */
        // cppcheck-suppress CastAddressToIntegerAtReturn
        return REAL(PMPI_File_close)(fh);
    struct mpi_file *f = file_find(*fh);
    struct preload_outcome o =
        outcome(VIGIL_OP_MPIIO_CLOSE, *fh, MPI_SUCCESS, 0, VIGIL_OFFSET_UNKNOWN, COLLECTIVE);
    int ret = REAL(PMPI_File_close)(fh); /* sets *fh to MPI_FILE_NULL */
    if (f != NULL)
        atomic_store(&f->key, HANDLE_GONE);
    o.result = ret;
    o.failed = ret != MPI_SUCCESS;
    mpiio_end(&call, &o);
    return ret;
}

int MPI_File_delete(const char *filename, MPI_Info info)
{
    struct preload_call call;
    if (!mpiio_begin(&call))
        return REAL(PMPI_File_delete)(filename, info);
    int ret = REAL(PMPI_File_delete)(filename, info);
    struct preload_outcome o = {
        .op = VIGIL_OP_MPIIO_DELETE,
        .fd = -1,
        .file_id = preload_file_for_path(AT_FDCWD, without_fs_prefix(filename)),
        .result = ret,
        .failed = ret != MPI_SUCCESS,
        .offset_bytes = VIGIL_OFFSET_UNKNOWN,
    };
    mpiio_end(&call, &o);
    return ret;
}

/* A call on an open file: `int MPI_File_NAME params`, passing `args` on,
 * the wrapper shape of preload.h with `before` run before the real call
 * and `end` after it, which reads its `ret`. */
#define MPIIO_CALL(name, params, args, before, end)                                                \
    int MPI_File_##name params                                                                     \
    {                                                                                              \
        struct preload_call call;                                                                  \
        if (!mpiio_begin(&call))                                                                   \
            return REAL(PMPI_File_##name) args;                                                    \
        before;                                                                                    \
        int ret = REAL(PMPI_File_##name) args;                                                     \
        end;                                                                                       \
        return ret;                                                                                \
    }

/* A call that moves no data, ended by end_meta. */
#define META_CALL(name, params, args, op, flags)                                                   \
    MPIIO_CALL(name, params, args, (void)0, end_meta(&call, op, fh, ret, flags))

META_CALL(set_size, (MPI_File fh, MPI_Offset size), (fh, size), VIGIL_OP_MPIIO_SET_SIZE, COLLECTIVE)

META_CALL(preallocate, (MPI_File fh, MPI_Offset size), (fh, size), VIGIL_OP_MPIIO_PREALLOCATE,
          COLLECTIVE)

META_CALL(get_size, (MPI_File fh, MPI_Offset *size), (fh, size), VIGIL_OP_MPIIO_GET_SIZE, 0)

META_CALL(sync, (MPI_File fh), (fh), VIGIL_OP_MPIIO_SYNC, COLLECTIVE)

int MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    struct preload_call call;
    if (!mpiio_begin(&call))
        return REAL(PMPI_File_seek)(fh, offset, whence);
    int ret = REAL(PMPI_File_seek)(fh, offset, whence);
    struct preload_outcome o =
        outcome(VIGIL_OP_MPIIO_SEEK, fh, ret, 0,
                ret == MPI_SUCCESS ? byte_offset_here(fh) : VIGIL_OFFSET_UNKNOWN, 0);
    mpiio_end(&call, &o);
    return ret;
}

META_CALL(seek_shared, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence),
          VIGIL_OP_MPIIO_SEEK_SHARED, COLLECTIVE)

/* Hints given to an open file: an info object to set_view (Darshan counts
 * these) or to set_info (Darshan does not wrap it: its MPIIO_HINTS is lower
 * by these). */
static void file_hinted(MPI_File fh, MPI_Info info, int ret)
{
    const struct mpi_file *f = file_find(fh);
    if (ret == MPI_SUCCESS && info != info_null && f != NULL)
        preload_mpiio_file_hinted(f->file_id);
}

MPIIO_CALL(set_view,
           (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
            const char *datarep, MPI_Info info),
           (fh, disp, etype, filetype, datarep, info), (void)0,
           (file_hinted(fh, info, ret),
            end_meta(&call, VIGIL_OP_MPIIO_SET_VIEW, fh, ret, COLLECTIVE)))

/* No operation of the ontology names set_info: its hints are counted, the
 * call is no activity of its own (its POSIX calls, if any, are counted as
 * the program's). */
int MPI_File_set_info(MPI_File fh, MPI_Info info)
{
    int ret = REAL(PMPI_File_set_info)(fh, info);
    if (atomic_load_explicit(&preload.active, memory_order_relaxed))
        file_hinted(fh, info, ret);
    return ret;
}

META_CALL(set_atomicity, (MPI_File fh, int flag), (fh, flag), VIGIL_OP_MPIIO_SET_ATOMICITY,
          COLLECTIVE)

/* ---- blocking data calls ------------------------------------------------------------- */

/* A data call: `offset_` is where it starts in bytes, read before the
 * call into `at`, which `end` records. */
#define DATA_CALL(name, params, args, offset_, end)                                                \
    MPIIO_CALL(name, params, args, int64_t at = (offset_), end)

/* Its parameters at an explicit offset, and at a file pointer. */
#define AT_OFFSET_PARAMS(const_, last)                                                             \
    (MPI_File fh, MPI_Offset offset, const_ void *buf, int count, MPI_Datatype type, last)
#define AT_POINTER_PARAMS(const_, last)                                                            \
    (MPI_File fh, const_ void *buf, int count, MPI_Datatype type, last)

/* One wrapper for a data call at an explicit offset, one for a call at the
 * individual file pointer, one for a call at the shared pointer. */
#define AT_OFFSET(name, op, const_, flags)                                                         \
    DATA_CALL(name, AT_OFFSET_PARAMS(const_, MPI_Status *status),                                  \
              (fh, offset, buf, count, type, status), byte_offset_at(fh, offset),                  \
              end_data(&call, op, fh, count, type, at, ret, flags, status))

#define AT_POINTER(name, op, const_, flags)                                                        \
    DATA_CALL(name, AT_POINTER_PARAMS(const_, MPI_Status *status), (fh, buf, count, type, status), \
              byte_offset_here(fh), end_data(&call, op, fh, count, type, at, ret, flags, status))

#define AT_SHARED(name, op, const_, flags)                                                         \
    DATA_CALL(name, AT_POINTER_PARAMS(const_, MPI_Status *status), (fh, buf, count, type, status), \
              VIGIL_OFFSET_UNKNOWN, end_data(&call, op, fh, count, type, at, ret, flags, status))

#define NO_CONST
AT_OFFSET(read_at, VIGIL_OP_MPIIO_READ_AT, NO_CONST, 0)
AT_OFFSET(read_at_all, VIGIL_OP_MPIIO_READ_AT_ALL, NO_CONST, COLLECTIVE)
AT_OFFSET(write_at, VIGIL_OP_MPIIO_WRITE_AT, const, 0)
AT_OFFSET(write_at_all, VIGIL_OP_MPIIO_WRITE_AT_ALL, const, COLLECTIVE)
AT_POINTER(read, VIGIL_OP_MPIIO_READ, NO_CONST, 0)
AT_POINTER(read_all, VIGIL_OP_MPIIO_READ_ALL, NO_CONST, COLLECTIVE)
AT_POINTER(write, VIGIL_OP_MPIIO_WRITE, const, 0)
AT_POINTER(write_all, VIGIL_OP_MPIIO_WRITE_ALL, const, COLLECTIVE)
AT_SHARED(read_shared, VIGIL_OP_MPIIO_READ_SHARED, NO_CONST, 0)
AT_SHARED(write_shared, VIGIL_OP_MPIIO_WRITE_SHARED, const, 0)
AT_SHARED(read_ordered, VIGIL_OP_MPIIO_READ_ORDERED, NO_CONST, COLLECTIVE)
AT_SHARED(write_ordered, VIGIL_OP_MPIIO_WRITE_ORDERED, const, COLLECTIVE)

/* ---- split collectives ------------------------------------------------------------------ */

/* The begin call moves the data as far as the program can tell, so it
 * carries the bytes; the end call completes it and is a call of its own. */
#define SPLIT_BEGIN_AT(name, op, const_)                                                           \
    int MPI_File_##name(MPI_File fh, MPI_Offset offset, const_ void *buf, int count,               \
                        MPI_Datatype type)                                                         \
    {                                                                                              \
        struct preload_call call;                                                                  \
        if (!mpiio_begin(&call))                                                                   \
            return REAL(PMPI_File_##name)(fh, offset, buf, count, type);                           \
        int64_t at = byte_offset_at(fh, offset);                                                   \
        int ret = REAL(PMPI_File_##name)(fh, offset, buf, count, type);                            \
        end_data(&call, op, fh, count, type, at, ret, COLLECTIVE, MPI_STATUS_IGNORE);              \
        return ret;                                                                                \
    }

#define SPLIT_BEGIN(name, op, const_, offset_of)                                                   \
    int MPI_File_##name(MPI_File fh, const_ void *buf, int count, MPI_Datatype type)               \
    {                                                                                              \
        struct preload_call call;                                                                  \
        if (!mpiio_begin(&call))                                                                   \
            return REAL(PMPI_File_##name)(fh, buf, count, type);                                   \
        int64_t at = offset_of;                                                                    \
        int ret = REAL(PMPI_File_##name)(fh, buf, count, type);                                    \
        end_data(&call, op, fh, count, type, at, ret, COLLECTIVE, MPI_STATUS_IGNORE);              \
        return ret;                                                                                \
    }

#define SPLIT_END(name, op, const_)                                                                \
    int MPI_File_##name(MPI_File fh, const_ void *buf, MPI_Status *status)                         \
    {                                                                                              \
        struct preload_call call;                                                                  \
        if (!mpiio_begin(&call))                                                                   \
            return REAL(PMPI_File_##name)(fh, buf, status);                                        \
        int ret = REAL(PMPI_File_##name)(fh, buf, status);                                         \
        end_meta(&call, op, fh, ret, COLLECTIVE);                                                  \
        return ret;                                                                                \
    }

SPLIT_BEGIN(read_all_begin, VIGIL_OP_MPIIO_READ_ALL_BEGIN, NO_CONST, byte_offset_here(fh))
SPLIT_BEGIN(write_all_begin, VIGIL_OP_MPIIO_WRITE_ALL_BEGIN, const, byte_offset_here(fh))
SPLIT_BEGIN_AT(read_at_all_begin, VIGIL_OP_MPIIO_READ_AT_ALL_BEGIN, NO_CONST)
SPLIT_BEGIN_AT(write_at_all_begin, VIGIL_OP_MPIIO_WRITE_AT_ALL_BEGIN, const)
SPLIT_BEGIN(read_ordered_begin, VIGIL_OP_MPIIO_READ_ORDERED_BEGIN, NO_CONST, VIGIL_OFFSET_UNKNOWN)
SPLIT_BEGIN(write_ordered_begin, VIGIL_OP_MPIIO_WRITE_ORDERED_BEGIN, const, VIGIL_OFFSET_UNKNOWN)
SPLIT_END(read_all_end, VIGIL_OP_MPIIO_READ_ALL_END, NO_CONST)
SPLIT_END(write_all_end, VIGIL_OP_MPIIO_WRITE_ALL_END, const)
SPLIT_END(read_at_all_end, VIGIL_OP_MPIIO_READ_AT_ALL_END, NO_CONST)
SPLIT_END(write_at_all_end, VIGIL_OP_MPIIO_WRITE_AT_ALL_END, const)
SPLIT_END(read_ordered_end, VIGIL_OP_MPIIO_READ_ORDERED_END, NO_CONST)
SPLIT_END(write_ordered_end, VIGIL_OP_MPIIO_WRITE_ORDERED_END, const)

/* ---- nonblocking calls ------------------------------------------------------------------- */

/* A nonblocking call waiting for its completion, in an open-addressing
 * table keyed by the request. A slot whose request completed is left as a
 * tombstone, so that lookups can stop at the first empty slot. */
#define PENDING_SLOTS 4096
#define REQUEST_GONE  ((uintptr_t)1)

struct pending {
    _Atomic uintptr_t key; /* the request; 0: never used; REQUEST_GONE: completed */
    struct preload_outcome outcome;
    uint64_t start_ticks;
};

static struct pending pending[PENDING_SLOTS];
/* How many are pending: MPI_Wait on a request that is not ours (most of
 * them, in a communicating program) costs one load while it is 0. */
static _Atomic int pending_count;

static void pending_add(MPI_Request request, const struct preload_outcome *o, uint64_t start)
{
    uintptr_t key = (uintptr_t)request;
    for (unsigned i = 0; i < PENDING_SLOTS; i++) {
        struct pending *p = &pending[(key / 8 + i) % PENDING_SLOTS];
        uintptr_t seen = atomic_load(&p->key);
        if ((seen == 0 || seen == REQUEST_GONE) &&
            atomic_compare_exchange_strong(&p->key, &seen, key)) {
            p->outcome = *o;
            p->start_ticks = start;
            atomic_fetch_add(&pending_count, 1);
            return;
        }
    }
    /* More than 4096 in flight: this one is not counted. */
}

/* Counts and records a completed request, if it is one of ours. */
static void pending_complete(MPI_Request request)
{
    uintptr_t key = (uintptr_t)request;
    for (unsigned i = 0; i < PENDING_SLOTS; i++) {
        struct pending *p = &pending[(key / 8 + i) % PENDING_SLOTS];
        uintptr_t seen = atomic_load(&p->key);
        if (seen == 0)
            return; /* never added: not ours */
        if (seen != key)
            continue;
        struct preload_outcome o = p->outcome;
        struct preload_call call = {.start_ticks = p->start_ticks};
        atomic_store(&p->key, REQUEST_GONE);
        atomic_fetch_sub(&pending_count, 1);
        if (!atomic_load_explicit(&preload.active, memory_order_relaxed) || preload_thread.in_call)
            return;
        preload_thread.in_call = 1;
        mpiio_count_file(&call, &o);
        preload_call_end(&call, &o);
        return;
    }
}

#define NONBLOCKING_AT(name, op, const_, flags)                                                    \
    DATA_CALL(name, AT_OFFSET_PARAMS(const_, MPI_Request *request),                                \
              (fh, offset, buf, count, type, request), byte_offset_at(fh, offset),                 \
              nonblocking_issued(&call, op, fh, count, type, at, ret, flags, *request))

#define NONBLOCKING(name, op, const_, flags)                                                       \
    DATA_CALL(name, AT_POINTER_PARAMS(const_, MPI_Request *request),                               \
              (fh, buf, count, type, request), byte_offset_here(fh),                               \
              nonblocking_issued(&call, op, fh, count, type, at, ret, flags, *request))

/* A call that failed at once is recorded at once; one that started is
 * recorded when it completes. */
static void nonblocking_issued(const struct preload_call *call, unsigned op, MPI_File fh, int count,
                               MPI_Datatype type, int64_t offset, int ret, uint32_t flags,
                               MPI_Request request)
{
    struct preload_outcome o =
        outcome(op, fh, ret, data_bytes(count, type), offset, flags | VIGIL_ACTIVITY_NONBLOCKING);
    if (ret != MPI_SUCCESS || request == request_null) {
        mpiio_end(call, &o);
        return;
    }
    preload_thread.parent_start_ticks = 0;
    pending_add(request, &o, call->start_ticks);
}

NONBLOCKING(iread, VIGIL_OP_MPIIO_IREAD, NO_CONST, 0)
NONBLOCKING(iwrite, VIGIL_OP_MPIIO_IWRITE, const, 0)
NONBLOCKING(iread_all, VIGIL_OP_MPIIO_IREAD_ALL, NO_CONST, COLLECTIVE)
NONBLOCKING(iwrite_all, VIGIL_OP_MPIIO_IWRITE_ALL, const, COLLECTIVE)
NONBLOCKING_AT(iread_at, VIGIL_OP_MPIIO_IREAD_AT, NO_CONST, 0)
NONBLOCKING_AT(iwrite_at, VIGIL_OP_MPIIO_IWRITE_AT, const, 0)
NONBLOCKING_AT(iread_at_all, VIGIL_OP_MPIIO_IREAD_AT_ALL, NO_CONST, COLLECTIVE)
NONBLOCKING_AT(iwrite_at_all, VIGIL_OP_MPIIO_IWRITE_AT_ALL, const, COLLECTIVE)

/* ---- completion ---------------------------------------------------------------------------- */

/* The requests of a wait or test, copied before the call: MPI sets the
 * completed ones to MPI_REQUEST_NULL. Nothing is copied while none of ours
 * is pending. */
struct request_copy {
    MPI_Request small[64];
    MPI_Request *handles;
    int count;
};

static void copy_requests(struct request_copy *c, int count, const MPI_Request *requests)
{
    c->count = 0;
    c->handles = NULL;
    if (atomic_load_explicit(&pending_count, memory_order_relaxed) == 0 || count <= 0)
        return;
    c->handles = count <= 64 ? c->small : malloc((size_t)count * sizeof *requests);
    if (c->handles == NULL)
        return;
    memcpy(c->handles, requests, (size_t)count * sizeof *requests);
    c->count = count;
}

static void release_copy(struct request_copy *c)
{
    if (c->handles != c->small)
        free(c->handles);
}

/* A freed request's operation goes on, but nobody will learn when it ends:
 * it is counted now. */
int MPI_Request_free(MPI_Request *request)
{
    MPI_Request before = *request;
    int ret = REAL(PMPI_Request_free)(request);
    if (ret == MPI_SUCCESS && atomic_load_explicit(&pending_count, memory_order_relaxed) > 0)
        pending_complete(before);
    return ret;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    MPI_Request before = *request;
    int ret = REAL(PMPI_Wait)(request, status);
    if (ret == MPI_SUCCESS && atomic_load_explicit(&pending_count, memory_order_relaxed) > 0)
        pending_complete(before);
    return ret;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    MPI_Request before = *request;
    int ret = REAL(PMPI_Test)(request, flag, status);
    if (ret == MPI_SUCCESS && *flag &&
        atomic_load_explicit(&pending_count, memory_order_relaxed) > 0)
        pending_complete(before);
    return ret;
}

/* The three ways a wait or test reports what completed: every request,
 * one of them (by index), or some of them (by a list of indices). Each is
 * given whether the call completed anything at all (it succeeded, and for
 * a test, its flag is set), and releases the copy. */
static void complete_all(struct request_copy *c, bool completed)
{
    for (int i = 0; completed && i < c->count; i++)
        pending_complete(c->handles[i]);
    release_copy(c);
}

static void complete_one(struct request_copy *c, bool completed, int index)
{
    if (completed && index != MPI_UNDEFINED && index >= 0 && index < c->count)
        pending_complete(c->handles[index]);
    release_copy(c);
}

static void complete_some(struct request_copy *c, bool completed, int outcount, const int indices[])
{
    for (int i = 0; completed && outcount != MPI_UNDEFINED && i < outcount; i++)
        if (indices[i] >= 0 && indices[i] < c->count)
            pending_complete(c->handles[indices[i]]);
    release_copy(c);
}

/* A wait or test of many requests: `int MPI_NAME params`, the requests
 * copied before the real call (with `args`), `...` (complete_*) after it,
 * which reads its `ret`. */
#define COMPLETION(name, params, count, args, ...)                                                 \
    int MPI_##name params                                                                          \
    {                                                                                              \
        struct request_copy c;                                                                     \
        copy_requests(&c, count, requests);                                                        \
        int ret = REAL(PMPI_##name) args;                                                          \
        __VA_ARGS__;                                                                               \
        return ret;                                                                                \
    }

COMPLETION(Waitall, (int count, MPI_Request requests[], MPI_Status statuses[]), count,
           (count, requests, statuses), complete_all(&c, ret == MPI_SUCCESS))

COMPLETION(Testall, (int count, MPI_Request requests[], int *flag, MPI_Status statuses[]), count,
           (count, requests, flag, statuses), complete_all(&c, ret == MPI_SUCCESS && *flag))

COMPLETION(Waitany, (int count, MPI_Request requests[], int *index, MPI_Status *status), count,
           (count, requests, index, status), complete_one(&c, ret == MPI_SUCCESS, *index))

COMPLETION(Testany, (int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status),
           count, (count, requests, index, flag, status),
           complete_one(&c, ret == MPI_SUCCESS && *flag, *index))

COMPLETION(Waitsome,
           (int incount, MPI_Request requests[], int *outcount, int indices[],
            MPI_Status statuses[]),
           incount, (incount, requests, outcount, indices, statuses),
           complete_some(&c, ret == MPI_SUCCESS, *outcount, indices))

COMPLETION(Testsome,
           (int incount, MPI_Request requests[], int *outcount, int indices[],
            MPI_Status statuses[]),
           incount, (incount, requests, outcount, indices, statuses),
           complete_some(&c, ret == MPI_SUCCESS, *outcount, indices))
