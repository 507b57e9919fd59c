/* An independent count of Tremor's segment boundaries, for checking Tremor on
 * real applications: a minimal PMPI library (LD_PRELOAD) counting the blocking
 * collectives that span MPI_COMM_WORLD (Barrier, Allreduce, Allgather(v),
 * Alltoall(v,w), Reduce_scatter(_block)) on intracommunicators of the world's
 * size. It defines both MPI_X and PMPI_X, like Tremor, so Fortran bindings
 * that call PMPI_X directly are counted too, and forwards to the next PMPI_X.
 * At MPI_Finalize each rank prints "boundary_counter rank R boundaries N" on
 * stderr. It shares no code with Tremor on purpose. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static long long boundaries;
/* Collectives made inside another counted call (e.g. a library's Allreduce
 * implemented with Allgather) are counted once, at the outermost call. */
static __thread int depth;

static void* next_symbol(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == NULL) {
    fprintf(stderr, "boundary_counter: %s not found\n", name);
    abort();
  }
  return symbol;
}

static int spans_world(MPI_Comm comm) {
  int inter = 0, size = -1, world = -2;
  if (comm == MPI_COMM_WORLD) return 1;
  if (comm == MPI_COMM_SELF || comm == MPI_COMM_NULL) return 0;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return 0;
  PMPI_Comm_size(comm, &size);
  PMPI_Comm_size(MPI_COMM_WORLD, &world);
  return size == world;
}

static void counted(int rc, MPI_Comm comm) {
  if (rc == MPI_SUCCESS && depth == 0 && spans_world(comm)) ++boundaries;
}

/* Defines MPI_name and PMPI_name with one body that forwards to the next PMPI_name. */
#define COUNTED(name, params, args, comm)                                          \
  typedef int(*name##_fn) params;                                                  \
  static int counted_##name params {                                               \
    static name##_fn next;                                                         \
    if (next == NULL) {                                                            \
      void* const symbol = next_symbol("PMPI_" #name);                             \
      memcpy(&next, &symbol, sizeof next); /* ISO C: no object-to-function cast */ \
    }                                                                              \
    ++depth;                                                                       \
    const int rc = next args;                                                      \
    --depth;                                                                       \
    counted(rc, comm);                                                             \
    return rc;                                                                     \
  }                                                                                \
  EXPORT int MPI_##name params { return counted_##name args; }                     \
  EXPORT int PMPI_##name params { return counted_##name args; }

COUNTED(Barrier, (MPI_Comm comm), (comm), comm)
COUNTED(Allreduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
        (sendbuf, recvbuf, count, datatype, op, comm), comm)
COUNTED(Allgather,
        (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
         MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), comm)
COUNTED(Allgatherv,
        (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
         const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm), comm)
COUNTED(Alltoall,
        (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
         MPI_Comm comm),
        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), comm)
COUNTED(Alltoallv,
        (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
         const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm), comm)
COUNTED(Alltoallw,
        (const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
         void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm),
        (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm), comm)
COUNTED(Reduce_scatter,
        (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
        (sendbuf, recvbuf, recvcounts, datatype, op, comm), comm)
COUNTED(Reduce_scatter_block,
        (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
        (sendbuf, recvbuf, recvcount, datatype, op, comm), comm)

typedef int (*finalize_fn)(void);
static int report_and_finalize(void) {
  static finalize_fn next;
  int rank = -1;
  if (next == NULL) {
    void* const symbol = next_symbol("PMPI_Finalize");
    memcpy(&next, &symbol, sizeof next);
  }
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "boundary_counter rank %d boundaries %lld\n", rank, boundaries);
  return next();
}
EXPORT int MPI_Finalize(void) { return report_and_finalize(); }
EXPORT int PMPI_Finalize(void) { return report_and_finalize(); }
