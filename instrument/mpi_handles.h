/* vigil — MPI's predefined handles, as this library may use them.
 *
 * In Open MPI, MPI_COMM_WORLD, MPI_DOUBLE, MPI_SUM, MPI_REQUEST_NULL… are
 * the addresses of objects inside libmpi. Naming them directly would make
 * the dynamic loader resolve them when the library loads (data is never
 * bound lazily), and every program, MPI or not, would need libmpi. So they
 * are looked up once MPI is running. In MPI implementations where they are
 * plain integer constants (MPICH), they are used as they are. */
#ifndef VIGIL_PRELOAD_MPI_HANDLES_H
#define VIGIL_PRELOAD_MPI_HANDLES_H

#include <dlfcn.h>
#include <mpi.h>

#ifdef OPEN_MPI
#define PRELOAD_MPI_HANDLE(type, symbol) ((type)dlsym(RTLD_DEFAULT, symbol))
#define PRELOAD_COMM_WORLD               PRELOAD_MPI_HANDLE(MPI_Comm, "ompi_mpi_comm_world")
#define PRELOAD_REQUEST_NULL             PRELOAD_MPI_HANDLE(MPI_Request, "ompi_request_null")
#define PRELOAD_INFO_NULL                PRELOAD_MPI_HANDLE(MPI_Info, "ompi_mpi_info_null")
#define PRELOAD_MPI_DOUBLE               PRELOAD_MPI_HANDLE(MPI_Datatype, "ompi_mpi_double")
#define PRELOAD_MPI_INT                  PRELOAD_MPI_HANDLE(MPI_Datatype, "ompi_mpi_int")
#define PRELOAD_MPI_BYTE                 PRELOAD_MPI_HANDLE(MPI_Datatype, "ompi_mpi_byte")
#define PRELOAD_MPI_DOUBLE_INT           PRELOAD_MPI_HANDLE(MPI_Datatype, "ompi_mpi_double_int")
#define PRELOAD_MPI_UINT64_T             PRELOAD_MPI_HANDLE(MPI_Datatype, "ompi_mpi_uint64_t")
#define PRELOAD_MPI_MIN                  PRELOAD_MPI_HANDLE(MPI_Op, "ompi_mpi_op_min")
#define PRELOAD_MPI_MAX                  PRELOAD_MPI_HANDLE(MPI_Op, "ompi_mpi_op_max")
#define PRELOAD_MPI_SUM                  PRELOAD_MPI_HANDLE(MPI_Op, "ompi_mpi_op_sum")
#define PRELOAD_MPI_MAXLOC               PRELOAD_MPI_HANDLE(MPI_Op, "ompi_mpi_op_maxloc")
#else
#define PRELOAD_COMM_WORLD     MPI_COMM_WORLD
#define PRELOAD_REQUEST_NULL   MPI_REQUEST_NULL
#define PRELOAD_INFO_NULL      MPI_INFO_NULL
#define PRELOAD_MPI_DOUBLE     MPI_DOUBLE
#define PRELOAD_MPI_INT        MPI_INT
#define PRELOAD_MPI_BYTE       MPI_BYTE
#define PRELOAD_MPI_DOUBLE_INT MPI_DOUBLE_INT
#define PRELOAD_MPI_UINT64_T   MPI_UINT64_T
#define PRELOAD_MPI_MIN        MPI_MIN
#define PRELOAD_MPI_MAX        MPI_MAX
#define PRELOAD_MPI_SUM        MPI_SUM
#define PRELOAD_MPI_MAXLOC     MPI_MAXLOC
#endif

#endif
