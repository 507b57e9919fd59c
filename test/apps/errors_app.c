/* Error semantics: with MPI_ERRORS_RETURN the application sees the MPI
 * library's return codes; Tremor must not change them. Prints each call's
 * error class, then does a few valid iterations. (Only errors the MPI
 * library checks: Debian's MPICH does not validate a negative count.) */
#include <mpi.h>
#include <stdio.h>

static int error_class(int rc) {
  int cls = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  double x = 1.0, y = 0.0;
  int classes[4];
  classes[0] = error_class(MPI_Send(&x, 1, MPI_DOUBLE, size + 5, 0, MPI_COMM_WORLD)); /* invalid rank */
  classes[1] = error_class(MPI_Bcast(&x, 1, MPI_DOUBLE, size + 3, MPI_COMM_WORLD));   /* invalid root */
  classes[2] =
      error_class(MPI_Recv(&y, 1, MPI_DOUBLE, MPI_PROC_NULL, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); /* invalid tag */
  classes[3] = error_class(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < 5; ++i) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("error classes: %d %d %d %d; sum %.0f\n", classes[0], classes[1], classes[2], classes[3], y);
  MPI_Finalize();
  return classes[0] == MPI_SUCCESS ? 1 : 0;
}
