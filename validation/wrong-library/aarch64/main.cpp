// Linked with the entries' library before the fake MPI (as a program linked
// with libtremor, not preloaded): MPI_Send and PMPI_Send must reach Tremor's
// wrapper, and with the flag set the fake's PMPI_Send with every argument.
#include <dlfcn.h>

#include <cstdio>
#include <initializer_list>

extern "C" int MPI_Send(int, int, int, int, int, int, int, int, int, int);
extern "C" int PMPI_Send(int, int, int, int, int, int, int, int, int, int);
extern "C" void entries_set(bool forward_only, void* next);

int main() {
  void* fake = dlopen("libfakempi.so", RTLD_NOW | RTLD_NOLOAD);  // loaded with the program
  void* real = fake ? dlsym(fake, "PMPI_Send") : nullptr;
  if (real == nullptr) {
    std::printf("the fake MPI's PMPI_Send is not found: %s\n", dlerror());
    return 2;
  }
  const int expected = 1 + 2 * 2 + 3 * 3 + 4 * 4 + 5 * 5 + 6 * 6 + 7 * 7 + 8 * 8 + 9 * 9 + 10 * 10;  // 385
  int failures = 0;
  for (const bool forward_only : {false, true}) {
    entries_set(forward_only, real);
    const int want = forward_only ? expected : 1000000 + expected;
    const int via_mpi = MPI_Send(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    const int via_pmpi = PMPI_Send(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    std::printf("forward_only=%d: MPI_Send -> %d, PMPI_Send -> %d, expected %d (%s)\n", forward_only, via_mpi,
                via_pmpi, want, forward_only ? "the fake MPI's PMPI_Send" : "Tremor's wrapper");
    failures += (via_mpi != want) + (via_pmpi != want);
  }
  std::printf(failures == 0 ? "ok\n" : "FAILED\n");
  return failures == 0 ? 0 : 1;
}
