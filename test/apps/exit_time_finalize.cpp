// An application that calls MPI_Finalize from an exit-time destructor, as
// BAGEL does: main returns with MPI still initialized, and the destructor of
// a static object (its MPI session) finalizes. Statics that the preloaded
// tools made during the run are destroyed before that destructor runs.
//
//   exit_time_finalize N   N iterations of (compute, MPI_Allreduce); prints
//                          "sum <value>" on rank 0 and returns 0
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace {

struct Session {
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session() = default;
  ~Session() { MPI_Finalize(); }
};

// Made before main, so destroyed after everything made during the run.
std::unique_ptr<Session> g_session;

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  g_session = std::make_unique<Session>();
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 30;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double value = 1.0;
  double sum = 0.0;
  for (int i = 0; i < iterations; ++i) {
    for (int k = 0; k < 20000; ++k) value = value * 1.0000001 + 1e-9;
    MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  if (rank == 0) std::printf("sum %.6f\n", sum);
  return 0;
}
