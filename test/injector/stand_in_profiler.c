/* Stand-in for the Tremor profiler in the stacking test: a PMPI layer that
 * wraps a few calls and forwards through PMPI_, as the profiler will, so
 * LD_PRELOAD="libstand_in_profiler.so libtremor-inject-<flavour>.so" sends
 * each call MPI_X (here) -> PMPI_X (injector) -> MPI library. It counts the
 * calls it saw and prints the count at MPI_Finalize on stderr. */
#include <mpi.h>
#include <stdio.h>

static long calls_seen = 0;

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  ++calls_seen;
  return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                       status);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ++calls_seen;
  return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf, int count, MPI_Datatype type,
                      MPI_Status* status) {
  ++calls_seen;
  return PMPI_File_write_at(fh, offset, buf, count, type, status);
}

int MPI_Finalize(void) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "stand_in_profiler %d %ld\n", rank, calls_seen);
  return PMPI_Finalize();
}
